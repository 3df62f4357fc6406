"""What a particle stream costs: one exchange (insert or remove spheres) against one step.

For the lattice scene of :mod:`lattice_scene` (N beads in a box), an inlet above the lattice
inserts ``--batch`` spheres every ``--every`` steps and an outlet removes the spheres that reach a
thin slab at the top of the lattice; the run is timed against the same run without streams
(interleaved, ``--repeat`` times), and one exchange is timed alone.  Prints, in microseconds, a
step without streams, a step with them, and an exchange, plus the exchange's cost in steps.

Usage::

    python benchmarks/streams.py --n 10000 --every 200 --batch 20 --threads 1
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402


def build(n: int, streams: bool, every: int, batch: int):
    import contactlab as cl

    inp = scale.scene_input("lattice", n)
    scene, model = scale.build(inp)
    sim = cl.Simulation(scene, model, dt=inp["dt"])
    if streams:
        side = inp["side"]
        top = float(sim.positions[:, 2].max()) + 0.005
        glass = sim.model.materials[0]
        box = cl.packing.regions.box((0.1 * side, 0.1 * side, top), (0.9 * side, 0.9 * side, top + 0.01))
        sim.add_inlet(box, glass, radius=1e-3, rate=batch / (every * inp["dt"]), every=every, seed=1)
        sim.add_outlet(cl.packing.regions.box((0, 0, top + 0.004), (side, side, top + 0.006)), every=every)
    return sim


def measure(n: int, every: int, batch: int, steps: int, repeat: int) -> dict:
    plain, stream = build(n, False, every, batch), build(n, True, every, batch)
    for sim in (plain, stream):
        sim.run(steps=every)                       # compiled, and the first exchange made
    t_plain, t_stream = [], []
    for _ in range(repeat):
        for sim, out in ((plain, t_plain), (stream, t_stream)):
            t0 = time.perf_counter()
            sim.run(steps=steps)
            out.append((time.perf_counter() - t0) / steps)
    # one exchange alone: the inlet due now, at a step boundary
    inlet = stream.streams.members[0]
    t0 = time.perf_counter()
    reps = 5
    for _ in range(reps):
        stream.state.step = inlet.next_step(stream.state.step)
        stream.streams.maybe_exchange(stream)
    exchange = (time.perf_counter() - t0) / reps
    step_plain, step_stream = min(t_plain), min(t_stream)
    return dict(n=stream.n_spheres, every=every, batch=batch, step_plain_us=1e6 * step_plain,
                step_streams_us=1e6 * step_stream, exchange_us=1e6 * exchange, exchange_in_steps=exchange / step_plain,
                inserted=inlet.inserted)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--every", type=int, default=200)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    a = parser.parse_args()
    numba.set_num_threads(a.threads)
    r = measure(a.n, a.every, a.batch, a.steps, a.repeat)
    print("| N | every | batch | step, us (no streams) | step, us (streams) | exchange, us | exchange / step |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {r['n']} | {r['every']} | {r['batch']} | {r['step_plain_us']:.0f} | {r['step_streams_us']:.0f} | "
          f"{r['exchange_us']:.0f} | {r['exchange_in_steps']:.1f} |")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
