"""Throughput and start-up of the non-spherical shapes and mesh walls.

Cases (Hertz-Mindlin, glass-like grains, gravity, settling in a box of plane walls):

* ``mesh``: spheres of radius 1.5 mm poured into the STL hopper of ``examples/data/hopper.stl``
  (192 triangles), outlet closed by a plane: sphere-triangle contacts with the one-contact-per-
  surface selection;
* ``ellipsoids``: prolate/oblate ellipsoids (common normal, warm-started);
* ``boxes``: cubes (GJK/EPA, Minkowski overlap).

For each: bodies, steps, body-steps per second (the run after a short warm-up, so compilation is
not counted) and contacts at the end.  Start-up (first Simulation in a fresh process, compiling
the kernels, versus a second process loading them from the cache) is measured with
``--startup``.

Run:  python benchmarks/shapes.py [--case mesh|ellipsoids|boxes|all] [--count N] [--steps S] [--startup]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import contactlab as cl

ROOT = Path(__file__).resolve().parent.parent


def scene_for(case, count, seed=0):
    rng = np.random.default_rng(seed)
    grain = cl.Material(density=2500.0, young=5e6, poisson=0.3, name="grain")
    scene = cl.Scene()
    if case == "mesh":
        scene.add_mesh(ROOT / "examples" / "data" / "hopper.stl", material=grain, scale=1e-3)
        scene.add_wall(point=(0, 0, 0.020), normal=(0, 0, 1), material=grain)
        r = 1.5e-3
        xs = np.arange(-0.026, 0.026, 3.4e-3)
        layer = [(x, y) for x in xs for y in xs if x * x + y * y < 0.027**2]
        pos = np.array([(x, y, 0.062 + 3.4e-3 * k) for k in range(200) for x, y in layer])[:count]
        scene.add_spheres(pos, r * rng.uniform(0.9, 1.1, len(pos)), grain)
        return scene
    half = 0.02 + 0.0005 * count ** (1 / 3)
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((-half, 0, 0), (1, 0, 0)), ((half, 0, 0), (-1, 0, 0)),
                          ((0, -half, 0), (0, 1, 0)), ((0, half, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=grain)
    spacing = 5e-3
    xs = np.arange(-half + spacing, half - spacing / 2, spacing)
    sites = np.array([(x, y, spacing * (k + 1)) for k in range(1000) for x in xs for y in xs])[:count]
    for k, p in enumerate(sites):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        if case == "ellipsoids":
            axes = (2.0e-3, 1.0e-3, 1.0e-3) if k % 2 == 0 else (1.6e-3, 1.6e-3, 0.8e-3)
            scene.add_ellipsoid(position=p, semi_axes=axes, material=grain, orientation=q)
        else:
            scene.add_box(position=p, half_extents=(1.2e-3, 1.2e-3, 1.2e-3), material=grain, orientation=q)
    return scene


def run(case, count, steps):
    scene = scene_for(case, count)
    t0 = time.perf_counter()
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(steps=20)
    startup = time.perf_counter() - t0
    sim.run(steps=max(steps // 4, 1))  # let it fall into contact
    t0 = time.perf_counter()
    sim.run(steps=steps)
    wall = time.perf_counter() - t0
    return dict(case=case, bodies=sim.n_spheres, steps=steps, dt=sim.dt, seconds=wall,
                body_steps_per_second=sim.n_spheres * steps / wall, contacts=sim.n_contacts(), startup_seconds=startup)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="all")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--startup", action="store_true", help="measure start-up in two fresh processes")
    a = parser.parse_args()
    cases = ["mesh", "ellipsoids", "boxes"] if a.case == "all" else [a.case]
    for case in cases:
        if a.startup:
            for attempt in ("first", "cached"):
                out = subprocess.run([sys.executable, __file__, "--case", case, "--count", "50", "--steps", "4"],
                                     capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
                print(json.dumps({"case": case, "process": attempt, "startup_seconds": json.loads(out)["startup_seconds"]}))
        else:
            print(json.dumps(run(case, a.count, a.steps)), flush=True)


if __name__ == "__main__":
    main()
