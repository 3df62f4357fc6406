"""Non-spherical rigid bodies in the engine: one index space, full inertia tensors, ellipsoids,
convex polyhedra (GJK/EPA) and the energy-conserving contacts.

References: the sphere-sphere contact (two spheres given as ellipsoids), the conservation laws of
a free rigid body (angular momentum exactly, energy to the integrator's order), statics (weight
carried by the contact), the closed form of a box resting on a plane, and energy conservation of
elastic impacts for the energy-conserving contacts (ECC) of the notes (spec 004).
"""
import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.errors import InputError

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
ELASTIC = cl.models.HertzMindlin(restitution=1.0, friction=0.0)


def _quat(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def test_bodies_of_every_shape_share_one_index_space():
    """Indices in the order added; positions, velocities, orientations cover all bodies; masses
    and principal moments from the shapes (closed forms of a box)."""
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=GLASS)
    b = scene.add_box(position=(0.01, 0, 0), half_extents=(1e-3, 1e-3, 2e-3), material=GLASS,
                      orientation=_quat((0, 0, 1), 0.3), velocity=(0.1, 0, 0))
    c = scene.add_spheres(positions=[(0.03, 0, 0), (0.04, 0, 0)], radii=1e-3, material=GLASS)
    assert (a, b, list(c)) == (0, 1, [2, 3])
    sim = cl.Simulation(scene, model=ELASTIC, dt=1e-6)
    assert sim.positions.shape == (4, 3) and sim.orientations.shape == (4, 4)
    np.testing.assert_allclose(sim.velocities[1], [0.1, 0, 0])
    m = sim.model
    np.testing.assert_allclose(m.mass[1], GLASS.density * 8 * 1e-3 * 1e-3 * 2e-3)
    # a box's principal moments m (b^2 + c^2) / 3 with the half-extents; the body frame is the
    # principal frame (here the box's own axes, in order of increasing moment)
    h = np.array([1e-3, 1e-3, 2e-3])
    expect = m.mass[1] / 3 * np.array([h[1] ** 2 + h[2] ** 2, h[0] ** 2 + h[2] ** 2, h[0] ** 2 + h[1] ** 2])
    np.testing.assert_allclose(np.sort(m.principal_inertia[1]), np.sort(expect), rtol=1e-12)
    r = sim.rotation_matrices()[1]
    long_axis = r[:, np.argmin(m.principal_inertia[1])]  # the smallest moment: about the long (z) side
    np.testing.assert_allclose(np.abs(long_axis), [0, 0, 1], atol=1e-12)
    sim.run(steps=10)
    np.testing.assert_allclose(sim.positions[1], [0.01 + 0.1 * sim.time, 0, 0], atol=1e-15)


def test_torque_free_rigid_body_conserves_angular_momentum_and_energy():
    """An asymmetric ellipsoid spun near its intermediate axis tumbles: its angular momentum is
    conserved to round-off, its kinetic energy to 1e-6 (second-order integrator), and its angular
    velocity in the body frame follows Euler's equations (reference: scipy's solve_ivp)."""
    from scipy.integrate import solve_ivp

    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_ellipsoid(position=(0, 0, 0), semi_axes=(3e-3, 2e-3, 1e-3), material=GLASS,
                        angular_velocity=(2.0, 50.0, 3.0))
    scene.add_sphere(position=(1.0, 0, 0), radius=1e-3, material=GLASS)  # far away
    sim = cl.Simulation(scene, model=ELASTIC, dt=2e-5)
    L0 = sim.angular_momentum()
    e0 = sim.energy()["rotational"]
    inertia = sim.model.principal_inertia[0]
    w_body0 = sim.rotation_matrices()[0].T @ sim.angular_velocities[0]
    sim.run(steps=5000)  # 0.1 s
    np.testing.assert_allclose(sim.angular_momentum(), L0, rtol=0, atol=1e-10 * np.linalg.norm(L0))
    assert abs(sim.energy()["rotational"] - e0) < 1e-6 * e0

    def euler(t, w):
        i1, i2, i3 = inertia
        return [(i2 - i3) / i1 * w[1] * w[2], (i3 - i1) / i2 * w[2] * w[0], (i1 - i2) / i3 * w[0] * w[1]]

    ref = solve_ivp(euler, (0.0, sim.time), w_body0, rtol=1e-11, atol=1e-9).y[:, -1]
    w_body = sim.rotation_matrices()[0].T @ sim.angular_velocities[0]
    assert np.linalg.norm(ref - w_body0) > 10.0  # it tumbled: the spin moved to other axes
    np.testing.assert_allclose(w_body, ref, atol=1e-3 * np.linalg.norm(w_body0))


