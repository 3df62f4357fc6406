"""Filling a region with spheres (disks in 2-D) of a size distribution: random sequential addition or relaxation.

:func:`random_packing` draws sizes from a :class:`~contactlab.distributions.SizeDistribution` (by
number, with the seed) until their volume reaches the requested packing fraction of the region
(or a given count), then places them:

* ``method="random"`` -- **random sequential addition** (RSA): largest first, each sphere is put
  at a uniformly random position where it lies entirely inside the region (the region shrunk by
  its radius) and overlaps no sphere placed before; up to ``max_attempts`` positions are tried per
  sphere.  The result has no overlap at all.  RSA jams: monodisperse spheres stop at a packing
  fraction of about 0.38 (disks 0.55) after infinitely many attempts, and in practice (10^4
  attempts per sphere) near 0.30-0.35 in 3-D and 0.45-0.50 in 2-D, somewhat more for wide size
  distributions.  A request it cannot meet raises an :class:`~contactlab.errors.InputError`
  saying how far it got.
* ``method="relax"`` (3-D) -- the centres start uniformly distributed in the region and the
  level-set static relaxation of :func:`contactlab.packing.relax_into` pushes the spheres apart
  and into the region; it reaches about 0.5-0.55, with overlaps left below ``tolerance`` times the
  smaller radius (1e-3 by default) and no sphere beyond the region by more than that.

For denser samples fill loosely and compress: let the sample settle under gravity, or move walls
in (a servo-controlled wall), which is how a dense random packing (0.60-0.64) forms.

From 20,000 spheres on (``order="auto"``), or always with ``order="spatial"``, the spheres are
returned sorted along a space-filling (Morton) curve, not in the order they were drawn: neighbours
in space are then neighbours in memory, as a fast simulation of a large scene needs
(:func:`contactlab.packing.spatial_order`).  Below that they come as drawn, as in earlier versions.

Every random draw comes from ``seed`` (sizes from NumPy's generator, positions from the compiled
kernel's generator seeded with it): the same seed gives the same packing, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_int, as_positive, did_you_mean
from ..distributions import SizeDistribution
from ..errors import InputError
from ..magnitudes import check_body_count
from ..measure.volumes import _BALL, _BOX, _CYLINDER, _section_2d, as_measure_region, region_bounds, region_volume
from ..packing.levelset import relax_into
from ..packing.order import checked_order, generated_order
from ..packing.placement import region_frame, region_room, sequential_addition

__all__ = ["random_packing", "METHODS"]

#: how :func:`random_packing` places the spheres
METHODS = ("random", "relax")
#: the densest packing of equal spheres (Kepler), and of equal disks (hexagonal)
_DENSEST = {3: math.pi / math.sqrt(18.0), 2: math.pi / math.sqrt(12.0)}


def _mean_volume(distribution, dimension, thickness) -> float:
    """The mean particle volume (m^3) of ``distribution``, from a sample of its own generator (the
    fill's draws are not changed)."""
    r = distribution.sample_radii(4096, np.random.default_rng(0))
    return float(np.mean(math.pi * r ** 2 * thickness if dimension == 2 else 4.0 / 3.0 * math.pi * r ** 3))


def _draw_radii(distribution, rng, dimension, thickness, target_volume, count):
    """Radii (m) drawn by number: ``count`` of them, or as many as bring their volume closest to
    ``target_volume`` (m^3; in 2-D area times thickness)."""
    if count is not None:
        return distribution.sample_radii(count, rng)
    def volume(r):
        return math.pi * r ** 2 * thickness if dimension == 2 else 4.0 / 3.0 * math.pi * r ** 3
    radii = np.zeros(0)
    total = 0.0
    batch = 1024
    while total < target_volume:
        more = distribution.sample_radii(batch, rng)
        radii = np.concatenate([radii, more])
        total = float(np.sum(volume(radii)))
        batch = min(2 * batch, 1 << 22)
    cum = np.cumsum(volume(radii))
    k = int(np.searchsorted(cum, target_volume))          # cum[k] >= target
    if k > 0 and abs(cum[k - 1] - target_volume) <= abs(cum[k] - target_volume):
        k -= 1
    return radii[: k + 1]


def random_packing(region, distribution, *, dimension: int = 3, thickness: float = 1.0, packing_fraction=None,
                   count=None, seed=0, method: str = "random", max_attempts: int = 10_000, tolerance: float = 1e-3,
                   order: str = "auto"):
    """Centres (N, 3) and radii (N,) of spheres (disks in the plane z = 0 when ``dimension=2``)
    filling ``region`` at ``packing_fraction`` (or ``count`` of them); see the module docstring.

    Returns ``(positions, radii)``, in the order ``order`` says: ``"spatial"`` sorted along a
    space-filling curve (:func:`contactlab.packing.spatial_order`), so that spheres that can touch
    are close in memory, which keeps a large simulation fast (random order costs a half to two thirds of the
    speed at 1e5 spheres); ``"drawn"`` in the order the sizes were drawn; ``"auto"`` (default)
    spatial from 20,000 spheres on, drawn below.
    """
    if not isinstance(distribution, SizeDistribution):
        raise InputError(f"distribution must be a size distribution such as cl.distributions.LogNormal(...), "
                         f"got {type(distribution).__name__}: {distribution!r:.80}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}"
                         f"{did_you_mean(method, METHODS)}")
    checked_order(order)                                     # refused before any work
    if method == "relax" and dimension == 2:
        raise InputError("method='relax' fills 3-D regions; a 2-D scene is filled with method='random'")
    reg = as_measure_region(region)
    if reg.kind not in (_BOX, _BALL, _CYLINDER):
        raise InputError("fill needs a bounded region: cl.packing.regions.box(...), sphere(...) or cylinder(...); "
                         "got the whole domain")
    if dimension == 2:
        reg = _section_2d(reg)
    if (packing_fraction is None) == (count is None):
        raise InputError(f"give exactly one of packing_fraction (solid volume / region volume) and count (number "
                         f"of particles), got packing_fraction={packing_fraction!r}, count={count!r}")
    if count is not None:
        count = as_int("count", count, low=1)
    else:
        packing_fraction = as_positive("packing_fraction", packing_fraction)
        if packing_fraction >= _DENSEST[dimension]:
            raise InputError(f"packing_fraction must be below {_DENSEST[dimension]:.4f} (the densest packing of equal "
                             f"{'disks' if dimension == 2 else 'spheres'}), got {packing_fraction!r}")
    max_attempts = as_int("max_attempts", max_attempts, low=1)
    seed = as_int("seed", seed, low=0)
    rng = np.random.default_rng(seed)
    volume = region_volume(reg, dimension=dimension, thickness=thickness)
    target = None if count is not None else packing_fraction * volume
    check_body_count(f"filling the region with {count} particles" if count is not None else
                     f"filling {volume:.4g} m^3 at packing fraction {packing_fraction:g}",
                     count if count is not None else target / _mean_volume(distribution, dimension, thickness),
                     "give a smaller count or packing fraction, a smaller region or larger sizes")
    radii = _draw_radii(distribution, rng, dimension, thickness, target, count)
    r_max = float(radii.max())
    room = region_room(reg.kind, reg.params, dimension)
    if r_max >= room:
        raise InputError(f"the largest particle (radius {r_max!r} m) does not fit in the region (it holds spheres of "
                         f"radius < {room!r} m); use a larger region or smaller sizes")
    if method == "relax":
        return _in_order(order, *_relaxed(reg, radii, rng, tolerance))
    largest_first = np.argsort(-radii, kind="stable")
    placed = np.zeros((len(radii), 3))
    frame = region_frame(reg.kind, reg.params)
    lower, upper = region_bounds(reg.kind, reg.params, dimension)
    extent = np.maximum(upper - lower, 2.0 * r_max)[:dimension]
    cell = max(2.0 * r_max, float(np.prod(extent) / 4e6) ** (1.0 / dimension))   # at most ~4 million cells
    dims = np.maximum(1, np.ceil((upper - lower) / cell).astype(np.int64))
    if dimension == 2:
        dims[2] = 1
    n_done = sequential_addition(reg.kind, reg.params, frame, radii[largest_first], dimension, seed, max_attempts, lower,
                                 cell, dims, placed)
    if n_done < len(radii):
        solid = (np.pi * radii[largest_first][:n_done] ** 2 * thickness if dimension == 2 else
                 4.0 / 3.0 * np.pi * radii[largest_first][:n_done] ** 3)
        reached = float(solid.sum()) / volume
        asked = packing_fraction if packing_fraction is not None else float(
            np.sum(np.pi * radii ** 2 * thickness if dimension == 2 else 4.0 / 3.0 * np.pi * radii ** 3)) / volume
        raise InputError(f"random sequential addition placed {n_done} of {len(radii)} particles (packing fraction "
                         f"{reached:.3f} of the requested {asked:.3f}) before a particle found no free place in "
                         f"{max_attempts} attempts; it jams near 0.30-0.38 in 3-D (0.45-0.55 in 2-D): ask for less, "
                         f"use method='relax' (3-D, up to about 0.55), or fill loosely and compress (settle under "
                         f"gravity, or move walls in)")
    positions = np.empty_like(placed)
    positions[largest_first] = placed
    return _in_order(order, positions, radii)


def _in_order(order, positions, radii):
    """The spheres in the order ``order`` asks for (positions and radii permuted together)."""
    along = generated_order(order, positions)
    return (positions, radii) if along is None else (positions[along], radii[along])


def _relaxed(reg, radii, rng, tolerance):
    """Uniform random centres in the region, relaxed apart and into it (:func:`contactlab.packing.relax_into`)."""
    n = len(radii)
    lo, hi = region_bounds(reg.kind, reg.params, 3)
    centres = np.zeros((0, 3))
    while len(centres) < n:
        p = lo + (hi - lo) * rng.random((max(2 * n, 1024), 3))
        centres = np.concatenate([centres, p[reg.region(p) <= 0.0]])
    result = relax_into(reg.region, centres[:n], radii, iterations=2000, tolerance=tolerance,
                        seed=int(rng.integers(2 ** 31)))
    if not result.converged:
        raise InputError(f"the relaxation left overlaps of {result.max_overlap:.3g} of the smaller radius (tolerance "
                         f"{tolerance:g}) after {result.iterations} sweeps: the packing fraction is too high for "
                         f"method='relax' (about 0.55 at most); fill loosely and compress instead")
    return result.positions, radii
