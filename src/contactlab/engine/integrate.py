"""The law-independent half of a time step: kick, drift, rotation, reduction to bodies, the motion
of the boundaries.

This file is a *template* like :mod:`contactlab.engine.kernels`: :mod:`contactlab.engine.codegen`
writes it out once (as a module whose name hashes its source and everything it imports) and every
law's kernel module imports its kernels from there (through its bindings module,
:mod:`contactlab.engine.bindings`).  They do not depend on the contact law, so they are compiled
once per machine and shared by all laws and shape variants.  See :mod:`contactlab.engine.kernels`
for the step they belong to; every function takes the step's records
(:mod:`contactlab.engine.step_records`).

* :func:`kick_drift_block`: ``v(n+1/2) = v(n) + dt/2 a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``;
  orientation rotated by ``omega(n+1/2) dt`` (bodies with a full inertia tensor through their
  angular momentum, :mod:`contactlab.engine.rigid_motion`); velocities predicted to ``n+1``,
  ``v* = v(n+1/2) + dt/4 (a(n) + a(n-1))``; skin check.
* :func:`reduce_block`: per body, the partner sides of its contacts in a fixed order, gravity,
  local damping, the closing half kick, the non-finite check, and (fused, in a scene of one block)
  the next step's kick-drift.
* :func:`move_boundaries`: servo control, walls, the periodic cell and meshes, in that order.

The predictor uses the mean of the last two accelerations (``previous``: per body the force and
torque of the evaluation before the last, (N, 6) float32), not ``a(n)`` alone.  Both are second-order
accurate, but a dashpot sees a period-2 oscillation (the motion that goes unstable first) through
``v(n+1/2) + dt/2 a(n)`` at twice the speed of the half-step velocity: there a dashpot of
coefficient ``c`` acts like a spring ``4 c / dt`` instead of ``2 c / dt``, and the stable step of a
damped contact fell from ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` to that of ``2 zeta``; a body with
several frictional, damped contacts then created energy at a third of the single-contact limit
(docs/physics.md, "Why a damped packing can create energy").  With the mean, the dashpot responds
to a period-2 motion as the half-step velocity does and the classic bound holds again.

The per-body loops (and :mod:`contactlab.engine.kernels`' step loop) are compiled without Numba's
reference counting (``_nrt=False``): they allocate nothing, and the arrays they read from the
step's records are shared views (:mod:`contactlab.engine.sharing`), whose every count would be a
call that does nothing; reading a field inside a loop then costs a load, not two calls.

**CPU-only choices** (what a second backend replaces, docs/architecture.md): the loops over bodies
are split into blocks (:func:`block_size`), run in parallel by the ``prange`` kernels
:func:`kick_drift` and :func:`reduce_kick`, and the bodies a parallel sweep cannot reduce in its
own range are listed by :func:`deferred_runs`; the per-body functions themselves are
backend-neutral.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from contactlab._jit import jit, kernel, pkernel
from contactlab.engine.cell_motion import move_cell
from contactlab.engine.layout import (ACTIVE, FLAG_FAST, FLAG_REBUILD, FLAG_STATE_NAN, N_OWN, OUT_FORCE, OUT_TORQUE_J,
                                      OWN_BOUNDARY, OWN_DISSIPATION, OWN_FORCE, OWN_TORQUE)
from contactlab.engine.rigid_motion import keep_previous, rigid_kick, rigid_turn, rotate_quaternion
from contactlab.engine.servo import servo_update
from contactlab.geometry.rotation import quat_matrix

__all__ = ["kick_drift_block", "kick_drift", "reduce_block", "reduce_kick", "deferred_runs", "move_boundaries",
           "move_walls", "move_meshes", "block_size", "kick_drift_all", "reduce_deferred"]


@jit
def block_size(n, n_blocks):
    """Items per block of a parallel loop split into about ``n_blocks`` blocks.

    Each block is one call of a compiled function; few, large blocks (the launcher asks for
    BLOCKS_PER_THREAD per thread) keep the cost of the calls negligible.  The blocking does not
    change any result: every body and every pair is computed the same way in any block.
    """
    return max((n + n_blocks - 1) // n_blocks, 1)


@jit
def _full_tensor(rigid, p, ii):
    """Whether body ``p`` turns with a full inertia tensor.  ``rigid`` is None for a scene of
    spheres only: Numba then removes the rigid-body branches before compiling (which is why it is
    an argument here, and of every loop that calls this, not read from the record there)."""
    if rigid is None:
        return False
    return rigid.kind[p] != 0 and ii > 0.0


@jit(inline="never", _nrt=False)
def _rigid_kick(p, h, bodies, rigid):
    """The closing half kick of the angular velocity of body ``p`` with a full inertia tensor."""
    if rigid is None:  # spheres only (never called then; the branch is removed at compile time)
        return
    angvel, torque, quat = bodies.angvel, bodies.torque, bodies.quat
    w = rigid_kick((quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3]),
                   (rigid.inertia[p, 0], rigid.inertia[p, 1], rigid.inertia[p, 2]),
                   (rigid.inv_inertia[p, 0], rigid.inv_inertia[p, 1], rigid.inv_inertia[p, 2]),
                   (angvel[p, 0], angvel[p, 1], angvel[p, 2]), (torque[p, 0], torque[p, 1], torque[p, 2]), h)
    angvel[p, 0] = w[0]
    angvel[p, 1] = w[1]
    angvel[p, 2] = w[2]


@jit(inline="never", _nrt=False)
def _rigid_rotate(p, dt, bodies, rigid):
    """Half kick, turn and prediction of the orientation of body ``p`` with a full inertia tensor
    (:func:`contactlab.engine.rigid_motion.rigid_turn`)."""
    if rigid is None:  # spheres only (never called then; the branch is removed at compile time)
        return
    angvel, angvel_pred, torque, previous, quat = bodies.angvel, bodies.angvel_pred, bodies.torque, bodies.previous, \
        bodies.quat
    w, wp, qn = rigid_turn((quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3]),
                           (rigid.inertia[p, 0], rigid.inertia[p, 1], rigid.inertia[p, 2]),
                           (rigid.inv_inertia[p, 0], rigid.inv_inertia[p, 1], rigid.inv_inertia[p, 2]),
                           (angvel[p, 0], angvel[p, 1], angvel[p, 2]), (torque[p, 0], torque[p, 1], torque[p, 2]),
                           (previous[p, 3], previous[p, 4], previous[p, 5]), dt)
    for d in range(3):
        angvel[p, d] = w[d]
        angvel_pred[p, d] = wp[d]
    for d in range(4):
        quat[p, d] = qn[d]


@jit
def _kick_drift_one(p, dt, bodies, table, run, rigid):
    """First half of a step for body p: half kick, drift, rotation, velocity prediction; flag a
    neighbour-list rebuild if the body is now farther than half the skin from where the list
    was built (and FAST if this one step moved it that far)."""
    pos, vel, angvel, quat = bodies.pos, bodies.vel, bodies.angvel, bodies.quat
    force, torque, previous = bodies.force, bodies.torque, bodies.previous
    vel_pred, angvel_pred, ref_pos, flags = bodies.vel_pred, bodies.angvel_pred, table.ref_pos, run.flags
    h = 0.5 * dt
    im = bodies.inv_mass[p]
    ii = bodies.inv_inertia[p]
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
        _rigid_rotate(p, dt, bodies, rigid)
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
    half_skin = run.half_skin
    hs2 = half_skin * half_skin
    if dx * dx + dy * dy + dz * dz > hs2:
        flags[FLAG_REBUILD] = 1
        if sx > hs2:
            flags[FLAG_FAST] = 1


@kernel(_nrt=False)
def kick_drift_block(p0, p1, dt, bodies, table, run, rigid):
    """The first half of the step (:func:`_kick_drift_one`) for bodies ``p0 <= p < p1``; ``rigid``
    (``bodies.rigid``, None for spheres only) compiles the rigid-body branches in or away."""
    for p in range(p0, p1):
        _kick_drift_one(p, dt, bodies, table, run, rigid)


@pkernel
def kick_drift(dt, n_blocks, bodies, table, run, rigid):
    """:func:`kick_drift_block` over ``n_blocks`` blocks of bodies in parallel (CPU-only)."""
    n = bodies.pos.shape[0]
    b = block_size(n, n_blocks)
    for c in prange((n + b - 1) // b):
        kick_drift_block(c * b, min((c + 1) * b, n), dt, bodies, table, run, rigid)


@jit
def kick_drift_all(parallel, dt, bodies, table, run):
    """The first half of the step for every body: one block, or with ``parallel`` (a block count;
    None: serial) :func:`kick_drift`."""
    if parallel is None:
        kick_drift_block(np.int64(0), bodies.pos.shape[0], dt, bodies, table, run, bodies.rigid)
    else:
        kick_drift(dt, parallel, bodies, table, run, bodies.rigid)


@jit
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@kernel(_nrt=False)
def reduce_block(p0, p1, kick_dt, drift_dt, bodies, books, bounds, table, run, rigid):
    """Total force and torque of bodies ``p0 <= p < p1``: the owner's side of their contacts
    (``bodies.owner``, from the pair pass) plus the partner sides of the contacts where a body is
    ``j`` (a CSR over the pair list, fixed order: no atomics, the same bits at any thread count),
    plus gravity and local damping; the energy books; the step's closing half kick (``kick_dt``:
    the step, 0 for a force evaluation without a kick) and the non-finite check.  Then, if
    ``drift_dt > 0``, the next step's first half right away (:func:`_kick_drift_one`, one pass over
    the bodies fewer).  ``rigid``: ``bodies.rigid`` (see :func:`kick_drift_block`)."""
    mass, inv_mass, inv_inertia, pos, vel, angvel = (bodies.mass, bodies.inv_mass, bodies.inv_inertia, bodies.pos,
                                                     bodies.vel, bodies.angvel)
    force, torque, previous, owner, gravity = bodies.force, bodies.torque, bodies.previous, bodies.owner, bounds.gravity
    j_start, j_pairs, out, status, flags = table.j_start, table.j_pairs, table.out, table.status, run.flags
    local_damping, damping_work, damping_force = run.local_damping, books.damping_work, books.damping_force
    dissipated, diss_terms, boundary_work = books.dissipated, books.diss_terms, books.boundary_work
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
            _rigid_kick(p, h, bodies, rigid)
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
            _kick_drift_one(p, drift_dt, bodies, table, run, rigid)


@pkernel
def reduce_kick(deferred, kick_dt, bodies, books, bounds, table, run, rigid):
    """:func:`reduce_block` (no drift) of the runs of bodies ``deferred = (run_lo, run_hi,
    range_first)`` (:func:`deferred_runs`), the runs of each range in parallel (CPU-only: the
    bodies a parallel sweep leaves out)."""
    run_lo, run_hi, range_first = deferred
    for r in prange(range_first.shape[0] - 1):
        for k in range(range_first[r], range_first[r + 1]):
            reduce_block(run_lo[k], run_hi[k], kick_dt, 0.0, bodies, books, bounds, table, run, rigid)


@jit
def reduce_deferred(parallel, deferred, kick_dt, bodies, books, bounds, table, run):
    """The reduction of the bodies a parallel sweep left out (none in a serial one)."""
    if parallel is not None:
        reduce_kick(deferred, kick_dt, bodies, books, bounds, table, run, bodies.rigid)


#: two runs of deferred bodies closer than this are merged (the bodies between them deferred too):
#: each run costs the sweep one more call of the reduction, while a deferred body is reduced
#: later, from memory rather than from the cache
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


@kernel(_nrt=False)
def move_walls(dt, bounds, run, cylinders):
    """Translate the walls by one step and flag a rebuild if one left half the skin (a plane: along
    its normal; a cylinder, ``cylinders = Cylinders(kind, shape)`` (``bounds.cylinders``): in any
    direction, its ends move with it; None in a scene of plane walls only)."""
    wall_point, wall_vel, wall_normal, wall_ref = bounds.wall_point, bounds.wall_vel, bounds.wall_normal, \
        bounds.wall_ref
    half_skin, flags = run.half_skin, run.flags
    for w in range(wall_point.shape[0]):
        s = 0.0
        for d in range(3):
            wall_point[w, d] += dt * wall_vel[w, d]
            s += (wall_point[w, d] - wall_ref[w, d]) * wall_normal[w, d]
        if cylinders is not None:
            if cylinders.kind[w] != 0:
                s = 0.0
                for d in range(3):
                    s += (wall_point[w, d] - wall_ref[w, d]) ** 2
                s = math.sqrt(s)
        if abs(s) > half_skin:
            flags[FLAG_REBUILD] = 1


@kernel
def move_meshes(dt, shape_data, meshes, motion, half_skin, flags):
    """Move the kinematic meshes by one step (translation of the reference point, rotation about
    it), update their triangles' vertices in ``shape_data`` and flag a rebuild when a vertex may
    have moved farther than half the skin since the neighbour list was built (``meshes``,
    ``motion``: the records :data:`~contactlab.engine.step_records.Meshes` and
    :data:`~contactlab.engine.step_records.MeshMotion`)."""
    tri_ref, mesh_pos, mesh_quat, mesh_vel, mesh_angvel = meshes.tri_ref, meshes.pos, meshes.quat, meshes.vel, \
        meshes.angvel
    mesh_local, mesh_first, mesh_build_pos, mesh_build_quat, mesh_size = motion.local, motion.first, \
        motion.build_pos, motion.build_quat, motion.size
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


@jit
def move_boundaries(dt, bodies, books, bounds, table, run):
    """The boundaries' part of the first half of a step, in this order: the servo-controlled walls
    and meshes get their velocities (:func:`contactlab.engine.servo.servo_update`), the walls move,
    the periodic cell deforms (:func:`contactlab.engine.cell_motion.move_cell`), the meshes move.
    (Each part is called only where the scene has it: a call hands its arrays over word by word.)"""
    servo, cell = bounds.servo, bounds.cell
    if servo.indices.shape[0] > 0:
        servo_update(dt, servo, bounds.wall_point, bounds.wall_vel, bounds.wall_normal, table.out, table.status,
                     books.boundary_power)
    if bounds.wall_point.shape[0] > 0:
        move_walls(dt, bounds, run, bounds.cylinders)
    if cell is not None:
        move_cell(dt, cell, bodies.pos, table.i_start, table.pair_j, table.out, table.status, run.half_skin, run.flags)
    if bounds.meshes.tri_ref.shape[0] > 0:
        move_meshes(dt, bodies.shape.data, bounds.meshes, bounds.mesh_motion, run.half_skin, run.flags)
