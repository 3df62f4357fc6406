"""Sub-matrices of one body in first-order particle DDA (Shi 1988, written for disks and ellipses).

Displacement of a point
-----------------------
A point at ``(x, y)`` of a body with centroid ``(x0, y0)`` moves by ``u = T(X, Y) D`` in a step,
``X = x - x0``, ``Y = y - y0``, ``D = (u0, v0, r0, eps_x, eps_y, gamma_xy)``::

    T = | 1  0  -Y  X  0  Y/2 |
        | 0  1   X  0  Y  X/2 |

Body shape
----------
Every body is an ellipse (a disk is the circle ``a = b = r``), held as its *shape matrix*
``M = F A^2 F^T`` (m^2, symmetric 2x2: ``(Mxx, Myy, Mxy)``): its boundary is ``{X : X^T M^-1 X =
1}``, its support function along a unit ``n`` is ``h(n) = sqrt(n . M n)`` and the boundary point
with outward normal ``n`` is ``M n / h``.  The area is ``pi sqrt(det M)`` and the second moments
of area ``int X X^T dA = (area / 4) M``.  A step maps the shape by ``G = R(r0) (I + eps)``
(``eps`` the strain tensor of the step): ``M <- G M G^T``, so a strained disk becomes an ellipse
and a rotation is applied exactly (not Shi's linearised ``I + [[0, -r0], [r0, 0]]``, which would
inflate a body turning by ``r0`` by ``sqrt(1 + r0^2)``).

Sub-matrices (6x6 per body, ``t`` the thickness, ``m`` the mass)
--------------------------------------------------------------
* inertia: ``(2 / dt^2) m int T^T T dA / area`` on the diagonal, ``(2 / dt) (m ...) v`` on the
  right-hand side (Shi's constant acceleration over the step, ``v <- 2 D / dt - v``);
* elastic: ``area t E`` on the strain block (``E`` plane stress or plane strain);
* initial stress: ``-area t sigma`` on the right-hand side of the strain unknowns;
* body load: ``m g`` on ``(u0, v0)`` (first moments vanish about the centroid);
* point load ``P`` at ``(X, Y)``: ``T(X, Y)^T P`` on the right-hand side.

The functions here are compiled building blocks (Numba); :mod:`contactlab.dda.reference` has their
slow NumPy twins, used by the tests.
"""
from __future__ import annotations

import math

from .._jit import jit
from .layout import EPS_X, GAMMA_XY

__all__ = ["t_transpose_dot", "mass_block", "elastic_matrix", "add_elastic_block", "shape_axes", "area_of", "support_offset",
           "map_shape", "isotropic"]


@jit
def t_transpose_dot(out, row, col, x, y, n0, n1):
    """Write ``T(x, y)^T (n0, n1)`` (6 values) into ``out[row, col:col + 6]``."""
    out[row, col] = n0
    out[row, col + 1] = n1
    out[row, col + 2] = -y * n0 + x * n1
    out[row, col + 3] = x * n0
    out[row, col + 4] = y * n1
    out[row, col + 5] = 0.5 * (y * n0 + x * n1)


@jit
def mass_block(m, mxx, myy, mxy, scale, out, i):
    """Add ``scale * m int T^T T dA / area`` into ``out[i]`` (6x6); ``(mxx, myy, mxy)`` the shape
    matrix (the second moments per unit area are a quarter of it)."""
    sxx = 0.25 * mxx
    syy = 0.25 * myy
    sxy = 0.25 * mxy
    c = scale * m
    out[i, 0, 0] += c
    out[i, 1, 1] += c
    out[i, 2, 2] += c * (sxx + syy)
    out[i, 2, 3] += -c * sxy
    out[i, 3, 2] += -c * sxy
    out[i, 2, 4] += c * sxy
    out[i, 4, 2] += c * sxy
    out[i, 2, 5] += c * 0.5 * (sxx - syy)
    out[i, 5, 2] += c * 0.5 * (sxx - syy)
    out[i, 3, 3] += c * sxx
    out[i, 3, 5] += c * 0.5 * sxy
    out[i, 5, 3] += c * 0.5 * sxy
    out[i, 4, 4] += c * syy
    out[i, 4, 5] += c * 0.5 * sxy
    out[i, 5, 4] += c * 0.5 * sxy
    out[i, 5, 5] += c * 0.25 * (sxx + syy)


