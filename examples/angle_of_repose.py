"""Angle of repose of a heap of spheres with rolling resistance, against Zhou et al.'s DEM correlation.

The reference: Zhou, Xu, Yu and Zulli, "An experimental and numerical study of the angle of
repose of coarse spheres", Powder Technology 125 (2002) 45-54, fitted to their DEM heaps the
correlation (degrees; rolling friction coefficients as lengths in mm, diameter in mm)

    phi = 68.61 mu_s,pp^0.27 mu_s,pw^0.22 mu_r,pp^0.06 mu_r,pw^0.12 d^-0.2

(pp: particle-particle, pw: particle-wall).  Their heaps are formed by discharge: monosized
spheres rest on a plate in a box between a front and a back wall, the plate's ends are opened,
the spheres run off both ends and what stays on the plate is a wedge whose slopes are read by a
straight line through the highest spheres.  Their rolling resistance is a torque
``mu_r |F_n|`` against the relative rolling (mu_r a length).  contactlab's Hertz-Mindlin rolling
resistance (the default elastic-plastic spring, or ``rolling_model="constant_torque"``, Zhou's
model) has the torque limit ``mu_r R* |F_n|`` with a dimensionless mu_r and the effective radius
R*: R/2 between two equal spheres, R against a wall.  So one contactlab coefficient is two of Zhou's
lengths: ``mu_r d/4`` between spheres and ``mu_r d/2`` against the walls
(:func:`rolling_lengths`).

The test here (docs/angle-of-repose.md), scaled down to run in about a minute per heap:

* spheres of d = 10 mm, 2500 kg/m^3, E = 10 MPa (softened: Zhou et al. 2001 found the angle
  insensitive to the Young's modulus), Poisson 0.3, restitution 0.5;
* half of the plate: a frictionless wall at x = 0 stands for the plane of symmetry, the plate
  reaches from x = 0 to ``plate`` (default 15 d); front and back walls ``thickness`` apart
  (default 10 d); the plate and those walls have the spheres' friction and rolling friction;
* a loose lattice of spheres up to ``height`` (default 22 d) settles against a gate at the plate's
  end; the gate is switched off (``sim.set_active``) and an outlet removes every sphere whose
  centre passes the end of the plate (it would fall off);
* when the spheres are at rest the surface is read as Zhou et al. read it: the highest sphere
  in each slice of one diameter along x (over the whole thickness), a straight line fitted
  between 30 % and 80 % of the plate (:func:`heap_angle`).

Run::

    python examples/angle_of_repose.py                 # three heaps, ~2 min on one core
    python examples/angle_of_repose.py --plot repose.png

    python examples/angle_of_repose.py --rolling-model constant_torque --rolling 0.2 0.05

It prints, for each friction pair, the measured angle, the correlation's, the spheres left, the
simulated time, the kinetic energy at the end (above 1e-5 J: stopped at the 6 s limit, not at
rest) and the time taken.  ``--rolling-model constant_torque`` replaces the elastic-plastic
rolling spring by Zhou et al.'s constant torque (the same limit ``mu_r R* F_n``, nothing at rest;
``HertzMindlin(rolling_model=...)``), everything else unchanged.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import contactlab as cl
from contactlab.ensemble.builtin_measures import surface_angle

DIAMETER = 0.01  # m
DENSITY = 2500.0  # kg/m^3
YOUNG = 1e7  # Pa
POISSON = 0.3
RESTITUTION = 0.5
#: (sliding friction, rolling friction) of the runs: the reference point, less rolling resistance, none
POINTS = ((0.4, 0.2), (0.4, 0.05), (0.4, 0.0))


def zhou_correlation(friction_pp: float, friction_pw: float, rolling_pp: float, rolling_pw: float,
                     diameter: float) -> float:
    """Zhou et al.'s (2002) angle of repose, degrees, from the friction coefficients, the rolling
    friction lengths ``rolling_pp``, ``rolling_pw`` (m) and the diameter (m).  The fit is in mm."""
    mm = 1e3
    return (68.61 * friction_pp**0.27 * friction_pw**0.22 * (mm * rolling_pp)**0.06 * (mm * rolling_pw)**0.12
            * (mm * diameter)**-0.2)


def rolling_lengths(rolling_friction: float, diameter: float) -> tuple[float, float]:
    """Zhou's rolling friction lengths (m) of contactlab's dimensionless ``rolling_friction``:
    the torque limit ``mu_r R* F_n`` with ``R* = d/4`` between two equal spheres and ``d/2``
    against a wall, as ``(particle-particle, particle-wall)``."""
    return rolling_friction * diameter / 4.0, rolling_friction * diameter / 2.0


def published_angle(friction: float, rolling_friction: float, diameter: float = DIAMETER) -> float:
    """The correlation for the same sliding friction on spheres and walls and contactlab's
    ``rolling_friction`` converted to Zhou's lengths; NaN without rolling resistance (the
    correlation's power law goes to zero there: it was fitted to heaps with rolling friction)."""
    if rolling_friction <= 0.0:
        return math.nan
    pp, pw = rolling_lengths(rolling_friction, diameter)
    return zhou_correlation(friction, friction, pp, pw, diameter)


