"""Cylinder walls (inside or outside, infinite or open-ended) against closed forms.

References: Hertz's force ``F = 4/3 E* sqrt(R_e) d^(3/2)`` with the equivalent radius of a sphere on
a cylinder ``R_e = sqrt(R' r)`` (``1/R' = 1/r -+ 1/Rc``, Johnson, Contact Mechanics, section 4.2),
the linear spring ``F = k d``, uniform circular motion (``m v^2 / rho``), free fall, energy
conservation; the compiled narrow phase and broad phase against their NumPy twins.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.geometry.sphere_cylinder import (CONCAVE, CONVEX, RIM, cylinder_contact_radius,
                                                 cylinder_contact_radius_np, cylinder_surface, cylinder_surface_np)
from contactlab.neighbors.brute import brute_force_pairs
from contactlab.neighbors.celllist import build_pairs

from conftest import sphere_mass

R = 1e-3          # sphere radius, m
RC = 5e-3         # cylinder radius, m
G = 9.81


def _e_star(a, b):
    return 1.0 / ((1 - a.poisson**2) / a.young + (1 - b.poisson**2) / b.young)


def _hertz_overlap(force, e_star, radius):
    """Overlap (m) at which Hertz's elastic force is ``force`` (N)."""
    return (3.0 * force / (4.0 * e_star * math.sqrt(radius))) ** (2.0 / 3.0)


def _r_equivalent(r, rc, concave):
    """Johnson's equivalent radius of a sphere on the lateral surface of a cylinder."""
    r_prime = 1.0 / (1.0 / r - 1.0 / rc) if concave else 1.0 / (1.0 / r + 1.0 / rc)
    return math.sqrt(r_prime * r)


# ---------------------------------------------------------------------- geometry

@pytest.mark.parametrize("shape", [(RC, 1.0, -np.inf, np.inf), (RC, -1.0, -np.inf, np.inf), (RC, 1.0, -0.004, 0.006),
                                   (RC, -1.0, 0.0, np.inf)])
