"""Sphere builder: validates and collects spheres before they are frozen into the model."""
from __future__ import annotations

import numpy as np

from .._validate import as_positive, as_positive_array, as_vec3, as_vec3_array
from ..errors import InputError
from ..materials import Material

__all__ = ["SphereBuilder"]


class SphereBuilder:
    """Growable per-sphere lists (chunks of arrays), turned into arrays by :meth:`arrays`."""

    def __init__(self):
        self._chunks: list[dict] = []
        self.count = 0

    def add(self, positions, radii, material_id: int, velocities, angular_velocities, fixed: bool) -> np.ndarray:
        n = positions.shape[0]
        chunk = dict(
            position=positions,
            radius=radii,
            velocity=velocities,
            angular_velocity=angular_velocities,
            material=np.full(n, material_id, dtype=np.uint16),
            fixed=np.full(n, bool(fixed)),
        )
        self._chunks.append(chunk)
        first = self.count
        self.count += n
        return np.arange(first, first + n)

    def arrays(self) -> dict[str, np.ndarray]:
        """Concatenated per-sphere arrays (copies)."""
        if not self._chunks:
            return dict(
                position=np.zeros((0, 3)),
                radius=np.zeros(0),
                velocity=np.zeros((0, 3)),
                angular_velocity=np.zeros((0, 3)),
                material=np.zeros(0, dtype=np.uint16),
                fixed=np.zeros(0, dtype=bool),
            )
        return {key: np.concatenate([c[key] for c in self._chunks]) for key in self._chunks[0]}


def check_one_sphere(position, radius, velocity, angular_velocity):
    """Validate the arguments of ``Scene.add_sphere``; returns arrays of shape (1, 3) / (1,)."""
    p = as_vec3("position", position)
    r = as_positive("radius", radius, "m")
    v = as_vec3("velocity", velocity)
    w = as_vec3("angular_velocity", angular_velocity)
    return p[None, :], np.array([r]), v[None, :], w[None, :]


def check_many_spheres(positions, radii, velocities, angular_velocities):
    """Validate the arguments of ``Scene.add_spheres``; returns (N,3), (N,), (N,3), (N,3) arrays."""
    p = as_vec3_array("positions", positions)
    n = p.shape[0]
    r = as_positive_array("radii", radii, n, "m")
    v = np.zeros((n, 3)) if velocities is None else as_vec3_array("velocities", velocities, n)
    w = np.zeros((n, 3)) if angular_velocities is None else as_vec3_array("angular_velocities", angular_velocities, n)
    return p, r, v, w


def check_material(material) -> Material:
    if not isinstance(material, Material):
        raise InputError(f"material must be a contactlab.Material, got {type(material).__name__}: {material!r}")
    return material
