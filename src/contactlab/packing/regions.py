"""Regions for packing: signed functions ``f(points) -> values``, negative inside, in metres.

A region ``Omega`` is the set ``f(x) <= 0``; its boundary is ``f(x) = 0``.  The primitives below
(:func:`sphere`, :func:`torus`, :func:`box`, :func:`cylinder`, :func:`half_space`) return the exact
signed distance to their surface, with an analytic gradient.  The combinators :func:`union`
(minimum), :func:`intersection` (maximum), :func:`difference` and :func:`invert` (complement) keep
the sign right everywhere.  Their value never exceeds the distance to the boundary: it equals it
inside an intersection or difference of primitives and outside a union; inside a union it can be
smaller near the crease where two parts meet.  Each region records this (``exact_inside``,
``conservative_inside``, ...), and the relaxation checks such creases more carefully
(:mod:`contactlab.packing.levelset`).

Any callable ``f(points) -> values`` that maps an ``(N, 3)`` float array to an ``(N,)`` array can
be used as a region too (:func:`as_region`, :func:`function`); its gradient is then taken by
central differences with a step chosen by the caller (the relaxation uses a small fraction of
each sphere's radius).

Regions combine with operators as well: ``a | b`` (union), ``a & b`` (intersection), ``a - b``
(difference) and ``~a`` (complement).

Example
-------
>>> import numpy as np
>>> from contactlab.packing import regions
>>> ring = regions.torus(centre=(0, 0, 0), major_radius=0.05, minor_radius=0.01)
>>> ring(np.array([[0.05, 0.0, 0.0], [0.0, 0.0, 0.0]])).round(6).tolist()   # m; < 0 inside
[-0.01, 0.04]
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._arguments import as_positive, as_unit_normal, as_vec3, checked_call
from ..errors import InputError

__all__ = [
    "Region",
    "as_region",
    "function",
    "sphere",
    "torus",
    "box",
    "cylinder",
    "half_space",
    "union",
    "intersection",
    "difference",
    "invert",
]

#: default central-difference step, relative to the size of the point cloud, when the caller gives none
_DEFAULT_RELATIVE_STEP = 1e-7


def _points(points: Any) -> np.ndarray:
    """The points as a float64 (N, 3) array (a single 3-vector becomes (1, 3))."""
    try:
        p = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("points must be an (N, 3) array of numbers") from None
    if p.ndim == 1 and p.shape == (3,):
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 3:
        raise InputError(f"points must have shape (N, 3), got {p.shape}")
    return p


def _norm(v: np.ndarray) -> np.ndarray:
    """Row lengths (N,) of ``v`` (N, 3)."""
    return np.sqrt(np.einsum("ij,ij->i", v, v))


def _perpendicular(axis: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to the unit vector ``axis``, shape (3,)."""
    trial = np.eye(3)[int(np.argmin(np.abs(axis)))]
    e = trial - (trial @ axis) * axis
    return e / np.linalg.norm(e)


