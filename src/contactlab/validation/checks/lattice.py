"""The ``lattice`` check: a confined packing at the default time step does not create energy.

A single contact can be stable at a step at which a packing of the same contacts is not: a body
with several damped, frictional contacts has stiffer coupled modes (docs/physics.md, "The time
step").  The check builds the scene that showed it first (issue 42): a 3 x 3 x 3 simple-cubic
lattice of equal spheres of the context's material and radius, pressed into each other and into
six plane walls by 1 % of the radius, no gravity, random spins (rotational energy a tenth of the
elastic energy), and runs it for :data:`STEPS` steps at the model's default time step with the
energy watchdog off.  It passes when the energy balance error never rises above its start by more
than 1 % of the largest elastic energy of the run, nor by more than 0.1 % over its second half (a
stable step only loses energy to the law's dissipation, up to its truncation error, which is
largest at the start as the spins load the contacts; a rise above 1 % passes where half the step
brings it below 1 % and 1.5 times lower), and fails with the growth, the step and the bound of the
contacts present otherwise.  :func:`lattice_scene` builds the scene for the tests
(tests/test_energy_creation.py runs every registered law in it).
"""
from __future__ import annotations

import numpy as np

from ...errors import SimulationBlowUp
from ...scene import Scene
from ...simulation import Simulation
from ..formatting import fmt
from ..results import Check

__all__ = ["check_lattice", "lattice_scene", "lattice_run", "lattice_verdict", "STEPS", "SHARE", "LATE_SHARE"]

#: steps of the run (the unstable lattices of issue 42 had created many times their elastic energy by then)
STEPS = 2000
#: spheres per side
SIDE = 3


def lattice_scene(material, radius: float, *, side: int = SIDE, overlap: float = 0.01) -> Scene:
    """``side^3`` spheres of ``radius`` (m) on a simple-cubic lattice, each pressed into its
    neighbours and the six walls of its box by ``overlap`` times the radius; no gravity."""
    r = float(radius)
    d = overlap * r
    a = 2.0 * r - d                      # lattice spacing: every contact overlaps by d
    scene = Scene(gravity=(0.0, 0.0, 0.0))
    g = np.arange(side) * a + r - 0.5 * d
    pos = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    scene.add_spheres(positions=pos, radii=np.full(len(pos), r), material=material)
    far = (side - 1) * a + 2.0 * r - d
    for axis in range(3):
        normal = np.zeros(3)
        normal[axis] = 1.0
        scene.add_wall(point=np.zeros(3), normal=normal, material=material)
        scene.add_wall(point=far * normal, normal=-normal, material=material)
    return scene


