"""A memory order for spheres that keeps neighbours close: the Morton (Z-order) curve.

The engine stores spheres in the order they were added and keeps that order (every output is in
it). Each step reads every sphere's neighbours. When neighbours in space are neighbours in
memory, those reads hit the cache; in random order they go to main memory. The dense lattice of
``benchmarks/profile_step.py`` (97,336 spheres, 2-core machine of ``benchmarks/README.md``): 3.87e6
particle-steps/s in lattice order, 1.83e6 in random order, 3.58e6 after sorting the random order
with this function (1 thread); 7.39e6, 2.28e6 and 6.96e6 on 2 threads. Sort once, before adding
the spheres:

>>> import numpy as np
>>> from contactlab.packing import spatial_order
>>> pos = np.random.default_rng(0).random((1000, 3))
>>> order = spatial_order(pos)
>>> sorted_pos = pos[order]            # add these (and radii[order], ...) to the scene
>>> back = np.argsort(order)           # sim.state.positions[back] is then in the original order
>>> bool(np.array_equal(sorted_pos[back], pos))
True
"""
from __future__ import annotations

import numpy as np

from .._arguments import as_vec3_array, did_you_mean
from ..errors import InputError

__all__ = ["spatial_order", "morton_codes", "checked_order", "generated_order", "ORDERS", "SORT_FROM"]

#: the orders in which a generator can return what it made (:func:`generated_order`)
ORDERS = ("auto", "spatial", "drawn")
#: from this many spheres on, ``order="auto"`` sorts them, and a simulation built in random order
#: warns (:mod:`contactlab.engine.storage_order`): below it the rows fit the caches whatever the
#: order (random order cost ~15 % at 1e4 spheres, ~80 % at 4e4 and 120-210 % at 1e5 in dense
#: scenes, benchmarks/README.md)
SORT_FROM = 20_000

#: bits per axis of the Morton code (3 x 21 = 63 bits fit an unsigned 64-bit integer)
BITS = 21


def _spread(v: np.ndarray) -> np.ndarray:
    """Insert two zero bits between each of the low 21 bits of ``v`` (uint64)."""
    v = v & np.uint64(0x1FFFFF)
    v = (v | (v << np.uint64(32))) & np.uint64(0x1F00000000FFFF)
    v = (v | (v << np.uint64(16))) & np.uint64(0x1F0000FF0000FF)
    v = (v | (v << np.uint64(8))) & np.uint64(0x100F00F00F00F00F)
    v = (v | (v << np.uint64(4))) & np.uint64(0x10C30C30C30C30C3)
    v = (v | (v << np.uint64(2))) & np.uint64(0x1249249249249249)
    return v


def morton_codes(positions) -> np.ndarray:
    """Morton codes (uint64, shape (N,)) of ``positions`` (m, shape (N, 3)).

    The bounding box is divided into 2^21 cells along its longest side (the same cell size on every
    axis, so that the curve does not stretch along the long side of a flat bed), and bit ``b`` of
    the cell index along axis ``a`` becomes bit ``3 b + a`` of the code.
    """
    pos = as_vec3_array("spatial_order: positions", positions, unit="m")
    if len(pos) == 0:
        return np.zeros(0, dtype=np.uint64)
    lo = pos.min(axis=0)
    extent = float((pos.max(axis=0) - lo).max())
    scale = (2**BITS - 1) / extent if extent > 0 else 0.0
    cells = np.floor((pos - lo) * scale).astype(np.uint64)
    code = np.zeros(len(pos), dtype=np.uint64)
    for axis in range(3):
        code |= _spread(cells[:, axis]) << np.uint64(axis)
    return code


def spatial_order(positions) -> np.ndarray:
    """The permutation (int64, shape (N,)) that sorts ``positions`` along the Morton curve.

    ``positions[order]`` lists the spheres so that neighbours in space are mostly neighbours in
    memory. Apply it to every per-sphere input (radii, materials, velocities) before adding them
    to a scene; ``np.argsort(order)`` maps the simulation's outputs back to the original order.
    Ties keep the original order (a stable sort), so the result is the same on every machine.
    """
    return np.argsort(morton_codes(positions), kind="stable").astype(np.int64)


def checked_order(order) -> str:
    """``order`` if it is one of :data:`ORDERS`, else an :class:`~contactlab.errors.InputError` naming it."""
    if order not in ORDERS:
        raise InputError(f"order must be one of {', '.join(map(repr, ORDERS))}, got {order!r}"
                         f"{did_you_mean(order, ORDERS)}")
    return order


def generated_order(order: str, positions) -> np.ndarray | None:
    """The permutation a packing generator applies to the spheres it made, or None to keep them as
    drawn.  ``order``: ``"spatial"`` (:func:`spatial_order`), ``"drawn"`` (as drawn or placed), or
    ``"auto"``: spatial from :data:`SORT_FROM` spheres on, as drawn below (where the order costs
    nothing and a seed keeps giving the spheres of earlier versions)."""
    if checked_order(order) == "drawn" or (order == "auto" and len(positions) < SORT_FROM):
        return None
    return spatial_order(positions)