def test_compiled_narrow_phase_matches_its_numpy_twin_and_the_geometry(shape):
    """The compiled ``cylinder_surface`` and its NumPy twin agree on random points around a tilted
    cylinder, and both agree with the geometry computed from scratch: the surface point ``x +
    height * normal`` lies on the cylinder (at distance Rc from the axis, or on a rim)."""
    rng = np.random.default_rng(3)
    point = np.array([0.001, -0.002, 0.0005])
    axis = np.array([0.3, -0.2, 1.0])
    axis /= np.linalg.norm(axis)
    x = point + rng.uniform(-0.012, 0.012, (400, 3))
    h, n, what = cylinder_surface_np(x, point, axis, np.array(shape))
    for k in range(len(x)):
        hk, nk, wk = cylinder_surface(tuple(x[k]), tuple(point), tuple(axis), *shape)
        assert wk == what[k]
        np.testing.assert_allclose(hk, h[k], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(nk, n[k], rtol=1e-12, atol=1e-15)
    foot = x + h[:, None] * n
    rel = foot - point
    t = rel @ axis
    rho = np.linalg.norm(rel - t[:, None] * axis, axis=1)
    np.testing.assert_allclose(rho, RC, rtol=1e-9)
    low, high = shape[2], shape[3]
    assert np.all((t >= low - 1e-12) & (t <= high + 1e-12))
    rim = what == RIM
    np.testing.assert_allclose(t[rim], np.where(np.abs(t[rim] - low) < np.abs(t[rim] - high), low, high), atol=1e-12)
    if np.isinf(low) and np.isinf(high):   # one-sided: the side decides
        assert set(what) == {CONCAVE if shape[1] > 0 else CONVEX}
    else:                                  # a thin tube: the side of the centre decides
        d = x - point
        rho_x = np.linalg.norm(d - (d @ axis)[:, None] * axis, axis=1)
        lateral = ~rim
        assert np.array_equal(what[lateral] == CONCAVE, rho_x[lateral] < RC)
        assert np.all(h[lateral] >= 0.0) and np.all(h >= 0.0)
    for wk in (CONCAVE, CONVEX, RIM):
        r = np.array([R])
        assert cylinder_contact_radius(R, RC, wk) == pytest.approx(cylinder_contact_radius_np(r, RC, np.array([wk]))[0],
                                                                   rel=1e-14)
    assert cylinder_contact_radius(R, RC, CONCAVE) == pytest.approx(_r_equivalent(R, RC, True), rel=1e-14)
    assert cylinder_contact_radius(R, RC, CONVEX) == pytest.approx(_r_equivalent(R, RC, False), rel=1e-14)


def test_cell_list_with_cylinder_walls_matches_brute_force():
    """The broad phase keeps exactly the sphere-cylinder pairs closer than the skin (brute force)."""
    rng = np.random.default_rng(5)
    n = 300
    pos = rng.uniform(-0.008, 0.008, (n, 3))
    radius = rng.uniform(2e-4, 6e-4, n)
    fixed = rng.uniform(size=n) < 0.1
    wall_point = np.array([[0.0, 0.0, 0.0], [0.001, 0.0, 0.0], [0.0, 0.0, -0.007]])
    wall_normal = np.array([[0.0, 0.0, 1.0], [0.0, 0.6, 0.8], [0.0, 0.0, 1.0]])
    kind = np.array([1, 1, 0], dtype=np.uint8)
    shape = np.array([[0.006, 1.0, -np.inf, np.inf], [0.002, -1.0, -0.003, 0.004], [0.0, 0.0, 0.0, 0.0]])
    skin = 3e-4
    got_i, got_j, n_pairs, _ = build_pairs(pos, radius, fixed, skin, wall_point, wall_normal, np.empty(0, np.uint32),
                                           np.empty(0, np.uint32), walls=(kind, shape))
    got = list(zip(got_i[:n_pairs].tolist(), got_j[:n_pairs].tolist()))
    ref = brute_force_pairs(pos, radius, fixed, skin, wall_point, wall_normal, walls=(kind, shape))
    assert got == ref
    assert sum(1 for _, j in got if j == n) > 10 and sum(1 for _, j in got if j == n + 1) > 3


# ---------------------------------------------------------------------- simulations

def _resting_inside(glass, model, *, rc=RC):
    """A sphere pressed by gravity (along -y) against the inside of a horizontal cylinder (axis z)."""
    scene = cl.Scene(gravity=(0.0, -G, 0.0))
    scene.add_sphere(position=(0.0, -(rc - R) + 1e-6, 0.0), radius=R, material=glass)
    w = scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), rc, glass, side="inside")
    return cl.Simulation(scene, model), w


