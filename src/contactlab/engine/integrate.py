"""The law-independent half of a time step: kick, drift, rotation, reduction to bodies, moving walls
and meshes.

This file is a *template* like :mod:`contactlab.engine.kernels`: :mod:`contactlab.engine.codegen`
writes it out once (as a module whose name hashes its source and everything it imports) and every
law's generated kernel module imports its kernels from there.  They do not depend on the contact
law, so they are compiled once per machine and shared by all laws and shape variants (compiled
per law they were ~40 % of each law's first-run compilation).  See :mod:`contactlab.engine.kernels`
for the step they belong to.

* ``kick_drift``: ``v(n+1/2) = v(n) + dt/2 a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``; orientation
  rotated by ``omega(n+1/2) dt`` (bodies with a full inertia tensor through their angular
  momentum); velocities predicted to ``n+1``, ``v* = v(n+1/2) + dt/4 (a(n) + a(n-1))``; skin check.

The predictor uses the mean of the last two accelerations (``previous``: per body the force and
torque of the evaluation before the last, (N, 6) float32), not ``a(n)`` alone.  Both are second-order
accurate, but a dashpot sees a period-2 oscillation (the motion that goes unstable first) through
``v(n+1/2) + dt/2 a(n)`` at twice the speed of the half-step velocity: there a dashpot of
coefficient ``c`` acts like a spring ``4 c / dt`` instead of ``2 c / dt``, and the stable step of a
damped contact fell from ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` to that of ``2 zeta``; a body with
several frictional, damped contacts then created energy at a third of the single-contact limit
(docs/physics.md, "Why a damped packing can create energy").  With the mean, the dashpot responds
to a period-2 motion as the half-step velocity does and the classic bound holds again.
* ``reduce_kick``: per body, the partner sides of its contacts in a fixed order, gravity, local
  damping, the closing half kick, the non-finite check, and (fused) the next step's kick-drift.
* ``move_walls`` / ``move_meshes``: kinematic walls and meshes.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from contactlab._jit import jit, kernel, pkernel
from contactlab.engine.layout import (ACTIVE, FLAG_FAST, FLAG_REBUILD, FLAG_STATE_NAN, N_OWN, OUT_FORCE, OUT_TORQUE_J,
                                      OWN_BOUNDARY, OWN_DISSIPATION, OWN_FORCE, OWN_TORQUE)
from contactlab.geometry.rotation import quat_matrix

__all__ = ["kick_drift", "kick_drift_range", "reduce_kick", "reduce_kick_range", "kick_drift_block",
           "reduce_kick_block", "deferred_runs", "reduce_kick_deferred", "kick_drift_range_spheres", "reduce_kick_range_spheres", "move_walls", "move_meshes", "block_size",
           "rotate_quaternion", "keep_previous"]


@jit
def rotate_quaternion(q0, q1, q2, q3, wx, wy, wz, dt):
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
def block_size(n, n_blocks):
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


# The two rigid-body updates below are compiled as functions of their own (inline="never"), not
# inlined into the per-body loops by Numba: inlined, their bodies (four inertia rotations and two
# quaternion updates) were copied into every loop and typed there before the spheres-only
# variant's ``rigid is None`` could remove them, which made the law-independent kernels' first
# compilation ~25 s longer (benchmarks/README.md, "First-run compilation").  Compiled alone, with
# ``rigid`` None each is an empty function; the results are the same bits.
@jit(inline="never")
def _rigid_kick(p, h, torque, angvel, quat, rigid):
    """``omega += h I^-1 torque`` for a body with a full inertia tensor (through its angular
    momentum, which a torque changes directly; the tensor is diagonal in the body frame)."""
    if rigid is None:  # spheres only (never called then; the branch is removed at compile time)
        return
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


@jit(inline="never")
def _rigid_rotate(p, dt, torque, previous, angvel, angvel_pred, quat, rigid):
    """Half kick and drift of the orientation of a free body with a full inertia tensor.

    The angular momentum ``L`` after the half kick stays fixed during the drift; the body turns
    with the angular velocity ``R I^-1 R^T L`` taken at the half-turned orientation (a midpoint
    rule, second order, exact for a torque-free sphere-like body), after which the angular
    velocity is that of ``L`` at the new orientation, and the prediction for the force time adds
    a half kick of the mean of the last two torques (``previous[p, 3:]`` the one before the last)."""
    if rigid is None:  # spheres only (never called then; the branch is removed at compile time)
        return
    shape_kind, inertia_p, inv_inertia_p = rigid
    h = 0.5 * dt
    q = (quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3])
    ip = (inertia_p[p, 0], inertia_p[p, 1], inertia_p[p, 2])
    iip = (inv_inertia_p[p, 0], inv_inertia_p[p, 1], inv_inertia_p[p, 2])
    L = _inertia_apply(q, ip, (angvel[p, 0], angvel[p, 1], angvel[p, 2]))
    L = (L[0] + h * torque[p, 0], L[1] + h * torque[p, 1], L[2] + h * torque[p, 2])
    w = _inertia_apply(q, iip, L)
    qm = rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], h)
    w = _inertia_apply(qm, iip, L)
    qn = rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], dt)
    w = _inertia_apply(qn, iip, L)
    q2 = 0.5 * h
    wp = _inertia_apply(qn, iip, (L[0] + q2 * (torque[p, 0] + previous[p, 3]), L[1] + q2 * (torque[p, 1] + previous[p, 4]),
                                  L[2] + q2 * (torque[p, 2] + previous[p, 5])))
    for d in range(3):
        angvel[p, d] = w[d]
        angvel_pred[p, d] = wp[d]
    for d in range(4):
        quat[p, d] = qn[d]


@jit
def keep_previous(previous, p, force, torque, new, kick_dt):
    """Row ``p`` of ``previous`` (force and torque of the evaluation before the last, for the next
    step's predictor) before ``force[p]`` and ``torque[p]`` take the ``new`` loads (a 6-tuple): the
    old ones, or, for an evaluation without a kick (``kick_dt`` 0: a run's start, a re-evaluation),
    which has no step behind it, the new ones."""
    if kick_dt > 0.0:
        for c in range(3):
            previous[p, c] = force[p, c]
            previous[p, 3 + c] = torque[p, c]
    else:
        for c in range(6):
            previous[p, c] = new[c]


@jit
def _full_tensor(rigid, p, ii):
    """Whether body ``p`` turns with a full inertia tensor.  ``rigid`` is None for a scene of
    spheres only: Numba then removes the rigid-body branches before compiling.  (Compiled in, even
    never taken, they made Numba keep an atomic reference-count increment and decrement on every
    array argument of the per-body loops at every call: ~300 ns per step, half of a two-body step,
    benchmarks/README.md, issue 16.)"""
    if rigid is None:
        return False
    return rigid[0][p] != 0 and ii > 0.0


@jit
def _kick_drift_one(p, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred,
                    ref_pos, half_skin, flags, rigid):
    """First half of a step for body p: half kick, drift, rotation, velocity prediction; flag a
    neighbour-list rebuild if the body is now farther than half the skin from where the list
    was built (and FAST if this one step moved it that far)."""
    h = 0.5 * dt
    im = inv_mass[p]
    ii = inv_inertia[p]
    full_tensor = _full_tensor(rigid, p, ii)
    sx = 0.0
    for d in range(3):
        a = force[p, d] * im
        vh = vel[p, d] + h * a
        vel[p, d] = vh
        step = dt * vh
        pos[p, d] += step
        sx += step * step
        # the predictor: the mean of the last two accelerations (see the module docstring)
        vel_pred[p, d] = vh + 0.5 * h * (a + previous[p, d] * im)
        if not full_tensor:
            al = torque[p, d] * ii
            wh = angvel[p, d] + h * al
            angvel[p, d] = wh
            angvel_pred[p, d] = wh + 0.5 * h * (al + previous[p, 3 + d] * ii)
    if full_tensor:
        _rigid_rotate(p, dt, torque, previous, angvel, angvel_pred, quat, rigid)
    else:
        q = rotate_quaternion(quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3],
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


@jit
def _kick_drift_loop(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred,
                     angvel_pred, ref_pos, half_skin, flags, rigid):
    """The loop of :func:`kick_drift_range` (``rigid`` None: spheres only)."""
    for p in range(p0, p1):
        _kick_drift_one(p, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred,
                        angvel_pred, ref_pos, half_skin, flags, rigid)



@kernel
def kick_drift_range(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                     flags, rigid):
    """:func:`kick_drift` for bodies ``p0 <= p < p1``, serially (one block of the parallel loop, or
    the whole step of a small scene), in a scene with bodies of full inertia tensors."""
    _kick_drift_loop(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                     flags, rigid)


@kernel
def kick_drift_range_spheres(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                             flags):
    """:func:`kick_drift_range` for a scene of spheres only (its rigid-body branches compiled away)."""
    _kick_drift_loop(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                     flags, None)


@jit(inline="never")
def kick_drift_block(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                     flags, rigid):
    """:func:`kick_drift_range`, or its spheres-only twin when ``rigid`` is None (the branch not taken
    is removed at compile time: each stays compiled for one signature)."""
    if rigid is None:
        kick_drift_range_spheres(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                                 flags)
    else:
        kick_drift_range(p0, p1, dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin,
                         flags, rigid)

@pkernel
def kick_drift(dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos,
               half_skin, flags, n_blocks, rigid):
    """First half of a step for every body (fixed bodies just drift), with the skin check."""
    n = pos.shape[0]
    b = block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        kick_drift_block(c * b, min((c + 1) * b, n), dt, pos, vel, angvel, quat, force, torque, previous,
                         inv_mass, inv_inertia, vel_pred, angvel_pred, ref_pos, half_skin, flags, rigid)


@jit
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@jit
def _reduce_kick_loop(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel,
                      angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work,
                      ref_pos, kick_dt, drift_dt, half_skin, flags, damping,
                      rigid):
    """The loop of :func:`reduce_kick_range` (``rigid`` None: spheres only)."""
    local_damping, damping_work, damping_force = damping
    h = 0.5 * kick_dt
    for p in range(p0, p1):
        im = inv_mass[p]
        fx = owner[p, OWN_FORCE]
        fy = owner[p, OWN_FORCE + 1]
        fz = owner[p, OWN_FORCE + 2]
        if im > 0.0:
            fx += mass[p] * gravity[0]
            fy += mass[p] * gravity[1]
            fz += mass[p] * gravity[2]
        tx = owner[p, OWN_TORQUE]
        ty = owner[p, OWN_TORQUE + 1]
        tz = owner[p, OWN_TORQUE + 2]
        # only active contacts exert a force (the outputs of the others are zero): testing the
        # status byte spares reading their output rows, which at 1e5 spheres come from DRAM
        # (62 of 73 ns per sphere of this loop in a falling scene, benchmarks/README.md)
        for q in range(j_start[p], j_start[p + 1]):
            k = j_pairs[q]
            if status[k] != ACTIVE:
                continue
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
        keep_previous(previous, p, force, torque, (fx, fy, fz, tx, ty, tz), kick_dt)
        force[p, 0] = fx
        force[p, 1] = fy
        force[p, 2] = fz
        torque[p, 0] = tx
        torque[p, 1] = ty
        torque[p, 2] = tz
        dissipated[p] += owner[p, OWN_DISSIPATION]
        for c in range(diss_terms.shape[1]):
            diss_terms[p, c] += owner[p, N_OWN + c]
        boundary_work[p] += owner[p, OWN_BOUNDARY]
        ii = inv_inertia[p]
        vx = vel[p, 0] + h * fx * im
        vy = vel[p, 1] + h * fy * im
        vz = vel[p, 2] + h * fz * im
        vel[p, 0] = vx
        vel[p, 1] = vy
        vel[p, 2] = vz
        if _full_tensor(rigid, p, ii):
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
            _kick_drift_one(p, drift_dt, pos, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, vel_pred,
                            angvel_pred, ref_pos, half_skin, flags, rigid)



@kernel
def reduce_kick_range(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                      vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt,
                      half_skin, flags, damping, rigid):
    """:func:`reduce_kick` for bodies ``p0 <= p < p1``, serially (one block of the parallel loop,
    or the whole step of a small scene), in a scene with bodies of full inertia tensors."""
    _reduce_kick_loop(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                      vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt,
                      half_skin, flags, damping, rigid)


@kernel
def reduce_kick_range_spheres(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                              vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt,
                              drift_dt, half_skin, flags, damping):
    """:func:`reduce_kick_range` for a scene of spheres only (its rigid-body branches compiled away)."""
    _reduce_kick_loop(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                      vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt,
                      half_skin, flags, damping, None)


@jit(inline="never")
def reduce_kick_block(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                      vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt,
                      half_skin, flags, damping, rigid):
    """:func:`reduce_kick_range`, or its spheres-only twin when ``rigid`` is None (see
    :func:`kick_drift_block`)."""
    if rigid is None:
        reduce_kick_range_spheres(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                                  vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt,
                                  drift_dt, half_skin, flags, damping)
    else:
        reduce_kick_range(p0, p1, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous,
                          vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt,
                          half_skin, flags, damping, rigid)

@pkernel
def reduce_kick(j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos, vel, angvel, quat,
                force, torque, previous, vel_pred, angvel_pred, dissipated, diss_terms, boundary_work, ref_pos, kick_dt,
                drift_dt, half_skin, flags, n_blocks, damping, rigid):
    """Total force and torque per sphere: its own side (``owner``, from :func:`pair_forces`) plus
    the partner sides of the contacts where it is ``j`` (a CSR over the pair list, fixed order: no
    atomics, the same bits at any thread count), plus gravity; finish the step's kick.  Then, if
    ``drift_dt > 0``, start the next step right away (its half kick, drift and skin check: the same
    arithmetic as :func:`kick_drift`, one pass over the spheres fewer).

    ``kick_dt`` is the step's dt (0 for a force evaluation without a kick).
    """
    n = pos.shape[0]
    b = block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        reduce_kick_block(c * b, min((c + 1) * b, n), j_start, j_pairs, out, status, owner, mass, inv_mass,
                          inv_inertia, gravity, pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred,
                          dissipated, diss_terms, boundary_work, ref_pos, kick_dt, drift_dt, half_skin, flags,
                          damping, rigid)


@pkernel
def reduce_kick_deferred(deferred, j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia, gravity, pos,
                         vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated, diss_terms,
                         boundary_work, ref_pos, kick_dt, half_skin, flags, damping, rigid):
    """:func:`reduce_kick` (no drift) of the bodies the parallel sweep left out: the runs of
    bodies of ``deferred = (run_lo, run_hi, range_first)`` (:func:`deferred_runs`), the ranges'
    runs in parallel."""
    run_lo, run_hi, range_first = deferred
    for r in prange(range_first.shape[0] - 1):
        for k in range(range_first[r], range_first[r + 1]):
            reduce_kick_block(run_lo[k], run_hi[k], j_start, j_pairs, out, status, owner, mass, inv_mass, inv_inertia,
                              gravity, pos, vel, angvel, quat, force, torque, previous, vel_pred, angvel_pred, dissipated,
                              diss_terms, boundary_work, ref_pos, kick_dt, 0.0, half_skin, flags, damping, rigid)


#: two runs of deferred bodies closer than this are merged (the bodies between them deferred too):
#: each run costs the sweep one more call of the reduction (its array arguments' reference counts,
#: ~0.1 us), while a deferred body is reduced later, from memory rather than from the cache
DEFERRED_RUN_GAP = 16


@kernel
def deferred_runs(n, span, i_start, j_start, j_pairs):
    """The bodies the parallel sweep over ranges of ``span`` bodies must reduce after all ranges'
    pairs: per range, those acted on by a pair of an earlier range (owned by a body below the
    range's start), as runs ``[run_lo[k], run_hi[k])``, the runs of range ``r`` at
    ``range_first[r] <= k < range_first[r + 1]``; runs closer than :data:`DEFERRED_RUN_GAP` are
    merged.  A body's pairs as partner ``j`` are listed in order of the pair index, which grows
    with the owner: the first one has the lowest owner.  Returns ``(run_lo, run_hi, range_first)``.
    (Serial: one pass per kernel call, not per step; a parallel region costs seconds to compile.)"""
    n_ranges = (n + span - 1) // span
    run_lo = np.empty(n + 1, dtype=np.int64)
    run_hi = np.empty(n + 1, dtype=np.int64)
    range_first = np.empty(n_ranges + 1, dtype=np.int64)
    k = 0
    for r in range(n_ranges):
        a = r * span
        range_first[r] = k
        first_own = i_start[a]
        for p in range(a, min(a + span, n)):
            if j_start[p] < j_start[p + 1] and j_pairs[j_start[p]] < first_own:
                if k > range_first[r] and p - run_hi[k - 1] < DEFERRED_RUN_GAP:
                    run_hi[k - 1] = p + 1
                else:
                    run_lo[k] = p
                    run_hi[k] = p + 1
                    k += 1
    range_first[n_ranges] = k
    return run_lo[:k].copy(), run_hi[:k].copy(), range_first


@kernel
def move_walls(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin, flags, cylinders):
    """Translate the walls by one step and flag a rebuild if one left half the skin (a plane: along
    its normal; a cylinder, ``cylinders = (wall_kind, wall_shape)``: in any direction, its ends
    move with it; None in a scene of plane walls only)."""
    for w in range(wall_point.shape[0]):
        s = 0.0
        for d in range(3):
            wall_point[w, d] += dt * wall_vel[w, d]
            s += (wall_point[w, d] - wall_ref[w, d]) * wall_normal[w, d]
        if cylinders is not None:
            if cylinders[0][w] != 0:
                s = 0.0
                for d in range(3):
                    s += (wall_point[w, d] - wall_ref[w, d]) ** 2
                s = math.sqrt(s)
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
        q = rotate_quaternion(mesh_quat[msh, 0], mesh_quat[msh, 1], mesh_quat[msh, 2], mesh_quat[msh, 3],
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

