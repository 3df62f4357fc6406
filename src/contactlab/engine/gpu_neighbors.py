"""The neighbour list rebuilt on the GPU: the CPU's cell list and history carry as device passes.

The same list as :func:`contactlab.neighbors.celllist.build_pairs` (the same grid, the same
candidates, each body's partners sorted, its walls after them) and the same rows carried as
:func:`contactlab.engine.history_match.carry_rows`, bit for bit, built where the state is:

1. the bounding box of the positions (a device min/max: exact, so in any order the same), then the
   grid on the host from its six numbers (:func:`~contactlab.neighbors.celllist.grid_from_bounds`);
2. a counting sort of the bodies into cells: counts per cell (integer atomics), a prefix sum,
   each body placed in its cell (an atomic slot), then each cell's bodies sorted by index -- the
   CPU's order, whatever order the atomics took;
3. each body's partners counted and then written by the CPU's own per-body scan
   (:func:`~contactlab.neighbors.celllist.scan_sphere`, compiled for the device), a prefix sum
   between the two giving the list's CSR by first body;
4. each pair's rows of history, outputs and status copied from the old table by a thread per first
   body walking its old and new partners side by side (the CPU's rule; into new arrays, where the
   CPU moves them in place);
5. the CSR by second body: counts (integer atomics), a prefix sum, slots, each body's pairs sorted.

With the bodies stored in another order than the user's (the spatial sort at each rebuild,
:mod:`contactlab.engine.gpu_order`, :class:`Relabel`), the scans, the switched-off filter, the bond
union and the carry see each body by its user index, partners are turned into stored indices at
the end, and the CSRs by second body and by wall are sorted by their owners' user indices: the
table is the CPU's table with its bodies renumbered, its rows in storage order.

No floating-point atomics and no order that depends on the threads: the table is the CPU's.  Intact
bonds stay in the list at any distance (each body's built partners joined with its old bonded
ones, as the CPU's sorted union).  In a periodic cell the bodies are wrapped first (a thread per
body: :func:`contactlab.engine.cell_motion.wrap_body`) and pairs are found by their minimum image
(:func:`contactlab.neighbors.periodic_list.scan_periodic`), Lees-Edwards shear included.  Switched-off
pairs (``Simulation.set_active``) are dropped per body before the bonds join, as on the CPU.  With
servo control, the CSR of the pairs by wall is made the same way as the one by second body.  Every
scene the GPU runs rebuilds here; the host's rebuild remains for what the GPU refuses
(:meth:`contactlab.engine.gpu_stepper.GpuStepper.device_rebuild_possible`).

Prefix sums (:func:`inclusive_scan`): each thread sums a chunk, the chunk sums are scanned the same
way (recursively, down to one thread), each thread then rescans its chunk from its offset.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..geometry.sphere_cylinder import N_WALL_SHAPE
from ..gpu import backend
from ..gpu.backend import cuda, gpu_kernel
from ..geometry.periodic import CELL_FLOW, CELL_GRADIENT, CELL_LENGTH, CELL_SHEAR
from ..neighbors.celllist import cell_index, grid_from_bounds, insertion_sort, scan_sphere
from ..neighbors.periodic_list import check_cell, periodic_grid_from_bounds, scan_periodic
from . import gpu_order
from .cell_motion import mark_built, shear_offset_shift, wrap_body
from .history_match import copy_row, zero_row
from .layout import INDEX

__all__ = ["DeviceTable", "Relabel", "build_list", "cell_order", "wrap_into_cell", "inclusive_scan", "bucket_sort", "plane_walls", "CHUNK"]

#: elements per thread of a prefix sum's pass; at most this many are scanned by one thread
CHUNK = 256


#: the arrays of a build, handed to its kernels as one record (a tuple of device arrays; numba-cuda's
#: simulator also leaves arrays inside a tuple as they are, so that the CPU's building blocks take them)
Build = namedtuple("Build", ["pos", "radius", "fixed", "box", "origin", "inv_w", "dims", "cell_start", "items",
                             "sorted_xr", "wall_point", "wall_normal", "wall_kind", "wall_shape", "none", "i_start",
                             "pair_i", "pair_j", "cell", "labels", "sorted_labels"])
#: the user's indices of the bodies as stored (``labels``, and ``rank`` its inverse) and, for the
#: rows carried from the old list, where each body was stored then (``old_of``) and the user's
#: indices of the old storage (``old_labels``): :mod:`contactlab.engine.gpu_order`
Relabel = namedtuple("Relabel", ["labels", "rank", "old_of", "old_labels"])
#: what the wrap of the bodies into a periodic cell moves and books
Wrap = namedtuple("Wrap", ["pos", "vel", "vel_pred", "images", "cell", "mass", "fixed", "boundary_work"])
#: the rows carried from the old table to the new one
Carry = namedtuple("Carry", ["old_start", "old_j", "new_start", "new_j", "old_hist", "old_out", "old_status", "hist",
                             "out", "status", "old_of", "old_labels"])
#: a counting sort by key (:func:`bucket_sort`)
Buckets = namedtuple("Buckets", ["keys", "start", "fill", "items"])
#: the switched-off pairs dropped from the built list (``Simulation.set_active``)
Filter = namedtuple("Filter", ["built_start", "built_j", "material", "wall_material", "material_active", "keys",
                               "start", "pair_i", "pair_j", "labels", "rank"])
#: the built list joined with the old list's intact bonds (kept at any distance)
Union = namedtuple("Union", ["built_start", "built_j", "old_start", "old_j", "old_hist", "start", "pair_i", "pair_j",
                             "old_of", "old_labels"])


# ------------------------------------------------------------------ prefix sums
@gpu_kernel
def _chunk_sums(n, arrays):
    a, sums = arrays
    t = cuda.grid(1)
    lo = t * CHUNK
    if lo >= n:
        return
    s = 0
    for k in range(lo, min(lo + CHUNK, n)):
        s += a[k]
    sums[t] = s


@gpu_kernel
def _chunk_scan(n, arrays):
    """Inclusive scan of each chunk of ``a`` from the inclusive scan of the chunk sums."""
    a, sums = arrays
    t = cuda.grid(1)
    lo = t * CHUNK
    if lo >= n:
        return
    acc = sums[t - 1] if t > 0 else 0
    for k in range(lo, min(lo + CHUNK, n)):
        acc += a[k]
        a[k] = acc


def _launch(n_threads: int):
    """``(blocks, threads)`` for ``n_threads`` threads of one element each."""
    per_block = 1 if backend.simulated() else 128
    return max(1, -(-n_threads // per_block)), per_block


def inclusive_scan(a, n: int) -> None:
    """Inclusive prefix sum of the first ``n`` entries of the device array ``a``, in place (integers:
    exact, the same in any order)."""
    chunks = max(1, -(-n // CHUNK))
    sums = backend.device_zeros(chunks, np.int64)
    _chunk_sums[_launch(chunks)](n, (a, sums))
    if chunks > 1:
        inclusive_scan(sums, chunks)
    _chunk_scan[_launch(chunks)](n, (a, sums))


# ------------------------------------------------------------------ the cell list
@gpu_kernel
def _bounds(per, b):
    """``box[0] = min``, ``box[1] = max`` of the positions per axis (exact: any order)."""
    pos, box = b.pos, b.box
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, pos.shape[0])):
        for d in range(3):
            cuda.atomic.min(box, (0, d), pos[p, d])
            cuda.atomic.max(box, (1, d), pos[p, d])


@gpu_kernel
def _cell_keys(per, b, keys):
    """Each body's cell."""
    pos = b.pos
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, pos.shape[0])):
        keys[p] = cell_index(pos[p, 0], pos[p, 1], pos[p, 2], b.origin, b.inv_w, b.dims)


