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
The bound runs on the springs (``lambda_K``) and on the dashpots (``lambda_C``), and ``lambda_max <= lambda_K + 2 lambda_C / dt`` gives the step in closed form,
``dt = (sqrt(lambda_C^2 + 4 lambda_K) - lambda_C) / lambda_K``.  Measured against the exact
critical step of the linearised step (its eigenvalues, ``tests/test_energy_creation.py``) the
bound with three iterations is 0.58-0.66 of it in simple-cubic lattices and a triaxial sample;
plain Gershgorin 0.45-0.5.

The first pass (:func:`contact_weights`) turns each contact into its four off-diagonal weights
and adds its share of the bodies' own blocks; the power iterations (:func:`weights_pass`,
:func:`finish_pass`) only read the weights.  Up to a few hundred thousand contacts one evaluation
gives the weights of the springs and of the dashpots, kept for their iterations; a larger packing
evaluates its contacts again at each pass.  The springs and the dashpots iterate one after the
other, and the per-body arrays are float32: ~40 B a body, so that the bound of a million spheres
holds less memory beside the run than a neighbour rebuild (the rounding, ~1e-7 relative, is far
inside the margin ``dt=None`` keeps).
"""
from __future__ import annotations

import math

import numpy as np

from contactlab._jit import jit, kernel

__all__ = ["contact_weights", "weights_pass", "finish_pass", "next_vector", "local_steps", "collatz_bound", "CHUNK",
           "ITERATIONS", "step_from_rates",
           "N_WEIGHTS", "N_OWN"]

#: contacts per chunk of a pass (~8 MB of temporaries in the NumPy part: 8 B a sphere at 1e6)
CHUNK = 16384
#: power iterations of the Collatz-Wielandt bound after the Gershgorin pass
ITERATIONS = 3
#: off-diagonal weights per contact: T-T, T_i-R_j, R_i-T_j, R-R
N_WEIGHTS = 4
#: own-block sums per body (see :func:`contact_weights`)
N_OWN = 6


@jit
def _add_own(own, p, a_n, a_t, a_max, a_rot, lever, cross, b0, b1, b2):
    """One contact's share of body ``p``'s own blocks: lever ``|b|``, ``cross = |b x n|``, ``b``
    the branch vector."""
    own[p, 0] += a_max
    own[p, 1] += a_t * lever * lever + a_n * cross * cross + a_rot
    own[p, 2] += a_t * b0
    own[p, 3] += a_t * b1
    own[p, 4] += a_t * b2
    own[p, 5] += abs(a_n - a_t) * cross


@kernel
def contact_weights(first, part, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own, weights):
    """A chunk of contacts: each contact's off-diagonal weights into ``weights`` (K, 4) and, when
    ``first`` (the first pass), its share of both bodies' own blocks into ``own`` (N, 6).

    ``i``, ``j`` (K,) int64: the bodies (``j = -1``: a wall, a mesh or a fixed body);
    ``normal`` (K, 3) unit, from ``i`` to ``j``; ``lever_i``, ``lever_j`` (K, 3) m: the branch
    vectors from each centre to the contact point; ``coef`` (K, 8): the springs ``k_n, k_t, k_r,
    k_w`` (N/m, N/m, N m/rad, N m/rad) then the dashpots (N s/m, ..., N m s/rad), of which
    ``part`` 0 takes the springs and 1 the dashpots; ``inv_mass``, ``inv_inertia`` (N,).  ``own``
    per body: ``sum max(a_n, a_t)``, ``sum a_t |b|^2 + a_n |b x n|^2 + max(a_r, a_w)``,
    ``sum a_t b`` (3), ``sum |a_n - a_t| |b x n|``."""
    c0 = 4 * part
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
        a_n, a_t, a_r, a_w = coef[k, c0], coef[k, c0 + 1], coef[k, c0 + 2], coef[k, c0 + 3]
        a_max = max(a_n, a_t)
        a_rot = max(a_r, a_w)
        if first:
            _add_own(own, p, a_n, a_t, a_max, a_rot, li, ci, bi0, bi1, bi2)
        if q >= 0:
            if first:
                _add_own(own, q, a_n, a_t, a_max, a_rot, lj, cj, bj0, bj1, bj2)
            sm_p, sm_q = math.sqrt(inv_mass[p]), math.sqrt(inv_mass[q])
            si_p, si_q = math.sqrt(inv_inertia[p]), math.sqrt(inv_inertia[q])
            weights[k, 0] = a_max * sm_p * sm_q
            weights[k, 1] = (a_n * cj + a_t * lj) * sm_p * si_q    # T_p - R_q
            weights[k, 2] = (a_n * ci + a_t * li) * si_p * sm_q    # R_p - T_q
            weights[k, 3] = (a_n * ci * cj + a_t * li * lj + a_rot) * si_p * si_q
        else:
            for c in range(4):
                weights[k, c] = 0.0


@kernel
def weights_pass(i, j, weights, y, z):
    """``z += O y`` over a chunk of contacts (columns of ``y`` and ``z``: a body's translation and
    rotation)."""
    for k in range(i.shape[0]):
        p = i[k]
        q = j[k]
        if q < 0:
            continue
        w_tt, w_tr, w_rt, w_rr = weights[k, 0], weights[k, 1], weights[k, 2], weights[k, 3]
        z[p, 0] += w_tt * y[q, 0] + w_tr * y[q, 1]
        z[p, 1] += w_rt * y[q, 0] + w_rr * y[q, 1]
        z[q, 0] += w_tt * y[p, 0] + w_rt * y[p, 1]
        z[q, 1] += w_tr * y[p, 0] + w_rr * y[p, 1]


@kernel
def finish_pass(own, inv_mass, inv_inertia, y, z, ratio):
    """Add the bodies' own blocks to ``z`` (``z += D y``), write each body's Collatz-Wielandt
    ratio (the larger over its two groups) into ``ratio`` (N,) and return the largest (the bound
    of this pass)."""
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
        ratio[p] = r
        best = max(best, r)
    return best


@kernel
def next_vector(inv_mass, inv_inertia, y, z, top):
    """``y <- z / top`` (``top`` <= 0: 1, the first vector), kept positive on every moving body's
    groups (the Collatz-Wielandt formula needs ``y > 0``: a group without springs keeps a small
    weight), zero on the bodies that do not move."""
    for p in range(y.shape[0]):
        moving = inv_mass[p] > 0.0 or inv_inertia[p] > 0.0
        for c in range(2):
            if not moving:
                y[p, c] = 0.0
            elif top > 0.0:
                y[p, c] = max(z[p, c] / top, 1e-12)
            else:
                y[p, c] = 1.0


@kernel
def local_steps(ratio_k, ratio_c):
    """Each body's step from its two ratios (:func:`step_from_rates`), into ``ratio_k`` (s)."""
    for p in range(ratio_k.shape[0]):
        ratio_k[p] = _step_from_rates(ratio_k[p], ratio_c[p])


