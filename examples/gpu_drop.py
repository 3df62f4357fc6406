"""Spheres dropped into a box of walls, on the GPU and on the CPU: the same script, the same results.

    python examples/gpu_drop.py                       # on an NVIDIA GPU (pip install -e ".[gpu]")
    NUMBA_ENABLE_CUDASIM=1 python examples/gpu_drop.py --side 3 --steps 200
                                                      # without a GPU: numba-cuda's simulator (slow)

Runs the scene on ``device="cuda"`` and on ``device="cpu"`` and prints the particle-steps per second
of each and the largest difference of the final positions (rounding only: the GPU takes every sum
in the CPU's order).  See docs/gpu.md.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import contactlab as cl


def build(side: int, device: str) -> cl.Simulation:
    """``side^3`` glass beads on a jittered lattice above the floor of a box, falling."""
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    radius = 1e-3
    rng = np.random.default_rng(0)
    scene = cl.Scene(gravity=(0, 0, -9.81))
    spacing = 2.2 * radius
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    positions = (grid + 0.5) * spacing + rng.uniform(-0.05, 0.05, grid.shape) * radius
    scene.add_spheres(positions, np.full(len(positions), radius), glass)
    width = side * spacing
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((width, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, width, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=glass)
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), device=device)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", type=int, default=40, help="beads per edge of the lattice (default 40: 64,000)")
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args(argv)
    reason = cl.gpu.available()
    if reason is not None:
        raise SystemExit(f"no GPU run here: {reason}")
    final = {}
    for device in ("cuda", "cpu"):
        sim = build(args.side, device)
        sim.run(steps=1)                      # a warm-up step: kernels built, contacts found
        t0 = time.perf_counter()
        sim.run(steps=args.steps)
        seconds = time.perf_counter() - t0
        final[device] = sim.positions.copy()
        n = len(final[device])
        print(f"{device:4s}: {n} spheres, {args.steps} steps in {seconds:.2f} s = {n * args.steps / seconds:.3g} "
              f"particle-steps/s; {sim.n_contacts()} contacts, energy balance error "
              f"{sim.energy()['balance_error']:.2e} J")
    difference = float(np.abs(final["cuda"] - final["cpu"]).max())
    print(f"largest difference of the final positions, GPU - CPU: {difference:.3g} m")
    return dict(final, difference=difference)


if __name__ == "__main__":
    main()
