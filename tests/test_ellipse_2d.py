"""Ellipses in the 2-D engine (``Scene.add_ellipse``, ``add_ellipses``), each check against a reference
that does not use the engine's geometry:

* **mass and moment of inertia**: a quadrature of the ellipse's area on a fine grid (not the closed
  forms ``rho pi a b t`` and ``m (a^2 + b^2) / 4``);
* **circles given as ellipses**: the same scene built with disks, whose pairs take the engine's
  sphere fast path (closed-form circle geometry): same trajectory to round-off;
* **contact geometry** (overlap, normal, contact point, the radius the law sees) of random
  ellipse-ellipse and ellipse-disk pairs and of ellipses on a line wall: the *separating-axis
  theorem on densely sampled boundaries*.  For two convex bodies the largest, over unit axes
  ``u``, of ``min_B(x . u) - max_A(x . u)`` is their distance when apart and minus the depth of
  the minimum translation that separates them when they overlap, the axis being the normal; the
  maximum is taken over boundary points sampled in the ellipses' parameter and over a grid of
  axes, then over finer grids about the best axis and the extreme points.  The separation so found
  is accurate to round-off; a maximiser located by sampling (the axis, the extreme points) only to
  about ``sqrt(eps)`` relative (the objective is flat there), which sets the tolerances of the
  normal, the points and the radii below.  The radius the law sees is read back from the
  Hertz-Mindlin force at rest, ``F = 4/3 E* sqrt(R) overlap^(3/2)``, and compared with the
  radii of curvature of the sampled curves at the reference points (the parametric formula
  ``(a^2 sin^2 t + b^2 cos^2 t)^(3/2) / (a b)``);
* **statics**: an ellipse lying on a line wall carries its weight and sinks by the Hertz overlap
  of its flat side's radius of curvature ``a^2 / b`` (closed form); a tilted ellipse released on
  the floor turns down onto its flat side;
* **energy**: a frictional pile of ellipses of mixed aspect ratios in a box of line walls closes
  its energy balance within 1 % of the dissipated energy and stays exactly planar;
* checkpoints (bit for bit), sensors, VTK output (the polygons lie on the ellipses), 2-D scene
  files (the same run as the Python scene, bit for bit), errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial import cKDTree

import contactlab as cl
from contactlab.errors import InputError, SceneFileError
from contactlab.geometry.ellipsoid import STATUS_APART, ellipse_pair_2d
from contactlab.geometry.shapes import ELLIPSE, OUTLINE_SIDES
from contactlab.io.scenefile import load_scene_file
from contactlab.laws.hertz_mindlin import effective_moduli
from helpers.vtp import read_vtp

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3)
R = 1e-3
T = 2e-3  # thickness, m
G = 9.81
HERTZ = cl.models.HertzMindlin(restitution=0.5, friction=0.5)


# ------------------------------------------------------------------------------ references
def rot(theta):
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def boundary(pos, theta, axes, t):
    """(len(t), 2) points of the ellipse at the parameters ``t``: ``pos + R (a cos t, b sin t)``."""
    return np.asarray(pos) + np.stack([axes[0] * np.cos(t), axes[1] * np.sin(t)], 1) @ rot(theta).T


def curvature_radius(axes, t):
    """Radius of curvature of the curve ``(a cos t, b sin t)`` at ``t`` (m)."""
    a, b = axes
    return (a * a * np.sin(t) ** 2 + b * b * np.cos(t) ** 2) ** 1.5 / (a * b)


def separating_axis(A, B, levels=7, n0=2000, n=161):
    """The separating-axis optimum on sampled boundaries (module docstring).  ``A``, ``B``:
    ``(position, angle, semi-axes)``.  Returns ``(separation, normal (A -> B), point of A,
    point of B, radius of curvature of A there, of B there)``.  Computed about A's centre (the
    round-off of the projections is then that of the bodies' size, not of their distance from the
    origin)."""
    origin = np.asarray(A[0], dtype=float)
    A = (np.zeros(2), A[1], A[2])
    B = (np.asarray(B[0]) - origin, B[1], B[2])
    aspect = max(max(A[2]) / min(A[2]), max(B[2]) / min(B[2]))
    phis = np.linspace(-math.pi, math.pi, n0, endpoint=False)
    ta = np.linspace(0.0, 2.0 * math.pi, n0, endpoint=False)
    tb = ta.copy()
    for _ in range(levels):
        u = np.stack([np.cos(phis), np.sin(phis)], 1)
        pa = u @ boundary(*A, ta).T
        pb = u @ boundary(*B, tb).T
        ia, ib = pa.argmax(axis=1), pb.argmin(axis=1)
        rows = np.arange(len(phis))
        sep = pb[rows, ib] - pa[rows, ia]
        k = int(sep.argmax())
        phi, t_a, t_b, best = phis[k], ta[ia[k]], tb[ib[k]], sep[k]
        step = phis[1] - phis[0]
        phis = phi + np.linspace(-3.0, 3.0, n) * step
        # the extreme points move by at most (aspect) x the turn of the axis
        half = (3.0 * aspect + 3.0) * step
        ta = t_a + np.linspace(-half, half, n)
        tb = t_b + np.linspace(-half, half, n)
    point_a = boundary(*A, np.array([t_a]))[0] + origin
    point_b = boundary(*B, np.array([t_b]))[0] + origin
    return (best, np.array([math.cos(phi), math.sin(phi)]), point_a, point_b, curvature_radius(A[2], t_a),
            curvature_radius(B[2], t_b))


def lowest_point(A, normal, levels=7, n0=4000, n=161):
    """The point of ellipse ``A`` lowest along the unit ``normal`` on sampled boundaries, refined:
    ``(point, parameter)``."""
    t = np.linspace(0.0, 2.0 * math.pi, n0, endpoint=False)
    for _ in range(levels):
        k = int((boundary(*A, t) @ normal).argmin())
        best, step = t[k], t[1] - t[0]
        t = best + np.linspace(-3.0, 3.0, n) * step
    return boundary(*A, np.array([best]))[0], best


def touching_distance(A, B, u):
    """How far apart along the unit ``u`` the centres of ``A`` and ``B`` are when they touch (for
    making test configurations only; support functions on a grid of directions)."""
    phi = np.linspace(-math.pi, math.pi, 20000, endpoint=False)
    n = np.stack([np.cos(phi), np.sin(phi)], 1)

    def h(body):
        local = n @ rot(body[1])
        return np.sqrt((local[:, 0] * body[2][0]) ** 2 + (local[:, 1] * body[2][1]) ** 2)

    hh = h(A) + h(B)
    return brentq(lambda s: np.max(s * (n @ u) - hh), 0.0, 2.0 * (max(A[2]) + max(B[2])))


def hertz_radius(normal_force, overlap):
    """The effective radius that gives Hertz's ``F = 4/3 E* sqrt(R) overlap^(3/2)`` (glass on glass)."""
    e_star, _ = effective_moduli(GLASS, GLASS)
    return (normal_force / (4.0 / 3.0 * e_star * overlap**1.5)) ** 2