def _safe_unit(v: np.ndarray, fallback: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``v`` (N, 3) normalised, ``fallback`` (3,) where a row is zero; also the norms (N,)."""
    norm = _norm(v)
    ok = norm > 0.0
    out = np.empty_like(v)
    out[ok] = v[ok] / norm[ok, None]
    out[~ok] = fallback
    return out, norm


class Region:
    """A region ``f(x) <= 0`` of space.  Subclasses implement :meth:`_evaluate`.

    Calling the region, ``region(points)``, returns the signed values: ``points`` (N, 3) m ->
    (N,) m, negative inside.  :meth:`gradient` returns (N, 3) gradients (unit vectors for a signed
    distance) and :meth:`evaluate` both at once.  A subclass whose function is not an exact
    signed distance must set the flags below to False (or wrap a plain function with
    :func:`function` instead).
    """

    #: True when ``f`` is the exact signed distance at points inside (outside) the region.  The
    #: primitives are exact on both sides; an intersection is exact inside when its parts are, a
    #: union outside; a user function is taken as inexact unless declared a distance.  Where it
    #: is not exact, the relaxation refines the direction of its inside check
    #: (:mod:`contactlab.packing.levelset`).
    exact_inside: bool = True
    exact_outside: bool = True
    #: True when ``|f|`` never exceeds the true distance to the boundary inside (outside) the
    #: region: a sphere with ``f(centre) <= -radius`` is then surely inside.  Kept by unions and
    #: intersections of such regions; a user function has it only when declared a distance.
    conservative_inside: bool = True
    conservative_outside: bool = True

    def __call__(self, points) -> np.ndarray:
        """Signed values (N,) m at ``points`` (N, 3) m; negative inside."""
        return self._value(_points(points))

    def evaluate(self, points, step=None) -> tuple[np.ndarray, np.ndarray]:
        """Values (N,) and gradients (N, 3) at ``points`` (N, 3).

        ``step`` (m, a scalar or an (N,) array) is the central-difference step used for parts of
        the region given as plain functions; the analytic parts ignore it.  Default: ``1e-7`` times
        the largest coordinate magnitude of the points (``1e-7`` m when all are at the origin).
        """
        p = _points(points)
        return self._evaluate(p, _step_array(step, p))

    def gradient(self, points, step=None) -> np.ndarray:
        """Gradients (N, 3) of the signed function at ``points`` (N, 3); see :meth:`evaluate`."""
        return self.evaluate(points, step)[1]

    # -- to be provided by subclasses; p is a validated (N, 3) array, step an (N,) array
    def _value(self, p: np.ndarray) -> np.ndarray:
        return self._evaluate(p, None)[0]

    def _evaluate(self, p: np.ndarray, step: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _creases(self, p: np.ndarray, r: np.ndarray, inside: bool) -> np.ndarray:
        """(N,) bool: where a sphere of radius ``r`` (N,) centred at ``p`` (N, 3) may reach a place
        at which ``f`` is not the distance on the ``inside`` (or outside) of the region, so that
        the gradient at the centre need not point to the part of the sphere that pokes out
        furthest.  None for a primitive."""
        return np.zeros(len(p), dtype=bool)

    # -- operators
    def __or__(self, other):
        return union(self, other)

    def __and__(self, other):
        return intersection(self, other)

    def __sub__(self, other):
        return difference(self, other)

    def __ror__(self, other):
        return union(other, self)

    def __rand__(self, other):
        return intersection(other, self)

    def __rsub__(self, other):
        return difference(other, self)

    def __invert__(self):
        return invert(self)


def _step_array(step, p: np.ndarray) -> np.ndarray:
    """The central-difference step as an (N,) array of positive finite floats."""
    n = p.shape[0]
    if step is None:
        scale = float(np.max(np.abs(p))) if n else 0.0   # >= half the extent of the cloud
        return np.full(n, _DEFAULT_RELATIVE_STEP * (scale if scale > 0.0 else 1.0))
    h = np.asarray(step, dtype=np.float64)
    if h.ndim == 0:
        h = np.full(n, float(h))
    if h.shape != (n,) or not np.all(np.isfinite(h) & (h > 0.0)):
        raise InputError(f"step must be a positive finite number or an ({n},) array of them")
    return h


def _central_gradient(func: Callable[[np.ndarray], np.ndarray], p: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Central-difference gradient (N, 3) of ``func`` at ``p`` (N, 3) with per-point steps ``step`` (N,).

    All 6 N shifted points go to ``func`` in one call.
    """
    n = p.shape[0]
    shifts = np.zeros((6, n, 3))
    for k in range(3):  # 6 shifted copies, a loop over the axes (not over spheres)
        shifts[2 * k, :, k] = step
        shifts[2 * k + 1, :, k] = -step
    values = func((p[None, :, :] + shifts).reshape(6 * n, 3)).reshape(6, n)
    return np.stack([(values[2 * k] - values[2 * k + 1]) / (2.0 * step) for k in range(3)], axis=1)


# ---------------------------------------------------------------------------- user functions
class Function(Region):
    """A region given by a user callable ``f(points (N, 3)) -> (N,)``, optionally with its gradient.

    Every call checks that ``f`` returns ``N`` finite values; the gradient, when not given, is
    taken by central differences.
    """

    def __init__(self, func: Callable, gradient: Callable | None = None, name: str | None = None,
                 distance: bool = False):
        if not callable(func):
            raise InputError(f"region must be a Region or a callable f(points) -> values, got {type(func).__name__}")
        if gradient is not None and not callable(gradient):
            raise InputError(f"gradient must be a callable g(points) -> (N, 3) array, got {type(gradient).__name__}")
        self.func = func
        self.grad = gradient
        self.name = name or getattr(func, "__name__", type(func).__name__)
        self.exact_inside = self.exact_outside = bool(distance)
        self.conservative_inside = self.conservative_outside = bool(distance)

    def _call(self, p: np.ndarray) -> np.ndarray:
        n = p.shape[0]
        try:
            raw = self.func(p)
        except InputError:
            raise
        except Exception as exc:  # a user function that cannot take an (N, 3) array
            raise InputError(f"region function {self.name!r} failed on an ({n}, 3) array of points: "
                             f"{type(exc).__name__}: {exc}; it must map (N, 3) points to (N,) values") from exc
        try:
            values = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"region function {self.name!r} must return numbers, got {type(raw).__name__}") from None
        if values.shape != (n,):
            raise InputError(f"region function {self.name!r} returned shape {values.shape} for {n} points; "
                             f"it must return an array of shape ({n},) (one value per point)")
        bad = ~np.isfinite(values)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(f"region function {self.name!r} returned {float(values[k])!r} at point {p[k].tolist()}; "
                             f"it must return finite values (negative inside, in m)")
        return values

    def _value(self, p):
        return self._call(p)

    def _creases(self, p, r, inside):
        return np.full(len(p), not self.exact_inside)

    def _evaluate(self, p, step):
        values = self._call(p)
        if self.grad is not None:
            n = p.shape[0]
            g = np.asarray(self.grad(p), dtype=np.float64)
            if g.shape != (n, 3):
                raise InputError(f"gradient of region function {self.name!r} returned shape {g.shape} for {n} "
                                 f"points; it must return shape ({n}, 3)")
            return values, g
        if step is None:
            step = _step_array(None, p)
        return values, _central_gradient(self._call, p, step)


