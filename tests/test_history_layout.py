"""History columns a law never uses are not stored (engine/history_layout.py, issue 16's memory).

Hertz-Mindlin without rolling friction (or with the constant-torque rolling model) hands its rolling
spring mu_r = 0: the spring's rotation, 3 of its 7 history floats, stays zero, and the contact table
stores only the other 4.  The reference everywhere is the same run with every column stored (a
model whose ``unused_history`` is empty, so the engine takes the full layout): a different code
path (other generated kernels, another table width) that must give the same bits.
"""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab.engine.history_layout import HistoryLayout, continued_layout
from contactlab.errors import ContactlabError

G = 9.81
R = 1e-3


class StoreEveryColumn(cl.models.HertzMindlin):
    """Hertz-Mindlin with its full history stored whatever its parameters (the reference path)."""

    def unused_history(self):
        return ()


def _hm(cls=cl.models.HertzMindlin, **kw):
    return cls(restitution=0.5, friction=0.5, **kw)


def _pour(glass, model, n_steps=5000):
    """45 beads of 1 mm (20 % spread) dropped into a box: contacts form, slide, part and roll."""
    scene = cl.Scene()
    scene.fill_box((0, 0, 0), (0.008, 0.008, 0.014), R, glass, jitter=0.5, seed=5, radius_spread=0.2)
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((0.008, 0, 0), (-1, 0, 0))]:
        scene.add_wall(point=p, normal=n, material=glass)
    sim = cl.Simulation(scene, model)
    sim.run(steps=n_steps)
    return sim


