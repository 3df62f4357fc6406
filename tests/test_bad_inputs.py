"""The catalogue of bad inputs: each gets a named exception whose message names the bad value and
what is allowed, before anything is written or any long work starts, and nothing half-built.

One table for the Python API (every public constructor and method: wrong types, NaN/inf, out of
range, wrong shapes, unknown names with a did-you-mean) and one for scene files run as a user
runs them (``contactlab run FILE``: typos, missing keys, wrong types, TOML syntax, missing or
non-mesh mesh files).  docs/errors.md lists the same catalogue for users.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import contactlab as cl
from contactlab.cli import main as cli_main
from helpers.scene_text import TWO_BEADS_ON_A_FLOOR

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3
HM = dict(restitution=0.5, friction=0.5)


@dataclass(frozen=True)
class Case:
    """``call(env)`` must raise ``error`` with a message matching ``message`` (a regex searched in
    it); ``env`` holds a fresh scene, a running simulation (shared, never changed by a bad call)
    and a temporary directory."""

    name: str
    call: Callable
    error: type
    message: str


class Env:
    def __init__(self, sim, tmp: Path):
        self.scene = cl.Scene()
        self.scene.add_sphere(position=(0, 0, 0.01), radius=R, material=GLASS)
        self.sim = sim
        self.tmp = tmp


def _two_spheres_and_a_floor() -> cl.Scene:
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 1.5 * R), radius=R, material=GLASS)
    scene.add_sphere(position=(0, 0, 3.6 * R), radius=R, material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    return scene


def _text_file(env, name, text):
    path = env.tmp / name
    path.write_text(text)
    return path


P = cl.InputError
API = [
    # --- Material
    Case("Material young as text", lambda e: cl.Material(density=2500.0, young="1e7", poisson=0.3), P,
         r"Material: young must be a number, got '1e7' \(str\)"),
    Case("Material density negative", lambda e: cl.Material(density=-1.0, young=1e7, poisson=0.3), P,
         r"density must be > 0 kg/m\^3, got -1\.0"),
    Case("Material density NaN", lambda e: cl.Material(density=math.nan, young=1e7, poisson=0.3), P,
         r"density must be finite, got nan"),
    Case("Material density bool", lambda e: cl.Material(density=True, young=1e7, poisson=0.3), P,
         r"density must be a number, got True \(bool\)"),
    Case("Material poisson out of range", lambda e: cl.Material(density=2500.0, young=1e7, poisson=0.5), P,
         r"poisson must satisfy -1 < poisson < 0\.5, got 0\.5"),
    Case("Material unknown keyword", lambda e: cl.Material(densty=2500.0, young=1e7, poisson=0.3), P,
         r"Material: unknown argument 'densty' \(did you mean 'density'\?\); allowed: density, young, poisson"),
    # --- Scene and its bodies
    Case("Scene gravity wrong shape", lambda e: cl.Scene(gravity=(0.0, -9.81)), P,
         r"gravity must be 3 numbers \(x, y, z\), got shape \(2,\)"),
    Case("Scene gravity as text", lambda e: cl.Scene(gravity="down"), P, r"gravity must be numbers, got text: 'down'"),
    Case("add_sphere negative radius", lambda e: e.scene.add_sphere(position=(0, 0, 0), radius=-R, material=GLASS),
         P, r"radius must be > 0 m, got -0\.001"),
    Case("add_sphere NaN position",
         lambda e: e.scene.add_sphere(position=(0, math.nan, 0), radius=R, material=GLASS), P,
         r"position must be finite, got \[0\.0, nan, 0\.0\]"),
    Case("add_sphere infinite velocity",
         lambda e: e.scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, velocity=(math.inf, 0, 0)), P,
         r"velocity must be finite, got \[inf, 0\.0, 0\.0\]"),
    Case("add_sphere position as text", lambda e: e.scene.add_sphere(position=("0", "0", "0"), radius=R, material=GLASS),
         P, r"position must be numbers, got text"),
    Case("add_sphere material by name", lambda e: e.scene.add_sphere(position=(0, 0, 0), radius=R, material="glass"),
         P, r"material must be a contactlab\.Material, got str: 'glass'"),
    Case("add_sphere fixed as text",
         lambda e: e.scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS, fixed="yes"), P,
         r"fixed must be True or False, got 'yes' \(str\)"),
    Case("add_sphere abbreviated keyword", lambda e: e.scene.add_sphere(pos=(0, 0, 0), radius=R, material=GLASS), P,
         r"Scene\.add_sphere: unknown argument 'pos' \(did you mean 'position'\?\).*missing required argument position"),
    Case("add_spheres radii wrong length",
         lambda e: e.scene.add_spheres(positions=np.zeros((4, 3)), radii=np.full(3, R), material=GLASS), P,
         r"radii must have shape \(4,\), got \(3,\)"),
    Case("add_spheres positions wrong shape",
         lambda e: e.scene.add_spheres(positions=np.zeros((4, 2)), radii=R, material=GLASS), P,
         r"positions must have shape \(N, 3\), got \(4, 2\)"),
    Case("add_spheres one bad radius",
         lambda e: e.scene.add_spheres(positions=np.arange(12.0).reshape(4, 3), radii=[R, R, -R, R], material=GLASS),
         P, r"radii\[2\] must be finite and > 0 m, got -0\.001"),
    Case("fill_box spacing too small",
         lambda e: e.scene.fill_box(lower=(0, 0, 0), upper=(0.01, 0.01, 0.01), radius=R, material=GLASS,
                                    spacing=1e-3), P, r"spacing 0\.001 m is smaller than the largest diameter 0\.002 m"),
    Case("add_wall zero normal", lambda e: e.scene.add_wall(point=(0, 0, 0), normal=(0, 0, 0), material=GLASS), P,
         r"wall normal must be a nonzero vector, got \[0\.0, 0\.0, 0\.0\]"),
    Case("add_wall misspelt keyword",
         lambda e: e.scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS, velocty=(1, 0, 0)), P,
         r"unknown argument 'velocty' \(did you mean 'velocity'\?\)"),
    Case("add_mesh missing file", lambda e: e.scene.add_mesh(e.tmp / "missing.stl", material=GLASS), P,
         r"mesh file '.*missing\.stl' does not exist"),
    Case("add_mesh text file named .stl",
         lambda e: e.scene.add_mesh(_text_file(e, "notes.stl", "these are notes\n"), material=GLASS), P,
         r"mesh file '.*notes\.stl' holds no triangles"),
    Case("add_mesh face index out of range",
         lambda e: e.scene.add_mesh((np.eye(3), [[0, 1, 3]]), material=GLASS), P,
         r"face vertex indices must lie in 0\.\.2, got 0\.\.3"),
    Case("add_mesh zero scale", lambda e: e.scene.add_mesh((np.eye(3), [[0, 1, 2]]), material=GLASS, scale=0.0), P,
         r"scale must be > 0, got 0\.0"),
    Case("add_ellipsoid negative semi-axis",
         lambda e: e.scene.add_ellipsoid(position=(0, 0, 0), semi_axes=(1e-3, -1e-3, 1e-3), material=GLASS), P,
         r"semi_axes must be three lengths > 0 m"),
    Case("add_ellipsoid quaternion not unit",
         lambda e: e.scene.add_ellipsoid(position=(0, 0, 0), semi_axes=(1e-3, 2e-3, 1e-3), material=GLASS,
                                         orientation=(1.0, 1.0, 0.0, 0.0)), P,
         r"orientation: a quaternion \(w, x, y, z\) must have norm 1, got norm 1\.4142136"),
    Case("add_box wrong number of half extents",
         lambda e: e.scene.add_box(position=(0, 0, 0), half_extents=(1e-3, 1e-3), material=GLASS), P,
         r"half_extents must be three lengths > 0 m"),
    Case("add_polyhedron flat vertices",
         lambda e: e.scene.add_polyhedron([[0, 0, 0], [1e-3, 0, 0], [0, 1e-3, 0], [1e-3, 1e-3, 0]], material=GLASS),
         P, r"the vertices do not span a volume"),
    # --- contact models
    Case("HertzMindlin misspelt parameter", lambda e: cl.models.HertzMindlin(restitution=0.5, frictoin=0.5), P,
         r"HertzMindlin: unknown parameter 'frictoin' \(did you mean 'friction'\?\); allowed: restitution, friction, "
         r"rolling_friction; missing required parameter friction"),
    Case("HertzMindlin restitution out of range", lambda e: cl.models.HertzMindlin(restitution=1.5, friction=0.5), P,
         r"HertzMindlin: restitution must satisfy 0 < restitution <= 1, got 1\.5"),
    Case("HertzMindlin restitution as text", lambda e: cl.models.HertzMindlin(restitution="0.5", friction=0.5), P,
         r"HertzMindlin: restitution must be a number, got '0\.5'"),
    Case("HertzMindlin too many positional", lambda e: cl.models.HertzMindlin(0.5, 0.5, 0.0, 1.0), P,
         r"HertzMindlin: takes at most 3 positional parameter\(s\) \(restitution, friction, rolling_friction\), got 4"),
    Case("LinearSpringDashpot NaN stiffness",
         lambda e: cl.models.LinearSpringDashpot(stiffness=math.nan, restitution=0.5, friction=0.5), P,
         r"LinearSpringDashpot: stiffness must be finite, got nan"),
    Case("SphereSphereContact unknown impact model",
         lambda e: cl.models.SphereSphereContact(contact_stiffness=1e6, impact_model=4), P,
         r"impact_model must be one of 0 \(.*\), 1 \(.*\), 2 \(.*\), got 4"),
    Case("Luding per-material parameter that cannot be", lambda e: cl.models.Luding(per_material={"glass": {"k1": 1.0}}),
         P, r"Luding: per_material\['glass'\]: k1 cannot be given per material"),
    Case("Ice unknown sense", lambda e: cl.models.Ice(bonded="nx"), P, r"bonded: unknown sense\(s\) 'x'"),
    Case("Contact without a normal law", lambda e: cl.models.Contact(normal=None), P, r"Contact needs a normal law"),
    Case("Contact misspelt slot", lambda e: cl.models.Contact(normals=cl.parts.hooke(stiffness=1e3)), P,
         r"Contact: unknown parameter 'normals' \(did you mean 'normal'\?\)"),
    Case("VolumeContact zero stiffness", lambda e: cl.models.VolumeContact(volume_stiffness=0.0), P,
         r"VolumeContact: volume_stiffness must satisfy 0 < volume_stiffness, got 0\.0"),
    # --- Simulation
    Case("Simulation model by name", lambda e: cl.Simulation(e.scene, "HertzMindlin"), P,
         r"model must be a contact model such as cl\.models\.HertzMindlin\(\.\.\.\), got str"),
    Case("Simulation negative dt", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), dt=-1e-6), P,
         r"dt must be > 0 s, got -1e-06"),
    Case("Simulation dt as text", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), dt="1e-5"), P,
         r"dt must be a number, got '1e-5'"),
    Case("Simulation dt above the stability limit",
         lambda e: cl.Simulation(_two_spheres_and_a_floor(), cl.models.HertzMindlin(**HM), dt=1e-3), cl.StabilityError,
         r"dt=0\.001 s is above the stability limit [0-9.e-]+ s of the contact sphere . \(radius 0\.001 m\) against "),
    Case("Simulation max_overlap >= 1",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), max_overlap=1.5), P,
         r"max_overlap must be < 1 \(a fraction of the smaller radius\), got 1\.5"),
    Case("Simulation zero threads", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), threads=0), P,
         r"threads must satisfy 1 <= threads <= \d+, got 0"),
    Case("Simulation fractional threads",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), threads=1.5), P,
         r"threads must be an integer, got 1\.5"),
    Case("Simulation local damping 1",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), local_damping=1.0), P,
         r"local_damping must satisfy 0 <= local_damping < 1, got 1\.0"),
    Case("Simulation misspelt shape_contact",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), shape_contact="minkowsky"), P,
         r"shape_contact must be one of 'minkowski', 'common_plane', 'volume', got 'minkowsky' "
         r"\(did you mean 'minkowski'\?\)"),
    Case("Simulation misspelt keyword",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), max_overlapp=0.2), P,
         r"Simulation: unknown argument 'max_overlapp' \(did you mean 'max_overlap'\?\)"),
    Case("Simulation debug as text", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), debug="yes"), P,
         r"debug must be True or False, got 'yes'"),
    Case("Simulation of an empty scene", lambda e: cl.Simulation(cl.Scene(), cl.models.HertzMindlin(**HM)), P,
         r"the scene has no spheres or other bodies"),
    Case("Simulation with overlapping spheres",
         lambda e: (e.scene.add_sphere(position=(0, 0, 0.0115), radius=R, material=GLASS),
                    cl.Simulation(e.scene, cl.models.HertzMindlin(**HM))), P,
         r"spheres 0 and 1 overlap by 0\.0005 m \(50% of the smaller radius\) at the start; at most 2% is allowed"),
    # --- methods of a running simulation
    Case("run negative duration", lambda e: e.sim.run(duration=-1), P, r"duration must be >= 0 s, got -1\.0"),
    Case("run fractional steps", lambda e: e.sim.run(steps=2.5), P, r"steps must be a non-negative integer, got 2\.5"),
    Case("run NaN duration", lambda e: e.sim.run(duration=math.nan), P, r"duration must be finite, got nan"),
    Case("run both duration and steps", lambda e: e.sim.run(duration=1e-3, steps=3), P,
         r"give exactly one of duration \(s\) or steps, got duration=0\.001, steps=3"),
    Case("set_velocity sphere out of range", lambda e: e.sim.set_velocity(5, (0, 0, 0)), P,
         r"sphere index 5 is out of range 0\.\.1"),
    Case("set_velocity NaN", lambda e: e.sim.set_velocity(0, (math.nan, 0, 0)), P, r"velocity must be finite"),
    Case("set_wall_velocity wall out of range", lambda e: e.sim.set_wall_velocity(3, (0, 0, 0)), P,
         r"wall index 3 is out of range 0\.\.0"),
    Case("set_active not a bool", lambda e: e.sim.set_active("no", spheres=(0, 1)), P,
         r"active must be True or False, got 'no'"),
    Case("bond on a model without bonds", lambda e: e.sim.bond(), P,
         r"HertzMindlin has no bonds; models with bonds: cl\.models\.Ice, cl\.models\.ParallelBond"),
    Case("record misspelt contact quantity", lambda e: e.sim.record("overlapp", contact=(0, 1)), P,
         r"record: unknown contact quantity 'overlapp' \(did you mean 'overlap'\?\)"),
    Case("record misspelt global quantity", lambda e: e.sim.record("kinetc"), P,
         r"record: unknown quantity 'kinetc' \(did you mean 'kinetic'\?\)"),
    Case("contact of a sphere with itself", lambda e: e.sim.contact(0, 0), P,
         r"a sphere has no contact with itself \(i = j = 0\)"),
    Case("VTKReporter negative interval", lambda e: cl.io.VTKReporter(e.tmp / "vtk", interval=-1.0), P,
         r"VTKReporter: interval must be > 0 s, got -1\.0"),
    Case("EnergyCSVReporter without a schedule", lambda e: cl.io.EnergyCSVReporter(e.tmp / "energy.csv"), P,
         r"EnergyCSVReporter: give exactly one of interval \(s\) or every \(steps\)"),
    Case("CheckpointReporter keep 0", lambda e: cl.io.CheckpointReporter(e.tmp / "c.npz", every=10, keep=0), P,
         r"CheckpointReporter: keep must satisfy 1 <= keep, got 0"),
    Case("CheckpointReporter fractional every", lambda e: cl.io.CheckpointReporter(e.tmp / "c.npz", every=2.5), P,
         r"CheckpointReporter: every must be a positive integer \(steps\), got 2\.5"),
    Case("probe without a time step", lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6]), P,
         r"give the time between samples \(dt=\.\.\., s\) or the sample times \(time=\.\.\.\)"),
    Case("probe overlap wrong shape",
         lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=[[0.0, 1e-6]], dt=1e-6), P,
         r"overlap must be a 1-D array of samples, got shape \(1, 2\)"),
    Case("load_checkpoint of a missing file", lambda e: cl.Simulation.load_checkpoint(e.tmp / "none.npz"), P,
         r"checkpoint '.*none\.npz' does not exist"),
]


@pytest.fixture(scope="module")
def running():
    """Two spheres on a floor, a few steps into a run (HertzMindlin)."""
    sim = cl.Simulation(_two_spheres_and_a_floor(), cl.models.HertzMindlin(**HM))
    sim.run(steps=10)
    return sim


def _fingerprint(env: Env):
    sim, scene = env.sim, env.scene
    return (sim.step, sim.positions.tobytes(), sim.velocities.tobytes(), len(sim.reporters), scene.n_bodies,
            scene.n_walls, scene.n_meshes, len(scene.materials))


def test_the_catalogue_is_large_and_its_names_unique():
    assert len(API) + len(SCENE_FILE) >= 40
    names = [c.name for c in API + SCENE_FILE]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", API, ids=[c.name for c in API])
def test_python_api(case, running, tmp_path):
    env = Env(running, tmp_path)
    before = _fingerprint(env)
    with pytest.raises(case.error, match=case.message):
        case.call(env)
    after = _fingerprint(env)
    if case.name != "Simulation with overlapping spheres":   # that case adds the overlapping sphere itself
        assert after == before, "a bad call changed the scene or the simulation"
    assert not any(tmp_path.iterdir()) or case.name == "add_mesh text file named .stl"


# ------------------------------------------------------------------------------------------------ scene files
GOOD = TWO_BEADS_ON_A_FLOOR

S = cl.SceneFileError
SCENE_FILE = [
    Case("TOML syntax error", ("[[wall]]", "[[wall]"), S, r"not valid TOML: .*\(at line 21, column 7\)"),
    Case("unknown table", ("[[wall]]", "[[walls]]"), S, r"unknown table 'walls' \(did you mean 'wall'\?\)"),
    Case("misspelt key", ("radius = 0.001\nmaterial = \"glass\"\n\n[[sphere]]", "radious = 0.001\nmaterial = \"glass\"\n\n[[sphere]]"),
         S, r"\[sphere #1\] unknown key 'radious' \(did you mean 'radius'\?\)"),
    Case("missing key", ("point = [0.0, 0.0, 0.0]\n", ""), S, r"\[wall #1\] missing required key\(s\) 'point'"),
    Case("number as text", ("radius = 0.001\nmaterial = \"glass\"\n\n[[wall]]", "radius = \"0.001\"\nmaterial = \"glass\"\n\n[[wall]]"),
         S, r"\[sphere #2\] radius must be a number, got '0\.001' \(str\)"),
    Case("undefined material", ("normal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"", "normal = [0.0, 0.0, 1.0]\nmaterial = \"glas\""),
         S, r"\[wall #1\] material 'glas' is not defined \(did you mean 'glass'\?\); defined: glass"),
    Case("misspelt model type", ('type = "HertzMindlin"', 'type = "HertzMindlen"'), S,
         r"\[model\] unknown type 'HertzMindlen' of contact model \(did you mean 'HertzMindlin'\?\)"),
    Case("misspelt model parameter", ("restitution = 0.5", "restitutoin = 0.5"), S,
         r"\[model\] unknown key 'restitutoin' \(did you mean 'restitution'\?\)"),
    Case("model without a type", ('type = "HertzMindlin"\n', ""), S, r"\[model\] needs a 'type': one of"),
    Case("dt as text", ("duration = 0.001", "duration = 0.001\ndt = \"fast\""), S,
         r"\[simulation\] dt must be a number of seconds or \"auto\", got 'fast'"),
    Case("dt above the stability limit", ("duration = 0.001", "duration = 0.001\ndt = 1e-3"), cl.StabilityError,
         r"\[simulation\] dt=0\.001 s is above the stability limit"),
    Case("zero threads", ("duration = 0.001", "duration = 0.001\nthreads = 0"), S,
         r"\[simulation\] threads must satisfy 1 <= threads"),
    Case("max_overlap above 1", ("duration = 0.001", "duration = 0.001\nmax_overlap = 2.0"), S,
         r"\[simulation\] max_overlap must be < 1"),
    Case("negative duration", ("duration = 0.001", "duration = -1.0"), S,
         r"\[simulation\] duration must be a number of seconds >= 0, got -1\.0"),
    Case("misspelt shape_contact", ("duration = 0.001", "duration = 0.001\nshape_contact = \"minkowsky\""), S,
         r"shape_contact must be one of .*got 'minkowsky' \(did you mean 'minkowski'\?\)"),
    Case("zero output interval", ("vtk_interval = 0.0005", "vtk_interval = 0"), S,
         r"\[output\] vtk_interval must be a positive number of seconds, got 0"),
    Case("output flag as text", ("csv_interval = 0.0005", "csv_interval = 0.0005\nprogress = \"yes\""), S,
         r"\[output\] progress must be true or false, got 'yes'"),
    Case("missing mesh file", ("[model]", "[[mesh]]\nsource = \"missing.stl\"\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[mesh #1\] mesh file '.*missing\.stl' does not exist"),
    Case("mesh file that is not a mesh", ("[model]", "[[mesh]]\nsource = \"notes.stl\"\nmaterial = \"glass\"\n\n[model]"),
         S, r"\[mesh #1\] mesh file '.*notes\.stl' holds no triangles"),
    Case("material out of range", ("poisson = 0.3", "poisson = 0.7"), S,
         r"\[materials\.glass\] Material 'glass': poisson must satisfy -1 < poisson < 0\.5, got 0\.7"),
    Case("position with two numbers", ("position = [0.0, 0.0, 0.0015]", "position = [0.0, 0.0015]"), S,
         r"\[sphere #1\] position must be 3 numbers \(x, y, z\), got shape \(2,\)"),
    Case("interpenetrating spheres", ("position = [0.0, 0.0, 0.0036]", "position = [0.0, 0.0, 0.0025]"), S,
         r"\[simulation\] spheres 0 and 1 overlap by 0\.001 m \(100% of the smaller radius\) at the start"),
    Case("missing sphere CSV", ("[model]", "[[spheres]]\nfile = \"beads.csv\"\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[spheres #1\] sphere file '.*beads\.csv' does not exist"),
    Case("bonds for a model without bonds", ("[output]", "[bonds]\nmax_gap = 1e-6\n\n[output]"), S,
         r"\[bonds\] the model HertzMindlin has no bonds"),
]


@pytest.mark.parametrize("case", SCENE_FILE, ids=[c.name for c in SCENE_FILE])
def test_scene_file(case, tmp_path, capsys):
    old, new = case.call
    assert old in GOOD, f"the edit of case {case.name!r} does not apply"
    (tmp_path / "notes.stl").write_text("these are notes, not a mesh\n")
    path = tmp_path / "scene.toml"
    path.write_text(GOOD.replace(old, new, 1))
    out = tmp_path / "out"
    # the exception a script sees
    from contactlab.io.scenefile import load_scene_file

    with pytest.raises(case.error, match=case.message):
        load_scene_file(path).build_simulation()
    # what `contactlab run FILE` prints, and that it wrote nothing
    code = cli_main(["run", str(path), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert "contactlab: error: " in err and str(path) in err
    assert re.search(case.message, err), err
    assert not out.exists() or not any(out.iterdir()), "a bad scene file left output behind"


def test_the_good_scene_file_runs(tmp_path, capsys):
    """The reference the scene-file cases edit is itself valid (so each case fails for its own edit)."""
    path = tmp_path / "scene.toml"
    path.write_text(GOOD)
    assert cli_main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "checkpoint.npz").is_file()


def test_docs_list_the_catalogue():
    """docs/errors.md lists every case of this file (the page users read is the catalogue tested here)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    missing = [c.name for c in API + SCENE_FILE if f"| {c.name} |" not in doc]
    assert not missing, f"docs/errors.md does not list: {missing}"


