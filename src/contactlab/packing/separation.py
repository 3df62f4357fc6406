"""Pushing overlapping spheres apart: the sphere-sphere sweep of the static relaxation.

:func:`~contactlab.packing.levelset.relax_into` alternates a level-set move of every sphere
(:mod:`contactlab.packing.levelset`) with this sweep: overlapping pairs are pushed apart along
the line of centres by half the overlap each (the displacements of a sphere from all its pairs
are summed); a pair with coinciding centres gets a random line.  :class:`PairList` finds the
overlapping pairs with a Verlet list over candidate pairs from :class:`scipy.spatial.cKDTree`,
and the compiled :func:`_pair_sweep` adds up the pushes over the candidates.

Internal to :mod:`contactlab.packing` (not re-exported by it).
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .._jit import kernel

__all__ = ["PairList", "random_units"]


def random_units(rng: np.random.Generator, k: int) -> np.ndarray:
    """(k, 3) random unit vectors, uniform on the sphere (also the level-set move's direction where
    the gradient vanishes)."""
    v = rng.normal(size=(k, 3))
    norm = np.linalg.norm(v, axis=1)
    v[norm == 0.0] = (1.0, 0.0, 0.0)
    norm[norm == 0.0] = 1.0
    return v / norm[:, None]


@kernel
def _pair_sweep(x, r, cand_i, cand_j, dx, coincident):  # pragma: no cover - compiled
    """Over the candidate pairs (P,): add to ``dx`` (N, 3) the half-overlap pushes of every
    overlapping pair and return (largest overlap / smaller radius, number of overlapping pairs,
    number of coincident pairs); the candidate indices of coincident pairs (centres closer than
    1e-12 of the radius sum, no line of centres) go to ``coincident`` and get no push here."""
    worst = 0.0
    hits = 0
    n_coincident = 0
    for k in range(cand_i.shape[0]):
        i = cand_i[k]
        j = cand_j[k]
        d0 = x[j, 0] - x[i, 0]
        d1 = x[j, 1] - x[i, 1]
        d2 = x[j, 2] - x[i, 2]
        dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        overlap = r[i] + r[j] - dist
        if overlap <= 0.0:
            continue
        hits += 1
        ratio = overlap / min(r[i], r[j])
        if ratio > worst:
            worst = ratio
        if dist <= 1e-12 * (r[i] + r[j]):
            coincident[n_coincident] = k
            n_coincident += 1
            continue
        s = 0.5 * overlap / dist
        dx[j, 0] += s * d0
        dx[j, 1] += s * d1
        dx[j, 2] += s * d2
        dx[i, 0] -= s * d0
        dx[i, 1] -= s * d1
        dx[i, 2] -= s * d2
    return worst, hits, n_coincident


class PairList:
    """Sphere-sphere overlaps with a Verlet list: candidate pairs closer than ``2 r_max + skin``
    come from a :class:`scipy.spatial.cKDTree` and are reused until some sphere has moved by more
    than ``skin / 2`` since (no pair can then have come into contact unseen)."""

    def __init__(self, r: np.ndarray, skin_fraction: float = 0.5):
        self.r = r
        self.skin = skin_fraction * float(r.max())
        self.reach = 2.0 * float(r.max()) + self.skin
        self.anchor = None
        self.i = self.j = np.zeros(0, dtype=np.int64)
        self.builds = 0

    def sweep(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float, int]:
        """At ``x`` (N, 3) m: the displacements (N, 3) m pushing every overlapping pair apart by
        half its overlap each, the largest overlap / smaller radius, the number of overlapping pairs."""
        dx = np.zeros_like(x)
        if x.shape[0] < 2:
            return dx, 0.0, 0
        if self.anchor is None or _max_norm(x - self.anchor) > 0.5 * self.skin:
            pairs = cKDTree(x).query_pairs(self.reach, output_type="ndarray")
            self.i = np.ascontiguousarray(pairs[:, 0], dtype=np.int64)
            self.j = np.ascontiguousarray(pairs[:, 1], dtype=np.int64)
            self.anchor = x.copy()
            self.builds += 1
        coincident = np.empty(len(self.i), dtype=np.int64)
        worst, hits, n_coincident = _pair_sweep(x, self.r, self.i, self.j, dx, coincident)
        if n_coincident:                           # no line of centres: a random one
            k = coincident[:n_coincident]
            i, j = self.i[k], self.j[k]
            push = 0.5 * (self.r[i] + self.r[j])[:, None] * random_units(rng, n_coincident)
            for axis in range(3):                  # a loop over the 3 axes, not over spheres
                dx[:, axis] += (np.bincount(j, push[:, axis], minlength=x.shape[0])
                                - np.bincount(i, push[:, axis], minlength=x.shape[0]))
        return dx, float(worst), int(hits)


def _max_norm(v: np.ndarray) -> float:
    """Largest row length of ``v`` (N, 3)."""
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
