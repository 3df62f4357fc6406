"""The slots of a contact law: what each one computes, the arguments it takes and what it returns.

A model made of slot laws composes them in :data:`ORDER` (normal, damping, tangential, rolling,
twisting), handing the normal force (plus damping) to the friction slots; a ``coupled`` law is a
whole contact on its own.  The table of signatures and sign conventions is in
:mod:`contactlab.laws.define`; this module is the one place the slots are declared, read by the
decorator, the composition of the generated law module and the trial checks.
"""
from __future__ import annotations

__all__ = ["SLOTS", "ORDER", "VECTOR_RETURNS"]

#: slot -> (extra arguments after ``dt``, names of the returned values)
SLOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "normal": ((), ("normal_force", "stored_energy", "dissipation", "active", "new_history")),
    "damping": (("elastic_force",), ("damping_force", "new_history")),
    "tangential": (("normal_force",), ("force", "stored_energy", "dissipation", "new_history")),
    "rolling": (("normal_force",), ("couple", "stored_energy", "dissipation", "new_history")),
    "twisting": (("normal_force",), ("couple", "stored_energy", "dissipation", "new_history")),
    "coupled": ((), ("force", "couple", "stored_energy", "dissipation", "active", "new_history")),
}
#: the order in which the slots of a composite act (a coupled law stands alone)
ORDER = ("normal", "damping", "tangential", "rolling", "twisting")
#: returned values that are 3-vectors (tuples of three floats, global frame)
VECTOR_RETURNS = frozenset({"force", "couple"})
