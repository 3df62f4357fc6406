"""Level-set static relaxation: move spheres into (or out of) a region before a dynamic run.

The move of one sphere (spec 004, "static relaxation")
-------------------------------------------------------
A sphere has centre ``x0`` and radius ``r``; the region is ``f(x) <= 0``.  With the outward unit
normal ``n = grad f(x0) / |grad f(x0)|``::

    d0 = f(x0)
    d1 = f(x0 - sign(d0) r n)        # the point one radius towards the boundary

If ``d0 < 0`` and ``d1 < 0`` the sphere is inside (its surface point nearest the boundary along
``n`` is inside) and does not move.  Otherwise ``f`` is taken as linear on the segment between
the two points, ``f(x0 - a sign(d0) r n) ~ (1 - a) d0 + a d1``, which vanishes at
``a = d0 / (d0 - d1)``: the boundary crosses the line at ``xb = x0 - a sign(d0) r n``.  The sphere
is moved so that its centre ends one radius inside that crossing, ``x0 + dx = xb - r n``::

    dx = -(1 + a sign(d0)) r n = -(1 + |d0| / (d0 - d1)) r n

(a centre outside, ``d0 > 0``, moves by ``(1 + a) r`` inwards; a centre inside whose surface
pokes out, ``d0 < 0 <= d1``, by ``(1 - a) r`` inwards, with ``0 < a <= 1``).  For an exact signed
distance the interpolation is exact, ``|dx|`` is how far the surface pokes out, and one move
leaves the sphere touching the boundary from inside.  A centre exactly on the boundary
(``d0 = 0``) is treated as outside (it moves by ``r``).  Two safeguards, used only when the
function misbehaves: where the gradient is zero or not finite (the centre of a ball region), ``n``
is a random unit vector; where ``f`` does not decrease from an outside centre towards the
boundary (``d1 >= d0 > 0``), the Newton estimate ``dx = -(d0 / |grad f| + r) n`` replaces the
interpolation.

Where ``f`` is not a distance
-----------------------------
The inside check looks at one point of the sphere, ``x0 + r n``.  That point pokes out furthest
when ``f`` is an exact signed distance inside the region (the primitives of
:mod:`~contactlab.packing.regions`, their intersections and differences, the complement of a
primitive).  It need not be otherwise: inside a union ``f = min(f1, f2)`` the gradient at the
centre can point to a face hidden inside the other part while the sphere pokes out at the
crease (by most of a radius at the re-entrant edge of an L made of two boxes), and the level sets
of a plain function (an ellipsoid's ``sum (x_i / a_i)^2 - 1``) are not parallel.  For such regions,
and only for spheres that can reach a crease (two parts' boundaries within one radius) or for
every inside sphere of a plain function, the direction is refined before the check
(:func:`_refine`): the largest ``f`` on the sphere surface is searched by climbing from ``n`` and
from the best of 26 fixed directions (gradient steps, and golden-section searches along
great-circle arcs where a step jumps across a crease).  ``d1`` and ``n`` of the formula above are
then taken at the point found; for an exact distance nothing changes.

Relaxation
----------
:func:`relax_into` repeats the move for all spheres at once (one vectorised sweep) and, with
``separate=True``, alternates it with a sphere-sphere sweep (:mod:`contactlab.packing.separation`):
overlapping pairs (found with :class:`scipy.spatial.cKDTree`) are pushed apart along the line of
centres by half the overlap each (the displacements of a sphere from all its pairs are summed).
Each sweep ends with the boundary move, so the spheres are inside the region after every sweep;
overlaps left by the boundary moves shrink from sweep to sweep until they are below the tolerance.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from .._arguments import (as_bool, as_int, as_nonnegative, as_positive, as_positive_array, as_vec3, as_vec3_array,
                         checked_call)
from ..errors import InputError
from . import regions as _regions
from .order import checked_order, generated_order
from .separation import PairList, random_units

__all__ = ["RelaxResult", "levelset_move", "relax_into", "fill_region", "measure"]

#: central-difference step for user functions, relative to each sphere's radius
GRADIENT_STEP = 1e-4
#: refinements of the direction of the inside check where the region's function is not an exact distance
REFINE_STEPS = 2
#: golden sections per arc search of a refinement (the arc shrinks to 0.618**ARC_SECTIONS of its angle)
ARC_SECTIONS = 20
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: the 26 unit directions to the faces, edges and corners of a cube: starting probes of a refinement
_DIRECTIONS = np.array([(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)
                        if (i, j, k) != (0, 0, 0)], dtype=np.float64)
_DIRECTIONS /= np.linalg.norm(_DIRECTIONS, axis=1)[:, None]


@dataclass(frozen=True, repr=False)
class RelaxResult:
    """Outcome of :func:`relax_into`.

    Attributes
    ----------
    positions : (N, 3) float64 array, m
        Relaxed sphere centres.
    converged : bool
        True when every sphere pokes out of the region by at most ``tolerance`` times its radius
        and (with ``separate=True``) every pair overlaps by at most ``tolerance`` times the smaller
        radius.
    iterations : int
        Sweeps done (0 when the input already satisfied the tolerance).
    max_violation : float, m
        Largest distance by which a sphere's surface pokes out of the region (0 when none does),
        as estimated by the level-set interpolation (exact for a signed-distance region).
    max_overlap : float
        Largest overlap of two spheres divided by the smaller radius (0 when none overlap).
    seconds : float
        Wall-clock time of the relaxation, s.
    """

    positions: np.ndarray
    converged: bool
    iterations: int
    max_violation: float
    max_overlap: float
    seconds: float = 0.0

    def __repr__(self) -> str:
        return (f"RelaxResult(n={self.positions.shape[0]}, converged={self.converged}, "
                f"iterations={self.iterations}, max_violation={self.max_violation:.3g} m, "
                f"max_overlap={self.max_overlap:.3g}, seconds={self.seconds:.3g})")


# ---------------------------------------------------------------------------- building blocks
def _unit_rows(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``g`` (N, 3) normalised, and a mask (N,) of the rows that could be (finite, nonzero)."""
    norm = np.sqrt(np.einsum("ij,ij->i", g, g))
    good = np.isfinite(norm) & (norm > 0.0)
    out = np.zeros_like(g)
    out[good] = g[good] / norm[good, None]
    return out, good


