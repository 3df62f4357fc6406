"""Checkpoints: save a running simulation and resume it bit for bit.

A checkpoint is one ``.npz`` file holding what a simulation is: the frozen model
(:class:`~contactlab.frozen_model.Model`), the state (:class:`~contactlab.state.State`, which
holds every array a restart needs), the contact table (pairs, history and per-contact outputs,
the neighbour list's build reference), the contact law (its ``to_dict()``), the switched-off pairs
and the bond log, with the run options (time step, overlap guard, ...) in a JSON entry.  It is
written to a temporary file in the same directory, flushed to disk and renamed over the target, so
a crash while writing never damages the previous checkpoint.  This module is the only place that
writes or reads them: :meth:`contactlab.Simulation.save_checkpoint` calls :func:`save_checkpoint`,
:meth:`contactlab.Simulation.load_checkpoint` builds a simulation from :func:`read_checkpoint`.

Resuming from a checkpoint gives exactly the same numbers as a run that was never interrupted:
every array the step kernels read is restored, and time is computed from the step count.
Checkpoints of format version 5 (contactlab before the engine kept the boundary power, local
damping's last force and the meshes' build pose in the state and the table) and 6 (the table's
``out`` always of ``layout.N_OUT`` columns; since 7 a scene of spheres and plane walls stores
fewer, see :func:`contactlab.engine.layout.out_columns`) are read too.
"""
from __future__ import annotations

import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._arguments import as_int, as_path, checked_api
from ..bonds import BondLog
from ..errors import CheckpointError, ImportNotAllowedError, InputError, OutputError
from ..frozen_model import Model
from ..imports import allowed_modules
from ..laws.base import ContactModel
from ..laws.registry import model_from_dict
from ..materials import Material
from ..neighbors.exclusions import Exclusions
from ..state import State
from .atomic import atomic_write, ensure_writable_folder, remove_stale_temporaries
from .reporter import Reporter

__all__ = ["save_checkpoint", "read_checkpoint", "check_restart", "Checkpoint", "CheckpointReporter",
           "FORMAT_VERSION"]

FORMAT_VERSION = 7
#: older versions this contactlab still reads (converted on reading)
_READABLE = (5, 6, FORMAT_VERSION)

_MODEL_ARRAYS = ("radius", "mass", "inv_mass", "inertia", "inv_inertia", "material", "fixed", "wall_normal",
                 "wall_material", "gravity", "shape_kind", "shape_ref", "shape_data", "principal_inertia",
                 "contact_radius", "mesh_material", "mesh_first", "tri_mesh", "tri_ref", "mesh_local", "mesh_size")
_STATE_ARRAYS = ("positions", "velocities", "angular_velocities", "orientations", "forces", "torques",
                 "wall_points", "wall_velocities", "dissipated", "boundary_work", "dissipation_terms",
                 "damping_work", "mesh_positions", "mesh_orientations", "mesh_velocities", "mesh_angular_velocities",
                 "shape_data", "boundary_power", "damping_force")
#: arrays added in format versions 6 (cylinder walls, servo-controlled walls) and 7 (the periodic cell and
#: image counters, clumps, body ids), and within 7 the velocity predictor's loads of the evaluation before
#: the last: written when the simulation has them, read when present (a checkpoint written before them has
#: plane walls only, no servo, no periodic cell, no clumps and ids 0 .. N-1; without the predictor's loads
#: the resumed run's first step predicts with the last loads alone)
_OPTIONAL_MODEL_ARRAYS = ("wall_kind", "wall_shape", "clump_of", "clump_first", "clump_members", "clump_offsets",
                          "clump_mass", "clump_inertia")
_OPTIONAL_STATE_ARRAYS = ("servo_index", "servo_param", "cell", "images", "clump_positions", "clump_velocities",
                          "clump_angular_velocities", "clump_orientations", "clump_forces", "clump_torques", "ids",
                          "previous_loads", "clump_previous_loads")
