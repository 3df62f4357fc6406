"""The scene builder: a mutable, validating collection of spheres, walls and materials."""
from __future__ import annotations

import contextlib

import numpy as np

from .._arguments import as_bool, as_int, as_positive, as_vec3, checked_api
from ..errors import InputError
from ..materials import Material
from ..frozen_model import Model
from ..state import State
from . import clumps, periodic_box, plane_bodies
from .fill import lattice_in_box
from .meshes import MeshBuilder
from .particles import SphereBuilder, check_many_spheres, check_material, check_one_sphere
from .random_packing import random_packing
from ..geometry.shapes import SPHERE
from .plane import as_vec2, round_mass_inertia
from .shapes import Body, as_orientation, box_vertices, ellipsoid_body, polyhedron_body, roll_body
from .walls import WallBuilder

__all__ = ["Scene"]


@checked_api
class Scene:
    """What to simulate: bodies (spheres, ellipsoids, convex polyhedra, convex rolls; in 2-D disks and
    ellipses), plane and cylinder walls, mesh walls, materials and gravity.

    Build it with the ``add_*`` methods (each validates its input and either adds everything or
    nothing), then pass it to :class:`contactlab.Simulation`.  All quantities are SI.  Bodies of
    every shape share one index space, in the order they were added (``add_sphere``,
    ``add_ellipsoid``, ... return that index); walls (plane and cylinder, one index space) and mesh
    walls are numbered separately.

    Parameters
    ----------
    gravity : 3 floats, m/s^2
        Gravitational acceleration, default ``(0, 0, -9.81)``; in a 2-D scene 2 floats, default
        ``(0, -9.81)``.
    dimension : 3 or 2
        2 makes a 2-D scene: disks (:meth:`add_disk`, :meth:`add_disks`), ellipses
        (:meth:`add_ellipse`, :meth:`add_ellipses`) and line walls (:meth:`add_wall` with 2-D
        point and normal) in the x-y plane, each body turning about z only.  The simulation runs
        them as the plane z = 0 of the 3-D engine (every law and output works; arrays keep three
        columns, z components zero): see ``docs/two_d.md``.
    thickness : float, m (> 0)
        In a 2-D scene, the thickness of every disk (a solid cylinder: mass ``rho pi r^2 t``,
        moment of inertia ``m r^2 / 2``) and ellipse (a solid elliptic cylinder: ``rho pi a b t``,
        ``m (a^2 + b^2) / 4``), default 1 m; not taken by a 3-D scene.  The contact laws
        act between the bodies as in 3-D, whatever the thickness.

    Example
    -------
    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    >>> scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    0
    >>> scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    0
    """

    def __init__(self, gravity=None, *, dimension: int = 3, thickness: float | None = None):
        #: 3, or 2 for a scene of disks and line walls in the x-y plane
        self.dimension = as_int("dimension", dimension, low=2, high=3)
        if thickness is not None and self.dimension == 3:
            raise InputError(f"thickness={thickness!r} is the disks' thickness of a 2-D scene; a 3-D scene has none "
                             f"(make a 2-D scene with cl.Scene(dimension=2, thickness=...))")
        #: m, the disks' thickness in a 2-D scene (1 m unless given; 1.0 in a 3-D scene, unused)
        self.thickness = 1.0 if thickness is None else as_positive("thickness", thickness, "m")
        if self.dimension == 2:
            self.gravity = as_vec2("gravity", (0.0, -9.81) if gravity is None else gravity)
        else:
            self.gravity = as_vec3("gravity", (0.0, 0.0, -9.81) if gravity is None else gravity, unit="m/s^2")
        self._spheres = SphereBuilder()
        self._walls = WallBuilder()
        self._meshes = MeshBuilder()
        self._clumps = clumps.ClumpBuilder()
        self._materials: list[Material] = []
        #: ``(lower, upper, periodic axes)`` after :meth:`set_periodic`, else None
        self._periodic = None

    # ------------------------------------------------------------------ materials
    def _material_id(self, material) -> int:
        material = check_material(material)
        for k, m in enumerate(self._materials):
            if m is material:
                return k
        for m in self._materials:
            if material.name and m.name == material.name and m.to_dict() != material.to_dict():
                raise InputError(f"two different materials are both named {material.name!r}: the scene has {m.to_dict()}, "
                                 f"the one added is {material.to_dict()}; per-material parameters and outputs find "
                                 f"a material by its name: give each its own (Material(..., name=...))")
        if len(self._materials) >= 65535:
            raise InputError("a scene can hold at most 65535 different materials")
        self._materials.append(material)
        return len(self._materials) - 1

    @contextlib.contextmanager
    def _new_material(self, material):
        """The material's index for an ``add_*`` that validates after choosing it: a material the
        scene did not hold yet is dropped again when the addition fails (nothing half-added)."""
        before = len(self._materials)
        mid = self._material_id(material)
        try:
            yield mid
        except BaseException:
            del self._materials[before:]
            raise

    @property
    def materials(self) -> tuple[Material, ...]:
        """Materials in the order they were first used."""
        return tuple(self._materials)

    @property
    def n_spheres(self) -> int:
        return self._spheres.count

    @property
    def n_bodies(self) -> int:
        """Number of bodies of every shape."""
        return self._spheres.count

    @property
    def n_walls(self) -> int:
        return self._walls.count

    @property
    def n_meshes(self) -> int:
        return self._meshes.count

    def _need_3d(self, method: str) -> None:
        if self.dimension == 2:
            raise InputError(f"{method} adds a 3-D body; a 2-D scene (Scene(dimension=2)) holds disks (add_disk, "
                             f"add_disks), ellipses (add_ellipse, add_ellipses) and line walls (add_wall)")

    # ------------------------------------------------------------------ periodic boundaries
    set_periodic = periodic_box.set_periodic

    @property
    def n_clumps(self) -> int:
        """Number of clumps (rigid aggregates of spheres, :meth:`add_clump`)."""
        return self._clumps.count

    def clump_members(self, clump: int) -> np.ndarray:
        """Body indices (n,) of the member spheres of clump ``clump``."""
        c = as_int("clump", clump, low=0)
        if c >= self._clumps.count:
            raise InputError(f"clump {clump!r} does not exist: the scene has {self._clumps.count} clumps")
        return self._clumps.first_body[c] + np.arange(self._clumps.templates[c].n_spheres)

    # ------------------------------------------------------------------ clumps
    add_clump = clumps.add_clump
    add_clumps = clumps.add_clumps

    # ------------------------------------------------------------------ disks and ellipses (2-D scenes)
    add_disk = plane_bodies.add_disk
    add_disks = plane_bodies.add_disks
    add_ellipse = plane_bodies.add_ellipse
    add_ellipses = plane_bodies.add_ellipses
    _need_2d = plane_bodies.need_2d

    # ------------------------------------------------------------------ spheres
    def add_sphere(self, position, radius, material, *, velocity=(0.0, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
        """Add one sphere and return its index.

        Parameters
        ----------
        position : 3 floats, m
            Centre.
        radius : float, m (> 0)
        material : Material
        velocity : 3 floats, m/s
        angular_velocity : 3 floats, rad/s (global frame)
        fixed : bool
            ``True`` makes a kinematic sphere: it moves at its prescribed velocity and angular
            velocity and ignores forces (change them with ``Simulation.set_velocity``).
        """
        self._need_3d("add_sphere")
        p, r, v, w = check_one_sphere(position, radius, velocity, angular_velocity)
        fixed = as_bool("fixed", fixed)
        mid = self._material_id(material)
        return int(self._spheres.add(p, r, mid, v, w, fixed)[0])

    def add_spheres(self, positions, radii, material, *, velocities=None, angular_velocities=None,
                    fixed: bool = False) -> np.ndarray:
        """Add N spheres at once; returns their indices as an (N,) int array.

        ``positions`` (N, 3) m; ``radii`` (N,) m or one radius for all; ``velocities`` and
        ``angular_velocities`` (N, 3) or one 3-vector for all (default zero).
        """
        self._need_3d("add_spheres")
        p, r, v, w = check_many_spheres(positions, radii, velocities, angular_velocities)
        fixed = as_bool("fixed", fixed)
        mid = self._material_id(material)
        return self._spheres.add(p, r, mid, v, w, fixed)

    def fill_box(self, lower, upper, radius, material, *, spacing=None, radius_spread=0.0, jitter=0.0,
                 seed=0, max_count=None, velocity=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Fill an axis-aligned box with spheres on a loose cubic lattice; returns their indices.

        See :func:`contactlab.scene.fill.lattice_in_box` for the parameters (radii in m, the spread
        and jitter as fractions).  Every sphere gets ``velocity`` (m/s).
        """
        self._need_3d("fill_box")
        pos, radii = lattice_in_box(lower, upper, radius, spacing=spacing, radius_spread=radius_spread,
                                    jitter=jitter, seed=seed, max_count=max_count)
        v = as_vec3("velocity", velocity, unit="m/s")
        return self.add_spheres(pos, radii, material, velocities=np.broadcast_to(v, pos.shape))

    def fill(self, region, distribution, material, *, packing_fraction=None, count=None, seed=0,
             method: str = "random", max_attempts: int = 10_000, velocity=None, order: str = "auto") -> np.ndarray:
        """Fill a region with spheres (disks in a 2-D scene) whose sizes follow a distribution;
        returns their indices.

        Parameters
        ----------
        region : box, sphere or cylinder of :mod:`contactlab.packing.regions`
            In a 2-D scene its section by the plane z = 0.
        distribution : :class:`~contactlab.distributions.SizeDistribution`
            Diameters, e.g. ``cl.distributions.LogNormal(median=2e-3, sigma=0.3)``.
        material : Material
        packing_fraction : float, or count : int
            The solid volume over the region's volume (area fraction in 2-D), or the number of
            particles; give one.
        seed : int
            Every random draw comes from it: the same seed gives the same spheres.
        method : ``"random"`` or ``"relax"``
            Random sequential addition (no overlap; jams near 0.30-0.38 in 3-D, 0.45-0.55 in 2-D) or
            level-set relaxation (3-D, up to about 0.55, overlaps below 1e-3 of the smaller radius);
            see :mod:`contactlab.scene.random_packing`.  A fraction it cannot reach raises an
            InputError and adds nothing.
        max_attempts : int
            Positions tried per sphere by random sequential addition (default 10000).
        velocity : 3 floats (2 in 2-D), m/s
            Every particle's velocity (default zero).
        order : ``"auto"``, ``"spatial"`` or ``"drawn"``
            The order the particles are added in: ``"spatial"`` along a space-filling curve
            (:func:`contactlab.packing.spatial_order`: particles that can touch are close in
            memory, which a fast simulation of a large scene needs), ``"drawn"`` as drawn,
            ``"auto"`` (default) spatial from 20,000 particles on and drawn below.
        """
        check_material(material)
        v = None if velocity is None else (as_vec2("velocity", velocity) if self.dimension == 2 else
                                           as_vec3("velocity", velocity, unit="m/s"))
        pos, radii = random_packing(region, distribution, dimension=self.dimension, thickness=self.thickness,
                                    packing_fraction=packing_fraction, count=count, seed=seed, method=method,
                                    max_attempts=max_attempts, order=order)
        vel = None if v is None else np.broadcast_to(v[: self.dimension], (len(radii), self.dimension))
        if self.dimension == 2:
            return self.add_disks(pos[:, :2], radii, material, velocities=vel)
        return self.add_spheres(pos, radii, material, velocities=vel)

    # ------------------------------------------------------------------ other shapes
    def _add_body(self, body: Body, material, velocity, angular_velocity, fixed) -> int:
        v = as_vec3("velocity", velocity, unit="m/s")
        w = as_vec3("angular_velocity", angular_velocity, unit="rad/s")
        fixed = as_bool("fixed", fixed)
        mid = self._material_id(material)
        return int(self._spheres.add(body.centre[None, :], np.array([body.bounding_radius]), mid, v[None, :],
                                     w[None, :], fixed, body=body)[0])

    def add_ellipsoid(self, position, semi_axes, material, *, orientation=None, velocity=(0.0, 0.0, 0.0),
                      angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
        """Add a solid ellipsoid and return its body index.

        Parameters
        ----------
        position : 3 floats, m
            Centre.
        semi_axes : 3 floats, m (> 0)
            Semi-axes ``(a, b, c)`` along the ellipsoid's own x, y, z axes.
        material : Material
            Its density gives the mass ``4/3 pi a b c rho`` and the principal moments
            ``m (b^2 + c^2) / 5`` etc.
        orientation : 3x3 rotation matrix (body to global) or unit quaternion (w, x, y, z)
            Default: the axes along the global ones.
        velocity, angular_velocity : 3 floats, m/s and rad/s (global frame)
        fixed : bool
            A kinematic body (moves at its prescribed velocities, ignores forces).

        Contacts with spheres and other ellipsoids use the common-normal method, with walls a
        closed form, with polyhedra, rolls and mesh triangles GJK/EPA.
        """
        self._need_3d("add_ellipsoid")
        body = ellipsoid_body(as_vec3("position", position, unit="m"), semi_axes, as_orientation("orientation", orientation),
                              check_material(material).density)
        return self._add_body(body, material, velocity, angular_velocity, fixed)

    def add_polyhedron(self, vertices, material, *, position=(0.0, 0.0, 0.0), orientation=None,
                       velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False,
                       mass=None, inertia=None) -> int:
        """Add a convex polyhedron (the convex hull of ``vertices``) and return its body index.

        ``vertices`` (n, 3), m, are given in the polyhedron's own frame, which is placed at
        ``position`` with ``orientation`` (3x3 rotation matrix or quaternion).  The centre of mass,
        the principal axes and moments are computed from the hull and the material's density
        (``mass``, kg, rescales them; ``inertia``, kg m^2, 3 moments or a 3x3 tensor in the
        polyhedron's frame, replaces them).  ``sim.positions`` reports the centre of mass and
        ``sim.orientations`` the principal frame.  At most 64 hull vertices.
        """
        self._need_3d("add_polyhedron")
        body = polyhedron_body(vertices, as_vec3("position", position, unit="m"), as_orientation("orientation", orientation),
                               check_material(material).density, mass, inertia)
        return self._add_body(body, material, velocity, angular_velocity, fixed)

    def add_box(self, position, half_extents, material, *, orientation=None, velocity=(0.0, 0.0, 0.0),
                angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
        """Add a rectangular box with ``half_extents`` ``(hx, hy, hz)`` (m) centred at ``position``
        (a convex polyhedron of 8 vertices); returns its body index."""
        self._need_3d("add_box")
        return self.add_polyhedron(box_vertices(half_extents), material, position=position, orientation=orientation,
                                   velocity=velocity, angular_velocity=angular_velocity, fixed=fixed)

    def add_convex_roll(self, position, orientation, hull_coefficients, length, material, *, mass=None, inertia=None,
                        velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
        """Add a convex roll (spec 003, Exudyn's ObjectContactConvexRoll) and return its body index.

        Parameters
        ----------
        position : 3 floats, m
            The roll's centre (axial coordinate 0).
        orientation : 3x3 rotation matrix (body to global) or unit quaternion
            The roll's axis is its local x axis.
        hull_coefficients : sequence of floats
            The hull radius ``r(x) = k_0 x^(n-1) + ... + k_(n-1)`` (m) for ``x`` in
            ``[-length/2, length/2]`` (numpy.polyval order, the spec's ``coefficientsHull``); it
            must be positive and concave (a convex body).  Its derivative and the bounding radius
            are computed from it.
        length : float, m
        material : Material
        mass : float, kg, optional
            Default: from the hull's volume and the density.
        inertia : 3 floats or 3x3, kg m^2, optional
            Principal moments about the centre of mass in the roll's frame (axis x); default from
            the hull and the density.
        velocity, angular_velocity : 3 floats, m/s, rad/s (global frame)

        Its contact with a plane wall is the spec's: bounding-sphere pre-check, contact point where
        the hull's slope matches the plane; use it with :class:`contactlab.models.ConvexRollContact`.
        ``sim.positions`` reports its centre of mass (the centre, for a symmetric hull).
        """
        self._need_3d("add_convex_roll")
        body = roll_body(as_vec3("position", position, unit="m"), as_orientation("orientation", orientation),
                         hull_coefficients, length, check_material(material).density, mass, inertia)
        return self._add_body(body, material, velocity, angular_velocity, fixed)

    # ------------------------------------------------------------------ meshes
    def add_mesh(self, source, material, *, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), centre=None,
                 scale: float = 1.0, name: str | None = None) -> int:
        """Add a triangle-mesh wall and return its mesh index (meshes are numbered separately).

        Parameters
        ----------
        source : path or (vertices, faces)
            An STL, OBJ (or any format trimesh reads) file, or arrays: vertices (V, 3), m, and
            triangles (F, 3) of vertex indices.
        material : Material
        velocity, angular_velocity : 3 floats, m/s and rad/s
            Kinematic motion: the mesh translates and turns rigidly about ``centre``.
        centre : 3 floats, m, optional
            The point the mesh turns about and its torque is reported about (default: the mean of
            its vertices).
        scale : float
            Multiplies the coordinates (1e-3 for a file in millimetres).
        name : str, optional

        Bodies touch each surface of the mesh once however many triangles it is cut into (no
        double counting at edges and vertices, no force jump rolling across them);
        ``Simulation.mesh_forces()`` and ``mesh_torques()`` give the load on each mesh.
        """
        self._need_3d("add_mesh")
        with self._new_material(material) as mid:   # registered only if the mesh is added
            return self._meshes.add(source, mid, velocity, angular_velocity, centre, scale, name)

    # ------------------------------------------------------------------ walls
    def add_wall(self, point, normal, material, *, velocity=None) -> int:
        """Add an infinite plane wall and return its index (walls are numbered separately).

        In a 2-D scene the wall is a line of the plane: ``point``, ``normal`` and ``velocity`` are
        then 2 floats each.

        Parameters
        ----------
        point : 3 floats, m
            Any point of the plane.
        normal : 3 floats
            Direction pointing into the half-space where the spheres are (normalised here).
        material : Material
            Its Young's modulus and Poisson ratio enter the contact stiffness; a wall has infinite
            mass and infinite radius of curvature.
        velocity : 3 floats, m/s
            Constant translation velocity of the wall (default None: at rest).
        """
        if self.dimension == 2:
            # a line of the plane: 2-D point, normal and velocity
            point = as_vec2("point", point)
            normal = as_vec2("normal", normal)
            velocity = np.zeros(3) if velocity is None else as_vec2("velocity", velocity)
        elif velocity is None:
            velocity = np.zeros(3)
        with self._new_material(material) as mid:   # registered only if the wall is added
            return self._walls.add(point, normal, mid, velocity)

    def add_cylinder_wall(self, axis_point, axis_direction, radius, material, *, side: str = "inside",
                          length=None, velocity=None) -> int:
        """Add a cylinder wall and return its index (numbered with the plane walls).

        Parameters
        ----------
        axis_point : 3 floats, m
            A point of the axis (it moves with the wall; ``length`` is measured from it).
        axis_direction : 3 floats
            Direction of the axis (normalised here).
        radius : float, m (> 0)
        material : Material
            As for a plane wall: its elastic constants enter the contact stiffness.
        side : "inside" or "outside"
            Where the bodies are: inside the cylinder (a silo, a triaxial cell, a drum) or around it
            (a pillar).  It decides the contacts of an infinite cylinder; an open-ended tube is
            touched from either side.
        length : None or 2 floats (low, high), m
            None: an infinite cylinder, one-sided like a plane.  ``(low, high)``: an open-ended tube
            between those positions along ``axis_direction`` from ``axis_point`` (one of them may
            be infinite), thin, touched from either side and at its rims.
        velocity : 3 floats, m/s
            Constant translation velocity (default None: at rest; the cylinder does not turn).

        Cylinder walls act on spheres (contacts with other shapes are not implemented); the
        contact geometry, its curvature (the effective radius the laws see) and the rims are
        described in :mod:`contactlab.geometry.sphere_cylinder` and ``docs/walls.md``.

        Example
        -------
        >>> import contactlab as cl
        >>> steel = cl.Material(density=7800.0, young=2e11, poisson=0.3)
        >>> scene = cl.Scene()
        >>> scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), 0.05, steel, length=(0.0, 0.2))
        0
        """
        if self.dimension == 2:
            raise InputError("add_cylinder_wall adds a 3-D wall; a 2-D scene takes line walls (add_wall)")
        with self._new_material(material) as mid:   # registered only if the wall is added
            return self._walls.add_cylinder(axis_point, axis_direction, radius, mid, side, length,
                                            np.zeros(3) if velocity is None else velocity)

    # ------------------------------------------------------------------ freeze
    def finalize(self) -> tuple[Model, State]:
        """Freeze the scene into a :class:`Model` and its initial :class:`State` (copies)."""
        s = self._spheres.arrays()
        w = self._walls.arrays()
        n = s["radius"].shape[0]
        if n == 0:
            if self.dimension == 2:
                raise InputError("the 2-D scene has no bodies; add some with add_disk, add_disks, add_ellipse or "
                                 "add_ellipses")
            raise InputError("the scene has no spheres or other bodies; add some with add_sphere, add_spheres, fill_box, "
                             "add_ellipsoid, add_polyhedron, add_box or add_convex_roll")
        dens = np.array([m.density for m in self._materials], dtype=np.float64)
        r = s["radius"]
        kind = s["kind"]
        if w["kind"].any() and (kind != SPHERE).any():
            k = int(np.flatnonzero(kind != SPHERE)[0])
            raise InputError(f"cylinder walls act on spheres only; body {k} is not a sphere (contacts of other "
                             f"shapes with cylinder walls are not implemented)")
        sphere = kind == SPHERE
        # disks (2-D): solid cylinders of the scene's thickness turning about z only, so the one
        # moment that matters, m r^2 / 2, stands for all three (the engine's isotropic sphere
        # inertia); ellipses brought theirs, m (a^2 + b^2) / 4, the same way
        round_mass, round_inertia = round_mass_inertia(dens[s["material"]], r, self.dimension, self.thickness)
        mass = np.where(sphere, round_mass, s["mass"])
        principal = np.where(sphere[:, None], np.repeat(round_inertia[:, None], 3, axis=1), s["principal_inertia"])
        inertia = principal.min(axis=1)
        fixed = s["fixed"].astype(bool)
        inv_mass = np.where(fixed, 0.0, 1.0 / mass)
        inv_inertia = np.where(fixed, 0.0, 1.0 / inertia)
        # shape parameters: one block per body (a sphere's is its radius), then the mesh triangles
        blocks, refs, offset, row = [], np.empty(n, dtype=np.int64), 0, 0
        for size, block in zip(self._spheres.chunk_sizes(), self._spheres.shape_blocks()):
            if block is None:
                blocks.append(r[row: row + size])
                refs[row: row + size] = offset + np.arange(size)
                offset += size
            else:  # one row per body, all of one length
                blocks.append(block.ravel())
                refs[row: row + size] = offset + block.shape[1] * np.arange(size)
                offset += block.size
            row += size
        mb = self._meshes
        tris = np.concatenate(mb.triangles) if mb.count else np.zeros((0, 3, 3))
        counts = np.array([len(t) for t in mb.triangles], dtype=np.int64)
        mesh_first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        tri_mesh = np.repeat(np.arange(mb.count, dtype=np.int64), counts)
        tri_ref = offset + 9 * np.arange(len(tris), dtype=np.int64)
        centres = np.array(mb.centres, dtype=float).reshape(-1, 3)
        local = (tris - centres[tri_mesh][:, None, :]).reshape(-1, 9) if len(tris) else np.zeros((0, 9))
        mesh_size = np.array([np.linalg.norm(t.reshape(-1, 3) - c, axis=1).max() for t, c in zip(mb.triangles, centres)])
        shape_data = np.concatenate(blocks + [tris.reshape(-1)]).astype(np.float64)
        model = Model(
            radius=r.copy(),
            mass=mass,
            inv_mass=inv_mass,
            inertia=inertia,
            inv_inertia=inv_inertia,
            material=s["material"].astype(np.uint16),
            fixed=fixed,
            wall_normal=w["normal"].copy(),
            wall_material=w["material"].copy(),
            wall_kind=w["kind"].copy(),
            wall_shape=w["shape"].copy(),
            materials=tuple(self._materials),
            gravity=self.gravity.copy(),
            shape_kind=kind.astype(np.uint8),
            shape_ref=refs,
            shape_data=shape_data.copy(),
            principal_inertia=np.ascontiguousarray(principal, dtype=np.float64),
            contact_radius=s["contact_radius"].astype(np.float64),
            mesh_material=np.array(mb.materials, dtype=np.uint16),
            mesh_names=tuple(mb.names),
            mesh_first=mesh_first,
            tri_mesh=tri_mesh,
            tri_ref=tri_ref,
            mesh_local=np.ascontiguousarray(local, dtype=np.float64),
            mesh_size=mesh_size.astype(np.float64).reshape(mb.count),
            dimension=self.dimension,
            thickness=self.thickness,
        )
        cell, images = periodic_box.cell_for(self, kind, w["kind"], w["normal"])
        quat = np.ascontiguousarray(s["orientation"], dtype=np.float64)
        state = State(
            cell=cell,
            images=images,
            positions=s["position"].copy(),
            velocities=s["velocity"].copy(),
            angular_velocities=s["angular_velocity"].copy(),
            orientations=quat,
            forces=np.zeros((n, 3)),
            torques=np.zeros((n, 3)),
            wall_points=w["point"].copy(),
            wall_velocities=w["velocity"].copy(),
            dissipated=np.zeros(n),
            boundary_work=np.zeros(n),
            mesh_positions=centres.copy(),
            mesh_orientations=np.tile([1.0, 0.0, 0.0, 0.0], (mb.count, 1)),
            mesh_velocities=np.array(mb.velocities, dtype=float).reshape(-1, 3),
            mesh_angular_velocities=np.array(mb.angular_velocities, dtype=float).reshape(-1, 3),
            shape_data=shape_data.copy(),
        )
        return self._clumps.attach(model, state, dens)
