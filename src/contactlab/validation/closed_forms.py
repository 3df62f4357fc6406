"""Closed-form references for single-contact problems (used by the validation tests and drivers)."""
from __future__ import annotations

import math

from scipy.special import gamma

__all__ = ["hertz_impact", "linear_impact", "oblique_impact_sliding", "incline_acceleration"]


def hertz_impact(e_star: float, radius: float, mass: float, speed: float) -> dict:
    """Undamped Hertzian impact (Hertz 1882; e.g. Johnson, *Contact Mechanics*, sec. 11.4).

    ``F = K d^(3/2)`` with ``K = 4/3 E* sqrt(R*)``.  Energy conservation gives the maximum overlap
    ``d_max = (5 m* v^2 / (4 K))^(2/5)``, the maximum force ``K d_max^(3/2)`` and the duration

        t_c = 2 (d_max / v) * integral_0^1 du / sqrt(1 - u^(5/2))
            = 2 (d_max / v) * (2/5) B(2/5, 1/2)  ~= 2.9432 d_max / v.

    Parameters: effective modulus ``e_star`` (Pa), radius ``radius`` (m) and mass ``mass`` (kg),
    approach speed ``speed`` (m/s).  Returns max_overlap (m), max_force (N), duration (s).
    """
    k = 4.0 / 3.0 * e_star * math.sqrt(radius)
    d_max = (5.0 * mass * speed**2 / (4.0 * k)) ** 0.4
    integral = 0.4 * gamma(0.4) * gamma(0.5) / gamma(0.9)
    return {"max_overlap": d_max, "max_force": k * d_max**1.5, "duration": 2.0 * d_max / speed * integral}


def linear_impact(stiffness: float, mass: float, speed: float) -> dict:
    """Undamped linear-spring impact: ``d_max = v / w``, ``F_max = k d_max``, ``t_c = pi / w``,
    ``w = sqrt(k / m*)``."""
    w = math.sqrt(stiffness / mass)
    return {"max_overlap": speed / w, "max_force": stiffness * speed / w, "duration": math.pi / w}


def oblique_impact_sliding(normal_speed: float, slip_speed: float, restitution: float, friction: float,
                           radius: float) -> dict:
    """Rigid-body Coulomb theory of a solid sphere hitting a fixed plane in gross sliding.

    The tangential impulse is ``mu (1 + e) m v_n`` against the contact-point slip (Maw, Barber and
    Fawcett 1976; Brach 1988), so the centre's tangential velocity drops by ``mu (1 + e) v_n`` and
    the spin (about the axis ``n x t``) changes by ``5/2 mu (1 + e) v_n / R`` in the sense that
    reduces the slip.  Valid while the slip does not stop during the impact:
    ``slip > 7/2 mu (1 + e) v_n``.

    Returns the changes ``delta_tangential_velocity`` (m/s, negative: along the slip) and
    ``delta_spin`` (rad/s), and ``sliding`` (whether the gross-sliding assumption holds).
    """
    impulse = friction * (1.0 + restitution) * normal_speed
    return {
        "delta_tangential_velocity": -impulse,
        "delta_spin": 2.5 * impulse / radius,
        "sliding": slip_speed > 3.5 * impulse,
    }


def incline_acceleration(gravity: float, angle: float, friction: float) -> dict:
    """Acceleration of a solid sphere released on an incline of ``angle`` (rad).

    Rolls without slipping, ``a = 5/7 g sin(angle)``, when ``friction >= 2/7 tan(angle)``; otherwise
    slides with ``a = g (sin(angle) - mu cos(angle))``.
    """
    if friction >= 2.0 / 7.0 * math.tan(angle):
        return {"acceleration": 5.0 / 7.0 * gravity * math.sin(angle), "rolling": True}
    return {"acceleration": gravity * (math.sin(angle) - friction * math.cos(angle)), "rolling": False}
