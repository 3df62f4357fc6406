"""Values no scene means, and runs that cannot end (issue 43, sections 2 and 3).

One magnitude check per kind of quantity (:mod:`contactlab.magnitudes`, by unit) and one bound on
a run's length (:mod:`contactlab.run_length`) hold at every entry point: the API's builders, the
scene files run from the command line, the DDA.  Each case below is refused with a named error
whose message names the value and what is allowed, before any step or any output; the causes a
blow-up names are those its numbers support (an impact too fast for the step, a body too fast to
follow), not the contact law.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import contactlab as cl
from contactlab.cli import main as cli_main
from contactlab.magnitudes import RANGES
from contactlab.run_length import LONGEST_RUN_SECONDS
from helpers.scene_text import TWO_BEADS_ON_A_FLOOR

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3
HM = dict(restitution=0.5, friction=0.5)
P, T = cl.InputError, cl.RunTooLongError


@dataclass(frozen=True)
class Case:
    name: str
    call: Callable
    error: type
    message: str


def _scene(*, gravity=(0.0, 0.0, -9.81), velocity=(0.0, 0.0, 0.0), material=GLASS) -> cl.Scene:
    """One sphere resting just above a floor."""
    scene = cl.Scene(gravity=gravity)
    scene.add_sphere(position=(0, 0, 1.05 * R), radius=R, material=material, velocity=velocity)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=material)
    return scene


def _sim(**kw) -> cl.Simulation:
    return cl.Simulation(_scene(), cl.models.HertzMindlin(**HM), **kw)


def _box(lower=(0, 0, 0), upper=(1, 1, 1)):
    return cl.packing.regions.box(lower, upper)


MAGNITUDES = [
    Case("radius 1e300", lambda: cl.Scene().add_sphere(position=(0, 0, 0), radius=1e300, material=GLASS), P,
         r"radius = 1e\+300 m is outside the range allowed for a length.*\(1e-10 to 1e\+07 m\)"),
    Case("radius 1e-300", lambda: cl.Scene().add_sphere(position=(0, 0, 0), radius=1e-300, material=GLASS), P,
         r"radius = 1e-300 m is outside the range allowed for a length"),
    Case("radii with one 1e-300", lambda: cl.Scene().add_spheres(np.zeros((2, 3)) + [[0, 0, 0], [0, 0, 1]],
                                                                  [1e-3, 1e-300], GLASS), P,
         r"radii\[1\] = 1e-300 m is outside the range"),
    Case("position 1e300", lambda: cl.Scene().add_sphere(position=(1e300, 0, 0), radius=R, material=GLASS), P,
         r"position\[0\] = 1e\+300 m is outside the range allowed for a length.*\(at most 1e\+07 m in size\)"),
    Case("positions 1e300", lambda: cl.Scene().add_spheres([[0, 0, 0], [0, 0, -1e300]], [R, R], GLASS), P,
         r"positions\[1, 2\] = -1e\+300 m is outside"),
    Case("velocity 1e300", lambda: cl.Scene().add_sphere(position=(0, 0, 0), radius=R, material=GLASS,
                                                         velocity=(0, 1e300, 0)), P,
         r"velocity\[1\] = 1e\+300 m/s is outside the range allowed for a speed"),
    Case("angular velocity 1e300", lambda: cl.Scene().add_sphere(position=(0, 0, 0), radius=R, material=GLASS,
                                                                 angular_velocity=(0, 0, 1e300)), P,
         r"angular_velocity\[2\] = 1e\+300 rad/s is outside the range allowed for an angular velocity"),
    Case("gravity 1e300", lambda: cl.Scene(gravity=(0, 0, -1e300)), P,
         r"gravity\[2\] = -1e\+300 m/s\^2 is outside the range allowed for an acceleration"),
    Case("set_velocity 1e300", lambda: _sim().set_velocity(0, (0, 0, 1e300)), P,
         r"velocity\[2\] = 1e\+300 m/s is outside the range allowed for a speed"),
    Case("set_wall_velocity 1e300", lambda: _sim().set_wall_velocity(0, (1e300, 0, 0)), P,
         r"velocity\[0\] = 1e\+300 m/s is outside"),
    Case("set_velocity spin 1e300", lambda: _sim().set_velocity(0, (0, 0, 0), (0, 1e300, 0)), P,
         r"angular_velocity\[1\] = 1e\+300 rad/s is outside"),
    Case("density 1e300", lambda: cl.Material(density=1e300, young=1e7, poisson=0.3), P,
         r"density = 1e\+300 kg/m\^3 is outside the range allowed for a density"),
    Case("density 1e-300", lambda: cl.Material(density=1e-300, young=1e7, poisson=0.3), P,
         r"density = 1e-300 kg/m\^3 is outside"),
    Case("Young's modulus 1e300", lambda: cl.Material(density=2500.0, young=1e300, poisson=0.3), P,
         r"young = 1e\+300 Pa is outside the range allowed for a modulus"),
    Case("stiffness 1e300", lambda: cl.models.LinearSpringDashpot(stiffness=1e300, **HM), P,
         r"LinearSpringDashpot: stiffness = 1e\+300 N/m is outside the range allowed for a contact stiffness"),
    Case("per-material stiffness out of range names the model and material",
         lambda: cl.models.HertzMindlin(**HM, per_material={"glass": {"friction": -1.0}}), P,
         r"HertzMindlin: per_material\['glass'\]: friction must satisfy 0 <= friction, got -1\.0"),
    Case("wall point 1e300", lambda: cl.Scene().add_wall(point=(0, 0, 1e300), normal=(0, 0, 1), material=GLASS), P,
         r"wall point\[2\] = 1e\+300 m is outside"),
    Case("cylinder radius 1e300", lambda: cl.Scene().add_cylinder_wall((0, 0, 0), (0, 0, 1), 1e300, GLASS), P,
         r"radius = 1e\+300 m is outside"),
    Case("ellipsoid semi-axis 1e-300", lambda: cl.Scene().add_ellipsoid(position=(0, 0, 0), semi_axes=(1e-3, 1e-3, 1e-300),
                                                                        material=GLASS), P,
         r"semi_axes\[2\] = 1e-300 m is outside"),
    Case("disk radius 1e300", lambda: cl.Scene(dimension=2).add_disk(position=(0, 0), radius=1e300, material=GLASS), P,
         r"radius = 1e\+300 m is outside"),
    Case("disk velocity 1e300", lambda: cl.Scene(dimension=2).add_disk(position=(0, 0), radius=R, material=GLASS,
                                                                       velocity=(1e300, 0)), P,
         r"velocity\[0\] = 1e\+300 m/s is outside"),
    Case("fill_box without max_count beyond memory", lambda: cl.Scene().fill_box((0, 0, 0), (10, 10, 10), 1e-4, GLASS),
         P, r"a lattice of spacing 0\.00022 m .* would make 9\.39\d*e\+13 bodies, about .* GiB .* more than this "
            r"machine's .* GiB of memory; give max_count="),
    Case("fill beyond memory", lambda: cl.Scene().fill(_box(upper=(10, 10, 10)),
                                                       cl.distributions.Uniform(d_min=1e-4, d_max=2e-4), GLASS,
                                                       packing_fraction=0.3), P,
         r"filling 1000 m\^3 at packing fraction 0\.3 would make .*e\+14 bodies"),
    Case("a material the scene does not have in per_material",
         lambda: cl.Simulation(_scene(), cl.models.HertzMindlin(**HM, per_material={"glas": {"friction": 0.1}})), P,
         r"HertzMindlin: per_material gives values for the material 'glas', which the scene does not have "
         r"\(did you mean 'glass'\?\); its materials: 'glass'"),
    Case("two different materials of one name",
         lambda: _scene().add_sphere(position=(0, 0, 0.01), radius=R,
                                     material=cl.Material(density=2600.0, young=1e7, poisson=0.3, name="glass")), P,
         r"two different materials are both named 'glass': the scene has .*2500.* the one added is .*2600"),
    Case("overlap tolerance that lets centres meet",
         lambda: cl.Simulation(_scene(), cl.models.HertzMindlin(**HM), initial_overlap_tolerance=2.5), P,
         r"initial_overlap_tolerance must satisfy 0 <= initial_overlap_tolerance < 1 .*no contact normal.*got 2\.5"),
]


RUNS = [
    Case("steps 1e300", lambda: _sim().run(steps=1e300), T,
         r"the run asked for \(1e\+300 steps\) would take .* years of wall time even at .* steps/s.*more than the "
         r"7 days accepted; check steps; allow_long_run=True runs it anyway"),
    Case("duration 1e300", lambda: _sim().run(duration=1e300), T,
         r"the run asked for \(duration=1e\+300 s at dt=.* s, .* steps\) would take .* years"),
    Case("steps beyond a week at the fastest step", lambda: _sim().run(steps=int(1e14)), T,
         r"\(1e\+14 steps\) would take 24\.\d days"),
    Case("dt 1e-300", lambda: _sim(dt=1e-300), T,
         r"dt=1e-300 s is .* of the stability limit .* below the 1e-15 of it accepted"),
    Case("stiff material: a run of a second at the step it needs",
         lambda: cl.Simulation(_scene(material=cl.Material(density=2500.0, young=1e29, poisson=0.3)),
                               cl.models.HertzMindlin(**HM)).run(duration=1.0), T,
         r"the run asked for \(duration=1\.0 s at dt=.*e-1\d s"),
    Case("DDA duration 1e300", lambda: cl.DDA(_disks(), dt=1e-3).run(1e300), T,
         r"the run asked for \(duration=1e\+300 s at dt=0\.001 s"),
    Case("a body faster than its radius per step",
         lambda: cl.Simulation(_scene(velocity=(0, 0, -5e3)), cl.models.HertzMindlin(**HM)).run(duration=1e-3), P,
         r"sphere 0 moves at 5000 m/s, .* m in one step of dt=.* more than its radius 0\.001 m: it can pass through"),
]


def _disks() -> cl.Scene:
    scene = cl.Scene(dimension=2)
    scene.add_disk(position=(0, 1.5 * R), radius=R, material=GLASS)
    scene.add_wall(point=(0, 0), normal=(0, 1), material=GLASS)
    return scene


def test_every_unit_with_a_range_is_named_in_the_docs():
    text = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    for unit in RANGES:
        assert f"`{unit}`" in text, unit


@pytest.mark.parametrize("case", MAGNITUDES + RUNS, ids=[c.name for c in MAGNITUDES + RUNS])
def test_refused_with_the_value_and_what_is_allowed(case):
    with pytest.raises(case.error, match=case.message):
        case.call()


def test_values_at_the_edges_of_the_ranges_are_accepted():
    """The ranges are wide: rigid walls (1e25 Pa), immobile bodies (1e18 kg/m^3), a micron bead,
    a 100 m boulder, a centrifuge's 1e5 m/s^2 all build."""
    wall = cl.Material(density=7800.0, young=1e25, poisson=0.3, name="rigid")
    heavy = cl.Material(density=1e18, young=1e7, poisson=0.3, name="immobile")
    scene = cl.Scene(gravity=(0, 0, -1e5))
    scene.add_sphere(position=(0, 0, 2e-6), radius=1e-6, material=GLASS)
    scene.add_sphere(position=(0, 0, 1000.0), radius=100.0, material=heavy)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=wall)
    assert scene.n_bodies == 2


