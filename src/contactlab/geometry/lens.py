"""Closed-form overlap volumes of spheres: the lens of two spheres and the cap cut by a plane.

They fill the record's ``contact_volume`` and ``contact_area`` (``d volume / d overlap``) for
sphere pairs, so that the volume-based energy-conserving law works on spheres too.
"""
from __future__ import annotations

import math

from .._jit import jit

__all__ = ["sphere_sphere_lens", "sphere_halfspace_cap"]


@jit
def sphere_sphere_lens(ri, rj, d):
    """Volume (m^3) common to spheres of radii ``ri``, ``rj`` (m) with centres ``d`` apart, and
    the area (m^2) of the disc where their surfaces meet (``-dV/dd``).  ``(0, 0)`` apart; when one
    sphere lies inside the other, the smaller one's volume and 0."""
    s = ri + rj
    if d >= s:
        return 0.0, 0.0
    if d <= abs(ri - rj):
        r = min(ri, rj)
        return 4.0 / 3.0 * math.pi * r * r * r, 0.0
    g = s - d
    volume = math.pi * g * g * (d * d + 2.0 * d * s - 3.0 * (ri - rj) * (ri - rj)) / (12.0 * d)
    q = d * d - rj * rj + ri * ri
    a2 = (4.0 * d * d * ri * ri - q * q) / (4.0 * d * d)
    return volume, math.pi * max(a2, 0.0)


@jit
def sphere_halfspace_cap(r, height):
    """Volume (m^3) of a sphere of radius ``r`` below a plane its centre is ``height`` (m) above,
    and the area (m^2) of the cut disc (``-dV/dheight``).  ``(0, 0)`` when ``height >= r``."""
    if height >= r:
        return 0.0, 0.0
    if height <= -r:
        return 4.0 / 3.0 * math.pi * r * r * r, 0.0
    depth = r - height
    return math.pi * depth * depth * (3.0 * r - depth) / 3.0, math.pi * (r * r - height * height)
