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
The bound runs twice, on the springs (``lambda_K``) and on the dashpots (``lambda_C``), and
``lambda_max <= lambda_K + 2 lambda_C / dt`` gives the step in closed form,
``dt = (sqrt(lambda_C^2 + 4 lambda_K) - lambda_C) / lambda_K``.  Measured against the exact
critical step of the linearised step (its eigenvalues, ``tests/test_stability_bound.py``) the
bound with three iterations is 0.58-0.65 of it in a simple-cubic lattice and a triaxial sample;
plain Gershgorin 0.45-0.5.

The passes run over the contacts in chunks (:data:`CHUNK`) with per-body sums of a few floats, so
that the bound of a large packing holds little memory beside the run.
"""
from __future__ import annotations

import math

import numpy as np

from contactlab._jit import kernel

__all__ = ["bound_pass", "finish_pass", "collatz_bound", "CHUNK", "ITERATIONS", "step_from_rates"]

#: contacts per chunk of a pass
CHUNK = 65536
#: power iterations of the Collatz-Wielandt bound after the Gershgorin pass
ITERATIONS = 3


@kernel
def bound_pass(first, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, y, z, own):
    """One pass of the bound over a chunk of contacts: ``z += O y`` (the off-diagonal blocks of
    ``N`` times ``y``) and, when ``first``, the bodies' own blocks into ``own``.

    ``i``, ``j`` (K,) int64: the bodies (``j = -1``: a wall, a mesh or a fixed body);
    ``normal`` (K, 3) unit, from ``i`` to ``j``; ``lever_i``, ``lever_j`` (K, 3) m: the branch
    vectors from each centre to the contact point; ``coef`` (K, 4): ``a_n, a_t, a_r, a_w`` (N/m,
    N/m, N m/rad, N m/rad, or the dashpots' N s/m ...); ``inv_mass``, ``inv_inertia`` (N,);
    ``y``, ``z`` (N, 2): the vectors of groups (column 0 translation, 1 rotation); ``own`` (N, 6):
    ``sum max(a_n, a_t)``, ``sum a_t |b|^2 + a_n |b x n|^2 + max(a_r, a_w)``, ``sum a_t b`` (3),
    ``sum |a_n - a_t| |b x n|``."""
    for k in range(i.shape[0]):
        a_n, a_t, a_r, a_w = coef[k, 0], coef[k, 1], coef[k, 2], coef[k, 3]
        if a_n == 0.0 and a_t == 0.0 and a_r == 0.0 and a_w == 0.0:
            continue
        nx, ny, nz = normal[k, 0], normal[k, 1], normal[k, 2]
        a_max = max(a_n, a_t)
        a_rot = max(a_r, a_w)
        # the two bodies' levers: |b| and |b x n|
        bi0, bi1, bi2 = lever_i[k, 0], lever_i[k, 1], lever_i[k, 2]
        bj0, bj1, bj2 = lever_j[k, 0], lever_j[k, 1], lever_j[k, 2]
        li = math.sqrt(bi0 * bi0 + bi1 * bi1 + bi2 * bi2)
        lj = math.sqrt(bj0 * bj0 + bj1 * bj1 + bj2 * bj2)
        ci = math.sqrt((bi1 * nz - bi2 * ny) ** 2 + (bi2 * nx - bi0 * nz) ** 2 + (bi0 * ny - bi1 * nx) ** 2)
        cj = math.sqrt((bj1 * nz - bj2 * ny) ** 2 + (bj2 * nx - bj0 * nz) ** 2 + (bj0 * ny - bj1 * nx) ** 2)
        p = i[k]
        q = j[k]
        if first:
            own[p, 0] += a_max
            own[p, 1] += a_t * li * li + a_n * ci * ci + a_rot
            own[p, 2] += a_t * bi0
            own[p, 3] += a_t * bi1
            own[p, 4] += a_t * bi2
            own[p, 5] += abs(a_n - a_t) * ci
            if q >= 0:
                own[q, 0] += a_max
                own[q, 1] += a_t * lj * lj + a_n * cj * cj + a_rot
                own[q, 2] += a_t * bj0
                own[q, 3] += a_t * bj1
                own[q, 4] += a_t * bj2
                own[q, 5] += abs(a_n - a_t) * cj
        if q < 0:
            continue
        sm_p, sm_q = math.sqrt(inv_mass[p]), math.sqrt(inv_mass[q])
        si_p, si_q = math.sqrt(inv_inertia[p]), math.sqrt(inv_inertia[q])
        w_tt = a_max * sm_p * sm_q
        w_tr = (a_n * cj + a_t * lj) * sm_p * si_q    # T_p - R_q
        w_rt = (a_n * ci + a_t * li) * si_p * sm_q    # R_p - T_q
        w_rr = (a_n * ci * cj + a_t * li * lj + a_rot) * si_p * si_q
        z[p, 0] += w_tt * y[q, 0] + w_tr * y[q, 1]
        z[p, 1] += w_rt * y[q, 0] + w_rr * y[q, 1]
        z[q, 0] += w_tt * y[p, 0] + w_rt * y[p, 1]
        z[q, 1] += w_tr * y[p, 0] + w_rr * y[p, 1]


@kernel
def finish_pass(own, inv_mass, inv_inertia, y, z, local):
    """Add the bodies' own blocks to ``z`` (``z += D y``), write each body's Collatz-Wielandt ratio
    ``max over its groups of z / y`` into ``local`` (0 for a body without springs) and return the
    largest (the bound of this pass)."""
    best = 0.0
    for p in range(y.shape[0]):
        im, ii = inv_mass[p], inv_inertia[p]
        d_t = own[p, 0] * im
        d_r = own[p, 1] * ii
        c = (math.sqrt(own[p, 2] ** 2 + own[p, 3] ** 2 + own[p, 4] ** 2) + own[p, 5]) * math.sqrt(im * ii)
        z0 = z[p, 0] + d_t * y[p, 0] + c * y[p, 1]
        z1 = z[p, 1] + c * y[p, 0] + d_r * y[p, 1]
        z[p, 0] = z0
        z[p, 1] = z1
        r = 0.0
        if y[p, 0] > 0.0:
            r = max(r, z0 / y[p, 0])
        if y[p, 1] > 0.0:
            r = max(r, z1 / y[p, 1])
        local[p] = r
        best = max(best, r)
    return best


def collatz_bound(chunks, n_bodies: int, inv_mass: np.ndarray, inv_inertia: np.ndarray, iterations: int = ITERATIONS):
    """The upper bound of ``lambda_max(M^-1 A)`` (1/s^2, or 1/s for dashpots) of the springs (or
    dashpots) that ``chunks()`` yields, and each body's local ratio (N,).

    ``chunks``: a function returning an iterator over ``(i, j, normal, lever_i, lever_j, coef)`` of
    the contacts (see :func:`bound_pass`), called once per pass (``iterations + 1`` passes);
    ``inv_mass``, ``inv_inertia`` (N,): zero for a body that does not move (its rows are left out).
    """
    free = (inv_mass > 0.0) | (inv_inertia > 0.0)
    y = np.where(free[:, None], 1.0, 0.0) * np.ones((n_bodies, 2))
    own = np.zeros((n_bodies, 6))
    local = np.zeros(n_bodies)
    bound = 0.0
    for it in range(iterations + 1):
        z = np.zeros((n_bodies, 2))
        for i, j, normal, lever_i, lever_j, coef in chunks():
            bound_pass(it == 0, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, y, z, own)
        this = finish_pass(own, inv_mass, inv_inertia, y, z, local)
        bound = this if it == 0 else min(bound, this)   # each pass's ratio is an upper bound
        top = float(z.max(initial=0.0))
        if top <= 0.0:
            return 0.0, local
        # the next vector: the power iteration, kept positive on every moving body's groups (the
        # formula needs y > 0; a group without springs keeps a small weight)
        y = np.where(free[:, None], np.maximum(z / top, 1e-12), 0.0)
    return float(bound), local


def step_from_rates(lambda_k: float, lambda_c: float) -> float:
    """The largest ``dt`` with ``dt^2 lambda_K + 2 dt lambda_C <= 4`` (s): the bound's step."""
    if lambda_k > 0.0:
        return (math.sqrt(lambda_c * lambda_c + 4.0 * lambda_k) - lambda_c) / lambda_k
    if lambda_c > 0.0:
        return 2.0 / lambda_c
    return math.inf