def test_a_run_too_long_at_the_measured_rate_stops_after_a_second_and_can_go_on():
    """2e13 steps of one sphere pass the up-front bound (4.9 days at the fastest possible step,
    2e-8 s + 1e-9 s a body) but not the measured rate (a one-sphere step takes ~1e-7 s or more with
    its share of the chunks' Python: 23 days and more): the run stops after about a second of
    stepping, at a state that runs on.  (1e12 steps, at a microsecond a step, were weeks; the
    engine now runs them in days.)"""
    sim = _sim()
    start = time.perf_counter()
    with pytest.raises(T, match=r"would take .* more of wall time at the measured .* s a step .* it stopped after "
                                r"\d+ steps, at a state that can be saved or run on"):
        sim.run(steps=int(2e13))
    assert time.perf_counter() - start < 30.0
    stopped = sim.step
    assert stopped > 0 and np.all(np.isfinite(sim.positions))
    sim.run(steps=100)
    assert sim.step == stopped + 100
    # and once the rate is known, the next long run is refused before its first step
    with pytest.raises(T, match=r"at the .* s a step this simulation took so far"):
        sim.run(steps=int(2e13))
    assert sim.step == stopped + 100
    assert LONGEST_RUN_SECONDS == 7 * 24 * 3600.0


def test_allow_long_run_insists():
    sim = _sim(dt=1e-21, allow_long_run=True)       # below 1e-15 of the limit (4e-5 s): accepted when insisted
    sim.run(steps=10, allow_long_run=True)
    assert sim.step == 10


