"""Angle of repose of a heap of spheres with rolling resistance: the lifted-cylinder test.

Glass beads (diameter 2 mm +-5 %, soft glass E = 10 MPa so that the run is short) are filled into
an open-ended tube standing on a floor (a cylinder wall of radius ``tube_radius``), settle under
gravity, then the tube is lifted at ``lift_speed`` and the beads spread into a conical heap.  The
angle of the free surface (``cl.ensemble.builtin_measures.surface_angle``: the least-squares line
through the surface heights between 20 % and 80 % of the heap's reach) is measured once every bead
is at rest.  Hertz-Mindlin with sliding friction ``mu`` and rolling friction ``mu_r`` (the
elastic-plastic rolling spring of Iwashita & Oda, torque limit ``mu_r R* F_n``, R* the effective
radius: LIGGGHTS' ``epsd2`` and Ai et al. 2011's type-C model); the floor has the same friction.

It prints one line per rolling friction; docs/triaxial.md ("Angle of repose") has the numbers.

Run:  python examples/angle_of_repose.py [--n 1500] [--mu 0.5] [--mu-r 0.0 0.05 0.1 0.2]
(1500 beads: a few minutes per heap on two cores)
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import contactlab as cl
from contactlab.packing import regions


def build(n=1500, *, mu=0.5, mu_r=0.1, d=2e-3, tube_radius=None, restitution=0.3, seed=0, threads=None):
    """The beads settled-to-be in a tube on a floor (not yet run); returns (sim, tube wall index)."""
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    if tube_radius is None:
        tube_radius = 5.0 * d * (n / 1500.0) ** (1.0 / 3.0)
    height = n * (math.pi / 6.0) * d**3 / (0.3 * math.pi * tube_radius**2)   # a fill at packing fraction 0.3
    region = regions.cylinder((0.0, 0.0, 0.5 * height + 0.1 * d), tube_radius - 0.05 * d, height)
    scene.fill(region, cl.distributions.Uniform(0.95 * d, 1.05 * d), glass, count=n, seed=seed)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=glass)
    tube = scene.add_cylinder_wall((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), tube_radius, glass,
                                   length=(0.0, 1.2 * height + 2 * d))
    model = cl.models.HertzMindlin(restitution=restitution, friction=mu, rolling_friction=mu_r)
    return cl.Simulation(scene, model, threads=threads), tube


def heap(n=1500, *, mu=0.5, mu_r=0.1, lift_speed=0.05, settle_time=0.3, max_time=3.0, seed=0, threads=None):
    """Fill, settle, lift the tube, wait for rest; returns the angle of repose (degrees) and the
    simulation."""
    sim, tube = build(n, mu=mu, mu_r=mu_r, seed=seed, threads=threads)
    sim.run(duration=settle_time)
    sim.set_wall_velocity(tube, (0.0, 0.0, lift_speed))
    top = float(np.max(sim.positions[:, 2] + sim.model.radius))
    sim.run(duration=1.1 * top / lift_speed)                 # the tube's bottom rim clears the heap
    mass = float(sim.model.mass.sum())
    start = sim.time
    while sim.time - start < max_time:
        sim.run(duration=0.05)
        if sim.energy()["kinetic"] < 1e-9 * mass * 9.81 * 1e-3:   # ~ 1e-9 of lifting the heap by 1 mm
            break
    x, r = sim.positions, sim.model.radius
    return cl.ensemble.builtin_measures.surface_angle(x, r, (0.0, 0.0, 1.0)), sim


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--mu", type=float, default=0.5, help="sliding friction")
    ap.add_argument("--mu-r", type=float, nargs="+", default=[0.0, 0.05, 0.1, 0.2], help="rolling friction(s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args(argv)
    results = []
    for mu_r in a.mu_r:
        t0 = time.perf_counter()
        angle, sim = heap(a.n, mu=a.mu, mu_r=mu_r, seed=a.seed, threads=a.threads)
        results.append((mu_r, angle))
        print(f"mu = {a.mu}, mu_r = {mu_r}: angle of repose {angle:.1f} deg ({sim.n_spheres} beads, "
              f"{sim.time:.2f} s simulated, {time.perf_counter() - t0:.0f} s)", flush=True)
    return results


if __name__ == "__main__":
    main()
