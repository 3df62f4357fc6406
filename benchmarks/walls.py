"""Cylinder walls and servo walls: microseconds per step (1 thread, best of 5) of

* ``two``: two spheres on a floor (Hertz-Mindlin), the fixed cost of a step;
* ``box``: 2000 beads settling in a box of five plane walls;
* ``cylinder``: the same beads in a cylinder wall on a floor;
* ``servo``: the box with its four lateral walls servo-controlled (a target of 0 N, 1e-9 m/s).

Run it with the code before a change and after (``PYTHONPATH=<checkout>/src``, separate
``CONTACTLAB_CACHE_DIR``), alternately, to compare; ``--only two box`` skips the cases the code
before cannot run.

Usage::

    python benchmarks/walls.py [--only two box cylinder servo]
"""
from __future__ import annotations

import argparse
import json
import time

import contactlab as cl

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3)
L = 0.03


def _two():
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.0011), radius=1e-3, material=GLASS)
    scene.add_sphere(position=(0.0021, 0, 0.0011), radius=1e-3, material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    return scene, 100000


def _beads(kind):
    scene = cl.Scene()
    scene.fill_box((0.002, 0.002, 0), (L - 0.002, L - 0.002, 0.05), 1e-3, GLASS, jitter=0.5, seed=11,
                   radius_spread=0.2, max_count=2000)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    if kind == "cylinder":
        scene.add_cylinder_wall((L / 2, L / 2, 0), (0, 0, 1), 0.75 * L, GLASS)
    else:
        for p, n in [((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)), ((0, L, 0), (0, -1, 0))]:
            scene.add_wall(point=p, normal=n, material=GLASS)
    return scene, 1000


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=["two", "box", "cylinder", "servo"])
    args = parser.parse_args(argv)
    out = {}
    for case in args.only:
        scene, steps = _two() if case == "two" else _beads(case)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.4, friction=0.5), threads=1)
        if case == "servo":
            for w in range(1, 5):
                sim.servo_wall(w, target_force=0.0, max_speed=1e-9)
        sim.run(steps=3000)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            sim.run(steps=steps)
            best = min(best, (time.perf_counter() - t0) / steps)
        out[case] = round(best * 1e6, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
