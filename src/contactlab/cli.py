"""The ``contactlab`` command.

``contactlab run [SCENE.toml] [--out DIR] [--duration T] [--threads N] [--restart CHECKPOINT]
[--allow-import MODULE ...]``

``contactlab validate MODULE:MODEL [--out DIR] [--quick]`` runs the validation battery
(:func:`contactlab.validation.battery.validate`) on a contact model named by module and attribute.

``contactlab sweep SCENE.toml --param KEY=VALUES ... --measure NAME ...`` runs an ensemble over a
grid of scene-file parameters (:mod:`contactlab.ensemble.sweep`).

Without a scene file ``run`` runs the built-in default scene (10,000 glass beads settling in a box).
It shows a progress bar, writes a ParaView time series (``particles.pvd``, ``contacts.pvd``,
``walls.pvd``), an energy CSV and checkpoints into the output directory, and ends with a summary
(wall time, particle-steps/s, contacts, energy balance).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

from ._arguments import did_you_mean
from .engine.codegen import is_compiled, pair_row_length
from .ensemble.sweep import add_allow_import_argument, add_sweep_parser, sweep_command
from .errors import ContactlabError, InputError
from .io.atomic import atomic_write_bytes, ensure_writable_folder
from .io.checkpoint import CheckpointReporter
from .io.csv import EnergyCSVReporter
from .io.scenefile import default_scene_path, load_scene_file
from .io.vtk import VTKReporter
from .laws.base import ContactModel
from .materials import Material
from .simulation import Simulation
from .validation.battery import GROUPS, validate

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
    add_allow_import_argument(run)
    val = sub.add_parser("validate", help="run the validation battery on a contact model and write a report",
                         description="Run the validation battery on a contact model: hysteresis, impacts, oblique "
                                     "impacts, objectivity and symmetry, continuity, energy, time step, a granular "
                                     "column.  Writes report.html, summary.json and PNG figures.  Exit code 0 when "
                                     "every check passes, 1 otherwise.")
    val.add_argument("model", metavar="MODULE:MODEL",
                     help="a contact model: MODULE:NAME where NAME is a ContactModel instance or a zero-argument "
                          "callable returning one, e.g. contactlab.validation.builtin:hertz_mindlin")
    val.add_argument("--out", help="report directory (default ./validation-<NAME>)")
    val.add_argument("--quick", action="store_true", help="the reduced sweep used in CI (a few seconds)")
    val.add_argument("--radius", type=float, default=1e-3, help="sphere radius, m (default 1e-3)")
    val.add_argument("--groups", help="comma-separated check groups to run (default all: hysteresis, impact, "
                                      "oblique, symmetry, continuity, energy, timestep, column)")
    add_sweep_parser(sub)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "validate":
        return _validate(args)
    if args.command == "sweep":
        return sweep_command(args)
    return 2  # pragma: no cover


_EXAMPLE_MODEL = "contactlab.validation.builtin:hertz_mindlin"


def load_model(spec: str):
    """The contact model named by ``MODULE:NAME`` (an instance, or a zero-argument callable or
    class returning one); raises :class:`~contactlab.errors.InputError` with a hint otherwise."""


    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"give the model as MODULE:NAME, e.g. {_EXAMPLE_MODEL}; got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import module {module_name!r} ({exc}); the module must be importable (on "
                         f"PYTHONPATH or installed), e.g. {_EXAMPLE_MODEL}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in dir(module) if not n.startswith("_") and isinstance(getattr(module, n, None),
                                                                                            ContactModel))
            hint = f"; contact models there: {', '.join(names)}" if names else ""
            raise InputError(f"module {module_name!r} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    if isinstance(obj, ContactModel):
        return obj
    if callable(obj):
        try:
            made = obj()
        except TypeError as exc:
            raise InputError(f"{spec} is a callable but calling it without arguments failed ({exc}); name a "
                             f"ContactModel instance or a zero-argument factory, e.g. {_EXAMPLE_MODEL}") from None
        if isinstance(made, ContactModel):
            return made
        raise InputError(f"{spec}() returned {type(made).__name__}, not a contact model (a "
                         f"contactlab.models.ContactModel)")
    raise InputError(f"{spec} is a {type(obj).__name__}, not a contact model (a contactlab.models.ContactModel "
                     f"instance or a zero-argument callable returning one), e.g. {_EXAMPLE_MODEL}")


def _kernels_compiled(model: ContactModel) -> bool:
    """Whether the step kernels of ``model`` (spheres and planes) are cached already, for the
    "compiling" hint; the pair table's row length taken from a table of one material (the same
    for any)."""
    try:
        width = model.pair_table((Material(density=2500.0, young=1e7, poisson=0.3),)).shape[2]
    except Exception:  # a hint only: a model that needs more than one material compiles anyway
        return False
    return is_compiled(model.law_module, dropped=model.unused_history_columns(), row_length=pair_row_length(width))


def _validate(args) -> int:

    try:
        model = load_model(args.model)
        groups = None
        if args.groups:
            groups = [g.strip() for g in args.groups.split(",") if g.strip()]
            bad = sorted(set(groups) - set(GROUPS))
            if bad:
                named = ", ".join(f"{b!r}{did_you_mean(b, GROUPS)}" for b in bad)
                raise InputError(f"unknown check group(s) {named}; groups: {', '.join(GROUPS)}")
        name = args.model.partition(":")[2].replace(".", "_")
        out = Path(args.out) if args.out else Path(f"validation-{name}")

        if not _kernels_compiled(model):
            print("contactlab: compiling the kernels for this contact law (first run only, ~20-50 s)...", flush=True)
        print(f"contactlab: validating {model!r} ({'quick' if args.quick else 'full'} battery, groups "
              f"{', '.join(groups or GROUPS)})", flush=True)
        report = validate(model, out=out, quick=args.quick, radius=args.radius, groups=groups)
    except ContactlabError as exc:
        print(f"contactlab: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"contactlab: error: the report's figures need matplotlib ({exc}); pip install -e \".[plot]\"",
              file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    n_fail = len(report.failed)
    print(f"contactlab: {'PASS' if report.passed else 'FAIL'}: {len(report.checks) - n_fail} of {len(report.checks)} "
          f"checks passed in {report.elapsed:.1f} s; report: {out / 'report.html'}, summary: {out / 'summary.json'}")
    return 0 if report.passed else 1


def _run(args) -> int:

    scene_path = Path(args.scene) if args.scene else default_scene_path()
    out, created = None, False
    try:
        spec = load_scene_file(scene_path, allow_import=args.allow_import)
        out = Path(args.out) if args.out else Path(spec.output["directory"])
        duration = args.duration if args.duration is not None else spec.duration
        if duration is None:
            print(f"contactlab: {scene_path}: no duration given ([simulation] duration or --duration)",
                  file=sys.stderr)
            return 2
        if args.threads is not None:
            spec.simulation["threads"] = args.threads
        # an output folder that cannot be written is reported now, before compiling or running
        created = ensure_writable_folder(out)
        print(f"contactlab: scene {scene_path} ({spec.scene.n_spheres} spheres, {spec.scene.n_walls} walls, "
              f"{spec.model.name})", flush=True)
        t0 = time.perf_counter()

        if not _kernels_compiled(spec.model):
            print("contactlab: compiling the kernels for this contact law (first run only, ~20-40 s)...",
                  flush=True)
        if args.restart:

            sim = Simulation.load_checkpoint(args.restart, threads=spec.simulation.get("threads"),
                                             allow_import=args.allow_import)
            if sim.model.n_spheres != spec.scene.n_spheres:
                print(f"contactlab: error: checkpoint {args.restart} has {sim.model.n_spheres} bodies but the scene "
                      f"{scene_path} has {spec.scene.n_spheres}", file=sys.stderr)
                _remove_if_empty(out, created)
                return 2
        else:
            sim = spec.build_simulation()
        setup = time.perf_counter() - t0
        print(f"contactlab: ready in {setup:.1f} s; dt = {sim.dt:.4g} s (stability limit {sim.stability_limit:.4g} s)",
              flush=True)
        o = spec.output
        if o["vtk_interval"] and not args.no_vtk:
            sim.add_reporter(VTKReporter(out, interval=o["vtk_interval"], contacts=o["vtk_contacts"],
                                         walls=o["vtk_walls"], resume=bool(args.restart)))
        if o["csv_interval"]:
            sim.add_reporter(EnergyCSVReporter(out / "energy.csv", interval=o["csv_interval"],
                                               resume=bool(args.restart)))
        if o["checkpoint_interval"]:
            sim.add_reporter(CheckpointReporter(out / "checkpoint.npz", interval=o["checkpoint_interval"]))
    except ContactlabError as exc:
        print(f"contactlab: error: {exc}", file=sys.stderr)
        _remove_if_empty(out, created)
        return 1
    try:
        remaining = max(duration - sim.time, 0.0)
        try:
            sim.run(duration=remaining, progress=(o["progress"] and not args.quiet) or None)
        finally:
            sim.close()
        sim.save_checkpoint(out / "checkpoint.npz")
        summary = sim.summary()
        summary["setup_seconds"] = setup
        summary["output"] = str(out)
        atomic_write_bytes(out / "summary.json", json.dumps(summary, indent=2, default=float).encode())
    except ContactlabError as exc:
        print(f"contactlab: error: {exc}", file=sys.stderr)
        return 1
    e = summary["energy"]
    print(
        f"contactlab: done. simulated {summary['time']:.4g} s in {summary['steps']} steps; "
        f"wall time {summary['wall_seconds']:.1f} s (+ {setup:.1f} s setup); "
        f"{summary['particle_steps_per_second']:.3g} particle-steps/s; "
        f"{summary['contacts']} contacts; energy balance error {100 * summary['energy_balance_relative']:.3g} % "
        f"(dissipated {e['dissipated']:.4g} J); output in {out}/"
    )
    return 0


def _remove_if_empty(folder, created: bool) -> None:
    """Take back an output folder this run created, if nothing was written into it."""
    if created and folder is not None:
        try:
            folder.rmdir()
        except OSError:
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
