"""What every contact model declares: parameters, history, pair table and stability limit.

A contact model is a small Python object (validated parameters) that points at a compiled law:
a pure function in an importable module,

    law(geometry, params, history, dt)
        -> (force_on_i, couple_on_i, stored_energy, dissipation, active, new_history)

with ``geometry`` a :class:`~contactlab.geometry.record.ContactGeometry`, ``params`` the row of
the material-pair table for the two bodies (1-D float64, read only), ``history`` the contact's
history as a tuple of ``history_size`` floats (all zero for a new contact), ``dt`` the step (s).
The law returns the force on body ``i`` (N, global), a pure couple on ``i`` (N m), the elastic
energy stored in the contact after the step (J), the energy dissipated during the step (J), whether
the contact is active (an inactive contact must exert nothing), and the new history tuple (reset to
zeros when the contact ends).  The engine, not the law, turns this into torques and per-sphere
sums.  (History passes by value, in registers: a per-contact array view would cost an atomic
reference count on an array all threads share.)
"""
from __future__ import annotations

import functools
import importlib
import inspect
import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._arguments import as_finite, call_problem, did_you_mean
from ..errors import ContactlabError, InputError
from ..magnitudes import check_magnitude
from ..materials import Material
from .._stack import user_stack_level
from .stiffness import ContactSprings, single_contact_limit, verlet_limit  # noqa: F401  (verlet_limit: re-exported)

__all__ = ["Parameter", "HistoryField", "PairCase", "ContactModel", "verlet_limit", "geometry_arrays", "history_size",
           "law_dissipation_terms", "law_bond_field"]


@dataclass(frozen=True)
class Parameter:
    """One entry of a model's parameter schema."""

    name: str
    unit: str
    doc: str
    default: Any = None          # None: required
    low: float = -math.inf
    high: float = math.inf
    low_inclusive: bool = True
    high_inclusive: bool = True
    #: how two materials' values mix when the parameter is given per material: "mean" or "min";
    #: None: one value for every pair (used by user-defined laws, see contactlab.laws.define)
    mixing: str | None = None

    def check(self, value) -> float:
        x = as_finite(self.name, value)
        lo_ok = x >= self.low if self.low_inclusive else x > self.low
        hi_ok = x <= self.high if self.high_inclusive else x < self.high
        if not (lo_ok and hi_ok):
            raise InputError(f"{self.name} must satisfy {self.bounds_text()}, got {x!r}")
        return check_magnitude(self.name, x, self.unit, positive=self.low >= 0.0)

    def bounds_text(self) -> str:
        parts = []
        if self.low > -math.inf:
            parts.append(f"{self.low:g} {'<=' if self.low_inclusive else '<'} ")
        parts.append(self.name)
        if self.high < math.inf:
            parts.append(f" {'<=' if self.high_inclusive else '<'} {self.high:g}")
        return "".join(parts)


@dataclass(frozen=True)
class HistoryField:
    """A named slice of the per-contact history row: ``size`` floats, reset to 0 when a contact ends."""

    name: str
    size: int
    unit: str
    doc: str


def law_dissipation_terms(module) -> tuple[str, ...]:
    """The law module's ``DISSIPATION_TERMS`` (validated), ``()`` when it returns one total."""
    terms = getattr(module, "DISSIPATION_TERMS", ())
    if not isinstance(terms, tuple) or not all(isinstance(t, str) and t.isidentifier() for t in terms):
        raise ContactlabError(f"law module {module.__name__!r}: DISSIPATION_TERMS must be a tuple of identifiers, "
                              f"got {terms!r}")
    return terms


def law_bond_field(module) -> int:
    """The law module's ``BOND_FIELD`` (history index of the bond state), -1 when it has no bonds."""
    field = getattr(module, "BOND_FIELD", -1)
    size = getattr(module, "HISTORY_SIZE", 0)
    if not isinstance(field, int) or not -1 <= field < max(size, 0):
        raise ContactlabError(f"law module {module.__name__!r}: BOND_FIELD must be a history index below "
                              f"HISTORY_SIZE = {size}, got {field!r}")
    return field


