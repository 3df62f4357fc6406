"""Clumps: rigid aggregates of (possibly overlapping) spheres, for the scene builder.

A clump's member spheres are ordinary spheres of the scene (one body index each): they take part
in contacts as spheres, so every contact law works on them unchanged, with a history per member
pair.  Members of one clump never touch each other.  The engine sums their forces and torques onto
the clump (:mod:`contactlab.engine.clump_motion`), integrates the clump as a rigid body with its
full inertia tensor, and places the members rigidly (their positions, velocities, angular
velocities and orientations are the clump's rigid motion at their centres).

Mass and inertia are those of the union of the member spheres, overlaps counted once
(:func:`contactlab.geometry.sphere_union.union_moments`), times the material's density.  The
clump's body frame is its principal frame about its centre of mass; the members' centres are
stored in it.

What each member row of the model holds: its radius and material; ``mass`` and ``inv_mass`` are
the clump's (the mass a contact law sees for a member's contacts, as YADE and LIGGGHTS do: a
clump dropped on a member whose contact normal passes through the centre of mass then bounces with
exactly the law's restitution); ``inertia`` (all three principal moments) is
``I_min (r / (|o| + r))^2``, so that the member's sliding mobility ``1/M + r^2 / inertia`` is the
clump's largest at the member's surface, ``1/M + (|o| + r)^2 / I_min`` (``o``: the member's
offset from the centre of mass), which keeps the time-step estimate safe
(:meth:`contactlab.frozen_model.Model.stability_masses` also gives the normal direction's bound).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._arguments import as_positive_array, as_vec3, as_vec3_array, checked_api
from ..errors import InputError
from ..geometry.rotation import quaternion_from_matrix, rotation_matrix
from ..geometry.sphere_union import union_moments
from .particles import check_material
from .shapes import as_orientation

__all__ = ["ClumpTemplate", "ClumpBuilder", "add_clump", "add_clumps"]


@checked_api
class ClumpTemplate:
    """The shape of a clump: member spheres in the clump's own frame, with the union's volume,
    centre and principal axes computed once (per unit density).

    Parameters
    ----------
    centres : (n, 3) floats, m
        Member centres in the template's frame.
    radii : (n,) floats, m (> 0), or one radius for all

    Attributes
    ----------
    centres, radii : the members as given
    volume : float, m^3: of the union (overlaps counted once)
    centroid : (3,) float64, m: the union's centre of volume in the template's frame
    axes : (3, 3) float64: principal axes (columns) in the template's frame, a rotation
    principal_moments : (3,) float64, m^5: principal moments per unit density (ascending)
    offsets : (n, 3) float64, m: member centres in the principal frame about the centroid
    error : float: the quadrature's estimated relative error (see
        :mod:`contactlab.geometry.sphere_union`)

    Example
    -------
    >>> import contactlab as cl
    >>> dimer = cl.ClumpTemplate([(-0.5e-3, 0, 0), (0.5e-3, 0, 0)], 0.75e-3)
    >>> round(dimer.volume / (2 * 4 / 3 * 3.141592653589793 * 0.75e-3**3), 4)   # less than two spheres
    0.8611
    """

    def __init__(self, centres, radii):
        c = as_vec3_array("centres", centres, unit="m")
        n = c.shape[0]
        if n == 0:
            raise InputError("a clump needs at least one sphere; centres is empty")
        r = as_positive_array("radii", radii, n, "m")
        moments = union_moments(c, r)
        eig, axes = np.linalg.eigh(moments.inertia)
        if np.linalg.det(axes) < 0:
            axes[:, 2] *= -1.0
        self.centres = c
        self.radii = r
        self.volume = moments.volume
        self.centroid = moments.centroid
        self.axes = axes
        self.principal_moments = eig
        self.offsets = (c - moments.centroid) @ axes
        self.error = moments.error

    @property
    def n_spheres(self) -> int:
        return int(self.radii.shape[0])

    def mass(self, density: float) -> float:
        """kg, for a material of ``density`` (kg/m^3)."""
        return float(density) * self.volume

    def __repr__(self) -> str:
        return f"ClumpTemplate({self.n_spheres} spheres, volume={self.volume:.6g} m^3)"


class ClumpBuilder:
    """The clumps of a scene while it is built: per clump its template, its first member's body
    index, its pose and velocities (global frame)."""

    def __init__(self):
        self.templates: list[ClumpTemplate] = []
        self.first_body: list[int] = []
        self.material: list[int] = []
        self.position: list[np.ndarray] = []      # centre of mass
        self.orientation: list[np.ndarray] = []   # principal frame to global (quaternion)
        self.velocity: list[np.ndarray] = []
        self.angular_velocity: list[np.ndarray] = []

    @property
    def count(self) -> int:
        return len(self.templates)

    def attach(self, model, state, densities):
        """The model and state with the clumps' arrays and their members' mass rows (see the
        module docstring); unchanged without clumps."""
        if not self.templates:
            return model, state
        n_c = self.count
        mass = np.array([t.mass(densities[m]) for t, m in zip(self.templates, self.material)])
        inertia = np.array([t.principal_moments * densities[m] for t, m in zip(self.templates, self.material)])
        counts = np.array([t.n_spheres for t in self.templates], dtype=np.int64)
        first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        members = np.concatenate([b + np.arange(k) for b, k in zip(self.first_body, counts)]).astype(np.int64)
        offsets = np.concatenate([t.offsets for t in self.templates])
        owner = np.repeat(np.arange(n_c), counts)
        clump_of = np.full(model.n_bodies, -1, dtype=np.int64)
        clump_of[members] = owner
        r = model.radius[members]
        lever = np.linalg.norm(offsets, axis=1) + r
        member_inertia = inertia[owner].min(axis=1) * (r / lever) ** 2
        m_mass = model.mass.copy()
        m_mass[members] = mass[owner]
        m_inertia = model.inertia.copy()
        m_inertia[members] = member_inertia
        principal = model.principal_inertia.copy()
        principal[members] = member_inertia[:, None]
        model = dataclasses.replace(
            model, mass=m_mass, inv_mass=np.where(model.fixed, 0.0, 1.0 / m_mass), inertia=m_inertia,
            inv_inertia=np.where(model.fixed, 0.0, 1.0 / m_inertia), principal_inertia=principal, clump_of=clump_of,
            clump_first=first, clump_members=members, clump_offsets=offsets, clump_mass=mass, clump_inertia=inertia)
        state.clump_positions = np.array(self.position, dtype=float).reshape(n_c, 3)
        state.clump_orientations = np.array(self.orientation, dtype=float).reshape(n_c, 4)
        state.clump_velocities = np.array(self.velocity, dtype=float).reshape(n_c, 3)
        state.clump_angular_velocities = np.array(self.angular_velocity, dtype=float).reshape(n_c, 3)
        state.clump_forces = np.zeros((n_c, 3))
        state.clump_torques = np.zeros((n_c, 3))
        state.orientations[members] = state.clump_orientations[owner]
        return model, state


def _place(scene, template: ClumpTemplate, material, positions, orientations, velocities, angular_velocities):
    """Add K clumps of one template (arrays checked: (K, 3), (K, 4) quaternions, (K, 3), (K, 3));
    returns their clump indices."""
    scene._need_3d("add_clump")
    check_material(material)
    k = positions.shape[0]
    n = template.n_spheres
    rot = np.array([rotation_matrix(q) for q in orientations]).reshape(k, 3, 3)
    frame = rot @ template.axes                             # principal frame to global, per clump
    com = positions + np.einsum("kij,j->ki", rot, template.centroid)
    centres = com[:, None, :] + np.einsum("kij,nj->kni", frame, template.offsets)
    lever = centres - com[:, None, :]
    vel = velocities[:, None, :] + np.cross(angular_velocities[:, None, :], lever)
    spin = np.broadcast_to(angular_velocities[:, None, :], (k, n, 3))
    b = scene._clumps
    with scene._new_material(material) as mid:
        first = scene._spheres.add(centres.reshape(-1, 3), np.tile(template.radii, k), mid, vel.reshape(-1, 3),
                                   spin.reshape(-1, 3), False)[0] if k else scene.n_bodies
    start = b.count
    for c in range(k):
        b.templates.append(template)
        b.first_body.append(int(first) + c * n)
        b.material.append(mid)
        b.position.append(com[c])
        b.orientation.append(quaternion_from_matrix(frame[c]))
        b.velocity.append(velocities[c].copy())
        b.angular_velocity.append(angular_velocities[c].copy())
    return np.arange(start, start + k)


def add_clump(self, centres, radii, material, *, position=(0.0, 0.0, 0.0), orientation=None,
              velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0)) -> int:
    """Add one clump (a rigid aggregate of spheres, overlaps allowed) and return its clump index.

    Parameters
    ----------
    centres : (n, 3) floats, m
        Member centres in the clump's own frame, which is placed at ``position`` with
        ``orientation`` (by default the centres are global coordinates); or a
        :class:`ClumpTemplate` (``radii`` then None).
    radii : (n,) floats, m (> 0), or one radius for all
    material : Material
        Its density times the union's volume is the clump's mass (overlaps counted once).
    position : 3 floats, m
        Where the origin of the centres' frame goes (the centre of mass is at ``position + R
        template.centroid``).
    orientation : 3x3 rotation matrix or unit quaternion (w, x, y, z)
        Of the centres' frame (default: the global axes).
    velocity : 3 floats, m/s
        Of the centre of mass.
    angular_velocity : 3 floats, rad/s (global frame)

    The members are spheres of the scene (indices ``scene.clump_members(c)``); the clump's
    centre of mass, principal frame and velocities are ``sim.clump_positions`` etc. (see
    ``docs/clumps.md``).
    """
    template = centres if isinstance(centres, ClumpTemplate) else ClumpTemplate(centres, radii)
    if isinstance(centres, ClumpTemplate) and radii is not None:
        raise InputError("give radii with centres, not with a ClumpTemplate (it has its own radii)")
    q = as_orientation("orientation", orientation)
    return int(_place(self, template, material, as_vec3("position", position, unit="m")[None, :], q[None, :],
                      as_vec3("velocity", velocity, unit="m/s")[None, :], as_vec3("angular_velocity", angular_velocity, unit="rad/s")[None, :])[0])


def add_clumps(self, template, positions, material, *, orientations=None, velocities=None,
               angular_velocities=None) -> np.ndarray:
    """Add K clumps of one :class:`ClumpTemplate`; returns their clump indices (K,).

    ``positions`` (K, 3), m: where each clump's template origin goes (as ``add_clump``'s
    ``position``); ``orientations`` (K, 4) unit quaternions or (K, 3, 3) rotation matrices
    (default: the global axes); ``velocities`` and ``angular_velocities`` (K, 3) or one 3-vector
    for all (m/s, rad/s; default zero).
    """
    if not isinstance(template, ClumpTemplate):
        raise InputError(f"template must be a contactlab.ClumpTemplate, got {type(template).__name__}")
    p = as_vec3_array("positions", positions, unit="m")
    k = p.shape[0]
    if orientations is None:
        q = np.tile([1.0, 0.0, 0.0, 0.0], (k, 1))
    else:
        o = np.asarray(orientations, dtype=float)
        if o.shape[:1] != (k,) or o.shape[1:] not in ((4,), (3, 3)):
            raise InputError(f"orientations must be ({k}, 4) quaternions or ({k}, 3, 3) rotation matrices, one per "
                             f"position, got shape {o.shape}")
        q = np.array([as_orientation(f"orientations[{c}]", o[c]) for c in range(k)]).reshape(k, 4)
    v = np.zeros((k, 3)) if velocities is None else as_vec3_array("velocities", velocities, k, unit="m/s")
    w = np.zeros((k, 3)) if angular_velocities is None else as_vec3_array("angular_velocities", angular_velocities, k, unit="rad/s")
    return _place(self, template, material, p, q, v, w)
