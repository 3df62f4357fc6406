"""Normal impacts against theory.

References:
* Hertz (1882), undamped elastic impact: maximum overlap, maximum force and contact duration in
  closed form (``contactlab.validation.hertz_impact``; e.g. Johnson, Contact Mechanics, sec. 11.4).
* The linear spring-dashpot collision: duration pi / omega, maximum overlap v / omega.
* The requested coefficient of restitution itself: the measured ratio of separation to approach
  speed must equal it.
"""
from __future__ import annotations

import math

import pytest

import contactlab as cl
from contactlab.laws.hertz_mindlin import effective_moduli
from contactlab.validation import hertz_impact, linear_impact, normal_impact

from conftest import sphere_mass

R = 1e-3


@pytest.mark.parametrize("wall", [False, True], ids=["sphere-sphere", "sphere-wall"])
@pytest.mark.parametrize("speed", [0.05, 0.8])
def test_hertz_impact_matches_theory(glass, steel, wall, speed):
    """Max force, max overlap and duration within 1 % of Hertz (e = 1); a steel wall for variety."""
    model = cl.models.HertzMindlin(restitution=1.0, friction=0.0)
    res = normal_impact(model, glass, R, speed, wall=wall, steps_per_contact=400, wall_material=steel)
    e_star, _ = effective_moduli(glass, steel if wall else glass)
    m = sphere_mass(glass, R)
    ref = hertz_impact(e_star, R if wall else R / 2, m if wall else m / 2, speed)
    for key in ("max_force", "max_overlap", "duration"):
        assert res[key] == pytest.approx(ref[key], rel=0.01), key
    assert res["restitution"] == pytest.approx(1.0, rel=1e-3)


def test_linear_impact_matches_theory(glass):
    k = 2e3
    res = normal_impact(cl.models.LinearSpringDashpot(stiffness=k, restitution=1.0, friction=0.0), glass, R, 0.3,
                        steps_per_contact=400)
    ref = linear_impact(k, sphere_mass(glass, R) / 2, 0.3)
    for key in ("max_force", "max_overlap", "duration"):
        assert res[key] == pytest.approx(ref[key], rel=0.01), key


@pytest.mark.parametrize("e", [0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0])
@pytest.mark.parametrize("wall", [False, True], ids=["sphere-sphere", "sphere-wall"])
def test_hertz_mindlin_measured_restitution(glass, e, wall):
    """Measured e equals the requested one within 1 %, at two impact speeds 40x apart.  (The collision
    ends when the clipped force vanishes, an event inside a step: very low e needs finer steps.)"""
    model = cl.models.HertzMindlin(restitution=e, friction=0.5)
    for speed in (0.02, 0.8):
        res = normal_impact(model, glass, R, speed, wall=wall, steps_per_contact=300 if e >= 0.1 else 1000)
        assert res["restitution"] == pytest.approx(e, rel=0.01), speed


@pytest.mark.parametrize("e", [0.1, 0.3, 0.5, 0.7, 0.9, 1.0])
@pytest.mark.parametrize("wall", [False, True], ids=["sphere-sphere", "sphere-wall"])
def test_linear_measured_restitution(glass, e, wall):
    """Measured e equals the requested one within 1 % (the dashpot switches on at first touch, an
    O(dt) event, so this model needs more steps per contact than Hertz)."""
    model = cl.models.LinearSpringDashpot(stiffness=2e3, restitution=e, friction=0.5)
    for speed in (0.02, 0.8):
        res = normal_impact(model, glass, R, speed, wall=wall, steps_per_contact=1500)
        assert res["restitution"] == pytest.approx(e, rel=0.01), speed


def test_default_time_step_restitution_is_close(glass):
    """With the default dt (a few tens of steps per contact) the error stays at the percent level."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, R * 1.0001), radius=R, material=glass, velocity=(0, 0, -0.5))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, model)
    sim.run(duration=0.002)
    assert sim.velocities[0, 2] / 0.5 == pytest.approx(0.5, rel=0.02)
    assert math.isfinite(sim.energy()["total"])
