"""Slow NumPy twins of the DDA sub-matrices and of the matrix-free operator (for the tests).

Written independently of :mod:`.blocks` and :mod:`.pcg`: the inertia sub-matrix by quadrature of
``T^T T`` over the ellipse, the elasticity matrices from their textbook forms, the global matrix
assembled densely from the bodies' blocks and the contacts' rank-one springs.
"""
from __future__ import annotations

import numpy as np

__all__ = ["displacement_matrix", "mass_matrix", "elasticity", "dense_matrix"]


def displacement_matrix(x: float, y: float) -> np.ndarray:
    """``T(x, y)`` (2, 6): the displacement of the point ``(x, y)`` (relative to the centroid) per
    unit of each unknown ``(u0, v0, r0, eps_x, eps_y, gamma_xy)``."""
    return np.array([[1.0, 0.0, -y, x, 0.0, 0.5 * y],
                     [0.0, 1.0, x, 0.0, y, 0.5 * x]])


def mass_matrix(mass: float, a: float, b: float, angle: float, n_radial: int = 4, n_angular: int = 16) -> np.ndarray:
    """``mass / area * int T^T T dA`` (6, 6) over the ellipse of semi-axes ``a, b`` turned by
    ``angle``, by Gauss-Legendre quadrature in the radius and the trapezoid rule in the angle
    (both exact for the quadratic integrand)."""
    g, w = np.polynomial.legendre.leggauss(n_radial)
    rho = 0.5 * (g + 1.0)
    wr = 0.5 * w
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros((6, 6))
    for phi in np.linspace(0.0, 2 * np.pi, n_angular, endpoint=False):
        for r, wk in zip(rho, wr):
            bx, by = a * r * np.cos(phi), b * r * np.sin(phi)
            t = displacement_matrix(c * bx - s * by, s * bx + c * by)
            out += (wk * a * b * r * 2 * np.pi / n_angular) * (t.T @ t)
    return mass * out / (np.pi * a * b)


def elasticity(young: float, poisson: float, plane: str) -> np.ndarray:
    """3x3 matrix ``sigma = E eps`` on ``(eps_x, eps_y, gamma_xy)``, plane stress or plane strain."""
    if plane == "stress":
        return young / (1 - poisson**2) * np.array([[1, poisson, 0], [poisson, 1, 0], [0, 0, (1 - poisson) / 2]])
    c = young / ((1 + poisson) * (1 - 2 * poisson))
    return c * np.array([[1 - poisson, poisson, 0], [poisson, 1 - poisson, 0], [0, 0, (1 - 2 * poisson) / 2]])


def dense_matrix(kd: np.ndarray, ci, cj, en, et, cn, ct, cf=None) -> np.ndarray:
    """The global (6n, 6n) matrix: the bodies' 6x6 blocks on the diagonal plus, per contact,
    ``cn e_n e_n^T + ct e_t e_t^T + cf e_t e_n^T`` (the last, non-symmetric, a sliding contact's
    friction) with the 12-vectors spread over the unknowns of ``ci`` (skipped when < 0, a wall)
    and ``cj``."""
    n = kd.shape[0]
    k = np.zeros((6 * n, 6 * n))
    for i in range(n):
        k[6 * i:6 * i + 6, 6 * i:6 * i + 6] = kd[i]
    cf = np.zeros(len(ci)) if cf is None else cf

    def spread(c, e):
        v = np.zeros(6 * n)
        if ci[c] >= 0:
            v[6 * ci[c]:6 * ci[c] + 6] = e[:6]
        v[6 * cj[c]:6 * cj[c] + 6] = e[6:]
        return v

    for c in range(len(ci)):
        vn, vt = spread(c, en[c]), spread(c, et[c])
        k += cn[c] * np.outer(vn, vn) + ct[c] * np.outer(vt, vt) + cf[c] * np.outer(vt, vn)
    return k