def _move(region: _regions.Region, x: np.ndarray, r: np.ndarray, rng: np.random.Generator):
    """The level-set move of every sphere: displacements (N, 3) m and how far each pokes out (N,) m."""
    step = GRADIENT_STEP * r
    d0, g = region._evaluate(x, step)
    n, good = _unit_rows(g)
    gnorm = np.sqrt(np.einsum("ij,ij->i", g, g))
    bad = np.flatnonzero(~good)
    if len(bad):
        n[bad] = random_units(rng, len(bad))
    s = np.where(d0 >= 0.0, 1.0, -1.0)            # sign(d0), with a centre on the boundary counted as outside
    probe = x - (s * r)[:, None] * n
    if region.exact_inside:
        refine = np.zeros(0, dtype=np.int64)
    else:
        # f(x0) <= -r with a conservative f: surely inside; elsewhere only near a crease
        band = (d0 < 0.0) & (d0 > -r) if region.conservative_inside else d0 < 0.0
        cand = np.flatnonzero(band)
        refine = cand[region._creases(x[cand], r[cand], True)]
    if len(refine) == 0:
        d1 = region._value(probe)
    else:
        d1 = np.empty_like(d0)
        rest = np.ones(len(d0), dtype=bool)
        rest[refine] = False
        d1[rest] = region._value(probe[rest])
        n[refine], d1[refine] = _refine(region, x[refine], r[refine], n[refine], step[refine])
    denom = d0 - d1
    inside = (d0 < 0.0) & (d1 < 0.0)
    secant = ~inside & (denom != 0.0) & ((d0 < 0.0) | (denom > 0.0))
    # step length along -n, as a multiple of r: 1 + |d0| / (d0 - d1)
    factor = np.zeros_like(d0)
    factor[secant] = 1.0 + np.abs(d0[secant]) / denom[secant]
    newton = ~inside & ~secant                    # d0 >= 0 and f does not decrease towards the boundary
    if newton.any():
        dist = np.where(good[newton], d0[newton] / np.where(good[newton], gnorm[newton], 1.0), 0.0)
        factor[newton] = 1.0 + dist / r[newton]
    depth = factor * r
    return -depth[:, None] * n, depth


