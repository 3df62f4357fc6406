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
from ..neighbors.celllist import cell_index, grid_from_bounds, scan_sphere
from ..neighbors.periodic_list import check_cell, periodic_grid_from_bounds, scan_periodic
from .cell_motion import mark_built, shear_offset_shift, wrap_body
from .layout import INDEX

__all__ = ["DeviceTable", "build_list", "wrap_into_cell", "inclusive_scan", "plane_walls", "CHUNK"]

#: elements per thread of a prefix sum's pass; at most this many are scanned by one thread
CHUNK = 256


#: the arrays of a build, handed to its kernels as one record (a tuple of device arrays; numba-cuda's
#: simulator also leaves arrays inside a tuple as they are, so that the CPU's building blocks take them)
Build = namedtuple("Build", ["pos", "radius", "fixed", "box", "origin", "inv_w", "dims", "cell_start", "cell_fill",
                             "items", "sorted_xr", "wall_point", "wall_normal", "wall_kind", "wall_shape", "none",
                             "i_start", "pair_i", "pair_j", "cell"])
#: what the wrap of the bodies into a periodic cell moves and books
Wrap = namedtuple("Wrap", ["pos", "vel", "vel_pred", "images", "cell", "mass", "fixed", "boundary_work"])
#: the rows carried from the old table to the new one
Carry = namedtuple("Carry", ["old_start", "old_j", "new_start", "new_j", "old_hist", "old_out", "old_status", "hist",
                             "out", "status"])
#: the CSR by second body
Partners = namedtuple("Partners", ["pair_j", "j_start", "j_fill", "j_pairs"])
#: the switched-off pairs dropped from the built list (``Simulation.set_active``)
Filter = namedtuple("Filter", ["built_start", "built_j", "material", "wall_material", "material_active", "keys",
                               "start", "pair_i", "pair_j"])
#: the built list joined with the old list's intact bonds (kept at any distance)
Union = namedtuple("Union", ["built_start", "built_j", "old_start", "old_j", "old_hist", "start", "pair_i", "pair_j"])


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
def _count_cells(per, b):
    pos = b.pos
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, pos.shape[0])):
        c = cell_index(pos[p, 0], pos[p, 1], pos[p, 2], b.origin, b.inv_w, b.dims)
        cuda.atomic.add(b.cell_start, c + 1, 1)


@gpu_kernel
def _place(per, b):
    pos = b.pos
    p0 = cuda.grid(1) * per
    for p in range(p0, min(p0 + per, pos.shape[0])):
        c = cell_index(pos[p, 0], pos[p, 1], pos[p, 2], b.origin, b.inv_w, b.dims)
        b.items[b.cell_start[c] + cuda.atomic.add(b.cell_fill, c, 1)] = p


@gpu_kernel
def _sort_segments(per, n_segments, arrays):
    """Sort each segment ``values[start[s]:start[s + 1]]`` ascending (insertion sort: cells and
    bodies hold a few entries)."""
    start, values = arrays
    s0 = cuda.grid(1) * per
    for s in range(s0, min(s0 + per, n_segments)):
        lo = start[s]
        hi = start[s + 1]
        for a in range(lo + 1, hi):
            v = values[a]
            c = a - 1
            while c >= lo and values[c] > v:
                values[c + 1] = values[c]
                c -= 1
            values[c + 1] = v


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


@gpu_kernel
def _count_pairs(per, skin, b):
    items = b.items
    q0 = cuda.grid(1) * per
    n = items.shape[0]
    for q in range(q0, min(q0 + per, n)):
        b.i_start[items[q] + 1] = scan_sphere(q, b.cell_start, items, b.sorted_xr, b.origin, b.inv_w, b.dims, skin,
                                              b.wall_point, b.wall_normal, b.wall_kind, b.wall_shape, n, b.none, 0)


@gpu_kernel
def _fill_pairs(per, skin, b):
    items, i_start = b.items, b.i_start
    q0 = cuda.grid(1) * per
    n = items.shape[0]
    for q in range(q0, min(q0 + per, n)):
        i = items[q]
        base = i_start[i]
        scan_sphere(q, b.cell_start, items, b.sorted_xr, b.origin, b.inv_w, b.dims, skin, b.wall_point, b.wall_normal,
                    b.wall_kind, b.wall_shape, n, b.pair_j, base)
        for k in range(base, i_start[i + 1]):
            b.pair_i[k] = i