def _iterate(passes, inv_mass, inv_inertia, iterations: int, own, y, z, ratio):
    """The Collatz-Wielandt bound of one part from ``passes(first)``, an iterator over the chunks'
    ``(i, j, weights)`` (``first``: the pass that also fills ``own``), each body's ratio in
    ``ratio`` (N,); ``own`` (N, 6), ``y`` and ``z`` (N, 2): float32 work arrays."""
    next_vector(inv_mass, inv_inertia, y, z, 0.0)
    bound = math.inf
    for it in range(iterations + 1):
        z.fill(0.0)
        for i, j, w in passes(it == 0):
            weights_pass(i, j, w, y, z)
        # each pass's ratio is an upper bound: keep the smallest
        bound = min(bound, finish_pass(own, inv_mass, inv_inertia, y, z, ratio))
        if it < iterations:
            next_vector(inv_mass, inv_inertia, y, z, float(z.max(initial=0.0)))
    return 0.0 if bound == math.inf else float(bound)


def _streamed(chunks, part: int, inv_mass, inv_inertia, own):
    """``passes`` for :func:`_iterate` that evaluates the contacts again at every pass."""
    def passes(first):
        for i, j, normal, lever_i, lever_j, coef in chunks():
            w = np.empty((len(i), N_WEIGHTS))
            contact_weights(first, part, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own, w)
            yield i, j, w
    return passes