def history_size(fields) -> int:
    """Floats per contact of a history made of ``fields`` (HistoryField): the law module's
    ``HISTORY_SIZE``, derived from its ``HISTORY_FIELDS`` so that it is declared once."""
    return sum(f.size for f in fields)


@dataclass(frozen=True)
class PairCase:
    """Two bodies that can meet, as the stability estimates see them.

    Radii in m (``inf`` for a wall), masses in kg and moments of inertia in kg m^2 (``inf`` for a
    wall or a fixed sphere), ``overlap`` the overlap (m) at which nonlinear stiffnesses are
    evaluated.  The geometric fields may be arrays of one value per contact (the materials are then
    those of every contact: :func:`contactlab.stability.contact_stiffness_of` groups the contacts by
    their pair of materials).  ``history``: the contacts' history rows in the law's full layout
    ((K, H), or (H,) for one contact), for laws whose stiffness depends on it (a bond, the largest
    overlap so far); None for a contact that is about to form.
    """

    material_i: Material
    material_j: Material
    radius_i: float
    radius_j: float
    mass_i: float
    mass_j: float
    inertia_i: float
    inertia_j: float
    overlap: float
    history: object = None

    @property
    def radius(self):
        return 1.0 / (1.0 / self.radius_i + 1.0 / self.radius_j)

    @property
    def mass(self):
        return 1.0 / (1.0 / self.mass_i + 1.0 / self.mass_j)

    @property
    def tangential_mass(self):
        """Effective mass for sliding at the contact, rotation included: 1/m = sum(1/m + r^2/I)
        over the finite bodies."""
        inv = 0.0
        for m, r, inertia in ((self.mass_i, self.radius_i, self.inertia_i), (self.mass_j, self.radius_j, self.inertia_j)):
            finite = np.isfinite(m)
            with np.errstate(invalid="ignore", divide="ignore"):
                inv = inv + np.where(finite, 1.0 / m + r * r / inertia, 0.0)
        out = 1.0 / inv
        return float(out) if np.ndim(out) == 0 else out

    @property
    def rotational_inertia(self):
        """Effective moment of inertia for relative rotation: 1/I = 1/I_i + 1/I_j."""
        return 1.0 / (1.0 / self.inertia_i + 1.0 / self.inertia_j)


def geometry_arrays(geometry: dict) -> dict:
    """A contact geometry given as a mapping (the NumPy twins' input): vectors as float arrays,
    scalars as floats."""
    return {k: (np.asarray(v, dtype=float) if np.ndim(v) else float(v)) for k, v in geometry.items()}


def _unknown_text(cls, unknown: list[str], allowed: list[str]) -> str:
    """``Model: unknown parameter 'frictoin' (did you mean 'friction'?); allowed: ...``."""
    parts = [f"{u!r}{did_you_mean(u, allowed)}" for u in unknown]
    return (f"{cls.__name__}: unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(parts)}; "
            f"allowed: {', '.join(allowed)}")