def test_an_impact_faster_than_the_step_resolves_is_named_as_such():
    """A 50 m/s impact at dt=None: the sphere closes ~0.6 mm in one step, six times the overlap the
    guard allows.  The cause named is the impact speed and where it comes from (the velocity the
    scene gave: no gravity), with the step that resolves it; not the contact law."""
    sim = cl.Simulation(_scene(gravity=(0, 0, 0), velocity=(0, 0, -50.0)), cl.models.HertzMindlin(**HM))
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(duration=1e-3)
    err = info.value
    assert err.cause == "impact_speed"
    assert err.details["travel_per_step"] > sim.max_overlap * R
    text = str(err)
    assert "the velocities the scene started with" in text and "dt <= " in text and "validate" not in text
    resolving = float(re.search(r"dt <= ([0-9.e+-]+) s", text).group(1))
    assert resolving < 0.1 * sim.max_overlap * R / 40.0       # ten steps at the speed (>= 40 m/s) to the guard


def test_a_body_accelerated_past_its_radius_per_step_stops_the_run():
    """Two spheres far apart falling under 1e6 m/s^2 (within the range) reach ~1e5 m/s: at the
    run monitor's check they move more than their radius per step, and the run stops with cause
    too_fast instead of letting them pass through what they meet."""
    scene = cl.Scene(gravity=(0, 0, -1e6))
    scene.add_sphere(position=(0, 0, 0), radius=R, material=GLASS)
    scene.add_sphere(position=(0.1, 0, 0), radius=R, material=GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(**HM))
    with pytest.raises(cl.SimulationBlowUp) as info:
        sim.run(steps=20000)
    assert info.value.cause == "too_fast"
    assert "more than its radius" in str(info.value)
    assert sim.step <= 10000


