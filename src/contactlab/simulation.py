"""The simulation: a frozen model, a time-varying state, a contact law and the step loop."""
from __future__ import annotations

import math
import os
import re
import time as _time
from pathlib import Path
from typing import Iterable

import numba
import numpy as np

from ._jit import n_blocks
from ._arguments import as_bool, as_finite, as_int, as_positive, as_vec3, checked_api, did_you_mean
from .bonds import BondLog
from .diagnosis import diagnose, initial_overlap_error
from .engine import layout
from .engine.codegen import kernel_module
from .engine.contact_table import ContactTable
from .errors import ContactlabError, InputError, SimulationBlowUp, StabilityError
from .laws.base import ContactModel, PairCase
from .laws.registry import bonded_model_names
from .materials import Material
from .frozen_model import Model
from .neighbors.exclusions import Exclusions
from .scene import Scene
from .state import State

__all__ = ["Simulation", "DEFAULT_DT_FRACTION"]

#: default time step as a fraction of the stability limit (``dt=None``), unless the model sets its own
DEFAULT_DT_FRACTION = 0.35

#: what the run loop calls on a reporter (``add_reporter`` refuses an object without them)
_REPORTER_METHODS = ("attach", "next_step", "maybe_report", "close")


def _compiled(contact_model, kernel, *args):
    """Call a compiled kernel; a law that Numba cannot compile is reported as a LawError naming
    the law, its line and a hint (Numba compiles on the first call)."""
    try:
        return kernel(*args)
    except numba.core.errors.NumbaError as exc:
        from .laws.define import explain_compile_error

        first = next((m.group(1) for m in re.finditer(r'File "([^"]+)", line \d+', str(exc))), "")
        engine = str(Path(__file__).resolve().parent)
        if first and os.path.abspath(first).startswith(engine) and "/laws/" not in first.replace(os.sep, "/"):
            # the failing line is in contactlab's own engine or geometry, not in the law
            raise ContactlabError(f"contactlab's step kernels failed to compile at {first} (an internal error, "
                                  f"not a problem of the law {getattr(contact_model, 'name', '')}); please report "
                                  f"it with Numba's message, chained below") from exc
        raise explain_compile_error(exc, contact_model) from exc


class _ThreadScope:
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