@gpu_kernel
def _pair_keys(per, lo, hi, pair_j, keys):
    """Each pair's key ``pair_j[k] - lo`` where ``lo <= pair_j[k] < hi``, else -1 (not sorted)."""
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, keys.shape[0])):
        j = pair_j[k]
        keys[k] = j - lo if lo <= j < hi else -1


@gpu_kernel
def _count_keys(per, bk):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, bk.keys.shape[0])):
        key = bk.keys[k]
        if key >= 0:
            cuda.atomic.add(bk.start, key + 1, 1)


@gpu_kernel
def _place_keys(per, bk):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, bk.keys.shape[0])):
        key = bk.keys[k]
        if key >= 0:
            bk.items[bk.start[key] + cuda.atomic.add(bk.fill, key, 1)] = k


@gpu_kernel
def _sort_segments(per, n_segments, arrays):
    """Sort each segment ``values[start[s]:start[s + 1]]`` ascending (the CPU's insertion sort:
    cells and bodies hold a few entries)."""
    start, values = arrays
    s0 = cuda.grid(1) * per
    for s in range(s0, min(s0 + per, n_segments)):
        insertion_sort(values, start[s], start[s + 1])


def bucket_sort(keys, n_keys: int, start_dtype, items_dtype):
    """``(start, items)``: the indices ``k`` of the device array ``keys`` with ``keys[k] >= 0``,
    grouped by key (``start``, (n_keys + 1,), the CSR) and increasing within each group: counts
    and slots by integer atomics, a prefix sum, then each group sorted, so the result is the same
    in any order of the threads (the CPU's counting sorts: the cells' bodies, the pairs by second
    body, the pairs by wall)."""
    zeros = backend.device_zeros
    per, blocks, threads = backend.launch_shape(keys.shape[0])
    bk = Buckets(keys, zeros(n_keys + 1, start_dtype), zeros(max(n_keys, 1), start_dtype), None)
    _count_keys[blocks, threads](per, bk)
    inclusive_scan(bk.start, n_keys + 1)
    total = _host_int(bk.start, n_keys)
    bk = bk._replace(items=zeros(max(total, 1), items_dtype))
    _place_keys[blocks, threads](per, bk)
    s_per, s_blocks, s_threads = backend.launch_shape(max(n_keys, 1))
    _sort_segments[s_blocks, s_threads](s_per, n_keys, (bk.start, bk.items))
    return bk.start, bk.items[:total]


