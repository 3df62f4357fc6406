"""Damping coefficients that give a requested coefficient of restitution *exactly*.

The built-in laws never pull (the total normal force is clipped at zero, a dry contact cannot
stick), and a collision ends when that force vanishes.  With that rule the usual closed forms
(e.g. ``beta = ln e / sqrt(ln^2 e + pi^2)``) no longer give the requested restitution, so the
damping coefficient is found by solving the collision's equation of motion in dimensionless form
and inverting ``e(c)`` numerically, once per requested ``e`` (cached).

Hertz with Tsuji-type damping, ``F = K d^(3/2) + c sqrt(m* S_n) d'`` with ``S_n = 3/2 K d^(1/2)``:
scaling the overlap by ``(m* v0^2 / K)^(2/5)`` and time accordingly gives

    X'' = -X^(3/2) - c sqrt(3/2) X^(1/4) X',   X(0) = 0, X'(0) = 1,

independent of the impact speed, the masses and the moduli: the restitution is a function of
``c`` alone, so one coefficient serves every pair and every impact velocity.

Linear spring-dashpot, ``F = k d + 2 zeta sqrt(k m*) d'``:  ``x'' = -x - 2 zeta x'``.

In both cases ``e = -X'`` at the moment the (clipped) force reaches zero during restitution.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from .._arguments import as_finite
from ..errors import InputError

__all__ = [
    "check_restitution",
    "hertz_restitution",
    "hertz_damping_coefficient",
    "linear_restitution",
    "linear_damping_ratio",
]


def check_restitution(value) -> float:
    """A restitution coefficient must satisfy 0 < e <= 1."""
    e = as_finite("restitution", value)
    if not (0.0 < e <= 1.0):
        raise InputError(f"restitution must satisfy 0 < restitution <= 1, got {e!r}")
    return e


def _collision_restitution(rhs_force, force_zero):
    """Integrate X'' = -F(X, X') from X=0, X'=1 until the clipped force vanishes; return -X'."""

    def rhs(_t, y):
        return (y[1], -max(rhs_force(y[0], y[1]), 0.0))

    def event(_t, y):
        # during restitution (X' < 0): the force (or, with no damping, X itself) reaches zero
        return force_zero(y[0], y[1]) if y[1] < 0.0 else 1.0

    event.terminal = True
    event.direction = -1
    sol = solve_ivp(rhs, (0.0, 1e3), (0.0, 1.0), method="DOP853", rtol=1e-12, atol=1e-14,
                    events=event, max_step=0.05)
    if sol.status != 1 or not len(sol.y_events[0]):
        raise RuntimeError("the dimensionless collision did not end; this is a bug")
    return float(-sol.y_events[0][0][1])


def hertz_restitution(c: float) -> float:
    """Restitution of a Hertzian collision with the dimensionless damping coefficient ``c`` (>= 0)."""
    a = c * math.sqrt(1.5)
    if a == 0.0:
        return 1.0

    def force(x, v):
        x = max(x, 0.0)
        return x**1.5 + a * x**0.25 * v

    def zero(x, v):
        x = max(x, 0.0)
        # force / X^(1/4): changes sign where the clipped force vanishes (also at X = 0)
        return x**1.25 + a * v

    return _collision_restitution(force, zero)


def linear_restitution(zeta: float) -> float:
    """Restitution of a linear spring-dashpot collision with damping ratio ``zeta`` (>= 0), no pull."""
    if zeta == 0.0:
        return 1.0
    return _collision_restitution(lambda x, v: x + 2.0 * zeta * v, lambda x, v: x + 2.0 * zeta * v)


def _invert(func, e: float, upper: float) -> float:
    hi = upper
    while func(hi) > e:
        hi *= 2.0
        if hi > 1e6:
            raise InputError(f"restitution {e!r} is too small to be reached by viscous damping")
    return brentq(lambda c: func(c) - e, 0.0, hi, xtol=1e-14, rtol=1e-13, maxiter=200)


@lru_cache(maxsize=256)
def hertz_damping_coefficient(restitution: float) -> float:
    """Dimensionless ``c`` such that ``F_d = c sqrt(m* S_n) d'`` gives the requested restitution."""
    e = check_restitution(restitution)
    if e == 1.0:
        return 0.0
    return _invert(hertz_restitution, e, 2.0)


@lru_cache(maxsize=256)
def linear_damping_ratio(restitution: float) -> float:
    """Damping ratio ``zeta`` (``F_d = 2 zeta sqrt(k m*) d'``) giving the requested restitution."""
    e = check_restitution(restitution)
    if e == 1.0:
        return 0.0
    return _invert(linear_restitution, e, 1.0)


def linear_restitution_closed_form(zeta: float) -> float:
    """Closed form of :func:`linear_restitution` for an underdamped contact (0 <= zeta < 1)."""
    if zeta == 0.0:
        return 1.0
    wd = math.sqrt(1.0 - zeta * zeta)
    theta = math.pi - math.atan2(2.0 * zeta * wd, 1.0 - 2.0 * zeta * zeta)
    t = theta / wd
    return -math.exp(-zeta * t) * (math.cos(theta) - zeta * math.sin(theta) / wd)


_ = np  # numpy kept for callers that vectorise over these functions
