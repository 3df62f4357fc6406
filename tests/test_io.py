"""Reporters (VTK, CSV, checkpoints), scene files and the contactlab command."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import contactlab as cl
from contactlab.io import CheckpointReporter, EnergyCSVReporter, VTKReporter
from contactlab.io.checkpoint import save_checkpoint
from contactlab.io.scenefile import load_scene_file
from helpers.vtp import read_vtp


def _small_scene(glass):
    scene = cl.Scene()
    L = 0.01
    scene.fill_box((0, 0, 0), (L, L, 0.02), 1e-3, glass, jitter=0.4, seed=3)
    for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, L, 0), (0, -1, 0))]:
        scene.add_wall(point=p, normal=n, material=glass)
    return scene


def test_vtk_series(glass, tmp_path):
    sim = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.add_reporter(VTKReporter(tmp_path, every=500))
    sim.run(steps=1500)
    sim.close()
    for series in ("particles", "contacts", "walls"):
        entries = [(float(e.get("timestep")), e.get("file")) for e in ET.parse(tmp_path / f"{series}.pvd").iter("DataSet")]
        assert [f for _, f in entries] == [f"{series}_{k:06d}.vtp" for k in range(4)]
        assert entries[-1][0] == pytest.approx(sim.time)
    attrs, arrays = read_vtp(tmp_path / "particles_000003.vtp")
    assert int(attrs["NumberOfPoints"]) == sim.n_spheres
    np.testing.assert_array_equal(arrays[("Points", "Points")], sim.positions)
    np.testing.assert_array_equal(arrays[("PointData", "radius")], sim.model.radius)
    np.testing.assert_array_equal(arrays[("PointData", "velocity")], sim.velocities)
    np.testing.assert_array_equal(arrays[("PointData", "force")], sim.forces)
    c = sim.contacts()
    attrs, arrays = read_vtp(tmp_path / "contacts_000003.vtp")
    assert int(attrs["NumberOfLines"]) == len(c["i"]) > 0
    np.testing.assert_allclose(arrays[("CellData", "force_magnitude")], np.linalg.norm(c["force"], axis=1))
    lines = arrays[("Lines", "connectivity")].reshape(-1, 2)
    np.testing.assert_array_equal(lines[:, 0], c["i"])


def test_vtk_files_open_in_vtk(glass, tmp_path):
    vtk = pytest.importorskip("vtk")
    sim = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.add_reporter(VTKReporter(tmp_path, every=300))
    sim.run(steps=600)
    for name in ("particles_000002.vtp", "contacts_000002.vtp", "walls_000002.vtp"):
        reader = vtk.vtkXMLPolyDataReader()
        reader.SetFileName(str(tmp_path / name))
        reader.Update()
        assert reader.GetOutput().GetNumberOfPoints() > 0
    reader = vtk.vtkXMLPolyDataReader()
    reader.SetFileName(str(tmp_path / "particles_000002.vtp"))
    reader.Update()
    from vtk.util.numpy_support import vtk_to_numpy

    np.testing.assert_array_equal(vtk_to_numpy(reader.GetOutput().GetPoints().GetData()), sim.positions)


def test_energy_csv(glass, tmp_path):
    sim = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.add_reporter(EnergyCSVReporter(tmp_path / "e.csv", every=100))
    sim.run(steps=1000)
    sim.close()
    data = np.genfromtxt(tmp_path / "e.csv", delimiter=",", names=True)
    assert list(data["step"]) == list(range(0, 1001, 100))
    e = sim.energy()
    assert data["total"][-1] == e["total"] and data["contacts"][-1] == sim.n_contacts()
    np.testing.assert_allclose(data["total"], data["kinetic"] + data["rotational"] + data["gravitational"]
                               + data["elastic"] + data["dissipated"], rtol=1e-12)


def test_reports_do_not_change_the_trajectory(glass, tmp_path):
    a = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    b = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    b.add_reporter(VTKReporter(tmp_path, every=37))
    b.add_reporter(EnergyCSVReporter(tmp_path / "e.csv", every=13))
    a.run(steps=800)
    b.run(steps=800)
    np.testing.assert_array_equal(a.positions, b.positions)


def test_checkpoint_reporter_and_atomic_write(glass, tmp_path, monkeypatch):
    sim = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.add_reporter(CheckpointReporter(tmp_path / "ck.npz", every=200))
    sim.run(steps=600)
    good = (tmp_path / "ck.npz").read_bytes()
    assert cl.Simulation.load_checkpoint(tmp_path / "ck.npz").step == 600
    # a crash in the middle of writing leaves the last good checkpoint untouched and no debris
    import contactlab.io.checkpoint as ckpt

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("simulated crash while writing")

    monkeypatch.setattr(ckpt.np, "savez", crash)
    sim.run(steps=100)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(sim, tmp_path / "ck.npz")
    assert (tmp_path / "ck.npz").read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["ck.npz"]


def test_checkpoint_rejects_garbage(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(cl.InputError, match=r"is not a contactlab checkpoint \(a checkpoint is a NumPy .npz archive; this file starts with b.not "):
        cl.Simulation.load_checkpoint(bad)
    with pytest.raises(cl.InputError, match="does not exist"):
        cl.Simulation.load_checkpoint(tmp_path / "missing.npz")


SCENE = """
[simulation]
gravity = [0.0, 0.0, -9.81]
dt = "auto"
duration = 0.01

