"""GPU throughput against the CPU engine on the same machine, on the scenes of ``benchmarks/scale.py``.

For each scene (``lattice``, ``packing``, ``falling``) and N, one fresh process per device runs the
same input (``scale.scene_input``/``scale.build``: the settle scene's beads, walls, material and
Hertz-Mindlin law) and reports particle-steps/s of ``Simulation.run(steps)`` after one warm-up
step, the neighbour-list rebuilds during the timed steps, and memory: on the GPU the device memory
in use after the run (``cuda.current_context().get_memory_info()``, less an 8-sphere run's) per
sphere, on the CPU the peak RSS per sphere as scale.py measures it.  Rounds interleave the two
devices so that a noisy machine hits both alike; the best of each is kept.

The first GPU run's latency is measured on its own: a fresh kernel cache (``CONTACTLAB_CACHE_DIR``
a new folder), the seconds from ``Simulation(...)`` through the first step (CPU kernels, law and
GPU kernels compiled), then the same again in a second process with the cache filled.

Usage (benchmarks/gpu/run.sh runs it on the GPU machine)::

    python benchmarks/gpu/bench.py [--scenes lattice packing falling] [--n 100000 1000000 10000000]
        [--cpu-threads 16] [--rounds 1] [--json benchmarks/out/gpu.json] [--plot benchmarks/gpu/gpu.png]
        [--cpu2 benchmarks/out/scale.json]      # 2-core CPU figures (scale.py --json) for the plot
    python benchmarks/gpu/bench.py --report benchmarks/out/gpu.json --plot gpu.png --cpu2 scale.json

Never run it under ``NUMBA_ENABLE_CUDASIM=1`` for figures: the simulator is a correctness tool.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import scale  # noqa: E402

#: steps timed per N on each device (about the same particle-steps per run)
STEPS = {"cuda": {100_000: 400, 1_000_000: 100, 10_000_000: 20}, "cpu": {100_000: 100, 1_000_000: 20,
                                                                          10_000_000: 4}}


def steps_for(device: str, n: int) -> int:
    table = STEPS[device]
    return table.get(n, max(4, int((4e7 if device == "cuda" else 1e7) / n)))


def device_memory_used() -> int:
    from contactlab.gpu import backend

    if backend.simulated():  # no device memory to read (and no figure to quote)
        return 0
    free, total = backend.cuda.current_context().get_memory_info()
    return int(total - free)


def worker(kind: str, n: int, device: str, threads: int, steps: int) -> dict:
    import contactlab as cl

    inp = scale.scene_input("lattice" if kind == "baseline" else kind, n)
    scene, model = scale.build(inp)
    t0 = time.perf_counter()
    sim = cl.Simulation(scene, model, dt=inp["dt"], threads=threads, device=device)
    sim.run(steps=1)
    first = time.perf_counter() - t0
    builds0 = sim.table.builds
    t0 = time.perf_counter()
    sim.run(steps=steps)
    wall = time.perf_counter() - t0
    n_real = len(inp["positions"])
    row = dict(scene=kind, n=n_real, device=device, threads=threads, steps=steps, seconds=wall, first_s=first,
               particle_steps_per_s=n_real * steps / wall, contacts=sim.n_contacts(),
               builds=sim.table.builds - builds0, dt=sim.dt, peak_rss_bytes=scale.peak_rss())
    if device == "cuda":
        row["device_bytes"] = device_memory_used()
    return row


def run_worker(kind, n, device, threads, steps, env=None, timeout=900) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, str(n), device, str(threads), str(steps)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"worker failed: {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def first_run_latency(threads: int) -> dict:
    """Seconds to the first GPU step with an empty kernel cache, then with the cache filled."""
    with tempfile.TemporaryDirectory(prefix="contactlab-gpu-cache-") as cache:
        env = dict(os.environ, CONTACTLAB_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache)
        cold = run_worker("lattice", 1000, "cuda", threads, 2, env=env)
        warm = run_worker("lattice", 1000, "cuda", threads, 2, env=env)
    return dict(cold_s=cold["first_s"], warm_s=warm["first_s"])


def plot(results: dict, path: Path, cpu2: dict | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenes = [s for s in scale.SCENES if any(r["scene"] == s for r in results["runs"].values())]
    fig, axes = plt.subplots(1, len(scenes), figsize=(5 * len(scenes), 4), squeeze=False)
    for ax, kind in zip(axes[0], scenes):
        for device, style, label in (("cuda", "-o", "GPU"), ("cpu", "-s", "CPU")):
            rows = sorted((r["n"], r["particle_steps_per_s"], r["threads"]) for r in results["runs"].values()
                          if r["scene"] == kind and r["device"] == device and r.get("order", "sorted") == "sorted")
            if rows:
                ax.plot([r[0] for r in rows], [r[1] for r in rows], style,
                        label=label if device == "cuda" else f"CPU, {rows[0][2]} threads")
        if cpu2:
            pts = sorted((r["n"], r["particle_steps_per_s"]) for k, r in cpu2.get("contactlab", {}).items()
                         if k.split("|")[0] == kind and k.split("|")[2] == "2")
            if pts:
                ax.plot(*zip(*pts), "--^", label="CPU, 2 threads (2-core machine)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("spheres N")
        ax.set_ylabel("particle-steps / s")
        ax.set_title(kind)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def print_table(results: dict) -> None:
    print("| scene | N | GPU particle-steps/s (bodies sorted) | GPU, user's order | GPU, user's order, threads in "
          "cell order | CPU (threads) | GPU/CPU | rebuilds (GPU) | GPU bytes/sphere |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = results["runs"]
    base = results.get("baseline_device_bytes", 0)
    for key in sorted({(r["scene"], r["n"]) for r in runs.values()}, key=lambda k: (scale.SCENES.index(k[0]), k[1])):
        g = runs.get(f"{key[0]}|{key[1]}|cuda")
        c = runs.get(f"{key[0]}|{key[1]}|cpu")
        gc = runs.get(f"{key[0]}|{key[1]}|cuda-cells")
        gb = runs.get(f"{key[0]}|{key[1]}|cuda-bodies")
        gs = f"{g['particle_steps_per_s']:.3g}" if g else "-"
        gcs = f"{gc['particle_steps_per_s']:.3g}" if gc else "-"
        gbs = f"{gb['particle_steps_per_s']:.3g}" if gb else "-"
        cs = f"{c['particle_steps_per_s']:.3g} ({c['threads']})" if c else "-"
        ratio = f"{g['particle_steps_per_s'] / c['particle_steps_per_s']:.1f}" if g and c else "-"
        mem = f"{(g['device_bytes'] - base) / g['n']:.0f}" if g and "device_bytes" in g else "-"
        print(f"| {key[0]} | {key[1]} | {gs} | {gbs} | {gcs} | {cs} | {ratio} | {g['builds'] if g else '-'} | {mem} |")
    if "first_run" in results:
        f = results["first_run"]
        print(f"\nfirst GPU run: {f['cold_s']:.1f} s with an empty kernel cache, {f['warm_s']:.1f} s from the cache")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--scenes", nargs="+", default=list(scale.SCENES), choices=scale.SCENES)
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--cpu-threads", type=int, default=os.cpu_count())
    ap.add_argument("--cpu-max-n", type=int, default=10_000_000, help="largest N run on the CPU as well")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds one worker may take")
    ap.add_argument("--json", type=Path, default=scale.OUT / "gpu.json")
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--cpu2", type=Path, default=None, help="scale.py --json of the 2-core machine, for the plot")
    ap.add_argument("--report", type=Path, default=None, help="run nothing: print and plot a saved --json")
    ap.add_argument("--steps", type=int, default=None, help="steps per run (default: by N and device)")
    ap.add_argument("--no-first-run", action="store_true", help="skip the first-run latency (an empty cache)")
    ap.add_argument("--order-ab", type=int, nargs="*", default=[1_000_000],
                    help="N at which the GPU also runs with its bodies in the user's order, unsorted "
                         "(CONTACTLAB_GPU_ORDER=bodies) and with only its threads in cell order (=cells)")
    args = ap.parse_args(argv)
    if args.worker:
        kind, n, device, t, s = args.worker
        print(json.dumps(worker(kind, int(n), device, int(t), int(s))))
        return 0
    cpu2 = json.loads(args.cpu2.read_text()) if args.cpu2 and args.cpu2.exists() else None
    if args.report:
        results = json.loads(args.report.read_text())
    else:
        scale.OUT.mkdir(exist_ok=True)
        results = {"runs": {}, "machine": dict(cpus=os.cpu_count())}
        try:
            if not args.no_first_run:
                results["first_run"] = first_run_latency(args.cpu_threads)
                print(f"first GPU run: {results['first_run']}", flush=True)
            results["baseline_device_bytes"] = run_worker("baseline", 8, "cuda", args.cpu_threads, 2)["device_bytes"]
        except (RuntimeError, subprocess.TimeoutExpired) as exc:   # measured as far as it goes: say why not
            print(f"first GPU run / baseline: FAILED {str(exc)[-800:]}", flush=True)
        for rnd in range(args.rounds):
            for kind in args.scenes:
                for n in args.n:
                    variants = [("cuda", "sorted"), ("cpu", "sorted")]
                    if n in args.order_ab:
                        variants[1:1] = [("cuda", "bodies"), ("cuda", "cells")]
                    for device, order in variants:
                        if device == "cpu" and n > args.cpu_max_n:
                            continue
                        env = dict(os.environ, CONTACTLAB_GPU_ORDER=order)
                        try:
                            row = run_worker(kind, n, device, args.cpu_threads, args.steps or steps_for(device, n),
                                             env=env, timeout=args.timeout)
                        except (RuntimeError, subprocess.TimeoutExpired) as exc:
                            print(f"[{rnd + 1}] {kind} N={n} {device}: FAILED {str(exc)[-500:]}", flush=True)
                            continue
                        row["order"] = order
                        key = f"{kind}|{row['n']}|{device}" + (f"-{order}" if order != "sorted" else "")
                        old = results["runs"].get(key)
                        if old is None or row["particle_steps_per_s"] > old["particle_steps_per_s"]:
                            results["runs"][key] = row
                        print(f"[{rnd + 1}] {kind:8s} N={row['n']:9d} {device:4s}"
                              f"{f' ({order})' if device == 'cuda' else ''}: "
                              f"{row['particle_steps_per_s']:.3g} "
                              f"particle-steps/s ({row['steps']} steps, {row['builds']} rebuilds, first step "
                              f"{row['first_s']:.1f} s)", flush=True)
                        args.json.parent.mkdir(parents=True, exist_ok=True)
                        args.json.write_text(json.dumps(results, indent=1))
    print_table(results)
    if args.plot:
        plot(results, args.plot, cpu2)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
