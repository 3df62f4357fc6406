"""The "settle" benchmark: N glass beads falling from a loose lattice into a box and settling.

Measures, for each N and thread count:

* falling phase: the first 0.03 s from the lattice (few contacts);
* dense phase: 2000 steps after the packing has settled (several contacts per sphere);
* particle-steps/s and contact-steps/s (active contacts summed over steps) of each phase;
* memory per particle (arrays of the model, state and contact table, and peak RSS);
* start-up: a first run in a new process with an empty kernel cache (compilation) and a second
  run in a new process with the cache filled.

The settled packing is saved as a checkpoint in ``benchmarks/out/`` and reused.  With ``--lammps``
(and ``lmp`` installed) the same scene runs in LAMMPS (``benchmarks/lammps/``) and the ratio is
printed.  Results go to ``benchmarks/out/settle-<N>.json`` and a markdown table on stdout.

Usage::

    python benchmarks/settle.py --n 1000 10000 100000 --threads 1 2 [--lammps] [--startup]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import settle_scene  # noqa: E402

FALL_TIME = 0.03      # s, falling phase
DENSE_STEPS = 2000


def settle_time(n: int) -> float:
    """Simulated time after which the packing is at rest (the column of N beads has fallen)."""
    return 0.25 if n <= 20000 else 0.45


def _measure(sim, *, duration=None, steps=None):
    """Run and return (wall seconds, contact-steps)."""
    import numpy as np

    target = sim.step + (steps if steps is not None else int(np.ceil(duration / sim.dt - 1e-9)))
    contact_steps = 0
    t0 = time.perf_counter()
    while sim.step < target:
        k = min(200, target - sim.step)
        sim.run(steps=k)
        contact_steps += k * sim.n_contacts()
    return time.perf_counter() - t0, contact_steps


def run_phases(n: int, threads: int) -> dict:
    import contactlab as cl

    OUT.mkdir(exist_ok=True)
    scene, model, _ = settle_scene.build_scene(n)
    sim = cl.Simulation(scene, model, threads=threads)
    res = {"n": n, "threads": threads, "dt": sim.dt}
    step0 = sim.step
    wall, csteps = _measure(sim, duration=FALL_TIME)
    steps = sim.step - step0
    res["falling"] = {"steps": steps, "seconds": wall, "particle_steps_per_s": n * steps / wall,
                      "contact_steps_per_s": csteps / wall, "contacts_end": sim.n_contacts()}
    ckpt = OUT / f"settled-{n}.npz"
    dense = None
    if ckpt.exists():
        try:
            dense = cl.Simulation.load_checkpoint(ckpt, threads=threads)
        except cl.InputError as exc:   # written by an older checkpoint format: settle again
            print(f"re-settling N={n}: {exc}", file=sys.stderr)
    if dense is None:
        sim.run(duration=settle_time(n) - sim.time)
        sim.save_checkpoint(ckpt)
        dense = sim
    e = dense.energy()
    step0 = dense.step
    wall, csteps = _measure(dense, steps=DENSE_STEPS)
    res["dense"] = {"steps": DENSE_STEPS, "seconds": wall, "particle_steps_per_s": n * DENSE_STEPS / wall,
                    "contact_steps_per_s": csteps / wall, "contacts": dense.n_contacts(),
                    "contacts_per_sphere": 2 * dense.n_contacts() / n,
                    "kinetic_over_potential": e["kinetic"] / abs(e["gravitational"]),
                    "neighbor_builds": dense.table.builds}
    arrays = sum(a.nbytes for a in dense.state.arrays().values())
    arrays += sum(getattr(dense.model, k).nbytes for k in ("radius", "mass", "inv_mass", "inertia", "inv_inertia",
                                                            "material", "fixed"))
    arrays += dense.stepper.nbytes   # the contact table and the run arrays
    res["memory_bytes_per_particle"] = arrays / n
    res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


_STARTUP = r"""
import sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {here!r})
import settle_scene, contactlab as cl
t1 = time.perf_counter()
scene, model, _ = settle_scene.build_scene(1000)
sim = cl.Simulation(scene, model)
t2 = time.perf_counter()
sim.run(steps=10)
t3 = time.perf_counter()
print(json.dumps(dict(import_s=t1 - t0, setup_s=t2 - t1, first_steps_s=t3 - t2, total_s=t3 - t0)))
"""


def startup() -> dict:
    """First run (empty kernel cache: compiles) and second run (cache filled), each a new process."""
    code = _STARTUP.format(here=str(HERE))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CONTACTLAB_CACHE_DIR=cache)
        out = {}
        for label in ("first_run", "cached_run"):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            out[label] = json.loads(p.stdout.strip().splitlines()[-1])
            out[label]["process_s"] = time.perf_counter() - t0
    return out


def _warm_up():
    """Load (or compile) the kernels before anything is timed."""
    import contactlab as cl

    scene, model, _ = settle_scene.build_scene(200)
    cl.Simulation(scene, model).run(steps=20)


def _keep_best(best: dict, key, result: dict, phase: str):
    entry = best.setdefault(key, {})
    if phase not in entry or result[phase]["particle_steps_per_s"] > entry[phase]["particle_steps_per_s"]:
        entry[phase] = result[phase]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat everything this many times, interleaving contactlab and LAMMPS, and keep the "
                         "best of each (the machine is shared and noisy)")
    ap.add_argument("--lammps", action="store_true", help="also run LAMMPS on the same scene (needs lmp)")
    ap.add_argument("--startup", action="store_true", help="measure first-run and cached start-up")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    import numba

    info = {"machine": settle_scene.cpu_name(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "numba": numba.__version__}
    if args.startup:
        s = startup()
        print(f"start-up: first run {s['first_run']['total_s']:.1f} s (setup incl. compile "
              f"{s['first_run']['setup_s']:.1f} s), cached run {s['cached_run']['total_s']:.2f} s "
              f"(setup {s['cached_run']['setup_s']:.2f} s)", flush=True)
        (OUT / "startup.json").write_text(json.dumps(s, indent=2))
    _warm_up()
    lmp = None
    if args.lammps:
        sys.path.insert(0, str(HERE / "lammps"))
        try:
            import lammps_settle as lmp
        except ImportError as exc:
            print(f"LAMMPS twin not available: {exc}")
    ours, theirs = {}, {}
    for rnd in range(args.rounds):
        for n in args.n:
            for t in args.threads:
                r = run_phases(n, t)
                for phase in ("falling", "dense"):
                    _keep_best(ours, (n, t), r, phase)
                ours[(n, t)].update({k: v for k, v in r.items() if k not in ("falling", "dense")})
                print(f"[round {rnd + 1}] contactlab N={n} threads={t}: falling "
                      f"{r['falling']['particle_steps_per_s']:.3g}, dense {r['dense']['particle_steps_per_s']:.3g} "
                      f"p-steps/s", flush=True)
            if lmp is not None:
                for t in args.threads:
                    lm = lmp.run_benchmark(n, threads=t, repeat=1, log=lambda *a, **k: None)
                    if not lm.get("available"):
                        print(f"LAMMPS: {lm.get('reason')}")
                        lmp = None
                        break
                    for phase in ("falling", "dense"):
                        _keep_best(theirs, (n, t), lm, phase)
                    print(f"[round {rnd + 1}] LAMMPS     N={n} threads={t}: falling "
                          f"{lm['falling']['particle_steps_per_s']:.3g} ({lm['falling']['config']}), dense "
                          f"{lm['dense']['particle_steps_per_s']:.3g} p-steps/s", flush=True)
    print("\nbest of", args.rounds, "round(s); particle-steps/s (contact-steps/s)")
    print("| N | threads | phase | contactlab | LAMMPS | ratio |")
    print("|---|---|---|---|---|---|")
    for (n, t), r in sorted(ours.items()):
        r.update(info)
        (OUT / f"settle-{n}-t{t}.json").write_text(json.dumps(r, indent=2, default=str))
        for phase in ("falling", "dense"):
            a = r[phase]["particle_steps_per_s"]
            other = theirs.get((n, t), {}).get(phase)
            b = other["particle_steps_per_s"] if other else None
            ratio = f"{a / b:.2f}" if b else "-"
            lam = f"{b:.3g} ({other['config']})" if b else "-"
            print(f"| {n} | {t} | {phase} | {a:.3g} ({r[phase]['contact_steps_per_s']:.3g}) | {lam} | {ratio} |")
        print(f"|   |   | memory | {r['memory_bytes_per_particle']:.0f} B/particle, peak RSS {r['peak_rss_mb']:.0f} MB "
              f"| | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
