"""How far apart in memory the spheres that can touch are stored, and a warning when it is far.

Each step reads, for every candidate pair ``(i, j)`` of the neighbour list, the rows of both
spheres.  Stored along a space-filling curve or a lattice, a sphere's partners sit a few to a few
hundred rows away, and those reads hit the cache; stored in random order they sit ``0.29 N`` rows
away in the median (the median of ``|i - j|`` for independent uniform indices is
``(1 - 1/sqrt(2)) N``), and at 1e5 spheres a dense scene's step takes 2.2-3.1 times as long
(``benchmarks/README.md``, "The storage order").  The engine keeps the user's order (every output is
in it), so it can only say so, once, when the simulation is built.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._stack import user_stack_level
from ..errors import StorageOrderWarning
from ..packing.order import SORT_FROM

__all__ = ["index_spread", "check_storage_order", "WARN_FROM_SPHERES", "WARN_SPREAD", "WARN_SPREAD_FRACTION",
           "SAMPLE_PAIRS"]

#: scenes with fewer spheres are not checked: their rows fit in the caches whatever the order
#: (the packing generators' ``order="auto"`` sorts from the same count on)
WARN_FROM_SPHERES = SORT_FROM
#: the warning needs the median index distance above both this many rows ...
WARN_SPREAD = 4096
#: ... and this fraction of the number of spheres (random order: 0.29; the benchmarks' lattice and
#: settled orders at 1e5: 0.0005 and 0.005; a Morton order: ~1e-4)
WARN_SPREAD_FRACTION = 0.05

#: at most about this many pairs are looked at (every k-th): the median of a regular sample is as
#: good for a warning, and the check's temporaries stay ~4 MB at any size (the whole list at 1e6
#: spheres would be ~100 MB, ~100 B per sphere on the peak memory)
SAMPLE_PAIRS = 1 << 18


def index_spread(pair_i: np.ndarray, pair_j: np.ndarray, n_spheres: int) -> float:
    """The median of ``|i - j|`` over the candidate pairs of two bodies (rows, 0.0 without such a
    pair), from every k-th pair where there are more than :data:`SAMPLE_PAIRS`.

    ``pair_i``, ``pair_j``: (P,) integer arrays, the first and second body of each candidate pair
    (a second index of ``n_spheres`` or more is a wall or a mesh triangle, left out).
    """
    stride = max(1, len(pair_i) // SAMPLE_PAIRS)
    i = np.asarray(pair_i[::stride], dtype=np.int64)
    j = np.asarray(pair_j[::stride], dtype=np.int64)
    between_bodies = j < n_spheres
    if not between_bodies.any():
        return 0.0
    return float(np.median(np.abs(j[between_bodies] - i[between_bodies])))


def check_storage_order(pair_i: np.ndarray, pair_j: np.ndarray, n_spheres: int) -> float | None:
    """Warn (:class:`~contactlab.errors.StorageOrderWarning`) when ``n_spheres`` spheres are stored
    in an order that scatters neighbours in memory; returns the median index distance of the
    candidate pairs (None for a scene too small to be checked)."""
    if n_spheres < WARN_FROM_SPHERES:
        return None
    spread = index_spread(pair_i, pair_j, n_spheres)
    if spread > max(WARN_SPREAD, WARN_SPREAD_FRACTION * n_spheres):
        warnings.warn(
            f"the {n_spheres:,} bodies are stored in an order that scatters neighbours in memory: spheres "
            f"that can touch are a median {spread:,.0f} rows apart ({spread / n_spheres:.2f} of N; random order "
            f"gives 0.29, a spatial order a few to a few hundred rows), which can make each step of a dense "
            f"scene two to three times as long. Sort the spheres before adding them: order = "
            f"cl.packing.spatial_order(positions), then add positions[order], radii[order] and every other "
            f"per-sphere input in that order (docs/packing.md). To silence this: "
            f"warnings.simplefilter('ignore', cl.StorageOrderWarning)",
            StorageOrderWarning, stacklevel=user_stack_level())
    return spread
