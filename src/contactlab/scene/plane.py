"""Input of 2-D scenes: in-plane vectors and spins, lifted into the 3-D engine's arrays.

A 2-D scene (``Scene(dimension=2)``) is the plane z = 0 of the 3-D engine: its disks are bodies
whose centres, velocities and forces have a zero z component and whose angular velocity points
along z.  The engine's arithmetic keeps such a state exactly planar (every cross product of two
in-plane vectors points along z, and of an in-plane vector with a z spin lies in the plane), so
2-D input only has to be lifted once, here: ``(x, y)`` becomes ``(x, y, 0)`` and a spin ``w``
(rad/s, counter-clockwise positive) becomes ``(0, 0, w)``.

A disk is a solid cylinder of the scene's ``thickness`` t (m) whose axis is z: mass
``rho pi r^2 t`` and moment of inertia ``m r^2 / 2`` about its axis, the only axis it turns about.

An ellipse is a solid elliptic cylinder of the same thickness with semi-axes ``(a, b)`` along its
own x and y axes, turned by the angle ``theta`` (rad, counter-clockwise) about z: mass
``rho pi a b t`` and moment of inertia ``m (a^2 + b^2) / 4`` about z.  It is the body kind ELLIPSE
of :mod:`contactlab.geometry.shapes` (its block: ``a, b``), with the orientation quaternion
``(cos(theta/2), 0, 0, sin(theta/2))``, the bounding radius ``max(a, b)`` for the broad phase and
the contact radius ``min(a, b)`` (the length the overlap guard refers to, as for an ellipsoid).
As for a disk, the moment about z stands for all three principal moments: nothing turns about
another axis in the plane.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_finite, as_float_array, as_vector_array, fmt
from ..errors import InputError
from ..magnitudes import check_magnitude, check_magnitudes

__all__ = ["as_vec2", "as_vec2_array", "as_spin", "as_spin_array", "as_plane_angles", "as_semi_axes_2d",
           "in_plane", "disk_mass", "ellipse_properties", "z_quaternions", "DISK_INERTIA_FACTOR"]

#: the unit of a 2-vector by its argument's name (its range: :mod:`contactlab.magnitudes`)
_UNITS = {"position": "m", "positions": "m", "point": "m", "lower": "m", "upper": "m", "velocity": "m/s",
          "velocities": "m/s", "gravity": "m/s^2"}

#: a disk's moment of inertia about its axis, as a fraction of ``m r^2`` (solid cylinder)
DISK_INERTIA_FACTOR = 0.5


def as_vec2(name: str, value) -> np.ndarray:
    """Two finite floats ``(x, y)`` as the (3,) float64 array ``(x, y, 0)``."""
    arr = as_float_array(name, value)
    if arr.shape != (2,):
        raise InputError(f"{name} must be 2 numbers (x, y) in a 2-D scene, got shape {arr.shape}: {fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    check_magnitudes(name, arr, _UNITS.get(name, ""), positive=False)
    return np.array([arr[0], arr[1], 0.0])


def as_vec2_array(name: str, value, n: int | None = None) -> np.ndarray:
    """A finite (n, 2) array (one 2-vector is broadcast when ``n`` is given) as (n, 3), z = 0."""
    arr = as_vector_array(name, value, n, 2, " in a 2-D scene", unit=_UNITS.get(name, ""))
    out = np.zeros((arr.shape[0], 3))
    out[:, :2] = arr
    return out


def as_spin(name: str, value) -> np.ndarray:
    """A finite angular velocity about z (rad/s, one float) as the (3,) array ``(0, 0, w)``."""
    return np.array([0.0, 0.0, check_magnitude(name, as_finite(name, value), "rad/s", positive=False)])


def as_plane_angles(name: str, value, n: int) -> np.ndarray:
    """Per-body floats of a 2-D scene (angles in rad, spins in rad/s about z): (n,), or one float
    for all, as a finite (n,) array."""
    arr = as_float_array(name, value)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) in a 2-D scene (one number per body), got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{k}] must be finite, got {float(arr[k])!r}")
    return arr.copy()


def as_spin_array(name: str, value, n: int) -> np.ndarray:
    """Angular velocities about z, (n,) or one float for all, as (n, 3) arrays ``(0, 0, w)``."""
    out = np.zeros((n, 3))
    out[:, 2] = check_magnitudes(name, as_plane_angles(name, value, n), "rad/s", positive=False)
    return out


def as_semi_axes_2d(name: str, value, n: int | None = None) -> np.ndarray:
    """Semi-axes ``(a, b)`` (m, > 0) of ellipses: 2 numbers (``n`` None, one ellipse) or an (n, 2)
    array (one pair broadcast to all), as an (n, 2) float64 array (``n`` None: (1, 2))."""
    arr = as_float_array(name, value)
    if n is None:
        if arr.shape != (2,):
            raise InputError(f"{name} must be 2 lengths (a, b) in m in a 2-D scene, got shape {arr.shape}: "
                             f"{fmt(value)}")
        axes = arr[None, :].astype(np.float64)
    else:
        axes = as_vector_array(name, arr, n, 2, " in a 2-D scene")
    bad = ~(np.isfinite(axes) & (axes > 0.0)).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        where = name if n is None else f"{name}[{k}]"
        raise InputError(f"{where} must be 2 finite lengths > 0 m (a, b), got {axes[k].tolist()}")
    return check_magnitudes(name, axes, "m")


def ellipse_properties(density: float, axes: np.ndarray, thickness: float):
    """Mass (kg, (n,)) and moment of inertia about z (kg m^2, (n,)) of solid elliptic cylinders of
    semi-axes ``axes`` ((n, 2), m) and ``thickness`` (m): ``rho pi a b t`` and ``m (a^2 + b^2) / 4``."""
    a, b = axes[:, 0], axes[:, 1]
    mass = density * math.pi * a * b * thickness
    return mass, 0.25 * mass * (a * a + b * b)


def z_quaternions(angles: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions ``(cos(theta/2), 0, 0, sin(theta/2))`` of rotations by ``angles``
    ((n,), rad, counter-clockwise) about z."""
    out = np.zeros((len(angles), 4))
    out[:, 0] = np.cos(0.5 * angles)
    out[:, 3] = np.sin(0.5 * angles)
    return out


