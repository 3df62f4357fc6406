"""The physical range of each kind of quantity, checked once wherever a value of that unit enters.

A radius of 1e300 m or 1e-300 m, a density of 1e300 kg/m^3 or a speed of 1e300 m/s is not a
scene anyone means: in double precision its mass, stiffness or time step overflows or underflows
(a radius of 1e-300 m gives a zero mass and a division by zero in the laws, 1e300 an infinite one),
and a run that starts from it either fails far from the cause or never ends.  So every entry point
that takes a value with a unit (the API's builders, and through them the scene files, the command
line and the ensembles) checks it against the range below and refuses a value outside with its
name, the range and the consequence.  The ranges are wide on purpose: from nano-powders to
boulders, from aerogels to density-scaled quasi-static samples, from gels to walls made rigid; a value
outside any of them is a mistake (a unit slip, a missing sign, an exponent typed twice).

:data:`RANGES` holds, per unit, ``(smallest magnitude, largest magnitude, what it is)``; the
smallest applies to values that must be positive (a zero or a negative value gets its own error),
the largest to every value and to each component of a vector.  A unit not in the table (a
dimensionless ratio, "s", whose bound is the run's length) is not checked here.
"""
from __future__ import annotations

import math
import os

import numpy as np

from .errors import InputError

__all__ = ["RANGES", "check_magnitude", "check_magnitudes", "check_body_count", "physical_memory", "BYTES_PER_BODY"]

#: unit -> (smallest magnitude of a positive value, largest magnitude, what the range covers)
RANGES: dict[str, tuple[float, float, str]] = {
    "m": (1e-10, 1e7, "a length, from an atom to a planet"),
    "m^2": (1e-20, 1e14, "an area, of lengths from an atom to a planet"),
    "m^3": (1e-30, 1e21, "a volume, of lengths from an atom to a planet"),
    "kg/m^3": (1e-2, 1e20, "a density, from an aerogel to a body made immobile by a density of 1e12 kg/m^3 or more"),
    "Pa": (1e-6, 1e30, "a modulus or a stress, from a gel to a wall made rigid by a modulus of 1e20-1e25 Pa"),
    "kg": (1e-30, 1e25, "a mass, of bodies from an atom to a planet"),
    "N/m": (1e-9, 1e16, "a contact stiffness"),
    "N": (1e-30, 1e25, "a force"),
    "m/s": (0.0, 1e5, "a speed, up to ten times a planet's escape velocity"),
    "m/s^2": (0.0, 1e7, "an acceleration, up to a million g"),
    "rad/s": (0.0, 1e9, "an angular velocity (1e9 rad/s turns a 1 um bead's surface at 1 km/s)"),
}

_CONSEQUENCE = ("outside it a run's masses, stiffnesses and time step overflow or underflow double precision, "
                "or the run never ends; check the unit (SI throughout: m, kg, s, Pa)")


def _problem(name: str, value: float, unit: str, positive: bool) -> str | None:
    low, high, what = RANGES[unit]
    size = abs(value)
    if size > high or (positive and 0.0 < size < low):
        bound = f"{low:g} to {high:g} {unit}" if positive and low > 0.0 else f"at most {high:g} {unit} in size"
        return f"{name} = {value!r} {unit} is outside the range allowed for {what} ({bound}); {_CONSEQUENCE}"
    return None


def check_magnitude(name: str, value: float, unit: str, *, positive: bool = True) -> float:
    """``value`` if it lies in the range of ``unit`` (:data:`RANGES`), else an :class:`InputError`
    naming it; ``positive``: the value is a positive magnitude (its lower bound applies too)."""
    if unit in RANGES and math.isfinite(value):
        problem = _problem(name, value, unit, positive)
        if problem is not None:
            raise InputError(problem)
    return value


def check_magnitudes(name: str, values: np.ndarray, unit: str, *, positive: bool = True) -> np.ndarray:
    """:func:`check_magnitude` for each entry of ``values`` (any shape; the first one outside is
    named with its index)."""
    if unit not in RANGES or values.size == 0:
        return values
    low, high, _ = RANGES[unit]
    size = np.abs(values)
    bad = size > high
    if positive and low > 0.0:
        bad |= (size > 0.0) & (size < low)
    if bad.any():
        index = np.unravel_index(int(np.flatnonzero(bad)[0]), values.shape)
        where = f"{name}[{', '.join(str(int(k)) for k in index)}]" if values.ndim else name
        raise InputError(_problem(where, float(values[index]), unit, positive))
    return values


#: bytes a body costs a run (state, model, contacts and neighbour lists: ~0.85-1 kB a sphere
#: measured at 1e6, benchmarks/README.md), to size a request against the machine's memory
BYTES_PER_BODY = 1000


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def check_body_count(what: str, count: float, hint: str) -> None:
    """Refuse a request for ``count`` bodies (``what`` names the request) that would not fit in this
    machine's memory at :data:`BYTES_PER_BODY` a body, before anything is allocated; ``hint`` says
    which setting bounds it."""
    memory = physical_memory()
    if memory is None or not count * BYTES_PER_BODY > memory:
        return
    raise InputError(f"{what} would make {count:.4g} bodies, about {count * BYTES_PER_BODY / 2**30:.3g} GiB at "
                     f"~{BYTES_PER_BODY} B a body, more than this machine's {memory / 2**30:.3g} GiB of memory; {hint}")
