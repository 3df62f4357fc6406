"""The ``column`` check: the energy balance of a small granular column settling under gravity in
a box.
"""
from __future__ import annotations

import math

import numpy as np

from ...scene import Scene
from ...simulation import Simulation
from ..formatting import fmt
from ..results import Check
from .common import curve, panel

__all__ = ["check_column"]


def _column_run(ctx, fraction):
    r_ = ctx.radius
    side, height = (6.0, 12.0) if ctx.quick else (10.0, 20.0)
    lx = side * r_
    scene = Scene(gravity=(0.0, 0.0, -9.81))
    scene.fill_box((0.0, 0.0, 0.0), (lx, lx, height * r_), r_, ctx.material, jitter=0.5, seed=1, radius_spread=0.1)
    for p, n in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((lx, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, lx, 0), (0, -1, 0))):
        scene.add_wall(point=p, normal=n, material=ctx.material)
    sim = Simulation(scene, ctx.model, dt=None, threads=1, debug=ctx.debug)
    sim.dt = fraction * sim.dt
    e0 = sim.energy()
    duration = 2.0 * math.sqrt(2.0 * height * r_ / 9.81)
    samples = 20
    t, err, scale, ke = [], [], [], []
    for _ in range(samples):
        sim.run(duration=duration / samples)
        e = sim.energy()
        released = abs(e0["gravitational"] - e["gravitational"]) + e0["kinetic"] + e0["rotational"]
        t.append(sim.time)
        err.append(e["balance_error"])
        scale.append(max(released, 1e-300))
        ke.append(e["kinetic"] + e["rotational"])
    rel = np.abs(np.array(err)) / np.array(scale)
    return dict(sim=sim, t=t, err=err, released=scale, ke=ke, rel=rel, worst=float(rel.max()))


def check_column(ctx) -> list:
    full = _column_run(ctx, 1.0)
    half = _column_run(ctx, 0.5)
    sim = full["sim"]
    ctx.figures.append(dict(name="column", title=f"Granular column: {sim.n_spheres} spheres settling in a box",
                            panels=[panel("energy (default time step)", "time (s)", "J", [
                                curve(full["t"], full["released"], "potential energy released"),
                                curve(full["t"], full["ke"], "kinetic + rotational"),
                                curve(full["t"], full["err"], "balance error", "dashed")]),
                                panel("balance error / energy released", "time (s)", "relative", [
                                    curve(full["t"], np.maximum(full["rel"], 1e-300), "default time step"),
                                    curve(half["t"], np.maximum(half["rel"], 1e-300), "half of it", "dashed")],
                                      yscale="log")]))
    a, b = full["worst"], half["worst"]
    ok = a <= 1e-2 or (b <= 1e-2 and a >= 1.5 * b)
    return [Check(
        "energy balance of a granular column", "column", bool(ok), a, "relative (max, default dt)",
        "kinetic + rotational + gravitational + elastic + dissipated energy constant within 1 % of the potential "
        "energy released so far, at each of 20 samples of the pour, at the model's default time step; or, if not, "
        "within 1 % at half that step and at least 1.5 times closer than at the default (the excess is then a "
        "discretisation error of the default step, not an error of the energy bookkeeping)",
        "energy conservation (the balance of tests/test_conservation.py)",
        f"{sim.n_spheres} spheres, 5 walls, {sim.step} steps of {fmt(sim.dt)} s (the default), {fmt(sim.time)} s; "
        f"largest |balance error| / released: {fmt(a)} at the default step, {fmt(b)} at half of it"
        + ("" if a <= 1e-2 else " (the default step exceeds 1 %)")
        + f"; final kinetic energy {fmt(full['ke'][-1] / full['released'][-1])} of the released; dissipated "
        f"{fmt(sim.energy()['dissipated'])} J", "column.png",
        data={"spheres": sim.n_spheres, "dt": sim.dt, "error_default_dt": a, "error_half_dt": b})]
