"""What a measurement reads from a simulation: bodies and active contacts as plain arrays.

:func:`snapshot` copies nothing it does not need and computes nothing per body or contact in
Python: it slices the model, the state and the contact table (columns named in
:mod:`contactlab.engine.layout`).  The contacts are those the engine evaluated last (the forces
of the current positions: the step kernel evaluates the forces after moving the bodies).

Conventions (read by every measurement):

* ``contact_force[c]`` is the force on body ``contact_i[c]`` (N); body ``contact_j[c]`` receives
  its opposite.  ``contact_j[c] = -1`` for a contact with a plane wall or a mesh triangle.
* ``contact_point[c]`` (m) is the point where the force acts, the same for both bodies (midway
  through the overlap for spheres); ``contact_normal[c]`` the unit normal from ``i`` towards ``j``
  (into the wall).
* in a periodic scene (:meth:`contactlab.Scene.set_periodic`) body ``contact_j[c]`` acts through
  its image at ``positions[j] + contact_shift[c]`` (the minimum image of its separation from
  ``i``, :mod:`contactlab.geometry.periodic`); ``contact_shift`` is None otherwise, and
  ``cell_volume`` (m^3) is the cell's volume, the whole simulation's volume in a measurement.
* ``volumes[k]`` (m^3) is body ``k``'s volume, its mass over its material's density (a disk's
  area times the scene's thickness in 2-D).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import layout
from ..engine.contact_geometry import pair_geometry
from ..errors import InputError
from ..geometry.periodic import min_image_np
from ..geometry.shapes import SPHERE

__all__ = ["Snapshot", "snapshot"]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """Bodies and active contacts of a simulation at one instant (see the module docstring).

    Attributes
    ----------
    positions : (N, 3) float64, m, per body (centre of mass)
    radii : (N,) float64, m, per body (a sphere's or disk's radius; the bounding radius otherwise)
    masses : (N,) float64, kg, per body
    volumes : (N,) float64, m^3, per body
    velocities : (N, 3) float64, m/s, per body
    round : (N,) bool, per body: a sphere (a disk in 2-D), whose part inside a region is exact
    contact_i, contact_j : (C,) int64, per contact (``contact_j`` -1 for walls and meshes)
    contact_point, contact_force, contact_normal : (C, 3) float64, per contact (m, N, unit)
    dimension : 3 or 2;  thickness : m (2-D scenes; 1.0 otherwise)
    time : s
    contact_shift : (C, 3) float64, m, per contact, or None: where ``j``'s image is (periodic scenes)
    cell_volume : float, m^3, or None: the periodic cell's volume
    """

    positions: np.ndarray
    radii: np.ndarray
    masses: np.ndarray
    volumes: np.ndarray
    velocities: np.ndarray
    round: np.ndarray
    contact_i: np.ndarray
    contact_j: np.ndarray
    contact_point: np.ndarray
    contact_force: np.ndarray
    contact_normal: np.ndarray
    dimension: int
    thickness: float
    time: float
    contact_shift: np.ndarray | None = None
    cell_volume: float | None = None

    @property
    def n_bodies(self) -> int:
        return int(self.radii.shape[0])


def _body_masses(model, density) -> tuple[np.ndarray, np.ndarray]:
    """Per body: mass (kg) and volume (m^3).  A clump member's ``model.mass`` is its whole clump's
    (what its contacts see); here a clump's mass and union volume are shared among its members in
    proportion to their spheres' volumes, so that sums over bodies count each clump once."""
    masses = model.mass.copy()
    volumes = masses / density[model.material]
    if model.n_clumps:
        members = model.clump_members
        owner = np.repeat(np.arange(model.n_clumps), np.diff(model.clump_first))
        r3 = model.radius[members] ** 3
        share = r3 / np.bincount(owner, weights=r3, minlength=model.n_clumps)[owner]
        masses[members] = model.clump_mass[owner] * share
        volumes[members] = model.clump_mass[owner] / density[model.material[members]] * share
    return masses, volumes


def snapshot(sim) -> Snapshot:
    """The bodies and active contacts of ``sim`` (a :class:`contactlab.Simulation`) as arrays."""
    model = getattr(sim, "model", None)
    state = getattr(sim, "state", None)
    stepper = getattr(sim, "stepper", None)
    if model is None or state is None or stepper is None:
        raise InputError(f"sim must be a contactlab.Simulation, got {type(sim).__name__}: {sim!r:.80}")
    table = stepper.table
    rows = table.active()
    ns = model.n_spheres
    ci = table.pair_i[rows].astype(np.int64)
    jraw = table.pair_j[rows].astype(np.int64)
    force = table.out[rows, layout.OUT_FORCE: layout.OUT_FORCE + 3]
    normal, _, point = pair_geometry(model, state, table, rows)
    density = np.array([m.density for m in model.materials], dtype=np.float64)
    masses, volumes = _body_masses(model, density)
    shift, cell_volume = None, None
    if state.cell is not None:
        cj = np.where(jraw < ns, jraw, ci)
        d = state.positions[cj] - state.positions[ci]
        shift = np.where((jraw < ns)[:, None], min_image_np(d, state.cell)[0] - d, 0.0)
        cell_volume = float(sim.cell.volume)
    return Snapshot(
        positions=state.positions,
        radii=model.radius,
        masses=masses,
        volumes=volumes,
        velocities=state.velocities,
        round=model.shape_kind == SPHERE,
        contact_i=ci,
        contact_j=np.where(jraw < ns, jraw, -1),
        contact_point=point,
        contact_force=np.ascontiguousarray(force),
        contact_normal=normal,
        dimension=int(model.dimension),
        thickness=float(model.thickness),
        time=float(state.time),
        contact_shift=shift,
        cell_volume=cell_volume,
    )
