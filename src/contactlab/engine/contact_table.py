"""The contact table: candidate pairs of the neighbour list, each with its history, outputs and status."""
from __future__ import annotations

import _signal
import signal
import threading
from contextlib import contextmanager

import numpy as np

from .._jit import n_blocks
from ..neighbors.celllist import boundary_pairs, build_pairs, first_bodies, transpose_pairs
from ..neighbors.exclusions import filter_pairs, filter_same_clump
from ..neighbors.periodic_list import build_pairs_periodic
from ..neighbors.triangles import triangle_pairs
from .history_match import carry_rows
from .layout import ACTIVE, INDEX, N_OUT

__all__ = ["ContactTable"]

_SIGINT = int(signal.SIGINT)
#: stand-ins for the CSR by second body while a rebuild makes it anew
_NO_START = np.zeros(0, dtype=INDEX)
_NO_PAIRS = np.zeros(0, dtype=INDEX)


@contextmanager
def _interrupts_deferred():
    """A block that an interrupt (SIGINT, Ctrl-C) does not cut short: one arriving meanwhile is
    delivered when the block ends.  Only in the main thread (where Python runs signal handlers);
    elsewhere, or under a handler not set from Python, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # the C functions under the signal module (its wrappers convert to and from enums: most of
    # the cost of a small scene's rebuild)
    previous = _signal.getsignal(_SIGINT)
    if previous is None:          # a handler not installed from Python: left alone
        yield
        return
    caught = []
    _signal.signal(_SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        _signal.signal(_SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


class ContactTable:
    """Pairs ``(pair_i[k], pair_j[k])`` for ``k < n_pairs``, sorted by ``(i, j)``, and their data.

    Arrays are owned here; the first ``n_pairs`` entries are valid.

    Attributes
    ----------
    pair_i, pair_j : (>= n_pairs,) uint32, per pair: first body, second body (body index, ``N + w``
        for wall ``w``, or ``N + W + t`` for mesh triangle ``t``); each its own capacity (a rebuild
        writes the new list into the old one's buffers)
    hist : (capacity, max(H, 1)) float64, per pair: the law's history columns the table stores
        (``history_layout``, :mod:`contactlab.engine.history_layout`), then the dissipation per
        term and, in a scene of shapes, the last normal
    out : (capacity, out_columns) float64, per pair: outputs of the last evaluation (see ``layout``;
        ``out_columns`` is ``N_OUT``, or fewer without the geometry columns)
    status : (capacity,) int8, per pair: ACTIVE, INACTIVE or CLEARED
    i_start : (N+1,) uint32, CSR of the pairs by first body
    j_start, j_pairs : (N+1,) uint32, (pairs with a sphere as second body,) uint32: CSR of the
        sphere-sphere pairs by second body
    ref_pos : (N, 3) float64, m: sphere positions at the last build
    wall_ref : (W, 3) float64, m: wall points at the last build
    mesh_ref_pos : (Mm, 3) float64, m, and mesh_ref_quat : (Mm, 4): each mesh's pose at the last build
    bound_start, bound_pairs : CSR of the pairs by wall or mesh triangle (row ``j - N``), kept only
        while ``track_boundaries`` is set (servo-controlled walls and meshes sum their forces)
    skin : float, m
    builds : int, number of builds so far
    """

    #: which of the law's history columns ``hist`` stores, before the dissipation and normal columns
    #: (:class:`~contactlab.engine.history_layout.HistoryLayout`; set by the stepper; None: all)
    history_layout = None

    def __init__(self, n_spheres: int, n_walls: int, n_hist: int, skin: float, bond_column: int = -1,
                 n_triangles: int = 0, n_meshes: int = 0, out_columns: int = N_OUT):
        self.n_spheres = n_spheres
        #: pair keys are ``i * n_bodies + j``: bodies, walls and mesh triangles in one index range
        self.n_bodies = n_spheres + n_walls + n_triangles
        self.first_triangle = n_spheres + n_walls
        #: history column of the law's bond state (-1: no bonds); bonded pairs stay in the list at any distance
        self.bond_column = int(bond_column)
        self.n_hist = n_hist
        self.hist_cols = max(n_hist, 1)
        self.skin = float(skin)
        #: the law's interaction range, m (its ``INTERACTION_RANGE``: the gap up to which it acts; set
        #: by the stepper): a build takes the pairs within ``skin + law_range``, so that a pair the law
        #: acts on across a gap is in the list whatever the skin (:attr:`reach`)
        self.law_range = 0.0
        #: width of ``out`` (:func:`contactlab.engine.layout.out_columns`)
        self.out_columns = int(out_columns)
        self.n_pairs = 0
        #: a rebuild writes the new partners into the buffer of the old first bodies and the new
        #: first bodies into that of the old partners, and moves the rows of history, outputs and
        #: status in place: one copy of the table in memory
        self.pair_i, self.pair_j, self.hist, self.out, self.status = self._empty(0)
        self.i_start = np.zeros(n_spheres + 1, dtype=INDEX)
        self.j_start = np.zeros(n_spheres + 1, dtype=INDEX)
        self.j_pairs = np.zeros(0, dtype=INDEX)
        self.ref_pos = np.zeros((n_spheres, 3))
        self.wall_ref = np.zeros((n_walls, 3))
        self.mesh_ref_pos = np.zeros((n_meshes, 3))
        self.mesh_ref_quat = np.tile([1.0, 0.0, 0.0, 0.0], (n_meshes, 1))
        self.builds = 0
        #: keep the CSR of pairs by wall and triangle (``bound_start``, ``bound_pairs``) at each build
        self.track_boundaries = False
        self.bound_start = np.zeros(n_walls + n_triangles + 1, dtype=np.int64)
        self.bound_pairs = np.zeros(0, dtype=INDEX)

    def index_boundaries(self) -> None:
        """(Re)build the CSR of the pairs by wall or mesh triangle (``bound_start``, ``bound_pairs``)."""
        self.bound_start, self.bound_pairs = boundary_pairs(self.n_spheres, self.n_bodies - self.n_spheres,
                                                            self.n_pairs, self.pair_j)

    @property
    def reach(self) -> float:
        """The gap, m, within which a build takes a pair: the skin plus the law's interaction range."""
        return self.skin + self.law_range

    def _empty(self, capacity: int):
        return (np.empty(capacity, dtype=INDEX), np.empty(capacity, dtype=INDEX),
                np.zeros((capacity, self.hist_cols)), np.zeros((capacity, self.out_columns)),
                np.zeros(capacity, dtype=np.int8))

    def _grow(self, capacity: int) -> None:
        """Larger arrays of history, outputs and status (``capacity`` rows), the valid rows copied."""
        n = self.n_pairs
        _, _, hist, out, status = self._empty(capacity)
        hist[:n] = self.hist[:n]
        out[:n] = self.out[:n]
        status[:n] = self.status[:n]
        self.hist, self.out, self.status = hist, out, status

    def set_history(self, rows: np.ndarray, bond_column: int) -> int:
        """Replace the valid history rows by ``rows`` (n_pairs, W) of another width (a changed
        history layout, :mod:`contactlab.engine.history_layout`), the capacity kept; the law's bond
        state now in column ``bond_column`` (-1: none).  Returns the change of width."""
        extra = rows.shape[1] - self.hist_cols
        hist = np.zeros((self.hist.shape[0], rows.shape[1]))   # spare rows are rewritten when used
        hist[: self.n_pairs] = rows
        self.hist, self.hist_cols, self.n_hist = hist, int(rows.shape[1]), self.n_hist + extra
        self.bond_column = int(bond_column)
        return extra

    def set_out_columns(self, width: int) -> None:
        """Widen ``out`` to ``width`` columns, keeping the columns it has; the new
        ones start at zero."""
        if width <= self.out_columns:
            return
        self.out_columns = int(width)
        old = self.out
        self.out = np.zeros((old.shape[0], width))
        self.out[:, : old.shape[1]] = old

    def bonded_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(i, j) of the pairs whose bond is intact (empty for a law without bonds)."""
        n = self.n_pairs
        if self.bond_column < 0 or n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        sel = np.flatnonzero(self.hist[:n, self.bond_column] > 0.0)
        return self.pair_i[sel].astype(np.int64), self.pair_j[sel].astype(np.int64)

    def rebuild(self, pos, radius, fixed, wall_point, wall_normal, exclusions=None, material=None,
                wall_material=None, extra_pairs=None, triangles=None, mesh_pose=None, walls=None, cell=None,
                clump_of=None):
        """Build the list around the current positions and carry each pair's data over.

        ``exclusions`` (:class:`~contactlab.neighbors.exclusions.Exclusions`, with the per-body
        and per-wall ``material`` indices, the walls' followed by the triangles') drops switched-off
        pairs.  Bonded pairs, and the pairs ``extra_pairs = (i, j)`` (arrays, ``i < j``), are kept
        whatever their distance.  ``triangles = (shape_data, tri_ref)``: the mesh triangles'
        coordinates (see :mod:`contactlab.geometry.shapes`), whose pairs with free bodies join the
        list after each body's walls; ``mesh_pose = (positions, orientations)`` of the meshes, the
        reference their motion is measured from until the next build.  ``walls = (wall_kind,
        wall_shape)`` for cylinder walls (None: planes only).  ``cell``: the periodic cell of the
        state (:mod:`contactlab.geometry.periodic`; positions wrapped into it), pairs then by
        their minimum image (:mod:`contactlab.neighbors.periodic_list`).
        ``clump_of`` (N,): each body's clump (-1: none); two members of one clump are never a pair.
        """
        # the CSR by second body is made anew at the end: its memory serves the build meanwhile
        self.j_start, self.j_pairs = _NO_START, _NO_PAIRS
        try:
            new_i, new_j, n_new, i_start = self._new_list(pos, radius, fixed, wall_point, wall_normal, exclusions,
                                                          material, wall_material, extra_pairs, triangles, walls, cell,
                                                          clump_of)
            write_i = new_i is None
            if write_i:
                # the old partners are read no more once the rows are carried: their buffer takes the
                # new first bodies
                new_i = self.pair_j
                if new_i.shape[0] < n_new or new_i is new_j:
                    new_i = np.empty(new_j.shape[0], dtype=INDEX)
            if self.hist.shape[0] < n_new:
                self._grow(max(new_j.shape[0], n_new))
            # the new CSR by second body before any row moves: nothing below allocates
            j_start, j_pairs = transpose_pairs(self.n_spheres, n_new, new_j)
        except BaseException:
            # nothing half-written: the old list's first bodies (whose buffer the build writes) and
            # its CSR by second body back
            first_bodies(self.i_start, self.pair_i, n_blocks(self.n_spheres))
            self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, self.n_pairs, self.pair_j)
            raise
        # each pair's rows move to its new place within the same arrays (history_match); from the
        # first move on the table is only whole with the new indices and build reference, so an
        # interrupt (Ctrl-C) waits until they are in place
        with _interrupts_deferred():
            carry_rows(self.i_start, self.pair_j, i_start, new_j, self.hist, self.out, self.status)
            if write_i:
                first_bodies(i_start, new_i, n_blocks(self.n_spheres))
            self.pair_i, self.pair_j = new_i, new_j
            self.n_pairs, self.i_start = n_new, i_start
            self.j_start, self.j_pairs = j_start, j_pairs
            self.ref_pos[...] = pos
            self.wall_ref[...] = wall_point
            if mesh_pose is not None:
                self.mesh_ref_pos[...] = mesh_pose[0]
                self.mesh_ref_quat[...] = mesh_pose[1]
            self.builds += 1
            if self.track_boundaries:
                self.index_boundaries()

    def _new_list(self, pos, radius, fixed, wall_point, wall_normal, exclusions, material, wall_material, extra_pairs,
                  triangles, walls, cell, clump_of):
        """The sorted candidate list of :meth:`rebuild`: ``(pair_i, pair_j, n_pairs, i_start)``, its
        partners written into the buffer of the old list's first bodies (``i_start`` holds those)
        where it is long enough; ``pair_i`` None where no step needed the new first bodies."""
        keep_i, keep_j = self.bonded_pairs()
        if extra_pairs is not None:
            keep_i = np.concatenate([keep_i, np.asarray(extra_pairs[0], dtype=np.int64)])
            keep_j = np.concatenate([keep_j, np.asarray(extra_pairs[1], dtype=np.int64)])
        if cell is None:
            _, new_j, n_new, i_start = build_pairs(pos, radius, fixed, self.reach, wall_point, wall_normal, None,
                                                   self.pair_i, walls=walls)
        else:
            _, new_j, n_new, i_start = build_pairs_periodic(pos, radius, fixed, self.reach, wall_point, wall_normal,
                                                            None, self.pair_i, cell, walls=walls)
        with_triangles = triangles is not None and len(triangles[1])
        with_exclusions = exclusions is not None and exclusions.any
        if not (with_triangles or with_exclusions or clump_of is not None or len(keep_i)):
            return None, new_j, n_new, i_start
        new_i = np.empty(new_j.shape[0], dtype=INDEX)
        first_bodies(i_start, new_i, n_blocks(self.n_spheres))
        if with_triangles:
            ti, tj = triangle_pairs(pos, radius, fixed, self.reach, triangles[0], triangles[1], self.first_triangle)
            if len(ti):
                new_i, new_j, n_new, i_start = self._merge(new_i, new_j, n_new, ti, tj)
        if with_exclusions:
            n_new = filter_pairs(n_new, new_i, new_j, i_start, material, wall_material, exclusions.material_active,
                                 exclusions.keys, exclusions.n_bodies)
        if clump_of is not None:
            n_new = filter_same_clump(n_new, new_i, new_j, i_start, clump_of)
        if len(keep_i):
            new_i, new_j, n_new, i_start = self._merge(new_i, new_j, n_new, keep_i, keep_j)
        return new_i, new_j, n_new, i_start

    def _merge(self, new_i, new_j, n_new, keep_i, keep_j):
        """The sorted union of the built pairs and the pairs that must stay (NumPy, once per rebuild)."""
        nb = np.int64(self.n_bodies)
        built = new_i[:n_new].astype(np.int64) * nb + new_j[:n_new].astype(np.int64)
        keys = np.union1d(built, keep_i * nb + keep_j)
        if len(keys) == n_new:
            return new_i, new_j, n_new, self._csr(new_i[:n_new])
        pair_i = (keys // nb).astype(INDEX)
        pair_j = (keys % nb).astype(INDEX)
        return pair_i, pair_j, len(keys), self._csr(pair_i)

    def _csr(self, pair_i):
        counts = np.bincount(pair_i, minlength=self.n_spheres) if len(pair_i) else np.zeros(self.n_spheres, np.int64)
        i_start = np.zeros(self.n_spheres + 1, dtype=INDEX)
        i_start[1:] = np.cumsum(counts)
        return i_start

    def restore(self, pair_i, pair_j, hist, out, status, ref_pos, wall_ref, mesh_ref_pos, mesh_ref_quat, skin, builds):
        """Install a saved list (checkpoint restart)."""
        n = int(pair_i.shape[0])
        # copies: a rebuild writes into these buffers
        self.pair_i = np.array(pair_i, dtype=INDEX)
        self.pair_j = np.array(pair_j, dtype=INDEX)
        self.hist = np.ascontiguousarray(hist, dtype=np.float64).reshape(n, self.hist_cols)
        # the width the saved run had (format 6 and older: always N_OUT); a table narrower than its
        # scene's gets the geometry columns from the stepper (contact_geometry.store_geometry)
        out = np.asarray(out, dtype=np.float64)
        if out.ndim != 2:
            out = out.reshape(n, -1) if n else out.reshape(0, self.out_columns)
        self.out_columns = int(out.shape[1])
        self.out = np.ascontiguousarray(out)
        self.status = np.ascontiguousarray(status, dtype=np.int8)
        self.n_pairs = n
        self.i_start = self._csr(self.pair_i)
        self.j_start, self.j_pairs = transpose_pairs(self.n_spheres, n, self.pair_j)
        self.ref_pos = np.array(ref_pos, dtype=np.float64)
        self.wall_ref = np.array(wall_ref, dtype=np.float64).reshape(-1, 3)
        self.mesh_ref_pos = np.array(mesh_ref_pos, dtype=np.float64).reshape(-1, 3)
        self.mesh_ref_quat = np.array(mesh_ref_quat, dtype=np.float64).reshape(-1, 4)
        self.skin = float(skin)
        self.builds = int(builds)
        if self.track_boundaries:
            self.index_boundaries()

    def active(self) -> np.ndarray:
        """Indices of the active contacts."""
        return np.flatnonzero(self.status[: self.n_pairs] == ACTIVE)

    def saved(self) -> dict:
        """The table's arrays (valid part only), the history in the stored layout; a checkpoint or a
        particle exchange takes :meth:`contactlab.engine.stepper.Stepper.saved_table` (every column)."""
        n = self.n_pairs
        return dict(pair_i=self.pair_i[:n], pair_j=self.pair_j[:n], hist=self.hist[:n], out=self.out[:n],
                    status=self.status[:n], ref_pos=self.ref_pos, wall_ref=self.wall_ref, mesh_ref_pos=self.mesh_ref_pos,
                    mesh_ref_quat=self.mesh_ref_quat)

    @property
    def nbytes(self) -> int:
        arrays = (self.pair_i, self.pair_j, self.hist, self.out, self.status, self.i_start, self.j_start,
                  self.j_pairs, self.ref_pos)
        return int(sum(a.nbytes for a in arrays))
