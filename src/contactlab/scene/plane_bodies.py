"""The 2-D bodies of :class:`~contactlab.scene.scene.Scene`: disks and ellipses in the x-y plane.

Functions of the scene (``self`` a :class:`Scene`), bound in its class body as ``Scene.add_disk``,
``add_disks``, ``add_ellipse``, ``add_ellipses``: the builder split by domain, one file each.
"""
from __future__ import annotations

import numpy as np

from .._arguments import as_bool, as_finite, as_positive, as_positive_array
from ..errors import InputError
from ..geometry.shapes import ELLIPSE
from .particles import check_material
from .plane import (as_plane_angles, as_semi_axes_2d, as_spin, as_spin_array, as_vec2, as_vec2_array,
                    ellipse_properties, z_quaternions)

__all__ = ["add_disk", "add_disks", "add_ellipse", "add_ellipses", "need_2d"]



def add_disk(self, position, radius, material, *, velocity=(0.0, 0.0), angular_velocity=0.0,
             fixed: bool = False) -> int:
    """Add one disk to a 2-D scene and return its index.

    Parameters
    ----------
    position : 2 floats, m
        Centre in the x-y plane.
    radius : float, m (> 0)
    material : Material
        Its density gives the mass ``rho pi r^2 t`` (``t``: the scene's ``thickness``).
    velocity : 2 floats, m/s
    angular_velocity : float, rad/s
        Spin about z, counter-clockwise positive.
    fixed : bool
        ``True`` makes a kinematic disk (see :meth:`add_sphere`).
    """
    self._need_2d("add_disk")
    p = as_vec2("position", position)
    r = as_positive("radius", radius, "m")
    v = as_vec2("velocity", velocity)
    w = as_spin("angular_velocity", angular_velocity)
    fixed = as_bool("fixed", fixed)
    mid = self._material_id(material)
    return int(self._spheres.add(p[None, :], np.array([r]), mid, v[None, :], w[None, :], fixed)[0])


def add_disks(self, positions, radii, material, *, velocities=None, angular_velocities=None,
              fixed: bool = False) -> np.ndarray:
    """Add N disks to a 2-D scene at once; returns their indices as an (N,) int array.

    ``positions`` (N, 2) m; ``radii`` (N,) m or one radius for all; ``velocities`` (N, 2) or
    one 2-vector for all; ``angular_velocities`` (N,) rad/s about z or one value for all
    (default zero).
    """
    self._need_2d("add_disks")
    p = as_vec2_array("positions", positions)
    n = p.shape[0]
    r = as_positive_array("radii", radii, n, "m")
    v = np.zeros((n, 3)) if velocities is None else as_vec2_array("velocities", velocities, n)
    w = np.zeros((n, 3)) if angular_velocities is None else as_spin_array("angular_velocities",
                                                                           angular_velocities, n)
    fixed = as_bool("fixed", fixed)
    mid = self._material_id(material)
    return self._spheres.add(p, r, mid, v, w, fixed)


def add_ellipse(self, position, semi_axes, material, *, angle=0.0, velocity=(0.0, 0.0), angular_velocity=0.0,
                fixed: bool = False) -> int:
    """Add one ellipse to a 2-D scene and return its index.

    Parameters
    ----------
    position : 2 floats, m
        Centre in the x-y plane.
    semi_axes : 2 floats, m (> 0)
        ``(a, b)`` along the ellipse's own x and y axes.
    material : Material
        Its density gives the mass ``rho pi a b t`` and the moment of inertia about z
        ``m (a^2 + b^2) / 4`` (``t``: the scene's ``thickness``; a solid elliptic cylinder).
    angle : float, rad
        Counter-clockwise turn of the ellipse's x axis from the global x axis.
    velocity : 2 floats, m/s
    angular_velocity : float, rad/s
        Spin about z, counter-clockwise positive.
    fixed : bool
        ``True`` makes a kinematic ellipse (see :meth:`add_sphere`).

    Contacts with ellipses and disks use the common-normal method in the plane (an ellipse with
    ``a = b = r`` behaves as a disk of radius ``r``), with line walls a closed form; the laws
    see the radius of curvature at the contact point.  ``sim.orientations[k]`` is
    ``(cos(theta/2), 0, 0, sin(theta/2))``.
    """
    self._need_2d("add_ellipse")
    return int(self.add_ellipses([as_vec2("position", position)[:2]], as_semi_axes_2d("semi_axes", semi_axes),
                                 material, angles=as_finite("angle", angle),
                                 velocities=[as_vec2("velocity", velocity)[:2]],
                                 angular_velocities=as_finite("angular_velocity", angular_velocity),
                                 fixed=fixed)[0])


def add_ellipses(self, positions, semi_axes, material, *, angles=0.0, velocities=None, angular_velocities=None,
                 fixed: bool = False) -> np.ndarray:
    """Add N ellipses to a 2-D scene at once; returns their indices as an (N,) int array.

    ``positions`` (N, 2) m; ``semi_axes`` (N, 2) m, ``(a, b)`` per ellipse, or one pair for
    all; ``angles`` (N,) rad or one angle for all; ``velocities`` (N, 2) m/s or one 2-vector
    for all; ``angular_velocities`` (N,) rad/s about z or one value for all (default zero).
    See :meth:`add_ellipse`.
    """
    self._need_2d("add_ellipses")
    p = as_vec2_array("positions", positions)
    n = p.shape[0]
    axes = as_semi_axes_2d("semi_axes", semi_axes, n)
    theta = as_plane_angles("angles", angles, n)
    v = np.zeros((n, 3)) if velocities is None else as_vec2_array("velocities", velocities, n)
    w = np.zeros((n, 3)) if angular_velocities is None else as_spin_array("angular_velocities",
                                                                           angular_velocities, n)
    fixed = as_bool("fixed", fixed)
    mass, moment = ellipse_properties(check_material(material).density, axes, self.thickness)
    mid = self._material_id(material)
    return self._spheres.add_shapes(p, axes.max(axis=1), mid, v, w, fixed, ELLIPSE, axes, mass,
                                    np.repeat(moment[:, None], 3, axis=1), z_quaternions(theta), axes.min(axis=1))


def need_2d(self, method: str) -> None:
    """Refuse a 2-D builder in a 3-D scene, naming ``method``."""
    if self.dimension != 2:
        raise InputError(f"{method} needs a 2-D scene: make it with cl.Scene(dimension=2); a 3-D scene holds "
                         f"spheres (add_sphere, add_spheres), ellipsoids (add_ellipsoid) and other 3-D bodies")
