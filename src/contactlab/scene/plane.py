"""Input of 2-D scenes: in-plane vectors and spins, lifted into the 3-D engine's arrays.

A 2-D scene (``Scene(dimension=2)``) is the plane z = 0 of the 3-D engine: its disks are bodies
whose centres, velocities and forces have a zero z component and whose angular velocity points
along z.  The engine's arithmetic keeps such a state exactly planar (every cross product of two
in-plane vectors points along z, and of an in-plane vector with a z spin lies in the plane), so
2-D input only has to be lifted once, here: ``(x, y)`` becomes ``(x, y, 0)`` and a spin ``w``
(rad/s, counter-clockwise positive) becomes ``(0, 0, w)``.

A disk is a solid cylinder of the scene's ``thickness`` t (m) whose axis is z: mass
``rho pi r^2 t`` and moment of inertia ``m r^2 / 2`` about its axis, the only axis it turns about.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_finite, as_float_array, as_vector_array, fmt
from ..errors import InputError

__all__ = ["as_vec2", "as_vec2_array", "as_spin", "as_spin_array", "in_plane", "disk_mass", "DISK_INERTIA_FACTOR"]

#: a disk's moment of inertia about its axis, as a fraction of ``m r^2`` (solid cylinder)
DISK_INERTIA_FACTOR = 0.5


def as_vec2(name: str, value) -> np.ndarray:
    """Two finite floats ``(x, y)`` as the (3,) float64 array ``(x, y, 0)``."""
    arr = as_float_array(name, value)
    if arr.shape != (2,):
        raise InputError(f"{name} must be 2 numbers (x, y) in a 2-D scene, got shape {arr.shape}: {fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    return np.array([arr[0], arr[1], 0.0])


def as_vec2_array(name: str, value, n: int | None = None) -> np.ndarray:
    """A finite (n, 2) array (one 2-vector is broadcast when ``n`` is given) as (n, 3), z = 0."""
    arr = as_vector_array(name, value, n, 2, " in a 2-D scene")
    out = np.zeros((arr.shape[0], 3))
    out[:, :2] = arr
    return out


def as_spin(name: str, value) -> np.ndarray:
    """A finite angular velocity about z (rad/s, one float) as the (3,) array ``(0, 0, w)``."""
    return np.array([0.0, 0.0, as_finite(name, value)])


def as_spin_array(name: str, value, n: int) -> np.ndarray:
    """Angular velocities about z, (n,) or one float for all, as (n, 3) arrays ``(0, 0, w)``."""
    arr = as_float_array(name, value)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) in a 2-D scene (one spin about z per disk), got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{k}] must be finite, got {float(arr[k])!r}")
    out = np.zeros((n, 3))
    out[:, 2] = arr
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
