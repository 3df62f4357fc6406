"""User-defined contact laws: a plain Python function becomes a compiled, cached contact model.

A law is written as a function of the contact geometry ``g`` (a
:class:`~contactlab.geometry.record.ContactGeometry`), the parameters ``p`` (a named tuple: one
field per declared parameter and per pair field), the history ``h`` (a named tuple: one field per
declared history field, a float for a field of size 1, a tuple for a longer one) and the time step
``dt``, and decorated with :func:`contact_law`, which names the slot it fills:

===========  ===================================================  ==============================================
slot         signature                                            returns
===========  ===================================================  ==============================================
normal       ``f(g, p, h, dt)``                                   ``(normal_force, stored_energy, dissipation,
                                                                  active, new_history)``
damping      ``f(g, p, h, dt, elastic_force)``                    ``(damping_force, new_history)``
tangential   ``f(g, p, h, dt, normal_force)``                     ``(force, stored_energy, dissipation,
                                                                  new_history)``
rolling      ``f(g, p, h, dt, normal_force)``                     ``(couple, stored_energy, dissipation,
                                                                  new_history)``
twisting     ``f(g, p, h, dt, normal_force)``                     ``(couple, stored_energy, dissipation,
                                                                  new_history)``
coupled      ``f(g, p, h, dt)``                                   ``(force, couple, stored_energy, dissipation,
                                                                  active, new_history)``
===========  ===================================================  ==============================================

Signs and units: ``normal_force`` (N) pushes the bodies apart when positive (negative: adhesion);
``damping_force`` (N) adds to it (its work ``damping_force * overlap_rate * dt`` is booked as the
damping dissipation); ``force`` (N, a 3-tuple) acts on body ``i`` (``j`` gets the opposite; the
tangential slot returns the tangential part only, the normal force is added by the engine);
``couple`` (N m, a 3-tuple) is a pure couple on ``i``; ``stored_energy`` (J) is the elastic energy
held after the step, ``dissipation`` (J) the energy lost during it (a tuple of one value per name
when the law declares ``dissipation_terms``); ``active`` (bool) says whether the contact exists (an
inactive contact exerts nothing and the history of every slot is reset); ``new_history`` is a tuple
with one entry per history field, in declared order.

The decorated function becomes a :class:`~contactlab.laws.base.ContactModel` subclass: calling it
with parameter values gives a model.  A normal or coupled law is a model on its own; slots combine
with :class:`Contact` (``Contact(normal=..., damping=..., tangential=..., rolling=...,
twisting=...)``), mixing user laws with the built-in ones of :mod:`contactlab.laws.parts`, which are
written with this same decorator.

Compilation: the laws of a model are composed into a generated, importable module (in the kernel
cache directory) that the engine's generated kernel module imports; Numba then caches the compiled
kernels on disk exactly as for the built-in laws, and the generated names hash the source files of
the laws, so editing a law recompiles it.  A law defined in ``__main__`` or a notebook works too,
but is compiled in every process (a :class:`~contactlab.errors.UncachedLawWarning` says so).
Functions a law calls must be compiled too: decorate helpers with :func:`contactlab.jit`.

Before a law is compiled for the first time in a process, it is run as plain Python on a few
sample contacts, so that a wrong return shape, a history written outside its declared fields, an
unknown parameter name or a NaN is reported with the law's name, the line and a hint; a Numba
compilation error is translated the same way (:class:`~contactlab.errors.LawError`).
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import numbers
import os
import re
import sys
import warnings
from collections import namedtuple
from functools import lru_cache
from pathlib import Path
from typing import Callable, ClassVar

import numpy as np

from ..errors import InputError, LawError, UncachedLawWarning
from ..geometry.record import ContactGeometry
from ..kernel_cache import cache_dir, dependency_fingerprint, session_dir, write_module
from ..materials import Material
from .base import ContactModel, HistoryField, PairCase, Parameter, verlet_limit

__all__ = ["contact_law", "UserLaw", "Contact", "SLOTS", "estimate_stability_limit", "part_function",
           "explain_compile_error", "check_law"]

#: slot -> (extra arguments after ``dt``, names of the returned values)
SLOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "normal": ((), ("normal_force", "stored_energy", "dissipation", "active", "new_history")),
    "damping": (("elastic_force",), ("damping_force", "new_history")),
    "tangential": (("normal_force",), ("force", "stored_energy", "dissipation", "new_history")),
    "rolling": (("normal_force",), ("couple", "stored_energy", "dissipation", "new_history")),
    "twisting": (("normal_force",), ("couple", "stored_energy", "dissipation", "new_history")),
    "coupled": ((), ("force", "couple", "stored_energy", "dissipation", "active", "new_history")),
}
_ORDER = ("normal", "damping", "tangential", "rolling", "twisting")
_VECTORS = {"force", "couple"}


# ---------------------------------------------------------------------------------------- decorator
def _as_parameter(item) -> Parameter:
    if isinstance(item, Parameter):
        return item
    if isinstance(item, (tuple, list)) and 2 <= len(item) <= 9 and isinstance(item[0], str):
        return Parameter(*item) if len(item) > 2 else Parameter(item[0], item[1], "")
    raise InputError(f"a law parameter must be a contactlab.Parameter(name, unit, doc, default, low, high, ...) or a "
                     f"tuple of its fields, got {item!r}")


def _as_history(item) -> HistoryField:
    if isinstance(item, HistoryField):
        return item
    if isinstance(item, (tuple, list)) and 1 <= len(item) <= 4 and isinstance(item[0], str):
        name, size, unit, doc = (tuple(item) + (1, "", "")[len(item) - 1:])[:4]
        return HistoryField(name, int(size), unit, doc)
    if isinstance(item, str):
        return HistoryField(item, 1, "", "")
    raise InputError(f"a history field must be a contactlab.HistoryField(name, size, unit, doc), a name, or a tuple "
                     f"(name, size, unit, doc), got {item!r}")


def _check_names(law: str, kind: str, names) -> None:
    seen = set()
    for name in names:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise InputError(f"law {law}: {kind} name {name!r} must be a Python identifier not starting with '_'")
        if name in seen:
            raise InputError(f"law {law}: {kind} {name!r} is declared twice")
        seen.add(name)


def contact_law(slot: str = "coupled", *, parameters=(), history=(), pair: Callable | None = None,
                pair_fields=(), dissipation_terms=(), interaction_range: float = 0.0,
                stability: Callable | None = None, default_dt_fraction: float = 0.2, name: str | None = None,
                properties: dict | Callable | None = None, trusted: bool = False):
    """Turn a plain Python function into a contact law (see the module docstring for the slots).

    Parameters
    ----------
    slot : str
        What the function computes: ``"normal"``, ``"damping"``, ``"tangential"``, ``"rolling"``,
        ``"twisting"`` or ``"coupled"`` (the whole contact).
    parameters : sequence of Parameter
        The parameter schema: name, unit, doc, default (None: required), bounds, and ``mixing``
        ("mean" or "min") for a parameter that may be given per material.  Read in the law as
        ``p.name``.
    history : sequence of HistoryField
        Per-contact history (all zero for a new contact): name, size (floats), unit, doc.  Read as
        ``h.name`` (a float, or a tuple for size > 1); the law returns the new values in order.
    pair : callable, optional
        ``pair(values, material_i, material_j) -> dict``: extra per-pair values (e.g. an effective
        modulus from the two materials), computed once per pair of materials in plain Python;
        their names (``pair_fields``) join the parameters in ``p``.
    dissipation_terms : sequence of str
        Names under which the law books its dissipation separately (it then returns a tuple).
    interaction_range : float
        Gap (m) up to which the engine hands a pair to the law (default 0: touching pairs only).
    stability : callable, optional
        ``stability(values, case) -> dt``: the largest stable step (s) for a
        :class:`~contactlab.laws.base.PairCase`.  Default: estimated by probing the law (tangent
        stiffnesses and damping, see :func:`estimate_stability_limit`).
    default_dt_fraction : float
        ``dt=None`` in a simulation picks this fraction of the stability limit (default 0.2).
    name : str, optional
        The model's name (default: the function's).
    properties : dict or callable, optional
        What the law declares about itself for ``contactlab validate`` (e.g. ``{"adhesive": True}``,
        or ``lambda values: {"sliding_friction": values["friction"]}``); see
        :class:`contactlab.validation.battery.ModelProperties`.

    Returns a :class:`UserLaw` subclass; ``law(**parameter_values)`` is a contact model.

    Example
    -------
    >>> import contactlab as cl
    >>> @cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "spring constant", low=0.0)])
    ... def hooke(g, p, h, dt):
    ...     delta = g.overlap
    ...     if delta <= 0.0:
    ...         return 0.0, 0.0, 0.0, False, ()
    ...     return p.stiffness * delta, 0.5 * p.stiffness * delta * delta, 0.0, True, ()
    >>> model = hooke(stiffness=1e4)
    >>> r = cl.probe(model, overlap=[0.0, 1e-5, 2e-5], dt=1e-6, debug=True)
    >>> [round(f, 6) for f in r.normal_force.tolist()]
    [0.0, 0.1, 0.2]
    """
    if slot not in SLOTS:
        raise InputError(f"slot must be one of {', '.join(SLOTS)}, got {slot!r}")

    def decorate(function):
        if isinstance(function, type) and issubclass(function, UserLaw):
            raise InputError(f"{function.__name__} is already a contact law (decorated twice?)")
        if not inspect.isfunction(function):
            raise InputError(f"@contact_law decorates a plain Python function, got {function!r}")
        law_name = name or function.__name__
        params = tuple(_as_parameter(x) for x in parameters)
        hist = tuple(_as_history(x) for x in history)
        fields = tuple(pair_fields)
        terms = tuple(dissipation_terms)
        _check_names(law_name, "parameter", [p.name for p in params] + list(fields))
        _check_names(law_name, "history field", [f.name for f in hist])
        _check_names(law_name, "dissipation term", terms)
        for f in hist:
            if f.size < 1:
                raise InputError(f"law {law_name}: history field {f.name!r} must have size >= 1, got {f.size}")
        for p in params:
            if p.mixing not in (None, "mean", "min"):
                raise InputError(f"law {law_name}: parameter {p.name!r}: mixing must be 'mean', 'min' or None, "
                                 f"got {p.mixing!r}")
        if fields and pair is None:
            raise InputError(f"law {law_name}: pair_fields {fields} need a pair(values, material_i, material_j) "
                             f"function that computes them")
        if pair is not None and not fields:
            raise InputError(f"law {law_name}: give pair_fields, the names of the values pair() returns")
        if slot == "damping" and terms:
            raise InputError(f"law {law_name}: a damping law's dissipation is booked by the engine (damping force "
                             f"times overlap rate), it declares no dissipation_terms")
        reach = float(interaction_range)
        if not (math.isfinite(reach) and reach >= 0.0):
            raise InputError(f"law {law_name}: interaction_range must be a finite gap >= 0 m, got {interaction_range!r}")
        if slot not in ("normal", "coupled") and reach != 0.0:
            raise InputError(f"law {law_name}: only normal and coupled laws have an interaction_range")
        if not 0.0 < float(default_dt_fraction) <= 1.0:
            raise InputError(f"law {law_name}: default_dt_fraction must be in (0, 1], got {default_dt_fraction!r}")
        n_args = len(inspect.signature(function).parameters)
        expected = 4 + len(SLOTS[slot][0])
        if n_args != expected:
            args = ", ".join(("g", "p", "h", "dt") + SLOTS[slot][0])
            raise LawError(f"law {law_name}: a {slot} law takes {expected} arguments ({args}), "
                           f"{function.__name__} takes {n_args}", law=law_name)
        attrs = dict(
            __module__=function.__module__, __qualname__=function.__qualname__, __doc__=function.__doc__,
            name=law_name, slot=slot, function=staticmethod(function), parameters=params, history_fields=hist,
            pair_fields=fields, pair_function=staticmethod(pair) if pair else None, law_terms=terms,
            interaction_range=reach, stability_function=staticmethod(stability) if stability else None,
            default_dt_fraction=float(default_dt_fraction), trusted=bool(trusted),
            declared_properties=staticmethod(properties) if callable(properties) else dict(properties or {}),
            mixing={p.name: p.mixing for p in params if p.mixing},
        )
        cls = type(function.__name__, (UserLaw,), attrs)
        _LAWS[_key(cls)] = cls
        return cls

    return decorate


def part_function(module: str, qualname: str):
    """The plain Python function of the law ``module:qualname`` (used by generated law modules)."""
    mod = sys.modules["__main__"] if module == "__main__" else importlib.import_module(module)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj.function


# ------------------------------------------------------------------------------------ models
class _Composed(ContactModel):
    """What user laws and composites share: a generated law module over one or more slot laws."""

    def _slots(self) -> tuple[tuple[str, "UserLaw"], ...]:
        raise NotImplementedError

    # -- description
    @property
    def history_fields(self):  # type: ignore[override]
        fields, names = [], set()
        slots = self._slots()
        for slot, part in slots:
            for f in part.history_fields:
                label = f.name if len(slots) == 1 else f"{slot}_{f.name}"
                fields.append(HistoryField(label, f.size, f.unit, f.doc))
                names.add(label)
        return tuple(fields)

    @property
    def law_module(self) -> str:  # type: ignore[override]
        return _law_module(self._structure())

    def _structure(self) -> tuple:
        return tuple((slot, type(part)) for slot, part in self._slots())

    # -- tables
    def pair_table(self, materials):
        m = len(materials)
        columns = [part._part_table(materials) for _, part in self._slots()]
        width = sum(c.shape[2] for c in columns)
        return np.concatenate(columns, axis=2) if columns else np.zeros((m, m, width))

    def stability_limit(self, case: PairCase) -> float:
        slots = self._slots()
        if len(slots) == 1 and slots[0][1].stability_function is not None:
            part = slots[0][1]
            return float(part.stability_function(part.pair_values(case.material_i, case.material_j), case))
        return estimate_stability_limit(self, case)

    @property
    def default_dt_fraction(self) -> float:  # type: ignore[override]
        return min(part.default_dt_fraction for _, part in self._slots())

    def validation_properties(self) -> dict:
        """What the slot laws declare for the validation battery (their ``properties``), merged:
        adhesion, viscous force at touch and rolling resistance if any slot has them, the sliding
        friction of the tangential slot."""
        out: dict = {}
        for slot, part in self._slots():
            declared = part.declared_properties
            values = declared(dict(part.values)) if callable(declared) else dict(declared)
            for key, value in values.items():
                if isinstance(value, bool):
                    out[key] = out.get(key, False) or value
                else:
                    out[key] = value
            if slot == "rolling":
                out["rolling_resistance"] = True
        return out

    def check(self) -> None:
        """Run every user-written slot law as plain Python on sample contacts and raise a
        :class:`~contactlab.errors.LawError` naming the law, the line and the bad value if one
        returns the wrong shape, writes outside its history, fails or produces NaN."""
        check_law(self)


class UserLaw(_Composed):
    """Base class of the classes :func:`contact_law` makes; an instance holds parameter values.

    Class attributes set by the decorator: ``slot``, ``function`` (the plain Python law),
    ``parameters``, ``history_fields``, ``pair_fields`` and ``pair_function``, ``law_terms``
    (declared dissipation terms), ``interaction_range``, ``stability_function``,
    ``default_dt_fraction``.
    """

    slot: ClassVar[str] = "coupled"
    function: ClassVar[Callable]
    pair_function: ClassVar[Callable | None] = None
    law_terms: ClassVar[tuple[str, ...]] = ()
    interaction_range: ClassVar[float] = 0.0
    stability_function: ClassVar[Callable | None] = None
    trusted: ClassVar[bool] = False
    declared_properties: ClassVar = {}

    def __init__(self, per_material: dict | None = None, **values):
        if type(self) is UserLaw:
            raise InputError("UserLaw is made by @contactlab.contact_law; decorate a function with it")
        super().__init__(per_material=per_material, **values)

    def _slots(self):
        return ((self.slot, self),)

    def pair_values(self, a: Material, b: Material) -> dict:
        """The values the law sees in ``p`` for a pair of materials: parameters (mixed per
        material where given) and pair fields."""
        values = {p.name: self.pair_value(p.name, a, b) for p in self.parameters}
        if self.pair_function is not None:
            extra = self.pair_function(dict(values), a, b)
            if not isinstance(extra, dict) or set(extra) != set(self.pair_fields):
                got = sorted(extra) if isinstance(extra, dict) else type(extra).__name__
                raise LawError(f"law {self.name}: pair() must return a dict with the keys {list(self.pair_fields)}, "
                               f"got {got}", law=self.name)
            for k in self.pair_fields:
                x = float(extra[k])
                if not math.isfinite(x):
                    raise LawError(f"law {self.name}: pair() gave {k} = {extra[k]!r} for materials {a.name or a!r} "
                                   f"and {b.name or b!r}; pair values must be finite", law=self.name)
                values[k] = x
        return values

    def _part_table(self, materials) -> np.ndarray:
        m = len(materials)
        names = [p.name for p in self.parameters] + list(self.pair_fields)
        table = np.zeros((m, m, len(names)))
        for a in range(m):
            for b in range(m):
                values = self.pair_values(materials[a], materials[b])
                table[a, b] = [values[k] for k in names]
        return table

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["type"] = f"{type(self).__module__}:{type(self).__qualname__}"
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{self.name}({args})"

    @property
    def law_module(self) -> str:  # type: ignore[override]
        if self.slot not in ("normal", "coupled"):
            raise InputError(f"{self.name} is a {self.slot} law: it needs a normal law to act with, e.g. "
                             f"cl.models.Contact(normal=cl.parts.hooke(stiffness=1e4), {self.slot}={self!r})")
        return _law_module(self._structure())


class Contact(_Composed):
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
        for slot in _ORDER:
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


# --------------------------------------------------------------------------- generated modules
def _reachable(cls) -> bool:
    """Whether ``module:qualname`` of the law leads back to it (so another process can import it)."""
    module = sys.modules.get(cls.__module__)
    obj = module
    try:
        for part in cls.__qualname__.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return False
    return obj is cls


def _source_key(cls) -> tuple[str, bool]:
    """Hash of the file that defines a law class, and whether it can be cached (a law another
    process can import by ``module:qualname`` from a source file)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if cls.__module__ == "__main__" or not path or not os.path.isfile(path) or not _reachable(cls):
        try:
            text = inspect.getsource(cls.function)
        except (OSError, TypeError):
            text = repr(cls.function.__code__.co_code)
        return hashlib.sha256(f"{os.getpid()}:{id(cls)}:{text}".encode()).hexdigest(), False
    return hashlib.sha256(Path(path).read_bytes()).hexdigest(), True


