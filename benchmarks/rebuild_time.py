"""Time of one neighbour-list rebuild on the benchmark's settled packing, most rows moving.

Every sphere is jittered by 0.3 skin before each rebuild, so that pairs enter and leave the list
and most carried rows change place (the worst case of the in-place move of
``contactlab.engine.history_match``).  Not physics: only the rebuild's cost is of interest.

    python benchmarks/rebuild_time.py [N] [THREADS]        # default 1000000 2
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # noqa: E402


def main(n: int = 1_000_000, threads: int = 2, repeats: int = 4) -> list[float]:
    import contactlab as cl

    inp = scale.scene_input("packing", n)
    scene, model = scale.build(inp)
    sim = cl.Simulation(scene, model, dt=inp["dt"], threads=threads)
    sim.run(steps=2)
    rng = np.random.default_rng(0)
    stepper = sim.stepper
    times = []
    with stepper.threads_scope():
        for _ in range(repeats):
            sim.state.positions[:] += rng.normal(scale=0.3 * sim.table.skin, size=sim.state.positions.shape)
            t0 = time.perf_counter()
            stepper.rebuild()
            times.append(time.perf_counter() - t0)
    print(f"N={n} threads={threads} pairs={sim.table.n_pairs}: rebuild "
          + " ".join(f"{t:.3f}" for t in times[1:]) + " s (the first, compiling or warming, dropped)")
    return times


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
