"""Compiled laws against their plain NumPy twins, and the restitution-damping inversion.

The twins (``reference_law``) are written independently with NumPy; both are driven through the same
sequence of random contact geometries so that the history (tangential and rolling springs, the
stored Mindlin stiffness) evolves over many steps, through stick and slip.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import contactlab as cl
from contactlab._jit import kernel
from contactlab.geometry.record import GEOMETRY_FIELDS, ContactGeometry
from contactlab.laws import hertz_mindlin, linear_spring_dashpot, sphere_sphere_contact
from contactlab.laws.restitution import (hertz_damping_coefficient, hertz_restitution, linear_damping_ratio,
                                         linear_restitution, linear_restitution_closed_form)


@kernel(cache=False)
def _call_hm(g, p, h, dt):
    return hertz_mindlin.law(g, p, h, dt)


@kernel(cache=False)
def _call_lsd(g, p, h, dt):
    return linear_spring_dashpot.law(g, p, h, dt)


def _random_geometries(rng, steps, radius=1e-3):
    """A smooth random contact history: overlap up and down (and apart), rotating normal, velocities."""
    t = np.linspace(0, 1, steps)
    overlap = radius * 0.02 * np.sin(2 * np.pi * (1.3 * t + rng.uniform())) + radius * 0.004
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    for k in range(steps):
        ang = 0.8 * t[k]
        n = np.array([math.sin(ang) * axis[0], math.cos(ang), math.sin(ang) * axis[2]])
        n /= np.linalg.norm(n)
        v = rng.normal(scale=0.05, size=3)
        w = rng.normal(scale=20.0, size=3)
        g = dict(normal=n, overlap=overlap[k], contact_point=rng.normal(size=3), branch_i=radius * n,
                 branch_j=-radius * n, rel_velocity=v, rel_angular_velocity=w, rel_displacement=v * 1e-5,
                 rel_rotation=w * 1e-5, radius_i=radius, radius_j=1.5 * radius, radius=0.6 * radius,
                 mass=1.3e-5, pair_rotation=rng.normal(scale=20.0, size=3) * 1e-5, contact_area=0.0,
                 contact_volume=0.0, contact_twist=0.0)
        yield g


def _as_record(g):
    vals = []
    for name in GEOMETRY_FIELDS:
        v = g[name]
        vals.append(tuple(float(x) for x in v) if np.ndim(v) else float(v))
    return ContactGeometry(*vals)


def _twin_steps(call, ref, params, history_size, rng, steps=400, dt=1e-5, history=None, geometries=None,
                increments=1.0):
    """Drive a compiled law and its NumPy twin through the same random geometries (or the given
    ``geometries``), from a zero history (or ``history``), with the displacement and rotation
    increments scaled by ``increments``, asserting equal outputs at every step; yields
    ``(geometry, force, active, history)``."""
    h_fast = tuple(float(x) for x in history) if history is not None else (0.0,) * history_size
    h_ref = np.array(h_fast)
    for g in (geometries if geometries is not None else _random_geometries(rng, steps)):
        g["rel_displacement"] = g["rel_displacement"] * increments
        g["rel_rotation"] = g["rel_rotation"] * increments
        f, m, e, d, active, h_fast = call(_as_record(g), params, h_fast, dt)
        rf, rm, re_, rd, ractive, h_ref = ref(g, params, h_ref, dt)
        assert active == ractive
        np.testing.assert_allclose(f, rf, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(m, rm, rtol=1e-10, atol=1e-18)
        assert e == pytest.approx(re_, rel=1e-10, abs=1e-22)
        np.testing.assert_allclose(d, rd, rtol=1e-9, atol=1e-22)
        np.testing.assert_allclose(h_fast, h_ref, rtol=1e-10, atol=1e-18)
        yield g, f, active, h_ref


@pytest.mark.parametrize("which", ["hertz_mindlin", "linear_spring_dashpot"])
@pytest.mark.parametrize("rolling", [0.0, 0.1])
def test_compiled_law_equals_numpy_twin(glass, which, rolling):
    rng = np.random.default_rng(7)
    if which == "hertz_mindlin":
        model = cl.models.HertzMindlin(restitution=0.4, friction=0.3, rolling_friction=rolling)
        call, ref = _call_hm, hertz_mindlin.reference_law
    else:
        model = cl.models.LinearSpringDashpot(stiffness=3e3, restitution=0.4, friction=0.3, rolling_friction=rolling)
        call, ref = _call_lsd, linear_spring_dashpot.reference_law
    slid = stuck = 0
    for g, f, active, _ in _twin_steps(call, ref, model.pair_table((glass,))[0, 0], model.history_size, rng):
        if active:
            f_n = -np.dot(f, g["normal"])
            f_t = np.linalg.norm(np.asarray(f) + f_n * g["normal"])
            slid += f_t > 0 and math.isclose(f_t, model.friction * f_n, rel_tol=1e-9)
            stuck += f_t < 0.999 * model.friction * f_n
    assert slid > 10 and stuck > 10  # both friction regimes were exercised


def test_law_resets_history_when_apart(glass):
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    params = model.pair_table((glass,))[0, 0]
    g = next(_random_geometries(np.random.default_rng(1), 1))
    g["overlap"] = -1e-6
    f, m, e, d, active, h = _call_hm(_as_record(g), params, (1.0,) * model.history_size, 1e-5)
    assert not active and f == (0.0, 0.0, 0.0) and e == 0.0 and h == (0.0,) * model.history_size


@pytest.mark.parametrize("module, model", [(hertz_mindlin, cl.models.HertzMindlin(restitution=0.5, friction=0.5)),
                                           (linear_spring_dashpot, cl.models.LinearSpringDashpot(1e3, 0.5, 0.5)),
                                           (sphere_sphere_contact, cl.models.SphereSphereContact(1e3))])
def test_history_sizes_agree(module, model):
    """The compiled law's history tuple and the model's declared history fields have one size."""
    assert module.HISTORY_SIZE == model.history_size


def test_linear_restitution_closed_form_matches_integration():
    """Independent check: closed form of the no-pull spring-dashpot against numerical integration."""
    for zeta in (0.05, 0.2, 0.5, 0.7, 0.9):
        assert linear_restitution(zeta) == pytest.approx(linear_restitution_closed_form(zeta), rel=1e-9)


@pytest.mark.parametrize("e", [0.05, 0.1, 0.3, 0.5, 0.8, 0.95, 0.999])
def test_damping_inversion_reproduces_requested_restitution(e):
    c = hertz_damping_coefficient(e)
    z = linear_damping_ratio(e)
    assert hertz_restitution(c) == pytest.approx(e, rel=1e-9)
    assert linear_restitution(z) == pytest.approx(e, rel=1e-9)


def test_hertz_restitution_independent_of_scales():
    """Dimensional check with SciPy: the same c gives the same e for very different m, E*, R, v."""
    e_req = 0.4
    c = hertz_damping_coefficient(e_req)
    for m, e_star, radius, v in ((1e-5, 5e6, 5e-4, 1.0), (2.0, 7e10, 0.05, 0.01)):
        k = 4 / 3 * e_star * math.sqrt(radius)

        def rhs(_t, y):
            d = max(y[0], 0.0)
            s_n = 2 * e_star * math.sqrt(radius * d)
            f = k * d**1.5 + c * math.sqrt(m * s_n) * y[1]
            return (y[1], -max(f, 0.0) / m)

        def end(_t, y):
            d = max(y[0], 0.0)
            s_n = 2 * e_star * math.sqrt(radius * d)
            return (k * d**1.5 + c * math.sqrt(m * s_n) * y[1]) if y[1] < 0 else 1.0

        end.terminal, end.direction = True, -1
        t_scale = (m**2 / (k**2 * v)) ** 0.2
        sol = solve_ivp(rhs, (0, 100 * t_scale), (0.0, v), events=end, rtol=1e-11, atol=1e-20,
                        max_step=t_scale / 50, method="DOP853")
        assert -sol.y_events[0][0][1] / v == pytest.approx(e_req, rel=1e-6)


@kernel(cache=False)
def _call_ssc(g, p, h, dt):
    return sphere_sphere_contact.law(g, p, h, dt)


@pytest.mark.parametrize("kwargs", [
    dict(impact_model=0, contact_damping=0.3),
    dict(impact_model=0, contact_plasticity_ratio=0.6, constant_pull_off_force=0.02, adhesion_coefficient=40.0,
         adhesion_exponent=1.5, contact_stiffness_exponent=1.5),
    dict(impact_model=1, restitution_coefficient=0.6, contact_damping=0.1, minimum_impact_velocity=0.01),
    dict(impact_model=2, restitution_coefficient=0.2, contact_stiffness_exponent=1.5),
])
def test_sphere_sphere_contact_equals_numpy_twin(glass, kwargs):
    """Spec-000 law: compiled against its NumPy twin through load, unload, separation and re-contact."""
    rng = np.random.default_rng(11)
    model = cl.models.SphereSphereContact(contact_stiffness=2e3, dynamic_friction=0.4, friction_proportional_zone=0.02,
                                          **kwargs)
    plastic = apart = 0
    for _, _, active, h_ref in _twin_steps(_call_ssc, sphere_sphere_contact.reference_law,
                                           model.pair_table((glass,))[0, 0], model.history_size, rng):
        plastic += h_ref[3] > 0
        apart += not active
    assert apart > 0
    if kwargs.get("contact_plasticity_ratio"):
        assert plastic > 0
