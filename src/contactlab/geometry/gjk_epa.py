"""Distance and penetration of two convex bodies: GJK and EPA on the Minkowski difference.

Notes 004 (mixed pairs of shapes): with ``D = B (-) A = {b - a : a in A, b in B}`` the bodies
overlap iff the origin lies in ``D``, and the support mapping of ``D`` is the difference of the
bodies' mappings, ``s_D(u) = s_B(u) - s_A(-u)`` (:mod:`contactlab.geometry.support`).  The signed
distance of the pair is

    separation = -min_{|u| = 1} h_D(u),      h_D(u) = u . s_D(u)

(the largest gap between the origin and a supporting plane of ``D``: the distance when apart,
minus the penetration depth ``delta_M`` of the notes' Minkowski overlap when overlapping); the
minimising ``u`` is the outward normal of ``D`` and ``normal = -u`` points from ``A`` to ``B``.

Three strategies, by the kinds of the pair:

* Polyhedra, triangles and spheres (no ellipsoid or roll): GJK (Gilbert-Johnson-Keerthi, in van
  den Bergen's form) finds the point ``v`` of ``D`` closest to the origin, ``|v|`` the distance and
  ``v / |v|`` the normal; the simplex sub-problem projects the origin on a triangle's plane (or
  solves a tetrahedron's barycentric coordinates) and falls back to the edges/faces facing the
  origin.  When the origin is in ``D`` (or within the tolerance of it) EPA (expanding polytope)
  grows a polytope inside ``D`` from GJK's last simplex towards the boundary of ``D`` closest to
  the origin.  Both end exactly (up to round-off) after finitely many steps.
* Smooth pairs (an ellipsoid or roll with a sphere, ellipsoid or roll): Newton's method on the
  direction ``u`` (gradient = the tangential part of ``s_D(u)``, Jacobian from finite differences
  of the support mapping, steps accepted only if ``h_D`` decreases), started from ``warm`` or the
  centre line.  Apart, every local minimum of ``h_D < 0`` is the global one (``-h_D`` is concave
  on the unit ball); overlapping, ``h_D`` can have several local minima, so without ``warm`` an
  overlap is re-solved from a coarse GJK/EPA (tolerance ``SMOOTH_START_REL``), whose polytope
  brackets the global minimum.  If Newton fails (a kink of the support mapping, e.g. at a
  roll's rim) GJK/EPA run to the fine tolerance.
* A smooth shape with a polyhedron or triangle: GJK to the fine tolerance; an overlap is solved
  by distance queries on B translated by ``tau n`` a little beyond the current depth estimate
  (:func:`_shift_polish`), started from ``warm`` (``h_D(-warm)`` bounds the depth) or from a
  coarse EPA; if that does not converge, EPA to the fine tolerance.

Tolerance: GJK and EPA stop when the gap between the upper and lower bound of the result,
measured with one more support point, is below ``EPS_REL`` times the size of the pair (the sum
of the shapes' radii, :func:`~contactlab.geometry.support.shape_radius`); Newton stops at a step
below 1e-9 rad.  The separation is accurate to that tolerance.  The normal is exact (round-off)
for polyhedra, triangles and spheres, accurate to about 1e-9 for smooth pairs, and to about
``sqrt(EPS_REL)`` for a smooth shape against a flat one, where it comes from GJK on a curved
``D`` (the distance is second order in the direction there, so a gap ``g`` leaves a direction
error of about ``sqrt(2 g / R)``); the witness points are then off the normal line by about
``sqrt(EPS_REL)`` times the size.

Spheres enter as a point core (their centre) plus a margin (their radius): GJK/EPA run on the
cores and the margins are subtracted at the end, which makes every sphere-anything result exact
(sphere-sphere: ``separation = |x_j - x_i| - (r_i + r_j)`` to the last bit).

Implementation notes (measured, numba 0.68):

* Vector arithmetic is written out in scalars.  Calling small compiled helpers costs a real call
  each (they are not inlined across compiled functions), and IR-inlining them
  (``inline="always"``) re-runs type inference at every call site: the two took this module to
  about a minute of compilation and microseconds per query.
* The shape array is passed on through a view without a memory-info pointer (``_borrow``):
  otherwise every call of a helper increments and decrements its reference count atomically.
* Loop counters that are passed to compiled helpers start as ``np.int64``: a literal would be
  typed ``Literal[int]`` at first and compile an extra specialisation of the helper.
* EPA works in fixed-capacity arrays allocated once per EPA call (only overlapping cores pay for
  it): ``EPA_MAX_VERTICES`` vertices for the coarse stage of smooth shapes,
  ``EPA_FALLBACK_VERTICES`` when EPA must reach the fine tolerance itself; when they are full the
  best estimate so far is returned with status 1.
"""
from __future__ import annotations

