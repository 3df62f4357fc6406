"""The matrix-free linear system of a DDA step and its block-Jacobi preconditioned Krylov solves.

The global matrix is never assembled.  ``A x`` is computed per body ``i`` as its own 6x6 block
(inertia, elastic: ``kd[i]``) times ``x[i]`` plus, over its active contacts only, the contact
springs' terms (the notes' ``sum(nK .* x(nBall) .* nFilter, 2)``, neighbour blocks times the
neighbours' unknowns filtered by the contacts' state).  A contact's blocks are rank one and are
stored factored: the normal spring contributes ``cn e_n e_n^T`` and the locked shear spring
``ct e_t e_t^T``, where ``e_n = (-T_i(p_i)^T n, T_j(p_j)^T n)`` (12 values) maps the unknowns of
both bodies to the change of the contact's gap (``e_t`` the same with the tangent), ``cn`` is the
normal penalty if the contact is closed (else 0) and ``ct`` the shear penalty if it is locked.
A sliding contact's friction ``-sgn mu F_n`` is implicit in the normal force ``F_n = -p g``, so
the gap's dependence on the unknowns enters the matrix as the non-symmetric rank-one block
``cf e_t e_n^T`` with ``cf = -sgn mu p`` (Shi's sliding friction sub-matrix; ``cf = 0`` unless
sliding).  So ``A x`` is two passes: one over contacts (the scalars ``cn e_n . x``, ``ct e_t . x``), one over
bodies (a fixed-order sum over each body's contacts): deterministic, no write races.

Fixed unknowns (``free == 0``) are constraints, not penalties: PCG runs on the free unknowns only
(their residual, preconditioned residual and search direction are zero), with the fixed ones held
at their prescribed values in ``x``.

Preconditioner: block Jacobi, the exact inverse (Cholesky) of each body's 6x6 diagonal block,
contacts' symmetric springs included (not the friction blocks), the fixed unknowns' rows and
columns replaced by the identity.  Solvers: conjugate gradients (:func:`pcg`) when the matrix is
symmetric (no sliding contact), BiCGSTAB (van der Vorst 1992, :func:`bicgstab`) otherwise.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit

__all__ = ["contact_lists", "apply_operator", "factor_preconditioner", "apply_preconditioner", "apply_sgs", "pcg",
           "bicgstab"]


@jit(inline="never")
def contact_lists(n, m, ci, cj):
    """Per-body lists of contact sides, CSR: ``start`` (n+1,), ``entry`` = ``2 c + side``
    (side 0: the contact's body ``ci``, side 1: ``cj``), in contact order."""
    start = np.zeros(n + 1, dtype=np.int64)
    for c in range(m):
        if ci[c] >= 0:
            start[ci[c] + 1] += 1
        start[cj[c] + 1] += 1
    for i in range(n):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    entry = np.empty(start[n], dtype=np.int64)
    for c in range(m):
        if ci[c] >= 0:
            entry[fill[ci[c]]] = 2 * c
            fill[ci[c]] += 1
        entry[fill[cj[c]]] = 2 * c + 1
        fill[cj[c]] += 1
    return start, entry


@jit
def _side_dot(e, c, side, x, b):
    s = 0.0
    o = 6 * side
    for d in range(6):
        s += e[c, o + d] * x[b, d]
    return s


@jit(inline="never")
def apply_operator(x, y, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, an, at):
    """``y = A x`` on the free unknowns (0 on the fixed ones); ``an``/``at`` (m,) scratch."""
    for c in range(m):
        a = _side_dot(en, c, 1, x, cj[c])
        t = _side_dot(et, c, 1, x, cj[c])
        if ci[c] >= 0:
            a += _side_dot(en, c, 0, x, ci[c])
            t += _side_dot(et, c, 0, x, ci[c])
        an[c] = cn[c] * a
        at[c] = ct[c] * t + cf[c] * a
    n = x.shape[0]
    for i in range(n):
        for r in range(6):
            s = 0.0
            for q in range(6):
                s += kd[i, r, q] * x[i, q]
            y[i, r] = s
        for k in range(start[i], start[i + 1]):
            c = entry[k] >> 1
            o = 6 * (entry[k] & 1)
            for r in range(6):
                y[i, r] += an[c] * en[c, o + r] + at[c] * et[c, o + r]
        for r in range(6):
            y[i, r] *= free[i, r]


@jit(inline="never")
def factor_preconditioner(kd, free, m, en, et, cn, ct, start, entry, chol):
    """Cholesky factors (lower, in ``chol[i]``) of every body's diagonal block, contacts included;
    returns the first body whose block is not positive definite, or -1."""
    n = kd.shape[0]
    blk = np.empty((6, 6))
    for i in range(n):
        for r in range(6):
            for q in range(6):
                blk[r, q] = kd[i, r, q]
        for k in range(start[i], start[i + 1]):
            c = entry[k] >> 1
            o = 6 * (entry[k] & 1)
            for r in range(6):
                for q in range(6):
                    blk[r, q] += cn[c] * en[c, o + r] * en[c, o + q] + ct[c] * et[c, o + r] * et[c, o + q]
        for r in range(6):
            if free[i, r] == 0.0:
                for q in range(6):
                    blk[r, q] = 0.0
                    blk[q, r] = 0.0
                blk[r, r] = 1.0
        for r in range(6):
            for q in range(r + 1):
                s = blk[r, q]
                for k in range(q):
                    s -= chol[i, r, k] * chol[i, q, k]
                if r == q:
                    if not s > 0.0:
                        return i
                    chol[i, r, r] = math.sqrt(s)
                else:
                    chol[i, r, q] = s / chol[i, q, q]
    return -1


@jit(inline="never")
def apply_preconditioner(chol, free, r, z):
    """``z = P^-1 r`` body by body (forward and back substitution), 0 on the fixed unknowns."""
    n = r.shape[0]
    w = np.empty(6)
    for i in range(n):
        for a in range(6):
            s = r[i, a] * free[i, a]
            for k in range(a):
                s -= chol[i, a, k] * w[k]
            w[a] = s / chol[i, a, a]
        for a in range(5, -1, -1):
            s = w[a]
            for k in range(a + 1, 6):
                s -= chol[i, k, a] * z[i, k]
            z[i, a] = s / chol[i, a, a]
        for a in range(6):
            z[i, a] *= free[i, a]


@jit
def _solve_block(chol, i, v, w, out):
    """``out = D_i^-1 v`` (6,) with the Cholesky factor of body ``i``'s block; ``w`` (6,) scratch."""
    for a in range(6):
        s = v[a]
        for k in range(a):
            s -= chol[i, a, k] * w[k]
        w[a] = s / chol[i, a, a]
    for a in range(5, -1, -1):
        s = w[a]
        for k in range(a + 1, 6):
            s -= chol[i, k, a] * out[k]
        out[a] = s / chol[i, a, a]


@jit
def _off_diagonal(i, y, ci, cj, en, et, cn, ct, cf, start, entry, lower, acc):
    """``acc = sum_j A_ij y_j`` (6,) over body ``i``'s contact partners ``j < i`` (``lower``) or
    ``j > i``: per contact, the partner side's ``e . y`` times the own side's ``e``."""
    for r in range(6):
        acc[r] = 0.0
    for k in range(start[i], start[i + 1]):
        c = entry[k] >> 1
        side = entry[k] & 1
        j = ci[c] if side == 1 else cj[c]
        if j < 0 or j == i or (j < i) != lower:
            continue
        po = 6 * (1 - side)
        oo = 6 * side
        a = 0.0
        t = 0.0
        for d in range(6):
            a += en[c, po + d] * y[j, d]
            t += et[c, po + d] * y[j, d]
        fa = cn[c] * a
        ft = ct[c] * t + cf[c] * a
        for r in range(6):
            acc[r] += fa * en[c, oo + r] + ft * et[c, oo + r]


@jit(inline="never")
def apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, r, z):
    """``z = M^-1 r`` with the block symmetric Gauss-Seidel ``M = (D + L) D^-1 (D + U)``: ``D`` the
    bodies' diagonal blocks as factored by :func:`factor_preconditioner`, ``L``/``U`` the contact
    blocks coupling a body to its lower/higher-numbered partners, formed from the contacts'
    factored rank-one blocks (never stored).  A forward sweep ``y_i = D_i^-1 (r_i - sum_{j<i}
    A_ij y_j)``, then a backward one ``z_i = y_i - D_i^-1 sum_{j>i} A_ij z_j``.  Symmetric positive
    definite when ``A`` is (no friction block), so it serves CG.  Serial sweeps in body order:
    deterministic.  0 on the fixed unknowns."""
    n = r.shape[0]
    acc = np.empty(6)
    v = np.empty(6)
    w = np.empty(6)
    out = np.empty(6)
    for i in range(n):
        _off_diagonal(i, z, ci, cj, en, et, cn, ct, cf, start, entry, True, acc)
        for d in range(6):
            v[d] = (r[i, d] - acc[d]) * free[i, d]
        _solve_block(chol, i, v, w, out)
        for d in range(6):
            z[i, d] = out[d] * free[i, d]
    for i in range(n - 1, -1, -1):
        _off_diagonal(i, z, ci, cj, en, et, cn, ct, cf, start, entry, False, acc)
        for d in range(6):
            v[d] = acc[d] * free[i, d]
        _solve_block(chol, i, v, w, out)
        for d in range(6):
            z[i, d] -= out[d] * free[i, d]


