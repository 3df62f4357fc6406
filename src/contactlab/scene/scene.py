"""The scene builder: a mutable, validating collection of spheres, walls and materials."""
from __future__ import annotations

import numpy as np

from .._validate import as_vec3
from ..errors import InputError
from ..materials import Material
from ..model import Model
from ..state import State
from .fill import lattice_in_box
from .particles import SphereBuilder, check_many_spheres, check_material, check_one_sphere
from .walls import WallBuilder

__all__ = ["Scene"]


class Scene:
    """What to simulate: spheres, walls, materials and gravity.

    Build it with the ``add_*`` methods (each validates its input and either adds everything or
    nothing), then pass it to :class:`contactlab.Simulation`.  All quantities are SI.

    Parameters
    ----------
    gravity : 3 floats, m/s^2
        Gravitational acceleration, default ``(0, 0, -9.81)``.

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

    def __init__(self, gravity=(0.0, 0.0, -9.81)):
        self.gravity = as_vec3("gravity", gravity)
        self._spheres = SphereBuilder()
        self._walls = WallBuilder()
        self._materials: list[Material] = []

    # ------------------------------------------------------------------ materials
    def _material_id(self, material) -> int:
        material = check_material(material)
        for k, m in enumerate(self._materials):
            if m is material:
                return k
        if len(self._materials) >= 65535:
            raise InputError("a scene can hold at most 65535 different materials")
        self._materials.append(material)
        return len(self._materials) - 1

    @property
    def materials(self) -> tuple[Material, ...]:
        """Materials in the order they were first used."""
        return tuple(self._materials)

    @property
    def n_spheres(self) -> int:
        return self._spheres.count

    @property
    def n_walls(self) -> int:
        return self._walls.count

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
        p, r, v, w = check_one_sphere(position, radius, velocity, angular_velocity)
        mid = self._material_id(material)
        return int(self._spheres.add(p, r, mid, v, w, bool(fixed))[0])

    def add_spheres(self, positions, radii, material, *, velocities=None, angular_velocities=None,
                    fixed: bool = False) -> np.ndarray:
        """Add N spheres at once; returns their indices as an (N,) int array.

        ``positions`` (N, 3) m; ``radii`` (N,) m or one radius for all; ``velocities`` and
        ``angular_velocities`` (N, 3) or one 3-vector for all (default zero).
        """
        p, r, v, w = check_many_spheres(positions, radii, velocities, angular_velocities)
        mid = self._material_id(material)
        return self._spheres.add(p, r, mid, v, w, bool(fixed))

    def fill_box(self, lower, upper, radius, material, *, spacing=None, radius_spread=0.0, jitter=0.0,
                 seed=0, max_count=None, velocity=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Fill an axis-aligned box with spheres on a loose cubic lattice; returns their indices.

        See :func:`contactlab.scene.fill.lattice_in_box` for the parameters (radii in m, the spread
        and jitter as fractions).  Every sphere gets ``velocity`` (m/s).
        """
        pos, radii = lattice_in_box(lower, upper, radius, spacing=spacing, radius_spread=radius_spread,
                                    jitter=jitter, seed=seed, max_count=max_count)
        v = as_vec3("velocity", velocity)
        return self.add_spheres(pos, radii, material, velocities=np.broadcast_to(v, pos.shape))

    # ------------------------------------------------------------------ walls
    def add_wall(self, point, normal, material, *, velocity=(0.0, 0.0, 0.0)) -> int:
        """Add an infinite plane wall and return its index (walls are numbered separately).

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
            Constant translation velocity of the wall (default at rest).
        """
        mid = self._material_id(material)
        return self._walls.add(point, normal, mid, velocity)

    # ------------------------------------------------------------------ freeze
    def finalize(self) -> tuple[Model, State]:
        """Freeze the scene into a :class:`Model` and its initial :class:`State` (copies)."""
        s = self._spheres.arrays()
        w = self._walls.arrays()
        n = s["radius"].shape[0]
        if n == 0:
            raise InputError("the scene has no spheres; add some with add_sphere, add_spheres or fill_box")
        dens = np.array([m.density for m in self._materials], dtype=np.float64)
        r = s["radius"]
        mass = dens[s["material"]] * (4.0 / 3.0) * np.pi * r**3
        inertia = 0.4 * mass * r**2
        fixed = s["fixed"].astype(bool)
        inv_mass = np.where(fixed, 0.0, 1.0 / mass)
        inv_inertia = np.where(fixed, 0.0, 1.0 / inertia)
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
            materials=tuple(self._materials),
            gravity=self.gravity.copy(),
        )
        quat = np.zeros((n, 4))
        quat[:, 0] = 1.0
        state = State(
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
        )
        return model, state