@gpu_kernel
def _copy_sorted(per, b):
    items, pos, sorted_xr = b.items, b.pos, b.sorted_xr
    q0 = cuda.grid(1) * per
    for q in range(q0, min(q0 + per, items.shape[0])):
        p = items[q]
        sorted_xr[q, 0] = pos[p, 0]
        sorted_xr[q, 1] = pos[p, 1]
        sorted_xr[q, 2] = pos[p, 2]
        sorted_xr[q, 3] = -b.radius[p] if b.fixed[p] else b.radius[p]
        b.sorted_labels[q] = b.labels[p]


@gpu_kernel
def _scan_pairs(per, reach, skin, write, b, cell):
    """Count (``write`` False: into ``i_start[i + 1]``) or write (``pair_j``, ``pair_i``) the
    partners of each body by the CPU's per-body scan: ``scan_sphere``, or ``scan_periodic`` by the
    minimum image.  The scan sees the bodies by their user indices (``sorted_labels``): it keeps
    the partners of larger user index, sorted by it, and writes those indices (turned into
    storage indices after the rows are carried); the CSR is by stored body.  ``cell``: ``b.cell``
    handed as an argument too, so that the branch a None cell does not take compiles away (the
    scan reads ``b.cell``, which the simulator leaves a plain array)."""
    items = b.items
    n = items.shape[0]
    out = b.pair_j if write else b.none
    q0 = cuda.grid(1) * per
    for q in range(q0, min(q0 + per, n)):
        i = items[q]
        base = b.i_start[i] if write else 0
        if cell is None:
            count = scan_sphere(q, b.cell_start, b.sorted_labels, b.sorted_xr, b.origin, b.inv_w, b.dims, skin,
                                b.wall_point, b.wall_normal, b.wall_kind, b.wall_shape, n, out, base)
        else:
            count = scan_periodic(q, b.cell_start, b.sorted_labels, b.sorted_xr, b.dims, b.origin, b.inv_w, reach, skin,
                                  b.cell, b.wall_point, b.wall_normal, b.wall_kind, b.wall_shape, n, out, base)
        if write:
            for k in range(base, base + count):
                b.pair_i[k] = i
        else:
            b.i_start[i + 1] = count


