"""The angle-of-repose example (examples/angle_of_repose.py, docs/angle-of-repose.md).

References: Zhou et al.'s (2002) correlation as evaluated by an independent code's documentation
(Lethe's plate-discharge example: 19.7 degrees for mu = 0.2, a rolling friction length of 1 mm
and d = 10 mm); the torque limit of the Hertz-Mindlin rolling spring from its NumPy twin (the
conversion of contactlab's dimensionless coefficient to Zhou's length rests on it); the physics
of a heap: rolling resistance makes a heap of spheres stand steeper (Zhou et al. 2001, abstract).
"""
from __future__ import annotations

import math
import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import contactlab as cl
from contactlab.geometry.record import GEOMETRY_FIELDS
from contactlab.laws import hertz_mindlin

ROOT = Path(__file__).resolve().parent.parent
EX = runpy.run_path(str(ROOT / "examples" / "angle_of_repose.py"))


def test_correlation_as_evaluated_by_lethe():
    """Lethe's plate-discharge example evaluates Zhou et al.'s correlation at mu = 0.2 (spheres and
    walls), rolling friction 1 mm (both), d = 10 mm, and states 19.7 degrees."""
    assert EX["zhou_correlation"](0.2, 0.2, 1e-3, 1e-3, 0.01) == pytest.approx(19.7, abs=0.05)


@pytest.mark.parametrize("rolling_model", ["spring", "constant_torque"])
@pytest.mark.parametrize("against_wall", [False, True])
def test_rolling_torque_limit_is_the_zhou_length_times_the_normal_force(against_wall, rolling_model):
    """A contact rolled far past its elastic range (the spring) or rolling at all (the constant
    torque) transmits the torque mu_r R* F_n; with R* of two equal spheres (d/4) or of a sphere on
    a wall (d/2) that is the rolling length of ``rolling_lengths`` times the normal force (the
    NumPy twin of the law, a different code path from the example's arithmetic)."""
    d, mu_r = 0.01, 0.2
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.4, rolling_friction=mu_r, rolling_model=rolling_model)
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    params = model.pair_table((glass,))[0, 0]
    radius = d / 2 if against_wall else d / 4
    n = np.array([0.0, 0.0, 1.0])
    g = {name: np.zeros(3) for name in GEOMETRY_FIELDS}
    g.update(normal=n, overlap=1e-5, radius_i=d / 2, radius_j=math.inf if against_wall else d / 2, radius=radius,
             mass=1e-3, contact_area=0.0, contact_volume=0.0, contact_twist=0.0,
             rel_rotation=np.array([0.05, 0.0, 0.0]), rel_angular_velocity=np.array([1.0, 0.0, 0.0]))
    force, couple, *_ = hertz_mindlin.reference_law(g, params, np.zeros(7), 1e-5)
    f_n = -force @ n
    pp, pw = EX["rolling_lengths"](mu_r, d)
    length = pw if against_wall else pp
    assert f_n > 0
    assert np.linalg.norm(couple) == pytest.approx(length * f_n, rel=1e-12)


def test_rolling_resistance_makes_a_steeper_heap():
    """A small heap (plate 10 d, slot 4 d, about 400 spheres): with rolling friction 0.2 the heap
    left on the plate stands steeper than without, by more than 5 degrees, and holds more spheres
    (Zhou et al. 2001: increasing the rolling friction increases the angle of repose); both end
    at rest."""
    sizes = dict(plate=10.0, thickness=4.0, height=14.0)
    angles, kept = {}, {}
    for rolling in (0.0, 0.2):
        sim = EX["build"](0.4, rolling, **sizes)
        r = EX["discharge"](sim, max_time=3.5)
        assert r["kinetic"] < 1e-4
        angles[rolling], kept[rolling] = r["angle"], r["spheres"]
    # without rolling resistance the spheres roll off the flat plate: at most a low heap is left
    # (NaN: fewer than three slices stand above the toe)
    assert kept[0.0] < kept[0.2], kept
    assert math.isfinite(angles[0.2]) and not angles[0.0] > angles[0.2] - 5.0, angles


def test_python_block_of_the_page_runs(capsys, monkeypatch):
    """docs/angle-of-repose.md's block (the conversion and the correlation, no simulation) runs as
    written from the repository's root; it prints Zhou's lengths d/4 and d/2 times mu_r."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "angle-of-repose.md").read_text(), re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/angle-of-repose.md", "exec"), {})
    first = capsys.readouterr().out.splitlines()[0]
    assert first == str((0.2 * 0.01 / 4, 0.2 * 0.01 / 2))