def _pair(kind, model, velocity, dt=None, duration=2e-3, friction_spin=(0, 0, 0)):
    scene = cl.Scene(gravity=(0, 0, 0))
    r = 1e-3
    for k, (x, v) in enumerate((((0, 0, 0), velocity), ((2.05e-3, 3e-4, 1e-4), (0, 0, 0)))):
        if kind == "sphere":
            scene.add_sphere(position=x, radius=r, material=GLASS, velocity=v, angular_velocity=friction_spin)
        else:
            scene.add_ellipsoid(position=x, semi_axes=(r, r, r), material=GLASS, velocity=v,
                                angular_velocity=friction_spin, orientation=_quat((1, 2, 3), 0.7 * k))
    sim = cl.Simulation(scene, model=model, dt=dt)
    rec = sim.record("overlap", "normal_force", contact=(0, 1))
    sim.run(duration=duration)
    return sim, rec


def test_spheres_given_as_ellipsoids_reproduce_the_sphere_contact():
    """An oblique frictional impact of two spheres and of the same two spheres given as ellipsoids
    with equal axes: same overlaps, forces, velocities and spins (reference: the sphere-sphere
    narrow phase)."""
    model = cl.models.HertzMindlin(restitution=0.6, friction=0.4)
    a, ra = _pair("sphere", model, (0.3, 0.0, 0.0), dt=2e-7, friction_spin=(0, 0, 40.0))
    b, rb = _pair("ellipsoid", model, (0.3, 0.0, 0.0), dt=2e-7, friction_spin=(0, 0, 40.0))
    assert ra["overlap"].max() > 1e-6
    np.testing.assert_allclose(rb["overlap"], ra["overlap"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(rb["normal_force"], ra["normal_force"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.velocities, a.velocities, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.angular_velocities, a.angular_velocities, rtol=1e-9, atol=1e-9)


def test_ellipsoid_rests_on_a_wall_on_its_tip():
    """A prolate ellipsoid standing on its long axis on a plane settles with its weight carried by
    the contact and its centre a semi-axis above the plane (minus the Hertz overlap at the tip's
    radius of curvature b^2/a: the closed form F = 4/3 E* sqrt(R) d^1.5)."""
    a, b = 2e-3, 1e-3
    scene = cl.Scene()
    scene.add_ellipsoid(position=(0, 0, a * 1.001), semi_axes=(b, b, a), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(duration=0.05)
    weight = sim.model.mass[0] * 9.81
    np.testing.assert_allclose(sim.wall_forces()[0, 2], -weight, rtol=1e-4)
    e_star = 1.0 / (2 * (1 - GLASS.poisson**2) / GLASS.young)
    radius = b * b / a
    delta = (weight / (4 / 3 * e_star * math.sqrt(radius))) ** (2 / 3)
    np.testing.assert_allclose(sim.positions[0, 2], a - delta, rtol=0, atol=0.02 * delta)


def _cubes(seed, model, shape_contact="minkowski"):
    """Two cubes (10 mm) at random orientations thrown at each other off-centre at 0.8 m/s, no
    gravity, run (dt = 2 us, some 500 steps per impact) until they have met and parted."""
    rng = np.random.default_rng(seed)
    scene = cl.Scene(gravity=(0, 0, 0))
    for k, x in enumerate(((0.0, 0.0, 0.0), (0.0185, 0.003, -0.002))):
        q = rng.normal(size=4)
        scene.add_box(position=x, half_extents=(5e-3, 5e-3, 5e-3), material=GLASS, orientation=q / np.linalg.norm(q),
                      velocity=(0.4 if k == 0 else -0.4, 0.0, 0.0), angular_velocity=rng.normal(scale=5.0, size=3))
    sim = cl.Simulation(scene, model=model, shape_contact=shape_contact, dt=2e-6)
    e0 = sim.energy()["total"]
    rec = sim.record("n_contacts")
    for _ in range(200):
        sim.run(steps=100)
        if max(rec["n_contacts"]) > 0 and sim.n_contacts() == 0:
            break
    return sim, e0, max(rec["n_contacts"]) > 0


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_elastic_impact_of_two_cubes_conserves_energy_with_the_minkowski_overlap(seed):
    """ECC (spec 004): an elastic law of the Minkowski overlap (EPA) is a potential, so two cubes at
    random orientations leave an elastic, frictionless impact with the energy they brought (within
    0.5 %), however they meet (vertex, edge or face first)."""
    sim, e0, met = _cubes(seed, ELASTIC)
    assert met and sim.n_contacts() == 0  # they met and parted
    assert abs(sim.energy()["total"] - e0) < 5e-3 * e0


def test_common_plane_contact_point_drifts_where_the_minkowski_contact_does_not():
    """The same impacts with the force at the centroid of the vertices past the common plane (a
    common-plane contact point): the energy after the impacts drifts by more than 1 % in at least
    one of them, as the notes state, while the Minkowski ECC stays within 0.5 % in all."""
    drift = []
    for seed in (1, 2, 3, 4):
        sim, e0, _ = _cubes(seed, ELASTIC, shape_contact="common_plane")
        drift.append(abs(sim.energy()["total"] - e0) / e0)
    assert max(drift) > 0.01


@pytest.mark.parametrize("seed", [1, 2])
def test_elastic_impact_of_two_cubes_conserves_energy_with_the_contact_volume(seed):
    """The contact-volume ECC (w = k_v V_c, spec 004): elastic cube impacts conserve energy within
    0.5 %."""
    sim, e0, met = _cubes(seed, cl.models.VolumeContact(volume_stiffness=2e8), shape_contact="volume")
    assert met and sim.n_contacts() == 0
    assert abs(sim.energy()["total"] - e0) < 5e-3 * e0


def test_box_settles_flat_on_a_wall():
    """A box dropped tilted onto a plane comes to rest on a face: its centre at the half-height
    above the plane (less the contact's overlap) and the wall carrying its weight (statics).  (It
    may keep spinning about the vertical: one contact point at the face's centre of pressure has
    no lever against a spin about the normal, unless the law has twisting resistance.)"""
    scene = cl.Scene()
    h = np.array([2e-3, 1.5e-3, 1e-3])
    scene.add_box(position=(0, 0, 4e-3), half_extents=h, material=GLASS, orientation=_quat((1, 1, 0), 0.4))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))
    sim.run(duration=0.3)
    weight = sim.model.mass[0] * 9.81
    np.testing.assert_allclose(sim.wall_forces()[0, 2], -weight, rtol=1e-3)
    heights = np.abs(sim.rotation_matrices()[0].T @ np.array([0, 0, 1.0]))  # which body axis is vertical
    resting = h[np.argmax(heights)]
    assert abs(sim.positions[0, 2] - resting) < 0.02 * resting


def test_volume_contact_rejects_shapes_it_cannot_measure():
    scene = cl.Scene()
    scene.add_ellipsoid(position=(0, 0, 0.01), semi_axes=(1e-3, 1e-3, 2e-3), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    with pytest.raises(InputError, match="volume"):
        cl.Simulation(scene, model=cl.models.VolumeContact(volume_stiffness=1e9))
    with pytest.raises(InputError, match="shape_contact"):
        cl.Simulation(scene, model=ELASTIC, shape_contact="nonsense")


def test_mixed_pairs_sphere_on_box_and_box_on_mesh_rest_in_equilibrium(tmp_path):
    """A sphere resting on a fixed box (sphere-polyhedron through GJK/EPA) and a box resting on a
    tessellated plate (polyhedron-triangle): each contact carries the weight above it (statics),
    and the VTK output has the bodies' surfaces and the mesh where they are."""
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy

    plate_v = np.array([[x, y, 0.0] for x in np.linspace(-0.01, 0.01, 5) for y in np.linspace(-0.01, 0.01, 5)])
    faces = []
    for a in range(4):
        for b in range(4):
            p = a * 5 + b
            faces += [[p, p + 5, p + 1], [p + 1, p + 5, p + 6]]
    scene = cl.Scene()
    box = scene.add_box(position=(0.004, 0.0, 1.0e-3), half_extents=(2e-3, 2e-3, 1e-3), material=GLASS)
    base = scene.add_box(position=(-0.004, 0.0, 0.01), half_extents=(2e-3, 2e-3, 2e-3), material=GLASS, fixed=True)
    ball = scene.add_sphere(position=(-0.004, 0.0, 0.013), radius=1e-3, material=GLASS)
    scene.add_mesh((plate_v, np.array(faces)), material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))
    sim.add_reporter(cl.io.VTKReporter(tmp_path, interval=0.05))
    sim.run(duration=0.2)
    g = 9.81
    c = sim.contacts()
    on_ball = (c["j"] == ball) | (c["i"] == ball)
    np.testing.assert_allclose(np.abs(c["normal_force"][on_ball]).sum(), sim.model.mass[ball] * g, rtol=2e-3)
    np.testing.assert_allclose(-sim.mesh_forces()[0, 2], sim.model.mass[box] * g, rtol=2e-3)
    assert abs(sim.positions[box, 2] - 1e-3) < 2e-5 and abs(sim.positions[ball, 2] - 0.013) < 3e-5
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(sorted(tmp_path.glob("shapes_*.vtp"))[-1]))
    reader.Update()
    out = reader.GetOutput()
    body = vtk_to_numpy(out.GetCellData().GetArray("body"))
    assert set(body.tolist()) == {box, base} and out.GetNumberOfCells() == 24  # two boxes of 12 triangles
    pts = vtk_to_numpy(out.GetPoints().GetData())
    assert np.isclose(pts[:, 2].min(), sim.positions[box, 2] - 1e-3, atol=1e-9)
    reader.SetFileName(str(sorted(tmp_path.glob("meshes_*.vtp"))[-1]))
    reader.Update()
    assert reader.GetOutput().GetNumberOfCells() == 32