# ------------------------------------------------------------------------------ mass properties
def test_an_ellipse_is_a_solid_elliptic_cylinder_of_the_scenes_thickness():
    """Mass and moment of inertia about z against a quadrature of the area (grid of 4e6 cells);
    the orientation is the rotation about z, the broad phase's radius the larger semi-axis."""
    scene = cl.Scene(dimension=2, thickness=T)
    axes = np.array([[2 * R, 0.5 * R], [R, R], [0.7 * R, 1.6 * R]])
    angles = np.array([0.3, -2.0, 4.0])
    k = scene.add_ellipses([(0.0, 0.0), (0.01, 0.0), (0.02, 0.0)], axes, GLASS, angles=angles)
    assert k.tolist() == [0, 1, 2]
    model, state = scene.finalize()
    for (a, b), m, inertia in zip(axes, model.mass, model.inertia):
        h = 2e-3 * max(a, b)
        x, y = np.meshgrid(np.arange(-a, a, h) + h / 2, np.arange(-b, b, h) + h / 2)
        inside = (x / a) ** 2 + (y / b) ** 2 <= 1.0
        dm = GLASS.density * T * h * h
        assert abs(m / (dm * inside.sum()) - 1) < 2e-3
        assert abs(inertia / (dm * ((x**2 + y**2)[inside]).sum()) - 1) < 2e-3
    np.testing.assert_array_equal(model.shape_kind, [ELLIPSE] * 3)
    np.testing.assert_array_equal(model.radius, axes.max(axis=1))
    np.testing.assert_allclose(model.principal_inertia, np.repeat(model.inertia[:, None], 3, axis=1), rtol=0)
    np.testing.assert_allclose(state.orientations, np.column_stack(
        [np.cos(angles / 2), 0 * angles, 0 * angles, np.sin(angles / 2)]), rtol=0, atol=1e-16)
    assert np.all(state.positions[:, 2] == 0.0)


