"""Sweeps of a scene file: :class:`SceneFile` (a picklable ``make_simulation`` for a TOML scene)
and the ``contactlab sweep`` command.

``contactlab sweep SCENE.toml --param KEY=VALUES [--param ...] --measure NAME [--measure ...]
[--duration T] [--workers N | --scheduler ADDRESS | --serial] [--threads-per-member K]
[--replicates R] [--seed S] [--checkpoint DIR] [--out results.csv|results.parquet] [--allow-import MODULE ...]``

runs one member per combination of the ``--param`` values (a full grid), each the scene file with
those keys replaced (:func:`contactlab.io.scenefile.apply_overrides`), run for the file's
``[simulation] duration`` (or ``--duration``), and writes one row per member.  ``KEY`` is a dotted
key of the file (``model.friction``, ``materials.glass.young``, ``fill_box.seed``); ``VALUES`` is
``START:STOP:N`` (N values, ends included), ``START:STOP:N:log``, or a comma-separated list
(:func:`~contactlab.ensemble.parameters.parse_values`).  ``--measure`` takes a built-in measure
(:mod:`contactlab.ensemble.builtin_measures`) or ``module:function``.  ``--scheduler`` connects to a
running Dask scheduler (``tcp://host:8786``); the default runs ``--workers`` local processes.
``--allow-import MODULE`` (repeatable) lets the file's ``[model] type = "MODULE:name"`` import that
module of a user-defined law (:mod:`contactlab.imports`).  Exit status: 0 when every member
succeeded, 1 when some failed (their error is in the table), 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

import numpy as np

from .._arguments import fmt
from ..imports import add_allow_import_argument, add_allow_long_run_argument, allowed_modules
from ..errors import ContactlabError, InputError
from ..io.scenefile import load_scene_file
from ..laws.registry import named_modules
from ..simulation import Simulation
from .builtin_measures import MEASURES
from .parameters import parse_values
from .runner import run
from .table import write_table

__all__ = ["SceneFile", "add_sweep_parser", "add_allow_import_argument", "sweep_command"]  # the argument: re-exported


class SceneFile:
    """``make_simulation`` for a TOML scene file: ``SceneFile(path)(**{"model.friction": 0.3})``
    builds the file's simulation with that key replaced.

    Picklable (it holds the file's path), so process pools and Dask workers can use it; the file
    is read again in each member (on a cluster: give a path that every worker can read).  The
    file is checked once when the object is made.  ``duration``: the file's ``[simulation]
    duration`` (s, or None).  ``reseed=True``: every ``[[fill_box]]`` table gets the member's seed
    (plus its number, from 0), so that replicates get different random packings; with False
    (default) the file's seeds stay and every member starts from the same packing.  The file's
    ``[simulation] threads`` is left out (a member runs on the ensemble's ``threads_per_member``)
    unless the parameters set ``simulation.threads``; the file's ``[output]`` reporters are not
    attached (measure what you need).  ``allow_import``: the modules the file's ``[model] type =
    "module:name"`` may import (:func:`~contactlab.io.scenefile.load_scene_file`).  The modules
    the file names that this process may import (allowed, or already imported here: your script
    imported the law) are allowed in every member too, since a worker process has imported
    nothing of yours; it is not part of what identifies the ensemble in a checkpoint folder.
    Override values reach the file as TOML data: NumPy scalars and arrays as numbers and lists.
    ``allow_long_run=True``: every member's simulation accepts runs beyond a week of wall time
    (:mod:`contactlab.run_length`; ``--allow-long-run``).
    """

    def __init__(self, path, *, reseed: bool = False, allow_import=(), allow_long_run: bool = False):
        self.path = Path(path).resolve()
        if not isinstance(reseed, bool):
            raise InputError(f"reseed must be True or False, got {fmt(reseed)}")
        self.reseed = reseed
        if not isinstance(allow_long_run, bool):
            raise InputError(f"allow_long_run must be True or False, got {fmt(allow_long_run)}")
        self.allow_long_run = allow_long_run
        allowed = allowed_modules(allow_import)
        spec = load_scene_file(self.path, allow_import=allowed)
        self.allow_import = tuple(sorted(allowed | named_modules(spec.model.to_dict())))
        self.duration = spec.duration

    def __repr__(self) -> str:
        return f"SceneFile({str(self.path)!r}{', reseed=True' if self.reseed else ''})"

    def __call__(self, seed: int | None = None, **overrides) -> Simulation:
        overrides = {key: _toml_data(value) for key, value in overrides.items()}
        if self.reseed and seed is not None:
            for k, key in enumerate(_fill_box_seed_keys(self.path)):
                overrides.setdefault(key, (int(seed) + k) % 2**32)
        spec = load_scene_file(self.path, overrides=overrides, allow_import=self.allow_import)
        if "simulation.threads" not in overrides:
            # the member runs on the ensemble's threads_per_member, not on the threads the file
            # asks of `contactlab run` (which would oversubscribe the cores the members share)
            spec.simulation.pop("threads", None)
        if self.allow_long_run:
            spec.simulation["allow_long_run"] = True
        return spec.build_simulation()


def _toml_data(value):
    """An override value as a TOML file would hold it: NumPy scalars as Python numbers, arrays
    (and tuples) as lists."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_toml_data(v) for v in value]
    if isinstance(value, dict):
        return {k: _toml_data(v) for k, v in value.items()}
    return value


def _fill_box_seed_keys(path: Path) -> list[str]:
    """The override keys of the seeds of the file's ``[[fill_box]]`` tables."""
    with open(path, "rb") as f:
        boxes = tomllib.load(f).get("fill_box", [])
    if isinstance(boxes, dict):
        return ["fill_box.seed"]
    return [f"fill_box.{k + 1}.seed" for k in range(len(boxes))]


def _parse_param(text: str) -> tuple[str, list]:
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise InputError(f"--param takes KEY=VALUES, e.g. model.friction=0.2:0.8:7 or model.restitution=0.3,0.6; "
                         f"got {text!r}")
    return key, parse_values(values)


def add_sweep_parser(sub) -> argparse.ArgumentParser:
    """Add the ``sweep`` command to the ``contactlab`` command's subparsers."""
    p = sub.add_parser(
        "sweep", help="run a scene file over a grid of parameters (an ensemble) and write a table of results",
        description="Run one simulation per combination of the --param values (a full grid) and write one row "
                    "per member: the parameters, the measured values, status, error text and timings.  "
                    "Members run on local processes (--workers), in this process (--serial) or on a Dask "
                    "cluster (--scheduler).  Exit status 0 when every member succeeded, 1 when some failed.")
    p.add_argument("scene", help="TOML scene file")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUES",
                   help="a dotted key of the scene file and its values: START:STOP:N (N values, ends included), "
                        "START:STOP:N:log, or A,B,C; e.g. model.friction=0.2:0.8:7 (repeat for a grid)")
    p.add_argument("--measure", action="append", default=[], metavar="NAME",
                   help="what to measure at the end: " + ", ".join(
                       f"{name} ({unit})" if unit else name for name, unit in
                       ((name, {"kinetic_energy": "J", "dissipated_energy": "J", "pile_height": "m",
                                "angle_of_repose": "degrees", "bulk_density": "kg/m^3"}.get(name))
                        for name in MEASURES))
                   + ", or module:function (repeatable); the results table holds them in these units")
    p.add_argument("--duration", type=float, help="simulated time of each member, s (default: the scene's)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="local worker processes (default: cores / threads per member)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler, e.g. "
                                                              "tcp://10.0.0.1:8786 (needs dask.distributed)")
    where.add_argument("--serial", action="store_true", help="run the members one after the other in this process")
    p.add_argument("--threads-per-member", type=int, default=1, help="Numba threads of each member (default 1)")
    p.add_argument("--replicates", type=int, default=1,
                   help="runs per parameter set; >1 gives each a different seed for the [[fill_box]] tables")
    p.add_argument("--seed", type=int, default=0, help="base seed of the members' seeds (default 0)")
    p.add_argument("--checkpoint", metavar="DIR", help="keep each finished member here; rerunning the same "
                                                        "command resumes with the unfinished members only")
    p.add_argument("--retry-failed", action="store_true", help="with --checkpoint: run failed members again")
    p.add_argument("--out", help="results table, .csv or .parquet (default: <scene>-sweep.csv)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_allow_import_argument(p)
    add_allow_long_run_argument(p)
    return p


def sweep_command(args) -> int:
    """Run ``contactlab sweep`` with parsed arguments; returns the exit status."""
    client = None
    try:
        if not args.measure:
            raise InputError(f"give at least one --measure: {', '.join(MEASURES)}, or module:function")
        axes = dict(_parse_param(text) for text in args.param)
        if len(axes) != len(args.param):
            raise InputError("the same --param KEY is given twice; give all its values in one --param")
        scene = SceneFile(args.scene, reseed=args.replicates > 1, allow_import=args.allow_import,
                          allow_long_run=args.allow_long_run)
        duration = args.duration if args.duration is not None else scene.duration
        if duration is None:
            raise InputError(f"{args.scene}: no duration given ([simulation] duration or --duration)")
        out = Path(args.out) if args.out else Path(f"{Path(args.scene).stem}-sweep.csv")
        if out.suffix.lower() not in (".csv", ".parquet"):
            raise InputError(f"--out must end in .csv or .parquet, got {str(out)!r}")
        executor, workers = None, args.workers
        if args.serial:
            executor = "serial"
        elif args.scheduler:
            try:
                from distributed import Client
            except ImportError:
                raise InputError("--scheduler needs dask.distributed: pip install 'contactlab[ensemble]'") from None
            client = executor = Client(args.scheduler)
        parameters = [{}] if not axes else axes
        print(f"contactlab: sweep of {args.scene}: {_count(axes) * args.replicates} members, measuring "
              f"{', '.join(args.measure)}", flush=True)
        table = run(scene, parameters, list(args.measure), executor=executor, workers=workers,
                    threads_per_member=args.threads_per_member, duration=duration, replicates=args.replicates,
                    seed=args.seed, checkpoint=args.checkpoint, retry_failed=args.retry_failed,
                    progress=not args.quiet)
        write_table(table, out)
    except ContactlabError as exc:
        print(f"contactlab: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            client.close()
    failed = table[table["status"] != "ok"]
    a = table.attrs
    print(f"contactlab: {len(table)} members ({len(table) - len(failed)} ok, {len(failed)} failed) in "
          f"{a['elapsed_seconds']:.1f} s on {a['executor']}; overhead {a['overhead_seconds_per_member']:.2f} s per "
          f"member; kernels compiled in {int((table['compiled'] > 0).sum())} member(s); results: {out}")
    for member, row in failed.head(5).iterrows():
        print(f"contactlab: member {member} failed: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


def _count(axes: dict) -> int:
    n = 1
    for values in axes.values():
        n *= len(values)
    return n
