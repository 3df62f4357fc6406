"""Built-in slot laws: the pieces :class:`~contactlab.laws.composite.Contact` assembles a model from.

They are written with :func:`~contactlab.laws.define.contact_law`, exactly as a user writes a law,
so a user's normal law mixes with the built-in friction (and the other way round)::

    model = cl.models.Contact(normal=my_normal_law(...), damping=cl.parts.viscous_damping(coefficient=0.1),
                              tangential=cl.parts.coulomb_friction(stiffness=2e3, friction=0.5))

===========================  ===========  ============================================================
law                          slot         force (N) / couple (N m)
===========================  ===========  ============================================================
``hooke``                    normal       ``k delta``
``hertz``                    normal       ``4/3 E* sqrt(R*) delta^(3/2)`` (E* from the two materials)
``viscous_damping``          damping      ``c d'``
``hunt_crossley_damping``    damping      ``3/2 alpha F_el d'`` (Hunt and Crossley 1975)
``coulomb_friction``         tangential   spring-slider ``k_t xi + gamma xi'``, ``|F_t| <= mu F_n``
``rolling_resistance``       rolling      spring-slider on the rolling rotation, ``|M_r| <= mu_r R* F_n``
``constant_torque_rolling``  rolling      ``mu_r R* F_n`` against the relative rolling (no spring)
``twisting_resistance``      twisting     spring-slider on the twist, ``|M_t| <= mu_t R* F_n``
===========================  ===========  ============================================================

``d'`` is the overlap rate (positive while approaching), ``F_n`` the normal force (elastic plus
damping; friction limits use ``max(F_n, 0)``).  Damping never makes a repulsive elastic force
attractive: the damping force is clipped at ``-F_el`` when ``F_el >= 0`` (the contact lets go
instead of pulling, as in the built-in linear spring-dashpot).  Springs follow the contact frame
and keep an elastic displacement when sliding: the part of the sliding force that the dashpot does
not carry, at most the sliding limit (LAMMPS's reset, capped; see :mod:`contactlab.laws.springs`).
``rolling_resistance`` and ``twisting_resistance`` have no dashpot: their sliding springs carry
the whole limit.
"""
from __future__ import annotations

import math

from ..materials import Material
from ..vec import dot, tangential_part
from .base import HistoryField, Parameter
from .define import contact_law
from .springs import constant_torque_rolling as _constant_torque, spring_slider

__all__ = ["hooke", "hertz", "viscous_damping", "hunt_crossley_damping", "coulomb_friction", "rolling_resistance",
           "constant_torque_rolling", "twisting_resistance"]


@contact_law("normal", trusted=True, parameters=[
    Parameter("stiffness", "N/m", "normal stiffness k", None, 0.0, math.inf, False)])
def hooke(g, p, h, dt):
    """Linear elastic normal force ``k delta`` (no force across a gap)."""
    delta = g.overlap
    if delta <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return p.stiffness * delta, 0.5 * p.stiffness * delta * delta, 0.0, True, ()


def _effective_modulus(values, a: Material, b: Material):
    return {"e_star": 1.0 / ((1.0 - a.poisson**2) / a.young + (1.0 - b.poisson**2) / b.young)}


@contact_law("normal", trusted=True, pair=_effective_modulus, pair_fields=("e_star",))
def hertz(g, p, h, dt):
    """Hertz's elastic normal force ``4/3 E* sqrt(R*) delta^(3/2)``, ``1/E* = sum (1 - nu^2)/E``."""
    delta = g.overlap
    if delta <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    f = 4.0 / 3.0 * p.e_star * math.sqrt(g.radius * delta) * delta
    return f, 0.4 * f * delta, 0.0, True, ()


@contact_law("damping", trusted=True, properties={"viscous_at_touch": True}, parameters=[
    Parameter("coefficient", "N s/m", "viscous coefficient c", None, 0.0)])
def viscous_damping(g, p, h, dt, elastic_force):
    """Linear dashpot ``c d'`` along the normal."""
    n = g.normal
    f = -p.coefficient * dot(g.rel_velocity, n)
    if elastic_force >= 0.0 and elastic_force + f < 0.0:
        f = -elastic_force
    return f, ()


@contact_law("damping", trusted=True, parameters=[
    Parameter("alpha", "s/m", "Hunt-Crossley damping factor (about (1 - e) / v_impact)", None, 0.0)])
def hunt_crossley_damping(g, p, h, dt, elastic_force):
    """Hunt and Crossley's damping ``3/2 alpha F_el d'``: proportional to the elastic force."""
    n = g.normal
    f = -1.5 * p.alpha * max(elastic_force, 0.0) * dot(g.rel_velocity, n)
    if elastic_force >= 0.0 and elastic_force + f < 0.0:
        f = -elastic_force
    return f, ()


