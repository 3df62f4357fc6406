"""A 2-D settling pile for comparing particle DDA with the explicit engine (tests/test_dda.py and
benchmarks/dda_pile.py).

A loose lattice of bidisperse disks (radii 0.8-1.0 x ``radius``, thickness ``radius``, E = 1 MPa)
above a floor between two side walls; the packing is measured as the area fraction of the band
from ``3 radius`` above the floor to 60 % of the pile's height, with exact body-strip
intersections (no centre counting), of the bodies as they are (DDA's disks strain).
"""
from __future__ import annotations

import numpy as np

import contactlab as cl

__all__ = ["pile_scene", "area_below", "band_fraction", "explicit_law"]


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


def area_below(yc, shapes, h):
    """Area (m^2) of each ellipse below the height ``h``: centre height ``yc`` (n,), shape matrix
    ``shapes`` (n, 3) as ``(Mxx, Myy, Mxy)``, m^2 (the body is ``X^T M^-1 X <= 1``; a disk of
    radius r: ``(r^2, r^2, 0)``).  With ``M = U U^T``, ``U`` upper triangular, the map ``X = U u``
    keeps horizontal lines horizontal, so the cut is a unit disk's, cut at
    ``(h - yc) / sqrt(Myy)``, times ``det U = sqrt(det M)``."""
    mxx, myy, mxy = shapes[:, 0], shapes[:, 1], shapes[:, 2]
    d = np.clip((h - yc) / np.sqrt(myy), -1.0, 1.0)
    return np.sqrt(mxx * myy - mxy * mxy) * (d * np.sqrt(1.0 - d * d) + np.arcsin(d) + 0.5 * np.pi)


def band_fraction(positions, radii, width, radius, shapes=None) -> float:
    """Area fraction of the band ``3 radius <= y <= 0.6 top`` of the pile (exact intersections).

    ``shapes`` (n, 3): the bodies' current shape matrices (``DDA.shape_matrices``: DDA's disks
    strain, and under the pile's weight their areas shrink by a few per cent at the bottom of a
    tall pile); by default undeformed disks of ``radii``.  The fraction is of the bodies' areas as
    they are, the solid fraction."""
    if shapes is None:
        shapes = np.column_stack([radii * radii, radii * radii, np.zeros_like(radii)])
    top = float(np.max(positions[:, 1] + np.sqrt(shapes[:, 1])))
    y0, y1 = 3.0 * radius, 0.6 * top
    area = area_below(positions[:, 1], shapes, y1) - area_below(positions[:, 1], shapes, y0)
    return float(area.sum() / (width * (y1 - y0)))