[materials.glass]
density = 2500.0
young = 1e7
poisson = 0.3

[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.5

[[sphere]]
position = [0.005, 0.005, 0.015]
radius = 1e-3
material = "glass"
velocity = [0.0, 0.0, -0.2]

[[fill_box]]
lower = [0.0, 0.0, 0.0]
upper = [0.01, 0.01, 0.012]
radius = 1e-3
material = "glass"
jitter = 0.4
seed = 3

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[output]
vtk_interval = 0.005
csv_interval = 0.001
checkpoint_interval = 0.005
"""


def test_scene_file_maps_one_to_one_to_the_api(glass, tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text(SCENE)
    spec = load_scene_file(path)
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0.005, 0.005, 0.015), radius=1e-3, material=glass, velocity=(0, 0, -0.2))
    scene.fill_box((0, 0, 0), (0.01, 0.01, 0.012), 1e-3, glass, jitter=0.4, seed=3)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    a = spec.build_simulation()
    b = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    assert a.dt == b.dt and spec.duration == 0.01
    a.run(duration=spec.duration)
    b.run(duration=0.01)
    np.testing.assert_array_equal(a.positions, b.positions)


def test_scene_file_model_takes_rolling_model_and_per_material(tmp_path):
    # reference: the Python API - the scene file's [model] accepts HertzMindlin's keyword-only
    # rolling_model and its per_material table, and builds the model the API builds
    path = tmp_path / "scene.toml"
    path.write_text(SCENE.replace('friction = 0.5', 'friction = 0.5\nrolling_friction = 0.1\n'
                                  'rolling_model = "constant_torque"\nper_material = { glass = { friction = 0.3 } }', 1))
    model = load_scene_file(path).build_simulation().contact_model
    assert model.rolling_model == "constant_torque"
    want = cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1, rolling_model="constant_torque",
                                  per_material={"glass": {"friction": 0.3}})
    assert model.to_dict() == want.to_dict()


@pytest.mark.parametrize("edit, message", [
    (("[[wall]]", "[[walls]]"), "unknown table 'walls' (did you mean 'wall'?)"),
    (("restitution = 0.5", "restitution = 0.5\nrestitutoin = 0.5"), "[model] unknown key 'restitutoin' (did you mean 'restitution'?)"),
    (("jitter = 0.4", "jitter = 0.4\ncolour = 1"), "[fill_box #1] unknown key 'colour'"),
    (("radius = 1e-3\nmaterial = \"glass\"\nvelocity", "radius = -1e-3\nmaterial = \"glass\"\nvelocity"),
     "[sphere #1] radius must be > 0 m, got -0.001"),
    (("normal = [0.0, 0.0, 1.0]", "normal = [0.0, 0.0, 0.0]"), "[wall #1] wall normal must be a nonzero vector"),
    (('material = "glass"\n\n[output]', 'material = "sand"\n\n[output]'), "material 'sand' is not defined"),
    (('type = "HertzMindlin"', 'type = "Hertz"'), "unknown type 'Hertz'"),
    (('dt = "auto"', "dt = 1.0"), "above the stability limit"),
])
def test_scene_file_errors_name_the_problem(tmp_path, edit, message):
    path = tmp_path / "scene.toml"
    assert edit[0] in SCENE
    path.write_text(SCENE.replace(edit[0], edit[1], 1))
    with pytest.raises(cl.InputError) as info:
        load_scene_file(path).build_simulation()
    assert message in str(info.value)


def _cli(*args, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "contactlab.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=600)


def test_cli_run_scene_file_and_restart(tmp_path):
    (tmp_path / "scene.toml").write_text(SCENE)
    out = tmp_path / "out"
    res = _cli("run", "scene.toml", "--out", str(out), "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "particle-steps/s" in res.stdout and "energy balance error" in res.stdout
    for name in ("particles.pvd", "contacts.pvd", "walls.pvd", "energy.csv", "checkpoint.npz", "summary.json",
                 "particles_000002.vtp"):
        assert (out / name).exists(), name
    final = cl.Simulation.load_checkpoint(out / "checkpoint.npz")
    # restart from the middle checkpoint written at t = 0.005 s and run to t = 0.01 s again
    res = _cli("run", "scene.toml", "--out", str(tmp_path / "again"), "--quiet", "--duration", "0.005", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = _cli("run", "scene.toml", "--out", str(tmp_path / "again"), "--quiet",
               "--restart", str(tmp_path / "again" / "checkpoint.npz"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    resumed = cl.Simulation.load_checkpoint(tmp_path / "again" / "checkpoint.npz")
    assert resumed.step == final.step
    np.testing.assert_array_equal(resumed.positions, final.positions)
    rows = np.genfromtxt(tmp_path / "again" / "energy.csv", delimiter=",", names=True)
    assert len(np.unique(rows["step"])) == len(rows["step"])  # no duplicated rows after the restart


def test_cli_bad_scene_writes_nothing(tmp_path):
    (tmp_path / "bad.toml").write_text(SCENE.replace("[[wall]]", "[[walls]]"))
    res = _cli("run", "bad.toml", "--out", str(tmp_path / "out"), "--quiet", cwd=tmp_path)
    assert res.returncode == 2   # refused before it started (1: a run that failed once started)
    assert "unknown table 'walls' (did you mean 'wall'?)" in res.stderr
    assert not (tmp_path / "out").exists()


def test_default_scene_is_valid():
    from contactlab.io.scenefile import default_scene_path

    spec = load_scene_file(default_scene_path())
    assert spec.scene.n_spheres == 10000 and spec.scene.n_walls == 5 and spec.duration > 0


def test_progress_takes_the_documented_callable_and_draws_the_bar(glass, capsys):
    """``run(progress=f)`` calls ``f(sim, steps_done, steps_total, wall_seconds)`` -- the four
    arguments the docstring names, nothing more -- after each chunk, the last with the run done;
    ``progress=True`` draws the bar on stderr, ending at 100 % with a newline."""
    sim = cl.Simulation(_small_scene(glass), cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    calls = []

    def report(s, steps_done, steps_total, wall_seconds):
        calls.append((s.step, steps_done, steps_total, wall_seconds))

    sim.run(steps=300, progress=report)
    assert calls and calls[-1][1] == calls[-1][2] == 300 and calls[-1][0] == sim.step == 300
    assert all(c[3] >= 0.0 for c in calls) and [c[1] for c in calls] == sorted(c[1] for c in calls)
    sim.run(steps=50, progress=True)
    err = capsys.readouterr().err
    assert "100.0%" in err and "step 50/50" in err and err.endswith("\n")
