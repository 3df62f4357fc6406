"""Registry of contact models: one row per law, looked up by name (scene files, checkpoints).

Adding a built-in law is its law file (law, NumPy twin, model class with its parameter and history
schemas, ``examples()``, ``validation_properties()``, ``closed_form_impact()``) and one row below;
``cl.models`` re-exports this registry, ``contactlab validate``'s reference instances and the
conformance tests come from it (docs/adding-a-law.md).
"""
from __future__ import annotations

from .._arguments import did_you_mean
from ..errors import InputError
from ..imports import OWN_PACKAGE, allowed_modules, check_import, import_named
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

__all__ = ["MODELS", "register", "model_from_dict", "model_class", "refuse_imports", "is_model_data", "named_modules", "bonded_model_names"]

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


def model_class(name, *, allow_import=(), source: str = "a data file's model") -> type[ContactModel]:
    """The model class called ``name``: a registered model, or ``"module:qualname"`` of a law made
    with :func:`~contactlab.laws.define.contact_law`, whose module is imported only as
    :func:`contactlab.imports.import_named` allows (contactlab's own, already imported, or in
    ``allow_import``; ``source`` names the file for the refusal)."""
    if isinstance(name, str) and name in MODELS:
        return MODELS[name]
    if isinstance(name, str) and ":" in name:
        module, _, qualname = name.partition(":")
        module = module.strip()
        try:
            obj = import_named(module, allow_import=allow_import, source=source, what=f"type {name!r}")
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise InputError(f"contact model type {name!r}: cannot import it ({exc})") from exc
        if not (isinstance(obj, type) and issubclass(obj, ContactModel)):
            raise InputError(f"contact model type {name!r} is not a contact model (a law made with @contact_law)")
        return obj
    raise InputError(f"unknown type {name!r} of contact model{did_you_mean(name, MODELS)}; known: "
                     f"{', '.join(sorted(MODELS))}, or 'module:name' of a law made with @contactlab.contact_law")


def is_model_data(value) -> bool:
    """Whether ``value`` is a model in plain-data form, ``{"type": name, ...}`` (a slot of a
    :class:`Contact`, a :class:`ParallelBond`'s contact), not a table of values (``per_material``)."""
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def model_from_dict(data: dict, *, allow_import=(), source: str = "a data file's model") -> ContactModel:
    """Build a model from ``{"type": name, **parameters}``; a value that is itself such a dict (a
    :class:`Contact`'s slots, a :class:`ParallelBond`'s contact) is built first.  A ``type`` naming
    a module goes through :func:`model_class` (``allow_import``, ``source``): the whole tree is
    checked against what may be imported before any module is imported."""
    data = dict(data)
    refuse_imports(data, allow_import=allow_import, source=source)
    cls = model_class(data.pop("type", None), allow_import=allow_import, source=source)
    data = {key: model_from_dict(value, allow_import=allow_import, source=source) if is_model_data(value) else value
            for key, value in data.items()}
    return cls(**data)


def refuse_imports(data: dict, *, allow_import=(), source: str = "a data file's model") -> None:
    """Raise :class:`~contactlab.errors.ImportNotAllowedError` if any ``type`` in the plain-data
    model ``data`` (its nested slot and contact models included) names a module that may not be
    imported, before any of them is imported: a file naming an allowed module and a refused one
    runs neither."""
    allowed = allowed_modules(allow_import)
    name = data.get("type")
    if isinstance(name, str) and name not in MODELS and ":" in name:
        check_import(name.partition(":")[0].strip(), allow_import=allowed, source=source, what=f"type {name!r}")
    for value in data.values():
        if is_model_data(value):
            refuse_imports(value, allow_import=allowed, source=source)


def named_modules(data: dict) -> set[str]:
    """The modules the plain-data model ``data`` names (``type = "module:name"``, nested slots and
    contacts included), contactlab's own left out."""
    found = set()
    name = data.get("type")
    if isinstance(name, str) and name not in MODELS and ":" in name:
        module = name.partition(":")[0].strip()
        if module.split(".")[0] != OWN_PACKAGE:
            found.add(module)
    for value in data.values():
        if is_model_data(value):
            found |= named_modules(value)
    return found
