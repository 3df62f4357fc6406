"""Chung and Ooi's benchmark tests 4 and 6 with Hertz-Mindlin: oblique impacts of a sphere on a rigid plane.

Reference: Y. C. Chung and J. Y. Ooi (2011), "Benchmark tests for verifying discrete element
modelling codes at particle impact level", Granular Matter 13:643-656.

* Test 4: a sphere hits the plane at 3.9 m/s at incident angles theta from the normal, no spin;
  aluminium oxide (E = 380 GPa, nu = 0.23, 4000 kg/m^3) and aluminium alloy (E = 70 GPa,
  nu = 0.33, 2700 kg/m^3), R = 2.5 mm, mu = 0.092, e = 0.98.  Output: the tangential restitution
  of the centre ``v_t' / v_t`` and the rebound spin.
* Test 6: an aluminium alloy sphere (R = 0.1 m) hits the plane at v_n = 0.2 m/s with no
  tangential velocity of its centre and a spin that gives its contact point the slip V_st;
  mu = 0.4, e = 0.5.  Output: the tangential restitution of the contact point
  ``beta = -V_st' / V_st`` against ``x = 7/2 mu (1 + e) V_cn / V_st``.

The plane is rigid: a wall 1e12 times stiffer than the sphere.

Rigid-body Coulomb impact of a solid sphere (Maw, Barber and Fawcett 1976; Brach 1988;
``contactlab.validation.oblique_impact_sliding``): the contact point's slip falls by
``7/2 J / m`` under a tangential impulse ``J``, so the sphere slides throughout the impact when
the incoming slip exceeds ``7/2 mu (1 + e) v_n`` (test 6: ``x < 1``; test 4:
``tan(theta) > 7/2 mu (1 + e)``) and then ``J = mu (1 + e) m v_n`` exactly; otherwise it ends
rolling (``beta = 0``).  With Hertz-Mindlin the tangential compliance changes the sticking regime
(the contact point's velocity oscillates on the tangential spring: Maw, Barber and Fawcett 1976
find the slip reversed or kept after a sticking impact), but not the gross-sliding one: there the
force is ``mu F_n`` throughout and the rigid-body results hold exactly, up to the lever arm of
the friction force (``R - d/2``, not ``R``).  At the limit between the two the rebound is
continuous (Maw et al.'s rebound slip passes through zero there), so just inside the sticking
regime ``beta`` is still close to the rigid-body zero.
"""
from __future__ import annotations

import math

import pytest

import contactlab as cl
from contactlab.laws.hertz_mindlin import effective_moduli
from contactlab.validation import hertz_impact, oblique_impact_sliding, oblique_wall_impact

from conftest import sphere_mass

#: test 4: resultant speed (m/s), radius (m), friction, restitution
T4_SPEED, T4_RADIUS, T4_MU, T4_E = 3.9, 0.0025, 0.092, 0.98
#: test 6: normal speed (m/s), radius (m), friction, restitution
T6_VN, T6_RADIUS, T6_MU, T6_E = 0.2, 0.1, 0.4, 0.5

MATERIALS = {"aluminium oxide": (4000.0, 380e9, 0.23), "aluminium alloy": (2700.0, 70e9, 0.33)}


def _sphere_and_plane(name):
    density, young, poisson = MATERIALS[name]
    sphere = cl.Material(density=density, young=young, poisson=poisson, name=name)
    plane = cl.Material(density=density, young=young * 1e12, poisson=poisson, name="rigid plane")
    return sphere, plane


def _lever_allowance(sphere, plane, radius, vn):
    """Relative spin error the lever arm ``R - d/2`` of the friction force allows: the undamped
    Hertz maximum overlap over the radius (an upper bound of ``d_max / R``), plus 1e-3."""
    e_star, _ = effective_moduli(sphere, plane)
    return hertz_impact(e_star, radius, sphere_mass(sphere, radius), vn)["max_overlap"] / radius + 1e-3


def _test6(x, dt=2e-6):
    """One test-6 impact at ``x = 7/2 mu (1 + e) V_cn / V_st``: returns (beta, R omega' / v_n, e_n,
    v_t' / v_n) with the spin about +y (a +x slip of the contact point has ``omega_y < 0``)."""
    sphere, plane = _sphere_and_plane("aluminium alloy")
    model = cl.models.HertzMindlin(restitution=T6_E, friction=T6_MU)
    slip = 3.5 * T6_MU * (1.0 + T6_E) * T6_VN / x
    r = oblique_wall_impact(model, sphere, T6_RADIUS, T6_VN, 0.0, -slip / T6_RADIUS, dt=dt, wall_material=plane)
    v, w = r["velocity"], r["angular_velocity"]
    slip_out = v[0] - T6_RADIUS * w[1]
    return -slip_out / slip, T6_RADIUS * w[1] / T6_VN, r["restitution"], v[0] / T6_VN