#: every law made in this process, by key (generated modules of uncacheable laws find them here)
_LAWS: dict[str, type] = {}


def law_by_key(key: str):
    """The plain Python function of a law made in this process (for uncacheable generated modules)."""
    return _LAWS[key].function


def _key(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}:{id(cls):x}"


def _flat_history(var: str, fields) -> list[str]:
    out = []
    for q, f in enumerate(fields):
        if f.size == 1:
            out.append(f"float({var}[{q}])")
        else:
            out.extend(f"float({var}[{q}][{c}])" for c in range(f.size))
    return out


def _load_history(fields, start: int) -> tuple[str, int]:
    items, k = [], start
    for f in fields:
        if f.size == 1:
            items.append(f"h[{k}]")
        else:
            items.append("(" + ", ".join(f"h[{k + c}]" for c in range(f.size)) + ")")
        k += f.size
    return ", ".join(items), k


def _vector(expr: str) -> str:
    return f"(float({expr}[0]), float({expr}[1]), float({expr}[2]))"


def _terms(structure) -> tuple[tuple[str, ...], list[tuple[str, int]]]:
    """Dissipation term names of a composite, and per slot (slot, number of terms)."""
    names, per_slot = [], []
    for slot, cls in structure:
        own = cls.law_terms or ((slot,) if len(structure) > 1 or slot != "coupled" else ())
        per_slot.append((slot, len(own)))
        names.extend(own)
    if len(set(names)) != len(names):
        named = []
        for (slot, cls), (_, count) in zip(structure, per_slot):
            own = cls.law_terms or (slot,)
            named.extend(f"{slot}_{t}" if t != slot else t for t in own[:count])
        names = named
    return tuple(names), per_slot


