"""The rigid-body update, written once for the bodies of the step and for clumps.

A body with a full inertia tensor (an ellipsoid, a polyhedron, a clump) turns through its angular
momentum ``L``, which a torque changes directly; the tensor is diagonal in the body frame
(principal moments ``I``, orientation quaternion ``q``: body frame to global), so the global
angular velocity of ``L`` is ``R I^-1 R^T L``.

* :func:`rigid_kick` -- the closing half kick: ``L += h torque``, the angular velocity of the new
  ``L`` at the same orientation;
* :func:`rigid_turn` -- the first half of a step: the half kick, then the turn over ``dt`` with the
  angular velocity taken at the half-turned orientation (a midpoint rule, second order, exact for a
  torque-free sphere-like body), the angular velocity of ``L`` at the new orientation, and the
  prediction to the force time, which adds a half kick of the mean of the last two torques (the
  predictor of :mod:`contactlab.engine.integrate`);
* :func:`rotate_quaternion` -- a quaternion turned by a constant angular velocity over ``dt`` (every
  body, clump and mesh);
* :func:`keep_previous` -- the loads of the evaluation before the last, which the predictor needs.

Callers: :mod:`contactlab.engine.integrate` (bodies) and :mod:`contactlab.engine.clump_motion`.
(The DDA of :mod:`contactlab.dda` moves its 2-D blocks by the Newmark map of its step unknowns,
displacement, rotation and strain, not by a kick and a drift: nothing of this applies there.)
"""
from __future__ import annotations

import math

from contactlab._jit import jit
from contactlab.geometry.rotation import quat_matrix

__all__ = ["rotate_quaternion", "keep_previous", "inertia_apply", "rigid_kick", "rigid_turn"]


@jit
def rotate_quaternion(q0, q1, q2, q3, wx, wy, wz, dt):
    """Rotate the unit quaternion (q0, q1, q2, q3) by the constant angular velocity w over dt.

    The rotation quaternion is ``(cos(a/2), sin(a/2) w/|w|)`` with ``a = |w| dt``; for the small
    angles of a time step its Taylor series (to a^6, below round-off for a < 0.02) replaces the
    trigonometric functions, which dominate the cost of this per-body update otherwise.
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
def inertia_apply(q, d, w):
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


# Both updates are compiled as functions of their own (inline="never"), not inlined into the
# per-body loops: inlined, their bodies (four inertia rotations and two quaternion updates) were
# copied into every loop and typed there, which made the first compilation ~25 s longer
# (benchmarks/README.md, "First-run compilation").
@jit(inline="never")
def rigid_kick(q, inertia, inv_inertia, w, torque, h):
    """The angular velocity after a kick ``L += h torque`` at the orientation ``q`` (``w``: before;
    ``inertia``, ``inv_inertia``: principal moments and their inverses, 3-tuples)."""
    L = inertia_apply(q, inertia, w)
    return inertia_apply(q, inv_inertia, (L[0] + h * torque[0], L[1] + h * torque[1], L[2] + h * torque[2]))


@jit(inline="never")
def rigid_turn(q, inertia, inv_inertia, w, torque, previous, dt):
    """The first half of a step of a turning body: returns ``(w, w_pred, q)``, the angular velocity
    after the half kick and the turn, its prediction to the force time and the new orientation
    (``torque``: of the last evaluation, ``previous``: of the one before, 3-tuples; see the module
    docstring)."""
    h = 0.5 * dt
    L = inertia_apply(q, inertia, w)
    L = (L[0] + h * torque[0], L[1] + h * torque[1], L[2] + h * torque[2])
    w = inertia_apply(q, inv_inertia, L)
    qm = rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], h)
    w = inertia_apply(qm, inv_inertia, L)
    qn = rotate_quaternion(q[0], q[1], q[2], q[3], w[0], w[1], w[2], dt)
    w = inertia_apply(qn, inv_inertia, L)
    q2 = 0.5 * h
    wp = inertia_apply(qn, inv_inertia, (L[0] + q2 * (torque[0] + previous[0]), L[1] + q2 * (torque[1] + previous[1]),
                                         L[2] + q2 * (torque[2] + previous[2])))
    return w, wp, qn