@pytest.mark.parametrize("rc", [RC, 1.5e-3])
def test_sphere_resting_inside_has_the_hertz_overlap_of_the_equivalent_radius(glass, rc):
    """At rest the wall carries the weight: overlap = Hertz's for F = m g with R_e = sqrt(R' r) of a
    concave contact, the contact normal points down, the wall's force is m g downwards."""
    sim, w = _resting_inside(glass, cl.models.HertzMindlin(restitution=0.3, friction=0.0), rc=rc)
    sim.run(duration=0.03)
    m = sphere_mass(glass, R)
    c = sim.contact(0, wall=w)
    expected = _hertz_overlap(m * G, _e_star(glass, glass), _r_equivalent(R, rc, True))
    assert c["overlap"] == pytest.approx(expected, rel=1e-6)
    np.testing.assert_allclose(c["normal"], [0.0, -1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(sim.wall_forces()[w], [0.0, -m * G, 0.0], rtol=1e-6, atol=1e-15)
    # the centre's distance from the axis is Rc - r + overlap
    assert np.hypot(*sim.positions[0, :2]) == pytest.approx(rc - R + expected, rel=1e-9)


def test_linear_spring_inside_cylinder_gives_weight_over_stiffness(glass):
    """The linear spring sees no curvature: overlap m g / k."""
    k = 2000.0
    sim, w = _resting_inside(glass, cl.models.LinearSpringDashpot(stiffness=k, restitution=0.3, friction=0.0))
    sim.run(duration=0.03)
    assert sim.contact(0, wall=w)["overlap"] == pytest.approx(sphere_mass(glass, R) * G / k, rel=1e-6)


def test_frictionless_orbit_inside_a_cylinder_is_uniform_circular_motion(glass):
    """Zero gravity, no friction, elastic Hertz: a sphere launched tangentially at the equilibrium
    radius rho (wall force m v^2 / rho = Hertz's force of the overlap rho - (Rc - r)) keeps that
    radius and speed for a revolution; the energy is conserved."""
    m = sphere_mass(glass, R)
    e_star, r_e = _e_star(glass, glass), _r_equivalent(R, RC, True)
    v = 0.5
    # solve m v^2 / (Rc - r + d) = 4/3 E* sqrt(R_e) d^1.5 by fixed point
    d = 1e-6
    for _ in range(200):
        d = _hertz_overlap(m * v * v / (RC - R + d), e_star, r_e)
    rho = RC - R + d
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(rho, 0.0, 0.0), radius=R, material=glass, velocity=(0.0, v, 0.0))
    w = scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), RC, glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=1.0, friction=0.0), initial_overlap_tolerance=0.05)
    e0 = sim.energy()["total"]
    rhos, forces = [], []
    period = 2 * math.pi * rho / v
    for _ in range(40):
        sim.run(duration=period / 40)
        rhos.append(np.hypot(*sim.positions[0, :2]))
        forces.append(sim.contact(0, wall=w)["normal_force"])
    np.testing.assert_allclose(rhos, rho, rtol=2e-5)
    np.testing.assert_allclose(forces, m * v * v / rho, rtol=2e-3)
    assert np.linalg.norm(sim.velocities[0]) == pytest.approx(v, rel=1e-4)
    assert sim.energy()["total"] == pytest.approx(e0, rel=1e-5)
    assert abs(sim.energy()["balance_error"]) < 1e-5 * e0


@pytest.mark.parametrize("restitution", [1.0, 0.5])
def test_radial_bounce_on_the_inside_wall_restitutes_exactly(glass, restitution):
    """A sphere shot radially at the inside wall (zero gravity) comes back at e v: Hertz-Mindlin's
    exact restitution holds for the cylinder's effective radius; with e = 1 the energy is kept (to
    the integrator's O(dt^2) error of an impact: 1e-3 at the default step for a plane wall as for
    this cylinder, 1e-5 at 0.05 of the stability limit, used here)."""
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(0.0, 0.0, 0.0), radius=R, material=glass, velocity=(0.3, 0.0, 0.0))
    scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), RC, glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=restitution, friction=0.0))
    sim.dt = 0.05 * sim.stability_limit
    e0 = sim.energy()["kinetic"]
    sim.run(duration=0.02)           # 4 mm to the wall at 0.3 m/s, bounce, back through the axis
    assert sim.n_contacts() == 0 and sim.velocities[0, 0] < 0.0
    assert -sim.velocities[0, 0] == pytest.approx(restitution * 0.3, rel=2e-3)
    if restitution == 1.0:
        assert sim.energy()["kinetic"] == pytest.approx(e0, rel=3e-5)


def test_sphere_resting_on_a_pillar_has_the_convex_hertz_overlap(glass):
    """A sphere on top of a horizontal pillar (outside, axis x): overlap = Hertz's for m g with the
    convex equivalent radius; the force on the pillar is the weight."""
    scene = cl.Scene(gravity=(0.0, 0.0, -G))
    scene.add_sphere(position=(0.0, 0.0, RC + R + 1e-6), radius=R, material=glass)
    w = scene.add_cylinder_wall((-0.01, 0.0, 0.0), (1.0, 0.0, 0.0), RC, glass, side="outside")
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(duration=0.03)
    m = sphere_mass(glass, R)
    c = sim.contact(0, wall=w)
    assert c["overlap"] == pytest.approx(_hertz_overlap(m * G, _e_star(glass, glass), _r_equivalent(R, RC, False)),
                                         rel=1e-6)
    np.testing.assert_allclose(sim.wall_forces()[w], [0.0, 0.0, -m * G], rtol=1e-6, atol=1e-15)
    np.testing.assert_allclose(c["normal"], [0.0, 0.0, -1.0], atol=1e-12)