@pytest.mark.parametrize("x", [0.25, 0.5, 0.9])
def test6_gross_sliding_matches_rigid_body_theory(x):
    """Test 6, gross sliding (x < 1): beta = -1 + 7/2 mu (1 + e) V_cn / V_st, the centre's velocity
    change -mu (1 + e) v_n and the spin change 5/2 mu (1 + e) v_n / R of rigid-body Coulomb impact
    (Maw, Barber and Fawcett 1976), with e the measured normal restitution: beta and the velocity
    within 1e-3 of the impulse, the spin within d_max/R + 1e-3 (lever arm ``R - d/2``)."""
    beta, spin, e_n, vt = _test6(x)
    assert e_n == pytest.approx(T6_E, rel=2e-3)
    slip = 3.5 * T6_MU * (1.0 + T6_E) / x  # V_st / V_cn
    ref = oblique_impact_sliding(T6_VN, slip * T6_VN, e_n, T6_MU, T6_RADIUS)
    assert ref["sliding"]
    impulse = -ref["delta_tangential_velocity"] / T6_VN  # mu (1 + e_n)
    assert beta == pytest.approx(-1.0 + 3.5 * impulse / slip, abs=1e-3 * 3.5 * impulse / slip)
    assert vt == pytest.approx(-impulse, rel=1e-3)
    sphere, plane = _sphere_and_plane("aluminium alloy")
    d_spin = spin + slip  # R (omega' - omega) / v_n
    assert d_spin == pytest.approx(ref["delta_spin"] * T6_RADIUS / T6_VN,
                                   rel=_lever_allowance(sphere, plane, T6_RADIUS, T6_VN))


def test6_sticking_limit_is_continuous():
    """Test 6 at the rigid-body sticking limit x = 1: rigid-body theory has beta = -1 + x on the
    sliding side and beta = 0 (rolling) on the other, continuous at x = 1.  With the Mindlin spring
    the rebound stays continuous there (Maw, Barber and Fawcett 1976: the rebound slip passes
    through zero where gross sliding ends), so 2 % either side beta is within 0.005 of the
    rigid-body value at the limit: |beta| <= 0.02 + 0.005."""
    below, *_ = _test6(0.98)
    above, *_ = _test6(1.02)
    assert below == pytest.approx(-0.02, abs=1e-3)  # still gross sliding: rigid-body exactly
    assert abs(above) <= 0.025


def test6_no_jump_where_the_first_step_starts_sliding():
    """Test 6 across the x at which the contact's first step turns from sticking to sliding.

    At first touch the normal force is almost all damping, ``c sqrt(m S_n) v_n``, and the trial
    tangential force almost all the tangential dashpot's, ``c sqrt(m S_t) V_st``: the first step
    slides when ``V_st / (mu v_n) > sqrt(S_n / S_t) = sqrt(E* / 4 G*)``, i.e. below
    ``x* = 7/2 (1 + e) sqrt(4 G* / E*)`` (4.70 for this aluminium alloy).  Nothing physical
    happens there (the sphere is in the sticking regime, x > 1), so beta must be continuous.  When
    the sliding spring was reset to the whole sliding force (``k xi = f``) it stored the dashpot's
    force (a tangential displacement some 70 times the overlap after the first step) and beta
    jumped by 0.06 (-0.077 at x = 4.70, -0.015 at 4.75); with the spring carrying the sliding
    force minus the dashpot's part (LAMMPS's reset, capped at the sliding limit) the two differ by
    less than 0.005 (the smooth variation of beta over these 4 % of x is ~0.003)."""
    sphere, plane = _sphere_and_plane("aluminium alloy")
    e_star, g_star = effective_moduli(sphere, plane)
    x_star = 3.5 * (1.0 + T6_E) * math.sqrt(4.0 * g_star / e_star)
    assert x_star == pytest.approx(4.703, abs=1e-3)
    below, *_ = _test6(0.98 * x_star)
    above, *_ = _test6(1.02 * x_star)
    assert abs(below - above) < 0.005, (below, above)


def _test4(name, angle_deg, dt_fraction=0.25):
    sphere, plane = _sphere_and_plane(name)
    model = cl.models.HertzMindlin(restitution=T4_E, friction=T4_MU)
    th = math.radians(angle_deg)
    vn, vt = T4_SPEED * math.cos(th), T4_SPEED * math.sin(th)
    probe = cl.Scene(gravity=(0.0, 0.0, 0.0))
    probe.add_sphere(position=(0.0, 0.0, 2.0 * T4_RADIUS), radius=T4_RADIUS, material=sphere)
    probe.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=plane)
    dt = dt_fraction * cl.Simulation(probe, model).dt
    r = oblique_wall_impact(model, sphere, T4_RADIUS, vn, vt, dt=dt, wall_material=plane)
    return r, vn, vt, sphere, plane


