"""The stable time step of a packing: a bound over every body's contacts together.

Linearised about the present state, a step of the engine is a linear map of the bodies'
translations and rotations (6 per body).  The contacts' springs give a stiffness matrix ``K`` and
their dashpots a damping matrix ``C`` (both symmetric, positive semi-definite), ``M`` holds the
masses and moments of inertia.  The engine's step goes unstable first through a period-2 motion
(``x_n ~ (-1)^n``), which its velocity predictor sees at the speed ``2 x / dt``: there a dashpot
acts like a spring ``2 c / dt``, and the step is stable while

    dt^2 lambda_max(M^-1 (K + 2 C / dt)) <= 4.

(The predictor ``v(n+1/2) + dt/2 a(n)`` used before saw ``4 x / dt``; see
:mod:`contactlab.engine.integrate`.)  This is exact for the linearised step; for one contact it is
the damped oscillator's ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` that a single-contact limit takes.
A body with several contacts has stiffer coupled modes than any of its contacts alone: three
frictional contacts on a sphere's rotation add their tangential dashpots on a moment of inertia of
``0.4 m r^2``.

An upper bound of ``lambda_max`` that needs no matrix: group each body's unknowns into its
translation ``T`` and its rotation ``R``; the mass-scaled matrix has 3x3 blocks, and the matrix
``N`` of their norms (diagonal blocks: their largest eigenvalue) has a spectral radius at least
``lambda_max`` (block Gershgorin: a body's eigen-block cannot exceed its own block plus what its
neighbours push on it).  By the Collatz-Wielandt formula ``rho(N) <= max_g (N y)_g / y_g`` for any
positive ``y``; ``y = 1`` is Gershgorin's circle, and a few power iterations ``y <- N y`` tighten
the bound towards ``rho(N)`` while it stays an upper bound.  Per contact of spring (or dashpot)
coefficients ``a_n, a_t, a_r, a_w`` (normal, tangential, rolling, twisting), normal ``n`` and
branch vectors ``b_i``, ``b_j`` (centre to contact point):

* own blocks of body ``i``: ``T-T`` at most ``sum max(a_n, a_t)``; ``R-R`` at most
  ``sum a_t |b|^2 + a_n |b x n|^2 + max(a_r, a_w)``; ``T-R`` at most
  ``|sum a_t b| + sum |a_n - a_t| |b x n|`` (for spheres ``b x n = 0``: the vector sum, which
  cancels between contacts on opposite sides);
* between ``i`` and ``j``: ``T-T`` ``max(a_n, a_t)``, ``T_i-R_j`` ``a_n |b_j x n| + a_t |b_j|``,
  ``R_i-T_j`` ``a_n |b_i x n| + a_t |b_i|``, ``R-R`` ``a_n |b_i x n||b_j x n| + a_t |b_i||b_j| +
  max(a_r, a_w)``;

each divided by the square roots of the two groups' masses (``m`` for ``T``, ``I`` for ``R``).  A
wall, a mesh or a fixed body is infinitely heavy: its contacts add to the body's own blocks only.
The bound runs on the springs (``lambda_K``) and on the dashpots (``lambda_C``) together, in the
same passes, and ``lambda_max <= lambda_K + 2 lambda_C / dt`` gives the step in closed form,
``dt = (sqrt(lambda_C^2 + 4 lambda_K) - lambda_C) / lambda_K``.  Measured against the exact
critical step of the linearised step (its eigenvalues, ``tests/test_energy_creation.py``) the
bound with three iterations is 0.58-0.66 of it in simple-cubic lattices and a triaxial sample;
plain Gershgorin 0.45-0.5.

The first pass (:func:`contact_weights`) turns each contact into its eight off-diagonal weights
(four for the springs, four for the dashpots) and adds its share of the bodies' own blocks; the
power iterations (:func:`weights_pass`, :func:`finish_pass`) only read the weights.  The per-body
arrays are float32 (a few tens of bytes a body: the bound of a million spheres holds little memory
beside the run; the rounding, ~1e-7 relative, is far inside the margin ``dt=None`` keeps).
"""
from __future__ import annotations

import math

import numpy as np

from contactlab._jit import jit, kernel

__all__ = ["contact_weights", "weights_pass", "finish_pass", "collatz_bound", "CHUNK", "ITERATIONS", "step_from_rates",
           "N_WEIGHTS", "N_OWN"]

#: contacts per chunk of a pass
CHUNK = 65536
#: power iterations of the Collatz-Wielandt bound after the Gershgorin pass
ITERATIONS = 3
#: off-diagonal weights per contact: T-T, T_i-R_j, R_i-T_j, R-R of the springs, then of the dashpots
N_WEIGHTS = 8
#: own-block sums per body (see :func:`contact_weights`), springs then dashpots
N_OWN = 12