@jit
def elastic_matrix(young, poisson, plane_strain):
    """The 3x3 elasticity matrix on ``(eps_x, eps_y, gamma_xy)`` as ``(e11, e12, e33)`` (Pa):
    ``sigma_x = e11 eps_x + e12 eps_y``, ``sigma_y = e12 eps_x + e11 eps_y``, ``tau = e33 gamma``."""
    if plane_strain:
        c = young / ((1.0 + poisson) * (1.0 - 2.0 * poisson))
        return c * (1.0 - poisson), c * poisson, 0.5 * young / (1.0 + poisson)
    c = young / (1.0 - poisson * poisson)
    return c, c * poisson, 0.5 * young / (1.0 + poisson)


@jit
def add_elastic_block(young, poisson, plane_strain, volume, out, i):
    """Add ``volume * E`` (``volume = area t``) on the strain block of ``out[i]``."""
    e11, e12, e33 = elastic_matrix(young, poisson, plane_strain)
    out[i, EPS_X, EPS_X] += volume * e11
    out[i, EPS_X + 1, EPS_X + 1] += volume * e11
    out[i, EPS_X, EPS_X + 1] += volume * e12
    out[i, EPS_X + 1, EPS_X] += volume * e12
    out[i, GAMMA_XY, GAMMA_XY] += volume * e33


@jit
def isotropic(mxx, myy, mxy):
    """True if the shape matrix is a circle's (``r^2 I``) to round-off."""
    return abs(mxx - myy) + 2.0 * abs(mxy) <= 1e-15 * (mxx + myy)


@jit
def shape_axes(mxx, myy, mxy):
    """Semi-axes ``(a, b)`` (m, ``a >= b``) and the angle of ``a`` (rad) of a shape matrix."""
    half = 0.5 * (mxx + myy)
    dev = math.sqrt(0.25 * (mxx - myy) ** 2 + mxy * mxy)
    angle = 0.5 * math.atan2(2.0 * mxy, mxx - myy)
    return math.sqrt(half + dev), math.sqrt(max(half - dev, 0.0)), angle


@jit
def area_of(mxx, myy, mxy):
    """Area (m^2) of the ellipse with this shape matrix."""
    return math.pi * math.sqrt(max(mxx * myy - mxy * mxy, 0.0))


@jit
def support_offset(mxx, myy, mxy, n0, n1):
    """Support function ``h(n)`` (m) and the boundary point ``M n / h`` (relative to the centroid)
    whose outward normal is the unit ``(n0, n1)``."""
    u0 = mxx * n0 + mxy * n1
    u1 = mxy * n0 + myy * n1
    h = math.sqrt(n0 * u0 + n1 * u1)
    return h, u0 / h, u1 / h


@jit
def map_shape(mxx, myy, mxy, r0, ex, ey, gxy):
    """``G M G^T`` with ``G = R(r0) (I + eps)``, ``eps = [[ex, gxy/2], [gxy/2, ey]]``."""
    c = math.cos(r0)
    s = math.sin(r0)
    f00 = 1.0 + ex
    f01 = 0.5 * gxy
    f10 = 0.5 * gxy
    f11 = 1.0 + ey
    g00 = c * f00 - s * f10
    g01 = c * f01 - s * f11
    g10 = s * f00 + c * f10
    g11 = s * f01 + c * f11
    # G M
    a00 = g00 * mxx + g01 * mxy
    a01 = g00 * mxy + g01 * myy
    a10 = g10 * mxx + g11 * mxy
    a11 = g10 * mxy + g11 * myy
    return a00 * g00 + a01 * g01, a10 * g10 + a11 * g11, a00 * g10 + a01 * g11