def build(friction: float, rolling_friction: float, *, plate: float = 15.0, thickness: float = 10.0,
          height: float = 22.0, seed: int = 1, young: float = YOUNG, rolling_model: str = "spring"):
    """The settled-to-be column on half of the plate (sizes in diameters); returns the simulation.
    ``rolling_model``: Hertz-Mindlin's ``"spring"`` (elastic-plastic) or ``"constant_torque"``
    (Zhou et al.'s) rolling resistance, the same torque limit ``mu_r R* F_n``.

    Walls: 0 the plate (z = 0), 1 and 2 the back and front walls, 3 the frictionless plane of
    symmetry (x = 0), 4 the gate at the end of the plate (material ``"gate"``)."""
    d = DIAMETER
    bead = cl.Material(density=DENSITY, young=young, poisson=POISSON, name="bead")
    mirror = cl.Material(density=DENSITY, young=young, poisson=POISSON, name="mirror")
    gate = cl.Material(density=DENSITY, young=young, poisson=POISSON, name="gate")
    length, width = plate * d, thickness * d
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.fill_box(lower=(0.0, 0.0, 0.0), upper=(length, width, height * d), radius=d / 2, material=bead,
                   jitter=0.3, seed=seed)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=bead)
    scene.add_wall(point=(0, 0, 0), normal=(0, 1, 0), material=bead)
    scene.add_wall(point=(0, width, 0), normal=(0, -1, 0), material=bead)
    scene.add_wall(point=(0, 0, 0), normal=(1, 0, 0), material=mirror)
    scene.add_wall(point=(length, 0, 0), normal=(-1, 0, 0), material=gate)
    model = cl.models.HertzMindlin(restitution=RESTITUTION, friction=friction, rolling_friction=rolling_friction,
                                   rolling_model=rolling_model, per_material={"mirror": {"friction": 0.0}})
    sim = cl.Simulation(scene, model, threads=1)
    sim.plate_length = length
    return sim


def kinetic(sim) -> float:
    """Translational plus rotational kinetic energy, J."""
    e = sim.energy()
    return float(e["kinetic"] + e["rotational"])


def heap_angle(sim, *, fit_range=(0.3, 0.8)) -> float:
    """Slope of the heap's surface along x, degrees: the highest sphere in each slice of one
    diameter along x over the whole thickness, a straight line fitted between ``fit_range`` of
    the heap's reach from its apex (:func:`~contactlab.ensemble.builtin_measures.surface_angle`
    on the positions seen along y)."""
    x = sim.positions.copy()
    x[:, 1] = 0.0
    return surface_angle(x, np.asarray(sim.model.radius), (0.0, 0.0, 1.0), bin_width=DIAMETER,
                         fit_range=fit_range)


def discharge(sim, *, settle: float = 0.8, chunk: float = 0.25, max_time: float = 6.0,
              rest: float = 1e-5, progress: bool = False) -> dict:
    """Let the column settle against the gate for ``settle`` s, open the gate, remove what runs
    off the plate and run in chunks until the kinetic energy is below ``rest`` J (or
    ``max_time``); returns the angle, the spheres left, the simulated time and the kinetic energy.
    ``progress=True``: a progress bar while the column settles, then a line per chunk."""
    sim.run(duration=settle, progress=progress)
    sim.set_active(False, materials=("bead", "gate"))
    sim.add_outlet(cl.packing.regions.half_space((sim.plate_length, 0.0, 0.0), (1.0, 0.0, 0.0)), every=50)
    while sim.time < max_time:
        sim.run(duration=chunk)
        if progress:
            print(f"    t = {sim.time:.2f} s of at most {max_time:g} s: {len(sim.positions)} spheres on the plate, "
                  f"kinetic energy {kinetic(sim):.2e} J (at rest below {rest:g} J)", flush=True)
        if kinetic(sim) < rest and sim.time > settle + 1.0:
            break
    return {"angle": heap_angle(sim), "spheres": len(sim.positions), "time": sim.time, "kinetic": kinetic(sim)}


