"""The simulation: the public face of one run (a scene, a contact law, the step loop, the results).

:class:`Simulation` checks what it is given, freezes the scene into a model and a state, derives
the time step (:mod:`contactlab.stability`) and hands the stepping to a
:class:`~contactlab.engine.stepper.Stepper` (the contact table, the generated kernels and the run
arrays); results come from :mod:`contactlab.observables`, blow-ups are explained by
:mod:`contactlab.diagnosis`, checkpoints go through :mod:`contactlab.io.checkpoint`, references to
bodies, walls and materials are checked by :mod:`contactlab.references`.

One concept, kept in one file although it is longer than the ~600 lines a module here aims at: the
public face of a run.  Its code is the checks of the user's arguments and calls of a line or a few
into the modules above; about 40 % of its lines are the docstrings that are the user's reference
(parameters with units, the keys of every result, runnable examples that the tests run).
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import replace
from pathlib import Path
from typing import Iterable

import numba
import numpy as np

from ._arguments import as_bool, as_finite, as_int, as_positive, as_vec3, checked_api
from ._memory import release_free_memory
from .bonds import BondLog, bond_pairs
from .cell import PeriodicCell
from .diagnosis import check_speeds, diagnose, initial_overlap_error
from .engine import layout
from .engine.launch import debug_probes
from .engine import servo
from .engine.stepper import Stepper, checked_shape_contact
from .engine.storage_order import check_storage_order
from .errors import InputError, SimulationBlowUp
from .packing_limit import packing_limit
from .frozen_model import Model
from .geometry.shapes import ROLL as SHAPE_ROLL
from .gpu import check_device, check_scene as check_gpu_scene, refuse_streams, stepper_class as gpu_stepper_class
from .io.checkpoint import read_checkpoint, save_checkpoint
from .io.progress import make_progress
from .io.sensors import Recorder
from .laws.base import ContactModel
from .laws.registry import bonded_model_names
from .measure.recording import region_sampler
from .neighbors.exclusions import Exclusions
from . import observables
from .references import body_index, body_pair, material_pair, mesh_index, recorder_target, wall_index
from .scene import Scene
from .scene.plane import in_plane
from .magnitudes import check_magnitudes
from .run_length import RunClock, check_run_length, check_small_dt
from .stability import DEFAULT_DT_FRACTION, check_initial_sphere_overlaps, chosen_dt, default_dt_fraction, stability_limit
from .state import State
from .streams.exchange import StreamSet, inlet_stability_limit
from .streams.inlet import Inlet
from .streams.outlet import Outlet
from .watchdog import DEFAULT_SHARE, RunMonitor, energy_watchdog_share

__all__ = ["Simulation", "DEFAULT_DT_FRACTION"]

#: what the run loop calls on a reporter (``add_reporter`` refuses an object without them)
_REPORTER_METHODS = ("attach", "next_step", "maybe_report", "close")


#: wall seconds of work a run aims at between two returns to Python (progress, interrupts, the run
#: monitor), per device
CHUNK_SECONDS = {"cpu": 0.2, "cuda": 1.0}


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
        0.15 for the linear spring-dashpot) times the limit of a single contact, no more than 0.9
        of the bound of the contacts present (every body's contacts together) and no more than the
        model's accuracy limit where it has one (the spec-000 contact's regularized friction); a
        value above either limit raises :class:`~contactlab.errors.StabilityError` (see
        ``allow_unstable_dt``).
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
    allow_unstable_dt : bool
        Accept a ``dt`` above the stability limit with a :class:`~contactlab.errors.StabilityWarning`
        instead of refusing it (default False): for an expert who knows better than the bound.
    allow_long_run : bool
        Accept runs that would take more than a week of wall time, and a ``dt`` below 1e-15 of
        the stability limit, instead of refusing them with :class:`~contactlab.errors.RunTooLongError`
        (default False; :mod:`contactlab.run_length`).
    energy_watchdog : float or None
        The energy watchdog (:mod:`contactlab.watchdog`): the run stops with
        :class:`~contactlab.errors.SimulationBlowUp` (``cause == "energy_created"``) when its
        energy balance error grows by more than this share of the energy in play over a window of
        checks (default 0.05); ``None`` turns it off.
    device : str
        Where the step runs: ``"cpu"`` (default) or ``"cuda"``, one NVIDIA GPU (the ``gpu`` extra,
        ``pip install -e ".[gpu]"``; ``docs/gpu.md``: what runs there, what is refused with a
        :class:`~contactlab.gpu.DeviceError` before anything is built, and what it measures).
        The same law source and engine code run on both; results agree to rounding.

    The stability limit (:attr:`stability_limit`) is the smaller of two.  The limit of a single
    contact that can occur: over the pairs of bodies that can meet (two free spheres, a free and a
    fixed sphere, a free sphere and a wall; for each material the smallest sphere), the smallest
    ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` for the normal, tangential (rotation included) and
    rolling oscillations of one contact at the guard's overlap; a wall or a fixed sphere counts as
    infinitely heavy.  And the bound of the contacts present, every body's contacts together
    (:mod:`contactlab.packing_limit`): a body with several damped, frictional contacts has stiffer
    coupled modes than any of its contacts alone.  The second follows the run: it is computed
    again during runs (every 20 checks of the run monitor, 80 beyond half a million contacts), and a step above it gives a warning.

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
                 local_damping: float = 0.0, debug: bool = False, shape_contact: str = "minkowski",
                 allow_unstable_dt: bool = False, energy_watchdog: float | None = DEFAULT_SHARE,
                 allow_long_run: bool = False, device: str = "cpu"):
        if not isinstance(scene, Scene):
            raise InputError(f"scene must be a contactlab.Scene, got {type(scene).__name__}")
        model_data, state = scene.finalize()
        self._build(model_data, state, model, dt=dt, skin=skin, max_overlap=max_overlap,
                    initial_overlap_tolerance=initial_overlap_tolerance, threads=threads, local_damping=local_damping,
                    debug=debug, shape_contact=shape_contact, check_initial=True,
                    allow_unstable_dt=allow_unstable_dt, energy_watchdog=energy_watchdog,
                    allow_long_run=allow_long_run, device=device)

    @classmethod
    def load_checkpoint(cls, path, *, threads: int | None = None, allow_import=(), device: str = "cpu") -> "Simulation":
        """Resume a simulation from a checkpoint file (reporters must be attached again).

        ``threads`` overrides the saved thread count (results do not depend on it).  A missing,
        empty, truncated, damaged or foreign file, or one of another format version, raises
        :class:`~contactlab.errors.CheckpointError` saying which.  ``allow_import``: modules the
        stored model of a user-defined law (``"module:name"``) may import; contactlab's own and
        those already imported need none, any other raises
        :class:`~contactlab.errors.ImportNotAllowedError` before it is imported
        (:mod:`contactlab.imports`).  ``device``: where the resumed run steps (``"cpu"``, or
        ``"cuda"`` for a GPU): a checkpoint holds no device, so one written on either resumes on
        either.
        """
        device = check_device(device)
        saved = read_checkpoint(path, allow_import=allow_import)
        options = dict(saved.options)
        if threads is not None:
            options["threads"] = threads
        sim = cls.__new__(cls)
        sim._build(saved.model, saved.state, saved.law, dt=saved.dt, skin=saved.table["skin"], debug=False,
                   check_initial=False,
                   saved_table=saved.table, exclusions=saved.exclusions, bond_log=saved.bond_log,
                   saved_streams=saved.streams, device=device, **options)
        return sim

    def save_checkpoint(self, path) -> Path:
        """Write a checkpoint (atomically) that :meth:`load_checkpoint` resumes bit for bit."""
        return save_checkpoint(self, path)

    # ------------------------------------------------------------------ construction
    def _build(self, model_data: Model, state: State, contact_model: ContactModel, *, dt, skin, max_overlap,
               initial_overlap_tolerance, threads, local_damping, debug, shape_contact, check_initial,
               saved_table=None, exclusions=None, bond_log=None, saved_streams=None, allow_unstable_dt=False,
               energy_watchdog=DEFAULT_SHARE, allow_long_run=False, device="cpu"):
        """Check the options, derive the time step and build the stepper (a new simulation, or a
        checkpoint's parts with ``saved_table``)."""
        if not isinstance(contact_model, ContactModel):
            raise InputError(f"model must be a contact model such as cl.models.HertzMindlin(...), "
                             f"got {type(contact_model).__name__}")
        contact_model.check_materials(model_data.materials)
        # the plain arguments first, before anything long (the stability estimate, compilation)
        if dt is not None:
            as_positive("dt", dt, "s")
        self.max_overlap = as_positive("max_overlap", max_overlap)
        if self.max_overlap >= 1.0:
            raise InputError(f"max_overlap must be < 1 (a fraction of the smaller radius), got {self.max_overlap!r}")
        self.initial_overlap_tolerance = as_finite("initial_overlap_tolerance", initial_overlap_tolerance)
        if not 0.0 <= self.initial_overlap_tolerance < 1.0:
            raise InputError(f"initial_overlap_tolerance must satisfy 0 <= initial_overlap_tolerance < 1 (a fraction "
                             f"of the smaller radius: at 1 the smaller sphere's centre enters the other, and spheres "
                             f"whose centres meet have no contact normal and feel no force), got "
                             f"{self.initial_overlap_tolerance!r}")
        self.local_damping = as_finite("local_damping", local_damping)
        if not 0.0 <= self.local_damping < 1.0:
            raise InputError(f"local_damping must satisfy 0 <= local_damping < 1, got {self.local_damping!r}")
        if self.local_damping > 0.0 and model_data.n_clumps:
            raise InputError(f"local_damping={self.local_damping!r} is not implemented for scenes with clumps "
                             f"(it would act on the member spheres, not on the clump); use local_damping=0")
        if skin is not None:
            skin = as_positive("skin", skin, "m")
        if threads is not None:
            threads = as_int("threads", threads, low=1, high=numba.config.NUMBA_NUM_THREADS)
        #: whether a step above the stability limit is accepted (with a warning) rather than refused
        self.allow_unstable_dt = as_bool("allow_unstable_dt", allow_unstable_dt)
        #: whether runs beyond a week of wall time, and a dt far below the limit, are accepted
        #: (:mod:`contactlab.run_length`); ``run(allow_long_run=...)`` decides for one run
        self.allow_long_run = as_bool("allow_long_run", allow_long_run)
        #: wall seconds a step took in the last run (its first chunk left out), None before
        self._seconds_per_step: float | None = None
        #: the energy watchdog's share of the energy in play (None: off), see :mod:`contactlab.watchdog`
        self.energy_watchdog = energy_watchdog_share(energy_watchdog)
        self.threads = threads
        #: True when the kernels and the law run as plain Python (``debug=True``)
        self.debug = as_bool("debug", debug)
        #: where the step runs: ``"cpu"`` or ``"cuda"`` (one NVIDIA GPU, docs/gpu.md)
        self.device = check_device(device)
        if self.device == "cuda":
            check_gpu_scene(model_data, debug=self.debug)
            if saved_streams:
                raise refuse_streams("a checkpoint with particle streams")
        self.model: Model = model_data
        self.contact_model: ContactModel = contact_model
        self.state: State = state
        if state.ids is None:
            state.ids = np.arange(model_data.n_bodies, dtype=np.int64)
            state.next_id = model_data.n_bodies
        #: the particle streams: inlets and outlets in the order added (:meth:`add_inlet`, :meth:`add_outlet`)
        self.streams = StreamSet(saved_streams)
        #: how convex non-spherical bodies meet (see the class docstring)
        self.shape_contact = checked_shape_contact(shape_contact, contact_model, model_data)
        if check_initial:
            check_initial_sphere_overlaps(model_data, state, self.initial_overlap_tolerance)
        with debug_probes(self.debug):  # a law's stability estimate probes it: uncompiled in debug mode
            self._limit = stability_limit(model_data, contact_model, self.max_overlap)
        #: the bound of the contacts present (None until the first force evaluation)
        self._packing = None
        self._dt: float | None = None
        #: whether the step was chosen by the simulation (``dt=None``): set_model then chooses again
        self._dt_auto = dt is None
        # checked against the single-contact limit now, before anything long; against the contacts
        # present once the first evaluation has found them (below)
        self._set_dt(dt)
        if skin is None:
            skin = 0.4 * float(model_data.radius.min())
        #: the law's dissipation terms (``energy()`` books ``dissipated_<term>`` per term)
        self.dissipation_terms: tuple[str, ...] = contact_model.dissipation_terms
        #: the bonds made so far and those broken (:meth:`bonds`)
        self.bond_log = bond_log if bond_log is not None else BondLog()
        #: the engine: contact table, kernels, run arrays (:class:`~contactlab.engine.stepper.Stepper`)
        self.stepper = self._stepper_class()(model_data, state, contact_model, skin=as_positive("skin", skin, "m"),
                               max_overlap=self.max_overlap, local_damping=self.local_damping, threads=threads,
                               debug=self.debug, shape_contact=self.shape_contact, exclusions=exclusions,
                               bond_log=self.bond_log, saved_table=saved_table)
        self.stepper.on_blowup = lambda: diagnose(self)
        self.reporters: list = []
        with self._threads():
            if saved_table is None:
                self.stepper.rebuild()
                if check_initial:
                    self._check_initial_contacts()
                    t = self.stepper.table
                    check_storage_order(t.pair_i[:t.n_pairs], t.pair_j[:t.n_pairs], t.n_spheres)
                else:
                    self.stepper.evaluate_forces()
        if state.initial_energy is None:
            state.initial_energy = self.energy()
        self._packing = self._packing_limit()
        if saved_table is not None and self._dt is not None and self._dt > self._packing.limit:
            # a checkpoint resumes with its own step; above the present bound it is said, not refused
            self._dt = chosen_dt(self._dt, self._limit, self.contact_model, self._packing, allow_unstable=True)
        else:
            self._set_dt(None if self._dt_auto else self._dt)
        #: the energy watchdog and the bound's refresh during runs (:mod:`contactlab.watchdog`)
        self.monitor = RunMonitor(self.energy_watchdog, model_data.n_bodies)
        if self._dt is not None and self._dt > self._packing.limit:
            self.monitor.warned_limit = self._packing.limit   # said already (allowed, or a checkpoint's step)

    def _packing_limit(self, model: ContactModel | None = None, with_local: bool = False):
        """The bound of the contacts present at the last evaluation (:mod:`contactlab.packing_limit`;
        ``with_local``: with each body's step).  It works in the stepper's predicted velocities,
        which the next step's first half overwrites before anything reads them."""
        st = self.stepper
        with debug_probes(self.debug), self._threads():
            out = packing_limit(self.model, self.state, st.table, model or self.contact_model, st.history_layout,
                                scratch=(st.vel_pred, st.angvel_pred), with_local=with_local)
        release_free_memory()   # its chunks' temporaries off the heap (the peak memory of a large scene)
        return out

    def _refresh_packing_limit(self):
        """Compute the bound of the contacts present again (the run monitor, the watchdog); returns
        it with each body's step, keeps it without."""
        self.stepper.to_host()   # it reads the contacts present (a GPU's state is brought back)
        full = self._packing_limit(with_local=True)
        self._packing = replace(full, local=None)
        return full

    @property
    def stability_limit(self) -> float:
        """Largest stable time step, s: the smaller of the limit of a single contact that can occur
        (at the guard's overlap) and the bound of the contacts present, every body's contacts
        together, at the last check (``inf`` when no contact can occur)."""
        bound = self._packing.limit if self._packing is not None else math.inf
        return min(self._limit.limit, bound)

    @property
    def contact_limit(self) -> float:
        """The stable step of a single contact that can occur, s (at the guard's overlap: the
        law's own ``stability_limit`` over the pairs of bodies that can meet); one part of
        :attr:`stability_limit`."""
        return self._limit.limit

    @property
    def packing_limit(self):
        """The bound of the contacts present at the last check
        (:class:`~contactlab.packing_limit.PackingLimit`: ``limit`` s, the ``body`` whose contacts
        set it and how many it has, each body's step in ``local``); the other part of
        :attr:`stability_limit`."""
        return self._packing

    @property
    def limiting_contact(self) -> str:
        """What sets the stability limit, for messages: the pair of bodies of a single contact
        (``"sphere 3 (radius 0.001 m) against wall 0"``), or the body whose contacts together set
        the bound of the packing (``"the contacts of sphere 17 (5 contacts)"``)."""
        p = self._packing
        if p is not None and p.limit < self._limit.limit:
            return f"the contacts of {p.describe('sphere' if self.model.shape_kind[p.body] == 0 else 'body')}"
        return self._limit.case

    def _check_initial_contacts(self):
        """The forces of the initial state, refusing bodies of any shape (or a body and a wall or
        mesh) that interpenetrate by more than ``initial_overlap_tolerance`` (the sphere pairs were
        checked before compiling anything; the narrow phase measures the other shapes)."""
        self.stepper.advance(-1, 0.0, False)
        f = self.stepper.flags
        if not (f[layout.FLAG_STATE_NAN] or f[layout.FLAG_FORCE_NAN]):
            err = initial_overlap_error(self, min(self.initial_overlap_tolerance, self.max_overlap))
            if err is not None:
                raise err
        self.stepper.handle_flags(0.0)

    # ------------------------------------------------------------------ the engine's parts
    @property
    def table(self):
        """The contact table (:class:`~contactlab.engine.contact_table.ContactTable`)."""
        return self.stepper.table

    @property
    def exclusions(self) -> Exclusions:
        """The pairs of bodies or materials switched off (:meth:`set_active`)."""
        return self.stepper.exclusions

    @property
    def shape_features(self):
        """The narrow phases this scene's kernels carry (False: spheres and plane walls only)."""
        return self.stepper.shape_features

    @property
    def failure(self) -> SimulationBlowUp | None:
        """The blow-up that stopped the run, if any (a stopped simulation does not run again)."""
        return self.stepper.failure

    @property
    def _kernels(self):
        return self.stepper.kernels

    def _threads(self):
        """A ``with`` block in which the kernels run on the simulation's threads."""
        return self.stepper.threads_scope()

    # ------------------------------------------------------------------ time step
    @property
    def dt(self) -> float | None:
        """Time step, s.  ``None`` only while it is undetermined: ``dt=None`` in a scene where no
        contact can occur (one free body and no walls, say) has no stability limit to derive a step
        from; such a simulation is built, and :meth:`run` asks for ``sim.dt = ...`` before it steps."""
        return self._dt

    @dt.setter
    def dt(self, value):
        self._set_dt(value)
        self._dt_auto = value is None

    def _set_dt(self, value):
        """Validate and set the step (``None``: the default policy), keeping time continuous."""
        dt = chosen_dt(value, self._limit, self.contact_model, self._packing, allow_unstable=self.allow_unstable_dt)
        if value is not None and not self.allow_long_run:
            check_small_dt(dt, self._limit.limit, f"the contact {self._limit.case}")
        s = self.state
        s.time_base, s.step_base = s.time, s.step
        self._dt = dt

    # ------------------------------------------------------------------ the law's parameters
    def set_model(self, model: ContactModel) -> None:
        """Go on with other parameters of the same contact law, keeping every contact and its history.

        The usual use: a packing compressed with a low friction (dense) or a high one (loose),
        then sheared with the friction of the material (YADE's triaxial examples, Thornton 2000):
        ``sim.set_model(cl.models.HertzMindlin(restitution=0.3, friction=0.5))``.  ``model`` must
        be of the same law (same law module, history and energy terms) as the one running; its
        pair table replaces the old one from the next step on (a stuck tangential spring beyond
        a new, lower limit slides at the next step; a rolling spring switched on starts unloaded in
        every contact).  The time step stays; one above the new stability limit raises
        :class:`~contactlab.errors.StabilityError`.  Checkpoints save the new model.
        """
        if not isinstance(model, ContactModel):
            raise InputError(f"model must be a contact model such as cl.models.HertzMindlin(...), "
                             f"got {type(model).__name__}")
        model.check_materials(self.model.materials)
        old = self.contact_model
        if (model.law_module != old.law_module or model.history_size != old.history_size
                or model.dissipation_terms != old.dissipation_terms):
            raise InputError(f"set_model changes the parameters of the law that runs ({old.name}, law module "
                             f"{old.law_module}); got {model.name} (law module {model.law_module}); a different law "
                             f"needs a new Simulation")
        table = np.ascontiguousarray(model.scene_pair_table(self.model), dtype=np.float64)
        if table.shape != self.stepper.pair_params.shape:
            raise InputError(f"set_model: the new model's pair table has shape {table.shape}, the running one "
                             f"{self.stepper.pair_params.shape}")
        with debug_probes(self.debug):
            limit = stability_limit(self.model, model, self.max_overlap)
        packing = self._packing_limit(model)
        if self._dt is not None and not self._dt_auto:
            # raises StabilityError if the step is now too long
            chosen_dt(self._dt, limit, model, packing, allow_unstable=self.allow_unstable_dt)
        # the pair table in place; the history stored as the new parameters need (a rolling spring's
        # columns, say, when rolling friction is switched on: engine/history_layout.py)
        self.stepper.set_law(model, table)
        self.contact_model = model
        self._limit, self._packing = limit, packing
        if self._dt_auto and self._dt is not None:
            # dt=None: the step of the policy, where the new model needs a smaller one
            wanted = chosen_dt(None, limit, model, packing)
            if wanted is not None and wanted < self._dt:
                self._set_dt(wanted)
        self.monitor.reset()
        self._refresh_forces()

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

    # clumps (docs/clumps.md): the arrays above hold the member spheres (their centres, the clump's
    # rigid velocity at them, its angular velocity and orientation; a member's force is that of its
    # contacts alone); these hold the clumps, one row per clump
    @property
    def n_clumps(self) -> int:
        """Number of clumps C."""
        return self.model.n_clumps

    @property
    def clump_positions(self) -> np.ndarray:
        """(C, 3) centre of mass of each clump, m (a copy)."""
        return self.state.clump_positions.copy()

    @property
    def clump_velocities(self) -> np.ndarray:
        """(C, 3) velocity of each clump's centre of mass, m/s (a copy)."""
        return self.state.clump_velocities.copy()

    @property
    def clump_angular_velocities(self) -> np.ndarray:
        """(C, 3) angular velocity of each clump, rad/s, global frame (a copy)."""
        return self.state.clump_angular_velocities.copy()

    @property
    def clump_orientations(self) -> np.ndarray:
        """(C, 4) unit quaternions (w, x, y, z): each clump's principal frame to global (a copy)."""
        return self.state.clump_orientations.copy()

    @property
    def clump_forces(self) -> np.ndarray:
        """(C, 3) total force on each clump at the last evaluation (its members' contacts + its weight), N."""
        return self.state.clump_forces.copy()

    @property
    def clump_torques(self) -> np.ndarray:
        """(C, 3) total torque on each clump about its centre of mass at the last evaluation, N m."""
        return self.state.clump_torques.copy()

    @property
    def wall_points(self) -> np.ndarray:
        """(W, 3) current point of each wall, m (a copy)."""
        return self.state.wall_points.copy()

    @property
    def n_spheres(self) -> int:
        return self.model.n_spheres

    @property
    def cell(self) -> PeriodicCell:
        """The periodic cell (:class:`~contactlab.cell.PeriodicCell`: lengths, images, unwrapped
        positions, strain rates, shear, stress servo) of a scene made with ``scene.set_periodic``."""
        if self.state.cell is None:
            raise InputError("this simulation has no periodic cell; make the scene periodic with "
                             "scene.set_periodic(lower, upper, axes=...) (docs/periodic.md)")
        return PeriodicCell(self)

    @property
    def ids(self) -> np.ndarray:
        """(N,) int64: the stable id of each body, in the order of every per-body array
        (``positions``, ``velocities``, ...; a copy).  The scene's bodies are ``0 .. N-1``; bodies
        inserted by an inlet get the next ids, and an id is never reused.  The per-body arrays
        hold the bodies present, sorted by id: removing bodies shifts the indices of those after
        them (use :meth:`index_of`), inserting appends."""
        return self.state.ids.copy()

    def index_of(self, ids) -> np.ndarray:
        """The current index of each body id in ``ids`` (int array; -1 for an id that is not present:
        removed, or never given)."""
        ids = np.asarray(ids, dtype=np.int64)
        have = self.state.ids
        k = np.minimum(np.searchsorted(have, ids), max(len(have) - 1, 0))
        return np.where(have[k] == ids, k, -1) if len(have) else np.full(ids.shape, -1)

    @property
    def dimension(self) -> int:
        """3, or 2 for a scene of disks, ellipses and line walls in the plane z = 0 (``Scene(dimension=2)``)."""
        return int(self.model.dimension)

    def _vector(self, name: str, value, spin: bool = False) -> np.ndarray:
        """A velocity (or with ``spin`` an angular velocity) given by the user, as (3,); in a 2-D
        simulation in the plane (2 numbers, or 3 with z = 0; a spin: one number about z)."""
        unit = "rad/s" if spin else "m/s"
        if self.model.dimension == 2:
            return check_magnitudes(name, in_plane(name, value, spin=spin), unit, positive=False)
        return as_vec3(name, value, unit=unit)

    def set_velocity(self, k: int, velocity, angular_velocity=None) -> None:
        """Set the velocity (m/s) and optionally the angular velocity (rad/s) of sphere ``k``.

        For a fixed (kinematic) sphere this is its prescribed motion from now on.  In a 2-D
        simulation: 2 numbers (or 3 with z = 0) and a spin about z (one number).
        """
        k = body_index(self.model, k)
        if self.model.n_clumps and self.model.clump_of[k] >= 0:
            raise InputError(f"body {k} is a member of clump {int(self.model.clump_of[k])}: its velocity follows "
                             f"the clump's (a member's own velocity would be overwritten at the next step)")
        v = self._vector("velocity", velocity)
        w = None if angular_velocity is None else self._vector("angular_velocity", angular_velocity, spin=True)
        self.state.velocities[k] = v
        if w is not None:
            self.state.angular_velocities[k] = w
        self._refresh_forces()

    def set_wall_velocity(self, w: int, velocity) -> None:
        """Set the translation velocity (m/s) of wall ``w`` (a servo-controlled wall is released:
        strain control from now on)."""
        w = wall_index(self.model, w)
        v = self._vector("velocity", velocity)
        servo.release(self.state, servo.KINDS["wall"], w)
        self.state.wall_velocities[w] = v
        self._refresh_forces()

    # ------------------------------------------------------------------ servo-controlled walls
    def servo_wall(self, wall: int, *, target_force: float | None = None, target_stress: float | None = None,
                   area: float | None = None, area_from=None, gain: float | None = None,
                   relaxation: float = servo.DEFAULT_RELAXATION, max_speed: float | None = None) -> None:
        """Move plane wall ``wall`` along its normal so that the force of the bodies on it follows a
        target (stress control), from the next step on, until :meth:`release_servo` or
        :meth:`set_wall_velocity`.

        Give ``target_force`` (N, the normal force, compression > 0) or ``target_stress`` (Pa) with
        ``area`` (m^2, constant) or ``area_from=((a1, b1), (a2, b2))``: two pairs of opposite plane
        walls whose gaps multiply to the area as they move (the top wall of a box: its two pairs of
        lateral walls; in a 2-D scene one pair, times the thickness).  Each step the wall's velocity
        is ``clip(G (F_t - F), -max_speed, max_speed)`` along its normal, ``F`` the force at the
        end of the step before; the gain ``G`` (m/(s N)) is ``gain``, or by default
        ``relaxation / (K dt + C)`` with ``K`` and ``C`` the stiffness and a bound of the damping
        of the wall's contacts then: each step the wall removes at most ``relaxation`` (0 < r <= 1,
        default 0.5) of the force error (YADE's and PFC's rule, dashpots counted; stable, see
        :mod:`contactlab.engine.servo`).  ``max_speed`` (m/s): default 1e-4 times the smallest
        body radius per step (slow: give a quasi-static rate for a packing).  Runs inside the
        compiled step, deterministic, checkpointed.

        Example
        -------
        >>> import contactlab as cl
        >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        >>> scene = cl.Scene(gravity=(0, 0, 0))
        >>> _ = scene.add_sphere(position=(0, 0, 1e-3), radius=1e-3, material=glass)
        >>> floor = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        >>> top = scene.add_wall(point=(0, 0, 2.001e-3), normal=(0, 0, -1), material=glass)
        >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.0))
        >>> sim.servo_wall(top, target_force=0.05)
        >>> sim.run(duration=0.02)
        >>> round(float(sim.servo_status()["force"][0]), 4)
        0.05
        """
        w = wall_index(self.model, wall)
        rows = servo.servo_rows(self.model, kind=servo.KINDS["wall"], index=w,
                                direction=servo.wall_direction(self.model, w), target_force=target_force,
                                target_stress=target_stress, area=area, area_from=area_from, gain=gain,
                                relaxation=relaxation, max_speed=self._servo_speed(max_speed))
        servo.install(self.state, *rows)

    def servo_mesh(self, mesh: int, direction, *, target_force: float | None = None,
                   target_stress: float | None = None, area: float | None = None, area_from=None,
                   gain: float | None = None, relaxation: float = servo.DEFAULT_RELAXATION,
                   max_speed: float | None = None) -> None:
        """:meth:`servo_wall` for a mesh wall, which translates along ``direction`` (3 floats, the
        direction in which it presses on the bodies); the force is that of its triangles' contacts
        along it.  The mesh keeps its angular velocity; :meth:`release_servo` (``mesh=...``) or
        :meth:`set_mesh_velocity` with a velocity ends the control."""
        q = mesh_index(self.model, mesh)
        rows = servo.servo_rows(self.model, kind=servo.KINDS["mesh"], index=q,
                                direction=servo.mesh_direction(direction), target_force=target_force,
                                target_stress=target_stress, area=area, area_from=area_from, gain=gain,
                                relaxation=relaxation, max_speed=self._servo_speed(max_speed))
        servo.install(self.state, *rows)

    def _servo_speed(self, max_speed) -> float:
        if max_speed is not None:
            return as_positive("max_speed", max_speed, "m/s")
        if self._dt is None:
            raise InputError("max_speed: its default (1e-4 of the smallest radius per step) needs the time step, "
                             "which is not set; give max_speed=... (m/s) or set sim.dt first")
        free = ~self.model.fixed
        r = float(self.model.contact_radius[free].min() if free.any() else self.model.contact_radius.min())
        return servo.DEFAULT_STEP_FRACTION * r / self._dt

    def release_servo(self, wall: int | None = None, *, mesh: int | None = None) -> None:
        """End the servo control of a wall (or ``mesh=q``); it stops (translation velocity zero)."""
        if (wall is None) == (mesh is None):
            raise InputError("give exactly one of wall (an index) or mesh=... (an index)")
        if wall is not None:
            w = wall_index(self.model, wall)
            if not servo.release(self.state, servo.KINDS["wall"], w):
                raise InputError(f"wall {w} is not servo-controlled")
            self.state.wall_velocities[w] = 0.0
        else:
            q = mesh_index(self.model, mesh)
            if not servo.release(self.state, servo.KINDS["mesh"], q):
                raise InputError(f"mesh {q} is not servo-controlled")
            self.state.mesh_velocities[q] = 0.0
        self._refresh_forces()

    def servo_status(self) -> dict[str, np.ndarray]:
        """The servo-controlled walls and meshes, one row each in the order they were set:
        ``kind`` ("wall" or "mesh"), ``index``, ``force`` (N: of the bodies on it along its
        direction at the last evaluation, compression > 0), ``target_force`` (N, now), ``area``
        (m^2, now; 1 for a force target), ``stress`` (Pa, ``force / area``), ``velocity`` (m/s
        along its direction, of the last step), ``stiffness`` (N/m) and ``damping`` (N s/m): its
        contacts' ``K`` and ``C``, which set the default gain (:mod:`contactlab.engine.servo`)."""
        return servo.status(self.model, self.state, self.stepper.table)

    def wall_stress(self, wall: int, *, area: float | None = None, area_from=None) -> float:
        """Normal stress (Pa, compression > 0) of the bodies on plane wall ``wall``: its normal force
        at the last evaluation over ``area`` (m^2) or the area of ``area_from`` (as in
        :meth:`servo_wall`), e.g. the axial stress on a strain-controlled platen."""
        w = wall_index(self.model, wall)
        idx, par = servo.servo_rows(self.model, kind=servo.KINDS["wall"], index=w,
                                    direction=servo.wall_direction(self.model, w), target_force=None, target_stress=0.0,
                                    area=area, area_from=area_from, gain=None, relaxation=1.0, max_speed=1.0)
        force = servo.boundary_force(self.model, self.state, self.stepper.table, servo.KINDS["wall"], w, self.model.wall_normal[w])[0]
        return force / servo.gap_area(self.model, self.state, idx, par)

    def _refresh_forces(self):
        """Evaluate the forces again at the current state (after a change of velocities or of the
        contacts): the dashpots and the power of the driven bodies see the new velocities."""
        if self.failure is None:
            with self._threads():
                self.stepper.evaluate_forces()

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
        if spheres is not None:
            self.exclusions.set_bodies(*body_pair(m, spheres), bool(active))
        elif wall is not None:
            self.exclusions.set_bodies(body_index(m, sphere), m.n_spheres + wall_index(m, wall), bool(active))
        else:
            self.exclusions.set_materials(*material_pair(m, materials), bool(active))
        with self._threads():
            self.stepper.rebuild()
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
        cm = self.contact_model
        if not cm.has_bonds:
            raise InputError(f"{type(cm).__name__} has no bonds; models with bonds: "
                             f"{', '.join('cl.models.' + name for name in bonded_model_names())}")
        i, j = bond_pairs(self.model, self.state, spheres=spheres, pairs=pairs, max_gap=max_gap)
        with self._threads():
            made = self.stepper.make_bonds(i, j)
        if made:
            self._refresh_forces()
        return made

    def bonds(self) -> dict[str, np.ndarray]:
        """Every bond made so far, one row each (arrays).

        ``i``, ``j`` (spheres), ``bonded_in`` (the senses, letters of ``"ntwr"``; ``senses`` as a
        bit mask), ``intact`` (bool), ``created`` (s) and ``created_step``,
        ``broken`` (s, NaN while intact) and ``broken_step`` (-1), ``reason`` (the law's code, 0
        while intact) and ``why`` (its name, e.g. ``"tension"``).
        """
        return self.bond_log.table(self.contact_model.bond_reasons)

    def export_bonds(self, path) -> Path:
        """Write :meth:`bonds` to a CSV file (one row per bond); returns the path."""
        return self.bond_log.write_csv(path, self.contact_model.bond_reasons)

    # ------------------------------------------------------------------ particle streams
    def add_inlet(self, region, material, *, rate: float | None = None, mass_rate: float | None = None,
                  radius: float | None = None, distribution=None, velocity=(0.0, 0.0, 0.0), every: int | None = None,
                  start: float | None = None, stop: float | None = None, seed: int = 0, attempts: int = 100,
                  max_backlog: int | None = None) -> Inlet:
        """Insert spheres (disks in 2-D) into ``region`` during the run; returns the
        :class:`~contactlab.streams.inlet.Inlet` (its ``inserted``, ``inserted_mass``, ``backlog``,
        ``skipped`` and ``log()`` say what it did).

        Parameters
        ----------
        region : box, sphere or cylinder of :mod:`contactlab.packing.regions`
            Where new spheres go (entirely inside it); a thin box is a plane inlet.
        material : Material
        rate : float, 1/s, or mass_rate : float, kg/s
            The number or the mass inserted per second; give one.
        radius : float, m, or distribution : :class:`~contactlab.distributions.SizeDistribution`
            All spheres alike, or their diameters drawn (by number) from a distribution.
        velocity : 3 floats (2 in 2-D), m/s
            The new spheres' velocity.
        every : int
            Steps between two batches (default 200).  Insertion happens between kernel calls.
        start, stop : float, s
            When the stream starts (default: now) and stops (default: never).
        seed : int
            Seeds the inlet's random generator (sizes and positions): the same seed inserts the
            same spheres.
        attempts : int
            Positions tried per sphere and batch; a sphere that finds no free place is tried again
            at the next batch (``max_backlog`` of them at most; see :mod:`contactlab.streams.inlet`).

        The time step must suit the smallest sphere the inlet can insert: an
        :class:`~contactlab.errors.StabilityError` says when it does not.  See
        ``docs/particle-streams.md``.

        Example
        -------
        >>> import contactlab as cl
        >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        >>> scene = cl.Scene()
        >>> _ = scene.add_sphere(position=(0, 0, 1e-3), radius=1e-3, material=glass)
        >>> _ = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
        >>> box = cl.packing.regions.box((-0.01, -0.01, 0.02), (0.01, 0.01, 0.03))
        >>> inlet = sim.add_inlet(box, glass, rate=1000.0, radius=1e-3, every=100)
        >>> sim.run(steps=1000)            # a batch every 100 steps (1 ms): 1000/s gives 1 sphere each
        >>> inlet.inserted, len(sim.ids), int(sim.ids[-1])
        (10, 11, 10)
        """
        self._streams_supported("add_inlet")
        v = self._vector("velocity", velocity)
        inlet = Inlet(region, material, rate=rate, mass_rate=mass_rate, distribution=distribution, radius=radius,
                      velocity=v, every=every, start=start, stop=stop, seed=seed, attempts=attempts,
                      max_backlog=max_backlog, dimension=self.model.dimension, thickness=self.model.thickness,
                      anchor_step=self.state.step, time=self.state.time)
        limit = inlet_stability_limit(self, inlet, check_dt=not self._dt_auto)
        self.streams.add(inlet)
        self._limit = limit
        # dt=None: a step there was none of (nothing could touch before) or one beyond the policy's
        # fraction of the limit with the inlet's spheres is chosen again; one within it stays
        if self._dt_auto and (self._dt is None or self._dt > default_dt_fraction(self.contact_model) * limit.limit):
            self._set_dt(None)
        return inlet

    def add_outlet(self, region, *, every: int | None = None) -> Outlet:
        """Remove the free spheres whose centre is inside ``region`` (any region of
        :mod:`contactlab.packing.regions`, e.g. ``half_space`` below a silo's orifice), checked
        every ``every`` steps (default 100); returns the :class:`~contactlab.streams.outlet.Outlet`,
        whose ``count``, ``mass``, ``removed()`` and ``discharge_rate(t0, t1)`` record what left.
        Fixed and non-spherical bodies are never removed.  See ``docs/particle-streams.md``."""
        self._streams_supported("add_outlet")
        outlet = Outlet(region, every=every, anchor_step=self.state.step)
        self.streams.add(outlet)
        return outlet

    def _stepper_class(self):
        """The stepper of the simulation's device."""
        return gpu_stepper_class() if self.device == "cuda" else Stepper

    def _streams_supported(self, method: str) -> None:
        """Particle streams do not yet remap clumps or the image counters of a periodic cell, nor
        run on the GPU."""
        if self.device == "cuda":
            raise refuse_streams(method)
        if self.model.n_clumps:
            raise InputError(f"{method}: particle streams are not supported in a scene with clumps yet (this one has "
                             f"{self.model.n_clumps}); insert and remove bodies in a scene without clumps")
        if self.state.cell is not None:
            raise InputError(f"{method}: particle streams are not supported in a periodic cell yet; use walls, or "
                             f"a scene without scene.set_periodic(...)")

    def _swap_bodies(self, model: Model, state: State, saved_table: dict, exclusions: Exclusions,
                     bond_log: BondLog) -> None:
        """Continue the run with other bodies (a particle stream's exchange,
        :mod:`contactlab.streams.exchange`): a new stepper over the resized model, state and contact
        table and the neighbour list rebuilt (pairs of survivors keep their history).  As on a
        restart, nothing is evaluated: the survivors keep the forces of the last step (those of a
        removed partner included, for the first half-kick: as if it left half a step later) and the
        new spheres start with their weight (they touch nothing), so the bodies that stay move
        exactly as in a run without the others."""
        self.model, self.state, self.bond_log = model, state, bond_log
        self.stepper = self._stepper_class()(model, state, self.contact_model, skin=float(saved_table["skin"]),
                               max_overlap=self.max_overlap, local_damping=self.local_damping, threads=self.threads,
                               debug=self.debug, shape_contact=self.shape_contact, exclusions=exclusions,
                               bond_log=bond_log, saved_table=saved_table)
        self.stepper.on_blowup = lambda: diagnose(self)
        with self._threads():
            self.stepper.rebuild()

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
        if self._dt is None and getattr(reporter, "interval", None) is not None:
            raise InputError(f"{type(reporter).__name__}(interval={reporter.interval!r}) needs the time step, which "
                             f"is not set (dt=None in a scene where no contact can occur): set sim.dt = ... first, "
                             f"or report every=... steps")
        reporter.attach(self)
        self.reporters.append(reporter)

    def record(self, *quantities: str, sphere: int | None = None, contact=None, wall: int | None = None,
               region=None, every: int | None = None, interval: float | None = None, csv=None, keep: bool = True):
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
          ``linear_momentum``, ``angular_momentum``;
        * ``region=``: a box, sphere or cylinder of :mod:`contactlab.packing.regions` or
          ``cl.measure.domain()``: ``stress``, ``contact_stress``, ``kinetic_stress`` ((3, 3) Pa,
          compression positive), ``pressure``, ``mean_velocity``, ``packing_fraction``,
          ``coordination``, ``mechanical_coordination``, ``fabric``, ``bodies``
          (:data:`contactlab.measure.recording.REGION_QUANTITIES`, see docs/measurements.md).

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
        if region is not None:
            if sphere is not None or contact is not None or wall is not None:
                raise InputError("give one target: sphere=, contact= (with wall= for a wall contact), wall= or region=")
            target = ("region", region, region_sampler(region))
        else:
            target = recorder_target(self.model, sphere=sphere, contact=contact, wall=wall)
        rec = Recorder(quantities, target, every=every, interval=interval, csv=csv, keep=keep)
        self.add_reporter(rec)
        return rec

    def check_run(self, duration: float | None = None, steps: int | None = None, *,
                  allow_long_run: bool | None = None) -> int:
        """Check a run as :meth:`run` would, without stepping: the arguments, a run too long to end
        (:class:`~contactlab.errors.RunTooLongError`), a body too fast for the step (an
        :class:`~contactlab.errors.InputError`); returns the number of steps it would take.  For
        a caller that writes output before it runs (``contactlab run`` checks before it opens its
        output folder)."""
        return self._planned_run(duration, steps, allow_long_run)[0]

    def _planned_run(self, duration, steps, allow_long_run):
        """The number of steps a run takes, and its clock, after the checks that come before it."""
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
        if self._dt is None and (steps is None and d > 0 or steps is not None and n_total > 0):
            raise InputError("dt is not set: the simulation was built with dt=None, but no contact can occur in this "
                             "scene, so there is no stability limit to derive a time step from; set one "
                             "(sim.dt = 1e-4, s) or pass dt=... to cl.Simulation")
        if steps is None:
            n_total = 0 if self._dt is None else int(math.ceil(d / self._dt - 1e-9))
        allowed = self.allow_long_run if allow_long_run is None else as_bool("allow_long_run", allow_long_run)
        asked = None if steps is not None else d
        if not allowed:
            check_run_length(n_total, self.model.n_bodies, self._dt, asked, self._seconds_per_step)
        clock = RunClock(n_total, self._dt, asked, allowed)
        if n_total > 0:
            too_fast = check_speeds(self, self._dt, before_run=True)
            if too_fast is not None:
                raise too_fast
        return n_total, clock

    def run(self, duration: float | None = None, steps: int | None = None, *, progress=None,
            allow_long_run: bool | None = None) -> None:
        """Advance by ``duration`` seconds (rounded up to whole steps) or by ``steps`` steps.

        ``progress``: ``True`` shows a progress bar on stderr, or pass a callable
        ``progress(sim, steps_done, steps_total, wall_seconds)`` called between chunks.

        A run that would take more than a week of wall time is refused with
        :class:`~contactlab.errors.RunTooLongError`: before the first step when even the fastest
        possible step (or the rate of this simulation's earlier runs) puts it beyond, else after
        about a second of stepping at the measured rate, stopping where it is
        (:mod:`contactlab.run_length`).  ``allow_long_run=True`` runs it anyway (default: the
        simulation's ``allow_long_run``).
        """
        n_total, clock = self._planned_run(duration, steps, allow_long_run)
        bar = make_progress(progress)
        start_wall = _time.perf_counter()
        done = 0
        for r in self.reporters:
            r.maybe_report(self)
        chunk = 64
        # a GPU keeps the state on the device between chunks and brings it back only when the host
        # reads it (reporters, sensors, user code; the monitor reads numbers summed there); a
        # progress callable is user code that may write it
        user_progress = callable(progress)
        with self._threads(), self.stepper.resident():
            while done < n_total:
                n = min(n_total - done, chunk)
                for r in self.reporters:
                    due = r.next_step(self) - self.state.step
                    if due > 0:
                        n = min(n, due)
                if self.streams:
                    n = min(n, self.streams.next_step(self.state.step) - self.state.step)
                n = min(n, self.monitor.next_step(self.state.step) - self.state.step)
                t0 = _time.perf_counter()
                self.stepper.take_steps(n, self._dt)
                elapsed = _time.perf_counter() - t0
                done += n
                try:
                    self.monitor.check(self)
                    if self.state.step % self.monitor.interval == 0:
                        numbers = self.stepper.run_numbers(self._dt)
                        if numbers is None or not numbers.travel <= 1.0:   # (the device's says when to look)
                            self.stepper.to_host()
                            too_fast = check_speeds(self, self._dt, before_run=False)
                            if too_fast is not None:
                                raise too_fast
                except SimulationBlowUp as err:
                    self.stepper.failure = err
                    raise
                if self.streams:
                    self.stepper.to_host()
                    self.streams.maybe_exchange(self)
                    self.stepper.host_changed()
                # a GPU's state reaches the host here only for a reporter or sensor due now, or user code
                if any(r.next_step(self) <= self.state.step for r in self.reporters):
                    self.stepper.to_host()
                for r in self.reporters:
                    r.maybe_report(self)
                if bar is not None:
                    if user_progress:
                        self.stepper.to_host()
                    bar(self, done, n_total, _time.perf_counter() - start_wall)
                    if user_progress:
                        self.stepper.host_changed()
                clock.step(done, n, elapsed)
                if clock.seconds_per_step is not None:
                    self._seconds_per_step = clock.seconds_per_step
                # aim at ~0.2 s of work per chunk so that progress and interrupts stay responsive (on
                # a GPU ~1 s: each chunk costs a few launches and reads, docs/gpu.md)
                if elapsed > 0:
                    chunk = int(min(max(chunk * min(CHUNK_SECONDS[self.device] / elapsed, 2.0), 1), 100000))
        if bar is not None:
            bar(self, done, n_total, _time.perf_counter() - start_wall, final=True)
        self.last_run_seconds = _time.perf_counter() - start_wall
        self.last_run_steps = done

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

        Everything is at the last force evaluation.  In a scene of more than 1024 spheres with
        plane walls only (no periodic cell, no servo control), the engine keeps no geometry per
        contact: ``overlap``, ``normal`` and ``contact_point`` are recomputed here from the
        positions with the narrow phase's own arithmetic, the same bits as the step kernel's
        (``contactlab.engine.contact_geometry``).
        """
        return observables.contacts(self.model, self.state, self.stepper.table, self.contact_model, as_bool("all_candidates", all_candidates))

    def contact(self, i: int, j: int | None = None, *, wall: int | None = None) -> dict:
        """The data of one pair, as :meth:`contacts` gives it (scalars and (3,) arrays).

        ``contact(i, j)`` for two spheres (reported with ``i < j``: the keys follow the pair's
        order), ``contact(i, wall=w)`` for a sphere and a wall.  A pair that is not in contact
        still has its geometric values (gap, normal, displacement, relative velocity); its force,
        torques, energy and history are zero, and ``in_contact`` says which case it is.
        """
        m = self.model
        i = body_index(self.model, i)
        if (j is None) == (wall is None):
            raise InputError("give exactly one of j (a sphere) or wall=w")
        if j is not None:
            j = body_index(self.model, j)
            if j == i:
                raise InputError(f"a sphere has no contact with itself (i = j = {i})")
            i, jraw = min(i, j), max(i, j)
        else:
            jraw = m.n_spheres + wall_index(self.model, wall)
        return observables.contact(self.model, self.state, self.stepper.table, self.contact_model, i, jraw)

    def n_contacts(self) -> int:
        """Number of active contacts."""
        numbers = self.stepper.run_numbers(self._dt) if self._dt is not None else None   # inside a run on a GPU
        return observables.n_contacts(self.stepper.table) if numbers is None else numbers.contacts

    def wall_forces(self) -> np.ndarray:
        """(W, 3) total force exerted by the spheres on each wall, N."""
        return observables.wall_forces(self.model, self.state, self.stepper.table, self.contact_model)

    def mesh_forces(self) -> np.ndarray:
        """(Mm, 3) total force exerted by the bodies on each mesh wall at the last evaluation, N."""
        return observables.mesh_forces(self.model, self.state, self.stepper.table, self.contact_model)

    def mesh_torques(self) -> np.ndarray:
        """(Mm, 3) total torque exerted by the bodies on each mesh wall about its reference point
        (:attr:`mesh_positions`, the point it turns about) at the last evaluation, N m."""
        return observables.mesh_torques(self.model, self.state, self.stepper.table, self.contact_model)

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
        return observables.mesh_triangles(self.model, self.state, None if mesh is None else mesh_index(self.model, mesh))

    def set_mesh_velocity(self, mesh: int, velocity=None, angular_velocity=None) -> None:
        """Set the translation velocity (m/s) and/or angular velocity (rad/s, about its reference
        point) of a mesh wall from now on (a velocity ends its servo control)."""
        q = mesh_index(self.model, mesh)
        if velocity is not None:
            self.state.mesh_velocities[q] = as_vec3("velocity", velocity, unit="m/s")
            servo.release(self.state, servo.KINDS["mesh"], q)
        if angular_velocity is not None:
            self.state.mesh_angular_velocities[q] = as_vec3("angular_velocity", angular_velocity, unit="rad/s")
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
        b = body_index(self.model, body)
        if self.model.shape_kind[b] != SHAPE_ROLL:
            raise InputError(f"body {b} is not a convex roll")
        return observables.convex_roll_output(self.model, self.state, self.stepper.table, self.contact_model, b)

    def rotation_matrices(self) -> np.ndarray:
        """(N, 3, 3) rotation matrix of each body (body frame to global; for a non-spherical body
        its principal frame: an ellipsoid's semi-axes, a roll's axis is the first column)."""
        return observables.rotation_matrices(self.state.orientations)

    def energy(self) -> dict[str, float]:
        """Energy terms, J.

        ``kinetic`` and ``rotational`` (free spheres), ``gravitational`` (``-m g . x`` summed over
        free spheres), ``elastic`` (stored in the contacts), ``dissipated`` (by the contacts since
        the start), ``total`` (the sum of these five), ``boundary_work`` (work done on the spheres by
        fixed spheres and moving walls) and ``balance_error``: ``total - boundary_work`` minus its
        initial value (zero for a perfect energy balance).  A model that splits its dissipation
        (e.g. Luding: viscous and plastic, per sense) adds one ``dissipated_<term>`` per term; they
        sum to ``dissipated``.

        With particle streams the terms are those of the bodies present; ``inflow`` and
        ``outflow`` (J, cumulative) are the energy inserted and removed bodies brought and took,
        and ``balance_error`` accounts for them (:mod:`contactlab.streams.exchange`).
        """
        return self._energy_terms(observables.energy_sums(self.model, self.state, self.stepper.table))

    def _run_energy(self) -> dict[str, float]:
        """:meth:`energy` from where the state lives (the run monitor, between chunks): a GPU's sums
        on the device while its state is not on the host (:meth:`Stepper.run_numbers`)."""
        numbers = self.stepper.run_numbers(self._dt)
        return self.energy() if numbers is None else self._energy_terms(numbers.energy)

    def _energy_terms(self, sums) -> dict[str, float]:
        out = observables.energy_terms(sums, self.contact_model, self.local_damping, self.state.initial_energy)
        e0 = self.state.initial_energy
        if e0 is not None and "inflow" in e0:
            out["inflow"], out["outflow"] = e0["inflow"], e0["outflow"]
        return out

    def unbalanced_force_ratio(self) -> float:
        """How far the bodies are from static equilibrium: the mean magnitude of the net force on
        the free bodies (contacts, walls and gravity; a clump counted once) divided by the mean
        magnitude of the contact forces, at the last force evaluation.  Dimensionless; 0 in
        static equilibrium, ``inf`` while forces act and no contact carries any (free fall).

        This is the usual stopping test of quasi-static DEM (YADE's ``unbalancedForce``, PFC's
        mean force ratio), typically 1e-2 to 1e-5.  It is the test to use with
        ``local_damping``: local damping opposes a body's acceleration, not its velocity, so a
        body rolling freely on a flat wall (net force zero) keeps its speed, and a test on
        speeds alone may never be met.
        """
        return observables.unbalanced_force_ratio(self.model, self.state, self.stepper.table)

    def linear_momentum(self) -> np.ndarray:
        """(3,) total linear momentum of the free spheres, kg m/s."""
        return observables.linear_momentum(self.model, self.state)

    def angular_momentum(self, origin: Iterable[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
        """(3,) total angular momentum of the free spheres about ``origin``, kg m^2/s."""
        return observables.angular_momentum(self.model, self.state, as_vec3("origin", origin, unit="m"))

    def summary(self) -> dict:
        """Numbers for the end-of-run summary (wall time, throughput, contacts, energy balance).

        ``energy_balance_relative`` is ``balance_error`` divided by the energy that changed form
        since the start (initial kinetic, rotational and elastic energy, plus the change of
        gravitational energy and the boundary work, plus the elastic energy now).
        """
        return observables.summary(self.model, self.state, self.stepper.table, self.contact_model, self.local_damping, self.dt,
                                   getattr(self, "last_run_seconds", 0.0), getattr(self, "last_run_steps", 0))
