"""Narrow phase for a sphere and an infinite plane wall."""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, dot, scale, sub
from .lens import sphere_halfspace_cap
from .record import ContactGeometry

__all__ = ["sphere_wall"]


@jit
def sphere_wall(xi, ri, inv_mi, vi, wi, mvi, mwi, wall_point, wall_normal, wall_velocity, dt):
    """Contact geometry of sphere ``i`` and a wall (body ``j``).

    ``v``/``w``: the sphere's velocities at the force time; ``mv``/``mw``: at the middle of the
    step of length ``dt``.  ``wall_normal`` is the wall's unit normal (towards the spheres); the
    record's normal is its opposite.  The wall is a sphere of infinite radius and infinite mass
    translating at ``wall_velocity`` (m/s).  Returns ``(geometry, True)``.
    """
    n = scale(-1.0, wall_normal)
    height = dot(sub(xi, wall_point), wall_normal)
    overlap = ri - height
    bi = scale(ri - 0.5 * overlap, n)
    c = add(xi, bi)
    bj = sub(c, c)  # a wall has no centre; its material point moves with the translation velocity
    rel_v = sub(wall_velocity, add(vi, cross(wi, bi)))
    rel_d = scale(dt, sub(wall_velocity, add(mvi, cross(mwi, bi))))
    mass = 1.0 / inv_mi if inv_mi > 0.0 else math.inf
    volume, area = sphere_halfspace_cap(ri, height) if overlap > 0.0 else (0.0, 0.0)
    geom = ContactGeometry(n, overlap, c, bi, bj, rel_v, scale(-1.0, wi), rel_d, scale(-dt, mwi),
                           ri, math.inf, ri, mass, scale(0.5 * dt, mwi), area, volume, 0.0)
    return geom, True
