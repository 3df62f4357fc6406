"""The time step: stability limits, the default-dt policy and the initial-overlap check.

An explicit (velocity-Verlet) step is stable for one contact below ``(2/omega)(sqrt(1 + zeta^2) -
zeta)`` of its normal, tangential (rotation included) and rolling oscillations.  A simulation's
limit is the smallest over the pairs of bodies that can meet (:func:`stability_limit`: per
material the two smallest free bodies and the smallest fixed one, against each other and against
every wall and mesh; a wall or a fixed body counts as infinitely heavy), each law saying its own
limit for a :class:`~contactlab.laws.base.PairCase` (built-in laws in closed form, user laws by
:func:`estimate_stability_limit`, which probes the law).  ``dt=None`` takes the model's
``default_dt_fraction`` of it, and no more than the model's accuracy limit where it declares one
(:func:`chosen_dt`); a step above the limit is refused.

Bodies that start interpenetrating are refused before anything is compiled (spheres, by
:func:`check_initial_sphere_overlaps`; other shapes after the first force evaluation, see
:func:`contactlab.diagnosis.initial_overlap_error`).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ._arguments import as_positive
from ._stack import user_stack_level
from .errors import InputError, LawError, StabilityError, StabilityWarning
from .geometry.periodic import CELL_LENGTH, CELL_LOWER, CELL_PERIODIC
from .geometry.shapes import ELLIPSE
from .geometry.sphere_cylinder import (CONCAVE, CONVEX, CYL_HIGH, CYL_LOW, CYL_RADIUS, CYL_SIDE, WALL_PLANE,
                                       cylinder_contact_radius_np, cylinder_surface_np)
from .laws.base import ContactModel, PairCase
from .laws.stiffness import ContactSprings, single_contact_limit
from .probe import probe

__all__ = ["DEFAULT_DT_FRACTION", "PACKING_DT_FRACTION", "StabilityLimit", "stability_limit", "default_dt_fraction", "chosen_dt",
           "check_initial_sphere_overlaps", "estimate_stability_limit", "estimate_contact_springs", "springs_of"]

#: default time step as a fraction of the stability limit (``dt=None``), unless the model sets its own
DEFAULT_DT_FRACTION = 0.35
#: ``dt=None`` takes at most this fraction of the bound of the contacts present
#: (:func:`contactlab.packing_limit.packing_limit`): the bound is 0.58-0.66 of the exact critical
#: step of the linearised packings measured (docs/physics.md), so this keeps a margin of ~1.8
PACKING_DT_FRACTION = 0.9


@dataclass(frozen=True)
class StabilityLimit:
    """The largest stable step of a simulation and where it comes from.

    ``limit`` (s; ``inf`` when no contact can occur), ``case`` (the pair of bodies that sets it,
    for messages: ``"sphere 3 (radius 0.001 m) against wall 0"``), ``accuracy`` (s: the model's
    accuracy limit, e.g. a stiff regularised friction, ``inf`` when it declares none).
    """

    limit: float
    case: str
    accuracy: float = math.inf


def stability_limit(model, contact_model: ContactModel, max_overlap: float) -> StabilityLimit:
    """The smallest stable step over the pairs of bodies of ``model`` (a frozen model) that can
    meet, nonlinear stiffnesses evaluated at ``max_overlap`` times the smaller radius."""
    accuracy_limit = math.inf
    m = model
    free = ~m.fixed
    # representatives: per material, the two smallest free bodies and the smallest fixed one
    # (the radius of a non-spherical body: its contact radius, the smallest curvature it shows;
    # an ellipse's: its larger semi-axis a.  Its flat side (radius of curvature a^2/b) at the
    # guard's overlap (max_overlap b) is as stiff as a radius a at max_overlap a, sqrt(R overlap)
    # being a sqrt(max_overlap) for both, and a is its largest lever for a tangential force: the
    # smaller semi-axis, the 3-D ellipsoids' choice, gave 2.5x the stable step in a pile of
    # aspect ratios up to 2.5, which then buzzed without coming to rest)
    rad = np.where(m.shape_kind == ELLIPSE, m.radius, m.contact_radius)
    free_reps, fixed_reps = [], []  # (material index, radius, mass, inertia, body index)
    mass, inertia = m.stability_masses()  # a clump member's: its clump's smallest effective mass
    for a in np.unique(m.material):
        idx = np.flatnonzero(free & (m.material == a))
        for p in idx[np.argsort(mass[idx], kind="stable")[:2]]:
            free_reps.append((int(a), float(rad[p]), float(mass[p]), float(inertia[p]), int(p)))
        idx = np.flatnonzero(m.fixed & (m.material == a))
        if len(idx):
            p = int(idx[np.argmin(rad[idx])])
            fixed_reps.append((int(a), float(rad[p]), math.inf, math.inf, p))
    best, where = math.inf, "no contact can occur"
    mats = m.materials
    accuracy = getattr(contact_model, "accuracy_limit", None)
    for a, ra, ma, ia, pa in free_reps:
        # (label, material, radius of i as the law sees it, radius, mass and inertia of j)
        others = [(f"sphere {pb}", b, ra, rb, mb, ib) for (b, rb, mb, ib, pb) in free_reps + fixed_reps if pb != pa]
        others += [(f"wall {w}", int(m.wall_material[w]), ra, math.inf, math.inf, math.inf) for w in range(m.n_walls)
                   if m.wall_kind[w] == WALL_PLANE]
        # a cylinder wall: a plane seen by a sphere of the contact's effective radius (the stiffer,
        # concave side when bodies can touch it from inside), at the sphere's own reference overlap
        others += [(f"cylinder wall {w}", int(m.wall_material[w]), _cylinder_radius(m.wall_shape[w], ra), math.inf,
                    math.inf, math.inf) for w in range(m.n_walls) if m.wall_kind[w] != WALL_PLANE]
        others += [(f"mesh {q} ({m.mesh_names[q]})", int(m.mesh_material[q]), ra, math.inf, math.inf, math.inf)
                   for q in range(m.n_meshes)]
        for label, b, r_i, rb, mb, ib in others:
            case = PairCase(mats[a], mats[b], r_i, rb, ma, mb, ia, ib, max_overlap * min(ra, rb))
            limit = contact_model.stability_limit(case)
            if limit < best:
                what = "sphere" if m.shape_kind[pa] == 0 else "body"
                best, where = limit, f"{what} {pa} (radius {ra:g} m) against {label}"
            if accuracy is not None:
                accuracy_limit = min(accuracy_limit, float(accuracy(case)))
    return StabilityLimit(best, where, accuracy_limit)


def _cylinder_radius(shape, r: float) -> float:
    """The effective radius (m) of a sphere of radius ``r`` on a cylinder wall (``shape``: its row of
    ``Model.wall_shape``): the concave one when a body can be inside, else the convex one."""
    open_ended = shape[CYL_LOW] > -math.inf or shape[CYL_HIGH] < math.inf
    what = CONCAVE if shape[CYL_SIDE] > 0 or open_ended else CONVEX
    return float(cylinder_contact_radius_np(np.array([r]), shape[CYL_RADIUS], np.array([what]))[0])


def default_dt_fraction(contact_model: ContactModel) -> float:
    """The fraction of the stability limit ``dt=None`` takes: the model's ``default_dt_fraction``
    (0.35 for Hertz-Mindlin, 0.15 for the linear spring-dashpot, ...), else
    :data:`DEFAULT_DT_FRACTION`."""
    return float(getattr(contact_model, "default_dt_fraction", DEFAULT_DT_FRACTION))


def chosen_dt(value, limit: StabilityLimit, contact_model: ContactModel, packing=None, *,
              allow_unstable: bool = False) -> float | None:
    """The time step (s) for a requested ``value``.

    ``None`` picks :func:`default_dt_fraction` of the single-contact limit ``limit`` (contacts
    that can occur, at the guard's overlap), and no more than :data:`PACKING_DT_FRACTION` of the
    bound of the contacts present (``packing``, a :class:`~contactlab.packing_limit.PackingLimit`)
    nor the accuracy limit; it stays None when no contact can occur (nothing to derive a step
    from).  A given value must be positive and at most both limits: above one it is refused with
    a :class:`~contactlab.errors.StabilityError` naming the contact or the body that sets it, or,
    with ``allow_unstable``, accepted with a :class:`~contactlab.errors.StabilityWarning`."""
    bound = packing.limit if packing is not None else math.inf
    if value is None:
        if not math.isfinite(limit.limit):
            return None
        value = min(default_dt_fraction(contact_model) * limit.limit, limit.accuracy, PACKING_DT_FRACTION * bound)
    value = as_positive("dt", value, "s")
    problem = None
    if value > limit.limit:
        problem = (f"dt={value:.6g} s is above the stability limit {limit.limit:.6g} s of the contact "
                   f"{limit.case} with {contact_model!r}; use dt <= {limit.limit:.6g} s "
                   f"(dt=None picks {default_dt_fraction(contact_model):g} of the limit)")
    elif value > bound:
        what = "sphere" if packing.body >= 0 else "body"
        problem = (f"dt={value:.6g} s is above the stability limit {bound:.6g} s of the contacts present: "
                   f"{packing.describe(what)} and its neighbours (a body's contacts together, see docs/physics.md, "
                   f"'The time step'); with {contact_model!r} a step above it creates energy. Use dt <= "
                   f"{bound:.6g} s (dt=None picks {PACKING_DT_FRACTION:g} of it: {PACKING_DT_FRACTION * bound:.6g} s)")
    if problem is not None:
        if not allow_unstable:
            raise StabilityError(problem + "; allow_unstable_dt=True runs it anyway, with a warning")
        warnings.warn(StabilityWarning(problem + " (allowed: allow_unstable_dt=True)"), stacklevel=user_stack_level())
    return value


def check_initial_sphere_overlaps(model, state, tolerance: float) -> None:
    """Refuse spheres that start overlapping each other or a wall by more than ``tolerance`` times
    the smaller radius (an :class:`~contactlab.errors.InputError` names the deepest pair); the
    other shapes' overlaps show at the first force evaluation."""
    m, s = model, state
    tol = tolerance
    pos, r = s.positions, m.radius
    reach = 2.0 * float(r.max()) if len(r) else 0.0
    periodic, length = _periodic_axes(s.cell)
    if periodic.any() and len(pos):
        # a periodic cell (orthogonal at the start): pairs across a face by the tree's toroidal
        # topology; a non-periodic axis gets a box wider than the bodies' span plus the reach
        lower = np.where(periodic, s.cell[CELL_LOWER: CELL_LOWER + 3], pos.min(axis=0))
        box = np.where(periodic, length, np.ptp(pos, axis=0) + 2.0 * reach + 1.0)
        local = np.mod(pos - lower, box)
        tree = cKDTree(np.where(local >= box, 0.0, local), boxsize=box)
    else:
        tree = cKDTree(pos)
    pairs = tree.query_pairs(reach, output_type="ndarray")
    if len(pairs):
        i, j = pairs[:, 0], pairs[:, 1]
        # spheres here; the other shapes' overlaps show at the first force evaluation
        keep = ~(m.fixed[i] & m.fixed[j]) & (m.shape_kind[i] == 0) & (m.shape_kind[j] == 0)
        keep &= (m.clump_of[i] < 0) | (m.clump_of[i] != m.clump_of[j])   # a clump's members overlap
        i, j = i[keep], j[keep]
        d = pos[j] - pos[i]
        if periodic.any():
            d = np.where(periodic, d - length * np.round(d / np.where(periodic, length, 1.0)), d)   # minimum image
        overlap = r[i] + r[j] - np.linalg.norm(d, axis=1)
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
        if m.wall_kind[w] == WALL_PLANE:
            h = (pos - s.wall_points[w]) @ m.wall_normal[w]
        else:
            h = cylinder_surface_np(pos, s.wall_points[w], m.wall_normal[w], m.wall_shape[w])[0]
        ratio = (r - h) / r
        bad = (ratio > tol) & ~m.fixed & (m.shape_kind == 0)
        if bad.any():
            k = int(np.argmax(np.where(bad, ratio, -np.inf)))
            raise InputError(
                f"sphere {k} penetrates wall {w} by {r[k] - h[k]:.6g} m ({100 * ratio[k]:.3g}% of its radius) at "
                f"the start; at most {100 * tol:.3g}% is allowed (initial_overlap_tolerance={tol:g})")


def _periodic_axes(cell) -> tuple[np.ndarray, np.ndarray]:
    """(3,) bool: the cell's periodic axes (none without a cell), and (3,) its lengths, m."""
    if cell is None:
        return np.zeros(3, dtype=bool), np.ones(3)
    return cell[CELL_PERIODIC: CELL_PERIODIC + 3] != 0.0, np.array(cell[CELL_LENGTH: CELL_LENGTH + 3], dtype=float)


def estimate_contact_springs(model: ContactModel, case: PairCase, *, debug: bool | None = None) -> ContactSprings:
    """The springs and dashpots of one contact (:class:`~contactlab.laws.stiffness.ContactSprings`),
    estimated by probing the law at the case's overlap.

    The law is driven (:func:`contactlab.probe`) through a quasi-static normal load-unload-reload
    cycle up to the case's overlap; the largest tangent stiffness ``k_n = |dF/d delta|`` along it
    is the normal spring.  At that overlap the normal dashpot comes from the force at opposite
    overlap rates, and the tangential, rolling and twisting springs (and dashpots) from tiny
    increments of displacement and rotation, slow (the spring) and at a rate (the dashpot).  A
    contact the law keeps across a gap (a negative overlap, within its interaction range) is
    probed the same way from touching out to its gap.
    """
    kw = dict(radius=case.radius_i, partner_radius=case.radius_j, material=case.material_i,
              partner_material=case.material_j, mass=case.mass_i, partner_mass=case.mass_j, debug=debug)
    ref = float(case.overlap)
    up = np.linspace(0.0, ref, 41)
    path = np.concatenate([up, np.linspace(ref, 0.5 * ref, 21)[1:], np.linspace(0.5 * ref, ref, 21)[1:]])
    slow = 1e3  # s per sample: velocities negligible
    r = probe(model, path, dt=slow, **kw)
    f = r.normal_force
    bad = ~np.isfinite(r.force).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise LawError(f"law {getattr(model, 'name', model)!r} gives a non-finite force {tuple(r.force[k])} at overlap "
                       f"{path[k]:.6g} m (of the {ref:.3g} m the stability estimate probes: max_overlap times the "
                       f"smaller radius); probe it with cl.probe(model, overlap=..., debug=True) to see why",
                       law=getattr(model, "name", ""))
    both = r.active[1:] & r.active[:-1]
    dd = np.diff(path)
    k_n = float(np.max(np.abs(np.diff(f)[both] / dd[both]), initial=0.0))
    m = float(case.mass)
    if k_n <= 0.0:
        return ContactSprings()
    omega = math.sqrt(k_n / m)
    size_of = abs(ref)   # (a contact the law keeps across a gap has a negative overlap)
    v = 1e-2 * omega * size_of
    tau = 1e-3 / omega
    fp = probe(model, [ref - v * tau, ref, ref + v * tau], dt=tau, chain=False, **kw).normal_force[1]
    fm = probe(model, [ref + v * tau, ref, ref - v * tau], dt=tau, chain=False, **kw).normal_force[1]
    values = {"normal": k_n, "normal_damping": max((fp - fm) / (2.0 * v), 0.0)}
    radius = float(case.radius)
    u = 1e-9 * size_of
    senses = (("tangential", np.array([u, 0.0, 0.0]), "force"),
              ("rolling", np.array([u / radius, 0.0, 0.0]), "couple"),
              ("twisting", np.array([0.0, 0.0, u / radius]), "couple"))
    for sense, inc, kind in senses:
        key = "tangential" if sense == "tangential" else "rotation"
        size = float(np.linalg.norm(inc))
        vals = []
        for step in (slow, size / (1e-2 * omega * size_of if sense == "tangential" else
                                   1e-2 * omega * size_of / radius)):
            motion = {key: np.stack([np.zeros(3), inc])}
            res = probe(model, [ref, ref], dt=step, chain=True, **motion, **kw)
            out = res.local_force[1] if kind == "force" else res.local_couple[1]
            comp = out[2] if sense == "twisting" else out[0]
            vals.append((abs(comp), step))
        k = vals[0][0] / size
        if k <= 0.0:
            continue
        rate = size / vals[1][1]
        values[sense] = k
        values[f"{sense}_damping"] = max((vals[1][0] - vals[0][0]) / rate, 0.0)
    return ContactSprings(**values)


def springs_of(model: ContactModel, case: PairCase, *, debug: bool | None = None) -> ContactSprings:
    """The springs and dashpots of a contact of ``case``: the law's own
    (:meth:`~contactlab.laws.base.ContactModel.contact_springs`), or, for a law that gives none,
    probed (:func:`estimate_contact_springs`)."""
    springs = model.contact_springs(case)
    return springs if springs is not None else estimate_contact_springs(model, case, debug=debug)


def estimate_stability_limit(model: ContactModel, case: PairCase, *, debug: bool | None = None) -> float:
    """Largest stable step (s) of one contact alone, from its probed springs
    (:func:`estimate_contact_springs`, :func:`~contactlab.laws.stiffness.single_contact_limit`)."""
    return single_contact_limit(estimate_contact_springs(model, case, debug=debug), case)