@gpu_kernel
def _drop_switched_off(per, n_bodies, write, f):
    """Count (``write`` False: into ``start[i + 1]``) or write each body's built partners that are
    not switched off: by their materials (``material_active``) or as a pair (``keys``, sorted
    ``i * n_bodies + j`` of user indices; a binary search): the CPU's ``filter_pairs``, per body
    (``i`` stored, its partners ``j`` as user indices)."""
    n_s = f.material.shape[0]
    n_keys = f.keys.shape[0]
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, n_s)):
        k_out = f.start[i] if write else 0
        count = 0
        for k in range(f.built_start[i], f.built_start[i + 1]):
            j = f.built_j[k]
            mj = f.material[f.rank[j]] if j < n_s else f.wall_material[j - n_s]
            keep = f.material_active[f.material[i], mj] != 0
            if keep and n_keys > 0:
                key = f.labels[i] * n_bodies + j
                lo = 0
                hi = n_keys
                while lo < hi:
                    mid = (lo + hi) // 2
                    if f.keys[mid] < key:
                        lo = mid + 1
                    else:
                        hi = mid
                keep = not (lo < n_keys and f.keys[lo] == key)
            if keep:
                if write:
                    f.pair_j[k_out + count] = j
                    f.pair_i[k_out + count] = i
                count += 1
        if not write:
            f.start[i + 1] = count


@gpu_kernel
def _join_bonds(per, bond_column, write, u):
    """Count (``write`` False: into ``start[i + 1]``) or write each body's partners: its built ones
    and its old partners whose bond is intact (bond state > 0), merged (both sorted) without
    repeats: the CPU's sorted union of the built and the kept pairs (``i`` stored now, at
    ``old_of[i]`` in the old list; partners compared and written as user indices)."""
    n_s = u.old_labels.shape[0]
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, u.built_start.shape[0] - 1)):
        a = u.built_start[i]
        a_end = u.built_start[i + 1]
        s = u.old_start[u.old_of[i]]
        s_end = u.old_start[u.old_of[i] + 1]
        k = u.start[i] if write else 0
        count = 0
        while a < a_end or s < s_end:
            if s < s_end and u.old_hist[s, bond_column] <= 0.0:
                s += 1
                continue
            old_j = 0
            if s < s_end:
                old_j = u.old_j[s]
                if old_j < n_s:
                    old_j = u.old_labels[old_j]
            if s >= s_end or (a < a_end and u.built_j[a] <= old_j):
                j = u.built_j[a]
                if s < s_end and old_j == j:
                    s += 1
                a += 1
            else:
                j = old_j
                s += 1
            if write:
                u.pair_j[k + count] = j
                u.pair_i[k + count] = i
            count += 1
        if not write:
            u.start[i + 1] = count


@gpu_kernel
def _wrap(per, m, w):
    """Each body back into the periodic cell (:func:`contactlab.engine.cell_motion.wrap_body`),
    its flow-axis image counter first shifted by ``m`` times its gradient-axis one (the shear
    offset brought back into the cell by ``m`` flow lengths)."""
    g = int(w.cell[CELL_GRADIENT])
    f = int(w.cell[CELL_FLOW])
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, w.pos.shape[0])):
        if m != 0:
            w.images[p, f] += m * w.images[p, g]
        wrap_body(p, w.pos, w.vel, w.vel_pred, w.images, w.cell, 0.0 if w.fixed[p] else w.mass[p], w.boundary_work)


def wrap_into_cell(bodies, books, bounds, images, radius, skin: float, time: float, step: int) -> np.ndarray:
    """Before a build in a periodic cell, as :meth:`contactlab.engine.stepper.Stepper.rebuild` on the
    host: the shear offset into the cell, the bodies wrapped (velocity jumps, image counters, the
    cell's work on them), the cell's length checked (an error as on the CPU), its build reference
    set.  Returns the host copy of the cell (the grid is made from it)."""
    cell = np.zeros(bounds.cell.shape[0])
    backend.to_host(bounds.cell, cell)
    m = shear_offset_shift(cell)
    if m != 0:
        cell[CELL_SHEAR] -= m * cell[CELL_LENGTH + int(cell[CELL_FLOW])]
        backend.to_device_into(cell, bounds.cell)
    per, blocks, threads = backend.launch_shape(bodies.pos.shape[0])
    _wrap[blocks, threads](per, m, Wrap(bodies.pos, bodies.vel, bodies.vel_pred, images, bounds.cell, bodies.mass,
                                        bodies.fixed, books.boundary_work))
    check_cell(cell, radius, skin, time, step)
    mark_built(cell)
    backend.to_device_into(cell, bounds.cell)
    return cell


