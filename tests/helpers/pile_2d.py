"""A 2-D settling pile for comparing particle DDA with the explicit engine (tests/test_dda.py and
benchmarks/dda_pile.py).

A loose lattice of bidisperse disks (radii 0.8-1.0 x ``radius``, thickness ``radius``, E = 1 MPa)
above a floor between two side walls; the packing is measured as the area fraction of the band
from ``3 radius`` above the floor to 60 % of the pile's height, with exact disk-strip
intersections (no centre counting).
"""
from __future__ import annotations

import numpy as np

import contactlab as cl

__all__ = ["pile_scene", "disk_area_below", "band_fraction", "explicit_law"]


def pile_scene(columns: int, rows: int, radius: float, seed: int):
    """Disks on a loose lattice (pitch 2.2 radius) above a floor between two side walls; returns
    ``(scene, radii (n,), material, width (m))``."""
    rng = np.random.default_rng(seed)
    stone = cl.Material(density=2500.0, young=1e6, poisson=0.25)
    scene = cl.Scene(dimension=2, gravity=(0.0, -9.81), thickness=radius)
    pitch = 2.2 * radius
    width = columns * pitch
    x, y = np.meshgrid(np.arange(columns), np.arange(rows))
    positions = np.column_stack([x.ravel(), y.ravel()]).astype(float) * pitch + 1.1 * radius
    positions[:, 0] += rng.uniform(-0.05, 0.05, len(positions)) * radius
    radii = rng.uniform(0.8, 1.0, len(positions)) * radius
    scene.add_disks(positions, radii, stone)
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=stone)
    scene.add_wall(point=(0.0, 0.0), normal=(1.0, 0.0), material=stone)
    scene.add_wall(point=(width, 0.0), normal=(-1.0, 0.0), material=stone)
    return scene, radii, stone, width


def explicit_law(material: cl.Material, radius: float, friction: float):
    """The explicit engine's law for the pile: a linear spring-dashpot whose normal stiffness is
    DDA's default penalty ``50 E t`` (t = radius), restitution 0.3."""
    return cl.models.LinearSpringDashpot(stiffness=50.0 * material.young * radius, restitution=0.3,
                                         friction=friction)


def disk_area_below(yc, r, h):
    """Area (m^2) of each disk (centre height ``yc``, radius ``r``) below the height ``h``."""
    d = np.clip((h - yc) / r, -1.0, 1.0)
    return r * r * (d * np.sqrt(1.0 - d * d) + np.arcsin(d) + 0.5 * np.pi)


def band_fraction(positions, radii, width, radius) -> float:
    """Area fraction of the band ``3 radius <= y <= 0.6 top`` of the pile (exact intersections)."""
    top = float(np.max(positions[:, 1] + radii))
    y0, y1 = 3.0 * radius, 0.6 * top
    area = disk_area_below(positions[:, 1], radii, y1) - disk_area_below(positions[:, 1], radii, y0)
    return float(area.sum() / (width * (y1 - y0)))
