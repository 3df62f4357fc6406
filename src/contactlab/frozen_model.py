"""The frozen model: everything about the bodies that does not change during a run.

Arrays are read-only after :meth:`contactlab.Scene.finalize`.  Ownership of each array is in its
name's docstring: *per body* arrays have one row per body (spheres and every other shape share one
index space, in the order the bodies were added), *per wall* arrays one row per wall, *per mesh*
one row per mesh wall, *per triangle* one row per mesh triangle, *per material* one row per
material.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .geometry.shapes import ROLL
from .geometry.sphere_cylinder import N_WALL_SHAPE, WALL_CYLINDER
from .materials import Material

__all__ = ["Model"]


@dataclass(frozen=True, eq=False)
class Model:
    """Frozen description of bodies, walls, meshes and materials.

    Attributes
    ----------
    radius : (N,) float64, m, per body: a sphere's radius; for other shapes the radius of the
        bounding sphere about the centre of mass (the broad phase's radius)
    mass : (N,) float64, kg, per body (its own mass, also for fixed bodies)
    inv_mass : (N,) float64, 1/kg, per body; 0 for fixed (kinematic) bodies
    inertia : (N,) float64, kg m^2, per body: 2/5 m r^2 for a sphere; the smallest principal moment
        for other shapes; in a 2-D scene the moment about z (disk ``m r^2 / 2``, ellipse
        ``m (a^2 + b^2) / 4``), which also stands for all three principal moments
    inv_inertia : (N,) float64, 1/(kg m^2), per body; 0 for fixed bodies
    material : (N,) uint16, per body, index into ``materials``
    fixed : (N,) bool, per body: kinematic body that moves at its prescribed velocity
    wall_normal : (W, 3) float64, unit, per wall: points into the half-space of the bodies (a
        cylinder wall: its axis)
    wall_material : (W,) uint16, per wall, index into ``materials``
    wall_kind : (W,) uint8, per wall: WALL_PLANE or WALL_CYLINDER (:mod:`contactlab.geometry.sphere_cylinder`)
    wall_shape : (W, 4) float64, per wall: a cylinder's radius (m), side (+1 inside, -1 outside) and
        ends along its axis (m, infinite for none), columns ``CYL_*`` of
        :mod:`contactlab.geometry.sphere_cylinder`; zero for a plane
    materials : tuple of Material, per material
    gravity : (3,) float64, m/s^2
    shape_kind : (N,) uint8, per body: SPHERE, ELLIPSOID, POLYHEDRON, ROLL, ELLIPSE (2-D)
        (:mod:`contactlab.geometry.shapes`)
    shape_ref : (N,) int64, per body: where its parameters start in ``shape_data``
    shape_data : (M,) float64: the shapes' parameters (body frames), followed by the mesh
        triangles' vertices at the start (the run's current ones are in the state)
    principal_inertia : (N, 3) float64, kg m^2, per body: principal moments (body frame)
    contact_radius : (N,) float64, m, per body: a sphere's radius; an ellipsoid's or an
        ellipse's smallest semi-axis; a polyhedron's volume-equivalent radius; a roll's largest hull radius.  The
        length ``max_overlap`` refers to, and the radius of curvature a polyhedron's contacts use.
    mesh_material : (Mm,) uint16, per mesh; mesh_names : tuple of str, per mesh
    mesh_first : (Mm + 1,) int64: triangles ``mesh_first[m] <= t < mesh_first[m + 1]`` belong to mesh m
    tri_mesh : (T,) int64, per triangle: its mesh; tri_ref : (T,) int64, per triangle: offset of its
        9 vertex coordinates in ``shape_data``
    mesh_local : (T, 9) float64, m, per triangle: vertices relative to the mesh's reference point,
        in the mesh's own frame (a moving mesh turns them with its orientation)
    mesh_size : (Mm,) float64, m, per mesh: largest distance of a vertex from its reference point
    dimension : int: 3, or 2 for a scene of disks, ellipses and line walls in the plane z = 0
        (:mod:`contactlab.scene.plane`)
    thickness : float, m: the disks' and ellipses' thickness in a 2-D scene (their mass and inertia)
    inv_principal_inertia : (N, 3) float64, 1/(kg m^2), per body: inverse principal moments, 0 for
        fixed bodies (derived from ``principal_inertia`` and ``fixed``, not a constructor argument)
    clump_of : (N,) int64, per body: the clump a sphere belongs to, -1 for none
        (:mod:`contactlab.scene.clumps`; a clump member's ``mass`` is its clump's, the mass its
        contacts see, and its ``inertia`` a bound that keeps the stability estimate safe)
    clump_first : (C + 1,) int64: the members of clump c are ``clump_members[clump_first[c]:clump_first[c + 1]]``
    clump_members : (Nm,) int64, per member: its body index
    clump_offsets : (Nm, 3) float64, m, per member: its centre in its clump's principal frame
    clump_mass : (C,) float64, kg, per clump (overlaps counted once)
    clump_inertia : (C, 3) float64, kg m^2, per clump: principal moments about its centre of mass

    Every array is read-only.  One that only repeats another (a sphere's principal moments, contact
    radius and shape parameters; ``clump_of`` without clumps) shares that one's memory, as the same
    array or a broadcast view (:meth:`_share_repeated_columns`).
    """

    radius: np.ndarray
    mass: np.ndarray
    inv_mass: np.ndarray
    inertia: np.ndarray
    inv_inertia: np.ndarray
    material: np.ndarray
    fixed: np.ndarray
    wall_normal: np.ndarray
    wall_material: np.ndarray
    materials: tuple[Material, ...]
    gravity: np.ndarray
    shape_kind: np.ndarray | None = None
    shape_ref: np.ndarray | None = None
    shape_data: np.ndarray | None = None
    principal_inertia: np.ndarray | None = None
    contact_radius: np.ndarray | None = None
    mesh_material: np.ndarray | None = None
    mesh_names: tuple = field(default=())
    mesh_first: np.ndarray | None = None
    tri_mesh: np.ndarray | None = None
    tri_ref: np.ndarray | None = None
    mesh_local: np.ndarray | None = None
    mesh_size: np.ndarray | None = None
    dimension: int = 3
    thickness: float = 1.0
    wall_kind: np.ndarray | None = None
    wall_shape: np.ndarray | None = None
    clump_of: np.ndarray | None = None
    clump_first: np.ndarray | None = None
    clump_members: np.ndarray | None = None
    clump_offsets: np.ndarray | None = None
    clump_mass: np.ndarray | None = None
    clump_inertia: np.ndarray | None = None
    inv_principal_inertia: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        n = self.radius.shape[0]
        defaults = dict(
            shape_kind=lambda: np.zeros(n, dtype=np.uint8),
            shape_ref=lambda: np.arange(n, dtype=np.int64),
            shape_data=lambda: self.radius.astype(np.float64).copy(),
            principal_inertia=lambda: np.repeat(self.inertia[:, None], 3, axis=1),
            contact_radius=lambda: self.radius.copy(),
            mesh_material=lambda: np.zeros(0, dtype=np.uint16),
            mesh_first=lambda: np.zeros(1, dtype=np.int64),
            tri_mesh=lambda: np.zeros(0, dtype=np.int64),
            tri_ref=lambda: np.zeros(0, dtype=np.int64),
            mesh_local=lambda: np.zeros((0, 9)),
            mesh_size=lambda: np.zeros(0),
            wall_kind=lambda: np.zeros(self.wall_normal.shape[0], dtype=np.uint8),
            wall_shape=lambda: np.zeros((self.wall_normal.shape[0], N_WALL_SHAPE)),
            clump_of=lambda: np.full(n, -1, dtype=np.int64),
            clump_first=lambda: np.zeros(1, dtype=np.int64),
            clump_members=lambda: np.zeros(0, dtype=np.int64),
            clump_offsets=lambda: np.zeros((0, 3)),
            clump_mass=lambda: np.zeros(0),
            clump_inertia=lambda: np.zeros((0, 3)),
        )
        for name, make in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, make())
        object.__setattr__(self, "inv_principal_inertia", None)
        self._share_repeated_columns()
        if self.inv_principal_inertia is None:
            object.__setattr__(self, "inv_principal_inertia",
                               np.where(self.fixed[:, None], 0.0, 1.0 / self.principal_inertia))
        for name in ("radius", "mass", "inv_mass", "inertia", "inv_inertia", "material", "fixed",
                     "wall_normal", "wall_material", "gravity", "inv_principal_inertia", *defaults):
            getattr(self, name).setflags(write=False)

    def _share_repeated_columns(self) -> None:
        """Per-body arrays that only repeat another one, stored once (issue 16: 48-80 B per sphere).

        In a scene of spheres (and disks) the principal moments are the inertia three times, the
        contact radius and the shape parameters are the radius, and without clumps every
        ``clump_of`` is -1.  Those arrays then share the memory of the one they repeat: the same
        array (``contact_radius``, ``shape_data``) or a read-only broadcast view (``principal_inertia``,
        ``inv_principal_inertia`` and ``clump_of``, whose rows are not contiguous: the kernels that
        take them, only for non-spherical bodies, get a contiguous copy, see
        :meth:`principal_arrays`).  The values are exactly the ones a full array would hold."""
        n = self.radius.shape[0]
        if n == 0:
            return
        radius = self.radius
        if (self.contact_radius is not radius and self.contact_radius.dtype == radius.dtype
                and np.array_equal(self.contact_radius, radius)):
            object.__setattr__(self, "contact_radius", radius)
        if (self.shape_data is not radius and self.shape_data.shape == radius.shape
                and self.shape_data.dtype == radius.dtype and self.tri_ref.shape[0] == 0
                and np.array_equal(self.shape_ref, np.arange(n)) and np.array_equal(self.shape_data, radius)):
            object.__setattr__(self, "shape_data", radius)
        principal = self.principal_inertia
        if all(np.array_equal(principal[:, c], self.inertia) for c in range(3)):
            object.__setattr__(self, "principal_inertia", np.broadcast_to(self.inertia[:, None], (n, 3)))
            inv = np.where(self.fixed, 0.0, 1.0 / self.inertia)
            if np.array_equal(inv, self.inv_inertia):
                inv = self.inv_inertia
            else:
                inv.setflags(write=False)
            object.__setattr__(self, "inv_principal_inertia", np.broadcast_to(inv[:, None], (n, 3)))
        clump_of = self.clump_of
        if clump_of.shape == (n,) and not (clump_of >= 0).any():
            object.__setattr__(self, "clump_of", np.broadcast_to(np.int64(-1), (n,)))

    def principal_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(principal_inertia, inv_principal_inertia)`` (kg m^2, 1/(kg m^2)) as contiguous read-only (N, 3) arrays,
        as the kernels of rigid bodies take them (a copy where the model shares them, see
        :meth:`_share_repeated_columns`)."""
        out = []
        for a in (self.principal_inertia, self.inv_principal_inertia):
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
                a.setflags(write=False)
            out.append(a)
        return out[0], out[1]

    @property
    def n_spheres(self) -> int:
        """Number of bodies N (kept under its first name: spheres and every other shape)."""
        return int(self.radius.shape[0])

    @property
    def n_bodies(self) -> int:
        """Number of bodies N (spheres and every other shape)."""
        return int(self.radius.shape[0])

    @property
    def n_meshes(self) -> int:
        """Number of mesh walls."""
        return int(self.mesh_material.shape[0])

    @property
    def n_triangles(self) -> int:
        """Number of mesh triangles T (all meshes)."""
        return int(self.tri_ref.shape[0])

    @property
    def has_shapes(self) -> bool:
        """True when a body is not a sphere or a mesh is present (the kernels then carry the
        narrow phase of every shape)."""
        return bool(self.shape_kind.any()) or self.n_triangles > 0

    @property
    def n_clumps(self) -> int:
        """Number of clumps C (rigid aggregates of member spheres)."""
        return int(self.clump_mass.shape[0])

    def stability_masses(self) -> tuple[np.ndarray, np.ndarray]:
        """(N,) kg and (N,) kg m^2 per body: the mass and moment of inertia the stability estimate
        gives a body.  Its own, except for a clump member: the smallest effective mass of its clump
        at any point of its surface along any direction, ``1 / (1/M + (|o| + r)^2 / I_min)`` (``o``
        its offset from the clump's centre of mass), and its ``inertia`` (the same bound for the
        turning of its surface)."""
        member = self.clump_members
        mass = self.mass.copy() if len(member) else self.mass     # read-only use: no copy without clumps
        if len(member):
            counts = np.diff(self.clump_first)
            owner = np.repeat(np.arange(self.n_clumps), counts)
            lever = np.linalg.norm(self.clump_offsets, axis=1) + self.radius[member]
            mass[member] = 1.0 / (1.0 / self.clump_mass[owner] + lever**2 / self.clump_inertia[owner].min(axis=1))
        return mass, self.inertia

    @property
    def n_walls(self) -> int:
        """Number of walls W."""
        return int(self.wall_normal.shape[0])

    @property
    def has_cylinders(self) -> bool:
        """True when a wall is a cylinder (the kernels then carry its narrow phase)."""
        return bool((self.wall_kind == WALL_CYLINDER).any())

    @property
    def n_materials(self) -> int:
        return len(self.materials)

    def sliding_mobility(self) -> np.ndarray:
        """(N,) 1/kg per body: an upper bound of the velocity a unit tangential force at any point
        of its surface gives that point, ``1/m + max_t (b x t) . I^-1 (b x t)`` over levers ``b``
        from the centre of mass (0 for fixed bodies).  A sphere's is exact, ``1/m + r^2 / I``; a
        roll's (axis = local x) ``1/m + r_max^2 / I_x + R^2 / min(I_y, I_z)`` (the axial component
        of ``b x t`` is at most the hull radius ``r_max``, the others at most the bounding radius
        ``R``); other shapes ``1/m + R^2 / I_min``."""
        inv_i = self.inv_principal_inertia
        mobility = self.inv_mass + self.radius**2 * inv_i.max(axis=1)
        roll = self.shape_kind == ROLL
        if roll.any():
            mobility[roll] = (self.inv_mass[roll] + self.contact_radius[roll]**2 * inv_i[roll, 0]
                              + self.radius[roll]**2 * np.maximum(inv_i[roll, 1], inv_i[roll, 2]))
        return mobility

    def pair_sliding_mass(self) -> np.ndarray:
        """(M, M) kg per pair of materials: a lower bound of the effective mass of sliding at any
        contact between bodies of the two materials, ``1 / (W_a + W_b)`` with ``W_a`` the largest
        :meth:`sliding_mobility` of a free body of material ``a`` (0 without one: walls, meshes
        and fixed bodies do not move under a contact force); 0 where neither side can move."""
        worst = np.zeros(self.n_materials)
        np.maximum.at(worst, self.material.astype(np.int64), self.sliding_mobility())
        total = worst[:, None] + worst[None, :]
        with np.errstate(divide="ignore"):
            return np.where(total > 0.0, 1.0 / total, 0.0)
