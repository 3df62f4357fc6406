"""The stable time step of the contacts present: every body's contacts together.

:func:`packing_limit` reads the active contacts of the contact table (bodies, normal, overlap,
contact point, history), asks the law for their springs and dashpots
(:meth:`~contactlab.laws.base.ContactModel.contact_springs`, one call per pair of materials with
arrays of one value per contact, or, for a law that can only probe one contact at a time, one
probe per class of similar contacts: :func:`contact_springs_of`), and bounds the largest
eigenvalue of the linearised step over all bodies (:mod:`contactlab.engine.stability_bound`).
The result says which body limits the step, how many contacts it has and what step its
neighbourhood allows.  It is what ``Simulation.stability_limit`` takes besides the limit of a
single contact that can occur (:func:`contactlab.stability.stability_limit`), at the start, after
``set_model`` and, during a run, at the run monitor's pace (:mod:`contactlab.watchdog`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .engine.layout import ACTIVE
from .engine.contact_geometry import pair_geometry
from .engine.stability_bound import CHUNK, ITERATIONS, collatz_bound, step_from_rates
from .geometry.shapes import SPHERE
from .geometry.sphere_cylinder import CONCAVE, CYL_RADIUS, WALL_PLANE, cylinder_contact_radius_np
from .laws.base import ContactModel, PairCase
from .laws.stiffness import COLUMNS
from .stability import springs_of

__all__ = ["PackingLimit", "packing_limit", "contact_springs_of", "active_contacts"]


@dataclass(frozen=True)
class PackingLimit:
    """The bound of the contacts present.

    ``limit`` (s; ``inf`` without contacts), ``body`` (the body whose neighbourhood limits it, -1
    without contacts), ``contacts`` (its number of contacts), ``body_limit`` (s: the step its own
    rows of the bound allow, close to ``limit``), ``rates`` ``(lambda_K (1/s^2), lambda_C (1/s))``
    of the whole packing, ``n_contacts``; ``local`` (N,) float32, s: each body's step (``inf``
    without springs), for diagnoses (None in what a simulation keeps, 4 B a body saved)."""

    limit: float
    body: int = -1
    contacts: int = 0
    body_limit: float = math.inf
    rates: tuple = (0.0, 0.0)
    n_contacts: int = 0
    local: np.ndarray = field(default=None, repr=False)

    def describe(self, what: str = "body") -> str:
        """``"sphere 17 (5 contacts)"``: where the bound comes from, for messages."""
        return f"{what} {self.body} ({self.contacts} contact{'s' if self.contacts != 1 else ''})"


@dataclass
class ActiveContacts:
    """The active contacts of a table as arrays (one row per contact): ``rows`` (table rows), ``i``,
    ``j`` (body, -1 for a wall, mesh triangle or fixed body), ``normal`` (K, 3), ``overlap`` (K,),
    ``lever_i``, ``lever_j`` (K, 3) m, ``material_i``, ``material_j`` (K,), ``case`` arrays
    (``radius_i``, ``radius_j``, ``mass_i``, ``mass_j``, ``inertia_i``, ``inertia_j``: what the
    law sees, ``inf`` for an immovable partner)."""

    rows: np.ndarray
    i: np.ndarray
    j: np.ndarray
    normal: np.ndarray
    overlap: np.ndarray
    lever_i: np.ndarray
    lever_j: np.ndarray
    material_i: np.ndarray
    material_j: np.ndarray
    radius_i: np.ndarray
    radius_j: np.ndarray
    mass_i: np.ndarray
    mass_j: np.ndarray
    inertia_i: np.ndarray
    inertia_j: np.ndarray


def active_contacts(model, state, table, rows: np.ndarray) -> ActiveContacts:
    """The active contacts among the table rows ``rows`` (a chunk), as :class:`ActiveContacts`."""
    m = model
    rows = rows[table.status[rows] == ACTIVE]
    i = table.pair_i[rows].astype(np.int64)
    jraw = table.pair_j[rows].astype(np.int64)
    normal, overlap, point = pair_geometry(m, state, table, rows)
    n, nw = m.n_spheres, m.n_walls
    body = jraw < n
    wall = (jraw >= n) & (jraw < n + nw)
    tri = jraw >= n + nw
    jb = np.where(body, jraw, 0)
    # the radius each body shows the law: a sphere's own, another shape's contact radius (its
    # smallest curvature); a plane wall or a mesh triangle none; a cylinder wall the effective
    # radius of the contact (the concave side's, when a body can be inside)
    rad = np.where(m.shape_kind == SPHERE, m.radius, m.contact_radius)
    radius_i = rad[i]
    radius_j = np.where(body, rad[jb], np.inf)
    if m.n_walls and wall.any():
        w = jraw[wall] - n
        cyl = m.wall_kind[w] != WALL_PLANE
        if cyl.any():
            shape = m.wall_shape[w[cyl]]
            side = np.full(len(shape), CONCAVE)
            eff = cylinder_contact_radius_np(radius_i[wall][cyl], shape[:, CYL_RADIUS], side)
            # the law sees the sphere against a plane of the effective radius: R* = eff
            ri = radius_i[wall]
            ri[cyl] = eff
            radius_i[wall] = ri
    mass, inertia = m.stability_masses()
    fixed = m.fixed
    mass_i = np.where(fixed[i], np.inf, mass[i])
    inertia_i = np.where(fixed[i], np.inf, inertia[i])
    mass_j = np.where(body & ~fixed[jb], mass[jb], np.inf)
    inertia_j = np.where(body & ~fixed[jb], inertia[jb], np.inf)
    mat_i = m.material[i].astype(np.int64)
    mat_j = np.where(body, m.material[jb], 0).astype(np.int64)
    if nw:
        mat_j[wall] = m.wall_material[jraw[wall] - n]
    if tri.any():
        mat_j[tri] = m.mesh_material[m.tri_mesh[jraw[tri] - n - nw]]
    # branch vectors: a sphere's along the normal (exact, and right across a periodic cell's faces);
    # another shape's from its centre to the contact point
    sphere_i = m.shape_kind[i] == SPHERE
    lever_i = np.where(sphere_i[:, None], (m.radius[i] - 0.5 * overlap)[:, None] * normal,
                       point - state.positions[i])
    sphere_j = body & (m.shape_kind[jb] == SPHERE)
    lever_j = np.where(sphere_j[:, None], -(m.radius[jb] - 0.5 * overlap)[:, None] * normal,
                       point - state.positions[jb])
    moving_j = body & ~fixed[jb]
    j = np.where(moving_j, jraw, -1)
    lever_j[~moving_j] = 0.0
    if fixed[i].any():
        # a fixed first body (a fixed sphere against a free one): the free one carries the row
        swap = fixed[i] & moving_j
        i, j = np.where(swap, j, i), np.where(swap, -1, j)
        lever_i, lever_j = np.where(swap[:, None], lever_j, lever_i), np.where(swap[:, None], 0.0, lever_j)
        normal = np.where(swap[:, None], -normal, normal)
        keep = ~(fixed[i] & (j < 0))
        i, j, normal, lever_i, lever_j = i[keep], j[keep], normal[keep], lever_i[keep], lever_j[keep]
        rows, overlap, mat_i, mat_j = rows[keep], overlap[keep], mat_i[keep], mat_j[keep]
        radius_i, radius_j, mass_i, mass_j = radius_i[keep], radius_j[keep], mass_i[keep], mass_j[keep]
        inertia_i, inertia_j = inertia_i[keep], inertia_j[keep]
    return ActiveContacts(rows, i, j, np.ascontiguousarray(normal), overlap, np.ascontiguousarray(lever_i),
                          np.ascontiguousarray(lever_j), mat_i, mat_j, radius_i, radius_j, mass_i, mass_j,
                          inertia_i, inertia_j)


def contact_springs_of(contact_model: ContactModel, materials, c: ActiveContacts, history) -> np.ndarray:
    """``(K, 8)`` springs and dashpots (columns :data:`~contactlab.laws.stiffness.COLUMNS`) of the
    contacts ``c`` (``history``: their rows in the law's full layout, or None).

    Per pair of materials, one call of the law's ``contact_springs`` with arrays where it takes
    them (the built-in laws' closed forms); otherwise one call per class of similar contacts:
    effective radius, effective mass and overlap rounded up to a factor 1.25 (and, for a law
    with bonds, bonded or not), each class probed at its upper corner and the result kept on the
    model (a law probes in milliseconds; a packing's contacts fall into a few hundred classes)."""
    out = np.zeros((len(c.i), len(COLUMNS)))
    if not len(c.i):
        return out
    pairs = c.material_i * 65536 + c.material_j
    for key in np.unique(pairs):
        sel = np.flatnonzero(pairs == key)
        a, b = materials[int(key // 65536)], materials[int(key % 65536)]
        hist = None if history is None else history[sel]
        if contact_model.stiffness_on_arrays:
            case = PairCase(a, b, c.radius_i[sel], c.radius_j[sel], c.mass_i[sel], c.mass_j[sel], c.inertia_i[sel],
                            c.inertia_j[sel], c.overlap[sel], hist)
            out[sel] = springs_of(contact_model, case).rows(len(sel))
        else:
            out[sel] = _classes(contact_model, a, b, c, sel, hist)
    return out


#: the classes of :func:`contact_springs_of` are this factor wide in each of their variables
CLASS_FACTOR = 1.25


def _classes(contact_model, a, b, c: ActiveContacts, sel, hist) -> np.ndarray:
    """Springs of the contacts ``sel`` of materials ``a``, ``b`` for a law that probes: by class."""
    cache = contact_model.__dict__.setdefault("_springs_by_class", {})
    log = math.log(CLASS_FACTOR)

    def up(x):
        with np.errstate(divide="ignore"):
            return np.where(np.isfinite(x) & (x > 0), np.ceil(np.log(np.where(x > 0, x, 1.0)) / log), 10**6)

    bond_col = getattr(contact_model, "bond_field", -1)
    bonded = (hist[:, bond_col] > 0.0) if (hist is not None and bond_col is not None and bond_col >= 0) else \
        np.zeros(len(sel), dtype=bool)
    # a contact the law keeps across a gap (its interaction range: a negative overlap) is classed by
    # the size of its gap and probed there
    overlap = c.overlap[sel]
    gap = overlap < 0.0
    keys = np.stack([up(c.radius_i[sel]), up(c.radius_j[sel]), up(c.mass_i[sel]), up(c.mass_j[sel]),
                     up(np.maximum(np.abs(overlap), 1e-300)), bonded.astype(float), gap.astype(float)], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    rows = np.zeros((len(uniq), len(COLUMNS)))
    for u, k in enumerate(uniq):
        cache_key = (id(a), id(b)) + tuple(float(x) for x in k)
        if cache_key not in cache:
            first = int(np.flatnonzero(inverse.reshape(-1) == u)[0])
            corner = [CLASS_FACTOR ** x if x < 10**6 else math.inf for x in k[:5]]
            s = sel[first]
            inertia_i = c.inertia_i[s] * (corner[2] / c.mass_i[s]) if math.isfinite(corner[2]) else math.inf
            inertia_j = c.inertia_j[s] * (corner[3] / c.mass_j[s]) if math.isfinite(corner[3]) else math.inf
            h = None if hist is None else hist[first]
            at = -corner[4] if k[6] else corner[4]
            case = PairCase(a, b, corner[0], corner[1], corner[2], corner[3], inertia_i, inertia_j, at, h)
            cache[cache_key] = springs_of(contact_model, case).rows(1)[0]
        rows[u] = cache[cache_key]
    return rows[inverse.reshape(-1)]


#: up to this many active contacts the bound keeps their weights between its passes (64 B a
#: contact for the springs' and the dashpots', ~20 MB at 1e5 spheres); more (a million spheres) are evaluated again at each pass, so
#: that the bound holds little memory beside the run
KEEP_CONTACTS = 1 << 19


def packing_limit(model, state, table, contact_model: ContactModel, history_layout=None, *,
                  iterations: int = ITERATIONS, scratch=None, with_local: bool = False) -> PackingLimit:
    """The bound of :mod:`contactlab.engine.stability_bound` for the active contacts of ``table``
    (at the last force evaluation), as a :class:`PackingLimit` (with each body's step in ``local``
    when ``with_local``).  ``scratch``: two (N, 3) float64 arrays the bound may overwrite for its
    per-body work (the stepper's predicted velocities, dead between steps), so that it allocates
    little beside the contacts' chunks."""
    n = table.n_pairs
    n_bodies = model.n_bodies
    if model.n_clumps:
        # a clump member moves with its clump: the smallest effective mass of it (stability_masses)
        mass, inertia = model.stability_masses()
        with np.errstate(divide="ignore"):
            inv_mass = np.where(model.fixed, 0.0, 1.0 / mass)
            inv_inertia = np.where(model.fixed | (inertia <= 0), 0.0, 1.0 / np.where(inertia > 0, inertia, 1.0))
    else:
        inv_mass, inv_inertia = model.inv_mass, model.inv_inertia    # 0 for a fixed body
    materials = model.materials
    starts = range(0, n, CHUNK)

    def chunks():
        for start in starts:
            c = active_contacts(model, state, table, np.arange(start, min(start + CHUNK, n)))
            hist = history_layout.widen(table.hist[c.rows]) if len(c.rows) and history_layout is not None else None
            springs = contact_springs_of(contact_model, materials, c, hist)
            yield c.i, c.j, c.normal, c.lever_i, c.lever_j, np.ascontiguousarray(springs)

    active = table.status[:n] == ACTIVE
    n_contacts = int(np.count_nonzero(active))
    # the weights (64 B a contact) are kept between the passes up to KEEP_CONTACTS contacts; a larger
    # table (a million spheres) evaluates its contacts again at each pass, holding little memory
    lam_k, lam_c, local = collatz_bound(chunks, n_bodies, inv_mass, inv_inertia, iterations,
                                        keep=n_contacts <= KEEP_CONTACTS, scratch=scratch)
    limit = step_from_rates(lam_k, lam_c)
    if not math.isfinite(limit):
        return PackingLimit(math.inf, n_contacts=n_contacts, local=None)
    body = int(np.argmin(local))
    contacts = int(np.count_nonzero(active & ((table.pair_i[:n] == body) | (table.pair_j[:n] == body))))
    return PackingLimit(float(limit), body, contacts, float(local[body]), (float(lam_k), float(lam_c)), n_contacts,
                        local.copy() if with_local else None)
