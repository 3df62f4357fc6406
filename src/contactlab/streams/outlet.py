"""Outlets: regions that remove the spheres whose centre enters them, with a record of what left.

An outlet (:meth:`contactlab.Simulation.add_outlet`) acts every ``every`` steps: every free
sphere (disk in 2-D) whose centre is inside its region at that step (``region(centre) <= 0``) is
removed.  Fixed bodies and non-spherical bodies are never removed.  Each removed sphere is
recorded (its id, the time and step, mass, radius and velocity), so the outlet's cumulative mass
over time is the discharge record of a silo (:meth:`Outlet.discharge_rate`).  A sphere in two
outlets due at the same step goes to the one added first.
"""
from __future__ import annotations

import numpy as np

from ..geometry.shapes import SPHERE
from ..packing.regions import as_region
from .base import Stream

__all__ = ["Outlet", "DEFAULT_EVERY"]

#: steps between two removals unless ``every`` is given
DEFAULT_EVERY = 100

_FIELDS = (("id", np.int64, ()), ("time", np.float64, ()), ("step", np.int64, ()), ("mass", np.float64, ()),
           ("radius", np.float64, ()), ("velocity", np.float64, (3,)))


class Outlet(Stream):
    """A particle stream's sink (made by :meth:`contactlab.Simulation.add_outlet`).

    Attributes
    ----------
    count : int, and mass : float, kg: spheres removed so far and their mass
    """

    kind = "outlet"

    def __init__(self, region, *, every, anchor_step: int):
        super().__init__(DEFAULT_EVERY if every is None else every, anchor_step)
        #: the region (a signed function of :mod:`contactlab.packing.regions`, negative inside)
        self.region = as_region(region)
        self._removed = {name: [] for name, _, _ in _FIELDS}

    def select(self, model, state) -> np.ndarray:
        """(N,) bool: the free spheres whose centre is inside the region now."""
        candidate = (~model.fixed) & (model.shape_kind == SPHERE)
        inside = np.zeros(model.n_bodies, dtype=bool)
        idx = np.flatnonzero(candidate)
        if len(idx):
            inside[idx] = np.asarray(self.region(state.positions[idx])) <= 0.0
        return inside

    def record(self, ids, time: float, step: int, mass, radius, velocity) -> None:
        """Book the spheres removed now (arrays of one row per sphere)."""
        k = len(ids)
        rows = {"id": ids, "time": np.full(k, time), "step": np.full(k, step), "mass": mass, "radius": radius,
                "velocity": velocity}
        for name, dtype, _ in _FIELDS:
            self._removed[name].append(np.asarray(rows[name], dtype=dtype))

    def removed(self) -> dict[str, np.ndarray]:
        """One row per removed sphere, in the order removed: ``id``, ``time`` (s), ``step``,
        ``mass`` (kg), ``radius`` (m), ``velocity`` ((K, 3) m/s, when it was removed)."""
        out = {}
        for name, dtype, shape in _FIELDS:
            parts = self._removed[name]
            out[name] = np.concatenate(parts) if parts else np.zeros((0,) + shape, dtype=dtype)
        return out

    @property
    def count(self) -> int:
        return int(sum(len(p) for p in self._removed["id"]))

    @property
    def mass(self) -> float:
        return float(sum(float(p.sum()) for p in self._removed["mass"]))

    def discharge_rate(self, t0: float, t1: float) -> float:
        """Mean mass flow (kg/s) through the outlet between the times ``t0`` and ``t1`` (s): the mass
        removed at ``t0 < t <= t1`` over ``t1 - t0``."""
        r = self.removed()
        sel = (r["time"] > t0) & (r["time"] <= t1)
        return float(r["mass"][sel].sum()) / (t1 - t0)

    # ------------------------------------------------------------------ checkpoints
    def dynamic(self) -> tuple[dict, dict]:
        scalars, arrays = super().dynamic()
        arrays = dict(arrays, **{f"removed_{k}": v for k, v in self.removed().items()})
        return scalars, arrays

    def restore(self, scalars: dict, arrays: dict) -> None:
        super().restore(scalars, arrays)
        self._removed = {name: [np.asarray(arrays[f"removed_{name}"], dtype=dtype).reshape((-1,) + shape)]
                         for name, dtype, shape in _FIELDS}

    def __repr__(self):
        return f"Outlet(every={self.every}, count={self.count}, mass={self.mass!r})"