# ------------------------------------------------------------------------------------------------ every argument
_CUBE = [[0, 0, 0], [1e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3], [1e-3, 1e-3, 1e-3]]


def _calls(sim):
    """Every public constructor and method that takes numbers, with valid arguments, and the
    arguments that must be numbers (or vectors, or True/False)."""
    s = cl.Scene()
    mesh = (np.array([[0, 0, 0], [1e-2, 0, 0], [0, 1e-2, 0.0]]), [[0, 1, 2]])
    calls = [
        (cl.Material, dict(density=2500.0, young=1e7, poisson=0.3)),
        (cl.Scene, dict(gravity=(0, 0, -9.81))),
        (s.add_sphere, dict(position=(0, 0, 0), radius=R, material=GLASS, velocity=(0, 0, 0),
                            angular_velocity=(0, 0, 0), fixed=False)),
        (s.add_spheres, dict(positions=np.zeros((2, 3)) + [[0, 0, 0], [0, 0, 3e-3]], radii=R, material=GLASS,
                             velocities=np.zeros((2, 3)), angular_velocities=np.zeros((2, 3)), fixed=False)),
        (s.fill_box, dict(lower=(0, 0, 0), upper=(0.01, 0.01, 0.01), radius=R, material=GLASS, spacing=2.5e-3,
                          radius_spread=0.1, jitter=0.1, seed=1, max_count=5, velocity=(0, 0, 0))),
        (s.add_wall, dict(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS, velocity=(0, 0, 0))),
        (s.add_mesh, dict(source=mesh, material=GLASS, velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                          centre=(0, 0, 0), scale=1.0)),
        (s.add_ellipsoid, dict(position=(0, 0, 0), semi_axes=(1e-3, 2e-3, 1e-3), material=GLASS,
                               orientation=(1.0, 0, 0, 0), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                               fixed=False)),
        (s.add_box, dict(position=(0, 0, 0), half_extents=(1e-3, 1e-3, 1e-3), material=GLASS,
                         orientation=(1.0, 0, 0, 0), velocity=(0, 0, 0), angular_velocity=(0, 0, 0), fixed=False)),
        (s.add_polyhedron, dict(vertices=_CUBE, material=GLASS, position=(0, 0, 0), orientation=(1.0, 0, 0, 0),
                                velocity=(0, 0, 0), angular_velocity=(0, 0, 0), fixed=False, mass=1e-5,
                                inertia=(1e-12, 1e-12, 1e-12))),
        (s.add_convex_roll, dict(position=(0, 0, 0), orientation=(1.0, 0, 0, 0), hull_coefficients=[-1.0, 0, 3e-3],
                                 length=0.01, material=GLASS, mass=1e-3, inertia=(1e-8, 1e-8, 1e-8),
                                 velocity=(0, 0, 0), angular_velocity=(0, 0, 0), fixed=False)),
        (sim.run, dict(duration=0.0)),
        (sim.run, dict(steps=0)),
        (sim.set_velocity, dict(k=0, velocity=(0, 0, 0), angular_velocity=(0, 0, 0))),
        (sim.set_wall_velocity, dict(w=0, velocity=(0, 0, 0))),
        (sim.contact, dict(i=0, j=1)),
        (cl.io.VTKReporter, dict(directory="unused", interval=1e-3)),
        (cl.io.EnergyCSVReporter, dict(path="unused.csv", every=10)),
        (cl.io.CheckpointReporter, dict(path="unused.npz", every=10, keep=2)),
        (cl.probe, dict(model=cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6], dt=1e-6, radius=R, mass=1e-5)),
    ]
    for cls in (cl.models.HertzMindlin, cl.models.LinearSpringDashpot, cl.models.SphereSphereContact,
                cl.models.Luding, cl.models.Ice, cl.models.ConvexRollContact, cl.models.VolumeContact):
        values = {p.name: (p.default if p.default is not None else 0.5) for p in cls.parameters}
        if cls is cl.models.LinearSpringDashpot or cls is cl.models.VolumeContact:
            values[cls.parameters[0].name] = 1e3
        calls.append((cls, values))
    return calls