@contact_law("tangential", trusted=True, properties=lambda values: {"sliding_friction": values["friction"]},
             parameters=[
    Parameter("stiffness", "N/m", "tangential stiffness k_t", None, 0.0, math.inf, False),
    Parameter("friction", "-", "Coulomb friction coefficient mu", None, 0.0),
    Parameter("damping", "N s/m", "tangential viscous coefficient", 0.0, 0.0)],
    history=[HistoryField("displacement", 3, "m", "elastic tangential displacement xi")])
def coulomb_friction(g, p, h, dt, normal_force):
    """Spring-slider: ``F_t = k_t xi + gamma xi'`` while ``|F_t| <= mu F_n``, sliding at ``mu F_n``
    (the spring then keeps ``k_t xi = F_t - gamma xi'``, at most ``mu F_n``)."""
    n = g.normal
    f, xi, stored, diss = spring_slider(h.displacement, n, dot(g.pair_rotation, n), tangential_part(g.rel_displacement, n),
                                        tangential_part(g.rel_velocity, n), dt, p.stiffness, p.stiffness, p.damping,
                                        p.friction * max(normal_force, 0.0))
    return f, stored, diss, (xi,)


@contact_law("rolling", trusted=True, properties={"rolling_resistance": True}, parameters=[
    Parameter("stiffness", "N m/rad", "rolling stiffness k_r", None, 0.0, math.inf, False),
    Parameter("friction", "-", "rolling friction coefficient mu_r (torque limit mu_r R* F_n)", None, 0.0)],
    history=[HistoryField("rotation", 3, "rad", "elastic rolling rotation")])
def rolling_resistance(g, p, h, dt, normal_force):
    """Elastic-plastic rolling resistance on the tangential part of the relative rotation."""
    n = g.normal
    m, theta, stored, diss = spring_slider(h.rotation, n, dot(g.pair_rotation, n), tangential_part(g.rel_rotation, n),
                                           tangential_part(g.rel_angular_velocity, n), dt, p.stiffness, p.stiffness,
                                           0.0, p.friction * g.radius * max(normal_force, 0.0))
    return m, stored, diss, (theta,)


@contact_law("rolling", trusted=True, properties={"rolling_resistance": True}, parameters=[
    Parameter("friction", "-", "rolling friction coefficient mu_r (torque mu_r R* F_n)", None, 0.0)],
    history=[HistoryField("couple", 3, "N m", "the couple of the last step (the work of a step is booked with the "
                                              "mean of two)")])
def constant_torque_rolling(g, p, h, dt, normal_force):
    """Constant-torque rolling resistance: ``M_r = mu_r R* F_n w / |w|`` on ``i`` (Zhou et al. 1999,
    Physica A 269: 536; Ai, Chen, Rotter and Ooi 2011, Powder Technol. 206: 269, their type A).

    ``w`` is the tangential part of ``omega_j - omega_i`` (the record's ``rel_angular_velocity``):
    the torque opposes the rolling of ``i`` relative to ``j``.  Zhou et al.'s coefficient is a
    length ``mu_r,Zhou`` (torque ``mu_r,Zhou F_n``); here, as for :func:`rolling_resistance`, it is
    dimensionless and the length is ``mu_r R*``: ``mu_r d/4`` between equal spheres of diameter
    ``d``, ``mu_r d/2`` against a wall.  No spring: the model has no static torque (the point of
    comparing it with :func:`rolling_resistance`, which holds any moment below its limit without
    rolling); below ``|w| = 1e-9`` rad/s (``springs.ROLLING_REST_RATE``, a guard against the
    direction of round-off) it exerts nothing.  Dissipation: the mean of this couple and the last
    one (the history) times the step's relative rotation, ``mu_r R* F_n |w| dt`` in steady rolling
    (:func:`~contactlab.laws.springs.constant_torque_rolling`).
    """
    m, diss = _constant_torque(g.normal, g.rel_angular_velocity, g.rel_rotation, h.couple,
                               p.friction * g.radius * max(normal_force, 0.0))
    return m, 0.0, diss, (m,)


@contact_law("twisting", trusted=True, parameters=[
    Parameter("stiffness", "N m/rad", "twisting stiffness k_w", None, 0.0, math.inf, False),
    Parameter("friction", "-", "twisting friction coefficient mu_t (torque limit mu_t R* F_n)", None, 0.0)],
    history=[HistoryField("twist", 1, "rad", "elastic twist about the normal")])
def twisting_resistance(g, p, h, dt, normal_force):
    """Elastic-plastic resistance to the relative rotation about the normal."""
    n = g.normal
    k = p.stiffness
    step = dot(g.rel_rotation, n)
    old = h.twist
    twist = old + step
    m = k * twist
    limit = p.friction * g.radius * max(normal_force, 0.0)
    diss = 0.0
    if abs(m) > limit:
        m = math.copysign(limit, m)
        twist = m / k
        # work on the spring over the step (trapezoid) minus the change of its stored energy
        diss = 0.5 * k * (old + twist) * step - 0.5 * k * (twist * twist - old * old)
    return (m * n[0], m * n[1], m * n[2]), 0.5 * k * twist * twist, diss, (twist,)
