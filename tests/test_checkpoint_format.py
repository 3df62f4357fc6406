"""Checkpoint formats: what a checkpoint holds, and an older format still resumes bit for bit.

``tests/data/checkpoint_v5.npz`` was written by contactlab's format 5 (the code of commit 33f4f4c,
before the boundary power, local damping's last force and the meshes' build pose moved into the
state and the contact table): 16 beads in a box with a driven floor and local damping, after 1500
steps.  ``checkpoint_v5_continued.npz`` holds where that same code took it 500 steps later.  The
reference is the older code's own continuation: resuming the old file with this code must give
the same bits.  Since issue 20 the sliding spring keeps only the part of the sliding force that its
dashpot does not carry (``contactlab.laws.springs``), so the continuation was made again by commit
33f4f4c's code with that ``spring_slider`` patched in (load with ``threads=1``, ``run(steps=500)``,
save positions, velocities, spins, step, time and the four energies below); the unpatched code
still reproduces the previous file bit for bit.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import contactlab as cl
from contactlab.io import read_checkpoint
from contactlab.io.checkpoint import FORMAT_VERSION

DATA = Path(__file__).resolve().parent / "data"


def test_a_format_5_checkpoint_resumes_as_the_code_that_wrote_it_continued():
    sim = cl.Simulation.load_checkpoint(DATA / "checkpoint_v5.npz", threads=1)
    assert sim.step == 1500 and sim.local_damping == 0.3
    sim.run(steps=500)
    ref = np.load(DATA / "checkpoint_v5_continued.npz")
    assert sim.step == int(ref["step"]) and sim.time == float(ref["time"])
    for name in ("positions", "velocities", "angular_velocities"):
        assert np.array_equal(getattr(sim, name), ref[name]), name
    e = sim.energy()
    assert np.array_equal([e["total"], e["boundary_work"], e["balance_error"], e["dissipated_local_damping"]],
                          ref["energy"])
    assert e["boundary_work"] != 0.0 and e["dissipated_local_damping"] > 0.0  # what moved into the state mattered


def test_a_checkpoint_is_state_model_table_and_law(tmp_path):
    """Everything a restart needs is public: the state (with the boundary power and local
    damping's force), the frozen model, the contact table (with the meshes' build pose), the law."""
    saved = read_checkpoint(DATA / "checkpoint_v5.npz")
    path = cl.Simulation.load_checkpoint(DATA / "checkpoint_v5.npz").save_checkpoint(tmp_path / "c6.npz")
    again = read_checkpoint(path)
    archive = np.load(path)
    assert '"version": %d' % FORMAT_VERSION in str(archive["meta"])
    assert again.law.to_dict() == saved.law.to_dict()
    for name, value in saved.state.arrays().items():
        assert np.array_equal(getattr(again.state, name), value), name
    assert again.state.boundary_power.any() and again.state.damping_force.any()
    assert again.state.initial_energy == saved.state.initial_energy
    for name in ("pair_i", "pair_j", "hist", "out", "status", "ref_pos", "wall_ref", "mesh_ref_pos", "mesh_ref_quat"):
        assert np.array_equal(again.table[name], saved.table[name]), name
    assert np.array_equal(again.model.radius, saved.model.radius)
