"""Narrow phase for a sphere and an infinite plane wall."""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, dot, scale, sub
from .lens import sphere_halfspace_cap
from .record import ContactGeometry

__all__ = ["sphere_wall", "wall_record"]


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
    return wall_record(xi, ri, inv_mi, vi, wi, mvi, mwi, n, height, ri, wall_velocity, dt), True


@jit
def wall_record(xi, ri, inv_mi, vi, wi, mvi, mwi, n, height, radius, wall_velocity, dt):
    """The record of sphere ``i`` on a rigid wall (body ``j``) translating at ``wall_velocity``
    (m/s), given the record's normal ``n`` (unit, from the sphere into the wall), the centre's
    ``height`` (m) above the wall's surface along ``-n`` and the effective ``radius`` (m) the
    laws see.  Shared by plane and cylinder walls: the contact point halfway into the overlap,
    infinite mass and radius of the wall, the cap cut off by the surface's tangent plane."""
    overlap = ri - height
    bi = scale(ri - 0.5 * overlap, n)
    c = add(xi, bi)
    bj = sub(c, c)  # a wall has no centre; its material point moves with the translation velocity
    rel_v = sub(wall_velocity, add(vi, cross(wi, bi)))
    rel_d = scale(dt, sub(wall_velocity, add(mvi, cross(mwi, bi))))
    mass = 1.0 / inv_mi if inv_mi > 0.0 else math.inf
    volume, area = sphere_halfspace_cap(ri, height) if overlap > 0.0 else (0.0, 0.0)
    return ContactGeometry(n, overlap, c, bi, bj, rel_v, scale(-1.0, wi), rel_d, scale(-dt, mwi),
                           ri, math.inf, radius, mass, scale(0.5 * dt, mwi), area, volume, 0.0)
