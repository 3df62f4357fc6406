"""Results are bit-identical run to run, at any thread count, for any chunking, and across a restart."""
from __future__ import annotations

import numpy as np
import numba
import pytest

import contactlab as cl


def _pour(glass, threads=None):
    scene = cl.Scene()
    L = 0.014
    scene.fill_box((0, 0, 0), (L, L, 0.03), 1e-3, glass, jitter=0.5, seed=11, radius_spread=0.2)
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, L, 0), (0, -1, 0))]:
        scene.add_wall(point=p, normal=n, material=glass)
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.4, friction=0.5, rolling_friction=0.05),
                         threads=threads)


def _snapshot(sim):
    s = sim.state
    return [s.positions.copy(), s.velocities.copy(), s.angular_velocities.copy(), s.orientations.copy(),
            s.forces.copy(), s.dissipated.copy(), np.array([sim.time])]


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_two_identical_runs_are_bit_identical(glass):
    a, b = _pour(glass), _pour(glass)
    a.run(duration=0.04)
    b.run(duration=0.04)
    assert a.n_contacts() > 50
    assert _same(_snapshot(a), _snapshot(b))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 threads")
def test_thread_count_does_not_change_results(glass, monkeypatch):
    """The serial step kernel (small scenes; forced here) on one thread, the parallel one over
    blocks on two threads: the same bits."""
    from contactlab import _jit

    assert _jit.n_blocks(10) == 1
    monkeypatch.setattr(_jit, "SERIAL_BELOW", 10**9)
    a = _pour(glass, threads=1)
    assert _jit.n_blocks(a.n_spheres) == 1
    a.run(duration=0.03)
    monkeypatch.setattr(_jit, "SERIAL_BELOW", 0)
    b = _pour(glass, threads=2)
    with b._threads():
        assert _jit.n_blocks(b.n_spheres) > 1
    b.run(duration=0.03)
    assert _same(_snapshot(a), _snapshot(b))


def test_chunking_does_not_change_results(glass):
    a, b = _pour(glass), _pour(glass)
    a.run(steps=2000)
    for _ in range(20):
        b.run(steps=100)
    assert _same(_snapshot(a), _snapshot(b))


def test_restart_equals_uninterrupted_run(glass, tmp_path):
    a = _pour(glass)
    a.run(duration=0.02)
    path = a.save_checkpoint(tmp_path / "state")
    a.run(duration=0.02)
    b = cl.Simulation.load_checkpoint(path)
    assert b.time == pytest.approx(0.02, rel=1e-3) and b.step < a.step
    b.run(duration=0.02)
    assert b.step == a.step and b.time == a.time
    assert _same(_snapshot(a), _snapshot(b))
    assert a.energy() == b.energy()
    ca, cb = a.contacts(), b.contacts()
    assert all(np.array_equal(ca[k], cb[k]) for k in ca)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 threads")
@pytest.mark.parametrize("order", ["lattice", "tiles"])
def test_sweep_over_blocks_and_ranges_gives_the_same_bits(glass, order):
    """A pour of more beads than one block of the step's sweep (kernels.SWEEP_BLOCK): one thread
    sweeps block by block, two threads sweep ranges in parallel and reduce the beads that pairs of
    an earlier range act on afterwards.  Both must give the same bits (and the beads must touch,
    or the reduction would have nothing to add).  Stored in lattice order the deferred beads are
    one run at the start of each range; stored tile by tile (four columns of the lattice, one
    after the other, as a tiled packing is) they are many runs with beads reduced in between."""
    from contactlab._jit import BLOCKS_PER_THREAD
    from contactlab.engine import kernels
    from contactlab.engine.integrate import block_size, deferred_runs

    r, m = 0.5e-3, 14
    grid = np.stack(np.meshgrid(*[np.arange(m)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    if order == "tiles":
        tile = (grid[:, 0] >= m // 2) * 2 + (grid[:, 1] >= m // 2)
        grid = grid[np.lexsort((grid[:, 0], grid[:, 1], grid[:, 2], tile))]

    def pour(threads):
        # a simple-cubic lattice of touching beads (0.1 % overlap) given random velocities
        pos = (grid + 0.5) * 2 * r * 0.999
        vel = np.random.default_rng(3).normal(0.0, 2e-4, pos.shape)
        scene = cl.Scene(gravity=(0, 0, -9.81))
        scene.add_spheres(pos, np.full(len(pos), r), glass, velocities=vel)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.4, friction=0.5), threads=threads)

    a, b = pour(1), pour(2)
    n = a.n_spheres
    assert n > 2 * kernels.SWEEP_BLOCK
    a.run(steps=300)
    b.run(steps=300)
    assert a.n_contacts() > a.n_spheres
    assert _same(_snapshot(a), _snapshot(b))
    t = b.table
    blocks = BLOCKS_PER_THREAD * 2  # the blocks of b's runs on two threads (_jit.n_blocks)
    span = block_size(n, max(blocks // kernels.SWEEP_RANGES_PER_BLOCKS, 1))
    run_lo, run_hi, range_first = deferred_runs(n, span, t.i_start, t.j_start, t.j_pairs)
    runs_per_range = np.diff(range_first)
    if order == "tiles":
        # runs with beads between them, which the ranges' sweeps reduce
        assert runs_per_range.max() >= 4
        assert np.any(run_lo[1:] > run_hi[:-1])
    else:
        assert runs_per_range.max() == 1
