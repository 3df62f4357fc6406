"""Brute-force twin of the broad phase (O(N^2), NumPy), for tests."""
from __future__ import annotations

import numpy as np

__all__ = ["brute_force_pairs"]


def brute_force_pairs(pos, radius, fixed, skin, wall_point, wall_normal):
    """Sorted list of candidate pairs ``(i, j)`` with the same rule as the cell list."""
    n = pos.shape[0]
    d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    reach = radius[:, None] + radius[None, :] + skin
    ii, jj = np.nonzero(np.triu(d < reach, k=1))
    keep = ~(fixed[ii] & fixed[jj])
    pairs = list(zip(ii[keep].tolist(), jj[keep].tolist()))
    for w in range(wall_point.shape[0]):
        h = (pos - wall_point[w]) @ wall_normal[w]
        for i in np.flatnonzero((h - radius < skin) & ~fixed):
            pairs.append((int(i), n + w))
    return sorted(pairs)
