"""Rotations: unit quaternions ``(w, x, y, z)``, body frame to global frame.

A body's orientation ``q`` maps a vector ``v_b`` given in the body's own (principal) frame to the
global frame: ``v = R(q) v_b``; :func:`to_body` applies ``R(q)^T``.  Vectors and quaternions are
tuples (values stay in registers) in the compiled functions; :func:`rotation_matrix`,
:func:`rotation_matrices` and :func:`quaternion_from_matrix` are their plain NumPy counterparts
for the Python side (scene building, output).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit

__all__ = ["to_global", "to_body", "quat_matrix", "quat_multiply", "z_angle", "rotation_matrix",
           "rotation_matrices", "quaternion_from_matrix"]


@jit
def to_global(q, v):
    """``R(q) v``: a body-frame vector ``v`` in the global frame (``q`` a unit quaternion)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    # v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    return (v[0] + w * tx + (y * tz - z * ty),
            v[1] + w * ty + (z * tx - x * tz),
            v[2] + w * tz + (x * ty - y * tx))


@jit
def to_body(q, v):
    """``R(q)^T v``: a global vector ``v`` in the body frame."""
    return to_global((q[0], -q[1], -q[2], -q[3]), v)


@jit
def quat_matrix(q):
    """The rotation matrix ``R(q)`` as a tuple of its three rows."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ((1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)),
            (2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)),
            (2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)))


@jit
def quat_multiply(a, b):
    """The quaternion product ``a b`` (rotation ``b`` first, then ``a``)."""
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@jit
def z_angle(q):
    """The angle (rad, counter-clockwise) of ``q`` taken as a rotation about z, ``2 atan2(z, w)``:
    exact for the orientations of a 2-D scene, ``(cos(theta/2), 0, 0, sin(theta/2))``, whose x and
    y components stay 0 (``theta`` in ``(-2 pi, 2 pi]``)."""
    return 2.0 * math.atan2(q[3], q[0])


def rotation_matrix(q) -> np.ndarray:
    """(3, 3) rotation matrix ``R(q)`` of the unit quaternion ``q = (w, x, y, z)`` (body to global), in
    plain NumPy: :func:`quat_matrix`'s formula, uncompiled."""
    return np.array(quat_matrix.py_func(tuple(float(c) for c in q)))


def rotation_matrices(quaternions) -> np.ndarray:
    """(N, 3, 3) rotation matrices of (N, 4) unit quaternions (body to global)."""
    return np.array([rotation_matrix(q) for q in quaternions]).reshape(-1, 3, 3)


def quaternion_from_matrix(r: np.ndarray) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)`` of a proper rotation matrix (Shepperd's method), w >= 0."""
    r = np.asarray(r, dtype=float)
    tr = np.trace(r)
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = np.array([0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s])
    else:
        k = int(np.argmax(np.diag(r)))
        i, j = (k + 1) % 3, (k + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + r[k, k] - r[i, i] - r[j, j], 0.0))
        q = np.zeros(4)
        q[0] = (r[j, i] - r[i, j]) / s
        q[1 + k] = 0.25 * s
        q[1 + i] = (r[i, k] + r[k, i]) / s
        q[1 + j] = (r[j, k] + r[k, j]) / s
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q
