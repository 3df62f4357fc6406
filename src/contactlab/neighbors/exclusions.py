"""Switched-off pairs: pairs of materials and pairs of bodies that never become contacts.

The spec's ``activeConnector`` as an engine feature: :meth:`contactlab.Simulation.set_active`
switches the contact model off (or on again) for every pair of two materials, or for two given
bodies (two spheres, or a sphere and a wall).  A switched-off pair is dropped from the candidate
list when the list is built, so it costs nothing per step and exerts nothing; it has no history
(switching it on again starts a fresh contact).
"""
from __future__ import annotations

import numpy as np

from .._jit import kernel

__all__ = ["Exclusions", "filter_pairs", "filter_same_clump"]


class Exclusions:
    """Which pairs are switched off.

    Attributes
    ----------
    material_active : (M, M) uint8, per pair of materials: 1 on, 0 off (symmetric)
    keys : (K,) int64, sorted: ``i * n_bodies + j`` of each switched-off body pair (``i < j``
        spheres, or ``j = N + w`` for wall ``w``), ``n_bodies = N + W``
    """

    def __init__(self, n_materials: int, n_bodies: int, material_active=None, keys=None):
        self.n_bodies = int(n_bodies)
        self.material_active = (np.ones((n_materials, n_materials), dtype=np.uint8) if material_active is None
                                else np.ascontiguousarray(material_active, dtype=np.uint8))
        self.keys = np.zeros(0, dtype=np.int64) if keys is None else np.unique(np.asarray(keys, dtype=np.int64))

    @property
    def any(self) -> bool:
        """Whether anything is switched off (no filtering otherwise)."""
        return bool(len(self.keys)) or not bool(self.material_active.all())

    def set_materials(self, a: int, b: int, active: bool) -> None:
        self.material_active[a, b] = self.material_active[b, a] = 1 if active else 0

    def set_bodies(self, i: int, j: int, active: bool) -> None:
        key = int(min(i, j)) * self.n_bodies + int(max(i, j))
        if active:
            self.keys = self.keys[self.keys != key]
        else:
            self.keys = np.union1d(self.keys, np.array([key], dtype=np.int64))

    def body_pair_active(self, i: int, j: int) -> bool:
        key = int(min(i, j)) * self.n_bodies + int(max(i, j))
        k = int(np.searchsorted(self.keys, key))
        return not (k < len(self.keys) and self.keys[k] == key)


@kernel
def filter_pairs(n_pairs, pair_i, pair_j, i_start, material, wall_material, material_active, keys, n_bodies):
    """Drop switched-off pairs from a sorted candidate list in place; returns the new count and
    rewrites the CSR ``i_start`` (the list stays sorted)."""
    n_s = material.shape[0]
    out = 0
    k = 0
    for i in range(n_s):
        begin = out
        end = i_start[i + 1]
        while k < end:
            j = pair_j[k]
            mj = material[j] if j < n_s else wall_material[j - n_s]
            keep = material_active[material[i], mj] != 0
            if keep and keys.shape[0] > 0:
                key = np.int64(i) * n_bodies + np.int64(j)
                q = np.searchsorted(keys, key)
                keep = not (q < keys.shape[0] and keys[q] == key)
            if keep:
                pair_i[out] = pair_i[k]
                pair_j[out] = j
                out += 1
            k += 1
        i_start[i] = begin
    i_start[n_s] = out
    return out


@kernel
def filter_same_clump(n_pairs, pair_i, pair_j, i_start, clump_of):
    """Drop the pairs of two members of one clump (``clump_of`` (N,): each body's clump, -1 for
    none) from a sorted candidate list in place; returns the new count and rewrites the CSR
    ``i_start`` (the list stays sorted)."""
    n_s = clump_of.shape[0]
    out = 0
    k = 0
    for i in range(n_s):
        begin = out
        end = i_start[i + 1]
        ci = clump_of[i]
        while k < end:
            j = pair_j[k]
            if ci < 0 or j >= n_s or clump_of[j] != ci:
                pair_i[out] = pair_i[k]
                pair_j[out] = j
                out += 1
            k += 1
        i_start[i] = begin
    i_start[n_s] = out
    return out
