"""Luding's model (spec 001): the normal branches, the plastic work at break, the viscous closed forms,
the tangential/rolling/twisting spring-sliders, objectivity, per-material mixing and the energy balance.

References: the spec's formulas (branches, k_n2(delta_max), delta_lim, W_np, eta_0, t_c, r) and the
closed-form loop area of the force-overlap path.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab._jit import kernel
from contactlab.laws import luding
from contactlab.laws.springs import coulomb_slider

from test_laws import _as_record, _random_geometries, _twin_steps

R = 1e-3
GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
HEAVY = cl.Material(density=1e12, young=1e7, poisson=0.3, name="immobile")


@kernel(cache=False)
def _call(g, p, h, dt):
    return luding.law(g, p, h, dt)


@kernel(cache=False)
def _slide(xi, inc, rate, dt, k, gamma, limit, ratio):
    return coulomb_slider(xi, inc, rate, dt, k, gamma, limit, ratio)


def test_compiled_law_equals_numpy_twin():
    model = cl.models.Luding(k2_hat=3e3, ka_div_kn=0.2, visc_n=0.01, visc_t=0.005, visc_r=1e-7, visc_w=1e-7,
                             tan_phi=0.3, stat_r=0.2, stat_w=0.2)
    rng = np.random.default_rng(3)
    params = model.pair_table((GLASS,))[0, 0]
    plastic = 0.0
    for g, f, active, h in _twin_steps(_call, luding.reference_law, params, model.history_size, rng, steps=600):
        plastic += active
    assert plastic > 100


def test_defaults_and_bad_values():
    m = cl.models.Luding()
    assert (m.k1_div_kn, m.ka_div_kn, m.delta_lim_rel, m.tan_phi, m.dyn_div_stat, m.stat_r, m.stat_w) == (
        0.5, 0.2, 0.1, 0.5, 0.7, 0.4, 0.3)
    for bad, words in ((dict(k1_div_kn=0.0), "k1_div_kn"), (dict(k1_div_kn=1.5), "k1_div_kn"),
                       (dict(dyn_div_stat=2.0), "dyn_div_stat"), (dict(visc_n=-1.0), "visc_n"),
                       (dict(tanphi=0.3), "unknown parameter"), (dict(k2_hat=-5.0), "k2_hat")):
        with pytest.raises(cl.InputError, match=words):
            cl.models.Luding(**bad)
    with pytest.raises(cl.InputError, match="cannot be given per material"):
        cl.models.Luding(per_material={"glass": {"k2_hat": 1.0}})


def test_per_material_values_follow_the_mixing_rules():
    a = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="a")
    b = cl.Material(density=2500.0, young=3e7, poisson=0.3, name="b")
    model = cl.models.Luding(per_material={a: dict(tan_phi=0.2, kt_div_kn=0.1, visc_n=0.3), "b": dict(tan_phi=0.6)},
                             kt_div_kn=0.3, visc_n=0.1)
    t = model.pair_table((a, b))
    col = {name: k for k, name in enumerate(model.pair_fields)}
    assert t[0, 1, col["tan_phi"]] == 0.2            # minimum
    assert t[0, 1, col["kt_div_kn"]] == pytest.approx(0.2)  # average of 0.1 and the model's 0.3
    assert t[0, 1, col["visc_n"]] == 0.1             # minimum of 0.3 and the model's 0.1
    assert t[1, 1, col["tan_phi"]] == 0.6
    # k2_hat from the Young's moduli: two springs in series over the area pi r^2
    a12, k2 = luding.pair_geometry(R, 2 * R, t[0, 1])
    assert a12 == pytest.approx(2 * R * 2 * R / (3 * R))
    assert k2 == pytest.approx(math.pi * R**2 / (R / 1e7 + 2 * R / 3e7))


def _prescribed_cycle(model, path, speed=0.02, dt=2e-7):
    """Sphere a (fixed, driven) moves along z against an immobile sphere b: ``path`` is a list of
    displacements (m, signed).  Returns the simulation and the recorder of the pair."""
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, fixed=True)
    b = scene.add_sphere(position=(0, 0, 2 * R + 1e-6), radius=R, material=HEAVY)
    sim = cl.Simulation(scene, model=model, dt=dt)
    rec = sim.record("overlap", "normal_force", "delta_max", "dissipated_plastic_normal", contact=(a, b))
    for d in path:
        sim.set_velocity(a, (0, 0, math.copysign(speed, d)))
        sim.run(duration=abs(d) / speed)
    return sim, rec, (a, b)


def _spec_normal(delta, delta_max, k1, k2_hat, kc, delta_lim):
    k2 = k2_hat if delta_max >= delta_lim else k1 + (k2_hat - k1) * delta_max / delta_lim
    d0 = (1 - k1 / k2) * delta_max
    if k2 * (delta - d0) >= k1 * delta:
        return k1 * delta, "plastic loading"
    if -kc * delta >= k2 * (delta - d0):
        return -kc * delta, "adhesive"
    return k2 * (delta - d0), "unloading/reloading"


def test_normal_cycle_follows_the_branches_and_the_plastic_work_at_break():
    k2_hat = 2e4
    model = cl.models.Luding(k2_hat=k2_hat, k1_div_kn=0.4, ka_div_kn=0.3, delta_lim_rel=0.015, kr_div_kn=0,
                             kw_div_kn=0, visc_r=0, visc_w=0)
    k1, kc = 0.4 * k2_hat, 0.3 * k2_hat
    delta_lim = k2_hat / (k2_hat - k1) * 0.015 * R   # a12 = R for two spheres of radius R: 2.5e-5 m
    # load to 2e-5, unload to 0.8e-5, reload to 3e-5, unload to separation
    sim, rec, _ = _prescribed_cycle(model, [2.1e-5, -1.2e-5, 2.2e-5, -3.4e-5])
    delta, force, dmax_rec = rec["overlap"], rec["normal_force"], rec["delta_max"]
    seen = set()
    delta_max = 0.0
    for k in range(len(delta)):
        if delta[k] < 0:
            assert force[k] == 0.0
            continue
        delta_max = max(delta_max, delta[k])
        expected, branch = _spec_normal(delta[k], delta_max, k1, k2_hat, kc, delta_lim)
        seen.add(branch)
        assert force[k] == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert dmax_rec[k] == delta_max
    assert seen == {"plastic loading", "adhesive", "unloading/reloading"}
    assert delta_max > delta_lim  # the stiffness reached k2_hat on the way
    # the plastic work booked at break = the formula = the integral of the force over the path
    e = sim.energy()
    assert sim.n_contacts() == 0
    k2 = k2_hat
    d0 = delta_max * (1 - k1 / k2)
    dmin = d0 * k2 / (k2 + kc)
    formula = 0.5 * (k1 * delta_max + kc * dmin) * d0
    assert e["dissipated_plastic_normal"] == pytest.approx(formula, rel=1e-12)
    path = float(np.sum(0.5 * (force[1:] + force[:-1]) * np.diff(np.maximum(delta, 0.0))))
    assert formula == pytest.approx(path, rel=2e-3)
    # booked only when the contact broke
    booked = rec["dissipated_plastic_normal"]
    assert np.all(booked[delta >= 0] == 0.0)
    # the energy balance closes (driven sphere's work = dissipation + what the immobile sphere took)
    assert abs(e["balance_error"]) < 1e-3 * e["dissipated"]


def test_viscous_restitution_and_contact_time_equal_the_closed_forms():
    """Linear elastic (k1 = k2_hat) viscous collision: r = exp(-eta0 t_c), t_c = pi / omega."""
    k, gamma = 1e4, 0.05
    model = cl.models.Luding(k2_hat=k, k1_div_kn=1.0, ka_div_kn=0.0, visc_n=gamma, tan_phi=0.0, kr_div_kn=0.0,
                             kw_div_kn=0.0, visc_r=0.0, visc_w=0.0)
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, velocity=(0, 0, 0.05))
    b = scene.add_sphere(position=(0, 0, 2 * R + 1e-6), radius=R, material=GLASS, velocity=(0, 0, -0.05))
    sim = cl.Simulation(scene, model=model)
    sim.dt = sim.stability_limit * 0.01
    rec = sim.record("overlap", contact=(a, b))
    sim.run(duration=2e-3)
    m = GLASS.density * 4 / 3 * math.pi * R**3
    m12 = m / 2
    eta0 = gamma / (2 * m12)
    omega = math.sqrt(k / m12 - eta0**2)
    tc, r = math.pi / omega, math.exp(-eta0 * math.pi / omega)
    assert 0.3 < r < 0.9
    v_after = sim.velocities[b, 2] - sim.velocities[a, 2]
    assert v_after / 0.1 == pytest.approx(r, rel=2e-3)
    touching = rec.time[rec["overlap"] >= 0]
    assert touching[-1] - touching[0] == pytest.approx(tc, rel=2e-2)
    e = sim.energy()
    assert e["dissipated_viscous_normal"] == pytest.approx(e["dissipated"], rel=1e-12)
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]


def test_slider_sticks_then_slips_at_the_static_limit_then_holds_the_dynamic_limit():
    k, gamma, limit, ratio, dt, v = 1e3, 0.0, 2.05e-3, 0.7, 1e-5, 0.01
    inc = v * dt
    xi = (0.0, 0.0, 0.0)
    forces, plastic, slips = [], [], 0
    for step in range(60):
        xi_old = xi[0]
        f, xi, stored, visc, pw = _slide(xi, (inc, 0.0, 0.0), (v, 0.0, 0.0), dt, k, gamma, limit, ratio)
        forces.append(f[0])
        plastic.append(pw)
        if pw > 0:
            slips += 1
            assert f[0] == pytest.approx(ratio * limit, rel=1e-12)
            # the work done on the spring (trapezoid) minus its stored energy change ...
            expected = 0.5 * k * xi_old**2 + 0.5 * k * (xi_old + xi[0]) * inc - 0.5 * k * xi[0] ** 2
            assert pw == pytest.approx(expected, rel=1e-12)
            # ... which is the spec's released-energy formula to first order in the increment
            trial = k * (xi_old + inc)
            spec = 0.5 * (trial + ratio * limit) * (trial - ratio * limit) / k
            assert abs(pw - spec) <= k * inc * (abs(xi_old - xi[0]) + inc)
        else:
            assert f[0] <= limit * (1 + 1e-12)
            assert stored == pytest.approx(0.5 * k * xi[0] ** 2, rel=1e-12)
    first = int(np.flatnonzero(np.array(plastic) > 0)[0])
    # stick: the force grows as k v t until it passes the static limit
    np.testing.assert_allclose(forces[:first], k * v * dt * np.arange(1, first + 1), rtol=1e-12)
    assert forces[first - 1] <= limit < k * v * dt * (first + 1)
    assert slips >= 5  # stick-slip between the static and the dynamic limit
    assert max(forces) <= limit * (1 + 1e-12)


def test_steady_sliding_plastic_work_equals_force_times_slip():
    k, limit, ratio, dt, v = 1e3, 2e-3, 1.0, 1e-5, 1e-3   # dynamic = static: steady sliding
    xi = (0.0, 0.0, 0.0)
    work = slip = 0.0
    for step in range(400):
        f, xi, stored, visc, pw = _slide(xi, (v * dt, 0.0, 0.0), (v, 0.0, 0.0), dt, k, 0.0, limit, ratio)
        if pw > 0:  # sliding (from step 200 on: k v dt per step up to the limit)
            work += pw
            slip += v * dt
    assert work == pytest.approx(limit * slip, rel=1e-9)
    assert slip == pytest.approx(200 * v * dt, rel=0.02)
    # with a dashpot, plastic plus viscous work is force times slip
    gamma = 0.3
    xi = ((limit - gamma * v) / k, 0.0, 0.0)
    f, xi, stored, visc, pw = _slide(xi, (v * dt, 0.0, 0.0), (v, 0.0, 0.0), dt, k, gamma, limit, ratio)
    assert f[0] == pytest.approx(limit) and pw + visc == pytest.approx(limit * v * dt, rel=1e-9)
    # a zero limit slides without force and dissipates nothing in the spring
    f, xi, stored, visc, pw = _slide((0.0, 0.0, 0.0), (v * dt, 0.0, 0.0), (v, 0.0, 0.0), dt, k, 0.0, 0.0, ratio)
    assert f == (0.0, 0.0, 0.0) and pw == 0.0 and stored == 0.0


def _rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def test_objectivity_rigid_rotation_of_a_loaded_pair():
    """Load a contact in all senses, then rotate the whole pair rigidly (no relative motion): the
    force and couple rotate with it, their magnitudes and the stored energy stay."""
    model = cl.models.Luding(k2_hat=3e3, ka_div_kn=0.1, visc_r=0.0, visc_w=0.0, tan_phi=0.5, stat_r=0.5, stat_w=0.5)
    p = model.pair_table((GLASS,))[0, 0]
    g = next(_random_geometries(np.random.default_rng(2), 1))
    g.update(overlap=2e-5, normal=np.array([0.0, 0.0, 1.0]), rel_velocity=np.zeros(3), rel_angular_velocity=np.zeros(3),
             pair_rotation=np.zeros(3))
    h = (0.0,) * model.history_size
    for _ in range(5):  # small elastic loading in every sense
        g.update(rel_displacement=np.array([1e-7, 2e-7, 0.0]), rel_rotation=np.array([1e-5, -2e-5, 3e-5]))
        f0, m0, e0, _, _, h = _call(_as_record(g), p, h, 1e-5)
    for angle in (0.05, 0.3, 1.0):
        rot = _rotation((1.0, 2.0, 0.5), angle)
        g2 = dict(g, normal=rot @ g["normal"], rel_displacement=np.zeros(3), rel_rotation=np.zeros(3))
        h_rot = (h[0], *(rot @ np.array(h[1:4])), *(rot @ np.array(h[4:7])), h[7])
        f, m, e, d, active, h2 = _call(_as_record(g2), p, h_rot, 1e-5)
        np.testing.assert_allclose(f, rot @ np.array(f0), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(m, rot @ np.array(m0), rtol=1e-9, atol=1e-18)
        assert e == pytest.approx(e0, rel=1e-12)
        assert sum(d) == 0.0
        # an un-rotated history is carried into the new tangent plane with its length (the contact
        # frame turned by a small angle between two steps)
        f3, _, e3, _, _, h3 = _call(_as_record(g2), p, h, 1e-5)
        assert np.linalg.norm(h3[1:4]) == pytest.approx(np.linalg.norm(h[1:4]), rel=1e-12)
        assert abs(np.dot(h3[1:4], g2["normal"])) < 1e-12 * np.linalg.norm(h[1:4])


def _rolling_pair(model, spin_axis, spin, duration=4e-4):
    """Sphere a, fixed and driven to spin about ``spin_axis``, presses on an immobile sphere b."""
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, fixed=True)
    b = scene.add_sphere(position=(0, 0, 2 * R - 1e-5), radius=R, material=HEAVY)
    sim = cl.Simulation(scene, model=model, dt=1e-7, initial_overlap_tolerance=0.05)
    rec = sim.record("Torque", "normal_force", contact=(a, b))
    sim.set_velocity(a, (0, 0, 0), angular_velocity=spin * np.asarray(spin_axis, float))
    sim.run(duration=duration)
    return sim, rec, (a, b)


@pytest.mark.parametrize("sense", ["rolling", "twisting"])
def test_rolling_and_twisting_stick_then_slip_at_their_limits(sense):
    k2_hat = 2e4
    # tan_phi = 0: no tangential force, whose moment would add to the torque on a
    model = cl.models.Luding(k2_hat=k2_hat, k1_div_kn=1.0, ka_div_kn=0.0, tan_phi=0.0, stat_r=0.3, stat_w=0.2,
                             dyn_div_stat=1.0, visc_r=0.0, visc_w=0.0, kr_div_kn=0.2, kw_div_kn=0.1)
    axis = (1.0, 0.0, 0.0) if sense == "rolling" else (0.0, 0.0, 1.0)
    spin = 100.0  # rad/s
    sim, rec, (a, b) = _rolling_pair(model, axis, spin)
    torque = rec["Torque"][:, 0 if sense == "rolling" else 2]
    a12 = R
    f_n = k2_hat * 1e-5
    limit = (0.3 if sense == "rolling" else 0.2) * f_n * a12
    k = (0.2 if sense == "rolling" else 0.1) * k2_hat * a12**2
    t = rec.time
    # stick: torque on a = k * (relative rotation) = k * spin * t (opposing a's spin: negative)
    early = t < 0.5 * limit / (k * spin)
    assert early.sum() > 20
    np.testing.assert_allclose(-torque[early], k * spin * t[early], rtol=1e-6, atol=1e-3 * limit)
    # slip: the torque sits at the limit, and the plastic work = torque x relative rotation
    late = t > 1.2 * limit / (k * spin)
    assert late.sum() > 100
    friction = 0.3 if sense == "rolling" else 0.2
    np.testing.assert_allclose(-torque[late], friction * rec["normal_force"][late] * a12, rtol=1e-9)
    np.testing.assert_allclose(-torque[late], limit, rtol=1e-5)  # the immobile sphere hardly moves
    e = sim.energy()
    slipped = spin * (t[-1] - limit / (k * spin))
    assert e[f"dissipated_plastic_{sense}"] == pytest.approx(limit * slipped, rel=5e-3)
    assert abs(e["balance_error"]) < 1e-3 * e["dissipated"]


def test_energy_balance_of_a_plastic_adhesive_frictional_collision():
    model = cl.models.Luding(ka_div_kn=0.1, visc_n=0.002, visc_t=0.001, visc_r=1e-9, visc_w=1e-9)
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, velocity=(0, 0, 0.2), angular_velocity=(5, 0, 3))
    b = scene.add_sphere(position=(0.3e-3, 0, 2.05e-3), radius=R, material=GLASS, velocity=(0, 0, -0.2))
    sim = cl.Simulation(scene, model=model)
    sim.dt = 0.03 * sim.stability_limit
    sim.run(duration=2e-3)
    e = sim.energy()
    assert sim.n_contacts() == 0 and not sim.contact(a, b)["in_contact"]
    terms = [k for k in e if k.startswith("dissipated_")]
    assert len(terms) == 8 and sum(e[k] for k in terms) == pytest.approx(e["dissipated"], rel=1e-12)
    for k in ("dissipated_viscous_normal", "dissipated_plastic_normal", "dissipated_plastic_tangential"):
        assert e[k] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]
    np.testing.assert_allclose(sim.linear_momentum(), 0.0, atol=1e-12 * GLASS.density * R**3)
