"""Narrow phase of every pair that involves a non-spherical body or a mesh triangle.

The step kernels handle two spheres and a sphere with a plane wall themselves (the fast path);
everything else comes here and leaves as the same contact-geometry record:

=====================  =================================================================
pair                   method
=====================  =================================================================
sphere / ellipsoid     common normal (:mod:`.ellipsoid`, Newton-Raphson with
with ellipsoid         Levenberg-Marquardt, warm-started from the pair's last normal)
any convex pair        GJK distance / EPA penetration on support functions
(polyhedra, rolls,     (:mod:`.gjk_epa`): the Minkowski overlap of the notes, whose
mixed pairs)           gradient is the normal, so an elastic law on it conserves energy
polyhedra, volume      intersection volume and its gradient (:mod:`.polyhedron_overlap`):
mode                   the contact-volume energy-conserving contact
ellipsoid - wall       closed form (support point along the wall's normal)
ellipse with ellipse   2-D scenes: the common normal in the plane (:func:`.ellipse_pair_2d`,
or disk                one unknown angle, warm-started from the pair's last normal); the disk
                       is the ellipse ``a = b = r``
ellipse - line wall    closed form (:func:`.ellipse_line`)
polyhedron - wall      deepest vertex; force through the depth-weighted centre of the
                       vertices below the plane (volume mode: the cut volume)
roll - wall            spec 003: the hull's slope matched to the plane (:mod:`.convex_roll`)
body - triangle        closest point (spheres); other shapes: the deepest points below the
                       triangle's plane when they lie over the triangle, GJK/EPA at convex
                       ridges; the triangles a body touches are sorted so that one surface
                       counts once
=====================  =================================================================

The kernels of a scene use a copy of this module in which the narrow phases its pairs cannot need
are replaced by stand-ins (lines marked ``@@FEATURE_...@@``, see
:func:`contactlab.engine.codegen.dispatch_module`): a scene of spheres and a mesh compiles none of
GJK/EPA, the ellipsoid solver, the roll or the volume clipping.

``bodies`` is the tuple ``(shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode)``
(see :mod:`.shapes`): ``geo_col`` is the first of three history columns that keep a pair's last
normal (the warm start; -1: none), ``mode`` one of MINKOWSKI, COMMON_PLANE, VOLUME.

The bodies of a 2-D scene (disks and ellipses, :mod:`.shapes`) lie in the plane z = 0 and turn
about z: their pairs are solved in the plane (positions ``(x, y)``, orientation the angle
:func:`.rotation.z_angle`) and lifted back with z = 0, so the record is exactly planar (normal,
points and branch vectors with z = 0); the radii of curvature are the plane curve's.
"""
from __future__ import annotations

import math

import numpy as np

from contactlab._jit import jit
from contactlab.geometry.convex_roll import roll_plane  # @@FEATURE_ROLL@@
from contactlab.geometry.ellipsoid import ellipsoid_pair, ellipsoid_plane  # @@FEATURE_ELLIPSOID@@
from contactlab.geometry.ellipsoid import ellipse_line, ellipse_pair_2d  # @@FEATURE_ELLIPSE@@
from contactlab.geometry.gjk_epa import convex_pair  # @@FEATURE_CONVEX@@
from contactlab.geometry.lens import sphere_halfspace_cap
from contactlab.geometry.polyhedron_overlap import line_of_action_point, polyhedron_halfspace, polyhedron_intersection_gradients  # @@FEATURE_VOLUME@@
from contactlab.geometry.record_build import rigid_record
from contactlab.geometry.rotation import to_global, z_angle
from contactlab.geometry.shapes import ELLIPSE, ELLIPSOID, POLYHEDRON, ROLL, SPHERE, TRIANGLE
from contactlab.geometry.sphere_triangle import FACE, closest_point_on_triangle
from contactlab.geometry.support import support
from contactlab.vec import add, dot, scale, sub

