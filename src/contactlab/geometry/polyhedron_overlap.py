"""Intersection volume of convex polyhedra and its derivatives: the volume-based ECC contact.

Notes 004, "The ECC theory and the general contact model", part 1: the contact energy is a
function ``w(V)`` of the volume ``V`` common to the two bodies; the force on body ``i`` is
``F_i = -w'(V) dV/dx_i`` and the moment about its centre ``M_i = -w'(V) dV/dtheta_i``.  With the
recommended linear ``w = k V`` these are ``-k dV/dx_i`` and ``-k dV/dtheta_i``.  Both
derivatives are surface integrals over the part ``S_i`` of body ``i``'s surface that lies inside
the other body (``n`` its outward normal, ``x_i`` its centre)::

    dV/dx_i     = S_n = int_{S_i} n dS                 (m^2, the vector area of S_i)
    dV/dtheta_i =       int_{S_i} (x - x_i) x n dS     (m^3)

(moving a surface element of body ``i`` by ``dx`` sweeps the volume ``n . dx dS`` into the
other body).  ``dV/dx_i`` points from ``i`` towards ``j`` in a normal contact; ``|dV/dx_i|`` is
the area of ``S_i`` projected on the plane normal to it (the contact area ``S_n``).  ``theta_i``
is a small rotation of body ``i`` about its centre of mass, global components: ``q -> dq(dtheta)
q``, a body point ``x`` moves by ``dtheta x (x - x_i)``.

The intersection is found by clipping: each surface triangle of one body is clipped
(Sutherland-Hodgman) by the face planes of the other; the clipped polygons of both bodies close
the intersection's surface, whose volume and centroid follow from the divergence theorem (a fan
of tetrahedra from a reference point).  Work is limited to the slab where the two bodies overlap
along the line of centres (it holds the intersection; no overlap there: apart): only triangles
reaching into it are clipped, only their face planes clip (a body is left through a face that
touches the intersection), and a face plane is skipped when every vertex of the other body lies
strictly inside it.  The pair is reported apart when the bounding spheres about the centres are
apart, or no vertex of one body lies strictly inside a face plane of the other.

Coincident faces (boxes stacked flush, a face lying on the wall) are handled explicitly: a point
within ``1e-12 (R_i + R_j)`` of a plane (``R`` the largest vertex distance from a centre) counts
as lying on it; a clipped polygon lying wholly on a face plane of the other body is kept with
weight 1/2 (the other body's coincident face supplies the other half), so the surface stays
closed, the volume exact, and the derivatives are the mean of the one-sided ones (no sideways
push between flush faces).  Touching faces of opposite orientation mean zero volume: apart.

The moment generally has a component along ``dV/dx_i`` (a twist: turning one cube against another
in face contact changes the common area); a single force through a point cannot carry it.
:func:`polyhedron_intersection_gradients` returns the full ``dV/dtheta_i``;
:func:`polyhedron_intersection` returns the energy-consistent contact point of notes 004
(``x_c = x_i + n x M / |F| + lambda n``), which reproduces the moment's part perpendicular to
the force (``lambda`` puts ``x_c`` nearest the centroid of the intersection).

Shape parameters: ``POLYHEDRON`` blocks of :mod:`contactlab.geometry.shapes` (``nv, nt``,
body-frame vertices, triangles counter-clockwise seen from outside; the body is the convex hull).
Positions are 3-tuples (m), orientations unit quaternions ``(w, x, y, z)`` body -> global.

Status codes: ``STATUS_OK`` (0) ``V > 0``; ``STATUS_CAPACITY`` (1) a clipped polygon outgrew its
buffer (``3 +`` the number of cutting planes; only with degenerate, non-convex data) or the shape
block is unusable (``nv < 4``, ``nt < 4`` or a vertex index outside ``[0, nv)``); ``STATUS_APART``
(3) ``V = 0``.  With a status other than 0 every output is zero.  Work arrays are sized from
``nv`` and ``nt`` and allocated once per call (one ``np.empty``).

The closed forms for spheres (:func:`sphere_sphere_lens`, :func:`sphere_halfspace_cap`) live in
:mod:`contactlab.geometry.lens` and are re-exported here.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .lens import sphere_halfspace_cap, sphere_sphere_lens
from .rotation import to_global

__all__ = ["polyhedron_intersection", "polyhedron_intersection_gradients", "polyhedron_halfspace",
           "polyhedron_halfspace_gradients", "line_of_action_point", "sphere_sphere_lens",
           "sphere_halfspace_cap", "STATUS_OK", "STATUS_CAPACITY", "STATUS_APART", "COPLANAR_TOL"]

STATUS_OK = 0
STATUS_CAPACITY = 1
STATUS_APART = 3

#: distances below this times ``R_i + R_j`` count as "on the plane"
COPLANAR_TOL = 1e-12

# plane rows: nx, ny, nz, h (n . x <= h inside)
_PW = 4
# accumulator slots
_A_V6 = 0        # sum of 6 x signed tetrahedron volumes
_A_C = 1         # 1..3: sum of 6 V_t (u + v + w)   (4 x first moment about the reference point)
_A_S = 4         # 4..6: vector area of body i's clipped surface
_A_G = 7         # 7..9: int (x - x_i) x n dS over it
_A_AREA = 10     # sum of |vector area| of body i's clipped polygons
_A_O = 12        # 12..14: reference point of the tetrahedron fan
_A_OSET = 15     # 1.0 once the reference point is set
_NACC = 16


@jit
def _bounding_radius(data, ref, nv):
    """Largest distance (m) of a vertex from the body origin."""
    o = ref + 2
    r2 = 0.0
    for k in range(nv):
        x = data[o + 3 * k]
        y = data[o + 3 * k + 1]
        z = data[o + 3 * k + 2]
        r2 = max(r2, x * x + y * y + z * z)
    return math.sqrt(r2)


@jit(inline="never")
def _prepare(data, ref, quat, offset, axis, verts, proj):
    """Vertices ``offset + R(quat) v`` into ``verts`` (flat, ``3 nv``) and their projections on
    ``axis`` into ``proj``.  Returns ``(ok, min proj, max proj)``; ``ok`` False when a triangle's
    vertex index is out of range.  (Counts come from the array sizes: an integer constant
    argument would make Numba compile one copy per value.)"""
    nv = proj.shape[0]
    nt = int(data[ref + 1])
    o = ref + 2
    lo = math.inf
    hi = -math.inf
    for k in range(nv):
        g = to_global(quat, (data[o + 3 * k], data[o + 3 * k + 1], data[o + 3 * k + 2]))
        x = offset[0] + g[0]
        y = offset[1] + g[1]
        z = offset[2] + g[2]
        verts[3 * k] = x
        verts[3 * k + 1] = y
        verts[3 * k + 2] = z
        p = axis[0] * x + axis[1] * y + axis[2] * z
        proj[k] = p
        lo = min(lo, p)
        hi = max(hi, p)
    o = ref + 2 + 3 * nv
    ok = True
    for k in range(3 * nt):
        vi = int(data[o + k])
        if vi < 0 or vi >= nv:
            ok = False
    return ok, lo, hi


@jit
def _outside_slab(data, o, t, proj, lo, hi):
    """Whether triangle ``t`` (indices at ``data[o:]``) lies wholly below ``lo`` or above
    ``hi`` along the projection axis."""
    a = proj[int(data[o + 3 * t])]
    b = proj[int(data[o + 3 * t + 1])]
    c = proj[int(data[o + 3 * t + 2])]
    return (a < lo and b < lo and c < lo) or (a > hi and b > hi and c > hi)


@jit(inline="never")
def _cutting_planes(data, ref, verts, proj, lo, hi, other, tol, planes):
    """Outward face planes (flat rows ``nx, ny, nz, h``: ``n . x <= h`` inside) of the body's
    triangles that reach into the slab ``lo - tol <= axis . x <= hi + tol`` holding the
    intersection, keeping only those that cut or touch the vertex set ``other`` (flat) of the
    other body, near-duplicates merged.

    Returns the number of planes, or -1 when no vertex of ``other`` lies strictly inside one
    plane (the bodies are at most touching: zero volume).  A plane that every vertex of ``other``
    lies strictly inside is left out: clipping by it changes nothing.  Faces that do not reach
    the slab cannot touch the intersection, and clipping by the planes of the faces that touch
    it already gives it (leaving a convex body through a face means crossing its plane).
    """
    nv = proj.shape[0]
    nt = int(data[ref + 1])
    no = other.shape[0] // 3
    o = ref + 2 + 3 * nv
    m = 0
    for t in range(nt):
        if _outside_slab(data, o, t, proj, lo - tol, hi + tol):
            continue
        a = int(data[o + 3 * t])
        b = int(data[o + 3 * t + 1])
        c = int(data[o + 3 * t + 2])
        ax = verts[3 * a]
        ay = verts[3 * a + 1]
        az = verts[3 * a + 2]
        ux = verts[3 * b] - ax
        uy = verts[3 * b + 1] - ay
        uz = verts[3 * b + 2] - az
        vx = verts[3 * c] - ax
        vy = verts[3 * c + 1] - ay
        vz = verts[3 * c + 2] - az
        nx = uy * vz - uz * vy
        ny = uz * vx - ux * vz
        nz = ux * vy - uy * vx
        ln = math.sqrt(nx * nx + ny * ny + nz * nz)
        if not ln > 0.0:
            continue  # degenerate triangle: no plane
        nx /= ln
        ny /= ln
        nz /= ln
        h = nx * ax + ny * ay + nz * az
        n_in = 0
        for v in range(no):
            if nx * other[3 * v] + ny * other[3 * v + 1] + nz * other[3 * v + 2] - h < -tol:
                n_in += 1
        if n_in == 0:
            return -1
        if n_in == no:
            continue
        dup = False
        for l in range(m):
            q = _PW * l
            if (nx * planes[q] + ny * planes[q + 1] + nz * planes[q + 2] > 1.0 - 1e-12
                    and abs(h - planes[q + 3]) <= tol):
                dup = True
                break
        if dup:
            continue
        q = _PW * m
        planes[q] = nx
        planes[q + 1] = ny
        planes[q + 2] = nz
        planes[q + 3] = h
        m += 1
    return m


@jit(inline="never")
def _add_piece(poly, weight, acc, own):
    """Add the polygon ``poly`` (flat, counter-clockwise seen from outside the intersection) with
    ``weight`` to the sums in ``acc``: a fan of tetrahedra from the reference point ``o`` (set to
    the first point seen), and for ``own > 0`` (body i's surface) its vector area and moment."""
    n = poly.shape[0] // 3
    if acc[_A_OSET] == 0.0:
        acc[_A_O] = poly[0]
        acc[_A_O + 1] = poly[1]
        acc[_A_O + 2] = poly[2]
        acc[_A_OSET] = 1.0
    ox = acc[_A_O]
    oy = acc[_A_O + 1]
    oz = acc[_A_O + 2]
    p0x = poly[0]
    p0y = poly[1]
    p0z = poly[2]
    ux = p0x - ox
    uy = p0y - oy
    uz = p0z - oz
    for i in range(1, n - 1):
        ax = poly[3 * i]
        ay = poly[3 * i + 1]
        az = poly[3 * i + 2]
        bx = poly[3 * i + 3]
        by = poly[3 * i + 4]
        bz = poly[3 * i + 5]
        vx = ax - ox
        vy = ay - oy
        vz = az - oz
        wx = bx - ox
        wy = by - oy
        wz = bz - oz
        v6 = weight * (ux * (vy * wz - vz * wy) + uy * (vz * wx - vx * wz) + uz * (vx * wy - vy * wx))
        acc[_A_V6] += v6
        acc[_A_C] += v6 * (ux + vx + wx)
        acc[_A_C + 1] += v6 * (uy + vy + wy)
        acc[_A_C + 2] += v6 * (uz + vz + wz)
        if own > 0.0:
            ex = ax - p0x
            ey = ay - p0y
            ez = az - p0z
            fx = bx - p0x
            fy = by - p0y
            fz = bz - p0z
            sx = 0.5 * weight * (ey * fz - ez * fy)
            sy = 0.5 * weight * (ez * fx - ex * fz)
            sz = 0.5 * weight * (ex * fy - ey * fx)
            acc[_A_S] += sx
            acc[_A_S + 1] += sy
            acc[_A_S + 2] += sz
            acc[_A_AREA] += math.sqrt(sx * sx + sy * sy + sz * sz)
            # centroid of the fan triangle, relative to x_i (the frame's origin)
            cx = (p0x + ax + bx) / 3.0
            cy = (p0y + ay + by) / 3.0
            cz = (p0z + az + bz) / 3.0
            acc[_A_G] += cy * sz - cz * sy
            acc[_A_G + 1] += cz * sx - cx * sz
            acc[_A_G + 2] += cx * sy - cy * sx


@jit(inline="never")
def _clip_surface(data, ref, verts, proj, lo, hi, planes, buf, dist, tol, acc, own):
    """Clip every surface triangle of a body that reaches into the slab ``[lo, hi]`` (along the
    projection axis; ``proj`` the vertices' projections) by the ``planes``
    (Sutherland-Hodgman) and add the pieces to the sums in ``acc``; ``own > 0``: the body is body
    i (vector area and moment too; a float, so that Numba compiles one copy).  ``buf``: two
    polygon buffers of ``cap = len(dist)`` vertices, flat.  Returns a status."""
    cap = dist.shape[0]
    n_planes = planes.shape[0] // _PW
    nv = proj.shape[0]
    nt = int(data[ref + 1])
    o = ref + 2 + 3 * nv
    for t in range(nt):
        if _outside_slab(data, o, t, proj, lo - tol, hi + tol):
            continue
        s = 0            # source polygon at buf[s:], destination at buf[dd:]
        dd = 3 * cap
        for r in range(3):
            vi = int(data[o + 3 * t + r])
            buf[3 * r] = verts[3 * vi]
            buf[3 * r + 1] = verts[3 * vi + 1]
            buf[3 * r + 2] = verts[3 * vi + 2]
        n = 3
        weight = 1.0
        for k in range(n_planes):
            pr = _PW * k
            nx = planes[pr]
            ny = planes[pr + 1]
            nz = planes[pr + 2]
            h = planes[pr + 3]
            n_out = 0
            n_on = 0
            for i in range(n):
                d = nx * buf[s + 3 * i] + ny * buf[s + 3 * i + 1] + nz * buf[s + 3 * i + 2] - h
                if d > tol:
                    n_out += 1
                elif d >= -tol:
                    d = 0.0
                    n_on += 1
                dist[i] = d
            if n_on == n:
                weight *= 0.5    # on a coincident face of the other body: half of it
                continue
            if n_out == 0:
                continue
            if n_out + n_on == n:
                n = 0
                break
            # points on the plane count as inside; a crossing is made only between a point
            # strictly inside and one outside, interpolated from the inside end (so both
            # triangles of an edge agree)
            m = 0
            for i in range(n):
                j = i + 1 if i + 1 < n else 0
                di = dist[i]
                dj = dist[j]
                if di <= 0.0:
                    if m >= cap:
                        return STATUS_CAPACITY
                    buf[dd + 3 * m] = buf[s + 3 * i]
                    buf[dd + 3 * m + 1] = buf[s + 3 * i + 1]
                    buf[dd + 3 * m + 2] = buf[s + 3 * i + 2]
                    m += 1
                if (di < 0.0 and dj > 0.0) or (di > 0.0 and dj < 0.0):
                    p = i if di < 0.0 else j
                    q = j if di < 0.0 else i
                    f = dist[p] / (dist[p] - dist[q])
                    if m >= cap:
                        return STATUS_CAPACITY
                    for c in range(3):
                        buf[dd + 3 * m + c] = buf[s + 3 * p + c] + f * (buf[s + 3 * q + c] - buf[s + 3 * p + c])
                    m += 1
            n = m
            if n < 3:
                n = 0
                break
            s, dd = dd, s
        if n < 3:
            continue
        _add_piece(buf[s:s + 3 * n], weight, acc, own)
    return STATUS_OK


@jit
def _finish(acc, pos, status):
    """``(volume, dV/dx, dV/dtheta, centroid, status)`` from the sums (frame origin at ``pos``);
    zeros and ``status`` (``STATUS_APART`` if 0) unless the volume is positive."""
    v6 = acc[_A_V6]
    if status != STATUS_OK or not v6 > 0.0:
        z = (0.0, 0.0, 0.0)
        return 0.0, z, z, z, status if status != STATUS_OK else STATUS_APART
    volume = v6 / 6.0
    f = 1.0 / (4.0 * v6)
    centroid = (pos[0] + acc[_A_O] + f * acc[_A_C], pos[1] + acc[_A_O + 1] + f * acc[_A_C + 1],
                pos[2] + acc[_A_O + 2] + f * acc[_A_C + 2])
    sx = acc[_A_S]
    sy = acc[_A_S + 1]
    sz = acc[_A_S + 2]
    if math.sqrt(sx * sx + sy * sy + sz * sz) <= 1e-12 * acc[_A_AREA]:
        # body i's clipped surface is closed up to rounding: it lies inside the other body
        sx = 0.0
        sy = 0.0
        sz = 0.0
    return volume, (sx, sy, sz), (acc[_A_G], acc[_A_G + 1], acc[_A_G + 2]), centroid, STATUS_OK


@jit
def line_of_action_point(pos_i, grad, grad_rot, centroid):
    """The energy-consistent contact point (notes 004) for ``F = -k grad`` on body ``i``.

    ``pos_i`` (m) the centre of body ``i``, ``grad = dV/dx_i`` (m^2), ``grad_rot = dV/dtheta_i``
    (m^3), ``centroid`` (m) of the intersection.  Returns ``x_i + grad x grad_rot / |grad|^2 +
    lambda grad / |grad|`` with ``lambda`` such that the point is the one of that line nearest
    ``centroid``; ``(x_c - x_i) x grad`` is then the part of ``grad_rot`` perpendicular to
    ``grad``.  ``centroid`` when ``grad = 0``.
    """
    gx, gy, gz = grad
    s2 = gx * gx + gy * gy + gz * gz
    if not s2 > 0.0:
        return centroid
    mx, my, mz = grad_rot
    px = (gy * mz - gz * my) / s2
    py = (gz * mx - gx * mz) / s2
    pz = (gx * my - gy * mx) / s2
    lam = ((centroid[0] - pos_i[0] - px) * gx + (centroid[1] - pos_i[1] - py) * gy
           + (centroid[2] - pos_i[2] - pz) * gz) / s2
    return (pos_i[0] + px + lam * gx, pos_i[1] + py + lam * gy, pos_i[2] + pz + lam * gz)


_ZERO3 = (0.0, 0.0, 0.0)


@jit(inline="never")
def polyhedron_intersection_gradients(data, ref_i, pos_i, quat_i, ref_j, pos_j, quat_j):
    """Volume common to two convex polyhedra and its derivatives with respect to body ``i``.

    ``data``: float64 shape array; ``ref_i``, ``ref_j``: offsets of the ``POLYHEDRON`` blocks;
    ``pos`` (m) centres of mass (3-tuples), ``quat`` unit quaternions ``(w, x, y, z)``.
    Returns ``(volume, grad_i, grad_rot_i, centroid, status)``: ``volume`` (m^3); ``grad_i =
    dV/dx_i`` (m^2, global; from ``i`` towards ``j``); ``grad_rot_i = dV/dtheta_i`` (m^3, global,
    small rotation of ``i`` about ``pos_i``); ``centroid`` (m, global) of the intersection;
    ``status`` as in the module docstring.  For body ``j``: ``dV/dx_j = -grad_i`` and
    ``dV/dtheta_j = -grad_rot_i - (pos_i - pos_j) x grad_i`` (invariance under rigid motions).
    """
    nva = int(data[ref_i])
    nta = int(data[ref_i + 1])
    nvb = int(data[ref_j])
    ntb = int(data[ref_j + 1])
    status = STATUS_OK
    if nva < 4 or nta < 4 or nvb < 4 or ntb < 4:
        status = STATUS_CAPACITY
        nva = nta = nvb = ntb = 0
    ra = _bounding_radius(data, ref_i, nva)
    rb = _bounding_radius(data, ref_j, nvb)
    dx = (pos_j[0] - pos_i[0], pos_j[1] - pos_i[1], pos_j[2] - pos_i[2])
    dc = math.sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2])
    if status == STATUS_OK and dc >= ra + rb:
        status = STATUS_APART
        nva = nta = nvb = ntb = 0
    # the slab of the two bodies' overlap along the line of centres bounds the intersection
    axis = (dx[0] / dc, dx[1] / dc, dx[2] / dc) if dc > 0.0 else (0.0, 0.0, 1.0)
    cap = 3 + max(nta, ntb)
    work = np.empty(4 * (nva + nvb) + _PW * (nta + ntb) + 7 * cap + _NACC)
    o = 0
    va = work[o:o + 3 * nva]
    o += 3 * nva
    vb = work[o:o + 3 * nvb]
    o += 3 * nvb
    proja = work[o:o + nva]
    o += nva
    projb = work[o:o + nvb]
    o += nvb
    pa = work[o:o + _PW * nta]
    o += _PW * nta
    pb = work[o:o + _PW * ntb]
    o += _PW * ntb
    buf = work[o:o + 6 * cap]
    o += 6 * cap
    dist = work[o:o + cap]
    o += cap
    acc = work[o:o + _NACC]
    acc[:] = 0.0
    lo = 0.0
    hi = 0.0
    tol = COPLANAR_TOL * (ra + rb)
    if status == STATUS_OK:
        # frame: global axes, origin at pos_i
        ok_i, lo_i, hi_i = _prepare(data, ref_i, quat_i, _ZERO3, axis, va, proja)
        ok_j, lo_j, hi_j = _prepare(data, ref_j, quat_j, dx, axis, vb, projb)
        lo = max(lo_i, lo_j)
        hi = min(hi_i, hi_j)
        if not (ok_i and ok_j):
            status = STATUS_CAPACITY
        elif hi - lo <= tol:
            status = STATUS_APART
    if status == STATUS_OK:
        mb = _cutting_planes(data, ref_j, vb, projb, lo, hi, va, tol, pb)
        ma = _cutting_planes(data, ref_i, va, proja, lo, hi, vb, tol, pa) if mb >= 0 else -1
        if ma < 0:
            status = STATUS_APART
        else:
            status = _clip_surface(data, ref_i, va, proja, lo, hi, pb[:_PW * mb], buf, dist, tol, acc, 1.0)
            if status == STATUS_OK:
                status = _clip_surface(data, ref_j, vb, projb, lo, hi, pa[:_PW * ma], buf, dist, tol, acc, 0.0)
    return _finish(acc, pos_i, status)