import math

import numpy as np
from numba.core import types as _nbtypes
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array, populate_array

from .._jit import jit
from .shapes import ELLIPSOID, POLYHEDRON, ROLL, SPHERE, TRIANGLE
from .support import shape_radius, support

__all__ = ["convex_pair", "GJK_OK", "GJK_MAX_ITER", "GJK_DEGENERATE", "EPS_REL", "SMOOTH_START_REL",
           "GJK_MAX_ITERATIONS", "NEWTON_MAX_ITERATIONS", "SHIFT_MAX_ITERATIONS", "EPA_MAX_VERTICES",
           "EPA_FALLBACK_VERTICES"]

#: status codes of :func:`convex_pair`
GJK_OK = 0
GJK_MAX_ITER = 1
GJK_DEGENERATE = 2

#: tolerance on separation and depth, relative to the size of the pair
EPS_REL = 1e-10
#: tolerance of the GJK/EPA stage before Newton's method for smooth pairs
SMOOTH_START_REL = 1e-5
#: iteration caps
GJK_MAX_ITERATIONS = 128
NEWTON_MAX_ITERATIONS = 16
SHIFT_MAX_ITERATIONS = 8
#: capacity of the EPA polytope (vertices; faces 2 V - 4), and of the last-resort EPA that runs
#: to the fine tolerance when a refinement for smooth shapes failed (and for polyhedra directly)
EPA_MAX_VERTICES = 64
EPA_FALLBACK_VERTICES = 256
#: a triangle or tetrahedron thinner than this (relative to its longest edge) counts as flat
_FLAT_REL = 1e-12
#: a face is visible from a new EPA vertex when the vertex is this far (relative) above its plane
_VISIBLE_REL = 1e-13
#: finite-difference step (radians) of Newton's Jacobian, and the step that counts as converged
_FD_STEP = 1e-6
_NEWTON_STEP_TOL = 1e-9

_ZERO3 = (0.0, 0.0, 0.0)


@intrinsic
def _borrow_intrinsic(typingctx, arr):
    if not isinstance(arr, _nbtypes.Array):
        return None

    def codegen(context, builder, sig, args):
        src = make_array(arr)(context, builder, value=args[0])
        dst = make_array(arr)(context, builder)
        populate_array(dst, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize,
                       meminfo=None)
        return dst._getvalue()

    return arr(arr), codegen


def _borrow(arr):
    """A view of ``arr`` without a memory-info pointer (compiled code; plain Python: ``arr``):
    passing it to compiled helpers does not touch the reference count (an atomic increment and
    decrement per call).  Valid while ``arr`` lives, i.e. during the call that received it."""
    return arr


@overload(_borrow)
def _borrow_overload(arr):
    if isinstance(arr, _nbtypes.Array):
        return lambda arr: _borrow_intrinsic(arr)
    return None


# ----------------------------------------------------------------------------------------------
# support mapping of the Minkowski difference (cores)
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _core_support(kind, data, ref, pos, quat, d):
    """Support point of a body's core: a sphere's centre, any other shape itself."""
    if kind == SPHERE:
        return (pos[0], pos[1], pos[2])
    return support(kind, data, ref, pos, quat, d)


@jit(inline="never")
def _radius(kind, data, ref):
    """:func:`~contactlab.geometry.support.shape_radius`, compiled once."""
    return shape_radius(kind, data, ref)


@jit(inline="never")
def _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d):
    """Support point of ``D = B (-) A`` (cores) for the direction ``d``: ``(w, a, b)`` with
    ``w = b - a``, ``a = s_A(-d)``, ``b = s_B(d)``."""
    a = _core_support(kind_i, data, ref_i, pos_i, quat_i, (-d[0], -d[1], -d[2]))
    b = _core_support(kind_j, data, ref_j, pos_j, quat_j, d)
    return (b[0] - a[0], b[1] - a[1], b[2] - a[2]), a, b


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
# EPA
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


# ----------------------------------------------------------------------------------------------
# GJK + EPA, Newton refinement, the entry point
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


