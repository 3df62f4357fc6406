"""Narrow phase for two spheres."""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, scale, sub
from .lens import sphere_sphere_lens
from .record import ContactGeometry

__all__ = ["sphere_sphere", "sphere_sphere_offset", "centre_offset"]


@jit
def sphere_sphere(xi, xj, ri, rj, inv_mi, inv_mj, vi, vj, wi, wj, mvi, mvj, mwi, mwj, dt):
    """Contact geometry of spheres ``i`` and ``j``.

    Positions (m), velocities (m/s) and angular velocities (rad/s) are 3-tuples: ``v``/``w`` at the
    force time, ``mv``/``mw`` at the middle of the step of length ``dt`` (s) that just ended.  Radii
    in m, inverse masses in 1/kg (0 for a fixed sphere).  Returns ``(geometry, ok)``; ``ok`` is
    False only when the centres coincide (the normal is undefined).
    """
    d, _, dist, inv_dist = centre_offset(xi, xj)
    return sphere_sphere_offset(xi, d, dist, inv_dist, ri, rj, inv_mi, inv_mj, vi, vj, wi, wj, mvi, mvj, mwi, mwj, dt)


@jit
def centre_offset(xi, xj):
    """``(d, d . d, |d|, 1 / |d|)`` for sphere centres ``xi`` and ``xj`` (3-tuples, m): ``d = xj - xi``
    (m), its squared length (m^2), its length (m) and the inverse of that (1/m; 0 where the centres
    coincide, which have no normal).  The step kernels compute it one candidate pair ahead (see
    :func:`sphere_sphere_offset`)."""
    d = sub(xj, xi)
    d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    dist = math.sqrt(d2)
    return d, d2, dist, 1.0 / dist if dist > 0.0 else 0.0


@jit
def sphere_sphere_offset(xi, d, dist, inv_dist, ri, rj, inv_mi, inv_mj, vi, vj, wi, wj, mvi, mvj, mwi, mwj, dt):
    """:func:`sphere_sphere` from :func:`centre_offset`'s ``d = xj - xi`` (m), ``dist = |d|`` (m) and
    ``inv_dist = 1 / |d|`` (1/m), computed beforehand: the step kernels compute them one candidate
    pair ahead, so that the square root and the division of the next pair overlap the law of this
    one (the same operations, the same bits)."""
    ok = dist > 0.0
    if ok:
        n = scale(inv_dist, d)
    else:
        n = (0.0, 0.0, 1.0)
    overlap = ri + rj - dist if ok else -1.0
    bi = scale(ri - 0.5 * overlap, n)
    bj = scale(-(rj - 0.5 * overlap), n)
    c = add(xi, bi)
    rel_v = sub(add(vj, cross(wj, bj)), add(vi, cross(wi, bi)))
    rel_d = scale(dt, sub(add(mvj, cross(mwj, bj)), add(mvi, cross(mwi, bi))))
    inv_m = inv_mi + inv_mj
    mass = 1.0 / inv_m if inv_m > 0.0 else math.inf
    volume, area = sphere_sphere_lens(ri, rj, dist) if overlap > 0.0 else (0.0, 0.0)
    geom = ContactGeometry(n, overlap, c, bi, bj, rel_v, sub(wj, wi), rel_d, scale(dt, sub(mwj, mwi)),
                           ri, rj, ri * rj / (ri + rj), mass, scale(0.5 * dt, add(mwi, mwj)), area, volume, 0.0)
    return geom, ok