def _same_run(a, b):
    for name in ("positions", "velocities", "angular_velocities"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    ca, cb = a.contacts(all_candidates=True), b.contacts(all_candidates=True)
    assert sorted(ca) == sorted(cb)              # contacts() keeps every history field
    for key in ca:
        assert np.array_equal(ca[key], cb[key], equal_nan=True), key
    assert a.energy() == b.energy()


def test_the_table_stores_the_rolling_spring_only_when_the_law_uses_it():
    """Width of the history rows: the law's fields (7 floats) less the rolling spring's 3 when
    mu_r = 0 (the constant-torque model keeps its last couple there), plus the one dissipation
    column."""
    fields = {f.name: f.size for f in _hm().history_fields}
    full = sum(fields.values())
    assert full == 7
    for model, dropped in ((_hm(), fields["rolling_rotation"]), (_hm(rolling_friction=0.1), 0),
                           (_hm(rolling_friction=0.1, rolling_model="constant_torque"), 0),
                           (_hm(StoreEveryColumn), 0)):
        layout = HistoryLayout.of(model)
        assert layout.width == full - dropped
        assert layout.kept == tuple(c for c in range(full) if c not in model.unused_history_columns())
    bond = cl.models.ParallelBond(normal_stiffness=1e11, shear_stiffness=4e10, tensile_strength=3e3,
                                  shear_strength=3e3, contact=_hm())
    # the bond's 9 floats, then the contact's 7 of which the rolling spring's 3 (columns 12-14) go
    assert bond.unused_history_columns() == (12, 13, 14)


def test_without_rolling_friction_a_pour_is_bit_identical_to_the_run_that_stores_every_column(glass):
    compact = _pour(glass, _hm())
    full = _pour(glass, _hm(StoreEveryColumn))
    assert compact.table.hist.shape[1] == 4 + 1 and full.table.hist.shape[1] == 7 + 1
    assert compact.n_contacts() > 10
    _same_run(compact, full)
    assert not compact.contacts()["rolling_rotation"].any()   # reported, as zeros


def test_a_checkpoint_holds_the_full_history_and_resumes_bit_for_bit_in_either_layout(glass, tmp_path):
    """A checkpoint stores every history column (the format of old files): a full-width table whose
    rolling columns are zero resumes in the compact layout, and a compact one's file is the same
    as that of the run that stores every column."""
    full = _pour(glass, _hm(StoreEveryColumn), 3000)
    compact = _pour(glass, _hm(), 3000)
    path_full, path_compact = full.save_checkpoint(tmp_path / "full.npz"), compact.save_checkpoint(tmp_path / "c.npz")
    saved_full, saved_compact = np.load(path_full), np.load(path_compact)
    assert saved_full["table_hist"].shape[1] == 8
    assert np.array_equal(saved_full["table_hist"], saved_compact["table_hist"])
    again = cl.Simulation.load_checkpoint(path_full)          # the law is saved as HertzMindlin
    assert type(again.contact_model) is cl.models.HertzMindlin and again.table.hist.shape[1] == 5
    for sim in (full, again):
        sim.run(steps=2000)
    _same_run(again, full)


def test_set_model_switches_rolling_friction_on_and_off_and_goes_on_as_the_full_layout(glass):
    """A sphere rolling on a floor (after its sliding phase: 5/7 of its initial speed, no spin at
    the start) keeps rolling without rolling resistance; with rolling friction mu_r its speed falls
    at 5/7 mu_r g (the torque mu_r R F_n on a sphere of inertia 2/5 m R^2: m a = (mu_r R m g / R)
    / (1 + 2/5)).  Switched on in the compact layout, the rolling spring's columns are stored from
    then on, and switched off again they stay stored while they hold a loaded spring; the run equals
    bit for bit the one that stored every column throughout."""
    def rolling(cls):
        scene = cl.Scene(gravity=(0.0, 0.0, -G))
        scene.add_sphere(position=(0.0, 0.0, R), radius=R, material=glass, velocity=(0.05, 0.0, 0.0))
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        return cl.Simulation(scene, _hm(cls))

    runs = []
    for cls in (cl.models.HertzMindlin, StoreEveryColumn):
        sim = rolling(cls)
        sim.run(duration=5e-3)                              # slides, then rolls
        v_roll = sim.velocities[0, 0]
        assert v_roll == pytest.approx(5.0 / 7.0 * 0.05, rel=1e-3)
        assert sim.table.hist.shape[1] == (5 if cls is cl.models.HertzMindlin else 8)
        sim.set_model(_hm(cls, rolling_friction=0.02))
        assert sim.table.hist.shape[1] == 8
        sim.run(duration=1e-3)                              # the rolling spring loads up to its limit
        t0, v0 = sim.time, sim.velocities[0, 0]
        sim.run(duration=4e-3)
        assert (v0 - sim.velocities[0, 0]) / (sim.time - t0) == pytest.approx(5.0 / 7.0 * 0.02 * G, rel=2e-2)
        assert np.abs(sim.contacts()["rolling_rotation"]).max() > 0.0
        sim.set_model(_hm(cls))                             # a loaded spring's columns stay stored
        assert sim.table.hist.shape[1] == 8
        v1 = sim.velocities[0, 0]
        sim.run(duration=2e-3)
        assert sim.velocities[0, 0] == pytest.approx(v1, rel=1e-3)
        runs.append(sim)
    _same_run(*runs)


def test_a_layout_never_drops_a_column_that_holds_history():
    """continued_layout keeps a column the law would drop while a row holds a non-zero value there;
    converting into a layout that drops it refuses."""
    law = _hm()
    full = HistoryLayout(7)
    rows = np.zeros((3, 8))
    assert continued_layout(law, rows, full).dropped == (3, 4, 5)
    rows[1, 4] = 1e-3
    assert continued_layout(law, rows, full).dropped == ()
    with pytest.raises(ContactlabError, match="hold non-zero history"):
        full.convert(rows, HistoryLayout.of(law))
    rows = np.tile(np.arange(8.0), (3, 1))
    rows[:, 5] = 0.0
    compact = full.convert(rows, HistoryLayout(7, (5,)))
    assert compact.tolist()[0] == [0, 1, 2, 3, 4, 6, 7]          # column 5 gone, the rest in order
    assert np.array_equal(HistoryLayout(7, (5,)).widen(compact), rows)
