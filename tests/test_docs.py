"""The documentation's examples run: docstring examples (doctest) and the example scripts."""
from __future__ import annotations

import doctest
import importlib
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("module", ["contactlab.materials", "contactlab.scene.scene", "contactlab.simulation",
                                    "contactlab.laws.hertz_mindlin", "contactlab.laws.linear_spring_dashpot",
                                    "contactlab.laws.sphere_sphere_contact", "contactlab.laws.luding",
                                    "contactlab.laws.ice", "contactlab.laws.parallel_bond", "contactlab.probe",
                                    "contactlab.laws.define", "contactlab.packing.levelset",
                                    "contactlab.packing.regions", "contactlab.packing.order"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_quickstart_example_runs(capsys):
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "contacts = " in out and "dissipated" in out


@pytest.mark.parametrize("scene", ["column_collapse.toml", "piston_compression.toml", "hopper_pour.toml",
                                   "ellipses_2d.toml"])
def test_example_scenes_are_valid(scene):
    from contactlab.io.scenefile import load_scene_file

    spec = load_scene_file(ROOT / "examples" / scene)
    sim = spec.build_simulation()
    sim.run(steps=20)
    assert sim.step == 20


def test_sphere_sphere_contact_example():
    """The spec-000 example: model 2 rebounds at the requested e = 0.7 after every impact; model 0
    with loading on k_c and unloading on k_2 = 2 k_c at e = sqrt(k_c / k_2) (energy of the two
    linear branches); the cradle passes the speed down the row."""
    ns = runpy.run_path(str(ROOT / "examples" / "sphere_sphere_contact.py"))
    results, cradle = ns["main"]()
    ratios = {name: np.array(s[1:]) / np.array(s[:-1]) for name, s in results.items()}
    (m0,) = [r for name, r in ratios.items() if name.startswith("0")]
    (m2,) = [r for name, r in ratios.items() if name.startswith("2")]
    np.testing.assert_allclose(m2, 0.7, rtol=0.01)
    np.testing.assert_allclose(m0, np.sqrt(0.5), rtol=0.005)
    assert cradle[-1] > 0.49 and np.all(np.abs(cradle[:-1]) < 0.01)


def test_cohesive_powder_example(tmp_path):
    """Luding example, smaller: the piston pushes, then adhesion holds it back and spheres cling to
    it; plasticity and adhesion dissipate; the energy balance closes; ParaView files are written."""
    ns = runpy.run_path(str(ROOT / "examples" / "cohesive_powder.py"))
    r = ns["cohesive_powder"](per_side=4, layers=5, output=tmp_path / "out")
    e = r["energy"]
    assert r["peak_push"] > 0 and r["peak_pull"] > 0 and r["stuck"] > 0
    assert e["dissipated_plastic_normal"] > 0 and e["dissipated_viscous_normal"] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]
    assert (tmp_path / "out" / "particles.pvd").exists() and (tmp_path / "out" / "contacts.pvd").exists()


def test_ice_sheet_example(tmp_path):
    """Ice example, smaller: the ball breaks bonds around the impact, the log says why, the
    energy balance closes and the bonds series is written for ParaView."""
    ns = runpy.run_path(str(ROOT / "examples" / "ice_sheet.py"))
    sim = ns["ice_sheet"](n=11, duration=4e-3, output=tmp_path / "out")
    b = sim.bonds()
    assert 0 < (~b["intact"]).sum() < len(b["i"])
    assert set(b["why"][~b["intact"]]) <= {"tension", "shear", "twisting", "bending"}
    e = sim.energy()
    assert e["dissipated_bond_breakage"] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]
    assert sim.velocities[sim.ball, 2] > -3.0          # the ball lost speed in the sheet
    pvd = (tmp_path / "out" / "bonds.pvd").read_text()
    assert pvd.count("<DataSet") > 5
    assert (tmp_path / "out" / "bonds.csv").read_text().count("\n") == len(b["i"]) + 1


