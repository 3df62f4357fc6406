"""Changing a running law's parameters (``Simulation.set_model``) and Hertz-Mindlin's friction per
material, against the closed form of a sphere sliding on a floor: while it slides its speed falls
at ``mu g`` (Coulomb), whatever the contact stiffness, and not at all without friction."""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab.errors import InputError, StabilityError

G = 9.81
R = 1e-3


def _sliding_sphere(glass, floor_material, model, v0=0.5):
    """A sphere resting on a floor (at its static Hertz overlap, so no bounce), sliding at v0 along
    x without spin."""
    scene = cl.Scene(gravity=(0.0, 0.0, -G))
    scene.add_sphere(position=(0.0, 0.0, R), radius=R, material=glass, velocity=(v0, 0.0, 0.0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=floor_material)
    sim = cl.Simulation(scene, model)
    return sim


def test_set_model_changes_the_friction_of_a_sliding_sphere_from_that_step_on(glass):
    """Coulomb: the sliding speed falls at mu g; 5 ms at mu = 0.2 then 5 ms at mu = 0.6 take
    (0.2 + 0.6) g 5 ms off v0 (the sphere still slides: rolling starts at v = 5/7 v0)."""
    v0 = 0.5
    sim = _sliding_sphere(glass, glass, cl.models.HertzMindlin(restitution=0.3, friction=0.2), v0)
    sim.run(duration=2e-3)                    # the contact settles (normal force = m g)
    t0, v_start = sim.time, sim.velocities[0, 0]
    assert v_start == pytest.approx(v0 - 0.2 * G * t0, rel=2e-3)
    sim.run(duration=5e-3)
    t1 = sim.time
    sim.set_model(cl.models.HertzMindlin(restitution=0.3, friction=0.6))
    assert sim.contact_model.friction == 0.6
    sim.run(duration=5e-3)
    expected = v_start - 0.2 * G * (t1 - t0) - 0.6 * G * (sim.time - t1)
    assert sim.velocities[0, 0] > 5.0 / 7.0 * v0                       # still sliding
    assert sim.velocities[0, 0] == pytest.approx(expected, rel=2e-3)


def test_per_material_friction_takes_the_smaller_value(glass):
    """A frictionless floor (per_material friction 0) under a sphere of friction 0.5: the pair
    slides at min(0.5, 0) = 0, so the sphere keeps its speed exactly (no tangential force)."""
    floor = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="platen")
    model = cl.models.HertzMindlin(restitution=0.3, friction=0.5, per_material={"platen": {"friction": 0.0}})
    sim = _sliding_sphere(glass, floor, model)
    sim.run(duration=5e-3)
    assert sim.velocities[0, 0] == pytest.approx(0.5, rel=1e-12)
    assert np.abs(sim.angular_velocities[0]).max() < 1e-12
    assert model.pair_table((glass, floor))[0, 1, 2] == 0.0
    assert model.pair_table((glass, floor))[0, 0, 2] == 0.5


def test_set_model_keeps_the_new_model_in_checkpoints(glass, tmp_path):
    sim = _sliding_sphere(glass, glass, cl.models.HertzMindlin(restitution=0.3, friction=0.2))
    sim.run(duration=1e-3)
    sim.set_model(cl.models.HertzMindlin(restitution=0.3, friction=0.7))
    sim.save_checkpoint(tmp_path / "c.npz")
    again = cl.Simulation.load_checkpoint(tmp_path / "c.npz")
    assert again.contact_model.friction == 0.7
    sim.run(steps=50)
    again.run(steps=50)
    assert np.array_equal(sim.positions, again.positions)      # bit for bit, as every restart


def test_set_model_refuses_another_law_and_a_step_above_the_new_limit(glass):
    sim = _sliding_sphere(glass, glass, cl.models.HertzMindlin(restitution=0.3, friction=0.2))
    with pytest.raises(InputError, match="set_model changes the parameters of the law that runs"):
        sim.set_model(cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.3, friction=0.2))
    with pytest.raises(InputError, match="model must be a contact model"):
        sim.set_model("HertzMindlin")
    sim.dt = 0.99 * sim.stability_limit
    with pytest.raises(StabilityError):      # stiffer dashpots (e = 0.05) make the limit about 3x smaller
        sim.set_model(cl.models.HertzMindlin(restitution=0.05, friction=0.2))
    assert sim.contact_model.restitution == 0.3                       # nothing changed
