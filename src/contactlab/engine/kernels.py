"""Compiled step kernels, written once and specialised per contact law.

This file is a *template*: :mod:`contactlab.engine.codegen` copies it into a generated module in
which the line marked ``@@LAW_IMPORT@@`` imports the chosen law as ``LAW``.  Each generated module
is an ordinary importable file, so Numba caches its compiled kernels on disk (a kernel built from a
closure or taking the law as an argument would be recompiled in every process).

One step (velocity Verlet with a second-order velocity predictor for dissipative forces):

1. ``kick_drift``: ``v(n+1/2) = v(n) + dt/2 a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``; orientation
   rotated by ``omega(n+1/2) dt``; velocities predicted to ``n+1``:
   ``v* = v(n+1/2) + dt/4 (a(n) + a(n-1))`` (:mod:`contactlab.engine.integrate` says why the mean);
   a sphere farther than half the skin from where the neighbour list was built flags a rebuild;
   walls translate.
2. ``pair_forces``: for every candidate pair, narrow phase -> ContactGeometry -> LAW; each sphere
   sums its own side of the contacts it owns (its partners ``j > i`` and its walls) and every
   pair stores the partner's side (force, torque on ``j``, elastic energy).
3. ``reduce_kick``: per sphere, add the partner sides of the contacts where it is ``j`` in a fixed
   order (CSR over the pair list; no atomics, bit-identical at any thread count) and gravity,
   ``v(n+1) = v(n+1/2) + dt/2 a(n+1)``, check for non-finite values.

Steps 2 and 3 run as one *sweep* over blocks of bodies (pairs of a block, then its reduction):
a pair ``(i, j)`` is evaluated with its lower index ``i``, so the pairs acting on a block are all
evaluated once its own are, while their rows are still in cache (read back by a pass of its own,
from memory at 1e5 spheres, the reduction cost as much as the law: benchmarks/README.md).  Step 1
of the next step is then a pass of its own, except in a scene of one block, where it follows each
body's reduction (one pass fewer; a drift inside a sweep of several blocks could not be undone
when a later block raises the overlap guard).

Positions-only forces make this exactly velocity Verlet (symplectic); forces that depend on velocity
(damping, friction) see the predicted velocity ``v*``, accurate to O(dt^2).  Springs in the laws
accumulate the exact displacement increments ``dt v(n+1/2)``, so a stuck spring is conservative.

Steps 1 and 3 and the motion of walls and meshes do not depend on the law: they live in the
template :mod:`contactlab.engine.integrate`, written out once by the code generator (the line
marked ``@@INTEGRATE_IMPORT@@`` imports them from that module), compiled once per machine and
linked into every law's ``advance``.

Kernels never raise: they set flags (see :mod:`contactlab.engine.layout`) and return.

One concept, kept in one file although it is longer than the ~600 lines a module here aims at: the
step kernels of one law, which :mod:`contactlab.engine.codegen` copies whole into one generated
module per law (what does not depend on the law already lives in :mod:`contactlab.engine.integrate`).

Parallel loops run over *blocks* (``prange`` over block numbers, a serial loop inside a compiled
function per block, about eight blocks per thread).  Inside the serial loop the law, the narrow
phase and the vector helpers are inlined, which makes the per-pair work as cheap as hand-written
code; a ``prange`` over single pairs calling a function per pair was measured 2-3 times slower.
Blocks never share an output element, so the result does not depend on the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from contactlab._jit import jit, kernel, pkernel
from contactlab.engine.layout import (
    ACTIVE, CLEARED, FLAG_BOND_EVENT, FLAG_OVERLAP, FLAG_STATE_NAN, INACTIVE, N_OWN, OUT_ELASTIC, OUT_EVENT, OUT_FORCE,
    OUT_NORMAL, OUT_OVERLAP, OUT_POINT, OUT_TORQUE_J, OWN_BOUNDARY, OWN_DISSIPATION, OWN_FORCE, OWN_TORQUE, SWEEP_BLOCK,
)
from contactlab.geometry.record import ContactGeometry
from contactlab.geometry.sphere_sphere import centre_offset, sphere_sphere, sphere_sphere_offset
from contactlab.geometry.sphere_wall import sphere_wall
from contactlab.geometry.sphere_cylinder import cylinder_surface, sphere_cylinder
from contactlab.geometry.dispatch import body_pair, body_triangle, body_wall, select_triangles  # @@SHAPES_IMPORT@@
from contactlab.laws.hertz_mindlin import law as LAW  # @@LAW_IMPORT@@
LAW_RANGE = 0.0  # @@LAW_RANGE@@
HIST_SIZE = 7  # @@HIST_SIZE@@
SPHERES_ONLY = False  # @@SPHERES_ONLY@@ (True in the variant for scenes of spheres and plane walls only)
#: the parallel sweep runs over n_blocks // SWEEP_RANGES_PER_BLOCKS ranges (two per thread): fewer
#: ranges leave fewer bodies to the deferred reduction, more balance the threads' loads
SWEEP_RANGES_PER_BLOCKS = 4
from contactlab.vec import add, cross, dot, scale, sub
from contactlab.engine.integrate import (block_size, deferred_runs, kick_drift, kick_drift_block,  # @@INTEGRATE_IMPORT@@
                                         reduce_kick_deferred,  # @@INTEGRATE_IMPORT@@
                                         kick_drift_range, move_meshes, move_walls,  # @@INTEGRATE_IMPORT@@
                                         reduce_kick, reduce_kick_block, reduce_kick_range,  # @@INTEGRATE_IMPORT@@
                                         reduce_kick_range_spheres)  # @@INTEGRATE_IMPORT@@
from contactlab.engine.servo import servo_update
from contactlab.engine.cell_motion import move_cell
from contactlab.geometry.periodic import min_image
from contactlab.engine.clump_motion import clump_drift, clump_kick

__all__ = ["advance", "advance_parallel", "pair_forces", "kick_drift", "reduce_kick", "probe", "move_meshes",
           "move_walls", "kick_drift_range", "reduce_kick_range"]  # the last two: the integrator's per-block kernels, re-exported


@jit
def _load_history(hist, k):
    """The history of pair k as a tuple (generated for the law's history size)."""
    return (hist[k, 0], hist[k, 1], hist[k, 2], hist[k, 3], hist[k, 4], hist[k, 5], hist[k, 6])  # @@HIST_LOAD@@


@jit
def _store_history(hist, k, h):
    """Write the history tuple h of pair k back (generated for the law's history size)."""
    hist[k, 0] = h[0]  # @@HIST_STORE@@
    hist[k, 1] = h[1]  # @@HIST_STORE@@
    hist[k, 2] = h[2]  # @@HIST_STORE@@
    hist[k, 3] = h[3]  # @@HIST_STORE@@
    hist[k, 4] = h[4]  # @@HIST_STORE@@
    hist[k, 5] = h[5]  # @@HIST_STORE@@
    hist[k, 6] = h[6]  # @@HIST_STORE@@


@jit
def _book_dissipation(owner, i, hist, k, d):
    """Add the law's dissipation ``d`` of pair ``k`` to the contact's running sums (history columns
    after the law's own) and, per term, to sphere ``i``'s sums of the step (``owner`` columns from
    ``N_OWN``); return the total (generated for the law's dissipation terms)."""
    hist[k, 7] += d  # @@DISS_BOOK@@
    return d  # @@DISS_TOTAL@@


@jit
def _bond_state(h):
    """The law's bond state in a history tuple: > 0 bonded, 0 never bonded, < 0 broken (generated)."""
    return 0.0  # @@BOND_STATE@@


@jit
def _bond_state_row(hist, k):
    """The bond state of pair ``k`` in the history array (generated; 0 for a law without bonds)."""
    return 0.0  # @@BOND_ROW@@


@jit
def _pair_row(pair_params, a, b):
    """Row ``[a, b]`` of the pair table ``pair_params`` (M, M, P) (materials ``a`` and ``b``) as a
    tuple of P floats, the law's ``p`` (generated for the table's P).  A tuple rather than the array
    row: a row view costs two atomic reference-count updates per pair (~8 % of the pair pass), a
    tuple none.
    """
    return (pair_params[a, b, 0], pair_params[a, b, 1], pair_params[a, b, 2], pair_params[a, b, 3],  # @@PAIR_ROW@@
            pair_params[a, b, 4], pair_params[a, b, 5], pair_params[a, b, 6])  # @@PAIR_ROW@@


@jit
def _clear_pair(hist, out, status, k):
    """Zero the history and outputs of pair ``k`` (a pair beyond the law's range), once."""
    if status[k] != CLEARED:
        for c in range(hist.shape[1]):
            hist[k, c] = 0.0
        for c in range(out.shape[1]):
            out[k, c] = 0.0
        status[k] = CLEARED


@kernel
def _pairs_chunk(p0, p1, i_start, pair_j, pos, vel, angvel, mid_vel, mid_angvel, radius, inv_mass, fixed,
                 material, planes, pair_params, hist, out, status, owner, boundary_power, dt, overlap_limit, flags,
                 quat, bodies, meshes, cylinders, cell):
    """Narrow phase and law for every pair owned by bodies ``p0 <= i < p1``.

    The pairs of body ``i`` (its partners ``j > i``, its walls, then its mesh triangles) are
    contiguous, so ``i``'s side of each contact is summed here directly into ``owner[i]``; the
    other side (force and torque on ``j``) is stored per pair in ``out`` for :func:`reduce_kick`
    (for a wall or a mesh triangle: the torque about the wall's point of contact, or about the
    mesh's reference point).  Pairs farther apart than the law's ``INTERACTION_RANGE`` are not
    handed to the law (except once, right after an active contact separates): their history and
    outputs are cleared, the law's own reset for a separated pair, unless the pair is bonded (a
    bond holds at any distance until it breaks; the law then marks it broken and the engine logs
    the event).  Two spheres and a sphere with a plane take the fast path; every other pair goes
    through :mod:`contactlab.geometry.dispatch` (``bodies``: shape data; ``meshes``: triangles).
    The triangles a body touches are first sorted (:func:`select_triangles`) so that each surface
    of a mesh acts once.  ``cylinders = (wall_kind, wall_shape)`` in a scene with cylinder walls
    (:mod:`contactlab.geometry.sphere_cylinder`), None otherwise: their branches then compile away.
    ``cell``: the periodic cell (:mod:`contactlab.geometry.periodic`) or None (its branches compile
    away): two spheres then meet by the minimum image of ``x_j - x_i``, ``j``'s image moving with
    the cell's velocity jump.  ``planes = (wall_point, wall_normal, wall_vel, wall_material)``.

    The arguments stay below 31 (with the tuples): CPython compiles a call with more into a tuple
    built at every call (``CALL_FUNCTION_EX``), and Numba then reference-counts each array in it,
    ~70 atomic operations around a call per step (the two-body step 0.61 us instead of 0.46 us;
    ``tests/test_kernel_calls.py`` keeps every kernel call below the limit).
    """
    wall_point, wall_normal, wall_vel, wall_material = planes
    shape_kind = bodies[0]
    tri_ref, tri_mesh, mesh_pos, mesh_quat, mesh_vel, mesh_angvel, mesh_material, scratch = meshes
    n_s = pos.shape[0]
    n_sw = n_s + wall_point.shape[0]
    n_law_hist = HIST_SIZE
    for i in range(p0, p1):
        ri = radius[i]
        kind_i = shape_kind[i]
        xi = (pos[i, 0], pos[i, 1], pos[i, 2])
        fx = 0.0
        fy = 0.0
        fz = 0.0
        tx = 0.0
        ty = 0.0
        tz = 0.0
        diss_sum = 0.0
        power = 0.0
        for c in range(N_OWN, owner.shape[1]):
            owner[i, c] = 0.0
        k_end = i_start[i + 1]
        if tri_ref.shape[0] > 0 and k_end > i_start[i] and pair_j[k_end - 1] >= n_sw:
            select_triangles(i, i_start[i], k_end, pair_j, n_sw, pos, quat, radius, bodies, tri_ref, tri_mesh,
                             scratch, hist, status, n_law_hist, LAW_RANGE)
        # the centre offset of the next sphere partner, computed one pair ahead, so that its square
        # root and division overlap this pair's law (~10 % of the pair pass); its coordinates are
        # handed over as numbers (an array handed to an inlined function is reference-counted at
        # every call); in a periodic cell the minimum image is taken below instead
        ahead = ((0.0, 0.0, 0.0), 0.0, 0.0, 0.0)
        j_ahead = pair_j[i_start[i]] if i_start[i] < k_end else n_s
        if cell is None and j_ahead < n_s:
            ahead = centre_offset(xi, (pos[j_ahead, 0], pos[j_ahead, 1], pos[j_ahead, 2]))
        for k in range(i_start[i], k_end):
            j = pair_j[k]
            d_ij, dist2, dist, inv_dist = ahead  # this pair's, when j is a sphere
            j_ahead = pair_j[k + 1] if k + 1 < k_end else n_s
            if cell is None and j_ahead < n_s:
                ahead = centre_offset(xi, (pos[j_ahead, 0], pos[j_ahead, 1], pos[j_ahead, 2]))
            # cheap distance test first: most candidate pairs are apart (bounding spheres for shapes)
            if j < n_s:
                rj = radius[j]
                reach = ri + rj + LAW_RANGE
                if cell is not None:
                    dx = pos[j, 0] - xi[0]
                    dy = pos[j, 1] - xi[1]
                    dz = pos[j, 2] - xi[2]
                    dx, dy, dz, jvx, jvy, jvz = min_image(dx, dy, dz, cell)
                    dist2 = dx * dx + dy * dy + dz * dz
                apart = dist2 >= reach * reach
            elif j < n_sw:
                w = j - n_s
                wn = (wall_normal[w, 0], wall_normal[w, 1], wall_normal[w, 2])
                wp = (wall_point[w, 0], wall_point[w, 1], wall_point[w, 2])
                if cylinders is not None and cylinders[0][w] != 0:
                    cs = cylinders[1]
                    apart = cylinder_surface(xi, wp, wn, cs[w, 0], cs[w, 1], cs[w, 2], cs[w, 3])[0] - ri >= LAW_RANGE
                else:
                    apart = dot(sub(xi, wp), wn) - ri >= LAW_RANGE
            else:
                if scratch[k, 7] != 1.0:
                    # not touching, or the surface there is already represented by another triangle
                    _clear_pair(hist, out, status, k)
                    continue
                apart = False
            bonded = _bond_state_row(hist, k) > 0.0
            # a contact that was active gets one last evaluation after it separates, so that the law
            # ends it itself (and books what ending it costs, e.g. plastic work computed at break)
            if apart and not bonded and status[k] != ACTIVE:
                _clear_pair(hist, out, status, k)
                continue
            vi = (vel[i, 0], vel[i, 1], vel[i, 2])
            wi = (angvel[i, 0], angvel[i, 1], angvel[i, 2])
            mvi = (mid_vel[i, 0], mid_vel[i, 1], mid_vel[i, 2])
            mwi = (mid_angvel[i, 0], mid_angvel[i, 1], mid_angvel[i, 2])
            if j < n_s:
                vj = (vel[j, 0], vel[j, 1], vel[j, 2])
                wj = (angvel[j, 0], angvel[j, 1], angvel[j, 2])
                if cell is not None:
                    # the minimum image of j and its velocity (spheres only in a periodic scene)
                    jump = (jvx, jvy, jvz)
                    geom, ok = sphere_sphere(xi, (xi[0] + dx, xi[1] + dy, xi[2] + dz), ri, rj, inv_mass[i], inv_mass[j],
                                             vi, add(vj, jump), wi, wj, mvi,
                                             add((mid_vel[j, 0], mid_vel[j, 1], mid_vel[j, 2]), jump),
                                             mwi, (mid_angvel[j, 0], mid_angvel[j, 1], mid_angvel[j, 2]), dt)
                elif kind_i == 0 and shape_kind[j] == 0:
                    geom, ok = sphere_sphere_offset(xi, d_ij, dist, inv_dist, ri, rj, inv_mass[i], inv_mass[j], vi, vj,
                                                    wi, wj, mvi, (mid_vel[j, 0], mid_vel[j, 1], mid_vel[j, 2]), mwi,
                                                    (mid_angvel[j, 0], mid_angvel[j, 1], mid_angvel[j, 2]), dt)
                else:
                    geom, ok = body_pair(i, j, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, hist, k,
                                         dt)
                mj = material[j]
                rmin = min(bodies[3][i], bodies[3][j])
                j_driven = fixed[j]
            elif j < n_sw:
                vj = (wall_vel[w, 0], wall_vel[w, 1], wall_vel[w, 2])
                wj = (0.0, 0.0, 0.0)
                if kind_i == 0:
                    if cylinders is not None and cylinders[0][w] != 0:
                        cs = cylinders[1]
                        geom, ok = sphere_cylinder(xi, ri, inv_mass[i], vi, wi, mvi, mwi, wp, wn, cs[w, 0], cs[w, 1],
                                                   cs[w, 2], cs[w, 3], vj, dt)
                    else:
                        geom, ok = sphere_wall(xi, ri, inv_mass[i], vi, wi, mvi, mwi, wp, wn, vj, dt)
                else:
                    geom, ok = body_wall(i, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, wp, wn, vj,
                                         hist, k, dt)
                mj = wall_material[w]
                rmin = bodies[3][i]
                j_driven = True
            else:
                t = j - n_sw
                msh = tri_mesh[t]
                vj = (mesh_vel[msh, 0], mesh_vel[msh, 1], mesh_vel[msh, 2])
                wj = (mesh_angvel[msh, 0], mesh_angvel[msh, 1], mesh_angvel[msh, 2])
                geom, ok = body_triangle(i, k, t, pos, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, scratch,
                                         (mesh_pos[msh, 0], mesh_pos[msh, 1], mesh_pos[msh, 2]), vj, wj, dt)
                mj = mesh_material[msh]
                rmin = bodies[3][i]
                j_driven = True
            f, m, energy, diss, active, h_new = LAW(geom, _pair_row(pair_params, material[i], mj), _load_history(hist, k),
                                                    dt)
            _store_history(hist, k, h_new)
            # dissipation counts also in the step in which a contact ends (e.g. plastic work booked at break)
            diss_sum += _book_dissipation(owner, i, hist, k, diss)
            broke = bonded and _bond_state(h_new) <= 0.0
            if not active:
                # an inactive contact exerts nothing (the law's history row is kept as it wrote it)
                if status[k] != INACTIVE:
                    for c in range(out.shape[1]):
                        out[k, c] = 0.0
                    status[k] = INACTIVE
                if broke:
                    out[k, OUT_EVENT] = 1.0
                    flags[FLAG_BOND_EVENT] = 1
                continue
            ti = add(cross(geom.branch_i, f), m)
            tj = scale(-1.0, add(cross(geom.branch_j, f), m))
            # work done on the system by driven bodies (fixed bodies, walls, meshes) during this step
            work = 0.0
            if fixed[i]:
                work += dot(f, vi) + dot(ti, wi)
            if j_driven:
                work -= dot(f, vj) - dot(tj, wj)
            if cell is not None:
                if j < n_s:
                    # j's image across a face of a deforming cell moves with the cell's velocity
                    # jump: that part of the contact's power is the cell's work on the bodies
                    work -= f[0] * jvx + f[1] * jvy + f[2] * jvz
            out[k, OUT_FORCE] = f[0]
            out[k, OUT_FORCE + 1] = f[1]
            out[k, OUT_FORCE + 2] = f[2]
            out[k, OUT_TORQUE_J] = tj[0]
            out[k, OUT_TORQUE_J + 1] = tj[1]
            out[k, OUT_TORQUE_J + 2] = tj[2]
            out[k, OUT_ELASTIC] = energy
            if out.shape[1] > OUT_NORMAL:
                # the geometry columns, kept where it cannot be recomputed bit for bit (layout)
                out[k, OUT_OVERLAP] = geom.overlap
                for d in range(3):
                    out[k, OUT_NORMAL + d] = geom.normal[d]
                    out[k, OUT_POINT + d] = geom.contact_point[d]
            if broke:
                out[k, OUT_EVENT] = 1.0
                flags[FLAG_BOND_EVENT] = 1
            status[k] = ACTIVE
            fx += f[0]
            fy += f[1]
            fz += f[2]
            tx += ti[0]
            ty += ti[1]
            tz += ti[2]
            power -= work
            if geom.overlap > overlap_limit * rmin:
                flags[FLAG_OVERLAP] = 1
            if not ok:
                flags[FLAG_STATE_NAN] = 1
        owner[i, OWN_FORCE] = fx
        owner[i, OWN_FORCE + 1] = fy
        owner[i, OWN_FORCE + 2] = fz
        owner[i, OWN_TORQUE] = tx
        owner[i, OWN_TORQUE + 1] = ty
        owner[i, OWN_TORQUE + 2] = tz
        owner[i, OWN_DISSIPATION] = diss_sum
        # boundary work of the step by the trapezoidal rule over the powers at its two ends (the
        # velocity-Verlet work of a force), second order like the rest of the energy bookkeeping
        owner[i, OWN_BOUNDARY] = 0.5 * (boundary_power[i] + power) * dt
        boundary_power[i] = power


@pkernel
def pair_forces(i_start, pair_j, pos, vel, angvel, mid_vel, mid_angvel, radius, inv_mass, fixed,
                material, wall_point, wall_normal, wall_vel, wall_material, pair_params, hist, out, status, owner,
                boundary_power, dt, overlap_limit, flags, n_blocks, quat, bodies, meshes, cylinders, cell=None):
    """Evaluate the law on every candidate pair (:func:`_pairs_chunk` over blocks of bodies in
    parallel): per-body sums of the owner's side in ``owner``, the partner's side per pair in
    ``out``.  ``vel``/``angvel``: velocities at the force time (predicted); ``mid_vel``/``mid_angvel``:
    at the middle of the step ``dt`` that just ended (0: an evaluation that advances no history).
    A non-finite force shows up as a non-finite velocity in :func:`reduce_kick`, which flags it.
    """
    n = pos.shape[0]
    b = block_size(n, n_blocks)
    planes = (wall_point, wall_normal, wall_vel, wall_material)
    for c in prange((n + b - 1) // b):
        _pairs_chunk(c * b, min((c + 1) * b, n), i_start, pair_j, pos, vel, angvel, mid_vel,
                     mid_angvel, radius, inv_mass, fixed, material, planes, pair_params, hist, out,
                     status, owner, boundary_power, dt, overlap_limit, flags, quat, bodies, meshes, cylinders, cell)


@jit
def _raised(flags):
    for f in range(flags.shape[0]):
        if flags[f] != 0:
            return True
    return False


@kernel
def advance(n_steps, dt, resume, model, state, table, run, shapes, walls):
    """Take up to ``n_steps`` steps of size ``dt``; return ``(steps_completed, mid_step)``.

    Each step is the sweep of the module docstring.  The call returns early when a flag is raised.
    When the drift has taken a body, a wall or a mesh beyond half the skin, the state is in the
    middle of a step (``mid_step`` True: positions advanced, forces not yet evaluated); the
    launcher rebuilds the neighbour list and calls again with ``resume=True``.  An overlap beyond
    the guard or a non-finite value found by the force evaluation ends the step first (its second
    half-kick, not the next step's drift), so that the launcher diagnoses a state on a step
    boundary.  Otherwise the call ends on a step boundary.  ``n_steps = -1``: evaluate the forces
    and torques of the current state only (nothing moves, no history advances: the start of a run).

    This kernel runs the sweep serially (small scenes, fewer than ``contactlab._jit.SERIAL_BELOW``
    bodies, and runs on one thread); :func:`advance_parallel` runs it over a few ranges of bodies
    in parallel.  Both do the same arithmetic in the same order: the results are bit-identical.
    Each is compiled on first use only.

    The arguments, grouped by owner (built by :class:`contactlab.engine.stepper.Stepper`):

    * ``model`` (frozen, per body unless said): ``(radius, mass, inv_mass, inv_inertia, fixed,
      material, gravity (3,), wall_normal (W, 3), wall_material (W,), pair_params (M, M, P))``;
    * ``state`` (time-varying, per body): ``(pos, vel, angvel, quat, force, torque, previous, wall_point,
      wall_vel, dissipated, diss_terms, boundary_work, boundary_power, damping_work,
      damping_force)``, the last two empty without local damping (never touched then);
    * ``table`` (per pair, and the list's build reference): ``(i_start, pair_j, j_start, j_pairs,
      hist, out, status, ref_pos, wall_ref)``;
    * ``run`` (the run's work arrays and options, the flags last): ``(vel_pred, angvel_pred, owner,
      half_skin, overlap_limit, n_blocks, local_damping, flags)``;
    * ``shapes = (bodies, rigid, meshes, motion, clumps)``: ``bodies = (shape_kind, shape_ref, shape_data,
      contact_radius, geo_col, mode)`` (shapes), ``rigid = (shape_kind, principal_inertia,
      inv_principal_inertia)`` (full inertia tensors; None in a scene of spheres only, so that
      the integrator's rigid-body branches compile away), ``meshes = (tri_ref, tri_mesh, mesh_pos,
      mesh_quat, mesh_vel, mesh_angvel, mesh_material, scratch)`` and ``motion`` (see
      :func:`move_meshes`), as the narrow phases and the integrator take them; ``clumps`` the
      clumps' arrays (:mod:`contactlab.engine.clump_motion`; None without clumps: their calls
      compile to nothing and the reduction stays fused with the next drift);
    * ``walls = (cylinders, servo, cell)``: ``(wall_kind, wall_shape)`` with cylinder walls, else
      None (their branches compile away); the servo-controlled walls and meshes
      (:func:`servo_update`, called, when there are any, before the walls move); the periodic cell
      (:mod:`contactlab.geometry.periodic`, moved after the walls by
      :func:`contactlab.engine.cell_motion.move_cell`), else None.
    """
    radius, mass, inv_mass, inv_inertia, fixed, material, gravity, wall_normal, wall_material, pair_params = model
    (pos, vel, angvel, quat, force, torque, previous, wall_point, wall_vel, dissipated, diss_terms, boundary_work, boundary_power,
     damping_work, damping_force) = state
    i_start, pair_j, j_start, j_pairs, hist, out, status, ref_pos, wall_ref = table
    vel_pred, angvel_pred, owner, half_skin, overlap_limit, n_blocks, local_damping, flags = run
    damping = (local_damping, damping_work, damping_force)
    bodies, rigid, meshes, motion, clumps = shapes
    cylinders, servo, cell = walls
    shape_data, servos, moving = bodies[2], servo[0].shape[0] > 0, meshes[0].shape[0] > 0  # once per call
    planes = (wall_point, wall_normal, wall_vel, wall_material)  # built once, not at every step's call
    n = pos.shape[0]
    first = np.int64(0)  # an int64 like the parallel loops' block bounds (a literal compiles anew)
    if n_steps < 0:
        _pairs_chunk(first, n, i_start, pair_j, pos, vel, angvel, vel, angvel, radius, inv_mass, fixed, material,
                     planes, pair_params, hist, out, status, owner, boundary_power, 0.0, overlap_limit, flags, quat,
                     bodies, meshes, cylinders, cell)
        reduce_kick_block(first, n, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel,
                          angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work,
                          ref_pos, 0.0, 0.0, half_skin, flags, damping, rigid)
        if clumps is not None:
            clump_kick(0.0, clumps, pos, vel, angvel, force, torque, gravity, flags)
        return 0, resume
    if n_steps == 0:
        return 0, resume
    if not resume:
        kick_drift_block(first, n, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred,
                         angvel_pred, ref_pos, half_skin, flags, rigid)
        if clumps is not None:
            clump_drift(dt, clumps, pos, vel, angvel, quat, vel_pred, angvel_pred, ref_pos, half_skin, flags)
        if servos:
            servo_update(dt, servo, wall_point, wall_vel, wall_normal, out, status, boundary_power)
        move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags, cylinders)
        move_cell(dt, cell, pos, i_start, pair_j, out, status, half_skin, flags)
        if moving:
            move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return 0, True
    for s in range(n_steps):
        if n <= SWEEP_BLOCK:
            _pairs_chunk(first, n, i_start, pair_j, pos, vel_pred, angvel_pred, vel, angvel, radius, inv_mass, fixed,
                         material, planes, pair_params, hist, out, status, owner, boundary_power, dt, overlap_limit,
                         flags, quat, bodies, meshes, cylinders, cell)
            # an overlap beyond the guard ends the call on a step boundary (a consistent state to diagnose)
            last = s == n_steps - 1 or flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0
            # the reduction fused with the next step's kick-drift (not with clumps: they move after
            # the reduction of all their members)
            drift_next = 0.0 if last or clumps is not None else dt
            if SPHERES_ONLY:
                # the spheres-only kernel called directly: a call through reduce_kick_block costs ~70 ns
                # (its array arguments' reference counts), a quarter of a two-body step
                reduce_kick_range_spheres(first, n, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia,
                                          gravity, pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred,
                                          dissipated, diss_terms, boundary_work, ref_pos, dt, drift_next,
                                          half_skin, flags, damping)
            else:
                reduce_kick_block(first, n, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity,
                                  pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated,
                                  diss_terms, boundary_work, ref_pos, dt, drift_next, half_skin, flags,
                                  damping, rigid)
            if clumps is not None:
                clump_kick(dt, clumps, pos, vel, angvel, force, torque, gravity, flags)
                # a non-finite clump ends the call here, before the next drift (a state to diagnose)
                last = last or flags[FLAG_STATE_NAN] != 0
                if not last:
                    kick_drift_block(first, n, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia,
                                     vel_pred, angvel_pred, ref_pos, half_skin, flags, rigid)
                    clump_drift(dt, clumps, pos, vel, angvel, quat, vel_pred, angvel_pred, ref_pos, half_skin, flags)
        else:
            # the sweep (module docstring): each block's pairs, then its reduction and closing half
            # kick (nothing evaluated later reads the block's bodies: a later pair (i', j) has j > i')
            a = first
            while a < n:
                e = min(a + SWEEP_BLOCK, n)
                _pairs_chunk(a, e, i_start, pair_j, pos, vel_pred, angvel_pred, vel, angvel, radius, inv_mass, fixed,
                             material, planes, pair_params, hist, out, status, owner, boundary_power, dt,
                             overlap_limit, flags, quat, bodies, meshes, cylinders, cell)
                _reduce_block(a, e, dt, 0.0, model, state, table, run, rigid, damping)
                a = e
            if clumps is not None:
                clump_kick(dt, clumps, pos, vel, angvel, force, torque, gravity, flags)
            last = s == n_steps - 1 or flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0
            if not last:
                # the next step's half kick and drift, a pass of its own (module docstring)
                kick_drift_block(first, n, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia,
                                 vel_pred, angvel_pred, ref_pos, half_skin, flags, rigid)
                if clumps is not None:
                    clump_drift(dt, clumps, pos, vel, angvel, quat, vel_pred, angvel_pred, ref_pos, half_skin, flags)
        if not last:
            if servos:
                servo_update(dt, servo, wall_point, wall_vel, wall_normal, out, status, boundary_power)
            move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags, cylinders)
            move_cell(dt, cell, pos, i_start, pair_j, out, status, half_skin, flags)
            if moving:
                move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return s + 1, not last
    return n_steps, False


