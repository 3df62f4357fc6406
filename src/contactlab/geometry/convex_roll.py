"""Geometry of the convex roll (spec 003, Exudyn's ObjectContactConvexRoll).

The roll is a solid of revolution about its body ``x`` axis.  Its hull radius is the polynomial

    r(s) = sum_i k_i s^(n-1-i),   s in [-L/2, L/2]          (numpy.polyval order)

of the axial coordinate ``s`` (m) measured from the roll's centre; the spec's ``coefficientsHull``.
The hull must be positive and concave (``r'' <= 0``: the roll is convex); the two ends are flat
discs.  The body frame's origin is the centre of mass, so the roll's centre sits at body
``x = offset`` (``offset = -`` the centroid ``s_bar`` of the hull volume; 0 for a symmetric hull),
and a surface point is ``(offset + s, r(s) cos(phi), r(s) sin(phi))`` in the body frame.

Shape data (``contactlab.geometry.shapes``, kind ``ROLL``): ``[n, length, r_bound, offset,
k_0, ..., k_{n-1}]`` at ``data[ref:]``; ``r_bound`` is the radius of the bounding sphere about the
centre of mass.

Setup-time (NumPy) helpers: :func:`roll_shape_data`, :func:`roll_mass_properties`,
:func:`hull_derivative`, :func:`bounding_radius`, :func:`roll_surface`.  Compiled building blocks:
:func:`roll_support_local` (support mapping, for GJK/EPA) and :func:`roll_plane` (contact with a
plane, the spec's algorithm).

Support mapping.  For a direction ``d = (d_x, d_y, d_z)`` (body frame) with ``rho = |(d_y, d_z)|``,
the largest value of ``d . x`` on the ring at ``s`` is ``d_x (offset + s) + rho r(s)``, a concave
function of ``s``; it is largest where ``d_x + rho r'(s) = 0`` -- the spec's slope matching
``r'(s) = -d_x / rho`` -- or at an end of the interval when that slope is not reached.  Since
``r'`` is non-increasing this is a monotone root: Newton's method inside a shrinking bracket
(bisection when Newton leaves it), or the closed form when ``r'`` is linear (``n <= 3``).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .._arguments import as_float_array
from ..errors import InputError

__all__ = ["roll_shape_data", "roll_mass_properties", "hull_derivative", "bounding_radius", "roll_surface",
           "roll_support_local", "roll_plane", "hull_radius", "ROLL_HEADER", "PLANE_OK", "PLANE_APART"]

#: floats before the coefficients in a ROLL block: n, length, r_bound, offset
ROLL_HEADER = 4
#: status codes of :func:`roll_plane`
PLANE_OK = 0
PLANE_APART = 3

_MAX_ITER = 100


# ----------------------------------------------------------------------------------------------
# compiled building blocks
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _hull_eval(data, ref, s):
    """``(r(s), r'(s), r''(s))`` of the roll at ``data[ref:]`` (Horner's scheme, m, -, 1/m).

    Not inlined at Numba's IR level (``inline="never"``; LLVM still inlines the small compiled
    function): it is called about ten times in this module, and IR inlining of every call site
    roughly doubled the compile time of the kernels that use the roll."""
    n = int(data[ref])
    c0 = ref + 4
    p = 0.0
    dp = 0.0
    ddp = 0.0
    for i in range(n):
        ddp = ddp * s + dp
        dp = dp * s + p
        p = p * s + data[c0 + i]
    return p, dp, 2.0 * ddp


@jit
def hull_radius(data, ref, s):
    """Hull radius ``r(s)`` (m) at the axial coordinate ``s`` (m, from the roll's centre)."""
    return _hull_eval(data, ref, s)[0]


@jit(inline="never")
def _slope_match(data, ref, a, b):
    """The axial coordinate ``s`` in ``[-L/2, L/2]`` that maximises ``a s + b r(s)`` (``b >= 0``).

    An iterative solver: compiled once and called (not inlined), which keeps the compile time of
    the kernels that use it short.

    It solves ``a + b r'(s) = 0`` (``r'`` is non-increasing); the end of the interval when the
    slope is not reached, ``s = 0`` when ``a + b r'`` vanishes on the whole interval (a cylinder
    seen side-on: the middle of its line of contact).
    """
    n = int(data[ref])
    h = 0.5 * data[ref + 1]
    if n <= 3:
        # r'(s) = c1 s + c2 (linear): closed form
        c1 = 0.0
        c2 = 0.0
        if n == 3:
            c1 = 2.0 * data[ref + 4]
            c2 = data[ref + 5]
        elif n == 2:
            c2 = data[ref + 4]
        slope = b * c1
        g0 = a + b * c2
        if slope < 0.0:
            s = -g0 / slope
            if s < -h:
                s = -h
            elif s > h:
                s = h
            return s
        if g0 > 0.0:
            return h
        if g0 < 0.0:
            return -h
        return 0.0
    ga = a + b * _hull_eval(data, ref, -h)[1]
    gb = a + b * _hull_eval(data, ref, h)[1]
    if ga <= 0.0 and gb >= 0.0:
        return 0.0
    if ga <= 0.0:
        return -h
    if gb >= 0.0:
        return h
    lo = -h
    hi = h
    # start from the secant (regula falsi) point of the bracket
    s = lo + (hi - lo) * ga / (ga - gb)
    tol = 1e-15 * h
    for _ in range(_MAX_ITER):
        ev = _hull_eval(data, ref, s)
        g = a + b * ev[1]
        if g == 0.0:
            return s
        if g > 0.0:
            lo = s
        else:
            hi = s
        gp = b * ev[2]
        s_new = 0.5 * (lo + hi)
        if gp < 0.0:
            t = s - g / gp
            if lo < t < hi:
                s_new = t
        if abs(s_new - s) <= tol or hi - lo <= tol:
            return s_new
        s = s_new
    return s


@jit
def roll_support_local(data, ref, d):
    """Support point (m, body frame) of the roll at ``data[ref:]`` for the direction ``d`` (body frame).

    The surface point ``x`` that maximises ``d . x``: on the ring at the slope-matching ``s``
    (``r'(s) = -d_x / |d_yz|``) in the azimuth of ``(d_y, d_z)``, or on an end circle.  ``d`` need
    not be unit.  For ``d`` along the axis (``d_y = d_z = 0``) the whole end disc is extremal and
    the disc's centre ``(offset +- L/2, 0, 0)`` is returned; for ``d = 0`` the roll's centre.
    """
    rho = math.hypot(d[1], d[2])
    offset = data[ref + 3]
    h = 0.5 * data[ref + 1]
    if rho == 0.0:
        if d[0] > 0.0:
            return (offset + h, 0.0, 0.0)
        if d[0] < 0.0:
            return (offset - h, 0.0, 0.0)
        return (offset, 0.0, 0.0)
    s = _slope_match(data, ref, d[0], rho)
    r = _hull_eval(data, ref, s)[0]
    f = r / rho
    return (offset + s, f * d[1], f * d[2])


@jit
def roll_plane(data, ref, pos, quat, plane_point, plane_normal):
    """Contact of the roll at ``data[ref:]`` with a plane (spec 003).

    ``pos`` (m) and ``quat`` (unit, ``(w, x, y, z)``, body to global) are the roll body's centre
    of mass and orientation; the plane passes through ``plane_point`` (m) with the unit
    ``plane_normal`` pointing out of the half-space the plane bounds (for the ground ``z = 0``:
    ``(0, 0, 1)``).

    Returns ``(separation, normal, point, s_c, radius_c, status)``:

    * ``status`` 3 (apart): the bounding pre-check of the spec -- two spheres of the hull's
      largest radius centred on the axis at both ends of the roll -- does not touch the plane;
      ``separation`` is then a lower bound (the smaller of the two spheres' distances; the roll lies
      inside the capsule they span), the other outputs are the roll's centre, ``-plane_normal``,
      ``s_c = 0`` and ``radius_c = r(0)``.
    * ``status`` 0: ``point`` = C (m, global), the roll's deepest point towards the plane (the
      support point for ``-plane_normal``, found by matching the hull's slope with the plane
      rotated into the body frame); ``separation = (C - plane_point) . plane_normal`` (m, < 0 when
      penetrating: the spec's ``z_pen`` for the ground); ``normal = -plane_normal`` (from the
      roll into the plane); ``s_c`` (m) the axial coordinate of C; ``radius_c = r(s_c)`` (m).
    """
    w, x, y, z = quat[0], quat[1], quat[2], quat[3]
    nx, ny, nz = plane_normal[0], plane_normal[1], plane_normal[2]
    # rotation matrix rows (body to global); the plane normal in the body frame is R^T n
    r00 = 1.0 - 2.0 * (y * y + z * z)
    r01 = 2.0 * (x * y - w * z)
    r02 = 2.0 * (x * z + w * y)
    r10 = 2.0 * (x * y + w * z)
    r11 = 1.0 - 2.0 * (x * x + z * z)
    r12 = 2.0 * (y * z - w * x)
    r20 = 2.0 * (x * z - w * y)
    r21 = 2.0 * (y * z + w * x)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    nb0 = r00 * nx + r10 * ny + r20 * nz
    nb1 = r01 * nx + r11 * ny + r21 * nz
    nb2 = r02 * nx + r12 * ny + r22 * nz
    offset = data[ref + 3]
    h = 0.5 * data[ref + 1]
    rho = math.hypot(nb1, nb2)
    # height of the roll's centre above the plane, and of its axis per unit s
    dist_c = ((pos[0] + r00 * offset - plane_point[0]) * nx + (pos[1] + r10 * offset - plane_point[1]) * ny
              + (pos[2] + r20 * offset - plane_point[2]) * nz)
    # bounding pre-check: spheres of the largest hull radius at both ends of the axis
    r_max = _hull_eval(data, ref, _slope_match(data, ref, 0.0, 1.0))[0]
    lower = dist_c - h * abs(nb0) - r_max
    minus_n = (-nx, -ny, -nz)
    if lower > 0.0:
        centre = (pos[0] + r00 * offset, pos[1] + r10 * offset, pos[2] + r20 * offset)
        return lower, minus_n, centre, 0.0, _hull_eval(data, ref, 0.0)[0], PLANE_APART
    # deepest point: support point for -n (body frame), slope matching r'(s) = nb0 / rho
    if rho == 0.0:
        s = -h if nb0 > 0.0 else h
        cb = (offset + s, 0.0, 0.0)
    else:
        s = _slope_match(data, ref, -nb0, rho)
        f = -_hull_eval(data, ref, s)[0] / rho
        cb = (offset + s, f * nb1, f * nb2)
    point = (pos[0] + r00 * cb[0] + r01 * cb[1] + r02 * cb[2],
             pos[1] + r10 * cb[0] + r11 * cb[1] + r12 * cb[2],
             pos[2] + r20 * cb[0] + r21 * cb[1] + r22 * cb[2])
    sep = (point[0] - plane_point[0]) * nx + (point[1] - plane_point[1]) * ny + (point[2] - plane_point[2]) * nz
    return sep, minus_n, point, s, _hull_eval(data, ref, s)[0], PLANE_OK


# ----------------------------------------------------------------------------------------------
# setup-time helpers (NumPy)
# ----------------------------------------------------------------------------------------------
def _coefficients(coefficients) -> np.ndarray:
    if coefficients is None:
        raise InputError("hull_coefficients must be a sequence of numbers (numpy.polyval order), got None")
    k = np.atleast_1d(as_float_array("hull_coefficients", coefficients))
    if k.ndim != 1 or k.size == 0:
        raise InputError(f"hull_coefficients must be a non-empty 1-D sequence of numbers, got {coefficients!r}")
    if not np.all(np.isfinite(k)):
        raise InputError(f"hull_coefficients must be finite, got {k.tolist()!r}")
    return k


def _length(length) -> float:
    try:
        L = float(length)
    except (TypeError, ValueError) as exc:
        raise InputError(f"length must be a number (m), got {length!r}") from exc
    if not (math.isfinite(L) and L > 0.0):
        raise InputError(f"length must be finite and > 0 (m), got {length!r}")
    return L


def _candidates(poly: np.ndarray, h: float) -> np.ndarray:
    """Points of ``[-h, h]`` where the polynomial ``poly`` can take its extremes: both ends and
    the real roots of its derivative inside the interval."""
    pts = [-h, h]
    dp = np.polyder(poly) if poly.size > 1 else np.zeros(1)
    if dp.size > 1 and np.any(dp != 0.0):
        # every root's real part: a spurious point only adds an evaluation, while a real root
        # that rounding moved off the real axis (a multiple root) is still caught
        for root in np.roots(np.trim_zeros(dp, "f")):
            t = float(root.real)
            if -h < t < h:
                pts.append(t)
    return np.array(pts, dtype=float)


def hull_derivative(coefficients) -> np.ndarray:
    """Coefficients (numpy.polyval order, 1/m^(n-2-i)) of ``r'(s)``: the spec's
    ``coefficientsHullDerivative``; ``[0.]`` for a constant hull."""
    k = _coefficients(coefficients)
    return np.polyder(k) if k.size > 1 else np.zeros(1)


def _check_hull(k: np.ndarray, L: float) -> None:
    h = 0.5 * L
    pts = _candidates(k, h)
    r = np.polyval(k, pts)
    i = int(np.argmin(r))
    if not r[i] > 0.0:
        raise InputError(f"coefficients {k.tolist()!r}: the hull radius must be > 0 on [-length/2, length/2], "
                         f"got r({pts[i]:.6g} m) = {r[i]:.6g} m")
    if k.size < 3:
        return
    k2 = np.polyder(k, 2)
    pts2 = _candidates(k2, h)
    r2 = np.polyval(k2, pts2)
    # the size of r'' on the interval, for a rounding tolerance
    scale = float(np.sum(np.abs(k2) * h ** np.arange(k2.size - 1, -1, -1)))
    j = int(np.argmax(r2))
    if r2[j] > 1e-12 * scale:
        raise InputError(f"coefficients {k.tolist()!r}: the hull must be convex (r'' <= 0 on "
                         f"[-length/2, length/2]), got r''({pts2[j]:.6g} m) = {r2[j]:.6g} 1/m")


def bounding_radius(coefficients, length, offset=0.0) -> float:
    """Radius (m) of the smallest sphere about the body origin that contains the roll whose centre
    sits at body ``x = offset`` (m): ``max_s sqrt((offset + s)^2 + r(s)^2)``, taken exactly over
    the ends and the real roots of its derivative (the rims of the end discs are the ends)."""
    k = _coefficients(coefficients)
    L = _length(length)
    h = 0.5 * L
    off = float(offset)
    f = np.polyadd(np.polymul(k, k), np.array([1.0, 2.0 * off, off * off]))
    pts = _candidates(f, h)
    val = np.polyval(f, pts)
    return float(math.sqrt(max(float(np.max(val)), 0.0)))


def roll_mass_properties(coefficients, length, density):
    """Mass properties of the solid roll, exact (Gauss-Legendre quadrature of polynomials).

    Returns ``(mass, centroid_s, principal_inertia)``: mass (kg) ``rho pi int r^2 ds``; the axial
    coordinate (m) of the centre of mass measured from the roll's centre, ``centroid_s``
    (``offset = -centroid_s``); the principal moments (kg m^2, shape (3,)) about the centre of
    mass in the body frame: ``I_xx = rho pi/2 int r^4 ds`` (about the axis) and
    ``I_yy = I_zz = rho pi int (r^4/4 + (s - s_bar)^2 r^2) ds``.
    """
    k = _coefficients(coefficients)
    L = _length(length)
    rho = float(density)
    if not (math.isfinite(rho) and rho > 0.0):
        raise InputError(f"density must be finite and > 0 (kg/m^3), got {density!r}")
    _check_hull(k, L)
    h = 0.5 * L
    # r^4 has degree 4(n-1), s^2 r^2 degree 2n: m nodes integrate degree 2m-1 exactly
    m = 2 * k.size + 1
    x, w = np.polynomial.legendre.leggauss(m)
    s = h * x
    w = h * w
    r = np.polyval(k, s)
    r2 = r * r
    vol = math.pi * float(w @ r2)
    mass = rho * vol
    sbar = math.pi * float(w @ (s * r2)) / vol
    i_xx = 0.5 * math.pi * rho * float(w @ (r2 * r2))
    i_yy = math.pi * rho * float(w @ (0.25 * r2 * r2 + (s - sbar) ** 2 * r2))
    return mass, sbar, np.array([i_xx, i_yy, i_yy])


def roll_shape_data(coefficients, length) -> np.ndarray:
    """The ``ROLL`` parameter block ``[n, length, r_bound, offset, k_0, ..., k_{n-1}]`` (float64).

    Validates ``length > 0``, ``r(s) > 0`` and ``r''(s) <= 0`` on ``[-L/2, L/2]`` (exactly: at the
    ends and at the real roots of ``r'`` resp. ``r'''``; raising :class:`~contactlab.errors.InputError`
    with the offending value).  ``offset = -s_bar`` puts the centre of mass at the body origin;
    ``r_bound`` is :func:`bounding_radius` about it.
    """
    k = _coefficients(coefficients)
    L = _length(length)
    _check_hull(k, L)
    if k.size > 1 and k[0] == 0.0:
        # leading zeros do not change the hull; without them r' of a quadratic is linear (closed form)
        nz = np.flatnonzero(k)
        k = k[nz[0]:] if nz.size else k[-1:]
    _, sbar, _ = roll_mass_properties(k, L, 1.0)
    offset = -sbar
    if abs(offset) <= 1e-15 * L:
        offset = 0.0
    r_bound = bounding_radius(k, L, offset)
    return np.concatenate(([float(k.size), L, r_bound, offset], k)).astype(np.float64)


def roll_surface(data_block, n_axial: int = 16, n_around: int = 32):
    """Closed triangulated surface of a roll (for VTK output), body frame.

    ``data_block`` is a ``ROLL`` block (:func:`roll_shape_data`) starting at index 0.  Returns
    ``(vertices (V, 3) float64 m, triangles (F, 3) int64)`` with ``V = (n_axial + 1) n_around + 2``
    (rings at ``n_axial + 1`` equally spaced ``s``, then the centres of the end discs at
    ``s = -L/2`` and ``s = +L/2``) and ``F = 2 n_around (n_axial + 1)``; triangles counter-clockwise
    seen from outside.
    """
    blk = np.asarray(data_block, dtype=float)
    n_axial = int(n_axial)
    n_around = int(n_around)
    if n_axial < 1 or n_around < 3:
        raise InputError(f"roll_surface needs n_axial >= 1 and n_around >= 3, got {n_axial}, {n_around}")
    n = int(blk[0])
    L, offset = blk[1], blk[3]
    k = blk[ROLL_HEADER:ROLL_HEADER + n]
    s = np.linspace(-0.5 * L, 0.5 * L, n_axial + 1)
    r = np.polyval(k, s)
    phi = 2.0 * math.pi * np.arange(n_around) / n_around
    verts = np.empty(((n_axial + 1) * n_around + 2, 3))
    ring = np.arange((n_axial + 1) * n_around).reshape(n_axial + 1, n_around)
    verts[:-2, 0] = np.repeat(offset + s, n_around)
    verts[:-2, 1] = (r[:, None] * np.cos(phi)[None, :]).ravel()
    verts[:-2, 2] = (r[:, None] * np.sin(phi)[None, :]).ravel()
    c_lo, c_hi = len(verts) - 2, len(verts) - 1
    verts[c_lo] = (offset - 0.5 * L, 0.0, 0.0)
    verts[c_hi] = (offset + 0.5 * L, 0.0, 0.0)
    j = np.arange(n_around)
    jn = (j + 1) % n_around
    tris = []
    for a in range(n_axial):
        va, vb = ring[a, j], ring[a + 1, j]
        vc, vd = ring[a + 1, jn], ring[a, jn]
        tris.append(np.stack([va, vd, vc], axis=1))
        tris.append(np.stack([va, vc, vb], axis=1))
    tris.append(np.stack([np.full(n_around, c_lo), ring[0, jn], ring[0, j]], axis=1))
    tris.append(np.stack([np.full(n_around, c_hi), ring[-1, j], ring[-1, jn]], axis=1))
    return verts, np.concatenate(tris).astype(np.int64)
