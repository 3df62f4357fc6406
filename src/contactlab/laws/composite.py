"""A contact model assembled from slot laws: ``cl.models.Contact(normal=..., damping=..., ...)``."""
from __future__ import annotations

from ..errors import InputError
from .parts import coulomb_friction, hooke, rolling_resistance, twisting_resistance, viscous_damping
from .slots import ORDER
from .define import ComposedModel, UserLaw

__all__ = ["Contact"]


class Contact(ComposedModel):
    """A contact model assembled from slot laws (user-defined or built-in, :mod:`contactlab.laws.parts`).

    Parameters
    ----------
    normal : a normal law (required)
    damping, tangential, rolling, twisting : optional slot laws

    The normal force handed to the tangential, rolling and twisting laws is the normal law's force
    plus the damping force.  Dissipation is booked per slot (energy terms ``dissipated_<name>``:
    the slot's name, or the names the law declares); history fields are named ``<slot>_<field>``.

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.Contact(normal=cl.parts.hooke(stiffness=1e4),
    ...                           damping=cl.parts.viscous_damping(coefficient=0.05),
    ...                           tangential=cl.parts.coulomb_friction(stiffness=3e3, friction=0.5))
    >>> model.dissipation_terms
    ('normal', 'damping', 'tangential')
    """

    name = "Contact"
    construction_keys = ("normal", "damping", "tangential", "rolling", "twisting")
    required_construction_keys = ("normal",)

    def __init__(self, normal, damping=None, tangential=None, rolling=None, twisting=None):
        super().__init__()
        given = dict(normal=normal, damping=damping, tangential=tangential, rolling=rolling, twisting=twisting)
        slots = []
        for slot in ORDER:
            part = given[slot]
            if part is None:
                if slot == "normal":
                    raise InputError("Contact needs a normal law, e.g. normal=cl.parts.hooke(stiffness=1e4)")
                continue
            if isinstance(part, type) and issubclass(part, UserLaw):
                raise InputError(f"Contact({slot}=...): give the law with its parameter values, "
                                 f"e.g. {slot}={part.__name__}(...), not the class")
            if not isinstance(part, UserLaw):
                raise InputError(f"Contact({slot}=...) must be a {slot} law made with @contact_law or from "
                                 f"cl.parts, got {part!r}")
            if part.slot != slot:
                raise InputError(f"Contact({slot}=...): {part.name} is a {part.slot} law, not a {slot} law")
            slots.append((slot, part))
        self._parts = tuple(slots)

    #: its example is not one of the docs' validation reports (a composite is validated like any
    #: user law, ``contactlab validate``; tests/test_validate.py runs the battery on composites)
    validation_battery = False

    @classmethod
    def examples(cls) -> dict:
        """Every slot filled with the built-in parts (:mod:`contactlab.laws.parts`): a linear spring
        with a dashpot, Coulomb friction, rolling and twisting resistance."""
        return {"contact": cls(normal=hooke(stiffness=2e3), damping=viscous_damping(coefficient=0.05),
                               tangential=coulomb_friction(stiffness=800.0, friction=0.5),
                               rolling=rolling_resistance(stiffness=1e-6, friction=0.1),
                               twisting=twisting_resistance(stiffness=1e-6, friction=0.1))}

    def _slots(self):
        return self._parts

    @property
    def parts(self) -> dict:
        """The slot laws by slot."""
        return dict(self._parts)

    @property
    def values(self) -> dict:
        return {slot: part.values for slot, part in self._parts}

    def __getattr__(self, name):
        parts = self.__dict__.get("_parts")
        if parts is not None:
            for slot, part in parts:
                if slot == name:
                    return part
        raise AttributeError(name)

    def __repr__(self) -> str:
        return "Contact(" + ", ".join(f"{slot}={part!r}" for slot, part in self._parts) + ")"

    def to_dict(self) -> dict:
        return {"type": "Contact", **{slot: part.to_dict() for slot, part in self._parts}}
