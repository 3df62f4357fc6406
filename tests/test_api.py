"""The public API named in the foundation issue, as a user calls it."""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl

from conftest import sphere_mass


def test_documented_names_exist():
    for name in ("Material", "Scene", "Simulation", "models", "SimulationBlowUp", "InputError", "StabilityError"):
        assert hasattr(cl, name)
    assert hasattr(cl.models, "HertzMindlin") and hasattr(cl.models, "LinearSpringDashpot")


def test_scene_indices_and_state_order(glass):
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    i = scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass, velocity=(0, 0, -1.0),
                         angular_velocity=(0, 0, 0))
    P = np.array([[0.01, 0, 0.01], [0.02, 0, 0.01], [0.03, 0, 0.01]])
    idx = scene.add_spheres(positions=P, radii=np.full(3, 1e-3), material=glass, velocities=np.zeros((3, 3)))
    k = scene.add_sphere(position=(0.05, 0, 0.01), radius=2e-3, material=glass, fixed=True, velocity=(0, 0, -0.1))
    w = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    assert i == 0 and list(idx) == [1, 2, 3] and k == 4 and w == 0
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=None)
    assert sim.positions.shape == (5, 3) and sim.velocities.shape == (5, 3) and sim.angular_velocities.shape == (5, 3)
    np.testing.assert_array_equal(sim.positions[1:4], P)
    assert sim.time == 0.0
    # returned arrays are copies: writing to them does not change the simulation
    sim.positions[0] = 1.0
    assert sim.positions[0, 0] == 0.0


def test_run_by_duration_and_steps(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    sim.run(duration=0.01)
    assert sim.step == 1000 and sim.time == pytest.approx(0.01, rel=1e-12)
    sim.run(steps=250)
    assert sim.step == 1250 and sim.time == pytest.approx(0.0125, rel=1e-12)


def test_fixed_sphere_moves_at_prescribed_velocity_and_ignores_forces(glass):
    """A kinematic sphere pushed by a free one (and by gravity) keeps its prescribed motion."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    k = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass, fixed=True, velocity=(0, 0, -0.1))
    f = scene.add_sphere(position=(0, 0, 2.0e-3 + 1e-6), radius=1e-3, material=glass, velocity=(0, 0, -1.0))
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(duration=0.002)
    assert np.allclose(sim.velocities[k], (0, 0, -0.1), rtol=0, atol=0)
    np.testing.assert_allclose(sim.positions[k], (0, 0, -0.1 * sim.time), rtol=1e-12, atol=1e-15)
    # the free sphere hit the kinematic one at a relative speed of 0.9 m/s and rebounded (e = 0.5)
    assert sim.velocities[f, 2] > 0.3
    # reverse the kinematic sphere
    sim.set_velocity(k, (0, 0, 0.1))
    t0, z0 = sim.time, sim.positions[k, 2]
    sim.run(duration=0.001)
    assert sim.positions[k, 2] == pytest.approx(z0 + 0.1 * (sim.time - t0), rel=1e-9)


def test_contacts_and_energy_dicts(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.9999e-3), radius=1e-3, material=glass)
    scene.add_sphere(position=(0, 0, 2.9997e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    c = sim.contacts()
    for key in ("i", "j", "overlap", "normal", "force", "torque_i", "torque_j", "wall", "contact_point",
                "elastic_energy", "tangential_displacement"):
        assert key in c
    assert len(c["i"]) == 2
    wall = c["wall"] >= 0
    assert c["j"][wall][0] == -1 and c["wall"][wall][0] == 0 and c["i"][wall][0] == 0
    pair = ~wall
    assert (c["i"][pair][0], c["j"][pair][0]) == (0, 1)
    # force on i: the wall pushes sphere 0 up, sphere 1 pushes sphere 0 down
    assert c["force"][wall][0][2] > 0 and c["force"][pair][0][2] < 0
    np.testing.assert_allclose(c["normal"][pair][0], (0, 0, 1))
    e = sim.energy()
    for key in ("kinetic", "rotational", "gravitational", "elastic", "dissipated", "total"):
        assert isinstance(e[key], float)
    assert e["elastic"] > 0 and e["total"] == pytest.approx(
        e["kinetic"] + e["rotational"] + e["gravitational"] + e["elastic"] + e["dissipated"])
    m = sphere_mass(glass, 1e-3)
    assert e["gravitational"] == pytest.approx(m * 9.81 * (0.9999e-3 + 2.9997e-3), rel=1e-12)


def test_default_dt_is_stable_fraction_and_large_dt_is_refused(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    sim = cl.Simulation(scene, model=model)
    assert 0 < sim.dt < sim.stability_limit
    with pytest.raises(cl.StabilityError, match="above the stability limit"):
        cl.Simulation(scene, model=model, dt=2 * sim.stability_limit)
    with pytest.raises(cl.StabilityError):
        sim.dt = 1.01 * sim.stability_limit


def test_rigid_wall_does_not_shrink_the_limit_below_the_spheres_own(glass):
    """A wall is massless and rigid: a very stiff wall material must not make dt vanish."""
    def limit(wall_young):
        scene = cl.Scene()
        scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
        scene.add_sphere(position=(0, 0, 0.02), radius=1e-3, material=glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=cl.Material(7800, wall_young, 0.3))
        return cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5)).stability_limit

    soft, stiff, stiffer = limit(1e7), limit(1e15), limit(1e25)
    # a rigid wall doubles E* at most (E* -> E/(1-nu^2)), so the limit shrinks by a bounded factor
    assert stiff > 0.5 * soft
    assert stiffer == pytest.approx(stiff, rel=1e-6)
