"""Two spheres head-on (glass, r = 1 mm, 0.05 m/s each), Hertz-Mindlin, 1e5 steps of 1e-6 s on one
thread: microseconds per step, best of 5 (the fixed cost of a step; LAMMPS: 0.28 us in issue 16).

Usage::

    python benchmarks/two_bodies.py
"""
from __future__ import annotations

import json
import time


def main() -> int:
    import contactlab as cl

    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    best = 1e9
    for _ in range(5):
        scene = cl.Scene(gravity=(0, 0, 0))
        scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass, velocity=(0, 0, 0.05))
        scene.add_sphere(position=(0, 0, 2.05e-3), radius=1e-3, material=glass, velocity=(0, 0, -0.05))
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-6, threads=1)
        t0 = time.perf_counter()
        sim.run(steps=100_000)
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"us_per_step": best / 1e5 * 1e6}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