def lattice_run(model, material, radius: float, *, steps: int = STEPS, seed: int = 0, threads: int = 1,
                debug: bool = False, dt_factor: float = 1.0, allow_unstable_dt: bool = False) -> dict:
    """Run :func:`lattice_scene` with ``model`` at ``dt_factor`` times its default step (spins set
    so that the rotational energy is a tenth of the elastic energy) and return ``growth`` (J: the
    largest rise of the balance error above its start), ``late`` (J: its rise over the second half
    of the run, where only a creation goes on), ``elastic`` (J: the largest elastic energy),
    ``relative`` and ``late_relative`` (over it), ``dt``, ``bound`` (s: the bound of the contacts
    present), ``blow_up`` (the message of a blow-up, or None) and the simulation."""
    sim = Simulation(lattice_scene(material, radius), model, dt=None, threads=threads, debug=debug,
                     energy_watchdog=None, initial_overlap_tolerance=0.05, allow_unstable_dt=allow_unstable_dt)
    if dt_factor != 1.0:
        sim.dt = dt_factor * sim.dt
    rng = np.random.default_rng(seed)
    elastic0 = sim.energy()["elastic"]
    inertia = sim.model.inertia
    spin = rng.normal(size=(sim.n_spheres, 3))
    spin *= np.sqrt(0.2 * max(elastic0, 0.0) / max(float(np.sum(inertia[:, None] * spin**2)), 1e-300))
    for k in range(sim.n_spheres):
        sim.set_velocity(k, (0.0, 0.0, 0.0), angular_velocity=spin[k])
    e0 = sim.energy()
    start, elastic, blow, balance = e0["balance_error"], abs(e0["elastic"]), None, []
    try:
        for _ in range(20):
            sim.run(steps=steps // 20)
            e = sim.energy()
            balance.append(e["balance_error"] - start)
            elastic = max(elastic, abs(e["elastic"]))
    except SimulationBlowUp as exc:
        blow = str(exc).splitlines()[0]
    growth = max([0.0] + balance)
    half = balance[len(balance) // 2:] if len(balance) >= 2 else balance
    late = max(half) - half[0] if half else 0.0
    bound = sim.packing_limit.limit if sim.packing_limit is not None else float("inf")
    scale = max(elastic, 1e-300)
    return dict(growth=growth, late=late, elastic=elastic, relative=growth / scale, late_relative=late / scale,
                dt=sim.dt, bound=bound, blow_up=blow, sim=sim)


#: the balance error may rise by this share of the elastic energy over the run (truncation error of
#: the start, where the spins load the contacts) ...
SHARE = 1e-2
#: ... and by this share over its second half, where a stable step only loses energy
LATE_SHARE = 1e-3


def lattice_verdict(run: dict, half: dict | None) -> bool:
    """Whether a lattice run (and, where it exceeds :data:`SHARE`, a run at half the step) passes:
    no blow-up, no rise over the second half above :data:`LATE_SHARE`, and a rise above
    :data:`SHARE` only where the half step brings it below :data:`SHARE` and at least 1.5 times
    lower (a truncation error of the default step, not a creation)."""
    if run["blow_up"] is not None or run["late_relative"] > LATE_SHARE:
        return False
    if run["relative"] <= SHARE:
        return True
    return half is not None and half["blow_up"] is None and half["relative"] <= SHARE and \
        run["relative"] >= 1.5 * half["relative"]


def check_lattice(ctx) -> list:
    steps = STEPS // 10 if ctx.debug else STEPS
    run = lattice_run(ctx.model, ctx.material, ctx.radius, steps=steps, debug=ctx.debug)
    half = None
    if run["blow_up"] is None and run["relative"] > SHARE:
        half = lattice_run(ctx.model, ctx.material, ctx.radius, steps=2 * steps, debug=ctx.debug, dt_factor=0.5)
    ok = lattice_verdict(run, half)
    sim = run["sim"]
    details = (f"{sim.n_spheres} spheres pressed into each other and 6 walls by 1 % of the radius, random spins; "
               f"{sim.step} steps of {fmt(run['dt'])} s (the default; the bound of the contacts present "
               f"{fmt(run['bound'])} s); the balance error rose by at most {fmt(run['growth'])} J, "
               f"{fmt(run['relative'])} of the largest elastic energy {fmt(run['elastic'])} J, and by "
               f"{fmt(run['late_relative'])} of it over the second half")
    if half is not None:
        details += f"; at half the step {fmt(half['relative'])}"
    if run["blow_up"]:
        details += f"; BLOW-UP: {run['blow_up']}"
    return [Check("a confined lattice does not create energy at the default step", "lattice", bool(ok),
                  run["relative"], "relative (balance error rise / elastic energy)",
                  f"the energy balance error rises by at most {SHARE:g} of the largest elastic energy over the run "
                  f"(or, above it, by at most that at half the step and 1.5 times less: a truncation error), and "
                  f"by at most {LATE_SHARE:g} of it over the run's second half: a stable step only loses energy, "
                  f"to the law's dissipation; a step unstable for a body's contacts together creates it, the "
                  f"balance error then growing many times the elastic energy",
                  "linear stability of the explicit step (docs/physics.md, 'The time step')", details,
                  data={"dt": run["dt"], "bound": run["bound"], "growth": run["growth"], "late": run["late"],
                        "elastic": run["elastic"]})]