__all__ = ["body_pair", "body_wall", "body_triangle", "select_triangles", "MINKOWSKI", "COMMON_PLANE", "VOLUME",
           "N_SCRATCH"]

#: contact of convex bodies from the Minkowski overlap (EPA depth and normal, witness points): ECC
MINKOWSKI = 0
#: the same normal and overlap, the force applied at the centroid of the vertices that cross the
#: common plane (a common-plane style contact point, not energy-consistent: for comparison)
COMMON_PLANE = 1
#: contact-volume based ECC: the record carries the intersection volume and its gradient
VOLUME = 2

#: per-pair scratch columns of the triangle selection: point on the triangle (3), unit vector from
#: it towards the body (3), gap (m), keep flag (1 kept, 0 not)
N_SCRATCH = 8


@jit(inline="never")
def _vec(a, r):
    return (a[r, 0], a[r, 1], a[r, 2])


@jit(inline="never")
def _quat(q, r):
    return (q[r, 0], q[r, 1], q[r, 2], q[r, 3])


@jit(inline="never")
def _warm(hist, k, geo_col):
    if geo_col < 0:
        return (0.0, 0.0, 0.0)
    return (hist[k, geo_col], hist[k, geo_col + 1], hist[k, geo_col + 2])


@jit(inline="never")
def _keep_normal(hist, k, geo_col, n):
    if geo_col >= 0:
        hist[k, geo_col] = n[0]
        hist[k, geo_col + 1] = n[1]
        hist[k, geo_col + 2] = n[2]


@jit(inline="never")
def _axes(kind, data, ref):
    if kind == SPHERE:
        r = data[ref]
        return (r, r, r)
    return (data[ref], data[ref + 1], data[ref + 2])


@jit(inline="never")
def _axes2(kind, data, ref):
    """Semi-axes ``(a, b)`` of a body of a 2-D scene: an ellipse's, or ``(r, r)`` for a disk."""
    if kind == SPHERE:
        r = data[ref]
        return (r, r)
    return (data[ref], data[ref + 1])


@jit(inline="never")
def _common_plane_point(data, ref_i, xi, qi, ref_j, xj, qj, c, n):
    """Centroid, projected on the common plane (through ``c``, normal ``n``), of the vertices of
    polyhedron ``i`` beyond it and of those of ``j`` before it; ``c`` when there are none."""
    sx = 0.0
    sy = 0.0
    sz = 0.0
    count = 0
    for side in range(2):
        ref = ref_i if side == 0 else ref_j
        x = xi if side == 0 else xj
        q = qi if side == 0 else qj
        sign = 1.0 if side == 0 else -1.0
        nv = int(data[ref])
        for v in range(nv):
            o = ref + 2 + 3 * v
            p = add(x, to_global(q, (data[o], data[o + 1], data[o + 2])))
            h = dot(sub(p, c), n)
            if sign * h > 0.0:
                p = sub(p, scale(h, n))
                sx += p[0]
                sy += p[1]
                sz += p[2]
                count += 1
    if count == 0:
        return c
    return (sx / count, sy / count, sz / count)


