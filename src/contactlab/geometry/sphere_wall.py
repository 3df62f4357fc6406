"""Narrow phase for a sphere and an infinite plane wall."""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, dot, scale, sub
from .record import ContactGeometry

__all__ = ["sphere_wall"]


@jit
def sphere_wall(xi, vi, wi, ri, inv_mi, wall_point, wall_normal, wall_velocity):
    """Contact geometry of sphere ``i`` and a wall (body ``j``).

    ``wall_normal`` is the wall's unit normal (towards the spheres); the record's normal is its
    opposite.  The wall is a sphere of infinite radius and infinite mass translating at
    ``wall_velocity``.  Returns ``(geometry, True)``.
    """
    n = scale(-1.0, wall_normal)
    height = dot(sub(xi, wall_point), wall_normal)
    overlap = ri - height
    bi = scale(ri - 0.5 * overlap, n)
    c = add(xi, bi)
    bj = sub(c, c)  # a wall has no centre; its material point moves with the translation velocity
    vci = add(vi, cross(wi, bi))
    mass = 1.0 / inv_mi if inv_mi > 0.0 else math.inf
    geom = ContactGeometry(n, overlap, c, bi, bj, sub(wall_velocity, vci), scale(-1.0, wi), ri, math.inf, ri, mass)
    return geom, True
