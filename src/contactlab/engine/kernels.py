"""Compiled step kernels, written once and specialised per contact law.

This file is a *template*: :mod:`contactlab.engine.codegen` copies it into a generated module in
which the line marked ``@@LAW_IMPORT@@`` imports the chosen law as ``LAW``.  Each generated module
is an ordinary importable file, so Numba caches its compiled kernels on disk (a kernel built from a
closure or taking the law as an argument would be recompiled in every process).

One step (velocity Verlet with a second-order velocity predictor for dissipative forces):

1. ``kick_drift``: ``v(n+1/2) = v(n) + dt/2 a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``; orientation
   rotated by ``omega(n+1/2) dt``; velocities predicted to ``n+1``: ``v* = v(n+1/2) + dt/2 a(n)``;
   a sphere farther than half the skin from where the neighbour list was built flags a rebuild;
   walls translate.
2. ``pair_forces``: for every candidate pair, narrow phase -> ContactGeometry -> LAW; each sphere
   sums its own side of the contacts it owns (its partners ``j > i`` and its walls) and every
   pair stores the partner's side (force, torque on ``j``, elastic energy).
3. ``reduce_kick``: per sphere, add the partner sides of the contacts where it is ``j`` in a fixed
   order (CSR over the pair list; no atomics, bit-identical at any thread count) and gravity,
   ``v(n+1) = v(n+1/2) + dt/2 a(n+1)``, check for non-finite values; within a run it goes straight
   on with step 1 of the next step for the same sphere (one pass over the spheres per step
   instead of two).

Positions-only forces make this exactly velocity Verlet (symplectic); forces that depend on velocity
(damping, friction) see the predicted velocity ``v*``, accurate to O(dt^2).  Springs in the laws
accumulate the exact displacement increments ``dt v(n+1/2)``, so a stuck spring is conservative.

Kernels never raise: they set flags (see :mod:`contactlab.engine.layout`) and return.

Parallel loops run over *blocks* (``prange`` over block numbers, a serial loop inside a compiled
function per block, about eight blocks per thread).  Inside the serial loop the law, the narrow
phase and the vector helpers are inlined, which makes the per-pair work as cheap as hand-written
code; a ``prange`` over single pairs calling a function per pair was measured 2-3 times slower.
Blocks never share an output element, so the result does not depend on the number of threads.
"""
from __future__ import annotations

import math

from numba import prange

from contactlab._jit import jit, kernel, pkernel
from contactlab.engine.layout import (
    ACTIVE, CLEARED, FLAG_BOND_EVENT, FLAG_FAST, FLAG_OVERLAP, FLAG_REBUILD, FLAG_STATE_NAN, INACTIVE, N_OWN,
    OUT_ELASTIC, OUT_EVENT, OUT_FORCE, OUT_NORMAL, OUT_OVERLAP, OUT_POINT, OUT_TORQUE_J,
)
from contactlab.geometry.record import ContactGeometry
from contactlab.geometry.rotation import quat_matrix
from contactlab.geometry.sphere_sphere import sphere_sphere
from contactlab.geometry.sphere_wall import sphere_wall
from contactlab.geometry.dispatch import body_pair, body_triangle, body_wall, select_triangles  # @@SHAPES_IMPORT@@
from contactlab.laws.hertz_mindlin import law as LAW  # @@LAW_IMPORT@@
LAW_RANGE = 0.0  # @@LAW_RANGE@@
HIST_SIZE = 7  # @@HIST_SIZE@@
from contactlab.vec import add, cross, dot, scale, sub

__all__ = ["advance", "pair_forces", "kick_drift", "reduce_kick", "probe", "move_meshes"]