@jit(inline="never")
def body_pair(i, j, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, hist, k, dt):
    """Record of bodies ``i`` and ``j`` (at least one of them not a sphere); ``(geometry, ok)``."""
    shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode = bodies
    ki = shape_kind[i]
    kj = shape_kind[j]
    ri = shape_ref[i]
    rj = shape_ref[j]
    xi = _vec(pos, i)
    xj = _vec(pos, j)
    qi = _quat(quat, i)
    qj = _quat(quat, j)
    warm = _warm(hist, k, geo_col)
    curv_i = contact_radius[i]
    curv_j = contact_radius[j]
    area = 0.0
    volume = 0.0
    twist = 0.0
    ok = True
    if ki == ELLIPSE or kj == ELLIPSE:  # a 2-D scene: solved in the plane z = 0, lifted back with z = 0
        sep, n2, p2i, p2j, curv_i, curv_j, _, status = ellipse_pair_2d(
            (xi[0], xi[1]), z_angle(qi), _axes2(ki, shape_data, ri), (xj[0], xj[1]), z_angle(qj),
            _axes2(kj, shape_data, rj), (warm[0], warm[1]))
        n = (n2[0], n2[1], 0.0)
        p_i = (p2i[0], p2i[1], xi[2])
        p_j = (p2j[0], p2j[1], xj[2])
    elif (ki == SPHERE or ki == ELLIPSOID) and (kj == SPHERE or kj == ELLIPSOID):
        sep, n, p_i, p_j, curv_i, curv_j, _, status = ellipsoid_pair(
            xi, qi, _axes(ki, shape_data, ri), xj, qj, _axes(kj, shape_data, rj), warm)
    elif mode == VOLUME and ki == POLYHEDRON and kj == POLYHEDRON:
        volume, grad, grad_rot, centroid, status = polyhedron_intersection_gradients(shape_data, ri, xi, qi, rj, xj,
                                                                                     qj)
        g = math.sqrt(dot(grad, grad))
        if volume > 0.0 and g > 0.0:
            area = g
            n = scale(1.0 / g, grad)
            point = line_of_action_point(xi, grad, grad_rot, centroid)
            twist = dot(grad_rot, n)
            depth = volume / g  # the mean penetration (the depth for two flat faces)
            sep = -depth
            p_i = add(point, scale(0.5 * depth, n))
            p_j = sub(point, scale(0.5 * depth, n))
        else:  # no common volume: apart (the law sees no overlap)
            n = sub(xj, xi)
            n = scale(1.0 / math.sqrt(dot(n, n)), n)
            sep = curv_i + curv_j
            p_i = xi
            p_j = xj
    else:
        sep, n, p_i, p_j, status = convex_pair(ki, ri, xi, qi, kj, rj, xj, qj, shape_data, warm)
        if mode == COMMON_PLANE and sep < 0.0 and ki == POLYHEDRON and kj == POLYHEDRON:
            c = scale(0.5, add(p_i, p_j))
            c = _common_plane_point(shape_data, ri, xi, qi, rj, xj, qj, c, n)
            p_i = add(c, scale(-0.5 * sep, n))
            p_j = sub(c, scale(-0.5 * sep, n))
    if not (math.isfinite(sep) and math.isfinite(n[0] + n[1] + n[2])):
        ok = False
    _keep_normal(hist, k, geo_col, n)
    geom = rigid_record(n, sep, p_i, p_j, xi, xj, _vec(vel, i), _vec(vel, j), _vec(angvel, i), _vec(angvel, j),
                        _vec(mid_vel, i), _vec(mid_vel, j), _vec(mid_angvel, i), _vec(mid_angvel, j),
                        inv_mass[i], inv_mass[j], curv_i, curv_j, dt, area, volume, twist)
    return geom, ok


@jit(inline="never")
def _polyhedron_plane(data, ref, x, q, wp, wn):
    """A polyhedron and a plane: ``(separation, point)``, the separation that of the deepest
    vertex, the point the centre of the vertices below the plane weighted by their depths (the
    centre of pressure of a linear foundation under them; the deepest vertex itself when only one
    penetrates, or when none does).  A face resting on the plane so pushes at its centre and a box
    settles on it instead of rocking from corner to corner."""
    nv = int(data[ref])
    best = math.inf
    deepest = x
    sx = 0.0
    sy = 0.0
    sz = 0.0
    weight = 0.0
    for v in range(nv):
        o = ref + 2 + 3 * v
        p = add(x, to_global(q, (data[o], data[o + 1], data[o + 2])))
        h = dot(sub(p, wp), wn)
        if h < best:
            best = h
            deepest = p
        if h < 0.0:
            sx -= h * p[0]
            sy -= h * p[1]
            sz -= h * p[2]
            weight -= h
    if weight > 0.0:
        return best, (sx / weight, sy / weight, sz / weight)
    return best, deepest


