"""The engine's step linearised about a packing, assembled as matrices (NumPy, for the tests).

Independent of :mod:`contactlab.engine.stability_bound`: the stiffness and damping matrices ``K``
and ``C`` (6 unknowns per free sphere: translation, rotation) are assembled from every active
contact of ``sim.contacts()`` and the law's springs and dashpots per sense
(``contact_model.contact_springs``, one contact at a time), with the branch vectors of the
spheres.  A step of velocity Verlet whose dashpots see the velocity predicted with the mean of the
last two accelerations (or, ``factor=4``, the last one alone) is stable while
``dt^2 lambda_max(M^-1 (K + factor C / dt)) <= 4``; :func:`critical_step` finds the largest such
``dt`` from the eigenvalues (bisection).
"""
from __future__ import annotations

import math

import numpy as np

from contactlab.laws.base import PairCase
from contactlab.stability import springs_of


def _tangents(n):
    t1 = np.cross(n, [1.0, 0.0, 0.0])
    if np.linalg.norm(t1) < 0.5:
        t1 = np.cross(n, [0.0, 1.0, 0.0])
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def matrices(sim):
    """``(K, C, mass)``: (6F, 6F) stiffness and damping matrices and the (6F,) masses and moments
    of inertia of the F free spheres of ``sim`` (spheres and plane walls only)."""
    m = sim.model
    c = sim.contacts()
    n_b = m.n_bodies
    size = 6 * n_b
    K = np.zeros((size, size))
    C = np.zeros((size, size))
    mats = m.materials
    for k in range(len(c["i"])):
        i, j, w = int(c["i"][k]), int(c["j"][k]), int(c["wall"][k])
        n = np.asarray(c["normal"][k], dtype=float)
        d = float(c["overlap"][k])
        ri = float(m.radius[i])
        if j >= 0:
            rj = float(m.radius[j])
            case = PairCase(mats[m.material[i]], mats[m.material[j]], ri, rj, float(m.mass[i]), float(m.mass[j]),
                            float(m.inertia[i]), float(m.inertia[j]), d)
        else:
            rj = 0.0
            case = PairCase(mats[m.material[i]], mats[m.wall_material[w]], ri, math.inf, float(m.mass[i]), math.inf,
                            float(m.inertia[i]), math.inf, d)
        s = springs_of(sim.contact_model, case)
        bi = (ri - 0.5 * d) * n
        bj = -(rj - 0.5 * d) * n if j >= 0 else None
        rows = []
        for e, k_s, c_s in ((n, s.normal, s.normal_damping), *((t, s.tangential, s.tangential_damping)
                                                               for t in _tangents(n))):
            B = np.zeros(size)
            B[6 * i: 6 * i + 3] = -e
            B[6 * i + 3: 6 * i + 6] = -np.cross(bi, e)
            if j >= 0:
                B[6 * j: 6 * j + 3] = e
                B[6 * j + 3: 6 * j + 6] = np.cross(bj, e)
            rows.append((float(k_s), float(c_s), B))
        for e, k_s, c_s in ((n, s.twisting, s.twisting_damping), *((t, s.rolling, s.rolling_damping)
                                                                   for t in _tangents(n))):
            B = np.zeros(size)
            B[6 * i + 3: 6 * i + 6] = -e
            if j >= 0:
                B[6 * j + 3: 6 * j + 6] = e
            rows.append((float(k_s), float(c_s), B))
        for k_s, c_s, B in rows:
            K += k_s * np.outer(B, B)
            C += c_s * np.outer(B, B)
    mass = np.repeat(np.stack([m.mass, m.inertia], axis=1), 3, axis=1).reshape(-1)
    keep = np.repeat(~m.fixed, 6)
    return K[np.ix_(keep, keep)], C[np.ix_(keep, keep)], mass[keep]


def critical_step(K, C, mass, factor: float = 2.0, hi: float = 1.0) -> float:
    """The largest ``dt`` (s) with ``dt^2 lambda_max(M^-1 (K + factor C / dt)) <= 4``."""
    s = 1.0 / np.sqrt(mass)
    Ks, Cs = s[:, None] * K * s[None, :], s[:, None] * C * s[None, :]
    lo = 0.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if mid * mid * np.linalg.eigvalsh(Ks + factor * Cs / mid)[-1] <= 4.0:
            lo = mid
        else:
            hi = mid
    return lo
