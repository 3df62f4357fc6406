"""Compiled step kernels, written once and specialised per contact law.

This file is a *template*: :mod:`contactlab.engine.codegen` copies it into a generated module in
which the one marked import (``@@BINDINGS@@``) reads from the law's *bindings module* instead of
:mod:`contactlab.engine.bindings`: the law as ``LAW``, its range and history size, the few
functions generated for its history layout, dissipation terms, bond state and parameter row, the
scene's narrow phases and the law-independent kernels (:mod:`contactlab.engine.integrate`), each an
ordinary importable file, so Numba caches the compiled kernels on disk (a kernel built from a
closure or taking the law as an argument would be recompiled in every process).  Read as it
stands, the template is the kernels of Hertz-Mindlin for spheres and plane walls.

One step (velocity Verlet with a second-order velocity predictor for dissipative forces), in the
order of :func:`_steps`, which is the only place the step's order is written:

1. first half (:func:`contactlab.engine.integrate.kick_drift_all`): ``v(n+1/2) = v(n) + dt/2
   a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``; orientation rotated by ``omega(n+1/2) dt``;
   velocities predicted to ``n+1``: ``v* = v(n+1/2) + dt/4 (a(n) + a(n-1))``; a body farther than
   half the skin from where the neighbour list was built flags a rebuild; then the clumps and the
   boundaries (servo control, walls, the periodic cell, meshes) move;
2. pairs (:func:`_pairs_chunk`): for every candidate pair, narrow phase -> ContactGeometry -> LAW;
   each body sums its own side of the contacts it owns (its partners ``j > i`` and its walls) and
   every pair stores the partner's side (force, torque on ``j``, elastic energy);
3. reduction (:func:`contactlab.engine.integrate.reduce_block`): per body, add the partner sides of
   the contacts where it is ``j`` in a fixed order (CSR over the pair list; no atomics,
   bit-identical at any thread count) and gravity, ``v(n+1) = v(n+1/2) + dt/2 a(n+1)``, check for
   non-finite values.

Steps 2 and 3 run as one *sweep* over blocks of bodies (pairs of a block, then its reduction,
:func:`_sweep_range`): a pair ``(i, j)`` is evaluated with its lower index ``i``, so the pairs
acting on a block are all evaluated once its own are, while their rows are still in cache (read
back by a pass of its own, from memory at 1e5 spheres, the reduction cost as much as the law:
benchmarks/README.md).  Step 1 of the next step is then a pass of its own, except in a scene of one
block, where it follows each body's reduction (one pass fewer; a drift inside a sweep of several
blocks could not be undone when a later block raises the overlap guard).

Positions-only forces make this exactly velocity Verlet (symplectic); forces that depend on velocity
(damping, friction) see the predicted velocity ``v*``, accurate to O(dt^2).  Springs in the laws
accumulate the exact displacement increments ``dt v(n+1/2)``, so a stuck spring is conservative.

Every function takes the step's records (:mod:`contactlab.engine.step_records`), shared by reference
and without reference counts (:mod:`contactlab.engine.sharing`): no field list is written out here.
Kernels never raise: they set flags (see :mod:`contactlab.engine.layout`) and return.

**Serial and parallel from one source.**  :func:`advance` is one kernel compiled for two kinds of
its last argument: ``parallel`` None runs the sweep as one range on the calling thread (small
scenes, or one thread); a block count runs it over ``parallel // SWEEP_RANGES_PER_BLOCKS`` ranges
of bodies in parallel (:func:`sweep_parallel`), with the bodies that pairs of an earlier range act
on reduced afterwards (:func:`contactlab.engine.integrate.reduce_deferred`).  The choice is made at
compile time (Numba removes the branch not taken), in three selectors (:func:`_sweep`,
``kick_drift_all``, ``reduce_deferred``); both do the same arithmetic in the same order, so the
results are bit-identical.  Inside a block the law, the narrow phase and the vector helpers are
inlined, which makes the per-pair work as cheap as hand-written code; blocks never share an output
element, so the result does not depend on the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from contactlab.engine.bindings import (  # @@BINDINGS@@ the law and the scene's variant (engine/bindings.py)
    LAW, LAW_RANGE, HIST_SIZE, jit, kernel, pkernel, load_history, store_history, book_dissipation, bond_state,
    bond_state_row, pair_row, body_pair, body_triangle, body_wall, select_triangles, block_size, deferred_runs,
    kick_drift_all, kick_drift, kick_drift_block, reduce_block, reduce_kick, reduce_deferred, move_boundaries,
    move_walls, move_meshes)
from contactlab.engine.clump_motion import clump_drift, clump_kick
from contactlab.engine.layout import (
    ACTIVE, CLEARED, FLAG_BOND_EVENT, FLAG_OVERLAP, FLAG_STATE_NAN, INACTIVE, N_OWN, OUT_ELASTIC, OUT_EVENT, OUT_FORCE,
    OUT_NORMAL, OUT_OVERLAP, OUT_POINT, OUT_TORQUE_J, OWN_BOUNDARY, OWN_DISSIPATION, OWN_FORCE, OWN_TORQUE, SWEEP_BLOCK,
)
from contactlab.engine.sharing import share
from contactlab.geometry.periodic import min_image
from contactlab.geometry.record import ContactGeometry
from contactlab.geometry.sphere_cylinder import cylinder_surface, sphere_cylinder
from contactlab.geometry.sphere_sphere import centre_offset, sphere_sphere, sphere_sphere_offset
from contactlab.geometry.sphere_wall import sphere_wall
from contactlab.vec import add, cross, dot, scale, sub

#: the parallel sweep runs over n_blocks // SWEEP_RANGES_PER_BLOCKS ranges (two per thread): fewer
#: ranges leave fewer bodies to the deferred reduction, more balance the threads' loads
SWEEP_RANGES_PER_BLOCKS = 4

__all__ = ["advance", "probe", "sweep_parallel", "kick_drift", "kick_drift_block", "reduce_block", "reduce_kick",
           "move_walls", "move_meshes", "SWEEP_RANGES_PER_BLOCKS"]


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
def _pairs_chunk(p0, p1, dt, bodies, books, bounds, table, run, cylinders, cell):
    """Narrow phase and law for every pair owned by bodies ``p0 <= i < p1`` (the step's records;
    ``dt``: the step that just ended, 0 for an evaluation that advances no history).

    The pairs of body ``i`` (its partners ``j > i``, its walls, then its mesh triangles) are
    contiguous, so ``i``'s side of each contact is summed here directly into ``bodies.owner[i]``;
    the other side (force and torque on ``j``) is stored per pair in ``table.out`` for the
    reduction (for a wall or a mesh triangle: the torque about the wall's point of contact, or
    about the mesh's reference point).  The law sees the velocities at the force time
    (``bodies.vel_pred``) and, for its spring increments, those of the middle of the step
    (``bodies.vel``).  Pairs farther apart than the law's ``INTERACTION_RANGE`` are not handed to
    the law (except once, right after an active contact separates): their history and outputs are
    cleared, the law's own reset for a separated pair, unless the pair is bonded (a bond holds at
    any distance until it breaks; the law then marks it broken and the engine logs the event).  Two
    spheres and a sphere with a plane take the fast path; every other pair goes through
    :mod:`contactlab.geometry.dispatch`.  The triangles a body touches are first sorted
    (:func:`select_triangles`) so that each surface of a mesh acts once.  ``cylinders``
    (``bounds.cylinders``) and ``cell`` (``bounds.cell``) are arguments so that their branches
    compile away when they are None; in a periodic cell two spheres meet by the minimum image of
    ``x_j - x_i``, ``j``'s image moving with the cell's velocity jump.
    """
    pos, vel, angvel, mid_vel, mid_angvel, quat = (bodies.pos, bodies.vel_pred, bodies.angvel_pred, bodies.vel,
                                                   bodies.angvel, bodies.quat)
    radius, inv_mass, fixed, material, owner, shape = (bodies.radius, bodies.inv_mass, bodies.fixed, bodies.material,
                                                       bodies.owner, bodies.shape)
    i_start, pair_j, hist, out, status, pair_params = (table.i_start, table.pair_j, table.hist, table.out,
                                                       table.status, table.pair_params)
    wall_point, wall_normal, wall_vel, wall_material = (bounds.wall_point, bounds.wall_normal, bounds.wall_vel,
                                                        bounds.wall_material)
    meshes, scratch, boundary_power = bounds.meshes, table.scratch, books.boundary_power
    tri_ref, tri_mesh, mesh_pos, mesh_vel, mesh_angvel, mesh_material = (meshes.tri_ref, meshes.tri_mesh, meshes.pos,
                                                                         meshes.vel, meshes.angvel, meshes.material)
    overlap_limit, flags = run.overlap_limit, run.flags
    shape_kind, contact_radius = shape.kind, shape.contact_radius
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
            select_triangles(i, i_start[i], k_end, pair_j, n_sw, pos, quat, radius, shape, tri_ref, tri_mesh,
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
                if cylinders is not None and cylinders.kind[w] != 0:
                    cs = cylinders.shape
                    apart = cylinder_surface(xi, wp, wn, cs[w, 0], cs[w, 1], cs[w, 2], cs[w, 3])[0] - ri >= LAW_RANGE
                else:
                    apart = dot(sub(xi, wp), wn) - ri >= LAW_RANGE
            else:
                if scratch[k, 7] != 1.0:
                    # not touching, or the surface there is already represented by another triangle
                    _clear_pair(hist, out, status, k)
                    continue
                apart = False
            bonded = bond_state_row(hist, k) > 0.0
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
                    geom, ok = body_pair(i, j, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, shape, hist, k,
                                         dt)
                mj = material[j]
                rmin = min(contact_radius[i], contact_radius[j])
                j_driven = fixed[j]
            elif j < n_sw:
                vj = (wall_vel[w, 0], wall_vel[w, 1], wall_vel[w, 2])
                wj = (0.0, 0.0, 0.0)
                if kind_i == 0:
                    if cylinders is not None and cylinders.kind[w] != 0:
                        cs = cylinders.shape
                        geom, ok = sphere_cylinder(xi, ri, inv_mass[i], vi, wi, mvi, mwi, wp, wn, cs[w, 0], cs[w, 1],
                                                   cs[w, 2], cs[w, 3], vj, dt)
                    else:
                        geom, ok = sphere_wall(xi, ri, inv_mass[i], vi, wi, mvi, mwi, wp, wn, vj, dt)
                else:
                    geom, ok = body_wall(i, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, shape, wp, wn, vj,
                                         hist, k, dt)
                mj = wall_material[w]
                rmin = contact_radius[i]
                j_driven = True
            else:
                t = j - n_sw
                msh = tri_mesh[t]
                vj = (mesh_vel[msh, 0], mesh_vel[msh, 1], mesh_vel[msh, 2])
                wj = (mesh_angvel[msh, 0], mesh_angvel[msh, 1], mesh_angvel[msh, 2])
                geom, ok = body_triangle(i, k, t, pos, vel, angvel, mid_vel, mid_angvel, inv_mass, shape, scratch,
                                         (mesh_pos[msh, 0], mesh_pos[msh, 1], mesh_pos[msh, 2]), vj, wj, dt)
                mj = mesh_material[msh]
                rmin = contact_radius[i]
                j_driven = True
            f, m, energy, diss, active, h_new = LAW(geom, pair_row(pair_params, material[i], mj), load_history(hist, k),
                                                    dt)
            store_history(hist, k, h_new)
            # dissipation counts also in the step in which a contact ends (e.g. plastic work booked at break)
            diss_sum += book_dissipation(owner, i, hist, k, diss)
            broke = bonded and bond_state(h_new) <= 0.0
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


@jit
def _sweep_range(r, span, deferred, dt, fuse_next, bodies, books, bounds, table, run):
    """The sweep of range ``r`` (bodies ``r span <= p < (r + 1) span``): block by block, the pairs,
    then the reduction and closing half kick of the block's bodies, those of ``deferred``'s runs
    left out (reduced after every range's pairs).  With ``fuse_next`` (the scene is one block and
    another step follows) the reduction also takes each body's first half of the next step, unless
    the pairs raised the overlap or non-finite flag; returns whether it did."""
    n = bodies.pos.shape[0]
    run_lo, run_hi, range_first = deferred
    flags = run.flags
    fused = False
    a = r * span
    end = min(a + span, n)
    k = range_first[r]
    k_end = range_first[r + 1]
    while a < end:
        e = min(a + SWEEP_BLOCK, end)
        _pairs_chunk(a, e, dt, bodies, books, bounds, table, run, bounds.cylinders, bounds.cell)
        fused = fuse_next and flags[FLAG_OVERLAP] == 0 and flags[FLAG_STATE_NAN] == 0
        drift_dt = dt if fused else 0.0
        # the block's bodies between the deferred runs
        lo = a
        while lo < e:
            while k < k_end and run_hi[k] <= lo:
                k += 1
            hi = min(run_lo[k], e) if k < k_end else e
            if lo < hi:
                reduce_block(lo, hi, dt, drift_dt, bodies, books, bounds, table, run, bodies.rigid)
            lo = max(hi, min(run_hi[k], e)) if k < k_end else e
        a = e
    return fused


@pkernel
def sweep_parallel(n_ranges, span, deferred, dt, bodies, books, bounds, table, run):
    """:func:`_sweep_range` over ``n_ranges`` ranges of bodies in parallel (CPU-only).  Safe: a
    range's pairs read, of another range's bodies, only those left to the deferred reduction (a
    pair (i, j) of an earlier range has j in a deferred run of j's range; the drift that moves
    positions is a pass of its own)."""
    for r in prange(n_ranges):
        _sweep_range(r, span, deferred, dt, False, bodies, books, bounds, table, run)


@jit
def _sweep(parallel, n_ranges, span, deferred, dt, fuse_next, bodies, books, bounds, table, run):
    """The sweep: serially (``parallel`` None: one range) or :func:`sweep_parallel`; returns whether
    the next step's first half was fused into the reduction."""
    if parallel is None:
        return _sweep_range(np.int64(0), span, deferred, dt, fuse_next, bodies, books, bounds, table, run)
    sweep_parallel(n_ranges, span, deferred, dt, bodies, books, bounds, table, run)
    return False