@jit(inline="never")
def body_wall(i, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, wp, wn, wv, hist, k, dt):
    """Record of non-spherical body ``i`` and a plane wall (point ``wp``, unit normal ``wn``
    towards the bodies, translation velocity ``wv``); ``(geometry, ok)``."""
    shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode = bodies
    ki = shape_kind[i]
    ri = shape_ref[i]
    xi = _vec(pos, i)
    qi = _quat(quat, i)
    n = scale(-1.0, wn)
    curv = contact_radius[i]
    area = 0.0
    volume = 0.0
    if ki == ELLIPSE:  # a line wall of a 2-D scene
        sep, n2, p2i, p2w, curv = ellipse_line((xi[0], xi[1]), z_angle(qi), _axes2(ki, shape_data, ri), (wp[0], wp[1]),
                                               (wn[0], wn[1]))
        n = (n2[0], n2[1], 0.0)
        p_i = (p2i[0], p2i[1], xi[2])
        p_w = (p2w[0], p2w[1], xi[2])
    elif ki == ELLIPSOID:
        sep, n, p_i, p_w, curv = ellipsoid_plane(xi, qi, _axes(ki, shape_data, ri), wp, wn)
    elif ki == ROLL:
        sep, n, point, s_c, curv, status = roll_plane(shape_data, ri, xi, qi, wp, wn)
        p_i = point  # spec 003: the force acts at the roll's contact point C
        p_w = point
    elif ki == POLYHEDRON and mode == VOLUME:
        volume, grad, point, status = polyhedron_halfspace(shape_data, ri, xi, qi, wp, wn)
        g = math.sqrt(dot(grad, grad))
        if volume > 0.0 and g > 0.0:
            area = g
            depth = volume / g
            sep = -depth
            p_i = add(point, scale(0.5 * depth, n))
            p_w = sub(point, scale(0.5 * depth, n))
        else:
            sep, c = _polyhedron_plane(shape_data, ri, xi, qi, wp, wn)
            sep = max(sep, 0.0)
            p_w = sub(c, scale(dot(sub(c, wp), wn), wn))
            p_i = add(p_w, scale(sep, wn))
    elif ki == POLYHEDRON:
        sep, c = _polyhedron_plane(shape_data, ri, xi, qi, wp, wn)
        p_w = sub(c, scale(dot(sub(c, wp), wn), wn))  # the centre of pressure's foot on the plane
        p_i = add(p_w, scale(sep, wn))
    else:  # a sphere (the kernels' fast path normally takes it)
        r = shape_data[ri]
        sep = dot(sub(xi, wp), wn) - r
        p_i = add(xi, scale(r, n))
        p_w = sub(p_i, scale(sep, n))
        volume, area = sphere_halfspace_cap(r, sep + r)
    ok = math.isfinite(sep)
    c = scale(0.5, add(p_i, p_w))
    zero = (0.0, 0.0, 0.0)
    # the wall has no centre: its material point at the contact moves with the wall (branch 0)
    geom = rigid_record(n, sep, p_i, p_w, xi, c, _vec(vel, i), wv, _vec(angvel, i), zero, _vec(mid_vel, i), wv,
                        _vec(mid_angvel, i), zero, inv_mass[i], 0.0, curv, math.inf, dt, area, volume, 0.0)
    return geom, ok


