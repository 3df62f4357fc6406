"""The stepper: the contact table, the generated kernels and the run arrays of one simulation.

:class:`Stepper` is what :class:`contactlab.Simulation` steps with.  It owns

* the contact table (:class:`~contactlab.engine.contact_table.ContactTable`: candidate pairs, their
  history, outputs and status, the neighbour list's build reference) and the switched-off pairs
  (:class:`~contactlab.neighbors.exclusions.Exclusions`);
* the generated kernel module of the law and the scene's shapes (compiled, or its plain-Python
  twin in debug mode, :mod:`contactlab.engine.launch`);
* the run arrays: predicted velocities, the per-body sums of the owner's side of its contacts,
  the flags, the per-pair scratch of the triangle selection, the pair-parameter table;

and it reads and writes the :class:`~contactlab.state.State`, which holds everything a restart
needs (a checkpoint is State + Model + contact table + law, :mod:`contactlab.io.checkpoint`).

One step (velocity Verlet, see :mod:`contactlab.engine.kernels`) is one pass of the step kernel;
:meth:`Stepper.take_steps` calls it for as many steps as it can go without Python: it returns
when a drift takes a body beyond half the skin (the list is rebuilt and the step resumed), when a
flag asks for the launcher (a bond broke: logged; a blow-up: diagnosed and raised, see
:mod:`contactlab.diagnosis`) or when the steps are done.  The kernels take the step's data as the
records of :mod:`contactlab.engine.step_records` (bodies, books, boundaries, table, run), which
:meth:`Stepper.records` builds, see :func:`contactlab.engine.kernels.advance`.
"""
from __future__ import annotations

import contextlib
from typing import Callable

import numba
import numpy as np

from .._jit import n_blocks
from ..bonds import BondLog
from .._arguments import did_you_mean
from ..errors import InputError, SimulationBlowUp
from ..geometry.shapes import KIND_NAMES
from ..neighbors.exclusions import Exclusions
from . import layout, step_records as records
from .codegen import pair_row_length, shape_features
from .contact_geometry import store_geometry, stored
from .contact_table import ContactTable
from .history_layout import HistoryLayout, continued_layout
from .launch import kernels_for, launch
from .servo import empty_rows
from .cell_motion import mark_built, wrap
from ..neighbors.periodic_list import check_cell

__all__ = ["Stepper", "ThreadScope", "SHAPE_CONTACT_MODES", "checked_shape_contact", "law_range"]

#: how convex non-spherical bodies meet (``Simulation(shape_contact=...)``) -> the kernels' mode
SHAPE_CONTACT_MODES = {"minkowski": 0, "common_plane": 1, "volume": 2}


#: a table of more bodies than this (of spheres and plane walls) does without the geometry columns
#: (see :data:`contactlab.engine.layout.SWEEP_BLOCK`, why not fewer)
COMPACT_ABOVE = layout.SWEEP_BLOCK


def law_range(law) -> float:
    """The gap up to which ``law`` acts, m: its law module's ``INTERACTION_RANGE`` (0: touching
    pairs only; ``@cl.contact_law(..., interaction_range=...)``, a composite's largest part's)."""
    return float(getattr(law.law, "INTERACTION_RANGE", 0.0))


def checked_shape_contact(shape_contact, law, model) -> str:
    """How convex non-spherical bodies meet (``Simulation(shape_contact=...)``), checked against the
    law and the scene: a law that needs the overlap volume takes ``"volume"`` (and only spheres,
    polyhedra and plane walls)."""
    m = model
    if not isinstance(shape_contact, str) or shape_contact not in SHAPE_CONTACT_MODES:
        raise InputError(f"shape_contact must be one of {', '.join(map(repr, SHAPE_CONTACT_MODES))}, "
                         f"got {shape_contact!r}{did_you_mean(shape_contact, SHAPE_CONTACT_MODES)}")
    if getattr(law, "needs_volume", False):
        if shape_contact == "common_plane":
            raise InputError(f"{type(law).__name__} needs the overlap volume: use "
                             f"shape_contact='volume' (the default for it), not 'common_plane'")
        shape_contact = "volume"
        bad = [k for k in np.unique(m.shape_kind) if k not in (0, 2)]
        if (m.shape_kind == 0).any() and (m.shape_kind == 2).any():
            raise InputError(f"{type(law).__name__} (the contact-volume ECC) computes the overlap "
                             f"volume of two spheres or of two convex polyhedra, not of a sphere and a polyhedron; "
                             f"give the spheres as polyhedra or use another model")
        if bad or m.n_triangles:
            what = ", ".join(KIND_NAMES[int(k)] + "s" for k in bad) + (" mesh walls" if m.n_triangles else "")
            raise InputError(f"{type(law).__name__} (the contact-volume ECC) computes overlap "
                             f"volumes of spheres, convex polyhedra and plane walls only; this scene has {what}")
    return shape_contact