# ------------------------------------------------------------------ rows carried, CSR by second body
@gpu_kernel
def _carry(per, c):
    """Each new pair's rows from the same pair ``(i, j)`` of the old list (zero for a new pair),
    found by walking body ``i``'s old and new partners side by side (both sorted; the CPU's
    :func:`~contactlab.engine.history_match.carry_rows`, into new arrays; body ``i`` stored at
    ``old_of[i]`` in the old list, partners compared as user indices)."""
    old_start, old_j, new_start, new_j = c.old_start, c.old_j, c.new_start, c.new_j
    n_s = c.old_labels.shape[0]
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, new_start.shape[0] - 1)):
        s = old_start[c.old_of[i]]
        s_end = old_start[c.old_of[i] + 1]
        for k in range(new_start[i], new_start[i + 1]):
            j = new_j[k]
            while s < s_end and _user_index(old_j[s], c.old_labels, n_s) < j:
                s += 1
            if s < s_end and _user_index(old_j[s], c.old_labels, n_s) == j:
                copy_row(c.old_hist, c.old_out, c.old_status, s, c.hist, c.out, c.status, k)
            else:
                zero_row(k, c.hist, c.out, c.status)


@cuda.jit(device=True)
def _user_index(j, labels, n_s):
    """A stored partner ``j`` as the user's index (a wall's ``n_s + w`` as it is)."""
    return labels[j] if j < n_s else j


@gpu_kernel
def _to_storage(per, n_s, rank, pair_j):
    """Each pair's partner from the user's index to where it is stored (walls as they are)."""
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, pair_j.shape[0])):
        j = pair_j[k]
        if j < n_s:
            pair_j[k] = rank[j]


@gpu_kernel
def _sort_by_owner(per, n_segments, arrays):
    """Each segment ``rows[start[s]:start[s + 1]]`` (pair indices) sorted by the user index of the
    pair's owner, ``labels[pair_i[row]]`` (the CPU's order of these rows: by owner), an insertion
    sort (a body is the second of a few pairs)."""
    start, rows, pair_i, labels = arrays
    s0 = cuda.grid(1) * per
    for s in range(s0, min(s0 + per, n_segments)):
        lo = start[s]
        for a in range(lo + 1, start[s + 1]):
            v = rows[a]
            key = labels[pair_i[v]]
            b = a - 1
            while b >= lo and labels[pair_i[rows[b]]] > key:
                rows[b + 1] = rows[b]
                b -= 1
            rows[b + 1] = v


@gpu_kernel
def _copy_rows(per, arrays):
    src, dst = arrays
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, src.shape[0])):
        for d in range(src.shape[1]):
            dst[p, d] = src[p, d]


class DeviceTable:
    """A contact list built on the device: the arrays of the kernels' Table record that a build
    replaces, and its size."""

    def __init__(self, pair_i, pair_j, hist, out, status, i_start, j_start, j_pairs, n_pairs, bound_start=None,
                 bound_pairs=None, items=None):
        self.pair_i, self.pair_j, self.hist, self.out, self.status = pair_i, pair_j, hist, out, status
        self.i_start, self.j_start, self.j_pairs, self.n_pairs = i_start, j_start, j_pairs, int(n_pairs)
        #: the CSR of the pairs by wall and mesh triangle (servo control), or None
        self.bound_start, self.bound_pairs = bound_start, bound_pairs
        #: (N,) int32 the bodies in cell order (increasing within a cell)
        self.items = items


def _host_int(device, index: int) -> int:
    """One integer of a device array, on the host."""
    tmp = np.zeros(1, dtype=device.dtype)
    backend.to_host(device[index:index + 1], tmp)
    return int(tmp[0])


def cell_order(pos, radius, fixed, skin: float, max_radius: float, cell=None):
    """The bodies in the order of their cells on the grid a build around ``pos`` makes
    (:func:`build_list`'s first two passes): a device array of stored indices, increasing
    within a cell (the spatial sort's permutation, :mod:`contactlab.engine.gpu_order`)."""
    return _cells(pos, radius, fixed, skin, max_radius, cell)[1]


