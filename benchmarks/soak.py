"""The soak benchmark: a long run with every writer on, watched for leaks.

50 glass beads in a closed box (six walls) with gravity, Hertz-Mindlin (e = 0.5, mu = 0.5); the
floor shakes (its velocity switches between +0.1 and -0.1 m/s every tenth of a chunk: at the
default step a square wave of 1.25 mm peak to peak) so that the beads keep colliding for the whole
run and energy flows in through the floor (boundary work) and out through the contacts
(dissipation).  1e6 steps by default, in chunks of ``--vtk-every`` steps (1e4), with a VTK reporter
(one frame per chunk), an energy CSV (one row per chunk) and a checkpoint (every 10 chunks).  After
each chunk it samples:

* the resident set size (VmRSS from /proc/self/status), kB;
* the number of open file descriptors (/proc/self/fd);
* the relative energy balance error (``sim.summary()["energy_balance_relative"]``), the absolute
  one and the energy dissipated and put in by the floor so far (J: they grow steadily while the
  beads keep colliding; the number of contacts at the sample is small because every chunk ends
  with the floor moving down, away from the beads);
* wall seconds for the chunk.

The report: RSS after the first chunk (warm-up: compilation, first allocations), its minimum,
maximum and last value, the slope of RSS over the second half of the run (least squares, kB per
1e5 steps), the file-descriptor range, the final energy balance, steps per second.  Samples go to
``<out>/soak.csv`` and a plot to ``<out>/soak.png``.  The script exits with status 1 when RSS grows
over the second half by more than ``--rss-limit`` kB plus ``--rss-per-frame`` kB per VTK frame
written in that half (the VTK reporter keeps about 0.75 kB per frame by design: the entries of its
``.pvd`` collections), when the number of open files changes, or when the energy balance is worse
than ``--balance-limit``: usable as a check, never as a test.  With the defaults (128 kB + 1 kB x 49
frames = 177 kB) it fails on a leak of 10 kB per frame or 1 kB per ``run()`` call (tried by injecting
one; 5 kB per frame and 0.4 kB per call land at the limit); a clean run grows by 40-60 kB.

Usage::

    NUMBA_NUM_THREADS=1 python benchmarks/soak.py --threads 1 [--steps 1000000] [--vtk-every 10000] [--out benchmarks/out/soak]
"""
from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import contactlab as cl

