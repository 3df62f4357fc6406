"""Narrow phase for ellipsoids (3-D) and ellipses (2-D) by the common-normal method (notes 004).

Method
------
The unit normal ``n`` (from body ``i`` towards body ``j``) is the only unknown.  For a given ``n``
the candidate contact points are explicit through the *support point* of a centred ellipsoid
with shape matrix ``M = R A^2 R^T`` (``A = diag(a, b, c)``, ``R`` the body-to-global rotation)::

    h(n)   = sqrt(n . M n)                    support function (m)
    s_i(n) = x_i + M_i n / h_i(n)             point of i whose outward normal is +n
    s_j(-n) = x_j - M_j n / h_j(n)            point of j whose outward normal is -n

(the notes' ``c1 = o1 + A^2 n / sqrt(n . A^2 n)``, ``c2 = o2 - ...``).  With ``d = x_j - x_i``
the gap vector is ``c(n) = s_j(-n) - s_i(n)`` and its normal part is the separation along ``n``::

    sep(n) = c(n) . n = d . n - h_i(n) - h_j(n)

The gradient of ``sep`` on the unit sphere is the tangential part of ``c``: the stationary points
of ``sep`` are exactly the common normals (``c`` parallel to ``n``, the notes' equations
``grad f1(c1) + mu^2 (c2 - c1) = 0``, ...).  The maximum of ``sep`` over unit ``n`` is the
distance of the two bodies when they are apart and minus the depth of the minimum translation
that separates them when they overlap, so any ``n`` with ``sep(n) > 0`` proves that they are apart
(a separating plane, the notes' "c . n > 0: no contact").

``sep`` is maximised over ``n`` parametrised by two rotation angles about a tangent basis of the
current iterate (one angle in 2-D): Newton-Raphson on the tangential gradient, safeguarded by
Levenberg-Marquardt damping (the step is accepted only if ``sep`` does not decrease, the damping is
raised until the damped Hessian is definite and the step ascends, and relaxed after each success).
The Riemannian Hessian is ``-(K_i + K_j) - sep I`` on the tangent plane, where ``K = (M - p p^T)/h``
(``p = M n / h``) is the Hessian of the support function: the tensor of the principal radii of
curvature at the support point.  Newton is pure (undamped) near the solution, so the convergence is
quadratic.  Iteration stops when the undamped Newton step is below ``STEP_TOL`` rad; that last
step is applied, which leaves an error of the order of its square (about 1e-16 rad).

Initial guess and temporal coherence: two candidates, the better (larger ``sep``) is the start:
the centre line ``d/|d|`` (evaluated first, always), and the caller's ``warm`` normal (last step's
result) or, without one, ``M_p^{-1} d`` with the tight outer ellipsoid ``M_p = (1 + 1/p) M_i +
(1 + p) M_j``, ``p = h_i/h_j`` along the centre line, of the Minkowski sum (the exact normal if the
sum were an ellipsoid).  Keeping the centre line as a candidate protects against a stale warm
normal.  The notes' fixed-point update for separated iterates, ``n <- n + (c.n / c.c) c``, is not
needed: the Newton step covers both regimes (apart and overlapping) with quadratic convergence.

Limits: for overlaps up to ~30 % of the smallest semi-axis and aspect ratios up to ~20 the result
was the global optimum in every test (1000s of random pairs); for deep overlaps (centres inside each
other) several common normals exist and the iteration may settle on a local one.

Early exit (no contact detected as soon as possible): every iterate, the first included, that
proves ``sep(n) > interaction_range`` ends the search with status ``STATUS_APART``; the centre
line is the first candidate, so a pair whose bounding spheres (radius = largest semi-axis) are
farther apart than ``interaction_range`` exits before any iteration (``sep(d/|d|) >= |d| - max
axes``).  Exact separations are computed for every pair closer than ``interaction_range``.

Outputs (all functions)
-----------------------
``separation`` (m): ``(point_j - point_i) . normal``, ``> 0`` apart, ``< 0`` overlapping (then
``-separation = |point_i - point_j|``, the notes' ``delta = ||c1 - c2||``).  ``normal``: unit,
from ``i`` towards ``j``, global frame.  ``point_i``/``point_j`` (m, global): the support points of
``i`` along ``+normal`` and of ``j`` along ``-normal`` (at the solution the outward normal of ``i``
at ``point_i`` is ``+normal``, that of ``j`` at ``point_j`` is ``-normal``).
``curvature_i``/``curvature_j`` (m): Gaussian radius of curvature ``1/sqrt(K)`` at the point, which
for an ellipsoid with body-frame point ``(x, y, z)`` and ``K = 1/(a^2 b^2 c^2 (x^2/a^4 + y^2/b^4 +
z^2/c^4)^2)`` is ``a b c / h(n)^2`` (``r`` for a sphere); in 2-D the radius of curvature of the
ellipse, ``a^2 b^2 / h(n)^3``.  ``iterations``: Newton(-LM) steps taken.  ``status``:
``STATUS_CONVERGED`` (0), ``STATUS_MAX_ITER`` (1: iteration cap or no ascending step found; the
best estimate is returned), ``STATUS_APART`` (3: proven apart by more than ``interaction_range``;
``separation`` is then a lower bound of the true distance, exact only if the exit came at the
converged normal, and ``normal`` the direction that proves it; points and curvatures are those of
that normal).

Conventions: SI units (m, rad); 3-vectors are 3-tuples, 2-vectors 2-tuples of floats;
orientation a unit quaternion ``(w, x, y, z)`` body -> global (:mod:`contactlab.geometry.rotation`),
in 2-D an angle (rad, counter-clockwise) body -> global; semi-axes ``(a, b, c)`` along the body x,
y, z axes (``(a, b)`` in 2-D), as in the ``ELLIPSOID`` layout of :mod:`contactlab.geometry.shapes`.
Nothing here allocates or raises.

Compilation: the solvers' helpers are ``@jit(inline="never")`` like the solvers themselves: LLVM
still inlines them (same speed, ~1.5 us per cold 3-D call, ~0.4-0.8 us warm), but the 3-D entry
compiles in ~6 s instead of ~9 s with Numba's IR-level inlining.  :func:`ellipsoid_plane` is an
ordinary inlined building block, and so is its 2-D twin :func:`ellipse_line`.
"""
from __future__ import annotations

