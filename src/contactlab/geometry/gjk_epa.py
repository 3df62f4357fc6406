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

Modules (one concept each; this one is the entry point and re-exports the constants):

* :mod:`contactlab.geometry.minkowski` -- the support mapping of ``D`` on the cores, the status
  codes and the flatness tolerance that GJK and EPA share;
* :mod:`contactlab.geometry.gjk` -- GJK: the closest point of a simplex to the origin and the GJK
  loop, which hands overlapping cores on to EPA;
* :mod:`contactlab.geometry.epa` -- EPA: completing GJK's simplex to a tetrahedron and expanding
  the polytope;
* this module -- the tolerances, Newton's method for smooth pairs (:func:`_newton`), the shifted
  distance queries for a smooth shape against a flat one (:func:`_shift_polish`) and
  :func:`convex_pair`, which picks the strategy.

Implementation notes (measured, numba 0.68; they hold for all four modules):

* Vector arithmetic is written out in scalars.  Calling small compiled helpers costs a real call
  each (they are not inlined across compiled functions), and IR-inlining them
  (``inline="always"``) re-runs type inference at every call site: the two took this code to
  about a minute of compilation and microseconds per query.
* The shape array is passed on through a view without a memory-info pointer (``_borrow``):
  otherwise every call of a helper increments and decrements its reference count atomically.
* Loop counters that are passed to compiled helpers start as ``np.int64``: a literal would be
  typed ``Literal[int]`` at first and compile an extra specialisation of the helper.
* EPA works in fixed-capacity arrays allocated once per EPA call (only overlapping cores pay for
  it; :mod:`contactlab.geometry.epa`): ``EPA_MAX_VERTICES`` vertices for the coarse stage of
  smooth shapes, ``EPA_FALLBACK_VERTICES`` when EPA must reach the fine tolerance itself; when
  they are full the best estimate so far is returned with status 1.
"""
from __future__ import annotations

import math

import numpy as np
from numba.core import types as _nbtypes
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array, populate_array

from .._jit import jit
from .epa import EPA_FALLBACK_VERTICES, EPA_MAX_VERTICES
from .gjk import GJK_MAX_ITERATIONS, _gjk_epa
from .minkowski import _ZERO3, GJK_DEGENERATE, GJK_MAX_ITER, GJK_OK, _mink_support, _radius
from .shapes import ELLIPSOID, POLYHEDRON, ROLL, SPHERE, TRIANGLE

__all__ = ["convex_pair", "GJK_OK", "GJK_MAX_ITER", "GJK_DEGENERATE", "EPS_REL", "SMOOTH_START_REL",
           "GJK_MAX_ITERATIONS", "NEWTON_MAX_ITERATIONS", "SHIFT_MAX_ITERATIONS", "EPA_MAX_VERTICES",
           "EPA_FALLBACK_VERTICES"]

#: tolerance on separation and depth, relative to the size of the pair
EPS_REL = 1e-10
#: tolerance of the GJK/EPA stage before Newton's method for smooth pairs
SMOOTH_START_REL = 1e-5
#: iteration caps of Newton's method and of the shifted distance queries (GJK's:
#: :data:`~contactlab.geometry.gjk.GJK_MAX_ITERATIONS`)
NEWTON_MAX_ITERATIONS = 16
SHIFT_MAX_ITERATIONS = 8
#: finite-difference step (radians) of Newton's Jacobian, and the step that counts as converged
_FD_STEP = 1e-6
_NEWTON_STEP_TOL = 1e-9


# ----------------------------------------------------------------------------------------------
# the shape array, passed on without reference counting
# ----------------------------------------------------------------------------------------------
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
# Newton refinement, shifted distance queries, the entry point
# ----------------------------------------------------------------------------------------------
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
