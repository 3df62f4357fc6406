"""Mesh walls: sphere-triangle contact without double counting, continuity across edges, loads.

References: a plane wall (sphere_wall, the closed-form half-space contact) for every flat-mesh
case; a tessellated plane is the same plane, so a sphere on it must see the same force, roll and
slide across its edges and vertices as on the wall, and a concave corner made of two tessellated
faces acts as two plane walls.
"""
import math

import numpy as np
import pytest

import contactlab as cl
from contactlab import diagnosis
from contactlab.errors import InputError

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3


def plane_mesh(n, size, z=0.0, jitter=0.0, seed=0):
    """A square of side 2 size at height z cut into 2 n^2 triangles (vertices optionally moved
    within the plane, so that edges and vertices lie everywhere)."""
    xs = np.linspace(-size, size, n + 1)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    V = np.stack([X.ravel(), Y.ravel(), np.full(X.size, z)], axis=1)
    if jitter:
        rng = np.random.default_rng(seed)
        inner = (np.abs(V[:, 0]) < size) & (np.abs(V[:, 1]) < size)
        V[inner, :2] += rng.uniform(-jitter, jitter, size=(inner.sum(), 2)) * (xs[1] - xs[0])
    F = []
    for a in range(n):
        for b in range(n):
            p = a * (n + 1) + b
            F += [[p, p + n + 1, p + 1], [p + 1, p + n + 1, p + n + 2]]
    return V, np.array(F)


def _run(floor, position, velocity=(0, 0, 0), angular_velocity=(0, 0, 0), friction=0.0, restitution=0.5,
         duration=0.02, gravity=(0.0, 0.0, -9.81), record=False, dt=None):
    scene = cl.Scene(gravity=gravity)
    scene.add_sphere(position=position, radius=R, material=GLASS, velocity=velocity, angular_velocity=angular_velocity)
    for f in floor:
        if f[0] == "wall":
            scene.add_wall(point=f[1], normal=f[2], material=GLASS)
        else:
            scene.add_mesh(f[1], material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=restitution, friction=friction), dt=dt)
    rec = sim.record("kinetic", "rotational", "gravitational", "elastic", "dissipated") if record else None
    sim.run(duration=duration)
    return sim, rec


def test_sphere_resting_on_a_many_triangle_mesh_feels_the_plane_wall_force():
    """Sphere settled on a 512-triangle plane vs on a plane wall: same position, one contact, same
    force (reference: the plane wall)."""
    start = (0.31 * R, 0.17 * R, 1.02 * R)
    wall, _ = _run([("wall", (0, 0, 0), (0, 0, 1))], start)
    mesh, _ = _run([("mesh", plane_mesh(16, 8 * R, jitter=0.3))], start)
    assert mesh.n_contacts() == 1
    np.testing.assert_allclose(mesh.positions, wall.positions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mesh.mesh_forces()[0], wall.wall_forces()[0], rtol=1e-9)
    weight = wall.model.mass[0] * 9.81
    assert abs(mesh.mesh_forces()[0, 2] + weight) < 1e-3 * weight  # at rest: the mesh carries the weight


def test_sliding_across_edges_and_vertices_keeps_the_kinetic_energy():
    """Frictionless, elastic (e = 1): a sphere resting on a jittered tessellated plane slides 20
    radii across edges and vertices; its kinetic energy stays within 0.1 % and its path is the one
    on a plane wall (reference)."""
    z0 = R - 2.2e-7  # near the static overlap
    start, v = (-6 * R, -5.3 * R, z0), (0.3, 0.26, 0.0)
    mesh, rec = _run([("mesh", plane_mesh(10, 8 * R, jitter=0.35, seed=3))], start, velocity=v, restitution=1.0,
                     duration=0.04, record=True)
    wall, _ = _run([("wall", (0, 0, 0), (0, 0, 1))], start, velocity=v, restitution=1.0, duration=0.04)
    ke = rec["kinetic"]
    ke0 = 0.5 * mesh.model.mass[0] * (v[0] ** 2 + v[1] ** 2)
    assert np.max(np.abs(ke - ke0)) < 1e-3 * ke0
    assert mesh.positions[0, 0] > 5 * R  # it crossed the mesh
    np.testing.assert_allclose(mesh.positions, wall.positions, atol=1e-9 * R * 1e3)


