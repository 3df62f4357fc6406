"""A simulation that blows up stops with a diagnostic naming the spheres, the time and the cause."""
from __future__ import annotations

import math

import pytest

import contactlab as cl


def test_excessive_overlap_stops_the_run(glass):
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
    scene.add_sphere(position=(0, 0, 2.01e-3), radius=1e-3, material=glass, velocity=(0, 0, -30.0))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(duration=0.001)
    err = info.value
    assert err.particles == (0, 1)
    text = str(err)
    assert "sphere 0 and sphere 1" in text and "of the smaller radius" in text and "time step" in text
    assert f"t={err.time:.6g}" in text and err.time < 0.001
    with pytest.raises(cl.SimulationBlowUp, match="earlier blow-up"):
        sim.run(steps=1)


def test_overlap_with_wall_names_the_wall(glass):
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 1.01e-3), radius=1e-3, material=glass, velocity=(0, 0, -40.0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    with pytest.raises(cl.SimulationBlowUp, match=r"sphere 0 and wall 0"):
        sim.run(duration=0.001)


def test_non_finite_state_is_reported(glass):
    """A NaN that enters the state (here injected by hand) stops the run at the next step."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    for k in range(5):
        scene.add_sphere(position=(0.01 * k, 0, 0.01), radius=1e-3, material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    sim.run(steps=5)
    sim.state.angular_velocities[3, 1] = math.nan
    with pytest.raises(cl.SimulationBlowUp, match=r"at t=6e-05 s \(step 6\): sphere 3 has a non-finite") as info:
        sim.run(steps=10)
    assert info.value.particles == (3,) and info.value.step == 6