# ------------------------------------------------------------------------------ circles = disks
def _three_bodies(as_ellipses):
    scene = cl.Scene(dimension=2, thickness=T)
    bodies = [((0.0, 0.003), R, (0.3, 0.0), 40.0), ((0.0025, 0.0036), 0.8 * R, (-0.1, 0.0), -10.0),
              ((0.006, 0.0012), 1.2 * R, (0.05, -0.1), 80.0)]
    for k, (p, r, v, w) in enumerate(bodies):
        if as_ellipses:
            scene.add_ellipse(p, (r, r), GLASS, angle=0.7 * k - 0.5, velocity=v, angular_velocity=w)
        else:
            scene.add_disk(p, r, GLASS, velocity=v, angular_velocity=w)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    scene.add_wall((0.009, 0.0), (-1.0, 0.0), GLASS)
    return scene


def test_circles_given_as_ellipses_reproduce_the_disks_trajectory():
    """An oblique spinning impact of two bodies and a third sliding and bouncing on the floor into
    a side wall (friction and rolling resistance acting), once as disks (the sphere fast path) and
    once as ellipses with a = b = r at arbitrary angles (the common-normal solver): positions,
    velocities and spins agree to round-off at every sample, and so does the energy."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=0.05)
    runs = []
    for as_ellipses in (False, True):
        sim = cl.Simulation(_three_bodies(as_ellipses), model, dt=2e-6)
        rec = sim.record("n_contacts", every=10)
        samples = []
        for _ in range(20):
            sim.run(steps=500)
            samples.append((sim.positions, sim.velocities, sim.angular_velocities))
        runs.append((samples, sim.energy(), rec["n_contacts"]))
    (disks, e_disks, c_disks), (ellipses, e_ellipses, c_ellipses) = runs
    assert c_disks.max() >= 2 and np.array_equal(c_disks, c_ellipses)   # the bodies did meet
    for (x0, v0, w0), (x1, v1, w1) in zip(disks, ellipses):
        np.testing.assert_allclose(x1, x0, rtol=0, atol=1e-14)          # m (positions ~ 5e-3 m)
        np.testing.assert_allclose(v1, v0, rtol=0, atol=1e-13)          # m/s (~ 0.3 m/s)
        np.testing.assert_allclose(w1, w0, rtol=0, atol=1e-11)          # rad/s (~ 80 rad/s)
    for key in ("kinetic", "rotational", "dissipated"):
        assert abs(e_ellipses[key] - e_disks[key]) <= 1e-12 * e_disks["dissipated"]


# ------------------------------------------------------------------------------ contact geometry
def _random_pairs(rng, count):
    """Pairs (A, B, B is a disk) overlapping by 0.1-1.5 % of the smaller semi-axis, far from each other."""
    pairs = []
    for k in range(count):
        disk = k % 4 == 3
        a_axes = rng.uniform(0.4, 2.0, 2) * R
        b_axes = np.full(2, rng.uniform(0.4, 2.0) * R) if disk else rng.uniform(0.4, 2.0, 2) * R
        A = (np.array([0.02 * k, 0.0]), rng.uniform(-math.pi, math.pi), a_axes)
        u = rng.normal(size=2)
        u /= np.linalg.norm(u)
        theta_b = 0.0 if disk else rng.uniform(-math.pi, math.pi)
        B0 = (np.zeros(2), theta_b, b_axes)
        dist = touching_distance(A, B0, u) - rng.uniform(1e-3, 1.5e-2) * min(a_axes.min(), b_axes.min())
        pairs.append((A, (A[0] + dist * u, theta_b, b_axes), disk))
    return pairs


def test_overlapping_pairs_against_the_separating_axis_on_sampled_boundaries():
    """24 random overlapping pairs (ellipse-ellipse, and ellipse-disk with the disk added second or
    first), all in one scene at rest: the engine's overlap, normal, contact point and the radius the
    Hertz law used, against the separating-axis reference (module docstring)."""
    rng = np.random.default_rng(5)
    pairs = _random_pairs(rng, 24)
    scene = cl.Scene(dimension=2, gravity=(0.0, 0.0), thickness=T)
    for k, (A, B, disk) in enumerate(pairs):
        if disk and k % 8 == 7:          # the disk first: the pair's body i is the disk
            pairs[k] = (B, A, disk)
            scene.add_disk(B[0], B[2][0], GLASS)
            scene.add_ellipse(A[0], A[2], GLASS, angle=A[1])
        else:
            scene.add_ellipse(A[0], A[2], GLASS, angle=A[1])
            if disk:
                scene.add_disk(B[0], B[2][0], GLASS)
            else:
                scene.add_ellipse(B[0], B[2], GLASS, angle=B[1])
    sim = cl.Simulation(scene, HERTZ, dt=1e-6)
    c = sim.contacts()
    assert len(c["i"]) == len(pairs)
    assert np.all(c["j"] == c["i"] + 1) and np.all(c["i"] % 2 == 0)
    order = np.argsort(c["i"])
    for row, (A, B, _) in zip(order, pairs):
        sep, normal, pa, pb, rho_a, rho_b = separating_axis(A, B)
        size = max(A[2].max(), B[2].max())
        assert sep < 0.0
        assert abs(c["overlap"][row] + sep) <= 1e-12 * size
        assert np.linalg.norm(c["normal"][row, :2] - normal) < 1e-7
        assert np.linalg.norm(c["contact_point"][row, :2] - 0.5 * (pa + pb)) < 1e-7 * size
        radius = rho_a * rho_b / (rho_a + rho_b)
        assert abs(hertz_radius(c["normal_force"][row], c["overlap"][row]) / radius - 1) < 1e-6
        assert c["normal"][row, 2] == 0.0 and c["contact_point"][row, 2] == 0.0


def test_separated_pairs_distance_and_early_exit():
    """Pairs 0.1-30 % of the smaller semi-axis apart: as the engine calls it (interaction range 0)
    the solver stops at once with a positive lower bound of the distance, and the engine has no
    contact; asked for the exact value, the distance of the separating-axis reference, which the
    closest pair of 20,000 sampled points of each boundary bounds from above."""
    rng = np.random.default_rng(6)
    pairs = []
    for A, B, _ in _random_pairs(rng, 12):
        u = (B[0] - A[0]) / np.linalg.norm(B[0] - A[0])
        gap = rng.uniform(1e-3, 0.3) * min(A[2].min(), B[2].min())
        pairs.append((A, (B[0] + (0.05 * min(A[2].min(), B[2].min()) + gap) * u, B[1], B[2])))
    scene = cl.Scene(dimension=2, gravity=(0.0, 0.0), thickness=T)
    for A, B in pairs:
        scene.add_ellipse(A[0], A[2], GLASS, angle=A[1])
        scene.add_ellipse(B[0], B[2], GLASS, angle=B[1])
    sim = cl.Simulation(scene, HERTZ, dt=1e-6)
    assert sim.n_contacts() == 0
    t = np.linspace(0.0, 2.0 * math.pi, 20000, endpoint=False)
    for A, B in pairs:
        sep = separating_axis(A, B)[0]
        assert sep > 0.0
        args = (tuple(A[0]), A[1], tuple(A[2]), tuple(B[0]), B[1], tuple(B[2]), (0.0, 0.0))
        lower = ellipse_pair_2d(*args, 0.0)
        assert lower[7] == STATUS_APART and 0.0 < lower[0] <= sep + 1e-15
        exact = ellipse_pair_2d(*args, math.inf)
        assert abs(exact[0] - sep) <= 1e-12 * max(A[2].max(), B[2].max())
        sampled, _ = cKDTree(boundary(*B, t)).query(boundary(*A, t))
        assert sep <= sampled.min() + 1e-15


def test_ellipses_on_a_line_wall_against_the_sampled_lowest_point():
    """Ellipses at random angles pressed into a tilted line wall: overlap, contact point (midway
    between the lowest point and its foot on the line) and the radius the Hertz law used (the
    curvature of the sampled curve there; the wall is flat)."""
    rng = np.random.default_rng(7)
    n_wall = np.array([math.sin(0.2), math.cos(0.2)])
    tangent = np.array([n_wall[1], -n_wall[0]])
    scene = cl.Scene(dimension=2, gravity=(0.0, 0.0), thickness=T)
    bodies = []
    for k in range(8):
        A = (np.zeros(2), rng.uniform(-math.pi, math.pi), rng.uniform(0.4, 2.0, 2) * R)
        low, _ = lowest_point(A, n_wall)
        depth = rng.uniform(1e-3, 1.5e-2) * A[2].min()
        A = (0.01 * k * tangent - (low @ n_wall + depth) * n_wall, A[1], A[2])
        bodies.append(A)
        scene.add_ellipse(A[0], A[2], GLASS, angle=A[1])
    scene.add_wall((0.0, 0.0), n_wall, GLASS)
    sim = cl.Simulation(scene, HERTZ, dt=1e-6)
    c = sim.contacts()
    assert len(c["i"]) == len(bodies) and np.all(c["wall"] == 0)
    for row, k in enumerate(c["i"]):
        A = bodies[k]
        low, t_low = lowest_point(A, n_wall)
        overlap = -(low @ n_wall)
        assert abs(c["overlap"][row] - overlap) <= 1e-12 * A[2].max()
        np.testing.assert_array_equal(c["normal"][row, :2], -n_wall)
        assert np.linalg.norm(c["contact_point"][row, :2] - (low + 0.5 * overlap * n_wall)) < 1e-7 * A[2].max()
        rho = curvature_radius(A[2], t_low)
        assert abs(hertz_radius(c["normal_force"][row], c["overlap"][row]) / rho - 1) < 1e-6


# ------------------------------------------------------------------------------ statics
def test_an_ellipse_lying_on_a_line_wall_carries_its_weight_on_its_flat_side():
    """At rest on the floor an ellipse's weight m g = rho pi a b t g goes into the wall, and it
    sinks by Hertz's static overlap for the radius of curvature of its flat side, a^2 / b (a disk
    of radius b would sink 1.6 times deeper)."""
    a, b = 2 * R, R
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_ellipse((0.0, b), (a, b), GLASS)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    sim = cl.Simulation(scene, HERTZ, local_damping=0.3)
    sim.run(duration=0.05)
    weight = GLASS.density * math.pi * a * b * T * G
    np.testing.assert_allclose(sim.wall_forces()[0], [0.0, -weight, 0.0], rtol=1e-6, atol=1e-12 * weight)
    e_star, _ = effective_moduli(GLASS, GLASS)
    sink = (weight / (4.0 / 3.0 * e_star * math.sqrt(a * a / b))) ** (2.0 / 3.0)
    assert abs((b - sim.positions[0, 1]) / sink - 1) < 1e-4


def test_a_tilted_ellipse_released_on_the_floor_falls_onto_its_flat_side():
    """Released touching the floor with its long axis 60 degrees up, an ellipse tips clockwise (its
    centre of mass is right of the contact point, so its weight turns it down), rocks, and comes to
    rest on its flat side: the angle ends at 0 and the centre at the height b less the static
    overlap of the flat side (as in the test above), once the rocking has decayed (strong local
    damping: 1.2 s leaves 1e-13 rad)."""
    a, b = 2 * R, R
    theta = math.radians(60.0)
    height = math.sqrt((a * math.sin(theta)) ** 2 + (b * math.cos(theta)) ** 2)   # support along y
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_ellipse((0.0, height), (a, b), GLASS, angle=theta)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5), local_damping=0.7)
    rec = sim.record("orientation", sphere=0, every=20)
    sim.run(duration=1.2)
    angle = 2.0 * np.arctan2(rec["orientation"][:, 3], rec["orientation"][:, 0])
    assert angle[0] == pytest.approx(theta, abs=1e-15)
    assert np.all(np.diff(angle[:50]) < 0.0)   # tips clockwise, down
    assert abs(angle[-1]) < 1e-9
    weight = GLASS.density * math.pi * a * b * T * G
    e_star, _ = effective_moduli(GLASS, GLASS)
    sink = (weight / (4.0 / 3.0 * e_star * math.sqrt(a * a / b))) ** (2.0 / 3.0)
    assert abs((b - sim.positions[0, 1]) / sink - 1) < 1e-9
    assert np.all(sim.orientations[:, 1:3] == 0.0)


# ------------------------------------------------------------------------------ a pile
def ellipse_pile(steps, dt=1e-5, seed=1, model=None):
    """30 ellipses (aspect ratios 1-2.5, random angles, spins and velocities) in a box of three line
    walls, settling under gravity."""
    rng = np.random.default_rng(seed)
    scene = cl.Scene(dimension=2, thickness=T)
    pitch = 2.9 * R
    pos = np.array([(x, y) for y in range(5) for x in range(6)], dtype=float) * pitch + 1.5 * R
    n = len(pos)
    a = np.full(n, 1.2 * R)
    scene.add_ellipses(pos, np.column_stack([a, a / rng.uniform(1.0, 2.5, n)]), GLASS,
                       angles=rng.uniform(-math.pi, math.pi, n), velocities=rng.normal(0.0, 0.05, (n, 2)),
                       angular_velocities=rng.normal(0.0, 30.0, n))
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    scene.add_wall((0.0, 0.0), (1.0, 0.0), GLASS)
    scene.add_wall((6 * pitch + R, 0.0), (-1.0, 0.0), GLASS)
    model = model or cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1)
    sim = cl.Simulation(scene, model, dt=dt)
    sim.run(steps=steps)
    return sim


def test_a_settling_pile_of_ellipses_closes_its_energy_balance_and_stays_planar():
    """The balance closes within 1 % of the dissipated energy (0.4 % at this step; 1.5 % at twice
    the step: second order), the pile has come to rest, and the state is planar bit for bit: no z
    position, velocity or force, spins and torques along z only, orientations about z only."""
    sim = ellipse_pile(steps=8000)
    e = sim.energy()
    assert sim.n_contacts() > 30
    assert e["kinetic"] < 1e-2 * e["dissipated"]
    assert e["dissipated"] > 0.0 and abs(e["balance_error"]) < 1e-2 * e["dissipated"]
    for arr in (sim.positions, sim.velocities, sim.forces):
        assert np.all(arr[:, 2] == 0.0)
    for arr in (sim.angular_velocities, sim.torques):
        assert np.all(arr[:, :2] == 0.0)
    assert np.all(sim.orientations[:, 1:3] == 0.0)
    c = sim.contacts()
    assert np.all(c["normal"][:, 2] == 0.0) and np.all(c["contact_point"][:, 2] == 0.0)


def test_an_ellipse_checkpoint_resumes_bit_for_bit(tmp_path):
    """The contact history (with the pairs' last normals, the solver's warm start) is saved: a resumed
    run equals the uninterrupted one bit for bit; a sensor records an ellipse pair's overlap."""
    sim = ellipse_pile(steps=3000, model=HERTZ)
    pair = sim.contacts()
    body = pair["j"] >= 0
    i, j = int(pair["i"][body][0]), int(pair["j"][body][0])
    rec = sim.record("overlap", contact=(i, j))
    path = sim.save_checkpoint(tmp_path / "c.npz")
    sim.run(steps=400)
    again = cl.Simulation.load_checkpoint(path)
    assert again.dimension == 2 and np.array_equal(again.model.shape_kind, sim.model.shape_kind)
    again.run(steps=400)
    for name in ("positions", "velocities", "angular_velocities", "orientations"):
        np.testing.assert_array_equal(getattr(again, name), getattr(sim, name))
    assert len(rec["overlap"]) == 401    # the start and every step
    assert rec["overlap"][0] == pair["overlap"][body][0] > 0.0
    assert rec["overlap"][-1] == sim.contact(i, j)["overlap"]


