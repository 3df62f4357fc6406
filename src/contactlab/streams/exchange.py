"""The streams of one simulation and the exchange of bodies they make at a step boundary.

:class:`StreamSet` holds a simulation's inlets and outlets in the order added, tells the run loop
at which step the next one is due, and there makes one *exchange*: the due outlets select the
spheres they remove, the due inlets place their batches among the bodies that stay, and the run
continues with the resized model, state and contact table (:mod:`contactlab.streams.resize`) in one
rebuild, however many streams acted.

Energy.  ``sim.energy()``'s terms are those of the bodies present (and their contacts).  An
exchange changes them: inserted spheres bring their kinetic and gravitational energy, removed ones
take theirs, the elastic energy of their contacts and the dissipation and boundary work booked to
them.  The exchange measures the change of ``total - boundary_work`` across it and adds it to the
reference of ``balance_error`` (``state.initial_energy``), so the balance of an open system stays
meaningful: ``balance_error`` is still the energy created or lost by the integration alone.  The
energy brought in is booked as ``inflow`` (kinetic, rotational and gravitational energy of the new
spheres when inserted) and the energy taken away as ``outflow`` (what left, net of the boundary
work booked to the removed spheres), cumulative, in ``sim.energy()``.
"""
from __future__ import annotations

import numpy as np

from .. import observables
from ..engine.launch import debug_probes
from ..errors import InputError, StabilityError
from ..stability import StabilityLimit, stability_limit
from .inlet import Inlet
from .outlet import Outlet
from .resize import NewSpheres, index_map, resized, resized_bond_log, resized_exclusions, resized_table

__all__ = ["StreamSet", "inlet_stability_limit"]


class StreamSet:
    """The inlets and outlets of a simulation (``saved``: a checkpoint's streams, taken back by the
    streams added in the same order, see :mod:`contactlab.streams.base`)."""

    def __init__(self, saved: list | None = None):
        self.members: list = []
        self._saved = list(saved or [])

    def __bool__(self) -> bool:
        return bool(self.members)

    def add(self, stream) -> None:
        position = len(self.members)
        if position < len(self._saved):
            entry, arrays = self._saved[position]
            stream.take_saved(entry, arrays, position)
        self.members.append(stream)

    def next_step(self, step: int) -> int:
        """The first step after ``step`` at which a stream acts."""
        return min(m.next_step(step) for m in self.members)

    def saved(self) -> list:
        """``[(entry, arrays), ...]`` for a checkpoint (see :meth:`Stream.saved`)."""
        return [m.saved() for m in self.members] + self._saved[len(self.members):]

    # ------------------------------------------------------------------ the exchange
    def maybe_exchange(self, sim) -> None:
        """Let the streams due at the current step act (see the module docstring)."""
        step = sim.state.step
        due = [m for m in self.members if m.due(step)]
        if due:
            exchange(sim, [m for m in due if isinstance(m, Outlet)], [m for m in due if isinstance(m, Inlet)])


def _material_index(materials: tuple, material) -> tuple[int, tuple]:
    """The index of ``material`` in ``materials`` (the same object, or one equal to it), adding it if new."""
    for k, m in enumerate(materials):
        if m is material:
            return k, materials
    for k, m in enumerate(materials):
        if m.to_dict() == material.to_dict():
            return k, materials
    if len(materials) >= 65535:
        raise InputError("a simulation can hold at most 65535 different materials")
    return len(materials), materials + (material,)