import math

from .._jit import jit
from .rotation import quat_matrix

__all__ = ["ellipsoid_pair", "ellipsoid_plane", "ellipse_pair_2d", "ellipse_line", "ellipsoid_shape_matrix",
           "ellipse_shape_matrix", "STATUS_CONVERGED", "STATUS_MAX_ITER", "STATUS_APART", "MAX_ITER",
           "STEP_TOL"]

STATUS_CONVERGED = 0
STATUS_MAX_ITER = 1
STATUS_APART = 3

#: cap on Newton(-LM) iterations per call
MAX_ITER = 50
#: convergence: the undamped Newton step (rad) below which the iterate (after that step) is final
STEP_TOL = 1e-8
#: largest rotation of the normal in one step (rad), a trust region for far-off starts
MAX_STEP = 0.5
#: damping trials per iteration before giving up (each multiplies the damping by 4 or more)
MAX_TRIALS = 40

_EPS = 2.220446049250313e-16


# ----------------------------------------------------------------------------------------------
# 3-D helpers (symmetric 3x3 matrices as 6-tuples xx, yy, zz, xy, xz, yz)
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def ellipsoid_shape_matrix(q, axes):
    """``M = R A^2 R^T`` (m^2, global frame, 6-tuple ``xx, yy, zz, xy, xz, yz``) of an ellipsoid
    with semi-axes ``axes = (a, b, c)`` (m) and orientation ``q``.

    Written as ``m0 I + sum_k (a_k^2 - m0) r_k r_k^T`` with ``m0`` the smallest ``a_k^2`` and
    ``r_k`` the body axes in the global frame, so that a sphere gives exactly ``r^2 I`` whatever
    its orientation.
    """
    r = quat_matrix(q)
    a2 = axes[0] * axes[0]
    b2 = axes[1] * axes[1]
    c2 = axes[2] * axes[2]
    m0 = min(a2, b2, c2)
    ea = a2 - m0
    eb = b2 - m0
    ec = c2 - m0
    # r[row][col]: column k is body axis k in the global frame
    xx = m0 + ea * r[0][0] * r[0][0] + eb * r[0][1] * r[0][1] + ec * r[0][2] * r[0][2]
    yy = m0 + ea * r[1][0] * r[1][0] + eb * r[1][1] * r[1][1] + ec * r[1][2] * r[1][2]
    zz = m0 + ea * r[2][0] * r[2][0] + eb * r[2][1] * r[2][1] + ec * r[2][2] * r[2][2]
    xy = ea * r[0][0] * r[1][0] + eb * r[0][1] * r[1][1] + ec * r[0][2] * r[1][2]
    xz = ea * r[0][0] * r[2][0] + eb * r[0][1] * r[2][1] + ec * r[0][2] * r[2][2]
    yz = ea * r[1][0] * r[2][0] + eb * r[1][1] * r[2][1] + ec * r[1][2] * r[2][2]
    return (xx, yy, zz, xy, xz, yz)


