"""The clumps' part of a time step: member forces summed onto each clump, the clump integrated as a
rigid body, its members placed rigidly.

Member spheres are ordinary bodies for the contact kernels and the per-body reduction (which also
kicks and drifts them as if they were free spheres: that motion is overwritten here).  The step
kernels (:mod:`contactlab.engine.kernels`) call

* :func:`clump_kick` after the reduction of every body (the step's closing half kick; with
  ``kick_dt = 0`` after a force evaluation alone): per clump, the sum of its members' forces and
  torques about its centre of mass (the weight the reduction gave each member, ``M g`` as for a
  free body of the member's mass, is replaced by the clump's own, once), the half kick of its
  velocity and, through its angular momentum, of its angular velocity, and its members' velocities
  ``v = V + omega x r``;
* :func:`clump_drift` after the first half of the step of every body: the clump's half kick,
  drift and rotation (:func:`contactlab.engine.rigid_motion.rigid_turn`: angular momentum kicked,
  orientation turned at the half-turned orientation's angular velocity),
  its velocities predicted to the force time (with the mean of its last two loads, as every body), and its members' positions, velocities, predicted
  velocities and orientations; a member farther than half the skin from where the neighbour list
  was built flags a rebuild.

Both are serial loops over clumps (their cost is a few operations per member, negligible against
the contacts), compiled as functions of their own (``inline="never"``): Numba removes their
bodies for ``clumps = None`` (a scene without clumps) only where ``clumps`` is an argument, and
the step kernels of such a scene never call them (``if clumps is not None``).

``clumps``: the record :data:`contactlab.engine.step_records.Clumps` (the model's clump arrays and the
state's); ``bodies``, ``bounds``, ``table``, ``run``: the step's records.  The rotation is the
rigid-body update of every body (:mod:`contactlab.engine.rigid_motion`).
"""
from __future__ import annotations

import math

from contactlab._jit import jit
from contactlab.engine.layout import FLAG_FAST, FLAG_REBUILD, FLAG_STATE_NAN
from contactlab.engine.rigid_motion import keep_previous, rigid_kick, rigid_turn
from contactlab.geometry.rotation import quat_matrix

__all__ = ["clump_kick", "clump_drift"]


@jit
def _quat(a, c):
    return (a[c, 0], a[c, 1], a[c, 2], a[c, 3])


@jit
def _row3(a, c):
    return (a[c, 0], a[c, 1], a[c, 2])


@jit(inline="never", _nrt=False)
def clump_kick(kick_dt, clumps, bodies, bounds, run):
    """Sum the members' forces and torques onto each clump, kick it by ``kick_dt / 2`` and set its
    members' velocities (see the module docstring).  A member's ``force`` is left as the force of
    its contacts alone (its share of the weight is on the clump)."""
    if clumps is None:
        return
    pos, vel, angvel, force, torque = bodies.pos, bodies.vel, bodies.angvel, bodies.force, bodies.torque
    gravity, flags = bounds.gravity, run.flags
    first, members, mass, cpos, cvel, cangvel = clumps.first, clumps.members, clumps.mass, clumps.pos, clumps.vel, \
        clumps.angvel
    cforce, ctorque, cprev = clumps.force, clumps.torque, clumps.previous
    h = 0.5 * kick_dt
    for c in range(mass.shape[0]):
        m = mass[c]
        wx, wy, wz = m * gravity[0], m * gravity[1], m * gravity[2]
        fx, fy, fz = wx, wy, wz
        tx, ty, tz = 0.0, 0.0, 0.0
        for q in range(first[c], first[c + 1]):
            p = members[q]
            gx = force[p, 0] - wx
            gy = force[p, 1] - wy
            gz = force[p, 2] - wz
            force[p, 0] = gx
            force[p, 1] = gy
            force[p, 2] = gz
            rx = pos[p, 0] - cpos[c, 0]
            ry = pos[p, 1] - cpos[c, 1]
            rz = pos[p, 2] - cpos[c, 2]
            fx += gx
            fy += gy
            fz += gz
            tx += torque[p, 0] + ry * gz - rz * gy
            ty += torque[p, 1] + rz * gx - rx * gz
            tz += torque[p, 2] + rx * gy - ry * gx
        keep_previous(cprev, c, cforce, ctorque, (fx, fy, fz, tx, ty, tz), kick_dt)   # the predictor's
        cforce[c, 0] = fx
        cforce[c, 1] = fy
        cforce[c, 2] = fz
        ctorque[c, 0] = tx
        ctorque[c, 1] = ty
        ctorque[c, 2] = tz
        cvel[c, 0] += h * fx / m
        cvel[c, 1] += h * fy / m
        cvel[c, 2] += h * fz / m
        w = rigid_kick(_quat(clumps.quat, c), _row3(clumps.inertia, c), _row3(clumps.inv_inertia, c),
                       _row3(cangvel, c), (tx, ty, tz), h)
        for d in range(3):
            cangvel[c, d] = w[d]
        if not math.isfinite(cvel[c, 0] + cvel[c, 1] + cvel[c, 2] + w[0] + w[1] + w[2]):
            flags[FLAG_STATE_NAN] = 1
        for q in range(first[c], first[c + 1]):
            p = members[q]
            rx = pos[p, 0] - cpos[c, 0]
            ry = pos[p, 1] - cpos[c, 1]
            rz = pos[p, 2] - cpos[c, 2]
            vel[p, 0] = cvel[c, 0] + w[1] * rz - w[2] * ry
            vel[p, 1] = cvel[c, 1] + w[2] * rx - w[0] * rz
            vel[p, 2] = cvel[c, 2] + w[0] * ry - w[1] * rx
            for d in range(3):
                angvel[p, d] = w[d]


