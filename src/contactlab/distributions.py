"""Particle size distributions: uniform, normal, log-normal and sieve curves, sampled reproducibly.

**Sizes are diameters** ``d`` in metres, as on a sieve (:meth:`SizeDistribution.sample_radii`
halves them for :meth:`contactlab.Scene.add_spheres`).

**Number or mass.**  A distribution is given on a *basis*: ``"number"`` (the CDF is the fraction
of particles with diameter ``<= d``) or ``"mass"`` (the fraction of the mass, i.e. of the solid
volume for one density, in particles with diameter ``<= d``; sieve curves are by mass).  The
densities of the two bases differ by the particle volume: ``f_mass(d) = d^3 f_number(d) / <d^3>``.
Particles are always *drawn by number* (each draw is one particle), so a distribution given by
mass is sampled from ``f_number(d) ~ f_mass(d) / d^3``; drawing sizes with the mass CDF directly
would put far too much of the mass in the large particles.  :meth:`SizeDistribution.number_cdf` and
:meth:`SizeDistribution.mass_cdf` give both CDFs whatever the basis.

* :class:`Uniform` ``(d_min, d_max)``: uniform density on the basis.  By mass the number density
  is ``~ d^-3``, sampled by inverting ``(d_min^-2 - d^-2) / (d_min^-2 - d_max^-2)``.
* :class:`Normal` ``(mean, std, d_min, d_max)``: normal density truncated to ``[d_min, d_max]``,
  by default ``mean -+ 3 std``; sizes are never zero or negative (a ``d_min <= 0`` is refused).  By
  mass the number density ``~ phi(d) / d^3`` has no closed-form CDF: it is tabulated with 512
  panels of 10-point Gauss-Legendre quadrature and inverted by safeguarded Newton steps (CDF
  error ~1e-13).
* :class:`LogNormal` ``(median, sigma, d_min, d_max)``: ``ln d`` normal with median ``median`` (m)
  and standard deviation ``sigma``, truncated to ``[d_min, d_max]`` (default
  ``median exp(-+3 sigma)``).  The other basis is again log-normal with the median moved by
  ``exp(-+3 sigma^2)`` (Hatch-Choate), truncated at the same sizes, so both bases are exact.
* :class:`Sieve` ``(sizes, passing)``: a table of sieve sizes (m, increasing) and the fraction
  passing each (0 at the first size, 1 at the last), by mass unless ``basis="number"``.  Between
  two sizes the fraction is interpolated linearly in ``ln d`` (``interpolation="log"``, the
  straight lines of the usual semi-log sieve chart) or in ``d`` (``"linear"``); within a class the
  other basis then has the density ``~ d^-3`` (or ``d^3``) of the corresponding variable, in
  closed form, so that sampling reproduces the table's mass passing exactly in expectation.

Example
-------
>>> import numpy as np
>>> from contactlab.distributions import Sieve
>>> sand = Sieve(sizes=[0.5e-3, 1e-3, 2e-3], passing=[0.0, 0.4, 1.0])       # by mass, diameters in m
>>> d = sand.sample_diameters(200_000, seed=1)
>>> round(float(np.sum(d[d <= 1e-3] ** 3) / np.sum(d ** 3)), 2)            # mass passing 1 mm
0.4
>>> round(float(sand.number_cdf(1e-3)), 3)                                  # but most particles are small
0.842
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ._arguments import as_float_array, as_positive, checked_api, did_you_mean
from .errors import InputError

__all__ = ["SizeDistribution", "Uniform", "Normal", "LogNormal", "Sieve", "BASES"]

#: the bases a distribution can be given on
BASES = ("number", "mass")


def _basis(basis) -> str:
    if basis not in BASES:
        raise InputError(f"basis must be 'number' (fraction of particles) or 'mass' (fraction of mass), got "
                         f"{basis!r}{did_you_mean(basis, BASES)}")
    return basis


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def _count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InputError(f"n must be a non-negative integer (how many sizes), got {n!r}")
    return int(n)


class SizeDistribution:
    """A distribution of particle diameters (m) on a ``basis`` (``"number"`` or ``"mass"``), with
    support ``[d_min, d_max]``.  Subclasses provide the CDFs and the number sampler."""

    basis: str
    d_min: float
    d_max: float

    def number_cdf(self, d) -> np.ndarray:
        """Fraction of the particles (by number) with a diameter ``<= d`` (m)."""
        raise NotImplementedError

    def mass_cdf(self, d) -> np.ndarray:
        """Fraction of the mass (solid volume) in particles with a diameter ``<= d`` (m)."""
        raise NotImplementedError

    def _draw(self, u: np.ndarray) -> np.ndarray:
        """Diameters with number CDF values ``u`` (the inverse of :meth:`number_cdf`)."""
        raise NotImplementedError

    def sample_diameters(self, n: int, seed=0) -> np.ndarray:
        """``n`` diameters (m) drawn by number (``seed``: a non-negative int or a NumPy Generator;
        the same seed gives the same sizes)."""
        n = _count(n)
        d = self._draw(_rng(seed).random(n))
        return np.clip(d, self.d_min, self.d_max)

    def sample_radii(self, n: int, seed=0) -> np.ndarray:
        """``n`` radii (m), half of :meth:`sample_diameters`."""
        return 0.5 * self.sample_diameters(n, seed)

    def _support(self, d_min, d_max):
        self.d_min = as_positive("d_min", d_min, "m")
        self.d_max = as_positive("d_max", d_max, "m")
        if not self.d_max > self.d_min:
            raise InputError(f"d_max must exceed d_min, got d_min={self.d_min!r} m, d_max={self.d_max!r} m")


def _clip01(x):
    return np.clip(x, 0.0, 1.0)


@checked_api
class Uniform(SizeDistribution):
    """Diameters uniform on ``[d_min, d_max]`` (m) by number (default) or by mass."""

    def __init__(self, d_min: float, d_max: float, *, basis: str = "number"):
        self._support(d_min, d_max)
        self.basis = _basis(basis)

    def _power_cdf(self, d, p):
        a, b = self.d_min, self.d_max
        d = np.clip(np.asarray(d, dtype=np.float64), a, b)
        return _clip01((d ** p - a ** p) / (b ** p - a ** p))

    def number_cdf(self, d):
        return self._power_cdf(d, 1.0) if self.basis == "number" else self._power_cdf(d, -2.0)

    def mass_cdf(self, d):
        return self._power_cdf(d, 4.0) if self.basis == "number" else self._power_cdf(d, 1.0)

    def _draw(self, u):
        a, b = self.d_min, self.d_max
        if self.basis == "number":
            return a + u * (b - a)
        return (a ** -2.0 - u * (a ** -2.0 - b ** -2.0)) ** -0.5

    def __repr__(self):
        return f"Uniform(d_min={self.d_min!r}, d_max={self.d_max!r}, basis={self.basis!r})"


class _Tabulated:
    """CDF of an unnormalised density on ``[a, b]`` (512 panels of 10-point Gauss-Legendre) and
    its inverse by safeguarded Newton steps."""

    def __init__(self, density, a, b, panels=512):
        self.density, self.a, self.b = density, a, b
        self.edges = np.linspace(a, b, panels + 1)
        self.x, self.w = np.polynomial.legendre.leggauss(10)
        cum = np.concatenate([[0.0], np.cumsum(self._integral(self.edges[:-1], self.edges[1:]))])
        self.total = cum[-1]
        self.cum = cum / self.total

    def _integral(self, lo, hi):
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        pts = mid[:, None] + half[:, None] * self.x[None, :]
        return half * (self.density(pts) @ self.w)

    def cdf(self, d):
        d = np.clip(np.asarray(d, dtype=np.float64), self.a, self.b)
        k = np.clip(np.searchsorted(self.edges, d, side="right") - 1, 0, len(self.edges) - 2)
        flat_d, flat_k = d.ravel(), k.ravel()
        part = self._integral(self.edges[flat_k], flat_d) / self.total
        return _clip01(self.cum[flat_k] + part).reshape(d.shape)

    def inverse(self, u):
        u = np.asarray(u, dtype=np.float64)
        k = np.clip(np.searchsorted(self.cum, u, side="right") - 1, 0, len(self.edges) - 2)
        lo, hi = self.edges[k], self.edges[k + 1]
        frac = (u - self.cum[k]) / np.maximum(self.cum[k + 1] - self.cum[k], 1e-300)
        d = lo + np.clip(frac, 0.0, 1.0) * (hi - lo)
        for _ in range(12):       # Newton converges in 2-3 steps from the panel's linear guess
            f = self.cdf(d) - u
            if np.all(np.abs(f) <= 1e-15):
                break
            lo = np.where(f <= 0, d, lo)
            hi = np.where(f > 0, d, hi)
            new = d - f * self.total / np.maximum(self.density(d), 1e-300)
            d = np.where((new > lo) & (new < hi), new, 0.5 * (lo + hi))
        return d


@checked_api
class Normal(SizeDistribution):
    """Normal diameters (mean and standard deviation in m) truncated to ``[d_min, d_max]``
    (default ``mean -+ 3 std``; ``d_min`` must be > 0), by number (default) or by mass."""

    def __init__(self, mean: float, std: float, *, d_min: float | None = None, d_max: float | None = None,
                 basis: str = "number"):
        self.mean = as_positive("mean", mean, "m")
        self.std = as_positive("std", std, "m")
        if d_min is None:
            d_min = self.mean - 3.0 * self.std
            if d_min <= 0.0:
                raise InputError(f"Normal(mean={self.mean!r}, std={self.std!r}): the default lower bound mean - 3 std "
                                 f"= {d_min!r} m is not positive; give d_min > 0 (m), the smallest diameter")
        if d_max is None:
            d_max = self.mean + 3.0 * self.std
        self._support(d_min, d_max)
        self.basis = _basis(basis)
        self._law = stats.truncnorm((self.d_min - self.mean) / self.std, (self.d_max - self.mean) / self.std,
                                    loc=self.mean, scale=self.std)
        power = -3.0 if self.basis == "mass" else 3.0     # the other basis' weight d^power (unnormalised)
        self._other = _Tabulated(lambda d: np.exp(-0.5 * ((d - self.mean) / self.std) ** 2) * d ** power,
                                 self.d_min, self.d_max)

    def number_cdf(self, d):
        return self._law.cdf(np.asarray(d, dtype=np.float64)) if self.basis == "number" else self._other.cdf(d)

    def mass_cdf(self, d):
        return self._other.cdf(d) if self.basis == "number" else self._law.cdf(np.asarray(d, dtype=np.float64))

    def _draw(self, u):
        return self._law.ppf(u) if self.basis == "number" else self._other.inverse(u)

    def __repr__(self):
        return (f"Normal(mean={self.mean!r}, std={self.std!r}, d_min={self.d_min!r}, d_max={self.d_max!r}, "
                f"basis={self.basis!r})")


@checked_api
class LogNormal(SizeDistribution):
    """Log-normal diameters: ``ln d`` normal with median ``median`` (m) and standard deviation
    ``sigma``, truncated to ``[d_min, d_max]`` (default ``median exp(-+3 sigma)``), by number
    (default) or by mass."""

    def __init__(self, median: float, sigma: float, *, d_min: float | None = None, d_max: float | None = None,
                 basis: str = "number"):
        self.median = as_positive("median", median, "m")
        self.sigma = as_positive("sigma", sigma)
        self.basis = _basis(basis)
        self._support(self.median * math.exp(-3.0 * self.sigma) if d_min is None else d_min,
                      self.median * math.exp(3.0 * self.sigma) if d_max is None else d_max)
        shift = 3.0 * self.sigma ** 2          # ln-median by mass minus ln-median by number
        mu_n = math.log(self.median) - (shift if self.basis == "mass" else 0.0)
        #: the untruncated median diameter by number, m (``median exp(-3 sigma^2)`` for a mass basis)
        self.number_median = math.exp(mu_n)
        self._number = self._law(mu_n)
        self._mass = self._law(mu_n + shift)

    def _law(self, mu):
        s = self.sigma
        return stats.truncnorm((math.log(self.d_min) - mu) / s, (math.log(self.d_max) - mu) / s, loc=mu, scale=s)

    @staticmethod
    def _log(d):
        return np.log(np.asarray(d, dtype=np.float64))

    def number_cdf(self, d):
        return self._number.cdf(self._log(d))

    def mass_cdf(self, d):
        return self._mass.cdf(self._log(d))

    def _draw(self, u):
        return np.exp(self._number.ppf(u))

    def __repr__(self):
        return (f"LogNormal(median={self.median!r}, sigma={self.sigma!r}, d_min={self.d_min!r}, d_max={self.d_max!r}, "
                f"basis={self.basis!r})")


@checked_api
class Sieve(SizeDistribution):
    """A sieve curve: ``sizes`` (m, increasing diameters) and the fraction ``passing`` each
    (fractions from 0 at the first size to 1 at the last, non-decreasing), by mass (default) or
    by number, interpolated linearly in ``ln d`` (default) or in ``d`` between the sizes."""

    def __init__(self, sizes, passing, *, basis: str = "mass", interpolation: str = "log"):
        d = as_float_array("sizes", sizes)
        p = as_float_array("passing", passing)
        if d.ndim != 1 or d.shape != p.shape or len(d) < 2:
            raise InputError(f"sizes and passing must be two lists of the same length >= 2, got shapes {d.shape} and "
                             f"{p.shape}")
        if not (np.all(np.isfinite(d)) and np.all(d > 0) and np.all(np.diff(d) > 0)):
            raise InputError(f"sizes must be positive finite diameters in m, strictly increasing, got {d.tolist()}")
        if not np.all(np.isfinite(p)) or p[0] != 0.0 or p[-1] != 1.0 or np.any(np.diff(p) < 0):
            hint = " (fractions, not percent: divide by 100)" if np.nanmax(p) > 1.0 else ""
            raise InputError(f"passing must rise from 0 at the smallest size to 1 at the largest{hint}, "
                             f"non-decreasing, got {p.tolist()}")
        if interpolation not in ("log", "linear"):
            raise InputError(f"interpolation must be 'log' (linear in ln d) or 'linear' (linear in d), got "
                             f"{interpolation!r}")
        self.sizes, self.passing = d, p
        self.basis = _basis(basis)
        self.interpolation = interpolation
        self._support(d[0], d[-1])
        # within each class the basis' density is constant in x (= ln d or d); the other basis
        # weighs it by d^q: q = -3 (number from mass) or 3 (mass from number)
        self._x = np.log(d) if interpolation == "log" else d.copy()
        q = -3.0 if self.basis == "mass" else 3.0
        share = np.diff(p)
        width = np.diff(self._x)
        self._q = q
        other = share / width * (self._primitive(self._x[1:], q) - self._primitive(self._x[:-1], q))
        self._other_cum = np.concatenate([[0.0], np.cumsum(other)]) / other.sum()

    def _primitive(self, x, q):
        """Antiderivative in ``x`` of ``d^q`` (``x = ln d`` or ``d``)."""
        if self.interpolation == "log":
            return np.exp(q * x) / q
        return x ** (q + 1.0) / (q + 1.0)

    def _x_of(self, d):
        d = np.clip(np.asarray(d, dtype=np.float64), self.d_min, self.d_max)
        return np.log(d) if self.interpolation == "log" else d

    def _classes(self, x):
        return np.clip(np.searchsorted(self._x, x, side="right") - 1, 0, len(self._x) - 2)

    def _given_cdf(self, d):
        x = self._x_of(d)
        return _clip01(np.interp(x, self._x, self.passing))

    def _other_cdf(self, d):
        x = self._x_of(d)
        k = self._classes(x)
        q = self._q
        lo, hi = self._x[k], self._x[k + 1]
        within = (self._primitive(x, q) - self._primitive(lo, q)) / (self._primitive(hi, q) - self._primitive(lo, q))
        return _clip01(self._other_cum[k] + within * (self._other_cum[k + 1] - self._other_cum[k]))

    def number_cdf(self, d):
        return self._given_cdf(d) if self.basis == "number" else self._other_cdf(d)

    def mass_cdf(self, d):
        return self._given_cdf(d) if self.basis == "mass" else self._other_cdf(d)

    def _draw(self, u):
        if self.basis == "number":
            x = self._invert(u, self.passing, None)
        else:
            x = self._invert(u, self._other_cum, self._q)
        return np.exp(x) if self.interpolation == "log" else x

    def _invert(self, u, cum, q):
        """``x`` with CDF ``u``: the class by ``cum``, then within it the inverse of the density
        ``d^q`` (uniform in ``x`` for ``q`` None)."""
        k = np.clip(np.searchsorted(cum, u, side="right") - 1, 0, len(self._x) - 2)   # cum[k] <= u < cum[k + 1]
        t = _clip01((u - cum[k]) / np.maximum(cum[k + 1] - cum[k], 1e-300))
        lo, hi = self._x[k], self._x[k + 1]
        if q is None:
            return lo + t * (hi - lo)
        a, b = self._primitive(lo, q), self._primitive(hi, q)
        g = a + t * (b - a)
        if self.interpolation == "log":
            return np.log(q * g) / q
        return (g * (q + 1.0)) ** (1.0 / (q + 1.0))

    def __repr__(self):
        return (f"Sieve(sizes={self.sizes.tolist()!r}, passing={self.passing.tolist()!r}, basis={self.basis!r}, "
                f"interpolation={self.interpolation!r})")

