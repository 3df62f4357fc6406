"""The contact table without geometry columns (spheres and plane walls): the normal, overlap and
contact point recomputed on demand must be the kernel's own, bit for bit, and the narrower table
must not change any result.

The reference is the same run with the geometry columns kept (as a scene with a servo-controlled
wall keeps them): there the kernel itself writes the geometry at every evaluation.
"""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab.engine import layout
from contactlab.engine import stepper
from contactlab.engine.contact_geometry import pair_geometry, store_geometry, stored


@pytest.fixture(autouse=True)
def compact_small_scenes(monkeypatch):
    """These scenes of ~150 beads do without the geometry columns as a scene of more than
    ``layout.SWEEP_BLOCK`` bodies does (only the fused sweep's failed steps need them kept)."""
    monkeypatch.setattr(stepper, "COMPACT_ABOVE", 0)


def _pour(glass, model, keep_geometry):
    scene = cl.Scene()
    L = 0.014
    scene.fill_box((0, 0, 0), (L, L, 0.03), 1e-3, glass, jitter=0.5, seed=5, radius_spread=0.2)
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, L, 0), (0, -1, 0.2))]:
        scene.add_wall(point=p, normal=n, material=glass)
    sim = cl.Simulation(scene, model)
    if keep_geometry:
        store_geometry(sim.model, sim.state, sim.table)
    return sim


def test_recomputed_geometry_is_the_kernels_bit_for_bit(glass):
    model = cl.models.HertzMindlin(restitution=0.4, friction=0.5)
    compact, full = _pour(glass, model, False), _pour(glass, model, True)
    assert compact.table.out.shape[1] == layout.N_OUT_FORCES and not stored(compact.table)
    assert full.table.out.shape[1] == layout.N_OUT and stored(full.table)
    for duration in (0.02, 0.02, 0.04):
        compact.run(duration=duration)
        full.run(duration=duration)
        # the table's width changes no result (the kernel's arithmetic does not depend on it)
        assert np.array_equal(compact.state.positions, full.state.positions)
        assert np.array_equal(compact.state.forces, full.state.forces)
        n = compact.table.n_pairs
        assert n == full.table.n_pairs
        assert np.array_equal(compact.table.out[:n], full.table.out[:n, : layout.N_OUT_FORCES])
        rows = np.arange(n)
        walls = compact.table.pair_j[:n] >= compact.n_spheres
        active = compact.table.status[:n] == layout.ACTIVE
        for a, b in zip(pair_geometry(compact.model, compact.state, compact.table, rows),
                        pair_geometry(full.model, full.state, full.table, rows)):
            assert np.array_equal(a, b)
        ca, cb = compact.contacts(), full.contacts()
        for key in ("normal", "overlap", "contact_point", "torque_i", "normal_force"):
            assert np.array_equal(ca[key], cb[key]), key
    assert (active & walls).sum() > 10 and (active & ~walls).sum() > 50  # a settled bed on the walls


def test_a_bonding_law_keeps_the_event_column(glass):
    """The bond-break column stays with a law that bonds; a law without bonds does without it."""
    contact = cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.5, friction=0.5)
    bonding = cl.models.ParallelBond(normal_stiffness=1e8, shear_stiffness=4e7, tensile_strength=1e6,
                                     shear_strength=1e6, contact=contact)

    def width(model):
        # two beads on a wall, the kernels as plain Python (the table's width does not depend on them)
        scene = cl.Scene()
        scene.add_spheres([(0, 0, 1e-3), (0, 0, 3e-3)], [1e-3, 1e-3], glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        return cl.Simulation(scene, model, dt=1e-6, debug=True).table.out.shape[1]

    assert width(bonding) == layout.N_OUT_BONDS > layout.OUT_EVENT
    assert width(contact) == layout.N_OUT_FORCES <= layout.OUT_EVENT


def _geometry_columns(sim):
    n = sim.table.n_pairs
    return sim.table.out[:n, layout.OUT_NORMAL:]


def test_a_servo_wall_gives_the_table_its_geometry_columns(glass):
    """A servo-controlled wall reads the contacts' normals and overlaps at every step: the table
    takes the geometry columns, filled for the last evaluation with the bits the kernel writes
    (reference: the same run with the columns kept from the start), and keeps them."""
    model = cl.models.HertzMindlin(restitution=0.4, friction=0.5)
    compact, full = _pour(glass, model, False), _pour(glass, model, True)
    compact.run(duration=0.04)
    full.run(duration=0.04)
    store_geometry(compact.model, compact.state, compact.table)
    assert stored(compact.table) and compact.table.n_pairs == full.table.n_pairs
    assert np.array_equal(_geometry_columns(compact), _geometry_columns(full))
    other = _pour(glass, model, False)
    other.servo_wall(1, target_force=1e-3, max_speed=0.01)
    other.run(steps=2)
    assert stored(other.table)


def test_a_narrow_table_survives_a_checkpoint_bit_for_bit(glass, tmp_path, monkeypatch):
    """A checkpoint keeps the narrow table: resumed, the run continues with the same bits as the
    run that was never stopped.  Resumed where the scene keeps the geometry columns (here: the
    default size threshold again), the columns are filled for the saved positions."""
    model = cl.models.HertzMindlin(restitution=0.4, friction=0.5)
    a = _pour(glass, model, False)
    a.run(duration=0.04)
    path = a.save_checkpoint(tmp_path / "narrow.npz")
    a.run(duration=0.01)
    b = cl.Simulation.load_checkpoint(path)
    assert b.table.out.shape[1] == layout.N_OUT_FORCES
    b.run(duration=0.01)
    for name in ("positions", "velocities", "angular_velocities"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    full = _pour(glass, model, True)  # reference: the kernel's own columns at the same step
    full.run(duration=0.04)
    monkeypatch.setattr(stepper, "COMPACT_ABOVE", 10**9)
    c = cl.Simulation.load_checkpoint(path)
    assert stored(c.table) and c.table.n_pairs == full.table.n_pairs
    assert np.array_equal(_geometry_columns(c), _geometry_columns(full))