@checked_api
class Simulation:
    """Run a scene with a contact model.

    Parameters
    ----------
    scene : Scene
        What to simulate (frozen at construction: later changes to the scene have no effect).
    model : ContactModel
        The contact law, e.g. ``cl.models.HertzMindlin(restitution=0.5, friction=0.5)``.
    dt : float or None
        Time step, s.  ``None`` picks the model's ``default_dt_fraction`` (0.35 for Hertz-Mindlin,
        0.15 for the linear spring-dashpot) times the stability limit, and no more than the model's
        accuracy limit where it has one (the spec-000 contact's regularized friction); a value above
        the stability limit raises :class:`~contactlab.errors.StabilityError`.
    skin : float, optional
        Neighbour-list skin, m; default 0.4 times the smallest radius.
    max_overlap : float
        The overlap guard: a contact whose overlap exceeds this fraction of the smaller radius
        stops the run (:class:`~contactlab.errors.SimulationBlowUp`, whose ``cause`` says why:
        see :mod:`contactlab.diagnosis`); default 0.1, 0 < max_overlap < 1.  Penalty contacts
        (spec 000's and spec 003's models) routinely exceed 10 %: raise it for them.  Nonlinear
        stiffnesses are evaluated at this overlap for the stability limit.
    initial_overlap_tolerance : float
        Largest overlap allowed at the start, as a fraction of the smaller radius (default 0.02),
        for bodies of every shape and meshes (an :class:`~contactlab.errors.InputError` names the
        deepest pair).
    threads : int, optional
        Number of threads for the compiled kernels (default: Numba's default, all cores).
        Results are bit-identical for any number of threads.  Scenes of fewer than
        ``contactlab._jit.SERIAL_BELOW`` (100) bodies run their steps on one thread (entering a
        parallel region costs more than such a step).
    local_damping : float
        Cundall's local (non-viscous) damping, 0 <= alpha < 1 (default 0: none): every component
        of a free sphere's total force and torque is reduced by ``alpha`` times its size against
        the sphere's velocity.  For quasi-static loading (PFC uses 0.7); the work it takes is the
        energy term ``dissipated_local_damping``.
    debug : bool
        Run the step kernels and the contact law as plain Python, uncompiled (default False), so
        that a breakpoint or a ``print`` inside a law works.  Same results, about a thousand times
        slower: for a handful of spheres.
    shape_contact : str
        How convex non-spherical bodies (polyhedra, rolls, mixed pairs) meet:
        ``"minkowski"`` (default): overlap and normal from the Minkowski penetration (GJK/EPA), the
        force through the deepest points, an energy-conserving contact (ECC) for any elastic law;
        ``"common_plane"``: the same overlap with the force at the centroid of the vertices that
        cross the common plane (a common-plane style contact point, not energy-conserving: kept
        for comparison); ``"volume"``: the record also carries the overlap volume and its
        gradient (the contact-volume ECC; chosen automatically for
        :class:`~contactlab.models.VolumeContact`).

    The stability limit is the smallest, over the pairs of bodies that can meet (two free spheres,
    a free and a fixed sphere, a free sphere and a wall; for each material the smallest sphere),
    of ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` for the normal, tangential (rotation included) and
    rolling oscillations of one contact.  A wall or a fixed sphere counts as infinitely heavy, so
    a very stiff wall never makes the limit smaller than the sphere's own material allows.

    Example
    -------
    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene()
    >>> _ = scene.add_sphere(position=(0, 0, 0.0011), radius=1e-3, material=glass)
    >>> _ = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    >>> sim.run(duration=0.05)          # rounded up to whole steps: drops 0.1 mm, bounces, rests
    >>> sim.time >= 0.05, sim.n_contacts(), sim.energy()["dissipated"] > 0
    (True, 1, True)
    """

    def __init__(self, scene: Scene, model: ContactModel, dt: float | None = None, *, skin: float | None = None,
                 max_overlap: float = 0.1, initial_overlap_tolerance: float = 0.02, threads: int | None = None,
                 local_damping: float = 0.0, debug: bool = False, shape_contact: str = "minkowski"):
        if not isinstance(scene, Scene):
            raise InputError(f"scene must be a contactlab.Scene, got {type(scene).__name__}")
        model_data, state = scene.finalize()
        self._setup(model_data, state, model, dt=dt, skin=skin, max_overlap=max_overlap,
                    initial_overlap_tolerance=initial_overlap_tolerance, threads=threads, check_initial=True,
                    local_damping=local_damping, debug=debug, shape_contact=shape_contact)

    # ------------------------------------------------------------------ construction
    def _setup(self, model_data: Model, state: State, contact_model: ContactModel, *, dt, skin, max_overlap,
               initial_overlap_tolerance, threads, check_initial, table_data=None, exclusions=None,
               local_damping=0.0, debug=False, shape_contact="minkowski"):
        if not isinstance(contact_model, ContactModel):
            raise InputError(f"model must be a contact model such as cl.models.HertzMindlin(...), "
                             f"got {type(contact_model).__name__}")
        # the plain arguments first, before anything long (the stability estimate, compilation)
        if dt is not None:
            as_positive("dt", dt, "s")
        self.max_overlap = as_positive("max_overlap", max_overlap)
        if self.max_overlap >= 1.0:
            raise InputError(f"max_overlap must be < 1 (a fraction of the smaller radius), got {self.max_overlap!r}")
        self.initial_overlap_tolerance = as_finite("initial_overlap_tolerance", initial_overlap_tolerance)
        if self.initial_overlap_tolerance < 0:
            raise InputError(f"initial_overlap_tolerance must be >= 0, got {self.initial_overlap_tolerance!r}")
        self.local_damping = as_finite("local_damping", local_damping)
        if not 0.0 <= self.local_damping < 1.0:
            raise InputError(f"local_damping must satisfy 0 <= local_damping < 1, got {self.local_damping!r}")
        if skin is not None:
            skin = as_positive("skin", skin, "m")
        if threads is not None:
            threads = as_int("threads", threads, low=1, high=numba.config.NUMBA_NUM_THREADS)
        self.threads = threads
        #: True when the kernels and the law run as plain Python (``debug=True``)
        self.debug = as_bool("debug", debug)
        self.model: Model = model_data
        self.contact_model: ContactModel = contact_model
        self.state: State = state
        self._init_shapes(shape_contact)
        if state.damping_work is None:
            state.damping_work = np.zeros(model_data.n_spheres)
        #: (N, 6) damping force and torque of the last evaluation (local damping's work booking)
        self._damping_force = np.zeros((model_data.n_spheres, 6))
        if check_initial:
            self._check_initial_overlaps()
        self.table_params = np.ascontiguousarray(contact_model.pair_table(model_data.materials), dtype=np.float64)
        from .probe import debug_probes

        with debug_probes(self.debug):  # a law's stability estimate probes it: uncompiled in debug mode
            self.stability_limit, self._limiting_case = self._stability_limit()
        self._dt, self._dt_missing = 0.0, False
        self.dt = dt  # validated by the setter
        if skin is None:
            skin = 0.4 * float(model_data.radius.min())
        self.dissipation_terms: tuple[str, ...] = contact_model.dissipation_terms
        n_hist = contact_model.history_size + max(len(self.dissipation_terms), 1)
        #: first of the three history columns that keep a shape pair's last normal (-1: spheres only)
        self._geo_col = n_hist if model_data.has_shapes else -1
        self.table = ContactTable(model_data.n_spheres, model_data.n_walls, n_hist + (3 if model_data.has_shapes else 0),
                                  as_positive("skin", skin, "m"), bond_column=contact_model.bond_field,
                                  n_triangles=model_data.n_triangles)
        n_terms = len(self.dissipation_terms)
        if state.dissipation_terms is None or state.dissipation_terms.shape != (model_data.n_spheres, n_terms):
            state.dissipation_terms = np.zeros((model_data.n_spheres, n_terms))
        self._flags = np.zeros(layout.N_FLAGS, dtype=np.int64)
        self._vel_pred = np.zeros_like(state.velocities)
        self._angvel_pred = np.zeros_like(state.angular_velocities)
        self._owner = np.zeros((model_data.n_spheres, layout.N_OWN + n_terms))
        if not hasattr(self, "_bond_log"):
            self._bond_log = BondLog()
        self.reporters: list = []
        self.failure: SimulationBlowUp | None = None
        from .engine.codegen import shape_features

        #: the narrow phases this scene's kernels carry (False: spheres and plane walls only)
        self.shape_features = shape_features(model_data.shape_kind, model_data.n_triangles, self._mode == 2)
        self._kernels = kernel_module(contact_model.law_module, self.debug, self.shape_features)
        self.exclusions = exclusions if exclusions is not None else Exclusions(
            model_data.n_materials, model_data.n_spheres + model_data.n_walls + model_data.n_triangles)
        self._scratch = np.zeros((0, 8))
        with self._threads():
            if table_data is None:
                self._rebuild()
                if check_initial:
                    self._check_initial_contacts()
                else:
                    self._evaluate_initial_forces()
            else:
                self.table.restore(**table_data)
        e0 = self.energy()
        self._initial_energy = e0["total"] - e0["boundary_work"]
        self._initial_terms = e0

    _SHAPE_CONTACT = {"minkowski": 0, "common_plane": 1, "volume": 2}

    def _init_shapes(self, shape_contact):
        """Per-run copies of the mutable shape arrays (mesh triangles move) and the contact mode."""
        m, s = self.model, self.state
        if not isinstance(shape_contact, str) or shape_contact not in self._SHAPE_CONTACT:
            raise InputError(f"shape_contact must be one of {', '.join(map(repr, self._SHAPE_CONTACT))}, "
                             f"got {shape_contact!r}{did_you_mean(shape_contact, self._SHAPE_CONTACT)}")
        if getattr(self.contact_model, "needs_volume", False):
            if shape_contact == "common_plane":
                raise InputError(f"{type(self.contact_model).__name__} needs the overlap volume: use "
                                 f"shape_contact='volume' (the default for it), not 'common_plane'")
            shape_contact = "volume"
            bad = [k for k in np.unique(m.shape_kind) if k not in (0, 2)]
            if (m.shape_kind == 0).any() and (m.shape_kind == 2).any():
                raise InputError(f"{type(self.contact_model).__name__} (the contact-volume ECC) computes the overlap "
                                 f"volume of two spheres or of two convex polyhedra, not of a sphere and a polyhedron; "
                                 f"give the spheres as polyhedra or use another model")
            if bad or m.n_triangles:
                from .geometry.shapes import KIND_NAMES

                what = ", ".join(KIND_NAMES[int(k)] + "s" for k in bad) + (" mesh walls" if m.n_triangles else "")
                raise InputError(f"{type(self.contact_model).__name__} (the contact-volume ECC) computes overlap "
                                 f"volumes of spheres, convex polyhedra and plane walls only; this scene has {what}")
        self.shape_contact = shape_contact
        self._mode = self._SHAPE_CONTACT[shape_contact]
        n_m = m.n_meshes
        if s.shape_data is None:
            s.shape_data = m.shape_data.copy()
        if s.mesh_positions is None:
            s.mesh_positions = np.zeros((n_m, 3))
            s.mesh_orientations = np.tile([1.0, 0.0, 0.0, 0.0], (n_m, 1))
            s.mesh_velocities = np.zeros((n_m, 3))
            s.mesh_angular_velocities = np.zeros((n_m, 3))
        self._mesh_build_pos = s.mesh_positions.copy()
        self._mesh_build_quat = s.mesh_orientations.copy()
        self._inv_principal = np.where(m.fixed[:, None], 0.0, 1.0 / m.principal_inertia)

    def _shape_args(self):
        """The tuples the kernels take for shapes, rigid bodies and meshes (see kernels.advance)."""
        m, s = self.model, self.state
        need = self.table.pair_i.shape[0]
        if self._scratch.shape[0] < need:
            self._scratch = np.zeros((need, 8))
        bodies = (m.shape_kind, m.shape_ref, s.shape_data, m.contact_radius, np.int64(self._geo_col),
                  np.int64(self._mode))
        rigid = (m.shape_kind, m.principal_inertia, self._inv_principal)
        meshes = (m.tri_ref, m.tri_mesh, s.mesh_positions, s.mesh_orientations, s.mesh_velocities,
                  s.mesh_angular_velocities, m.mesh_material, self._scratch)
        motion = (m.mesh_local, m.mesh_first, self._mesh_build_pos, self._mesh_build_quat, m.mesh_size)
        return bodies, rigid, meshes, motion

    def _check_initial_overlaps(self):
        from scipy.spatial import cKDTree

        m, s = self.model, self.state
        tol = self.initial_overlap_tolerance
        pos, r = s.positions, m.radius
        tree = cKDTree(pos)
        pairs = tree.query_pairs(2.0 * float(r.max()), output_type="ndarray")
        if len(pairs):
            i, j = pairs[:, 0], pairs[:, 1]
            # spheres here; the other shapes' overlaps show at the first force evaluation
            keep = ~(m.fixed[i] & m.fixed[j]) & (m.shape_kind[i] == 0) & (m.shape_kind[j] == 0)
            i, j = i[keep], j[keep]
            overlap = r[i] + r[j] - np.linalg.norm(pos[j] - pos[i], axis=1)
            ratio = overlap / np.minimum(r[i], r[j])
            bad = ratio > tol
            if bad.any():
                k = int(np.argmax(np.where(bad, ratio, -np.inf)))
                a, b = sorted((int(i[k]), int(j[k])))
                raise InputError(
                    f"spheres {a} and {b} overlap by {overlap[k]:.6g} m ({100 * ratio[k]:.3g}% of the smaller radius) "
                    f"at the start; at most {100 * tol:.3g}% is allowed (initial_overlap_tolerance={tol:g}); "
                    f"{int(bad.sum())} pair(s) overlap too much")
        for w in range(m.n_walls):
            h = (pos - s.wall_points[w]) @ m.wall_normal[w]
            ratio = (r - h) / r
            bad = (ratio > tol) & ~m.fixed & (m.shape_kind == 0)
            if bad.any():
                k = int(np.argmax(np.where(bad, ratio, -np.inf)))
                raise InputError(
                    f"sphere {k} penetrates wall {w} by {r[k] - h[k]:.6g} m ({100 * ratio[k]:.3g}% of its radius) at "
                    f"the start; at most {100 * tol:.3g}% is allowed (initial_overlap_tolerance={tol:g})")

    def _check_initial_contacts(self):
        """The forces of the initial state, refusing bodies of any shape (or a body and a wall or
        mesh) that interpenetrate by more than ``initial_overlap_tolerance`` (the sphere pairs were
        checked before compiling anything; the narrow phase measures the other shapes)."""
        self._advance(-1, False)
        f = self._flags
        if not (f[layout.FLAG_STATE_NAN] or f[layout.FLAG_FORCE_NAN]):
            err = initial_overlap_error(self, min(self.initial_overlap_tolerance, self.max_overlap))
            if err is not None:
                raise err
        self._handle_flags()

    def _stability_limit(self) -> tuple[float, str]:
        #: the model's accuracy limit (e.g. a stiff regularized friction), which dt=None respects
        self._accuracy_limit = math.inf
        m = self.model
        free = ~m.fixed
        # representatives: per material, the two smallest free bodies and the smallest fixed one
        # (the radius of a non-spherical body: its contact radius, the smallest curvature it shows)
        rad = m.contact_radius
        free_reps, fixed_reps = [], []  # (material index, radius, mass, inertia, body index)
        for a in np.unique(m.material):
            idx = np.flatnonzero(free & (m.material == a))
            for p in idx[np.argsort(m.mass[idx], kind="stable")[:2]]:
                free_reps.append((int(a), float(rad[p]), float(m.mass[p]), float(m.inertia[p]), int(p)))
            idx = np.flatnonzero(m.fixed & (m.material == a))
            if len(idx):
                p = int(idx[np.argmin(rad[idx])])
                fixed_reps.append((int(a), float(rad[p]), math.inf, math.inf, p))
        best, where = math.inf, "no contact can occur"
        mats = m.materials
        for a, ra, ma, ia, pa in free_reps:
            others = [(f"sphere {pb}", b, rb, mb, ib) for (b, rb, mb, ib, pb) in free_reps + fixed_reps if pb != pa]
            others += [(f"wall {w}", int(m.wall_material[w]), math.inf, math.inf, math.inf) for w in range(m.n_walls)]
            others += [(f"mesh {q} ({m.mesh_names[q]})", int(m.mesh_material[q]), math.inf, math.inf, math.inf)
                       for q in range(m.n_meshes)]
            for label, b, rb, mb, ib in others:
                case = PairCase(mats[a], mats[b], ra, rb, ma, mb, ia, ib, self.max_overlap * min(ra, rb))
                limit = self.contact_model.stability_limit(case)
                if limit < best:
                    what = "sphere" if m.shape_kind[pa] == 0 else "body"
                    best, where = limit, f"{what} {pa} (radius {ra:g} m) against {label}"
                accuracy = getattr(self.contact_model, "accuracy_limit", None)
                if accuracy is not None:
                    self._accuracy_limit = min(self._accuracy_limit, float(accuracy(case)))
        return best, where

    # ------------------------------------------------------------------ time step
    @property
    def dt(self) -> float | None:
        """Time step, s.  ``None`` only while it is undetermined: ``dt=None`` in a scene where no
        contact can occur (one free body and no walls, say) has no stability limit to derive a step
        from; such a simulation is built, and :meth:`run` asks for ``sim.dt = ...`` before it steps."""
        return None if self._dt_missing else self._dt

    @dt.setter
    def dt(self, value):
        limit = self.stability_limit
        self._dt_missing = False
        if value is None:
            if not math.isfinite(limit):
                # nothing to derive a step from: left open until the user gives one (run() asks)
                self._dt_missing = True
                self._time_base = self.state.time
                self._step_base = self.state.step
                self._dt = 0.0
                return
            value = min(self._default_dt_fraction() * limit, self._accuracy_limit)
        value = as_positive("dt", value, "s")
        if value > limit:
            raise StabilityError(
                f"dt={value:.6g} s is above the stability limit {limit:.6g} s of the contact "
                f"{self._limiting_case} with {self.contact_model!r}; use dt <= {limit:.6g} s "
                f"(dt=None picks {self._default_dt_fraction():g} of the limit)")
        self._time_base = self.state.time
        self._step_base = self.state.step
        self._dt = value

    def _default_dt_fraction(self) -> float:
        return float(getattr(self.contact_model, "default_dt_fraction", DEFAULT_DT_FRACTION))

    # ------------------------------------------------------------------ state access
    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self.state.time

    @property
    def step(self) -> int:
        """Number of steps taken."""
        return self.state.step

    @property
    def positions(self) -> np.ndarray:
        """(N, 3) sphere centres, m (a copy)."""
        return self.state.positions.copy()

    @property
    def velocities(self) -> np.ndarray:
        """(N, 3) sphere velocities, m/s (a copy)."""
        return self.state.velocities.copy()

    @property
    def angular_velocities(self) -> np.ndarray:
        """(N, 3) angular velocities, rad/s, global frame (a copy)."""
        return self.state.angular_velocities.copy()

    @property
    def orientations(self) -> np.ndarray:
        """(N, 4) unit quaternions (w, x, y, z), body to global (a copy)."""
        return self.state.orientations.copy()

    @property
    def forces(self) -> np.ndarray:
        """(N, 3) total force on each sphere at the last evaluation (contacts + gravity), N (a copy)."""
        return self.state.forces.copy()

    @property
    def torques(self) -> np.ndarray:
        """(N, 3) total torque on each sphere about its centre, N m (a copy)."""
        return self.state.torques.copy()

    @property
    def wall_points(self) -> np.ndarray:
        """(W, 3) current point of each wall, m (a copy)."""
        return self.state.wall_points.copy()

    @property
    def n_spheres(self) -> int:
        return self.model.n_spheres

    def _sphere_index(self, k) -> int:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise InputError(f"sphere index must be an integer, got {k!r}")
        if not 0 <= int(k) < self.model.n_spheres:
            raise InputError(f"sphere index {k} is out of range 0..{self.model.n_spheres - 1}")
        return int(k)

    def set_velocity(self, k: int, velocity, angular_velocity=None) -> None:
        """Set the velocity (m/s) and optionally the angular velocity (rad/s) of sphere ``k``.

        For a fixed (kinematic) sphere this is its prescribed motion from now on.
        """
        k = self._sphere_index(k)
        v = as_vec3("velocity", velocity)
        w = None if angular_velocity is None else as_vec3("angular_velocity", angular_velocity)
        self.state.velocities[k] = v
        if w is not None:
            self.state.angular_velocities[k] = w
        self._refresh_forces()

    def set_wall_velocity(self, w: int, velocity) -> None:
        """Set the translation velocity (m/s) of wall ``w``."""
        self.state.wall_velocities[self._wall_index(w)] = as_vec3("velocity", velocity)
        self._refresh_forces()

    def _refresh_forces(self):
        """Evaluate the forces again at the current state (after a change of velocities or of the
        contacts): the dashpots and the power of the driven bodies see the new velocities."""
        if self.failure is None:
            with self._threads():
                self._evaluate_initial_forces()

    def set_active(self, active: bool, *, spheres=None, sphere=None, wall=None, materials=None) -> None:
        """Switch the contact model on or off for a pair of bodies or a pair of materials.

        The spec's ``activeConnector``.  Give exactly one of:

        * ``spheres=(i, j)``: the two spheres ``i`` and ``j``;
        * ``sphere=i, wall=w``: sphere ``i`` and wall ``w``;
        * ``materials=(a, b)``: every pair of a body of material ``a`` and one of material ``b``
          (``Material`` objects or their names; ``a`` may equal ``b``).

        A switched-off pair never becomes a contact: it exerts nothing, appears in no output and
        keeps no history (switched on again, it starts as a new contact).  Takes effect now.

        Example
        -------
        >>> import contactlab as cl
        >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        >>> scene = cl.Scene(gravity=(0, 0, 0))
        >>> a = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass, velocity=(0, 0, 0.1))
        >>> b = scene.add_sphere(position=(0, 0, 2.1e-3), radius=1e-3, material=glass)
        >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.3))
        >>> sim.set_active(False, spheres=(a, b))
        >>> sim.run(duration=0.01)        # sphere a passes through sphere b
        >>> float(sim.velocities[a, 2]), sim.n_contacts()
        (0.1, 0)
        """
        if not isinstance(active, (bool, np.bool_)):
            raise InputError(f"active must be True or False, got {active!r}")
        given = [x is not None for x in (spheres, sphere if wall is None else None, materials)]
        if (sphere is None) != (wall is None):
            raise InputError("sphere=... and wall=... go together (a sphere-wall pair)")
        if sum(given) + (wall is not None) != 1:
            raise InputError("give exactly one of spheres=(i, j), sphere=i with wall=w, or materials=(a, b)")
        m = self.model
        n_s = m.n_spheres
        if spheres is not None:
            try:
                i, j = spheres
            except (TypeError, ValueError):
                raise InputError(f"spheres must be a pair (i, j) of sphere indices, got {spheres!r}") from None
            i, j = self._sphere_index(i), self._sphere_index(j)
            if i == j:
                raise InputError(f"spheres must be two different spheres, got ({i}, {j})")
            self.exclusions.set_bodies(i, j, bool(active))
        elif wall is not None:
            self.exclusions.set_bodies(self._sphere_index(sphere), n_s + self._wall_index(wall), bool(active))
        else:
            try:
                a, b = materials
            except (TypeError, ValueError):
                raise InputError(f"materials must be a pair (a, b) of materials or names, got {materials!r}") from None
            self.exclusions.set_materials(self._material_index(a), self._material_index(b), bool(active))
        with self._threads():
            self._rebuild()
        self._refresh_forces()

    # ------------------------------------------------------------------ bonds
    def bond(self, *, spheres=None, pairs=None, max_gap: float | None = None) -> int:
        """Bond touching or nearly touching spheres (models with bonds: ``Ice``, ``ParallelBond``).

        Give ``pairs`` (a (K, 2) array of sphere indices) to bond exactly those, or ``spheres`` (an
        index array; default every sphere) to bond every pair among them whose gap is at most
        ``max_gap`` (m; default 1 % of the smaller radius of the pair; overlapping pairs always
        qualify).  Pairs of two fixed spheres are skipped; pairs whose bond is intact are left as
        they are; a broken bond can be made again this way (never by itself).  Each new bond starts
        unloaded at the present distance, in the senses the model says.  Returns the number of
        bonds made; :meth:`bonds` lists them.
        """
        from .bonds import bond_candidates

        cm, m, s = self.contact_model, self.model, self.state
        if not cm.has_bonds:
            raise InputError(f"{type(cm).__name__} has no bonds; models with bonds: "
                             f"{', '.join('cl.models.' + name for name in bonded_model_names())}")
        if pairs is not None and (spheres is not None or max_gap is not None):
            raise InputError("give pairs=..., or spheres=... and/or max_gap=..., not both")
        if max_gap is not None:
            max_gap = as_finite("max_gap", max_gap)
            if max_gap < 0:
                raise InputError(f"max_gap must be >= 0 m, got {max_gap!r}")
        if pairs is not None:
            p = np.asarray(pairs)
            if p.ndim != 2 or p.shape[1] != 2 or (p.size and not np.issubdtype(p.dtype, np.integer)):
                raise InputError(f"pairs must be a (K, 2) array of sphere indices, got shape {p.shape}")
            for a, b in p:
                if self._sphere_index(a) == self._sphere_index(b):
                    raise InputError(f"a sphere cannot be bonded to itself (pair ({a}, {b}))")
            i, j = np.minimum(p[:, 0], p[:, 1]).astype(np.int64), np.maximum(p[:, 0], p[:, 1]).astype(np.int64)
            keep = ~(m.fixed[i] & m.fixed[j])
            i, j = i[keep], j[keep]
        else:
            idx = np.arange(m.n_spheres) if spheres is None else np.unique(
                [self._sphere_index(k) for k in np.atleast_1d(spheres)])
            i, j = bond_candidates(s.positions, m.radius, m.fixed, idx, max_gap)
        t = self.table
        bi, bj = t.bonded_pairs()
        nb = m.n_spheres + m.n_walls
        if len(i):
            fresh = ~np.isin(i * nb + j, bi * nb + bj)
            i, j = i[fresh], j[fresh]
        if len(i) == 0:
            return 0
        with self._threads():
            self._rebuild(extra_pairs=(i, j))
        n = t.n_pairs
        rows = np.searchsorted(t.pair_i[:n].astype(np.int64) * nb + t.pair_j[:n], i * nb + j)
        d = np.linalg.norm(s.positions[j] - s.positions[i], axis=1)
        info = dict(overlap=m.radius[i] + m.radius[j] - d, radius_i=m.radius[i], radius_j=m.radius[j],
                    mass_i=np.where(m.fixed[i], np.inf, m.mass[i]), mass_j=np.where(m.fixed[j], np.inf, m.mass[j]))
        params = self.table_params[m.material[i], m.material[j]]
        h = cm.initial_bond_history(info, params)
        t.hist[rows, : cm.history_size] = h
        t.hist[rows, cm.history_size:] = 0.0
        self._bond_log.made(i, j, s.time, s.step, cm.bonded_senses)
        self._refresh_forces()
        return int(len(i))

    def bonds(self) -> dict[str, np.ndarray]:
        """Every bond made so far, one row each (arrays).

        ``i``, ``j`` (spheres), ``bonded_in`` (the senses, letters of ``"ntwr"``; ``senses`` as a
        bit mask), ``intact`` (bool), ``created`` (s) and ``created_step``,
        ``broken`` (s, NaN while intact) and ``broken_step`` (-1), ``reason`` (the law's code, 0
        while intact) and ``why`` (its name, e.g. ``"tension"``).
        """
        return self._bond_log.table(self.contact_model.bond_reasons)

    def export_bonds(self, path) -> Path:
        """Write :meth:`bonds` to a CSV file (one row per bond); returns the path."""
        return self._bond_log.write_csv(path, self.contact_model.bond_reasons)

    def _material_index(self, x) -> int:
        mats = self.model.materials
        for k, mat in enumerate(mats):
            if (isinstance(x, Material) and mat is x) or (isinstance(x, str) and mat.name == x):
                return k
        names = ", ".join(repr(mat.name) if mat.name else f"<unnamed {k}>" for k, mat in enumerate(mats))
        hint = did_you_mean(x, [mat.name for mat in mats if mat.name])
        raise InputError(f"material {x!r} is not used in this scene{hint}; its materials: {names}")

    # ------------------------------------------------------------------ kernels
    def _threads(self) -> "_ThreadScope":
        return _ThreadScope(self.threads)

    def _rebuild(self, extra_pairs=None):
        s, m = self.state, self.model
        wall_material = m.wall_material
        if m.n_triangles:
            wall_material = np.concatenate([m.wall_material, m.mesh_material[m.tri_mesh]]).astype(np.uint16)
        self.table.rebuild(s.positions, m.radius, m.fixed, s.wall_points, m.wall_normal, self.exclusions, m.material,
                           wall_material, extra_pairs=extra_pairs,
                           triangles=(s.shape_data, m.tri_ref) if m.n_triangles else None)
        self._mesh_build_pos[...] = s.mesh_positions
        self._mesh_build_quat[...] = s.mesh_orientations

    def _evaluate_initial_forces(self):
        """Forces and torques at the current state without advancing anything (start of a run)."""
        self._advance(-1, False)
        self._handle_flags()

    def _advance(self, n_steps: int, resume: bool) -> tuple[int, bool]:
        """One call of the step kernel (``n_steps = -1``: the forces of the current state only): the
        serial kernel for a small scene, else the parallel one (same results)."""
        s, m, t = self.state, self.model, self.table
        self._flags[:] = 0
        blocks = n_blocks(len(s.positions))
        kernel = self._kernels.advance if blocks == 1 else self._kernels.advance_parallel
        k, mid = _compiled(
            self.contact_model, kernel, n_steps, self._dt, resume, s.positions, s.velocities, s.angular_velocities,
            s.orientations, s.forces, s.torques, self._vel_pred, self._angvel_pred, m.radius, m.mass, m.inv_mass,
            m.inv_inertia, m.fixed, m.material, m.gravity, s.wall_points, m.wall_normal, s.wall_velocities,
            m.wall_material, t.wall_ref, t.i_start, t.pair_j, t.j_start, t.j_pairs, t.hist, t.out, t.status,
            self._owner, self.table_params, s.dissipated, s.dissipation_terms, s.boundary_work, t.ref_pos,
            0.5 * t.skin, self.max_overlap, self._flags, blocks, self.local_damping, s.damping_work,
            self._damping_force, *self._shape_args())
        return int(k), bool(mid)

    def _advance_steps(self, n: int) -> None:
        """Take ``n`` steps and end on a step boundary (rebuilding the list whenever a drift asks)."""
        done, resume = 0, False
        try:
            while done < n or resume:
                k, resume = self._advance(n - done, resume)
                done += k
                self.state.step += k
                self.state.time = self._step_time(self.state.step)
                self._handle_flags()
        except KeyboardInterrupt:
            # never leave the state in the middle of a step: finish the step that was started
            if resume and self.failure is None:
                self._handle_flags()
                k, _ = self._advance(1, True)
                self.state.step += k
                self.state.time = self._step_time(self.state.step)
            raise

    def _handle_flags(self):
        f = self._flags
        if f[layout.FLAG_STATE_NAN] or f[layout.FLAG_FORCE_NAN] or f[layout.FLAG_OVERLAP]:
            self.failure = self._diagnose()
            raise self.failure
        if f[layout.FLAG_FAST]:
            # one step moved a sphere by more than half the skin: widen the skin so that the list
            # is not rebuilt at every step (it is rebuilt now in any case, so it stays valid)
            t = self.table
            v = self.state.velocities
            step = self._dt * float(np.sqrt((v * v).sum(axis=1)).max(initial=0.0))
            t.skin = max(t.skin, 3.0 * step)
        if f[layout.FLAG_BOND_EVENT]:
            self._log_broken_bonds()
        if f[layout.FLAG_REBUILD] or f[layout.FLAG_FAST]:
            self._rebuild()
        f[:] = 0

    def _log_broken_bonds(self):
        """Record the bonds the law broke in the last evaluation (marked per pair) and clear the marks."""
        t = self.table
        n = t.n_pairs
        rows = np.flatnonzero(t.out[:n, layout.OUT_EVENT] != 0.0)
        if len(rows):
            codes = -t.hist[rows, self.contact_model.bond_field]
            self._bond_log.broke(t.pair_i[rows].astype(np.int64), t.pair_j[rows].astype(np.int64), self.state.time,
                                 self.state.step, codes.astype(np.int64))
            t.out[rows, layout.OUT_EVENT] = 0.0

    def _diagnose(self) -> SimulationBlowUp:
        """The blow-up for the flags just raised, with the cause the numbers support."""
        return diagnose(self)

    # ------------------------------------------------------------------ running
    def add_reporter(self, reporter) -> None:
        """Attach a reporter (VTK, CSV, checkpoint, sensor...); it is called when it is due."""
        if isinstance(reporter, type):
            raise InputError(f"add_reporter: reporter must be a reporter object, got the class {reporter.__name__}: "
                             f"make one first, e.g. {reporter.__name__}(...)")
        missing = [m for m in _REPORTER_METHODS if not callable(getattr(reporter, m, None))]
        if missing:
            raise InputError(f"add_reporter: reporter must be a reporter such as cl.io.VTKReporter(...) (a "
                             f"cl.io.Reporter: with {', '.join(_REPORTER_METHODS)}), got {type(reporter).__name__}: "
                             f"{reporter!r:.80}")
        if self._dt_missing and getattr(reporter, "interval", None) is not None:
            raise InputError(f"{type(reporter).__name__}(interval={reporter.interval!r}) needs the time step, which "
                             f"is not set (dt=None in a scene where no contact can occur): set sim.dt = ... first, "
                             f"or report every=... steps")
        reporter.attach(self)
        self.reporters.append(reporter)

    def record(self, *quantities: str, sphere: int | None = None, contact=None, wall: int | None = None,
               every: int | None = None, interval: float | None = None, csv=None, keep: bool = True):
        """Record quantities over time (a sensor); returns the attached :class:`~contactlab.io.sensors.Recorder`.

        The target:

        * ``sphere=k``: ``position``, ``velocity``, ``angular_velocity``, ``orientation``,
          ``force``, ``torque`` of sphere ``k``;
        * ``contact=(i, j)`` (two spheres) or ``contact=i, wall=w`` (a sphere and a wall): any key
          of :meth:`contact`, e.g. ``overlap``, ``gap``, ``normal_force``, ``force``, ``Force``,
          ``Torque``, ``Director3``, ``relative_velocity``, and the law's history (for
          ``SphereSphereContact``: ``tangential_speed``, ``impact_velocity``, ``plastic_overlap``);
        * ``wall=w`` alone: ``point``, ``velocity``, ``force`` (total force of the spheres on it);
        * nothing: ``kinetic``, ``rotational``, ``gravitational``, ``elastic``, ``dissipated``,
          ``total``, ``boundary_work``, ``balance_error`` (J), ``n_contacts``,
          ``linear_momentum``, ``angular_momentum``.

        Every ``every`` steps (default 1) or ``interval`` seconds; ``csv``: also stream to this
        file.  Recording happens at the due steps, after the step, and never changes the run.

        Example
        -------
        >>> import contactlab as cl
        >>> steel = cl.Material(density=7800.0, young=2e11, poisson=0.3)
        >>> scene = cl.Scene(gravity=(0, 0, 0))
        >>> a = scene.add_sphere(position=(0, 0, 0), radius=0.01, material=steel, velocity=(0, 0, 0.5))
        >>> b = scene.add_sphere(position=(0, 0, 0.0201), radius=0.01, material=steel, fixed=True)
        >>> model = cl.models.SphereSphereContact(contact_stiffness=1e6, impact_model=2, restitution_coefficient=0.5)
        >>> sim = cl.Simulation(scene, model=model, dt=2e-6)
        >>> rec = sim.record("overlap", "normal_force", contact=(a, b))
        >>> sim.run(duration=0.01)
        >>> bool(rec["overlap"].max() > 0), round(float(-sim.velocities[a, 2] / 0.5), 2)   # rebound at e
        (True, 0.5)
        """
        from .io.sensors import Recorder

        if contact is not None:
            if wall is not None:
                target = ("contact_wall", self._sphere_index(contact), self._wall_index(wall))
            else:
                try:
                    i, j = contact
                except (TypeError, ValueError):
                    raise InputError(f"contact must be a pair (i, j) of spheres, or a sphere i with wall=w; "
                                     f"got {contact!r}") from None
                target = ("contact", self._sphere_index(i), self._sphere_index(j))
            if sphere is not None:
                raise InputError("give one target: sphere=, contact= (with wall= for a wall contact) or wall=")
        elif sphere is not None:
            if wall is not None:
                raise InputError("give one target: sphere=, contact= (with wall= for a wall contact) or wall=")
            target = ("sphere", self._sphere_index(sphere))
        elif wall is not None:
            target = ("wall", self._wall_index(wall))
        else:
            target = ("global",)
        rec = Recorder(quantities, target, every=every, interval=interval, csv=csv, keep=keep)
        self.add_reporter(rec)
        return rec

    def _wall_index(self, w) -> int:
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, np.integer)) or not 0 <= int(w) < self.model.n_walls:
            raise InputError(f"wall index {w!r} is out of range 0..{self.model.n_walls - 1}")
        return int(w)

    def run(self, duration: float | None = None, steps: int | None = None, *, progress=None) -> None:
        """Advance by ``duration`` seconds (rounded up to whole steps) or by ``steps`` steps.

        ``progress``: ``True`` shows a progress bar on stderr, or pass a callable
        ``progress(sim, steps_done, steps_total, wall_seconds)`` called between chunks.
        """
        # the arguments first: a wrong argument is named as such, whatever the simulation's state
        if (duration is None) == (steps is None):
            raise InputError(f"give exactly one of duration (s) or steps, got duration={duration!r}, steps={steps!r}")
        if steps is not None:
            if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer, float, np.floating)) \
                    or not math.isfinite(steps) or int(steps) != steps or steps < 0:
                raise InputError(f"steps must be a non-negative integer, got {steps!r}")
            n_total = int(steps)
        else:
            d = as_finite("duration", duration)
            if d < 0:
                raise InputError(f"duration must be >= 0 s, got {d!r}")
        if self.failure is not None:
            raise SimulationBlowUp(f"the simulation was stopped by an earlier blow-up: {self.failure}",
                                   time=self.failure.time, step=self.failure.step, particles=self.failure.particles,
                                   cause=self.failure.cause, details=self.failure.details)
        if self._dt_missing and (steps is None and d > 0 or steps is not None and n_total > 0):
            raise InputError("dt is not set: the simulation was built with dt=None, but no contact can occur in this "
                             "scene, so there is no stability limit to derive a time step from; set one "
                             "(sim.dt = 1e-4, s) or pass dt=... to cl.Simulation")
        if steps is None:
            n_total = 0 if self._dt_missing else int(math.ceil(d / self._dt - 1e-9))
        from .io.progress import make_progress

        bar = make_progress(progress)
        start_wall = _time.perf_counter()
        done = 0
        for r in self.reporters:
            r.maybe_report(self)
        chunk = 64
        with self._threads():
            while done < n_total:
                n = min(n_total - done, chunk)
                for r in self.reporters:
                    due = r.next_step(self) - self.state.step
                    if due > 0:
                        n = min(n, due)
                t0 = _time.perf_counter()
                self._advance_steps(n)
                elapsed = _time.perf_counter() - t0
                done += n
                for r in self.reporters:
                    r.maybe_report(self)
                if bar is not None:
                    bar(self, done, n_total, _time.perf_counter() - start_wall)
                # aim at ~0.2 s of work per chunk so that progress and interrupts stay responsive
                if elapsed > 0:
                    chunk = int(min(max(chunk * min(0.2 / elapsed, 2.0), 1), 100000))
        if bar is not None:
            bar(self, done, n_total, _time.perf_counter() - start_wall, final=True)
        self.last_run_seconds = _time.perf_counter() - start_wall
        self.last_run_steps = done

    def _step_time(self, step: int) -> float:
        return self._time_base + (step - self._step_base) * self._dt

    def close(self) -> None:
        """Let every reporter finish its files (ParaView collection, CSV)."""
        for r in self.reporters:
            r.close(self)

    # ------------------------------------------------------------------ results
    def contacts(self, *, all_candidates: bool = False) -> dict[str, np.ndarray]:
        """Per-contact arrays of the active contacts (or of every candidate pair).

        Keys (one row per contact; body ``i`` is the spec's sphere 0, ``j`` its sphere 1):

        * ``i`` (body), ``j`` (body, or -1 for a wall or mesh contact), ``wall`` (wall index, or -1),
          ``mesh`` and ``triangle`` (the mesh and its triangle, or -1);
        * ``overlap`` (m, > 0 in contact) and ``gap`` (m, ``-overlap``);
        * ``normal`` (unit, from i towards j; for a wall, into the wall), alias ``director``;
        * ``contact_point`` (m), midway through the overlap;
        * ``force`` (N, global: the force on i; j receives ``-force``), ``normal_force`` (N, the
          normal component of the force on j, > 0 when it pushes the bodies apart),
          ``torque_i`` and ``torque_j`` (N m, about each centre; 0 for walls; for a mesh, about its
          reference point);
        * ``trail_velocity`` (m/s): ``omega_i x (contact_point - x_i)``, the velocity of the contact
          point due to the turning of body i (spec 003's output for the convex roll);
        * ``displacement`` (m, ``x_j - x_i``; for a wall, from the centre of i to its foot on the
          wall), ``displacement_local`` (m, ``(0, 0, gap)``), ``relative_velocity`` (m/s,
          ``v_j - v_i`` of the centres; for a wall, the wall's velocity minus ``v_i``);
        * ``elastic_energy`` (J) stored in the contact; ``dissipated`` (J) by the contact since it
          formed and, for a model that splits it, ``dissipated_<term>`` per term;
        * the law's history fields by name (e.g. ``tangential_displacement``, m; a field whose
          name is taken above is given as ``history_<name>``);
        * the output variables of spec 000 under their names there: ``Director3`` (normal),
          ``Displacement``, ``DisplacementLocal``, ``Velocity`` (as above), ``Force`` (the force
          on j, the spec's sphere 1: ``-force``) and ``Torque`` (the torque on i, the spec's
          sphere 0: ``torque_i``).
        """
        t = self.table
        n = t.n_pairs
        sel = np.arange(n) if all_candidates else t.active()
        return self._pair_data(t.pair_i[:n][sel].astype(np.int64), t.pair_j[:n][sel].astype(np.int64), sel)

    def contact(self, i: int, j: int | None = None, *, wall: int | None = None) -> dict:
        """The data of one pair, as :meth:`contacts` gives it (scalars and (3,) arrays).

        ``contact(i, j)`` for two spheres (reported with ``i < j``: the keys follow the pair's
        order), ``contact(i, wall=w)`` for a sphere and a wall.  A pair that is not in contact
        still has its geometric values (gap, normal, displacement, relative velocity); its force,
        torques, energy and history are zero, and ``in_contact`` says which case it is.
        """
        m = self.model
        i = self._sphere_index(i)
        if (j is None) == (wall is None):
            raise InputError("give exactly one of j (a sphere) or wall=w")
        if j is not None:
            j = self._sphere_index(j)
            if j == i:
                raise InputError(f"a sphere has no contact with itself (i = j = {i})")
            i, jraw = min(i, j), max(i, j)
        else:
            jraw = m.n_spheres + self._wall_index(wall)
        t = self.table
        lo, hi = int(t.i_start[i]), int(t.i_start[i + 1])
        k = lo + int(np.searchsorted(t.pair_j[lo:hi], jraw))
        row = k if k < hi and int(t.pair_j[k]) == jraw else -1
        in_contact = row >= 0 and t.status[row] == layout.ACTIVE
        data = self._pair_data(np.array([i]), np.array([jraw]), np.array([row if in_contact else -1]))
        out = {key: (v[0] if v.ndim == 1 else v[0].copy()) for key, v in data.items()}
        for key in ("i", "j", "wall"):
            out[key] = int(out[key])
        out["in_contact"] = bool(in_contact)
        return out

    def _pair_data(self, i: np.ndarray, jraw: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Per-pair arrays for bodies ``i``, ``jraw`` (body index, N + wall, or N + W + triangle)
        and table rows (``-1``: not in contact, zero force and history)."""
        s, m, t = self.state, self.model, self.table
        ns = m.n_spheres
        nsw = ns + m.n_walls
        npair = len(i)
        is_body = jraw < ns
        is_wall = (jraw >= ns) & (jraw < nsw)
        is_tri = jraw >= nsw
        j = np.where(is_body, jraw, -1)
        wall = np.where(is_wall, jraw - ns, -1)
        triangle = np.where(is_tri, jraw - nsw, -1)
        mesh = np.where(is_tri, m.tri_mesh[np.maximum(triangle, 0)] if m.n_triangles else -1, -1)
        xi = s.positions[i]
        ri = m.radius[i]
        normal = np.zeros((npair, 3))
        overlap = np.zeros(npair)
        displacement = np.zeros((npair, 3))
        rel_vel = np.zeros((npair, 3))
        sp = is_body
        if sp.any():
            d = s.positions[j[sp]] - xi[sp]
            dist = np.linalg.norm(d, axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                normal[sp] = d / dist[:, None]
            overlap[sp] = ri[sp] + m.radius[j[sp]] - dist
            displacement[sp] = d
            rel_vel[sp] = s.velocities[j[sp]] - s.velocities[i[sp]]
        if is_wall.any():
            w = wall[is_wall]
            normal[is_wall] = -m.wall_normal[w]
            height = np.einsum("ij,ij->i", xi[is_wall] - s.wall_points[w], m.wall_normal[w])
            overlap[is_wall] = ri[is_wall] - height
            displacement[is_wall] = -height[:, None] * m.wall_normal[w]
            rel_vel[is_wall] = s.wall_velocities[w] - s.velocities[i[is_wall]]
        if is_tri.any():
            q = mesh[is_tri]
            displacement[is_tri] = s.mesh_positions[q] - xi[is_tri]
            rel_vel[is_tri] = s.mesh_velocities[q] - s.velocities[i[is_tri]]
        have = rows >= 0
        out = np.zeros((npair, t.out.shape[1]))
        out[have] = t.out[rows[have]]
        hist = np.zeros((npair, t.hist.shape[1]))
        hist[have] = t.hist[rows[have]]
        contact_point = xi + (ri - 0.5 * overlap)[:, None] * normal
        # where the kernel evaluated the contact, its geometry as the narrow phase found it (the
        # only source for non-spherical bodies and mesh triangles)
        normal[have] = out[have, layout.OUT_NORMAL: layout.OUT_NORMAL + 3]
        overlap[have] = out[have, layout.OUT_OVERLAP]
        contact_point[have] = out[have, layout.OUT_POINT: layout.OUT_POINT + 3]
        force = out[:, layout.OUT_FORCE: layout.OUT_FORCE + 3].copy()
        torque_j = out[:, layout.OUT_TORQUE_J: layout.OUT_TORQUE_J + 3].copy()
        # torque_i + torque_j = (x_j - x_i) x force when both torques are taken about the centres
        # (the branch vectors end at the same line of action); for a wall torque_j is minus the
        # couple (branch b_j = 0), for a mesh it is about the mesh's reference point
        lever = np.where(is_wall[:, None], contact_point - xi, np.where(
            is_tri[:, None], s.mesh_positions[np.maximum(mesh, 0)] - xi if m.n_meshes else 0.0,
            s.positions[np.maximum(j, 0)] - xi))
        torque_i = np.cross(lever, force) - torque_j
        torque_j[is_wall] = 0.0
        gap = -overlap
        local = np.zeros((npair, 3))
        local[:, 2] = gap
        result = {
            "i": i,
            "j": j,
            "wall": wall,
            "mesh": mesh,
            "triangle": triangle,
            "overlap": overlap,
            "gap": gap,
            "normal": normal,
            "director": normal,
            "contact_point": contact_point,
            "force": force,
            "normal_force": -np.einsum("ij,ij->i", force, normal),
            "torque_i": torque_i,
            "torque_j": torque_j,
            "displacement": displacement,
            "displacement_local": local,
            "relative_velocity": rel_vel,
            "elastic_energy": out[:, layout.OUT_ELASTIC].copy(),
            "trail_velocity": np.cross(s.angular_velocities[i], contact_point - xi),
        }
        for name, sl in self.contact_model.history_slices().items():
            block = hist[:, sl].copy()
            result[name if name not in result else f"history_{name}"] = block[:, 0] if block.shape[1] == 1 else block
        h0 = self.contact_model.history_size
        if self.dissipation_terms:
            for c, name in enumerate(self.dissipation_terms):
                result[f"dissipated_{name}"] = hist[:, h0 + c].copy()
            result["dissipated"] = hist[:, h0: h0 + len(self.dissipation_terms)].sum(axis=1)
        else:
            result["dissipated"] = hist[:, h0].copy()
        result.update(Director3=normal, Displacement=displacement, DisplacementLocal=local, Velocity=rel_vel,
                      Force=-force, Torque=torque_i)
        return result

    def save_checkpoint(self, path):
        """Write a checkpoint (atomically) that :meth:`load_checkpoint` resumes bit for bit."""
        from .io.checkpoint import save_checkpoint

        return save_checkpoint(self, path)

    @classmethod
    def load_checkpoint(cls, path, *, threads: int | None = None) -> "Simulation":
        """Resume a simulation from a checkpoint file (reporters must be attached again)."""
        from .io.checkpoint import load_checkpoint

        return load_checkpoint(path, threads=threads)

    def n_contacts(self) -> int:
        """Number of active contacts."""
        return int(np.count_nonzero(self.table.status[: self.table.n_pairs] == layout.ACTIVE))

    def mesh_forces(self) -> np.ndarray:
        """(Mm, 3) total force exerted by the bodies on each mesh wall at the last evaluation, N."""
        c = self.contacts()
        out = np.zeros((self.model.n_meshes, 3))
        mask = c["mesh"] >= 0
        np.add.at(out, c["mesh"][mask], -c["force"][mask])
        return out

    def mesh_torques(self) -> np.ndarray:
        """(Mm, 3) total torque exerted by the bodies on each mesh wall about its reference point
        (:attr:`mesh_positions`, the point it turns about) at the last evaluation, N m."""
        c = self.contacts()
        out = np.zeros((self.model.n_meshes, 3))
        mask = c["mesh"] >= 0
        np.add.at(out, c["mesh"][mask], c["torque_j"][mask])
        return out

    @property
    def mesh_positions(self) -> np.ndarray:
        """(Mm, 3) reference point of each mesh wall, m (a copy)."""
        return self.state.mesh_positions.copy()

    @property
    def mesh_orientations(self) -> np.ndarray:
        """(Mm, 4) orientation of each mesh wall (unit quaternion, its initial frame to global)."""
        return self.state.mesh_orientations.copy()

    def mesh_triangles(self, mesh: int | None = None) -> np.ndarray:
        """(T, 3, 3) current vertices of the triangles of one mesh (or of all meshes), m."""
        m = self.model
        tri = self.state.shape_data[m.tri_ref[:, None] + np.arange(9)].reshape(-1, 3, 3) if m.n_triangles else \
            np.zeros((0, 3, 3))
        if mesh is None:
            return tri
        q = self._mesh_index(mesh)
        return tri[m.mesh_first[q]: m.mesh_first[q + 1]]

    def _mesh_index(self, q) -> int:
        n = self.model.n_meshes
        if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) or not 0 <= int(q) < n:
            raise InputError(f"mesh index {q!r} is out of range 0..{n - 1}" if n else "the scene has no mesh walls")
        return int(q)

    def set_mesh_velocity(self, mesh: int, velocity=None, angular_velocity=None) -> None:
        """Set the translation velocity (m/s) and/or angular velocity (rad/s, about its reference
        point) of a mesh wall from now on."""
        q = self._mesh_index(mesh)
        if velocity is not None:
            self.state.mesh_velocities[q] = as_vec3("velocity", velocity)
        if angular_velocity is not None:
            self.state.mesh_angular_velocities[q] = as_vec3("angular_velocity", angular_velocity)
        self._refresh_forces()

    def convex_roll_output(self, body: int) -> dict[str, np.ndarray]:
        """Spec 003's outputs for a convex roll's contacts (one row per active contact of the roll;
        usually one, with the ground wall).

        ``Position`` (m): the contact point C (the roll's surface point deepest in the ground);
        ``Velocity`` (m/s): the trail velocity ``omega x p_m1,C`` (``p_m1,C`` from the roll's
        centre, the spec's marker m1, to C); ``Force`` (N): the force of the ground on the roll;
        ``Torque`` (N m): its moment about the roll's centre, ``p_m1,C x Force``.  Also under
        snake_case names (``position``, ``trail_velocity``, ``force``, ``torque``), with
        ``slip_velocity`` (m/s, the tangential velocity of the roll's material point at C
        relative to the ground) and ``normal_force`` (N).
        """
        from .geometry.shapes import ROLL
        from .geometry.rotation import rotation_matrix as quaternion_to_matrix

        m, s = self.model, self.state
        b = self._sphere_index(body)
        if m.shape_kind[b] != ROLL:
            raise InputError(f"body {b} is not a convex roll")
        c = self.contacts()
        rows = np.flatnonzero((c["i"] == b) | (c["j"] == b))
        sign = np.where(c["i"][rows] == b, 1.0, -1.0)[:, None]
        offset = m.shape_data[m.shape_ref[b] + 3]
        centre = s.positions[b] + quaternion_to_matrix(s.orientations[b]) @ np.array([offset, 0.0, 0.0])
        point = c["contact_point"][rows]
        lever = point - centre
        force = sign * c["force"][rows]
        omega = s.angular_velocities[b]
        trail = np.cross(omega, lever)
        material = s.velocities[b] + np.cross(omega, point - s.positions[b])
        other = np.zeros_like(material)
        walls = c["wall"][rows]
        other[walls >= 0] = s.wall_velocities[walls[walls >= 0]]
        n = c["normal"][rows] * sign
        rel = material - other
        slip = rel - np.einsum("ij,ij->i", rel, n)[:, None] * n
        torque = np.cross(lever, force)
        return {"Position": point, "Velocity": trail, "Force": force, "Torque": torque, "position": point,
                "trail_velocity": trail, "force": force, "torque": torque, "slip_velocity": slip,
                "normal_force": -np.einsum("ij,ij->i", force, n)}

    def rotation_matrices(self) -> np.ndarray:
        """(N, 3, 3) rotation matrix of each body (body frame to global; for a non-spherical body
        its principal frame: an ellipsoid's semi-axes, a roll's axis is the first column)."""
        from .geometry.rotation import rotation_matrix as quaternion_to_matrix

        return np.array([quaternion_to_matrix(q) for q in self.state.orientations]).reshape(-1, 3, 3)

    def wall_forces(self) -> np.ndarray:
        """(W, 3) total force exerted by the spheres on each wall, N."""
        c = self.contacts()
        out = np.zeros((self.model.n_walls, 3))
        mask = c["wall"] >= 0
        np.add.at(out, c["wall"][mask], -c["force"][mask])
        return out

    def energy(self) -> dict[str, float]:
        """Energy terms, J.

        ``kinetic`` and ``rotational`` (free spheres), ``gravitational`` (``-m g . x`` summed over
        free spheres), ``elastic`` (stored in the contacts), ``dissipated`` (by the contacts since
        the start), ``total`` (the sum of these five), ``boundary_work`` (work done on the spheres by
        fixed spheres and moving walls) and ``balance_error``: ``total - boundary_work`` minus its
        initial value (zero for a perfect energy balance).  A model that splits its dissipation
        (e.g. Luding: viscous and plastic, per sense) adds one ``dissipated_<term>`` per term; they
        sum to ``dissipated``.
        """
        s, m = self.state, self.model
        free = ~m.fixed
        v = s.velocities[free]
        kinetic = 0.5 * float(np.dot(m.mass[free], np.einsum("ij,ij->i", v, v)))
        rotational = 0.5 * float(np.einsum("ij,ij->i", s.angular_velocities[free], self._spin_momenta()[free]).sum())
        grav = -float(np.dot(m.mass[free], s.positions[free] @ m.gravity))
        t = self.table
        elastic = float(t.out[t.active(), layout.OUT_ELASTIC].sum())
        damping = float(s.damping_work.sum())
        dissipated = float(s.dissipated.sum()) + damping
        boundary = float(s.boundary_work.sum())
        total = kinetic + rotational + grav + elastic + dissipated
        out = dict(kinetic=kinetic, rotational=rotational, gravitational=grav, elastic=elastic,
                   dissipated=dissipated, total=total, boundary_work=boundary)
        for c, name in enumerate(self.dissipation_terms):
            out[f"dissipated_{name}"] = float(s.dissipation_terms[:, c].sum())
        if self.local_damping > 0.0 or damping:
            out["dissipated_local_damping"] = damping
        initial = getattr(self, "_initial_energy", None)
        out["balance_error"] = (total - boundary - initial) if initial is not None else 0.0
        return out

    def linear_momentum(self) -> np.ndarray:
        """(3,) total linear momentum of the free spheres, kg m/s."""
        free = ~self.model.fixed
        return (self.model.mass[free, None] * self.state.velocities[free]).sum(axis=0)

    def angular_momentum(self, origin: Iterable[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
        """(3,) total angular momentum of the free spheres about ``origin``, kg m^2/s."""
        free = ~self.model.fixed
        o = as_vec3("origin", origin)
        m = self.model.mass[free, None]
        r = self.state.positions[free] - o
        orbital = np.cross(r, m * self.state.velocities[free]).sum(axis=0)
        spin = self._spin_momenta()[free].sum(axis=0)
        return orbital + spin

    def _spin_momenta(self) -> np.ndarray:
        """(N, 3) angular momentum of each body about its centre, ``R I R^T omega`` (kg m^2/s)."""
        m, s = self.model, self.state
        w = s.angular_velocities
        out = m.inertia[:, None] * w
        rigid = np.flatnonzero(m.shape_kind != 0)
        if len(rigid):
            q = s.orientations[rigid]
            from .geometry.rotation import rotation_matrix as quaternion_to_matrix

            r = np.array([quaternion_to_matrix(x) for x in q])
            wb = np.einsum("kji,kj->ki", r, w[rigid]) * m.principal_inertia[rigid]
            out[rigid] = np.einsum("kij,kj->ki", r, wb)
        return out

    def summary(self) -> dict:
        """Numbers for the end-of-run summary (wall time, throughput, contacts, energy balance).

        ``energy_balance_relative`` is ``balance_error`` divided by the energy that changed form
        since the start (initial kinetic, rotational and elastic energy, plus the change of
        gravitational energy and the boundary work, plus the elastic energy now).
        """
        e = self.energy()
        wall = getattr(self, "last_run_seconds", 0.0)
        steps = getattr(self, "last_run_steps", 0)
        e0 = getattr(self, "_initial_terms", e)
        # the energy that changed form since the start (independent of the origin of heights)
        scale = max(e0["kinetic"] + e0["rotational"] + e0["elastic"] + abs(e["gravitational"] - e0["gravitational"])
                    + abs(e["boundary_work"] - e0["boundary_work"]) + e["elastic"], 1e-300)
        return dict(
            wall_seconds=wall, steps=steps, time=self.time, dt=self.dt, spheres=self.n_spheres,
            particle_steps_per_second=(steps * self.n_spheres / wall) if wall > 0 else float("nan"),
            contacts=self.n_contacts(), energy=e, energy_balance_relative=e["balance_error"] / scale,
            neighbor_builds=self.table.builds)