class ThreadScope:
    """Numba's thread count (``threads``; None: leave it) and dynamic scheduling for the kernel
    calls inside the block, restored after it.  (One module-level class: a class made per call
    would be garbage that only the cyclic collector frees, and a long run makes millions.)"""

    __slots__ = ("threads", "old", "old_chunk")

    def __init__(self, threads: int | None):
        self.threads = threads

    def __enter__(self):
        self.old = numba.get_num_threads()
        if self.threads is not None:
            numba.set_num_threads(self.threads)
        # hand out the blocks of the parallel loops one at a time (dynamic scheduling): contacts
        # cluster (a bed at the bottom, free fall above), so equal contiguous halves of the sphere
        # range would leave a thread idle; results do not depend on it
        self.old_chunk = numba.get_parallel_chunksize()
        numba.set_parallel_chunksize(1)
        return self

    def __exit__(self, *exc):
        numba.set_parallel_chunksize(self.old_chunk)
        numba.set_num_threads(self.old)
        return False


class Stepper:
    """Steps a frozen model's state with a contact law (see the module docstring).

    Parameters
    ----------
    model : Model
        The frozen model (:class:`~contactlab.frozen_model.Model`).
    state : State
        The state it steps; its run arrays that are missing (fresh from ``Scene.finalize``) are
        made here.
    law : ContactModel
        The contact model.
    skin : float
        Neighbour-list skin, m.
    max_overlap : float
        The overlap guard, a fraction of the smaller radius.
    local_damping : float
        Cundall's local damping coefficient (0: none).
    threads : int or None
        Numba threads for the kernel calls (None: Numba's default).
    debug : bool
        Run the kernels and the law as plain Python.
    shape_contact : str
        One of :data:`SHAPE_CONTACT_MODES`.
    exclusions : Exclusions, optional
        Switched-off pairs (default: none).
    bond_log : BondLog, optional
        Where broken bonds are logged (default: a new, empty log).
    saved_table : dict, optional
        A saved contact table (:meth:`saved_table`: the history in the law's full layout, plus
        ``skin`` and ``builds``) to install instead of building the neighbour list (a restart).
    """

    def __init__(self, model, state, law, *, skin: float, max_overlap: float, local_damping: float,
                 threads: int | None, debug: bool, shape_contact: str, exclusions: Exclusions | None = None,
                 bond_log: BondLog | None = None, saved_table: dict | None = None):
        self.model, self.state, self.law = model, state, law
        self.max_overlap = float(max_overlap)
        self.local_damping = float(local_damping)
        self.threads = threads
        self.debug = bool(debug)
        self.mode = SHAPE_CONTACT_MODES[shape_contact]
        self.dissipation_terms: tuple[str, ...] = law.dissipation_terms
        n_terms = len(self.dissipation_terms)
        self._complete_state(n_terms)
        #: (M, M, P) pair-parameter table of the law, per pair of materials (mixing done once)
        self.pair_params = np.ascontiguousarray(law.scene_pair_table(model), dtype=np.float64)
        #: the length P of the row the kernels hand the law (written into the generated kernels)
        self.row_length = pair_row_length(self.pair_params.shape[2])
        #: which of the law's history columns the table stores (:mod:`contactlab.engine.history_layout`):
        #: the law's own layout, or for a saved table (which comes in the full layout) the one it continues in
        self.history_layout = HistoryLayout.of(law)
        saved_hist = None if saved_table is None else np.asarray(saved_table["hist"], dtype=np.float64)
        if saved_hist is not None and saved_hist.ndim == 2 and saved_hist.shape[0]:
            full = HistoryLayout(law.history_size)
            self.history_layout = continued_layout(law, saved_hist, full)
            saved_table = dict(saved_table, hist=full.convert(saved_hist, self.history_layout))
        n_hist = self.history_layout.width + max(n_terms, 1)
        #: first of the three history columns that keep a shape pair's last normal (-1: spheres only)
        self.geo_col = n_hist if model.has_shapes else -1
        #: the narrow phases this scene's kernels carry (False: spheres and plane walls only)
        self.shape_features = shape_features(model.shape_kind, model.n_triangles, self.mode == 2)
        # spheres and plane walls: the contact geometry is recomputed on demand (contact_geometry;
        # not yet across the faces of a periodic cell, whose minimum image the kernel takes)
        geometry = (self.shape_features is not False or bool(model.has_cylinders)
                    or model.n_spheres <= COMPACT_ABOVE or state.cell is not None)
        self.table = ContactTable(model.n_spheres, model.n_walls, n_hist + (3 if model.has_shapes else 0), skin,
                                  bond_column=self._bond_column(law), n_triangles=model.n_triangles,
                                  n_meshes=model.n_meshes, out_columns=layout.out_columns(geometry, law.bond_field >= 0))
        self.table.history_layout = self.history_layout
        self.table.law_range = law_range(law)
        self.flags = np.zeros(layout.N_FLAGS, dtype=np.int64)
        # the velocities predicted to the force time: written by every step's first half before its
        # forces read them, dead between steps (the stability bound borrows them as its work arrays,
        # contactlab.packing_limit)
        self.vel_pred = np.zeros_like(state.velocities)
        self.angvel_pred = np.zeros_like(state.angular_velocities)
        #: (N, N_OWN + D) per body: the owner's side of its contacts in the last evaluation
        self.owner = np.zeros((model.n_spheres, layout.N_OWN + n_terms))
        #: (pairs, 8) per pair: the triangle selection's scratch (grown with the list; empty without meshes)
        self.scratch = np.zeros((0, 8))
        #: the model's principal moments and their inverses as the rigid-body kernels take them (set on first use)
        self._principal = None
        self.kernels = kernels_for(law.law_module, debug=self.debug, shapes=self.shape_features,
                                   dropped=self.history_layout.dropped, row_length=self.row_length)
        self.exclusions = exclusions if exclusions is not None else Exclusions(
            model.n_materials, model.n_spheres + model.n_walls + model.n_triangles)
        self.bond_log = bond_log if bond_log is not None else BondLog()
        #: called on a blow-up flag; returns the exception to raise (the diagnosis); set by the owner
        self.on_blowup: Callable[[], SimulationBlowUp] = lambda: SimulationBlowUp(
            "the simulation blew up", time=self.state.time, step=self.state.step)
        #: the blow-up that stopped the run, if any
        self.failure: SimulationBlowUp | None = None
        m = model
        # the kernels read each row into a tuple of row_length floats (their pair_row); a law
        # without parameters gets a row of one unused zero (pair_row_length)
        #: the pair table as the kernels read it (Table.pair_params)
        self.pair_table = (self.pair_params if self.pair_params.shape[2] == self.row_length
                           else np.zeros(self.pair_params.shape[:2] + (self.row_length,)))
        #: the state's local-damping arrays, or empty ones without local damping (never touched then)
        self.damping = self._damping_arrays()
        #: the periodic cell (:mod:`contactlab.geometry.periodic`, the state's), or None
        self.cell = state.cell
        #: the cylinder walls' record for the kernels, None in a scene of plane walls only
        self.cylinders = records.build(records.Cylinders, model=m) if m.has_cylinders else None
        #: the clumps' record (:mod:`contactlab.engine.clump_motion`), None without clumps
        self.clump_inv_inertia = 1.0 / m.clump_inertia if m.n_clumps else None
        self.clumps = records.build(records.Clumps, model=m, state=state, stepper=self) if m.n_clumps else None
        #: the kernels' records that stay the same objects for the stepper's life (the per-pair and
        #: boundary records are built at each kernel call: a rebuild replaces the table's arrays)
        self.meshes = records.build(records.Meshes, model=m, state=state)
        self.books = records.build(records.Books, state=state, stepper=self)
        self._bodies = None
        if saved_table is not None:
            self.table.restore(**saved_table)
            if geometry and not stored(self.table):
                # saved without the geometry columns this scene keeps (e.g. a particle stream took
                # it below COMPACT_ABOVE bodies): recomputed for the saved positions
                store_geometry(model, state, self.table)

    def _complete_state(self, n_terms: int) -> None:
        """Make the state's run arrays that a scene's fresh state does not have yet."""
        m, s = self.model, self.state
        n = m.n_spheres
        if self.local_damping > 0.0:
            if s.damping_work is None or s.damping_work.shape != (n,):
                s.damping_work = np.zeros(n)
            if s.damping_force is None or s.damping_force.shape != (n, 6):
                s.damping_force = np.zeros((n, 6))
        elif not ((s.damping_work is not None and s.damping_work.any())
                  or (s.damping_force is not None and s.damping_force.any())):
            # without local damping nothing reads or writes them (56 B per body saved; a checkpoint
            # writes zeros in their place)
            s.damping_work = s.damping_force = None
        if s.dissipation_terms is None or s.dissipation_terms.shape != (n, n_terms):
            s.dissipation_terms = np.zeros((n, n_terms))
        if s.boundary_power is None:
            s.boundary_power = np.zeros(n)
        if s.shape_data is None:
            s.shape_data = m.shape_data.copy()
        if s.servo_index is None:
            s.servo_index, s.servo_param = empty_rows()
        if s.previous_loads is None or s.previous_loads.shape != (n, 6) or s.previous_loads.dtype != np.float32:
            # a state written before the predictor kept them: the last loads (its first step then
            # predicts with the last acceleration alone); float32 (24 B a body: the predictor's
            # correction term to 6e-8 of itself, far inside its O(dt^2) truncation error)
            s.previous_loads = np.hstack([s.forces, s.torques]).astype(np.float32)
        if s.clump_positions is None:
            c = m.n_clumps
            s.clump_positions, s.clump_velocities, s.clump_angular_velocities = (np.zeros((c, 3)) for _ in range(3))
            s.clump_forces, s.clump_torques = np.zeros((c, 3)), np.zeros((c, 3))
            s.clump_orientations = np.tile([1.0, 0.0, 0.0, 0.0], (c, 1))
        if s.clump_previous_loads is None or s.clump_previous_loads.shape != (m.n_clumps, 6) or \
                s.clump_previous_loads.dtype != np.float32:
            s.clump_previous_loads = np.hstack([s.clump_forces, s.clump_torques]).astype(np.float32)
        if s.mesh_positions is None:
            n_m = m.n_meshes
            s.mesh_positions = np.zeros((n_m, 3))
            s.mesh_orientations = np.tile([1.0, 0.0, 0.0, 0.0], (n_m, 1))
            s.mesh_velocities = np.zeros((n_m, 3))
            s.mesh_angular_velocities = np.zeros((n_m, 3))

    def _damping_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The state's ``damping_work`` and ``damping_force`` for the kernels: empty arrays of the
        same kinds where the state has none (no local damping: the kernels never touch them)."""
        s = self.state
        if s.damping_work is None or s.damping_force is None:
            return np.zeros(0), np.zeros((0, 6))
        return s.damping_work, s.damping_force

    # ------------------------------------------------------------------ threads, list
    def threads_scope(self) -> ThreadScope:
        """A ``with`` block in which the kernels run on the simulation's threads."""
        return ThreadScope(self.threads)

    def resident(self):
        """A ``with`` block around a run's chunks (the GPU stepper keeps its records on the device
        there, :class:`contactlab.engine.gpu_stepper.GpuStepper`; nothing on the CPU)."""
        return contextlib.nullcontext()

    def host_changed(self) -> None:
        """Say that the host wrote to the state or the table inside :meth:`resident` (nothing on
        the CPU, whose kernels work on the host's arrays)."""

    def to_host(self) -> None:
        """Make the host's state and table current before they are read inside :meth:`resident`
        (nothing on the CPU, whose kernels work on the host's arrays)."""

    def run_numbers(self, dt: float):
        """The energy sums, contact count and fastest travel summed where the state lives while the
        host's copy is not current (a :class:`contactlab.engine.gpu_numbers.RunNumbers`); None
        when it is, as always on the CPU: the host computes them."""
        return None

    def rebuild(self, extra_pairs=None) -> None:
        """Build the neighbour list around the current positions, carrying every pair's data
        (``extra_pairs = (i, j)``: pairs to keep at any distance, e.g. new bonds)."""
        s, m = self.state, self.model
        if self.cell is not None:
            # bodies back into the cell (velocity jumps, image counters), the cell's length checked
            wrap(self.cell, s.positions, s.velocities, self.vel_pred, s.images, np.where(m.fixed, 0.0, m.mass),
                 s.boundary_work)
            check_cell(self.cell, m.radius, self.table.reach, s.time, s.step)
            mark_built(self.cell)
        wall_material = m.wall_material
        if m.n_triangles:
            wall_material = np.concatenate([m.wall_material, m.mesh_material[m.tri_mesh]]).astype(np.uint16)
        self.table.rebuild(s.positions, m.radius, m.fixed, s.wall_points, m.wall_normal, self.exclusions, m.material,
                           wall_material, extra_pairs=extra_pairs,
                           triangles=(s.shape_data, m.tri_ref) if m.n_triangles else None,
                           mesh_pose=(s.mesh_positions, s.mesh_orientations), walls=self.cylinders, cell=self.cell,
                           clump_of=m.clump_of if m.n_clumps else None)

    def make_bonds(self, i: np.ndarray, j: np.ndarray) -> int:
        """Bond the pairs of bodies ``(i[k], j[k])`` (``i < j``; pairs whose bond is intact are
        skipped): keep them in the neighbour list, give each the law's history of a new, unloaded
        bond at the present distance and log it.  Returns the number of bonds made."""
        m, s, t, law = self.model, self.state, self.table, self.law
        bi, bj = t.bonded_pairs()
        nb = t.n_bodies
        if len(i):
            fresh = ~np.isin(i * nb + j, bi * nb + bj)
            i, j = i[fresh], j[fresh]
        if len(i) == 0:
            return 0
        self.rebuild(extra_pairs=(i, j))
        n = t.n_pairs
        rows = np.searchsorted(t.pair_i[:n].astype(np.int64) * nb + t.pair_j[:n], i * nb + j)
        d = np.linalg.norm(s.positions[j] - s.positions[i], axis=1)
        info = dict(overlap=m.radius[i] + m.radius[j] - d, radius_i=m.radius[i], radius_j=m.radius[j],
                    mass_i=np.where(m.fixed[i], np.inf, m.mass[i]), mass_j=np.where(m.fixed[j], np.inf, m.mass[j]))
        h = np.asarray(law.initial_bond_history(info, self.pair_params[m.material[i], m.material[j]]), dtype=float)
        hl = self.history_layout
        # the stored columns of the new histories (a column the table does not store must be zero)
        t.hist[rows, : hl.width] = HistoryLayout(hl.size).convert(h, hl)
        t.hist[rows, hl.width:] = 0.0
        self.bond_log.made(i, j, s.time, s.step, law.bonded_senses)
        return int(len(i))

    def _bond_column(self, law) -> int:
        """The table column of the law's bond state (-1: no bonds)."""
        return self.history_layout.column(law.bond_field) if law.bond_field >= 0 else -1

    def set_law(self, law, pair_params: np.ndarray) -> None:
        """Go on with ``law`` (a model of the same law module, history and energy terms; its pair
        table ``pair_params`` of the running one's shape): the pair table replaced in place and the
        history stored in the layout the table continues in (:func:`continued_layout`), with the
        kernels of that layout (generated before anything changes)."""
        t = self.table
        new = continued_layout(law, t.hist[: t.n_pairs], self.history_layout)
        if new != self.history_layout:
            kernels = kernels_for(law.law_module, debug=self.debug, shapes=self.shape_features, dropped=new.dropped,
                                  row_length=self.row_length)
            rows = self.history_layout.convert(t.hist[: t.n_pairs], new)
            self.history_layout = t.history_layout = new
            extra = t.set_history(rows, self._bond_column(law))
            if self.geo_col >= 0:
                self.geo_col += extra
                self._bodies = None  # its shapes record holds geo_col
            self.kernels = kernels
        self.pair_params[...] = pair_params   # in place: the kernels' Table record holds this array
        self.law = law

    def saved_table(self) -> dict:
        """The contact table's arrays for a checkpoint or a particle exchange
        (:meth:`ContactTable.saved`), the history in the law's full layout (every field; what a
        new stepper's ``saved_table`` takes, whatever layout either stores)."""
        saved = self.table.saved()
        saved["hist"] = self.history_layout.widen(saved["hist"])
        return saved

    # ------------------------------------------------------------------ kernel calls
    @property
    def shapes(self) -> records.Shapes:
        """The bodies' shapes as the narrow phases take them (:data:`records.Shapes`)."""
        return records.build(records.Shapes, model=self.model, state=self.state, stepper=self)

    @property
    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """The model's principal moments and their inverses, contiguous (set on first use; the model
        may share them: Model.principal_arrays)."""
        if self._principal is None:
            self._principal = self.model.principal_arrays()
        return self._principal

    @property
    def rigid(self) -> records.Rigid | None:
        """The bodies with a full inertia tensor, or None for spheres only (the integrator's
        rigid-body branches then compile away) and in a 2-D scene, whose disks and ellipses turn
        about z alone (spin and torque along z, the body's z axis the global one): there the scalar
        update with the moment about z is exact."""
        if self.shape_features and self.model.dimension == 3:
            return records.build(records.Rigid, model=self.model, stepper=self)
        return None

    @property
    def servo(self) -> records.Servo:
        """The servo-controlled walls and meshes with the pair list's index by wall and triangle."""
        return records.build(records.Servo, model=self.model, state=self.state, table=self.table)

    @property
    def mesh_motion(self) -> records.MeshMotion:
        """What moving the meshes needs, with the table's reference poses of the last build."""
        return records.build(records.MeshMotion, model=self.model, table=self.table)

    def bodies(self) -> records.Bodies:
        """The kernels' per-body record (built once: the arrays it holds live as long as the stepper)."""
        if self._bodies is None:
            self._bodies = records.build(records.Bodies, model=self.model, state=self.state, stepper=self)
        return self._bodies

    def boundaries(self) -> records.Boundaries:
        """The kernels' record of the boundaries: with servo control, the pair list keeps its index
        by wall and triangle from now on, and the contacts' geometry (the controllers read their
        normals and overlaps at every step)."""
        s, t = self.state, self.table
        if s.servo_index.shape[0] and not t.track_boundaries:
            t.track_boundaries = True
            t.index_boundaries()
            store_geometry(self.model, s, t)
        return records.build(records.Boundaries, model=self.model, state=s, table=t, stepper=self)

    def pairs(self) -> records.Table:
        """The kernels' per-pair record (the triangle selection's scratch grown with the list first:
        only a scene with mesh walls needs it, 64 B a pair)."""
        t = self.table
        need = t.pair_i.shape[0] if self.model.n_triangles else 0
        if self.scratch.shape[0] < need:
            self.scratch = np.zeros((need, 8))
        return records.build(records.Table, table=t, stepper=self)

    def records(self) -> tuple:
        """``(bodies, books, boundaries, table, run)``: the step kernels' records, as
        :func:`contactlab.engine.kernels.advance` takes them (the boundaries first: servo control
        may widen the table's out)."""
        bounds = self.boundaries()
        return self.bodies(), self.books, bounds, self.pairs(), records.build(records.Run, stepper=self)

    def advance(self, n_steps: int, dt: float, resume: bool) -> tuple[int, bool]:
        """One call of the step kernel (``n_steps = -1``: the forces of the current state only):
        serial for a small scene or one thread, else parallel (same results).  Returns
        ``(steps completed, mid_step)``."""
        self.flags[:] = 0
        blocks = n_blocks(len(self.state.positions))
        parallel = None if blocks == 1 or numba.get_num_threads() == 1 else blocks
        k, mid = launch(self.law, self.kernels.advance, n_steps, dt, resume, *self.records(), parallel)
        return int(k), bool(mid)

    @property
    def half_skin(self) -> float:
        """How far a body (or a wall) may move before the list is rebuilt, m: half the skin, a
        quarter in a periodic scene (whose cell may change by another half, see
        :mod:`contactlab.engine.cell_motion`)."""
        return (0.25 if self.cell is not None else 0.5) * self.table.skin

    def evaluate_forces(self) -> None:
        """Forces and torques at the current state without advancing anything (start of a run,
        after a change of velocities or contacts)."""
        self.advance(-1, 0.0, False)
        self.handle_flags(0.0)

    def take_steps(self, n: int, dt: float) -> None:
        """Take ``n`` steps of ``dt`` and end on a step boundary (rebuilding the list whenever a
        drift asks); ``state.step`` and ``state.time`` follow."""
        s = self.state
        done, resume = 0, False
        try:
            while done < n or resume:
                k, resume = self.advance(n - done, dt, resume)
                done += k
                s.step += k
                s.time = s.time_at(s.step, dt)
                self.handle_flags(dt)
        except KeyboardInterrupt:
            # never leave the state in the middle of a step: finish the step that was started
            if resume and self.failure is None:
                self.handle_flags(dt)
                k, _ = self.advance(1, dt, True)
                s.step += k
                s.time = s.time_at(s.step, dt)
            raise

    def handle_flags(self, dt: float) -> None:
        """Act on the flags of the last kernel call: stop with the diagnosis of a blow-up, widen
        the skin for a body too fast for it, log broken bonds, rebuild the list."""
        f = self.flags
        if f[layout.FLAG_STATE_NAN] or f[layout.FLAG_FORCE_NAN] or f[layout.FLAG_OVERLAP]:
            self.failure = self.on_blowup()
            raise self.failure
        if f[layout.FLAG_FAST]:
            # one step moved a sphere by more than half the skin: widen the skin so that the list
            # is not rebuilt at every step (it is rebuilt now in any case, so it stays valid)
            t = self.table
            v = self.state.velocities
            step = dt * float(np.sqrt((v * v).sum(axis=1)).max(initial=0.0))
            t.skin = max(t.skin, (6.0 if self.cell is not None else 3.0) * step)
        if f[layout.FLAG_BOND_EVENT]:
            self._log_broken_bonds()
        if f[layout.FLAG_REBUILD] or f[layout.FLAG_FAST]:
            self.rebuild()
        f[:] = 0

    def _log_broken_bonds(self) -> None:
        """Record the bonds the law broke in the last evaluation (marked per pair) and clear the marks."""
        t = self.table
        n = t.n_pairs
        rows = np.flatnonzero(t.out[:n, layout.OUT_EVENT] != 0.0)
        if len(rows):
            codes = -t.hist[rows, t.bond_column]
            self.bond_log.broke(t.pair_i[rows].astype(np.int64), t.pair_j[rows].astype(np.int64), self.state.time,
                                self.state.step, codes.astype(np.int64))
            t.out[rows, layout.OUT_EVENT] = 0.0

    @property
    def nbytes(self) -> int:
        """Bytes held by the contact table and the run arrays."""
        run = (self.vel_pred, self.angvel_pred, self.owner, self.scratch, self.pair_params, self.flags)
        return self.table.nbytes + int(sum(a.nbytes for a in run))
