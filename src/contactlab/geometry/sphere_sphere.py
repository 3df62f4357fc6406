"""Narrow phase for two spheres."""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, scale, sub
from .record import ContactGeometry

__all__ = ["sphere_sphere"]


@jit
def sphere_sphere(xi, xj, vi, vj, wi, wj, ri, rj, inv_mi, inv_mj):
    """Contact geometry of spheres ``i`` and ``j``.

    Parameters are 3-tuples (positions m, velocities m/s, angular velocities rad/s) and floats
    (radii m, inverse masses 1/kg, 0 for a fixed sphere).  Returns ``(geometry, ok)``; ``ok`` is
    False only when the centres coincide (the normal is undefined), in which case the geometry is
    a zero-overlap placeholder that no law treats as a contact.
    """
    d = sub(xj, xi)
    dist = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    ok = dist > 0.0
    if ok:
        n = scale(1.0 / dist, d)
    else:
        n = (0.0, 0.0, 1.0)
    overlap = ri + rj - dist if ok else -1.0
    bi = scale(ri - 0.5 * overlap, n)
    bj = scale(-(rj - 0.5 * overlap), n)
    c = add(xi, bi)
    vci = add(vi, cross(wi, bi))
    vcj = add(vj, cross(wj, bj))
    inv_m = inv_mi + inv_mj
    mass = 1.0 / inv_m if inv_m > 0.0 else math.inf
    geom = ContactGeometry(n, overlap, c, bi, bj, sub(vcj, vci), sub(wj, wi), ri, rj, ri * rj / (ri + rj), mass)
    return geom, ok