def _law_source(structure) -> tuple[str, bool]:
    """Source of the generated law module composing the slot laws of ``structure``."""
    cacheable = True
    lines = ["# Generated by contactlab from user-defined contact laws; do not edit.",
             "from collections import namedtuple", "", "from contactlab._jit import jit as _jit",
             "from contactlab.laws.define import law_by_key as _law_by_key, part_function as _part_function", ""]
    size = sum(f.size for _, cls in structure for f in cls.history_fields)
    reach = max(cls.interaction_range for _, cls in structure)
    terms, per_slot = _terms(structure)
    lines += [f"HISTORY_SIZE = {size}", f"INTERACTION_RANGE = {reach!r}"]
    if terms:
        lines.append(f"DISSIPATION_TERMS = {terms!r}")
    for q, (slot, cls) in enumerate(structure):
        digest, ok = _source_key(cls)
        cacheable = cacheable and ok
        names = tuple(p.name for p in cls.parameters) + tuple(cls.pair_fields)
        hist = tuple(f.name for f in cls.history_fields)
        find = (f"_part_function({cls.__module__!r}, {cls.__qualname__!r})" if ok
                else f"_law_by_key({_key(cls)!r})  # this process only")
        lines += [f"# {slot}: {cls.__module__}:{cls.__qualname__} (source sha256 {digest})",
                  f"_f{q}_py = {find}",
                  f"_f{q} = _jit(_f{q}_py)",
                  f"_P{q} = namedtuple('_P{q}', {names!r})" if names else f"_P{q} = None",
                  f"_H{q} = namedtuple('_H{q}', {hist!r})" if hist else f"_H{q} = None"]
    lines.append(f"CACHEABLE = {cacheable!r}")
    body = _law_body(structure, per_slot)
    lines += ["", "", "def _law_py(g, p, h, dt):"] + [f"    {x}" for x in body.replace("{S}", "_py").splitlines()]
    lines += ["", "", "@_jit", "def law(g, p, h, dt):",
              '    """The composed law (see contactlab.laws.define)."""']
    lines += [f"    {x}" for x in body.replace("{S}", "").splitlines()]
    lines += ["", "", "PYTHON_LAW = _law_py", ""]
    return "\n".join(lines), cacheable


