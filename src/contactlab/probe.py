"""The single-contact probe: evaluate a contact law on a prescribed motion, without a simulation.

A contact is described in its own frame, in which the normal (from body ``i`` to body ``j``) is
the local ``z`` axis: the overlap ``delta(t)`` (m), the tangential displacement ``s(t)`` (m) of
``j``'s material point at the contact relative to ``i``'s (local ``x``, ``y``) and the relative
rotation ``theta(t)`` (rad) of ``j`` relative to ``i`` (``x``, ``y`` roll, ``z`` twists).  An
optional rigid rotation ``frame(t)`` (local to global, 3x3) turns the whole pair; a rigid rotation
moves the two material points together, so it adds no relative displacement, only a turning
normal and the turn of the pair (``pair_rotation``: the frame's rotation; the frame is the pair's
mean frame, the bodies turn by minus and plus half their relative rotation about it), which an
objective law must follow.

From the samples ``k = 0..T`` the probe builds the contact-geometry record of every sample exactly
as the engine does (:mod:`contactlab.geometry.record`): increments ``rel_displacement`` and
``rel_rotation`` from one sample to the next (zero at ``k = 0``, evaluated with ``dt = 0``),
velocities by second-order finite differences, branch vectors from the radii, the effective radius
and mass.  The law then runs through the same compiled code as in a simulation (the ``probe``
kernel of the law's cached kernel module), or, with ``debug=True``, through that kernel's
plain-Python twin calling the law as plain Python (breakpoints and prints inside the law work;
both through :mod:`contactlab.engine.launch`).

Example
-------
>>> import numpy as np, contactlab as cl
>>> model = cl.models.LinearSpringDashpot(stiffness=1e4, restitution=1.0, friction=0.5)
>>> delta = np.linspace(0.0, 1e-5, 11)                     # load to 10 um in 10 steps
>>> r = cl.probe(model, overlap=delta, dt=1e-6, debug=True)
>>> bool(np.allclose(r.normal_force, 1e4 * delta))        # F = k delta
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from ._arguments import as_bool, as_finite, as_float_array, checked_call, is_number
from .engine import layout
from .engine.launch import debug_probes, kernels_for, launch, probe_debug
from .errors import InputError
from .geometry.lens import sphere_halfspace_cap, sphere_sphere_lens
from .laws.base import ContactModel
from .materials import Material

__all__ = ["probe", "ProbeResult", "DEFAULT_PROBE_MATERIAL", "debug_probes"]

#: material used when none is given: glass-like beads, soft enough for visible overlaps
DEFAULT_PROBE_MATERIAL = Material(density=2500.0, young=1e7, poisson=0.3, name="probe")


@dataclass
class ProbeResult:
    """What the law returned at every sample of a probe (arrays over the ``T + 1`` samples).

    ``force`` (N) and ``couple`` (N m) act on body ``i``, global frame; ``normal`` is the unit
    normal from ``i`` to ``j``; ``stored_energy`` (J) after each sample; ``dissipation`` (J) during
    each sample's step (``dissipation_terms`` per term of the law, columns named by ``terms``);
    ``history`` the law's history after each sample (columns named by ``history_fields``).
    """

    time: np.ndarray
    overlap: np.ndarray
    normal: np.ndarray
    frame: np.ndarray
    force: np.ndarray
    couple: np.ndarray
    stored_energy: np.ndarray
    dissipation: np.ndarray
    dissipation_terms: np.ndarray
    terms: tuple
    active: np.ndarray
    history: np.ndarray
    history_fields: dict = field(default_factory=dict)

    @property
    def normal_force(self) -> np.ndarray:
        """Normal force (N), positive when it pushes the bodies apart: ``-force . normal``."""
        return 0.0 - np.einsum("ij,ij->i", self.force, self.normal)

    @property
    def local_force(self) -> np.ndarray:
        """Force on ``i`` in the contact's frame (T+1, 3): ``z`` along the normal."""
        return np.einsum("kji,kj->ki", self.frame, self.force)

    @property
    def local_couple(self) -> np.ndarray:
        """Couple on ``i`` in the contact's frame (T+1, 3): ``z`` twists, ``x`` and ``y`` roll."""
        return np.einsum("kji,kj->ki", self.frame, self.couple)

    @property
    def tangential_force(self) -> np.ndarray:
        """Tangential part of the force on ``i`` (T+1, 3), global frame."""
        return self.force + self.normal_force[:, None] * self.normal

    @property
    def dissipated(self) -> np.ndarray:
        """Energy dissipated since the first sample (J), cumulative."""
        return np.cumsum(self.dissipation)

    def history_field(self, name: str) -> np.ndarray:
        """One named history field over the samples ((T+1,) or (T+1, size))."""
        if name not in self.history_fields:
            raise InputError(f"the law has no history field {name!r}; fields: {', '.join(self.history_fields) or 'none'}")
        out = self.history[:, self.history_fields[name]]
        return out[:, 0] if out.shape[1] == 1 else out


