"""Throughput and memory from 10^3 to 10^6 spheres, contactlab against LAMMPS on the same input.

Three scenes, each at N = 1e3, 1e4, 1e5 and 1e6 (nominal; the exact N is reported), on 1 and 2
threads, each contactlab run followed by the LAMMPS run of the same input (interleaved, so a noisy
machine hits both alike; ``--rounds`` repeats everything and keeps the best of each):

* ``lattice``: the dense simple-cubic lattice of :mod:`lattice_scene` (0.1 % overlaps, about three
  contacts per sphere, walls, gravity, dt = 1e-5 s);
* ``packing``: a settled packing (the beads of :mod:`settle_scene` settled once by contactlab at
  N = 1e3 or 1e4, cached in ``benchmarks/out/``, and tiled side by side 3 x 3 for 1e5 and 10 x 10 for
  1e6), started at rest with no contact history in both codes; contactlab's default time step;
* ``falling``: the settle scene's loose jittered lattice falling from rest (few contacts).

Each run is a fresh process (contactlab: ``--worker``, after untimed runs that fill the kernel
caches, since a process that compiles keeps ~220 MB more resident) so that its peak RSS is its own: memory per
sphere = (peak RSS - peak RSS of the same process with an 8-sphere scene) / N, all arrays of the
model, state and contact table and every transient of set-up and neighbour builds included (two
rebuilds of the list follow the timed steps, untimed, so that a rebuild's memory counts even where
the timed steps had none).
Throughput = N x steps / seconds of ``Simulation.run(steps)`` after one warm-up step (LAMMPS: its
own ``Loop time``, which also excludes set-up).  LAMMPS runs Debian's ``lmp`` with the contact
model of ``lammps/lammps_settle.py`` (Hertz-Mindlin, matched restitution damping, the same walls,
skin and step), serial for 1 thread and ``mpirun -np 2`` (or ``-sf omp`` if built in, the faster)
for 2.

Usage::

    python benchmarks/scale.py [--scenes lattice packing falling] [--n 1000 10000 100000 1000000]
                               [--threads 1 2] [--rounds 2] [--no-lammps] [--plot benchmarks/scale.png]
                               [--json benchmarks/out/scale.json]
    python benchmarks/scale.py --report A.json B.json [--plot benchmarks/scale.png]   # merge saved runs

Results: ``benchmarks/out/scale.json`` and a markdown table on stdout; the plot (particle-steps/s
against N for both codes) with ``--plot``.
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "lammps"))

import lattice_scene  # noqa: E402
import settle_scene  # noqa: E402

SCENES = ("lattice", "packing", "falling")
#: steps timed per N (fewer at large N: the same order of particle-steps per run)
STEPS = {1000: 5000, 10_000: 1000, 100_000: 300, 1_000_000: 50}


def steps_for(n: int) -> int:
    return STEPS.get(n, max(20, int(1e7 / n)))


# ---------------------------------------------------------------------------------------------
# the inputs

def settled_base(n_base: int) -> dict:
    """Positions of ``n_base`` settle-scene beads at rest (t = settle time), computed once and cached."""
    path = OUT / f"settled-positions-{n_base}.npz"
    if path.exists():
        d = np.load(path)
        return dict(positions=d["positions"], side=float(d["side"]))
    import contactlab as cl

    scene, model, lay = settle_scene.build_scene(n_base)
    sim = cl.Simulation(scene, model)
    sim.run(duration=0.25)
    OUT.mkdir(exist_ok=True)
    np.savez(path, positions=sim.positions, side=lay["side"])
    return dict(positions=sim.positions.copy(), side=float(lay["side"]))


def packing(n: int) -> dict:
    """A settled packing of about ``n`` beads: one settled bed (1e3 or 1e4), or a 3 x 3 (1e5) or
    10 x 10 (1e6) tiling of the 1e4 bed in a box of tiles x its side (beads never cross a tile's
    edge: each settled against a wall there)."""
    base = 1000 if n < 5000 else 10_000
    tiles = max(1, int(round(math.sqrt(n / base))))
    b = settled_base(base)
    side = b["side"]
    parts = [b["positions"] + np.array([ix * side, iy * side, 0.0]) for iy in range(tiles) for ix in range(tiles)]
    return dict(positions=np.concatenate(parts), side=tiles * side)


def scene_input(kind: str, n: int) -> dict:
    """Positions, box side and the time step (None: contactlab's default) of a scene."""
    if kind == "lattice":
        lay = lattice_scene.layout(n)
        return dict(positions=lay["positions"], side=lay["side"], dt=lattice_scene.DT)
    if kind == "packing":
        return dict(packing(n), dt=None)
    if kind == "falling":
        lay = settle_scene.layout(n)
        return dict(positions=lay["positions"], side=lay["side"], dt=None)
    raise ValueError(kind)


def build(inp: dict):
    """The contactlab scene of an input (the beads, walls, material and law of ``settle_scene``)."""
    import contactlab as cl

    glass = cl.Material(density=settle_scene.DENSITY, young=settle_scene.YOUNG, poisson=settle_scene.POISSON,
                        name="glass")
    scene = cl.Scene(gravity=settle_scene.GRAVITY)
    pos = inp["positions"]
    scene.add_spheres(pos, np.full(len(pos), settle_scene.RADIUS), glass)
    for point, normal in settle_scene.walls(inp["side"]):
        scene.add_wall(point=point, normal=normal, material=glass)
    model = cl.models.HertzMindlin(restitution=settle_scene.RESTITUTION, friction=settle_scene.FRICTION)
    return scene, model


# ---------------------------------------------------------------------------------------------
# contactlab: one measurement per process

def worker(kind: str, n: int, threads: int, steps: int) -> dict:
    import contactlab as cl

    if kind.startswith("baseline"):
        # n beads of the lattice (8 for the baseline; more to warm the kernel caches); "baseline-auto":
        # with contactlab's default time step, whose stability estimate loads the law's probe kernel
        # (tens of MB of RSS that a scene with a given dt never has)
        inp = scene_input("lattice", n)
        if kind == "baseline-auto":
            inp["dt"] = None
    else:
        inp = scene_input(kind, n)
    scene, model = build(inp)
    t0 = time.perf_counter()
    sim = cl.Simulation(scene, model, dt=inp["dt"], threads=threads)
    sim.run(steps=1)
    setup = time.perf_counter() - t0
    builds0 = sim.table.builds
    t0 = time.perf_counter()
    sim.run(steps=steps)
    wall = time.perf_counter() - t0
    peak_run = peak_rss()
    # two neighbour-list rebuilds after the timed steps (not timed): a long run rebuilds, so its
    # peak RSS holds what a rebuild holds (new pair indices, the row matching, any second table)
    with sim.stepper.threads_scope():
        for _ in range(2):
            sim.stepper.rebuild()
    n_real = len(inp["positions"])
    return dict(scene=kind, n=n_real, threads=threads, steps=steps, seconds=wall, setup_s=setup,
                particle_steps_per_s=n_real * steps / wall, contacts=sim.n_contacts(), pairs=int(sim.table.n_pairs),
                builds=sim.table.builds - builds0, dt=sim.dt, skin=float(sim.table.skin),
                arrays_bytes=int(sim.stepper.nbytes + sum(a.nbytes for a in sim.state.arrays().values())),
                peak_rss_run_bytes=peak_run, peak_rss_bytes=peak_rss())


def peak_rss() -> int:
    """This process's peak resident set, bytes: ``VmHWM`` (its own address space's high-water mark)
    where Linux has it.  ``getrusage``'s ``ru_maxrss`` survives ``fork`` and ``exec``: a worker
    started by a parent of 500 MB reports at least 500 MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_contactlab(kind: str, n: int, threads: int, steps: int) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, str(n), str(threads), str(steps)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"contactlab worker failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# LAMMPS: the same input

class Lammps:
    """Debian's ``lmp`` with the contact model of ``lammps_settle`` (checked there against contactlab)."""

    def __init__(self, workdir: Path):
        import lammps_settle as ls

        self.ls = ls
        self.exe = ls.find_lmp()
        self.available = self.exe is not None
        if not self.available:
            return
        self.info = ls.lammps_info(self.exe)
        self.mpi = shutil.which("mpirun")
        self.workdir = workdir
        import contactlab as cl

        damping = cl.models.HertzMindlin(restitution=settle_scene.RESTITUTION,
                                         friction=settle_scene.FRICTION).damping_coefficient
        factor = ls.calibrate_wall(self.exe, damping, workdir / "check")
        self.p = ls.model_parameters(damping, "matched", factor)
        self._data = {}

    def data_file(self, kind: str, n: int, inp: dict) -> Path:
        path = self.workdir / f"{kind}-{n}.data"
        if path in self._data:
            return path
        pos = inp["positions"]
        r = settle_scene.RADIUS
        top = float(pos[:, 2].max()) + 4.0 * r
        side = inp["side"]
        lines = [f"contactlab scale benchmark: {kind}, N = {len(pos)}", "", f"{len(pos)} atoms", "1 atom types", "",
                 f"0.0 {side!r} xlo xhi", f"0.0 {side!r} ylo yhi", f"0.0 {top!r} zlo zhi", "", "Atoms # sphere", ""]
        d, rho = 2.0 * r, settle_scene.DENSITY
        lines += [f"{i + 1} 1 {d!r} {rho!r} {x!r} {y!r} {z!r}" for i, (x, y, z) in enumerate(pos.tolist())]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        self._data[path] = True
        return path

    def run(self, kind: str, n: int, inp: dict, threads: int, steps: int, dt: float, skin: float) -> dict:
        ls = self.ls
        data = self.data_file(kind, n, inp)
        configs, _ = ls.configurations([threads], self.info, self.mpi)
        script = "\n".join(["units si", "atom_style sphere", "boundary f f m", "processors * * 1",
                            "comm_modify vel yes", f"read_data {data.name}",
                            ls._settings(self.p, inp["side"], dt, skin),
                            "print \"@@PHASE run\"", f"thermo {steps}", f"run {steps}"]) + "\n"
        best = None
        for cfg in configs:
            log = ls.run_lammps(ls.config_command(cfg, self.exe, self.mpi), script, self.workdir,
                                f"{kind}-{n}-{cfg}")
            ph = ls.parse_phases(log)["run"]
            loop = ph["loop"]
            end = ph["thermo"][-1] if ph["thermo"] else {}
            res = dict(config=cfg, n=loop["atoms"], steps=loop["steps"], seconds=loop["time"],
                       particle_steps_per_s=loop["atoms"] * loop["steps"] / loop["time"],
                       contacts=(end.get("v_npair") or 0) + (end.get("c_nwall") or 0))
            if best is None or res["particle_steps_per_s"] > best["particle_steps_per_s"]:
                best = res
        return best


# ---------------------------------------------------------------------------------------------

def _keep_best(table: dict, key, res: dict):
    if key not in table or res["particle_steps_per_s"] > table[key]["particle_steps_per_s"]:
        table[key] = res


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenes = [s for s in SCENES if any(k[0] == s for k in results["contactlab"])]
    fig, axes = plt.subplots(1, len(scenes), figsize=(5 * len(scenes), 4), squeeze=False)
    for ax, scene in zip(axes[0], scenes):
        for code, style in (("contactlab", "-o"), ("lammps", "--s")):
            for t in sorted({k[2] for k in results[code] if k[0] == scene}):
                pts = sorted((r["n"], r["particle_steps_per_s"]) for k, r in results[code].items()
                             if k[0] == scene and k[2] == t)
                if pts:
                    ax.plot(*zip(*pts), style, label=f"{'LAMMPS' if code == 'lammps' else code}, {t} thread"
                            + ("s" if t > 1 else ""))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("spheres N")
        ax.set_ylabel("particle-steps / s")
        ax.set_title(scene)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def print_table(results: dict) -> None:
    """The markdown ratio table of ``results`` (``{"contactlab": {key: run}, "lammps": {key: run}}``)."""
    print("| scene | N | threads | contactlab | LAMMPS | ratio | contacts/sphere | memory, B/sphere |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, r in sorted(results["contactlab"].items(), key=lambda kv: (SCENES.index(kv[0][0]), kv[0][1], kv[0][2])):
        o = results["lammps"].get(key)
        lam = f"{o['particle_steps_per_s']:.3g} ({o['config']})" if o else "-"
        ratio = f"{r['particle_steps_per_s'] / o['particle_steps_per_s']:.2f}" if o else "-"
        print(f"| {key[0]} | {r['n']} | {key[2]} | {r['particle_steps_per_s']:.3g} | {lam} | {ratio} | "
              f"{2 * r['contacts'] / r['n']:.2f} | {r['bytes_per_sphere']:.0f} |")


def load(paths) -> dict:
    """Results saved by ``--json`` runs, merged in order (a later file's row replaces an earlier's)."""
    results = {"contactlab": {}, "lammps": {}}
    for path in paths:
        saved = json.loads(Path(path).read_text())
        for code in results:
            for key, row in saved.get(code, {}).items():
                kind, n, t = key.split("|")
                results[code][(kind, int(n), int(t))] = row
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs=4, metavar=("SCENE", "N", "THREADS", "STEPS"), help=argparse.SUPPRESS)
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=SCENES)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 10_000, 100_000, 1_000_000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-lammps", action="store_true")
    ap.add_argument("--plot", type=Path, default=None, help="write the throughput plot (PNG) here")
    ap.add_argument("--json", type=Path, default=OUT / "scale.json")
    ap.add_argument("--report", type=Path, nargs="+", default=None, metavar="JSON",
                    help="run nothing: merge saved --json files (later rows replace earlier), print the table, "
                         "write --plot")
    args = ap.parse_args(argv)
    if args.report:
        results = load(args.report)
        print_table(results)
        if args.plot:
            plot(results, args.plot)
        return 0
    if args.worker:
        kind, n, t, s = args.worker
        print(json.dumps(worker(kind, int(n), int(t), int(s))))
        return 0
    OUT.mkdir(exist_ok=True)
    lmp = None if args.no_lammps else Lammps(OUT / "lammps-scale")
    if lmp is not None and not lmp.available:
        print("LAMMPS (lmp) not found: contactlab only")
        lmp = None
    # the kernel caches filled first (1331 beads: two blocks, the parallel kernels on two threads):
    # a worker that compiles keeps ~220 MB more resident (LLVM), which would skew its memory figure
    for mode in ("lattice", "auto"):
        for t in args.threads:
            run_contactlab(f"baseline-{mode}", 1331, t, 2)
    base = {(mode, t): run_contactlab(f"baseline-{mode}", 8, t, 10) for mode in ("lattice", "auto")
            for t in args.threads}
    results = {"contactlab": {}, "lammps": {}}
    for rnd in range(args.rounds):
        for kind in args.scenes:
            for n in args.n:
                inp = scene_input(kind, n)
                steps = steps_for(n)
                for t in args.threads:
                    ours = run_contactlab(kind, n, t, steps)
                    b = base[("lattice" if inp["dt"] is not None else "auto", t)]
                    ours["bytes_per_sphere"] = (ours["peak_rss_bytes"] - b["peak_rss_bytes"]) / ours["n"]
                    _keep_best(results["contactlab"], (kind, n, t), ours)
                    line = (f"[{rnd + 1}] {kind:8s} N={ours['n']:8d} t={t}: contactlab "
                            f"{ours['particle_steps_per_s']:.3g}")
                    if lmp is not None:
                        theirs = lmp.run(kind, n, inp, t, steps, ours["dt"], ours["skin"])
                        _keep_best(results["lammps"], (kind, n, t), theirs)
                        line += (f", LAMMPS {theirs['particle_steps_per_s']:.3g} ({theirs['config']}): "
                                 f"{ours['particle_steps_per_s'] / theirs['particle_steps_per_s']:.2f}x")
                    print(line + f"; {ours['bytes_per_sphere']:.0f} B/sphere, {ours['contacts']} contacts", flush=True)
    print(f"\nbest of {args.rounds} round(s), particle-steps/s")
    print_table(results)
    args.json.write_text(json.dumps({code: {"|".join(map(str, k)): v for k, v in rows.items()}
                                     for code, rows in results.items()}, indent=1))
    if args.plot:
        plot(results, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
