"""Wall builder: infinite planes and cylinders, rigid, of infinite mass, optionally translating.

Plane walls and cylinder walls share one index space (in the order they were added): a cylinder
is a wall of kind :data:`~contactlab.geometry.sphere_cylinder.WALL_CYLINDER` whose point lies on its
axis and whose "normal" is the unit axis; its radius, side and ends are its row of ``shape``
(columns in :mod:`contactlab.geometry.sphere_cylinder`).
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_float_array, as_positive, as_unit_normal, as_vec3, fmt
from ..errors import InputError
from ..geometry.sphere_cylinder import N_WALL_SHAPE, WALL_CYLINDER, WALL_PLANE

__all__ = ["WallBuilder", "CYLINDER_SIDES"]

#: ``side`` of a cylinder wall -> the sign stored in its shape row
CYLINDER_SIDES = {"inside": 1.0, "outside": -1.0}


class WallBuilder:
    """Collects walls: a plane (point on the plane, unit normal pointing into the space of the
    spheres) or a cylinder (point on the axis, unit axis, radius, side, ends)."""

    def __init__(self):
        self.points: list[np.ndarray] = []
        self.normals: list[np.ndarray] = []
        self.velocities: list[np.ndarray] = []
        self.materials: list[int] = []
        self.kinds: list[int] = []
        self.shapes: list[np.ndarray] = []

    @property
    def count(self) -> int:
        return len(self.points)

    def _append(self, point, normal, material_id, velocity, kind, shape) -> int:
        self.points.append(point)
        self.normals.append(normal)
        self.velocities.append(velocity)
        self.materials.append(int(material_id))
        self.kinds.append(kind)
        self.shapes.append(shape)
        return self.count - 1

    def add(self, point, normal, material_id: int, velocity) -> int:
        p = as_vec3("wall point", point, unit="m")
        n = as_unit_normal("wall normal", normal)
        v = as_vec3("wall velocity", velocity, unit="m/s")
        return self._append(p, n, material_id, v, WALL_PLANE, np.zeros(N_WALL_SHAPE))

    def add_cylinder(self, axis_point, axis_direction, radius, material_id: int, side, length, velocity) -> int:
        """A cylinder wall (arguments as :meth:`contactlab.Scene.add_cylinder_wall`), validated."""
        p = as_vec3("axis_point", axis_point, unit="m")
        u = as_unit_normal("axis_direction", axis_direction)
        rc = as_positive("radius", radius, "m")
        if not isinstance(side, str) or side not in CYLINDER_SIDES:
            raise InputError(f"side must be 'inside' (the bodies inside the cylinder: a silo, a cell) or 'outside' "
                             f"(around it: a pillar), got {side!r}")
        if length is None:
            low, high = -math.inf, math.inf
        else:
            ends = as_float_array("length", length)
            if ends.shape != (2,) or np.isnan(ends).any():
                raise InputError(f"length must be None (an infinite cylinder) or 2 numbers (low, high): the ends, m "
                                 f"along axis_direction from axis_point (-inf or inf for no end), got {fmt(length)}")
            low, high = float(ends[0]), float(ends[1])
            if not low < high or low == math.inf or high == -math.inf:
                raise InputError(f"length = (low, high) needs low < high (m along the axis from axis_point), got "
                                 f"{fmt(length)}")
        v = as_vec3("velocity", velocity, unit="m/s")
        shape = np.array([rc, CYLINDER_SIDES[side], low, high])
        return self._append(p, u, material_id, v, WALL_CYLINDER, shape)

    def arrays(self) -> dict[str, np.ndarray]:
        w = self.count
        return dict(
            point=np.array(self.points, dtype=np.float64).reshape(w, 3),
            normal=np.array(self.normals, dtype=np.float64).reshape(w, 3),
            velocity=np.array(self.velocities, dtype=np.float64).reshape(w, 3),
            material=np.array(self.materials, dtype=np.uint16).reshape(w),
            kind=np.array(self.kinds, dtype=np.uint8).reshape(w),
            shape=np.array(self.shapes, dtype=np.float64).reshape(w, N_WALL_SHAPE),
        )
