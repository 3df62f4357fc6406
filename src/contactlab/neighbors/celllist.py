"""Linked-cell broad phase with a skin (a Verlet list of candidate pairs), cost linear in N.

A pair ``(i, j)`` is a candidate when its surfaces are closer than ``skin``: ``|x_i - x_j| <
r_i + r_j + skin`` for two spheres (``i < j``, not both fixed), ``height - r_i < skin`` for a free
sphere and a wall (then ``j = N + wall index``; for a cylinder wall ``height`` is the distance of the
centre from its surface, :func:`contactlab.geometry.sphere_cylinder.cylinder_surface`).  The list is sorted by ``(i, j)`` and is valid
until a sphere or a wall has moved by more than ``skin / 2`` since the build; the step kernels
detect that and the launcher rebuilds.  Per-contact rows (history and outputs) follow their pair
across rebuilds by its key ``(i, j)`` (:mod:`contactlab.engine.history_match`).

The spheres are binned into cells of width ``2 r_max + skin`` (counting sort); their coordinates
and radii are copied in cell order so that scanning the 27 cells around a sphere reads contiguous
memory, and spheres are visited in cell order so that consecutive spheres share those cells.  A
first pass counts each sphere's partners, a prefix sum gives every sphere its segment, a second
pass writes the partners, sorted.  The result does not depend on the number of threads.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._jit import jit, kernel, n_blocks, pkernel
from ..geometry.sphere_cylinder import N_WALL_SHAPE, WALL_PLANE, cylinder_surface

__all__ = ["build_pairs", "first_bodies", "pair_buffers", "transpose_pairs", "boundary_pairs", "grid_for",
           "grid_from_bounds", "scan_sphere", "insertion_sort", "bin_bodies",
           "cell_index", "body_radius", "check_bodies", "check_pairs", "segments_from_counts"]


def grid_for(pos: np.ndarray, cell: float, max_cells: int):
    """Origin (3,), inverse cell size and dims (3,) of a grid over the bounding box of ``pos``.

    The cell is at least ``cell`` wide and is enlarged if the box would need more than
    ``max_cells`` cells (e.g. when a few spheres are far away from the rest).
    """
    lo, hi = _bounds(pos)
    return grid_from_bounds(lo, hi, cell, max_cells)


def grid_from_bounds(lo, hi, cell: float, max_cells: int):
    """:func:`grid_for` from the bounding box ``lo``, ``hi`` (3,) of the positions (the GPU's
    neighbour build reduces them on the device)."""
    extent = np.maximum(np.asarray(hi) - np.asarray(lo), 0.0)
    size = float(cell)
    while True:
        dims = np.floor(extent / size).astype(np.int64) + 1
        if int(np.prod(dims)) <= max_cells:
            break
        size *= 1.5
    return lo, 1.0 / size, dims


@kernel
def _bounds(pos):
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for p in range(pos.shape[0]):
        for d in range(3):
            x = pos[p, d]
            if x < lo[d]:
                lo[d] = x
            if x > hi[d]:
                hi[d] = x
    return lo, hi


@jit
def cell_index(x, y, z, origin, inv_w, dims):
    """The cell (index into the grid of ``dims`` cells, x fastest) of the point ``(x, y, z)``;
    points outside the grid go to its border cells."""
    cx = min(max(int((x - origin[0]) * inv_w[0]), 0), dims[0] - 1)
    cy = min(max(int((y - origin[1]) * inv_w[1]), 0), dims[1] - 1)
    cz = min(max(int((z - origin[2]) * inv_w[2]), 0), dims[2] - 1)
    return (cz * dims[1] + cy) * dims[0] + cx


@kernel
def bin_bodies(pos, radius, fixed, origin, inv_w, dims):
    """Counting sort into cells of widths ``1 / inv_w`` (3,) m (the plain and the periodic list).

    Returns ``cell_start`` (ncell+1,) int32 (CSR over cells), ``items`` (N,) int32 (body indices
    in cell order, increasing within a cell) and ``sorted_xr`` (N, 4) float64 (x, y, z, r of
    ``items`` in cell order, r negative for a fixed body: :func:`body_radius`).  A body's cell is
    computed again from its copied coordinates (:func:`cell_index`) where needed: no per-body
    array of cells.  ``N < 2**31`` (:func:`check_bodies`).
    """
    n = pos.shape[0]
    ncell = dims[0] * dims[1] * dims[2]
    # counts per cell, then ends of cells; then starts, filling each cell from its end (bodies in
    # decreasing order: increasing within a cell)
    cell_start = np.zeros(ncell + 1, dtype=np.int32)
    for p in range(n):
        cell_start[cell_index(pos[p, 0], pos[p, 1], pos[p, 2], origin, inv_w, dims)] += 1
    for c in range(1, ncell):
        cell_start[c] += cell_start[c - 1]
    cell_start[ncell] = n
    items = np.empty(n, dtype=np.int32)
    sorted_xr = np.empty((n, 4))
    for p in range(n - 1, -1, -1):
        c = cell_index(pos[p, 0], pos[p, 1], pos[p, 2], origin, inv_w, dims)
        q = cell_start[c] - 1
        cell_start[c] = q
        items[q] = p
        sorted_xr[q, 0] = pos[p, 0]
        sorted_xr[q, 1] = pos[p, 1]
        sorted_xr[q, 2] = pos[p, 2]
        sorted_xr[q, 3] = -radius[p] if fixed[p] else radius[p]
    return cell_start, items, sorted_xr


@jit
def body_radius(r):
    """``(radius, fixed)`` of a body from its column 3 of ``sorted_xr`` (:func:`bin_bodies`)."""
    return abs(r), math.copysign(1.0, r) < 0.0


def check_bodies(n: int) -> None:
    """The cell list indexes bodies with int32: refuse ``n >= 2**31``."""
    if n >= 2**31:
        raise MemoryError(f"{n} bodies exceed the cell list's 32-bit body index (at most 2**31 - 1 = {2**31 - 1})")


@kernel
def segments_from_counts(i_start):
    """``i_start`` (N+1,) uint32 holding each body's partner count at ``[i + 1]`` (``[0]`` zero)
    becomes its CSR by prefix sum, in place, unless the total reaches ``2**32``.  Returns the
    total (int)."""
    total = np.int64(0)
    for p in range(1, i_start.shape[0]):
        total += np.int64(i_start[p])
    if total < np.int64(2**32):
        for p in range(1, i_start.shape[0]):
            i_start[p] += i_start[p - 1]
    return total


@jit
def scan_sphere(q, cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind,
                 wall_shape, n_s, out, base):
    """Count (``out`` empty) or write (into ``out[base:]``) the partners j > i of sphere ``items[q]``."""
    i = items[q]
    xi = sorted_xr[q, 0]
    yi = sorted_xr[q, 1]
    zi = sorted_xr[q, 2]
    ri, fi = body_radius(sorted_xr[q, 3])
    c = cell_index(xi, yi, zi, origin, inv_w, dims)
    cx = c % dims[0]
    cy = (c // dims[0]) % dims[1]
    cz = c // (dims[0] * dims[1])
    write = out.shape[0] > 0
    count = 0
    for z in range(max(cz - 1, 0), min(cz + 2, dims[2])):
        for y in range(max(cy - 1, 0), min(cy + 2, dims[1])):
            row = (z * dims[1] + y) * dims[0]
            # the cells x-1..x+1 of one row are contiguous in cell order
            lo = cell_start[row + max(cx - 1, 0)]
            hi = cell_start[row + min(cx + 2, dims[0])]
            for qq in range(lo, hi):
                j = items[qq]
                if j <= i:
                    continue
                rj, fj = body_radius(sorted_xr[qq, 3])
                if fi and fj:
                    continue
                dx = sorted_xr[qq, 0] - xi
                dy = sorted_xr[qq, 1] - yi
                dz = sorted_xr[qq, 2] - zi
                reach = ri + rj + skin
                if dx * dx + dy * dy + dz * dz < reach * reach:
                    if write:
                        out[base + count] = j
                    count += 1
    return sorted_with_walls(out, base, count, write, fi, xi, yi, zi, ri, skin, wall_point, wall_normal, wall_kind,
                             wall_shape, n_s)


@jit
def insertion_sort(values, lo, hi):
    """Sort ``values[lo:hi]`` ascending in place (a body's partners, a cell's bodies: a few)."""
    for a in range(lo + 1, hi):
        v = values[a]
        b = a - 1
        while b >= lo and values[b] > v:
            values[b + 1] = values[b]
            b -= 1
        values[b + 1] = v


@jit
def sorted_with_walls(out, base, count, write, fi, xi, yi, zi, ri, skin, wall_point, wall_normal, wall_kind,
                      wall_shape, n_s):
    """The end of one body's scan (plain and periodic lists): its ``count`` partners written from
    ``out[base]`` sorted (the list is ordered by ``(i, j)``), then the walls within the skin of a
    free body (``fi`` False) appended as ``n_s + w``; returns the new count (with ``write`` False
    only counts)."""
    if write and count > 1:
        insertion_sort(out, base, base + count)   # this body's partners
    if not fi:
        for w in range(wall_point.shape[0]):
            if wall_kind[w] == WALL_PLANE:
                h = ((xi - wall_point[w, 0]) * wall_normal[w, 0] + (yi - wall_point[w, 1]) * wall_normal[w, 1]
                     + (zi - wall_point[w, 2]) * wall_normal[w, 2])
            else:
                h = cylinder_surface((xi, yi, zi), (wall_point[w, 0], wall_point[w, 1], wall_point[w, 2]),
                                     (wall_normal[w, 0], wall_normal[w, 1], wall_normal[w, 2]), wall_shape[w, 0],
                                     wall_shape[w, 1], wall_shape[w, 2], wall_shape[w, 3])[0]
            if h - ri < skin:
                if write:
                    out[base + count] = n_s + w
                count += 1
    return count


@kernel
def _count_chunk(q0, q1, cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind,
                 wall_shape, i_start):
    empty = np.empty(0, dtype=np.uint32)
    n = items.shape[0]
    for q in range(q0, q1):
        i_start[items[q] + 1] = scan_sphere(q, cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point,
                                             wall_normal, wall_kind, wall_shape, n, empty, 0)


@pkernel
def _count(cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind, wall_shape,
           i_start, n_blocks):
    n = items.shape[0]
    b = max((n + n_blocks - 1) // n_blocks, 1)
    for c in prange((n + b - 1) // b):
        _count_chunk(c * b, min((c + 1) * b, n), cell_start, items, sorted_xr, origin, inv_w, dims, skin,
                     wall_point, wall_normal, wall_kind, wall_shape, i_start)


@kernel
def _fill_chunk(q0, q1, cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind,
                wall_shape, i_start, pair_i, pair_j):
    n = items.shape[0]
    with_i = pair_i.shape[0] > 0
    for q in range(q0, q1):
        i = items[q]
        base = i_start[i]
        scan_sphere(q, cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind,
                     wall_shape, n, pair_j, base)
        if with_i:
            for k in range(base, i_start[i + 1]):
                pair_i[k] = i


@pkernel
def _fill(cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind, wall_shape,
          i_start, pair_i, pair_j, n_blocks):
    n = items.shape[0]
    b = max((n + n_blocks - 1) // n_blocks, 1)
    for c in prange((n + b - 1) // b):
        _fill_chunk(c * b, min((c + 1) * b, n), cell_start, items, sorted_xr, origin, inv_w, dims, skin,
                    wall_point, wall_normal, wall_kind, wall_shape, i_start, pair_i, pair_j)


def build_pairs(pos, radius, fixed, skin, wall_point, wall_normal, pair_i, pair_j, max_cells=None, walls=None):
    """Build the sorted candidate list into ``pair_i``/``pair_j`` (uint32, each replaced by a new
    array if too small; ``pair_i`` None: the first bodies are not written, :func:`first_bodies`
    writes them from ``i_start`` later).

    ``walls = (wall_kind (W,), wall_shape (W, 4))`` for a scene with cylinder walls (default: every
    wall a plane).

    Returns ``(pair_i, pair_j, n_pairs, i_start)`` where ``i_start`` (N+1, uint32) is the CSR of
    the list by first body.
    """
    n = pos.shape[0]
    check_bodies(n)
    cell = 2.0 * float(radius.max()) + skin
    if max_cells is None:
        max_cells = max(8 * n, 4096)
    origin, inv_cell, dims = grid_for(pos, cell, max_cells)
    inv_w = np.full(3, inv_cell)
    cell_start, items, sorted_xr = bin_bodies(pos, radius, fixed, origin, inv_w, dims)
    if walls is None:
        walls = (np.zeros(wall_point.shape[0], dtype=np.uint8), np.zeros((wall_point.shape[0], N_WALL_SHAPE)))
    wall_kind, wall_shape = walls
    args = (cell_start, items, sorted_xr, origin, inv_w, dims, skin, wall_point, wall_normal, wall_kind, wall_shape)
    # each sphere's partner count at i_start[i + 1], then the prefix sum in place
    i_start = np.zeros(n + 1, dtype=np.uint32)
    blocks = n_blocks(n)
    if blocks == 1:
        # a small scene: the chunk itself, without entering a parallel region (~5-10 us each)
        _count_chunk(0, n, *args, i_start)
    else:
        _count(*args, i_start, blocks)
    n_pairs = segments_from_counts(i_start)
    check_pairs(n_pairs)
    pair_i, pair_j = pair_buffers(n_pairs, pair_i, pair_j)
    if blocks == 1:
        _fill_chunk(0, n, *args, i_start, _NO_PAIRS if pair_i is None else pair_i, pair_j)
    else:
        _fill(*args, i_start, _NO_PAIRS if pair_i is None else pair_i, pair_j, blocks)
    return pair_i, pair_j, n_pairs, i_start


_NO_PAIRS = np.zeros(0, dtype=np.uint32)


def check_pairs(n_pairs: int) -> None:
    """Pairs are indexed with uint32: refuse ``n_pairs >= 2**32``."""
    if n_pairs >= 2**32:
        raise MemoryError(f"{n_pairs} candidate pairs exceed the 32-bit pair index")


def pair_buffers(n_pairs: int, pair_i, pair_j):
    """``pair_i`` (or None) and ``pair_j``, each replaced by a new uint32 array of 1.5 ``n_pairs``
    if shorter than ``n_pairs`` (the plain and the periodic list)."""
    cap = max(int(1.5 * n_pairs), 16)
    if pair_i is not None and n_pairs > pair_i.shape[0]:
        pair_i = np.empty(cap, dtype=np.uint32)
    if n_pairs > pair_j.shape[0]:
        pair_j = np.empty(cap, dtype=np.uint32)
    return pair_i, pair_j


@kernel
def _first_bodies_range(i_start, pair_i, i0, i1):
    for i in range(i0, i1):
        for k in range(i_start[i], i_start[i + 1]):
            pair_i[k] = i


@pkernel
def _first_bodies(i_start, pair_i, n_blocks):
    n = i_start.shape[0] - 1
    b = max((n + n_blocks - 1) // n_blocks, 1)
    for c in prange((n + b - 1) // b):
        _first_bodies_range(i_start, pair_i, c * b, min((c + 1) * b, n))


def first_bodies(i_start, pair_i, n_blocks):
    """Write ``pair_i[k] = i`` for the pairs ``k`` of each first body ``i`` of the CSR ``i_start``
    (N+1,), over ``n_blocks`` blocks in parallel (one: serially, without a parallel region)."""
    if n_blocks == 1:
        _first_bodies_range(i_start, pair_i, 0, i_start.shape[0] - 1)
    else:
        _first_bodies(i_start, pair_i, n_blocks)


@kernel
def transpose_pairs(n_spheres, n_pairs, pair_j):
    """CSR of the pair list by second body (spheres only): (j_start (N+1,) uint32, j_pairs (uint32)),
    each body's pairs in increasing order (counts per body, their ends by prefix sum, then each
    body's pairs placed from its end, in decreasing order: no second array of positions)."""
    j_start = np.zeros(n_spheres + 1, dtype=np.uint32)
    for k in range(n_pairs):
        j = pair_j[k]
        if j < n_spheres:
            j_start[j] += 1
    for p in range(1, n_spheres):
        j_start[p] += j_start[p - 1]
    total = j_start[n_spheres - 1] if n_spheres else 0
    j_start[n_spheres] = total
    j_pairs = np.empty(total, dtype=np.uint32)
    for k in range(n_pairs - 1, -1, -1):
        j = pair_j[k]
        if j < n_spheres:
            q = j_start[j] - 1
            j_start[j] = q
            j_pairs[q] = k
    return j_start, j_pairs


@kernel
def boundary_pairs(n_spheres, n_boundary, n_pairs, pair_j):
    """CSR of the pair list by wall or mesh triangle (``j >= n_spheres``, row ``j - n_spheres``):
    (start (n_boundary + 1,) int64, pairs (uint32)), pairs in order.  For the servo-controlled
    walls and meshes, which sum their contacts' forces every step."""
    start = np.zeros(n_boundary + 1, dtype=np.int64)
    for k in range(n_pairs):
        j = pair_j[k]
        if j >= n_spheres:
            start[j - n_spheres + 1] += 1
    for b in range(n_boundary):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    pairs = np.empty(start[n_boundary], dtype=np.uint32)
    for k in range(n_pairs):
        j = pair_j[k]
        if j >= n_spheres:
            b = j - n_spheres
            pairs[fill[b]] = k
            fill[b] += 1
    return start, pairs
