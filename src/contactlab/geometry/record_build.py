"""Assemble a contact-geometry record from the two surface points of a pair of rigid bodies.

Every narrow phase of non-spherical shapes (ellipsoids by the common normal, convex bodies by
GJK/EPA, the convex roll on a plane, mesh triangles) ends with the same data: the unit normal from
``i`` to ``j``, the separation (``< 0`` overlapping), the surface point of ``i`` deepest in
``j`` (or closest to it) and that of ``j``.  :func:`rigid_record` turns them into the record of
:mod:`contactlab.geometry.record`: contact point midway between the two surface points, branch
vectors from each centre of mass to it, relative velocities of the material points there.
"""
from __future__ import annotations

import math

from .._jit import jit
from ..vec import add, cross, scale, sub
from .record import ContactGeometry

__all__ = ["rigid_record", "effective_radius"]


@jit(inline="never")
def effective_radius(ri, rj):
    """``ri rj / (ri + rj)``, with an infinite radius (a flat surface) giving the other one."""
    if math.isinf(rj):
        return ri
    if math.isinf(ri):
        return rj
    return ri * rj / (ri + rj)


@jit(inline="never")
def rigid_record(normal, separation, point_i, point_j, xi, xj, vi, vj, wi, wj, mvi, mvj, mwi, mwj, inv_mi, inv_mj,
                 curv_i, curv_j, dt, area, volume, twist=0.0):
    """The record of bodies ``i`` (centre ``xi``) and ``j`` (centre or reference point ``xj``).

    ``v``/``w``: velocities of the centres and angular velocities at the force time; ``mv``/``mw``:
    at the middle of the step ``dt``.  ``curv_*``: radii of curvature at the contact (m, ``inf``
    for a flat surface); ``area``/``volume``: the overlap region's (0 when not computed).
    """
    c = scale(0.5, add(point_i, point_j))
    bi = sub(c, xi)
    bj = sub(c, xj)
    rel_v = sub(add(vj, cross(wj, bj)), add(vi, cross(wi, bi)))
    rel_d = scale(dt, sub(add(mvj, cross(mwj, bj)), add(mvi, cross(mwi, bi))))
    inv_m = inv_mi + inv_mj
    mass = 1.0 / inv_m if inv_m > 0.0 else math.inf
    return ContactGeometry(normal, -separation, c, bi, bj, rel_v, sub(wj, wi), rel_d, scale(dt, sub(mwj, mwi)),
                           curv_i, curv_j, effective_radius(curv_i, curv_j), mass, scale(0.5 * dt, add(mwi, mwj)),
                           area, volume, twist)
