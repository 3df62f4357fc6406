"""Conservation laws in a cloud of colliding spheres (no walls, no gravity).

References: Newton's third law (every contact force acts on both bodies with opposite sign, torques
about each centre through the contact point) implies exact conservation of linear and angular
momentum; energy is conserved for elastic frictionless contacts (velocity Verlet is symplectic, the
Hertz force has a potential) and otherwise balanced by the dissipated energy.
"""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab import observables
from contactlab.engine import layout

from conftest import random_packing


def _cloud(glass, model, dt_fraction, seed=3):
    pos, rad = random_packing(60, 1e-3, 0.012, seed=seed, spread=0.3)
    rng = np.random.default_rng(seed + 2)
    vel = rng.normal(scale=0.3, size=pos.shape) - 30.0 * (pos - pos.mean(axis=0))  # converging
    spin = rng.normal(scale=50.0, size=pos.shape)
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_spheres(pos, rad, glass, velocities=vel, angular_velocities=spin)
    sim = cl.Simulation(scene, model)
    sim.dt = dt_fraction * sim.stability_limit
    return sim


@pytest.mark.parametrize("model", [cl.models.HertzMindlin(restitution=0.5, friction=0.5),
                                   cl.models.LinearSpringDashpot(stiffness=2e3, restitution=0.5, friction=0.5,
                                                                 rolling_friction=0.05)],
                         ids=["hertz-mindlin", "linear+rolling"])
def test_momentum_conserved_to_round_off(glass, model):
    sim = _cloud(glass, model, 0.35)
    p0, l0 = sim.linear_momentum(), sim.angular_momentum()
    m_v = float((sim.model.mass[:, None] * np.abs(sim.state.velocities)).sum())
    collisions = 0
    for _ in range(20):
        sim.run(duration=0.001)
        collisions = max(collisions, sim.n_contacts())
    assert collisions >= 3 and sim.energy()["dissipated"] > 0
    assert np.abs(sim.linear_momentum() - p0).max() < 1e-14 * m_v
    assert np.abs(sim.angular_momentum() - l0).max() < 1e-11 * np.abs(l0).max()


def test_energy_conserved_elastic_frictionless(glass):
    """e = 1, mu = 0: kinetic + rotational + elastic energy stays within 1e-6 of its start value,
    at every sample during the collisions (a small step: Verlet's energy error is O(dt^2))."""
    sim = _cloud(glass, cl.models.HertzMindlin(restitution=1.0, friction=0.0), 0.03)
    e0 = sim.energy()["total"]
    worst, contacts = 0.0, 0
    for _ in range(40):
        sim.run(duration=0.0005)
        e = sim.energy()
        worst = max(worst, abs(e["balance_error"]) / e0)
        contacts = max(contacts, sim.n_contacts())
    assert contacts >= 3
    assert e["dissipated"] == 0.0
    assert worst < 1e-6


@pytest.mark.parametrize("model", [cl.models.HertzMindlin(restitution=0.5, friction=0.5),
                                   cl.models.HertzMindlin(restitution=1.0, friction=0.5, rolling_friction=0.1),
                                   cl.models.LinearSpringDashpot(stiffness=2e3, restitution=0.3, friction=0.3)],
                         ids=["damped-frictional", "elastic-frictional-rolling", "linear"])
def test_energy_balance_with_dissipation(glass, model):
    """kinetic + rotational + elastic + dissipated is constant within 1 % of the initial energy,
    with each model's default time step."""
    sim = _cloud(glass, model, model.default_dt_fraction)
    e0 = sim.energy()["total"]
    for _ in range(20):
        sim.run(duration=0.001)
        e = sim.energy()
        assert abs(e["balance_error"]) < 0.01 * e0
    assert e["dissipated"] > 0.05 * e0


