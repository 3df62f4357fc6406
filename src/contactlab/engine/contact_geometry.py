"""The contact geometry of the table's pairs at the last evaluation: stored, or recomputed.

A table of spheres and plane walls without servo control stores no geometry columns (see
:func:`contactlab.engine.layout.out_columns`): the normal, overlap and contact point of its pairs
are recomputed here from the positions, with the arithmetic of the narrow phases
(:func:`~contactlab.geometry.sphere_sphere.sphere_sphere` and
:func:`~contactlab.geometry.sphere_wall.sphere_wall`) operation for operation, in the same order.
The kernels compile without fast-math (no fused multiply-add, no reassociation) and NumPy's
square root and division are correctly rounded like theirs, so the result is the kernel's bit for
bit.  The positions are those of the last evaluation: a step ends with the forces of its own
positions, and so does every run.

Every other table keeps the columns the kernel writes: shapes, mesh triangles, cylinder walls, a
periodic cell (the kernel takes the minimum image), servo-controlled walls or meshes (they read the
columns at every step), and scenes of at most ``layout.SWEEP_BLOCK`` bodies (see there).
"""
from __future__ import annotations

import numpy as np

from .layout import ACTIVE, N_OUT, OUT_NORMAL, OUT_OVERLAP, OUT_POINT

__all__ = ["stored", "pair_geometry", "sphere_sphere_np", "sphere_plane_np", "store_geometry"]


def stored(table) -> bool:
    """Whether ``table.out`` holds the geometry columns."""
    return table.out.shape[1] == N_OUT


def sphere_sphere_np(xi, xj, ri, rj):
    """``(normal (n, 3), overlap (n,), contact_point (n, 3))`` of spheres at ``xi``, ``xj`` (m)
    with radii ``ri``, ``rj`` (m): the twin of the kernel's sphere-sphere narrow phase (normal from
    ``i`` to ``j``, overlap ``ri + rj - d``, the contact point halfway into the overlap; coincident
    centres give the normal ``(0, 0, 1)`` and overlap -1, as there)."""
    d0 = xj[:, 0] - xi[:, 0]
    d1 = xj[:, 1] - xi[:, 1]
    d2 = xj[:, 2] - xi[:, 2]
    dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    ok = dist > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / dist
    normal = np.stack([inv * d0, inv * d1, inv * d2], axis=1)
    normal[~ok] = (0.0, 0.0, 1.0)
    overlap = np.where(ok, ri + rj - dist, -1.0)
    return normal, overlap, _point(xi, ri, overlap, normal)


def sphere_plane_np(xi, ri, wall_point, wall_normal):
    """The same for spheres and plane walls (``wall_point``, ``wall_normal``: (n, 3), the normal
    unit and towards the spheres): the twin of the kernel's sphere-wall narrow phase (the record's
    normal is the wall's opposite)."""
    normal = -wall_normal
    height = (xi[:, 0] - wall_point[:, 0]) * wall_normal[:, 0] + (xi[:, 1] - wall_point[:, 1]) * wall_normal[:, 1] \
        + (xi[:, 2] - wall_point[:, 2]) * wall_normal[:, 2]
    overlap = ri - height
    return normal, overlap, _point(xi, ri, overlap, normal)


def _point(xi, ri, overlap, normal):
    """The contact point ``x_i + (r_i - overlap / 2) n`` (the narrow phases' ``add(xi, scale(...))``)."""
    s = ri - 0.5 * overlap
    return np.stack([xi[:, 0] + s * normal[:, 0], xi[:, 1] + s * normal[:, 1], xi[:, 2] + s * normal[:, 2]], axis=1)


def pair_geometry(model, state, table, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(normal (n, 3), overlap (n,), contact_point (n, 3))`` of the table rows ``rows`` at the
    last evaluation: unit normal from ``i`` into ``j``, overlap in m, contact point in m (global).
    Rows that are not active contacts read zeros, as the kernel leaves them."""
    rows = np.asarray(rows, dtype=np.int64)
    if stored(table):
        out = table.out[rows]
        return (out[:, OUT_NORMAL: OUT_NORMAL + 3].copy(), out[:, OUT_OVERLAP].copy(),
                out[:, OUT_POINT: OUT_POINT + 3].copy())
    n = len(rows)
    normal, overlap, point = np.zeros((n, 3)), np.zeros(n), np.zeros((n, 3))
    active = table.status[rows] == ACTIVE
    i = table.pair_i[rows].astype(np.int64)
    j = table.pair_j[rows].astype(np.int64)
    ns = model.n_spheres
    pos, radius = state.positions, model.radius
    body = np.flatnonzero(active & (j < ns))
    if len(body):
        a, b = i[body], j[body]
        normal[body], overlap[body], point[body] = sphere_sphere_np(pos[a], pos[b], radius[a], radius[b])
    wall = np.flatnonzero(active & (j >= ns))
    if len(wall):
        a, w = i[wall], j[wall] - ns
        normal[wall], overlap[wall], point[wall] = sphere_plane_np(pos[a], radius[a], state.wall_points[w],
                                                                   model.wall_normal[w])
    return normal, overlap, point


def store_geometry(model, state, table) -> None:
    """Give ``table`` the geometry columns from now on (a servo-controlled wall reads them at every
    step), filled for the last evaluation by :func:`pair_geometry`."""
    if stored(table):
        return
    n = table.n_pairs
    normal, overlap, point = pair_geometry(model, state, table, np.arange(n))
    table.set_out_columns(N_OUT)
    table.out[:n, OUT_NORMAL: OUT_NORMAL + 3] = normal
    table.out[:n, OUT_OVERLAP] = overlap
    table.out[:n, OUT_POINT: OUT_POINT + 3] = point