@checked_call
def function(func: Callable, gradient: Callable | None = None, name: str | None = None, *,
             distance: bool = False) -> Region:
    """A region from a user callable.

    Parameters
    ----------
    func : callable
        ``func(points)`` with ``points`` an (N, 3) float array, m, returns (N,) finite values,
        negative inside the region (a signed distance in m is best; any function with the right
        sign and a nonzero gradient at the boundary works).
    gradient : callable, optional
        ``gradient(points)`` -> (N, 3); default: central differences.
    name : str, optional
        Used in error messages (default: the function's ``__name__``).
    distance : bool
        Declare ``func`` an exact signed distance (m).  The relaxation then trusts its inside check
        along the gradient at the centre and skips the refinement of that direction.
    """
    return Function(func, gradient, name, distance)


def as_region(region: Any) -> Region:
    """``region`` itself when it is a :class:`Region`, else a :class:`Function` wrapping the callable."""
    if isinstance(region, Region):
        return region
    if callable(region):
        return Function(region)
    raise InputError(f"region must be a contactlab.packing.regions region or a callable f(points) -> values "
                     f"(negative inside), got {type(region).__name__}: {region!r:.80}")


# ---------------------------------------------------------------------------- primitives
class _Sphere(Region):
    def __init__(self, centre, radius):
        self.centre = as_vec3("centre", centre, unit="m")
        self.radius = as_positive("radius", radius, "m")

    def _value(self, p):
        return _norm(p - self.centre) - self.radius

    def _evaluate(self, p, step):
        n, dist = _safe_unit(p - self.centre, np.zeros(3))  # zero gradient at the centre (undefined there)
        return dist - self.radius, n


@checked_call
def sphere(centre, radius) -> Region:
    """Solid ball: ``f = |x - centre| - radius`` (exact signed distance, m).

    ``centre`` 3 floats, m; ``radius`` > 0, m.  The gradient is zero at the centre, where it is
    undefined (the relaxation then picks a random direction).
    """
    return _Sphere(centre, radius)


class _Torus(Region):
    def __init__(self, centre, major_radius, minor_radius, axis):
        self.centre = as_vec3("centre", centre, unit="m")
        self.major = as_positive("major_radius", major_radius, "m")
        self.minor = as_positive("minor_radius", minor_radius, "m")
        self.axis = as_unit_normal("axis", axis)
        self._radial_fallback = _perpendicular(self.axis)

    def _parts(self, p):
        d = p - self.centre
        z = d @ self.axis
        q = d - z[:, None] * self.axis
        e, rho = _safe_unit(q, self._radial_fallback)  # on the axis: any radial direction is nearest
        a = rho - self.major
        return z, e, a, np.hypot(a, z)

    def _value(self, p):
        return self._parts(p)[3] - self.minor

    def _evaluate(self, p, step):
        z, e, a, s = self._parts(p)
        g = a[:, None] * e + z[:, None] * self.axis
        ok = s > 0.0
        g[ok] /= s[ok, None]
        g[~ok] = 0.0  # on the centre circle of the tube: undefined
        return s - self.minor, g


