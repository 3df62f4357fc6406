"""Registry of contact models: one row per law, looked up by name (scene files, checkpoints)."""
from __future__ import annotations

from ..errors import InputError
from .base import ContactModel
from .hertz_mindlin import HertzMindlin
from .ice import Ice
from .linear_spring_dashpot import LinearSpringDashpot
from .luding import Luding
from .parallel_bond import ParallelBond
from .sphere_sphere_contact import SphereSphereContact

__all__ = ["MODELS", "register", "model_from_dict"]

MODELS: dict[str, type[ContactModel]] = {}


def register(cls: type[ContactModel]) -> type[ContactModel]:
    """Add a model class to the registry (usable as a decorator)."""
    if not cls.name:
        raise InputError(f"{cls.__name__} has no name")
    MODELS[cls.name] = cls
    return cls


for _cls in (HertzMindlin, Ice, LinearSpringDashpot, Luding, ParallelBond, SphereSphereContact):
    register(_cls)


def model_from_dict(data: dict) -> ContactModel:
    """Build a model from ``{"type": name, **parameters}``."""
    data = dict(data)
    name = data.pop("type", None)
    if name not in MODELS:
        raise InputError(f"unknown contact model type {name!r}; known: {', '.join(sorted(MODELS))}")
    return MODELS[name](**data)