_NOT_NUMBERS = {"material", "source", "model", "directory", "path"}


def test_every_numeric_argument_refuses_text_nan_and_none(running, tmp_path):
    """For every argument that takes a number, a vector or True/False: a string, a NaN and None
    (where None is not the default) each raise an InputError that names the argument, never a
    bare TypeError or ValueError from deeper down, and never pass silently."""
    problems = []
    os_cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        for func, valid in _calls(running):
            func(**valid)                                                    # the valid call works
            for arg in valid:
                if arg in _NOT_NUMBERS:
                    continue
                for bad in ("abc", math.nan, None):
                    label = f"{getattr(func, '__qualname__', func)}({arg}={bad!r})"
                    try:
                        func(**dict(valid, **{arg: bad}))
                    except cl.InputError as exc:
                        named = {"k": "sphere index", "i": "sphere index", "j": "sphere index", "w": "wall index"}
                        if named.get(arg, arg) not in str(exc) and not re.search(rf"\b{arg}\b", str(exc)):
                            problems.append(f"{label}: message does not name {arg!r}: {exc}")
                    except Exception as exc:  # noqa: BLE001 - exactly what this test looks for
                        problems.append(f"{label}: {type(exc).__name__}: {exc}")
                    else:
                        if bad is not None:
                            problems.append(f"{label}: accepted")
    finally:
        os.chdir(os_cwd)
    assert not problems, "\n".join(problems)
