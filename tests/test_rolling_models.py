"""Hertz-Mindlin's two rolling-resistance models and the constant-torque rolling part.

References: the definitions (Zhou et al. 1999 / Ai et al. 2011 type A: a torque ``mu_r R* F_n``
against the relative rolling, none at rest; Iwashita and Oda's spring, which holds a moment at
rest) and the closed form of a sphere rolling on a plane against a constant rolling torque:
``(m + I/R^2) dv/dt = -M/R`` with ``M = mu_r R m g`` (R* = R against a wall), so the speed falls
linearly, ``v(t) = v0 - mu_r g t / 1.4`` for a solid sphere (I = 0.4 m R^2).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.geometry.record import GEOMETRY_FIELDS
from contactlab.laws import hertz_mindlin
from contactlab.laws.registry import model_from_dict

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3)


def _geometry(rotation, spin):
    g = {name: np.zeros(3) for name in GEOMETRY_FIELDS}
    g.update(normal=np.array([0.0, 0.0, 1.0]), overlap=1e-5, radius_i=5e-3, radius_j=5e-3, radius=2.5e-3,
             mass=1e-3, contact_area=0.0, contact_volume=0.0, contact_twist=0.0,
             rel_rotation=np.asarray(rotation, dtype=float), rel_angular_velocity=np.asarray(spin, dtype=float))
    return g


@pytest.mark.parametrize("spin", [1e-6, 1.0, 300.0])
def test_constant_torque_is_the_limit_against_the_rolling_at_any_rate(spin):
    """The definition: at any rolling rate above the rest threshold the couple on i has the size
    mu_r R* F_n and points along the tangential part of omega_j - omega_i (it turns i with j); the
    law keeps it as history.  Its work over a step is the mean of this couple and the last one
    times the step's relative rotation (the velocity-Verlet work the kinetic energy sees): in steady
    rolling, the last couple the same, the size times |w| dt; in the first step of a contact, half
    of it.  The normal spin does not count as rolling."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=0.2, rolling_model="constant_torque")
    params = model.pair_table((GLASS,))[0, 0]
    w = np.array([0.6, -0.8, 5.0]) * spin  # tangential part (0.6, -0.8) spin, plus a twist about the normal
    g = _geometry(w * 1e-5, w)
    force, couple, stored, diss_first, active, hist = hertz_mindlin.reference_law(g, params, np.zeros(7), 1e-5)
    f_n = -force[2]
    limit = 0.2 * 2.5e-3 * f_n
    np.testing.assert_allclose(couple, limit * np.array([0.6, -0.8, 0.0]), rtol=1e-12)
    np.testing.assert_array_equal(hist[3:6], couple)  # the last couple, for the next step's work
    *_, diss_steady, _, _ = hertz_mindlin.reference_law(g, params, hist.copy(), 1e-5)
    spring_free = cl.models.HertzMindlin(restitution=0.5, friction=0.4)  # same contact, no rolling resistance
    *_, diss0, _, _ = hertz_mindlin.reference_law(g, spring_free.pair_table((GLASS,))[0, 0], np.zeros(7), 1e-5)
    assert diss_steady - diss0 == pytest.approx(limit * spin * 1e-5, rel=1e-9)
    assert diss_first - diss0 == pytest.approx(0.5 * limit * spin * 1e-5, rel=1e-9)


def test_constant_torque_chatter_dissipates_what_the_bodies_lose():
    """A couple that flips at every step (the chatter of a contact at rest, the predicted rate
    against the step's rotation) does no work on the bodies after its first step; the model books
    exactly that first half step's work, where ``limit |w| dt`` per step booked six times a
    dissipation that did not happen (issue 42)."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=0.2, rolling_model="constant_torque")
    params = model.pair_table((GLASS,))[0, 0]
    hist = np.zeros(7)
    total = 0.0
    for k in range(6):
        sign = 1.0 if k % 2 == 0 else -1.0
        w = sign * np.array([1e-3, 0.0, 0.0])   # the predicted rate flips ...
        g = _geometry(-w * 1e-5, w)               # ... against the step's rotation
        force, _, _, diss, _, hist = hertz_mindlin.reference_law(g, params, hist.copy(), 1e-5)
        total += diss
    spring_free = cl.models.HertzMindlin(restitution=0.5, friction=0.4)
    _, _, _, diss0, _, _ = hertz_mindlin.reference_law(g, spring_free.pair_table((GLASS,))[0, 0], np.zeros(7), 1e-5)
    limit_work = 0.2 * 2.5e-3 * -force[2] * 1e-3 * 1e-5   # limit |w| dt of one step
    assert total - 6 * diss0 == pytest.approx(-0.5 * limit_work, rel=1e-9)


def test_constant_torque_holds_no_moment_at_rest_the_spring_does():
    """At rest (no relative rolling rate) after a small relative rotation the spring carries
    ``k_r theta`` (below its limit) and the constant-torque model nothing: it has no static torque."""
    g = _geometry([1e-6, 0.0, 0.0], [0.0, 0.0, 0.0])
    couples = {}
    for kind in ("spring", "constant_torque"):
        model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=0.2, rolling_model=kind)
        _, couples[kind], *_ = hertz_mindlin.reference_law(g, model.pair_table((GLASS,))[0, 0], np.zeros(7), 1e-5)
    assert couples["spring"][0] > 0.0 and np.all(couples["constant_torque"] == 0.0)


def test_rolling_model_is_checked():
    with pytest.raises(cl.InputError, match="rolling_model must be one of 'spring', 'constant_torque', got 'torque'"):
        cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_model="torque")
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=0.1, rolling_model="constant_torque")
    assert model_from_dict(model.to_dict()).rolling_model == "constant_torque"


def rolling_sphere(kind, radius=5e-3, v0=0.1, mu_r=0.1, g=9.81):
    """A sphere of glass rolling without slipping at ``v0`` on a plate, resting on it at its static
    Hertz overlap, with rolling resistance ``mu_r`` of the ``kind`` model; returns ``(sim, radius,
    v0, t_stop)`` (``t_stop = 1.4 v0 / (mu_r g)``: when it stops)."""
    scene = cl.Scene(gravity=(0.0, 0.0, -g))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    mass = 4.0 / 3.0 * math.pi * radius**3 * GLASS.density
    sink = mass * g / (4.0 / 3.0 * 1e7 / (1 - 0.3**2) * math.sqrt(radius))  # static Hertz overlap**1.5
    scene.add_sphere((0.0, 0.0, radius - sink ** (2.0 / 3.0)), radius, GLASS, velocity=(v0, 0.0, 0.0),
                     angular_velocity=(0.0, v0 / radius, 0.0))
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=mu_r, rolling_model=kind)
    return cl.Simulation(scene, model, threads=1), radius, v0, 1.4 * v0 / (mu_r * g)


@pytest.mark.parametrize("kind", ["spring", "constant_torque"])
def test_sphere_rolling_on_a_plate_slows_down_linearly(kind):
    """A sphere rolling on a plate against rolling resistance mu_r (R* = R against a wall): the
    closed form v(t) = v0 - mu_r g t / 1.4 while it rolls, for both models (the spring slides at the
    same limit once wound up, a few microseconds here).  Half-way to the stop the speed is v0 / 2."""
    sim, radius, v0, t_stop = rolling_sphere(kind)
    sim.run(duration=0.5 * t_stop)
    v = sim.velocities[0]
    assert v[0] == pytest.approx(0.5 * v0, rel=0.01)
    # still rolling without slipping
    assert sim.angular_velocities[0][1] * radius == pytest.approx(v[0], rel=1e-3)
