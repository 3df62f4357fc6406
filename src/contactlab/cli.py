"""The ``contactlab`` command.

``contactlab run [SCENE.toml] [--out DIR] [--duration T] [--threads N] [--restart CHECKPOINT]``

Without a scene file it runs the built-in default scene (10,000 glass beads settling in a box).
It shows a progress bar, writes a ParaView time series (``particles.pvd``, ``contacts.pvd``,
``walls.pvd``), an energy CSV and checkpoints into the output directory, and ends with a summary
(wall time, particle-steps/s, contacts, energy balance).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="contactlab", description="Discrete-element contact mechanics.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scene file (default: the built-in settling scene)")
    run.add_argument("scene", nargs="?", help="TOML scene file (default: built-in 10,000-bead settling scene)")
    run.add_argument("--out", help="output directory (default: the scene's [output] directory, ./contactlab-out)")
    run.add_argument("--duration", type=float, help="simulated time to reach, s (overrides the scene file)")
    run.add_argument("--threads", type=int, help="number of threads (default: all cores)")
    run.add_argument("--restart", help="resume from this checkpoint (.npz) written by an earlier run")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--no-vtk", action="store_true", help="do not write VTK files")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    return 2  # pragma: no cover


def _run(args) -> int:
    from .errors import ContactlabError
    from .io.checkpoint import CheckpointReporter
    from .io.csv import EnergyCSVReporter
    from .io.scenefile import default_scene_path, load_scene_file
    from .io.vtk import VTKReporter

    scene_path = Path(args.scene) if args.scene else default_scene_path()
    try:
        spec = load_scene_file(scene_path)
        out = Path(args.out) if args.out else Path(spec.output["directory"])
        duration = args.duration if args.duration is not None else spec.duration
        if duration is None:
            print(f"contactlab: {scene_path}: no duration given ([simulation] duration or --duration)",
                  file=sys.stderr)
            return 2
        if args.threads is not None:
            spec.simulation["threads"] = args.threads
        print(f"contactlab: scene {scene_path} ({spec.scene.n_spheres} spheres, {spec.scene.n_walls} walls, "
              f"{spec.model.name})", flush=True)
        t0 = time.perf_counter()
        from .engine.codegen import is_compiled

        if not is_compiled(spec.model.law_module):
            print("contactlab: compiling the kernels for this contact law (first run only, ~20-40 s)...",
                  flush=True)
        if args.restart:
            from .simulation import Simulation

            sim = Simulation.load_checkpoint(args.restart, threads=spec.simulation.get("threads"))
            if sim.model.n_spheres != spec.scene.n_spheres:
                print(f"contactlab: checkpoint {args.restart} has {sim.model.n_spheres} spheres but the scene has "
                      f"{spec.scene.n_spheres}", file=sys.stderr)
                return 2
        else:
            sim = spec.build_simulation()
        setup = time.perf_counter() - t0
        print(f"contactlab: ready in {setup:.1f} s; dt = {sim.dt:.4g} s (stability limit {sim.stability_limit:.4g} s)",
              flush=True)
        out.mkdir(parents=True, exist_ok=True)
        o = spec.output
        if o["vtk_interval"] and not args.no_vtk:
            sim.add_reporter(VTKReporter(out, interval=o["vtk_interval"], contacts=o["vtk_contacts"],
                                         walls=o["vtk_walls"], resume=bool(args.restart)))
        if o["csv_interval"]:
            sim.add_reporter(EnergyCSVReporter(out / "energy.csv", interval=o["csv_interval"],
                                               resume=bool(args.restart)))
        if o["checkpoint_interval"]:
            sim.add_reporter(CheckpointReporter(out / "checkpoint.npz", interval=o["checkpoint_interval"]))
        remaining = max(duration - sim.time, 0.0)
        try:
            sim.run(duration=remaining, progress=(o["progress"] and not args.quiet) or None)
        finally:
            sim.close()
        sim.save_checkpoint(out / "checkpoint.npz")
    except ContactlabError as exc:
        print(f"contactlab: error: {exc}", file=sys.stderr)
        return 1
    summary = sim.summary()
    summary["setup_seconds"] = setup
    summary["output"] = str(out)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    e = summary["energy"]
    print(
        f"contactlab: done. simulated {summary['time']:.4g} s in {summary['steps']} steps; "
        f"wall time {summary['wall_seconds']:.1f} s (+ {setup:.1f} s setup); "
        f"{summary['particle_steps_per_second']:.3g} particle-steps/s; "
        f"{summary['contacts']} contacts; energy balance error {100 * summary['energy_balance_relative']:.3g} % "
        f"(dissipated {e['dissipated']:.4g} J); output in {out}/"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
