"""The storage-order check (engine/storage_order.py) and the generators' spatial order.

A large scene stored in random order runs up to twice as slow (benchmarks/README.md, "The storage
order"); the engine keeps the user's order, so it warns once, when the simulation is built, and
the library's own packing generators return large packings along the Morton curve.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import contactlab as cl
from contactlab.engine.storage_order import SAMPLE_PAIRS, WARN_FROM_SPHERES, index_spread
from contactlab.packing import regions, spatial_order
from contactlab.packing.order import SORT_FROM
from contactlab.scene.random_packing import random_packing

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3)
R = 1e-3


def lattice(n_side: int, spacing: float = 2.2 * R) -> np.ndarray:
    """Centres of a simple cubic lattice, n_side^3 spheres of radius R a gap of 0.2 R apart (m)."""
    g = np.arange(n_side) * spacing
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    return np.column_stack([x.ravel(), y.ravel(), z.ravel()])


def build(pos: np.ndarray) -> list[warnings.WarningMessage]:
    """Build a simulation of these spheres (no gravity, no walls) and return the warnings it gave."""
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_spheres(pos, np.full(len(pos), R), GLASS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), threads=1)
    return [w for w in caught if issubclass(w.category, cl.StorageOrderWarning)]


def test_index_spread_is_the_median_index_distance_of_pairs_of_bodies():
    # pairs (0, 1), (0, 5), (2, 9) between bodies and (3, 10) with a wall (index >= n = 10)
    i = np.array([0, 0, 2, 3])
    j = np.array([1, 5, 9, 10])
    assert index_spread(i, j, 10) == 5.0
    assert index_spread(i[3:], j[3:], 10) == 0.0          # a wall pair alone: nothing to measure


def test_random_order_spreads_pairs_over_0_29_of_the_spheres():
    """Theory: for independent uniform indices the median of |i - j| is (1 - 1/sqrt(2)) N."""
    pos = lattice(20)
    n = len(pos)
    d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    i, j = np.nonzero(np.triu(d < 2.4 * R, k=1))            # lattice neighbours, i < j
    label = np.random.default_rng(1).permutation(n)         # sphere k stored at row label[k]
    spread = index_spread(np.minimum(label[i], label[j]), np.maximum(label[i], label[j]), n)
    assert spread / n == pytest.approx(1.0 - 1.0 / math.sqrt(2.0), abs=0.01)
    # the same spheres along the Morton curve: a few rows
    row = np.argsort(spatial_order(pos))
    assert index_spread(np.minimum(row[i], row[j]), np.maximum(row[i], row[j]), n) < 1e-3 * n


def test_a_long_pair_list_is_sampled_and_gives_the_same_median():
    """More pairs than SAMPLE_PAIRS: every k-th pair of the (i, j)-sorted list; the same theory."""
    n = 400_000
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    keep = a != b
    i, j = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    order = np.lexsort((j, i))
    i, j = i[order].astype(np.uint32), j[order].astype(np.uint32)
    assert len(i) > 4 * SAMPLE_PAIRS
    assert index_spread(i, j, n) / n == pytest.approx(1.0 - 1.0 / math.sqrt(2.0), abs=0.005)


def test_a_large_scene_in_random_order_warns_once_at_the_users_line():
    pos = lattice(28)                                        # 21,952 spheres, above the threshold
    assert len(pos) >= WARN_FROM_SPHERES
    shuffled = pos[np.random.default_rng(0).permutation(len(pos))]
    caught = build(shuffled)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "21,952 bodies" in message and "spatial_order" in message
    assert caught[0].filename == __file__                   # points at build(), this file's line
    # the same random order sorted with spatial_order, and the lattice order: no warning
    assert build(shuffled[spatial_order(shuffled)]) == []
    assert build(pos) == []


def test_a_scene_below_the_threshold_is_not_checked():
    pos = lattice(26)                                        # 17,576 spheres: fit in the caches
    assert len(pos) < WARN_FROM_SPHERES
    assert build(pos[np.random.default_rng(0).permutation(len(pos))]) == []


def test_the_packing_generators_return_spheres_along_the_morton_curve():
    box = regions.box((0.0, 0.0, 0.0), (0.03, 0.03, 0.03))
    scene = cl.Scene()
    idx = scene.fill(box, cl.distributions.Uniform(1.6e-3, 2.4e-3), GLASS, packing_fraction=0.25, seed=3,
                     order="spatial")
    pos = scene.finalize()[1].positions[idx]
    assert len(pos) > 100
    np.testing.assert_array_equal(spatial_order(pos), np.arange(len(pos)))
    relaxed, radii = cl.packing.fill_region(box, ((0.0,) * 3, (0.03,) * 3), 1e-3, count=400, radius_spread=0.5,
                                            seed=2, order="spatial")
    np.testing.assert_array_equal(spatial_order(relaxed), np.arange(len(relaxed)))
    # radii travel with their centres: the sorted spheres still lie in the box and overlap by at
    # most fill_region's tolerance (1e-3 of the smaller radius)
    tol = 1e-3 * radii.min()
    assert np.all(relaxed - radii[:, None] >= -tol) and np.all(relaxed + radii[:, None] <= 0.03 + tol)
    gap = np.linalg.norm(relaxed[:, None] - relaxed[None], axis=2) - (radii[:, None] + radii[None])
    np.fill_diagonal(gap, np.inf)
    assert np.min(gap / np.minimum(radii[:, None], radii[None])) >= -1e-3 * (1 + 1e-9)


def test_auto_order_keeps_small_packings_as_drawn_and_sorts_large_ones():
    sizes = cl.distributions.Uniform(1.6e-3, 2.4e-3)
    small = regions.box((0.0, 0.0, 0.0), (0.03, 0.03, 0.03))
    auto = random_packing(small, sizes, packing_fraction=0.25, seed=3)
    drawn = random_packing(small, sizes, packing_fraction=0.25, seed=3, order="drawn")
    spatial = random_packing(small, sizes, packing_fraction=0.25, seed=3, order="spatial")
    np.testing.assert_array_equal(auto[0], drawn[0])              # as drawn: a seed's spheres as before
    assert not np.array_equal(drawn[0], spatial[0])
    # the same spheres, permuted with their radii
    back = spatial_order(drawn[0])
    np.testing.assert_array_equal(spatial[0], drawn[0][back])
    np.testing.assert_array_equal(spatial[1], drawn[1][back])
    large = regions.box((0.0, 0.0, 0.0), (0.09, 0.09, 0.09))      # ~2.6e4 spheres of ~1 mm
    pos, _ = random_packing(large, sizes, packing_fraction=0.2, seed=1)
    assert len(pos) >= SORT_FROM
    np.testing.assert_array_equal(spatial_order(pos), np.arange(len(pos)))


def test_an_unknown_order_is_refused_before_any_work():
    box = regions.box((0.0, 0.0, 0.0), (0.03, 0.03, 0.03))
    with pytest.raises(cl.InputError, match="order must be one of 'auto', 'spatial', 'drawn', got 'morton'"):
        cl.Scene().fill(box, cl.distributions.Uniform(1.6e-3, 2.4e-3), GLASS, count=10, order="morton")
    with pytest.raises(cl.InputError, match="got 'sorted'"):
        cl.packing.fill_region(box, ((0.0,) * 3, (0.03,) * 3), 1e-3, count=10, order="sorted")