def _checked_constructor(init):
    """Wrap a model's ``__init__`` so that a call it cannot bind is reported as an InputError that
    names the unknown parameter (with a close match from the schema) or the missing one (with its
    unit and meaning)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def checked(self, *args, **kwargs):
        cls = type(self)
        schema = {p.name: p for p in cls.parameters}
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError:
            def describe(name):
                p = schema.get(name)
                return f"{name} ({p.unit}: {p.doc})" if p else name

            raise InputError(call_problem(cls.__name__, signature, (self, *args), kwargs,
                                          extra_allowed=list(schema), describe=describe)
                             .replace("argument", "parameter")) from None
        return init(self, *args, **kwargs)

    checked.checks_its_call = True
    return checked


class ContactModel:
    """Base class of every contact model.

    Subclasses set ``name``, ``law_module`` (importable module defining ``law``), ``parameters``
    (schema) and ``history_fields``, and implement :meth:`pair_table` and
    :meth:`stability_limit`.
    """

    name: ClassVar[str] = ""
    law_module: ClassVar[str] = ""
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    history_fields: ClassVar[tuple[HistoryField, ...]] = ()
    pair_fields: ClassVar[tuple[str, ...]] = ()
    #: default time step (``dt=None``) as a fraction of the stability limit
    default_dt_fraction: ClassVar[float] = 0.35

    #: parameters that may also be given per material, with the rule that mixes two materials'
    #: values into the pair's: ``"mean"`` (average) or ``"min"`` (minimum)
    mixing: ClassVar[dict[str, str]] = {}
    #: constructor keywords besides the parameters (scene files accept them), and the required ones
    construction_keys: ClassVar[tuple[str, ...]] = ()
    required_construction_keys: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        """Every model's constructor checks its call first: an unknown or misspelt keyword, a missing
        required parameter or too many positional arguments is an :class:`InputError` naming it
        (with a close match), not Python's bare ``TypeError``."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "checks_its_call", False):
            cls.__init__ = _checked_constructor(init)

    def __init__(self, per_material: dict | None = None, **kwargs):
        self._per_material = self._check_per_material(per_material)
        known = {p.name: p for p in self.parameters}
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise InputError(_unknown_text(type(self), unknown, list(known)))
        values = {}
        for p in self.parameters:
            if p.name in kwargs:
                try:
                    values[p.name] = p.check(kwargs[p.name])
                except InputError as exc:
                    raise InputError(f"{type(self).__name__}: {exc}") from None
            elif p.default is None:
                raise InputError(f"{type(self).__name__}: parameter {p.name} ({p.unit}: {p.doc}) is required")
            else:
                values[p.name] = float(p.default)
        self._values = values

    def _check_per_material(self, per_material) -> dict:
        cls = type(self).__name__
        if per_material is None:
            return {}
        if not isinstance(per_material, dict):
            raise InputError(f"{cls}: per_material must be a dict {{material or name: {{parameter: value}}}}, "
                             f"got {type(per_material).__name__}")
        if per_material and not self.mixing:
            raise InputError(f"{cls} has no per-material parameters")
        known = {p.name: p for p in self.parameters}
        out = {}
        for key, values in per_material.items():
            name = key.name if isinstance(key, Material) else key
            if not isinstance(name, str) or not name:
                raise InputError(f"{cls}: per_material keys must be named Materials or material names, got {key!r}")
            if not isinstance(values, dict):
                raise InputError(f"{cls}: per_material[{name!r}] must be a dict of parameters, got {values!r}")
            bad = sorted(set(values) - set(self.mixing))
            if bad:
                hint = "".join(did_you_mean(b, self.mixing) for b in bad if b not in known)
                raise InputError(f"{cls}: per_material[{name!r}]: {', '.join(bad)} cannot be given per material"
                                 f"{hint}; per-material parameters: {', '.join(self.mixing)}")
            try:
                out[name] = {k: known[k].check(v) for k, v in values.items()}
            except InputError as exc:
                raise InputError(f"{cls}: per_material[{name!r}]: {exc}") from None
        return out

    def per_material_names(self) -> dict[str, str]:
        """The material names its ``per_material`` entries give values for, and those of the
        models it is made of (a composite's slot laws, a parallel bond's contact): name -> the
        model that names it."""
        out = {name: type(self).__name__ for name in self.__dict__.get("_per_material", {})}
        stack = list(self.__dict__.values())
        while stack:
            value = stack.pop()
            if isinstance(value, ContactModel):
                for name, model in value.per_material_names().items():
                    out.setdefault(name, model)
            elif isinstance(value, dict):
                stack += list(value.values())
            elif isinstance(value, (list, tuple)):
                stack += list(value)
        return out

    def check_materials(self, materials) -> None:
        """``per_material`` entries for materials that ``materials`` (a scene's) does not hold: a
        name close to one it holds is a misspelling and is refused (it would be dropped silently);
        another is a material of other scenes the model is made for (a platen the validation
        scenes lack) and is said in a warning, once, since it has no effect here."""
        have = [m.name for m in materials if m.name]
        named = ", ".join(repr(h) for h in have) or "none has a name"
        for name, model in self.per_material_names().items():
            if name in have:
                continue
            close = did_you_mean(name, have)
            if close:
                raise InputError(f"{model}: per_material gives values for the material {name!r}, which the scene "
                                 f"does not have{close}; its materials: {named} (per_material keys are material "
                                 f"names, Material(name=...))")
            warnings.warn(f"{model}: per_material gives values for the material {name!r}, which this scene does not "
                          f"have (its materials: {named}); they are not used here", UserWarning,
                          stacklevel=user_stack_level())

    def material_value(self, name: str, material: Material) -> float:
        """The value of parameter ``name`` for one material (its own, else the model's)."""
        own = self._per_material.get(material.name, {})
        return own.get(name, self._values[name])

    def pair_value(self, name: str, a: Material, b: Material) -> float:
        """Parameter ``name`` for a pair of materials, mixed by the parameter's rule (``mixing``)."""
        va, vb = self.material_value(name, a), self.material_value(name, b)
        rule = self.mixing.get(name)
        if rule is None or va == vb:
            return va
        return 0.5 * (va + vb) if rule == "mean" else min(va, vb)

    # ------------------------------------------------------------------ description
    @property
    def values(self) -> dict[str, float]:
        """Parameter values by name (a copy)."""
        return dict(self._values)

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({args})"

    @property
    def history_size(self) -> int:
        """Floats of history per contact (the sum of the ``history_fields``' sizes)."""
        return history_size(self.history_fields)

    def unused_history(self) -> tuple[str, ...]:
        """Names of the ``history_fields`` that this model's law never uses for its parameters:
        given zeros there it computes what it computes with them stored and returns zeros there
        again (e.g. Hertz-Mindlin's rolling spring without rolling friction).  The contact table
        does not store them (:mod:`contactlab.engine.history_layout`); ``contacts()`` still reports
        them, as zeros.  Default ``()``: every field is stored (always correct)."""
        return ()

    def unused_history_columns(self) -> tuple[int, ...]:
        """The history columns of :meth:`unused_history`, ascending (checked: known, unambiguous
        field names, never the bond state)."""
        names = self.unused_history()
        if not names:
            return ()
        fields = [f.name for f in self.history_fields]
        slices = self.history_slices()
        bad = [n for n in names if n not in slices or fields.count(n) != 1]
        if bad:
            raise ContactlabError(f"{type(self).__name__}.unused_history() names {bad}, which are not (unique) "
                                  f"history fields; fields: {', '.join(fields) or 'none'}")
        columns = sorted({c for n in names for c in range(slices[n].start, slices[n].stop)})
        if self.bond_field in columns:
            raise ContactlabError(f"{type(self).__name__}.unused_history() names the bond state (history column "
                                  f"{self.bond_field}), which the engine always reads")
        return tuple(columns)

    def history_slices(self) -> dict[str, slice]:
        out, start = {}, 0
        for f in self.history_fields:
            out[f.name] = slice(start, start + f.size)
            start += f.size
        return out

    def to_dict(self) -> dict:
        """Plain-data form: ``{"type": name, **parameters}`` (scene files, checkpoints)."""
        out = {"type": self.name, **self._values}
        if self._per_material:
            out["per_material"] = {k: dict(v) for k, v in self._per_material.items()}
        return out

    # ------------------------------------------------------------------ energy terms and bonds
    @property
    def law(self):
        """The law's module (``law``, ``HISTORY_SIZE`` and the optional constants)."""
        return importlib.import_module(self.law_module)

    @property
    def dissipation_terms(self) -> tuple[str, ...]:
        """Names of the dissipation terms the law books separately (its ``DISSIPATION_TERMS``);
        ``()`` for a law that returns one total."""
        return law_dissipation_terms(self.law)

    @property
    def bond_field(self) -> int:
        """History index of the bond state (``BOND_FIELD``), -1 for a model without bonds."""
        return law_bond_field(self.law)

    @property
    def has_bonds(self) -> bool:
        """Whether the law has bonds (its module declares a ``BOND_FIELD``): ``Simulation.bond``
        makes them, bonded pairs stay in the neighbour list at any distance and breakage is logged."""
        return self.bond_field >= 0

    @classmethod
    def declares_bonds(cls) -> bool:
        """Whether models of this class have bonds, asked of the law module the class names (for
        the lists of bonded models in messages; an instance answers :attr:`has_bonds`)."""
        module = getattr(cls, "law_module", "")
        if not isinstance(module, str) or not module:
            return False
        return getattr(importlib.import_module(module), "BOND_FIELD", -1) >= 0

    @property
    def bond_reasons(self) -> dict[int, str]:
        """Why a bond broke, by the code the law leaves in the bond state (``-code``)."""
        return dict(getattr(self.law, "BOND_REASONS", {}))

    @property
    def bonded_senses(self) -> int:
        """Bit mask of the senses a new bond holds (1 normal, 2 shear, 4 twisting, 8 rolling)."""
        return 15

    def initial_bond_history(self, pairs: dict, params: np.ndarray) -> np.ndarray:
        """History rows (K, H) of K new bonds, for models with bonds.

        ``pairs`` holds per-pair arrays: ``overlap`` (m), ``radius_i``, ``radius_j`` (m), ``mass_i``,
        ``mass_j`` (kg, ``inf`` if fixed); ``params`` the (K, P) pair-table rows.
        """
        raise InputError(f"{type(self).__name__} has no bonds")

    # ------------------------------------------------------------------ what the law says of itself
    #: whether the examples of this model are validated by the battery (sphere-sphere and
    #: sphere-wall experiments) in the docs' reports and in CI (:mod:`contactlab.validation.builtin`);
    #: a law of other shapes (a roll, contact volumes) says False and has its own validation tests
    validation_battery: ClassVar[bool] = True

    @classmethod
    def examples(cls) -> dict[str, "ContactModel"]:
        """Named, physically sensible instances for the battery's default bodies (glass-like
        spheres of 1 mm radius, :data:`contactlab.probe.DEFAULT_PROBE_MATERIAL`): the docs' validation
        reports (:mod:`contactlab.validation.builtin`) and the table-driven conformance tests run
        them.  Default: none."""
        return {}

    def reference_law(self, geometry: dict, params, history, dt):
        """The law's plain NumPy twin: ``(force, couple, stored, dissipation, active, new_history)``
        for a geometry given as a mapping of the record's fields (vectors as arrays), the pair-table
        row ``params`` and the history (an array, not changed).  Default: the law module's
        ``reference_law``."""
        twin = getattr(self.law, "reference_law", None)
        if twin is None:
            raise NotImplementedError(f"{type(self).__name__}: its law module {self.law_module} has no reference_law")
        return twin(geometry, params, history, dt)

    def scene_pair_table(self, model) -> np.ndarray:
        """The pair table the engine runs with, for the frozen model of a scene (its bodies'
        masses and inertias included).  Default: :meth:`pair_table` of the scene's materials; a
        law whose parameters depend on the bodies (e.g. an implicit friction that needs the
        effective mass of sliding) overrides it."""
        return self.pair_table(model.materials)

    # ------------------------------------------------------------------ to implement
    def pair_table(self, materials: tuple[Material, ...]) -> np.ndarray:
        """(M, M, P) float64 table of pair parameters, row ``[a, b]`` for materials a and b."""
        raise NotImplementedError

    #: whether :meth:`contact_springs` takes a :class:`PairCase` of arrays (one value per contact):
    #: the built-in laws' closed forms do; a law that probes does not, and the bound of a packing
    #: then probes it once per class of similar contacts (:func:`contactlab.stability.contact_stiffness_of`)
    stiffness_on_arrays: ClassVar[bool] = False

    def contact_springs(self, case: PairCase) -> ContactSprings | None:
        """The springs and dashpots of a contact of the pair of bodies ``case`` at ``case.overlap``
        (:class:`~contactlab.laws.stiffness.ContactSprings`, SI units): what the stable time step
        depends on.  The built-in laws give them in closed form; ``None`` (the default) means the
        law is probed (:func:`contactlab.stability.springs_of`: the largest tangent stiffness of a
        load-unload cycle up to the overlap, and the force's change with each sense's rate)."""
        return None

    def stability_limit(self, case: PairCase) -> float:
        """Largest stable time step (s) of one contact of the given pair of bodies alone
        (:func:`~contactlab.laws.stiffness.single_contact_limit` of :meth:`contact_springs`)."""
        springs = self.contact_springs(case)
        if springs is None:
            raise NotImplementedError(f"{type(self).__name__} gives neither contact_springs nor stability_limit")
        return single_contact_limit(self.contact_springs(case), case)