@jit(inline="never")
def _smul(m, v):
    return (m[0] * v[0] + m[3] * v[1] + m[4] * v[2],
            m[3] * v[0] + m[1] * v[1] + m[5] * v[2],
            m[4] * v[0] + m[5] * v[1] + m[2] * v[2])


@jit(inline="never")
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit(inline="never")
def _unit3(v):
    s = 1.0 / math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] * s, v[1] * s, v[2] * s)


@jit(inline="never")
def _eval3(mi, mj, d, n):
    """``sep(n)``, the gap vector ``c``, the support offsets ``p_i = M_i n/h_i`` (point_i = x_i +
    p_i) and ``p_j = M_j n/h_j`` (point_j = x_j - p_j) and the support functions ``h_i, h_j``."""
    ui = _smul(mi, n)
    uj = _smul(mj, n)
    hi = math.sqrt(_dot3(n, ui))
    hj = math.sqrt(_dot3(n, uj))
    pi = (ui[0] / hi, ui[1] / hi, ui[2] / hi)
    pj = (uj[0] / hj, uj[1] / hj, uj[2] / hj)
    c = (d[0] - pi[0] - pj[0], d[1] - pi[1] - pj[1], d[2] - pi[2] - pj[2])
    sep = _dot3(d, n) - hi - hj
    return sep, c, pi, pj, hi, hj


@jit(inline="never")
def _tangent_basis(n):
    """Two unit vectors completing the unit ``n`` to a right-handed orthonormal basis."""
    ax = abs(n[0])
    ay = abs(n[1])
    az = abs(n[2])
    if ax <= ay and ax <= az:
        t = (0.0, n[2], -n[1])          # n x e_x
    elif ay <= az:
        t = (-n[2], 0.0, n[0])          # n x e_y
    else:
        t = (n[1], -n[0], 0.0)          # n x e_z
    t1 = _unit3(t)
    t2 = (n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0])
    return t1, t2


@jit(inline="never")
def _radius_tensor(m, h, p, t1, t2):
    """The support function's Hessian ``(M - p p^T)/h`` on the tangent basis (principal radii of
    curvature tensor, m): ``(k11, k12, k22)``."""
    m1 = _smul(m, t1)
    m2 = _smul(m, t2)
    a = _dot3(t1, p)
    b = _dot3(t2, p)
    return ((_dot3(t1, m1) - a * a) / h, (_dot3(t1, m2) - a * b) / h, (_dot3(t2, m2) - b * b) / h)


@jit(inline="never")
def _rotate_normal(n, t1, t2, x1, x2):
    """``n`` turned by the angles ``(x1, x2)`` about the tangent directions (exponential map on the
    unit sphere), renormalised."""
    v = (x1 * t1[0] + x2 * t2[0], x1 * t1[1] + x2 * t2[1], x1 * t1[2] + x2 * t2[2])
    th = math.sqrt(x1 * x1 + x2 * x2)
    cs = math.cos(th)
    sc = math.sin(th) / th if th > 1e-8 else 1.0 - th * th / 6.0
    return _unit3((cs * n[0] + sc * v[0], cs * n[1] + sc * v[1], cs * n[2] + sc * v[2]))


