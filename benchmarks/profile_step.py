"""Where one step's time goes: each kernel of the step timed alone on the dense lattice.

For the lattice scene of :mod:`lattice_scene` (lattice order, or ``--order random``: the same
spheres stored in a random order, or ``--order morton``: that random order sorted with
:func:`contactlab.packing.spatial_order`), after 20 steps, prints per step (microseconds): the whole step
(``Simulation.run``, Python between kernel calls included), the pair pass alone (narrow phase, law,
per-contact writes, per-sphere sums of the owner's side), the reduction alone (partner sides
gathered, kick, flag checks), the kick-drift alone, one neighbour-list rebuild (milliseconds) and
the rebuilds per 1000 steps of the run, plus the bytes per sphere of the stepper's arrays.  The
passes are the step's own kernels called on the stepper's records, with ``dt = 0`` (nothing moves;
the same loops): the pair pass is the force evaluation (``advance`` with ``n_steps = -1``: the sweep
of pairs and reduction, serial or parallel as the run) less the reduction alone (``reduce_block``
over all bodies, serially); the kick-drift is ``kick_drift_block`` over all bodies, serially.

Usage::

    python benchmarks/profile_step.py --n 10000 100000 --threads 1 2 [--order lattice|random|morton]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lattice_scene as L  # noqa: E402


def profile(n: int, threads: int, order: str = "lattice", scene_kind: str = "lattice") -> dict:
    import contactlab as cl
    from contactlab._jit import n_blocks

    import scale

    inp = scale.scene_input(scene_kind, n)
    pos = inp["positions"]
    if order in ("random", "morton"):
        pos = pos[np.random.default_rng(0).permutation(len(pos))]
    if order == "morton":
        # the random order sorted again along the Morton curve (contactlab.packing.spatial_order)
        pos = pos[cl.packing.spatial_order(pos)]
    if scene_kind == "lattice":
        scene, model, _ = L.build_scene(n, positions=pos)
    else:
        scene, model = scale.build(dict(inp, positions=pos))
    sim = cl.Simulation(scene, model, dt=inp["dt"], threads=threads)
    big = len(pos)
    sim.run(steps=20)
    st, t, k = sim.stepper, sim.table, sim.stepper.kernels
    reps = max(3, int(2e6 / big))
    b0 = t.builds
    t0 = time.perf_counter()
    sim.run(steps=2 * reps)
    full = (time.perf_counter() - t0) / (2 * reps)
    builds = t.builds - b0
    # the step's own kernels, on the stepper's records (engine/step_records.py): the forces of the
    # present state (the sweep of pairs and reduction, with dt = 0), and the reduction and the
    # first half of a step alone, dt = 0 (nothing moves), each over all bodies as one block (the
    # per-block kernels of the serial step; a parallel loop cannot take the nested records from
    # Python, only through the step's references)
    bodies, books, bounds, table, run = st.records()
    blocks = n_blocks(big)
    parallel = None if blocks == 1 or threads == 1 else blocks

    def forces():
        k.advance(-1, 0.0, False, bodies, books, bounds, table, run, parallel)

    def reduction():
        k.reduce_block(0, big, 0.0, 0.0, bodies, books, bounds, table, run, bodies.rigid)

    def kick_drift():
        k.kick_drift_block(0, big, 0.0, bodies, table, run, bodies.rigid)

    def timed(f, r):
        with st.threads_scope():
            f()
            t0 = time.perf_counter()
            for _ in range(r):
                f()
            return (time.perf_counter() - t0) / r

    reduction_us = timed(reduction, reps) * 1e6
    return dict(n=big, threads=threads, order=order, pairs=int(t.n_pairs), contacts=int(sim.n_contacts()),
                step_us=full * 1e6, pair_pass_us=timed(forces, reps) * 1e6 - reduction_us,
                reduction_us=reduction_us, kick_drift_us=timed(kick_drift, reps) * 1e6,
                rebuild_ms=timed(st.rebuild, 3) * 1e3, rebuilds_per_1000_steps=1000 * builds / (2 * reps),
                particle_steps_per_s=big / full, stepper_bytes_per_sphere=st.nbytes / big)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--order", choices=("lattice", "random", "morton"), default="lattice")
    ap.add_argument("--scene", choices=("lattice", "packing", "falling"), default="lattice",
                    help="a scene of scale.py (default: the dense lattice)")
    args = ap.parse_args(argv)
    print("| N | threads | step, us | pair pass | reduction | kick-drift | rest (Python, fusion) | rebuild, ms "
          "| rebuilds/1000 steps | p-steps/s | stepper B/sphere |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.n:
        for th in args.threads:
            r = profile(n, th, args.order, args.scene)
            rest = r["step_us"] - r["pair_pass_us"] - r["reduction_us"] - r["kick_drift_us"]
            print(f"| {r['n']} | {th} | {r['step_us']:.0f} | {r['pair_pass_us']:.0f} | {r['reduction_us']:.0f} | "
                  f"{r['kick_drift_us']:.0f} | {rest:.0f} | {r['rebuild_ms']:.1f} | {r['rebuilds_per_1000_steps']:.1f} "
                  f"| {r['particle_steps_per_s']:.3g} | {r['stepper_bytes_per_sphere']:.0f} |", flush=True)
            print(json.dumps(r), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