def test_a_sphere_falls_out_of_an_open_end_without_force(glass):
    """A sphere falling along the axis of a vertical open tube, clear of the wall, is in free fall
    before, while and after it passes the lower end: z = z0 - g t^2 / 2 to round-off, no contact."""
    scene = cl.Scene(gravity=(0.0, 0.0, -G))
    z0 = 0.01
    scene.add_sphere(position=(0.002, 0.0, z0), radius=R, material=glass)
    scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), RC, glass, length=(0.0, 0.02))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5, skin=0.01)
    sim.run(duration=0.08)
    t = sim.time
    assert sim.positions[0, 2] < -0.02                      # well out of the tube
    assert sim.positions[0, 2] == pytest.approx(z0 - 0.5 * G * t * t, rel=1e-9)
    assert sim.positions[0, 0] == 0.002 and sim.energy()["dissipated"] == 0.0


def test_a_sphere_rests_on_the_rim_of_an_open_end_like_on_a_plane(glass):
    """A sphere centred over the rim circle of a tube's upper end rests on the edge: the rim
    contact uses the sphere's radius, so its overlap is Hertz's for m g with R = r (a plane's)."""
    scene = cl.Scene(gravity=(0.0, 0.0, -G))
    scene.add_sphere(position=(RC, 0.0, 0.02 + R + 1e-6), radius=R, material=glass)
    w = scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), RC, glass, length=(0.0, 0.02))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(duration=0.03)
    c = sim.contact(0, wall=w)
    assert c["overlap"] == pytest.approx(_hertz_overlap(sphere_mass(glass, R) * G, _e_star(glass, glass), R), rel=1e-6)
    np.testing.assert_allclose(c["normal"], [0.0, 0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(c["contact_point"][:2], [RC, 0.0], atol=1e-12)


def test_pile_outside_an_open_tube_is_held_by_its_outer_face(glass):
    """The tube of an open cylinder is two-sided: a sphere outside an 'inside' tube, between its
    ends, pressed against it by gravity, rests on the outer face (convex Hertz overlap)."""
    scene = cl.Scene(gravity=(-G, 0.0, 0.0))
    scene.add_sphere(position=(RC + R + 1e-6, 0.0, 0.01), radius=R, material=glass)
    w = scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), RC, glass, length=(0.0, 0.02), side="inside")
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(duration=0.03)
    assert sim.contact(0, wall=w)["overlap"] == pytest.approx(
        _hertz_overlap(sphere_mass(glass, R) * G, _e_star(glass, glass), _r_equivalent(R, RC, False)), rel=1e-6)


# ---------------------------------------------------------------------- files and inputs

def _cylinder_scene(glass):
    scene = cl.Scene(gravity=(0.0, 0.0, -G))
    scene.add_sphere(position=(0.0, 0.0, 0.003), radius=R, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 2.0), RC, glass, length=(-math.inf, 0.02), velocity=(0, 0, 0.1))
    scene.add_cylinder_wall((0.001, 0.0, 0.0), (1.0, 0.0, 0.0), 5e-4, glass, side="outside")
    return scene