@jit(inline="never")
def select_triangles(i, k0, k1, pair_j, n_sw, pos, quat, radius, bodies, tri_ref, tri_mesh, scratch, hist, status,
                     n_law_hist, reach):
    """Decide which of the triangle pairs ``k0 <= k < k1`` of body ``i`` act (``scratch[k, 7]``).

    A body touching a mesh meets its surface once per surface, however many triangles that
    surface is cut into.  For each candidate triangle the point of it nearest to the body (spheres:
    the closest point; other shapes: the EPA/GJK witness) and the gap are found; then, in order of
    increasing gap, a triangle is kept unless its point lies on or behind the tangent plane of a
    triangle already kept (``(c_k - c_m) . u_m <= tol``, ``u_m`` the unit vector from the kept
    point towards the body).  So the triangles of a flat or convex patch give one contact (the
    nearest point of the surface, which moves continuously across edges and vertices: no force
    jump), while the faces of a concave corner, which the body touches at distinct points, give one
    contact each.  A triangle that starts acting while a neighbour of the same mesh stops inherits
    the neighbour's history (a tangential spring slides on across an edge).  ``reach`` (m): gaps
    up to it are considered (the law's interaction range).  Returns nothing; never raises.
    """
    shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode = bodies
    k0 = np.int64(k0)  # signed indices (the pair indices are unsigned: -1 would unify to float)
    k1 = np.int64(k1)
    n_sw = np.int64(n_sw)
    ki = shape_kind[i]
    xi = _vec(pos, i)
    qi = _quat(quat, i)
    size = contact_radius[i]
    tol = 1e-6 * size
    first = k1
    for k in range(k0, k1):
        j = pair_j[k]
        if j < n_sw:
            continue
        if first == k1:
            first = k
        t = j - n_sw
        o = tri_ref[t]
        a = (shape_data[o], shape_data[o + 1], shape_data[o + 2])
        b = (shape_data[o + 3], shape_data[o + 4], shape_data[o + 5])
        c = (shape_data[o + 6], shape_data[o + 7], shape_data[o + 8])
        if ki == SPHERE:
            p, _ = closest_point_on_triangle(xi, a, b, c)
            d = sub(xi, p)
            dist = math.sqrt(dot(d, d))
            if dist > 0.0:
                u = scale(1.0 / dist, d)
            else:  # the centre on the triangle: the side the face normal points to
                e = sub(b, a)
                f = sub(c, a)
                u = (e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0])
                u = scale(1.0 / math.sqrt(dot(u, u)), u)
            gap = dist - shape_data[shape_ref[i]]
        else:
            # the triangle's plane, facing the body: the body's deepest point(s) below it, counted
            # only when they lie over the triangle (a flat or concave patch then acts through the
            # one triangle under the contact; convex ridges are handled below)
            e = sub(b, a)
            f = sub(c, a)
            u = (e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0])
            u = scale(1.0 / math.sqrt(dot(u, u)), u)
            if dot(sub(xi, a), u) < 0.0:
                u = scale(-1.0, u)
            if ki == POLYHEDRON:
                gap, q = _polyhedron_plane(shape_data, shape_ref[i], xi, qi, a, u)
            else:
                q = support(ki, shape_data, shape_ref[i], xi, qi, scale(-1.0, u))
                gap = dot(sub(q, a), u)
            p = sub(q, scale(dot(sub(q, a), u), u))
            _, feature = closest_point_on_triangle(p, a, b, c)
            if feature != FACE:
                gap = math.inf  # not over this triangle
        scratch[k, 0] = p[0]
        scratch[k, 1] = p[1]
        scratch[k, 2] = p[2]
        scratch[k, 3] = u[0]
        scratch[k, 4] = u[1]
        scratch[k, 5] = u[2]
        scratch[k, 6] = gap
        scratch[k, 7] = 0.0 if gap < reach else -1.0  # 0: candidate, -1: out of reach
    if first == k1:
        return
    if ki != SPHERE:
        # no triangle has the body over its face within reach: it meets a convex ridge or corner of
        # the mesh; there the triangles' own distances (GJK/EPA) decide
        over = False
        for k in range(first, k1):
            if scratch[k, 6] < reach:
                over = True
        if not over:
            for k in range(first, k1):
                o = tri_ref[pair_j[k] - n_sw]
                # the kind as uint8, the dtype of shape_kind: one signature of convex_pair for every
                # caller (each further signature compiles GJK/EPA once more)
                sep, n, p_i, p, st = convex_pair(ki, shape_ref[i], xi, qi, np.uint8(TRIANGLE), o, (0.0, 0.0, 0.0),
                                                 (1.0, 0.0, 0.0, 0.0), shape_data, _warm(hist, k, geo_col))
                _keep_normal(hist, k, geo_col, n)
                for d in range(3):
                    scratch[k, d] = p[d]
                    scratch[k, 3 + d] = -n[d]
                scratch[k, 6] = sep
                scratch[k, 7] = 0.0 if sep < reach else -1.0
    # keep in order of increasing gap
    while True:
        best = -1
        best_gap = math.inf
        for k in range(first, k1):
            if scratch[k, 7] == 0.0 and scratch[k, 6] < best_gap:
                best = k
                best_gap = scratch[k, 6]
        if best < 0:
            break
        shadowed = False
        for m in range(first, k1):
            if scratch[m, 7] == 1.0:
                h = ((scratch[best, 0] - scratch[m, 0]) * scratch[m, 3] + (scratch[best, 1] - scratch[m, 1])
                     * scratch[m, 4] + (scratch[best, 2] - scratch[m, 2]) * scratch[m, 5])
                if h <= tol:
                    shadowed = True
                    break
        scratch[best, 7] = -1.0 if shadowed else 1.0
    # history follows the contact from one triangle to its neighbour
    for k in range(first, k1):
        if scratch[k, 7] != 1.0 or status[k] == 1:
            continue
        src = np.int64(-1)
        best_d = size * size
        for m in range(first, k1):
            if m != k and status[m] == 1 and scratch[m, 7] != 1.0 and tri_mesh[pair_j[m] - n_sw] == tri_mesh[
                    pair_j[k] - n_sw]:
                dx = scratch[m, 0] - scratch[k, 0]
                dy = scratch[m, 1] - scratch[k, 1]
                dz = scratch[m, 2] - scratch[k, 2]
                d2 = dx * dx + dy * dy + dz * dz
                if d2 < best_d:
                    best_d = d2
                    src = m
        if src >= 0:
            for col in range(n_law_hist):
                hist[k, col] = hist[src, col]
            status[src] = 0  # handed over: the old pair is cleared without a last evaluation


