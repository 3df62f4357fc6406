"""Every registered contact law against its NumPy twin, driven by the registry.

A law registered in :mod:`contactlab.laws.registry` gets these tests by existing: each of its
reference instances (``examples()``) is run through the engine's compiled code (the ``probe``
kernel of its cached kernel module, the same law call as in a simulation) and through its plain
NumPy twin (``reference_law``, written independently; for a composite of slot laws the same
composition as plain Python) on one sequence of contact geometries (tests/test_laws.py's): the
overlap rising and falling through zero (contacts that form, slide, stick, part and form again), a
turning normal, random relative velocities and increments.  The history each returns is handed to the next step, so a
twin that drifts from the compiled law anywhere along the way fails.  Bonded laws start bonded.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.engine import layout
from contactlab.engine.launch import kernels_for, launch
from contactlab.geometry.lens import sphere_sphere_lens
from contactlab.geometry.record import GEOMETRY_FIELDS
from contactlab.laws.registry import MODELS
from contactlab.probe import DEFAULT_PROBE_MATERIAL

from test_laws import _random_geometries

RADIUS = 1e-3
#: record fields in the order the probe kernel takes its columns (the last field is not a column)
_COLUMNS = GEOMETRY_FIELDS[:-1]

CASES = [pytest.param(model, id=name) for cls in MODELS.values() for name, model in cls.examples().items()]
#: switches and parts the examples leave out: Hertz-Mindlin's two rolling models (a pair-table
#: column, the same compiled kernels as its example) and the constant-torque rolling part
CASES += [pytest.param(cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1),
                       id="hertz_mindlin_rolling_spring"),
          pytest.param(cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1,
                                              rolling_model="constant_torque"), id="hertz_mindlin_constant_torque"),
          pytest.param(cl.models.Contact(normal=cl.parts.hooke(stiffness=2e3),
                                         rolling=cl.parts.constant_torque_rolling(friction=0.1)),
                       id="contact_constant_torque_rolling")]


def test_every_registered_law_declares_itself():
    """Each registry row: reference instances, a twin, and the law file's history declared once
    (its ``HISTORY_SIZE`` derived from the fields the model reports)."""
    assert set(cl.models.__all__) == {"ContactModel", *MODELS}
    for name, cls in MODELS.items():
        assert cls.name == name and getattr(cl.models, name) is cls
        examples = cls.examples()
        assert examples, f"{name} has no examples()"
        for model in examples.values():
            assert type(model) is cls
            assert model.law.HISTORY_SIZE == model.history_size == sum(f.size for f in model.history_fields)
            assert callable(model.reference_law)
            assert model.has_bonds == cls.declares_bonds()


def _geometries(rng, steps: int):
    """The smooth random contact history of tests/test_laws.py (the overlap swinging through zero,
    a turning normal, random velocities and spins), with the overlap's lens area and volume (the
    contact-volume law reads them), as the probe kernel's columns."""
    rows = list(_random_geometries(rng, steps, RADIUS))
    for g in rows:
        d, r_i, r_j = g["overlap"], g["radius_i"], g["radius_j"]
        g["contact_volume"], g["contact_area"] = sphere_sphere_lens.py_func(r_i, r_j, r_i + r_j - d) if d > 0 else (0.0, 0.0)
    return {name: np.ascontiguousarray(np.array([g[name] for g in rows], dtype=float)) for name in _COLUMNS}


def _start(model, params):
    """The history a contact starts with: a new bond for a law with bonds, else zeros."""
    if not model.has_bonds:
        return np.zeros(model.history_size)
    mass = 4.0 / 3.0 * math.pi * RADIUS**3 * DEFAULT_PROBE_MATERIAL.density
    pairs = dict(overlap=np.zeros(1), radius_i=np.full(1, RADIUS), radius_j=np.full(1, RADIUS),
                 mass_i=np.full(1, mass), mass_j=np.full(1, mass))
    return np.asarray(model.initial_bond_history(pairs, params[None]), dtype=float)[0]


@pytest.mark.parametrize("model", CASES)
def test_compiled_law_equals_its_numpy_twin(model):
    rng = np.random.default_rng(20261125)
    material = DEFAULT_PROBE_MATERIAL
    params = np.ascontiguousarray(model.pair_table((material,))[0, 0], dtype=float)
    steps, dt = 400, 1e-5
    g = _geometries(rng, steps)
    size, terms = model.history_size, model.dissipation_terms
    start = _start(model, params)
    hist0 = np.zeros((1, size + max(len(terms), 1)))
    hist0[0, :size] = start
    force, couple = np.zeros((steps, 3)), np.zeros((steps, 3))
    stored, dissipation, active = np.zeros(steps), np.zeros(steps), np.zeros(steps, dtype=np.bool_)
    hist_out = np.zeros((steps, hist0.shape[1]))
    per_term = np.zeros((steps, layout.N_OWN + len(terms)))
    launch(model, kernels_for(model.law_module).probe, tuple(g[name] for name in _COLUMNS), np.full(steps, dt),
           params, hist0, True, (force, couple, stored, dissipation, active, hist_out, per_term))
    history = start.copy()
    seen_active = seen_apart = 0
    for k in range(steps):
        geometry = {name: g[name][k] for name in _COLUMNS}
        geometry["contact_twist"] = 0.0
        f, m, e, d, act, history = model.reference_law(geometry, params, history, dt)
        history = np.asarray(history, dtype=float)
        where = f"{model!r}, step {k} (overlap {g['overlap'][k]:.3g} m)"
        assert bool(act) == bool(active[k]), where
        np.testing.assert_allclose(force[k], f, rtol=1e-10, atol=1e-15, err_msg=where)
        np.testing.assert_allclose(couple[k], m, rtol=1e-10, atol=1e-18, err_msg=where)
        assert stored[k] == pytest.approx(float(e), rel=1e-10, abs=1e-22), where
        assert dissipation[k] == pytest.approx(float(np.sum(d)), rel=1e-9, abs=1e-22), where
        np.testing.assert_allclose(hist_out[k, :size], history, rtol=1e-10, atol=1e-18, err_msg=where)
        seen_active += bool(act)
        seen_apart += not bool(act)
    # the contact formed, worked and parted (a bond may hold it together throughout)
    assert seen_active > 50 and (seen_apart > 10 or model.has_bonds)
