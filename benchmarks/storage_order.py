"""What the order in which the spheres are stored costs, and what the storage-order check says.

The same scene is built several times, each with its spheres stored in another order, and the
simulations are stepped in turn in one process (interleaved rounds, so that a noisy machine hits
every order alike; min and median over the rounds).  Orders:

* ``given``: as the scene makes them (the lattice: lattice order; the packing: the settle scene's
  order, tiled; ``fill``: what ``random_packing`` returns, along the Morton curve since e0f033b);
* ``random``: a random permutation of those (a generator that scatters its spheres, or
  ``random_packing`` before e0f033b, which returned them in the order their sizes were drawn);
* ``morton``: the random permutation sorted again with ``contactlab.packing.spatial_order``.

Scenes: ``lattice`` and ``packing`` of ``scale.py``, and ``fill``: 1e5 spheres placed by
``random_packing`` (random sequential addition, diameters uniform in 1.6-2.4 mm, a 0.12 m box,
packing fraction 0.24, on a floor under gravity: a loose bed that falls).  Also printed: the
median index distance of the candidate pairs (``engine/storage_order.py``) and whether building the
simulation gave a ``StorageOrderWarning``.

Usage::

    python benchmarks/storage_order.py --scene packing --n 100000 --threads 1 2 --rounds 10
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def scene_and_dt(kind: str, n: int, perm_of):
    """(scene, model, dt, N) of scene ``kind`` at about ``n`` spheres, stored in the order ``perm_of(positions)``."""
    import contactlab as cl

    if kind == "fill":
        from contactlab.packing import regions
        from contactlab.scene.random_packing import random_packing

        side = 0.12 * (n / 1e5) ** (1 / 3)
        pos, radii = random_packing(regions.box((0, 0, 0), (side, side, side)),
                                    cl.distributions.Uniform(1.6e-3, 2.4e-3), count=n, seed=1)
        perm = perm_of(pos)
        glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        scene = cl.Scene(gravity=(0, 0, -9.81))
        scene.add_spheres(pos[perm], radii[perm], glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        return scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), None, len(pos)
    import lattice_scene
    import scale

    inp = scale.scene_input(kind, n)
    pos = inp["positions"][perm_of(inp["positions"])]
    if kind == "lattice":
        scene, model, _ = lattice_scene.build_scene(n, positions=pos)
    else:
        scene, model = scale.build(dict(inp, positions=pos))
    return scene, model, inp["dt"], len(pos)


def main(argv=None) -> int:
    import contactlab as cl
    from contactlab.engine.storage_order import index_spread

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", choices=("lattice", "packing", "fill"), default="packing")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--orders", nargs="+", choices=("given", "random", "morton"), default=["given", "random", "morton"])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=0, help="steps per round (default: about 2e6 particle-steps)")
    args = ap.parse_args(argv)

    def perm_of(order):
        def perm(pos):
            if order == "given":
                return np.arange(len(pos))
            shuffled = np.random.default_rng(0).permutation(len(pos))
            return shuffled if order == "random" else shuffled[cl.packing.spatial_order(pos[shuffled])]
        return perm

    print("| scene | N | threads | order | median index distance | warned | step, ms (min) | step, ms (median) "
          "| particle-steps/s (median) |")
    print("|---|---:|---:|---|---:|---|---:|---:|---:|")
    for threads in args.threads:
        sims, spread, warned = {}, {}, {}
        for order in args.orders:
            scene, model, dt, n = scene_and_dt(args.scene, args.n, perm_of(order))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sim = cl.Simulation(scene, model, dt=dt, threads=threads)
            warned[order] = any(issubclass(w.category, cl.StorageOrderWarning) for w in caught)
            t = sim.table
            spread[order] = index_spread(t.pair_i[:t.n_pairs], t.pair_j[:t.n_pairs], t.n_spheres)
            sim.run(steps=5)
            sims[order] = sim
        steps = args.steps or max(5, int(2e6 / n))
        times = {order: [] for order in sims}
        for _ in range(args.rounds):
            for order, sim in sims.items():
                t0 = time.perf_counter()
                sim.run(steps=steps)
                times[order].append((time.perf_counter() - t0) / steps)
        for order in sims:
            v = np.array(times[order])
            print(f"| {args.scene} | {n} | {threads} | {order} | {spread[order]:.0f} | {'yes' if warned[order] else 'no'} "
                  f"| {v.min() * 1e3:.2f} | {np.median(v) * 1e3:.2f} | {n / np.median(v):.3g} |", flush=True)
        sims.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
