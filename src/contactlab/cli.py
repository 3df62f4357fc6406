"""The ``contactlab`` command.

``contactlab run [SCENE.toml] [--out DIR] [--duration T] [--threads N] [--restart CHECKPOINT]
[--overwrite] [--allow-import MODULE ...]``

``contactlab validate MODULE:MODEL [--out DIR] [--quick] [--overwrite]`` runs the validation battery
(:func:`contactlab.validation.battery.validate`) on a contact model named by module and attribute.

``contactlab sweep SCENE.toml --param KEY=VALUES ... --measure NAME ... [--overwrite]`` runs an
ensemble over a grid of scene-file parameters (:mod:`contactlab.ensemble.sweep`).

``contactlab --version`` prints the version; ``--help`` (of the command or of each subcommand)
answers at once: a subcommand's arguments are built, and the engine imported, only when it runs.

Without a scene file ``run`` runs the built-in default scene (10,000 glass beads settling in a box).
It shows a progress bar, writes a ParaView time series (``particles.pvd``, ``contacts.pvd``,
``walls.pvd``), an energy CSV and checkpoints into the output directory, and ends with a summary
(wall time, particle-steps/s, contacts, energy balance).

Output is never replaced unasked: ``run`` refuses an output folder that holds an earlier run's
output (its checkpoints, ``energy.csv``, ``summary.json``, VTK series) unless ``--overwrite``
(the earlier output is removed as a whole, once the new simulation is built) or ``--restart``
(the series, ``energy.csv`` and checkpoints go on from the checkpoint's time: what they hold up
to it is kept, what comes after it is replaced); ``validate`` refuses a report folder with a
report, ``sweep`` an existing results table, both unless ``--overwrite``.  Every flag is checked
before anything is built, and its error names it.

Exit status: 0 done (``validate``: every check passed; ``sweep``: every member succeeded), 1 a
run that failed once started (``validate``: a check failed; ``sweep``: a member failed), 2
refused before starting (bad flags, a bad scene file, model or checkpoint, output that would be
replaced); ``--help`` and ``--version`` exit 0.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
import time
from pathlib import Path

from . import __version__
from .errors import ContactlabError, InputError, OutputError

__all__ = ["main"]

#: the subcommands and their one-line help.  Only the arguments of the subcommand being run are
#: built (a subcommand's imports need the engine, ~1.5 s), so ``contactlab --help`` and
#: ``--version`` answer in a few hundredths of a second; the modules a subcommand needs are
#: imported in its function, for the same reason.
_COMMANDS = {
    "run": "run a scene file (default: the built-in settling scene)",
    "validate": "run the validation battery on a contact model and write a report",
    "sweep": "run a scene file over a grid of parameters (an ensemble) and write a table of results",
}
_OVERWRITE_HELP = "replace the earlier output found there (otherwise it is refused)"


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command's parser, with the arguments of subcommand ``command`` (the others: their help line)."""
    p = argparse.ArgumentParser(prog="contactlab", description="Discrete-element contact mechanics.")
    p.add_argument("--version", action="version", version=f"contactlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    if command == "run":
        from .imports import add_allow_import_argument, add_allow_long_run_argument

        run = sub.add_parser("run", help=_COMMANDS["run"])
        run.add_argument("scene", nargs="?", help="TOML scene file (default: built-in 10,000-bead settling scene)")
        run.add_argument("--out", help="output directory (default: the scene's [output] directory, ./contactlab-out)")
        run.add_argument("--duration", type=float, help="simulated time to reach, s (overrides the scene file; "
                                                         "with --restart: at least the checkpoint's time)")
        run.add_argument("--threads", type=int, help="number of threads (default: all cores)")
        run.add_argument("--restart", help="resume from this checkpoint (.npz) written by an earlier run of this "
                                           "scene; the output folder's series and energy.csv are continued")
        run.add_argument("--overwrite", action="store_true", help=_OVERWRITE_HELP)
        run.add_argument("--quiet", action="store_true", help="no progress bar")
        run.add_argument("--no-vtk", action="store_true", help="do not write VTK files")
        add_allow_import_argument(run)
        add_allow_long_run_argument(run)
    else:
        sub.add_parser("run", help=_COMMANDS["run"])
    if command == "validate":
        val = sub.add_parser("validate", help=_COMMANDS["validate"],
                             description="Run the validation battery on a contact model: hysteresis, impacts, oblique "
                                         "impacts, objectivity and symmetry, continuity, energy, time step, a granular "
                                         "column.  Writes report.html, summary.json and PNG figures.  Exit code 0 when "
                                         "every check passes, 1 otherwise, 2 when refused (a bad argument or model).")
        val.add_argument("model", metavar="MODULE:MODEL",
                         help="a contact model: MODULE:NAME where NAME is a ContactModel instance or a zero-argument "
                              "callable returning one, e.g. contactlab.validation.builtin:hertz_mindlin")
        val.add_argument("--out", help="report directory (default ./validation-<NAME>)")
        val.add_argument("--overwrite", action="store_true", help="replace an earlier report there (otherwise it is "
                                                                  "refused)")
        val.add_argument("--quick", action="store_true", help="the reduced sweep used in CI (a few seconds)")
        val.add_argument("--radius", type=float, default=1e-3, help="sphere radius, m (default 1e-3)")
        val.add_argument("--groups", help="comma-separated check groups to run (default all: hysteresis, impact, "
                                          "oblique, symmetry, continuity, energy, timestep, column)")
    else:
        sub.add_parser("validate", help=_COMMANDS["validate"])
    if command == "sweep":
        from .ensemble.sweep import add_sweep_parser

        add_sweep_parser(sub).add_argument("--overwrite", action="store_true",
                                           help="replace the results table given by --out if it exists (otherwise "
                                                "it is refused)")
    else:
        sub.add_parser("sweep", help=_COMMANDS["sweep"])
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    # the subcommand: the first word that is no option (the command itself takes no option with a value)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = _parser(command if command in _COMMANDS else None).parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "validate":
        return _validate(args)
    if args.command == "sweep":
        return _sweep(args)
    return 2  # pragma: no cover


def _refuse(exc: ContactlabError) -> int:
    print(f"contactlab: error: {exc}", file=sys.stderr)
    return 2


def _flag_number(flag: str, value, *, positive: bool = False, unit: str = "s") -> None:
    """A number flag: finite and >= 0 (or > 0)."""
    if value is not None and not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
        raise InputError(f"{flag} must be a finite number of {unit} {'> 0' if positive else '>= 0'}, got {value!r}")


def _flag_count(flag: str, value, *, low: int = 1, high: int | None = None, why: str = "") -> None:
    """An integer flag from ``low`` (to ``high``)."""
    if value is not None and not (low <= value and (high is None or value <= high)):
        allowed = f"from {low} to {high}{why}" if high is not None else f">= {low}"
        raise InputError(f"{flag} must be an integer {allowed}, got {value!r}")


def _flag_path(flag: str, value, what: str = "folder") -> None:
    """A path flag: not empty (an empty output name would write into the current folder)."""
    if value is not None and not value.strip():
        why = "" if what == "checkpoint file" else " (an empty name would write into the current folder)"
        raise InputError(f"{flag} must name a {what}, got {value!r}{why}")


def _writable_folder(folder: Path, named: str, what: str) -> bool:
    """:func:`~contactlab.io.atomic.ensure_writable_folder`, its error naming the flag or key that gave the folder."""
    from .io.atomic import ensure_writable_folder

    try:
        return ensure_writable_folder(folder, what)
    except OutputError as exc:
        raise OutputError(f"{exc} ({named})") from None


def _listing(files: list[Path]) -> str:
    """``a, b, c, 40 VTK frames``: what an output folder holds, in a few words."""
    frames = [f for f in files if f.suffix in (".vtp", ".png")]
    named = [f.name for f in files if f not in frames]
    if frames:
        kind = "figure" if frames[0].suffix == ".png" else "VTK frame"
        named.append(f"{len(frames)} {kind}{'s' if len(frames) > 1 else ''}")
    return ", ".join(named)


def _remove(files: list[Path]) -> None:
    """Remove an earlier output (given --overwrite)."""
    for f in files:
        try:
            f.unlink(missing_ok=True)
        except OSError as exc:
            raise OutputError(f"--overwrite: cannot remove the earlier output {str(f)!r}: "
                              f"{exc.strerror or exc}") from None


_EXAMPLE_MODEL = "contactlab.validation.builtin:hertz_mindlin"


def load_model(spec: str):
    """The contact model named by ``MODULE:NAME`` (an instance, or a zero-argument callable or
    class returning one); raises :class:`~contactlab.errors.InputError` with a hint otherwise."""
    from .laws.base import ContactModel

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



def _kernels_compiled(model) -> bool:
    """Whether the step kernels of ``model`` (spheres and planes) are cached already, for the
    "compiling" hint; the pair table's row length taken from a table of one material (the same
    for any)."""
    from .engine.codegen import is_compiled, pair_row_length
    from .materials import Material

    try:
        width = model.pair_table((Material(density=2500.0, young=1e7, poisson=0.3),)).shape[2]
    except Exception:  # a hint only: a model that needs more than one material compiles anyway
        return False
    return is_compiled(model.law_module, dropped=model.unused_history_columns(), row_length=pair_row_length(width))


def _earlier_report(folder: Path) -> list[Path]:
    """The files of a validation report in ``folder``: ``report.html``, ``summary.json`` and the
    figures the summary lists."""
    found = [folder / name for name in ("report.html", "summary.json") if (folder / name).is_file()]
    try:
        figures = json.loads((folder / "summary.json").read_text()).get("figures", [])
    except (OSError, ValueError, AttributeError):
        figures = []
    return found + [folder / name for name in figures if isinstance(name, str) and "/" not in name
                    and (folder / name).is_file()]


def _validate(args) -> int:
    from ._arguments import did_you_mean
    from .validation.battery import GROUPS, validate

    out, created = None, False
    try:
        _flag_number("--radius", args.radius, positive=True, unit="m")
        _flag_path("--out", args.out)
        model = load_model(args.model)
        groups = None
        if args.groups is not None:
            groups = [g.strip() for g in args.groups.split(",") if g.strip()]
            bad = sorted(set(groups) - set(GROUPS))
            if bad or not groups:
                named = ", ".join(f"{b!r}{did_you_mean(b, GROUPS)}" for b in bad) or repr(args.groups)
                raise InputError(f"--groups: unknown check group(s) {named}; groups: {', '.join(GROUPS)}")
        name = args.model.partition(":")[2].replace(".", "_")
        out = Path(args.out) if args.out else Path(f"validation-{name}")
        named = "--out" if args.out else "the report folder (the default of --out)"
        earlier = _earlier_report(out)
        if earlier and not args.overwrite:
            raise OutputError(f"{named}: {str(out)!r} holds an earlier report ({_listing(earlier)}); give --overwrite "
                              f"to replace it, or another --out")
        created = _writable_folder(out, named, "report folder")
        if not _kernels_compiled(model):
            print("contactlab: compiling the kernels for this contact law (first run only, about 30-50 s)...", flush=True)
        print(f"contactlab: validating {model!r} ({'quick' if args.quick else 'full'} battery, groups "
              f"{', '.join(groups or GROUPS)})", flush=True)
        report = validate(model, quick=args.quick, radius=args.radius, groups=groups)
        _remove(earlier)   # --overwrite: the earlier report as a whole, then the new one
        report.write(out)
    except ContactlabError as exc:
        _remove_if_empty(out, created)
        return _refuse(exc)
    except ImportError as exc:
        _remove_if_empty(out, created)
        return _refuse(ContactlabError(f"the report's figures need matplotlib ({exc}); pip install -e \".[plot]\""))
    for line in report.lines():
        print(line)
    n_fail = len(report.failed)
    print(f"contactlab: {'PASS' if report.passed else 'FAIL'}: {len(report.checks) - n_fail} of {len(report.checks)} "
          f"checks passed in {report.elapsed:.1f} s; report: {out / 'report.html'}, summary: {out / 'summary.json'}")
    return 0 if report.passed else 1


#: the files ``contactlab run`` writes besides the VTK series
_RUN_FILE = re.compile(r"^(energy\.csv|summary\.json|checkpoint(_\d{10})?\.npz)$")


def _earlier_run_output(folder: Path) -> list[Path]:
    """What an earlier ``contactlab run`` left in ``folder``: checkpoints, ``energy.csv``,
    ``summary.json`` and the VTK series (collections and frames)."""
    from .io.vtk import series_files

    if not folder.is_dir():
        return []
    return sorted({f for f in folder.iterdir() if _RUN_FILE.match(f.name)} | set(series_files(folder)))


def _run(args) -> int:
    import numba

    from .errors import CheckpointError, SceneFileError
    from .io.atomic import atomic_write_bytes
    from .io.checkpoint import CheckpointReporter, check_restart
    from .io.csv import EnergyCSVReporter
    from .io.scenefile import default_scene_path, load_scene_file
    from .io.vtk import VTKReporter
    from .simulation import Simulation

    scene_path = Path(args.scene) if args.scene else default_scene_path()
    out, created = None, False
    try:
        # the flags first, each named: before the scene file is read
        _flag_number("--duration", args.duration)
        _flag_count("--threads", args.threads, high=numba.config.NUMBA_NUM_THREADS, why=" (the threads Numba has)")
        _flag_path("--out", args.out)
        _flag_path("--restart", args.restart, "checkpoint file")
        if args.restart and args.overwrite:
            raise InputError("give --restart (go on with the output folder's series from the checkpoint) or "
                             "--overwrite (replace them), not both")
        spec = load_scene_file(scene_path, allow_import=args.allow_import)
        if args.out is not None:
            out, named = Path(args.out), "--out"
        else:
            out, named = Path(spec.output["directory"]), f"{scene_path}: [output] directory"
        duration = args.duration if args.duration is not None else spec.duration
        if duration is None:
            raise InputError(f"{scene_path}: no duration given ([simulation] duration or --duration)")
        earlier = _earlier_run_output(out)
        if earlier and not (args.overwrite or args.restart):
            raise OutputError(f"{named}: {str(out)!r} holds the output of an earlier run ({_listing(earlier)}); give "
                              f"--overwrite to replace it, --restart {str(out / 'checkpoint.npz')!r} to go on from "
                              f"its checkpoint, or another --out")
        if args.threads is not None:
            spec.simulation["threads"] = args.threads
        if args.allow_long_run:
            spec.simulation["allow_long_run"] = True
        if args.restart:
            # the checkpoint against the scene, and the time to reach against the checkpoint's, before
            # anything is written or compiled (and before the checkpoint's law is imported)
            try:
                scene_model, _ = spec.scene.finalize()
            except InputError as exc:
                raise SceneFileError(f"{scene_path}: {exc}") from None
            try:
                saved_time = check_restart(args.restart, scene_model, spec.model, scene=f"the scene {scene_path}")
            except CheckpointError as exc:
                raise CheckpointError(f"{exc} (--restart)") from None
            if duration < saved_time:
                source = "--duration" if args.duration is not None else f"{scene_path}: [simulation] duration"
                raise InputError(f"{source} {duration!r} s is before the time of the --restart checkpoint, "
                                 f"{saved_time!r} s (the duration is the simulated time to reach, not the time to "
                                 f"add); give --duration {saved_time!r} or more")
        # an output folder that cannot be written is reported now, before compiling or running
        created = _writable_folder(out, named, "output folder")
        print(f"contactlab: scene {scene_path} ({spec.scene.n_spheres} spheres, {spec.scene.n_walls} walls, "
              f"{spec.model.name})", flush=True)
        t0 = time.perf_counter()

        if not _kernels_compiled(spec.model):
            print("contactlab: compiling the kernels for this contact law (first run only, about 30-50 s on a 2-core machine)...",
                  flush=True)
        if args.restart:
            sim = Simulation.load_checkpoint(args.restart, threads=spec.simulation.get("threads"),
                                             allow_import=args.allow_import)
        else:
            sim = spec.build_simulation()
        setup = time.perf_counter() - t0
        # >= 0: a duration before the checkpoint is refused above
        remaining = max(duration - sim.time, 0.0)
        if args.allow_long_run:
            sim.allow_long_run = True       # a checkpoint's own setting, overridden
        sim.check_run(duration=remaining)   # a run that cannot end, before the output is touched
        print(f"contactlab: ready in {setup:.1f} s; dt = {sim.dt:.4g} s (stability limit {sim.stability_limit:.4g} s)",
              flush=True)
        if args.overwrite and earlier:
            _remove(earlier)   # the earlier output as a whole, now that the new run is ready
            print(f"contactlab: --overwrite: removed the earlier output in {out}/ ({_listing(earlier)})", flush=True)
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
        _remove_if_empty(out, created)
        return _refuse(exc)
    try:
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


def _sweep(args) -> int:
    """``contactlab sweep``: its flags checked and an existing results table refused here, the rest
    in :func:`contactlab.ensemble.sweep.sweep_command`."""
    from .ensemble.sweep import sweep_command

    try:
        _flag_number("--duration", args.duration)
        _flag_count("--workers", args.workers)
        _flag_count("--threads-per-member", args.threads_per_member)
        _flag_count("--replicates", args.replicates)
        _flag_count("--seed", args.seed, low=0)
        _flag_path("--out", args.out, "results file")
        # the default as sweep_command takes it
        out = Path(args.out) if args.out else Path(f"{Path(args.scene).stem}-sweep.csv")
        if out.exists() and not args.overwrite:
            raise OutputError(f"--out: the results table {str(out)!r} exists (an earlier sweep's); give --overwrite "
                              f"to replace it, or another --out")
    except ContactlabError as exc:
        return _refuse(exc)
    return sweep_command(args)


def _remove_if_empty(folder, created: bool) -> None:
    """Take back an output folder this run created, if nothing was written into it."""
    if created and folder is not None:
        try:
            folder.rmdir()
        except OSError:
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