def test_vtk_output_draws_every_disk_and_ellipse_as_a_polygon_in_the_plane(tmp_path):
    """shapes_*.vtp holds a fan of OUTLINE_SIDES triangles per body; the outline points lie on each
    body's ellipse (or circle) where the body is now, at z = 0."""
    scene = cl.Scene(dimension=2, thickness=T)
    scene.add_ellipse((0.0, 1.5 * R), (2 * R, R), GLASS, angle=0.4, angular_velocity=20.0)
    scene.add_disk((0.005, 1.1 * R), 0.9 * R, GLASS)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    sim = cl.Simulation(scene, HERTZ)
    sim.add_reporter(cl.io.VTKReporter(tmp_path, every=50))
    sim.run(steps=100)
    sim.close()
    attrs, arrays = read_vtp(tmp_path / "shapes_000002.vtp")
    assert int(attrs["NumberOfPolys"]) == 2 * OUTLINE_SIDES
    pts = arrays[("Points", "Points")]
    assert np.all(pts[:, 2] == 0.0)
    per = OUTLINE_SIDES + 1
    q = sim.orientations
    for k, axes in enumerate([(2 * R, R), (0.9 * R, 0.9 * R)]):
        local = (pts[k * per + 1: (k + 1) * per, :2] - sim.positions[k, :2]) @ rot(2 * math.atan2(q[k, 3], q[k, 0]))
        np.testing.assert_allclose(((local / np.array(axes)) ** 2).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(np.unique(arrays[("CellData", "body")]), [0, 1])
    vtk = pytest.importorskip("vtk")
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(tmp_path / "shapes_000002.vtp"))
    reader.Update()
    assert reader.GetOutput().GetNumberOfPolys() == 2 * OUTLINE_SIDES


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("make, message", [
    (lambda: cl.Scene().add_ellipse((0, 0), (R, R), GLASS), r"add_ellipse needs a 2-D scene"),
    (lambda: cl.Scene().add_ellipses([(0, 0)], (R, R), GLASS), r"add_ellipses needs a 2-D scene"),
    (lambda: cl.Scene(dimension=2).add_ellipsoid((0, 0, 0), (R, R, R), GLASS),
     r"add_ellipsoid adds a 3-D body; a 2-D scene .* ellipses \(add_ellipse, add_ellipses\)"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (-R, R), GLASS),
     r"semi_axes must be 2 finite lengths > 0 m \(a, b\), got \[-0.001, 0.001\]"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, float("nan")), GLASS),
     r"semi_axes must be 2 finite lengths > 0 m \(a, b\), got \[0.001, nan\]"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, R, R), GLASS),
     r"semi_axes must be 2 lengths \(a, b\) in m in a 2-D scene, got shape \(3,\)"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0, 0), (R, R), GLASS),
     r"position must be 2 numbers \(x, y\) in a 2-D scene, got shape \(3,\)"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, R), GLASS, angular_velocity=(0, 0, 1)),
     r"angular_velocity must be a number, got \(0, 0, 1\) \(tuple\)"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, R), GLASS, angle=float("inf")),
     r"angle must be finite, got inf"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, R), GLASS, velocity=(1, 0, 0)),
     r"velocity must be 2 numbers \(x, y\)"),
    (lambda: cl.Scene(dimension=2).add_ellipse((0, 0), (R, R), "glass"), r"material must be a contactlab.Material"),
    (lambda: cl.Scene(dimension=2).add_ellipses(np.zeros((3, 2)), np.zeros((3, 3)) + R, GLASS),
     r"semi_axes must have shape \(3, 2\) in a 2-D scene, got \(3, 3\)"),
    (lambda: cl.Scene(dimension=2).add_ellipses(np.zeros((3, 2)), [(R, R), (R, 0.0), (R, R)], GLASS),
     r"semi_axes\[1\] must be 2 finite lengths > 0 m \(a, b\), got \[0.001, 0.0\]"),
    (lambda: cl.Scene(dimension=2).add_ellipses(np.zeros((3, 2)), (R, R), GLASS, angles=[0.0, 1.0]),
     r"angles must have shape \(3,\) in a 2-D scene"),
    (lambda: cl.Scene(dimension=2).add_ellipses(np.zeros((2, 2)), (R, R), GLASS, angles=[0.0, float("nan")]),
     r"angles\[1\] must be finite, got nan"),
    (lambda: cl.Scene(dimension=2).finalize(), r"the 2-D scene has no bodies; add some with add_disk"),
])
def test_ellipse_input_errors_name_the_value(make, message):
    with pytest.raises(InputError, match=message):
        make()


