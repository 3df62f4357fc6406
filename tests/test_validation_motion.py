"""Tangential behaviour and rigid-body motion against theory.

References:
* Rigid-body Coulomb impact theory for gross sliding (Maw, Barber & Fawcett 1976; Brach 1988):
  ``contactlab.validation.oblique_impact_sliding``.
* Free fall: x(t) = x0 + v0 t + g t^2 / 2 (velocity Verlet is exact for a constant force).
* A solid sphere on an incline: rolls with a = 5/7 g sin(theta) if mu >= 2/7 tan(theta), else slides
  with a = g (sin(theta) - mu cos(theta)).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.validation import incline_acceleration, oblique_impact_sliding, oblique_wall_impact

R = 1e-3


@pytest.mark.parametrize("model_name", ["HertzMindlin", "LinearSpringDashpot"])
@pytest.mark.parametrize("angle_deg", [45.0, 60.0, 75.0])
def test_oblique_impact_gross_sliding(glass, model_name, angle_deg):
    """Rebound tangential velocity and spin vs rigid-body Coulomb theory (within 2 % of the change,
    the elastic tangential compliance causes the small remainder)."""
    mu, e, speed = 0.1, 0.6, 0.5
    if model_name == "HertzMindlin":
        model = cl.models.HertzMindlin(restitution=e, friction=mu)
    else:
        model = cl.models.LinearSpringDashpot(stiffness=2e3, restitution=e, friction=mu)
    th = math.radians(angle_deg)
    vn, vt = speed * math.cos(th), speed * math.sin(th)
    probe = cl.Simulation(_one_sphere_scene(glass), model)
    res = oblique_wall_impact(model, glass, R, vn, vt, dt=probe.dt / 10)
    ref = oblique_impact_sliding(vn, vt, e, mu, R)
    assert ref["sliding"]
    assert res["restitution"] == pytest.approx(e, rel=0.02)
    dv = res["velocity"][0] - vt
    dw = res["angular_velocity"][1]
    assert dv == pytest.approx(ref["delta_tangential_velocity"], rel=0.02)
    assert dw == pytest.approx(ref["delta_spin"], rel=0.02)  # +y spin reduces the slip of +x motion
    assert abs(res["velocity"][1]) < 1e-12 and abs(res["angular_velocity"][0]) < 1e-9


def _one_sphere_scene(glass):
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 2 * R), radius=R, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    return scene


def test_backspin_without_contact_slip_keeps_spin(glass):
    """A sphere rolling on a wall (contact point at rest) feels no friction: v and omega stay."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    # rest at the static Hertz overlap so that the normal force balances gravity from the start
    m = glass.density * 4 / 3 * math.pi * R**3
    e_star = glass.young / (2 * (1 - glass.poisson**2))
    overlap = (m * 9.81 / (4 / 3 * e_star * math.sqrt(R))) ** (2 / 3)
    v = 0.05
    omega = v / (R - overlap / 2)  # the contact point is the middle of the overlap
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, R - overlap), radius=R, material=glass, velocity=(v, 0, 0),
                     angular_velocity=(0, omega, 0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, model)
    sim.run(duration=0.05)
    assert sim.velocities[0, 0] == pytest.approx(v, rel=1e-6)
    assert sim.angular_velocities[0, 1] == pytest.approx(omega, rel=1e-6)
    assert sim.energy()["dissipated"] < 1e-9 * m * v**2


def test_spinning_about_the_normal_keeps_spin(glass):
    """Spin about the contact normal gives no slip at the contact point: no torque, spin is kept."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, R * 0.999), radius=R, material=glass, angular_velocity=(0, 0, 30.0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(duration=0.02)
    assert sim.angular_velocities[0, 2] == 30.0
    np.testing.assert_array_equal(sim.angular_velocities[0, :2], 0.0)


def test_free_fall_is_exact(glass):
    g = np.array([1.0, -2.0, -9.81])
    scene = cl.Scene(gravity=g)
    v0 = np.array([0.3, 0.1, 2.0])
    scene.add_sphere(position=(0, 0, 1.0), radius=R, material=glass, velocity=v0, angular_velocity=(1.0, 2.0, 3.0))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-4)
    sim.run(steps=3000)
    t = sim.time
    np.testing.assert_allclose(sim.positions[0], (0, 0, 1.0) + v0 * t + 0.5 * g * t**2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sim.velocities[0], v0 + g * t, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sim.angular_velocities[0], (1.0, 2.0, 3.0), rtol=0, atol=0)
    # the orientation turned by |omega| t about the fixed axis
    q = sim.orientations[0]
    assert 2 * math.acos(min(1.0, abs(q[0]))) == pytest.approx((math.sqrt(14) * t) % (2 * math.pi), rel=1e-9)


@pytest.mark.parametrize("angle_deg, mu", [(20.0, 0.5), (30.0, 0.1)], ids=["rolling", "sliding"])
def test_sphere_on_incline(glass, angle_deg, mu):
    """Acceleration along the incline vs rigid-body theory, within 0.5 %."""
    th = math.radians(angle_deg)
    normal = (-math.sin(th), 0.0, math.cos(th))  # a plane tilted by theta about the y axis
    scene = cl.Scene(gravity=(0, 0, -9.81))
    m = glass.density * 4 / 3 * math.pi * R**3
    e_star = glass.young / (2 * (1 - glass.poisson**2))
    overlap = (m * 9.81 * math.cos(th) / (4 / 3 * e_star * math.sqrt(R))) ** (2 / 3)
    scene.add_sphere(position=np.array(normal) * (R - overlap), radius=R, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=normal, material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=mu))
    down = -np.array([math.cos(th), 0.0, math.sin(th)])  # along the plane, the direction of gravity
    sim.run(duration=0.02)   # let the start transient (tangential spring loading) die out
    t1, v1 = sim.time, sim.velocities[0] @ down
    sim.run(duration=0.1)
    t2, v2 = sim.time, sim.velocities[0] @ down
    ref = incline_acceleration(9.81, th, mu)
    assert (v2 - v1) / (t2 - t1) == pytest.approx(ref["acceleration"], rel=0.005)
    slip = sim.velocities[0] + np.cross(sim.angular_velocities[0], -np.array(normal) * R)  # contact point
    assert (abs(slip @ down) < 1e-3 * (v2 + 1e-12)) == ref["rolling"]


@pytest.mark.parametrize("omega", [(30.0, -200.0, 70.0), (3e4, 1e4, -2e4)], ids=["small-angle", "large-angle"])
def test_orientation_follows_the_exact_rotation(glass, omega):
    """A free sphere spinning at constant omega: q(t) = (cos(|w|t/2), sin(|w|t/2) w/|w|) (x) q0, to
    round-off after many steps, with a unit norm (small rotations per step use a Taylor series, large
    ones the trigonometric form)."""
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 0), radius=R, material=glass, angular_velocity=omega)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    sim.run(steps=50000)
    w = np.array(omega)
    angle = np.linalg.norm(w) * sim.time
    expected = np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * w / np.linalg.norm(w)])
    q = sim.orientations[0]
    assert min(np.abs(q - expected).max(), np.abs(q + expected).max()) < 1e-10
    assert abs(np.linalg.norm(q) - 1.0) < 1e-14