@gpu_kernel
def _drop_switched_off(per, n_bodies, write, f):
    """Count (``write`` False: into ``start[i + 1]``) or write each body's built partners that are
    not switched off: by their materials (``material_active``) or as a pair (``keys``, sorted
    ``i * n_bodies + j``; a binary search): the CPU's ``filter_pairs``, per body."""
    n_s = f.material.shape[0]
    n_keys = f.keys.shape[0]
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, n_s)):
        k_out = f.start[i] if write else 0
        count = 0
        for k in range(f.built_start[i], f.built_start[i + 1]):
            j = f.built_j[k]
            mj = f.material[j] if j < n_s else f.wall_material[j - n_s]
            keep = f.material_active[f.material[i], mj] != 0
            if keep and n_keys > 0:
                key = i * n_bodies + j
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
    repeats: the CPU's sorted union of the built and the kept pairs."""
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, u.built_start.shape[0] - 1)):
        a = u.built_start[i]
        a_end = u.built_start[i + 1]
        s = u.old_start[i]
        s_end = u.old_start[i + 1]
        k = u.start[i] if write else 0
        count = 0
        while a < a_end or s < s_end:
            if s < s_end and u.old_hist[s, bond_column] <= 0.0:
                s += 1
                continue
            if s >= s_end or (a < a_end and u.built_j[a] <= u.old_j[s]):
                j = u.built_j[a]
                if s < s_end and u.old_j[s] == j:
                    s += 1
                a += 1
            else:
                j = u.old_j[s]
                s += 1
            if write:
                u.pair_j[k + count] = j
                u.pair_i[k + count] = i
            count += 1
        if not write:
            u.start[i + 1] = count


@gpu_kernel
def _count_pairs_periodic(per, reach, skin, b):
    items = b.items
    q0 = cuda.grid(1) * per
    n = items.shape[0]
    for q in range(q0, min(q0 + per, n)):
        b.i_start[items[q] + 1] = scan_periodic(q, b.cell_start, items, b.sorted_xr, b.dims, b.origin, b.inv_w, reach,
                                                skin, b.cell, b.wall_point, b.wall_normal, b.wall_kind, b.wall_shape,
                                                n, b.none, 0)


@gpu_kernel
def _fill_pairs_periodic(per, reach, skin, b):
    items, i_start = b.items, b.i_start
    q0 = cuda.grid(1) * per
    n = items.shape[0]
    for q in range(q0, min(q0 + per, n)):
        i = items[q]
        base = i_start[i]
        scan_periodic(q, b.cell_start, items, b.sorted_xr, b.dims, b.origin, b.inv_w, reach, skin, b.cell,
                      b.wall_point, b.wall_normal, b.wall_kind, b.wall_shape, n, b.pair_j, base)
        for k in range(base, i_start[i + 1]):
            b.pair_i[k] = i


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
    per, blocks, threads = _shape(bodies.pos.shape[0])
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
    found by walking body ``i``'s old and new partners side by side (both sorted)."""
    old_start, old_j, new_start, new_j = c.old_start, c.old_j, c.new_start, c.new_j
    hist, out, status = c.hist, c.out, c.status
    i0 = cuda.grid(1) * per
    for i in range(i0, min(i0 + per, new_start.shape[0] - 1)):
        s = old_start[i]
        s_end = old_start[i + 1]
        for k in range(new_start[i], new_start[i + 1]):
            j = new_j[k]
            while s < s_end and old_j[s] < j:
                s += 1
            if s < s_end and old_j[s] == j:
                for col in range(hist.shape[1]):
                    hist[k, col] = c.old_hist[s, col]
                for col in range(out.shape[1]):
                    out[k, col] = c.old_out[s, col]
                status[k] = c.old_status[s]
            else:
                for col in range(hist.shape[1]):
                    hist[k, col] = 0.0
                for col in range(out.shape[1]):
                    out[k, col] = 0.0
                status[k] = 0


@gpu_kernel
def _count_partners(per, n_pairs, n_spheres, t):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, n_pairs)):
        j = t.pair_j[k]
        if j < n_spheres:
            cuda.atomic.add(t.j_start, j + 1, 1)


@gpu_kernel
def _place_partners(per, n_pairs, n_spheres, t):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, n_pairs)):
        j = t.pair_j[k]
        if j < n_spheres:
            t.j_pairs[t.j_start[j] + cuda.atomic.add(t.j_fill, j, 1)] = k