HERE = Path(__file__).resolve().parent
GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
RADIUS = 1e-3
BOX = 12e-3          # m, inner side of the box
SHAKE_SPEED = 0.1    # m/s, the floor's speed up or down
SHAKES = 10          # velocity switches per chunk


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def build(threads: int | None) -> tuple[cl.Simulation, int]:
    """The box of 50 beads; returns the simulation and the floor's wall index."""
    rng = np.random.default_rng(11)
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    grid = np.stack(np.meshgrid(np.arange(5), np.arange(5), np.arange(2), indexing="ij"), axis=-1).reshape(-1, 3)
    pos = 1.6e-3 + 2.2e-3 * grid + rng.uniform(-1e-4, 1e-4, size=grid.shape)
    scene.add_spheres(positions=pos, radii=RADIUS, material=GLASS, velocities=rng.normal(0.0, 0.05, size=pos.shape))
    floor = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    for point, normal in (((0, 0, BOX), (0, 0, -1)), ((0, 0, 0), (1, 0, 0)), ((BOX, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, BOX, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), threads=threads)
    return sim, floor


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=float, default=1e6)
    p.add_argument("--vtk-every", type=int, default=10000)
    p.add_argument("--out", type=Path, default=HERE / "out" / "soak")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--rss-limit", type=float, default=128.0,
                   help="RSS growth over the second half allowed besides the per-frame allowance, kB (default 128)")
    p.add_argument("--rss-per-frame", type=float, default=1.0,
                   help="RSS growth allowed per VTK frame written in the second half, kB (default 1; the "
                        "reporter keeps ~0.75 kB per frame by design)")
    p.add_argument("--balance-limit", type=float, default=0.02,
                   help="largest relative energy balance error that passes (default 0.02)")
    args = p.parse_args(argv)
    steps, chunk = int(args.steps), int(args.vtk_every)
    if chunk < SHAKES or chunk % SHAKES:
        p.error(f"--vtk-every must be a multiple of {SHAKES} (the floor switches {SHAKES} times per chunk)")
    if steps < 4 * chunk or steps % chunk:
        p.error("--steps must be a multiple of --vtk-every and at least 4 chunks (the second half is fitted)")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    sim, floor = build(args.threads)
    sim.add_reporter(cl.io.VTKReporter(out / "vtk", every=chunk))
    sim.add_reporter(cl.io.EnergyCSVReporter(out / "energy.csv", every=chunk))
    sim.add_reporter(cl.io.CheckpointReporter(out / "checkpoint.npz", every=10 * chunk))
    print(f"soak: {sim.n_spheres} beads, {steps} steps of dt = {sim.dt:.4g} s ({steps * sim.dt:.3g} s simulated), "
          f"a frame every {chunk} steps, into {out}", flush=True)

    samples = []
    start = time.perf_counter()
    for k in range(steps // chunk):
        t0 = time.perf_counter()
        for s in range(SHAKES):   # the floor shakes: up, down, ... (it ends each chunk where it started)
            sim.set_wall_velocity(floor, (0.0, 0.0, SHAKE_SPEED if s % 2 == 0 else -SHAKE_SPEED))
            sim.run(steps=chunk // SHAKES)
        summary = sim.summary()
        e = summary["energy"]
        samples.append(dict(step=sim.step, rss_kb=rss_kb(), open_files=open_files(),
                            balance=float(summary["energy_balance_relative"]), balance_error_J=e["balance_error"],
                            dissipated_J=e["dissipated"], boundary_work_J=e["boundary_work"],
                            contacts=sim.n_contacts(), chunk_seconds=time.perf_counter() - t0))
        if (k + 1) % max(1, (steps // chunk) // 10) == 0:
            s = samples[-1]
            print(f"  step {s['step']:>8}: RSS {s['rss_kb']} kB, {s['open_files']} open files, balance "
                  f"{s['balance']:.2e}, dissipated {s['dissipated_J']:.3g} J", flush=True)
    sim.close()
    wall = time.perf_counter() - start

    with open(out / "soak.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(samples[0]))
        w.writeheader()
        w.writerows(samples)
    step = np.array([s["step"] for s in samples], dtype=float)
    rss = np.array([s["rss_kb"] for s in samples], dtype=float)
    fds = np.array([s["open_files"] for s in samples])
    half = len(samples) // 2
    slope = np.polyfit(step[half:], rss[half:], 1)[0] * 1e5 if len(samples) - half >= 2 else 0.0
    growth = float(rss[half:].max() - rss[half])
    frames_second_half = (steps // chunk) - half - 1      # the frames written after the sample at `half`
    rss_allowed = args.rss_limit + args.rss_per_frame * frames_second_half
    balance = samples[-1]["balance"]
    chunk_s = np.array([s["chunk_seconds"] for s in samples])
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                   f"NumPy {np.__version__}, Numba {__import__('numba').__version__}",
        "steps": int(sim.step), "wall_seconds": wall, "steps_per_second": sim.step / wall,
        "rss_first_chunk_kb": int(rss[0]), "rss_min_kb": int(rss.min()), "rss_max_kb": int(rss.max()),
        "rss_last_kb": int(rss[-1]), "rss_growth_second_half_kb": growth, "rss_allowed_kb": rss_allowed,
        "rss_slope_second_half_kb_per_1e5_steps": float(slope),
        "open_files_min": int(fds.min()), "open_files_max": int(fds.max()),
        "energy_balance_relative": balance, "energy_balance_relative_first_chunk": samples[0]["balance"],
        "balance_error_J": samples[-1]["balance_error_J"], "dissipated_J": samples[-1]["dissipated_J"],
        "boundary_work_J": samples[-1]["boundary_work_J"],
        "chunk_seconds_median": float(np.median(chunk_s)), "chunk_seconds_max": float(chunk_s.max()),
        "vtk_frames": len(list((out / "vtk").glob("particles_*.vtp"))),
    }
    for key, value in report.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a, b, c) = plt.subplots(3, 1, sharex=True, figsize=(7, 7))
        a.plot(step, rss / 1024.0)
        a.set_ylabel("RSS (MiB)")
        b.plot(step, fds, drawstyle="steps-post")
        b.set_ylabel("open files")
        c.plot(step, 100.0 * np.array([s["balance"] for s in samples]))
        c.set_ylabel("energy balance error (%)")
        c.set_xlabel("step")
        a.set_title(f"soak: {sim.n_spheres} beads, {sim.step} steps, VTK every {chunk}")
        fig.tight_layout()
        fig.savefig(out / "soak.png", dpi=100)
    except ImportError:
        pass
    checks = [(growth <= rss_allowed, f"RSS growth over the second half {growth:.0f} kB "
                                      f"{'<=' if growth <= rss_allowed else '>'} {rss_allowed:g} kB"),
              (fds.min() == fds.max(), f"open files {fds.min()}..{fds.max()}"
                                       f"{' (constant)' if fds.min() == fds.max() else ' (changed)'}"),
              (abs(balance) <= args.balance_limit, f"|energy balance| {abs(balance):.2e} "
                                                   f"{'<=' if abs(balance) <= args.balance_limit else '>'} "
                                                   f"{args.balance_limit:g}")]
    ok = all(passed for passed, _ in checks)
    print(f"soak: {'PASS' if ok else 'FAIL'} (" + "; ".join(text for _, text in checks) + ")")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