@jit
def _add_own(own, p, o, a_n, a_t, a_max, a_rot, lever, cross, b0, b1, b2):
    """One contact's share of body ``p``'s own blocks, columns ``o .. o+5`` of ``own``: lever
    ``|b|``, ``cross = |b x n|``, ``b`` the branch vector."""
    own[p, o] += a_max
    own[p, o + 1] += a_t * lever * lever + a_n * cross * cross + a_rot
    own[p, o + 2] += a_t * b0
    own[p, o + 3] += a_t * b1
    own[p, o + 4] += a_t * b2
    own[p, o + 5] += abs(a_n - a_t) * cross


@kernel
def contact_weights(first, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own, weights):
    """A chunk of contacts: each contact's off-diagonal weights into ``weights`` (K, 8) and, when
    ``first`` (the first pass), its share of both bodies' own blocks into ``own`` (N, 12).

    ``i``, ``j`` (K,) int64: the bodies (``j = -1``: a wall, a mesh or a fixed body);
    ``normal`` (K, 3) unit, from ``i`` to ``j``; ``lever_i``, ``lever_j`` (K, 3) m: the branch
    vectors from each centre to the contact point; ``coef`` (K, 8): the springs ``k_n, k_t, k_r,
    k_w`` (N/m, N/m, N m/rad, N m/rad) then the dashpots (N s/m, ..., N m s/rad);
    ``inv_mass``, ``inv_inertia`` (N,).  ``own`` per body and per part (springs: columns 0-5,
    dashpots: 6-11): ``sum max(a_n, a_t)``, ``sum a_t |b|^2 + a_n |b x n|^2 + max(a_r, a_w)``,
    ``sum a_t b`` (3), ``sum |a_n - a_t| |b x n|``."""
    for k in range(i.shape[0]):
        nx, ny, nz = normal[k, 0], normal[k, 1], normal[k, 2]
        bi0, bi1, bi2 = lever_i[k, 0], lever_i[k, 1], lever_i[k, 2]
        bj0, bj1, bj2 = lever_j[k, 0], lever_j[k, 1], lever_j[k, 2]
        li = math.sqrt(bi0 * bi0 + bi1 * bi1 + bi2 * bi2)
        lj = math.sqrt(bj0 * bj0 + bj1 * bj1 + bj2 * bj2)
        ci = math.sqrt((bi1 * nz - bi2 * ny) ** 2 + (bi2 * nx - bi0 * nz) ** 2 + (bi0 * ny - bi1 * nx) ** 2)
        cj = math.sqrt((bj1 * nz - bj2 * ny) ** 2 + (bj2 * nx - bj0 * nz) ** 2 + (bj0 * ny - bj1 * nx) ** 2)
        p = i[k]
        q = j[k]
        for part in range(2):
            c0 = 4 * part
            a_n, a_t, a_r, a_w = coef[k, c0], coef[k, c0 + 1], coef[k, c0 + 2], coef[k, c0 + 3]
            a_max = max(a_n, a_t)
            a_rot = max(a_r, a_w)
            if first:
                _add_own(own, p, 6 * part, a_n, a_t, a_max, a_rot, li, ci, bi0, bi1, bi2)
            if q >= 0:
                if first:
                    _add_own(own, q, 6 * part, a_n, a_t, a_max, a_rot, lj, cj, bj0, bj1, bj2)
                sm_p, sm_q = math.sqrt(inv_mass[p]), math.sqrt(inv_mass[q])
                si_p, si_q = math.sqrt(inv_inertia[p]), math.sqrt(inv_inertia[q])
                weights[k, c0] = a_max * sm_p * sm_q
                weights[k, c0 + 1] = (a_n * cj + a_t * lj) * sm_p * si_q    # T_p - R_q
                weights[k, c0 + 2] = (a_n * ci + a_t * li) * si_p * sm_q    # R_p - T_q
                weights[k, c0 + 3] = (a_n * ci * cj + a_t * li * lj + a_rot) * si_p * si_q
            else:
                for c in range(4):
                    weights[k, c0 + c] = 0.0


@kernel
def weights_pass(i, j, weights, y, z):
    """``z += O y`` over a chunk of contacts, for the springs (columns 0-1 of ``y`` and ``z``: a
    body's translation and rotation) and the dashpots (2-3)."""
    for k in range(i.shape[0]):
        p = i[k]
        q = j[k]
        if q < 0:
            continue
        for part in range(2):
            c0 = 4 * part
            g = 2 * part
            w_tt, w_tr, w_rt, w_rr = weights[k, c0], weights[k, c0 + 1], weights[k, c0 + 2], weights[k, c0 + 3]
            z[p, g] += w_tt * y[q, g] + w_tr * y[q, g + 1]
            z[p, g + 1] += w_rt * y[q, g] + w_rr * y[q, g + 1]
            z[q, g] += w_tt * y[p, g] + w_rt * y[p, g + 1]
            z[q, g + 1] += w_tr * y[p, g] + w_rr * y[p, g + 1]


