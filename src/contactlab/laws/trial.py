"""Trial checks: a user's slot law run as plain Python on sample contacts before it is compiled.

A wrong return shape, a history written outside its declared fields, an unknown parameter name, a
law that says active beyond its interaction range or a NaN is reported as a
:class:`~contactlab.errors.LawError` with the law's name, the line (found by tracing the call) and
a hint, instead of an error deep in Numba's compilation.
"""
from __future__ import annotations

import inspect
import math
import numbers
import re
import sys
from collections import namedtuple

import numpy as np

from ..errors import LawError
from ..geometry.lens import sphere_sphere_lens as _lens_compiled
from ..geometry.record import GEOMETRY_FIELDS, ContactGeometry
from ..materials import Material
from .slots import SLOTS, VECTOR_RETURNS

__all__ = ["check_law", "checked", "law_line"]


# ------------------------------------------------------------------------------ checks and errors
_checked_classes: set = set()


def checked(cls) -> None:
    """Run :func:`_trial` on a law class once per process (before its first compilation)."""
    if cls in _checked_classes:
        return
    _trial(cls)
    _checked_classes.add(cls)


def check_law(model) -> None:
    """Run the user-written slot laws of ``model`` as plain Python on sample contacts (see
    :meth:`~contactlab.laws.define.ComposedModel.check`)."""
    for _, part in model._slots():
        _trial(type(part), part)


def law_line(cls, lineno: int | None) -> tuple[str, str]:
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
            loc, where = law_line(cls, lineno)
            hint = _exception_hint(cls, exc)
            raise LawError(f"law {law} ({slot} law) failed on {label} (overlap {overlap:g} m, dt {dt:g} s) at "
                           f"{where}\n  {type(exc).__name__}: {exc}{hint}", law=law, line=loc) from exc
        loc, where = law_line(cls, line)

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
            elif name in VECTOR_RETURNS:
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
            return f"\n  hint: the geometry g has the fields {', '.join(GEOMETRY_FIELDS)}"
    if isinstance(exc, ZeroDivisionError):
        return ("\n  hint: compiled, this division gives inf or NaN instead of an error: guard it (e.g. test the "
                "overlap or the denominator first)")
    if isinstance(exc, (IndexError, TypeError)) and "tuple" in str(exc):
        known = ", ".join(f"{f.name} ({f.size})" for f in cls.history_fields) or "none"
        return f"\n  hint: the law reads past its history or a vector; history fields: {known}"
    return ""
