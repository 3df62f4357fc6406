"""User-defined contact laws: a plain Python function becomes a compiled, cached contact model.

This module holds the decorator (:func:`contact_law`) and the model classes it makes
(:class:`UserLaw`); :class:`~contactlab.laws.composite.Contact` combines slot laws,
:mod:`~contactlab.laws.composition` writes the generated law module, :mod:`~contactlab.laws.trial`
runs a law as plain Python on sample contacts before it is compiled and
:mod:`~contactlab.laws.compile_errors` translates Numba's errors.

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

import inspect
import math
from typing import Callable, ClassVar

import numpy as np

from ..errors import InputError, LawError
from ..geometry.record import GEOMETRY_FIELDS, ContactGeometry
from ..materials import Material
from ..stability import estimate_stability_limit
from .base import ContactModel, HistoryField, PairCase, Parameter
from .composition import law_module_of, remember
from .slots import SLOTS
from .trial import check_law

__all__ = ["contact_law", "UserLaw", "ComposedModel"]


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
        Gap (m) up to which the engine hands a pair to the law (default 0: touching pairs only);
        the neighbour list takes the pairs within the skin plus this range.
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
        remember(cls)
        return cls

    return decorate




# ------------------------------------------------------------------------------------ models
class ComposedModel(ContactModel):
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
        return law_module_of(self._structure())

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

    def reference_law(self, geometry: dict, params, history, dt):
        """The plain-Python twin: the same composition of the slot laws, uncompiled (the generated
        module's ``PYTHON_LAW``), on a geometry given as a mapping of the record's fields."""
        record = ContactGeometry(*[tuple(float(x) for x in np.ravel(geometry[name])) if np.ndim(geometry[name])
                                   else float(geometry[name]) for name in GEOMETRY_FIELDS])
        force, couple, stored, dissipation, active, new = self.law.PYTHON_LAW(
            record, np.asarray(params, dtype=float), tuple(float(x) for x in history), dt)
        return np.array(force), np.array(couple), float(stored), dissipation, bool(active), np.array(new)

    def check(self) -> None:
        """Run every user-written slot law as plain Python on sample contacts and raise a
        :class:`~contactlab.errors.LawError` naming the law, the line and the bad value if one
        returns the wrong shape, writes outside its history, fails or produces NaN."""
        check_law(self)


class UserLaw(ComposedModel):
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
        return law_module_of(self._structure())