def _law_body(structure, per_slot) -> str:
    out = []
    pcol = 0
    hcol = 0
    calls = {}
    for q, (slot, cls) in enumerate(structure):
        n_par = len(cls.parameters) + len(cls.pair_fields)
        p_expr = f"_P{q}(" + ", ".join(f"p[{pcol + c}]" for c in range(n_par)) + ")" if n_par else "()"
        pcol += n_par
        fields = cls.history_fields
        h_items, hcol = _load_history(fields, hcol)
        h_expr = f"_H{q}({h_items})" if fields else "()"
        calls[slot] = (q, p_expr, h_expr, fields)
    counts = dict(per_slot)

    def diss(slot, var):
        n = counts[slot]
        if slot == "damping":
            return ["d_damping"]
        if dict(structure)[slot].law_terms:
            return [f"float({var}[{t}])" for t in range(n)]
        return [f"float({var})"]

    if "coupled" in calls:
        q, p_expr, h_expr, fields = calls["coupled"]
        out.append(f"r = _f{q}{{S}}(g, {p_expr}, {h_expr}, dt)")
        d = diss("coupled", "r[3]")
        d_expr = "(" + ", ".join(d) + ",)" if counts["coupled"] else d[0]
        hist = _flat_history("r[5]", fields)
        out.append(f"return {_vector('r[0]')}, {_vector('r[1]')}, float(r[2]), {d_expr}, bool(r[4]), "
                   f"({', '.join(hist)}{',' if len(hist) == 1 else ''})")
        return "\n".join(out)
    q, p_expr, h_expr, fields = calls["normal"]
    out += ["n = g.normal", f"rn = _f{q}{{S}}(g, {p_expr}, {h_expr}, dt)", "f_n = float(rn[0])"]
    hist = {"normal": _flat_history("rn[4]", fields)}
    dterms = {"normal": diss("normal", "rn[2]")}
    zero_hist = []
    zero_terms = []
    for slot in _ORDER[1:]:
        if slot in calls:
            zero_hist += ["0.0"] * sum(f.size for f in calls[slot][3])
            zero_terms += ["0.0"] * counts[slot]
    all_inactive_terms = dterms["normal"] + zero_terms
    out += ["if not rn[3]:", "    z = (0.0, 0.0, 0.0)",
            f"    return z, z, float(rn[1]), ({', '.join(all_inactive_terms)},), False, "
            f"({', '.join(hist['normal'] + zero_hist)}{',' if len(hist['normal'] + zero_hist) == 1 else ''})"]
    stored = ["float(rn[1])"]
    if "damping" in calls:
        q, p_expr, h_expr, fields = calls["damping"]
        out += [f"rd = _f{q}{{S}}(g, {p_expr}, {h_expr}, dt, f_n)", "f_d = float(rd[0])",
                "d_damping = -f_d * (g.rel_velocity[0] * n[0] + g.rel_velocity[1] * n[1] + g.rel_velocity[2] * n[2]) "
                "* dt", "f_n = f_n + f_d"]
        hist["damping"] = _flat_history("rd[1]", fields)
        dterms["damping"] = ["d_damping"]
    force = "(-f_n * n[0], -f_n * n[1], -f_n * n[2])"
    couple = "(0.0, 0.0, 0.0)"
    if "tangential" in calls:
        q, p_expr, h_expr, fields = calls["tangential"]
        out += [f"rt = _f{q}{{S}}(g, {p_expr}, {h_expr}, dt, f_n)", "ft = rt[0]"]
        force = "(float(ft[0]) - f_n * n[0], float(ft[1]) - f_n * n[1], float(ft[2]) - f_n * n[2])"
        stored.append("float(rt[1])")
        hist["tangential"] = _flat_history("rt[3]", fields)
        dterms["tangential"] = diss("tangential", "rt[2]")
    moments = []
    for slot, var in (("rolling", "rr"), ("twisting", "rw")):
        if slot in calls:
            q, p_expr, h_expr, fields = calls[slot]
            out.append(f"{var} = _f{q}{{S}}(g, {p_expr}, {h_expr}, dt, f_n)")
            moments.append(f"{var}[0]")
            stored.append(f"float({var}[1])")
            hist[slot] = _flat_history(f"{var}[3]", fields)
            dterms[slot] = diss(slot, f"{var}[2]")
    if moments:
        couple = "(" + ", ".join(" + ".join(f"float({m}[{c}])" for m in moments) for c in range(3)) + ")"
    all_hist = [x for slot in _ORDER if slot in hist for x in hist[slot]]
    all_terms = [x for slot in _ORDER if slot in dterms for x in dterms[slot]]
    out.append(f"return {force}, {couple}, {' + '.join(stored)}, ({', '.join(all_terms)},), True, "
               f"({', '.join(all_hist)}{',' if len(all_hist) == 1 else ''})")
    return "\n".join(out)


