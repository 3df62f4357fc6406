"""EPA (expanding polytope): the penetration depth of two overlapping convex cores.

One of the four modules of the convex-pair narrow phase (overview in
:mod:`contactlab.geometry.gjk_epa`).  When GJK (:mod:`.gjk`) finds the origin inside the Minkowski
difference ``D = B (-) A`` of the cores (or within the tolerance of it), its last simplex is grown
to a tetrahedron inside ``D`` (:func:`_complete_tetrahedron`, by support points off the simplex's
affine hull; a flat ``D`` is reported as such) and :func:`_epa` expands that polytope towards the
part of the boundary of ``D`` closest to the origin: the face closest to the origin is pushed out
by the support point along its normal, the faces the new vertex sees are replaced by a fan over
their horizon, until the support point lies within the tolerance of the face's plane.  That
face's distance is the penetration depth, its outward normal ``m`` the pair's normal ``-m``, and
the origin's projection in its barycentric coordinates interpolates the witness points.

EPA works in fixed-capacity arrays allocated once per EPA call (only overlapping cores pay for
it): ``EPA_MAX_VERTICES`` vertices for the coarse stage of smooth shapes,
``EPA_FALLBACK_VERTICES`` when EPA must reach the fine tolerance itself; when they are full the
best estimate so far is returned with status 1 (``GJK_MAX_ITER``).

Compiled building blocks (``inline="never"``, scalar-expanded vector arithmetic: see the
implementation notes in :mod:`contactlab.geometry.gjk_epa`); the names with a leading underscore
are internal to the convex-pair modules.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .minkowski import _FLAT_REL, GJK_DEGENERATE, GJK_MAX_ITER, GJK_OK, _mink_support

__all__ = ["EPA_MAX_VERTICES", "EPA_FALLBACK_VERTICES"]

#: capacity of the EPA polytope (vertices; faces 2 V - 4), and of the last-resort EPA that runs
#: to the fine tolerance when a refinement for smooth shapes failed (and for polyhedra directly)
EPA_MAX_VERTICES = 64
EPA_FALLBACK_VERTICES = 256
#: a face is visible from a new EPA vertex when the vertex is this far (relative) above its plane
_VISIBLE_REL = 1e-13


# ----------------------------------------------------------------------------------------------
# the polytope: vertex and face storage, the closest face, the expansion
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _set_vertex(V, k, w, a, b):
    """Store EPA vertex ``k``: ``V[9k:9k+9] = (w, a, b)``."""
    o = 9 * k
    V[o] = w[0]
    V[o + 1] = w[1]
    V[o + 2] = w[2]
    V[o + 3] = a[0]
    V[o + 4] = a[1]
    V[o + 5] = a[2]
    V[o + 6] = b[0]
    V[o + 7] = b[1]
    V[o + 8] = b[2]


@jit(inline="never")
def _set_face(V, FN, FI, f, i0, i1, i2):
    """Store face ``f`` = vertices ``(i0, i1, i2)`` (counter-clockwise seen from outside) with its
    unit outward normal and the signed distance of its plane from the origin (``FN[4f:4f+4]``); a
    face too thin for a normal gets distance ``+inf`` (never closest, never visible)."""
    FI[3 * f] = i0
    FI[3 * f + 1] = i1
    FI[3 * f + 2] = i2
    o0 = 9 * i0
    o1 = 9 * i1
    o2 = 9 * i2
    x0 = V[o0]
    y0 = V[o0 + 1]
    z0 = V[o0 + 2]
    x1 = V[o1]
    y1 = V[o1 + 1]
    z1 = V[o1 + 2]
    x2 = V[o2]
    y2 = V[o2 + 1]
    z2 = V[o2 + 2]
    ax = x1 - x0
    ay = y1 - y0
    az = z1 - z0
    bx = x2 - x0
    by = y2 - y0
    bz = z2 - z0
    cx = x2 - x1
    cy = y2 - y1
    cz = z2 - z1
    nx = ay * bz - az * by
    ny = az * bx - ax * bz
    nz = ax * by - ay * bx
    nn = nx * nx + ny * ny + nz * nz
    emax = max(ax * ax + ay * ay + az * az, bx * bx + by * by + bz * bz, cx * cx + cy * cy + cz * cz)
    o = 4 * f
    if nn > _FLAT_REL * _FLAT_REL * emax * emax:
        s = 1.0 / math.sqrt(nn)
        nx *= s
        ny *= s
        nz *= s
        FN[o] = nx
        FN[o + 1] = ny
        FN[o + 2] = nz
        # the plane's offset, averaged over the three vertices
        FN[o + 3] = (nx * (x0 + x1 + x2) + ny * (y0 + y1 + y2) + nz * (z0 + z1 + z2)) / 3.0
    else:
        FN[o] = 0.0
        FN[o + 1] = 0.0
        FN[o + 2] = 0.0
        FN[o + 3] = math.inf


@jit(inline="never")
def _face_result(V, FN, FI, f):
    """Signed distance, outward normal and witness points (``pa`` on A, ``pb`` on B) of EPA face
    ``f``: the origin's projection ``dist n`` on the face plane in barycentric coordinates of the
    face (clamped to the face)."""
    nx = FN[4 * f]
    ny = FN[4 * f + 1]
    nz = FN[4 * f + 2]
    dist = FN[4 * f + 3]
    o0 = 9 * FI[3 * f]
    o1 = 9 * FI[3 * f + 1]
    o2 = 9 * FI[3 * f + 2]
    px = dist * nx
    py = dist * ny
    pz = dist * nz
    q0x = V[o0] - px
    q0y = V[o0 + 1] - py
    q0z = V[o0 + 2] - pz
    q1x = V[o1] - px
    q1y = V[o1 + 1] - py
    q1z = V[o1 + 2] - pz
    q2x = V[o2] - px
    q2y = V[o2 + 1] - py
    q2z = V[o2 + 2] - pz
    l0 = max(nx * (q1y * q2z - q1z * q2y) + ny * (q1z * q2x - q1x * q2z) + nz * (q1x * q2y - q1y * q2x), 0.0)
    l1 = max(nx * (q2y * q0z - q2z * q0y) + ny * (q2z * q0x - q2x * q0z) + nz * (q2x * q0y - q2y * q0x), 0.0)
    l2 = max(nx * (q0y * q1z - q0z * q1y) + ny * (q0z * q1x - q0x * q1z) + nz * (q0x * q1y - q0y * q1x), 0.0)
    s = l0 + l1 + l2
    if s > 0.0:
        l0 /= s
        l1 /= s
        l2 /= s
    else:
        l0 = 1.0 / 3.0
        l1 = l0
        l2 = l0
    pa = (l0 * V[o0 + 3] + l1 * V[o1 + 3] + l2 * V[o2 + 3], l0 * V[o0 + 4] + l1 * V[o1 + 4] + l2 * V[o2 + 4],
          l0 * V[o0 + 5] + l1 * V[o1 + 5] + l2 * V[o2 + 5])
    pb = (l0 * V[o0 + 6] + l1 * V[o1 + 6] + l2 * V[o2 + 6], l0 * V[o0 + 7] + l1 * V[o1 + 7] + l2 * V[o2 + 7],
          l0 * V[o0 + 8] + l1 * V[o1 + 8] + l2 * V[o2 + 8])
    return dist, (nx, ny, nz), pa, pb


@jit(inline="never")
def _containing_face(V, FN, FI, nf, best, eps):
    """Among the faces in the plane of face ``best`` (within ``eps``; coplanar triangles of a
    polyhedron's face tie), the one whose barycentric coordinates of the origin's projection are
    the least negative: the face that contains the projection."""
    nx = FN[4 * best]
    ny = FN[4 * best + 1]
    nz = FN[4 * best + 2]
    d = FN[4 * best + 3]
    px = d * nx
    py = d * ny
    pz = d * nz
    pick = best
    pick_min = -math.inf
    for f in range(nf):
        o = 4 * f
        if abs(FN[o + 3] - d) > eps or FN[o] * nx + FN[o + 1] * ny + FN[o + 2] * nz < 1.0 - 1e-12:
            continue
        o0 = 9 * FI[3 * f]
        o1 = 9 * FI[3 * f + 1]
        o2 = 9 * FI[3 * f + 2]
        q0x = V[o0] - px
        q0y = V[o0 + 1] - py
        q0z = V[o0 + 2] - pz
        q1x = V[o1] - px
        q1y = V[o1 + 1] - py
        q1z = V[o1 + 2] - pz
        q2x = V[o2] - px
        q2y = V[o2 + 1] - py
        q2z = V[o2 + 2] - pz
        l0 = nx * (q1y * q2z - q1z * q2y) + ny * (q1z * q2x - q1x * q2z) + nz * (q1x * q2y - q1y * q2x)
        l1 = nx * (q2y * q0z - q2z * q0y) + ny * (q2z * q0x - q2x * q0z) + nz * (q2x * q0y - q2y * q0x)
        l2 = nx * (q0y * q1z - q0z * q1y) + ny * (q0z * q1x - q0x * q1z) + nz * (q0x * q1y - q0y * q1x)
        m = min(l0, l1, l2) / (abs(l0) + abs(l1) + abs(l2))
        if m > pick_min:
            pick_min = m
            pick = f
        if m >= 0.0:
            break
    return pick


@jit(inline="never")
def _closest_face(FN, nf):
    """Index and signed distance of the face closest to the origin among the first ``nf``."""
    best = np.int64(0)
    best_d = math.inf
    for f in range(nf):
        d = FN[4 * f + 3]
        if d < best_d:
            best_d = d
            best = f
    return best, best_d


@jit(inline="never")
def _epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, w, a, b, tol, size, max_v):
    """EPA from the tetrahedron ``w[0..3]`` (points of ``D``, with their supports ``a`` on A and
    ``b`` on B) that contains the origin (or nearly: within the tolerance, when the bodies touch).

    Returns ``(depth, m, pa, pb, status)``: ``depth`` (m) the distance of the origin from the
    boundary of ``D`` (the penetration depth of the cores; slightly negative when the origin is
    just outside), ``m`` the unit outward normal of ``D`` there (the pair's normal is ``-m``),
    ``pa``/``pb`` the witness points on the cores (``pb - pa = depth m``), status 0, 1 (capacity
    or topology failure: the best estimate so far) or 2 (every face degenerate).  ``max_v``: the
    capacity in vertices (faces ``2 max_v - 4``, horizon edges ``max_v``).

    Storage (one float and one int allocation, flat): ``V[9k:9k+9] = (w, a, b)`` of vertex ``k``;
    ``FI[3f:3f+3]`` the vertex indices of face ``f`` (counter-clockwise seen from outside) and
    ``FN[4f:4f+4]`` its unit outward normal and plane offset, faces kept compact (the first
    ``nf``); ``E[2e:2e+2]`` the horizon edges while a vertex is added."""
    max_f = 2 * max_v - 4
    max_e = max_v
    fb = np.empty(9 * max_v + 4 * max_f, dtype=np.float64)
    ib = np.empty(3 * max_f + 2 * max_e, dtype=np.int64)
    V = fb[:9 * max_v]
    FN = fb[9 * max_v:]
    FI = ib[:3 * max_f]
    E = ib[3 * max_f:]
    # orient the tetrahedron: (w1 - w0) x (w2 - w0) pointing away from w3 (swap w1, w2 if not)
    ax = w[1][0] - w[0][0]
    ay = w[1][1] - w[0][1]
    az = w[1][2] - w[0][2]
    bx = w[2][0] - w[0][0]
    by = w[2][1] - w[0][1]
    bz = w[2][2] - w[0][2]
    det = ((w[3][0] - w[0][0]) * (ay * bz - az * by) + (w[3][1] - w[0][1]) * (az * bx - ax * bz)
           + (w[3][2] - w[0][2]) * (ax * by - ay * bx))
    k0 = np.int64(0)
    k1 = np.int64(1)
    k2 = np.int64(2)
    k3 = np.int64(3)
    _set_vertex(V, k0, w[0], a[0], b[0])
    _set_vertex(V, k3, w[3], a[3], b[3])
    if det > 0.0:
        _set_vertex(V, k1, w[2], a[2], b[2])
        _set_vertex(V, k2, w[1], a[1], b[1])
    else:
        _set_vertex(V, k1, w[1], a[1], b[1])
        _set_vertex(V, k2, w[2], a[2], b[2])
    _set_face(V, FN, FI, k0, k0, k1, k2)
    _set_face(V, FN, FI, k1, k0, k3, k1)
    _set_face(V, FN, FI, k2, k0, k2, k3)
    _set_face(V, FN, FI, k3, k1, k3, k2)
    nv = np.int64(4)
    nf = np.int64(4)
    eps_vis = _VISIBLE_REL * size
    status = GJK_MAX_ITER
    best = np.int64(0)
    for _ in range(max_v):
        best, best_d = _closest_face(FN, nf)
        if best_d == math.inf:
            status = GJK_DEGENERATE  # every face degenerate: no normal to report
            break
        n = (FN[4 * best], FN[4 * best + 1], FN[4 * best + 2])
        wn, an, bn = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, n)
        if n[0] * wn[0] + n[1] * wn[1] + n[2] * wn[2] - best_d <= tol:
            status = GJK_OK
            break
        if nv == max_v:
            break
        # remove the faces the new vertex sees; their unshared edges form the horizon
        _set_vertex(V, nv, wn, an, bn)
        ne = np.int64(0)
        keep = np.int64(0)
        ok = True
        for f in range(nf):
            o = 4 * f
            if f == best or FN[o] * wn[0] + FN[o + 1] * wn[1] + FN[o + 2] * wn[2] - FN[o + 3] > eps_vis:
                for k in range(3):
                    u = FI[3 * f + k]
                    v = FI[3 * f + (k + 1) % 3]
                    found = -1
                    for e in range(ne):
                        if E[2 * e] == v and E[2 * e + 1] == u:
                            found = e
                            break
                    if found >= 0:
                        ne -= 1
                        E[2 * found] = E[2 * ne]
                        E[2 * found + 1] = E[2 * ne + 1]
                    elif ne < max_e:
                        E[2 * ne] = u
                        E[2 * ne + 1] = v
                        ne += 1
                    else:
                        ok = False
            else:
                if keep != f:
                    for c in range(4):
                        FN[4 * keep + c] = FN[o + c]
                    for c in range(3):
                        FI[3 * keep + c] = FI[3 * f + c]
                keep += 1
        if not ok or keep + ne > max_f:
            # the polytope is broken; report the closest face of what is left
            nf = keep
            best, best_d = _closest_face(FN, nf)
            break
        nf = keep
        for e in range(ne):
            _set_face(V, FN, FI, nf, E[2 * e], E[2 * e + 1], nv)
            nf += 1
        nv += 1
        # a closed triangulated surface of nv vertices has 2 nv - 4 faces; anything else means the
        # horizon was not a simple loop (round-off on nearly coplanar faces): stop with the best
        # estimate (the polytope still lies inside D)
        if nf != 2 * nv - 4:
            best, best_d = _closest_face(FN, nf)
            break
    if status != GJK_DEGENERATE:
        best = _containing_face(V, FN, FI, nf, best, eps_vis)
    depth, m, pa, pb = _face_result(V, FN, FI, best)
    return depth, m, pa, pb, status


# ----------------------------------------------------------------------------------------------
# GJK's final simplex completed to EPA's starting tetrahedron
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _complete_tetrahedron(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, n, w, a, b, eps):
    """Grow GJK's final simplex (``n`` points whose hull holds the origin, within tolerance) to a
    tetrahedron by support points in directions off its affine hull.

    Returns ``(w, a, b, dim)``: ``dim == 3`` on success; ``dim < 3`` when ``D`` is flat (2), a
    segment (1) or a point (0) within ``eps`` (m), with ``w[0..dim]`` spanning it."""
    w0 = w[0]
    w1 = w[1]
    w2 = w[2]
    w3 = w[3]
    a0 = a[0]
    a1 = a[1]
    a2 = a[2]
    a3 = a[3]
    b0 = b[0]
    b1 = b[1]
    b2 = b[2]
    b3 = b[3]
    if n == 1:
        # the farthest support point along the six axis directions
        best = -1.0
        for k in range(6):
            s = 1.0 if k < 3 else -1.0
            axis = k % 3
            d = (s if axis == 0 else 0.0, s if axis == 1 else 0.0, s if axis == 2 else 0.0)
            wk, ak, bk = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d)
            ex = wk[0] - w0[0]
            ey = wk[1] - w0[1]
            ez = wk[2] - w0[2]
            ee = ex * ex + ey * ey + ez * ez
            if ee > best:
                best = ee
                w1 = wk
                a1 = ak
                b1 = bk
        if not best > eps * eps:
            return (w0, w1, w2, w3), (a0, a1, a2, a3), (b0, b1, b2, b3), 0
        n = 2
    if n == 2:
        # the farthest support point from the line, along two perpendiculars and their opposites
        ex = w1[0] - w0[0]
        ey = w1[1] - w0[1]
        ez = w1[2] - w0[2]
        ee = ex * ex + ey * ey + ez * ez
        # d1 = e x (the axis least aligned with e), d2 = e x d1
        if abs(ex) <= abs(ey) and abs(ex) <= abs(ez):
            d1 = (0.0, ez, -ey)
        elif abs(ey) <= abs(ez):
            d1 = (-ez, 0.0, ex)
        else:
            d1 = (ey, -ex, 0.0)
        d2 = (ey * d1[2] - ez * d1[1], ez * d1[0] - ex * d1[2], ex * d1[1] - ey * d1[0])
        best = -1.0
        for k in range(4):
            d = d1 if k < 2 else d2
            if k % 2 == 1:
                d = (-d[0], -d[1], -d[2])
            wk, ak, bk = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d)
            qx = wk[0] - w0[0]
            qy = wk[1] - w0[1]
            qz = wk[2] - w0[2]
            cx = qy * ez - qz * ey
            cy = qz * ex - qx * ez
            cz = qx * ey - qy * ex
            h = (cx * cx + cy * cy + cz * cz) / ee          # squared distance from the line
            if h > best:
                best = h
                w2 = wk
                a2 = ak
                b2 = bk
        if not best > eps * eps:
            return (w0, w1, w2, w3), (a0, a1, a2, a3), (b0, b1, b2, b3), 1
        n = 3
    if n == 3:
        # the support points along both normals of the triangle; keep the farther one
        ax = w1[0] - w0[0]
        ay = w1[1] - w0[1]
        az = w1[2] - w0[2]
        bx = w2[0] - w0[0]
        by = w2[1] - w0[1]
        bz = w2[2] - w0[2]
        nrm = (ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)
        nl = math.sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2])
        hb = -1.0
        for k in range(2):
            s = 1.0 if k == 0 else -1.0
            d = (s * nrm[0], s * nrm[1], s * nrm[2])
            wk, ak, bk = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d)
            h = (d[0] * (wk[0] - w0[0]) + d[1] * (wk[1] - w0[1]) + d[2] * (wk[2] - w0[2])) / nl
            if h > hb:
                hb = h
                w3 = wk
                a3 = ak
                b3 = bk
        if not hb > eps:
            return (w0, w1, w2, w3), (a0, a1, a2, a3), (b0, b1, b2, b3), 2
    return (w0, w1, w2, w3), (a0, a1, a2, a3), (b0, b1, b2, b3), 3
