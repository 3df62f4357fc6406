"""Linked-cell broad phase with a skin (a Verlet list of candidate pairs), cost linear in N.

A pair ``(i, j)`` is a candidate when its surfaces are closer than ``skin``: ``|x_i - x_j| <
r_i + r_j + skin`` for two spheres (``i < j``, not both fixed), ``height - r_i < skin`` for a free
sphere and a wall (then ``j = N + wall index``).  The list is sorted by ``(i, j)`` and is valid
until a sphere or a wall has moved by more than ``skin / 2`` since the build; the step kernels
detect that and the launcher rebuilds.  Per-contact rows (history and outputs) follow their pair
across rebuilds by its key ``(i, j)``.

All routines are compiled; the builds are deterministic (they do not depend on the number of
threads).
"""
from __future__ import annotations


import numpy as np
from numba import prange

from .._jit import jit, pjit

__all__ = ["build_pairs", "remap_rows", "transpose_pairs", "grid_for"]


def grid_for(pos: np.ndarray, cell: float, max_cells: int):
    """Origin (3,), inverse cell size and dims (3,) of a grid over the bounding box of ``pos``.

    The cell is at least ``cell`` wide and is enlarged if the box would need more than
    ``max_cells`` cells (e.g. when a few spheres are far away from the rest).
    """
    lo = pos.min(axis=0)
    hi = pos.max(axis=0)
    extent = np.maximum(hi - lo, 0.0)
    size = float(cell)
    while True:
        dims = np.floor(extent / size).astype(np.int64) + 1
        if int(np.prod(dims)) <= max_cells:
            break
        size *= 1.5
    return lo, 1.0 / size, dims


@jit
def _bin(pos, origin, inv_cell, dims):
    """Counting sort of spheres into cells: returns (cell_of, cell_start, cell_items)."""
    n = pos.shape[0]
    ncell = dims[0] * dims[1] * dims[2]
    cell_of = np.empty(n, dtype=np.int64)
    counts = np.zeros(ncell + 1, dtype=np.int64)
    for p in range(n):
        cx = min(max(int((pos[p, 0] - origin[0]) * inv_cell), 0), dims[0] - 1)
        cy = min(max(int((pos[p, 1] - origin[1]) * inv_cell), 0), dims[1] - 1)
        cz = min(max(int((pos[p, 2] - origin[2]) * inv_cell), 0), dims[2] - 1)
        c = (cz * dims[1] + cy) * dims[0] + cx
        cell_of[p] = c
        counts[c + 1] += 1
    for c in range(ncell):
        counts[c + 1] += counts[c]
    fill = counts[:-1].copy()
    items = np.empty(n, dtype=np.int64)
    for p in range(n):
        c = cell_of[p]
        items[fill[c]] = p
        fill[c] += 1
    return cell_of, counts, items