@lru_cache(maxsize=None)
def _law_module(structure) -> str:
    """Generate (once per process and structure) the law module of a user law or composite."""
    for slot, cls in structure:
        if not cls.trusted:
            _checked(cls)
    source, cacheable = _law_source(structure)
    digest = hashlib.sha256((source + dependency_fingerprint(source)).encode()).hexdigest()[:16]
    tag = re.sub(r"[^0-9A-Za-z]+", "_", "_".join(cls.name for _, cls in structure))[-40:]
    name = f"_contactlab_law_{tag}_{digest}"
    if cacheable:
        directory = cache_dir()
    else:
        directory = session_dir()
        labels = ", ".join(cls.name for _, cls in structure if _source_key(cls)[1] is False)
        warnings.warn(f"contact law {labels} is defined in __main__, a notebook or a function: its kernels are "
                      f"compiled in this process only (not cached on disk); define it at the top level of an "
                      f"importable module to cache them",
                      UncachedLawWarning, stacklevel=3)
    write_module(directory, name, source)
    return name


# ------------------------------------------------------------------------------ checks and errors
_checked_classes: set = set()


def _checked(cls) -> None:
    if cls in _checked_classes:
        return
    _trial(cls)
    _checked_classes.add(cls)


def check_law(model) -> None:
    """Run the user-written slot laws of ``model`` as plain Python on sample contacts (see
    :meth:`_Composed.check`)."""
    for _, part in model._slots():
        _trial(type(part), part)