def run_point(friction: float, rolling_friction: float, progress: bool = False, **sizes) -> dict:
    """One heap: measured and published angle (degrees) and the wall time (s); ``progress``: see
    :func:`discharge`."""
    t0 = time.perf_counter()
    sim = build(friction, rolling_friction, **sizes)
    n0 = len(sim.positions)
    if progress:
        print(f"  heap mu = {friction}, mu_r = {rolling_friction}: {n0} spheres settle against the gate", flush=True)
    r = discharge(sim, progress=progress)
    r.update(friction=friction, rolling_friction=rolling_friction, initial=n0,
             published=published_angle(friction, rolling_friction), wall=time.perf_counter() - t0, sim=sim)
    return r


def plot(results, path: str) -> None:
    """Surface profiles (the highest sphere per slice) of the heaps, with the correlation's slopes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for r in results:
        sim = r["sim"]
        x, z = sim.positions[:, 0], sim.positions[:, 2] + np.asarray(sim.model.radius)
        k = np.floor(x / DIAMETER).astype(int)
        top = np.full(k.max() + 1, np.nan)
        for b in np.unique(k):
            top[b] = z[k == b].max()
        centres = (np.arange(len(top)) + 0.5) * DIAMETER
        line, = ax.plot(centres / DIAMETER, top / DIAMETER, "o-", ms=3,
                        label=f"mu {r['friction']}, mu_r {r['rolling_friction']}: {r['angle']:.1f} deg")
        if math.isfinite(r["published"]):
            apex = np.nanmax(top)
            ax.plot(centres / DIAMETER, (apex - centres * math.tan(math.radians(r["published"]))) / DIAMETER, "--",
                    color=line.get_color(), label=f"Zhou et al. (2002): {r['published']:.1f} deg")
    ax.set_xlabel("x / d (from the plane of symmetry to the end of the plate)")
    ax.set_ylabel("surface height / d")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(points=POINTS, plot_path: str | None = None, progress: bool = False, **sizes) -> list[dict]:
    """Run the heaps, print measured against published angles; returns the results.
    ``progress=True``: each heap's progress (:func:`discharge`) before its row."""
    results = []
    print(f"rolling model: {sizes.get('rolling_model', 'spring')}")
    print(f"{'mu':>5} {'mu_r':>5} {'mu_r,pp mm':>10} {'mu_r,pw mm':>10} {'measured':>9} {'Zhou 2002':>9} "
          f"{'spheres':>8} {'t (s)':>6} {'E_kin (J)':>9} {'wall (s)':>8}")
    for friction, rolling in points:
        r = run_point(friction, rolling, progress=progress, **sizes)
        pp, pw = rolling_lengths(rolling, DIAMETER)
        print(f"{friction:5.2f} {rolling:5.2f} {1e3 * pp:10.3f} {1e3 * pw:10.3f} {r['angle']:9.1f} "
              f"{r['published']:9.1f} {r['spheres']:4d}/{r['initial']:<4d} {r['time']:6.2f} {r['kinetic']:9.1e} "
              f"{r['wall']:8.1f}",
              flush=True)
        results.append(r)
    if plot_path:
        plot(results, plot_path)
        print(f"profiles: {plot_path}")
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plot", help="draw the surface profiles (PNG)")
    ap.add_argument("--thickness", type=float, default=10.0, help="distance of the front and back walls, diameters")
    ap.add_argument("--plate", type=float, default=15.0, help="half-length of the plate, diameters")
    ap.add_argument("--rolling-model", choices=("spring", "constant_torque"), default="spring",
                    help="Hertz-Mindlin's rolling resistance: elastic-plastic spring (default) or Zhou's constant torque")
    ap.add_argument("--rolling", type=float, nargs="*",
                    help="rolling friction coefficients to run (default: 0.2 0.05 0), sliding friction 0.4")
    a = ap.parse_args()
    points = POINTS if a.rolling is None else tuple((0.4, r) for r in a.rolling)
    main(points, plot_path=a.plot, progress=True, thickness=a.thickness, plate=a.plate,
         rolling_model=a.rolling_model)