@jit(inline="never")
def ellipsoid_pair(pos_i, quat_i, axes_i, pos_j, quat_j, axes_j, warm, interaction_range=0.0):
    """Common-normal contact of ellipsoids ``i`` and ``j`` (see the module docstring).

    Parameters: centres ``pos_*`` (m, 3-tuples), orientations ``quat_*`` (unit quaternions ``(w, x,
    y, z)``, body -> global), semi-axes ``axes_* = (a, b, c)`` (m, body x, y, z), ``warm`` (3-tuple,
    any length > 0): last step's normal, or ``(0.0, 0.0, 0.0)`` for none; ``interaction_range``
    (m, >= 0, optional): exact values are computed for every pair whose separation is at most
    this, pairs proven farther apart return ``STATUS_APART`` at once.

    Returns ``(separation, normal, point_i, point_j, curvature_i, curvature_j, iterations,
    status)``: ``separation`` (m, > 0 apart), ``normal`` (unit, i -> j), the support points (m,
    global) of ``i`` along ``+normal`` and of ``j`` along ``-normal``, the Gaussian radii of
    curvature there (m), the number of Newton(-LM) steps and the status (0 converged, 1 iteration
    cap, 3 apart with ``separation`` a lower bound).  Coincident centres without a warm normal
    start from the global axis of smallest ``h_i + h_j``.
    """
    mi = ellipsoid_shape_matrix(quat_i, axes_i)
    mj = ellipsoid_shape_matrix(quat_j, axes_j)
    d = (pos_j[0] - pos_i[0], pos_j[1] - pos_i[1], pos_j[2] - pos_i[2])
    dist = math.sqrt(_dot3(d, d))
    size = max(axes_i[0], axes_i[1], axes_i[2]) + max(axes_j[0], axes_j[1], axes_j[2])
    tol_s = 16.0 * _EPS * (dist + size)            # round-off of sep
    status = STATUS_MAX_ITER
    iterations = 0

    # -- candidate 0: the centre line (this is also the bounding-sphere test); candidate 1: the warm
    #    normal, else the Minkowski-sum ellipsoid guess adj(M_p) d (parallel to M_p^-1 d)
    if dist > 0.0:
        n = (d[0] / dist, d[1] / dist, d[2] / dist)
    else:
        sxx = mi[0] + mj[0]
        syy = mi[1] + mj[1]
        szz = mi[2] + mj[2]
        if sxx <= syy and sxx <= szz:
            n = (1.0, 0.0, 0.0)
        elif syy <= szz:
            n = (0.0, 1.0, 0.0)
        else:
            n = (0.0, 0.0, 1.0)
    sep, c, pi, pj, hi, hj = _eval3(mi, mj, d, n)
    nt = n
    for cand in range(2):
        if cand == 1:
            if sep > interaction_range:
                break
            if _dot3(warm, warm) > 0.0:
                nt = _unit3(warm)
            elif dist > 0.0:
                p = hi / hj
                ai = 1.0 + 1.0 / p
                aj = 1.0 + p
                m = (ai * mi[0] + aj * mj[0], ai * mi[1] + aj * mj[1], ai * mi[2] + aj * mj[2],
                     ai * mi[3] + aj * mj[3], ai * mi[4] + aj * mj[4], ai * mi[5] + aj * mj[5])
                nt = _unit3(((m[1] * m[2] - m[5] * m[5]) * d[0] + (m[4] * m[5] - m[3] * m[2]) * d[1]
                             + (m[3] * m[5] - m[4] * m[1]) * d[2],
                             (m[4] * m[5] - m[3] * m[2]) * d[0] + (m[0] * m[2] - m[4] * m[4]) * d[1]
                             + (m[3] * m[4] - m[0] * m[5]) * d[2],
                             (m[3] * m[5] - m[4] * m[1]) * d[0] + (m[3] * m[4] - m[0] * m[5]) * d[1]
                             + (m[0] * m[1] - m[3] * m[3]) * d[2]))
            else:
                break
        st, ct, pit, pjt, hit, hjt = _eval3(mi, mj, d, nt)
        if cand == 0 or st > sep:
            n, sep, c, pi, pj, hi, hj = nt, st, ct, pit, pjt, hit, hjt
    if sep > interaction_range:
        status = STATUS_APART

    # -- Newton-Raphson with Levenberg-Marquardt safeguard, maximising sep(n)
    lam = 0.0
    it = 0
    while status == STATUS_MAX_ITER and it < MAX_ITER:
        it += 1
        t1, t2 = _tangent_basis(n)
        g1 = _dot3(t1, c)
        g2 = _dot3(t2, c)
        ki = _radius_tensor(mi, hi, pi, t1, t2)
        kj = _radius_tensor(mj, hj, pj, t1, t2)
        # B = -Hessian of sep on the tangent plane = K_i + K_j + sep I
        b11 = ki[0] + kj[0] + sep
        b12 = ki[1] + kj[1]
        b22 = ki[2] + kj[2] + sep
        bscale = abs(b11) + abs(b22) + abs(b12) + 1e-300
        det = b11 * b22 - b12 * b12
        final = False
        if b11 > 0.0 and det > 1e-12 * bscale * bscale:
            x1 = (b22 * g1 - b12 * g2) / det
            x2 = (b11 * g2 - b12 * g1) / det
            final = x1 * x1 + x2 * x2 <= STEP_TOL * STEP_TOL
        # smallest eigenvalue of B: the damping must exceed its negative
        emin = 0.5 * (b11 + b22 - math.sqrt((b11 - b22) * (b11 - b22) + 4.0 * b12 * b12))
        accepted = False
        for _ in range(MAX_TRIALS):
            if not final:
                if emin + lam <= 1e-6 * bscale:
                    lam = max(2.0 * lam, 1e-6 * bscale - emin, 1e-12 * bscale)
                    continue
                l11 = b11 + lam
                l22 = b22 + lam
                dl = l11 * l22 - b12 * b12
                x1 = (l22 * g1 - b12 * g2) / dl
                x2 = (l11 * g2 - b12 * g1) / dl
                th = math.sqrt(x1 * x1 + x2 * x2)
                if th > MAX_STEP:
                    x1 *= MAX_STEP / th
                    x2 *= MAX_STEP / th
            nt = _rotate_normal(n, t1, t2, x1, x2)
            st, ct, pit, pjt, hit, hjt = _eval3(mi, mj, d, nt)
            if final or st >= sep - tol_s:
                n, sep, c, pi, pj, hi, hj = nt, st, ct, pit, pjt, hit, hjt
                accepted = True
                break
            lam = max(4.0 * lam, 1e-3 * bscale)
        iterations = it
        if sep > interaction_range:
            status = STATUS_APART
        elif final:
            status = STATUS_CONVERGED
        elif not accepted:
            break
        lam = 0.1 * lam
        if lam < 1e-8 * bscale:
            lam = 0.0
    point_i = (pos_i[0] + pi[0], pos_i[1] + pi[1], pos_i[2] + pi[2])
    point_j = (pos_j[0] - pj[0], pos_j[1] - pj[1], pos_j[2] - pj[2])
    curv_i = axes_i[0] * axes_i[1] * axes_i[2] / (hi * hi)
    curv_j = axes_j[0] * axes_j[1] * axes_j[2] / (hj * hj)
    return sep, n, point_i, point_j, curv_i, curv_j, iterations, status


