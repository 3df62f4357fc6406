"""Wall builder: infinite planes, rigid, of infinite mass, optionally translating."""
from __future__ import annotations

import numpy as np

from .._arguments import as_unit_normal, as_vec3

__all__ = ["WallBuilder"]


class WallBuilder:
    """Collects walls (point on the plane, unit normal pointing into the space of the spheres)."""

    def __init__(self):
        self.points: list[np.ndarray] = []
        self.normals: list[np.ndarray] = []
        self.velocities: list[np.ndarray] = []
        self.materials: list[int] = []

    @property
    def count(self) -> int:
        return len(self.points)

    def add(self, point, normal, material_id: int, velocity) -> int:
        p = as_vec3("wall point", point)
        n = as_unit_normal("wall normal", normal)
        v = as_vec3("wall velocity", velocity)
        self.points.append(p)
        self.normals.append(n)
        self.velocities.append(v)
        self.materials.append(int(material_id))
        return self.count - 1

    def arrays(self) -> dict[str, np.ndarray]:
        w = self.count
        return dict(
            point=np.array(self.points, dtype=np.float64).reshape(w, 3),
            normal=np.array(self.normals, dtype=np.float64).reshape(w, 3),
            velocity=np.array(self.velocities, dtype=np.float64).reshape(w, 3),
            material=np.array(self.materials, dtype=np.uint16).reshape(w),
        )