def test_a_failed_ellipse_addition_adds_nothing():
    scene = cl.Scene(dimension=2)
    with pytest.raises(InputError):
        scene.add_ellipses([(0.0, 0.0), (1.0, 0.0)], [(R, R), (R, -R)], GLASS)
    assert scene.n_bodies == 0 and scene.materials == ()


# ------------------------------------------------------------------------------ scene files
SCENE_2D = """
[simulation]
dimension = 2
thickness = 2.0e-3
gravity = [0.0, -9.81]
dt = 1.0e-5

[materials.glass]
density = 2500.0
young = 1.0e7
poisson = 0.3

[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.5

[[disk]]
position = [0.0, 0.0011]
radius = 1.0e-3
angular_velocity = 5.0
material = "glass"

[[disks]]
positions = [[0.003, 0.0011], [0.006, 0.0011]]
radii = [1.0e-3, 0.8e-3]
material = "glass"

[[ellipse]]
position = [0.0, 0.004]
semi_axes = [1.5e-3, 0.7e-3]
angle = 0.3
velocity = [0.05, 0.0]
material = "glass"

[[ellipses]]
positions = [[0.003, 0.004], [0.006, 0.004]]
semi_axes = [[1.2e-3, 0.6e-3], [1.0e-3, 1.0e-3]]
angles = [1.0, -0.5]
angular_velocities = [0.0, -10.0]
material = "glass"

[[wall]]
point = [0.0, 0.0]
normal = [0.0, 1.0]
material = "glass"
"""


