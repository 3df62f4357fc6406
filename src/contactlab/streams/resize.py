"""A run's bodies changed between two steps: spheres removed and spheres appended.

:func:`resized` makes the frozen model, the state, the saved contact table and the switched-off
pairs of the same run with the bodies ``keep`` (a mask over the current ones) followed by the new
spheres; the simulation then continues with a new stepper over them (the list is rebuilt and the
forces evaluated, :meth:`contactlab.Simulation._swap_bodies`).

Conventions (what every array of the engine looks like afterwards):

* **Order.**  Surviving bodies keep their relative order and come first, the new spheres follow
  in the order given.  Body ids (``State.ids``) grow with insertion, so the per-body arrays stay
  sorted by id.  Walls and mesh triangles, which follow the bodies in the pair index space
  (``N + w``, ``N + W + t``), shift with ``N``.
* **Contacts.**  A pair of two survivors keeps its row of the contact table (history, outputs,
  status) under its new indices; the index map is increasing, so the table stays sorted by
  ``(i, j)``.  A pair with a removed body is dropped with it.
* **Switched-off pairs** (:class:`~contactlab.neighbors.exclusions.Exclusions`) are renumbered the
  same way; those of removed bodies are dropped.  Bonds of removed bodies are closed in the bond
  log (reason :data:`contactlab.bonds.REMOVED`) and the log's indices follow the survivors
  (``-1`` for a removed body).
* **Shape parameters.**  A sphere's entry in ``shape_data`` (its radius) is dropped with it, a new
  sphere's appended at the end; ``shape_ref`` and the triangles' ``tri_ref`` are remapped.  Only
  spheres are removed (the outlets skip other shapes).

Every field of :class:`~contactlab.frozen_model.Model` and :class:`~contactlab.state.State` is
listed below as per body or not; ``tests/test_streams.py`` checks that the lists cover the
dataclasses, so a new per-body field added elsewhere must be classified here before streams can
carry it.  Every entry of the saved contact table is taken as per pair (its rows follow the pairs)
except those of :data:`TABLE_NOT_PER_PAIR`; one that is neither stops the exchange with a message.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..bonds import REMOVED, BondLog
from ..engine.layout import INDEX
from ..frozen_model import Model
from ..geometry.shapes import SPHERE
from ..neighbors.exclusions import Exclusions
from ..scene.plane import round_mass_inertia
from ..state import State

__all__ = ["NewSpheres", "resized", "resized_table", "resized_exclusions", "resized_bond_log", "TABLE_NOT_PER_PAIR",
           "MODEL_PER_BODY", "MODEL_OTHER", "STATE_PER_BODY", "STATE_OTHER"]

#: Model fields with one row per body (remapped; ``inv_principal_inertia`` is derived from them)
MODEL_PER_BODY = ("radius", "mass", "inv_mass", "inertia", "inv_inertia", "material", "fixed", "shape_kind",
                  "shape_ref", "principal_inertia", "contact_radius", "inv_principal_inertia", "clump_of")
#: Model fields that are not per body (kept; ``shape_data``, ``tri_ref`` and ``materials`` are rewritten)
MODEL_OTHER = ("wall_normal", "wall_material", "materials", "gravity", "shape_data", "mesh_material", "mesh_names",
               "mesh_first", "tri_mesh", "tri_ref", "mesh_local", "mesh_size", "dimension", "thickness", "wall_kind",
               "wall_shape", "clump_first", "clump_members", "clump_offsets", "clump_mass", "clump_inertia")
#: State fields with one row per body
STATE_PER_BODY = ("positions", "velocities", "angular_velocities", "orientations", "forces", "torques", "dissipated",
                  "boundary_work", "dissipation_terms", "damping_work", "boundary_power", "damping_force", "ids",
                  "images", "previous_loads")
#: State fields that are not per body (kept; ``shape_data`` is remapped like the model's)
STATE_OTHER = ("wall_points", "wall_velocities", "time", "step", "mesh_positions", "mesh_orientations",
               "mesh_velocities", "mesh_angular_velocities", "shape_data", "time_base", "step_base", "initial_energy",
               "servo_index", "servo_param", "next_id", "cell", "clump_positions", "clump_velocities",
               "clump_angular_velocities", "clump_orientations", "clump_forces", "clump_torques",
               "clump_previous_loads")


#: entries of a saved contact table that are not per pair (``ref_pos`` is per body: remapped; the rest kept)
TABLE_NOT_PER_PAIR = ("ref_pos", "wall_ref", "mesh_ref_pos", "mesh_ref_quat", "skin", "builds")


@dataclass
class NewSpheres:
    """Spheres (disks in a 2-D scene) to append: ``positions`` (K, 3) m, ``radii`` (K,) m,
    ``material`` (K,) int (index into the new model's materials), ``velocities`` and
    ``angular_velocities`` (K, 3) m/s and rad/s."""

    positions: np.ndarray
    radii: np.ndarray
    material: np.ndarray
    velocities: np.ndarray
    angular_velocities: np.ndarray

    @classmethod
    def none(cls) -> "NewSpheres":
        return cls(np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3)))

    def __len__(self) -> int:
        return int(self.radii.shape[0])

    def concatenate(self, other: "NewSpheres") -> "NewSpheres":
        return NewSpheres(*(np.concatenate([getattr(self, f.name), getattr(other, f.name)])
                            for f in dataclasses.fields(self)))


def sphere_mass_inertia(materials, material: np.ndarray, radii: np.ndarray, dimension: int,
                        thickness: float) -> tuple[np.ndarray, np.ndarray]:
    """Mass (K,) kg and moment of inertia (K,) kg m^2 of new spheres (disks in 2-D) of the given
    materials, as :meth:`contactlab.Scene.finalize` makes them (:func:`round_mass_inertia`)."""
    rho = np.array([materials[int(k)].density for k in material], dtype=np.float64).reshape(-1)
    return round_mass_inertia(rho, radii, dimension, thickness)


def index_map(model: Model, keep: np.ndarray, n_new: int) -> np.ndarray:
    """(N + W + T,) int64: the new index of every body, wall and mesh triangle of the pair index
    space (-1 for a removed body)."""
    n = model.n_bodies
    n_keep = int(keep.sum())
    out = np.full(n + model.n_walls + model.n_triangles, -1, dtype=np.int64)
    out[:n][keep] = np.arange(n_keep)
    out[n:] = np.arange(model.n_walls + model.n_triangles) + n_keep + n_new
    return out


def _shape_data_map(model: Model, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which entries of ``shape_data`` stay (mask) and their new offsets (removed spheres' radii go)."""
    stays = np.ones(model.shape_data.shape[0], dtype=bool)
    gone = ~keep
    stays[model.shape_ref[gone]] = False
    return stays, np.cumsum(stays) - 1


def resized(model: Model, state: State, keep: np.ndarray, new: NewSpheres, materials=None) -> tuple[Model, State]:
    """The model and state with the bodies ``keep`` ((N,) bool) followed by ``new``.

    ``materials``: the new model's materials (the old ones followed by any the new spheres bring;
    default the model's).  Removed bodies must be spheres.
    """
    keep = np.asarray(keep, dtype=bool)
    if (model.shape_kind[~keep] != SPHERE).any():
        raise ValueError("only spheres are removed by streams")
    materials = tuple(model.materials if materials is None else materials)
    k = len(new)
    mass, inertia = sphere_mass_inertia(materials, new.material, new.radii, model.dimension, model.thickness)
    stays, offset = _shape_data_map(model, keep)
    n_data = int(stays.sum())
    new_refs = n_data + np.arange(k, dtype=np.int64)
    fresh = dict(radius=new.radii, mass=mass, inv_mass=1.0 / mass if k else mass, inertia=inertia,
                 inv_inertia=1.0 / inertia if k else inertia, material=new.material.astype(np.uint16),
                 fixed=np.zeros(k, dtype=bool), shape_kind=np.full(k, SPHERE, dtype=np.uint8), shape_ref=new_refs,
                 principal_inertia=np.repeat(inertia[:, None], 3, axis=1), contact_radius=new.radii,
                 clump_of=np.full(k, -1, dtype=np.int64))
    changes = {}
    for name in MODEL_PER_BODY:
        if name == "inv_principal_inertia":
            continue
        old = getattr(model, name)
        if old is None:
            continue
        kept = offset[old[keep]] if name == "shape_ref" else old[keep]
        changes[name] = np.ascontiguousarray(np.concatenate([kept, fresh[name].astype(old.dtype)]))
    changes["shape_data"] = np.concatenate([model.shape_data[stays], new.radii]).astype(np.float64)
    changes["tri_ref"] = offset[model.tri_ref].astype(np.int64)
    changes["materials"] = materials
    new_model = dataclasses.replace(model, **changes)

    ids = state.ids if state.ids is not None else np.arange(model.n_bodies, dtype=np.int64)
    next_id = max(int(state.next_id), int(ids.max(initial=-1)) + 1)
    quat = np.zeros((k, 4))
    quat[:, 0] = 1.0
    # a new sphere touches nothing: its force is its weight until the next evaluation
    given = dict(positions=new.positions, velocities=new.velocities, angular_velocities=new.angular_velocities,
                 orientations=quat, ids=next_id + np.arange(k, dtype=np.int64), forces=mass[:, None] * model.gravity)
    out = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    out["ids"] = ids
    for name in STATE_PER_BODY:
        old = out[name]
        if old is None:
            continue
        add = given.get(name)
        if add is None:
            add = np.zeros((k,) + old.shape[1:], dtype=old.dtype)
        out[name] = np.ascontiguousarray(np.concatenate([old[keep], np.asarray(add, dtype=old.dtype)]))
    if state.shape_data is not None:
        out["shape_data"] = np.concatenate([state.shape_data[stays], new.radii]).astype(np.float64)
    out["next_id"] = next_id + k
    return new_model, State(**out)


def resized_table(saved: dict, imap: np.ndarray, keep: np.ndarray, new_positions: np.ndarray) -> dict:
    """A saved contact table (:meth:`~contactlab.engine.contact_table.ContactTable.saved` with
    ``skin`` and ``builds``) renumbered by ``imap`` (:func:`index_map`); pairs of removed bodies
    are dropped, the new bodies' build reference is their position."""
    pi = imap[saved["pair_i"].astype(np.int64)]
    pj = imap[saved["pair_j"].astype(np.int64)]
    ok = (pi >= 0) & (pj >= 0)
    out = dict(saved)
    for name, value in saved.items():    # every other entry is per pair (columns added later included)
        if name in TABLE_NOT_PER_PAIR:
            continue
        if np.ndim(value) == 0 or np.shape(value)[0] != ok.shape[0]:
            raise ValueError(f"the saved contact table's {name!r} is not per pair: list it in TABLE_NOT_PER_PAIR "
                             f"(contactlab.streams.resize) and say how an exchange changes it")
        out[name] = np.ascontiguousarray(np.asarray(value)[ok])
    out["pair_i"] = pi[ok].astype(INDEX)
    out["pair_j"] = pj[ok].astype(INDEX)
    out["ref_pos"] = np.concatenate([np.asarray(saved["ref_pos"])[keep], new_positions])
    return out


def resized_exclusions(ex: Exclusions, imap: np.ndarray, n_materials: int, n_index: int) -> Exclusions:
    """The switched-off pairs renumbered by ``imap``; ``n_materials`` may have grown (new
    materials are on with every other); ``n_index`` is the new ``N + W + T``."""
    active = np.ones((n_materials, n_materials), dtype=np.uint8)
    m = ex.material_active.shape[0]
    active[:m, :m] = ex.material_active
    i, j = np.divmod(ex.keys, ex.n_bodies)
    ni, nj = imap[i], imap[j]
    ok = (ni >= 0) & (nj >= 0)
    return Exclusions(n_materials, n_index, active, ni[ok] * n_index + nj[ok])


def resized_bond_log(log: BondLog, imap: np.ndarray, time: float, step: int) -> BondLog:
    """The bond log with its indices renumbered (-1 for a removed body) and the intact bonds of
    removed bodies closed at ``time`` with reason :data:`~contactlab.bonds.REMOVED`."""
    if len(log) == 0:
        return log
    d = {k: v.copy() for k, v in log.data.items()}
    ni = np.where(d["i"] >= 0, imap[np.maximum(d["i"], 0)], -1)
    nj = np.where(d["j"] >= 0, imap[np.maximum(d["j"], 0)], -1)
    closing = log.intact_mask() & ((ni < 0) | (nj < 0))
    d["broken"][closing] = float(time)
    d["broken_step"][closing] = int(step)
    d["reason"][closing] = REMOVED
    d["i"], d["j"] = ni, nj
    return BondLog(d)
