"""Bonds as data: which pairs were bonded, when each broke and why.

A bonded contact model (:class:`~contactlab.models.Ice`, :class:`~contactlab.models.ParallelBond`)
keeps the state of each bond in the contact's history (``> 0`` intact, ``< 0`` broken, with the
reason as ``-code``); the engine keeps bonded pairs in the neighbour list at any distance and,
when the law breaks a bond, stops at the end of that step and logs the event here.  The log is
the record a user reads (:meth:`contactlab.Simulation.bonds`), exports
(:meth:`contactlab.Simulation.export_bonds`) and sees in ParaView; it is saved in checkpoints.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

from ._arguments import as_finite
from .errors import InputError
from .references import body_index

__all__ = ["BondLog", "bond_candidates", "REMOVED"]

#: the reason code of a bond closed because one of its spheres was removed (an outlet of a particle stream)
REMOVED = -1


class BondLog:
    """Every bond made in a run: pair ``(i, j)`` (``i < j``), when it was made and when and why it broke.

    Arrays (one row per bond, in the order the bonds were made): ``i``, ``j`` (sphere indices),
    ``senses`` (bit mask of the bonded senses: 1 normal, 2 shear, 4 twisting, 8 rolling),
    ``created`` (s), ``created_step``, ``broken`` (s, NaN while intact), ``broken_step`` (-1 while
    intact), ``reason`` (int code of the law, 0 while intact).
    """

    _FIELDS = (("i", np.int64), ("j", np.int64), ("senses", np.int64), ("created", float),
               ("created_step", np.int64), ("broken", float), ("broken_step", np.int64), ("reason", np.int64))

    def __init__(self, arrays: dict | None = None):
        self.data = {name: np.zeros(0, dtype=dt) for name, dt in self._FIELDS}
        if arrays:
            for name, dt in self._FIELDS:
                self.data[name] = np.asarray(arrays[name], dtype=dt).copy()

    def __len__(self) -> int:
        return len(self.data["i"])

    def intact_mask(self) -> np.ndarray:
        return self.data["broken_step"] < 0

    def made(self, i, j, time: float, step: int, senses: int = 15) -> None:
        """Add bonds ``(i[k], j[k])`` made at ``time`` in the ``senses`` (bit mask)."""
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        n = len(i)
        new = {"i": i, "j": j, "senses": np.full(n, int(senses)), "created": np.full(n, float(time)), "created_step": np.full(n, int(step)),
               "broken": np.full(n, np.nan), "broken_step": np.full(n, -1), "reason": np.zeros(n)}
        for name, dt in self._FIELDS:
            self.data[name] = np.concatenate([self.data[name], np.asarray(new[name], dtype=dt)])

    def broke(self, i, j, time: float, step: int, codes) -> None:
        """Mark the intact bonds of pairs ``(i[k], j[k])`` broken at ``time`` with reason ``codes[k]``."""
        d = self.data
        open_rows = np.flatnonzero(self.intact_mask())
        index = {(int(d["i"][r]), int(d["j"][r])): r for r in open_rows}
        for a, b, c in zip(np.asarray(i), np.asarray(j), np.asarray(codes)):
            r = index.get((int(a), int(b)))
            if r is not None:
                d["broken"][r] = float(time)
                d["broken_step"][r] = int(step)
                d["reason"][r] = int(c)

    def table(self, reasons: dict[int, str]) -> dict[str, np.ndarray]:
        """Copies of the arrays plus ``intact`` (bool), ``why`` (text of the reason, '' while intact)
        and ``bonded_in`` (the senses as letters of ``"ntwr"``)."""
        out = {name: v.copy() for name, v in self.data.items()}
        out["intact"] = self.intact_mask()
        out["bonded_in"] = np.array(["".join(c for b, c in zip((1, 2, 4, 8), "ntwr") if m & b)
                                     for m in self.data["senses"]], dtype=object)
        reasons = {REMOVED: "removed", **reasons}
        out["why"] = np.array([reasons.get(int(c), f"code {int(c)}") if c else "" for c in self.data["reason"]],
                              dtype=object)
        return out

    def write_csv(self, path, reasons: dict[int, str]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        t = self.table(reasons)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["i", "j", "bonded_in", "created_s", "created_step", "intact", "broken_s", "broken_step",
                        "reason"])
            for r in range(len(self)):
                w.writerow([int(t["i"][r]), int(t["j"][r]), t["bonded_in"][r], repr(float(t["created"][r])),
                            int(t["created_step"][r]),
                            int(t["intact"][r]), "" if t["intact"][r] else repr(float(t["broken"][r])),
                            int(t["broken_step"][r]), t["why"][r]])
        return path


def bond_candidates(positions, radius, fixed, spheres, max_gap):
    """Pairs ``(i, j)`` (``i < j``, from the index array ``spheres``, not both fixed) whose gap is at
    most ``max_gap`` (m, scalar or None: 1 % of the smaller radius); overlapping pairs included."""
    spheres = np.asarray(spheres, dtype=np.int64)
    if len(spheres) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos = positions[spheres]
    r = radius[spheres]
    reach = 2.0 * float(r.max()) + (float(max_gap) if max_gap is not None else 0.01 * float(r.max()))
    pairs = cKDTree(pos).query_pairs(reach, output_type="ndarray")
    if len(pairs) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = spheres[pairs[:, 0]], spheres[pairs[:, 1]]
    i, j = np.minimum(a, b), np.maximum(a, b)
    gap = np.linalg.norm(positions[j] - positions[i], axis=1) - radius[i] - radius[j]
    limit = np.full(len(i), float(max_gap)) if max_gap is not None else 0.01 * np.minimum(radius[i], radius[j])
    keep = (gap <= limit) & ~(fixed[i] & fixed[j])
    order = np.lexsort((j[keep], i[keep]))
    return i[keep][order], j[keep][order]


def bond_pairs(model, state, *, spheres=None, pairs=None, max_gap=None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)`` (``i < j``, int64 arrays) that :meth:`contactlab.Simulation.bond` is
    asked to bond: exactly ``pairs`` (a (K, 2) array of body indices; pairs of two fixed bodies
    skipped), or every pair among ``spheres`` (default all) whose gap is at most ``max_gap``
    (:func:`bond_candidates`)."""
    m, s = model, state
    if pairs is not None and (spheres is not None or max_gap is not None):
        raise InputError("give pairs=..., or spheres=... and/or max_gap=..., not both")
    if max_gap is not None:
        max_gap = as_finite("max_gap", max_gap)
        if max_gap < 0:
            raise InputError(f"max_gap must be >= 0 m, got {max_gap!r}")
    if pairs is not None:
        p = np.asarray(pairs)
        if p.ndim != 2 or p.shape[1] != 2 or (p.size and not np.issubdtype(p.dtype, np.integer)):
            raise InputError(f"pairs must be a (K, 2) array of sphere indices, got shape {p.shape}")
        for a, b in p:
            if body_index(model, a) == body_index(model, b):
                raise InputError(f"a sphere cannot be bonded to itself (pair ({a}, {b}))")
        i, j = np.minimum(p[:, 0], p[:, 1]).astype(np.int64), np.maximum(p[:, 0], p[:, 1]).astype(np.int64)
        keep = ~(m.fixed[i] & m.fixed[j])
        i, j = i[keep], j[keep]
    else:
        idx = np.arange(m.n_spheres) if spheres is None else np.unique(
            [body_index(model, k) for k in np.atleast_1d(spheres)])
        i, j = bond_candidates(s.positions, m.radius, m.fixed, idx, max_gap)
    if m.n_clumps:
        # two members of one clump are one rigid body: never a contact, never bonded
        same = (m.clump_of[i] >= 0) & (m.clump_of[i] == m.clump_of[j])
        if pairs is not None and same.any():
            k = int(np.flatnonzero(same)[0])
            raise InputError(f"bodies {int(i[k])} and {int(j[k])} are members of the same clump "
                             f"{int(m.clump_of[i[k]])}: they cannot be bonded")
        i, j = i[~same], j[~same]
    if s.cell is not None and pairs is None:
        raise InputError("sim.bond() finds candidate pairs without the periodic cell's images; in a periodic "
                         "scene give the pairs explicitly: sim.bond(pairs=...)")
    return i, j