def test_a_two_d_scene_file_runs_as_the_same_scene_built_in_python(tmp_path):
    """dimension = 2 with [[disk]], [[disks]], [[ellipse]], [[ellipses]] and a line [[wall]]: the same
    bodies, numbered as documented, and the same run bit for bit as the scene built in Python."""
    path = tmp_path / "scene.toml"
    path.write_text(SCENE_2D)
    from_file = load_scene_file(path).build_simulation()
    scene = cl.Scene(dimension=2, gravity=(0.0, -9.81), thickness=2e-3)
    scene.add_disk((0.0, 0.0011), 1e-3, GLASS, angular_velocity=5.0)
    scene.add_disks([(0.003, 0.0011), (0.006, 0.0011)], [1e-3, 0.8e-3], GLASS)
    scene.add_ellipse((0.0, 0.004), (1.5e-3, 0.7e-3), GLASS, angle=0.3, velocity=(0.05, 0.0))
    scene.add_ellipses([(0.003, 0.004), (0.006, 0.004)], [(1.2e-3, 0.6e-3), (1e-3, 1e-3)], GLASS, angles=[1.0, -0.5],
                       angular_velocities=[0.0, -10.0])
    scene.add_wall((0.0, 0.0), (0.0, 1.0), GLASS)
    in_python = cl.Simulation(scene, HERTZ, dt=1e-5)
    assert from_file.dimension == 2 and from_file.model.thickness == 2e-3
    np.testing.assert_array_equal(from_file.model.shape_kind, in_python.model.shape_kind)
    for sim in (from_file, in_python):
        sim.run(steps=10000)      # landed: at 5000 steps the small disk can be in the air between two bounces
    c = from_file.contacts()
    assert (c["j"] >= 0).sum() >= 2 and (c["wall"] >= 0).sum() >= 3     # bodies on bodies and on the floor
    for name in ("positions", "velocities", "angular_velocities", "orientations"):
        np.testing.assert_array_equal(getattr(from_file, name), getattr(in_python, name))


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("[[disk]]", "[[sphere]]"), r"\[sphere #1\] add_sphere adds a 3-D body"),
    (lambda t: t.split("[[wall]]")[0].replace("dimension = 2\n", "").replace("thickness = 2.0e-3\n", "").replace(
        "gravity = [0.0, -9.81]", "gravity = [0.0, 0.0, -9.81]"), r"\[disk #1\] add_disk needs a 2-D scene"),
    (lambda t: t.replace("gravity = [0.0, -9.81]", "gravity = [0.0, 0.0, -9.81]"),
     r"\[simulation\] gravity must be 2 numbers \(x, y\) in a 2-D scene"),
    (lambda t: t.replace("semi_axes = [1.5e-3, 0.7e-3]", "semi_axes = [1.5e-3, -0.7e-3]"),
     r"\[ellipse #1\] semi_axes must be 2 finite lengths > 0 m"),
    (lambda t: t.replace("angle = 0.3", "angel = 0.3"), r"\[ellipse #1\] unknown key 'angel'"),
    (lambda t: t.replace("dimension = 2", "dimension = 1"), r"\[simulation\] dimension must satisfy 2 <= dimension"),
])
def test_two_d_scene_file_errors_name_the_table(tmp_path, edit, message):
    path = tmp_path / "scene.toml"
    path.write_text(edit(SCENE_2D))
    with pytest.raises(SceneFileError, match=message):
        load_scene_file(path)