def work_arrays(n_bodies: int, scratch=None):
    """``(own (N, 6), y (N, 2), z (N, 2), ratio_k (N,), ratio_c (N,))`` float32 work arrays of the
    bound: views of ``scratch`` (two C-contiguous (N, 3) float64 arrays whose contents may be
    overwritten: the step's predicted velocities, dead between steps) or new arrays."""
    if scratch is None:
        a, b = np.empty((n_bodies, 6), dtype=np.float32), np.empty((n_bodies, 6), dtype=np.float32)
    else:
        a, b = (np.asarray(x).view(np.float32).reshape(n_bodies, 6) for x in scratch)
    return a, b[:, 0:2], b[:, 2:4], b[:, 4], b[:, 5]


def collatz_bound(chunks, n_bodies: int, inv_mass: np.ndarray, inv_inertia: np.ndarray, iterations: int = ITERATIONS,
                  keep: bool = True, scratch=None):
    """Upper bounds ``(lambda_K (1/s^2), lambda_C (1/s))`` of the springs and dashpots that
    ``chunks()`` yields, and each body's step (N,) float32, s (``inf`` without springs; a view of
    the work arrays: copy what is kept).

    ``chunks``: a function returning an iterator over ``(i, j, normal, lever_i, lever_j, coef)`` of
    the contacts (see :func:`contact_weights`), called once with ``keep`` (both parts' weights of
    every chunk kept for the iterations, 64 B a contact) or once per pass of each part;
    ``inv_mass``, ``inv_inertia`` (N,): zero for a body that does not move (its rows are left out);
    ``scratch``: see :func:`work_arrays`.  The springs and the dashpots iterate one after the
    other.
    """
    own, y, z, ratio_k, ratio_c = work_arrays(n_bodies, scratch)
    own.fill(0.0)
    if keep:
        # one evaluation of the contacts gives both parts' weights, kept for the iterations
        own_c = np.zeros((n_bodies, N_OWN), dtype=np.float32)
        kept_k, kept_c = [], []
        for i, j, normal, lever_i, lever_j, coef in chunks():
            w_k, w_c = np.empty((len(i), N_WEIGHTS)), np.empty((len(i), N_WEIGHTS))
            contact_weights(True, 0, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own, w_k)
            contact_weights(True, 1, i, j, normal, lever_i, lever_j, coef, inv_mass, inv_inertia, own_c, w_c)
            kept_k.append((i, j, w_k))
            kept_c.append((i, j, w_c))
        lam_k = _iterate(lambda first: kept_k, inv_mass, inv_inertia, iterations, own, y, z, ratio_k)
        del kept_k
        lam_c = _iterate(lambda first: kept_c, inv_mass, inv_inertia, iterations, own_c, y, z, ratio_c)
    else:
        lam_k = _iterate(_streamed(chunks, 0, inv_mass, inv_inertia, own), inv_mass, inv_inertia, iterations,
                         own, y, z, ratio_k)
        own.fill(0.0)
        lam_c = _iterate(_streamed(chunks, 1, inv_mass, inv_inertia, own), inv_mass, inv_inertia, iterations,
                         own, y, z, ratio_c)
    local_steps(ratio_k, ratio_c)
    return lam_k, lam_c, ratio_k


def step_from_rates(lambda_k: float, lambda_c: float) -> float:
    """The largest ``dt`` with ``dt^2 lambda_K + 2 dt lambda_C <= 4`` (s): the bound's step."""
    if lambda_k > 0.0:
        return (math.sqrt(lambda_c * lambda_c + 4.0 * lambda_k) - lambda_c) / lambda_k
    if lambda_c > 0.0:
        return 2.0 / lambda_c
    return math.inf


#: the same, compiled into :func:`finish_pass`
_step_from_rates = jit(step_from_rates)
