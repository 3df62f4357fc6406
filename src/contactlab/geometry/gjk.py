"""GJK: the distance of two convex cores, handing overlaps on to EPA.

One of the four modules of the convex-pair narrow phase (overview in
:mod:`contactlab.geometry.gjk_epa`).  GJK (Gilbert-Johnson-Keerthi, in van den Bergen's form)
finds the point ``v`` of the Minkowski difference ``D = B (-) A`` of the cores closest to the
origin: ``|v|`` is the distance and ``v / |v|`` the normal.  Each iteration adds the support point
of ``D`` along ``-v`` (:func:`~.minkowski._mink_support`) to a simplex of at most four points and
reduces the simplex to the points that carry its closest point to the origin
(:func:`_gjk_update`): the simplex sub-problem projects the origin on a triangle's plane (or
solves a tetrahedron's barycentric coordinates) and falls back to the edges/faces facing the
origin (:func:`_closest_segment`, :func:`_closest_triangle`, :func:`_closest_tetrahedron`).  It
stops when the gap between the upper bound ``|v|`` and the lower bound given by the new support
point is below the tolerance.

When the origin is in ``D`` (or within the tolerance of it), :func:`_gjk_epa` passes the last
simplex on to EPA (:mod:`.epa`) for the penetration depth.

Compiled building blocks (``inline="never"``, scalar-expanded vector arithmetic: see the
implementation notes in :mod:`contactlab.geometry.gjk_epa`); the names with a leading underscore
are internal to the convex-pair modules.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .epa import _complete_tetrahedron, _epa
from .minkowski import _FLAT_REL, _ZERO3, GJK_DEGENERATE, GJK_MAX_ITER, GJK_OK, _mink_support

__all__ = ["GJK_MAX_ITERATIONS"]

#: iteration cap of GJK
GJK_MAX_ITERATIONS = 128


# ----------------------------------------------------------------------------------------------
# closest point of a simplex to the origin
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _closest_segment(p0, p1):
    """Closest point to the origin on the segment ``p0 p1``: ``(v, l0, l1, mask)`` with
    ``v = l0 p0 + l1 p1`` and ``mask`` the vertices used (bit 0: p0, bit 1: p1)."""
    d0 = p1[0] - p0[0]
    d1 = p1[1] - p0[1]
    d2 = p1[2] - p0[2]
    u = -(p0[0] * d0 + p0[1] * d1 + p0[2] * d2)
    if u <= 0.0:
        return p0, 1.0, 0.0, 1
    t = p1[0] * d0 + p1[1] * d1 + p1[2] * d2
    if t <= 0.0:
        return p1, 0.0, 1.0, 2
    s = u / (u + t)
    return (p0[0] + s * d0, p0[1] + s * d1, p0[2] + s * d2), 1.0 - s, s, 3


@jit(inline="never")
def _closest_triangle(p0, p1, p2):
    """Closest point to the origin on the triangle ``p0 p1 p2``: ``(v, (l0, l1, l2), mask)``.

    The origin is projected on the plane, ``v = n (n . p0) / |n|^2`` (accurate in direction), and
    its barycentric coordinates are the signed areas of the sub-triangles at ``v``; when one is
    negative the answer lies on an edge facing the origin (any edge for a triangle flatter than
    ``_FLAT_REL``)."""
    ax = p1[0] - p0[0]
    ay = p1[1] - p0[1]
    az = p1[2] - p0[2]
    bx = p2[0] - p0[0]
    by = p2[1] - p0[1]
    bz = p2[2] - p0[2]
    cx = p2[0] - p1[0]
    cy = p2[1] - p1[1]
    cz = p2[2] - p1[2]
    nx = ay * bz - az * by
    ny = az * bx - ax * bz
    nz = ax * by - ay * bx
    nn = nx * nx + ny * ny + nz * nz
    emax = max(ax * ax + ay * ay + az * az, bx * bx + by * by + bz * bz, cx * cx + cy * cy + cz * cz)
    c0 = True
    c1 = True
    c2 = True
    if nn > _FLAT_REL * _FLAT_REL * emax * emax:
        f = (nx * p0[0] + ny * p0[1] + nz * p0[2]) / nn
        vx = f * nx
        vy = f * ny
        vz = f * nz
        q0x = p0[0] - vx
        q0y = p0[1] - vy
        q0z = p0[2] - vz
        q1x = p1[0] - vx
        q1y = p1[1] - vy
        q1z = p1[2] - vz
        q2x = p2[0] - vx
        q2y = p2[1] - vy
        q2z = p2[2] - vz
        l0 = (nx * (q1y * q2z - q1z * q2y) + ny * (q1z * q2x - q1x * q2z) + nz * (q1x * q2y - q1y * q2x)) / nn
        l1 = (nx * (q2y * q0z - q2z * q0y) + ny * (q2z * q0x - q2x * q0z) + nz * (q2x * q0y - q2y * q0x)) / nn
        l2 = (nx * (q0y * q1z - q0z * q1y) + ny * (q0z * q1x - q0x * q1z) + nz * (q0x * q1y - q0y * q1x)) / nn
        if l0 >= 0.0 and l1 >= 0.0 and l2 >= 0.0:
            s = l0 + l1 + l2
            return (vx, vy, vz), (l0 / s, l1 / s, l2 / s), 7
        c0 = l0 < 0.0
        c1 = l1 < 0.0
        c2 = l2 < 0.0
    best_vv = math.inf
    best_v = p0
    best_l = (1.0, 0.0, 0.0)
    best_m = 1
    if c2:  # edge p0 p1 (opposite p2)
        v, la, lb, m = _closest_segment(p0, p1)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (la, lb, 0.0)
            best_m = m
    if c0:  # edge p1 p2
        v, la, lb, m = _closest_segment(p1, p2)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (0.0, la, lb)
            best_m = m << 1
    if c1:  # edge p2 p0
        v, la, lb, m = _closest_segment(p2, p0)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (lb, 0.0, la)
            best_m = ((m & 1) << 2) | ((m & 2) >> 1)
    return best_v, best_l, best_m


@jit(inline="never")
def _closest_tetrahedron(p0, p1, p2, p3):
    """Closest point to the origin on the tetrahedron ``p0..p3``: ``(v, (l0..l3), mask)``, with
    ``mask == 15`` and ``v = 0`` when the origin is inside.  The barycentric coordinates of the
    origin come from the face planes (``l_k`` = height of the origin over the face opposite ``p_k``
    relative to that of ``p_k``); outside, the answer lies on a face facing the origin (any face
    for a tetrahedron flatter than ``_FLAT_REL``)."""
    e01x = p1[0] - p0[0]
    e01y = p1[1] - p0[1]
    e01z = p1[2] - p0[2]
    e02x = p2[0] - p0[0]
    e02y = p2[1] - p0[1]
    e02z = p2[2] - p0[2]
    e03x = p3[0] - p0[0]
    e03y = p3[1] - p0[1]
    e03z = p3[2] - p0[2]
    e12x = p2[0] - p1[0]
    e12y = p2[1] - p1[1]
    e12z = p2[2] - p1[2]
    e13x = p3[0] - p1[0]
    e13y = p3[1] - p1[1]
    e13z = p3[2] - p1[2]
    e23x = p3[0] - p2[0]
    e23y = p3[1] - p2[1]
    e23z = p3[2] - p2[2]
    # normals of the faces opposite p0 (e12 x e13), p1 (e03 x e02), p2 (e01 x e03), p3 (e02 x e01);
    # with these orientations n_k . (p_k - face) is the same number ``den`` for every k
    n0x = e12y * e13z - e12z * e13y
    n0y = e12z * e13x - e12x * e13z
    n0z = e12x * e13y - e12y * e13x
    n1x = e03y * e02z - e03z * e02y
    n1y = e03z * e02x - e03x * e02z
    n1z = e03x * e02y - e03y * e02x
    n2x = e01y * e03z - e01z * e03y
    n2y = e01z * e03x - e01x * e03z
    n2z = e01x * e03y - e01y * e03x
    n3x = e02y * e01z - e02z * e01y
    n3y = e02z * e01x - e02x * e01z
    n3z = e02x * e01y - e02y * e01x
    den = n3x * e03x + n3y * e03y + n3z * e03z
    emax = max(e01x * e01x + e01y * e01y + e01z * e01z, e02x * e02x + e02y * e02y + e02z * e02z,
               e03x * e03x + e03y * e03y + e03z * e03z, e12x * e12x + e12y * e12y + e12z * e12z,
               e13x * e13x + e13y * e13y + e13z * e13z, e23x * e23x + e23y * e23y + e23z * e23z)
    c0 = True
    c1 = True
    c2 = True
    c3 = True
    if abs(den) > _FLAT_REL * emax * math.sqrt(emax):
        l0 = -(n0x * p1[0] + n0y * p1[1] + n0z * p1[2]) / den
        l1 = -(n1x * p0[0] + n1y * p0[1] + n1z * p0[2]) / den
        l2 = -(n2x * p0[0] + n2y * p0[1] + n2z * p0[2]) / den
        l3 = -(n3x * p0[0] + n3y * p0[1] + n3z * p0[2]) / den
        if l0 >= 0.0 and l1 >= 0.0 and l2 >= 0.0 and l3 >= 0.0:
            return _ZERO3, (l0, l1, l2, l3), 15
        c0 = l0 < 0.0
        c1 = l1 < 0.0
        c2 = l2 < 0.0
        c3 = l3 < 0.0
    best_vv = math.inf
    best_v = p0
    best_l = (1.0, 0.0, 0.0, 0.0)
    best_m = 1
    if c3:  # face p0 p1 p2
        v, l, m = _closest_triangle(p0, p1, p2)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (l[0], l[1], l[2], 0.0)
            best_m = m
    if c2:  # face p0 p1 p3
        v, l, m = _closest_triangle(p0, p1, p3)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (l[0], l[1], 0.0, l[2])
            best_m = (m & 3) | ((m & 4) << 1)
    if c1:  # face p0 p2 p3
        v, l, m = _closest_triangle(p0, p2, p3)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (l[0], 0.0, l[1], l[2])
            best_m = (m & 1) | ((m & 6) << 1)
    if c0:  # face p1 p2 p3
        v, l, m = _closest_triangle(p1, p2, p3)
        vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if vv < best_vv:
            best_vv = vv
            best_v = v
            best_l = (0.0, l[0], l[1], l[2])
            best_m = m << 1
    return best_v, best_l, best_m


@jit(inline="never")
def _gjk_update(ns, w, a, b):
    """One GJK simplex reduction: the closest point ``v`` to the origin of the simplex of the
    first ``ns`` points of ``w`` (with the supports ``a`` on A and ``b`` on B), the witness points
    ``pa``/``pb`` (``pb - pa = v``) and the reduced simplex (used points moved to the front).
    Returns ``(v, pa, pb, w, a, b, ns, inside)``; ``inside`` when the origin lies in a
    tetrahedron (``v = 0``, the simplex unchanged)."""
    if ns == 2:
        v, la, lb, mask = _closest_segment(w[0], w[1])
        lam = (la, lb, 0.0, 0.0)
    elif ns == 3:
        v, l3, mask = _closest_triangle(w[0], w[1], w[2])
        lam = (l3[0], l3[1], l3[2], 0.0)
    else:
        v, lam, mask = _closest_tetrahedron(w[0], w[1], w[2], w[3])
        if mask == 15:
            return v, _ZERO3, _ZERO3, w, a, b, ns, True
    pa = (lam[0] * a[0][0] + lam[1] * a[1][0] + lam[2] * a[2][0] + lam[3] * a[3][0],
          lam[0] * a[0][1] + lam[1] * a[1][1] + lam[2] * a[2][1] + lam[3] * a[3][1],
          lam[0] * a[0][2] + lam[1] * a[1][2] + lam[2] * a[2][2] + lam[3] * a[3][2])
    pb = (lam[0] * b[0][0] + lam[1] * b[1][0] + lam[2] * b[2][0] + lam[3] * b[3][0],
          lam[0] * b[0][1] + lam[1] * b[1][1] + lam[2] * b[2][1] + lam[3] * b[3][1],
          lam[0] * b[0][2] + lam[1] * b[1][2] + lam[2] * b[2][2] + lam[3] * b[3][2])
    # keep the used vertices, in order (static selection: a loop over k with w[k] would index the
    # tuples dynamically, which compiles to much more code)
    w0, a0, b0 = w[0], a[0], b[0]
    w1, a1, b1 = w[1], a[1], b[1]
    w2, a2, b2 = w[2], a[2], b[2]
    c = np.int64(0)
    if mask & 1:
        c += 1
    if mask & 2:
        if c == 0:
            w0, a0, b0 = w[1], a[1], b[1]
        c += 1
    if mask & 4:
        if c == 0:
            w0, a0, b0 = w[2], a[2], b[2]
        elif c == 1:
            w1, a1, b1 = w[2], a[2], b[2]
        c += 1
    if mask & 8:
        if c == 0:
            w0, a0, b0 = w[3], a[3], b[3]
        elif c == 1:
            w1, a1, b1 = w[3], a[3], b[3]
        else:
            w2, a2, b2 = w[3], a[3], b[3]
        c += 1
    return v, pa, pb, (w0, w1, w2, _ZERO3), (a0, a1, a2, _ZERO3), (b0, b1, b2, _ZERO3), c, False


# ----------------------------------------------------------------------------------------------
# GJK, then EPA on overlapping cores
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d0, tol, tol_epa, size, max_v):
    """Signed distance of the cores (GJK to the tolerance ``tol``, then EPA to ``tol_epa`` when the
    origin is in ``D`` or within ``tol`` of it), starting from the unit direction ``d0`` (from A
    towards B), with an EPA capacity of ``max_v`` vertices.

    Returns ``(sep, normal, pa, pb, status, epa)`` for the cores (``pb - pa = sep normal``);
    ``epa`` says whether EPA gave the result."""
    w_, a_, b_ = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                               (-d0[0], -d0[1], -d0[2]))
    w = (w_, _ZERO3, _ZERO3, _ZERO3)
    a = (a_, _ZERO3, _ZERO3, _ZERO3)
    b = (b_, _ZERO3, _ZERO3, _ZERO3)
    ns = np.int64(1)
    v = w_
    pa = a_
    pb = b_
    vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    overlap = False
    status = GJK_MAX_ITER
    for _ in range(GJK_MAX_ITERATIONS):
        vlen = math.sqrt(vv)
        if vlen <= tol:
            overlap = True
            break
        wn, an, bn = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                                   (-v[0], -v[1], -v[2]))
        # |v| - v.w/|v|: the upper minus the lower bound of the distance
        if vv - (v[0] * wn[0] + v[1] * wn[1] + v[2] * wn[2]) <= (tol + 1e-14 * vlen) * vlen:
            status = GJK_OK
            break
        if ns == 1:
            w = (w[0], wn, _ZERO3, _ZERO3)
            a = (a[0], an, _ZERO3, _ZERO3)
            b = (b[0], bn, _ZERO3, _ZERO3)
        elif ns == 2:
            w = (w[0], w[1], wn, _ZERO3)
            a = (a[0], a[1], an, _ZERO3)
            b = (b[0], b[1], bn, _ZERO3)
        else:
            w = (w[0], w[1], w[2], wn)
            a = (a[0], a[1], a[2], an)
            b = (b[0], b[1], b[2], bn)
        v_new, pa_new, pb_new, w2, a2, b2, ns2, inside = _gjk_update(ns + 1, w, a, b)
        if inside:
            ns = ns + 1
            overlap = True
            break
        vv_new = v_new[0] * v_new[0] + v_new[1] * v_new[1] + v_new[2] * v_new[2]
        if not vv_new < vv:
            # no progress (round-off): v is as close as it gets
            status = GJK_OK
            break
        v = v_new
        vv = vv_new
        pa = pa_new
        pb = pb_new
        w = w2
        a = a2
        b = b2
        ns = ns2
    if not overlap:
        dist = math.sqrt(vv)
        return dist, (v[0] / dist, v[1] / dist, v[2] / dist), pa, pb, status, False
    # EPA on the cores
    w, a, b, dim = _complete_tetrahedron(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                                         ns, w, a, b, _FLAT_REL * size)
    if dim < 3:
        # D is flat (a sphere's centre in a triangle's plane), a segment or a point: the cores touch
        # with zero depth; the normal is defined only for a flat D (its normal, on the side of d0)
        if dim == 2:
            ax = w[1][0] - w[0][0]
            ay = w[1][1] - w[0][1]
            az = w[1][2] - w[0][2]
            bx = w[2][0] - w[0][0]
            by = w[2][1] - w[0][1]
            bz = w[2][2] - w[0][2]
            cx = ay * bz - az * by
            cy = az * bx - ax * bz
            cz = ax * by - ay * bx
            cl = math.sqrt(cx * cx + cy * cy + cz * cz)
            s = 1.0 / cl if cx * d0[0] + cy * d0[1] + cz * d0[2] >= 0.0 else -1.0 / cl
            return 0.0, (s * cx, s * cy, s * cz), pa, pb, GJK_OK, False
        return 0.0, d0, pa, pb, GJK_DEGENERATE, False
    depth, m, qa, qb, st = _epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, w, a, b,
                                tol_epa, size, max_v)
    return -depth, (-m[0], -m[1], -m[2]), qa, qb, st, True