@pytest.mark.parametrize("name", list(MATERIALS))
@pytest.mark.parametrize("angle_deg", [40.0, 60.0, 80.0])
def test4_gross_sliding_matches_rigid_body_theory(name, angle_deg):
    """Test 4, gross sliding (tan(theta) > 7/2 mu (1 + e), theta > 32.5 deg): tangential restitution
    of the centre ``1 - mu (1 + e) / tan(theta)`` within 1e-3 of the velocity change, and the rebound
    spin ``5/2 mu (1 + e) v_n / R`` within d_max/R + 1e-3 (rigid-body Coulomb impact, Maw, Barber
    and Fawcett 1976, with e the measured normal restitution)."""
    r, vn, vt, sphere, plane = _test4(name, angle_deg)
    e_n = r["restitution"]
    assert e_n == pytest.approx(T4_E, rel=2e-3)
    ref = oblique_impact_sliding(vn, vt, e_n, T4_MU, T4_RADIUS)
    assert ref["sliding"]
    v, w = r["velocity"], r["angular_velocity"]
    dv = ref["delta_tangential_velocity"]
    assert v[0] / vt == pytest.approx(1.0 + dv / vt, abs=1e-3 * abs(dv / vt))
    assert w[1] == pytest.approx(ref["delta_spin"], rel=_lever_allowance(sphere, plane, T4_RADIUS, vn))


@pytest.mark.parametrize("name", list(MATERIALS))
def test4_sticking_limit_is_continuous(name):
    """Test 4 at the rigid-body sticking limit ``tan(theta*) = 7/2 mu (1 + e)`` (32.5 deg): rigid-body
    theory gives the contact point's rebound slip ``-beta v_t`` with ``beta = -1 + tan(theta*) /
    tan(theta)`` above the limit and 0 (rolling: centre restitution 5/7) below, continuous at the
    limit; the Mindlin rebound is continuous there too (Maw, Barber and Fawcett 1976).  One degree
    either side: above, rigid-body exactly (within the lever-arm allowance d_max/R + 1e-3 of the
    slip's change); below, |beta| within 0.005 of the rigid-body
    sliding line continued (0.037 at 31.5 deg), and the centre's restitution within 0.02 of 5/7."""
    limit = math.degrees(math.atan(3.5 * T4_MU * (1.0 + T4_E)))
    for angle, sliding in ((limit + 1.0, True), (limit - 1.0, False)):
        r, vn, vt, sphere, plane = _test4(name, angle)
        v, w = r["velocity"], r["angular_velocity"]
        beta = -(v[0] - T4_RADIUS * w[1]) / vt
        line = -1.0 + 3.5 * T4_MU * (1.0 + r["restitution"]) / math.tan(math.radians(angle))
        if sliding:
            # the slip changes by (1 + line) v_t, its spin share (5/7) with the lever-arm allowance
            assert beta == pytest.approx(line, abs=_lever_allowance(sphere, plane, T4_RADIUS, vn) * (1.0 + line)), angle
        else:
            assert abs(beta) <= abs(line) + 0.005, (angle, beta)
            assert v[0] / vt == pytest.approx(5.0 / 7.0, abs=0.02), angle


@pytest.mark.parametrize("name", list(MATERIALS))
def test4_sticking_regime_creates_no_energy(name):
    """Test 4 in the sticking regime (theta = 5, 20 deg): with Mindlin's compliance the rebound is
    not the rigid-body rolling one (the contact point's velocity oscillates on the tangential spring
    and may keep or reverse its direction: Maw, Barber and Fawcett 1976), but the kinetic energy
    (translation and rotation) cannot grow and ``|beta| <= 1`` (the slip's share of the energy
    cannot grow either)."""
    for angle in (5.0, 20.0):
        r, vn, vt, sphere, plane = _test4(name, angle)
        v, w = r["velocity"], r["angular_velocity"]
        m = sphere_mass(sphere, T4_RADIUS)
        inertia = 0.4 * m * T4_RADIUS**2
        before = 0.5 * m * T4_SPEED**2
        after = 0.5 * m * float(v @ v) + 0.5 * inertia * float(w @ w)
        assert after <= before * (1.0 + 1e-9), angle
        beta = -(v[0] - T4_RADIUS * w[1]) / vt
        assert abs(beta) <= 1.0, angle
