"""What a simulation reports: contacts, energy, momenta, forces on walls and meshes, the run summary.

Every function here reads the frozen model (:class:`~contactlab.frozen_model.Model`), the state
(:class:`~contactlab.state.State`), the contact table
(:class:`~contactlab.engine.contact_table.ContactTable`) and the contact law (a
:class:`~contactlab.laws.base.ContactModel`); none changes them.  :class:`contactlab.Simulation`'s
methods of the same names call them (their docstrings there describe every key and unit); the
validation battery, the diagnosis of a blow-up and the reporters use them through those methods.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .engine import layout
from .engine.contact_geometry import pair_geometry
from .engine.history_layout import HistoryLayout
from .geometry.periodic import lattice_shift_np, min_image_np
from .geometry.rotation import rotation_matrices, rotation_matrix
from .geometry.sphere_cylinder import WALL_PLANE, cylinder_surface_np

__all__ = ["pair_data", "contacts", "contact", "n_contacts", "wall_forces", "mesh_forces", "mesh_torques",
           "mesh_triangles", "energy", "EnergySums", "energy_sums", "energy_terms", "unbalanced_force_ratio", "linear_momentum", "angular_momentum",
           "spin_momenta", "clump_spin_momenta", "summary",
           "convex_roll_output", "rotation_matrices"]


def pair_data(model, state, table, law, i: np.ndarray, jraw: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Per-pair arrays for bodies ``i``, ``jraw`` (body index, N + wall, or N + W + triangle) and
    table rows (``-1``: not in contact, zero force and history); the keys of
    :meth:`contactlab.Simulation.contacts`."""
    s, m, t = state, model, table
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
        jump = 0.0
        if s.cell is not None:   # j's minimum image and its velocity (a periodic scene)
            d, jump = min_image_np(d, s.cell)
        dist = np.linalg.norm(d, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            normal[sp] = d / dist[:, None]
        overlap[sp] = ri[sp] + m.radius[j[sp]] - dist
        displacement[sp] = d
        rel_vel[sp] = s.velocities[j[sp]] + jump - s.velocities[i[sp]]
    if is_wall.any():
        w = wall[is_wall]
        normal[is_wall] = -m.wall_normal[w]
        height = np.einsum("ij,ij->i", xi[is_wall] - s.wall_points[w], m.wall_normal[w])
        overlap[is_wall] = ri[is_wall] - height
        displacement[is_wall] = -height[:, None] * m.wall_normal[w]
        rel_vel[is_wall] = s.wall_velocities[w] - s.velocities[i[is_wall]]
        for c in np.unique(w[m.wall_kind[w] != WALL_PLANE]):
            # a cylinder wall: its surface's nearest point (sphere_cylinder's rules)
            sel = np.flatnonzero(wall == c)
            h, n, _ = cylinder_surface_np(xi[sel], s.wall_points[c], m.wall_normal[c], m.wall_shape[c])
            normal[sel] = n
            overlap[sel] = ri[sel] - h
            displacement[sel] = h[:, None] * n
    if is_tri.any():
        q = mesh[is_tri]
        displacement[is_tri] = s.mesh_positions[q] - xi[is_tri]
        rel_vel[is_tri] = s.mesh_velocities[q] - s.velocities[i[is_tri]]
    have = rows >= 0
    out = np.zeros((npair, t.out.shape[1]))
    out[have] = t.out[rows[have]]
    # every history field of the law, zeros for those the table does not store (history_layout)
    hist_layout = t.history_layout
    if hist_layout is None:
        hist_layout = HistoryLayout(law.history_size)
    hist = np.zeros((npair, t.hist.shape[1] + len(hist_layout.dropped)))
    hist[have] = hist_layout.widen(t.hist[rows[have]])
    contact_point = xi + (ri - 0.5 * overlap)[:, None] * normal
    # where the kernel evaluated the contact, its geometry as the narrow phase found it (the
    # only source for non-spherical bodies and mesh triangles; stored, or recomputed bit for bit)
    normal[have], overlap[have], contact_point[have] = pair_geometry(m, s, t, rows[have])
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
    for name, sl in law.history_slices().items():
        block = hist[:, sl].copy()
        result[name if name not in result else f"history_{name}"] = block[:, 0] if block.shape[1] == 1 else block
    h0 = law.history_size
    terms = law.dissipation_terms
    if terms:
        for c, name in enumerate(terms):
            result[f"dissipated_{name}"] = hist[:, h0 + c].copy()
        result["dissipated"] = hist[:, h0: h0 + len(terms)].sum(axis=1)
    else:
        result["dissipated"] = hist[:, h0].copy()
    result.update(Director3=normal, Displacement=displacement, DisplacementLocal=local, Velocity=rel_vel,
                  Force=-force, Torque=torque_i)
    return result


def contacts(model, state, table, law, all_candidates: bool = False) -> dict[str, np.ndarray]:
    """Per-contact arrays of the active contacts (or of every candidate pair), see
    :meth:`contactlab.Simulation.contacts`."""
    n = table.n_pairs
    sel = np.arange(n) if all_candidates else table.active()
    return pair_data(model, state, table, law, table.pair_i[:n][sel].astype(np.int64),
                     table.pair_j[:n][sel].astype(np.int64), sel)


def contact(model, state, table, law, i: int, jraw: int) -> dict:
    """The data of the pair of body ``i`` and ``jraw`` (a body ``> i``, ``N + w`` for wall ``w``),
    as scalars and (3,) arrays, with ``in_contact``; see :meth:`contactlab.Simulation.contact`."""
    t = table
    lo, hi = int(t.i_start[i]), int(t.i_start[i + 1])
    k = lo + int(np.searchsorted(t.pair_j[lo:hi], jraw))
    row = k if k < hi and int(t.pair_j[k]) == jraw else -1
    in_contact = row >= 0 and t.status[row] == layout.ACTIVE
    data = pair_data(model, state, table, law, np.array([i]), np.array([jraw]), np.array([row if in_contact else -1]))
    out = {key: (v[0] if v.ndim == 1 else v[0].copy()) for key, v in data.items()}
    for key in ("i", "j", "wall"):
        out[key] = int(out[key])
    out["in_contact"] = bool(in_contact)
    return out


def n_contacts(table) -> int:
    """Number of active contacts."""
    return int(np.count_nonzero(table.status[: table.n_pairs] == layout.ACTIVE))


def _summed(c: dict, key: str, n: int, values: np.ndarray) -> np.ndarray:
    """(n, 3) sums of ``values`` (per contact) over the contacts whose ``c[key]`` is each index."""
    out = np.zeros((n, 3))
    mask = c[key] >= 0
    np.add.at(out, c[key][mask], values[mask])
    return out


def wall_forces(model, state, table, law) -> np.ndarray:
    """(W, 3) total force exerted by the bodies on each wall, N."""
    c = contacts(model, state, table, law)
    return _summed(c, "wall", model.n_walls, -c["force"])


def mesh_forces(model, state, table, law) -> np.ndarray:
    """(Mm, 3) total force exerted by the bodies on each mesh wall, N."""
    c = contacts(model, state, table, law)
    return _summed(c, "mesh", model.n_meshes, -c["force"])


def mesh_torques(model, state, table, law) -> np.ndarray:
    """(Mm, 3) total torque exerted by the bodies on each mesh wall about its reference point, N m."""
    c = contacts(model, state, table, law)
    return _summed(c, "mesh", model.n_meshes, c["torque_j"])


def mesh_triangles(model, state, mesh: int | None = None) -> np.ndarray:
    """(T, 3, 3) current vertices of the triangles of mesh ``mesh`` (or of all meshes), m."""
    m = model
    tri = state.shape_data[m.tri_ref[:, None] + np.arange(9)].reshape(-1, 3, 3) if m.n_triangles else \
        np.zeros((0, 3, 3))
    if mesh is None:
        return tri
    return tri[m.mesh_first[mesh]: m.mesh_first[mesh + 1]]


def spin_momenta(model, state, rows: slice = slice(None)) -> np.ndarray:
    """(N, 3) angular momentum of each body about its centre, ``R I R^T omega`` (kg m^2/s); the
    bodies ``rows`` only if given."""
    m, s = model, state
    w = s.angular_velocities[rows]
    out = m.inertia[rows, None] * w
    rigid = np.flatnonzero(m.shape_kind[rows] != 0)
    if len(rigid):
        r = rotation_matrices(s.orientations[rows][rigid])
        wb = np.einsum("kji,kj->ki", r, w[rigid]) * m.principal_inertia[rows][rigid]
        out[rigid] = np.einsum("kij,kj->ki", r, wb)
    return out


#: bodies (and pairs) per block of the energy sums
ENERGY_BLOCK = 1 << 16


def _free(model) -> np.ndarray:
    """(N,) bool: the free bodies that carry their own mass (not fixed, not a clump member: a
    clump's mass is counted once, by the clump)."""
    return ~model.fixed & (model.clump_of < 0)


def clump_spin_momenta(model, state) -> np.ndarray:
    """(C, 3) angular momentum of each clump about its centre of mass, kg m^2/s."""
    r = rotation_matrices(state.clump_orientations)
    wb = np.einsum("kji,kj->ki", r, state.clump_angular_velocities) * model.clump_inertia
    return np.einsum("kij,kj->ki", r, wb)


class EnergySums(NamedTuple):
    """The sums behind :func:`energy`, J: over the free bodies (``kinetic``, ``rotational``,
    ``gravitational``), the active contacts (``elastic``) and all bodies (``dissipated`` in the
    contacts, ``damping`` by local damping, ``boundary`` work, ``terms`` per dissipation term of
    the law); computed here from the host's arrays, or where the state lives
    (:meth:`contactlab.engine.stepper.Stepper.energy_sums`: the GPU's without copying it back)."""
    kinetic: float
    rotational: float
    gravitational: float
    elastic: float
    dissipated: float
    damping: float
    boundary: float
    terms: tuple


def energy_sums(model, state, table) -> EnergySums:
    """The energy sums of the host's state and table (:class:`EnergySums`)."""
    s, m = state, model
    free = _free(m)
    kinetic = rotational = grav = 0.0
    # in blocks of bodies and of pairs: the temporaries stay small however large the scene (this
    # runs at construction, where whole-array copies would set the peak memory); a scene of at
    # most one block sums exactly as one pass over all its rows
    for a in range(0, len(free), ENERGY_BLOCK):
        b = slice(a, min(a + ENERGY_BLOCK, len(free)))
        f = free[b]
        every = bool(f.all())

        def rows(arr):
            return arr[b] if every else arr[b][f]

        v = rows(s.velocities)
        kinetic += 0.5 * float(np.dot(rows(m.mass), np.einsum("ij,ij->i", v, v)))
        spin = spin_momenta(m, s, b)
        rotational += 0.5 * float(np.einsum("ij,ij->i", rows(s.angular_velocities), spin if every else spin[f]).sum())
        x = s.positions[b]
        if s.cell is not None and s.images is not None:
            # unwrapped: a body wrapped along gravity keeps its height (a chute along a periodic axis)
            x = x + lattice_shift_np(s.images[b], s.cell)
        grav -= float(np.dot(rows(m.mass), (x if every else x[f]) @ m.gravity))
    if m.n_clumps:
        vc = s.clump_velocities
        kinetic += 0.5 * float(np.dot(m.clump_mass, np.einsum("ij,ij->i", vc, vc)))
        rotational += 0.5 * float(np.einsum("ij,ij->i", s.clump_angular_velocities, clump_spin_momenta(m, s)).sum())
        grav -= float(np.dot(m.clump_mass, s.clump_positions @ m.gravity))
    t = table
    elastic = 0.0
    for a in range(0, t.n_pairs, ENERGY_BLOCK):
        b = slice(a, min(a + ENERGY_BLOCK, t.n_pairs))
        elastic += float(np.compress(t.status[b] == layout.ACTIVE, t.out[b, layout.OUT_ELASTIC]).sum())
    damping = float(s.damping_work.sum()) if s.damping_work is not None else 0.0
    terms = tuple(float(s.dissipation_terms[:, c].sum()) for c in range(s.dissipation_terms.shape[1])) \
        if s.dissipation_terms is not None and s.dissipation_terms.ndim == 2 else ()
    return EnergySums(kinetic, rotational, grav, elastic, float(s.dissipated.sum()), damping,
                      float(s.boundary_work.sum()), terms)


def energy_terms(sums: EnergySums, law, local_damping: float, initial: dict | None) -> dict[str, float]:
    """The energy terms of :meth:`contactlab.Simulation.energy` from their sums; ``balance_error``
    against ``initial`` (the state's ``initial_energy``; 0 while it is None)."""
    dissipated = sums.dissipated + sums.damping
    total = sums.kinetic + sums.rotational + sums.gravitational + sums.elastic + dissipated
    out = dict(kinetic=sums.kinetic, rotational=sums.rotational, gravitational=sums.gravitational,
               elastic=sums.elastic, dissipated=dissipated, total=total, boundary_work=sums.boundary)
    for c, name in enumerate(law.dissipation_terms):
        out[f"dissipated_{name}"] = sums.terms[c]
    if local_damping > 0.0 or sums.damping:
        out["dissipated_local_damping"] = sums.damping
    e0 = initial
    out["balance_error"] = (total - sums.boundary - (e0["total"] - e0["boundary_work"])) if e0 is not None else 0.0
    return out


def energy(model, state, table, law, local_damping: float = 0.0) -> dict[str, float]:
    """Energy terms, J (see :meth:`contactlab.Simulation.energy`); ``balance_error`` against
    ``state.initial_energy`` (0 while that is not set)."""
    return energy_terms(energy_sums(model, state, table), law, local_damping, state.initial_energy)


def unbalanced_force_ratio(model, state, table) -> float:
    """Mean net force on the free bodies over the mean contact force (dimensionless), see
    :meth:`contactlab.Simulation.unbalanced_force_ratio`."""
    free = _free(model)
    net = [np.linalg.norm(state.forces[free], axis=1)]
    if model.n_clumps:
        net.append(np.linalg.norm(state.clump_forces, axis=1))
    net = np.concatenate(net)
    t = table
    contact_sum, n_contacts = 0.0, 0
    for a in range(0, t.n_pairs, ENERGY_BLOCK):   # in blocks: no whole-table temporaries
        b = slice(a, min(a + ENERGY_BLOCK, t.n_pairs))
        f = t.out[b, layout.OUT_FORCE: layout.OUT_FORCE + 3][t.status[b] == layout.ACTIVE]
        contact_sum += float(np.linalg.norm(f, axis=1).sum())
        n_contacts += len(f)
    mean_net = float(net.mean()) if len(net) else 0.0
    if contact_sum == 0.0:
        return np.inf if mean_net > 0.0 else 0.0
    return mean_net / (contact_sum / n_contacts)


def linear_momentum(model, state) -> np.ndarray:
    """(3,) total linear momentum of the free bodies, kg m/s."""
    free = _free(model)
    clumps = (model.clump_mass[:, None] * state.clump_velocities).sum(axis=0) if model.n_clumps else 0.0
    return (model.mass[free, None] * state.velocities[free]).sum(axis=0) + clumps


def angular_momentum(model, state, origin: np.ndarray) -> np.ndarray:
    """(3,) total angular momentum of the free bodies about ``origin`` (3,), kg m^2/s."""
    free = _free(model)
    m = model.mass[free, None]
    r = state.positions[free] - origin
    orbital = np.cross(r, m * state.velocities[free]).sum(axis=0)
    spin = spin_momenta(model, state)[free].sum(axis=0)
    if model.n_clumps:
        rc = state.clump_positions - origin
        orbital = orbital + np.cross(rc, model.clump_mass[:, None] * state.clump_velocities).sum(axis=0)
        spin = spin + clump_spin_momenta(model, state).sum(axis=0)
    return orbital + spin


def summary(model, state, table, law, local_damping: float, dt, wall_seconds: float, steps: int) -> dict:
    """Numbers for the end-of-run summary (see :meth:`contactlab.Simulation.summary`)."""
    e = energy(model, state, table, law, local_damping)
    e0 = state.initial_energy if state.initial_energy is not None else e
    # the energy that changed form since the start (independent of the origin of heights)
    scale = max(e0["kinetic"] + e0["rotational"] + e0["elastic"] + abs(e["gravitational"] - e0["gravitational"])
                + abs(e["boundary_work"] - e0["boundary_work"]) + e["elastic"], 1e-300)
    n = model.n_spheres
    return dict(
        wall_seconds=wall_seconds, steps=steps, time=state.time, dt=dt, spheres=n,
        particle_steps_per_second=(steps * n / wall_seconds) if wall_seconds > 0 else float("nan"),
        contacts=n_contacts(table), energy=e, energy_balance_relative=e["balance_error"] / scale,
        neighbor_builds=table.builds)


def convex_roll_output(model, state, table, law, body: int) -> dict[str, np.ndarray]:
    """Spec 003's outputs for the contacts of the convex roll ``body`` (a body of kind ROLL, see
    :meth:`contactlab.Simulation.convex_roll_output`)."""
    m, s = model, state
    b = int(body)
    c = contacts(model, state, table, law)
    rows = np.flatnonzero((c["i"] == b) | (c["j"] == b))
    sign = np.where(c["i"][rows] == b, 1.0, -1.0)[:, None]
    offset = m.shape_data[m.shape_ref[b] + 3]
    centre = s.positions[b] + rotation_matrix(s.orientations[b]) @ np.array([offset, 0.0, 0.0])
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