def exchange(sim, outlets: list, inlets: list) -> None:
    """Remove what the ``outlets`` select and insert the ``inlets``' batches, then continue the run
    of ``sim`` with the new bodies (one rebuild)."""
    m, s = sim.model, sim.state
    n = m.n_bodies
    keep = np.ones(n, dtype=bool)
    taken = []
    for outlet in outlets:
        sel = outlet.select(m, s) & keep
        keep &= ~sel
        taken.append((outlet, np.flatnonzero(sel)))
    materials = m.materials
    new = NewSpheres.none()
    if inlets:
        others_pos = s.positions[keep]
        others_r = m.radius[keep]
        for inlet in inlets:
            mat, materials = _material_index(materials, inlet.material)
            batch = inlet.batch(s.time, s.step, mat, materials, np.concatenate([others_pos, new.positions]),
                                np.concatenate([others_r, new.radii]))
            new = new.concatenate(batch)
    if not keep.any() and len(new) == 0:
        # the engine needs a body: the last one selected stays (its outlet takes it later)
        outlet, rows = taken[-1] if len(taken[-1][1]) else next(t for t in taken if len(t[1]))
        keep[rows[-1]] = True
        taken = [(o, r[r != rows[-1]]) for o, r in taken]
    ids = s.ids
    for outlet, rows in taken:
        outlet.record(ids[rows], s.time, s.step, m.mass[rows], m.radius[rows], s.velocities[rows])
    if keep.all() and len(new) == 0:
        return
    before = observables.energy(m, s, sim.table, sim.contact_model, sim.local_damping)
    imap = index_map(m, keep, len(new))
    model, state = resized(m, s, keep, new, materials)
    table = resized_table(dict(sim.stepper.saved_table(), skin=sim.table.skin, builds=sim.table.builds), imap, keep,
                          new.positions)
    n_index = model.n_bodies + model.n_walls + model.n_triangles
    exclusions = resized_exclusions(sim.exclusions, imap, model.n_materials, n_index)
    bond_log = resized_bond_log(sim.bond_log, imap, s.time, s.step)
    sim._swap_bodies(model, state, table, exclusions, bond_log)
    after = observables.energy(model, state, sim.table, sim.contact_model, sim.local_damping)
    _book_energy(state, model, len(new), before, after)


def _book_energy(state, model, n_new: int, before: dict, after: dict) -> None:
    """Move the reference of the energy balance by the exchange's change of ``total -
    boundary_work`` and book the inflow and outflow (see the module docstring)."""
    e0 = state.initial_energy
    if e0 is None:
        return
    d_total = after["total"] - before["total"]
    d_boundary = after["boundary_work"] - before["boundary_work"]
    if n_new:
        new = slice(model.n_bodies - n_new, model.n_bodies)
        v = state.velocities[new]
        mass = model.mass[new]
        inflow = float(0.5 * np.dot(mass, np.einsum("ij,ij->i", v, v))
                       + 0.5 * np.dot(model.inertia[new], np.einsum("ij,ij->i", state.angular_velocities[new],
                                                                      state.angular_velocities[new]))
                       - np.dot(mass, state.positions[new] @ model.gravity))
    else:
        inflow = 0.0
    e0["total"] = e0["total"] + d_total
    e0["boundary_work"] = e0["boundary_work"] + d_boundary
    e0["inflow"] = e0.get("inflow", 0.0) + inflow
    e0["outflow"] = e0.get("outflow", 0.0) + inflow - (d_total - d_boundary)


def inlet_stability_limit(sim, inlet: Inlet, *, check_dt: bool = True) -> StabilityLimit:
    """The stability limit of the bodies of ``sim`` and the smallest sphere ``inlet`` can insert;
    a :class:`~contactlab.errors.StabilityError` when the run's time step exceeds it (unless not
    ``check_dt``: a step the simulation chooses itself is chosen again)."""
    m = sim.model
    k, materials = _material_index(m.materials, inlet.material)
    r = inlet.smallest_radius
    probe = NewSpheres(np.zeros((1, 3)), np.array([r]), np.array([k]), np.zeros((1, 3)), np.zeros((1, 3)))
    with_it, _ = resized(m, sim.state, np.ones(m.n_bodies, dtype=bool), probe, materials)
    with debug_probes(sim.debug):
        limit = stability_limit(with_it, sim.contact_model, sim.max_overlap)
    if check_dt and sim.dt is not None and sim.dt > limit.limit:
        raise StabilityError(f"add_inlet: its smallest sphere (radius {r!r} m, {inlet.material!r}) needs dt <= "
                             f"{limit.limit:.6g} s (the contact {limit.case}), but the run's dt is {sim.dt!r} s; "
                             f"set sim.dt = ... (or pass dt=... to cl.Simulation) first")
    return limit
