"""Filling a box region with spheres on a loose lattice (the usual start of a pouring run)."""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_int, as_nonnegative, as_positive, as_vec3
from ..errors import InputError
from ..magnitudes import check_body_count

__all__ = ["lattice_in_box"]


def lattice_in_box(lower, upper, radius, *, spacing=None, radius_spread=0.0, jitter=0.0, seed=0,
                   max_count=None):
    """Sphere centres and radii on a simple-cubic lattice inside an axis-aligned box.

    Parameters
    ----------
    lower, upper : 3 floats, m
        Opposite corners of the box; every sphere lies entirely inside it.
    radius : float, m
        Mean sphere radius.
    spacing : float, m, optional
        Lattice spacing; default ``2.2 * radius * (1 + radius_spread)`` (a loose lattice).
    radius_spread : float
        Relative half-width of a uniform radius distribution: radii in
        ``radius * [1 - radius_spread, 1 + radius_spread]`` (0 <= spread < 1).
    jitter : float
        Random displacement of each centre, as a fraction of the free gap between neighbours
        (0 <= jitter <= 1); spheres never overlap.
    seed : int
        Seed of the random generator (the fill is reproducible).
    max_count : int, optional
        Keep at most this many spheres (the lowest layers first).

    Returns
    -------
    positions : (N, 3) float64 array, m
    radii : (N,) float64 array, m
    """
    lo = as_vec3("lower", lower, unit="m")
    hi = as_vec3("upper", upper, unit="m")
    r = as_positive("radius", radius, "m")
    spread = as_nonnegative("radius_spread", radius_spread)
    if spread >= 1.0:
        raise InputError(f"radius_spread must be < 1, got {spread!r}")
    jit = as_nonnegative("jitter", jitter)
    if jit > 1.0:
        raise InputError(f"jitter must be <= 1, got {jit!r}")
    r_max = r * (1.0 + spread)
    a = 2.2 * r_max if spacing is None else as_positive("spacing", spacing, "m")
    if a < 2.0 * r_max:
        raise InputError(f"spacing {a!r} m is smaller than the largest diameter {2.0 * r_max!r} m")
    if np.any(hi - lo < 2.0 * r_max):
        raise InputError(f"the box from {lo.tolist()} to {hi.tolist()} is too small for spheres of radius {r_max!r} m")
    per_axis = np.floor((hi - lo - 2.0 * r_max) / a) + 1.0
    limit = None if max_count is None else as_int("max_count", max_count, low=0)
    check_body_count(f"a lattice of spacing {a:g} m in the box from {lo.tolist()} to {hi.tolist()}",
                     min(float(np.prod(per_axis)), math.inf if limit is None else limit),
                     "give max_count=, a larger radius or spacing, or a smaller box")
    counts = per_axis.astype(np.int64)
    rng = np.random.default_rng(as_int("seed", seed, low=0))
    # z-major order: the first spheres are the lowest layer (only the kept ones are made)
    total = int(counts[0]) * int(counts[1]) * int(counts[2])
    k = np.arange(total if limit is None else min(limit, total), dtype=np.int64)
    idx = np.stack([k % counts[0], (k // counts[0]) % counts[1], k // (counts[0] * counts[1])], axis=1)
    n = idx.shape[0]
    used = (counts - 1) * a
    start = lo + r_max + 0.5 * ((hi - lo - 2.0 * r_max) - used)
    pos = start + idx * a
    radii = r * (1.0 + spread * rng.uniform(-1.0, 1.0, n)) if spread > 0 else np.full(n, r)
    if jit > 0.0:
        gap = 0.5 * (a - 2.0 * r_max)
        # |displacement| <= jitter * gap, so two neighbours never come closer than 2 * r_max.
        pos = pos + (jit * gap / np.sqrt(3.0)) * rng.uniform(-1.0, 1.0, (n, 3))
    return pos, radii