@jit
def _dot(a, b):
    s = 0.0
    n = a.shape[0]
    for i in range(n):
        for d in range(6):
            s += a[i, d] * b[i, d]
    return s


@jit(inline="never")
def _initial_residual(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, r, an, at):
    """``r = b - A x`` on the free unknowns (0 on the fixed ones); returns ``|b_free|^2`` (at
    least 1e-300, so a zero right-hand side gives a relative residual, not a division by 0)."""
    apply_operator(x, r, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, an, at)
    bnorm2 = 0.0
    for i in range(x.shape[0]):
        for d in range(6):
            r[i, d] = (b[i, d] - r[i, d]) * free[i, d]
            bnorm2 += (b[i, d] * free[i, d]) ** 2
    return max(bnorm2, 1e-300)


@jit(inline="never")
def pcg(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, chol, tol, max_iter):
    """Solve ``A x = b`` on the free unknowns by preconditioned CG from the ``x`` given (whose
    fixed entries hold the prescribed values).  Returns ``(iterations, relative residual)``; the
    solve reached ``|r| <= tol |b|`` if the residual is at most ``tol``."""
    n = x.shape[0]
    r = np.empty((n, 6))
    z = np.empty((n, 6))
    p = np.empty((n, 6))
    q = np.empty((n, 6))
    an = np.empty(max(m, 1))
    at = np.empty(max(m, 1))
    bnorm2 = _initial_residual(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, r, an, at)
    rr = _dot(r, r)
    if rr <= tol * tol * bnorm2:
        return 0, math.sqrt(rr / bnorm2)
    apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, r, z)
    rz = _dot(r, z)
    for i in range(n):
        for d in range(6):
            p[i, d] = z[i, d]
    it = 0
    while it < max_iter:
        it += 1
        apply_operator(p, q, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, an, at)
        pq = _dot(p, q)
        if not pq > 0.0:
            break
        alpha = rz / pq
        for i in range(n):
            for d in range(6):
                x[i, d] += alpha * p[i, d]
                r[i, d] -= alpha * q[i, d]
        rr = _dot(r, r)
        if rr <= tol * tol * bnorm2 or not math.isfinite(rr):
            break
        apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, r, z)
        rz_new = _dot(r, z)
        beta = rz_new / rz
        rz = rz_new
        for i in range(n):
            for d in range(6):
                p[i, d] = z[i, d] + beta * p[i, d]
    return it, math.sqrt(rr / bnorm2)