@jit
def ellipsoid_plane(pos, quat, axes, plane_point, plane_normal):
    """Contact of an ellipsoid (body ``i``) and an infinite plane, closed form.

    ``plane_normal``: the plane's unit normal, pointing to the side where the ellipsoid belongs.
    Returns ``(separation, normal, point_i, point_plane, curvature)``: ``normal = -plane_normal``
    (from the ellipsoid into the wall); ``point_i = pos - M n_p / sqrt(n_p . M n_p)`` the support
    point along ``-plane_normal`` (the ellipsoid's lowest point); ``separation = (point_i -
    plane_point) . plane_normal`` (m, < 0 overlapping); ``point_plane`` its projection on the plane;
    ``curvature`` (m) the Gaussian radius of curvature ``a b c / h^2`` at ``point_i``.
    """
    m = ellipsoid_shape_matrix(quat, axes)
    u = _smul(m, plane_normal)
    h = math.sqrt(_dot3(plane_normal, u))
    point_i = (pos[0] - u[0] / h, pos[1] - u[1] / h, pos[2] - u[2] / h)
    sep = (pos[0] - plane_point[0]) * plane_normal[0] + (pos[1] - plane_point[1]) * plane_normal[1] \
        + (pos[2] - plane_point[2]) * plane_normal[2] - h
    point_plane = (point_i[0] - sep * plane_normal[0], point_i[1] - sep * plane_normal[1],
                   point_i[2] - sep * plane_normal[2])
    normal = (-plane_normal[0], -plane_normal[1], -plane_normal[2])
    return sep, normal, point_i, point_plane, axes[0] * axes[1] * axes[2] / (h * h)


