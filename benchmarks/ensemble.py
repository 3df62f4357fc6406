"""Ensembles: 32 members of a 1000-sphere pour, serially and on 2 worker processes; the overhead
per member; how many times the kernels compile.

The member: 1000 glass beads of the "settle" scene (``settle_scene.py``: r = 1 mm, E = 1e7 Pa, a
loose lattice in a box of five walls) falling for ``--duration`` s (default 0.05 s, 4000 steps)
with Hertz-Mindlin at restitution 0.5 and a friction coefficient from 0.1 to 0.8 (the swept
parameter); measured: kinetic energy, contacts, pile height.

Phases (each prints a line and adds to the JSON written to ``--out``):

* ``serial, 1 thread`` / ``serial, 2 threads``: ``executor="serial"`` in this process;
* ``2 workers x 1 thread``: contactlab's default pool of two spawned processes;
* ``empty members``: 50 and 250 members that do nothing, on 2 workers: the cost of one member
  and of starting the pool;
* ``cold cache``: in a fresh process with empty kernel caches (``CONTACTLAB_CACHE_DIR`` and
  ``NUMBA_CACHE_DIR`` in a temporary folder), 4 short members on 2 workers, with the warm-up member
  and without: how many members compile, and the compile time they report.

    python benchmarks/ensemble.py                     # ~5 min on 2 idle cores
    python benchmarks/ensemble.py --rounds 3 --skip-cold --skip-two-threads --control
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import contactlab as cl  # noqa: E402
from settle_scene import DENSITY, POISSON, RADIUS, YOUNG, layout, walls  # noqa: E402


def pour(friction: float, n: int = 1000):
    """The settle scene with the given friction: ``n`` beads about to fall into a box."""
    glass = cl.Material(density=DENSITY, young=YOUNG, poisson=POISSON, name="glass")
    lay = layout(n, seed=1)
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_spheres(lay["positions"], lay["radii"], glass)
    for point, normal in walls(lay["side"]):
        scene.add_wall(point=point, normal=normal, material=glass)
    assert lay["positions"][:, 2].min() > RADIUS
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=friction))


MEASURES = ["kinetic_energy", "contacts", "pile_height"]


def null_member(k: int):
    """A member that does nothing: what is left of its time is the ensemble's own overhead."""
    return k


def null_measure(sim) -> int:
    return sim


def dispatch(workers: int = 2) -> list[dict]:
    """Ensembles of 50 and 250 empty members on a fresh pool each: the difference over 200 is the
    cost of one member (send the task, run it, send the record back, write the table); what is
    left of the small one is the pool's start (spawning the processes, importing contactlab)."""
    rows = {}
    for n in (50, 250):
        t = cl.ensemble.run(null_member, {"k": list(range(n))}, null_measure, workers=workers, warmup=False)
        rows[n] = t.attrs["elapsed_seconds"]
    per_member = (rows[250] - rows[50]) / 200
    row = {"phase": "dispatch", "per_member_s": per_member, "start_s": rows[50] - 50 * per_member,
           "elapsed_50_s": rows[50], "elapsed_250_s": rows[250], "load_after": os.getloadavg()[0]}
    print(f"{'empty members':24s} {workers} workers: {1e3 * per_member:.1f} ms per member, pool start "
          f"{row['start_s']:.2f} s (50 members in {rows[50]:.2f} s, 250 in {rows[250]:.2f} s); load "
          f"{row['load_after']:.1f}", flush=True)
    return [row]


def _summary(name: str, table, members: int) -> dict:
    a = table.attrs
    ok = table[table.status == "ok"]
    row = {"phase": name, "members": members, "elapsed_s": a["elapsed_seconds"],
           "members_per_minute": 60 * members / a["elapsed_seconds"],
           "mean_run_s": float(ok.run_seconds.mean()), "mean_setup_s": float(ok.setup_seconds.mean()),
           "mean_wall_s": float(ok.wall_seconds.mean()),
           "overhead_per_member_s": a["overhead_seconds_per_member"], "slots": a["slots"],
           "compiled_members": int((table.compiled > 0).sum()), "compiled_functions": int(table.compiled.sum()),
           "compile_s": float(table.compile_seconds.sum()), "failed": int((table.status != "ok").sum()),
           "workers": int(table.worker.nunique()), "load_after": os.getloadavg()[0]}
    print(f"{name:24s} {members} members in {row['elapsed_s']:7.1f} s  ({row['members_per_minute']:5.1f}/min); "
          f"member: run {row['mean_run_s']:.2f} s, setup {row['mean_setup_s']:.2f} s; overhead "
          f"{row['overhead_per_member_s']:.2f} s/member; compiled in {row['compiled_members']} member(s) "
          f"({row['compiled_functions']} functions, {row['compile_s']:.1f} s); load {row['load_after']:.1f}",
          flush=True)
    return row