@checked_call
def torus(centre, major_radius, minor_radius, axis=(0.0, 0.0, 1.0)) -> Region:
    """Solid torus (a ring): ``f = sqrt((rho - R)^2 + z^2) - a`` (exact signed distance, m).

    Parameters
    ----------
    centre : 3 floats, m
        Centre of the ring.
    major_radius : float, m
        ``R``, distance from the axis to the centre circle of the tube.
    minor_radius : float, m
        ``a``, radius of the tube.
    axis : 3 floats
        Axis of symmetry (normalised here); ``z`` above is measured along it and ``rho`` from it.
    """
    return _Torus(centre, major_radius, minor_radius, axis)


class _Box(Region):
    def __init__(self, lower, upper):
        lo = as_vec3("lower", lower, unit="m")
        hi = as_vec3("upper", upper, unit="m")
        if np.any(hi <= lo):
            k = int(np.flatnonzero(hi <= lo)[0])
            raise InputError(f"box: upper must exceed lower on every axis, got lower={lo.tolist()}, "
                             f"upper={hi.tolist()} (axis {'xyz'[k]})")
        self.lower, self.upper = lo, hi
        self.middle = 0.5 * (lo + hi)
        self.half = 0.5 * (hi - lo)

    def _evaluate(self, p, step):
        d = p - self.middle
        q = np.abs(d) - self.half                  # (N, 3): > 0 beyond a face pair
        out = np.maximum(q, 0.0)
        out_norm = _norm(out)
        inner = np.minimum(q.max(axis=1), 0.0)
        value = out_norm + inner
        sgn = np.where(d >= 0.0, 1.0, -1.0)
        g = np.zeros_like(p)
        outside = out_norm > 0.0
        g[outside] = sgn[outside] * out[outside] / out_norm[outside, None]
        k = np.argmax(q, axis=1)                   # inside: the nearest face
        rows = np.flatnonzero(~outside)
        g[rows, k[rows]] = sgn[rows, k[rows]]
        return value, g

    def _value(self, p):
        q = np.abs(p - self.middle) - self.half
        return _norm(np.maximum(q, 0.0)) + np.minimum(q.max(axis=1), 0.0)


@checked_call
def box(lower, upper) -> Region:
    """Axis-aligned solid box between the corners ``lower`` and ``upper`` (3 floats each, m).

    Exact signed distance (m): to the nearest face inside, to the nearest face, edge or corner outside.
    """
    return _Box(lower, upper)


class _Cylinder(Region):
    def __init__(self, centre, radius, height, axis):
        self.centre = as_vec3("centre", centre, unit="m")
        self.radius = as_positive("radius", radius, "m")
        self.height = as_positive("height", height, "m")
        self.axis = as_unit_normal("axis", axis)
        self._radial_fallback = _perpendicular(self.axis)

    def _evaluate(self, p, step):
        d = p - self.centre
        z = d @ self.axis
        q = d - z[:, None] * self.axis
        e, rho = _safe_unit(q, self._radial_fallback)
        a = rho - self.radius                      # > 0 beyond the mantle
        b = np.abs(z) - 0.5 * self.height          # > 0 beyond a cap
        ap, bp = np.maximum(a, 0.0), np.maximum(b, 0.0)
        out_norm = np.hypot(ap, bp)
        value = out_norm + np.minimum(np.maximum(a, b), 0.0)
        zdir = np.where(z >= 0.0, 1.0, -1.0)[:, None] * self.axis
        outside = out_norm > 0.0
        safe = np.where(outside, out_norm, 1.0)
        g_out = (ap / safe)[:, None] * e + (bp / safe)[:, None] * zdir
        g_in = np.where((a >= b)[:, None], e, zdir)
        return value, np.where(outside[:, None], g_out, g_in)

    def _value(self, p):
        d = p - self.centre
        z = d @ self.axis
        rho = _norm(d - z[:, None] * self.axis)
        a = rho - self.radius
        b = np.abs(z) - 0.5 * self.height
        return np.hypot(np.maximum(a, 0.0), np.maximum(b, 0.0)) + np.minimum(np.maximum(a, b), 0.0)


