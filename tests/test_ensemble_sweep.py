"""Scene-file sweeps (overrides, SceneFile, ``contactlab sweep``) and the built-in measures.

References: exact geometry for the measures (a cone of bodies whose surface angle is known, a
cubic lattice whose solid fraction is pi/6), the energy of the impact's closed form (kinetic
energy (e v)^2 m/2 after the bounce, the rest dissipated), the scene file's own values for the
overrides.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import contactlab as cl
from contactlab.cli import main
from contactlab.ensemble.builtin_measures import bulk_density_of, surface_angle
from contactlab.io.scenefile import load_scene_file
from helpers import ensemble_members as em

ROOT = Path(__file__).resolve().parent.parent
COLUMN = ROOT / "examples" / "column_collapse.toml"

SMALL_BED = """
[simulation]
gravity = [0.0, 0.0, -9.81]
duration = 0.002

[materials.glass]
density = 2500.0
young = 1e7
poisson = 0.3

[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.5

[[fill_box]]
lower = [0.0, 0.0, 0.0]
upper = [0.008, 0.008, 0.008]
radius = 1e-3
jitter = 0.5
seed = 7
material = "glass"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
"""


# ---------------------------------------------------------------- overrides
def test_overrides_replace_the_files_values():
    spec = load_scene_file(COLUMN, overrides={"model.friction": 0.3, "model.rolling_friction": 0.1,
                                              "simulation.duration": 0.05, "materials.glass.young": 2e7,
                                              "wall.2.normal": [0.0, 1.0, 0.0]})
    assert spec.model.friction == 0.3 and spec.model.rolling_friction == 0.1 and spec.duration == 0.05
    glass = next(m for m in spec.scene.materials if m.name == "glass")
    assert glass.young == 2e7
    plain = load_scene_file(COLUMN)
    assert plain.model.friction == 0.5 and plain.duration == 0.4   # the file's own values, untouched


@pytest.mark.parametrize("overrides, match", [
    ({"wall.point": [0, 0, 0]}, r"5 \[\[wall\]\] tables; say which, e.g. wall.1.point"),
    ({"wall.9.point": [0, 0, 0]}, r"9 is not one of 1..5"),
    ({"materials.sand.young": 1e7}, r"no 'materials.sand' in the file"),
    ({"modle.friction": 0.3}, r"no table 'modle' \(did you mean 'model'\?\)"),
    ({"model.fricton": 0.3}, r"unknown key 'fricton' \(did you mean 'friction'\?\)"),
    ({"model.friction": "high"}, r"friction"),
    ({"model..friction": 0.3}, r"dotted key"),
])
def test_bad_overrides_are_named(overrides, match):
    with pytest.raises(cl.SceneFileError, match=match):
        load_scene_file(COLUMN, overrides=overrides)


def test_scene_file_member_reseeds_the_packing_only_when_asked(tmp_path):
    path = tmp_path / "bed.toml"
    path.write_text(SMALL_BED)
    fixed, reseeded = cl.ensemble.SceneFile(path), cl.ensemble.SceneFile(path, reseed=True)
    assert fixed.duration == 0.002
    np.testing.assert_array_equal(fixed(seed=1).positions, fixed(seed=2).positions)   # the file's seed = 7
    np.testing.assert_array_equal(fixed(seed=1).positions, load_scene_file(path).build_simulation().positions)
    a, b, a2 = reseeded(seed=1).positions, reseeded(seed=2).positions, reseeded(seed=1).positions
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, a2)
    sim = fixed(**{"model.friction": 0.2})
    assert sim.contact_model.friction == 0.2
    # the file's threads are for `contactlab run`; a member runs on the ensemble's threads
    path.write_text(SMALL_BED.replace("duration = 0.002", "duration = 0.002\nthreads = 2"))
    assert cl.ensemble.SceneFile(path)().threads is None
    assert cl.ensemble.SceneFile(path)(**{"simulation.threads": 1}).threads == 1


# ---------------------------------------------------------------- measures
@pytest.mark.parametrize("degrees", [20.0, 30.0, 40.0])
@pytest.mark.parametrize("one_sided", [False, True])
def test_surface_angle_of_a_cone(degrees, one_sided):
    """Bodies on a cone of known slope (a heap; one-sided: a bed slumped against a wall at x = 0):
    every bin of distance from the apex starts with a body (w/100 past its edge, clear of rounding),
    so the bins' tops lie exactly on a line of that slope and the estimator returns the cone's
    angle to rounding."""
    r, w = 0.5e-3, 2e-3  # m; the default bin width is two mean diameters = 2 mm
    tan = math.tan(math.radians(degrees))
    height = 40 * w * tan
    rho = np.concatenate([[0.0], np.arange(0, 40 * w, w / 8) + w / 100])
    phis = np.linspace(-0.5 * np.pi, 0.5 * np.pi, 7) if one_sided else np.linspace(0, 2 * np.pi, 12, endpoint=False)
    pts = [(p * math.cos(phi), p * math.sin(phi), height - tan * p) for p in rho for phi in phis]
    x = np.array(pts)
    got = surface_angle(x, np.full(len(x), r), (0.0, 0.0, 1.0))
    assert got == pytest.approx(degrees, abs=1e-9)
    # any direction of gravity: the same heap turned so that "up" is +y
    turned = x[:, [0, 2, 1]]
    assert surface_angle(turned, np.full(len(x), r), (0.0, 1.0, 0.0)) == pytest.approx(degrees, abs=1e-9)


def test_bulk_density_of_a_cubic_lattice():
    """A simple cubic lattice of touching spheres fills pi/6 of space; the inner cell (two
    diameters in from the outer centres) is a whole number of lattice cells, so the count is exact."""
    r, rho_s, n = 0.5, 2500.0, 12   # m (a = 2r = 1 m: every coordinate exact), kg/m^3
    k = np.arange(n, dtype=float)
    x = np.stack(np.meshgrid(k, k, k, indexing="ij"), axis=-1).reshape(-1, 3)
    vol = np.full(len(x), 4.0 / 3.0 * math.pi * r**3)
    density, fraction = bulk_density_of(x, rho_s * vol, vol, np.full(len(x), r), (0.0, 0.0, 1.0))
    assert fraction == pytest.approx(math.pi / 6, rel=1e-12)
    assert density == pytest.approx(rho_s * math.pi / 6, rel=1e-12)
    # 2-D: a square lattice of disks of thickness t fills pi/4 of the plane
    x2 = np.stack(np.meshgrid(k, k, indexing="ij"), axis=-1).reshape(-1, 2)
    x2 = np.column_stack([x2, np.zeros(len(x2))])
    t = 0.1
    area = np.full(len(x2), math.pi * r**2 * t)
    _, fraction2 = bulk_density_of(x2, rho_s * area, area, np.full(len(x2), r), (0.0, 1.0, 0.0), thickness=t)
    assert fraction2 == pytest.approx(math.pi / 4, rel=1e-12)


def test_measures_of_a_stack_and_of_an_impact():
    """Three spheres stacked on the floor: the pile's height is six radii, five contact ends per
    three bodies.  After the impact: kinetic energy m (e v)^2 / 2, the rest of m v^2 / 2 dissipated."""
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    r = 1e-3
    scene = cl.Scene()
    for k in range(3):
        scene.add_sphere(position=(0.0, 0.0, (2 * k + 1) * r - 1e-6 * (k + 1)), radius=r, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    m = cl.ensemble.builtin_measures
    assert m.pile_height(sim) == pytest.approx(6 * r - 2e-6, rel=1e-12)   # top 6r - 3e-6, bottom -1e-6
    assert m.contacts(sim) == 3 and m.coordination_number(sim) == pytest.approx(5 / 3)
    e = 0.5
    t = cl.ensemble.run(em.impact, [{"restitution": e}], ["kinetic_energy", "dissipated_energy"], executor="serial",
                        duration=em.IMPACT_DURATION)
    half_mv2 = 0.5 * em.sphere_mass() * em.SPEED**2
    assert t.kinetic_energy[0] == pytest.approx(e**2 * half_mv2, rel=2e-3)        # (1 + 1e-3)^2
    assert t.dissipated_energy[0] == pytest.approx((1 - e**2) * half_mv2, rel=1e-3)
    with pytest.raises(cl.InputError, match="no gravity"):
        m.pile_height(em.impact(0.5))


# ---------------------------------------------------------------- the command
def test_sweep_command_writes_a_table_and_reports_failed_members(tmp_path, capsys):
    path = tmp_path / "bed.toml"
    path.write_text(SMALL_BED)
    out = tmp_path / "out.csv"
    code = main(["sweep", str(path), "--param", "model.restitution=0.5,1.5", "--param", "model.friction=0.2:0.4:2",
                 "--measure", "pile_height", "--measure", "contacts", "--serial", "--duration", "1e-4",
                 "--out", str(out)])
    assert code == 1   # the members with restitution 1.5 fail
    text = capsys.readouterr()
    assert "4 members (2 ok, 2 failed)" in text.out and "restitution must satisfy" in text.err
    table = pd.read_csv(out, index_col="member")
    assert list(table["model.restitution"]) == [0.5, 0.5, 1.5, 1.5]
    assert list(table["model.friction"]) == [0.2, 0.4, 0.2, 0.4]
    assert list(table["status"]) == ["ok", "ok", "failed", "failed"]
    assert table["pile_height"][:2].notna().all() and table["pile_height"][2:].isna().all()


@pytest.mark.parametrize("args, match", [
    (["--param", "model.friction=0.2:0.5"], "give at least one --measure"),
    (["--param", "model.friction", "--measure", "contacts"], "KEY=VALUES"),
    (["--param", "model.friction=0.2", "--measure", "contacts", "--out", "x.txt"], ".csv or .parquet"),
    (["--param", "model.friction=0.2", "--measure", "angle_of_repos"], "did you mean 'angle_of_repose'"),
])
def test_sweep_command_refuses_bad_arguments(tmp_path, capsys, args, match):
    path = tmp_path / "bed.toml"
    path.write_text(SMALL_BED)
    assert main(["sweep", str(path), "--serial", *args]) == 2
    assert match in capsys.readouterr().err


def test_the_python_blocks_of_the_ensembles_page_run(capsys):
    """docs/ensembles.md runs as written (its asserts compare with the closed-form restitution),
    except the cluster blocks (LocalCluster, SLURMCluster): the Dask path is tested in
    test_ensemble_dask.py, and a Slurm cluster is not there."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "ensembles.md").read_text(), re.S)
    runnable = [b for b in blocks if "LocalCluster" not in b and "SLURMCluster" not in b]
    assert len(runnable) == 3 and len(blocks) == 5
    namespace = {"__name__": "docs_ensembles"}
    for block in runnable:
        exec(compile(block, "docs/ensembles.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "rebound_speed" in out and "overhead per member on local processes (2)" in out
    assert (namespace["table"]["status"] == "ok").all() and (namespace["table"]["compiled"] == 0).all()