@gpu_kernel
def _count_bounds(per, n_pairs, n_spheres, t):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, n_pairs)):
        j = t.pair_j[k]
        if j >= n_spheres:
            cuda.atomic.add(t.j_start, j - n_spheres + 1, 1)


@gpu_kernel
def _place_bounds(per, n_pairs, n_spheres, t):
    k0 = cuda.grid(1) * per
    for k in range(k0, min(k0 + per, n_pairs)):
        j = t.pair_j[k]
        if j >= n_spheres:
            b = j - n_spheres
            t.j_pairs[t.j_start[b] + cuda.atomic.add(t.j_fill, b, 1)] = k


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


def _shape(n: int):
    """``(per, blocks, threads)`` for ``n`` items (as the step kernels: gpu_stepper)."""
    if backend.simulated():
        return max(1, -(-n // 2)), 1, 2
    return 1, max(1, -(-n // 128)), 128


def _host_int(device, index: int) -> int:
    """One integer of a device array, on the host."""
    tmp = np.zeros(1, dtype=device.dtype)
    backend.to_host(device[index:index + 1], tmp)
    return int(tmp[0])


def build_list(bodies, bounds, table, skin: float, max_radius: float, walls, bond_column: int = -1,
               cell=None, n_boundary: int = -1, exclusions=None) -> DeviceTable:
    """The new list around the device positions ``bodies.pos`` and the rows carried from the device
    table ``table`` (the kernels' Table record); the build reference (``table.ref_pos``,
    ``bounds.wall_ref``) written.  ``walls = (wall_kind, wall_shape)`` device arrays (the cylinder
    walls' kinds and shapes, zeros for planes); ``max_radius``: the largest radius, m;
    ``bond_column``: the history column of the law's bond state (-1: no bonds), whose intact
    bonds stay in the list at any distance; ``cell``: the host copy of the periodic cell (after
    :func:`wrap_into_cell`; None: no cell), pairs then by their minimum image; ``n_boundary``: the
    walls and mesh triangles whose CSR of pairs (servo control) is made too (-1: none);
    ``exclusions``: the switched-off pairs (:class:`~contactlab.neighbors.exclusions.Exclusions`,
    host; None or nothing off: none), dropped from the built pairs before the bonds join."""
    pos = bodies.pos
    n = pos.shape[0]
    per, blocks, threads = _shape(n)
    zeros = backend.device_zeros
    # 1. the grid, from the bounding box
    b = Build(pos, bodies.radius, bodies.fixed, backend.to_device(np.array([[np.inf] * 3, [-np.inf] * 3])),
              *([None] * 16))
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
    n_cells = int(np.prod(dims))
    wall_kind, wall_shape = walls
    b = b._replace(origin=backend.to_device(np.ascontiguousarray(origin, dtype=np.float64)),
                   inv_w=backend.to_device(np.ascontiguousarray(inv_w, dtype=np.float64)), dims=backend.to_device(dims),
                   cell=bounds.cell,
                   cell_start=zeros(n_cells + 1, np.int32), cell_fill=zeros(n_cells, np.int32),
                   items=zeros(n, np.int32), sorted_xr=zeros((n, 4), np.float64), wall_point=bounds.wall_point,
                   wall_normal=bounds.wall_normal, wall_kind=wall_kind, wall_shape=wall_shape, none=zeros(0, INDEX),
                   i_start=zeros(n + 1, INDEX))
    # 2. bodies into cells, increasing within a cell
    _count_cells[blocks, threads](per, b)
    inclusive_scan(b.cell_start, n_cells + 1)
    _place[blocks, threads](per, b)
    c_per, c_blocks, c_threads = _shape(n_cells)
    _sort_segments[c_blocks, c_threads](c_per, n_cells, (b.cell_start, b.items))
    _copy_sorted[blocks, threads](per, b)
    # 3. partners counted, the CSR by first body, partners written
    if cell is None:
        _count_pairs[blocks, threads](per, float(skin), b)
    else:
        _count_pairs_periodic[blocks, threads](per, reach, float(skin), b)
    inclusive_scan(b.i_start, n + 1)
    n_pairs = _host_int(b.i_start, n)
    if n_pairs >= 2**32:
        raise MemoryError(f"{n_pairs} candidate pairs exceed the 32-bit pair index")
    capacity = max(n_pairs, 1)
    b = b._replace(pair_i=zeros(capacity, INDEX), pair_j=zeros(capacity, INDEX))
    if cell is None:
        _fill_pairs[blocks, threads](per, float(skin), b)
    else:
        _fill_pairs_periodic[blocks, threads](per, reach, float(skin), b)
    if exclusions is not None and exclusions.any:
        f = Filter(b.i_start, b.pair_j, bodies.material, bounds.wall_material,
                   backend.to_device(exclusions.material_active), backend.to_device(exclusions.keys),
                   zeros(n + 1, INDEX), None, None)
        _drop_switched_off[blocks, threads](per, np.int64(exclusions.n_bodies), False, f)
        inclusive_scan(f.start, n + 1)
        n_pairs = _host_int(f.start, n)
        capacity = max(n_pairs, 1)
        f = f._replace(pair_i=zeros(capacity, INDEX), pair_j=zeros(capacity, INDEX))
        _drop_switched_off[blocks, threads](per, np.int64(exclusions.n_bodies), True, f)
        b = b._replace(i_start=f.start, pair_i=f.pair_i, pair_j=f.pair_j)
    if bond_column >= 0:
        # the intact bonds kept: the built list joined with them, per body
        u = Union(b.i_start, b.pair_j, table.i_start, table.pair_j, table.hist, zeros(n + 1, INDEX), None, None)
        _join_bonds[blocks, threads](per, bond_column, False, u)
        inclusive_scan(u.start, n + 1)
        n_pairs = _host_int(u.start, n)
        if n_pairs >= 2**32:
            raise MemoryError(f"{n_pairs} candidate pairs exceed the 32-bit pair index")
        capacity = max(n_pairs, 1)
        u = u._replace(pair_i=zeros(capacity, INDEX), pair_j=zeros(capacity, INDEX))
        _join_bonds[blocks, threads](per, bond_column, True, u)
        b = b._replace(i_start=u.start, pair_i=u.pair_i, pair_j=u.pair_j)
    # 4. rows carried
    c = Carry(table.i_start, table.pair_j, b.i_start, b.pair_j, table.hist, table.out, table.status,
              zeros((capacity, table.hist.shape[1]), np.float64), zeros((capacity, table.out.shape[1]), np.float64),
              zeros(capacity, np.int8))
    _carry[blocks, threads](per, c)
    # 5. the CSR by second body
    t = Partners(b.pair_j, zeros(n + 1, INDEX), zeros(max(n, 1), INDEX), None)
    k_per, k_blocks, k_threads = _shape(n_pairs)
    _count_partners[k_blocks, k_threads](k_per, n_pairs, n, t)
    inclusive_scan(t.j_start, n + 1)
    n_partners = _host_int(t.j_start, n)
    t = t._replace(j_pairs=zeros(max(n_partners, 1), INDEX))
    _place_partners[k_blocks, k_threads](k_per, n_pairs, n, t)
    _sort_segments[blocks, threads](per, n, (t.j_start, t.j_pairs))
    bound_start = bound_pairs = None
    if n_boundary >= 0:
        # servo control: the CSR of the pairs by wall (the CPU's boundary_pairs)
        w = Partners(b.pair_j, zeros(n_boundary + 1, np.int64), zeros(max(n_boundary, 1), np.int64), None)
        _count_bounds[k_blocks, k_threads](k_per, n_pairs, n, w)
        inclusive_scan(w.j_start, n_boundary + 1)
        n_bound = _host_int(w.j_start, n_boundary)
        w = w._replace(j_pairs=zeros(max(n_bound, 1), INDEX))
        _place_bounds[k_blocks, k_threads](k_per, n_pairs, n, w)
        b_per, b_blocks, b_threads = _shape(max(n_boundary, 1))
        _sort_segments[b_blocks, b_threads](b_per, n_boundary, (w.j_start, w.j_pairs))
        bound_start, bound_pairs = w.j_start, w.j_pairs[:n_bound]
    # the build reference
    _copy_rows[blocks, threads](per, (pos, table.ref_pos))
    w_per, w_blocks, w_threads = _shape(max(bounds.wall_point.shape[0], 1))
    _copy_rows[w_blocks, w_threads](w_per, (bounds.wall_point, bounds.wall_ref))
    return DeviceTable(b.pair_i, b.pair_j, c.hist, c.out, c.status, b.i_start, t.j_start, t.j_pairs[:n_partners],
                       n_pairs, bound_start, bound_pairs, b.items)


def plane_walls(n_walls: int):
    """``(wall_kind, wall_shape)`` device arrays of ``n_walls`` plane walls."""
    return (backend.device_zeros(n_walls, np.uint8), backend.device_zeros((n_walls, N_WALL_SHAPE), np.float64))