def _series(name, value, n, width=None):
    a = as_float_array(name, value)
    if width is None:
        a = np.broadcast_to(a, (n,)) if a.ndim == 0 else a
        if a.shape != (n,):
            raise InputError(f"{name} must have one value per sample ({n}), got shape {a.shape}")
    else:
        if a.ndim == 1 and a.shape[0] == n and width == 3:
            a = np.stack([a, np.zeros(n), np.zeros(n)], axis=1)  # a scalar series: along local x
        a = np.broadcast_to(a, (n, width)) if a.ndim <= 1 and a.size in (1, width) else a
        if a.shape != (n, width):
            raise InputError(f"{name} must have shape ({n}, {width}) (one vector per sample), got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.isfinite(a.reshape(n, -1)).all(axis=1))[0])
        raise InputError(f"{name} is not finite at sample {bad}")
    return np.ascontiguousarray(a, dtype=float)


def _finite_or_inf(name, value) -> float:
    """A number, +inf allowed (a wall's radius or mass); text, bools and NaN are refused."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value[()]
    if is_number(value) and math.isinf(value) and value > 0:
        return math.inf
    return as_finite(name, value)


def _gradient(values, time):
    if len(time) < 2:
        return np.zeros_like(values)
    return np.gradient(values, time, axis=0, edge_order=1)


@checked_call
def probe(model: ContactModel, overlap, *, tangential=None, rotation=None, frame=None, dt=None, time=None,
          radius=1e-3, partner_radius=None, material: Material | None = None, partner_material: Material | None = None,
          mass=None, partner_mass=None, history=None, chain: bool = True, debug: bool | None = None) -> ProbeResult:
    """Evaluate ``model``'s law on a prescribed relative motion of two bodies.

    Parameters
    ----------
    model : ContactModel
        Any contact model (built-in or user-defined).
    overlap : array (T+1,)
        Overlap ``delta`` (m) at each sample (negative: a gap).
    tangential : array (T+1, 3) or (T+1,), optional
        Tangential displacement (m) of ``j`` relative to ``i`` at the contact, in the contact's frame
        (its ``z`` component is ignored; a 1-D series is along ``x``).  Default: none.
    rotation : array (T+1, 3), optional
        Rotation (rad) of ``j`` relative to ``i`` in the contact's frame (``z``: twisting).
    frame : array (T+1, 3, 3) or (3, 3), optional
        Rotation matrix from the contact's frame to the global frame at each sample (a rigid
        rotation of the pair).  Default: identity (the normal is the global ``z``).
    dt : float, optional
        Time between samples (s); or ``time`` (T+1,), increasing.  One of them is required.
    radius, partner_radius : float
        Radii of ``i`` and ``j`` (m); ``partner_radius=inf`` makes ``j`` a wall.  Default 1 mm each.
    material, partner_material : Material
        The bodies' materials (parameters of the pair table); default :data:`DEFAULT_PROBE_MATERIAL`.
    mass, partner_mass : float
        Masses (kg); default solid spheres of the material's density (a wall: ``inf``).
    history : array (H,), optional
        History the contact starts with (default zeros: a new contact).
    chain : bool
        Hand each sample the history returned by the previous one (default).  ``False``: every
        sample starts from ``history`` (independent evaluations).
    debug : bool
        Run the law as plain Python instead of compiled code (default: compiled, except inside
        :func:`debug_probes`).
    """
    debug = probe_debug() if debug is None else as_bool("debug", debug)
    chain = as_bool("chain", chain)
    if not isinstance(model, ContactModel):
        raise InputError(f"model must be a contact model such as cl.models.HertzMindlin(...), got {type(model).__name__}")
    delta = as_float_array("overlap", overlap)
    if delta.ndim != 1 or delta.size < 1:
        raise InputError(f"overlap must be a 1-D array of samples, got shape {delta.shape}")
    n = delta.size
    delta = _series("overlap", delta, n)
    if time is not None:
        t = _series("time", time, n)
        if n > 1 and not np.all(np.diff(t) > 0):
            raise InputError("time must increase from sample to sample")
    elif dt is not None:
        step = as_finite("dt", dt)
        if step <= 0:
            raise InputError(f"dt must be > 0 s, got {dt!r}")
        t = step * np.arange(n)
    else:
        raise InputError("give the time between samples (dt=..., s) or the sample times (time=...)")
    s = _series("tangential", 0.0 if tangential is None else tangential, n, 3).copy()
    s[:, 2] = 0.0
    theta = _series("rotation", 0.0 if rotation is None else rotation, n, 3)
    if frame is None:
        rot = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
    else:
        rot = as_float_array("frame", frame)
        rot = np.broadcast_to(rot, (n, 3, 3)).copy() if rot.shape == (3, 3) else rot
        if rot.shape != (n, 3, 3) or not np.all(np.isfinite(rot)):
            raise InputError(f"frame must be a (3, 3) rotation matrix or one per sample ({n}, 3, 3), got {rot.shape}")
        err = np.abs(np.einsum("kij,kil->kjl", rot, rot) - np.eye(3)).max()
        if err > 1e-9:
            raise InputError(f"frame must hold rotation matrices (R^T R = I), deviation {err:.3g}")
    for label, mat in (("material", material), ("partner_material", partner_material)):
        if mat is not None and not isinstance(mat, Material):
            raise InputError(f"{label} must be a contactlab.Material, got {type(mat).__name__}: {mat!r}")
    mat_i = material or DEFAULT_PROBE_MATERIAL
    mat_j = partner_material or mat_i
    r_i = as_finite("radius", radius)
    r_j = r_i if partner_radius is None else _finite_or_inf("partner_radius", partner_radius)
    if not r_i > 0 or not r_j > 0 or math.isnan(r_j):
        raise InputError(f"radii must be > 0 m, got radius={radius!r}, partner_radius={partner_radius!r}")
    wall = math.isinf(r_j)
    m_i = 4.0 / 3.0 * math.pi * r_i**3 * mat_i.density if mass is None else as_finite("mass", mass)
    if partner_mass is not None:
        m_j = _finite_or_inf("partner_mass", partner_mass)
    else:
        m_j = math.inf if wall else 4.0 / 3.0 * math.pi * r_j**3 * mat_j.density
    if not m_i > 0 or not m_j > 0:
        raise InputError(f"masses must be > 0 kg, got mass={m_i!r}, partner_mass={m_j!r}")
    m_star = m_i if math.isinf(m_j) else m_i * m_j / (m_i + m_j)
    r_star = r_i if wall else r_i * r_j / (r_i + r_j)

    # the records, as the engine builds them
    ez = np.array([0.0, 0.0, 1.0])
    local_rel = s - delta[:, None] * ez                      # j's contact point relative to i's, local
    increments = np.diff(local_rel, axis=0, prepend=local_rel[:1])
    rate = _gradient(local_rel, t)
    d_theta = np.diff(theta, axis=0, prepend=theta[:1])
    spin = _gradient(theta, t)
    g = np.einsum("kij,j->ki", rot, ez)
    rel_disp = np.einsum("kij,kj->ki", rot, increments)
    rel_vel = np.einsum("kij,kj->ki", rot, rate)
    rel_rot = np.einsum("kij,kj->ki", rot, d_theta)
    # the frame is the pair's mean frame (the bodies turn by -/+ half the relative rotation
    # about it): the pair's turn is the frame's, the same from either body's side
    turn = np.zeros((n, 3))
    if n > 1:
        turn[1:] = Rotation.from_matrix(np.einsum("kij,klj->kil", rot[1:], rot[:-1])).as_rotvec()
    pair_rot = turn
    rel_w = np.einsum("kij,kj->ki", rot, spin)
    branch_i = (r_i - 0.5 * delta)[:, None] * g
    branch_j = np.zeros((n, 3)) if wall else -(r_j - 0.5 * delta)[:, None] * g
    point = branch_i.copy()
    steps = np.diff(t, prepend=t[:1])
    params = np.ascontiguousarray(model.pair_table((mat_i, mat_j))[0, 1], dtype=float)

    terms = model.dissipation_terms
    n_terms = max(len(terms), 1)
    size = model.history_size
    hist0 = np.zeros((1, size + n_terms))
    if history is not None:
        h = as_float_array("history", history).ravel()
        if h.shape != (size,):
            raise InputError(f"history must hold the law's {size} history floats, got {h.size}")
        hist0[0, :size] = h
    columns = dict(
        normal=np.ascontiguousarray(g), overlap=delta, contact_point=np.ascontiguousarray(point),
        branch_i=np.ascontiguousarray(branch_i), branch_j=np.ascontiguousarray(branch_j),
        rel_velocity=np.ascontiguousarray(rel_vel), rel_angvel=np.ascontiguousarray(rel_w),
        rel_disp=np.ascontiguousarray(rel_disp), rel_rot=np.ascontiguousarray(rel_rot),
        pair_rot=np.ascontiguousarray(pair_rot),
        radius_i=np.full(n, r_i), radius_j=np.full(n, r_j), radius=np.full(n, r_star), mass=np.full(n, m_star),
        dt=steps)
    columns["area"], columns["volume"] = _overlap_sizes(r_i, r_j, delta, wall)
    force = np.zeros((n, 3))
    couple = np.zeros((n, 3))
    stored = np.zeros(n)
    diss = np.zeros(n)
    active = np.zeros(n, dtype=np.bool_)
    hist_out = np.zeros((n, size + n_terms))
    per_term = np.zeros((n, layout.N_OWN + len(terms)))
    records = tuple(columns[k] for k in ("normal", "overlap", "contact_point", "branch_i", "branch_j", "rel_velocity",
                                         "rel_angvel", "rel_disp", "rel_rot", "radius_i", "radius_j", "radius", "mass",
                                         "pair_rot", "area", "volume"))
    kernels = kernels_for(model.law_module, debug=debug)
    launch(model, kernels.probe, records, steps, params, hist0, chain,
           (force, couple, stored, diss, active, hist_out, per_term))
    d_terms = per_term[:, layout.N_OWN:] if terms else diss[:, None].copy()
    return ProbeResult(time=t, overlap=delta, normal=g, frame=rot, force=force, couple=couple, stored_energy=stored,
                       dissipation=diss, dissipation_terms=d_terms, terms=terms or ("total",), active=active,
                       history=hist_out[:, :size], history_fields=model.history_slices())


def _overlap_sizes(r_i, r_j, delta, wall):
    """Lens (two spheres) or cap (sphere and wall) volume and area along the probed overlaps."""
    area = np.zeros(len(delta))
    volume = np.zeros(len(delta))
    for t, d in enumerate(delta):
        if d > 0.0:
            if wall:
                volume[t], area[t] = sphere_halfspace_cap.py_func(float(r_i), float(r_i - d))
            else:
                volume[t], area[t] = sphere_sphere_lens.py_func(float(r_i), float(r_j), float(r_i + r_j - d))
    return area, volume