@jit
def _rotate_quaternion(q0, q1, q2, q3, wx, wy, wz, dt):
    """Rotate the unit quaternion (q0, q1, q2, q3) by the constant angular velocity w over dt.

    The rotation quaternion is ``(cos(a/2), sin(a/2) w/|w|)`` with ``a = |w| dt``; for the small
    angles of a time step its Taylor series (to a^6, below round-off for a < 0.02) replaces the
    trigonometric functions, which dominate the cost of this per-sphere update otherwise.
    """
    w2 = wx * wx + wy * wy + wz * wz
    if w2 == 0.0:
        return q0, q1, q2, q3
    a2 = w2 * dt * dt
    small = a2 < 4e-4
    if small:
        c = 1.0 - a2 * (1.0 / 8.0) + a2 * a2 * (1.0 / 384.0) - a2 * a2 * a2 * (1.0 / 46080.0)
        s = dt * (0.5 - a2 * (1.0 / 48.0) + a2 * a2 * (1.0 / 3840.0) - a2 * a2 * a2 * (1.0 / 645120.0))
    else:
        wn = math.sqrt(w2)
        s = math.sin(0.5 * wn * dt) / wn
        c = math.cos(0.5 * wn * dt)
    dx, dy, dz = s * wx, s * wy, s * wz
    # dq (x) q, dq = (c, dx, dy, dz)
    r0 = c * q0 - dx * q1 - dy * q2 - dz * q3
    r1 = c * q1 + dx * q0 + dy * q3 - dz * q2
    r2 = c * q2 - dx * q3 + dy * q0 + dz * q1
    r3 = c * q3 + dx * q2 - dy * q1 + dz * q0
    # the rotation keeps the norm up to round-off; a Newton step towards norm 1 stops any drift
    # (for a norm of 1 + e it leaves 1 + O(e^2)), without a square root or a division
    n2 = r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3
    inv = 1.5 - 0.5 * n2 if small else 1.0 / math.sqrt(n2)
    return r0 * inv, r1 * inv, r2 * inv, r3 * inv


@jit
def _block_size(n, n_blocks):
    """Items per block of a parallel loop split into about ``n_blocks`` blocks.

    Each block is one call of a compiled function, whose array arguments Numba reference-counts
    with atomic operations on counters that all threads share; few, large blocks (the launcher
    asks for BLOCKS_PER_THREAD per thread) keep that cost negligible.  The blocking does not change
    any result: every sphere and every pair is computed the same way in any block.
    """
    return max((n + n_blocks - 1) // n_blocks, 1)


@jit
def _inertia_apply(q, d, w):
    """``R diag(d) R^T w`` for the orientation ``q`` (body to global): the global angular momentum
    of angular velocity ``w`` for principal moments ``d``, or, with the inverse moments, the angular
    velocity of an angular momentum."""
    r = quat_matrix(q)
    b0 = r[0][0] * w[0] + r[1][0] * w[1] + r[2][0] * w[2]
    b1 = r[0][1] * w[0] + r[1][1] * w[1] + r[2][1] * w[2]
    b2 = r[0][2] * w[0] + r[1][2] * w[1] + r[2][2] * w[2]
    b0 *= d[0]
    b1 *= d[1]
    b2 *= d[2]
    return (r[0][0] * b0 + r[0][1] * b1 + r[0][2] * b2,
            r[1][0] * b0 + r[1][1] * b1 + r[1][2] * b2,
            r[2][0] * b0 + r[2][1] * b1 + r[2][2] * b2)


@jit
def _rigid_kick(p, h, torque, angvel, quat, rigid):
    """``omega += h I^-1 torque`` for a body with a full inertia tensor (through its angular
    momentum, which a torque changes directly; the tensor is diagonal in the body frame)."""
    shape_kind, inertia_p, inv_inertia_p = rigid
    q = (quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3])
    ip = (inertia_p[p, 0], inertia_p[p, 1], inertia_p[p, 2])
    iip = (inv_inertia_p[p, 0], inv_inertia_p[p, 1], inv_inertia_p[p, 2])
    L = _inertia_apply(q, ip, (angvel[p, 0], angvel[p, 1], angvel[p, 2]))
    L = (L[0] + h * torque[p, 0], L[1] + h * torque[p, 1], L[2] + h * torque[p, 2])
    w = _inertia_apply(q, iip, L)
    angvel[p, 0] = w[0]
    angvel[p, 1] = w[1]
    angvel[p, 2] = w[2]