@jit
def _scan_sphere(i, pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims,
                 wall_point, wall_normal, out, base):
    """Count (``out`` empty) or write (into ``out[base:]``) the candidates j > i of sphere i."""
    n_s = pos.shape[0]
    c = cell_of[i]
    cx = c % dims[0]
    cy = (c // dims[0]) % dims[1]
    cz = c // (dims[0] * dims[1])
    xi = pos[i, 0]
    yi = pos[i, 1]
    zi = pos[i, 2]
    ri = radius[i]
    fi = fixed[i]
    write = out.shape[0] > 0
    count = 0
    for z in range(max(cz - 1, 0), min(cz + 2, dims[2])):
        for y in range(max(cy - 1, 0), min(cy + 2, dims[1])):
            for x in range(max(cx - 1, 0), min(cx + 2, dims[0])):
                cc = (z * dims[1] + y) * dims[0] + x
                for q in range(cell_start[cc], cell_start[cc + 1]):
                    j = cell_items[q]
                    if j <= i or (fi and fixed[j]):
                        continue
                    dx = pos[j, 0] - xi
                    dy = pos[j, 1] - yi
                    dz = pos[j, 2] - zi
                    reach = ri + radius[j] + skin
                    if dx * dx + dy * dy + dz * dz < reach * reach:
                        if write:
                            out[base + count] = j
                        count += 1
    if write and count > 1:
        # insertion sort of this sphere's partners: the list is ordered by (i, j)
        for a in range(base + 1, base + count):
            v = out[a]
            b = a - 1
            while b >= base and out[b] > v:
                out[b + 1] = out[b]
                b -= 1
            out[b + 1] = v
    if not fi:
        for w in range(wall_point.shape[0]):
            h = ((xi - wall_point[w, 0]) * wall_normal[w, 0] + (yi - wall_point[w, 1]) * wall_normal[w, 1]
                 + (zi - wall_point[w, 2]) * wall_normal[w, 2])
            if h - ri < skin:
                if write:
                    out[base + count] = n_s + w
                count += 1
    return count


@pjit
def _count(pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims, wall_point, wall_normal, counts):
    empty = np.empty(0, dtype=np.int32)
    for i in prange(pos.shape[0]):
        counts[i] = _scan_sphere(i, pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims,
                                 wall_point, wall_normal, empty, 0)


@pjit
def _fill(pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims, wall_point, wall_normal,
          i_start, pair_i, pair_j):
    for i in prange(pos.shape[0]):
        base = i_start[i]
        _scan_sphere(i, pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims,
                     wall_point, wall_normal, pair_j, base)
        for k in range(base, i_start[i + 1]):
            pair_i[k] = i


def build_pairs(pos, radius, fixed, skin, wall_point, wall_normal, pair_i, pair_j, max_cells=None):
    """Build the sorted candidate list into ``pair_i``/``pair_j`` (int32, grown if too small).

    Returns ``(pair_i, pair_j, n_pairs, i_start)`` where ``i_start`` (N+1, int64) is the CSR of
    the list by first body.
    """
    n = pos.shape[0]
    cell = 2.0 * float(radius.max()) + skin
    if max_cells is None:
        max_cells = max(8 * n, 4096)
    origin, inv_cell, dims = grid_for(pos, cell, max_cells)
    cell_of, cell_start, cell_items = _bin(pos, origin, inv_cell, dims)
    counts = np.empty(n, dtype=np.int64)
    _count(pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims, wall_point, wall_normal, counts)
    i_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=i_start[1:])
    n_pairs = int(i_start[-1])
    if n_pairs > pair_i.shape[0]:
        cap = max(int(1.5 * n_pairs), 16)
        pair_i = np.empty(cap, dtype=np.int32)
        pair_j = np.empty(cap, dtype=np.int32)
    _fill(pos, radius, fixed, skin, cell_of, cell_start, cell_items, dims, wall_point, wall_normal,
          i_start, pair_i, pair_j)
    return pair_i, pair_j, n_pairs, i_start


@jit
def transpose_pairs(n_spheres, n_pairs, pair_j):
    """CSR of the pair list by second body (spheres only): (j_start (N+1), j_pairs), pairs in order."""
    j_start = np.zeros(n_spheres + 1, dtype=np.int64)
    for k in range(n_pairs):
        j = pair_j[k]
        if j < n_spheres:
            j_start[j + 1] += 1
    for p in range(n_spheres):
        j_start[p + 1] += j_start[p]
    fill = j_start[:-1].copy()
    j_pairs = np.empty(j_start[n_spheres], dtype=np.int64)
    for k in range(n_pairs):
        j = pair_j[k]
        if j < n_spheres:
            j_pairs[fill[j]] = k
            fill[j] += 1
    return j_start, j_pairs


@pjit
def remap_rows(n_new, new_i, new_j, old_i_start, old_j, old_rows, new_rows):
    """Carry every row of the old list to the same pair ``(i, j)`` in the new list; zero new pairs."""
    width = new_rows.shape[1]
    for k in prange(n_new):
        i = new_i[k]
        j = new_j[k]
        lo = old_i_start[i]
        hi = old_i_start[i + 1]
        # binary search for j in the old partners of i (sorted)
        while lo < hi:
            mid = (lo + hi) // 2
            if old_j[mid] < j:
                lo = mid + 1
            else:
                hi = mid
        if lo < old_i_start[i + 1] and old_j[lo] == j:
            for c in range(width):
                new_rows[k, c] = old_rows[lo, c]
        else:
            for c in range(width):
                new_rows[k, c] = 0.0


