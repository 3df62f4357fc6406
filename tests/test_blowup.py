"""A simulation that blows up stops with a diagnostic naming the spheres, the time and the cause."""
from __future__ import annotations

import math

import numpy as np
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


# ------------------------------------------------------------------------------------------------
# Diagnoses: each blow-up names the cause that its numbers support (contactlab.diagnosis)

@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "spring constant", low=0.0)],
                stability=lambda values, case: 4.0 * 2.0 / math.sqrt(values["stiffness"] / case.mass))
def optimistic_spring(g, p, h, dt):
    """A linear spring that declares a stability limit four times its true 2/omega."""
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return p.stiffness * g.overlap, 0.5 * p.stiffness * g.overlap * g.overlap, 0.0, True, ()


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "spring constant", low=0.0)])
def nan_when_fast(g, p, h, dt):
    """A linear spring whose force is NaN when the contact closes faster than 0.3 m/s (its checks
    before compiling probe it slowly, so the fault shows only in a run)."""
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    rate = -(g.rel_velocity[0] * g.normal[0] + g.rel_velocity[1] * g.normal[1] + g.rel_velocity[2] * g.normal[2])
    return (p.stiffness * g.overlap if rate < 0.3 else math.nan), 0.0, 0.0, True, ()


def _resting_sphere(glass, model, **kwargs):
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.0e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    return cl.Simulation(scene, model, debug=True, **kwargs)


def test_time_step_above_the_contacts_own_limit_is_named(glass):
    """The law declares a limit 4x too large; at 0.3 of it the step is 1.2 x 2/omega of the real
    spring: the integration pumps energy into the resting sphere's oscillation until the overlap
    guard trips.  The diagnosis probes the law's stiffness at the overlap (k, independent of the
    declaration) and blames the step, with the energy the run created."""
    model = cl.models.Contact(normal=optimistic_spring(stiffness=1e3))
    sim = _resting_sphere(glass, model)
    sim.dt = 0.3 * sim.stability_limit
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(steps=3000)
    err = info.value
    true_limit = 2.0 / math.sqrt(1e3 / sim.model.mass[0])        # 2/omega of k on the sphere's mass
    assert err.cause == "time_step"
    assert err.details["stiffness"] == pytest.approx(1e3, rel=1e-6)
    assert err.details["local_limit"] == pytest.approx(true_limit, rel=1e-6)
    assert err.details["energy_created"] > 0.1
    text = str(err)
    assert "Cause: the time step" in text and "check the law's declared stability" in text
    # the fix the message gives works: a step well below the contact's own limit
    calm = _resting_sphere(glass, model, dt=0.3 * true_limit)
    calm.run(steps=1500)
    assert calm.n_contacts() == 1


def test_soft_contact_for_the_impact_speed_is_not_blamed_on_dt(glass):
    """A soft linear spring and a fast impact, dt far below the limit: the overlap the stiffness
    gives (closed form: v sqrt(m/k), elastic) is above the guard; the diagnosis says so, with
    the estimate, and says how to allow it.  Raising max_overlap as suggested runs through."""
    k, v = 50.0, 0.5
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 1.0001e-3), radius=1e-3, material=glass, velocity=(0, 0, -v))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    model = cl.models.LinearSpringDashpot(stiffness=k, restitution=1.0, friction=0.5)
    with pytest.raises(cl.SimulationBlowUp) as info:
        cl.Simulation(scene, model, dt=1e-5).run(duration=0.01)
    err = info.value
    mass = glass.density * 4.0 / 3.0 * math.pi * 1e-9
    closed_form = v * math.sqrt(mass / k)                                 # elastic peak overlap, m
    assert err.cause == "soft_contact"
    assert err.details["dt_ratio"] < 0.1
    assert err.details["expected_peak_overlap"] == pytest.approx(closed_form, rel=1e-3)
    assert err.details["impact_speed"] == pytest.approx(v, rel=1e-3)
    text = str(err)
    assert "soft for the impact speed" in text and "The time step is not the cause" in text
    assert "smaller dt" not in text
    allowed = err.details["expected_peak_ratio"] * 1.25
    suggested = float(text.split("max_overlap=")[-1].split(")")[0]) if "max_overlap=" in text else None
    assert suggested is not None and suggested >= allowed
    sim = cl.Simulation(scene, model, dt=1e-5, max_overlap=suggested)
    rec = sim.record("overlap", sphere=None, contact=0, wall=0)
    sim.run(duration=0.01)
    assert rec["overlap"].max() == pytest.approx(closed_form, rel=2e-3)