@jit
def _rigid_rotate(p, dt, torque, angvel, angvel_pred, quat, rigid):
    """Half kick and drift of the orientation of a free body with a full inertia tensor.

    The angular momentum ``L`` after the half kick stays fixed during the drift; the body turns
    with the angular velocity ``R I^-1 R^T L`` taken at the half-turned orientation (a midpoint
    rule, second order, exact for a torque-free sphere-like body), after which the angular
    velocity is that of ``L`` at the new orientation, and the prediction for the force time adds
    the second half kick of the last torque."""
    shape_kind, inertia_p, inv_inertia_p = rigid
    h = 0.5 * dt
    q = (quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3])
    ip = (inertia_p[p, 0], inertia_p[p, 1], inertia_p[p, 2])
    iip = (inv_inertia_p[p, 0], inv_inertia_p[p, 1], inv_inertia_p[p, 2])
    L = _inertia_apply(q, ip, (angvel[p, 0], angvel[p, 1], angvel[p, 2]))
    L = (L[0] + h * torque[p, 0], L[1] + h * torque[p, 1], L[2] + h * torque[p, 2])
    w = _inertia_apply(q, iip, L)
    qm = _rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], h)
    w = _inertia_apply(qm, iip, L)
    qn = _rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], dt)
    w = _inertia_apply(qn, iip, L)
    wp = _inertia_apply(qn, iip, (L[0] + h * torque[p, 0], L[1] + h * torque[p, 1], L[2] + h * torque[p, 2]))
    for d in range(3):
        angvel[p, d] = w[d]
        angvel_pred[p, d] = wp[d]
    for d in range(4):
        quat[p, d] = qn[d]


@jit
def _kick_drift_one(p, dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred, angvel_pred,
                    ref_pos, half_skin, flags, rigid):
    """First half of a step for body p: half kick, drift, rotation, velocity prediction; flag a
    neighbour-list rebuild if the body is now farther than half the skin from where the list
    was built (and FAST if this one step moved it that far)."""
    h = 0.5 * dt
    im = inv_mass[p]
    ii = inv_inertia[p]
    full_tensor = rigid[0][p] != 0 and ii > 0.0
    sx = 0.0
    for d in range(3):
        a = force[p, d] * im
        vh = vel[p, d] + h * a
        vel[p, d] = vh
        step = dt * vh
        pos[p, d] += step
        sx += step * step
        vel_pred[p, d] = vh + h * a
        if not full_tensor:
            al = torque[p, d] * ii
            wh = angvel[p, d] + h * al
            angvel[p, d] = wh
            angvel_pred[p, d] = wh + h * al
    if full_tensor:
        _rigid_rotate(p, dt, torque, angvel, angvel_pred, quat, rigid)
    else:
        q = _rotate_quaternion(quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3],
                               angvel[p, 0], angvel[p, 1], angvel[p, 2], dt)
        quat[p, 0] = q[0]
        quat[p, 1] = q[1]
        quat[p, 2] = q[2]
        quat[p, 3] = q[3]
    dx = pos[p, 0] - ref_pos[p, 0]
    dy = pos[p, 1] - ref_pos[p, 1]
    dz = pos[p, 2] - ref_pos[p, 2]
    hs2 = half_skin * half_skin
    if dx * dx + dy * dy + dz * dz > hs2:
        flags[FLAG_REBUILD] = 1
        if sx > hs2:
            flags[FLAG_FAST] = 1


@kernel
def _kick_drift_chunk(p0, p1, dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred,
                      angvel_pred, ref_pos, half_skin, flags, rigid):
    for p in range(p0, p1):
        _kick_drift_one(p, dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred,
                        angvel_pred, ref_pos, half_skin, flags, rigid)


