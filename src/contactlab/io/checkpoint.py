"""Checkpoints: save a running simulation and resume it bit for bit.

A checkpoint is one ``.npz`` file holding the frozen model, the state, the contact table (pairs,
history and per-contact outputs) and a JSON description of the materials, the contact model and
the run options.  It is written to a temporary file in the same directory, flushed to disk and
renamed over the target, so a crash while writing never damages the previous checkpoint.

Resuming from a checkpoint gives exactly the same numbers as a run that was never interrupted:
every array the step kernels read is restored, and time is computed from the step count.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .._validate import as_int, checked_api
from ..bonds import BondLog
from ..errors import InputError
from ..laws.registry import model_from_dict
from ..materials import Material
from ..model import Model
from ..neighbors.exclusions import Exclusions
from ..state import State
from .reporter import Reporter

__all__ = ["save_checkpoint", "load_checkpoint", "CheckpointReporter", "FORMAT_VERSION"]

FORMAT_VERSION = 5

_MODEL_ARRAYS = ("radius", "mass", "inv_mass", "inertia", "inv_inertia", "material", "fixed", "wall_normal",
                 "wall_material", "gravity", "shape_kind", "shape_ref", "shape_data", "principal_inertia",
                 "contact_radius", "mesh_material", "mesh_first", "tri_mesh", "tri_ref", "mesh_local", "mesh_size")
_STATE_ARRAYS = ("positions", "velocities", "angular_velocities", "orientations", "forces", "torques",
                 "wall_points", "wall_velocities", "dissipated", "boundary_work", "dissipation_terms",
                 "damping_work", "mesh_positions", "mesh_orientations", "mesh_velocities", "mesh_angular_velocities",
                 "shape_data")


def save_checkpoint(sim, path) -> Path:
    """Write ``sim`` to ``path`` (``.npz`` appended if missing), atomically; returns the path."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    t = sim.table
    arrays = {f"model_{k}": getattr(sim.model, k) for k in _MODEL_ARRAYS}
    arrays.update({f"state_{k}": getattr(sim.state, k) for k in _STATE_ARRAYS})
    arrays.update({f"table_{k}": v for k, v in t.saved().items()})
    arrays["boundary_power"] = sim._owner[:, 8]
    arrays["damping_force"] = sim._damping_force
    arrays["mesh_build_pos"] = sim._mesh_build_pos
    arrays["mesh_build_quat"] = sim._mesh_build_quat
    arrays["exclusions_material_active"] = sim.exclusions.material_active
    arrays["exclusions_keys"] = sim.exclusions.keys
    arrays.update({f"bonds_{k}": v for k, v in sim._bond_log.data.items()})
    meta = {
        "format": "contactlab-checkpoint",
        "version": FORMAT_VERSION,
        "materials": [m.to_dict() for m in sim.model.materials],
        "contact_model": sim.contact_model.to_dict(),
        "time": sim.state.time,
        "step": sim.state.step,
        "dt": sim.dt,
        "time_base": sim._time_base,
        "step_base": sim._step_base,
        "skin": t.skin,
        "builds": t.builds,
        "max_overlap": sim.max_overlap,
        "initial_overlap_tolerance": sim.initial_overlap_tolerance,
        "threads": sim.threads,
        "local_damping": sim.local_damping,
        "initial_energy": sim._initial_energy,
        "initial_terms": sim._initial_terms,
        "mesh_names": list(sim.model.mesh_names),
        "shape_contact": sim.shape_contact,
    }
    arrays["meta"] = np.array(json.dumps(meta))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def load_checkpoint(path, *, threads: int | None = None):
    """Resume a simulation from a checkpoint written by :func:`save_checkpoint`.

    ``threads`` overrides the saved thread count (results do not depend on it).  Reporters are
    not saved: attach them again.
    """
    from ..simulation import Simulation

    path = Path(path)
    if not path.exists():
        raise InputError(f"checkpoint {str(path)!r} does not exist")
    try:
        data = np.load(path, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
    except Exception as exc:  # a damaged or foreign file
        raise InputError(f"{str(path)!r} is not a readable contactlab checkpoint: {exc}") from None
    if meta.get("format") != "contactlab-checkpoint" or meta.get("version") != FORMAT_VERSION:
        raise InputError(f"{str(path)!r} is not a contactlab checkpoint of format version {FORMAT_VERSION}")
    materials = tuple(Material(**m) for m in meta["materials"])
    model_arrays = {k: np.array(data[f"model_{k}"]) for k in _MODEL_ARRAYS}
    model = Model(materials=materials, mesh_names=tuple(meta["mesh_names"]), **model_arrays)
    state = State(**{k: np.array(data[f"state_{k}"]) for k in _STATE_ARRAYS}, time=float(meta["time"]),
                  step=int(meta["step"]))
    contact_model = model_from_dict(meta["contact_model"])
    sim = Simulation.__new__(Simulation)
    sim._bond_log = BondLog({k[len("bonds_"):]: data[k] for k in data.files if k.startswith("bonds_")})
    table_data = {k: data[f"table_{k}"] for k in ("pair_i", "pair_j", "hist", "out", "status", "ref_pos", "wall_ref")}
    table_data.update(skin=meta["skin"], builds=meta["builds"])
    exclusions = Exclusions(len(materials), model.n_spheres + model.n_walls + model.n_triangles,
                            np.array(data["exclusions_material_active"]), np.array(data["exclusions_keys"]))
    sim._setup(model, state, contact_model, dt=meta["dt"], skin=meta["skin"], max_overlap=meta["max_overlap"],
               initial_overlap_tolerance=meta["initial_overlap_tolerance"],
               threads=threads if threads is not None else meta["threads"], check_initial=False,
               table_data=table_data, exclusions=exclusions, local_damping=meta["local_damping"],
               shape_contact=meta["shape_contact"])
    sim._owner[:, 8] = data["boundary_power"]
    sim._damping_force[...] = data["damping_force"]
    sim._mesh_build_pos[...] = data["mesh_build_pos"]
    sim._mesh_build_quat[...] = data["mesh_build_quat"]
    sim._time_base = float(meta["time_base"])
    sim._step_base = int(meta["step_base"])
    sim._initial_energy = float(meta["initial_energy"])
    sim._initial_terms = {k: float(v) for k, v in meta["initial_terms"].items()}
    return sim


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
        self.path = Path(path)
        self.keep = as_int("CheckpointReporter: keep", keep, low=1)
        self.written: list[Path] = []

    def report(self, sim) -> None:
        if sim.step == 0:
            return
        if self.keep == 1:
            target = self.path
        else:
            stem = self.path.name[:-4] if self.path.name.endswith(".npz") else self.path.name
            target = self.path.with_name(f"{stem}_{sim.step:010d}.npz")
        written = save_checkpoint(sim, target)
        if written not in self.written:
            self.written.append(written)
        while len(self.written) > self.keep:
            old = self.written.pop(0)
            if old.exists():
                old.unlink()