def in_plane(name: str, value, *, spin: bool = False) -> np.ndarray:
    """A value given to a 2-D simulation as (3,): 2 numbers or 3 with z = 0 (``spin``: one float
    about z, or 3 numbers along z).  Anything out of the plane is refused."""
    arr = as_float_array(name, value)
    if spin and arr.ndim == 0:
        return as_spin(name, value)
    if not spin and arr.shape == (2,):
        return as_vec2(name, value)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        want = "one number (about z) or 3 numbers (0, 0, w)" if spin else "2 numbers (x, y) or 3 numbers (x, y, 0)"
        raise InputError(f"{name} must be {want} in a 2-D simulation, got {fmt(value)}")
    off = arr[:2] if spin else arr[2:]
    if np.any(off != 0.0):
        what = "point along z" if spin else "lie in the x-y plane (z = 0)"
        raise InputError(f"{name} must {what} in a 2-D simulation, got {arr.tolist()}")
    return arr.copy()


def disk_mass(density: np.ndarray, radius: np.ndarray, thickness: float) -> np.ndarray:
    """Mass (kg) of solid disks of ``radius`` (m) and ``thickness`` (m): ``rho pi r^2 t``."""
    return density * math.pi * radius**2 * thickness


def round_mass_inertia(density: np.ndarray, radius: np.ndarray, dimension: int,
                       thickness: float) -> tuple[np.ndarray, np.ndarray]:
    """Mass (kg) and moment of inertia (kg m^2) of solid spheres (3-D: ``4/3 pi r^3 rho`` and
    ``2/5 m r^2``) or of disks of the scene's ``thickness`` (2-D: ``pi r^2 t rho`` and
    ``m r^2 / 2``): what :meth:`contactlab.Scene.finalize` gives a round body, and a particle
    stream a new one."""
    if dimension == 2:
        mass = disk_mass(density, radius, thickness)
        return mass, DISK_INERTIA_FACTOR * mass * radius**2
    mass = density * (4.0 / 3.0) * np.pi * radius**3
    return mass, 0.4 * mass * radius**2
