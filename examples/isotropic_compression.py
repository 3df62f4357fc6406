"""A drained triaxial test in a box of six servo-controlled walls.

Polydisperse spheres in a cubic box of six plane walls, no gravity.  Phase 1 (stress control):
every wall is servo-controlled to the confining stress ``p`` (100 kPa), the area of each wall
following the gaps of the four walls around it, until the box is at rest and each wall's stress
is ``p``.  Phase 2 (strain control): the bottom wall stops, the top wall moves down at a
constant axial strain rate, and the four lateral walls stay servo-controlled at ``p``.  It prints
the deviator stress ``q = sigma_axial - p`` against the axial strain, with the lateral stresses
(which the servo keeps at ``p``) and the volumetric strain.

Run:  python examples/isotropic_compression.py [--per-side 6] [--strain 0.1] [--threads 1]
(216 spheres: ~15 s on one core once compiled; the first run on a machine compiles the kernels
first, about 30-50 s on a 2-core machine)
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import contactlab as cl

#: walls in the order they are added: -x, +x, -y, +y, bottom, top
X0, X1, Y0, Y1, BOTTOM, TOP = range(6)


def build(per_side=6, radius=1e-3, spread=0.2, seed=3, friction=0.3, young=1e9, threads=None):
    """The scene and simulation: a loose lattice of ``per_side**3`` spheres in a box of 6 walls
    (soft glass, ``young`` Pa: at 100 kPa the contacts of 1 mm spheres overlap ~1 % of the radius)."""
    glass = cl.Material(density=2500.0, young=young, poisson=0.3, name="glass")
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(seed)
    spacing = 2.2 * radius * (1 + spread)
    side = spacing * per_side
    grid = (np.arange(per_side) + 0.5) * spacing
    pos = np.array([(x, y, z) for x in grid for y in grid for z in grid])
    pos += rng.uniform(-0.05, 0.05, pos.shape) * radius
    radii = radius * (1 + spread * rng.uniform(-1, 1, len(pos)))
    scene.add_spheres(positions=pos, radii=radii, material=glass)
    for axis in range(3):
        n = np.zeros(3)
        n[axis] = 1.0
        scene.add_wall(point=np.zeros(3), normal=n, material=glass)
        scene.add_wall(point=side * n, normal=-n, material=glass)
    model = cl.models.HertzMindlin(restitution=0.3, friction=friction)
    return cl.Simulation(scene, model, local_damping=0.3, threads=threads)


def lateral_area_pairs(wall):
    """The two pairs of opposite walls whose gaps give the area of ``wall``."""
    pairs = [(X0, X1), (Y0, Y1), (BOTTOM, TOP)]
    return [p for p in pairs if wall not in p]


def compress_isotropically(sim, pressure, *, max_speed=0.1, tolerance=0.01, max_time=0.5, check_every=0.002,
                           progress=None):
    """Servo all six walls to ``pressure`` (Pa; walls at most ``max_speed`` m/s) and run until every
    wall's stress is within ``tolerance`` of it and the spheres are at rest; returns the time it
    took (s).  ``progress(time, stresses, kinetic / elastic)`` is called at every check."""
    for w in range(6):
        sim.servo_wall(w, target_stress=pressure, area_from=lateral_area_pairs(w), max_speed=max_speed)
    start = sim.time
    while sim.time - start < max_time:
        sim.run(duration=check_every)
        stress = sim.servo_status()["stress"]
        kinetic = sim.energy()["kinetic"]
        elastic = sim.energy()["elastic"]
        if progress:
            progress(sim.time, stress, kinetic / max(elastic, 1e-300))
        if np.all(np.abs(stress / pressure - 1.0) < tolerance) and kinetic < 1e-4 * elastic:
            return sim.time - start
    raise RuntimeError(f"no isotropic equilibrium at {pressure} Pa within {max_time} s: stresses {stress}")


def box_size(sim):
    """(3,) the gaps between opposite walls, m."""
    p = sim.wall_points
    return np.array([p[X1, 0] - p[X0, 0], p[Y1, 1] - p[Y0, 1], p[TOP, 2] - p[BOTTOM, 2]])


def axial_loading(sim, pressure, *, strain=0.1, rate=1.0, samples=20, progress=None):
    """Strain control: the top wall moves down at ``rate`` (1/s) times the initial height, the
    bottom wall stops, the lateral walls stay servo-controlled at ``pressure``.  Returns rows of
    (axial strain, deviator stress q (Pa), mean lateral stress (Pa), volumetric strain);
    ``progress(row)`` is called with each row as it is measured."""
    size0 = box_size(sim)
    sim.set_wall_velocity(BOTTOM, (0.0, 0.0, 0.0))
    sim.set_wall_velocity(TOP, (0.0, 0.0, -rate * size0[2]))
    rows = []
    duration = strain / rate
    for _ in range(samples):
        sim.run(duration=duration / samples)
        size = box_size(sim)
        axial = sim.wall_stress(TOP, area_from=lateral_area_pairs(TOP))
        lateral = sim.servo_status()["stress"]
        rows.append((1.0 - size[2] / size0[2], axial - pressure, float(lateral.mean()),
                     1.0 - np.prod(size) / np.prod(size0)))
        if progress:
            progress(rows[-1])
    return np.array(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-side", type=int, default=6, help="spheres per side of the lattice (default 6)")
    parser.add_argument("--pressure", type=float, default=1e5, help="confining stress, Pa (default 1e5)")
    parser.add_argument("--strain", type=float, default=0.1, help="final axial strain (default 0.1)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: all cores; the results do "
                                                                     "not depend on it)")
    args = parser.parse_args(argv)
    sim = build(args.per_side, threads=args.threads)
    print(f"{sim.n_spheres} spheres, dt = {sim.dt:.3g} s", flush=True)
    last = [time.perf_counter()]

    def report(t, stress, ratio):          # a line at most every 5 s of wall time while compressing
        if time.perf_counter() - last[0] >= 5.0:
            last[0] = time.perf_counter()
            print(f"  t = {t:.3f} s: wall stresses {np.round(stress / 1e3, 2)} kPa, kinetic / elastic {ratio:.2e}",
                  flush=True)

    took = compress_isotropically(sim, args.pressure, progress=report)
    size = box_size(sim)
    solid = np.sum(4.0 / 3.0 * np.pi * sim.model.radius**3)
    print(f"isotropic state after {took:.3f} s: wall stresses {np.round(sim.servo_status()['stress'] / 1e3, 2)} kPa, "
          f"solid fraction {solid / np.prod(size):.3f}")
    print(" axial strain   q (kPa)   lateral stress (kPa)   volumetric strain", flush=True)

    def row(r):                            # each row as it is measured
        eps, q, lat, vol = r
        print(f"   {eps:8.4f}   {q / 1e3:8.2f}   {lat / 1e3:10.2f}             {vol:+.4f}", flush=True)

    rows = axial_loading(sim, args.pressure, strain=args.strain, progress=row)
    return sim, rows


if __name__ == "__main__":
    main()