def _cells(pos, radius, fixed, skin: float, max_radius: float, cell):
    """The grid around the device positions and the bodies sorted into its cells:
    ``(Build record, items, reach)``."""
    n = pos.shape[0]
    per, blocks, threads = backend.launch_shape(n)
    b = Build(pos, radius, fixed, backend.to_device(np.array([[np.inf] * 3, [-np.inf] * 3])), *([None] * 17))
    _bounds[blocks, threads](per, b)
    box = np.zeros((2, 3))
    backend.to_host(b.box, box)
    reach = 2.0 * max_radius + skin
    if cell is None:
        origin, inv_cell, dims = grid_from_bounds(box[0], box[1], reach, max(8 * n, 4096))
        inv_w = np.full(3, inv_cell)
    else:
        origin, inv_w, dims = periodic_grid_from_bounds(box[0], box[1], cell, reach, max(8 * n, 4096))
    dims = np.ascontiguousarray(dims, dtype=np.int64)
    b = b._replace(origin=backend.to_device(np.ascontiguousarray(origin, dtype=np.float64)),
                   inv_w=backend.to_device(np.ascontiguousarray(inv_w, dtype=np.float64)), dims=backend.to_device(dims))
    keys = backend.device_zeros(n, np.int64)
    _cell_keys[blocks, threads](per, b, keys)
    cell_start, items = bucket_sort(keys, int(np.prod(dims)), np.int32, np.int32)
    return b._replace(cell_start=cell_start, items=items), items, reach