@jit(inline="never", _nrt=False)
def clump_drift(dt, clumps, bodies, table, run):
    """The first half of the step of every clump (half kick, drift, rotation, prediction) and its
    members' rigid placement, with the skin check (see the module docstring)."""
    if clumps is None:
        return
    pos, vel, angvel, quat = bodies.pos, bodies.vel, bodies.angvel, bodies.quat
    vel_pred, angvel_pred, ref_pos, flags = bodies.vel_pred, bodies.angvel_pred, table.ref_pos, run.flags
    first, members, offsets, mass, cpos, cvel, cangvel = clumps.first, clumps.members, clumps.offsets, clumps.mass, \
        clumps.pos, clumps.vel, clumps.angvel
    cquat, cforce, ctorque, cprev = clumps.quat, clumps.force, clumps.torque, clumps.previous
    h = 0.5 * dt
    half_skin = run.half_skin
    hs2 = half_skin * half_skin
    for c in range(mass.shape[0]):
        im = 1.0 / mass[c]
        for d in range(3):
            a = cforce[c, d] * im
            cvel[c, d] += h * a
            cpos[c, d] += dt * cvel[c, d]
        q2 = 0.5 * h
        vp = (cvel[c, 0] + q2 * (cforce[c, 0] + cprev[c, 0]) * im, cvel[c, 1] + q2 * (cforce[c, 1] + cprev[c, 1]) * im,
              cvel[c, 2] + q2 * (cforce[c, 2] + cprev[c, 2]) * im)
        w, wp, qn = rigid_turn(_quat(cquat, c), _row3(clumps.inertia, c), _row3(clumps.inv_inertia, c),
                               _row3(cangvel, c), _row3(ctorque, c), (cprev[c, 3], cprev[c, 4], cprev[c, 5]), dt)
        r = quat_matrix(qn)
        for d in range(3):
            cangvel[c, d] = w[d]
        for d in range(4):
            cquat[c, d] = qn[d]
        for k in range(first[c], first[c + 1]):
            p = members[k]
            ox, oy, oz = offsets[k, 0], offsets[k, 1], offsets[k, 2]
            lx = r[0][0] * ox + r[0][1] * oy + r[0][2] * oz
            ly = r[1][0] * ox + r[1][1] * oy + r[1][2] * oz
            lz = r[2][0] * ox + r[2][1] * oy + r[2][2] * oz
            nx, ny, nz = cpos[c, 0] + lx, cpos[c, 1] + ly, cpos[c, 2] + lz
            step = (nx - pos[p, 0]) ** 2 + (ny - pos[p, 1]) ** 2 + (nz - pos[p, 2]) ** 2
            pos[p, 0] = nx
            pos[p, 1] = ny
            pos[p, 2] = nz
            vel[p, 0] = cvel[c, 0] + w[1] * lz - w[2] * ly
            vel[p, 1] = cvel[c, 1] + w[2] * lx - w[0] * lz
            vel[p, 2] = cvel[c, 2] + w[0] * ly - w[1] * lx
            vel_pred[p, 0] = vp[0] + wp[1] * lz - wp[2] * ly
            vel_pred[p, 1] = vp[1] + wp[2] * lx - wp[0] * lz
            vel_pred[p, 2] = vp[2] + wp[0] * ly - wp[1] * lx
            for d in range(3):
                angvel[p, d] = w[d]
                angvel_pred[p, d] = wp[d]
            for d in range(4):
                quat[p, d] = qn[d]
            dx = nx - ref_pos[p, 0]
            dy = ny - ref_pos[p, 1]
            dz = nz - ref_pos[p, 2]
            if dx * dx + dy * dy + dz * dz > hs2:
                flags[FLAG_REBUILD] = 1
                if step > hs2:
                    flags[FLAG_FAST] = 1