@jit(inline="never")
def bicgstab(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, chol, tol, max_iter):
    """Solve the non-symmetric ``A x = b`` on the free unknowns by right-preconditioned BiCGSTAB
    from the ``x`` given; same arguments and returns as :func:`pcg` (an iteration costs two
    products with ``A``)."""
    n = x.shape[0]
    r = np.empty((n, 6))
    r0 = np.empty((n, 6))
    p = np.zeros((n, 6))
    v = np.zeros((n, 6))
    y = np.empty((n, 6))
    z = np.empty((n, 6))
    s = np.empty((n, 6))
    t = np.empty((n, 6))
    an = np.empty(max(m, 1))
    at = np.empty(max(m, 1))
    bnorm2 = _initial_residual(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, r, an, at)
    for i in range(n):
        for d in range(6):
            r0[i, d] = r[i, d]
    rr = _dot(r, r)
    if rr <= tol * tol * bnorm2:
        return 0, math.sqrt(rr / bnorm2)
    rho = 1.0
    alpha = 1.0
    omega = 1.0
    it = 0
    while it < max_iter:
        it += 1
        rho_new = _dot(r0, r)
        if rho_new == 0.0 or omega == 0.0:
            break
        beta = (rho_new / rho) * (alpha / omega)
        rho = rho_new
        for i in range(n):
            for d in range(6):
                p[i, d] = r[i, d] + beta * (p[i, d] - omega * v[i, d])
        apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, p, y)
        apply_operator(y, v, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, an, at)
        r0v = _dot(r0, v)
        if r0v == 0.0:
            break
        alpha = rho / r0v
        for i in range(n):
            for d in range(6):
                s[i, d] = r[i, d] - alpha * v[i, d]
                x[i, d] += alpha * y[i, d]
        rr = _dot(s, s)
        if rr <= tol * tol * bnorm2 or not math.isfinite(rr):
            for i in range(n):
                for d in range(6):
                    r[i, d] = s[i, d]
            break
        apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, s, z)
        apply_operator(z, t, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, an, at)
        tt = _dot(t, t)
        omega = _dot(t, s) / tt if tt > 0.0 else 0.0
        for i in range(n):
            for d in range(6):
                x[i, d] += omega * z[i, d]
                r[i, d] = s[i, d] - omega * t[i, d]
        rr = _dot(r, r)
        if rr <= tol * tol * bnorm2 or not math.isfinite(rr):
            break
    return it, math.sqrt(rr / bnorm2)
