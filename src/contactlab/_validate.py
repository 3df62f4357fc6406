"""Input checks shared by the builders.  Each raises :class:`InputError` naming the bad value."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "as_vec3",
    "as_vec3_array",
    "as_positive",
    "as_nonnegative",
    "as_finite",
    "as_positive_array",
    "as_unit_normal",
]


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


def as_finite(name: str, value: Any) -> float:
    """A finite float, else an error naming ``name``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {_fmt(value)}") from None
    if not math.isfinite(x):
        raise InputError(f"{name} must be finite, got {x!r}")
    return x


def as_positive(name: str, value: Any, unit: str = "") -> float:
    """A finite float > 0."""
    x = as_finite(name, value)
    if x <= 0.0:
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be > 0{u}, got {x!r}")
    return x


def as_nonnegative(name: str, value: Any, unit: str = "") -> float:
    """A finite float >= 0."""
    x = as_finite(name, value)
    if x < 0.0:
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be >= 0{u}, got {x!r}")
    return x


def as_vec3(name: str, value: Any) -> np.ndarray:
    """Three finite floats as a float64 array of shape (3,)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be 3 numbers, got {_fmt(value)}") from None
    if arr.shape != (3,):
        raise InputError(f"{name} must be 3 numbers (x, y, z), got shape {arr.shape}: {_fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    return arr.copy()


def as_vec3_array(name: str, value: Any, n: int | None = None) -> np.ndarray:
    """A finite float64 array of shape (n, 3); a single 3-vector is broadcast when ``n`` is given."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an (N, 3) array of numbers") from None
    if arr.ndim == 1 and arr.shape == (3,) and n is not None:
        arr = np.broadcast_to(arr, (n, 3))
    if arr.ndim != 2 or arr.shape[1] != 3 or (n is not None and arr.shape[0] != n):
        want = f"({n}, 3)" if n is not None else "(N, 3)"
        raise InputError(f"{name} must have shape {want}, got {arr.shape}")
    bad = ~np.all(np.isfinite(arr), axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{k}] must be finite, got {arr[k].tolist()}")
    return np.array(arr, dtype=np.float64, copy=True)


def as_positive_array(name: str, value: Any, n: int, unit: str = "") -> np.ndarray:
    """A float64 array of shape (n,) with every entry finite and > 0 (a scalar is broadcast)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got {arr.shape}")
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        u = f" {unit}" if unit else ""
        raise InputError(f"{name}[{k}] must be finite and > 0{u}, got {arr[k]!r}")
    return np.array(arr, dtype=np.float64, copy=True)


def as_unit_normal(name: str, value: Any) -> np.ndarray:
    """A nonzero finite 3-vector, normalised to unit length."""
    v = as_vec3(name, value)
    norm = float(np.linalg.norm(v))
    if not norm > 1e-300:
        raise InputError(f"{name} must be a nonzero vector, got {v.tolist()}")
    return v / norm
