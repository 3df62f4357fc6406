"""The contact table: candidate pairs of the neighbour list, each with its history, outputs and status."""
from __future__ import annotations

import numpy as np

from .._jit import n_blocks
from ..neighbors.celllist import build_pairs, remap_pairs, transpose_pairs
from ..neighbors.exclusions import filter_pairs
from .layout import ACTIVE, INDEX, N_OUT

__all__ = ["ContactTable"]


class ContactTable:
    """Pairs ``(pair_i[k], pair_j[k])`` for ``k < n_pairs``, sorted by ``(i, j)``, and their data.

    Arrays are owned here; the first ``n_pairs`` entries are valid.

    Attributes
    ----------
    pair_i, pair_j : (capacity,) uint32, per pair: first body (sphere), second body (sphere index, or
        ``N + w`` for wall ``w``)
    hist : (capacity, max(H, 1)) float64, per pair: the law's history
    out : (capacity, N_OUT) float64, per pair: outputs of the last evaluation (see ``layout``)
    status : (capacity,) int8, per pair: ACTIVE, INACTIVE or CLEARED
    i_start : (N+1,) uint32, CSR of the pairs by first body
    j_start, j_pairs : CSR of the sphere-sphere pairs by second body
    ref_pos : (N, 3) float64, m: sphere positions at the last build
    wall_ref : (W, 3) float64, m: wall points at the last build
    skin : float, m
    builds : int, number of builds so far
    """

    def __init__(self, n_spheres: int, n_walls: int, n_hist: int, skin: float):
        self.n_spheres = n_spheres
        self.n_hist = n_hist
        self.hist_cols = max(n_hist, 1)
        self.skin = float(skin)
        self.n_pairs = 0
        self.pair_i, self.pair_j, self.hist, self.out, self.status = self._empty(0)
        self._spare = self._empty(0)
        self.i_start = np.zeros(n_spheres + 1, dtype=INDEX)
        self.j_start = np.zeros(n_spheres + 1, dtype=np.int64)
        self.j_pairs = np.zeros(0, dtype=INDEX)
        self.ref_pos = np.zeros((n_spheres, 3))
        self.wall_ref = np.zeros((n_walls, 3))
        self.builds = 0

    def _empty(self, capacity: int):
        return (np.empty(capacity, dtype=INDEX), np.empty(capacity, dtype=INDEX),
                np.zeros((capacity, self.hist_cols)), np.zeros((capacity, N_OUT)), np.zeros(capacity, dtype=np.int8))

    def rebuild(self, pos, radius, fixed, wall_point, wall_normal, exclusions=None, material=None,
                wall_material=None):
        """Build the list around the current positions and carry each pair's data over.

        ``exclusions`` (:class:`~contactlab.neighbors.exclusions.Exclusions`, with the per-sphere
        and per-wall ``material`` indices) drops switched-off pairs.
        """
        sp_i, sp_j, sp_hist, sp_out, sp_status = self._spare
        new_i, new_j, n_new, i_start = build_pairs(pos, radius, fixed, self.skin, wall_point, wall_normal, sp_i, sp_j)
        if exclusions is not None and exclusions.any:
            n_new = filter_pairs(n_new, new_i, new_j, i_start, material, wall_material, exclusions.material_active,
                                 exclusions.keys, exclusions.n_bodies)
        if sp_hist.shape[0] < new_i.shape[0]:
            _, _, sp_hist, sp_out, sp_status = self._empty(new_i.shape[0])
        remap_pairs(n_new, new_i, new_j, self.i_start, self.pair_j, self.hist, sp_hist, self.out, sp_out,
                    self.status, sp_status, n_blocks())
        self._spare = (self.pair_i, self.pair_j, self.hist, self.out, self.status)
        self.pair_i, self.pair_j, self.hist, self.out, self.status = new_i, new_j, sp_hist, sp_out, sp_status
        self.n_pairs, self.i_start = n_new, i_start
        self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, n_new, new_j)
        self.ref_pos[...] = pos
        self.wall_ref[...] = wall_point
        self.builds += 1

    def restore(self, pair_i, pair_j, hist, out, status, ref_pos, wall_ref, skin, builds):
        """Install a saved list (checkpoint restart)."""
        n = int(pair_i.shape[0])
        self.pair_i = np.ascontiguousarray(pair_i, dtype=INDEX)
        self.pair_j = np.ascontiguousarray(pair_j, dtype=INDEX)
        self.hist = np.ascontiguousarray(hist, dtype=np.float64).reshape(n, self.hist_cols)
        self.out = np.ascontiguousarray(out, dtype=np.float64).reshape(n, N_OUT)
        self.status = np.ascontiguousarray(status, dtype=np.int8)
        self.n_pairs = n
        counts = np.bincount(self.pair_i, minlength=self.n_spheres) if n else np.zeros(self.n_spheres, dtype=np.int64)
        self.i_start = np.zeros(self.n_spheres + 1, dtype=INDEX)
        self.i_start[1:] = np.cumsum(counts)
        self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, n, self.pair_j)
        self.ref_pos = np.array(ref_pos, dtype=np.float64)
        self.wall_ref = np.array(wall_ref, dtype=np.float64).reshape(-1, 3)
        self.skin = float(skin)
        self.builds = int(builds)

    def active(self) -> np.ndarray:
        """Indices of the active contacts."""
        return np.flatnonzero(self.status[: self.n_pairs] == ACTIVE)

    def saved(self) -> dict:
        """The arrays a checkpoint needs (valid part only)."""
        n = self.n_pairs
        return dict(pair_i=self.pair_i[:n], pair_j=self.pair_j[:n], hist=self.hist[:n], out=self.out[:n],
                    status=self.status[:n], ref_pos=self.ref_pos, wall_ref=self.wall_ref)

    @property
    def nbytes(self) -> int:
        arrays = (self.pair_i, self.pair_j, self.hist, self.out, self.status, self.i_start, self.j_start,
                  self.j_pairs, self.ref_pos) + tuple(self._spare)
        return int(sum(a.nbytes for a in arrays))
