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


def _text_file(env, name, data):
    """An input file of a case, in ``inputs/`` (the rest of the temporary folder must stay empty)."""
    path = env.tmp / "inputs" / name
    path.parent.mkdir(exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


_BALL = cl.packing.regions.sphere(centre=(0, 0, 0), radius=0.01)


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
         r"rolling_friction, rolling_model; missing required parameter friction"),
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
    # --- more of the same families: every constructor and method, each kind of mistake
    Case("Material name not text", lambda e: cl.Material(density=2500.0, young=1e7, poisson=0.3, name=3), P,
         r"Material: name must be text \(str\), got 3 \(int\)"),
    Case("Material too many positional", lambda e: cl.Material(2500.0, 1e7, 0.3, "glass", 1.0), P,
         r"Material: takes at most 4 positional argument\(s\) \(density, young, poisson, name\), got 5"),
    Case("Material young as a NumPy string",
         lambda e: cl.Material(density=2500.0, young=np.str_("1e7"), poisson=0.3), P,
         r"young must be a number, got np\.str_\('1e7'\) \(str_\)"),
    Case("add_spheres positions as text",
         lambda e: e.scene.add_spheres(positions=[["0", "0", "0"]], radii=R, material=GLASS), P,
         r"positions must be numbers, got text"),
    Case("add_mesh empty file", lambda e: e.scene.add_mesh(_text_file(e, "empty.stl", ""), material=GLASS), P,
         r"mesh file '.*empty\.stl' holds no triangles \(0 vertices read as STL\): it is empty, or not a mesh"),
    Case("add_mesh binary junk named .stl",
         lambda e: e.scene.add_mesh(_text_file(e, "junk.stl", bytes(range(256)) * 2), material=GLASS), P,
         r"cannot read mesh file '.*junk\.stl' as STL \(.*\); is it a mesh file\? contactlab reads what trimesh "
         r"reads: STL"),
    Case("add_mesh a folder", lambda e: e.scene.add_mesh(e.tmp, material=GLASS), P,
         r"mesh file '.*' is a directory, not a mesh file \(STL, OBJ, PLY, \.\.\.\)"),
    Case("add_mesh source a number", lambda e: e.scene.add_mesh(5, material=GLASS), P,
         r"a mesh is a file path or a pair \(vertices \(V, 3\), faces \(F, 3\)\), got int"),
    Case("add_convex_roll negative hull radius",
         lambda e: e.scene.add_convex_roll(position=(0, 0, 0), orientation=(1.0, 0, 0, 0),
                                           hull_coefficients=[0.0, 0.0, -3e-3], length=0.01, material=GLASS,
                                           mass=1e-3, inertia=(1e-8, 1e-8, 1e-8)), P,
         r"the hull radius must be > 0 on \[-length/2, length/2\], got r\(-0\.005 m\) = -0\.003 m"),
    Case("ParallelBond misspelt parameter",
         lambda e: cl.models.ParallelBond(normal_stiffness=1e9, shear_stiffness=1e9, tensile_strength=1e6,
                                          shear_strenght=1e6, contact=cl.models.HertzMindlin(**HM)), P,
         r"ParallelBond: unknown parameter 'shear_strenght' \(did you mean 'shear_strength'\?\); allowed: "
         r"normal_stiffness, .*; missing required parameter shear_strength \(Pa: bond shear strength\)"),
    Case("ParallelBond without parameters", lambda e: cl.models.ParallelBond(), P,
         r"ParallelBond: missing required parameters normal_stiffness \(N/m\^3: bond normal stiffness per area\)"),
    Case("ConvexRollContact NaN stiffness", lambda e: cl.models.ConvexRollContact(contact_stiffness=math.nan), P,
         r"ConvexRollContact: contact_stiffness must be finite, got nan"),
    Case("Ice misspelt parameter", lambda e: cl.models.Ice(bondd="n"), P,
         r"Ice: unknown parameter 'bondd' \(did you mean 'bonded'\?\); allowed: kt_div_kn, "),
    Case("Luding misspelt per-material parameter",
         lambda e: cl.models.Luding(per_material={"glass": {"tan_phii": 0.5}}), P,
         r"Luding: per_material\['glass'\]: tan_phii cannot be given per material \(did you mean 'tan_phi'\?\)"),
    Case("SphereSphereContact impact model as text",
         lambda e: cl.models.SphereSphereContact(contact_stiffness=1e6, impact_model="1"), P,
         r"impact_model must be one of 0 \(.*\), 1 \(.*\), 2 \(.*\), got '1'"),
    Case("Contact normal law by name", lambda e: cl.models.Contact(normal="hooke"), P,
         r"Contact\(normal=\.\.\.\) must be a normal law made with @contact_law or from cl\.parts, got 'hooke'"),
    Case("parts misspelt parameter", lambda e: cl.parts.hooke(stifness=1e3), P,
         r"hooke: unknown parameter 'stifness' \(did you mean 'stiffness'\?\); allowed: stiffness"),
    Case("Simulation scene not a Scene", lambda e: cl.Simulation("scene.toml", cl.models.HertzMindlin(**HM)), P,
         r"scene must be a contactlab\.Scene, got str"),
    Case("Simulation too many positional",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), 1e-6, 1e-3), P,
         r"Simulation: takes at most 3 positional argument\(s\) \(scene, model, dt\), got 4: give the others by "
         r"name"),
    Case("Simulation negative skin", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), skin=-1e-4), P,
         r"skin must be > 0 m, got -0\.0001"),
    Case("Simulation initial overlap tolerance negative",
         lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), initial_overlap_tolerance=-0.1), P,
         r"initial_overlap_tolerance must satisfy 0 <= initial_overlap_tolerance < 1 .*got -0\.1"),
    Case("Simulation infinite dt", lambda e: cl.Simulation(e.scene, cl.models.HertzMindlin(**HM), dt=math.inf), P,
         r"dt must be finite, got inf"),
    Case("set_velocity angular velocity wrong shape", lambda e: e.sim.set_velocity(0, (0, 0, 0), (1.0, 2.0)), P,
         r"angular_velocity must be 3 numbers \(x, y, z\), got shape \(2,\)"),
    Case("set_velocity index as text", lambda e: e.sim.set_velocity("0", (0, 0, 0)), P,
         r"sphere index must be an integer, got '0'"),
    Case("set_active misspelt material", lambda e: e.sim.set_active(False, materials=("glas", "glass")), P,
         r"material 'glas' is not used in this scene \(did you mean 'glass'\?\); its materials: 'glass'"),
    Case("set_active misspelt keyword", lambda e: e.sim.set_active(False, sphres=(0, 1)), P,
         r"Simulation\.set_active: unknown argument 'sphres' \(did you mean 'spheres'\?\); allowed: active, "
         r"spheres, sphere, wall, materials"),
    Case("bond misspelt keyword", lambda e: e.sim.bond(max_gapp=1e-6), P,
         r"Simulation\.bond: unknown argument 'max_gapp' \(did you mean 'max_gap'\?\)"),
    Case("record sphere out of range", lambda e: e.sim.record("position", sphere=9), P,
         r"sphere index 9 is out of range 0\.\.1"),
    Case("record misspelt wall quantity", lambda e: e.sim.record("forse", wall=0), P,
         r"record: unknown wall quantity 'forse' \(did you mean 'force'\?\); allowed: point, velocity, force"),
    Case("record CSV path not a path", lambda e: e.sim.record("kinetic", csv=3), P,
         r"record: csv must be a path \(a str or pathlib\.Path, not empty\), got 3 \(int\)"),
    Case("contact with a wall out of range", lambda e: e.sim.contact(0, wall=4), P,
         r"wall index 4 is out of range 0\.\.0"),
    Case("add_reporter not a reporter", lambda e: e.sim.add_reporter("vtk"), P,
         r"add_reporter: reporter must be a reporter such as cl\.io\.VTKReporter\(\.\.\.\) .*got str: 'vtk'"),
    Case("add_reporter a class", lambda e: e.sim.add_reporter(cl.io.VTKReporter), P,
         r"add_reporter: reporter must be a reporter object, got the class VTKReporter: make one first"),
    Case("VTKReporter folder not a path", lambda e: cl.io.VTKReporter(3, interval=1e-3), P,
         r"VTKReporter: directory must be a path \(a str or pathlib\.Path, not empty\), got 3 \(int\)"),
    Case("VTKReporter flag as text", lambda e: cl.io.VTKReporter(e.tmp / "vtk", every=10, contacts="no"), P,
         r"VTKReporter: contacts must be True or False, got 'no' \(str\)"),
    Case("VTKReporter misspelt keyword", lambda e: cl.io.VTKReporter(e.tmp / "vtk", intervall=1e-3), P,
         r"VTKReporter: unknown argument 'intervall' \(did you mean 'interval'\?\)"),
    Case("EnergyCSVReporter zero every", lambda e: cl.io.EnergyCSVReporter(e.tmp / "e.csv", every=0), P,
         r"EnergyCSVReporter: every must be a positive integer \(steps\), got 0"),
    Case("CheckpointReporter path None", lambda e: cl.io.CheckpointReporter(None, every=10), P,
         r"CheckpointReporter: path must be a path \(a str or pathlib\.Path, not empty\), got None"),
    Case("CheckpointReporter path a folder",
         lambda e: e.sim.add_reporter(cl.io.CheckpointReporter(_text_file(e, "f", "").parent, every=10)), cl.OutputError,
         r"CheckpointReporter: path '.*inputs' is a folder; give the checkpoint's file name, e\.g\. "
         r"'.*inputs/checkpoint\.npz'"),
    Case("CheckpointReporter infinite interval",
         lambda e: cl.io.CheckpointReporter(e.tmp / "c.npz", interval=math.inf), P,
         r"CheckpointReporter: interval must be finite, got inf"),
    Case("probe material by name",
         lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6], dt=1e-6, material="glass"), P,
         r"material must be a contactlab\.Material, got str: 'glass'"),
    Case("probe partner radius as text",
         lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6], dt=1e-6, partner_radius="1e-3"), P,
         r"partner_radius must be a number, got '1e-3' \(str\)"),
    Case("probe overlap as text", lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=["0", "1e-6"], dt=1e-6),
         P, r"overlap must be numbers, got text"),
    Case("probe misspelt keyword",
         lambda e: cl.probe(cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6], dt=1e-6, radios=1e-3), P,
         r"probe: unknown argument 'radios' \(did you mean 'radius'\?\)"),
    Case("load_checkpoint of a folder", lambda e: cl.Simulation.load_checkpoint(e.tmp), cl.CheckpointError,
         r"checkpoint '.*' is a folder, not a checkpoint file"),
    Case("load_checkpoint path not a path", lambda e: cl.Simulation.load_checkpoint(3), P,
         r"load_checkpoint: path must be a path \(a str or pathlib\.Path, not empty\), got 3 \(int\)"),
    Case("relax_into misspelt keyword",
         lambda e: cl.packing.relax_into(_BALL, np.zeros((1, 3)), R, iteration=5), P,
         r"relax_into: unknown argument 'iteration' \(did you mean 'iterations'\?\)"),
    Case("relax_into flag as text", lambda e: cl.packing.relax_into(_BALL, np.zeros((1, 3)), R, inside="no"), P,
         r"inside must be True or False, got 'no' \(str\)"),
    Case("relax_into region by name", lambda e: cl.packing.relax_into("ball", np.zeros((1, 3)), R), P,
         r"region must be a contactlab\.packing\.regions region or a callable f\(points\) -> values"),
    Case("fill_region volume fraction too high",
         lambda e: cl.packing.fill_region(_BALL, ((-0.01,) * 3, (0.01,) * 3), R, volume_fraction=0.9), P,
         r"volume_fraction must be <= 0\.74 \(the densest sphere packing is pi/sqrt\(18\) = 0\.7405"),
    Case("region with the US spelling", lambda e: cl.packing.regions.sphere(center=(0, 0, 0), radius=0.01), P,
         r"sphere: unknown argument 'center' \(did you mean 'centre'\?\)"),
    Case("validate misspelt check group",
         lambda e: cl.validate(cl.models.HertzMindlin(**HM), groups=["symetry"]), P,
         r"unknown check group\(s\) 'symetry' \(did you mean 'symmetry'\?\); groups: hysteresis, "),
    Case("fill beyond random sequential addition",
         lambda e: e.scene.fill(cl.packing.regions.box((0, 0, 0), (0.01, 0.01, 0.01)),
                                cl.distributions.Uniform(1e-3, 1.001e-3), GLASS, packing_fraction=0.45, seed=1,
                                max_attempts=500), P,
         r"random sequential addition placed \d+ of \d+ particles \(packing fraction 0\.\d+ of the requested 0\.450\)"),
    Case("fill the whole domain",
         lambda e: e.scene.fill(cl.measure.domain(), cl.distributions.Uniform(1e-3, 2e-3), GLASS, count=3), P,
         r"fill needs a bounded region"),
    Case("measure in a torus",
         lambda e: cl.measure.stress(e.sim, cl.packing.regions.torus((0, 0, 0), 0.01, 0.002)), P,
         r"region must be cl\.packing\.regions\.box\(\.\.\.\), sphere\(\.\.\.\) or cylinder\(\.\.\.\) \(regions with an exact volume\)"),
    Case("stress weighting misspelt", lambda e: cl.measure.stress(e.sim, weighting="centers"), P,
         r"weighting must be one of 'volume', 'centre', got 'centers' \(did you mean 'centre'\?\)"),
    Case("sieve curve in percent",
         lambda e: cl.distributions.Sieve(sizes=[1e-3, 2e-3], passing=[0, 100]), P,
         r"passing must rise from 0 at the smallest size to 1 at the largest \(fractions, not percent"),
    Case("normal sizes below zero", lambda e: cl.distributions.Normal(mean=1e-3, std=0.5e-3), P,
         r"the default lower bound mean - 3 std = -0\.0005 m is not positive; give d_min > 0"),
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
    written = [p.name for p in tmp_path.iterdir() if p.name != "inputs"]   # inputs: the case's own files
    assert not written, f"a bad call wrote {written}"


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
    Case("automatic dt where nothing can touch",
         ("[[sphere]]\nposition = [0.0, 0.0, 0.0036]\nradius = 0.001\nmaterial = \"glass\"\n\n[[wall]]\n"
          "point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\n", ""), S,
         r"\[simulation\] dt = \"auto\" \(the default\) derives the step from the contacts that can occur, and none "
         r"can in this scene"),
    Case("bonds for a model without bonds", ("[output]", "[bonds]\nmax_gap = 1e-6\n\n[output]"), S,
         r"\[bonds\] the model HertzMindlin has no bonds"),
    Case("file not UTF-8", ("duration = 0.001", "duration = 0.001\n# caf\udce9"), S,
         r"not valid TOML: a scene file is UTF-8 text; byte 0xe9 at line 5 is not"),
    Case("key given twice", ("friction = 0.5", "friction = 0.5\nfriction = 0.6"), S,
         r"not valid TOML: Cannot overwrite a value \(at line \d+, column \d+\)"),
    Case("misspelt simulation key", ("duration = 0.001", "duration = 0.001\nmax_overlapp = 0.2"), S,
         r"\[simulation\] unknown key 'max_overlapp' \(did you mean 'max_overlap'\?\); allowed: allow_long_run, dimension, dt, duration, "),
    Case("misspelt material key", ("young = 1e7", "youngs = 1e7"), S,
         r"\[materials\.glass\] unknown key 'youngs' \(did you mean 'young'\?\); allowed: density, poisson, young"),
    Case("material without young", ("young = 1e7\n", ""), S,
         r"\[materials\.glass\] missing required key\(s\) 'young'"),
    Case("model without a required parameter", ("friction = 0.5\n", ""), S,
         r"\[model\] missing required key\(s\) 'friction'"),
    Case("model parameter as text", ("friction = 0.5", "friction = \"high\""), S,
         r"\[model\] HertzMindlin: friction must be a number, got 'high' \(str\)"),
    Case("model given as a value", (("[model]\ntype = \"HertzMindlin\"\nrestitution = 0.5\nfriction = 0.5\n", ""),
                                    ("[simulation]", "model = \"HertzMindlin\"\n\n[simulation]")), S,
         r"\[model\] must be a table \(\[model\] with type = \"\.\.\.\" and the parameters\), got str: "
         r"'HertzMindlin'"),
    Case("dt misspelt auto", ("duration = 0.001", "duration = 0.001\ndt = \"Auto\""), S,
         r"\[simulation\] dt must be a number of seconds or \"auto\", got 'Auto' \(did you mean 'auto'\?\)"),
    Case("negative skin", ("duration = 0.001", "duration = 0.001\nskin = -1e-4"), S,
         r"\[simulation\] skin must be > 0 m, got -0\.0001"),
    Case("gravity as text", ("gravity = [0.0, 0.0, -9.81]", "gravity = \"down\""), S,
         r"\[simulation\] gravity must be numbers, got text: 'down'"),
    Case("fixed as text", ("radius = 0.001\nmaterial = \"glass\"\n\n[[wall]]",
                           "radius = 0.001\nmaterial = \"glass\"\nfixed = \"yes\"\n\n[[wall]]"), S,
         r"\[sphere #2\] fixed must be True or False, got 'yes' \(str\)"),
    Case("misspelt output key", ("vtk_interval = 0.0005", "vtk_intervall = 0.0005"), S,
         r"\[output\] unknown key 'vtk_intervall' \(did you mean 'vtk_interval'\?\)"),
    Case("infinite output interval", ("vtk_interval = 0.0005", "vtk_interval = inf"), S,
         r"\[output\] vtk_interval must be a positive number of seconds, got inf"),
    Case("misspelt mesh key", ("[model]", "[[mesh]]\nsorce = \"notes.stl\"\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[mesh #1\] unknown key 'sorce' \(did you mean 'source'\?\)"),
    Case("mesh source a number", ("[model]", "[[mesh]]\nsource = 3\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[mesh #1\] source must be the mesh file's name \(text, relative to the scene file\), got 3"),
    Case("empty mesh file", ("[model]", "[[mesh]]\nsource = \"empty.stl\"\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[mesh #1\] mesh file '.*empty\.stl' holds no triangles"),
    Case("binary junk as a mesh", ("[model]", "[[mesh]]\nsource = \"junk.stl\"\nmaterial = \"glass\"\n\n[model]"),
         S, r"\[mesh #1\] cannot read mesh file '.*junk\.stl' as STL \(.*\); is it a mesh file\?"),
    Case("sphere CSV without its columns",
         ("[model]", "[[spheres]]\nfile = \"notes.csv\"\nmaterial = \"glass\"\n\n[model]"), S,
         r"\[spheres #1\] '.*notes\.csv' needs a header with columns x,y,z,r \(and optionally vx,vy,vz\); found"),
    Case("spheres with a file and positions",
         ("[model]", "[[spheres]]\nfile = \"notes.csv\"\npositions = [[0.0, 0.0, 0.01]]\nmaterial = \"glass\"\n\n"
                     "[model]"), S,
         r"\[spheres #1\] give either 'file' or 'positions'/'radii', not both"),
    Case("fill_box misspelt key",
         ("[model]", "[[fill_box]]\nlower = [0.0, 0.0, 0.01]\nupper = [0.01, 0.01, 0.02]\nradius = 0.001\n"
                     "material = \"glass\"\nspacin = 0.003\n\n[model]"), S,
         r"\[fill_box #1\] unknown key 'spacin' \(did you mean 'spacing'\?\)"),
]


@pytest.mark.parametrize("case", SCENE_FILE, ids=[c.name for c in SCENE_FILE])
def test_scene_file(case, tmp_path, capsys):
    text = GOOD
    for old, new in (case.call if isinstance(case.call[0], tuple) else (case.call,)):   # one edit, or several
        assert old in text, f"the edit of case {case.name!r} does not apply"
        text = text.replace(old, new, 1)
    (tmp_path / "notes.stl").write_text("these are notes, not a mesh\n")
    (tmp_path / "notes.csv").write_text("these are notes,not spheres\n1,2\n")
    (tmp_path / "empty.stl").write_bytes(b"")
    (tmp_path / "junk.stl").write_bytes(bytes(range(256)) * 2)
    path = tmp_path / "scene.toml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))  # "\udce9": the byte 0xe9
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
    """docs/errors.md lists every case of this file, with its message and how to fix it (the page
    users read is the catalogue tested here)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    rows = {m["name"]: m["fix"].strip() for m in
            re.finditer(r"^\| (?P<name>[^|`]+?) \| `[^`]+` \| (?P<fix>[^\n]*) \|$", doc, flags=re.MULTILINE)}
    missing = [c.name for c in API + SCENE_FILE if c.name not in rows]
    assert not missing, f"docs/errors.md does not list (| input | `exception: message` | how to fix |): {missing}"
    no_fix = [c.name for c in API + SCENE_FILE if not rows[c.name]]
    assert not no_fix, f"docs/errors.md says no fix for: {no_fix}"


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
        (cl.io.VTKReporter, dict(directory="unused", interval=1e-3, contacts=True, walls=True, bonds=True,
                                 resume=False)),
        (cl.io.EnergyCSVReporter, dict(path="unused.csv", every=10, resume=False)),
        (cl.io.CheckpointReporter, dict(path="unused.npz", every=10, keep=2)),
        (cl.probe, dict(model=cl.models.HertzMindlin(**HM), overlap=[0.0, 1e-6], dt=1e-6, radius=R, mass=1e-5,
                        partner_radius=R, partner_mass=1e-5, tangential=[0.0, 1e-7], chain=True)),
        (cl.packing.relax_into, dict(region=_BALL, positions=[[0, 0, 0], [1e-3, 0, 0]], radii=R, inside=True,
                                     iterations=5, tolerance=1e-3, separate=True, seed=1)),
    ]
    box = cl.packing.regions.box((0, 0, 0), (0.01, 0.01, 0.01))
    # the streams on a simulation of their own (the running one is shared with other tests)
    streams = cl.Simulation(_two_spheres_and_a_floor(), cl.models.HertzMindlin(**HM))
    calls += [
        (s.fill, dict(region=box, distribution=cl.distributions.Uniform(1e-3, 2e-3), material=GLASS, count=3, seed=1,
                      method="random", max_attempts=100, velocity=(0, 0, 0))),
        (cl.distributions.Uniform, dict(d_min=1e-3, d_max=2e-3, basis="number")),
        (cl.distributions.Normal, dict(mean=2e-3, std=0.2e-3, d_min=1e-3, d_max=3e-3, basis="mass")),
        (cl.distributions.LogNormal, dict(median=2e-3, sigma=0.2, d_min=1e-3, d_max=3e-3, basis="number")),
        (cl.distributions.Sieve, dict(sizes=[1e-3, 2e-3], passing=[0.0, 1.0], basis="mass", interpolation="log")),
        (cl.measure.Gaussian, dict(width=1e-3, cutoff=3.0)),
        (cl.measure.Lucy, dict(cutoff=1e-3)),
        (streams.add_inlet, dict(region=box, material=GLASS, rate=10.0, radius=R, velocity=(0, 0, 0), every=10,
                                 start=0.0, stop=1.0, seed=1, attempts=5, max_backlog=3)),
        (streams.add_inlet, dict(region=box, material=GLASS, mass_rate=1e-3,
                                 distribution=cl.distributions.Uniform(1e-3, 2e-3))),
        (streams.add_outlet, dict(region=box, every=10)),
        (cl.measure.stress, dict(sim=sim, region=box, weighting="volume", kinetic="full")),
        (cl.measure.coordination, dict(sim=sim, region=box, weighting="centre", walls=True, min_contacts=2,
                                       iterative=False)),
        (cl.measure.coarse_grain, dict(sim=sim, lower=(0, 0, 0), upper=(1e-2, 1e-2, 1e-2), shape=(2, 2, 2),
                                       kernel=cl.measure.Lucy(cutoff=2e-3), contacts=True)),
    ]
    for cls in (cl.models.HertzMindlin, cl.models.LinearSpringDashpot, cl.models.SphereSphereContact,
                cl.models.Luding, cl.models.Ice, cl.models.ConvexRollContact, cl.models.VolumeContact):
        values = {p.name: (p.default if p.default is not None else 0.5) for p in cls.parameters}
        if cls is cl.models.LinearSpringDashpot or cls is cl.models.VolumeContact:
            values[cls.parameters[0].name] = 1e3
        calls.append((cls, values))
    return calls


_NOT_NUMBERS = {"material", "source", "model", "directory", "path", "region", "distribution", "sim", "kernel"}


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
