"""Closest point of a triangle to a point, for sphere-triangle contact with mesh walls.

The point ``p`` is projected on the triangle's plane in barycentric form (the notes' construction:
``p - a = alpha v1 + beta v2 + lambda n`` with ``v1 = b - a``, ``v2 = c - a``, ``n = v1 x v2``,
solved through the Gram matrix of ``v1``, ``v2``); when the projection falls outside the triangle
the closest point is on an edge (clamped projection on the segment) or at a vertex.  Which
*feature* it lies on (face, edge, vertex) is returned as well: the mesh-wall contact uses it, with
the contact points, to count each touching surface once (see :mod:`contactlab.engine.kernels`).
"""
from __future__ import annotations

from .._jit import jit
from ..vec import add, cross, dot, scale, sub

__all__ = ["closest_point_on_triangle", "FACE", "EDGE", "VERTEX"]

FACE = 0
EDGE = 1
VERTEX = 2


@jit(inline="never")
def _closest_on_segment(p, a, b):
    """Closest point to ``p`` on the segment ``a b`` and whether it is an end point."""
    ab = sub(b, a)
    denom = dot(ab, ab)
    t = dot(sub(p, a), ab) / denom if denom > 0.0 else 0.0
    if t <= 0.0:
        return a, True
    if t >= 1.0:
        return b, True
    return add(a, scale(t, ab)), False


@jit(inline="never")
def closest_point_on_triangle(p, a, b, c):
    """Closest point of triangle ``a b c`` (3-tuples, m) to the point ``p``.

    Returns ``(point, feature)``: the closest point (m) and FACE (inside the triangle), EDGE or
    VERTEX.  A degenerate triangle (zero area) is treated as its longest edges.
    """
    v1 = sub(b, a)
    v2 = sub(c, a)
    vp = sub(p, a)
    n = cross(v1, v2)
    d11 = dot(v1, v1)
    d12 = dot(v1, v2)
    d22 = dot(v2, v2)
    t = d11 * d22 - d12 * d12  # |n|^2: the Gram determinant
    if t > 0.0:
        d1p = dot(v1, vp)
        d2p = dot(v2, vp)
        alpha = (d22 * d1p - d12 * d2p) / t
        beta = (d11 * d2p - d12 * d1p) / t
        if alpha >= 0.0 and beta >= 0.0 and alpha + beta <= 1.0:
            lam = dot(n, vp) / dot(n, n)
            return sub(p, scale(lam, n)), FACE
    # outside the face (or degenerate): the nearest of the three edges
    q1, end1 = _closest_on_segment(p, a, b)
    q2, end2 = _closest_on_segment(p, b, c)
    q3, end3 = _closest_on_segment(p, c, a)
    e1 = sub(p, q1)
    e2 = sub(p, q2)
    e3 = sub(p, q3)
    s1 = dot(e1, e1)
    s2 = dot(e2, e2)
    s3 = dot(e3, e3)
    if s1 <= s2 and s1 <= s3:
        return q1, VERTEX if end1 else EDGE
    if s2 <= s3:
        return q2, VERTEX if end2 else EDGE
    return q3, VERTEX if end3 else EDGE