def test_custom_law_tutorial(tmp_path, monkeypatch):
    """The user-law tutorial, smaller: the probe books the loop area as plastic work and plain Python
    agrees; the battery runs on the user law and on the built-in Luding; a pour runs with it."""
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    ns = runpy.run_path(str(ROOT / "examples" / "custom_law.py"))
    cycle = ns["probe_cycle"](verbose=False)
    assert cycle["plain_python_agrees"] and cycle["pull_off_force"] > 0
    assert cycle["plastic_work"] == pytest.approx(cycle["loop_area"], rel=1e-9)
    reports = ns["validate_both"](tmp_path / "validation", quick=True, verbose=False)
    assert set(reports) == {"user law", "built-in Luding"}
    for report in reports.values():
        assert not report.failed, [c.line() for c in report.failed]
        assert (Path(report.written_to) / "report.html").exists()
    run = ns["pour"](n=300, duration=0.03, verbose=False)
    e = run["energy"]
    assert run["contacts"] > 0 and e["dissipated_plastic"] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]


def test_shape_examples_run_small():
    """The hopper discharge (STL mesh) and the ellipsoids settling in a box run (small sizes): beads
    leave through the outlet once the gate is switched off; the ellipsoids lose their kinetic
    energy and the energy balance closes."""
    ns = runpy.run_path(str(ROOT / "examples" / "hopper_discharge.py"))
    sim, rate, beverloo = ns["main"](n_spheres=150, settle=0.15, discharge=0.1)
    assert (sim.positions[:, 2] < 0.020).any() and rate > 0 and beverloo > 0
    ns = runpy.run_path(str(ROOT / "examples" / "ellipsoids_in_box.py"))
    sim = ns["main"](count=16, duration=0.3)
    e = sim.energy()
    assert e["kinetic"] < 0.02 * e["dissipated"] and abs(e["balance_error"]) < 0.01 * e["dissipated"]


def test_disks_2d_example():
    """The 2-D example, smaller: the pile comes to rest, its area fraction lies below the
    hexagonal packing's pi / (2 sqrt 3) = 0.907 and above a loose random packing's, and the
    energy balance closes within 1 % of the dissipated energy."""
    ns = runpy.run_path(str(ROOT / "examples" / "disks_2d.py"))
    sim, phi = ns["settle_disks"](columns=6, rows=5, duration=0.15)
    e = sim.energy()
    assert sim.dimension == 2 and np.all(sim.positions[:, 2] == 0.0)
    assert 0.7 < phi < np.pi / (2 * np.sqrt(3))
    assert e["kinetic"] < 1e-4 * e["dissipated"]
    assert abs(e["balance_error"]) < 1e-2 * e["dissipated"]


def test_ellipses_2d_example():
    """The 2-D ellipse example, smaller: the pile comes to rest and closes its energy balance within
    1 % of the dissipated energy; it stays in the plane."""
    ns = runpy.run_path(str(ROOT / "examples" / "ellipses_2d.py"))
    sim, _ = ns["settle_ellipses"](columns=6, rows=5, duration=0.15)
    e = sim.energy()
    assert sim.dimension == 2 and np.all(sim.positions[:, 2] == 0.0) and np.all(sim.orientations[:, 1:3] == 0.0)
    assert e["kinetic"] < 1e-4 * e["dissipated"]
    assert abs(e["balance_error"]) < 1e-2 * e["dissipated"]


@pytest.mark.parametrize("page", ["two_d.md", "shapes.md", "dda.md"])
def test_python_blocks_of_the_2d_pages_run(page, capsys):
    """The Python blocks of docs/two_d.md (disks, ellipses) and docs/dda.md run as written; of docs/shapes.md, the
    2-D ellipse block (the 3-D block before it reads a mesh file and compiles other kernels)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)
    if page == "shapes.md":
        blocks = [b for b in blocks if "dimension=2" in b]
    assert blocks
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), {})
    assert capsys.readouterr().out.count("\n") >= (0 if page == "shapes.md" else 2)


def test_python_block_of_the_performance_page_runs(capsys):
    """docs/performance.md: the random-order scene is warned about, the sorted one is not."""
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "performance.md").read_text(), re.S)
    exec(compile(block, "docs/performance.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "['StorageOrderWarning']"
    dt, limit = (float(v) for v in lines[1].split()[:2])
    assert 0.0 < dt < limit


def test_python_blocks_of_the_walls_page_run(capsys, monkeypatch):
    """The Python blocks of docs/walls.md (cylinder walls, a servo wall, the triaxial example) run as
    written, from the repository's root."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "walls.md").read_text(), re.S)
    assert len(blocks) == 3
    for block in blocks:
        exec(compile(block, "docs/walls.md", "exec"), {})
    assert capsys.readouterr().out.count("\n") >= 4