def test_soft_contact_under_a_static_load(glass):
    """A column of ten soft beads on a floor, settling under local damping: the bottom contact
    carries the column's weight at an overlap beyond the guard, with no impact: the diagnosis
    names the load, not an impact or the step."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    pos = np.zeros((10, 3))
    pos[:, 2] = 1e-3 + 2.0e-3 * np.arange(10)
    scene.add_spheres(positions=pos, radii=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.LinearSpringDashpot(stiffness=6.9, restitution=0.5, friction=0.5),
                        local_damping=0.7)
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(duration=1.0)
    err = info.value
    assert err.cause == "soft_contact" and err.particles == (0,)
    assert err.details["inertial_share"] < 0.5
    assert "soft for the load it carries" in str(err) and "The time step is not the cause" in str(err)


def test_a_driven_sphere_pushing_a_sphere_into_a_wall(glass):
    """A kinematic sphere moving down at 0.5 m/s onto a sphere resting on the floor: no force stops
    a prescribed motion, so the overlap grows at 0.5 m/s; the diagnosis names the driven body, its
    speed and what holds the other one."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.0e-3), radius=1e-3, material=glass)
    scene.add_sphere(position=(0, 0, 3.05e-3), radius=1e-3, material=glass, velocity=(0, 0, -0.5), fixed=True)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(duration=0.01)
    err = info.value
    assert err.cause == "driven_body"
    assert err.details["driven"] == "sphere 1" and err.details["held_by"] == ["wall 0"]
    assert err.details["driven_speed"] == pytest.approx(0.5)
    assert "sphere 1 moves with a prescribed velocity, 0.5 m/s into sphere 0, which is held by wall 0" in str(err)


def test_a_moving_wall_squeezing_a_sphere(glass):
    """A wall (a piston) moving down at 1 m/s squeezes a sphere against the floor."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.0e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    scene.add_wall(point=(0, 0, 2.05e-3), normal=(0, 0, -1), material=glass, velocity=(0, 0, -1.0))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(duration=0.01)
    err = info.value
    assert err.cause == "driven_body" and err.details["driven"] == "wall 1"
    assert "wall 1 moves with a prescribed velocity, 1 m/s into sphere 0, which is held by wall 0" in str(err)


def test_a_law_returning_nan_is_named_with_the_contact(glass):
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 1.0005e-3), radius=1e-3, material=glass, velocity=(0, 0, -0.5))
    scene.add_sphere(position=(0, 0, 3.5e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.Contact(normal=nan_when_fast(stiffness=1e3)), dt=1e-6, debug=True)
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(steps=2000)
    err = info.value
    assert err.cause == "law_non_finite" and err.particles == (0,)
    text = str(err)
    assert "the contact law" in text and "nan_when_fast" in text and "sphere 0 and wall 0" in text
    assert "returned a non-finite force" in text and err.details["overlap"] > 0.0


def test_expected_peak_overlap_against_hertz_impact_theory(glass):
    """The estimate the soft-contact diagnosis gives, against Hertz's impact of two equal spheres
    (elastic, restitution 1): delta_max = (15 m* v^2 / (16 E* sqrt(R*)))^(2/5), with
    1/E* = 2 (1 - nu^2) / E and R* = r / 2 (Johnson, Contact Mechanics, 11.2)."""
    from contactlab.diagnosis import expected_peak_overlap

    r, v = 1e-3, 2.0
    m = glass.density * 4.0 / 3.0 * math.pi * r**3
    model = cl.models.HertzMindlin(restitution=1.0, friction=0.5)
    e_star = glass.young / (2.0 * (1.0 - glass.poisson**2))
    closed = (15.0 * (m / 2) * v**2 / (16.0 * e_star * math.sqrt(r / 2))) ** 0.4
    est = expected_peak_overlap(model, overlap=0.0, closing_speed=v, radius_i=r, radius_j=r, material_i=glass,
                                material_j=glass, mass_i=m, mass_j=m)
    assert est["reached"] and est["peak"] == pytest.approx(closed, rel=1e-3)
    # from the middle of the approach: the kinetic energy left plus the work already stored
    half = 0.5 * closed
    work = 8.0 / 15.0 * e_star * math.sqrt(r / 2) * half**2.5
    v_mid = math.sqrt(v**2 - 2.0 * work / (m / 2))
    est = expected_peak_overlap(model, overlap=half, closing_speed=v_mid, radius_i=r, radius_j=r,
                                material_i=glass, material_j=glass, mass_i=m, mass_j=m)
    assert est["peak"] == pytest.approx(closed, rel=1e-3) and est["speed"] == pytest.approx(v, rel=1e-3)
    # the tangent stiffness at that overlap, 2 E* sqrt(R* delta)
    assert est["stiffness"] == pytest.approx(2.0 * e_star * math.sqrt(r / 2 * half), rel=1e-2)


def test_the_estimate_takes_either_body_as_the_free_one(glass):
    """A fixed sphere on either side of the pair gives the same estimate (v sqrt(m/k), elastic)."""
    from contactlab.diagnosis import expected_peak_overlap

    model = cl.models.LinearSpringDashpot(stiffness=100.0, restitution=1.0, friction=0.5)
    m = glass.density * 4.0 / 3.0 * math.pi * 1e-9
    common = dict(overlap=0.0, closing_speed=0.3, radius_i=1e-3, radius_j=1e-3, material_i=glass, material_j=glass)
    a = expected_peak_overlap(model, mass_i=m, mass_j=math.inf, **common)
    b = expected_peak_overlap(model, mass_i=math.inf, mass_j=m, **common)
    assert a["peak"] == pytest.approx(0.3 * math.sqrt(m / 100.0), rel=1e-3) and b["peak"] == pytest.approx(a["peak"])
