"""The spring-slider shared by the tangential and rolling senses of the built-in laws.

An elastic displacement ``xi`` (a 3-vector kept in the tangent plane of the contact) is the
history: it comes in as a tuple and the new value goes out (laws are pure functions).  Each step:

1. ``xi`` is rotated into the current tangent plane (projected, then rescaled to its old length),
   so that it follows the contact as the pair rotates; if the stiffness changed since the last
   step (``k_old`` -> ``k``, e.g. a Mindlin spring whose stiffness grows with the overlap), ``xi``
   is scaled by ``sqrt(k_old / k)`` so that the stored energy ``k |xi|^2 / 2`` is unchanged: the
   spring's energy then changes only through work done on it, and the contact neither creates
   nor destroys energy when the overlap changes at fixed tangential displacement;
2. trial: ``xi += increment`` (the relative displacement or rotation of the step) and
   ``f = k xi + gamma rate``;
3. if ``|f| > limit`` the contact slides: ``f`` is scaled back to ``limit`` (keeping its
   direction) and the spring is reset to carry the part of it that the dashpot does not,
   ``k xi = f - gamma rate`` (LAMMPS's reset, pair granular's ``linear_history`` tangential
   model; :func:`coulomb_slider` does the same), but never more than the sliding limit: if
   ``|f - gamma rate| > limit`` it is scaled back to ``limit`` too.

   Why not ``xi = f / k`` (the reset before): it stores the dashpot's force in the spring.  At
   first touch the normal force is almost all damping (Chung and Ooi's test 6 with 2 us steps:
   1766 N against 8 N elastic in the first step), so a contact that slid in its first step stored
   a tangential displacement some 70 times the overlap, released it as the dashpot's force faded
   and kept sliding; the tangential restitution of the contact point then jumped where the first
   step turns from sticking to sliding (-0.077 against -0.015, ``tests/test_chung_ooi.py``).
   Why the cap (LAMMPS has none): where the dashpot's force exceeds twice the limit, e.g. while
   the normal force falls to zero before the bodies separate, LAMMPS's spring holds
   ``k xi = -gamma rate`` with no force transmitted, an energy ``gamma^2 |rate|^2 / (2k)`` (for
   Hertz-Mindlin ``c^2 m* |rate|^2 / 2`` however small ``k``) that appears as negative dissipation
   and vanishes, unbooked, when the contact ends: the energy balance of frictional packings then
   missed several percent of the dissipation.  With the cap the spring empties as the limit goes
   to zero; nothing changes while ``|f - gamma rate| <= limit`` (a dashpot force along the
   sliding force of at most twice the limit), and the tangential restitutions of Chung and Ooi's
   tests 4 and 6 move by at most 0.003.  Both resets
   are continuous functions of the trial force, so neither makes the outcome jump.  Without a
   dashpot (the rolling spring) all three resets are the same.

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

import numpy as np

from .._jit import jit
from ..vec import axpy, cross, dot, scale, tangential_part

__all__ = ["spring_slider", "friction_senses", "spring_slider_reference", "friction_senses_reference", "follow_frame",
           "coulomb_slider", "follow_frame_reference", "coulomb_slider_reference", "constant_torque_rolling",
           "constant_torque_rolling_reference", "ROLLING_REST_RATE"]

#: rad/s: below this relative rolling rate the constant-torque rolling resistance exerts nothing
#: (:func:`constant_torque_rolling`); a sphere turning at it makes one turn in 200 years
ROLLING_REST_RATE = 1e-9


@jit
def spring_slider(xi, normal, twist, increment, rate, dt, k, k_old, gamma, limit):
    """Advance a spring-slider: elastic displacement ``xi`` in, new ``xi`` out.

    Parameters
    ----------
    xi : 3-tuple, elastic displacement (m) or rotation (rad) of the previous step (history)
    normal : 3-tuple, unit contact normal
    twist : float, rotation (rad) of the pair about the normal during the step
        (``pair_rotation . normal``): the stored vector turns with the pair
    increment : 3-tuple, relative displacement (m) or rotation (rad) during the step
    rate : 3-tuple, relative velocity (m/s) or angular velocity (rad/s) at the force time
    dt : float, s
    k : float, stiffness (> 0), N/m or N m/rad
    k_old : float, stiffness of the previous step (``k`` if constant; <= 0 for a new contact)
    gamma : float, viscous coefficient (>= 0), N s/m or N m s/rad
    limit : float, sliding limit of ``|f|`` (>= 0), N or N m

    Returns
    -------
    (f, xi_new, stored_energy, dissipation) : 3-tuple (N or N m), 3-tuple, J, J
    """
    old2 = dot(xi, xi)
    if old2 > 0.0:
        # rotate into the tangent plane keeping the length, and rescale for the stiffness change
        xi = tangential_part(axpy(twist, cross(normal, xi), xi), normal)
        new2 = dot(xi, xi)
        ratio = k_old / k if k_old > 0.0 else 1.0
        xi = scale(math.sqrt(old2 * ratio / new2), xi) if new2 > 0.0 else scale(0.0, xi)
    stored_old = 0.5 * k * dot(xi, xi)
    xi = axpy(1.0, increment, xi)
    f = axpy(k, xi, scale(gamma, rate))
    f2 = dot(f, f)
    if f2 > limit * limit:
        f = scale(limit / math.sqrt(f2), f)
        spring = axpy(-gamma, rate, f)  # what the dashpot does not carry
        s2 = dot(spring, spring)
        if s2 > limit * limit:  # the spring holds at most the sliding limit
            spring = scale(limit / math.sqrt(s2), spring)
        xi = scale(1.0 / k, spring)
        stored = 0.5 * k * dot(xi, xi)
        diss = dot(f, rate) * dt - (stored - stored_old)
    else:
        stored = 0.5 * k * dot(xi, xi)
        diss = gamma * dot(rate, rate) * dt
    return f, xi, stored, diss


@jit
def friction_senses(g, xi_t, xi_r, dt, f_n, k_t, k_t_old, gamma_t, mu, mu_r):
    """Sliding and (when ``mu_r > 0``) rolling resistance of a contact, as the built-in laws share them.

    Tangential: spring-slider with history ``xi_t`` of stiffness ``k_t`` (N/m; ``k_t_old`` the
    previous step's), viscosity ``gamma_t`` (N s/m), sliding at ``mu f_n``.  Rolling: spring-slider
    with history ``xi_r`` on the relative rotation, stiffness ``k_t R*^2`` (Iwashita and Oda), no
    viscosity, sliding at the torque ``mu_r R* f_n`` (``xi_r`` stays zero without rolling
    resistance).  ``g`` is the contact geometry, ``f_n`` (N) the normal force.

    Returns ``(tangential force on i, couple on i, new xi_t, new xi_r, stored energy, dissipation)``.
    """
    n = g.normal
    twist = dot(g.pair_rotation, n)
    f_t, xi_t, energy, diss = spring_slider(xi_t, n, twist, tangential_part(g.rel_displacement, n),
                                            tangential_part(g.rel_velocity, n), dt, k_t, k_t_old, gamma_t, mu * f_n)
    couple = (0.0, 0.0, 0.0)
    if mu_r > 0.0:
        r2 = g.radius * g.radius
        couple, xi_r, e_r, d_r = spring_slider(xi_r, n, twist, tangential_part(g.rel_rotation, n),
                                               tangential_part(g.rel_angular_velocity, n), dt, k_t * r2,
                                               k_t_old * r2, 0.0, mu_r * g.radius * f_n)
        energy += e_r
        diss += d_r
    return f_t, couple, xi_t, xi_r, energy, diss


def spring_slider_reference(xi, normal, twist, increment, rate, dt, k, k_old, gamma, limit):
    """Plain NumPy twin of :func:`spring_slider`; returns ``(f, xi_new, stored, dissipation)``."""
    xi = np.asarray(xi, dtype=float).copy()
    n = np.asarray(normal, dtype=float)
    rate = np.asarray(rate, dtype=float)
    increment = np.asarray(increment, dtype=float)
    old = np.linalg.norm(xi)
    if old > 0:
        xi = xi + twist * np.cross(n, xi)
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
        spring = f - gamma * rate
        if np.linalg.norm(spring) > limit:
            spring = spring * (limit / np.linalg.norm(spring))
        xi = spring / k
        stored = 0.5 * k * xi @ xi
        diss = f @ rate * dt - (stored - stored_old)
    else:
        stored = 0.5 * k * xi @ xi
        diss = gamma * rate @ rate * dt
    return f, xi, stored, diss


def friction_senses_reference(g: dict, hist, dt, f_n, k_t, k_t_old, gamma_t, mu, mu_r):
    """Plain NumPy twin of :func:`friction_senses`; ``hist`` is modified in place (a NumPy array)."""
    n = g["normal"]

    def tangential(v):
        v = np.asarray(v, dtype=float)
        return v - (v @ n) * n

    twist = g["pair_rotation"] @ n
    f_t, hist[0:3], energy, diss = spring_slider_reference(hist[0:3], n, twist, tangential(g["rel_displacement"]),
                                                            tangential(g["rel_velocity"]), dt, k_t, k_t_old,
                                                            gamma_t, mu * f_n)
    couple = np.zeros(3)
    if mu_r > 0:
        r2 = g["radius"] ** 2
        couple, hist[3:6], e_r, d_r = spring_slider_reference(hist[3:6], n, twist, tangential(g["rel_rotation"]),
                                                               tangential(g["rel_angular_velocity"]), dt, k_t * r2,
                                                               k_t_old * r2, 0.0, mu_r * g["radius"] * f_n)
        energy += e_r
        diss += d_r
    return f_t, couple, energy, diss


# ---------------------------------------------------------------------------------------------
# The spring-slider with static and dynamic limits (Luding's model, spec 001): one routine for the
# tangential (2-D), rolling (2-D) and twisting (1-D) senses.  Vectors are 3-tuples; a 2-D sense
# lives in the tangent plane, the 1-D twisting sense along the normal (``xi_w n``).


@jit
def follow_frame(xi, normal, twist):
    """Carry a tangent-plane vector into the current tangent plane: turn it with the pair about the
    normal by ``twist`` (rad, ``pair_rotation . normal``; to first order, the length is restored),
    project it, keep its length."""
    old2 = dot(xi, xi)
    if old2 == 0.0:
        return xi
    xi = tangential_part(axpy(twist, cross(normal, xi), xi), normal)
    new2 = dot(xi, xi)
    return scale(math.sqrt(old2 / new2), xi) if new2 > 0.0 else scale(0.0, xi)


@jit
def coulomb_slider(xi, increment, rate, dt, k, gamma, limit, dynamic_ratio):
    """One step of a spring-slider with a static and a dynamic Coulomb limit (spec 001).

    ``xi`` (3-tuple, m or rad) is the elastic displacement or rotation of the previous step, already
    carried into the current frame; ``increment`` the relative displacement or rotation of the step
    and ``rate`` the relative velocity or angular velocity (both of body ``j`` relative to ``i``,
    in the sense's subspace); ``k`` the stiffness (> 0, N/m or N m/rad), ``gamma`` the viscous
    coefficient (N s/m or N m s/rad), ``limit`` the static limit (>= 0, N or N m) and
    ``dynamic_ratio`` the dynamic/static ratio phi_d.

    Trial ``f = k xi + gamma rate`` with ``xi`` advanced by the increment (the force on ``i``).  If
    ``|f| <= limit`` the contact sticks; otherwise it slips: ``f`` is scaled to ``phi_d limit`` and
    the spring keeps the part the dashpot does not carry, ``xi = (f - gamma rate) / k``.

    Work: the dashpot dissipates ``gamma |rate|^2 dt``; the slip dissipates the work done on the
    spring over the step (trapezoid of its forces ``k xi`` at the two ends over the increment, the
    work the integrator's kinetic energy sees) minus the change of its stored energy
    ``k |xi|^2 / 2``: zero while sticking, force times slip in steady sliding.  (The spec's
    ``(|f_trial| + phi_d limit)(|f_trial| - phi_d limit) / (2k)`` agrees to first order in the
    increment but books an extra ``k |increment|^2 / 2`` per sliding step, energy that was never
    stored: with a zero limit it would dissipate energy while no force acts.)

    Returns ``(f, xi_new, stored, viscous_work, plastic_work)`` (stored = ``k |xi_new|^2 / 2``, J).
    """
    xi_old = xi
    xi = axpy(1.0, increment, xi)
    f = axpy(k, xi, scale(gamma, rate))
    viscous = gamma * dot(rate, rate) * dt
    f2 = dot(f, f)
    if f2 <= limit * limit:
        return f, xi, 0.5 * k * dot(xi, xi), viscous, 0.0
    slide = max(limit * dynamic_ratio, 0.0)
    f = scale(slide / math.sqrt(f2), f)
    xi = scale(1.0 / k, axpy(-gamma, rate, f))
    stored = 0.5 * k * dot(xi, xi)
    plastic = 0.5 * k * dot(xi_old, xi_old) + 0.5 * k * dot(axpy(1.0, xi, xi_old), increment) - stored
    return f, xi, stored, viscous, plastic


def coulomb_slider_reference(xi, increment, rate, dt, k, gamma, limit, dynamic_ratio):
    """Plain NumPy twin of :func:`coulomb_slider`."""
    xi_old = np.asarray(xi, dtype=float)
    increment = np.asarray(increment, dtype=float)
    xi = xi_old + increment
    rate = np.asarray(rate, dtype=float)
    f = k * xi + gamma * rate
    viscous = gamma * rate @ rate * dt
    size = np.linalg.norm(f)
    if size <= limit:
        return f, xi, 0.5 * k * xi @ xi, viscous, 0.0
    slide = max(limit * dynamic_ratio, 0.0)
    f = f / size * slide
    xi = (f - gamma * rate) / k
    stored = 0.5 * k * xi @ xi
    return f, xi, stored, viscous, 0.5 * k * xi_old @ xi_old + 0.5 * k * (xi_old + xi) @ increment - stored


def follow_frame_reference(xi, normal, twist):
    """Plain NumPy twin of :func:`follow_frame`."""
    xi = np.asarray(xi, dtype=float)
    n = np.asarray(normal, dtype=float)
    old = np.linalg.norm(xi)
    if old == 0:
        return xi.copy()
    xi = xi + twist * np.cross(n, xi)
    t = xi - (xi @ n) * n
    new = np.linalg.norm(t)
    return t * (old / new) if new > 0 else 0.0 * t


# ---------------------------------------------------------------------------------------------
# Constant-torque rolling resistance (Zhou et al. 1999; Ai et al. 2011, type A): no spring, no
# history; a torque of fixed size against the relative rolling.


@jit
def constant_torque_rolling(normal, rel_angular_velocity, rel_rotation, previous, limit):
    """Rolling resistance of constant size ``limit`` (N m) against the relative rolling.

    ``w``, the tangential part of ``rel_angular_velocity`` (``omega_j - omega_i``, rad/s) for the
    unit ``normal``, is the relative rolling rate.  The couple on ``i`` is ``limit w / |w|``: it
    turns ``i`` along with ``j``, i.e. it is ``-limit`` times the unit rolling velocity of ``i``
    relative to ``j``.  The model has no static torque: while ``|w| <= ROLLING_REST_RATE`` (1e-9
    rad/s, a threshold against the direction of round-off, not a physical scale) it exerts
    nothing, and a contact at rest under a moment below the limit rolls (in an explicit scheme the
    torque then flips with the sign of ``w`` from step to step: the chatter Ai et al. report).

    The work it takes over the step is what the bodies' kinetic energy sees: the mean of this
    couple and the last one (``previous``, N m, the history) times the relative rotation of the
    step (``rel_rotation``'s tangential part), the velocity-Verlet work of a force.  In steady
    rolling that is ``limit |w| dt``; in the chatter of a heap at rest, where the couple flips at
    every step, it is about zero (booking ``limit |w| dt`` there counted a dissipation that did not
    happen: ~1e-5 J/s in examples/angle_of_repose.py before issue 42).

    Returns ``(couple on i, dissipation)``: the couple (N m, 3-tuple, the next step's ``previous``)
    and its work over the step (J; nothing is stored).
    """
    w = tangential_part(rel_angular_velocity, normal)
    size = math.sqrt(dot(w, w))
    couple = (0.0, 0.0, 0.0)
    if size > ROLLING_REST_RATE and limit > 0.0:
        couple = scale(limit / size, w)
    turn = tangential_part(rel_rotation, normal)
    diss = 0.5 * (dot(couple, turn) + dot(previous, turn))
    return couple, diss


def constant_torque_rolling_reference(normal, rel_angular_velocity, rel_rotation, previous, limit):
    """Plain NumPy twin of :func:`constant_torque_rolling`; returns ``(couple, dissipation)``."""
    n = np.asarray(normal, dtype=float)
    w = np.asarray(rel_angular_velocity, dtype=float)
    w = w - (w @ n) * n
    size = np.linalg.norm(w)
    couple = limit * w / size if (size > ROLLING_REST_RATE and limit > 0) else np.zeros(3)
    turn = np.asarray(rel_rotation, dtype=float)
    turn = turn - (turn @ n) * n
    return couple, 0.5 * float((couple + np.asarray(previous, dtype=float)) @ turn)
