"""Sphere builder: validates and collects spheres before they are frozen into the model."""
from __future__ import annotations

import numpy as np

from .._arguments import as_positive, as_positive_array, as_vec3, as_vec3_array
from ..errors import InputError
from ..materials import Material

__all__ = ["SphereBuilder"]


class SphereBuilder:
    """Growable per-body lists (chunks of arrays), turned into arrays by :meth:`arrays`.

    Spheres and every other shape share one index space in the order they were added.  Per body:
    position (centre of mass), radius (the bounding radius for a non-sphere), velocity, angular
    velocity, material, fixed flag, shape kind, orientation quaternion, mass and principal moments
    (NaN: computed from the density), contact radius and shape block (see
    :mod:`contactlab.scene.shapes`).
    """

    def __init__(self):
        self._chunks: list[dict] = []
        self._blocks: list = []
        self.count = 0

    def add(self, positions, radii, material_id: int, velocities, angular_velocities, fixed: bool,
            body=None) -> np.ndarray:
        """Add N spheres (``body`` None; arrays (N, 3), (N,), (N, 3), (N, 3)) or the one
        non-spherical ``body`` (:class:`contactlab.scene.shapes.Body`, arrays of one row); returns
        their indices."""
        n = positions.shape[0]
        if body is None:
            # what every sphere of the chunk shares is held once, as read-only broadcast views (the
            # scene of 1e6 spheres is ~70 B per sphere smaller; arrays() makes the full arrays)
            return self._add_chunk(positions, radii, material_id, velocities, angular_velocities, fixed, 0, None,
                                   _same(np.nan, (n,)), _same(np.nan, (n, 3)),
                                   _same(np.array([1.0, 0.0, 0.0, 0.0]), (n, 4)), radii)
        return self.add_shapes(positions, radii, material_id, velocities, angular_velocities, fixed, body.kind,
                               body.block[None, :], np.array([body.mass]), body.principal_inertia[None, :],
                               body.orientation[None, :], np.array([body.contact_radius]))

    def add_shapes(self, positions, radii, material_id: int, velocities, angular_velocities, fixed: bool, kind: int,
                   blocks, mass, principal_inertia, orientations, contact_radius) -> np.ndarray:
        """Add N bodies of one non-spherical ``kind`` whose shape blocks have one length: ``blocks``
        (N, L) one row per body, ``mass`` (N,) kg, ``principal_inertia`` (N, 3) kg m^2,
        ``orientations`` (N, 4) unit quaternions, ``contact_radius`` (N,) m, the rest as for
        spheres (``radii``: the bounding radii); returns their indices."""
        return self._add_chunk(positions, radii, material_id, velocities, angular_velocities, fixed, kind,
                               np.asarray(blocks, dtype=np.float64), mass, principal_inertia, orientations,
                               contact_radius)

    def _add_chunk(self, positions, radii, material_id, velocities, angular_velocities, fixed, kind, blocks, mass,
                   principal_inertia, orientations, contact_radius) -> np.ndarray:
        n = positions.shape[0]
        chunk = dict(
            position=positions,
            radius=radii,
            velocity=velocities,
            angular_velocity=angular_velocities,
            material=_same(np.uint16(material_id), (n,)),
            fixed=_same(np.bool_(fixed), (n,)),
            kind=_same(np.uint8(kind), (n,)),
            orientation=orientations,
            mass=mass,
            principal_inertia=principal_inertia,
            contact_radius=contact_radius,
        )
        self._chunks.append(chunk)
        self._blocks.append(blocks)
        first = self.count
        self.count += n
        return np.arange(first, first + n)

    def shape_blocks(self) -> list:
        """Per chunk: ``None`` (spheres, whose block is their radius) or the (N, L) shape blocks of
        its bodies, one row per body."""
        return list(self._blocks)

    def chunk_sizes(self) -> list[int]:
        return [len(c["radius"]) for c in self._chunks]

    def arrays(self) -> dict[str, np.ndarray]:
        """Concatenated per-body arrays (copies)."""
        if not self._chunks:
            return dict(
                position=np.zeros((0, 3)),
                radius=np.zeros(0),
                velocity=np.zeros((0, 3)),
                angular_velocity=np.zeros((0, 3)),
                material=np.zeros(0, dtype=np.uint16),
                fixed=np.zeros(0, dtype=bool),
                kind=np.zeros(0, dtype=np.uint8),
                orientation=np.zeros((0, 4)),
                mass=np.zeros(0),
                principal_inertia=np.zeros((0, 3)),
                contact_radius=np.zeros(0),
            )
        return {key: np.concatenate([c[key] for c in self._chunks]) for key in self._chunks[0]}


def _same(value, shape) -> np.ndarray:
    """A read-only array of ``shape`` whose every row is ``value`` (no memory per row)."""
    return np.broadcast_to(value, shape)


def check_one_sphere(position, radius, velocity, angular_velocity):
    """Validate the arguments of ``Scene.add_sphere``; returns arrays of shape (1, 3) / (1,)."""
    p = as_vec3("position", position, unit="m")
    r = as_positive("radius", radius, "m")
    v = as_vec3("velocity", velocity, unit="m/s")
    w = as_vec3("angular_velocity", angular_velocity, unit="rad/s")
    return p[None, :], np.array([r]), v[None, :], w[None, :]


def check_many_spheres(positions, radii, velocities, angular_velocities):
    """Validate the arguments of ``Scene.add_spheres``; returns (N,3), (N,), (N,3), (N,3) arrays."""
    p = as_vec3_array("positions", positions, unit="m")
    n = p.shape[0]
    r = as_positive_array("radii", radii, n, "m")
    v = np.zeros((n, 3)) if velocities is None else as_vec3_array("velocities", velocities, n, unit="m/s")
    w = np.zeros((n, 3)) if angular_velocities is None else as_vec3_array("angular_velocities", angular_velocities, n, unit="rad/s")
    return p, r, v, w


def check_material(material) -> Material:
    if not isinstance(material, Material):
        raise InputError(f"material must be a contactlab.Material, got {type(material).__name__}: {material!r}")
    return material
