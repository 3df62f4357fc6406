"""Bad input gets a clear error naming the offending value, and nothing is half-built."""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl


@pytest.mark.parametrize("radius", [-1e-3, 0.0, math.nan, math.inf])
def test_bad_radius(glass, radius):
    scene = cl.Scene()
    with pytest.raises(cl.InputError, match="radius"):
        scene.add_sphere(position=(0, 0, 0), radius=radius, material=glass)
    assert scene.n_spheres == 0


def test_nan_position_and_velocity(glass):
    scene = cl.Scene()
    with pytest.raises(cl.InputError, match=r"position must be finite"):
        scene.add_sphere(position=(0, math.nan, 0), radius=1e-3, material=glass)
    with pytest.raises(cl.InputError, match=r"velocity must be finite"):
        scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass, velocity=(math.inf, 0, 0))
    with pytest.raises(cl.InputError, match=r"3 numbers"):
        scene.add_sphere(position=(0, 0), radius=1e-3, material=glass)
    assert scene.n_spheres == 0


def test_vectorised_add_is_all_or_nothing(glass):
    scene = cl.Scene()
    P = np.zeros((4, 3))
    P[:, 0] = [0, 0.01, 0.02, 0.03]
    R = np.array([1e-3, 1e-3, -1e-3, 1e-3])
    with pytest.raises(cl.InputError, match=r"radii\[2\]"):
        scene.add_spheres(positions=P, radii=R, material=glass)
    P[3, 1] = math.nan
    with pytest.raises(cl.InputError, match=r"positions\[3\]"):
        scene.add_spheres(positions=P, radii=1e-3, material=glass)
    assert scene.n_spheres == 0


def test_zero_wall_normal(glass):
    scene = cl.Scene()
    with pytest.raises(cl.InputError, match="wall normal must be a nonzero vector"):
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 0), material=glass)
    assert scene.n_walls == 0


@pytest.mark.parametrize("kwargs, text", [
    (dict(density=-1.0, young=1e7, poisson=0.3), "density must be > 0"),
    (dict(density=2500.0, young=0.0, poisson=0.3), "young must be > 0"),
    (dict(density=2500.0, young=1e7, poisson=0.5), "poisson must satisfy"),
])
def test_bad_material(kwargs, text):
    with pytest.raises(cl.InputError, match=text):
        cl.Material(**kwargs)


def test_bad_model_parameters():
    with pytest.raises(cl.InputError, match=r"restitution must satisfy 0 < restitution <= 1, got 1.5"):
        cl.models.HertzMindlin(restitution=1.5, friction=0.5)
    with pytest.raises(cl.InputError, match=r"restitution"):
        cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.0, friction=0.5)
    with pytest.raises(cl.InputError, match=r"friction must satisfy 0 <= friction, got -0.1"):
        cl.models.HertzMindlin(restitution=0.5, friction=-0.1)
    with pytest.raises(cl.InputError, match=r"stiffness must satisfy 0 < stiffness"):
        cl.models.LinearSpringDashpot(stiffness=-5.0, restitution=0.5, friction=0.5)
    with pytest.raises(cl.InputError, match=r"HertzMindlin: unknown parameter 'bogus'; allowed: restitution, friction"):
        cl.models.HertzMindlin(restitution=0.5, friction=0.5, bogus=1.0)


def test_overlapping_spheres_at_start(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
    scene.add_sphere(position=(1.5e-3, 0, 0), radius=1e-3, material=glass)
    with pytest.raises(cl.InputError, match=r"spheres 0 and 1 overlap by 0.0005 m \(50% of the smaller radius\)"):
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))


def test_sphere_through_wall_at_start(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.5e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    with pytest.raises(cl.InputError, match=r"sphere 0 penetrates wall 0"):
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))


def test_small_initial_overlap_within_tolerance_is_accepted(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
    scene.add_sphere(position=(1.999e-3, 0, 0), radius=1e-3, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    assert sim.n_contacts() == 1


def test_bad_dt_values(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    for bad in (0.0, -1e-6, math.nan):
        with pytest.raises(cl.InputError, match="dt"):
            cl.Simulation(scene, model=model, dt=bad)
    with pytest.raises(cl.StabilityError, match=r"dt=0.001 s is above the stability limit"):
        cl.Simulation(scene, model=model, dt=1e-3)


def test_bad_run_arguments(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    with pytest.raises(cl.InputError, match="exactly one"):
        sim.run()
    with pytest.raises(cl.InputError, match="duration must be >= 0"):
        sim.run(duration=-1.0)
    with pytest.raises(cl.InputError, match="steps must be a non-negative integer"):
        sim.run(steps=2.5)
    with pytest.raises(cl.InputError, match="out of range"):
        sim.set_velocity(5, (0, 0, 0))
    assert sim.step == 0


def test_empty_scene_and_wrong_types(glass):
    with pytest.raises(cl.InputError, match="no spheres"):
        cl.Simulation(cl.Scene(), model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    with pytest.raises(cl.InputError, match="model must be a contact model"):
        cl.Simulation(scene, model="HertzMindlin")
    with pytest.raises(cl.InputError, match="material must be a contactlab.Material"):
        scene.add_sphere(position=(0, 0, 0), radius=1e-3, material="glass")


def test_run_arguments_are_named_before_the_missing_time_step(glass):
    """One free sphere and no walls: no contact can occur, so dt=None has no stability limit to
    derive a step from.  The simulation is built (sim.dt is None); a wrong run argument is named as
    such; a run that needs the step asks for it; once given, free fall is exact (velocity Verlet
    integrates a constant force exactly: z = z0 - g t^2 / 2)."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.0), radius=1e-3, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    assert sim.dt is None
    with pytest.raises(cl.InputError, match=r"duration must be >= 0 s, got -1\.0"):
        sim.run(duration=-1)
    with pytest.raises(cl.InputError, match=r"steps must be a non-negative integer, got 2\.5"):
        sim.run(steps=2.5)
    with pytest.raises(cl.InputError, match=r"steps must be a non-negative integer, got nan"):
        sim.run(steps=math.nan)
    with pytest.raises(cl.InputError, match=r"duration must be a number, got '1'"):
        sim.run(duration="1")
    with pytest.raises(cl.InputError, match=r"give exactly one of duration \(s\) or steps"):
        sim.run(duration=1.0, steps=3)
    with pytest.raises(cl.InputError, match=r"dt is not set: .* no contact can occur in this scene"):
        sim.run(duration=0.1)
    with pytest.raises(cl.InputError, match=r"EnergyCSVReporter\(interval=0\.01\) needs the time step"):
        sim.add_reporter(cl.io.EnergyCSVReporter("unused.csv", interval=0.01))
    sim.run(steps=0)                                   # nothing to do needs no step
    sim.dt = 1e-3
    sim.run(duration=0.1)
    assert sim.step == 100
    assert sim.positions[0, 2] == pytest.approx(1.0 - 0.5 * 9.81 * 0.1**2, rel=1e-12)