@jit(inline="never")
def body_triangle(i, k, t, pos, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, scratch, mesh_point, mesh_vel,
                  mesh_angvel, dt):
    """Record of body ``i`` and mesh triangle ``t`` from the selection's scratch row ``k``
    (:func:`select_triangles`); the mesh moves rigidly with ``mesh_vel`` and ``mesh_angvel`` about
    ``mesh_point``.  ``(geometry, ok)``."""
    shape_kind, shape_ref, shape_data, contact_radius, geo_col, mode = bodies
    xi = _vec(pos, i)
    c = (scratch[k, 0], scratch[k, 1], scratch[k, 2])
    u = (scratch[k, 3], scratch[k, 4], scratch[k, 5])
    gap = scratch[k, 6]
    n = scale(-1.0, u)
    p_i = add(c, scale(gap, u))
    volume = 0.0
    area = 0.0
    if shape_kind[i] == SPHERE:
        volume, area = sphere_halfspace_cap(shape_data[shape_ref[i]], gap + shape_data[shape_ref[i]])
    geom = rigid_record(n, gap, p_i, c, xi, mesh_point, _vec(vel, i), mesh_vel, _vec(angvel, i), mesh_angvel,
                        _vec(mid_vel, i), mesh_vel, _vec(mid_angvel, i), mesh_angvel, inv_mass[i], 0.0,
                        contact_radius[i], math.inf, dt, area, volume, 0.0)
    return geom, math.isfinite(gap)