def test_energy_balance_settling_with_gravity_and_walls(glass):
    """A small pour: gravity, walls, friction; the balance closes within 1 % of the potential energy."""
    scene = cl.Scene()
    scene.fill_box((0, 0, 0), (0.012, 0.012, 0.03), 1e-3, glass, jitter=0.5, seed=2, radius_spread=0.1)
    L = 0.012
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, L, 0), (0, -1, 0))]:
        scene.add_wall(point=p, normal=n, material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    e0 = sim.energy()
    sim.run(duration=0.1)
    e = sim.energy()
    assert e["kinetic"] < 0.05 * abs(e0["gravitational"] - e["gravitational"])  # it has (nearly) settled
    assert abs(e["balance_error"]) < 0.01 * abs(e0["gravitational"] - e["gravitational"])


def test_boundary_work_enters_the_balance(glass):
    """A piston pushed into a settled bed does work on it; the balance includes that work."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.fill_box((0, 0, 0), (0.01, 0.01, 0.012), 1e-3, glass, jitter=0.3, seed=4)
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((0.01, 0, 0), (-1, 0, 0)),
                 ((0, 0, 0), (0, 1, 0)), ((0, 0.01, 0), (0, -1, 0))]:
        scene.add_wall(point=p, normal=n, material=glass)
    piston = scene.add_wall(point=(0, 0, 0.0125), normal=(0, 0, -1), material=glass, velocity=(0, 0, -0.05))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.3))
    sim.run(duration=0.05)  # the bed settles while the piston comes down
    before = sim.energy()
    assert before["boundary_work"] == 0.0
    sim.run(duration=0.03)  # the piston reaches the bed and compresses it
    after = sim.energy()
    assert after["boundary_work"] > 1e-6
    assert abs(after["balance_error"] - before["balance_error"]) < 0.01 * after["boundary_work"]
    assert sim.wall_forces()[piston][2] > 0  # the spheres push the piston up
    assert sim.wall_points[piston][2] == pytest.approx(0.0125 - 0.05 * sim.time, rel=1e-9)


def test_energy_summed_in_blocks_equals_the_direct_sums(glass, monkeypatch):
    """energy() sums bodies and pairs in blocks (observables.ENERGY_BLOCK, small temporaries at any
    size).  Reference: the terms written out directly with NumPy over all rows (kinetic, rotational
    and gravitational energy of the free spheres, the elastic energy of the active pairs), with
    blocks of 7 bodies/pairs and two fixed spheres, under gravity, mid-collision."""
    pos, rad = random_packing(60, 1e-3, 0.012, seed=4, spread=0.3)
    rng = np.random.default_rng(5)
    scene = cl.Scene(gravity=(0.3, -1.0, -9.81))
    scene.add_spheres(pos, rad, glass, velocities=-30.0 * (pos - pos.mean(axis=0)),
                      angular_velocities=rng.normal(scale=50.0, size=pos.shape))
    scene.add_sphere(position=(0.05, 0, 0), radius=1e-3, material=glass, fixed=True)
    scene.add_sphere(position=(0.06, 0, 0), radius=1e-3, material=glass, fixed=True)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(steps=300)
    assert sim.n_contacts() >= 3
    monkeypatch.setattr(observables, "ENERGY_BLOCK", 7)
    e = sim.energy()
    m, s, t = sim.model, sim.state, sim.table
    free = ~m.fixed
    inertia = m.inertia[free, None]
    n = t.n_pairs
    want = dict(kinetic=0.5 * np.sum(m.mass[free] * np.sum(s.velocities[free] ** 2, axis=1)),
                rotational=0.5 * np.sum(inertia * s.angular_velocities[free] ** 2),
                gravitational=-np.sum(m.mass[free] * (s.positions[free] @ m.gravity)),
                elastic=np.sum(t.out[:n, layout.OUT_ELASTIC][t.status[:n] == layout.ACTIVE]))
    for key, value in want.items():
        assert e[key] == pytest.approx(value, rel=1e-12, abs=1e-300), key
