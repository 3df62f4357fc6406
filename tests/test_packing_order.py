"""contactlab.packing.spatial_order: a Morton-curve permutation that keeps neighbours close in memory."""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab.packing import morton_codes, spatial_order
from contactlab.packing.order import BITS


def _interleave_reference(cells):
    """Slow reference: bit b of axis a goes to bit 3 b + a."""
    code = 0
    for b in range(BITS):
        for a, c in enumerate(cells):
            code |= ((int(c) >> b) & 1) << (3 * b + a)
    return code


def test_codes_interleave_the_cell_bits():
    rng = np.random.default_rng(1)
    pos = rng.random((200, 3)) * np.array([3.0, 1.0, 0.5])
    codes = morton_codes(pos)
    lo = pos.min(axis=0)
    extent = (pos.max(axis=0) - lo).max()
    cells = np.floor((pos - lo) * ((2**BITS - 1) / extent)).astype(np.int64)
    assert cells.max() == 2**BITS - 1  # the whole code range is used along the longest side
    assert [int(c) for c in codes] == [_interleave_reference(c) for c in cells]


def test_order_is_a_stable_permutation():
    rng = np.random.default_rng(2)
    pos = rng.random((500, 3))
    pos[100] = pos[7]  # a tie keeps the original order
    order = spatial_order(pos)
    assert order.dtype == np.int64
    assert np.array_equal(np.sort(order), np.arange(500))
    assert list(order).index(7) < list(order).index(100)
    back = np.argsort(order)
    assert np.array_equal(pos[order][back], pos)


def test_neighbours_end_up_close_in_memory():
    """A 24^3 lattice stored in random order: the index distance between lattice neighbours is
    ~N/3 on average (two random indices); along the Morton curve most neighbours are within a few
    hundred places, like the lattice order's own row and plane strides (24 and 576)."""
    m = 24
    grid = np.stack(np.meshgrid(*[np.arange(m)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    n = len(grid)
    shuffled = grid[np.random.default_rng(3).permutation(n)]
    sorted_grid = shuffled[spatial_order(shuffled.astype(float))]

    def median_gap(cells):
        where = np.empty((m, m, m), dtype=np.int64)
        where[cells[:, 0], cells[:, 1], cells[:, 2]] = np.arange(n)
        gaps = [np.abs(np.diff(where, axis=a)).ravel() for a in range(3)]
        return float(np.median(np.concatenate(gaps)))

    assert median_gap(shuffled) > n / 5
    assert median_gap(sorted_grid) <= 64
    assert median_gap(sorted_grid) <= median_gap(grid)


def test_bad_positions_are_named():
    with pytest.raises(cl.errors.InputError, match=r"positions\[1\] must be finite"):
        spatial_order([[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0]])
    with pytest.raises(cl.errors.InputError, match=r"must have shape \(N, 3\), got \(4, 4\)"):
        spatial_order(np.zeros((4, 4)))
    with pytest.raises(cl.errors.InputError, match=r"must be numbers"):
        spatial_order([["a", "b", "c"]])
    assert spatial_order(np.zeros((0, 3))).shape == (0,)
    assert np.array_equal(spatial_order(np.zeros((3, 3))), [0, 1, 2])  # all in one point: as given


def test_a_sorted_scene_runs_the_same_physics(glass):
    """The same beads added in Morton order: the results, mapped back with argsort, agree with the
    original order's to rounding (only the order of the force sums differs)."""
    rng = np.random.default_rng(5)
    grid = np.stack(np.meshgrid(np.arange(6), np.arange(6), np.arange(12), indexing="ij"), axis=-1).reshape(-1, 3)
    pos = (grid + 0.5) * 1.05e-3 + rng.uniform(-2e-5, 2e-5, grid.shape)
    pos = pos[rng.permutation(len(pos))]
    radii = np.full(len(pos), 0.5e-3)

    def run(p):
        scene = cl.Scene(gravity=(0, 0, -9.81))
        scene.add_spheres(p, radii, glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.4, friction=0.5), threads=1)
        sim.run(steps=400)
        return sim

    order = spatial_order(pos)
    a, b = run(pos), run(pos[order])
    assert a.n_contacts() > 0
    back = np.argsort(order)
    assert np.allclose(b.state.positions[back], a.state.positions, rtol=0, atol=1e-12)
    assert np.allclose(b.state.velocities[back], a.state.velocities, rtol=1e-6, atol=1e-12)