def test_scene_file_cylinder_wall_is_the_python_call(glass, tmp_path):
    """A [[cylinder_wall]] table builds the same walls as scene.add_cylinder_wall (numbered after
    the [[wall]] tables); infinite ends are TOML's inf."""
    text = """
[simulation]
gravity = [0.0, 0.0, -9.81]
[materials.glass]
density = 2500.0
young = 1e7
poisson = 0.3
[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.5
[[sphere]]
position = [0.0, 0.0, 0.003]
radius = 0.001
material = "glass"
[[cylinder_wall]]
axis_point = [0.0, 0.0, 0.0]
axis_direction = [0.0, 0.0, 2.0]
radius = 0.005
material = "glass"
length = [-inf, 0.02]
velocity = [0.0, 0.0, 0.1]
[[cylinder_wall]]
axis_point = [0.001, 0.0, 0.0]
axis_direction = [1.0, 0.0, 0.0]
radius = 0.0005
material = "glass"
side = "outside"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
"""
    path = tmp_path / "cyl.toml"
    path.write_text(text)
    from contactlab.io.scenefile import load_scene_file

    got, _ = load_scene_file(path).scene.finalize()
    want, _ = _cylinder_scene(glass).finalize()
    for name in ("wall_kind", "wall_shape", "wall_normal", "wall_material"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    bad = path.with_name("bad.toml")
    bad.write_text(text.replace('side = "outside"', 'side = "outward"'))
    with pytest.raises(cl.SceneFileError, match="cylinder_wall #2.*side"):
        load_scene_file(bad)


def test_checkpoint_keeps_the_cylinder_walls(glass, tmp_path):
    sim = cl.Simulation(_cylinder_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(steps=50)
    again = cl.Simulation.load_checkpoint(sim.save_checkpoint(tmp_path / "c.npz"))
    for name in ("wall_kind", "wall_shape", "wall_normal"):
        assert np.array_equal(getattr(again.model, name), getattr(sim.model, name)), name
    assert again.stepper.cylinders is not None
    sim.run(steps=200)
    again.run(steps=200)
    assert np.array_equal(sim.positions, again.positions) and np.array_equal(sim.wall_points, again.wall_points)


def test_vtk_draws_a_cylinder_wall_as_a_tube(glass, tmp_path):
    """walls.vtp: the plane's square, then each cylinder's 48 quadrilaterals, whose corners lie at
    the cylinder's radius from its axis and, for the finite end, on the end plane."""
    from helpers.vtp import read_vtp

    sim = cl.Simulation(_cylinder_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.add_reporter(cl.io.VTKReporter(tmp_path, every=10))
    sim.run(steps=10)
    _, arrays = read_vtp(tmp_path / "walls_000001.vtp")
    wall = arrays[("CellData", "wall")]
    assert wall.tolist() == [0] + [1] * 48 + [2] * 48
    pts = arrays[("Points", "Points")]
    tube = pts[4:4 + 96]                                        # wall 1: axis z through (0, 0, z_wall)
    np.testing.assert_allclose(np.hypot(tube[:, 0], tube[:, 1]), RC, rtol=1e-12)
    z_wall = sim.wall_points[1, 2]
    np.testing.assert_allclose(tube[48:, 2], z_wall + 0.02, rtol=1e-12)   # the upper end, moved with the wall
    pillar = pts[100:]
    np.testing.assert_allclose(np.hypot(pillar[:, 1], pillar[:, 2]), 5e-4, rtol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(radius=-1.0), "radius"), (dict(side="up"), "side"), (dict(length=(0.1, 0.0)), "low < high"),
    (dict(length=(0.1,)), "length"), (dict(axis_direction=(0, 0, 0)), "axis_direction"),
    (dict(length=(math.nan, 1.0)), "length"),
])
def test_bad_cylinder_walls_are_refused_with_the_reason(glass, kwargs, match):
    scene = cl.Scene()
    args = dict(axis_point=(0, 0, 0), axis_direction=(0, 0, 1), radius=RC, material=glass) | kwargs
    with pytest.raises(cl.InputError, match=match):
        scene.add_cylinder_wall(**args)
    assert scene.n_walls == 0 and scene.materials == ()


def test_cylinder_walls_take_spheres_only_and_3d_scenes(glass):
    scene = cl.Scene()
    scene.add_ellipsoid((0, 0, 0), (1e-3, 1e-3, 2e-3), glass)
    scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), RC, glass)
    with pytest.raises(cl.InputError, match="spheres only"):
        scene.finalize()
    with pytest.raises(cl.InputError, match="2-D"):
        cl.Scene(dimension=2).add_cylinder_wall((0, 0, 0), (0, 0, 1), RC, glass)


def test_initial_overlap_with_a_cylinder_is_refused(glass):
    scene = cl.Scene()
    scene.add_sphere(position=(RC - 0.5 * R, 0.0, 0.0), radius=R, material=glass)
    scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), RC, glass)
    with pytest.raises(cl.InputError, match="penetrates wall 0 by 0.0005"):
        cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
