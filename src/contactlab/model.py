"""The frozen model: everything about the bodies that does not change during a run.

Arrays are read-only after :meth:`contactlab.Scene.finalize`.  Ownership of each array is in its
name's docstring: *per sphere* arrays have one row per sphere in the order the spheres were added,
*per wall* arrays one row per wall, *per material* one row per material.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .materials import Material

__all__ = ["Model"]


@dataclass(frozen=True, eq=False)
class Model:
    """Frozen description of spheres, walls and materials.

    Attributes
    ----------
    radius : (N,) float64, m, per sphere
    mass : (N,) float64, kg, per sphere (its own mass, also for fixed spheres)
    inv_mass : (N,) float64, 1/kg, per sphere; 0 for fixed (kinematic) spheres
    inertia : (N,) float64, kg m^2, per sphere: 2/5 m r^2 (solid sphere)
    inv_inertia : (N,) float64, 1/(kg m^2), per sphere; 0 for fixed spheres
    material : (N,) uint16, per sphere, index into ``materials``
    fixed : (N,) bool, per sphere: kinematic body that moves at its prescribed velocity
    wall_normal : (W, 3) float64, unit, per wall: points into the half-space of the spheres
    wall_material : (W,) uint16, per wall, index into ``materials``
    materials : tuple of Material, per material
    gravity : (3,) float64, m/s^2
    """

    radius: np.ndarray
    mass: np.ndarray
    inv_mass: np.ndarray
    inertia: np.ndarray
    inv_inertia: np.ndarray
    material: np.ndarray
    fixed: np.ndarray
    wall_normal: np.ndarray
    wall_material: np.ndarray
    materials: tuple[Material, ...]
    gravity: np.ndarray

    def __post_init__(self):
        for name in ("radius", "mass", "inv_mass", "inertia", "inv_inertia", "material", "fixed",
                     "wall_normal", "wall_material", "gravity"):
            getattr(self, name).setflags(write=False)

    @property
    def n_spheres(self) -> int:
        """Number of spheres N."""
        return int(self.radius.shape[0])

    @property
    def n_walls(self) -> int:
        """Number of walls W."""
        return int(self.wall_normal.shape[0])

    @property
    def n_materials(self) -> int:
        return len(self.materials)