@jit(inline="never")
def polyhedron_intersection(data, ref_i, pos_i, quat_i, ref_j, pos_j, quat_j):
    """Volume-based ECC contact of two convex polyhedra (arguments as
    :func:`polyhedron_intersection_gradients`).

    Returns ``(volume, grad_i, point, status)``: ``volume`` (m^3) of the intersection,
    ``grad_i = dV/dx_i`` (m^2, global, from ``i`` towards ``j``; ``|grad_i|`` = the area ``S_n``),
    ``point`` (m, global) the energy-consistent contact point of :func:`line_of_action_point`: the
    force ``-k grad_i`` on ``i`` (``+k grad_i`` on ``j``) acting there has the moment
    ``-k dV/dtheta_i`` about ``pos_i`` up to the twist along ``grad_i``, which a point force
    cannot carry (:func:`polyhedron_intersection_gradients` gives it).
    """
    volume, grad, grad_rot, centroid, status = polyhedron_intersection_gradients(
        data, ref_i, pos_i, quat_i, ref_j, pos_j, quat_j)
    return volume, grad, line_of_action_point(pos_i, grad, grad_rot, centroid), status


@jit(inline="never")
def polyhedron_halfspace_gradients(data, ref, pos, quat, plane_point, plane_normal):
    """Volume of a convex polyhedron inside the solid half-space ``(x - plane_point) . n < 0``
    (``n = plane_normal``: nonzero, normalised here; the wall's outward normal, pointing to the
    side the bodies are on) and its derivatives.

    Returns ``(volume, grad, grad_rot, centroid, status)`` as
    :func:`polyhedron_intersection_gradients` with the polyhedron as body ``i``: ``grad =
    dV/dx = -A n`` (``A`` the area of the section of the body by the plane), ``grad_rot =
    dV/dtheta = -A (c - pos) x n`` (``c`` the centroid of that section), so the twist is zero.
    """
    nv = int(data[ref])
    nt = int(data[ref + 1])
    status = STATUS_OK
    if nv < 4 or nt < 4:
        status = STATUS_CAPACITY
        nv = nt = 0
    ln = math.sqrt(plane_normal[0] ** 2 + plane_normal[1] ** 2 + plane_normal[2] ** 2)
    nx = plane_normal[0] / ln
    ny = plane_normal[1] / ln
    nz = plane_normal[2] / ln
    # h: plane offset in the frame with origin at pos (n . x <= h inside)
    h = nx * (plane_point[0] - pos[0]) + ny * (plane_point[1] - pos[1]) + nz * (plane_point[2] - pos[2])
    ra = _bounding_radius(data, ref, nv)
    if status == STATUS_OK and -h >= ra:
        status = STATUS_APART
        nv = nt = 0
    cap = 4
    work = np.empty(4 * nv + _PW + 7 * cap + _NACC)
    o = 0
    va = work[o:o + 3 * nv]
    o += 3 * nv
    proj = work[o:o + nv]
    o += nv
    pw = work[o:o + _PW]
    o += _PW
    buf = work[o:o + 6 * cap]
    o += 6 * cap
    dist = work[o:o + cap]
    o += cap
    acc = work[o:o + _NACC]
    acc[:] = 0.0
    tol = COPLANAR_TOL * max(ra, abs(h))
    if status == STATUS_OK:
        ok, lo, hi = _prepare(data, ref, quat, _ZERO3, (nx, ny, nz), va, proj)
        if not ok:
            status = STATUS_CAPACITY
        elif lo >= h - tol:
            status = STATUS_APART  # no vertex strictly inside the wall
    if status == STATUS_OK:
        pw[0] = nx
        pw[1] = ny
        pw[2] = nz
        pw[3] = h
        # reference point on the plane: the section of the body by the plane adds no volume,
        # so the body's clipped surface alone gives it
        acc[_A_O] = h * nx
        acc[_A_O + 1] = h * ny
        acc[_A_O + 2] = h * nz
        acc[_A_OSET] = 1.0
        status = _clip_surface(data, ref, va, proj, -math.inf, h, pw, buf, dist, tol, acc, 1.0)
    return _finish(acc, pos, status)


@jit(inline="never")
def polyhedron_halfspace(data, ref, pos, quat, plane_point, plane_normal):
    """Volume-based ECC contact of a convex polyhedron and a wall (the half-space ``(x -
    plane_point) . n < 0``).  Returns ``(volume, grad, point, status)`` as
    :func:`polyhedron_intersection` with the polyhedron as body ``i``: ``grad = -A n`` (m^2, ``A``
    the section area), ``point`` on the wall's normal through the centroid of the section, nearest
    the centroid of the immersed volume; the force on the body is ``-k grad = k A n``.
    """
    volume, grad, grad_rot, centroid, status = polyhedron_halfspace_gradients(
        data, ref, pos, quat, plane_point, plane_normal)
    return volume, grad, line_of_action_point(pos, grad, grad_rot, centroid), status
