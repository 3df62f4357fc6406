"""Deliberately wrong contact models, to show that the validation battery's checks detect faults.

Each law lives in its own module (``helpers.faulty_*``: a law module defines one ``law``); the models
share :class:`FaultyModel`.  Every law is a linear spring ``k delta`` in the normal direction plus
one fault; the tests probe them as plain Python (``debug=True``), so nothing is compiled.
"""
from __future__ import annotations

import math

import numpy as np

from contactlab.laws.base import ContactModel, HistoryField, PairCase, Parameter, verlet_limit
from contactlab.models import LinearSpringDashpot

__all__ = ["FaultyModel", "NonObjectiveSpring", "EnergyCreatingSpring", "SwapAsymmetricSpring", "JumpAtTouch",
           "ActiveDashpot", "OptimisticLimit", "WrongClosedForm", "DeclaringLinear", "linear_factory", "optimistic_factory",
           "not_a_model"]


class FaultyModel(ContactModel):
    """Linear normal spring ``k`` (N/m), tangential spring ``kt`` (N/m), a force ``f0`` (N) and a
    damping coefficient ``c`` (N s/m) for the laws that use them."""

    parameters = (
        Parameter("stiffness", "N/m", "normal stiffness", 2e3, 0.0, low_inclusive=False),
        Parameter("tangential_stiffness", "N/m", "tangential stiffness", 600.0, 0.0),
        Parameter("force", "N", "constant force", 0.0),
        Parameter("damping", "N s/m", "damping coefficient", 0.0, 0.0),
    )

    def pair_table(self, materials):
        row = np.array([self.stiffness, self.tangential_stiffness, self.force, self.damping])
        return np.broadcast_to(row, (len(materials), len(materials), 4)).copy()

    def stability_limit(self, case: PairCase) -> float:
        dt = verlet_limit(math.sqrt(self.stiffness / case.mass), 0.0)
        if self.tangential_stiffness > 0:
            dt = min(dt, verlet_limit(math.sqrt(self.tangential_stiffness / case.tangential_mass), 0.0))
        return dt


class NonObjectiveSpring(FaultyModel):
    """The tangential spring accumulates the displacement in the global frame and is never carried
    into the turning tangent plane (its history does not follow a rigid rotation)."""

    name = "NonObjectiveSpring"
    law_module = "helpers.faulty_nonobjective"
    history_fields = (HistoryField("tangential_displacement", 3, "m", "elastic tangential displacement"),)


class EnergyCreatingSpring(FaultyModel):
    """The force is ``k delta`` but the stored energy says ``0.4 k delta^2`` (should be ``0.5``)."""

    name = "EnergyCreatingSpring"
    law_module = "helpers.faulty_energy"


class SwapAsymmetricSpring(FaultyModel):
    """The stiffness scales with body i's radius only: the law depends on which body is called i."""

    name = "SwapAsymmetricSpring"
    law_module = "helpers.faulty_asymmetric"


class JumpAtTouch(FaultyModel):
    """A constant repulsion ``f0`` from first touch: the force jumps at zero overlap."""

    name = "JumpAtTouch"
    law_module = "helpers.faulty_jump"


class ActiveDashpot(FaultyModel):
    """A dashpot of negative sign (``k delta - c delta'``): it books its (negative) dissipation
    correctly, but feeds energy into every cycle."""

    name = "ActiveDashpot"
    law_module = "helpers.faulty_active"


class OptimisticLimit(LinearSpringDashpot):
    """The linear spring-dashpot with a stability limit three times too large."""

    def stability_limit(self, case):
        return 3.0 * super().stability_limit(case)


class WrongClosedForm(LinearSpringDashpot):
    """The linear spring-dashpot with a closed form that is 10 % off in restitution."""

    def closed_form_impact(self, material, radius, speed):
        return {"restitution": 0.9 * self.restitution, "duration": None, "source": "a wrong closed form"}


class DeclaringLinear(LinearSpringDashpot):
    """The linear spring-dashpot declaring its own properties (no Coulomb coefficient)."""

    def validation_properties(self):
        return {"viscous_at_touch": True, "sliding_friction": None}


def linear_factory():
    """A zero-argument factory of a model (for ``contactlab validate MODULE:NAME``)."""
    return LinearSpringDashpot(stiffness=2e3, restitution=0.5, friction=0.5)


def optimistic_factory():
    """A linear spring-dashpot that declares three times its stability limit (fails the time-step checks)."""
    return OptimisticLimit(stiffness=2e3, restitution=0.5, friction=0.5)


def not_a_model():
    return 42
