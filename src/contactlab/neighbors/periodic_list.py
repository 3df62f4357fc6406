"""The linked-cell broad phase of a periodic cell: candidate pairs by their minimum image.

The same list as :mod:`contactlab.neighbors.celllist` (pairs ``(i, j)``, ``i < j``, sorted, whose
surfaces are closer than ``skin``; free bodies and walls after their partners), for a scene with a
periodic cell (:mod:`contactlab.geometry.periodic`): the distance of two bodies is that of the
minimum image of ``x_j - x_i``, so a pair across a periodic face is one candidate, kept by its
key ``(i, j)`` (its history follows it across the boundary like any other pair).

Cells: on a periodic axis the cell's length is cut into ``floor(L / w)`` cells (``w = 2 r_max +
skin``) that wrap around; with fewer than three the axis is one cell (every body is a candidate
along it, the minimum image decides).  On a sheared cell (Lees-Edwards) the cells scanned along
the flow axis in the layers across the gradient axis's faces are those that hold the images
displaced by the shear offset.  Non-periodic axes are binned over the bodies' bounding box, as in
:mod:`contactlab.neighbors.celllist`.  Positions must be wrapped (:mod:`contactlab.engine.cell_motion`)
before a build.  The result does not depend on the number of threads.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._jit import jit, n_blocks, pkernel
from ..errors import InputError, SimulationBlowUp
from ..geometry.periodic import CELL_FLOW, CELL_GRADIENT, CELL_LENGTH, CELL_LOWER, CELL_PERIODIC, CELL_SHEAR, min_image
from .celllist import (bin_bodies, body_radius, cell_index, check_bodies, check_pairs, pair_buffers, segments_from_counts,
                       sorted_with_walls)
from ..geometry.sphere_cylinder import N_WALL_SHAPE

__all__ = ["build_pairs_periodic", "check_cell", "periodic_grid", "periodic_grid_from_bounds", "scan_periodic"]

_AXES = "xyz"


def check_cell(cell: np.ndarray, radius: np.ndarray, skin: float, time: float = 0.0, step: int = 0) -> None:
    """Refuse a cell whose periodic lengths are not longer than twice the longest interaction
    (``2 r_max + skin``): the minimum image would then miss contacts."""
    reach = 2.0 * float(radius.max()) + float(skin)
    for a in range(3):
        if cell[CELL_PERIODIC + a] != 0.0 and not cell[CELL_LENGTH + a] > 2.0 * reach:
            msg = (f"the periodic cell's length along {_AXES[a]} is {cell[CELL_LENGTH + a]:.6g} m; it must exceed "
                   f"twice the longest interaction, 2 (2 r_max + skin) = {2 * reach:.6g} m (r_max = "
                   f"{float(radius.max()):.6g} m, skin = {float(skin):.6g} m), or contacts with the images would be "
                   f"missed: make the cell longer or the skin smaller")
            if step == 0 and time == 0.0:
                raise InputError(msg)
            raise SimulationBlowUp(msg + " (the cell shrank to this during the run)", time=time, step=step)


def periodic_grid(pos: np.ndarray, cell: np.ndarray, width: float, max_cells: int):
    """Origin (3,), inverse cell widths (3,) and dims (3,) int64 of the grid of a periodic scene
    (module docstring)."""
    lo = pos.min(axis=0) if len(pos) else np.zeros(3)
    hi = pos.max(axis=0) if len(pos) else np.zeros(3)
    return periodic_grid_from_bounds(lo, hi, cell, width, max_cells)


def periodic_grid_from_bounds(lo, hi, cell: np.ndarray, width: float, max_cells: int):
    """:func:`periodic_grid` from the bounding box ``lo``, ``hi`` (3,) of the positions (the GPU's
    neighbour build reduces them on the device)."""
    periodic = cell[CELL_PERIODIC: CELL_PERIODIC + 3] != 0.0
    length = cell[CELL_LENGTH: CELL_LENGTH + 3]
    origin = np.where(periodic, cell[CELL_LOWER: CELL_LOWER + 3], lo)
    size = float(width)
    while True:
        dims = np.where(periodic, np.floor(length / size), np.floor(np.maximum(hi - lo, 0.0) / size) + 1)
        dims = np.where(periodic & (dims < 3), 1, dims).astype(np.int64)
        if int(np.prod(dims)) <= max_cells:
            break
        size *= 1.5
    g = int(cell[CELL_GRADIENT])
    if g >= 0 and dims[g] == 1:
        dims[int(cell[CELL_FLOW])] = 1   # the layer across the sheared face is not known: scan the whole flow axis
    extent = np.where(periodic, length, size * dims)
    return origin, dims / extent, dims


@jit
def _axis_cell(a, k, c, dims, cell, g, f, layer, x, origin, inv_w, reach):
    """The ``k``-th cell (0..2) scanned along axis ``a`` from cell ``c``, or -1 (none); ``layer``:
    the image layer across the gradient axis (-1, 0, 1) of the cell chosen along it."""
    d = dims[a]
    if cell[CELL_PERIODIC + a] == 0.0:
        raw = c - 1 + k
        return raw if 0 <= raw < d else -1
    if d == 1:
        return 0 if k == 0 else -1
    if a == f and g >= 0:
        # the images across the sheared face sit ``layer * delta`` further along the flow axis
        centre = x - layer * cell[CELL_SHEAR] - origin[a]
        start = int(math.floor((centre - reach) * inv_w[a]))
        end = int(math.floor((centre + reach) * inv_w[a]))
        if k > end - start:
            return -1
        raw = start + k
    else:
        raw = c - 1 + k
    return raw % d


@jit
def scan_periodic(q, cell_start, items, sorted_xr, dims, origin, inv_w, reach, skin, cell, wall_point, wall_normal,
          wall_kind, wall_shape, n_s, out, base):
    """Count (``out`` empty) or write (into ``out[base:]``) the partners j > i of body ``items[q]``."""
    i = items[q]
    xi = sorted_xr[q, 0]
    yi = sorted_xr[q, 1]
    zi = sorted_xr[q, 2]
    ri, fi = body_radius(sorted_xr[q, 3])
    c = cell_index(xi, yi, zi, origin, inv_w, dims)
    cc = (c % dims[0], (c // dims[0]) % dims[1], c // (dims[0] * dims[1]))
    xs = (xi, yi, zi)
    g = int(cell[CELL_GRADIENT])
    f = int(cell[CELL_FLOW])
    write = out.shape[0] > 0
    count = 0
    for k2 in range(3):
        for k1 in range(3):
            for k0 in range(3):
                ks = (k0, k1, k2)
                layer = 0
                if g >= 0 and dims[g] > 1:
                    raw = cc[g] - 1 + ks[g]
                    layer = -1 if raw < 0 else (1 if raw >= dims[g] else 0)
                cx = _axis_cell(0, k0, cc[0], dims, cell, g, f, layer, xs[0], origin, inv_w, reach)
                cy = _axis_cell(1, k1, cc[1], dims, cell, g, f, layer, xs[1], origin, inv_w, reach)
                cz = _axis_cell(2, k2, cc[2], dims, cell, g, f, layer, xs[2], origin, inv_w, reach)
                if cx < 0 or cy < 0 or cz < 0:
                    continue
                b = (cz * dims[1] + cy) * dims[0] + cx
                for qq in range(cell_start[b], cell_start[b + 1]):
                    j = items[qq]
                    if j <= i:
                        continue
                    rj, fj = body_radius(sorted_xr[qq, 3])
                    if fi and fj:
                        continue
                    dx, dy, dz, _, _, _ = min_image(sorted_xr[qq, 0] - xi, sorted_xr[qq, 1] - yi,
                                                    sorted_xr[qq, 2] - zi, cell)
                    r = ri + rj + skin
                    if dx * dx + dy * dy + dz * dz < r * r:
                        if write:
                            out[base + count] = j
                        count += 1
    return sorted_with_walls(out, base, count, write, fi, xi, yi, zi, ri, skin, wall_point, wall_normal, wall_kind,
                             wall_shape, n_s)


@pkernel
def _count(cell_start, items, sorted_xr, dims, origin, inv_w, reach, skin, cell, wall_point, wall_normal,
           wall_kind, wall_shape, i_start, n_blocks):
    n = items.shape[0]
    b = max((n + n_blocks - 1) // n_blocks, 1)
    empty = np.empty(0, dtype=np.uint32)
    for c in prange((n + b - 1) // b):
        for q in range(c * b, min((c + 1) * b, n)):
            i_start[items[q] + 1] = scan_periodic(q, cell_start, items, sorted_xr, dims, origin, inv_w, reach, skin, cell,
                                          wall_point, wall_normal, wall_kind, wall_shape, n, empty, 0)


@pkernel
def _fill(cell_start, items, sorted_xr, dims, origin, inv_w, reach, skin, cell, wall_point, wall_normal,
          wall_kind, wall_shape, i_start, pair_i, pair_j, n_blocks):
    n = items.shape[0]
    b = max((n + n_blocks - 1) // n_blocks, 1)
    with_i = pair_i.shape[0] > 0
    for c in prange((n + b - 1) // b):
        for q in range(c * b, min((c + 1) * b, n)):
            i = items[q]
            base = i_start[i]
            scan_periodic(q, cell_start, items, sorted_xr, dims, origin, inv_w, reach, skin, cell, wall_point,
                  wall_normal, wall_kind, wall_shape, n, pair_j, base)
            if with_i:
                for k in range(base, i_start[i + 1]):
                    pair_i[k] = i


def build_pairs_periodic(pos, radius, fixed, skin, wall_point, wall_normal, pair_i, pair_j, cell, max_cells=None,
                         walls=None):
    """:func:`contactlab.neighbors.celllist.build_pairs` for a periodic scene (``cell``: the
    state's cell vector, :mod:`contactlab.geometry.periodic`); the same arguments (``pair_i`` None:
    the first bodies not written) and return value ``(pair_i, pair_j, n_pairs, i_start)``."""
    n = pos.shape[0]
    check_bodies(n)
    reach = 2.0 * float(radius.max()) + skin
    if max_cells is None:
        max_cells = max(8 * n, 4096)
    origin, inv_w, dims = periodic_grid(pos, cell, reach, max_cells)
    cell_start, items, sorted_xr = bin_bodies(pos, radius, fixed, origin, inv_w, dims)
    if walls is None:
        walls = (np.zeros(wall_point.shape[0], dtype=np.uint8), np.zeros((wall_point.shape[0], N_WALL_SHAPE)))
    wall_kind, wall_shape = walls
    args = (cell_start, items, sorted_xr, dims, origin, inv_w, reach, float(skin), cell, wall_point,
            wall_normal, wall_kind, wall_shape)
    # each body's partner count at i_start[i + 1], then the prefix sum in place
    i_start = np.zeros(n + 1, dtype=np.uint32)
    _count(*args, i_start, n_blocks(n))
    n_pairs = segments_from_counts(i_start)
    check_pairs(n_pairs)
    pair_i, pair_j = pair_buffers(n_pairs, pair_i, pair_j)
    _fill(*args, i_start, np.zeros(0, dtype=np.uint32) if pair_i is None else pair_i, pair_j, n_blocks(n))
    return pair_i, pair_j, n_pairs, i_start
