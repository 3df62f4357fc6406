"""Brute-force twin of the broad phase (O(N^2), NumPy), for tests."""
from __future__ import annotations

import numpy as np

from ..geometry.sphere_cylinder import WALL_PLANE, cylinder_surface_np

__all__ = ["brute_force_pairs"]


def brute_force_pairs(pos, radius, fixed, skin, wall_point, wall_normal, walls=None):
    """Sorted list of candidate pairs ``(i, j)`` with the same rule as the cell list (``walls =
    (wall_kind, wall_shape)`` for cylinder walls, see :func:`~contactlab.neighbors.celllist.build_pairs`)."""
    n = pos.shape[0]
    d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    reach = radius[:, None] + radius[None, :] + skin
    ii, jj = np.nonzero(np.triu(d < reach, k=1))
    keep = ~(fixed[ii] & fixed[jj])
    pairs = list(zip(ii[keep].tolist(), jj[keep].tolist()))
    for w in range(wall_point.shape[0]):
        if walls is None or walls[0][w] == WALL_PLANE:
            h = (pos - wall_point[w]) @ wall_normal[w]
        else:
            h = cylinder_surface_np(pos, wall_point[w], wall_normal[w], walls[1][w])[0]
        for i in np.flatnonzero((h - radius < skin) & ~fixed):
            pairs.append((int(i), n + w))
    return sorted(pairs)
