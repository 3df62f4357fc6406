"""``Simulation.unbalanced_force_ratio``: the static-equilibrium test of quasi-static DEM.

References: Newton's second law for one sphere pressed on a floor by a linear spring (the ratio is
``|m g - k delta| / (k delta)`` in closed form); rolling without slip on a flat wall (no contact
force along the wall, so Cundall's local damping, which opposes the net force, leaves the speed
unchanged: the reason the ratio and not a speed is the test to use with local damping).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl

RADIUS = 0.01
STIFFNESS = 1e4   # N/m


def _on_floor(glass, overlap, *, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), damping=0.0,
              dt=None, restitution=1.0):
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_sphere((0.0, 0.0, RADIUS - overlap), RADIUS, glass, velocity=velocity,
                     angular_velocity=angular_velocity)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=glass)
    law = cl.models.LinearSpringDashpot(stiffness=STIFFNESS, restitution=restitution, friction=0.5)
    return cl.Simulation(scene, law, dt=dt, local_damping=damping)


def test_sphere_on_a_spring_matches_newtons_second_law(glass):
    mass = glass.density * 4.0 / 3.0 * math.pi * RADIUS ** 3
    sim = _on_floor(glass, 0.5 * mass * 9.81 / STIFFNESS, dt=1e-6)   # the spring carries half the weight
    sim.run(steps=1)
    overlap = RADIUS - sim.positions[0, 2]
    expected = abs(mass * 9.81 - STIFFNESS * overlap) / (STIFFNESS * overlap)
    assert expected == pytest.approx(1.0, rel=1e-3)
    assert sim.unbalanced_force_ratio() == pytest.approx(expected, rel=1e-9)


def test_ratio_from_the_public_arrays_and_its_limits(glass):
    """A small heap settling under local damping: the ratio is the mean of ``|sim.forces|`` over the
    mean contact force of ``sim.contacts()``, and it falls toward 0 as the heap comes to rest."""
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    rng = np.random.default_rng(1)
    xy = rng.uniform(-0.02, 0.02, size=(12, 2))
    z = 0.012 + 0.022 * np.arange(12)
    scene.add_spheres(np.column_stack([xy, z]), np.full(12, RADIUS), glass)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5), local_damping=0.7)
    sim.run(steps=1)
    assert sim.unbalanced_force_ratio() == math.inf          # all in free fall: forces, no contact
    ratios = []
    for _ in range(15):
        sim.run(duration=0.1)
        c = sim.contacts()
        mean_contact = np.linalg.norm(c["force"], axis=1).mean()
        by_hand = np.linalg.norm(sim.forces, axis=1).mean() / mean_contact
        assert sim.unbalanced_force_ratio() == pytest.approx(by_hand, rel=1e-12)
        ratios.append(sim.unbalanced_force_ratio())
    assert ratios[-1] < 1e-6 < ratios[0]


def test_no_gravity_no_contact_is_zero(glass):
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere((0.0, 0.0, 0.0), RADIUS, glass, velocity=(1.0, 0.0, 0.0))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    sim.run(steps=3)
    assert sim.unbalanced_force_ratio() == 0.0


def test_local_damping_leaves_a_rolling_sphere_rolling(glass):
    """A sphere rolling on a floor, its weight carried by the spring: once the dashpot has taken out
    the small slip of the start, the contact point does not move, no force acts along the floor,
    and local damping (0.7) takes nothing out: the speed stays what it is (to 1e-9 over 0.9 s),
    while the ratio says the sphere is in equilibrium."""
    mass = glass.density * 4.0 / 3.0 * math.pi * RADIUS ** 3
    speed = 1e-3
    sim = _on_floor(glass, mass * 9.81 / STIFFNESS, velocity=(speed, 0.0, 0.0),
                    angular_velocity=(0.0, speed / RADIUS, 0.0), damping=0.7, restitution=0.3)
    sim.run(duration=0.3)
    rolling = sim.velocities[0, 0]
    assert rolling > 0.99 * speed
    sim.run(duration=0.9)
    assert sim.velocities[0, 0] == pytest.approx(rolling, rel=1e-9)
    assert sim.unbalanced_force_ratio() < 1e-9


def test_a_clump_counts_once_with_its_own_net_force(glass):
    """A clump of two spheres and a free sphere falling onto a floor: the net forces are the
    clump's (members' contacts plus its weight, ``sim.clump_forces``) and the free sphere's, not
    the members' own; as they come to rest on the floor (contact damping only: local damping is
    not offered with clumps) the ratio falls toward 0."""
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_clump([(-0.008, 0.0, 0.0101), (0.008, 0.0, 0.0101)], RADIUS, glass)
    scene.add_sphere((0.05, 0.0, 0.0102), RADIUS, glass)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.1, friction=0.5))
    sim.run(duration=0.02)
    free = np.flatnonzero(sim.model.clump_of < 0)
    net = np.concatenate([np.linalg.norm(sim.clump_forces, axis=1), np.linalg.norm(sim.forces[free], axis=1)])
    mean_contact = np.linalg.norm(sim.contacts()["force"], axis=1).mean()
    assert len(net) == 2
    assert sim.unbalanced_force_ratio() == pytest.approx(net.mean() / mean_contact, rel=1e-12)
    sim.run(duration=1.0)
    assert sim.unbalanced_force_ratio() < 1e-4
