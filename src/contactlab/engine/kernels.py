"""Compiled step kernels, written once and specialised per contact law.

This file is a *template*: :mod:`contactlab.engine.codegen` copies it into a generated module in
which the line marked ``@@LAW_IMPORT@@`` imports the chosen law as ``LAW``.  Each generated module
is an ordinary importable file, so Numba caches its compiled kernels on disk (a kernel built from a
closure or taking the law as an argument would be recompiled in every process).

One step (velocity Verlet with a second-order velocity predictor for dissipative forces):

1. ``kick_drift``: ``v(n+1/2) = v(n) + dt/2 a(n)``; ``x(n+1) = x(n) + dt v(n+1/2)``; orientation
   rotated by ``omega(n+1/2) dt``; velocities predicted to ``n+1``: ``v* = v(n+1/2) + dt/2 a(n)``.
2. walls translate.
3. ``pair_forces``: for every candidate pair, narrow phase -> ContactGeometry -> LAW -> per-contact
   force, torques, elastic energy, dissipation, boundary work, written into the pair's row.
4. ``reduce_kick``: per sphere, sum its contacts in a fixed order (CSR over the pair list; no
   atomics, bit-identical at any thread count), add gravity, ``v(n+1) = v(n+1/2) + dt/2 a(n+1)``,
   check for non-finite values and for the need of a neighbour-list rebuild before the next step.

Positions-only forces make this exactly velocity Verlet (symplectic); forces that depend on velocity
(damping, friction) see the predicted velocity ``v*``, accurate to O(dt^2).  Springs in the laws
accumulate the exact displacement increments ``dt v(n+1/2)``, so a stuck spring is conservative.

Kernels never raise: they set flags (see :mod:`contactlab.engine.layout`) and return.

Parallel loops run over fixed-size *chunks* (``prange`` over chunk numbers, a serial loop inside a
compiled function per chunk).  Inside the serial loop the law, the narrow phase and the vector
helpers are inlined, which makes the per-pair work as cheap as hand-written code; a ``prange``
over single pairs calling a function per pair was measured 2-3 times slower.  Chunks never share
an output element, so the result does not depend on the number of threads.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from contactlab._jit import jit, kernel, pkernel
from contactlab.engine.layout import (
    CLEARED, FLAG_FAST, FLAG_FORCE_NAN, FLAG_OVERLAP, FLAG_REBUILD, FLAG_STATE_NAN, OUT_ACTIVE, OUT_BOUNDARY,
    OUT_DISSIPATION, OUT_ELASTIC, OUT_FORCE, OUT_TORQUE_I, OUT_TORQUE_J,
)
from contactlab.geometry.sphere_sphere import sphere_sphere
from contactlab.geometry.sphere_wall import sphere_wall
from contactlab.laws.hertz_mindlin import law as LAW  # @@LAW_IMPORT@@
LAW_RANGE = 0.0  # @@LAW_RANGE@@
from contactlab.vec import add, cross, dot, scale, sub

__all__ = ["advance", "evaluate_forces", "pair_forces", "kick_drift", "reduce_kick"]

CHUNK = 256  # items per chunk of a parallel loop


@jit
def _rotate_quaternion(q0, q1, q2, q3, wx, wy, wz, dt):
    """Rotate the unit quaternion (q0, q1, q2, q3) by the constant angular velocity w over dt."""
    wn = math.sqrt(wx * wx + wy * wy + wz * wz)
    angle = wn * dt
    if angle == 0.0:
        return q0, q1, q2, q3
    s = math.sin(0.5 * angle) / wn
    c = math.cos(0.5 * angle)
    dx, dy, dz = s * wx, s * wy, s * wz
    # dq (x) q, dq = (c, dx, dy, dz)
    r0 = c * q0 - dx * q1 - dy * q2 - dz * q3
    r1 = c * q1 + dx * q0 + dy * q3 - dz * q2
    r2 = c * q2 - dx * q3 + dy * q0 + dz * q1
    r3 = c * q3 + dx * q2 - dy * q1 + dz * q0
    inv = 1.0 / math.sqrt(r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3)
    return r0 * inv, r1 * inv, r2 * inv, r3 * inv


@kernel
def _kick_drift_chunk(p0, p1, dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred,
                      angvel_pred):
    h = 0.5 * dt
    for p in range(p0, p1):
        im = inv_mass[p]
        ii = inv_inertia[p]
        for d in range(3):
            a = force[p, d] * im
            vh = vel[p, d] + h * a
            vel[p, d] = vh
            pos[p, d] += dt * vh
            vel_pred[p, d] = vh + h * a
            al = torque[p, d] * ii
            wh = angvel[p, d] + h * al
            angvel[p, d] = wh
            angvel_pred[p, d] = wh + h * al
        q = _rotate_quaternion(quat[p, 0], quat[p, 1], quat[p, 2], quat[p, 3],
                               angvel[p, 0], angvel[p, 1], angvel[p, 2], dt)
        quat[p, 0] = q[0]
        quat[p, 1] = q[1]
        quat[p, 2] = q[2]
        quat[p, 3] = q[3]


@pkernel
def kick_drift(dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred, angvel_pred):
    """Half kick, drift and velocity prediction for every sphere (fixed spheres just drift)."""
    n = pos.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _kick_drift_chunk(c * CHUNK, min((c + 1) * CHUNK, n), dt, pos, vel, angvel, quat, force, torque,
                          inv_mass, inv_inertia, vel_pred, angvel_pred)


@jit
def _clear_row(cdata, k, active_col):
    """Zero a row (history and outputs) unless it is already cleared."""
    if cdata[k, active_col] != CLEARED:
        for c in range(cdata.shape[1]):
            cdata[k, c] = 0.0
        cdata[k, active_col] = CLEARED


@kernel
def _pairs_chunk(k0, k1, pair_i, pair_j, pos, vel, angvel, mid_vel, mid_angvel, radius, inv_mass, fixed,
                 material, wall_point, wall_normal, wall_vel, wall_material, table, cdata, n_hist, dt,
                 overlap_limit, flags):
    """Narrow phase, law and outputs of candidate pairs ``k0 <= k < k1`` (see :func:`pair_forces`).

    Pairs farther apart than the law's ``INTERACTION_RANGE`` are not handed to the law: their row
    (history and outputs) is cleared, which is the law's own reset for a separated pair.
    """
    n_s = pos.shape[0]
    o = n_hist
    for k in range(k0, k1):
        i = pair_i[k]
        j = pair_j[k]
        ri = radius[i]
        xi = (pos[i, 0], pos[i, 1], pos[i, 2])
        if j < n_s:
            rj = radius[j]
            reach = ri + rj + LAW_RANGE
            dx = pos[j, 0] - xi[0]
            dy = pos[j, 1] - xi[1]
            dz = pos[j, 2] - xi[2]
            if dx * dx + dy * dy + dz * dz >= reach * reach:
                _clear_row(cdata, k, o + OUT_ACTIVE)
                continue
            vi = (vel[i, 0], vel[i, 1], vel[i, 2])
            wi = (angvel[i, 0], angvel[i, 1], angvel[i, 2])
            vj = (vel[j, 0], vel[j, 1], vel[j, 2])
            wj = (angvel[j, 0], angvel[j, 1], angvel[j, 2])
            geom, ok = sphere_sphere(xi, (pos[j, 0], pos[j, 1], pos[j, 2]), ri, rj, inv_mass[i], inv_mass[j],
                                     vi, vj, wi, wj,
                                     (mid_vel[i, 0], mid_vel[i, 1], mid_vel[i, 2]),
                                     (mid_vel[j, 0], mid_vel[j, 1], mid_vel[j, 2]),
                                     (mid_angvel[i, 0], mid_angvel[i, 1], mid_angvel[i, 2]),
                                     (mid_angvel[j, 0], mid_angvel[j, 1], mid_angvel[j, 2]), dt)
            mj = material[j]
            rmin = min(ri, rj)
            j_driven = fixed[j]
        else:
            w = j - n_s
            wn = (wall_normal[w, 0], wall_normal[w, 1], wall_normal[w, 2])
            wp = (wall_point[w, 0], wall_point[w, 1], wall_point[w, 2])
            if dot(sub(xi, wp), wn) - ri >= LAW_RANGE:
                _clear_row(cdata, k, o + OUT_ACTIVE)
                continue
            vi = (vel[i, 0], vel[i, 1], vel[i, 2])
            wi = (angvel[i, 0], angvel[i, 1], angvel[i, 2])
            vj = (wall_vel[w, 0], wall_vel[w, 1], wall_vel[w, 2])
            wj = (0.0, 0.0, 0.0)
            geom, ok = sphere_wall(xi, ri, inv_mass[i], vi, wi,
                                   (mid_vel[i, 0], mid_vel[i, 1], mid_vel[i, 2]),
                                   (mid_angvel[i, 0], mid_angvel[i, 1], mid_angvel[i, 2]), wp, wn, vj, dt)
            mj = wall_material[w]
            rmin = ri
            j_driven = True
        f, m, energy, diss, active = LAW(geom, table[material[i], mj], cdata[k, :o], dt)
        ti = add(cross(geom.branch_i, f), m)
        tj = scale(-1.0, add(cross(geom.branch_j, f), m))
        # work done on the system by driven bodies (fixed spheres, walls) during this step
        work = 0.0
        if fixed[i]:
            work += dot(f, vi) + dot(ti, wi)
        if j_driven:
            work -= dot(f, vj) - dot(tj, wj)
        cdata[k, o + OUT_FORCE] = f[0]
        cdata[k, o + OUT_FORCE + 1] = f[1]
        cdata[k, o + OUT_FORCE + 2] = f[2]
        cdata[k, o + OUT_TORQUE_I] = ti[0]
        cdata[k, o + OUT_TORQUE_I + 1] = ti[1]
        cdata[k, o + OUT_TORQUE_I + 2] = ti[2]
        cdata[k, o + OUT_TORQUE_J] = tj[0]
        cdata[k, o + OUT_TORQUE_J + 1] = tj[1]
        cdata[k, o + OUT_TORQUE_J + 2] = tj[2]
        cdata[k, o + OUT_ELASTIC] = energy
        cdata[k, o + OUT_DISSIPATION] = diss
        cdata[k, o + OUT_BOUNDARY] = -work * dt
        cdata[k, o + OUT_ACTIVE] = 1.0 if active else 0.0
        if active and geom.overlap > overlap_limit * rmin:
            flags[FLAG_OVERLAP] = 1
        if not (math.isfinite(f[0]) and math.isfinite(f[1]) and math.isfinite(f[2]) and math.isfinite(ti[0])
                and math.isfinite(ti[1]) and math.isfinite(ti[2]) and math.isfinite(tj[0]) and math.isfinite(tj[1])
                and math.isfinite(tj[2])):
            flags[FLAG_FORCE_NAN] = 1
        if not ok:
            flags[FLAG_STATE_NAN] = 1


@pkernel
def pair_forces(n_pairs, pair_i, pair_j, pos, vel, angvel, mid_vel, mid_angvel, radius, inv_mass, fixed,
                material, wall_point, wall_normal, wall_vel, wall_material, table, cdata, n_hist, dt,
                overlap_limit, flags):
    """Evaluate the law on every candidate pair and store force, torques and energies per pair.

    ``vel``/``angvel``: velocities at the force time (predicted); ``mid_vel``/``mid_angvel``: at
    the middle of the step that just ended (they give the exact displacement increments).  ``dt``
    is that step (0 for an evaluation that must not advance history).  Row ``k`` of ``cdata``
    holds the history (first ``n_hist`` columns) and the outputs of pair k.
    """
    for c in prange((n_pairs + CHUNK - 1) // CHUNK):
        _pairs_chunk(c * CHUNK, min((c + 1) * CHUNK, n_pairs), pair_i, pair_j, pos, vel, angvel, mid_vel,
                     mid_angvel, radius, inv_mass, fixed, material, wall_point, wall_normal, wall_vel,
                     wall_material, table, cdata, n_hist, dt, overlap_limit, flags)


@kernel
def _reduce_chunk(p0, p1, i_start, j_start, j_pairs, cdata, n_hist, mass, inv_mass, inv_inertia, gravity,
                  pos, vel, angvel, force, torque, dissipated, boundary_work, ref_pos, kick_dt, next_dt,
                  half_skin, flags):
    o = n_hist
    h = 0.5 * kick_dt
    hs2 = half_skin * half_skin
    for p in range(p0, p1):
        im = inv_mass[p]
        fx = 0.0
        fy = 0.0
        fz = 0.0
        if im > 0.0:
            fx = mass[p] * gravity[0]
            fy = mass[p] * gravity[1]
            fz = mass[p] * gravity[2]
        tx = 0.0
        ty = 0.0
        tz = 0.0
        diss = 0.0
        work = 0.0
        for k in range(i_start[p], i_start[p + 1]):
            row = cdata[k]
            fx += row[o + OUT_FORCE]
            fy += row[o + OUT_FORCE + 1]
            fz += row[o + OUT_FORCE + 2]
            tx += row[o + OUT_TORQUE_I]
            ty += row[o + OUT_TORQUE_I + 1]
            tz += row[o + OUT_TORQUE_I + 2]
            diss += row[o + OUT_DISSIPATION]
            work += row[o + OUT_BOUNDARY]
        for q in range(j_start[p], j_start[p + 1]):
            row = cdata[j_pairs[q]]
            fx -= row[o + OUT_FORCE]
            fy -= row[o + OUT_FORCE + 1]
            fz -= row[o + OUT_FORCE + 2]
            tx += row[o + OUT_TORQUE_J]
            ty += row[o + OUT_TORQUE_J + 1]
            tz += row[o + OUT_TORQUE_J + 2]
        force[p, 0] = fx
        force[p, 1] = fy
        force[p, 2] = fz
        torque[p, 0] = tx
        torque[p, 1] = ty
        torque[p, 2] = tz
        dissipated[p] += diss
        boundary_work[p] += work
        ii = inv_inertia[p]
        vx = vel[p, 0] + h * fx * im
        vy = vel[p, 1] + h * fy * im
        vz = vel[p, 2] + h * fz * im
        vel[p, 0] = vx
        vel[p, 1] = vy
        vel[p, 2] = vz
        angvel[p, 0] += h * tx * ii
        angvel[p, 1] += h * ty * ii
        angvel[p, 2] += h * tz * ii
        if not (math.isfinite(pos[p, 0]) and math.isfinite(pos[p, 1]) and math.isfinite(pos[p, 2])
                and math.isfinite(vx) and math.isfinite(vy) and math.isfinite(vz)
                and math.isfinite(angvel[p, 0]) and math.isfinite(angvel[p, 1]) and math.isfinite(angvel[p, 2])):
            flags[FLAG_STATE_NAN] = 1
        # displacement during the next step (drift with v(n+1/2) of that step)
        hn = 0.5 * next_dt
        sx = next_dt * (vx + hn * fx * im)
        sy = next_dt * (vy + hn * fy * im)
        sz = next_dt * (vz + hn * fz * im)
        dx = pos[p, 0] + sx - ref_pos[p, 0]
        dy = pos[p, 1] + sy - ref_pos[p, 1]
        dz = pos[p, 2] + sz - ref_pos[p, 2]
        if dx * dx + dy * dy + dz * dz > hs2:
            flags[FLAG_REBUILD] = 1
            if sx * sx + sy * sy + sz * sz > hs2:
                flags[FLAG_FAST] = 1


@pkernel
def reduce_kick(i_start, j_start, j_pairs, cdata, n_hist, mass, inv_mass, inv_inertia, gravity,
                pos, vel, angvel, force, torque, dissipated, boundary_work, ref_pos, kick_dt,
                next_dt, half_skin, flags):
    """Sum contact forces per sphere (fixed order), add gravity, finish the step's kick.

    ``kick_dt`` is the step's dt (0 for a force evaluation without a kick).  ``next_dt`` is the dt
    of the next step, used to predict whether a sphere would leave the skin during it.
    """
    n = pos.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _reduce_chunk(c * CHUNK, min((c + 1) * CHUNK, n), i_start, j_start, j_pairs, cdata, n_hist, mass,
                      inv_mass, inv_inertia, gravity, pos, vel, angvel, force, torque, dissipated,
                      boundary_work, ref_pos, kick_dt, next_dt, half_skin, flags)


@kernel
def _walls_need_rebuild(wall_point, wall_vel, wall_normal, wall_ref, next_dt, half_skin):
    for w in range(wall_point.shape[0]):
        s = 0.0
        for d in range(3):
            s += (wall_point[w, d] + next_dt * wall_vel[w, d] - wall_ref[w, d]) * wall_normal[w, d]
        if abs(s) > half_skin:
            return True
    return False


@kernel
def advance(n_steps, dt, pos, vel, angvel, quat, force, torque, vel_pred, angvel_pred,
            radius, mass, inv_mass, inv_inertia, fixed, material, gravity,
            wall_point, wall_normal, wall_vel, wall_material, wall_ref,
            n_pairs, pair_i, pair_j, i_start, j_start, j_pairs, cdata, n_hist, table,
            dissipated, boundary_work, ref_pos, half_skin, overlap_limit, flags):
    """Take up to ``n_steps`` steps of size ``dt``; return how many were taken.

    Stops early, after a complete step, when a flag is raised: an error, or a neighbour-list
    rebuild needed before the next step (the launcher rebuilds and calls again).
    """
    for s in range(n_steps):
        kick_drift(dt, pos, vel, angvel, quat, force, torque, inv_mass, inv_inertia, vel_pred, angvel_pred)
        for w in range(wall_point.shape[0]):
            for d in range(3):
                wall_point[w, d] += dt * wall_vel[w, d]
        pair_forces(n_pairs, pair_i, pair_j, pos, vel_pred, angvel_pred, vel, angvel, radius, inv_mass, fixed,
                    material, wall_point, wall_normal, wall_vel, wall_material, table, cdata, n_hist, dt,
                    overlap_limit, flags)
        reduce_kick(i_start, j_start, j_pairs, cdata, n_hist, mass, inv_mass, inv_inertia, gravity,
                    pos, vel, angvel, force, torque, dissipated, boundary_work, ref_pos, dt, dt,
                    half_skin, flags)
        if _walls_need_rebuild(wall_point, wall_vel, wall_normal, wall_ref, dt, half_skin):
            flags[FLAG_REBUILD] = 1
        for f in range(flags.shape[0]):
            if flags[f] != 0:
                return s + 1
    return n_steps


@kernel
def evaluate_forces(pos, vel, angvel, force, torque, radius, mass, inv_mass, inv_inertia, fixed, material,
                    gravity, wall_point, wall_normal, wall_vel, wall_material, wall_ref,
                    n_pairs, pair_i, pair_j, i_start, j_start, j_pairs, cdata, n_hist, table,
                    dissipated, boundary_work, ref_pos, next_dt, half_skin, overlap_limit, flags):
    """Forces and torques at the current state without advancing anything (start of a run)."""
    pair_forces(n_pairs, pair_i, pair_j, pos, vel, angvel, vel, angvel, radius, inv_mass, fixed, material,
                wall_point, wall_normal, wall_vel, wall_material, table, cdata, n_hist, 0.0,
                overlap_limit, flags)
    reduce_kick(i_start, j_start, j_pairs, cdata, n_hist, mass, inv_mass, inv_inertia, gravity,
                pos, vel, angvel, force, torque, dissipated, boundary_work, ref_pos, 0.0, next_dt,
                half_skin, flags)
    if _walls_need_rebuild(wall_point, wall_vel, wall_normal, wall_ref, next_dt, half_skin):
        flags[FLAG_REBUILD] = 1
