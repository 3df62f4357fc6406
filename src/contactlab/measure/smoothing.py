"""Coarse-graining kernels: the Gaussian and Lucy functions, their values and exact line integrals.

A kernel ``phi(r)`` (1/m^3 in 3-D, 1/m^2 in the plane of a 2-D scene) is radial, vanishes beyond
its cutoff radius ``c`` and integrates to 1 over space (Weinhart et al. 2012, 2013; Goldhirsch
2010; MercuryCG):

* :class:`Gaussian` ``(width=w, cutoff=3)``: ``phi = N exp(-r^2 / (2 w^2))`` for ``r < c = cutoff w``,
  normalised over the truncated ball: ``1/N = (2 pi w^2)^(3/2) (erf(k/sqrt 2) - sqrt(2/pi) k e^(-k^2/2))``
  in 3-D and ``2 pi w^2 (1 - e^(-k^2/2))`` in 2-D, ``k = cutoff``.
* :class:`Lucy` ``(cutoff=c)``: ``phi = N (1 + 3x)(1 - x)^3 = N (1 - 6x^2 + 8x^3 - 3x^4)``,
  ``x = r / c < 1``, with ``N = 105 / (16 pi c^3)`` (3-D) and ``5 / (pi c^2)`` (2-D); twice
  continuously differentiable at the cutoff.

The contact stress needs ``int_0^1 phi(|p + s l|) ds``, the mean of the kernel along a segment
(from a body's centre to a contact point).  With ``u`` the distance along the segment from the
point nearest the grid point and ``d`` the distance of the line from it, ``r^2 = d^2 + u^2``, the
integral is taken exactly over the part of the segment inside the cutoff:

* Gaussian: ``N e^(-d^2/2w^2) w sqrt(pi/2) [erf(u/(sqrt 2 w))]_(u1)^(u2) / |l|``;
* Lucy: the polynomial in ``r`` integrates term by term, ``r^2`` and ``r^4`` as polynomials in
  ``u`` and ``r^3`` with ``int (d^2 + u^2)^(3/2) du = u (2u^2 + 5d^2) sqrt(u^2 + d^2)/8 + 3 d^4 asinh(u/d)/8``.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_positive, checked_api
from .._jit import jit

__all__ = ["Gaussian", "Lucy", "SmoothingKernel", "GAUSSIAN", "LUCY"]

GAUSSIAN, LUCY = 0, 1


class SmoothingKernel:
    """Base of the coarse-graining kernels: ``code`` (``GAUSSIAN`` or ``LUCY``), ``width`` and
    ``support`` (the cutoff radius, m)."""

    code: int
    width: float
    support: float

    def normalisation(self, dimension: int) -> float:
        """``N`` of the module docstring for a 3-D or 2-D scene (1/m^3 or 1/m^2)."""
        raise NotImplementedError

    def __call__(self, r, dimension: int = 3) -> np.ndarray:
        """The kernel's value at distance(s) ``r`` (m): 1/m^3 (1/m^2 with ``dimension=2``), in NumPy."""
        r = np.asarray(r, dtype=np.float64)
        norm = self.normalisation(dimension)
        if self.code == GAUSSIAN:
            value = norm * np.exp(-0.5 * (r / self.width) ** 2)
        else:
            x = r / self.support
            value = norm * (1.0 + 3.0 * x) * (1.0 - x) ** 3
        return np.where(r < self.support, value, 0.0)


