"""The 2-D engine: disks and line walls in the plane z = 0 (``Scene(dimension=2)``).

Checked against theory: a disk's mass and inertia (a solid cylinder), the static load on a line
wall (its weight), a disk rolling down an incline without slipping (``(2/3) g sin(theta)``, the
disk's own factor, against ``5/7`` for a sphere), and a disk's impact on a line wall against the
1-DOF equation of motion of the Hertz-Mindlin law (SciPy); plus exact planarity, checkpoints,
sensors and VTK in 2-D, and the errors of 2-D input.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.errors import InputError
from contactlab.laws.hertz_mindlin import effective_moduli
from contactlab.laws.impact_reference import ode_impact

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3)
R = 1e-3
T = 2e-3  # disk thickness, m
G = 9.81


def disk_mass(r=R, t=T):
    return GLASS.density * math.pi * r**2 * t


def test_a_disk_is_a_solid_cylinder_of_the_scenes_thickness():
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_disk(position=(0.0, 0.0), radius=R, material=GLASS)
    scene.add_disks(positions=[(0.01, 0.0), (0.02, 0.0)], radii=[2 * R, 3 * R], material=GLASS)
    model, state = scene.finalize()
    r = np.array([R, 2 * R, 3 * R])
    np.testing.assert_allclose(model.mass, GLASS.density * math.pi * r**2 * T, rtol=1e-15)
    np.testing.assert_allclose(model.inertia, 0.5 * model.mass * r**2, rtol=1e-15)
    assert model.dimension == 2 and model.thickness == T
    assert np.all(state.positions[:, 2] == 0.0)
    np.testing.assert_array_equal(model.gravity, [0.0, -9.81, 0.0])


def test_a_disk_at_rest_on_a_line_wall_carries_its_weight():
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_disk(position=(0.0, R), radius=R, material=GLASS)
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5), local_damping=0.3)
    sim.run(duration=0.05)
    np.testing.assert_allclose(sim.wall_forces()[0], [0.0, -disk_mass() * G, 0.0], rtol=1e-6, atol=1e-12)


def static_overlap(weight_normal, radius):
    """Hertz overlap of a disk (radius ``radius``) on a wall under the normal load (same contact law as 3-D)."""
    e_star, _ = effective_moduli(GLASS, GLASS)
    return (weight_normal / (4.0 / 3.0 * e_star * math.sqrt(radius))) ** (2.0 / 3.0)


def test_a_disk_rolls_down_an_incline_at_two_thirds_of_g_sin_theta():
    """Rolling without slipping (mu = 0.8 > tan(theta) / 3): a = g sin(theta) / (1 + I / (m r^2)) =
    (2/3) g sin(theta) for a disk (a sphere would take 5/7), and the spin follows v = omega r."""
    theta = math.radians(20.0)
    down = np.array([math.cos(theta), -math.sin(theta)])   # along the slope, downhill
    normal = np.array([math.sin(theta), math.cos(theta)])
    start = (R - static_overlap(disk_mass() * G * math.cos(theta), R)) * normal
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_disk(position=start, radius=R, material=GLASS)
    scene.add_wall(point=(0.0, 0.0), normal=normal, material=GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.8))
    duration = 0.05
    sim.run(duration=duration)
    s = float((sim.positions[0, :2] - start) @ down)
    expected = 0.5 * (2.0 / 3.0) * G * math.sin(theta) * sim.time**2
    assert abs(s / expected - 1.0) < 2e-3, (s, expected)
    v = float(sim.velocities[0, :2] @ down)
    assert abs(-sim.angular_velocities[0, 2] * R / v - 1.0) < 2e-3   # clockwise spin rolling to +x
    assert abs(s / (0.5 * (5.0 / 7.0) * G * math.sin(theta) * sim.time**2) - 1.0) > 0.05  # not a sphere's


def test_a_disk_hitting_a_line_wall_matches_the_laws_equation_of_motion():
    """Hertz-Mindlin's normal force between a disk and a wall is the 3-D law's (the 2-D convention of
    LAMMPS and PFC2D); with the disk's mass, the rebound speed and contact duration agree with the
    1-DOF equation of motion integrated by SciPy."""
    speed = 0.2
    model = cl.models.HertzMindlin(restitution=0.6, friction=0.0)
    scene = cl.Scene(dimension=2, gravity=(0.0, 0.0), thickness=T)
    scene.add_disk(position=(0.0, R + 1e-6), radius=R, material=GLASS, velocity=(0.0, -speed))
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=GLASS)
    dt = 1e-6
    sim = cl.Simulation(scene, model, dt=dt)
    rec = sim.record("overlap", contact=0, wall=0)
    sim.run(duration=1e-3)
    e_star, _ = effective_moduli(GLASS, GLASS)
    k = 4.0 / 3.0 * e_star * math.sqrt(R)
    mass = disk_mass()
    c = model.damping_coefficient

    def force(d, v, _dmax):
        d = max(d, 0.0)
        return max(k * d**1.5 + c * math.sqrt(mass * 1.5 * k * math.sqrt(d)) * v, 0.0)

    d_max = (5.0 * mass * speed**2 / (4.0 * k)) ** 0.4
    ref = ode_impact(force, mass, speed, d_max / speed)
    assert abs(sim.velocities[0, 1] / speed - ref["restitution"]) < 2e-3
    assert abs(ref["restitution"] - 0.6) < 1e-6
    measured = np.count_nonzero(rec["overlap"] > 0.0) * dt   # steps that ended in contact
    assert abs(measured / ref["duration"] - 1.0) < 1e-2, (measured, ref["duration"])
    assert sim.velocities[0, 0] == 0.0 and sim.angular_velocities[0, 2] == 0.0


def pile(model, steps=3000, seed=1, dt=2e-5):
    rng = np.random.default_rng(seed)
    scene = cl.Scene(dimension=2, thickness=T)
    pos = np.array([(x, y) for y in range(6) for x in range(8)], dtype=float) * 2.3 * R + 1.5 * R
    pos += rng.uniform(-0.1 * R, 0.1 * R, pos.shape)
    scene.add_disks(positions=pos, radii=rng.uniform(0.8 * R, 1.0 * R, len(pos)), material=GLASS,
                    velocities=rng.normal(0.0, 0.05, pos.shape), angular_velocities=rng.normal(0.0, 30.0, len(pos)))
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=GLASS)
    scene.add_wall(point=(0.0, 0.0), normal=(1.0, 0.0), material=GLASS)
    scene.add_wall(point=(8 * 2.3 * R + R, 0.0), normal=(-1.0, 0.0), material=GLASS)
    sim = cl.Simulation(scene, model, dt=dt)
    sim.run(steps=steps)
    return sim


def test_a_settling_pile_of_disks_stays_exactly_in_the_plane():
    """The engine's arithmetic keeps a planar state planar bit for bit: no z position, velocity or
    force, no spin but about z, with friction and rolling resistance acting; the energy balance
    closes within 1 % of the dissipated energy (0.3 % at this step, second order in dt)."""
    sim = pile(cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1), steps=6000, dt=1e-5)
    assert sim.n_contacts() > 40
    for a in (sim.positions, sim.velocities, sim.forces):
        assert np.all(a[:, 2] == 0.0)
    for a in (sim.angular_velocities, sim.torques):
        assert np.all(a[:, :2] == 0.0)
    assert np.any(sim.angular_velocities[:, 2] != 0.0)
    c = sim.contacts()
    assert np.all(c["normal"][:, 2] == 0.0) and np.all(c["contact_point"][:, 2] == 0.0)
    e = sim.energy()
    assert e["dissipated"] > 0.0 and abs(e["balance_error"]) < 1e-2 * e["dissipated"]


def test_a_two_d_checkpoint_resumes_bit_for_bit_and_stays_two_d(tmp_path):
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    sim = pile(model, steps=400)
    path = sim.save_checkpoint(tmp_path / "c.npz")
    sim.run(steps=300)
    again = cl.Simulation.load_checkpoint(path)
    assert again.dimension == 2 and again.model.thickness == T
    again.run(steps=300)
    np.testing.assert_array_equal(again.positions, sim.positions)
    np.testing.assert_array_equal(again.angular_velocities, sim.angular_velocities)
    with pytest.raises(InputError, match=r"lie in the x-y plane"):
        again.set_velocity(0, (0.0, 0.0, 1.0))


def test_velocities_set_in_two_d_take_plane_vectors_and_spins():
    sim = pile(cl.models.HertzMindlin(restitution=0.5, friction=0.5), steps=10)
    sim.set_velocity(3, (0.1, -0.2), angular_velocity=5.0)
    np.testing.assert_array_equal(sim.velocities[3], [0.1, -0.2, 0.0])
    np.testing.assert_array_equal(sim.angular_velocities[3], [0.0, 0.0, 5.0])
    sim.set_velocity(3, (0.3, 0.0, 0.0), angular_velocity=(0.0, 0.0, -1.0))
    np.testing.assert_array_equal(sim.angular_velocities[3], [0.0, 0.0, -1.0])
    sim.set_wall_velocity(0, (0.01, 0.0))
    with pytest.raises(InputError, match=r"angular_velocity must point along z"):
        sim.set_velocity(3, (0.0, 0.0), angular_velocity=(1.0, 0.0, 0.0))


def test_vtk_output_of_a_two_d_run(tmp_path):
    sim = pile(cl.models.HertzMindlin(restitution=0.5, friction=0.5), steps=10)
    sim.add_reporter(cl.io.VTKReporter(tmp_path / "vtk", every=5))
    sim.run(steps=10)
    files = sorted((tmp_path / "vtk").glob("*.vtp")) + sorted((tmp_path / "vtk").glob("*.vtu"))
    assert files, list((tmp_path / "vtk").iterdir())
    assert any("radius" in f.read_text(errors="replace") for f in files)


@pytest.mark.parametrize("make, message", [
    (lambda: cl.Scene(dimension=4), r"dimension must satisfy 2 <= dimension <= 3, got 4"),
    (lambda: cl.Scene(dimension=2, gravity=(0.0, 0.0, -9.81)), r"gravity must be 2 numbers \(x, y\) in a 2-D scene"),
    (lambda: cl.Scene(dimension=2, thickness=-1.0), r"thickness must be > 0 m, got -1.0"),
    (lambda: cl.Scene(thickness=2e-3), r"thickness=0.002 is the disks' thickness of a 2-D scene; a 3-D scene has none"),
    (lambda: cl.Scene(dimension=2).add_sphere((0, 0, 0), R, GLASS), r"add_sphere adds a 3-D body; a 2-D scene"),
    (lambda: cl.Scene(dimension=2).add_ellipsoid((0, 0, 0), (R, R, R), GLASS), r"add_ellipsoid adds a 3-D body"),
    (lambda: cl.Scene().add_disk((0, 0), R, GLASS), r"add_disk needs a 2-D scene"),
    (lambda: cl.Scene(dimension=2).add_disk((0, 0, 0), R, GLASS), r"position must be 2 numbers \(x, y\)"),
    (lambda: cl.Scene(dimension=2).add_disk((0, 0), -R, GLASS), r"radius must be > 0 m, got -0.001"),
    (lambda: cl.Scene(dimension=2).add_disk((0, float("nan")), R, GLASS), r"position must be finite"),
    (lambda: cl.Scene(dimension=2).add_disk((0, 0), R, GLASS, angular_velocity=(0, 0, 1)), r"angular_velocity must be"),
    (lambda: cl.Scene(dimension=2).add_disks(np.zeros((3, 3)), R, GLASS), r"positions must have shape \(N, 2\)"),
    (lambda: cl.Scene(dimension=2).add_disks(np.zeros((3, 2)), R, GLASS, angular_velocities=[1.0, 2.0]),
     r"angular_velocities must have shape \(3,\)"),
    (lambda: cl.Scene(dimension=2).add_wall((0, 0, 0), (0, 1, 0), GLASS), r"point must be 2 numbers"),
])
def test_two_d_input_errors_name_the_value_and_what_is_allowed(make, message):
    with pytest.raises(InputError, match=message):
        make()


def test_a_failed_disk_addition_adds_nothing():
    scene = cl.Scene(dimension=2)
    with pytest.raises(InputError):
        scene.add_disks([(0.0, 0.0), (1.0, float("inf"))], R, GLASS)
    assert scene.n_bodies == 0 and scene.materials == ()