@jit(inline="never")
def _newton(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, u, tol):
    """Newton's method for the unit ``u`` that minimises ``h_D(u) = u . s_D(u)``, from ``u``.

    On the sphere the gradient of ``h_D`` is the tangential part of ``s_D(u)``; its Jacobian (the
    curvature radii of ``D`` minus ``h``) comes from finite differences of ``s_D`` (two more support
    points per step).  A step is accepted only if ``h_D`` decreases (halved up to 4 times).
    Returns ``(h, u, pa, pb, converged)`` with ``pa``/``pb`` the supports of A along ``-u`` and of B
    along ``u``; converged when the last step was below ``_NEWTON_STEP_TOL`` or the decrease below
    ``1e-3 tol``."""
    w, pa, pb = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, u)
    h = u[0] * w[0] + u[1] * w[1] + u[2] * w[2]
    for _ in range(NEWTON_MAX_ITERATIONS):
        # orthonormal tangent basis e1, e2 at u
        if abs(u[0]) <= abs(u[1]) and abs(u[0]) <= abs(u[2]):
            t = (0.0, u[2], -u[1])
        elif abs(u[1]) <= abs(u[2]):
            t = (-u[2], 0.0, u[0])
        else:
            t = (u[1], -u[0], 0.0)
        tl = math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
        e1 = (t[0] / tl, t[1] / tl, t[2] / tl)
        e2 = (u[1] * e1[2] - u[2] * e1[1], u[2] * e1[0] - u[0] * e1[2], u[0] * e1[1] - u[1] * e1[0])
        # gradient G = tangential components of s(u); G_k(x) = e_k . s(y) - h(y) x_k / |y|^2 at
        # y = u + x1 e1 + x2 e2 (the gradient of h(y)/|y|, times |y|)
        g1 = e1[0] * w[0] + e1[1] * w[1] + e1[2] * w[2]
        g2 = e2[0] * w[0] + e2[1] * w[1] + e2[2] * w[2]
        eps = _FD_STEP
        y1 = (u[0] + eps * e1[0], u[1] + eps * e1[1], u[2] + eps * e1[2])
        y2 = (u[0] + eps * e2[0], u[1] + eps * e2[1], u[2] + eps * e2[2])
        s1, _a, _b = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, y1)
        s2, _a, _b = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, y2)
        yy = 1.0 + eps * eps
        h1 = y1[0] * s1[0] + y1[1] * s1[1] + y1[2] * s1[2]
        h2 = y2[0] * s2[0] + y2[1] * s2[1] + y2[2] * s2[2]
        j11 = (e1[0] * s1[0] + e1[1] * s1[1] + e1[2] * s1[2] - h1 * eps / yy - g1) / eps
        j21 = (e2[0] * s1[0] + e2[1] * s1[1] + e2[2] * s1[2] - g2) / eps
        j12 = (e1[0] * s2[0] + e1[1] * s2[1] + e1[2] * s2[2] - g1) / eps
        j22 = (e2[0] * s2[0] + e2[1] * s2[1] + e2[2] * s2[2] - h2 * eps / yy - g2) / eps
        j12 = 0.5 * (j12 + j21)
        det = j11 * j22 - j12 * j12
        if not (j11 > 0.0 and j22 > 0.0 and det > 0.0):
            return h, u, pa, pb, False   # not at a smooth local minimum
        x1 = -(j22 * g1 - j12 * g2) / det
        x2 = -(j11 * g2 - j12 * g1) / det
        step = math.sqrt(x1 * x1 + x2 * x2)
        accepted = False
        for _half in range(5):
            y = (u[0] + x1 * e1[0] + x2 * e2[0], u[1] + x1 * e1[1] + x2 * e2[1], u[2] + x1 * e1[2] + x2 * e2[2])
            yl = math.sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2])
            un = (y[0] / yl, y[1] / yl, y[2] / yl)
            wn, pan, pbn = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, un)
            hn = un[0] * wn[0] + un[1] * wn[1] + un[2] * wn[2]
            if hn <= h:
                accepted = True
                break
            x1 *= 0.5
            x2 *= 0.5
            step *= 0.5
        if not accepted:
            # no decrease along the Newton direction: converged if the step was already tiny
            return h, u, pa, pb, step <= 8.0 * _NEWTON_STEP_TOL
        dec = h - hn
        u = un
        w = wn
        pa = pan
        pb = pbn
        h = hn
        if step <= _NEWTON_STEP_TOL or dec <= 1e-3 * tol:
            return h, u, pa, pb, True
    return h, u, pa, pb, False


