"""Mesh walls: triangle surfaces read from STL or OBJ files (through trimesh) or given as arrays.

A mesh wall is rigid, of infinite mass, and moves kinematically: its reference point (by default
the centroid of its vertices) translates at ``velocity`` and the mesh turns about it at
``angular_velocity``.  Bodies touch its triangles from either side.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._arguments import as_positive, as_vec3
from ..errors import InputError

__all__ = ["MeshBuilder", "load_mesh"]


def load_mesh(source, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) float64 (m) and triangles (F, 3) int64 of a mesh file or of a
    ``(vertices, faces)`` pair.  Files: anything trimesh reads (STL ascii/binary, OBJ, PLY, ...);
    several bodies in one file are merged.  ``scale`` multiplies the coordinates (e.g. 1e-3 for a
    CAD file in millimetres)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise InputError(f"mesh file {str(path)!r} is a directory, not a mesh file (STL, OBJ, PLY, ...)")
        if not path.is_file():
            raise InputError(f"mesh file {str(path)!r} does not exist")
        try:
            import trimesh
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise InputError("reading mesh files needs the 'trimesh' package (pip install trimesh)") from exc
        kind = path.suffix.lstrip(".").upper() or "mesh"
        try:
            mesh = trimesh.load(str(path), force="mesh", process=False)
            vertices = np.asarray(mesh.vertices, dtype=np.float64)
            faces = np.asarray(mesh.faces, dtype=np.int64)
        except Exception as exc:  # trimesh raises many kinds (ValueError, KeyError, ImportError, ...)
            if isinstance(exc, ImportError):
                # trimesh's fallback (e.g. decoding junk as ASCII STL) needed a missing optional module:
                # the first error of the chain says what is wrong with the file
                while exc.__context__ is not None:
                    exc = exc.__context__
            raise InputError(f"cannot read mesh file {str(path)!r} as {kind} ({type(exc).__name__}: {exc}); is it a "
                             f"mesh file? contactlab reads what trimesh reads: STL (binary or ASCII), OBJ, PLY, OFF, "
                             f"GLB/GLTF, ...") from None
        if len(faces) == 0:
            raise InputError(f"mesh file {str(path)!r} holds no triangles ({len(vertices)} vertices read as {kind}): "
                             f"it is empty, or not a mesh in the {kind} format")
        label = repr(str(path))
    else:
        try:
            vertices, faces = source
        except (TypeError, ValueError):
            raise InputError("a mesh is a file path or a pair (vertices (V, 3), faces (F, 3)), got "
                             f"{type(source).__name__}") from None
        vertices = np.asarray(vertices, dtype=np.float64)
        faces = np.asarray(faces)
        label = "the given mesh"
    if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) < 3:
        raise InputError(f"{label}: vertices must be a (V, 3) array with V >= 3, got shape {vertices.shape}")
    if not np.all(np.isfinite(vertices)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(vertices), axis=1))[0])
        raise InputError(f"{label}: vertex {bad} is not finite: {vertices[bad].tolist()}")
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0 or not np.issubdtype(faces.dtype, np.integer):
        raise InputError(f"{label}: faces must be a non-empty (F, 3) integer array of vertex indices (triangles), "
                         f"got shape {faces.shape} and dtype {faces.dtype}")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise InputError(f"{label}: face vertex indices must lie in 0..{len(vertices) - 1}, got "
                         f"{int(faces.min())}..{int(faces.max())}")
    scale = as_positive("scale", scale)
    vertices = vertices * scale
    tri = vertices[faces]
    area2 = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    size = float(np.ptp(vertices, axis=0).max())
    keep = area2 > 1e-12 * size * size
    if not keep.any():
        raise InputError(f"{label}: every triangle has zero area")
    return vertices, faces[keep].astype(np.int64)


class MeshBuilder:
    """Collects mesh walls: triangles (global coordinates at the start), kinematics, material."""

    def __init__(self):
        self.triangles: list[np.ndarray] = []   # (F, 3, 3) per mesh
        self.centres: list[np.ndarray] = []
        self.velocities: list[np.ndarray] = []
        self.angular_velocities: list[np.ndarray] = []
        self.materials: list[int] = []
        self.names: list[str] = []

    @property
    def count(self) -> int:
        return len(self.triangles)

    def add(self, source, material_id: int, velocity, angular_velocity, centre, scale, name) -> int:
        vertices, faces = load_mesh(source, scale)
        v = as_vec3("velocity", velocity, unit="m/s")
        w = as_vec3("angular_velocity", angular_velocity, unit="rad/s")
        c = vertices.mean(axis=0) if centre is None else as_vec3("centre", centre, unit="m")
        self.triangles.append(vertices[faces])
        self.centres.append(c)
        self.velocities.append(v)
        self.angular_velocities.append(w)
        self.materials.append(int(material_id))
        if name is None:
            name = Path(source).stem if isinstance(source, (str, os.PathLike)) else f"mesh{self.count - 1}"
        self.names.append(str(name))
        return self.count - 1