@jit
def _ranges(n, parallel):
    """``(n_ranges, span)`` of the sweep: one range of all ``n`` bodies, or about ``parallel //
    SWEEP_RANGES_PER_BLOCKS`` ranges."""
    if parallel is None:
        span = block_size(n, 1)
    else:
        span = block_size(n, max(parallel // SWEEP_RANGES_PER_BLOCKS, 1))
    return (n + span - 1) // span, span


@jit
def _deferred(parallel, n, span, table):
    """The runs of bodies the parallel sweep reduces last (:func:`deferred_runs`); none serially."""
    if parallel is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int64)
    return deferred_runs(n, span, table.i_start, table.j_start, table.j_pairs)


@jit
def _raised(flags):
    for f in range(flags.shape[0]):
        if flags[f] != 0:
            return True
    return False


@jit(inline="never", _nrt=False)
def _steps(n_steps, dt, resume, bodies, books, bounds, table, run, parallel, plan):
    """The steps of :func:`advance` (the step order of the module docstring, written once), on the
    records it shared; ``plan = (n_ranges, span, deferred, fused)``: the sweep's ranges, the runs
    of bodies reduced after all ranges' pairs, and whether each body's reduction is followed by
    its next first half.  Compiled without Numba's reference counting (``_nrt=False``): it
    allocates nothing, and its records' arrays are shared views (engine/sharing.py), so every
    count would be a call that does nothing."""
    n_ranges, span, deferred, fused = plan
    flags = run.flags
    clumps = bodies.clumps
    if n_steps < 0:
        # forces and torques only: the sweep with dt = 0 (no history advanced, no kick); the
        # state's velocities stand in for the predicted ones (dead between steps)
        vel, angvel, vel_pred, angvel_pred = bodies.vel, bodies.angvel, bodies.vel_pred, bodies.angvel_pred
        for p in range(vel.shape[0]):
            for d in range(3):
                vel_pred[p, d] = vel[p, d]
                angvel_pred[p, d] = angvel[p, d]
        _sweep(parallel, n_ranges, span, deferred, 0.0, False, bodies, books, bounds, table, run)
        reduce_deferred(parallel, deferred, 0.0, bodies, books, bounds, table, run)
        clump_kick(0.0, clumps, bodies, bounds, run)
        return 0, resume
    if n_steps == 0:
        return 0, resume
    if not resume:
        kick_drift_all(parallel, dt, bodies, table, run)
        clump_drift(dt, clumps, bodies, table, run)
        move_boundaries(dt, bodies, books, bounds, table, run)
        if _raised(flags):
            return 0, True
    for s in range(n_steps):
        fused_next = _sweep(parallel, n_ranges, span, deferred, dt, fused and s < n_steps - 1, bodies, books, bounds,
                            table, run)
        reduce_deferred(parallel, deferred, dt, bodies, books, bounds, table, run)
        clump_kick(dt, clumps, bodies, bounds, run)
        # an overlap beyond the guard ends the call on a step boundary (a consistent state to
        # diagnose); in a fused sweep the pairs decided it
        if fused:
            last = not fused_next
        else:
            last = s == n_steps - 1 or flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0
        if not last:
            if not fused:
                kick_drift_all(parallel, dt, bodies, table, run)
                clump_drift(dt, clumps, bodies, table, run)
            move_boundaries(dt, bodies, books, bounds, table, run)
        if _raised(flags):
            return s + 1, not last
    return n_steps, False


@kernel
def advance(n_steps, dt, resume, bodies, books, bounds, table, run, parallel):
    """Take up to ``n_steps`` steps of size ``dt``; return ``(steps_completed, mid_step)``.

    Each step is the sweep of the module docstring.  The call returns early when a flag is raised.
    When the drift has taken a body, a wall or a mesh beyond half the skin, the state is in the
    middle of a step (``mid_step`` True: positions advanced, forces not yet evaluated); the
    launcher rebuilds the neighbour list and calls again with ``resume=True``.  An overlap beyond
    the guard or a non-finite value found by the force evaluation ends the step first (its second
    half-kick, not the next step's drift), so that the launcher diagnoses a state on a step
    boundary.  Otherwise the call ends on a step boundary.  ``n_steps = -1``: evaluate the forces
    and torques of the current state only (nothing moves, no history advances: the start of a run).

    ``bodies``, ``books``, ``bounds``, ``table``, ``run``: the records of
    :mod:`contactlab.engine.step_records`, built by :class:`contactlab.engine.stepper.Stepper`;
    ``parallel``: None (serial) or the block count of the parallel loops (module docstring).
    """
    n = bodies.pos.shape[0]
    n_ranges, span = _ranges(n, parallel)
    deferred = _deferred(parallel, n, span, table)
    # one block and no clumps: each body's reduction is followed by its next first half (clumps
    # move after the reduction of all their members)
    fused = n_ranges == 1 and n <= SWEEP_BLOCK and bodies.clumps is None
    return _steps(n_steps, dt, resume, share(bodies), share(books), share(bounds), share(table), share(run), parallel,
                  (n_ranges, span, deferred, fused))


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
        f, m, energy, diss, act, h_new = LAW(g, params, load_history(work, 0), dt[t])
        store_history(work, 0, h_new)
        dissipation[t] = book_dissipation(terms, t, work, 0, diss)
        for d in range(3):
            force[t, d] = f[d]
            couple[t, d] = m[d]
        stored[t] = energy
        active[t] = act
        for c in range(work.shape[1]):
            hist_out[t, c] = work[0, c]
