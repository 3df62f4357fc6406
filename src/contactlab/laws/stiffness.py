"""What the time-step bounds see of a contact: its springs and dashpots, sense by sense.

A contact law is nonlinear, but over one time step it acts on the two bodies like a set of springs
and dashpots: along the normal (``normal``, N/m, and ``normal_damping``, N s/m), in the tangent
plane at the contact point (``tangential``, ``tangential_damping``), on the relative rotation about
a tangent axis (``rolling``, N m/rad, ``rolling_damping``, N m s/rad) and about the normal
(``twisting``, ``twisting_damping``).  :class:`ContactSprings` holds these eight numbers (or
eight arrays, one value per contact); a law says them for a pair of bodies at an overlap through
:meth:`contactlab.laws.base.ContactModel.contact_springs` (in closed form for the built-in laws,
by probing the law otherwise: :func:`contactlab.stability.estimate_contact_springs`).

Springs of one contact in parallel add (a bond beside a frictional contact): ``a + b``.

:func:`single_contact_limit` is the stable step of one contact alone, the smallest over its senses
of the damped oscillator's ``(2/omega)(sqrt(1 + zeta^2) - zeta)``; the bound of a packing, where a
body's contacts act together, is :mod:`contactlab.engine.stability_bound`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

__all__ = ["ContactSprings", "COLUMNS", "UNITS", "single_contact_limit", "verlet_limit"]

#: the eight numbers, in the order of :meth:`ContactSprings.rows`
COLUMNS = ("normal", "tangential", "rolling", "twisting", "normal_damping", "tangential_damping", "rolling_damping",
           "twisting_damping")
#: their SI units
UNITS = ("N/m", "N/m", "N m/rad", "N m/rad", "N s/m", "N s/m", "N m s/rad", "N m s/rad")


def verlet_limit(omega: float, zeta: float) -> float:
    """Largest stable step of a damped oscillator under the engine's integrator (velocity Verlet,
    the dashpot on the velocity predicted with the mean of the last two accelerations):
    ``(2 / omega) (sqrt(1 + zeta^2) - zeta)``; ``inf`` when ``omega == 0``.  It is where a
    period-2 oscillation of the step stops decaying (``omega^2 dt^2 + 4 zeta omega dt = 4``)."""
    if omega <= 0.0:
        return math.inf
    return (2.0 / omega) * (math.sqrt(1.0 + zeta * zeta) - zeta)


def _dashpot_limit(mass: float, damping: float) -> float:
    """A dashpot alone (no spring): ``2 m / c`` (the limit above as omega -> 0)."""
    return 2.0 * mass / damping if damping > 0.0 else math.inf


@dataclass(frozen=True)
class ContactSprings:
    """The springs (N/m, N m/rad) and dashpots (N s/m, N m s/rad) of a contact, per sense.

    Floats for one contact, or arrays of one value per contact (the bound of a packing).  Zero
    where the law has nothing in a sense (a frictionless contact has no tangential spring: its
    sliding limit is zero).
    """

    normal: float = 0.0
    tangential: float = 0.0
    rolling: float = 0.0
    twisting: float = 0.0
    normal_damping: float = 0.0
    tangential_damping: float = 0.0
    rolling_damping: float = 0.0
    twisting_damping: float = 0.0

    def __add__(self, other: "ContactSprings") -> "ContactSprings":
        """Two sets of springs and dashpots in parallel (a bond and a contact): they add."""
        return ContactSprings(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def where(self, mask, other: "ContactSprings") -> "ContactSprings":
        """Per contact, this one where ``mask`` holds, ``other`` elsewhere (arrays)."""
        return ContactSprings(*(np.where(mask, getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))

    def rows(self, n: int) -> np.ndarray:
        """``(n, 8)`` float64: the eight numbers per contact, columns :data:`COLUMNS`."""
        out = np.empty((n, len(COLUMNS)))
        for c, name in enumerate(COLUMNS):
            out[:, c] = np.broadcast_to(np.asarray(getattr(self, name), dtype=float), (n,))
        return out

    @classmethod
    def from_row(cls, row) -> "ContactSprings":
        return cls(*(float(x) for x in row))


def single_contact_limit(s: ContactSprings, case) -> float:
    """The stable step (s) of one contact alone: normal oscillation on the effective mass,
    tangential on the effective mass of sliding (rotation included), rolling and twisting on the
    relative moment of inertia (``case``: a :class:`~contactlab.laws.base.PairCase`), each the
    damped oscillator's :func:`verlet_limit`, or ``2 m / c`` for a dashpot without a spring."""
    limit = math.inf
    senses = ((s.normal, s.normal_damping, case.mass), (s.tangential, s.tangential_damping, case.tangential_mass),
              (s.rolling, s.rolling_damping, case.rotational_inertia),
              (s.twisting, s.twisting_damping, case.rotational_inertia))
    for k, c, inertia in senses:
        k, c, inertia = float(k), float(c), float(inertia)
        if not (math.isfinite(inertia) and inertia > 0.0):
            continue
        if k > 0.0:
            limit = min(limit, verlet_limit(math.sqrt(k / inertia), c / (2.0 * math.sqrt(k * inertia))))
        else:
            limit = min(limit, _dashpot_limit(inertia, c))
    return limit