@checked_call
def cylinder(centre, radius, height, axis=(0.0, 0.0, 1.0)) -> Region:
    """Solid circular cylinder with flat caps (exact signed distance, m).

    ``centre`` (3 floats, m) is the middle of its axis, ``radius`` and ``height`` (the length
    between the caps) are > 0 m, ``axis`` its direction (normalised here).
    """
    return _Cylinder(centre, radius, height, axis)


class _HalfSpace(Region):
    def __init__(self, point, normal):
        self.point = as_vec3("point", point, unit="m")
        self.normal = as_unit_normal("normal", normal)

    def _evaluate(self, p, step):
        return self._value(p), np.broadcast_to(-self.normal, p.shape).copy()

    def _value(self, p):
        return -(p - self.point) @ self.normal


@checked_call
def half_space(point, normal) -> Region:
    """The half-space on the side of a plane that ``normal`` points into: ``f = -(x - point) . n``.

    Same convention as :meth:`contactlab.Scene.add_wall`: ``point`` (3 floats, m) on the plane,
    ``normal`` (normalised here) pointing into the region.
    """
    return _HalfSpace(point, normal)


# ---------------------------------------------------------------------------- combinators
class _Combined(Region):
    def __init__(self, parts, take_max: bool, what: str):
        if len(parts) < 1:
            raise InputError(f"{what} needs at least one region")
        self.parts = tuple(as_region(r) for r in parts)
        self.take_max = take_max
        exact_in = all(r.exact_inside for r in self.parts)
        exact_out = all(r.exact_outside for r in self.parts)
        single = len(self.parts) == 1
        # inside an intersection of distances max_k f_k is the distance (the nearest boundary point
        # of the deepest-limiting part bounds all of them); outside a union, min_k f_k likewise
        self.exact_inside = exact_in and (take_max or single)
        self.exact_outside = exact_out and (not take_max or single)
        # the boundary of a union or intersection lies on the parts' boundaries, so the distance
        # to it is never below the parts' distances that min / max picks
        self.conservative_inside = all(r.conservative_inside for r in self.parts)
        self.conservative_outside = all(r.conservative_outside for r in self.parts)

    def _value(self, p):
        values = np.stack([r._value(p) for r in self.parts])
        return values.max(axis=0) if self.take_max else values.min(axis=0)

    def _creases(self, p, r, inside):
        risk = np.zeros(len(p), dtype=bool)
        for part in self.parts:
            risk |= part._creases(p, r, inside)
        if len(self.parts) > 1 and inside != self.take_max:
            # min (union) inside, max (intersection) outside: where two parts' boundaries are
            # within reach the sphere may straddle their crease (|f| <= distance for these parts)
            near = sum((np.abs(part._value(p)) < r).astype(np.int64) for part in self.parts)
            risk |= near >= 2
        return risk

    def _evaluate(self, p, step):
        evaluated = [r._evaluate(p, step) for r in self.parts]
        values = np.stack([v for v, _ in evaluated])           # (K, N)
        grads = np.stack([g for _, g in evaluated])            # (K, N, 3)
        k = values.argmax(axis=0) if self.take_max else values.argmin(axis=0)
        rows = np.arange(p.shape[0])
        return values[k, rows], grads[k, rows]


class _Inverted(Region):
    def __init__(self, region):
        self.region = as_region(region)
        self.exact_inside = self.region.exact_outside
        self.exact_outside = self.region.exact_inside
        self.conservative_inside = self.region.conservative_outside
        self.conservative_outside = self.region.conservative_inside

    def _value(self, p):
        return -self.region._value(p)

    def _creases(self, p, r, inside):
        return self.region._creases(p, r, not inside)

    def _evaluate(self, p, step):
        v, g = self.region._evaluate(p, step)
        return -v, -g


@checked_call
def union(*regions) -> Region:
    """Points in any of ``regions``: ``f = min_k f_k``."""
    return _Combined(regions, take_max=False, what="union")


@checked_call
def intersection(*regions) -> Region:
    """Points in all of ``regions``: ``f = max_k f_k``."""
    return _Combined(regions, take_max=True, what="intersection")


@checked_call
def invert(region) -> Region:
    """The complement of ``region``: ``f = -f_region``.  Relaxing into it pushes spheres out of ``region``."""
    return _Inverted(region)


@checked_call
def difference(region, *others) -> Region:
    """Points in ``region`` and in none of ``others``: ``f = max(f_region, -f_1, -f_2, ...)``."""
    if not others:
        raise InputError("difference needs a region and at least one region to remove from it")
    return intersection(region, *(invert(r) for r in others))
