"""The time step of issue 42: what ``dt=None`` picks on the benchmarks' dense scenes, what it costs,
and what the energy watchdog and the refreshed bound cost per step.

1. ``price``: for the lattice and the settled packing of ``scale.py`` (and the 3 x 3 x 3 lattice
   and triaxial sample of issue 42), the single-contact limit, the bound of the contacts present,
   the step ``dt=None`` picks now and the one it picked before issue 42 (0.35 of the single-contact
   limit), and the particle-steps per simulated second ``N / dt`` of each.
2. ``monitor``: the dense lattice stepped with the run monitor (energy watchdog and bound refresh)
   and without it (its check replaced by nothing), in interleaved rounds, median ms per step.

Run:  python benchmarks/time_step.py price [--n 10000 100000]
      python benchmarks/time_step.py monitor [--n 100000] [--rounds 5] [--steps 200] [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale  # noqa: E402  (the benchmarks' scenes)

#: the step dt=None took before issue 42, as a fraction of the single-contact limit (Hertz-Mindlin)
OLD_FRACTION = 0.35


def _sim(kind: str, n: int, threads: int = 1):
    import contactlab as cl

    inp = scale.scene_input(kind, n)
    scene, model = scale.build(inp)
    return cl.Simulation(scene, model, threads=threads)


def price(ns) -> None:
    print("| scene | N | single-contact limit, s | bound of the contacts present, s | dt=None before, s | dt=None now, s | "
          "N/dt before | N/dt now | cost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("lattice", "packing"):
        for n in ns:
            sim = _sim(kind, n)
            old = OLD_FRACTION * sim.contact_limit
            new = sim.dt
            print(f"| {kind} | {sim.n_spheres} | {sim.contact_limit:.4g} | {sim.packing_limit.limit:.4g} | {old:.4g} | "
                  f"{new:.4g} | {sim.n_spheres / old:.3g} | {sim.n_spheres / new:.3g} | {old / new:.3f} |")


def monitor(n: int, rounds: int, steps: int, threads: int) -> None:
    sim = _sim("lattice", n, threads)
    sim.run(steps=2 * sim.monitor.interval)          # compiled, one check done
    check = sim.monitor.check
    times = {"on": [], "off": []}
    for r in range(rounds):
        for state in (("on", "off") if r % 2 == 0 else ("off", "on")):     # alternate which goes first
            sim.monitor.check = check if state == "on" else (lambda _sim: None)
            t0 = time.perf_counter()
            sim.run(steps=steps)
            times[state].append((time.perf_counter() - t0) / steps * 1e3)
    # the checks' own time, counted inside a run of as many steps (exact accounting, no A/B noise)
    spent = [0.0]

    def timed(s):
        t = time.perf_counter()
        check(s)
        spent[0] += time.perf_counter() - t

    sim.monitor.check = timed
    t0 = time.perf_counter()
    sim.run(steps=rounds * steps)
    whole = time.perf_counter() - t0
    sim.monitor.check = check
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    print(f"the checks' own time in a run of {rounds * steps} steps: {spent[0] * 1e3:.1f} ms of {whole * 1e3:.0f} ms "
          f"({100 * spent[0] / whole:.2f} %)")
    print(f"lattice N={sim.n_spheres} threads={threads} interval={sim.monitor.interval} steps: "
          f"monitor on {on:.3f} ms/step (min {min(times['on']):.3f}, max {max(times['on']):.3f}), "
          f"off {off:.3f} ms/step (min {min(times['off']):.3f}, max {max(times['off']):.3f}); "
          f"on/off {on / off:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("price", "monitor"))
    ap.add_argument("--n", type=int, nargs="+", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    if a.what == "price":
        price(a.n or [10_000, 100_000])
    else:
        monitor((a.n or [100_000])[0], a.rounds, a.steps, a.threads)


if __name__ == "__main__":
    main()