@checked_api
class Gaussian(SmoothingKernel):
    """Gaussian coarse-graining kernel of standard deviation ``width`` (m), cut off at
    ``cutoff * width`` (default 3, as MercuryCG) and normalised over the cut-off ball (disk)."""

    code = GAUSSIAN

    def __init__(self, width: float, cutoff: float = 3.0):
        self.width = as_positive("Gaussian: width", width, "m")
        self.cutoff = as_positive("Gaussian: cutoff", cutoff, "widths")
        self.support = self.width * self.cutoff

    def normalisation(self, dimension: int = 3) -> float:
        k = self.cutoff
        w = self.width
        if dimension == 2:
            return 1.0 / (2.0 * math.pi * w * w * (1.0 - math.exp(-0.5 * k * k)))
        mass = math.erf(k / math.sqrt(2.0)) - math.sqrt(2.0 / math.pi) * k * math.exp(-0.5 * k * k)
        return 1.0 / ((2.0 * math.pi * w * w) ** 1.5 * mass)

    def __repr__(self):
        return f"Gaussian(width={self.width!r}, cutoff={self.cutoff!r})"


@checked_api
class Lucy(SmoothingKernel):
    """Lucy's polynomial kernel ``(1 + 3x)(1 - x)^3``, ``x = r / cutoff``, zero beyond ``cutoff`` (m)."""

    code = LUCY

    def __init__(self, cutoff: float):
        self.support = as_positive("Lucy: cutoff", cutoff, "m")
        self.width = self.support

    def normalisation(self, dimension: int = 3) -> float:
        c = self.support
        if dimension == 2:
            return 5.0 / (math.pi * c * c)
        return 105.0 / (16.0 * math.pi * c ** 3)

    def __repr__(self):
        return f"Lucy(cutoff={self.support!r})"


# ---------------------------------------------------------------------------------------------- compiled
@jit
def _value(code, w, c, norm, r2):
    """The kernel at squared distance ``r2`` (m^2)."""
    if r2 >= c * c:
        return 0.0
    if code == GAUSSIAN:
        return norm * math.exp(-0.5 * r2 / (w * w))
    x = math.sqrt(r2) / c
    return norm * (1.0 + 3.0 * x) * (1.0 - x) ** 3


@jit
def _lucy_primitive(u, d2, c):
    """Antiderivative in ``u`` of ``1 - 6 r^2/c^2 + 8 r^3/c^3 - 3 r^4/c^4``, ``r^2 = d2 + u^2``."""
    d = math.sqrt(d2)
    cube = 0.125 * u * (2.0 * u * u + 5.0 * d2) * math.sqrt(u * u + d2)
    if d > 0.0:
        cube += 0.375 * d2 * d2 * math.asinh(u / d)
    square = d2 * u + u ** 3 / 3.0
    fourth = d2 * d2 * u + 2.0 * d2 * u ** 3 / 3.0 + u ** 5 / 5.0
    return u - 6.0 * square / (c * c) + 8.0 * cube / c ** 3 - 3.0 * fourth / c ** 4


@jit
def _line_mean(code, w, c, norm, px, py, pz, lx, ly, lz):
    """``int_0^1 phi(|p + s l|) ds``: the mean of the kernel along the segment from ``p`` to
    ``p + l`` (both relative to the grid point), exact (module docstring)."""
    l2 = lx * lx + ly * ly + lz * lz
    p2 = px * px + py * py + pz * pz
    if l2 <= 1e-24 * c * c:
        return _value(code, w, c, norm, p2)
    pl = px * lx + py * ly + pz * lz
    s_near = -pl / l2
    d2 = max(0.0, p2 - pl * pl / l2)
    if d2 >= c * c:
        return 0.0
    length = math.sqrt(l2)
    half = math.sqrt(c * c - d2) / length
    s1 = max(0.0, s_near - half)
    s2 = min(1.0, s_near + half)
    if s2 <= s1:
        return 0.0
    u1 = length * (s1 - s_near)
    u2 = length * (s2 - s_near)
    if code == GAUSSIAN:
        q = 1.0 / (math.sqrt(2.0) * w)
        return (norm * math.exp(-0.5 * d2 / (w * w)) * w * math.sqrt(0.5 * math.pi)
                * (math.erf(u2 * q) - math.erf(u1 * q)) / length)
    return norm * (_lucy_primitive(u2, d2, c) - _lucy_primitive(u1, d2, c)) / length