# ------------------------------------------------------------------------------------------- scene files
SCENE_FILE = [
    Case("scene file radius 1e300", ("radius = 0.001\nmaterial = \"glass\"\n\n[[wall]]",
                                     "radius = 1e300\nmaterial = \"glass\"\n\n[[wall]]"), P,
         r"\[sphere #2\] radius = 1e\+300 m is outside the range"),
    Case("scene file duration 1e300", ("duration = 0.001", "duration = 1e300"), T,
         r"the run asked for \(duration=1e\+300 s"),
    Case("scene file dt 1e-300", ("duration = 0.001", "duration = 0.001\ndt = 1e-300"), T,
         r"\[simulation\] dt=1e-300 s is .* of the stability limit"),
    Case("scene file young 1e300", ("young = 1e7", "young = 1e300"), P, r"young = 1e\+300 Pa is outside"),
    Case("scene file per_material for a material it lacks",
         ("friction = 0.5", "friction = 0.5\nper_material = { glas = { friction = 0.1 } }"), P,
         r"per_material gives values for the material 'glas'.*did you mean 'glass'"),
    Case("scene file fill_box without max_count",
         ("[model]", "[[fill_box]]\nlower = [0.0, 0.0, 0.0]\nupper = [10.0, 10.0, 10.0]\nradius = 1e-4\n"
                     "material = \"glass\"\n\n[model]"), P, r"would make .* bodies, about .* GiB"),
]