@jit(inline="never")
def _shift_polish(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, depth, nrm, slack, tol,
                  size):
    """Refine an estimate of the penetration (``depth`` with ``h_D(-nrm) <= depth + slack``, pair
    normal ``nrm``; ``slack = 0`` when ``depth = h_D(-nrm)`` exactly) by distance queries: B is
    translated by ``t = tau nrm``, ``tau`` a little more than the depth, so that the bodies are
    apart; GJK (to ``tol``) then finds the exact boundary point ``b`` of ``D``
    whose outward normal is ``-nrm'`` (``nrm'`` GJK's normal), and ``h_D(-nrm') = tau nrm' . nrm -
    distance`` is an upper bound of the depth.  The new normal is closer to the optimum by about
    ``tau / R`` (``R`` the radius of curvature of ``D`` there); repeated until the depth changes by
    less than ``tol``.  Returns ``(depth, nrm, pa, pb, converged)`` (``pa``, ``pb`` the witness
    points in the unshifted position)."""
    pa = _ZERO3
    pb = _ZERO3
    exact = slack == 0.0
    for _ in range(SHIFT_MAX_ITERATIONS):
        # h_D(-nrm) - tau <= -(0.25 |depth| + 1e-6 size): the shifted bodies are apart
        tau = depth + slack + 0.25 * abs(depth) + 1e-6 * size
        t = (tau * nrm[0], tau * nrm[1], tau * nrm[2])
        pos_s = (pos_j[0] + t[0], pos_j[1] + t[1], pos_j[2] + t[2])
        dist, n2, qa, qb, st, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_s, quat_j, data,
                                             nrm, tol, tol, size, np.int64(EPA_MAX_VERTICES))
        if st != GJK_OK or epa or not dist > 0.0:
            return depth, nrm, pa, pb, False
        previous = depth
        depth = tau * (n2[0] * nrm[0] + n2[1] * nrm[1] + n2[2] * nrm[2]) - dist
        nrm = n2
        pa = qa
        pb = (qb[0] - t[0], qb[1] - t[1], qb[2] - t[2])
        # converged when the depth (second order in the normal's error; GJK's normal itself is only
        # accurate to about sqrt(tol / R) on a curved D) changes by less than the tolerance
        if exact and abs(depth - previous) <= tol:
            return depth, nrm, pa, pb, True
        exact = True    # depth is now h_D(-nrm) exactly
        slack = 0.0
    return depth, nrm, pa, pb, False


