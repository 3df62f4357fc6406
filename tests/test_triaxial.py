"""A small drained triaxial test (examples/triaxial.py at 300 spheres): the stress path and the
friction angle.

References, none of them the code's own output:
* statics: at rest, the Love-Weber stress of the whole sample (a sum over every contact's lever
  and force, :mod:`contactlab.measure.love_weber`) equals the walls' normal forces over their
  areas (a different sum, over the wall contacts alone, and the wall positions);
* the servo's target: the lateral stress is the confining pressure;
* the DEM literature for frictional spheres (mu = 0.5, no rolling resistance), docs/triaxial.md:
  a dense sample's peak friction angle lies above the critical-state angle of such spheres
  (about 21-25 degrees) and below the 35 degrees that only dense samples with rolling resistance
  or non-spherical grains reach; a dense sample dilates after a short contraction (Reynolds).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
P = 1e5


def _example():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import triaxial
    finally:
        sys.path.pop(0)
    return triaxial


@pytest.mark.slow
def test_small_triaxial_stress_path_and_friction_angle():
    tx = _example()
    sim = tx.build(300, seed=2, young=5e8)            # mu = 0 while compressing: a dense sample
    tx.settle(sim, P, tolerance=0.002, kinetic=1e-4, max_time=0.3)
    s = tx.sample_state(sim)
    size = s["size"]
    c = sim.contacts()
    areas = [size[1] * size[2]] * 2 + [size[0] * size[2]] * 2 + [size[0] * size[1]] * 2
    for w in range(6):                                # every wall at the target, from sim.contacts()
        assert float(np.sum(c["normal_force"][c["wall"] == w])) / areas[w] == pytest.approx(P, rel=0.005)
    # statics: Love-Weber of the whole sample = the wall stresses (isotropic, at rest)
    assert np.diag(s["lw_tensor"]) == pytest.approx(P, rel=0.01)
    sym = s["lw_tensor"] - s["lw_tensor"].T           # moment balance without couples: symmetric
    assert np.abs(sym).max() < 0.005 * P

    sim.set_model(tx.law(0.5))
    tx.settle(sim, P, tolerance=0.002, max_time=0.3)
    rate = tx.strain_rate(sim, P, 1e-3)               # I = 1e-3: the quasi-static limit, for speed
    rows = tx.axial_loading(sim, P, strain=0.05, rate=rate, every=0.005)
    col = {name: rows[:, i] for i, name in enumerate(tx.COLUMNS)}
    # the lateral walls hold the confining pressure; the stresses at both ends of the sample agree
    assert np.all(np.abs(col["sigma3_wall"] / P - 1.0) < 0.03)
    assert np.all(np.abs(col["bottom_over_top"] - 1.0) < 0.02)
    # quasi-static: Love-Weber of the whole sample = the walls, axially and laterally
    assert np.all(np.abs(col["sigma1_lw"] / col["sigma1_wall"] - 1.0) < 0.02)
    assert np.all(np.abs(col["sigma3_lw"] / col["sigma3_wall"] - 1.0) < 0.02)
    phi_peak = math.degrees(math.asin(col["sin_phi_wall"].max()))
    assert 21.0 < phi_peak < 35.0, phi_peak
    vol = col["volumetric_strain"]
    assert vol[-1] < vol.max() - 0.002                 # contracts first, then dilates


@pytest.mark.slow
def test_the_pages_python_block_runs(capsys, monkeypatch):
    """docs/triaxial.md's example (60 spheres, a few steps of axial loading) runs and prints a row
    whose lateral stress is the confining pressure within 3 %."""
    import re
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "triaxial.md").read_text(), re.S)
    assert blocks
    namespace = {}
    try:
        for block in blocks:
            exec(compile(block, "docs/triaxial.md", "exec"), namespace)
    finally:
        sys.path[:] = [p for p in sys.path if p != "examples"]
    assert "sigma3_wall" in capsys.readouterr().out
    assert namespace["rows"][-1][3] == pytest.approx(P, rel=0.03)