def _slerp(a: np.ndarray, b: np.ndarray, omega: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Unit vectors (M, 3) a fraction ``t`` (M,) along the great-circle arcs from ``a`` to ``b``
    (unit, (M, 3)) of angles ``omega`` (M,), 0 < omega < pi."""
    sin = np.sin(omega)
    return (np.sin((1.0 - t) * omega) / sin)[:, None] * a + (np.sin(t * omega) / sin)[:, None] * b


def _climb(region, x, r, u, f_u, step):
    """Climb ``f`` on the spheres' surfaces from the directions ``u`` (M, 3), where ``f`` of the
    probes ``x + r u`` is ``f_u`` (M,).

    Each of ``REFINE_STEPS`` steps takes the unit gradient ``m`` of ``f`` at the probe (the fixed
    point of ``u <- m`` is a stationary point of ``f`` on the sphere).  Where ``f`` is larger at
    ``x + r m`` the step is taken; where it is not, the step overshot a crease (of a union: the
    gradient jumps between two parts there) and the largest ``f`` is searched on the great-circle
    arc from ``u`` to ``m`` by golden sections.  The direction with the largest ``f`` seen is
    kept, so ``f`` never decreases.  Returns the directions (M, 3) and their ``f`` (M,).
    """
    best_n, best_f = u.copy(), f_u.copy()
    for _ in range(REFINE_STEPS):                 # passes over all these spheres, not a loop over spheres
        _, g = region._evaluate(x + r[:, None] * best_n, step)
        m, good = _unit_rows(g)
        f_m = region._value(x + r[:, None] * m)
        step_up = good & (f_m > best_f)           # a plain fixed-point step that gains: take it
        best_n[step_up], best_f[step_up] = m[step_up], f_m[step_up]
        omega = np.arccos(np.clip(np.einsum("ij,ij->i", best_n, m), -1.0, 1.0))
        arc = np.flatnonzero(good & ~step_up & (omega > 1e-6) & (omega < np.pi - 1e-6))
        if len(arc) == 0:
            continue
        a, b, w, xa, ra = best_n[arc], m[arc], omega[arc], x[arc], r[arc]
        top_t, top_f = np.zeros(len(arc)), best_f[arc].copy()

        def value(t):
            nonlocal top_t, top_f
            f = region._value(xa + ra[:, None] * _slerp(a, b, w, t))
            better = f > top_f
            top_t, top_f = np.where(better, t, top_t), np.where(better, f, top_f)
            return f

        lo, hi = np.zeros(len(arc)), np.ones(len(arc))
        c, d = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
        fc, fd = value(c), value(d)
        for _ in range(ARC_SECTIONS):             # golden sections of all arcs at once
            left = fc >= fd                       # the maximum is in [lo, d]
            hi = np.where(left, d, hi)
            lo = np.where(left, lo, c)
            c_new = np.where(left, hi - _GOLDEN * (hi - lo), d)
            d_new = np.where(left, c, lo + _GOLDEN * (hi - lo))
            f_probe = value(np.where(left, c_new, d_new))
            fc, fd = np.where(left, f_probe, fd), np.where(left, fc, f_probe)
            c, d = c_new, d_new
        improved = top_f > best_f[arc]
        rows = arc[improved]
        best_n[rows] = _slerp(a[improved], b[improved], w[improved], top_t[improved])
        best_f[rows] = top_f[improved]
    return best_n, best_f


def _refine(region, x, r, n, step):
    """The direction of the inside check, for centres inside a region whose function is not an
    exact distance there.

    The point of the sphere surface that pokes out furthest is where ``f`` is largest on it, and
    ``f`` may have several local maxima there (at a crease of a union, or on a face of a union
    that no part's gradient at the centre points to).  Two climbs (:func:`_climb`): from ``n``
    (the unit gradient at the centre, as in the notes) and from the best of 26 fixed directions
    (to the faces, edges and corners of a cube); the larger result wins.

    ``x`` (M, 3), ``r`` (M,), ``n`` (M, 3) unit, ``step`` (M,) central-difference steps.
    Returns the direction (M, 3) and ``f`` at ``x + r * direction`` (M,).
    """
    m = len(x)
    rows = np.arange(m)
    starts = np.concatenate([n[:, None, :], np.broadcast_to(_DIRECTIONS, (m, len(_DIRECTIONS), 3))], axis=1)
    f_all = region._value((x[:, None, :] + r[:, None, None] * starts).reshape(-1, 3)).reshape(m, -1)
    pick = 1 + np.argmax(f_all[:, 1:], axis=1)
    # both climbs in one batch: rows 0..m-1 from n, rows m..2m-1 from the best fixed direction
    u, f = _climb(region, np.concatenate([x, x]), np.concatenate([r, r]),
                  np.concatenate([n, starts[rows, pick]]), np.concatenate([f_all[:, 0], f_all[rows, pick]]),
                  np.concatenate([step, step]))
    second = f[m:] > f[:m]
    return np.where(second[:, None], u[m:], u[:m]), np.where(second, f[m:], f[:m])


def _check_region_shape(region: _regions.Region, x: np.ndarray) -> None:
    """Evaluate once to turn a wrong user function into an InputError before any sweep."""
    values = region(x)
    if values.shape != (x.shape[0],):
        raise InputError(f"region returned shape {values.shape} for {x.shape[0]} points; expected ({x.shape[0]},)")


def _rng(seed) -> np.random.Generator:
    """The generator of ``seed``: None (fresh entropy) or an integer >= 0."""
    return np.random.default_rng(None if seed is None else as_int("seed", seed, low=0))


def _common_inputs(region, positions, radii):
    x = as_vec3_array("positions", positions, unit="m")
    r = as_positive_array("radii", radii, x.shape[0], "m")
    reg = _regions.as_region(region)
    return reg, x, r


# ---------------------------------------------------------------------------- public functions
@checked_call
def levelset_move(region, positions, radii, *, seed=None) -> np.ndarray:
    """One level-set move of every sphere (the formula of the module docstring), without applying it.

    Parameters
    ----------
    region : Region or callable
        ``f(points (N, 3)) -> (N,)``, negative inside, m.
    positions : (N, 3) array, m
        Sphere centres.
    radii : (N,) array or float, m
        Sphere radii (> 0).
    seed : int, optional
        Seed of the random directions used where the gradient vanishes.

    Returns
    -------
    (N, 3) float64 array, m
        Displacement of each sphere; zero rows for spheres already inside.
    """
    reg, x, r = _common_inputs(region, positions, radii)
    if x.shape[0] == 0:
        return np.zeros((0, 3))
    _check_region_shape(reg, x)
    return _move(reg, x, r, _rng(seed))[0]


@checked_call
def measure(region, positions, radii) -> tuple[float, float]:
    """``(max_violation, max_overlap)`` of a packing: how far (m) a sphere surface pokes out of
    ``region`` at most (level-set estimate, exact for a signed distance) and the largest pair
    overlap divided by the smaller radius.  ``positions`` (N, 3) m, ``radii`` (N,) m."""
    reg, x, r = _common_inputs(region, positions, radii)
    if x.shape[0] == 0:
        return 0.0, 0.0
    _check_region_shape(reg, x)
    depth = _move(reg, x, r, np.random.default_rng(0))[1]
    return float(depth.max()), PairList(r).sweep(x, np.random.default_rng(0))[1]


@checked_call
def relax_into(region, positions, radii, *, inside: bool = True, iterations: int = 200, tolerance: float = 1e-3,
               separate: bool = True, seed=None) -> RelaxResult:
    """Move spheres into a region (or out of it) until none pokes out and, optionally, none overlap.

    Parameters
    ----------
    region : Region or callable
        A region from :mod:`contactlab.packing.regions` or any vectorised callable
        ``f(points (N, 3)) -> (N,)``, negative inside, m (a signed distance is best; a plain
        callable's gradient is taken by central differences with steps of ``1e-4`` radius).
    positions : (N, 3) array, m
        Initial centres (not modified).
    radii : (N,) array or float, m
        Radii, > 0.
    inside : bool
        True: move the spheres into the region; False: out of it (into its complement).
    iterations : int
        Maximum number of sweeps (>= 0).  A sweep is one overlap push (with ``separate``) followed
        by one level-set move of every sphere.
    tolerance : float
        Relative tolerance (> 0): the run stops when every sphere pokes out by at most
        ``tolerance * radius`` and every pair overlaps by at most ``tolerance`` times the smaller radius.
    separate : bool
        Also push overlapping spheres apart (half the overlap each).  False: only the boundary moves.
    seed : int, optional
        Seed of the random directions used for coincident centres and zero gradients.

    Returns
    -------
    RelaxResult
        ``positions`` (N, 3) m, ``converged``, ``iterations`` (sweeps done), ``max_violation`` (m)
        and ``max_overlap`` (fraction of the smaller radius) of the returned positions.  A region
        too small for the spheres, or a packing too dense to separate, gives ``converged=False``
        with these numbers rather than an error.

    Raises
    ------
    InputError
        Non-finite positions, radii <= 0, a region that is not callable or returns the wrong shape
        or non-finite values, ``iterations < 0`` or ``tolerance <= 0``.

    Example
    -------
    >>> import numpy as np
    >>> from contactlab.packing import regions, relax_into
    >>> rng = np.random.default_rng(1)
    >>> ball = regions.sphere(centre=(0, 0, 0), radius=0.01)
    >>> res = relax_into(ball, rng.uniform(-0.012, 0.012, (100, 3)), 1e-3)
    >>> res.converged, res.max_violation <= 1e-6, res.max_overlap <= 1e-3
    (True, True, True)
    """
    t0 = time.perf_counter()
    reg, x, r = _common_inputs(region, positions, radii)
    if not isinstance(iterations, (int, np.integer)) or isinstance(iterations, bool) or iterations < 0:
        raise InputError(f"iterations must be an integer >= 0, got {iterations!r}")
    tol = as_positive("tolerance", tolerance)
    separate = as_bool("separate", separate)
    if not as_bool("inside", inside):
        reg = _regions.invert(reg)
    rng = _rng(seed)
    n = x.shape[0]
    if n == 0:
        return RelaxResult(x, True, 0, 0.0, 0.0, time.perf_counter() - t0)
    _check_region_shape(reg, x)

    pair_list = PairList(r)
    sweeps, ok, depth, dx_wall = 0, False, None, None
    while True:
        dx_pairs, overlap, _ = pair_list.sweep(x, rng)
        depth = dx_wall = None
        if not separate or overlap <= tol:        # the boundary is checked only when it can decide
            dx_wall, depth = _move(reg, x, r, rng)
            if np.all(depth <= tol * r):
                ok = True
                break
        if sweeps == iterations:
            break
        sweeps += 1
        if separate:
            x = x + dx_pairs
            dx_wall = _move(reg, x, r, rng)[0]
        x = x + dx_wall
    if depth is None:
        depth = _move(reg, x, r, rng)[1]
    return RelaxResult(x, ok, sweeps, float(depth.max()), overlap, time.perf_counter() - t0)


def _bounds(bounds):
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise InputError(f"bounds must be (lower, upper), two 3-vectors in m, got {bounds!r:.80}") from None
    lo, hi = as_vec3("bounds lower corner", lower, unit="m"), as_vec3("bounds upper corner", upper, unit="m")
    if np.any(hi <= lo):
        raise InputError(f"bounds: the upper corner must exceed the lower one on every axis, got "
                         f"lower={lo.tolist()}, upper={hi.tolist()}")
    return lo, hi


@checked_call
def fill_region(region, bounds, radius, *, count=None, volume_fraction=None, radius_spread=0.0, seed=0,
                iterations=2000, tolerance=1e-3, samples=200_000, return_result=False, order="auto"):
    """Scatter spheres in the part of a region inside a box and relax them into it.

    The centres start uniformly distributed over ``region`` within ``bounds`` (points drawn in
    the box and kept where ``f <= 0``); :func:`relax_into` then moves them into
    ``region & box(bounds)`` and pushes them apart.

    Parameters
    ----------
    region : Region or callable
        ``f(points (N, 3)) -> (N,)``, negative inside, m.
    bounds : (lower, upper)
        Corners of an axis-aligned box, 3 floats each, m: the spheres are placed in, and kept in,
        the part of the region inside it (make it enclose a bounded region).
    radius : float, m
        Mean sphere radius (> 0).
    count : int, optional
        Number of spheres.  Give exactly one of ``count`` and ``volume_fraction``.
    volume_fraction : float, optional
        Sphere volume over the region's volume (inside the box), ``0 < volume_fraction <= 0.74``;
        the volume is estimated by Monte Carlo with ``samples`` points (relative error about
        ``1 / sqrt(samples * fraction of the box inside)``).  Random packings relax reliably up to
        about 0.5; denser requests may end with small overlaps (a warning says so).
    radius_spread : float
        Radii uniform in ``radius * [1 - spread, 1 + spread]``, ``0 <= spread < 1``.
    seed : int
        Seed of every random draw (the fill is reproducible).
    iterations, tolerance
        Passed to :func:`relax_into`.
    samples : int
        Monte Carlo points for the volume and the starting centres (more are drawn if needed).
    return_result : bool
        Also return the :class:`RelaxResult` (convergence, sweeps, violation, overlap).
    order : ``"auto"``, ``"spatial"`` or ``"drawn"``
        ``"spatial"``: the spheres sorted along a space-filling (Morton) curve (:func:`spatial_order`),
        so that spheres that can touch are close in memory, as a fast simulation of a large scene
        needs; ``"drawn"``: in the order their centres were drawn; ``"auto"`` (default): spatial
        from 20,000 spheres on, drawn below.

    Returns
    -------
    positions : (N, 3) float64 array, m
    radii : (N,) float64 array, m
        In the same order.
    result : RelaxResult
        Only with ``return_result=True`` (its ``positions`` in the same order).

    Warns
    -----
    RuntimeWarning
        When the relaxation did not reach the tolerance (the numbers are in the message).
    """
    lo, hi = _bounds(bounds)
    checked_order(order)                                      # refused before any work
    r0 = as_positive("radius", radius, "m")
    spread = as_nonnegative("radius_spread", radius_spread)
    return_result = as_bool("return_result", return_result)
    if spread >= 1.0:
        raise InputError(f"radius_spread must be < 1, got {spread!r}")
    if (count is None) == (volume_fraction is None):
        raise InputError("give exactly one of count (number of spheres) and volume_fraction "
                         f"(sphere volume / region volume), got count={count!r}, volume_fraction={volume_fraction!r}")
    if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 1000:
        raise InputError(f"samples must be an integer >= 1000, got {samples!r}")
    if count is not None and (not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1):
        raise InputError(f"count must be an integer >= 1, got {count!r}")
    if volume_fraction is not None:
        phi = as_positive("volume_fraction", volume_fraction)
        if phi > 0.74:
            raise InputError(f"volume_fraction must be <= 0.74 (the densest sphere packing is pi/sqrt(18) = 0.7405; "
                             f"random packings relax up to about 0.5), got {phi!r}")
    reg = _regions.intersection(_regions.as_region(region), _regions.box(lo, hi))
    rng = _rng(seed)

    def draw(k):
        p = lo + (hi - lo) * rng.random((k, 3))
        return p[reg(p) <= 0.0]

    centres = draw(int(samples))
    box_volume = float(np.prod(hi - lo))
    if len(centres) == 0:
        raise InputError(f"the region has no point inside bounds {lo.tolist()} .. {hi.tolist()} "
                         f"({samples} random points tried)")
    region_volume = box_volume * len(centres) / samples

    def draw_radii(k):
        return r0 * (1.0 + spread * rng.uniform(-1.0, 1.0, k)) if spread > 0 else np.full(k, r0)

    if count is None:
        target = phi * region_volume
        mean_volume = 4.0 / 3.0 * math.pi * r0**3 * (1.0 + spread**2)   # E[r^3] of the uniform spread
        guess = int(1.2 * target / mean_volume) + 10
        radii = draw_radii(guess)
        total = np.cumsum(4.0 / 3.0 * math.pi * radii**3)
        while total[-1] < target:                 # rare: the first draw was too small
            more = draw_radii(guess)
            radii = np.concatenate([radii, more])
            total = np.cumsum(4.0 / 3.0 * math.pi * radii**3)
        k = int(np.searchsorted(total, target))
        if k + 1 < len(total) and abs(total[k] - target) < abs(total[k - 1] - target if k > 0 else np.inf):
            k += 1
        radii = radii[: max(k, 1)]
    else:
        radii = draw_radii(int(count))
    n = len(radii)
    tries = 0
    while len(centres) < n:
        tries += 1
        if tries > 100:
            raise InputError(f"could not draw {n} starting centres inside the region within bounds "
                             f"(found {len(centres)}); the region's part inside the box is too small")
        centres = np.concatenate([centres, draw(int(samples))])
    positions = centres[rng.permutation(len(centres))[:n]]
    result = relax_into(reg, positions, radii, iterations=iterations, tolerance=tolerance, seed=seed)
    if not result.converged:
        fraction = float(np.sum(4.0 / 3.0 * math.pi * radii**3)) / region_volume
        warnings.warn(f"fill_region: {n} spheres (volume fraction {fraction:.3g}) not relaxed within "
                      f"{iterations} sweeps: max overlap {result.max_overlap:.3g} of the smaller radius, max "
                      f"violation {result.max_violation:.3g} m (tolerance {tolerance:g}); use more iterations, "
                      f"a lower volume fraction or fewer spheres", RuntimeWarning, stacklevel=2)
    # stored along the Morton curve where ``order`` asks for it (order.py)
    along = generated_order(order, result.positions)
    positions = result.positions if along is None else result.positions[along]
    radii = radii if along is None else radii[along]
    if return_result:
        return positions, radii, replace(result, positions=positions)
    return positions, radii