def warm(members: int, duration: float, n: int, rounds: int, two_threads: bool) -> list[dict]:
    frictions = {"friction": np.linspace(0.1, 0.8, members).tolist(), "n": [n]}
    cl.ensemble.run_member(pour, MEASURES, {"friction": 0.5, "n": n}, steps=2)   # kernels into the cache
    phases = [("serial, 1 thread", dict(executor="serial", threads_per_member=1)),
              ("2 workers x 1 thread", dict(workers=2, threads_per_member=1))]
    if two_threads:
        phases.insert(1, ("serial, 2 threads", dict(executor="serial", threads_per_member=2)))
    rows, reference = [], None
    for k in range(rounds):  # interleaved rounds: the machine's load hits every phase alike
        for name, kw in phases:
            table = cl.ensemble.run(pour, frictions, MEASURES, duration=duration, **kw)
            rows.append({"round": k, **_summary(name, table, members)})
            if reference is None:
                reference = table
            else:  # the same numbers whatever the executor and the thread count
                assert np.array_equal(table.kinetic_energy.to_numpy(), reference.kinetic_energy.to_numpy()), name
    return rows


def control(n: int, duration: float) -> list[dict]:
    """Two independent Python processes, each running 8 members serially, side by side (no pool):
    what two processes get from this machine's cores, to compare with the 2-worker pool."""
    procs = [subprocess.Popen([sys.executable, __file__, "--phase", "control-child", "--n", str(n),
                               "--duration", str(duration)], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    runs = [float(p.communicate()[0].split()[-1]) for p in procs]
    alone = subprocess.run([sys.executable, __file__, "--phase", "control-child", "--n", str(n), "--duration",
                            str(duration)], stdout=subprocess.PIPE, text=True, check=True).stdout.split()[-1]
    row = {"phase": "control", "mean_run_side_by_side_s": sum(runs) / 2, "mean_run_alone_s": float(alone),
           "load_after": os.getloadavg()[0]}
    print(f"{'two plain processes':24s} member's run {row['mean_run_side_by_side_s']:.2f} s side by side, "
          f"{row['mean_run_alone_s']:.2f} s alone; load {row['load_after']:.1f}", flush=True)
    return [row]


def control_child(n: int, duration: float) -> None:
    t = cl.ensemble.run(pour, {"friction": np.linspace(0.1, 0.8, 8).tolist(), "n": [n]}, MEASURES,
                        executor="serial", duration=duration)
    print(float(t.run_seconds.mean()))


def cold(n: int) -> list[dict]:
    rows = []
    for warmup in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, CONTACTLAB_CACHE_DIR=str(Path(tmp) / "cl"), NUMBA_CACHE_DIR=str(Path(tmp) / "nb"))
            out = Path(tmp) / "row.json"
            subprocess.run([sys.executable, __file__, "--phase", "cold-child", "--warmup", str(int(warmup)),
                            "--n", str(n), "--out", str(out)], env=env, check=True)
            rows.append(json.loads(out.read_text()))
    return rows


def cold_child(n: int, warmup: bool, out: Path) -> None:
    table = cl.ensemble.run(pour, {"friction": [0.2, 0.4, 0.6, 0.8], "n": [n]}, MEASURES, steps=50, workers=2,
                            warmup=warmup)
    row = _summary(f"cold cache, warmup={warmup}", table, 4)
    row["compiled_per_member"] = table.compiled.tolist()
    out.write_text(json.dumps(row))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, default=32)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--duration", type=float, default=0.05)
    ap.add_argument("--skip-cold", action="store_true")
    ap.add_argument("--skip-two-threads", action="store_true", help="leave out the serial run on 2 threads")
    ap.add_argument("--dispatch-only", action="store_true", help="only the empty-member phase")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds of the warm-cache phases")
    ap.add_argument("--phase", default="all", choices=["all", "cold-child", "control-child"])
    ap.add_argument("--control", action="store_true", help="also two plain processes side by side")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "out" / "ensemble.json"))
    a = ap.parse_args()
    if a.phase == "cold-child":
        cold_child(a.n, bool(a.warmup), Path(a.out))
        return
    if a.phase == "control-child":
        control_child(a.n, a.duration)
        return
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f} at the start", flush=True)
    t0 = time.perf_counter()
    rows = dispatch()
    if not a.dispatch_only:
        rows += warm(a.members, a.duration, a.n, a.rounds, not a.skip_two_threads)
    if a.control:
        rows += control(a.n, a.duration)
    if not (a.skip_cold or a.dispatch_only):
        rows += cold(a.n)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"rows": rows, "members": a.members, "n": a.n, "duration": a.duration,
                                       "total_s": time.perf_counter() - t0}, indent=1))
    print(f"written {a.out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
