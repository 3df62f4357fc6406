"""The contact table: candidate pairs of the neighbour list, each with one row of per-contact data."""
from __future__ import annotations

import numpy as np

from ..neighbors.celllist import build_pairs, remap_rows, transpose_pairs
from .layout import N_OUT

__all__ = ["ContactTable"]


class ContactTable:
    """Pairs ``(pair_i[k], pair_j[k])`` for ``k < n_pairs``, sorted by ``(i, j)``, and their rows.

    Attributes (arrays are owned here; the first ``n_pairs`` entries are valid)
    ----------
    pair_i, pair_j : (capacity,) int32, per pair: first body (sphere), second body (sphere index,
        or ``N + w`` for wall ``w``)
    rows : (capacity, n_hist + N_OUT) float64, per pair: history then outputs (see ``layout``)
    i_start : (N+1,) int64, CSR of the pairs by first body
    j_start, j_pairs : CSR of the sphere-sphere pairs by second body
    ref_pos : (N, 3) float64, m: sphere positions at the last build
    wall_ref : (W, 3) float64, m: wall points at the last build
    skin : float, m
    builds : int, number of builds so far
    """

    def __init__(self, n_spheres: int, n_walls: int, n_hist: int, skin: float):
        self.n_spheres = n_spheres
        self.n_hist = n_hist
        self.n_cols = n_hist + N_OUT
        self.skin = float(skin)
        self.pair_i = np.empty(0, dtype=np.int32)
        self.pair_j = np.empty(0, dtype=np.int32)
        self.rows = np.zeros((0, self.n_cols))
        self.n_pairs = 0
        self.i_start = np.zeros(n_spheres + 1, dtype=np.int64)
        self.j_start = np.zeros(n_spheres + 1, dtype=np.int64)
        self.j_pairs = np.zeros(0, dtype=np.int64)
        self.ref_pos = np.zeros((n_spheres, 3))
        self.wall_ref = np.zeros((n_walls, 3))
        self.builds = 0
        self._spare_i = np.empty(0, dtype=np.int32)
        self._spare_j = np.empty(0, dtype=np.int32)
        self._spare_rows = np.zeros((0, self.n_cols))

    def rebuild(self, pos, radius, fixed, wall_point, wall_normal):
        """Build the list around the current positions and carry each pair's row over."""
        new_i, new_j, n_new, i_start = build_pairs(pos, radius, fixed, self.skin, wall_point, wall_normal,
                                                   self._spare_i, self._spare_j)
        rows = self._spare_rows
        if rows.shape[0] < new_i.shape[0]:
            rows = np.empty((new_i.shape[0], self.n_cols))
        remap_rows(n_new, new_i, new_j, self.i_start, self.pair_j, self.rows, rows)
        self._spare_i, self._spare_j, self._spare_rows = self.pair_i, self.pair_j, self.rows
        self.pair_i, self.pair_j, self.rows, self.n_pairs, self.i_start = new_i, new_j, rows, n_new, i_start
        self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, n_new, new_j)
        self.ref_pos[...] = pos
        self.wall_ref[...] = wall_point
        self.builds += 1

    def restore(self, pair_i, pair_j, rows, ref_pos, wall_ref, skin, builds):
        """Install a saved list (checkpoint restart)."""
        n = int(pair_i.shape[0])
        self.pair_i = np.ascontiguousarray(pair_i, dtype=np.int32)
        self.pair_j = np.ascontiguousarray(pair_j, dtype=np.int32)
        self.rows = np.ascontiguousarray(rows, dtype=np.float64).reshape(n, self.n_cols)
        self.n_pairs = n
        counts = np.bincount(self.pair_i, minlength=self.n_spheres) if n else np.zeros(self.n_spheres, dtype=np.int64)
        self.i_start = np.zeros(self.n_spheres + 1, dtype=np.int64)
        np.cumsum(counts, out=self.i_start[1:])
        self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, n, self.pair_j)
        self.ref_pos = np.array(ref_pos, dtype=np.float64)
        self.wall_ref = np.array(wall_ref, dtype=np.float64).reshape(-1, 3)
        self.skin = float(skin)
        self.builds = int(builds)

    def valid_rows(self) -> np.ndarray:
        return self.rows[: self.n_pairs]

    @property
    def nbytes(self) -> int:
        arrays = (self.pair_i, self.pair_j, self.rows, self.i_start, self.j_start, self.j_pairs, self.ref_pos,
                  self._spare_i, self._spare_j, self._spare_rows)
        return int(sum(a.nbytes for a in arrays))