# ----------------------------------------------------------------------------------------------
# 2-D (symmetric 2x2 matrices as 3-tuples xx, yy, xy)
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def ellipse_shape_matrix(angle, axes):
    """``M = R A^2 R^T`` (m^2, 3-tuple ``xx, yy, xy``) of an ellipse with semi-axes ``axes = (a, b)``
    (m, body x, y) turned by ``angle`` (rad, counter-clockwise); a circle gives exactly ``r^2 I``."""
    cs = math.cos(angle)
    sn = math.sin(angle)
    a2 = axes[0] * axes[0]
    b2 = axes[1] * axes[1]
    m0 = min(a2, b2)
    ea = a2 - m0
    eb = b2 - m0
    return (m0 + ea * cs * cs + eb * sn * sn, m0 + ea * sn * sn + eb * cs * cs, (ea - eb) * cs * sn)


@jit(inline="never")
def _eval2(mi, mj, d, n):
    ui = (mi[0] * n[0] + mi[2] * n[1], mi[2] * n[0] + mi[1] * n[1])
    uj = (mj[0] * n[0] + mj[2] * n[1], mj[2] * n[0] + mj[1] * n[1])
    hi = math.sqrt(n[0] * ui[0] + n[1] * ui[1])
    hj = math.sqrt(n[0] * uj[0] + n[1] * uj[1])
    pi = (ui[0] / hi, ui[1] / hi)
    pj = (uj[0] / hj, uj[1] / hj)
    c = (d[0] - pi[0] - pj[0], d[1] - pi[1] - pj[1])
    sep = d[0] * n[0] + d[1] * n[1] - hi - hj
    return sep, c, pi, pj, hi, hj


@jit(inline="never")
def _unit2(v):
    s = 1.0 / math.sqrt(v[0] * v[0] + v[1] * v[1])
    return (v[0] * s, v[1] * s)