def _where(cls, lineno: int | None) -> tuple[str, str]:
    code = cls.function.__code__
    if lineno is None:
        lineno = code.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(cls.function)
        text = lines[lineno - first].strip() if 0 <= lineno - first < len(lines) else ""
    except (OSError, TypeError):
        text = ""
    loc = f"{code.co_filename}:{lineno}"
    return loc, (f"{loc}: {text}" if text else loc)


def _call_traced(cls, args):
    """Call the law's function, returning (result, line of the return statement)."""
    code = cls.function.__code__
    seen = {}

    def tracer(frame, event, arg):
        if frame.f_code is code:
            def local(frame, event, arg):
                if event == "return":
                    seen["line"] = frame.f_lineno
                return local
            return local
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        with np.errstate(all="ignore"):  # compiled code does not warn either: the outputs are checked
            result = cls.function(*args)
    finally:
        sys.settrace(old)
    return result, seen.get("line")


def _sample_inputs(cls, model=None):
    values = model.pair_values(_TRIAL_MATERIAL, _TRIAL_MATERIAL) if model is not None else None
    if values is None:
        values = {}
        for p in cls.parameters:
            if p.default is not None:
                values[p.name] = float(p.default)
            else:  # a value inside the bounds
                lo = p.low if math.isfinite(p.low) else None
                hi = p.high if math.isfinite(p.high) else None
                values[p.name] = (lo + hi) / 2 if lo is not None and hi is not None else (
                    (lo + 1.0) if lo is not None else ((hi - 1.0) if hi is not None else 1.0))
        if cls.pair_function is not None:
            values.update({k: float(v) for k, v in cls.pair_function(dict(values), _TRIAL_MATERIAL,
                                                                       _TRIAL_MATERIAL).items()})
    names = [p.name for p in cls.parameters] + list(cls.pair_fields)
    params = namedtuple("parameters", names)(*[values[k] for k in names]) if names else ()
    return params


from ..geometry.lens import sphere_sphere_lens as _lens_compiled


def _lens(ri, rj, d):
    return _lens_compiled.py_func(ri, rj, d)


_TRIAL_MATERIAL = Material(density=2500.0, young=1e7, poisson=0.3, name="trial")


def _trial_geometry(overlap, radius=1e-3):
    n = (0.0, 0.0, 1.0)
    bi = (0.0, 0.0, radius - 0.5 * overlap)
    v = (2e-3, -1e-3, -0.05)
    dt = 1e-6
    mass = 0.5 * 4.0 / 3.0 * math.pi * radius**3 * 2500.0
    return ContactGeometry(n, overlap, bi, bi, (0.0, 0.0, -(radius - 0.5 * overlap)), v, (3.0, -2.0, 5.0),
                           tuple(dt * x for x in v), (3e-6, -2e-6, 5e-6), radius, radius, 0.5 * radius, mass,
                           (1e-6, 2e-6, -4e-6), *_lens(radius, radius, 2.0 * radius - overlap), 0.0)


def _is_number(x) -> bool:
    return isinstance(x, (numbers.Real, np.floating, np.integer)) and not isinstance(x, (bool, np.bool_))


def _trial(cls, model=None) -> None:
    """Evaluate one slot law as plain Python on a short contact history and check what it returns."""
    law = cls.name
    slot = cls.slot
    extra, returns = SLOTS[slot]
    fields = cls.history_fields
    try:
        params = _sample_inputs(cls, model)
    except LawError:
        raise
    except Exception as exc:  # a pair() that fails on sample values
        raise LawError(f"law {law}: pair() failed on sample materials: {type(exc).__name__}: {exc}", law=law) from exc
    H = namedtuple("history", [f.name for f in fields]) if fields else None
    history = H(*[0.0 if f.size == 1 else (0.0,) * f.size for f in fields]) if H else ()
    radius = 1e-3
    cases = [("a new contact", 1e-6, 1e-6), ("a deeper contact", 5e-6, 1e-6), ("an evaluation with dt = 0", 5e-6, 0.0),
             ("a contact pulled apart", -(cls.interaction_range + 1e-5), 1e-6)]
    for label, overlap, dt in cases:
        g = _trial_geometry(overlap, radius)
        args = (g, params, history, dt) + tuple(1.0 for _ in extra)
        try:
            result, line = _call_traced(cls, args)
        except Exception as exc:
            tb = exc.__traceback__
            lineno = None
            while tb is not None:
                if tb.tb_frame.f_code is cls.function.__code__:
                    lineno = tb.tb_lineno
                tb = tb.tb_next
            loc, where = _where(cls, lineno)
            hint = _exception_hint(cls, exc)
            raise LawError(f"law {law} ({slot} law) failed on {label} (overlap {overlap:g} m, dt {dt:g} s) at "
                           f"{where}\n  {type(exc).__name__}: {exc}{hint}", law=law, line=loc) from exc
        loc, where = _where(cls, line)

        def fail(msg):
            raise LawError(f"law {law} ({slot} law) on {label} (overlap {overlap:g} m), returned at {where}:\n  "
                           f"{msg}", law=law, line=loc)

        if not isinstance(result, tuple) or len(result) != len(returns):
            n = len(result) if isinstance(result, tuple) else type(result).__name__
            fail(f"returned {n} value(s); a {slot} law returns a tuple of {len(returns)}: ({', '.join(returns)})")
        for name, value in zip(returns, result):
            if name == "new_history":
                _check_history(cls, value, fields, fail)
            elif name == "active":
                if not isinstance(value, (bool, np.bool_)):
                    fail(f"active must be True or False, got {value!r}")
            elif name in _VECTORS:
                if not (isinstance(value, tuple) and len(value) == 3 and all(_is_number(x) for x in value)):
                    fail(f"{name} must be a tuple of 3 floats (x, y, z) in the global frame, got {value!r}"
                         + (" (a NumPy array or a list cannot be compiled into the kernels: write a tuple)"
                            if isinstance(value, (np.ndarray, list)) else ""))
                if not all(math.isfinite(x) for x in value):
                    fail(f"{name} = {value!r} is not finite{_nan_hint(g)}")
            elif name == "dissipation" and cls.law_terms:
                n = len(cls.law_terms)
                if not (isinstance(value, tuple) and len(value) == n and all(_is_number(x) for x in value)):
                    fail(f"dissipation must be a tuple of {n} floats, one per declared term "
                         f"({', '.join(cls.law_terms)}), got {value!r}")
                if not all(math.isfinite(x) for x in value):
                    fail(f"dissipation = {value!r} is not finite{_nan_hint(g)}")
            else:
                if not _is_number(value):
                    fail(f"{name} must be a float, got {value!r}"
                         + (" (declare dissipation_terms=... to return one value per term)"
                            if name == "dissipation" and isinstance(value, tuple) else ""))
                if not math.isfinite(value):
                    fail(f"{name} = {float(value)} is not finite{_nan_hint(g)}")
        if "active" in returns and overlap < -cls.interaction_range:
            if result[returns.index("active")]:
                fail(f"the law says active at a gap of {-overlap:g} m, beyond its interaction_range "
                     f"({cls.interaction_range:g} m): return active=False there, or declare the range "
                     f"(@contact_law(..., interaction_range=...))")
        history = H(*_history_values(result[returns.index("new_history")], fields)) if H else ()


