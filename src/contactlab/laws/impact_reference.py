"""Reference tools for the built-in laws' closed-form impacts (``closed_form_impact``).

A law's ``closed_form_impact(material, radius, speed)`` gives the validation battery
(:func:`contactlab.validate`) the restitution and duration of a sphere hitting a plane wall of the
same material; the laws build them from these pieces, restated independently of the compiled laws
(plain SciPy/NumPy, nothing compiled):

* :func:`sphere_mass`, the mass of a solid sphere;
* :func:`hertz_moduli`, Hertz's and Mindlin's effective moduli (Johnson), restated here rather
  than taken from a law's own ``effective_moduli``: it is a reference;
* :func:`ode_impact`, the 1-DOF equation of motion of a normal impact for a given force law,
  integrated by SciPy.

This module sits in the laws layer: the laws may import it; it imports nothing of contactlab but
the :class:`~contactlab.materials.Material` type.
"""
from __future__ import annotations

import math

from scipy.integrate import solve_ivp

from ..materials import Material

__all__ = ["sphere_mass", "hertz_moduli", "ode_impact"]


def sphere_mass(material: Material, radius: float) -> float:
    """Mass (kg) of a solid sphere of ``radius`` (m) and ``material``."""
    return 4.0 / 3.0 * math.pi * radius**3 * material.density


def hertz_moduli(a: Material, b: Material) -> tuple[float, float]:
    """Hertz's effective modulus E* and Mindlin's G* (Pa) of two materials (Johnson, ch. 4 and 7)."""
    e_star = 1.0 / ((1.0 - a.poisson**2) / a.young + (1.0 - b.poisson**2) / b.young)
    g_star = 1.0 / ((2.0 - a.poisson) * 2.0 * (1.0 + a.poisson) / a.young
                    + (2.0 - b.poisson) * 2.0 * (1.0 + b.poisson) / b.young)
    return e_star, g_star


def ode_impact(force, mass: float, speed: float, t_scale: float) -> dict:
    """Normal impact of a body of ``mass`` at ``speed`` from the 1-DOF equation of motion
    ``m d'' = -force(d, d', d_max)`` (``d`` the overlap, ``d_max`` the largest so far), integrated by
    SciPy (DOP853, rtol 1e-10) from touch until the overlap is zero again: restitution
    (separation over approach speed) and duration; ``captured`` if it never separates."""
    d_scale = speed * t_scale
    opts = dict(method="DOP853", rtol=1e-10, atol=[1e-13 * d_scale, 1e-13 * speed], max_step=t_scale / 400.0)

    def turn(_t, y):
        return y[1]

    turn.terminal, turn.direction = True, -1
    load = solve_ivp(lambda _t, y: (y[1], -force(y[0], y[1], y[0]) / mass), (0.0, 50.0 * t_scale), (0.0, speed),
                     events=turn, **opts)
    if load.status != 1:
        raise RuntimeError("the reference impact did not reach its largest overlap")
    t1 = float(load.t_events[0][0])
    d_max = float(load.y_events[0][0][0])

    def out(_t, y):
        return y[0]

    out.terminal, out.direction = True, -1
    unload = solve_ivp(lambda _t, y: (y[1], -force(y[0], y[1], d_max) / mass), (0.0, 200.0 * t_scale),
                       (d_max, 0.0), events=out, **opts)
    if unload.status != 1:
        return {"restitution": 0.0, "duration": math.inf, "captured": True, "max_overlap": d_max}
    return {"restitution": float(-unload.y_events[0][0][1] / speed), "duration": t1 + float(unload.t_events[0][0]),
            "captured": False, "max_overlap": d_max}