_TABLE_ARRAYS = ("pair_i", "pair_j", "hist", "out", "status", "ref_pos", "wall_ref", "mesh_ref_pos", "mesh_ref_quat")
#: version 5 kept these outside the state and the table: entry name -> (where, name) now
_V5_ENTRIES = {"boundary_power": ("state", "boundary_power"), "damping_force": ("state", "damping_force"),
               "mesh_build_pos": ("table", "mesh_ref_pos"), "mesh_build_quat": ("table", "mesh_ref_quat")}
#: the options a simulation is resumed with (``Simulation`` keyword arguments)
_OPTIONS = ("max_overlap", "initial_overlap_tolerance", "threads", "local_damping", "shape_contact", "allow_unstable_dt",
            "energy_watchdog", "allow_long_run")


def _required(version: int) -> list[str]:
    """Entries every checkpoint of this format version holds."""
    if version == 5:
        state = [k for k in _STATE_ARRAYS if k not in ("boundary_power", "damping_force")]
        table = [k for k in _TABLE_ARRAYS if not k.startswith("mesh_ref")]
        extra = list(_V5_ENTRIES)
    else:
        state, table, extra = list(_STATE_ARRAYS), list(_TABLE_ARRAYS), []
    return ([f"model_{k}" for k in _MODEL_ARRAYS] + [f"state_{k}" for k in state] + [f"table_{k}" for k in table]
            + extra + ["exclusions_material_active", "exclusions_keys"])


@dataclass
class Checkpoint:
    """What a checkpoint holds, read back: everything :meth:`contactlab.Simulation.load_checkpoint`
    resumes from.  ``table`` holds the contact table's arrays with ``skin`` (m) and ``builds``;
    ``dt`` is the time step (s, None while undetermined); ``options`` the simulation's keyword
    options (``max_overlap``, ``initial_overlap_tolerance``, ``threads``, ``local_damping``,
    ``shape_contact``)."""

    model: Model
    state: State
    law: ContactModel
    table: dict
    exclusions: Exclusions
    bond_log: BondLog
    dt: float | None
    options: dict
    streams: list = field(default_factory=list)