@jit
def _reduce_block(p0, p1, kick_dt, drift_dt, model, state, table, run, rigid, damping):
    """:func:`reduce_kick` for the bodies ``p0 <= p < p1`` in the serial step."""
    radius, mass, inv_mass, inv_inertia, fixed, material, gravity, wall_normal, wall_material, pair_params = model
    (pos, vel, angvel, quat, force, torque, previous, wall_point, wall_vel, dissipated, diss_terms, boundary_work, boundary_power,
     damping_work, damping_force) = state
    i_start, pair_j, j_start, j_pairs, hist, out, status, ref_pos, wall_ref = table
    vel_pred, angvel_pred, owner, half_skin, overlap_limit, n_blocks, local_damping, flags = run
    if SPHERES_ONLY:
        reduce_kick_range_spheres(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity,
                                  pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated,
                                  diss_terms, boundary_work, ref_pos, kick_dt, drift_dt, half_skin, flags, damping)
    else:
        reduce_kick_block(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos,
                          vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated, diss_terms,
                          boundary_work, ref_pos, kick_dt, drift_dt, half_skin, flags, damping, rigid)


@kernel
def advance_parallel(n_steps, dt, resume, model, state, table, run, shapes, walls):
    """:func:`advance` with the sweep over ``n_blocks // SWEEP_RANGES_PER_BLOCKS`` ranges of bodies
    in parallel (the same arguments, results and return value).  (:func:`pair_forces` and
    :func:`reduce_kick`, the two passes alone, are kept for ``benchmarks/profile_step.py``.)"""
    radius, mass, inv_mass, inv_inertia, fixed, material, gravity, wall_normal, wall_material, pair_params = model
    (pos, vel, angvel, quat, force, torque, previous, wall_point, wall_vel, dissipated, diss_terms, boundary_work, boundary_power,
     damping_work, damping_force) = state
    i_start, pair_j, j_start, j_pairs, hist, out, status, ref_pos, wall_ref = table
    vel_pred, angvel_pred, owner, half_skin, overlap_limit, n_blocks, local_damping, flags = run
    damping = (local_damping, damping_work, damping_force)
    bodies, rigid, meshes, motion, clumps = shapes
    cylinders, servo, cell = walls
    shape_data, servos, moving = bodies[2], servo[0].shape[0] > 0, meshes[0].shape[0] > 0  # once per call
    n = pos.shape[0]
    # the sweep of the serial step (see advance) over a few contiguous ranges of bodies in
    # parallel; the bodies of a range that pairs of an earlier range act on are reduced after all
    # ranges' pairs (they may be evaluated by another thread at any time before)
    span = block_size(n, max(n_blocks // SWEEP_RANGES_PER_BLOCKS, 1))
    deferred = deferred_runs(n, span, i_start, j_start, j_pairs)
    if n_steps < 0:
        # forces and torques only: the sweep with dt = 0 (no history advanced, no kick); the state's
        # velocities stand in for the predicted ones
        current = (vel, angvel, owner, half_skin, overlap_limit, n_blocks, local_damping, flags)
        _sweep_ranges(n, span, deferred, 0.0, model, state, table, current, shapes, damping, cylinders, cell)
        reduce_kick_deferred(deferred, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia,
                             gravity, pos, vel, angvel, quat, force, torque, previous, vel, angvel, dissipated, diss_terms,
                             boundary_work, ref_pos, 0.0, half_skin, flags, damping, rigid)
        if clumps is not None:
            clump_kick(0.0, clumps, pos, vel, angvel, force, torque, gravity, flags)
        return 0, resume
    if n_steps == 0:
        return 0, resume
    if not resume:
        kick_drift(dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred,
                   ref_pos, half_skin, flags, n_blocks, rigid)
        if clumps is not None:
            clump_drift(dt, clumps, pos, vel, angvel, quat, vel_pred, angvel_pred, ref_pos, half_skin, flags)
        if servos:
            servo_update(dt, servo, wall_point, wall_vel, wall_normal, out, status, boundary_power)
        move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags, cylinders)
        move_cell(dt, cell, pos, i_start, pair_j, out, status, half_skin, flags)
        if moving:
            move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return 0, True
    for s in range(n_steps):
        _sweep_ranges(n, span, deferred, dt, model, state, table, run, shapes, damping, cylinders, cell)
        reduce_kick_deferred(deferred, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia,
                             gravity, pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated,
                             diss_terms, boundary_work, ref_pos, dt, half_skin, flags, damping, rigid)
        if clumps is not None:
            clump_kick(dt, clumps, pos, vel, angvel, force, torque, gravity, flags)
        # an overlap beyond the guard ends the call on a step boundary (a consistent state to diagnose)
        last = s == n_steps - 1 or flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0
        if not last:
            kick_drift(dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred,
                       ref_pos, half_skin, flags, n_blocks, rigid)
            if clumps is not None:
                clump_drift(dt, clumps, pos, vel, angvel, quat, vel_pred, angvel_pred, ref_pos, half_skin, flags)
            if servos:
                servo_update(dt, servo, wall_point, wall_vel, wall_normal, out, status, boundary_power)
            move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags, cylinders)
            move_cell(dt, cell, pos, i_start, pair_j, out, status, half_skin, flags)
            if moving:
                move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return s + 1, not last
    return n_steps, False