@pytest.mark.parametrize("case", SCENE_FILE, ids=[c.name for c in SCENE_FILE])
def test_scene_file_run_from_the_command_line(case, tmp_path, capsys):
    old, new = case.call
    assert old in TWO_BEADS_ON_A_FLOOR
    path = tmp_path / "scene.toml"
    path.write_text(TWO_BEADS_ON_A_FLOOR.replace(old, new, 1))
    out = tmp_path / "out"
    code = cli_main(["run", str(path), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0
    assert re.search(case.message, err), err
    assert "Traceback" not in err
    assert not out.exists() or not any(out.iterdir()), "a refused scene file left output behind"


def test_an_inlet_into_an_empty_container_gets_its_step_at_dt_none():
    """A container holding nothing that can move (a fixed bead, a floor) has no contact that can
    occur and no step at dt=None; an inlet brings contacts that can occur, and the step is chosen
    from them (an inlet of smaller spheres later chooses it again, smaller, instead of refusing)."""
    scene = cl.Scene()
    scene.add_sphere(position=(0.05, 0, R), radius=R, material=GLASS, fixed=True)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(**HM))
    assert sim.dt is None
    sim.add_inlet(_box((-0.01, -0.01, 0.01), (0.01, 0.01, 0.02)), GLASS, rate=1000.0, radius=R)
    assert sim.dt is not None and sim.dt <= sim.stability_limit
    first = sim.dt
    sim.add_inlet(_box((-0.01, -0.01, 0.03), (0.01, 0.01, 0.04)), GLASS, rate=1000.0, radius=R / 4)
    assert sim.dt < first and sim.dt <= sim.stability_limit
    sim.run(duration=0.01)
    assert sim.model.n_bodies > 1


def test_per_material_for_a_material_of_other_scenes_is_said_not_refused():
    """A model made for several scenes may name a material this one lacks (a platen, in the
    validation battery's scenes): not a misspelling of one it has, so it is said in a warning,
    not refused, and the run goes on with the model's own values."""
    model = cl.models.HertzMindlin(**HM, per_material={"platen": {"friction": 0.0}})
    with pytest.warns(UserWarning, match=r"per_material gives values for the material 'platen', which this scene "
                                         r"does not have \(its materials: 'glass'\); they are not used here"):
        sim = cl.Simulation(_scene(), model)
    sim.run(steps=10)
    assert sim.step == 10


def test_the_command_line_insists_with_allow_long_run(tmp_path, capsys):
    """A dt far below the limit is refused by `contactlab run` unless --allow-long-run (then the
    ten steps of 1e-21 s run), and the flag is named in the refusal."""
    path = tmp_path / "scene.toml"
    path.write_text(TWO_BEADS_ON_A_FLOOR.replace("duration = 0.001", "duration = 1e-20\ndt = 1e-21", 1))
    assert cli_main(["run", str(path), "--out", str(tmp_path / "a"), "--quiet", "--no-vtk"]) != 0
    assert "--allow-long-run" in capsys.readouterr().err
    assert cli_main(["run", str(path), "--out", str(tmp_path / "b"), "--quiet", "--no-vtk", "--allow-long-run"]) == 0
    assert (tmp_path / "b" / "checkpoint.npz").is_file()
