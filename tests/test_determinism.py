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
