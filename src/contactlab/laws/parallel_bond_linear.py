"""Law module of :class:`~contactlab.models.ParallelBond` with the :class:`~contactlab.models.LinearSpringDashpot`
contact: the bond (:func:`~contactlab.laws.parallel_bond.bond_part`) and the contact act in parallel.

History: the bond's 9 floats, then the contact's.  Pair table: the bond's 6 columns, then the
contact's.  Dissipation terms: the contact's, the bond's dashpots, the energy released at breakage.
"""
from __future__ import annotations

from .._jit import jit
from .linear_spring_dashpot import HISTORY_SIZE as CONTACT_HISTORY
from .linear_spring_dashpot import law as contact_law
from .parallel_bond import BOND_COLUMNS, BOND_HISTORY, BOND_REASONS, DISSIPATION_TERMS, bond_part, with_contact

__all__ = ["law", "HISTORY_SIZE", "BOND_FIELD", "BOND_REASONS", "DISSIPATION_TERMS", "INTERACTION_RANGE"]

INTERACTION_RANGE = 0.0
HISTORY_SIZE = BOND_HISTORY + CONTACT_HISTORY
BOND_FIELD = 0


@jit
def law(g, p, h, dt):
    """Bond plus contact; returns ``(force on i, couple on i, stored, (contact, viscous_bond,
    bond_breakage), active, new h)``."""
    return with_contact(bond_part(g, p, h[:BOND_HISTORY], dt),
                        contact_law(g, p[BOND_COLUMNS:], h[BOND_HISTORY:], dt))