@pkernel
def kick_drift(dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos,
               half_skin, flags, n_blocks, rigid):
    """First half of a step for every body (fixed bodies just drift), with the skin check."""
    n = pos.shape[0]
    b = _block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        _kick_drift_chunk(c * b, min((c + 1) * b, n), dt, pos, vel, angvel, quat, force, torque,
                          inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin, flags, rigid)


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
                 material, wall_point, wall_normal, wall_vel, wall_material, table, hist, out, status, owner, dt,
                 overlap_limit, flags, quat, bodies, meshes):
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
    of a mesh acts once.
    """
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
        for k in range(i_start[i], k_end):
            j = pair_j[k]
            # cheap distance test first: most candidate pairs are apart (bounding spheres for shapes)
            if j < n_s:
                rj = radius[j]
                reach = ri + rj + LAW_RANGE
                dx = pos[j, 0] - xi[0]
                dy = pos[j, 1] - xi[1]
                dz = pos[j, 2] - xi[2]
                apart = dx * dx + dy * dy + dz * dz >= reach * reach
            elif j < n_sw:
                w = j - n_s
                wn = (wall_normal[w, 0], wall_normal[w, 1], wall_normal[w, 2])
                wp = (wall_point[w, 0], wall_point[w, 1], wall_point[w, 2])
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
                if kind_i == 0 and shape_kind[j] == 0:
                    geom, ok = sphere_sphere(xi, (pos[j, 0], pos[j, 1], pos[j, 2]), ri, rj, inv_mass[i], inv_mass[j],
                                             vi, vj, wi, wj, mvi, (mid_vel[j, 0], mid_vel[j, 1], mid_vel[j, 2]),
                                             mwi, (mid_angvel[j, 0], mid_angvel[j, 1], mid_angvel[j, 2]), dt)
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
            f, m, energy, diss, active, h_new = LAW(geom, table[material[i], mj], _load_history(hist, k), dt)
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
            out[k, OUT_FORCE] = f[0]
            out[k, OUT_FORCE + 1] = f[1]
            out[k, OUT_FORCE + 2] = f[2]
            out[k, OUT_TORQUE_J] = tj[0]
            out[k, OUT_TORQUE_J + 1] = tj[1]
            out[k, OUT_TORQUE_J + 2] = tj[2]
            out[k, OUT_ELASTIC] = energy
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
        owner[i, 0] = fx
        owner[i, 1] = fy
        owner[i, 2] = fz
        owner[i, 3] = tx
        owner[i, 4] = ty
        owner[i, 5] = tz
        owner[i, 6] = diss_sum
        # boundary work of the step by the trapezoidal rule over the powers at its two ends (the
        # velocity-Verlet work of a force), second order like the rest of the energy bookkeeping
        owner[i, 7] = 0.5 * (owner[i, 8] + power) * dt
        owner[i, 8] = power


@pkernel
def pair_forces(i_start, pair_j, pos, vel, angvel, mid_vel, mid_angvel, radius, inv_mass, fixed,
                material, wall_point, wall_normal, wall_vel, wall_material, table, hist, out, status, owner, dt,
                overlap_limit, flags, n_blocks, quat, bodies, meshes):
    """Evaluate the law on every candidate pair: per-sphere sums of the owner's side in ``owner``
    (force, torque, dissipation, boundary work of the step), the partner's side per pair in ``out``.

    ``vel``/``angvel``: velocities at the force time (predicted); ``mid_vel``/``mid_angvel``: at
    the middle of the step that just ended (they give the exact displacement increments).  ``dt``
    is that step (0 for an evaluation that must not advance history).  ``hist[k]`` holds the law's
    history of pair ``k`` (handed to the law as a tuple, the new tuple written back), ``out[k]`` its outputs (columns in ``layout``), ``status[k]`` ACTIVE,
    INACTIVE or CLEARED.  A non-finite force shows up as a non-finite velocity in
    :func:`reduce_kick`, which flags it; the launcher then names the contact.
    """
    n = pos.shape[0]
    b = _block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        _pairs_chunk(c * b, min((c + 1) * b, n), i_start, pair_j, pos, vel, angvel, mid_vel,
                     mid_angvel, radius, inv_mass, fixed, material, wall_point, wall_normal, wall_vel,
                     wall_material, table, hist, out, status, owner, dt, overlap_limit, flags, quat, bodies, meshes)


@jit
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@kernel
def _reduce_chunk(p0, p1, j_start, j_pairs, out, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel,
                  quat, force, torque, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt,
                  drift_dt, half_skin, flags, local_damping, damping_work, damping_force, rigid):
    h = 0.5 * kick_dt
    for p in range(p0, p1):
        im = inv_mass[p]
        fx = owner[p, 0]
        fy = owner[p, 1]
        fz = owner[p, 2]
        if im > 0.0:
            fx += mass[p] * gravity[0]
            fy += mass[p] * gravity[1]
            fz += mass[p] * gravity[2]
        tx = owner[p, 3]
        ty = owner[p, 4]
        tz = owner[p, 5]
        # inactive pairs have zero outputs: adding them is cheaper than testing their status
        for q in range(j_start[p], j_start[p + 1]):
            k = j_pairs[q]
            fx -= out[k, OUT_FORCE]
            fy -= out[k, OUT_FORCE + 1]
            fz -= out[k, OUT_FORCE + 2]
            tx += out[k, OUT_TORQUE_J]
            ty += out[k, OUT_TORQUE_J + 1]
            tz += out[k, OUT_TORQUE_J + 2]
        if local_damping > 0.0 and im > 0.0:
            # Cundall's local damping: each component of the force and torque reduced by a fraction
            # of its size against the velocity of the half step.  Its work is booked as the kinetic
            # energy sees it: velocity Verlet changes it by dt/4 (F(n) + F(n+1)) . (v(n) + v(n+1))
            # per step, a sum over the forces, so the damping force of the last evaluation is kept
            # (``damping_force``) and v(n), v(n+1) are rebuilt from the half-step velocity
            ii = inv_inertia[p]
            d = (-local_damping * abs(fx) * _sign(vel[p, 0]), -local_damping * abs(fy) * _sign(vel[p, 1]),
                 -local_damping * abs(fz) * _sign(vel[p, 2]), -local_damping * abs(tx) * _sign(angvel[p, 0]),
                 -local_damping * abs(ty) * _sign(angvel[p, 1]), -local_damping * abs(tz) * _sign(angvel[p, 2]))
            new = (fx + d[0], fy + d[1], fz + d[2], tx + d[3], ty + d[4], tz + d[5])
            if kick_dt > 0.0:
                work = 0.0
                for c in range(3):
                    v_n = vel[p, c] - h * force[p, c] * im
                    v_next = vel[p, c] + h * new[c] * im
                    w_n = angvel[p, c] - h * torque[p, c] * ii
                    w_next = angvel[p, c] + h * new[3 + c] * ii
                    work += (d[c] + damping_force[p, c]) * (v_n + v_next)
                    work += (d[3 + c] + damping_force[p, 3 + c]) * (w_n + w_next)
                damping_work[p] -= 0.25 * kick_dt * work
            for c in range(6):
                damping_force[p, c] = d[c]
            fx, fy, fz, tx, ty, tz = new
        force[p, 0] = fx
        force[p, 1] = fy
        force[p, 2] = fz
        torque[p, 0] = tx
        torque[p, 1] = ty
        torque[p, 2] = tz
        dissipated[p] += owner[p, 6]
        for c in range(diss_terms.shape[1]):
            diss_terms[p, c] += owner[p, N_OWN + c]
        boundary_work[p] += owner[p, 7]
        ii = inv_inertia[p]
        vx = vel[p, 0] + h * fx * im
        vy = vel[p, 1] + h * fy * im
        vz = vel[p, 2] + h * fz * im
        vel[p, 0] = vx
        vel[p, 1] = vy
        vel[p, 2] = vz
        if rigid[0][p] != 0 and ii > 0.0:
            _rigid_kick(p, h, torque, angvel, quat, rigid)
        else:
            angvel[p, 0] += h * tx * ii
            angvel[p, 1] += h * ty * ii
            angvel[p, 2] += h * tz * ii
        # one test for all: a NaN or an infinity anywhere makes the sum non-finite (a false alarm
        # needs velocities near 1e308, where the launcher's diagnosis finds the sphere anyway);
        # positions only change through these velocities
        if not math.isfinite(vx + vy + vz + angvel[p, 0] + angvel[p, 1] + angvel[p, 2] + pos[p, 0] + pos[p, 1]
                             + pos[p, 2]):
            flags[FLAG_STATE_NAN] = 1
        if drift_dt > 0.0:
            _kick_drift_one(p, drift_dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred,
                            angvel_pred, ref_pos, half_skin, flags, rigid)


@pkernel
def reduce_kick(j_start, j_pairs, out, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat,
                force, torque, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt,
                drift_dt, half_skin, flags, n_blocks, local_damping, damping_work, damping_force, rigid):
    """Total force and torque per sphere: its own side (``owner``, from :func:`pair_forces`) plus
    the partner sides of the contacts where it is ``j`` (a CSR over the pair list, fixed order: no
    atomics, the same bits at any thread count), plus gravity; finish the step's kick.  Then, if
    ``drift_dt > 0``, start the next step right away (its half kick, drift and skin check: the same
    arithmetic as :func:`kick_drift`, one pass over the spheres fewer).

    ``kick_dt`` is the step's dt (0 for a force evaluation without a kick).
    """
    n = pos.shape[0]
    b = _block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        _reduce_chunk(c * b, min((c + 1) * b, n), j_start, j_pairs, out, owner, mass, inv_mass,
                      inv_inertia, gravity, pos, vel, angvel, quat, force, torque, vel_pred, angvel_pred,
                      dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt, half_skin, flags,
                      local_damping, damping_work, damping_force, rigid)


@kernel
def _move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags):
    """Translate the walls by one step and flag a rebuild if one left half the skin."""
    for w in range(wall_point.shape[0]):
        s = 0.0
        for d in range(3):
            wall_point[w, d] += dt * wall_vel[w, d]
            s += (wall_point[w, d] - wall_ref[w, d]) * wall_normal[w, d]
        if abs(s) > half_skin:
            flags[FLAG_REBUILD] = 1


@kernel
def move_meshes(dt, shape_data, meshes, motion, half_skin, flags):
    """Move the kinematic meshes by one step (translation of the reference point, rotation about
    it), update their triangles' vertices and flag a rebuild when a vertex may have moved farther
    than half the skin since the neighbour list was built.

    ``motion = (mesh_local, mesh_first, mesh_build_pos, mesh_build_quat, mesh_size)``: vertices
    of every triangle relative to its mesh's reference point in the mesh's own frame (T, 9), the
    first triangle of each mesh (M + 1,), the reference point and orientation at the last build,
    and the largest distance of a vertex from the reference point (m).
    """
    tri_ref, tri_mesh, mesh_pos, mesh_quat, mesh_vel, mesh_angvel, mesh_material, scratch = meshes
    mesh_local, mesh_first, mesh_build_pos, mesh_build_quat, mesh_size = motion
    for msh in range(mesh_pos.shape[0]):
        still = True
        for d in range(3):
            if mesh_vel[msh, d] != 0.0 or mesh_angvel[msh, d] != 0.0:
                still = False
        if still:
            continue
        for d in range(3):
            mesh_pos[msh, d] += dt * mesh_vel[msh, d]
        q = _rotate_quaternion(mesh_quat[msh, 0], mesh_quat[msh, 1], mesh_quat[msh, 2], mesh_quat[msh, 3],
                               mesh_angvel[msh, 0], mesh_angvel[msh, 1], mesh_angvel[msh, 2], dt)
        for d in range(4):
            mesh_quat[msh, d] = q[d]
        r = quat_matrix(q)
        for t in range(mesh_first[msh], mesh_first[msh + 1]):
            o = tri_ref[t]
            for v in range(3):
                lx = mesh_local[t, 3 * v]
                ly = mesh_local[t, 3 * v + 1]
                lz = mesh_local[t, 3 * v + 2]
                for d in range(3):
                    shape_data[o + 3 * v + d] = mesh_pos[msh, d] + r[d][0] * lx + r[d][1] * ly + r[d][2] * lz
        # a bound on how far any vertex moved since the build: translation + angle x size
        moved = 0.0
        for d in range(3):
            e = mesh_pos[msh, d] - mesh_build_pos[msh, d]
            moved += e * e
        c = abs(q[0] * mesh_build_quat[msh, 0] + q[1] * mesh_build_quat[msh, 1] + q[2] * mesh_build_quat[msh, 2]
                + q[3] * mesh_build_quat[msh, 3])
        angle = 2.0 * math.acos(min(c, 1.0))
        if math.sqrt(moved) + angle * mesh_size[msh] > half_skin:
            flags[FLAG_REBUILD] = 1


@jit
def _raised(flags):
    for f in range(flags.shape[0]):
        if flags[f] != 0:
            return True
    return False


@kernel
def advance(n_steps, dt, resume, pos, vel, angvel, quat, force, torque, vel_pred, angvel_pred,
            radius, mass, inv_mass, inv_inertia, fixed, material, gravity,
            wall_point, wall_normal, wall_vel, wall_material, wall_ref,
            i_start, pair_j, j_start, j_pairs, hist, out, status, owner, table,
            dissipated, diss_terms, boundary_work, ref_pos, half_skin, overlap_limit, flags, n_blocks,
            local_damping, damping_work, damping_force, bodies, rigid, meshes, motion):
    """Take up to ``n_steps`` steps of size ``dt``; return ``(steps_completed, mid_step)``.

    Each step's second half (reduction, kick) is fused with the next step's first half (kick,
    drift).  The call returns early when a flag is raised: after an error, or when the drift has
    taken a body, a wall or a mesh beyond half the skin, in which case the state is in the middle
    of a step (``mid_step`` True: positions advanced, forces not yet evaluated); the launcher
    rebuilds the neighbour list and calls again with ``resume=True``.  Otherwise the call ends on
    a step boundary.

    ``bodies = (shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode)`` (shapes),
    ``rigid = (shape_kind, principal_inertia, inv_principal_inertia)`` (full inertia tensors),
    ``meshes = (tri_ref, tri_mesh, mesh_pos, mesh_quat, mesh_vel, mesh_angvel, mesh_material,
    scratch)`` and ``motion`` (see :func:`move_meshes`).
    """
    if n_steps == 0:
        return 0, resume
    shape_data = bodies[2]
    if not resume:
        kick_drift(dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred, angvel_pred,
                   ref_pos, half_skin, flags, n_blocks, rigid)
        _move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags)
        move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return 0, True
    for s in range(n_steps):
        pair_forces(i_start, pair_j, pos, vel_pred, angvel_pred, vel, angvel, radius, inv_mass, fixed,
                    material, wall_point, wall_normal, wall_vel, wall_material, table, hist, out, status, owner, dt,
                    overlap_limit, flags, n_blocks, quat, bodies, meshes)
        last = s == n_steps - 1
        reduce_kick(j_start, j_pairs, out, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat,
                    force, torque, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, dt,
                    0.0 if last else dt, half_skin, flags, n_blocks, local_damping, damping_work, damping_force, rigid)
        if not last:
            _move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags)
            move_meshes(dt, shape_data, meshes, motion, half_skin, flags)
        if _raised(flags):
            return s + 1, not last
    return n_steps, False


@kernel
def probe(normal, overlap, contact_point, branch_i, branch_j, rel_velocity, rel_angvel, rel_disp, rel_rot,
          radius_i, radius_j, radius, mass, pair_rot, area, volume, dt, params, hist0, chain, force, couple, stored, dissipation, active,
          hist_out, terms):
    """Evaluate the law on ``T`` prescribed contact-geometry records, without a simulation.

    Record ``t`` is assembled from row ``t`` of the field arrays (vectors (T, 3), scalars (T,)) and
    handed to the law with the step ``dt[t]`` and the parameter row ``params``.  With ``chain`` the
    history the law returns is handed to the next record (a prescribed motion); without it every
    record starts from ``hist0`` (independent evaluations).  ``hist0`` (1, H + D) and ``hist_out``
    (T, H + D) hold the law's history followed by the running dissipation per term (the engine's
    per-contact row); ``terms`` (T, N_OWN + D) gets the dissipation of each record per term (columns
    from ``N_OWN``), ``dissipation`` (T,) its total.  Compiled with the kernels and cached with them.
    """
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
