"""Contact detection of particle DDA: candidate pairs and the geometry of each contact.

Candidates: every pair of bodies whose bounding circles (radius = largest semi-axis) come closer
than ``margin``, found on a uniform cell grid (cell = largest bounding diameter + ``margin``), and
every body-wall pair whose gap to the wall's line is below ``margin``.  The kernels take ``margin``
as twice the largest displacement a step may have plus the largest wall motion of a step, so no
contact can close during a step without being a candidate at its start.

Geometry of a body pair ``(i, j)``, ``i < j``: the common normal of the two ellipses (notes 004,
:func:`contactlab.geometry.ellipsoid.ellipse_pair_2d`, warm-started from the pair's last normal),
or the line of centres when both are circles.  It gives the unit normal ``n`` (from ``i`` to
``j``), the separation ``g0`` (m, > 0 apart) and the two support points, relative to each centroid.
Body-wall: the wall's unit normal (pointing to the side the bodies are on), the body's support
point along ``-n`` and its gap to the line.

Keys order the contacts and match them from step to step: ``i * n_keys + j`` for a body pair,
``(n_bodies + w) * n_keys + b`` for body ``b`` on wall ``w`` (``n_keys = n_bodies + n_walls``).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..geometry.ellipsoid import STATUS_APART, ellipse_pair_2d
from .blocks import isotropic, shape_axes, support_offset

__all__ = ["bounding_radii", "count_candidates", "candidate_pairs", "pair_geometry", "wall_geometry"]


@jit
def bounding_radii(shp):
    """Largest semi-axis of every body (m), (n,)."""
    n = shp.shape[0]
    out = np.empty(n)
    for i in range(n):
        a, b, ang = shape_axes(shp[i, 0], shp[i, 1], shp[i, 2])
        out[i] = a
    return out


@jit
def _grid(pos, cell):
    n = pos.shape[0]
    xmin = pos[:, 0].min()
    ymin = pos[:, 1].min()
    nx = int((pos[:, 0].max() - xmin) / cell) + 1
    ny = int((pos[:, 1].max() - ymin) / cell) + 1
    while nx * ny > 4 * n + 16:   # a sparse scene: fewer, larger cells
        cell *= 2.0
        nx = int((pos[:, 0].max() - xmin) / cell) + 1
        ny = int((pos[:, 1].max() - ymin) / cell) + 1
    cx = np.empty(n, dtype=np.int64)
    cy = np.empty(n, dtype=np.int64)
    start = np.zeros(nx * ny + 1, dtype=np.int64)
    for i in range(n):
        cx[i] = min(int((pos[i, 0] - xmin) / cell), nx - 1)
        cy[i] = min(int((pos[i, 1] - ymin) / cell), ny - 1)
        start[cx[i] * ny + cy[i] + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        c = cx[i] * ny + cy[i]
        order[fill[c]] = i
        fill[c] += 1
    return nx, ny, cx, cy, start, order


@jit
def _pairs(pos, bound, margin, out_i, out_j, store):
    n = pos.shape[0]
    count = 0
    if n < 2:
        return 0
    nx, ny, cx, cy, start, order = _grid(pos, 2.0 * bound.max() + margin)
    for i in range(n):
        for ax in range(max(cx[i] - 1, 0), min(cx[i] + 2, nx)):
            for ay in range(max(cy[i] - 1, 0), min(cy[i] + 2, ny)):
                c = ax * ny + ay
                for s in range(start[c], start[c + 1]):
                    j = order[s]
                    if j <= i:
                        continue
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    reach = bound[i] + bound[j] + margin
                    if dx * dx + dy * dy <= reach * reach:
                        if store:
                            out_i[count] = i
                            out_j[count] = j
                        count += 1
    return count


@jit
def count_candidates(pos, bound, margin):
    """Number of body pairs whose bounding circles are closer than ``margin`` (m)."""
    dummy = np.empty(0, dtype=np.int64)
    return _pairs(pos, bound, margin, dummy, dummy, False)


@jit
def candidate_pairs(pos, bound, margin, out_i, out_j):
    """Fill ``out_i < out_j`` with the candidate body pairs; returns their number (the arrays must
    hold :func:`count_candidates` entries)."""
    return _pairs(pos, bound, margin, out_i, out_j, True)


@jit
def pair_geometry(pos, shp, i, j, warm0, warm1, margin):
    """Contact geometry of bodies ``i`` and ``j``: ``(apart, g0, n0, n1, xi, yi, xj, yj)``;
    ``apart`` is True when they are proven farther apart than ``margin``; ``(xi, yi)`` and ``(xj,
    yj)`` are the support points relative to the centroids of ``i`` and ``j``."""
    if isotropic(shp[i, 0], shp[i, 1], shp[i, 2]) and isotropic(shp[j, 0], shp[j, 1], shp[j, 2]):
        ri = math.sqrt(0.5 * (shp[i, 0] + shp[i, 1]))
        rj = math.sqrt(0.5 * (shp[j, 0] + shp[j, 1]))
        dx = pos[j, 0] - pos[i, 0]
        dy = pos[j, 1] - pos[i, 1]
        dist = math.sqrt(dx * dx + dy * dy)
        if dist > 0.0:
            n0 = dx / dist
            n1 = dy / dist
        else:
            n0 = 1.0
            n1 = 0.0
        sep = dist - ri - rj
        return sep > margin, sep, n0, n1, ri * n0, ri * n1, -rj * n0, -rj * n1
    ai, bi, thi = shape_axes(shp[i, 0], shp[i, 1], shp[i, 2])
    aj, bj, thj = shape_axes(shp[j, 0], shp[j, 1], shp[j, 2])
    sep, n, p_i, p_j, ci, cj, iters, status = ellipse_pair_2d(
        (pos[i, 0], pos[i, 1]), thi, (ai, bi), (pos[j, 0], pos[j, 1]), thj, (aj, bj), (warm0, warm1), margin)
    return (status == STATUS_APART, sep, n[0], n[1], p_i[0] - pos[i, 0], p_i[1] - pos[i, 1],
            p_j[0] - pos[j, 0], p_j[1] - pos[j, 1])


@jit
def wall_geometry(pos, shp, b, wpt, wnrm, w):
    """Gap (m) of body ``b`` to the line of wall ``w`` and its support point towards the wall,
    relative to its centroid: ``(gap, x, y)``."""
    n0 = wnrm[w, 0]
    n1 = wnrm[w, 1]
    h, ox, oy = support_offset(shp[b, 0], shp[b, 1], shp[b, 2], n0, n1)
    gap = (pos[b, 0] - wpt[w, 0]) * n0 + (pos[b, 1] - wpt[w, 1]) * n1 - h
    return gap, -ox, -oy
