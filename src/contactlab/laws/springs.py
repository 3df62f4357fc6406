"""The spring-slider shared by the tangential and rolling senses of the built-in laws.

An elastic displacement ``xi`` (a 3-vector kept in the tangent plane of the contact) is the
history.  Each step:

1. ``xi`` is rotated into the current tangent plane (projected, then rescaled to its old length),
   so that it follows the contact as the pair rotates; if the stiffness changed since the last
   step (``k_old`` -> ``k``, e.g. a Mindlin spring whose stiffness grows with the overlap), ``xi``
   is scaled by ``sqrt(k_old / k)`` so that the stored energy ``k |xi|^2 / 2`` is unchanged: the
   spring's energy then changes only through work done on it, and the contact neither creates
   nor destroys energy when the overlap changes at fixed tangential displacement;
2. trial: ``xi += increment`` (the relative displacement or rotation of the step) and
   ``f = k xi + gamma rate``;
3. if ``|f| > limit`` the contact slides: ``f`` is scaled back to ``limit`` (keeping its
   direction) and the spring is reset to carry it, ``xi = f / k``.

Energy: the spring stores ``k |xi|^2 / 2``.  While sticking the step dissipates the viscous work
``gamma |rate|^2 dt``; while sliding it dissipates the work of the sliding force on the relative
motion minus the change of stored energy, ``f . rate dt - (k |xi_new|^2 - k |xi_old|^2) / 2``
(in steady sliding this is ``limit |rate| dt``).  The work uses the velocity at the force time,
which is what the integrator's kinetic energy sees to second order in dt; the spring itself
follows the exact displacement increments.  With ``limit = 0`` nothing is stored and nothing
is dissipated.

Sign convention: ``rate`` and ``increment`` are the relative rate and increment of body ``j``
with respect to body ``i`` (velocity and displacement at the contact point for the tangential
sense, angular velocity and rotation for rolling), both already in the tangent plane; ``f`` acts
on ``i`` (it drags ``i`` along with ``j``); ``j`` receives ``-f``.
"""
from __future__ import annotations


import math

from .._jit import jit
from ..vec import axpy, dot, scale, tangential_part

__all__ = ["spring_slider"]


@jit
def spring_slider(hist, h0, normal, increment, rate, dt, k, k_old, gamma, limit):
    """Advance the spring-slider stored in ``hist[h0:h0+3]``.

    Parameters
    ----------
    hist : 1-D float64 array, per-contact history row (modified in place)
    h0 : int, offset of the 3 components of ``xi`` in ``hist``
    normal : 3-tuple, unit contact normal
    increment : 3-tuple, relative displacement (m) or rotation (rad) during the step
    rate : 3-tuple, relative velocity (m/s) or angular velocity (rad/s) at the force time
    dt : float, s
    k : float, stiffness (> 0), N/m or N m/rad
    k_old : float, stiffness of the previous step (``k`` if constant; <= 0 for a new contact)
    gamma : float, viscous coefficient (>= 0), N s/m or N m s/rad
    limit : float, sliding limit of ``|f|`` (>= 0), N or N m

    Returns
    -------
    (f, stored_energy, dissipation) : 3-tuple (N or N m), J, J
    """
    xi = (hist[h0], hist[h0 + 1], hist[h0 + 2])
    old2 = dot(xi, xi)
    if old2 > 0.0:
        # rotate into the tangent plane keeping the length, and rescale for the stiffness change
        xi = tangential_part(xi, normal)
        new2 = dot(xi, xi)
        ratio = k_old / k if k_old > 0.0 else 1.0
        xi = scale(math.sqrt(old2 * ratio / new2), xi) if new2 > 0.0 else scale(0.0, xi)
    stored_old = 0.5 * k * dot(xi, xi)
    xi = axpy(1.0, increment, xi)
    f = axpy(k, xi, scale(gamma, rate))
    f2 = dot(f, f)
    if f2 > limit * limit:
        f = scale(limit / math.sqrt(f2), f)
        xi = scale(1.0 / k, f)
        stored = 0.5 * k * dot(xi, xi)
        diss = dot(f, rate) * dt - (stored - stored_old)
    else:
        stored = 0.5 * k * dot(xi, xi)
        diss = gamma * dot(rate, rate) * dt
    hist[h0] = xi[0]
    hist[h0 + 1] = xi[1]
    hist[h0 + 2] = xi[2]
    return f, stored, diss


def spring_slider_reference(xi, normal, increment, rate, dt, k, k_old, gamma, limit):
    """Plain NumPy twin of :func:`spring_slider`; returns ``(f, xi_new, stored, dissipation)``."""
    import numpy as np

    xi = np.asarray(xi, dtype=float).copy()
    n = np.asarray(normal, dtype=float)
    rate = np.asarray(rate, dtype=float)
    increment = np.asarray(increment, dtype=float)
    old = np.linalg.norm(xi)
    if old > 0:
        xi = xi - np.dot(xi, n) * n
        new = np.linalg.norm(xi)
        xi = xi * (old / new) if new > 0 else 0.0 * xi
        if k_old > 0:
            xi = xi * np.sqrt(k_old / k)
    stored_old = 0.5 * k * xi @ xi
    xi = xi + increment
    f = k * xi + gamma * rate
    if np.linalg.norm(f) > limit:
        f = f * (limit / np.linalg.norm(f))
        xi = f / k
        stored = 0.5 * k * xi @ xi
        diss = f @ rate * dt - (stored - stored_old)
    else:
        stored = 0.5 * k * xi @ xi
        diss = gamma * rate @ rate * dt
    return f, xi, stored, diss