@kernel
def finish_pass(own, inv_mass, inv_inertia, y, z, local):
    """Add the bodies' own blocks to ``z`` (``z += D y``), write each body's Collatz-Wielandt
    ratios (springs, dashpots: the largest over its two groups) into ``local`` (N, 2) and return
    the largest of each (the bounds of this pass)."""
    best_k = 0.0
    best_c = 0.0
    for p in range(y.shape[0]):
        im, ii = inv_mass[p], inv_inertia[p]
        for part in range(2):
            o = 6 * part
            g = 2 * part
            d_t = own[p, o] * im
            d_r = own[p, o + 1] * ii
            c = (math.sqrt(own[p, o + 2] ** 2 + own[p, o + 3] ** 2 + own[p, o + 4] ** 2) + own[p, o + 5]) * \
                math.sqrt(im * ii)
            z0 = z[p, g] + d_t * y[p, g] + c * y[p, g + 1]
            z1 = z[p, g + 1] + c * y[p, g] + d_r * y[p, g + 1]
            z[p, g] = z0
            z[p, g + 1] = z1
            r = 0.0
            if y[p, g] > 0.0:
                r = max(r, z0 / y[p, g])
            if y[p, g + 1] > 0.0:
                r = max(r, z1 / y[p, g + 1])
            local[p, part] = r
            if part == 0:
                best_k = max(best_k, r)
            else:
                best_c = max(best_c, r)
    return best_k, best_c


def collatz_bound(chunks, n_bodies: int, inv_mass: np.ndarray, inv_inertia: np.ndarray, iterations: int = ITERATIONS,
                  keep: bool = True):
    """Upper bounds ``(lambda_K (1/s^2), lambda_C (1/s))`` of the springs and dashpots that
    ``chunks()`` yields, and each body's local ratios (N, 2).

    ``chunks``: a function returning an iterator over ``(i, j, normal, lever_i, lever_j, coef)`` of
    the contacts (see :func:`contact_weights`), called once with ``keep`` (the weights of every
    chunk kept for the iterations) or once per pass; ``inv_mass``, ``inv_inertia`` (N,): zero for
    a body that does not move (its rows are left out).
    """
    free = (inv_mass > 0.0) | (inv_inertia > 0.0)
    y = np.where(free[:, None], np.float32(1.0), np.float32(0.0)) * np.ones((n_bodies, 4), dtype=np.float32)
    own = np.zeros((n_bodies, N_OWN), dtype=np.float32)
    local = np.zeros((n_bodies, 2), dtype=np.float32)
    kept = []

    def passes(first):
        if not first and keep:
            yield from kept
            return
        for i, j, normal, lever_i, lever_j, coef in chunks():
            w = np.empty((len(i), N_WEIGHTS))
            contact_weights(first, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own, w)
            if keep:
                kept.append((i, j, w))
            yield i, j, w

    bound_k = bound_c = math.inf
    for it in range(iterations + 1):
        z = np.zeros((n_bodies, 4), dtype=np.float32)
        for i, j, w in passes(it == 0):
            weights_pass(i, j, w, y, z)
        k, c = finish_pass(own, inv_mass, inv_inertia, y, z, local)
        # each pass's ratio is an upper bound: keep the smallest
        bound_k, bound_c = min(bound_k, k), min(bound_c, c)
        top_k = float(z[:, 0:2].max(initial=0.0))
        top_c = float(z[:, 2:4].max(initial=0.0))
        # the next vector: the power iteration, kept positive on every moving body's groups (the
        # formula needs y > 0; a group without springs keeps a small weight)
        for cols, top in ((slice(0, 2), top_k), (slice(2, 4), top_c)):
            if top > 0.0:
                y[:, cols] = np.where(free[:, None], np.maximum(z[:, cols] / top, np.float32(1e-12)), np.float32(0.0))
    return (0.0 if bound_k == math.inf else float(bound_k)), (0.0 if bound_c == math.inf else float(bound_c)), local


def step_from_rates(lambda_k: float, lambda_c: float) -> float:
    """The largest ``dt`` with ``dt^2 lambda_K + 2 dt lambda_C <= 4`` (s): the bound's step."""
    if lambda_k > 0.0:
        return (math.sqrt(lambda_c * lambda_c + 4.0 * lambda_k) - lambda_c) / lambda_k
    if lambda_c > 0.0:
        return 2.0 / lambda_c
    return math.inf