@pkernel
def _sweep_ranges(n, span, deferred, dt, model, state, table, run, shapes, damping, cylinders, cell):
    """The serial step's sweep (pairs, then reduction and closing half kick, block by block) over
    each range of ``span`` bodies in parallel, the reduction of the runs of bodies in ``deferred``
    left out (:func:`reduce_kick_deferred`).  Safe in parallel: a range's pairs read, of another
    range's bodies, only those left out (a pair (i, j) of an earlier range has j in a deferred run
    of j's range; the drift that moves positions is a pass of its own)."""
    radius, mass, inv_mass, inv_inertia, fixed, material, gravity, wall_normal, wall_material, pair_params = model
    (pos, vel, angvel, quat, force, torque, previous, wall_point, wall_vel, dissipated, diss_terms, boundary_work, boundary_power,
     damping_work, damping_force) = state
    i_start, pair_j, j_start, j_pairs, hist, out, status, ref_pos, wall_ref = table
    vel_pred, angvel_pred, owner, half_skin, overlap_limit, n_blocks, local_damping, flags = run
    bodies, rigid, meshes, motion, clumps = shapes
    run_lo, run_hi, range_first = deferred
    planes = (wall_point, wall_normal, wall_vel, wall_material)
    for r in prange((n + span - 1) // span):
        a = r * span
        end = min(a + span, n)
        k = range_first[r]
        k_end = range_first[r + 1]
        while a < end:
            e = min(a + SWEEP_BLOCK, end)
            _pairs_chunk(a, e, i_start, pair_j, pos, vel_pred, angvel_pred, vel, angvel, radius, inv_mass, fixed,
                         material, planes, pair_params, hist, out, status, owner, boundary_power, dt,
                         overlap_limit, flags, quat, bodies, meshes, cylinders, cell)
            # the block's bodies between the deferred runs
            lo = a
            while lo < e:
                while k < k_end and run_hi[k] <= lo:
                    k += 1
                hi = min(run_lo[k], e) if k < k_end else e
                if lo < hi:
                    _reduce_block(lo, hi, dt, 0.0, model, state, table, run, rigid, damping)
                lo = max(hi, min(run_hi[k], e)) if k < k_end else e
            a = e


@kernel
def probe(records, dt, params, hist0, chain, results):
    """Evaluate the law on ``T`` prescribed contact-geometry records, without a simulation.

    ``records = (normal, overlap, contact_point, branch_i, branch_j, rel_velocity, rel_angvel,
    rel_disp, rel_rot, radius_i, radius_j, radius, mass, pair_rot, area, volume)``: the record's
    fields over the samples (vectors (T, 3), scalars (T,)); record ``t`` is assembled from row ``t``
    and handed to the law with the step ``dt[t]`` and the parameter row ``params``.  With ``chain``
    the history the law returns is handed to the next record (a prescribed motion); without it
    every record starts from ``hist0`` (independent evaluations).  ``hist0`` (1, H + D) holds the
    law's history followed by the running dissipation per term (the engine's per-contact row).
    ``results = (force, couple, stored, dissipation, active, hist_out, terms)``: per record the
    force and couple on ``i`` (T, 3), the stored energy, the dissipation's total (T,), whether
    active, the history row after it (T, H + D) and the dissipation per term (T, N_OWN + D,
    columns from ``N_OWN``).  Compiled with the kernels and cached with them.
    """
    (normal, overlap, contact_point, branch_i, branch_j, rel_velocity, rel_angvel, rel_disp, rel_rot, radius_i,
     radius_j, radius, mass, pair_rot, area, volume) = records
    force, couple, stored, dissipation, active, hist_out, terms = results
    work = hist0.copy()
    for t in range(overlap.shape[0]):
        if not chain:
            for c in range(work.shape[1]):
                work[0, c] = hist0[0, c]
        g = ContactGeometry((normal[t, 0], normal[t, 1], normal[t, 2]), overlap[t],
                            (contact_point[t, 0], contact_point[t, 1], contact_point[t, 2]),
                            (branch_i[t, 0], branch_i[t, 1], branch_i[t, 2]),
                            (branch_j[t, 0], branch_j[t, 1], branch_j[t, 2]),
                            (rel_velocity[t, 0], rel_velocity[t, 1], rel_velocity[t, 2]),
                            (rel_angvel[t, 0], rel_angvel[t, 1], rel_angvel[t, 2]),
                            (rel_disp[t, 0], rel_disp[t, 1], rel_disp[t, 2]),
                            (rel_rot[t, 0], rel_rot[t, 1], rel_rot[t, 2]),
                            radius_i[t], radius_j[t], radius[t], mass[t],
                            (pair_rot[t, 0], pair_rot[t, 1], pair_rot[t, 2]), area[t], volume[t], 0.0)
        f, m, energy, diss, act, h_new = LAW(g, params, _load_history(work, 0), dt[t])
        _store_history(work, 0, h_new)
        dissipation[t] = _book_dissipation(terms, t, work, 0, diss)
        for d in range(3):
            force[t, d] = f[d]
            couple[t, d] = m[d]
        stored[t] = energy
        active[t] = act
        for c in range(work.shape[1]):
            hist_out[t, c] = work[0, c]