def test_rolling_with_friction_across_edges_matches_the_plane_wall():
    """A rolling sphere (friction 0.5) carries its tangential spring from triangle to triangle:
    velocities and spin after crossing many edges equal those on a plane wall (reference)."""
    start, v = (-5 * R, -4.1 * R, R - 2.2e-7), (0.25, 0.2, 0.0)
    w = (-v[1] / R, v[0] / R * 0.8, 0.0)  # not quite rolling: friction acts while it crosses
    mesh, _ = _run([("mesh", plane_mesh(8, 8 * R, jitter=0.3, seed=5))], start, velocity=v, angular_velocity=w,
                   friction=0.5, duration=0.03)
    wall, _ = _run([("wall", (0, 0, 0), (0, 0, 1))], start, velocity=v, angular_velocity=w, friction=0.5,
                   duration=0.03)
    np.testing.assert_allclose(mesh.velocities, wall.velocities, atol=1e-6)
    np.testing.assert_allclose(mesh.angular_velocities, wall.angular_velocities, atol=1e-6 / R)


def test_corner_of_two_tessellated_faces_gives_one_force_per_face():
    """A sphere pressed into the corner of a floor and a side face (each cut into many triangles)
    has exactly two contacts, equal to those of two plane walls (reference)."""
    floor_v, floor_f = plane_mesh(6, 4 * R)
    side_v = floor_v[:, [2, 1, 0]].copy()  # the plane x = 0
    side_v[:, 2] += 4 * R
    side_f = floor_f + len(floor_v)
    corner = (np.vstack([floor_v + [4 * R, 0, 0], side_v]), np.vstack([floor_f, side_f]))
    start = (1.0 * R, 0.13 * R, 1.0 * R)
    g = (-4.0, 0.0, -9.81)
    mesh, _ = _run([("mesh", corner)], start, gravity=g, duration=0.03)
    walls, _ = _run([("wall", (0, 0, 0), (0, 0, 1)), ("wall", (0, 0, 0), (1, 0, 0))], start, gravity=g, duration=0.03)
    assert mesh.n_contacts() == 2
    np.testing.assert_allclose(mesh.positions, walls.positions, atol=1e-12)
    np.testing.assert_allclose(mesh.mesh_forces()[0], walls.wall_forces().sum(axis=0), rtol=1e-8)
    c = mesh.contacts()
    normals = np.sort(np.abs(c["normal"]), axis=0)
    np.testing.assert_allclose(normals[-1], [1, 0, 1], atol=1e-9)


def test_stl_and_obj_files_load_and_moving_mesh_matches_a_moving_wall(tmp_path):
    """An STL and an OBJ of the same plate give the same triangles; a plate rising at 0.05 m/s
    lifts a sphere exactly like a plane wall rising at that speed (reference), and the load on it
    and its torque about its centre are reported."""
    import trimesh

    V, F = plane_mesh(4, 4 * R)
    for ext in ("stl", "obj"):
        trimesh.Trimesh(V, F, process=False).export(tmp_path / f"plate.{ext}")
    scene = cl.Scene()
    a = scene.add_mesh(tmp_path / "plate.stl", material=GLASS)
    b = scene.add_mesh(tmp_path / "plate.obj", material=GLASS, centre=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 5 * R), radius=R, material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    ta, tb = sim.mesh_triangles(a), sim.mesh_triangles(b)
    key = lambda t: np.sort(np.round(t.reshape(len(t), -1), 12), axis=0)  # noqa: E731
    np.testing.assert_allclose(key(ta), key(tb), atol=1e-15)

    start = (0.2 * R, 0.0, 1.0 * R)
    results = []
    for kind in ("wall", "mesh"):
        scene = cl.Scene()
        scene.add_sphere(position=start, radius=R, material=GLASS)
        if kind == "wall":
            scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS, velocity=(0, 0, 0.05))
        else:
            scene.add_mesh(tmp_path / "plate.stl", material=GLASS, velocity=(0, 0, 0.05), centre=(0, 0, 0))
        sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
        sim.run(duration=0.02)
        results.append(sim)
    wall, mesh = results
    np.testing.assert_allclose(mesh.positions, wall.positions, atol=1e-12)
    np.testing.assert_allclose(mesh.mesh_positions[0], [0, 0, 0.05 * mesh.time], atol=1e-12)
    np.testing.assert_allclose(mesh.mesh_forces()[0], wall.wall_forces()[0], rtol=1e-8)
    c = mesh.contacts()
    lever = c["contact_point"][0] - mesh.mesh_positions[0]
    np.testing.assert_allclose(mesh.mesh_torques()[0], np.cross(lever, mesh.mesh_forces()[0]), atol=1e-15)
    assert abs(mesh.energy()["balance_error"]) < 1e-3 * abs(mesh.energy()["boundary_work"])


def test_rotating_mesh_turns_its_triangles_about_its_centre():
    """A plate spun about z at 2 rad/s for 0.1 s: its triangles are the initial ones rotated by
    0.2 rad about the centre (reference: the rotation matrix)."""
    V, F = plane_mesh(3, 4 * R)
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 0.1), radius=R, material=GLASS)
    scene.add_mesh((V, F), material=GLASS, angular_velocity=(0, 0, 2.0), centre=(R, 0, 0))
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(duration=0.1)
    a = 2.0 * sim.time
    rot = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    expect = (V[F] - [R, 0, 0]) @ rot.T + [R, 0, 0]
    np.testing.assert_allclose(sim.mesh_triangles(0), expect, atol=1e-12)