def _history_values(value, fields):
    return [float(v) if f.size == 1 else tuple(float(x) for x in v) for v, f in zip(value, fields)]


def _check_history(cls, value, fields, fail):
    names = ", ".join(f"{f.name} ({f.size})" for f in fields) or "none"
    if not isinstance(value, tuple):
        fail(f"new_history must be a tuple with one entry per history field [{names}], got {value!r}"
             + (f"; for a single field write ({value!r},)" if len(fields) == 1 and _is_number(value) else ""))
    if len(value) != len(fields):
        more = len(value) > len(fields)
        fail(f"new_history has {len(value)} entries but the law declares {len(fields)} history field(s) [{names}]"
             + ("; a law can write only its declared history: add a HistoryField for the extra value" if more else
                "; return every field (the old value if it does not change)"))
    for f, v in zip(fields, value):
        if f.size == 1:
            if not _is_number(v):
                fail(f"history field {f.name} holds one float, got {v!r}")
            if not math.isfinite(v):
                fail(f"history field {f.name} = {v!r} is not finite")
        else:
            if not (isinstance(v, tuple) and len(v) == f.size and all(_is_number(x) for x in v)):
                fail(f"history field {f.name} holds a tuple of {f.size} floats, got {v!r}")
            if not all(math.isfinite(x) for x in v):
                fail(f"history field {f.name} = {v!r} is not finite")


def _nan_hint(g) -> str:
    return (f" (inputs: overlap {g.overlap:g} m, rel_velocity {g.rel_velocity}); a division by zero, or a square "
            f"root or power of a negative overlap?")


def _exception_hint(cls, exc) -> str:
    if isinstance(exc, AttributeError):
        m = re.search(r"'(\w+)' object has no attribute '(\w+)'", str(exc))
        if m and m.group(1) == "parameters":
            known = ", ".join([p.name for p in cls.parameters] + list(cls.pair_fields)) or "none"
            return f"\n  hint: p has no parameter {m.group(2)!r}; the law's parameters: {known}"
        if m and m.group(1) == "history":
            known = ", ".join(f.name for f in cls.history_fields) or "none"
            return (f"\n  hint: h has no field {m.group(2)!r}; the law's history fields: {known} "
                    f"(declare it with history=[HistoryField(...)])")
        if m and m.group(1) == "ContactGeometry":
            from ..geometry.record import GEOMETRY_FIELDS

            return f"\n  hint: the geometry g has the fields {', '.join(GEOMETRY_FIELDS)}"
    if isinstance(exc, ZeroDivisionError):
        return ("\n  hint: compiled, this division gives inf or NaN instead of an error: guard it (e.g. test the "
                "overlap or the denominator first)")
    if isinstance(exc, (IndexError, TypeError)) and "tuple" in str(exc):
        known = ", ".join(f"{f.name} ({f.size})" for f in cls.history_fields) or "none"
        return f"\n  hint: the law reads past its history or a vector; history fields: {known}"
    return ""


