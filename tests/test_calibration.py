"""Calibration against synthetic targets whose answer is known in closed form.

A steel sphere thrown down at speed v from GAP above a steel wall (gravity on): its fall ends as
a free fall from h0 = GAP + v^2 / 2g would; it bounces with the requested restitution e (the
Hertz-Mindlin damping is solved for it, contactlab.laws.restitution), so it rises to
h1 = e^2 h0, and the contact dissipates m g (h0 - h1).  The simulation meets this to ~2e-4 in e:
1.2e-4 from the time step (1 % of the stability limit, converging as dt^2) and g t_c / v = 1.6e-4
from gravity acting during the 8 us contact.  Both are below the optimisers' tolerance (1e-3 of
the range: 9e-4 in e), so the recovered parameters must lie within the tolerance of the answer.
"""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from helpers import ensemble_members as em

E_TRUE, V_TRUE = 0.6, 0.5
H0 = em.drop_height(V_TRUE)
TARGET = {"rebound_height": E_TRUE**2 * H0}


def test_restitution_from_a_rebound_height():
    tol = 1e-3
    r = cl.calibrate(em.drop, em.rebound_height, TARGET, {"restitution": (0.1, 1.0)}, executor="serial",
                     tolerance=tol, duration=em.impact_duration())
    assert r.method == "bounded" and r.success
    assert abs(r.parameters["restitution"] - E_TRUE) <= tol * 0.9
    assert r.measured["rebound_height"] == pytest.approx(TARGET["rebound_height"], rel=2 * tol)
    h = r.history
    assert len(h) == r.evaluations and (h.status == "ok").all()
    assert r.objective == h.objective.min()
    # every member ended in flight after the bounce (where the energy reading holds)
    assert (h["rebound_height"] < H0).all()


def test_restitution_and_speed_from_height_and_dissipation():
    """Two parameters, two targets: h1 = e^2 h0(v) and the dissipated m g (h0(v) - h1) fix e and v."""
    tol = 2e-3
    targets = {**TARGET, "dissipated": em.sphere_mass() * em.G * (H0 - TARGET["rebound_height"])}
    r = cl.calibrate(em.thrown, em.rebound_height, targets, {"restitution": (0.1, 1.0), "speed": (0.2, 1.0)},
                     method="nelder-mead", tolerance=tol, executor="serial", duration=em.impact_duration(0.2))
    assert r.success
    assert abs(r.parameters["restitution"] - E_TRUE) <= tol * 0.9
    assert abs(r.parameters["speed"] - V_TRUE) <= tol * 0.8


def test_differential_evolution_runs_a_generation_as_one_ensemble():
    """The population of a generation goes to the executor as one ensemble: two worker processes
    give exactly the evaluations of the serial run (same seed), and the best is in the history."""
    args = (em.drop, em.rebound_height, TARGET, {"restitution": (0.1, 1.0)})
    kw = dict(method="differential-evolution", popsize=5, max_evaluations=10, duration=em.impact_duration(), seed=3)
    serial = cl.calibrate(*args, executor="serial", **kw)
    pool = cl.calibrate(*args, workers=2, **kw)
    assert 5 < serial.evaluations <= 10   # two generations of 5; a point met twice is run once
    np.testing.assert_array_equal(serial.history.objective, pool.history.objective)
    np.testing.assert_array_equal(serial.history.restitution, pool.history.restitution)
    assert pool.parameters == serial.parameters and pool.objective == pool.history.objective.min()


def test_failed_evaluations_are_penalised_not_fatal():
    """A member that fails (restitution above 0.95 raises) gets the penalty objective and the
    search goes on.  Bounds (0.75, 1): the Latin-hypercube start puts one of its 5 points in each
    fifth of the range, so one lies in (0.95, 1) and fails, whatever the seed."""
    r = cl.calibrate(em.impact_or_raise, em.rebound_velocity, {"rebound_velocity": 0.8 * em.SPEED},
                     {"restitution": (0.75, 1.0)}, method="differential-evolution", popsize=5, max_evaluations=10,
                     executor="serial", duration=em.IMPACT_DURATION)
    h = r.history
    failed = h[h.status == "failed"]
    assert len(failed) >= 1 and (failed.restitution > 0.95).all()
    assert (failed.objective == cl.ensemble.calibration.PENALTY).all() and failed.error.str.contains("ValueError").all()
    assert (h.status == "ok").sum() >= 4 and r.objective < 1.0 and r.parameters["restitution"] <= 0.95


@pytest.mark.parametrize("kwargs, match", [
    (dict(targets={}), "targets must be"),
    (dict(parameters={"restitution": (1.0, 0.1)}), "low < high"),
    (dict(parameters={"restitution": 0.5}), "bounds"),
    (dict(method="bayes"), "method must be one of"),
    (dict(parameters={"restitution": (0.1, 1.0), "speed": (0.2, 1.0)}, method="bounded"), "fits one parameter"),
    (dict(fixed={"restitution": 0.5}), "both calibrated"),
    (dict(scales={"height": 1.0}), "not a target"),
    (dict(x0={"restitution": 2.0}), "outside the bounds"),
])
def test_bad_calibration_arguments_are_named(kwargs, match):
    args = dict(make_simulation=em.drop, measure=em.rebound_height, targets=TARGET,
                parameters={"restitution": (0.1, 1.0)}, executor="serial", duration=em.impact_duration())
    args.update(kwargs)
    with pytest.raises(cl.InputError, match=match):
        cl.calibrate(**args)


def test_a_target_the_measure_does_not_return_is_named():
    with pytest.raises(cl.InputError, match="no value named 'height'.*rebound_height"):
        cl.calibrate(em.drop, em.rebound_height, {"height": 1e-3}, {"restitution": (0.1, 1.0)}, executor="serial",
                     duration=em.impact_duration(), max_evaluations=2)


def test_the_objective_plot(tmp_path):
    pytest.importorskip("matplotlib")
    r = cl.calibrate(em.drop, em.rebound_height, TARGET, {"restitution": (0.1, 1.0)}, executor="serial",
                     tolerance=0.05, duration=em.impact_duration())
    fig = r.plot(tmp_path / "objective.png")
    assert (tmp_path / "objective.png").stat().st_size > 1000 and len(fig.axes) == 2