def test_mesh_input_errors(tmp_path):
    scene = cl.Scene()
    with pytest.raises(InputError, match="does not exist"):
        scene.add_mesh(tmp_path / "missing.stl", material=GLASS)
    with pytest.raises(InputError, match="vertex indices must lie"):
        scene.add_mesh((np.zeros((3, 3)), [[0, 1, 3]]), material=GLASS)
    with pytest.raises(InputError, match="not finite"):
        scene.add_mesh(([[0, 0, 0], [1, 0, 0], [0, np.nan, 0]], [[0, 1, 2]]), material=GLASS)
    with pytest.raises(InputError, match="zero area"):
        scene.add_mesh(([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]]), material=GLASS)
    assert scene.n_meshes == 0


def test_box_settles_flat_on_a_wall():
    """(Kept with the mesh tests: the same kernels, spheres and planes plus the polyhedron-plane
    contact.)  A box dropped tilted onto a plane comes to rest on a face: its centre at the half-height
    above the plane (less the contact's overlap) and the wall carrying its weight (statics).  (It
    may keep spinning about the vertical: one contact point at the face's centre of pressure has
    no lever against a spin about the normal, unless the law has twisting resistance.)"""
    scene = cl.Scene()
    h = np.array([2e-3, 1.5e-3, 1e-3])
    scene.add_box(position=(0, 0, 4e-3), half_extents=h, material=GLASS, orientation=(math.cos(0.2), math.sin(0.2) / math.sqrt(2), math.sin(0.2) / math.sqrt(2), 0.0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))
    sim.run(duration=0.3)
    weight = sim.model.mass[0] * 9.81
    np.testing.assert_allclose(sim.wall_forces()[0, 2], -weight, rtol=1e-3)
    heights = np.abs(sim.rotation_matrices()[0].T @ np.array([0, 0, 1.0]))  # which body axis is vertical
    resting = h[np.argmax(heights)]
    assert abs(sim.positions[0, 2] - resting) < 0.02 * resting


@pytest.mark.parametrize("depth", [0.05, 0.3])
def test_a_sphere_sunk_into_a_mesh_at_the_start_is_refused(depth):
    """Bodies interpenetrating at the start are refused before the run, whatever their shapes: the
    narrow phase measures a sphere in a mesh (5 %: above the 2 % tolerance, below the 10 % guard;
    30 %: above both) and the error names both and the setting that allows it."""
    scene = cl.Scene()
    scene.add_mesh(plane_mesh(4, 4 * R), material=GLASS, name="plate")
    scene.add_sphere(position=(0.1 * R, 0.2 * R, (1.0 - depth) * R), radius=R, material=GLASS)
    with pytest.raises(InputError) as info:
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    text = str(info.value)
    assert text.startswith("sphere 0 and mesh 0 (plate, triangle ")
    assert f"interpenetrate by {depth * R:.6g} m ({100 * depth:.3g}% of the smaller radius) at the start" in text
    assert "initial_overlap_tolerance=0.02" in text


def test_a_box_through_a_wall_at_the_start_is_refused():
    scene = cl.Scene()
    scene.add_box(position=(0, 0, 0.5e-3), half_extents=(2e-3, 1.5e-3, 1e-3), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    with pytest.raises(InputError, match=r"^polyhedron 0 and wall 0 interpenetrate by 0\.0005 m"):
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))


@pytest.mark.parametrize("scan_rows", [1, 2, 1 << 16])
def test_the_initial_overlap_check_names_the_deepest_pair_whatever_its_scan_chunk(monkeypatch, scan_rows):
    """The check scans the contact table in chunks (its temporaries stay small at 1e6 bodies): with
    chunks of one or two rows it names the same deepest pair and counts every pair, as in one chunk.
    Three boxes sunk into the floor by 0.3, 0.7 and 0.5 mm: the second is the deepest."""
    monkeypatch.setattr(diagnosis, "_SCAN_ROWS", scan_rows)
    scene = cl.Scene()
    for k, depth in enumerate((0.3e-3, 0.7e-3, 0.5e-3)):
        scene.add_box(position=(10e-3 * k, 0, 1e-3 - depth), half_extents=(2e-3, 1.5e-3, 1e-3), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    with pytest.raises(InputError) as info:
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))
    text = str(info.value)
    assert text.startswith("polyhedron 1 and wall 0 interpenetrate by 0.0007 m")
    assert "3 pair(s) overlap too much" in text