@jit(inline="never")
def convex_pair(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, warm):
    """Distance or penetration of two convex bodies ``i`` and ``j``.

    Parameters: shape kinds and offsets of the parameters in ``data`` (float64 array, layouts in
    :mod:`contactlab.geometry.shapes`), centres of mass ``pos`` (m, global 3-tuples), unit
    orientation quaternions ``quat = (w, x, y, z)`` (body to global), and ``warm``: a global
    3-tuple guess of the normal (e.g. last step's), ``(0, 0, 0)`` for none (then the centre line
    ``pos_j - pos_i`` is used).  A TRIANGLE body is given position 0 and the identity orientation.
    Pass the kinds and offsets as run-time integers (read from arrays): a literal constant compiles
    a specialisation of its own.

    Returns ``(separation, normal, point_i, point_j, status)``:

    * ``separation`` (m): the distance between the bodies when apart (> 0); minus the penetration
      depth when they overlap (< 0), the depth being the length of the smallest translation of
      ``j`` that separates them (the notes' Minkowski overlap ``delta_M``).  Continuous through
      touching contact.
    * ``normal``: unit, from ``i`` towards ``j``: translating ``j`` by ``t`` changes the
      separation by ``normal . t`` to first order.
    * ``point_i``, ``point_j`` (m, global): apart, the closest points, ``point_j - point_i =
      separation * normal``; overlapping, ``point_i`` is the deepest point of ``i`` inside ``j``
      (a support point of ``i`` along ``+normal``) and ``point_j`` that of ``j`` along
      ``-normal``, ``point_i - point_j = depth * normal``.  Both relations hold in either case
      along the normal to the tolerance; across it see the accuracy of the normal (module
      docstring).
    * ``status``: 0 converged; 1 iteration limit or EPA capacity reached (the outputs are the best
      estimate); 2 degenerate input (a NaN, an unknown kind, or coinciding sphere centres: the
      normal is undefined and set to ``warm`` or the centre line).

    Tolerance: ``EPS_REL`` times the sum of the shapes' radii on the separation.  Spheres are
    handled as a centre plus a margin (exact for any partner).  When a sphere's centre lies exactly
    in the plane of a TRIANGLE the normal is the triangle's normal on the side of ``warm``.  A
    ``warm`` normal speeds up smooth shapes several-fold; it is trusted to lie in the basin of the
    right minimum (temporal coherence), so pass the last step's normal of the same pair, not an
    arbitrary direction, for overlapping smooth bodies.
    """
    data = _borrow(data)
    mi = data[ref_i] if kind_i == SPHERE else 0.0
    mj = data[ref_j] if kind_j == SPHERE else 0.0
    margin = mi + mj
    size = _radius(kind_i, data, ref_i) + _radius(kind_j, data, ref_j)
    tol = EPS_REL * size
    # initial direction (unit, from i towards j)
    d0 = (warm[0], warm[1], warm[2])
    has_warm = d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2] > 0.0
    if not has_warm:
        d0 = (pos_j[0] - pos_i[0], pos_j[1] - pos_i[1], pos_j[2] - pos_i[2])
        if not d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2] > 0.0:
            d0 = (1.0, 0.0, 0.0)
    d0n = math.sqrt(d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2])
    d0 = (d0[0] / d0n, d0[1] / d0n, d0[2] / d0n)
    # smooth: ellipsoid or roll (sphere cores are points); flat: polyhedron or triangle
    smooth = kind_i == ELLIPSOID or kind_i == ROLL or kind_j == ELLIPSOID or kind_j == ROLL
    flat = kind_i == POLYHEDRON or kind_i == TRIANGLE or kind_j == POLYHEDRON or kind_j == TRIANGLE
    tol_c = SMOOTH_START_REL * size
    cap = np.int64(EPA_MAX_VERTICES)
    cap_fallback = np.int64(EPA_FALLBACK_VERTICES)
    if smooth and not flat:
        # smooth pair: Newton on the direction from warm or the centre line.  Apart, any local
        # minimum of h_D < 0 on the sphere is the global one (-h_D is concave on the unit ball);
        # overlapping, h_D may have several local minima, so a cold start is accepted only apart
        # and otherwise Newton restarts from a coarse GJK/EPA (EPA brackets the global minimum).
        status = GJK_OK
        h, u, qa, qb, ok = _newton(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                                   (-d0[0], -d0[1], -d0[2]), tol)
        if ok and not has_warm and not h < 0.0:
            ok = False
        if not ok:
            sep, nrm, pa, pb, status, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j,
                                                     data, d0, tol_c, tol_c, size, cap)
            if status != GJK_DEGENERATE:
                h, u, qa, qb, ok = _newton(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                                           (-nrm[0], -nrm[1], -nrm[2]), tol)
        if ok:
            sep = -h
            nrm = (-u[0], -u[1], -u[2])
            pa = qa
            pb = qb
            status = GJK_OK
        elif status != GJK_DEGENERATE:
            sep, nrm, pa, pb, status, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j,
                                                     data, nrm, tol, tol, size, cap_fallback)
    elif smooth:
        # a smooth and a flat shape: fine GJK; overlaps by shifted distance queries, started from
        # warm (h_D(-warm) bounds the depth) or from a coarse EPA
        ok = False
        if has_warm:
            w0 = _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                               (-d0[0], -d0[1], -d0[2]))[0]
            h0 = -(d0[0] * w0[0] + d0[1] * w0[1] + d0[2] * w0[2])
            if h0 > 0.0:
                depth, nrm, pa, pb, ok = _shift_polish(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j,
                                                       data, h0, d0, 0.0, tol, size)
                sep = -depth
                status = GJK_OK
        if not ok:
            sep, nrm, pa, pb, status, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j,
                                                     data, d0, tol, tol_c, size, cap)
            if epa and status != GJK_DEGENERATE:
                depth, n2, qa, qb, ok = _shift_polish(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j,
                                                      data, -sep, nrm, tol_c, tol, size)
                if ok:
                    sep = -depth
                    nrm = n2
                    pa = qa
                    pb = qb
                else:
                    sep, nrm, pa, pb, status, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j,
                                                             quat_j, data, nrm, tol, tol, size, cap_fallback)
    else:
        sep, nrm, pa, pb, status, epa = _gjk_epa(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data,
                                                 d0, tol, tol, size, cap_fallback)
    if status == GJK_OK and kind_i == SPHERE and kind_j == SPHERE and not sep > 0.0:
        status = GJK_DEGENERATE  # coinciding centres: no normal
    if not (math.isfinite(sep) and math.isfinite(nrm[0] + nrm[1] + nrm[2]) and math.isfinite(size)):
        status = GJK_DEGENERATE  # NaN/inf input or an unknown kind (its support point is NaN)
    pi = (pa[0] + mi * nrm[0], pa[1] + mi * nrm[1], pa[2] + mi * nrm[2])
    pj = (pb[0] - mj * nrm[0], pb[1] - mj * nrm[1], pb[2] - mj * nrm[2])
    return sep - margin, nrm, pi, pj, status