def build_list(bodies, bounds, table, skin: float, max_radius: float, walls, bond_column: int = -1,
               cell=None, n_boundary: int = -1, exclusions=None, relabel: Relabel | None = None) -> DeviceTable:
    """The new list around the device positions ``bodies.pos`` and the rows carried from the device
    table ``table`` (the kernels' Table record); the build reference (``table.ref_pos``,
    ``bounds.wall_ref``) written.  ``walls = (wall_kind, wall_shape)`` device arrays (the cylinder
    walls' kinds and shapes, zeros for planes); ``max_radius``: the largest radius, m;
    ``bond_column``: the history column of the law's bond state (-1: no bonds), whose intact
    bonds stay in the list at any distance; ``cell``: the host copy of the periodic cell (after
    :func:`wrap_into_cell`; None: no cell), pairs then by their minimum image; ``n_boundary``: the
    walls and mesh triangles whose CSR of pairs (servo control) is made too (-1: none);
    ``exclusions``: the switched-off pairs (:class:`~contactlab.neighbors.exclusions.Exclusions`,
    host; None or nothing off: none), dropped from the built pairs before the bonds join;
    ``relabel``: the user's indices of the stored bodies and where they were stored at the old
    list's build (:class:`Relabel`; None: stored in the user's order, then and now)."""
    pos = bodies.pos
    n = pos.shape[0]
    per, blocks, threads = backend.launch_shape(n)
    zeros = backend.device_zeros
    if relabel is None:
        same = gpu_order.identity(n)
        relabel = Relabel(same, same, same, same)
    # 1. the grid, from the bounding box; 2. bodies into cells, increasing within a cell
    b, items, reach = _cells(pos, bodies.radius, bodies.fixed, skin, max_radius, cell)
    wall_kind, wall_shape = walls
    b = b._replace(cell=bounds.cell, sorted_xr=zeros((n, 4), np.float64), wall_point=bounds.wall_point,
                   wall_normal=bounds.wall_normal, wall_kind=wall_kind, wall_shape=wall_shape, none=zeros(0, INDEX),
                   i_start=zeros(n + 1, INDEX), labels=relabel.labels, sorted_labels=zeros(n, gpu_order.LABEL))
    _copy_sorted[blocks, threads](per, b)
    # 3. partners counted, the CSR by first body, partners written
    _scan_pairs[blocks, threads](per, reach, float(skin), False, b, b.cell)
    n_pairs, pair_i, pair_j = _partner_arrays(b.i_start, n)
    b = b._replace(pair_i=pair_i, pair_j=pair_j)
    _scan_pairs[blocks, threads](per, reach, float(skin), True, b, b.cell)
    if exclusions is not None and exclusions.any:
        f = Filter(b.i_start, b.pair_j, bodies.material, bounds.wall_material,
                   backend.to_device(exclusions.material_active), backend.to_device(exclusions.keys),
                   zeros(n + 1, INDEX), None, None, relabel.labels, relabel.rank)
        _drop_switched_off[blocks, threads](per, np.int64(exclusions.n_bodies), False, f)
        n_pairs, pair_i, pair_j = _partner_arrays(f.start, n)
        f = f._replace(pair_i=pair_i, pair_j=pair_j)
        _drop_switched_off[blocks, threads](per, np.int64(exclusions.n_bodies), True, f)
        b = b._replace(i_start=f.start, pair_i=f.pair_i, pair_j=f.pair_j)
    if bond_column >= 0:
        # the intact bonds kept: the built list joined with them, per body
        u = Union(b.i_start, b.pair_j, table.i_start, table.pair_j, table.hist, zeros(n + 1, INDEX), None, None,
                  relabel.old_of, relabel.old_labels)
        _join_bonds[blocks, threads](per, bond_column, False, u)
        n_pairs, pair_i, pair_j = _partner_arrays(u.start, n)
        u = u._replace(pair_i=pair_i, pair_j=pair_j)
        _join_bonds[blocks, threads](per, bond_column, True, u)
        b = b._replace(i_start=u.start, pair_i=u.pair_i, pair_j=u.pair_j)
    # 4. rows carried
    rows = max(n_pairs, 1)
    c = Carry(table.i_start, table.pair_j, b.i_start, b.pair_j, table.hist, table.out, table.status,
              zeros((rows, table.hist.shape[1]), np.float64), zeros((rows, table.out.shape[1]), np.float64),
              zeros(rows, np.int8), relabel.old_of, relabel.old_labels)
    _carry[blocks, threads](per, c)
    # the partners from the user's indices to where they are stored
    k_per, k_blocks, k_threads = backend.launch_shape(n_pairs)
    _to_storage[k_blocks, k_threads](k_per, n, relabel.rank, b.pair_j[:n_pairs])
    # 5. the CSR by second body and, for servo control, by wall (the CPU's transpose_pairs, boundary_pairs)
    # (each CSR's rows in the order of their owners' user indices, as the CPU's rows are)
    keys = zeros(n_pairs, np.int64)
    _pair_keys[k_blocks, k_threads](k_per, 0, n, b.pair_j[:n_pairs], keys)
    j_start, j_pairs = bucket_sort(keys, n, INDEX, INDEX)
    s_per, s_blocks, s_threads = backend.launch_shape(n)
    _sort_by_owner[s_blocks, s_threads](s_per, n, (j_start, j_pairs, b.pair_i, relabel.labels))
    bound_start = bound_pairs = None
    if n_boundary >= 0:
        _pair_keys[k_blocks, k_threads](k_per, n, n + n_boundary, b.pair_j[:n_pairs], keys)
        bound_start, bound_pairs = bucket_sort(keys, n_boundary, np.int64, INDEX)
        w_per, w_blocks, w_threads = backend.launch_shape(max(n_boundary, 1))
        _sort_by_owner[w_blocks, w_threads](w_per, n_boundary, (bound_start, bound_pairs, b.pair_i, relabel.labels))
    # the build reference
    _copy_rows[blocks, threads](per, (pos, table.ref_pos))
    w_per, w_blocks, w_threads = backend.launch_shape(max(bounds.wall_point.shape[0], 1))
    _copy_rows[w_blocks, w_threads](w_per, (bounds.wall_point, bounds.wall_ref))
    return DeviceTable(b.pair_i, b.pair_j, c.hist, c.out, c.status, b.i_start, j_start, j_pairs, n_pairs,
                       bound_start, bound_pairs, b.items)


def _partner_arrays(start, n: int):
    """After a pass that counted each body's partners into ``start[i + 1]``: ``start`` made the
    CSR (a prefix sum), the number of pairs (checked against the 32-bit pair index) and zeroed
    arrays ``(pair_i, pair_j)`` for the pass that writes them."""
    inclusive_scan(start, n + 1)
    n_pairs = _host_int(start, n)
    if n_pairs >= 2**32:
        raise MemoryError(f"{n_pairs} candidate pairs exceed the 32-bit pair index")
    rows = max(n_pairs, 1)
    return n_pairs, backend.device_zeros(rows, INDEX), backend.device_zeros(rows, INDEX)


def plane_walls(n_walls: int):
    """``(wall_kind, wall_shape)`` device arrays of ``n_walls`` plane walls."""
    return (backend.device_zeros(n_walls, np.uint8), backend.device_zeros((n_walls, N_WALL_SHAPE), np.float64))