def save_checkpoint(sim, path) -> Path:
    """Write simulation ``sim`` to ``path`` (``.npz`` appended if missing), atomically; returns the path."""
    path = as_path("save_checkpoint: path", path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    if not path.parent.is_dir():
        ensure_writable_folder(path.parent, "checkpoint folder")
    t = sim.table
    arrays = {f"model_{k}": getattr(sim.model, k) for k in _MODEL_ARRAYS + _OPTIONAL_MODEL_ARRAYS}
    arrays.update({f"state_{k}": getattr(sim.state, k) for k in _STATE_ARRAYS + _OPTIONAL_STATE_ARRAYS
                   if getattr(sim.state, k) is not None})   # a periodic cell only in a periodic scene
    n = sim.model.n_bodies
    # a run without local damping keeps no damping arrays (the stepper's _complete_state): zeros, as before
    for k, shape in (("damping_work", (n,)), ("damping_force", (n, 6))):
        arrays.setdefault(f"state_{k}", np.zeros(shape))
    arrays.update({f"table_{k}": v for k, v in sim.stepper.saved_table().items()})
    arrays["exclusions_material_active"] = sim.exclusions.material_active
    arrays["exclusions_keys"] = sim.exclusions.keys
    arrays.update({f"bonds_{k}": v for k, v in sim.bond_log.data.items()})
    streams = []
    for k, (entry, stream_arrays) in enumerate(sim.streams.saved()):
        streams.append(entry)
        arrays.update({f"stream{k}_{name}": v for name, v in stream_arrays.items()})
    s = sim.state
    meta = {
        "format": "contactlab-checkpoint",
        "version": FORMAT_VERSION,
        "materials": [m.to_dict() for m in sim.model.materials],
        "contact_model": sim.contact_model.to_dict(),
        "time": s.time,
        "step": s.step,
        "dt": sim.dt,
        "time_base": s.time_base,
        "step_base": s.step_base,
        "skin": t.skin,
        "builds": t.builds,
        "initial_energy": s.initial_energy,
        "next_id": int(s.next_id),
        "streams": streams,
        "mesh_names": list(sim.model.mesh_names),
        "dimension": int(sim.model.dimension),
        "thickness": float(sim.model.thickness),
        **{k: getattr(sim, k) for k in _OPTIONS},
    }
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_write(path) as f:
        np.savez(f, **arrays)
    return path


def read_checkpoint(path, *, allow_import=()) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint` (see :class:`Checkpoint`).

    A missing, empty, truncated, damaged or foreign file, or one of another format version,
    raises :class:`~contactlab.errors.CheckpointError` saying which.  A stored model of a
    user-defined law names its module (``"module:name"``): the module is imported only if it is
    contactlab's own, already imported, or in ``allow_import`` (a name or a list); otherwise
    :class:`~contactlab.errors.ImportNotAllowedError` is raised before it is imported
    (:mod:`contactlab.imports`: a checksum proves the file whole, not where it came from).
    """
    path = as_path("load_checkpoint: path", path)
    allow_import = allowed_modules(allow_import, "load_checkpoint: allow_import")
    data, meta = _read(path)
    try:
        return _parts(path, data, meta, allow_import)
    except (CheckpointError, ImportNotAllowedError):
        raise
    except (KeyError, IndexError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} is damaged: {type(exc).__name__}: {exc} (a contactlab "
                              f"checkpoint is written whole or not at all: this one was changed afterwards)") from None
    finally:
        data.close()


def _read(path: Path):
    """The open archive and its metadata, or a CheckpointError that says what the file is."""
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a folder, not a checkpoint file")
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    if size == 0:
        raise CheckpointError(f"checkpoint {str(path)!r} is empty (0 bytes): not a contactlab checkpoint")
    if head != b"PK\x03\x04":
        raise CheckpointError(f"{str(path)!r} is not a contactlab checkpoint (a checkpoint is a NumPy .npz archive; "
                              f"this file starts with {head!r})")
    try:
        with zipfile.ZipFile(path) as archive:   # every entry against its CRC: a changed byte is found here
            bad = archive.testzip()
        if bad is not None:
            raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its entry {bad!r} fails its checksum (the "
                                  f"file changed after it was written); resume from an earlier checkpoint")
        data = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} is truncated or damaged ({size} bytes; {exc}); resume from "
                              f"an earlier checkpoint") from None
    try:
        if "meta" not in data.files:
            raise CheckpointError(f"{str(path)!r} is a NumPy archive but not a contactlab checkpoint (it holds "
                                  f"{', '.join(data.files[:6]) or 'nothing'}{' ...' if len(data.files) > 6 else ''}, "
                                  f"no 'meta')")
        meta = json.loads(str(data["meta"]))
        if not isinstance(meta, dict) or meta.get("format") != "contactlab-checkpoint":
            raise CheckpointError(f"{str(path)!r} is not a contactlab checkpoint (its 'meta' is not contactlab's)")
        if meta.get("version") not in _READABLE:
            raise CheckpointError(f"checkpoint {str(path)!r} is of format version {meta.get('version')!r}; this "
                                  f"contactlab reads version {FORMAT_VERSION} (and {', '.join(map(str, _READABLE[:-1]))}) (resume it with "
                                  f"the contactlab that wrote it)")
    except CheckpointError:
        data.close()
        raise
    except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        data.close()
        raise CheckpointError(f"checkpoint {str(path)!r} is truncated or damaged ({type(exc).__name__}: {exc})") from None
    return data, meta


def _law(path: Path, meta: dict, allow_import: frozenset) -> ContactModel:
    """The stored contact model, its modules checked before any is imported."""
    stored = meta["contact_model"]
    if not isinstance(stored, dict):
        raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its contact model is {stored!r:.80}, not a "
                              f"model's plain-data form")
    source = f"checkpoint {str(path)!r}: its contact model"
    try:
        return model_from_dict(stored, allow_import=allow_import, source=source)
    except ImportNotAllowedError:
        raise
    except InputError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r}: its contact model {stored.get('type')!r} cannot be made: "
                              f"{exc}") from None


def _model(data, meta: dict) -> Model:
    """The frozen model a checkpoint holds."""
    materials = tuple(Material(**m) for m in meta["materials"])
    model_arrays = {k: np.array(data[f"model_{k}"]) for k in _MODEL_ARRAYS + _OPTIONAL_MODEL_ARRAYS
                    if f"model_{k}" in data.files}
    return Model(materials=materials, mesh_names=tuple(meta["mesh_names"]), dimension=int(meta.get("dimension", 3)),
                 thickness=float(meta.get("thickness", 1.0)), **model_arrays)


def _parts(path: Path, data, meta: dict, allow_import: frozenset = frozenset()) -> Checkpoint:
    version = int(meta["version"])
    law = _law(path, meta, allow_import)   # first: a refused import stops before the arrays are read
    missing = [k for k in _required(version) if k not in data.files]
    if missing:
        raise CheckpointError(f"checkpoint {str(path)!r} lacks {', '.join(missing[:5])}"
                              f"{' ...' if len(missing) > 5 else ''}: it is damaged or was not written by contactlab")
    model = _model(data, meta)
    materials = model.materials
    state = {k: np.array(data[f"state_{k}"]) for k in _STATE_ARRAYS + _OPTIONAL_STATE_ARRAYS
             if f"state_{k}" in data.files}
    table = {k: data[f"table_{k}"] for k in _TABLE_ARRAYS if f"table_{k}" in data.files}
    initial_energy = meta.get("initial_energy")
    if version == 5:
        for entry, (where, name) in _V5_ENTRIES.items():
            (state if where == "state" else table)[name] = np.array(data[entry])
        initial_energy = meta["initial_terms"]
    n = model.n_bodies
    state = State(**state, time=float(meta["time"]), step=int(meta["step"]), time_base=float(meta["time_base"]),
                  step_base=int(meta["step_base"]), next_id=int(meta.get("next_id", n)),
                  initial_energy={k: float(v) for k, v in initial_energy.items()} if initial_energy else None)
    table.update(skin=meta["skin"], builds=meta["builds"])
    exclusions = Exclusions(len(materials), model.n_spheres + model.n_walls + model.n_triangles,
                            np.array(data["exclusions_material_active"]), np.array(data["exclusions_keys"]))
    bond_log = BondLog({k[len("bonds_"):]: data[k] for k in data.files if k.startswith("bonds_")})
    streams = [(entry, {name[len(f"stream{k}_"):]: np.array(data[name]) for name in data.files
                        if name.startswith(f"stream{k}_")}) for k, entry in enumerate(meta.get("streams", []))]
    return Checkpoint(model=model, state=state, law=law, table=table,
                      exclusions=exclusions, bond_log=bond_log, dt=meta["dt"],
                      options={k: meta[k] for k in _OPTIONS if k in meta}, streams=streams)


def check_restart(path, model: Model, law: ContactModel, *, scene: str = "the scene", first: int = 6) -> float:
    """Refuse to resume checkpoint ``path`` as the simulation of ``model`` and ``law`` (a scene
    file's, in ``contactlab run SCENE --restart CHECKPOINT``) when it holds another one; returns
    the checkpoint's time, s.

    Compared: the contact model (its type and every parameter, as plain data: nothing the file
    names is imported), the materials (by name, and their properties), the bodies (count, and
    each one's radius, shape, material and whether it is fixed; not where they are or how they
    move, which a run changes), the walls (count, kind, normal, material, a cylinder's shape), the
    meshes, gravity and the dimension.  A mismatch raises
    :class:`~contactlab.errors.CheckpointError` listing the first ``first`` differences, each with
    its value in ``scene`` and in the checkpoint; a file that is no checkpoint raises it as
    :func:`read_checkpoint` does.
    """
    path = as_path("check_restart: path", path)
    data, meta = _read(path)
    try:
        missing = [k for k in _required(int(meta["version"])) if k.startswith("model_") and k not in data.files]
        if missing:
            raise CheckpointError(f"checkpoint {str(path)!r} lacks {', '.join(missing[:5])}: it is damaged or was not "
                                  f"written by contactlab")
        saved, time = _model(data, meta), float(meta["time"])
        saved_law = meta["contact_model"]
    except CheckpointError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} is damaged: {type(exc).__name__}: {exc}") from None
    finally:
        data.close()
    found = _differences(model, json.loads(json.dumps(law.to_dict())), saved, saved_law)
    if found:
        more = f"; and {len(found) - first} more" if len(found) > first else ""
        raise CheckpointError(f"checkpoint {str(path)!r} holds another simulation than {scene} (differences, in the "
                              f"scene / in the checkpoint: {'; '.join(found[:first])}{more}); resume a checkpoint "
                              f"with the scene file that wrote it")
    return time


def _law_differences(mine, saved, where: str) -> list[str]:
    if isinstance(mine, dict) and isinstance(saved, dict):
        if mine.get("type") != saved.get("type"):
            return [f"{where} type {mine.get('type')!r} / {saved.get('type')!r}"]
        found = []
        for key in sorted(set(mine) | set(saved), key=lambda k: (k != "type", str(k))):
            if key not in mine or key not in saved:
                found.append(f"{where}.{key} {mine.get(key, '(none)')!r} / {saved.get(key, '(none)')!r}")
            else:
                found += _law_differences(mine[key], saved[key], f"{where}.{key}")
        return found
    return [] if mine == saved else [f"{where} {mine!r} / {saved!r}"]


def _body_differences(what: str, unit: str, mine: np.ndarray, saved: np.ndarray, same) -> list[str]:
    """The first body (or wall) whose ``what`` differs, and how many do."""
    differ = np.flatnonzero([not same(a, b) for a, b in zip(mine, saved)])
    if not len(differ):
        return []
    k = int(differ[0])
    a, b = mine[k], saved[k]
    a, b = (a.tolist(), b.tolist()) if isinstance(a, np.ndarray) else (a.item() if hasattr(a, "item") else a,
                                                                     b.item() if hasattr(b, "item") else b)
    others = f" ({len(differ) - 1} more differ)" if len(differ) > 1 else ""
    return [f"{what} {k}: {a!r}{unit} / {b!r}{unit}{others}"]


def _close(a, b) -> bool:
    """Equal up to rounding (a value the scene derives, such as a normalised wall normal)."""
    return bool(np.allclose(a, b, rtol=1e-9, atol=0.0))


def _equal(a, b) -> bool:
    return bool(np.array_equal(a, b))


def _differences(model: Model, law: dict, saved: Model, saved_law: dict) -> list[str]:
    """What differs between a scene's model and law and a checkpoint's (see :func:`check_restart`)."""
    found = _law_differences(law, saved_law, "model")
    if model.dimension != saved.dimension:
        found.append(f"dimension {model.dimension} / {saved.dimension}")
    if not _close(model.gravity, saved.gravity):
        found.append(f"gravity {model.gravity.tolist()} / {saved.gravity.tolist()} m/s^2")
    names = [m.name or f"#{k}" for k, m in enumerate(model.materials)]
    saved_names = [m.name or f"#{k}" for k, m in enumerate(saved.materials)]
    same_names = sorted(names) == sorted(saved_names)   # then each body's and wall's material by name
    if not same_names:
        found.append(f"materials {', '.join(names)} / {', '.join(saved_names)}")
    for name, material in zip(names, model.materials):
        if name in saved_names:
            mine, theirs = material.to_dict(), saved.materials[saved_names.index(name)].to_dict()
            found += [f"material {name} {key} {mine[key]!r} / {theirs.get(key)!r}" for key in mine
                      if mine[key] != theirs.get(key)]
    if model.n_bodies != saved.n_bodies:
        found.append(f"bodies {model.n_bodies} / {saved.n_bodies}")
    else:
        found += _body_differences("radius of body", " m", model.radius, saved.radius, _close)
        found += _body_differences("shape of body", "", model.shape_kind, saved.shape_kind, _equal)
        if same_names:
            found += _body_differences("material of body", "", np.array(names, dtype=object)[model.material],
                                       np.array(saved_names, dtype=object)[saved.material], _equal)
        found += _body_differences("fixed body", "", model.fixed, saved.fixed, _equal)
        if model.n_clumps != saved.n_clumps:
            found.append(f"clumps {model.n_clumps} / {saved.n_clumps}")
    if model.n_walls != saved.n_walls:
        found.append(f"walls {model.n_walls} / {saved.n_walls}")
    else:
        found += _body_differences("kind of wall", "", model.wall_kind, saved.wall_kind, _equal)
        found += _body_differences("normal of wall", "", model.wall_normal, saved.wall_normal, _close)
        if same_names:
            found += _body_differences("material of wall", "", np.array(names, dtype=object)[model.wall_material],
                                       np.array(saved_names, dtype=object)[saved.wall_material], _equal)
        found += _body_differences("shape of wall", "", model.wall_shape, saved.wall_shape, _close)
    if tuple(model.mesh_names) != tuple(saved.mesh_names) or model.n_triangles != saved.n_triangles:
        found.append(f"meshes {list(model.mesh_names)} ({model.n_triangles} triangles) / {list(saved.mesh_names)} "
                     f"({saved.n_triangles} triangles)")
    return found


@checked_api
class CheckpointReporter(Reporter):
    """Write a checkpoint every ``interval`` seconds (or ``every`` steps).

    Parameters
    ----------
    path : str or Path
        Checkpoint file; with ``keep > 1`` the step number is added to the name and only the
        newest ``keep`` files are kept.
    interval : float, s, or every : int, steps
    keep : int
        How many checkpoints to keep (default 1: one file, replaced atomically each time).
    """

    def __init__(self, path, *, interval: float | None = None, every: int | None = None, keep: int = 1):
        super().__init__(interval=interval, every=every)
        self.path = as_path("CheckpointReporter: path", path)
        self.keep = as_int("CheckpointReporter: keep", keep, low=1)
        self.written: list[Path] = []

    def output_files(self) -> list[Path]:
        return [self.path]

    def attach(self, sim) -> None:
        super().attach(sim)
        if self.path.is_dir():
            raise OutputError(f"CheckpointReporter: path {str(self.path)!r} is a folder; give the checkpoint's file "
                              f"name, e.g. {str(self.path / 'checkpoint.npz')!r}")
        ensure_writable_folder(self.path.parent, "checkpoint folder")
        remove_stale_temporaries(self.path.parent, keep=lambda name: name.endswith(".npz"))
        if self.keep > 1 and not self.written:
            # a run restarted into the same folder counts the checkpoints already there
            stem = self.path.name[:-4] if self.path.name.endswith(".npz") else self.path.name
            pattern = re.compile(rf"^{re.escape(stem)}_(\d{{10}})\.npz$")
            found = sorted((int(m.group(1)), f) for f in self.path.parent.iterdir() if (m := pattern.match(f.name)))
            self.written = [f for _, f in found]

    def report(self, sim) -> None:
        if sim.step == 0:
            return
        if self.keep == 1:
            target = self.path
        else:
            stem = self.path.name[:-4] if self.path.name.endswith(".npz") else self.path.name
            target = self.path.with_name(f"{stem}_{sim.step:010d}.npz")
        written = save_checkpoint(sim, target)   # complete (renamed into place) before an old one goes
        if written not in self.written:
            self.written.append(written)
        while len(self.written) > self.keep:
            old = self.written.pop(0)
            if old.exists():
                old.unlink()
