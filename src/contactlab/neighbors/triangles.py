"""Broad phase of bodies against mesh triangles: which triangles each body may touch soon.

The triangles are binned once per rebuild into a uniform grid (each triangle into every cell its
bounding box, widened by the largest body radius plus the skin, overlaps); a body then only looks
at the triangles of the one cell that holds its centre and keeps those whose nearest point is
closer than its (bounding) radius plus the skin.  Each (body, triangle) pair is found once, in
increasing triangle order; free bodies only (fixed bodies do not meet meshes).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..geometry.sphere_triangle import closest_point_on_triangle

__all__ = ["triangle_pairs"]


@kernel
def _tri_boxes(shape_data, tri_ref, widen):
    n = tri_ref.shape[0]
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    for t in range(n):
        o = tri_ref[t]
        for d in range(3):
            a = shape_data[o + d]
            b = shape_data[o + 3 + d]
            c = shape_data[o + 6 + d]
            lo[t, d] = min(a, b, c) - widen
            hi[t, d] = max(a, b, c) + widen
    return lo, hi


@kernel
def _bin_triangles(lo, hi, origin, inv_cell, dims):
    n = lo.shape[0]
    ncell = dims[0] * dims[1] * dims[2]
    start = np.zeros(ncell + 1, dtype=np.int64)
    for sweep in range(2):
        if sweep == 1:
            for c in range(ncell):
                start[c + 1] += start[c]
            fill = start[:-1].copy()
            items = np.empty(start[ncell], dtype=np.int64)
        for t in range(n):
            c0 = np.empty(3, dtype=np.int64)
            c1 = np.empty(3, dtype=np.int64)
            for d in range(3):
                c0[d] = min(max(int(math.floor((lo[t, d] - origin[d]) * inv_cell)), 0), dims[d] - 1)
                c1[d] = min(max(int(math.floor((hi[t, d] - origin[d]) * inv_cell)), 0), dims[d] - 1)
            for z in range(c0[2], c1[2] + 1):
                for y in range(c0[1], c1[1] + 1):
                    for x in range(c0[0], c1[0] + 1):
                        c = (z * dims[1] + y) * dims[0] + x
                        if sweep == 0:
                            start[c + 1] += 1
                        else:
                            items[fill[c]] = t
                            fill[c] += 1
    return start, items


@kernel
def _body_triangles(pos, radius, fixed, skin, shape_data, tri_ref, origin, inv_cell, dims, start, items, first_j):
    n = pos.shape[0]
    counts = np.zeros(n + 1, dtype=np.int64)
    for sweep in range(2):
        if sweep == 1:
            for p in range(n):
                counts[p + 1] += counts[p]
            out_i = np.empty(counts[n], dtype=np.int64)
            out_j = np.empty(counts[n], dtype=np.int64)
        for p in range(n):
            if fixed[p]:
                continue
            x = (pos[p, 0], pos[p, 1], pos[p, 2])
            inside = True
            cc = 0
            for d in range(3):
                q = int(math.floor((x[d] - origin[d]) * inv_cell))
                if q < 0 or q >= dims[d]:
                    inside = False
            if not inside:
                continue
            cx = int(math.floor((x[0] - origin[0]) * inv_cell))
            cy = int(math.floor((x[1] - origin[1]) * inv_cell))
            cz = int(math.floor((x[2] - origin[2]) * inv_cell))
            cc = (cz * dims[1] + cy) * dims[0] + cx
            reach = radius[p] + skin
            m = 0
            for q in range(start[cc], start[cc + 1]):
                t = items[q]
                o = tri_ref[t]
                c, _ = closest_point_on_triangle(
                    x, (shape_data[o], shape_data[o + 1], shape_data[o + 2]),
                    (shape_data[o + 3], shape_data[o + 4], shape_data[o + 5]),
                    (shape_data[o + 6], shape_data[o + 7], shape_data[o + 8]))
                e0 = c[0] - x[0]
                e1 = c[1] - x[1]
                e2 = c[2] - x[2]
                if e0 * e0 + e1 * e1 + e2 * e2 < reach * reach:
                    if sweep == 0:
                        counts[p + 1] += 1
                    else:
                        out_i[counts[p] + m] = p
                        out_j[counts[p] + m] = first_j + t
                    m += 1
    return out_i, out_j


def triangle_pairs(pos, radius, fixed, skin, shape_data, tri_ref, first_j, max_cells=None):
    """Candidate (body, triangle) pairs: ``(i, j)`` int64 arrays sorted by ``i`` then ``j``, with
    ``j = first_j + t`` for triangle ``t`` (``first_j = N + W``).  A pair is a candidate when the
    triangle's nearest point is closer to the body's centre than its radius (the bounding radius
    of a non-spherical body) plus ``skin`` (m)."""
    n_t = int(tri_ref.shape[0])
    if n_t == 0 or pos.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    widen = float(radius[~fixed].max(initial=0.0)) + skin
    lo, hi = _tri_boxes(shape_data, tri_ref, widen)
    low = lo.min(axis=0)
    high = hi.max(axis=0)
    extent = np.maximum(high - low, 1e-300)
    size = max(2.0 * widen, float(np.median((hi - lo).max(axis=1))) * 0.5)
    if max_cells is None:
        max_cells = max(8 * (n_t + pos.shape[0]), 4096)
    while True:
        dims = np.floor(extent / size).astype(np.int64) + 1
        if int(np.prod(dims)) <= max_cells:
            break
        size *= 1.5
    start, items = _bin_triangles(lo, hi, low, 1.0 / size, dims)
    return _body_triangles(pos, radius, fixed.astype(np.bool_), float(skin), shape_data, tri_ref, low, 1.0 / size,
                           dims, start, items, int(first_j))
