"""``cl.DDA``: particle discontinuous deformation analysis of a 2-D scene (implicit, matrix-free).

Usage::

    dda = cl.DDA(scene, dt=1e-3, friction=0.5)      # scene = cl.Scene(dimension=2) of disks/ellipses
    dda.run(duration=0.5)
    dda.positions, dda.log["cg_iterations"], dda.contacts()["normal_force"]

The formulation, the open-close iteration and the step control are described in docs/dda.md and
in :mod:`contactlab.dda.kernels`; the sub-matrices in :mod:`contactlab.dda.blocks`; the linear
solve in :mod:`contactlab.dda.pcg`.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np
from scipy.spatial import cKDTree

from .._arguments import as_bool, as_finite, as_int, as_nonnegative, as_positive, did_you_mean, fmt
from ..errors import InputError, SimulationBlowUp
from ..geometry.shapes import ELLIPSE, KIND_NAMES, SPHERE
from ..gpu import DeviceError, check_device
from ..run_length import RunClock, check_run_length
from ..scene import Scene
from ..scene.plane import as_vec2
from . import layout as L
from .loader import kernels

__all__ = ["DDA"]

_PLANES = ("stress", "strain")


class DDA:
    """Implicit particle DDA of a 2-D scene: disks and ellipses with the six unknowns of
    first-order DDA each (``u0, v0, r0, eps_x, eps_y, gamma_xy``), line walls, gravity.

    Parameters
    ----------
    scene : Scene
        A 2-D scene (``cl.Scene(dimension=2)``) of disks and ellipses; its line walls are rigid
        (moving at their velocity), its ``fixed`` bodies move at their prescribed velocity.
        Masses are the scene's (``rho area t``); Young's modulus and Poisson's ratio of each body
        are its material's.
    dt : float, s
        The time step.  DDA is implicit: it may be far above an explicit method's stability
        limit.  A step is cut (and repeated) when it would move a point by more than
        ``max_displacement``, leave a penetration above ``penetration_tolerance``, or when the
        open-close iteration does not settle; the following steps grow back towards ``dt``.
    friction : float
        Coulomb friction coefficient ``tan(phi)`` of every contact (Mohr-Coulomb).
    cohesion, tensile_strength : float, N
        Strength of the bonded contacts, per contact (Mohr-Coulomb's cohesion ``c`` and a tension
        cut-off ``T``; default 0: no bonds).  With either above 0, the contacts whose gap is at
        most ``bond_gap`` at the start are bonded: a bond carries tension up to ``T`` and shear up
        to ``c + friction F_n`` (``F_n`` negative in tension), and once either is exceeded it
        breaks for good (the contact is then an ordinary frictional one).  Contacts that form
        later are never bonded.
    bond_gap : float, m
        Largest gap of a contact bonded at the start; default ``penetration_tolerance``.
    penalty : float, N/m
        Normal contact spring; default ``50 E t`` (``E`` the largest Young's modulus, ``t`` the
        thickness), in Shi's recommended range ``(10-100) E`` per unit thickness.
    shear_penalty : float, N/m
        Shear contact spring of a locked contact; default ``0.4 penalty``.
    max_displacement : float, m
        Largest displacement of any point in one step; default 0.1 of the smallest semi-axis.
    penetration_tolerance : float, m
        Largest penetration left at the end of a step; default 0.02 of the smallest semi-axis.
    dynamic : bool
        True (default): velocities carry over between steps (Shi's time integration: constant
        acceleration within a step, ``v <- 2 D / dt - v``).  False: static analysis, velocities
        reset to zero at every step (each step is a relaxation towards equilibrium).
    velocity_ratio : float
        Shi's dynamic ratio, in [0, 1]: the end-of-step velocities of a dynamic run are scaled by it
        before the next step (1, the default: fully dynamic, nothing damped; smaller values take
        kinetic energy out, the DDA counterpart of an explicit code's local damping).
    newmark : (beta, gamma)
        The time integration, of the Newmark family.  The default ``(1/2, 1)`` is Shi's DDA scheme
        (constant acceleration within the step, ``v <- 2 D / dt - v``): exact in free fall,
        dissipative at moderate frequencies, but undamped at the highest (spectral radius -> 1
        as ``omega dt -> inf``), so a body locked between stiff contacts keeps an alternating
        velocity that does not move it.  ``(0.5625, 1)`` (``beta = (gamma + 1/2)^2 / 4``) damps
        those modes (spectral radius -> 1/3), also exact in free fall.
    plane : "stress" or "strain"
        The elasticity of the strain unknowns (default plane stress, the bodies being plates of
        the scene's thickness).
    cg_tolerance : float
        PCG stop: residual norm at most this fraction of the right-hand side's, for the solve
        that ends a step (the open-close loop's solves before its states settle stop at 1e-4,
        or at this tolerance if larger).
    max_open_close : int
        Open-close iterations allowed before the step is cut (sooner when one contact has
        changed state 6 times: a cycle).
    force_tolerance : float
        The open-close iteration has converged when no contact changes state, or when every
        change left corrects a force below this fraction of the step's largest normal force (a
        contact at the brink of opening or slipping that would flip back and forth).
    max_cg_iterations : int
        PCG iterations allowed per solve (default ``max(1000, 6 n)``).
    device : str
        ``"cpu"`` (the default and the only one: ``"cuda"`` is refused with a
        :class:`~contactlab.gpu.DeviceError`, docs/gpu.md).
    """

    def __init__(self, scene: Scene, *, dt, friction=0.0, penalty=None, shear_penalty=None, max_displacement=None,
                 penetration_tolerance=None, dynamic=True, plane="stress", newmark=(0.5, 1.0), cg_tolerance=1e-9,
                 max_open_close=30, max_cg_iterations=None, force_tolerance=1e-4, velocity_ratio=1.0,
                 cohesion=0.0, tensile_strength=0.0, bond_gap=None, device="cpu"):
        if check_device(device) != "cpu":
            raise DeviceError(f"particle DDA runs on the CPU only (device={device!r}): its matrix-free solver's "
                              f"sparse products are not GPU kernels yet (docs/gpu.md); use device='cpu', or the "
                              f"explicit engine cl.Simulation(..., device='cuda')")
        if not isinstance(scene, Scene):
            raise InputError(f"scene must be a contactlab Scene, got {type(scene).__name__}")
        if scene.dimension != 2:
            raise InputError("DDA needs a 2-D scene (cl.Scene(dimension=2)) of disks and ellipses; got a 3-D scene")
        model, state = scene.finalize()
        n = model.radius.shape[0]
        kinds = model.shape_kind
        bad = np.flatnonzero((kinds != SPHERE) & (kinds != ELLIPSE))
        if bad.size:
            raise InputError(f"DDA takes disks and ellipses; body {int(bad[0])} is a {KIND_NAMES[int(kinds[bad[0]])]}")
        if plane not in _PLANES:
            raise InputError(f"plane must be one of {_PLANES}, got {fmt(plane)}{did_you_mean(plane, _PLANES)}")
        self.thickness = float(model.thickness)
        self._dt = as_positive("dt", dt, "s")
        mats = model.materials
        young = np.array([m.young for m in mats], dtype=np.float64)[model.material]
        poisson = np.array([m.poisson for m in mats], dtype=np.float64)[model.material]

        # shapes M = R diag(a^2, b^2) R^T (a disk: a = b = r, angle 0); angles about z of the
        # orientations (2 atan2(q_z, q_w), see geometry.rotation.z_angle), exact in a 2-D scene
        q = state.orientations
        ellipse = kinds == ELLIPSE
        ref = model.shape_ref
        a = np.where(ellipse, model.shape_data[np.where(ellipse, ref, 0)], model.radius)
        b = np.where(ellipse, model.shape_data[np.where(ellipse, ref + 1, 0)], model.radius)
        angle = np.where(ellipse, 2.0 * np.arctan2(q[:, 3], q[:, 0]), 0.0)
        c, s = np.cos(angle), np.sin(angle)
        shp = np.column_stack([a * a * c * c + b * b * s * s, a * a * s * s + b * b * c * c, (a * a - b * b) * s * c])
        shp[~ellipse, 2] = 0.0
        smallest = float(np.minimum(a, b).min())
        self.friction = as_nonnegative("friction", friction)
        self.penalty = 50.0 * float(young.max()) * self.thickness if penalty is None else \
            as_positive("penalty", penalty, "N/m")
        self.shear_penalty = 0.4 * self.penalty if shear_penalty is None else \
            as_positive("shear_penalty", shear_penalty, "N/m")
        self.max_displacement = 0.1 * smallest if max_displacement is None else \
            as_positive("max_displacement", max_displacement, "m")
        self.penetration_tolerance = 0.02 * smallest if penetration_tolerance is None else \
            as_positive("penetration_tolerance", penetration_tolerance, "m")
        self.cohesion = as_nonnegative("cohesion", cohesion, "N")
        self.tensile_strength = as_nonnegative("tensile_strength", tensile_strength, "N")
        self.bond_gap = self.penetration_tolerance if bond_gap is None else as_nonnegative("bond_gap", bond_gap, "m")
        self.dynamic = as_bool("dynamic", dynamic)
        self.velocity_ratio = as_nonnegative("velocity_ratio", velocity_ratio)
        if self.velocity_ratio > 1.0:
            raise InputError(f"velocity_ratio must be in [0, 1] (1: fully dynamic), got {velocity_ratio}")
        self.plane = plane
        try:
            beta, gamma = (as_finite("newmark beta", newmark[0]), as_finite("newmark gamma", newmark[1]))
        except (TypeError, IndexError):
            raise InputError(f"newmark must be two numbers (beta, gamma), got {fmt(newmark)}") from None
        if len(newmark) != 2 or not (gamma >= 0.5 and 2.0 * beta >= gamma):
            raise InputError(f"newmark=(beta, gamma) must satisfy 2 beta >= gamma >= 1/2 (unconditionally stable), "
                             f"got {fmt(newmark)}")
        self.newmark = (beta, gamma)
        tol = as_positive("cg_tolerance", cg_tolerance)
        if tol >= 1.0:
            raise InputError(f"cg_tolerance must be below 1 (a relative residual), got {tol}")
        force_tol = as_nonnegative("force_tolerance", force_tolerance)
        if force_tol >= 1.0:
            raise InputError(f"force_tolerance must be below 1 (a fraction of the largest contact force), got {force_tol}")
        oc = as_int("max_open_close", max_open_close, low=1)
        cg = max(1000, 6 * n) if max_cg_iterations is None else as_int("max_cg_iterations", max_cg_iterations, low=1)

        self._params = np.zeros(L.N_PARAM)
        p = self._params
        p[L.P_PENALTY] = self.penalty
        p[L.P_SHEAR] = self.shear_penalty
        p[L.P_FRICTION] = self.friction
        p[L.P_THICKNESS] = self.thickness
        p[L.P_GX], p[L.P_GY] = model.gravity[0], model.gravity[1]
        p[L.P_DT_MAX] = self._dt
        p[L.P_MAX_DISP] = self.max_displacement
        p[L.P_PEN_TOL] = self.penetration_tolerance
        p[L.P_CG_TOL] = tol
        p[L.P_PLANE_STRAIN] = 1.0 if plane == "strain" else 0.0
        p[L.P_DYNAMIC] = 1.0 if self.dynamic else 0.0
        p[L.P_DT_MIN] = 1e-6 * self._dt
        p[L.P_FORCE_TOL] = force_tol
        p[L.P_BETA], p[L.P_GAMMA] = beta, gamma
        p[L.P_VELOCITY_RATIO] = self.velocity_ratio
        p[L.P_COHESION] = self.cohesion
        p[L.P_TENSILE] = self.tensile_strength
        self._ints = np.array([oc, cg], dtype=np.int64)

        vel = np.zeros((n, 6))
        vel[:, 0:2] = state.velocities[:, :2]
        vel[:, 2] = state.angular_velocities[:, 2]
        free = np.ones((n, 6))
        rate = np.zeros((n, 6))
        fixed = model.fixed.astype(bool)
        free[fixed] = 0.0
        rate[fixed] = vel[fixed]
        rate[fixed, 3:] = 0.0
        # the start acceleration of Newmark's rule (it enters unless beta = 1/2, gamma = 1): the
        # body load's, contact forces at t = 0 not counted
        acc = np.zeros((n, 6))
        acc[~fixed, 0], acc[~fixed, 1] = model.gravity[0], model.gravity[1]
        self._bodies = (np.ascontiguousarray(state.positions[:, :2]), angle, shp, model.mass.astype(np.float64).copy(),
                        young, poisson, np.zeros((n, 3)), vel, free, rate, acc)
        # fresh writable C arrays even without walls (an empty slice of the frozen model would stay
        # read-only, a second type signature: a second compile of the step kernel, ~100 s)
        self._walls = (np.array(state.wall_points[:, :2], order="C"), np.array(model.wall_normal[:, :2], order="C"),
                       np.array(state.wall_velocities[:, :2], order="C"))
        self._loads = (np.zeros(0, dtype=np.int64), np.zeros((0, 2)), np.zeros((0, 2)))
        self._hist = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8), np.zeros(0), np.zeros(0),
                      np.zeros((0, 2)), np.zeros(0, dtype=np.int8))
        self._contacts = None
        self._log_chunks: list[np.ndarray] = []
        self.time = 0.0
        self._dt_next = self._dt
        self._check_initial_overlaps()
        if self.cohesion > 0.0 or self.tensile_strength > 0.0:
            self._bond_initial_contacts()

    # ------------------------------------------------------------------ set-up
    @property
    def n_bodies(self) -> int:
        """Number of bodies (disks and ellipses)."""
        return self._bodies[0].shape[0]

    def _body(self, body) -> int:
        return as_int("body", body, low=0, high=self.n_bodies - 1)

    def fix(self, bodies, dofs=("u0", "v0", "r0"), rate=0.0) -> None:
        """Prescribe unknowns of ``bodies`` (an index or a list): each named unknown (``u0``,
        ``v0``: m; ``r0``: rad; ``eps_x``, ``eps_y``, ``gamma_xy``) changes by ``rate * dt`` per
        step (rate in m/s, rad/s or 1/s; default 0: held).  A constraint (the unknown leaves the
        linear system), the fixed-displacement sub-matrix of DDA in its exact form."""
        idx = np.atleast_1d(np.asarray(bodies))
        idx = [self._body(b) for b in idx.tolist()]
        if isinstance(dofs, str):
            dofs = (dofs,)
        cols = []
        for d in dofs:
            if d not in L.DOF_NAMES:
                raise InputError(f"unknown DDA unknown {fmt(d)}{did_you_mean(d, L.DOF_NAMES)}; allowed: {L.DOF_NAMES}")
            cols.append(L.DOF_NAMES.index(d))
        r = as_finite("rate", rate)
        free, rates = self._bodies[8], self._bodies[9]
        for b in idx:
            free[b, cols] = 0.0
            rates[b, cols] = r
            self._bodies[7][b, cols] = r
            self._bodies[10][b, cols] = 0.0

    def add_point_load(self, body, point, force) -> None:
        """A constant force (N, 2 numbers) applied at ``point`` (m, global, at the time of the
        call) of ``body``; the point moves with the body (the point-load sub-matrix)."""
        b = self._body(body)
        pt = as_vec2("point", point)[:2]
        f = as_vec2("force", force)[:2]
        body, rel, force = self._loads     # the kernels move the points with the bodies in place
        self._loads = (np.append(body, b), np.vstack([rel, pt - self._bodies[0][b]]), np.vstack([force, f]))

    def set_wall_velocity(self, wall, velocity) -> None:
        """Change the velocity (m/s, 2 numbers) of line wall ``wall`` from the next step on."""
        w = as_int("wall", wall, low=0, high=self._walls[0].shape[0] - 1)
        self._walls[2][w] = as_vec2("velocity", velocity)[:2]

    def _check_initial_overlaps(self) -> None:
        pos, shp = self._bodies[0], self._bodies[2]
        tol = self.penetration_tolerance
        circle = (np.abs(shp[:, 0] - shp[:, 1]) + 2 * np.abs(shp[:, 2])) <= 1e-15 * (shp[:, 0] + shp[:, 1])
        r = np.sqrt(0.5 * (shp[:, 0] + shp[:, 1]))
        idx = np.flatnonzero(circle)
        if idx.size > 1:
            tree = cKDTree(pos[idx])
            pairs = tree.query_pairs(2.0 * r[idx].max(), output_type="ndarray")
            if len(pairs):
                i, j = idx[pairs[:, 0]], idx[pairs[:, 1]]
                depth = r[i] + r[j] - np.linalg.norm(pos[j] - pos[i], axis=1)
                k = int(np.argmax(depth))
                if depth[k] > tol:
                    raise InputError(f"bodies {int(i[k])} and {int(j[k])} overlap by {depth[k]:.3g} m at the start, "
                                     f"more than penetration_tolerance={tol:.3g} m: move them apart")
        wpt, wn = self._walls[0], self._walls[1]
        for w in range(wpt.shape[0]):
            h = _support2(shp, wn[w])
            gap = (pos - wpt[w]) @ wn[w] - h
            k = int(np.argmin(gap))
            if -gap[k] > tol:
                raise InputError(f"body {k} penetrates wall {w} by {-gap[k]:.3g} m at the start, more than "
                                 f"penetration_tolerance={tol:.3g} m")

    def _bond_initial_contacts(self) -> None:
        """The contacts within ``bond_gap`` now become the history of a step: closed, locked,
        bonded, no force yet."""
        con = kernels().detect(self._bodies, self._walls, self.bond_gap, self._hist)
        key, nrm = con[2], con[4]
        m = key.shape[0]
        self._hist = (key.copy(), np.full(m, L.LOCKED, dtype=np.int8), np.zeros(m), np.zeros(m), nrm.copy(),
                      np.ones(m, dtype=np.int8))

    @property
    def n_bonds(self) -> int:
        """Bonds not broken yet."""
        return int(self._hist[5].sum())

    # ------------------------------------------------------------------ running
    def run(self, duration, *, max_steps=None, allow_long_run: bool = False) -> "DDA":
        """Advance by ``duration`` (s) (or until ``max_steps`` steps were taken).

        A run that would take more than a week of wall time (at the fastest possible step before it
        starts, at the measured rate after about a second) raises
        :class:`~contactlab.errors.RunTooLongError` unless ``allow_long_run`` (:mod:`contactlab.run_length`)."""
        duration = as_nonnegative("duration", duration, "s")
        limit = np.iinfo(np.int64).max if max_steps is None else as_int("max_steps", max_steps, low=1)
        allowed = as_bool("allow_long_run", allow_long_run)
        steps_asked = min(math.ceil(duration / self._dt), limit)     # at least, at the largest step
        if not allowed:
            check_run_length(steps_asked, self.n_bodies, self._dt, duration, None)
        clock = RunClock(steps_asked, self._dt, duration, allowed)
        t_end = self.time + duration
        k = kernels()
        taken = 0
        while taken < limit and self.time < t_end * (1.0 - 1e-14):
            log = np.zeros((min(4096, limit - taken), L.N_LOG))
            t0 = _time.perf_counter()
            status, steps, time, dt, hist, contacts = k.advance(self._bodies, self._walls, self._loads, self._params,
                                                                self._ints, self._hist, log, self.time, t_end,
                                                                self._dt_next, limit - taken)
            self._log_chunks.append(log[:steps].copy())
            taken += steps
            clock.step(taken, steps, _time.perf_counter() - t0)
            if steps:
                self.time, self._hist, self._contacts = float(time), hist, contacts
            self._dt_next = float(dt)
            if status == L.TOO_SMALL:
                raise SimulationBlowUp(
                    f"DDA step cut below {self._params[L.P_DT_MIN]:.3g} s at t={self.time:.6g} s: the open-close "
                    f"iteration did not settle, a PCG solve did not converge, or a penetration stayed above "
                    f"penetration_tolerance={self.penetration_tolerance:.3g} m (raise penalty or the tolerance)",
                    time=self.time, step=self.n_steps, cause="time_step", details={"dt": float(dt)})
            if status == L.NOT_FINITE:
                raise SimulationBlowUp(f"DDA solve produced a non-finite displacement at t={self.time:.6g} s",
                                       time=self.time, step=self.n_steps, cause="state_non_finite")
            if status == L.DONE:
                break
        return self

    def settle(self, speed_tolerance, max_duration, *, check_every=None) -> bool:
        """Run until :meth:`max_speed` is below ``speed_tolerance`` (m/s), checked every
        ``check_every`` s (default 10 dt), or for at most ``max_duration`` (s); returns True if it
        settled."""
        tol = as_positive("speed_tolerance", speed_tolerance, "m/s")
        end = self.time + as_positive("max_duration", max_duration, "s")
        chunk = self._dt * 10 if check_every is None else as_positive("check_every", check_every, "s")
        while self.time < end * (1.0 - 1e-14):
            self.run(min(chunk, end - self.time))
            if self.max_speed() < tol:
                return True
        return False

    # ------------------------------------------------------------------ results
    @property
    def n_steps(self) -> int:
        """Steps accepted so far."""
        return int(sum(len(c) for c in self._log_chunks))

    @property
    def log(self) -> dict:
        """Per-step log, arrays of length ``n_steps``: ``time`` and ``dt`` (s), ``open_close_iterations``,
        ``cg_iterations`` (all solves of the step), ``residual`` (relative, last solve),
        ``closed_contacts``, ``max_penetration`` and ``max_displacement`` (m), ``rejected`` (tries
        cut before the step was accepted), the cuts by cause (``cut_open_close``, ``cut_solver``,
        ``cut_displacement``, ``cut_penetration``) and the work of the cut tries
        (``cut_open_close_iterations``, ``cut_cg_iterations``; the other counts are the accepted
        try's)."""
        rows = np.concatenate(self._log_chunks) if self._log_chunks else np.zeros((0, L.N_LOG))
        out = {name: rows[:, k].copy() for k, name in enumerate(L.LOG_COLUMNS)}
        for name in ("open_close_iterations", "cg_iterations", "closed_contacts", "rejected", "cut_open_close",
                     "cut_solver", "cut_displacement", "cut_penetration", "cut_open_close_iterations",
                     "cut_cg_iterations"):
            out[name] = out[name].astype(np.int64)
        return out

    @property
    def positions(self) -> np.ndarray:
        """Centroids (n, 2), m."""
        return self._bodies[0].copy()

    @property
    def angles(self) -> np.ndarray:
        """Rotation of every body since the start (n,), rad, counter-clockwise (plus an ellipse's
        initial angle)."""
        return self._bodies[1].copy()

    @property
    def velocities(self) -> np.ndarray:
        """Centroid velocities (n, 2), m/s (zero in static analysis)."""
        return self._bodies[7][:, 0:2].copy()

    @property
    def angular_velocities(self) -> np.ndarray:
        """Spins about z (n,), rad/s."""
        return self._bodies[7][:, 2].copy()

    @property
    def stresses(self) -> np.ndarray:
        """Stress of every body ``(sigma_x, sigma_y, tau_xy)`` (n, 3), Pa, tension positive."""
        return self._bodies[6].copy()

    @property
    def shape_matrices(self) -> np.ndarray:
        """Current shape matrices ``(Mxx, Myy, Mxy)`` (n, 3), m^2: a body is ``{X: X^T M^-1 X <= 1}``."""
        return self._bodies[2].copy()

    @property
    def masses(self) -> np.ndarray:
        """Masses (n,), kg: ``rho pi a b t`` (a disk: ``a = b = r``)."""
        return self._bodies[3].copy()

    def max_speed(self) -> float:
        """Largest displacement of a point in the last step over its ``dt`` (m/s): how fast
        anything actually moved (the end-of-step velocities of a dynamic run can alternate about
        zero in a body held by stiff contacts, see ``newmark``); ``inf`` before the first step."""
        rows = [c for c in self._log_chunks if len(c)]
        if not rows:
            return math.inf
        last = rows[-1][-1]
        return float(last[L.LOG_COLUMNS.index("max_displacement")] / last[L.LOG_COLUMNS.index("dt")])

    def contacts(self) -> dict:
        """Contacts of the last step (closed and open candidates): ``body_i`` (-1 for a wall),
        ``body_j``, ``wall`` (index or -1), ``normal`` (m, 2; from ``i`` or the wall to ``j``),
        ``point`` (m, 2), ``gap`` (m, < 0 penetrating), ``normal_force`` (N, > 0 pushing the
        bodies apart), ``shear_force`` (N, along the normal turned by +90 degrees, acting on ``j``
        as ``-shear_force t``), ``state`` ("open", "sliding", "locked"), ``bonded`` (bool: a bond
        of the start not broken yet, see ``cohesion``; its ``normal_force`` is negative in
        tension)."""
        if self._contacts is None:
            raise InputError("no DDA step has been taken yet: call run() first")
        ci, cj, nrm, pt, gap, fn, fs, st, bond = self._contacts
        names = np.array(["open", "sliding", "locked"])
        return dict(body_i=np.where(ci >= 0, ci, -1), body_j=cj.copy(), wall=np.where(ci < 0, -1 - ci, -1),
                    normal=nrm.copy(), point=pt.copy(), gap=gap.copy(), normal_force=fn.copy(), shear_force=fs.copy(),
                    state=names[st.astype(np.int64)], bonded=bond.astype(bool))


def _support2(shp: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Support function ``sqrt(n . M n)`` (m) of every body along the unit ``n``."""
    return np.sqrt(shp[:, 0] * n[0] ** 2 + 2 * shp[:, 2] * n[0] * n[1] + shp[:, 1] * n[1] ** 2)