def explain_compile_error(exc: BaseException, model) -> LawError:
    """Turn a Numba compilation error raised while compiling ``model``'s kernels into a
    :class:`~contactlab.errors.LawError` naming the law, its line and a hint."""
    text = str(exc)
    parts = [part for _, part in model._slots()] if isinstance(model, _Composed) else []
    files = {type(p).function.__code__.co_filename: type(p) for p in parts}
    culprit, loc, src = None, "", ""
    for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
        path = m.group(1)
        for f, cls in files.items():
            if os.path.abspath(path) == os.path.abspath(f) or path.endswith(os.path.basename(f)):
                culprit = cls
                loc, src = _where(cls, int(m.group(2)))
                break
        if culprit is not None:
            break
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if not ln.startswith(("Failed in", "During", "File ", "<source"))),
                 lines[0] if lines else "")
    symbol = re.search(r"(?:Untyped global name|name) '(\w+)'", text)
    if culprit is None and symbol is not None:
        # Numba did not say where: find the line of the law that uses the name
        for cls in files.values():
            try:
                src_lines, start = inspect.getsourcelines(cls.function)
            except (OSError, TypeError):
                continue
            for k, ln in enumerate(src_lines):
                if re.search(rf"\b{symbol.group(1)}\b", ln) and not ln.lstrip().startswith(("def ", "@")):
                    culprit = cls
                    loc, src = _where(cls, start + k)
                    break
            if culprit is not None:
                break
    hints = []
    if "Untyped global name" in text or "is not defined" in text:
        hints.append("a law can only call compiled functions: decorate the helper with @contactlab.jit "
                     "(math.* functions work as they are)")
    if "Unknown attribute" in text:
        hints.append("an unknown field of p, h or g: check the names the law declares")
    if "Cannot unify" in text or "can't unify" in text.lower():
        hints.append("a value takes different types in different branches: use floats everywhere (0.0, not 0) "
                     "and return tuples of the same length from every return")
    if "reflected list" in text or "array(" in text and "Tuple" in text:
        hints.append("return tuples, not lists or NumPy arrays")
    if "Unsupported" in text or "unsupported" in text or "NotImplemented" in text:
        hints.append("this construct is not supported in compiled code (Numba's nopython mode)")
    hints.append("run the law as plain Python to debug it: cl.probe(model, ..., debug=True) or "
                 "cl.Simulation(..., debug=True)")
    name = culprit.name if culprit is not None else getattr(model, "name", type(model).__name__)
    where = f" at {src}" if src else ""
    message = (f"law {name} cannot be compiled by Numba{where}:\n  {first}\n" + "\n".join(f"  hint: {h}" for h in hints)
               + "\n  (Numba's full message is chained below)")
    return LawError(message, law=name, line=loc)


# --------------------------------------------------------------------------- stability estimate
def estimate_stability_limit(model: ContactModel, case: PairCase, *, debug: bool | None = None) -> float:
    """Largest stable step (s) of one contact, estimated by probing the law.

    The law is driven (:func:`contactlab.probe`) through a quasi-static normal load-unload-reload
    cycle up to the case's reference overlap; the largest tangent stiffness ``k_n = |dF/d delta|``
    along it sets the normal frequency ``sqrt(k_n / m*)``.  At half that overlap the normal
    damping coefficient comes from the force at opposite overlap rates, and the tangential,
    rolling and twisting stiffnesses (and dampings) from tiny increments of displacement and
    rotation.  The limit is the smallest of ``(2 / omega)(sqrt(1 + zeta^2) - zeta)`` over the
    senses (tangential with the effective mass of sliding, rotations with the relative moment
    of inertia), as for the built-in laws.
    """
    from ..probe import probe

    kw = dict(radius=case.radius_i, partner_radius=case.radius_j, material=case.material_i,
              partner_material=case.material_j, mass=case.mass_i, partner_mass=case.mass_j, debug=debug)
    ref = case.overlap
    up = np.linspace(0.0, ref, 41)
    path = np.concatenate([up, np.linspace(ref, 0.5 * ref, 21)[1:], np.linspace(0.5 * ref, ref, 21)[1:]])
    slow = 1e3  # s per sample: velocities negligible
    r = probe(model, path, dt=slow, **kw)
    f = r.normal_force
    bad = ~np.isfinite(r.force).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise LawError(f"law {getattr(model, 'name', model)!r} gives a non-finite force {tuple(r.force[k])} at overlap "
                       f"{path[k]:.6g} m (of the {ref:.3g} m the stability estimate probes: max_overlap times the "
                       f"smaller radius); probe it with cl.probe(model, overlap=..., debug=True) to see why",
                       law=getattr(model, "name", ""))
    both = r.active[1:] & r.active[:-1]
    dd = np.diff(path)
    k_n = float(np.max(np.abs(np.diff(f)[both] / dd[both]), initial=0.0))
    m = case.mass
    if k_n <= 0.0:
        return math.inf
    omega = math.sqrt(k_n / m)
    half = 0.5 * ref
    v = 1e-2 * omega * ref
    tau = 1e-3 / omega
    fp = probe(model, [half - v * tau, half, half + v * tau], dt=tau, chain=False, **kw).normal_force[1]
    fm = probe(model, [half + v * tau, half, half - v * tau], dt=tau, chain=False, **kw).normal_force[1]
    c_n = max((fp - fm) / (2.0 * v), 0.0)
    limit = verlet_limit(omega, c_n / (2.0 * math.sqrt(k_n * m)))
    u = 1e-9 * ref
    senses = (("tangential", np.array([u, 0.0, 0.0]), case.tangential_mass, "force"),
              ("rolling", np.array([u / case.radius, 0.0, 0.0]), case.rotational_inertia, "couple"),
              ("twisting", np.array([0.0, 0.0, u / case.radius]), case.rotational_inertia, "couple"))
    for sense, inc, inertia, kind in senses:
        if not math.isfinite(inertia) or inertia <= 0.0:
            continue
        key = "tangential" if sense == "tangential" else "rotation"
        size = float(np.linalg.norm(inc))
        vals = []
        for step in (slow, size / (1e-2 * omega * ref if sense == "tangential" else 1e-2 * omega * ref / case.radius)):
            motion = {key: np.stack([np.zeros(3), inc])}
            res = probe(model, [half, half], dt=step, chain=True, **motion, **kw)
            out = res.local_force[1] if kind == "force" else res.local_couple[1]
            comp = out[2] if sense == "twisting" else out[0]
            vals.append((abs(comp), step))
        k = vals[0][0] / size
        if k <= 0.0:
            continue
        rate = size / vals[1][1]
        c = max((vals[1][0] - vals[0][0]) / rate, 0.0)
        w = math.sqrt(k / inertia)
        limit = min(limit, verlet_limit(w, c / (2.0 * math.sqrt(k * inertia))))
    return limit
