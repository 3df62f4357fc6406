"""Registry of contact models: one row per law, looked up by name (scene files, checkpoints).

Adding a built-in law is its law file (law, NumPy twin, model class with its parameter and history
schemas, ``examples()``, ``validation_properties()``, ``closed_form_impact()``) and one row below;
``cl.models`` re-exports this registry, ``contactlab validate``'s reference instances and the
conformance tests come from it (docs/adding-a-law.md).
"""
from __future__ import annotations

import importlib

from .._arguments import did_you_mean
from ..errors import InputError
from .base import ContactModel
from .convex_roll import ConvexRollContact
from .composite import Contact
from .hertz_mindlin import HertzMindlin
from .ice import Ice
from .linear_spring_dashpot import LinearSpringDashpot
from .luding import Luding
from .parallel_bond import ParallelBond
from .sphere_sphere_contact import SphereSphereContact
from .volume_contact import VolumeContact

__all__ = ["MODELS", "register", "model_from_dict", "model_class", "bonded_model_names"]

MODELS: dict[str, type[ContactModel]] = {}


def register(cls: type[ContactModel]) -> type[ContactModel]:
    """Add a model class to the registry (usable as a decorator)."""
    if not cls.name:
        raise InputError(f"{cls.__name__} has no name")
    MODELS[cls.name] = cls
    return cls


# one row per law, in the order of the docs
register(HertzMindlin)
register(LinearSpringDashpot)
register(SphereSphereContact)
register(Luding)
register(Ice)
register(ParallelBond)
register(ConvexRollContact)
register(VolumeContact)
register(Contact)


def bonded_model_names() -> list[str]:
    """Names of the registered models with bonds (asked of each law)."""
    return [name for name, cls in MODELS.items() if cls.declares_bonds()]


def model_class(name) -> type[ContactModel]:
    """The model class called ``name``: a registered model, or ``"module:qualname"`` of a law made
    with :func:`~contactlab.laws.define.contact_law` (imported)."""
    if isinstance(name, str) and name in MODELS:
        return MODELS[name]
    if isinstance(name, str) and ":" in name:
        module, _, qualname = name.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise InputError(f"contact model type {name!r}: cannot import it ({exc})") from exc
        if not (isinstance(obj, type) and issubclass(obj, ContactModel)):
            raise InputError(f"contact model type {name!r} is not a contact model (a law made with @contact_law)")
        return obj
    raise InputError(f"unknown type {name!r} of contact model{did_you_mean(name, MODELS)}; known: "
                     f"{', '.join(sorted(MODELS))}, or 'module:name' of a law made with @contactlab.contact_law")


def model_from_dict(data: dict) -> ContactModel:
    """Build a model from ``{"type": name, **parameters}``; a value that is itself such a dict (a
    :class:`Contact`'s slots, a :class:`ParallelBond`'s contact) is built first."""
    data = dict(data)
    cls = model_class(data.pop("type", None))
    data = {key: model_from_dict(value) if isinstance(value, dict) and "type" in value else value
            for key, value in data.items()}
    return cls(**data)