@jit(inline="never")
def ellipse_pair_2d(pos_i, angle_i, axes_i, pos_j, angle_j, axes_j, warm, interaction_range=0.0):
    """Common-normal contact of ellipses ``i`` and ``j`` in the plane (notes 004, ellipse model).

    Same method, conventions and outputs as :func:`ellipsoid_pair` with 2-tuples, one angle
    ``angle_*`` (rad, counter-clockwise, body -> global) per body and one unknown angle for the
    normal; the curvatures are the ellipses' radii of curvature ``a^2 b^2 / h(n)^3`` (m) at the
    points.  Returns ``(separation, normal, point_i, point_j, curvature_i, curvature_j,
    iterations, status)``.
    """
    mi = ellipse_shape_matrix(angle_i, axes_i)
    mj = ellipse_shape_matrix(angle_j, axes_j)
    abi = (axes_i[0] * axes_i[1]) ** 2
    abj = (axes_j[0] * axes_j[1]) ** 2
    d = (pos_j[0] - pos_i[0], pos_j[1] - pos_i[1])
    dist = math.sqrt(d[0] * d[0] + d[1] * d[1])
    size = max(axes_i[0], axes_i[1]) + max(axes_j[0], axes_j[1])
    tol_s = 16.0 * _EPS * (dist + size)
    status = STATUS_MAX_ITER
    iterations = 0

    if dist > 0.0:
        n = (d[0] / dist, d[1] / dist)
    elif mi[0] + mj[0] <= mi[1] + mj[1]:
        n = (1.0, 0.0)
    else:
        n = (0.0, 1.0)
    sep, c, pi, pj, hi, hj = _eval2(mi, mj, d, n)
    nt = n
    for cand in range(2):
        if cand == 1:
            if sep > interaction_range:
                break
            if warm[0] * warm[0] + warm[1] * warm[1] > 0.0:
                nt = _unit2(warm)
            elif dist > 0.0:
                p = hi / hj
                ai = 1.0 + 1.0 / p
                aj = 1.0 + p
                m = (ai * mi[0] + aj * mj[0], ai * mi[1] + aj * mj[1], ai * mi[2] + aj * mj[2])
                nt = _unit2((m[1] * d[0] - m[2] * d[1], m[0] * d[1] - m[2] * d[0]))   # adj(M_p) d
            else:
                break
        st, ct, pit, pjt, hit, hjt = _eval2(mi, mj, d, nt)
        if cand == 0 or st > sep:
            n, sep, c, pi, pj, hi, hj = nt, st, ct, pit, pjt, hit, hjt
    if sep > interaction_range:
        status = STATUS_APART

    lam = 0.0
    it = 0
    while status == STATUS_MAX_ITER and it < MAX_ITER:
        it += 1
        g = n[0] * c[1] - n[1] * c[0]           # c . t, t = (-n_y, n_x)
        # -d^2 sep / dphi^2 = rho_i + rho_j + sep, rho = a^2 b^2 / h^3 the radii of curvature
        b = abi / (hi * hi * hi) + abj / (hj * hj * hj) + sep
        bscale = abs(b) + 1e-300
        final = b > 0.0 and abs(g) <= STEP_TOL * b
        x = g / b
        accepted = False
        for _ in range(MAX_TRIALS):
            if not final:
                if b + lam <= 1e-6 * bscale:
                    lam = max(2.0 * lam, 1e-6 * bscale - b, 1e-12 * bscale)
                    continue
                x = g / (b + lam)
                if abs(x) > MAX_STEP:
                    x = math.copysign(MAX_STEP, x)
            cs = math.cos(x)
            sn = math.sin(x)
            nt = _unit2((cs * n[0] - sn * n[1], sn * n[0] + cs * n[1]))
            st, ct, pit, pjt, hit, hjt = _eval2(mi, mj, d, nt)
            if final or st >= sep - tol_s:
                n, sep, c, pi, pj, hi, hj = nt, st, ct, pit, pjt, hit, hjt
                accepted = True
                break
            lam = max(4.0 * lam, 1e-3 * bscale)
        iterations = it
        if sep > interaction_range:
            status = STATUS_APART
        elif final:
            status = STATUS_CONVERGED
        elif not accepted:
            break
        lam = 0.1 * lam
        if lam < 1e-8 * bscale:
            lam = 0.0
    point_i = (pos_i[0] + pi[0], pos_i[1] + pi[1])
    point_j = (pos_j[0] - pj[0], pos_j[1] - pj[1])
    return sep, n, point_i, point_j, abi / (hi * hi * hi), abj / (hj * hj * hj), iterations, status


@jit
def ellipse_line(pos, angle, axes, line_point, line_normal):
    """Contact of an ellipse (body ``i``) and an infinite line of the plane, closed form (the 2-D
    twin of :func:`ellipsoid_plane`).

    ``pos`` (m, 2-tuple), ``angle`` (rad, counter-clockwise, body -> global), ``axes = (a, b)``
    (m), ``line_point`` (m) any point of the line, ``line_normal`` its unit normal (2-tuple),
    pointing to the side where the ellipse belongs.  Returns ``(separation, normal, point_i,
    point_line, curvature)``: ``normal = -line_normal`` (from the ellipse into the wall);
    ``point_i = pos - M n_l / h`` with ``h = sqrt(n_l . M n_l)`` the support point along
    ``-line_normal`` (the ellipse's lowest point); ``separation = (pos - line_point) . n_l - h``
    (m, < 0 overlapping); ``point_line`` its projection on the line; ``curvature`` (m) the
    ellipse's radius of curvature there, ``a^2 b^2 / h^3`` (``r`` for a circle).
    """
    m = ellipse_shape_matrix(angle, axes)
    u = (m[0] * line_normal[0] + m[2] * line_normal[1], m[2] * line_normal[0] + m[1] * line_normal[1])
    h = math.sqrt(line_normal[0] * u[0] + line_normal[1] * u[1])
    point_i = (pos[0] - u[0] / h, pos[1] - u[1] / h)
    sep = (pos[0] - line_point[0]) * line_normal[0] + (pos[1] - line_point[1]) * line_normal[1] - h
    point_line = (point_i[0] - sep * line_normal[0], point_i[1] - sep * line_normal[1])
    normal = (-line_normal[0], -line_normal[1])
    return sep, normal, point_i, point_line, (axes[0] * axes[1]) ** 2 / (h * h * h)
