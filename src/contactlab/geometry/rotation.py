"""Rotations for compiled code: unit quaternions ``(w, x, y, z)``, body frame to global frame.

A body's orientation ``q`` maps a vector ``v_b`` given in the body's own (principal) frame to the
global frame: ``v = R(q) v_b``; :func:`to_body` applies ``R(q)^T``.  Vectors and quaternions are
tuples (values stay in registers).
"""
from __future__ import annotations

from .._jit import jit

__all__ = ["to_global", "to_body", "quat_matrix", "quat_multiply"]


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
