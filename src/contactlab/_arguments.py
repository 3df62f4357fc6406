"""Input checks shared by the builders.  Each raises :class:`InputError` naming the bad value.

Numbers must be numbers: a string (``"1e7"``) or a bool (``True``) where a number is expected is
refused, never converted, so that a typo in a script or a quoted value in a generated input does
not pass silently.
"""
from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .errors import InputError
from .magnitudes import check_magnitude, check_magnitudes

__all__ = [
    "as_vec3",
    "as_vec3_array",
    "as_vector_array",
    "as_positive",
    "as_nonnegative",
    "as_finite",
    "as_positive_array",
    "as_unit_normal",
    "as_bool",
    "as_int",
    "as_path",
    "as_float_array",
    "did_you_mean",
    "is_number",
    "checked_call",
    "checked_api",
    "call_problem",
    "fmt",
]


def fmt(value: Any) -> str:
    """``repr(value)``, shortened to about 120 characters for messages."""
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


_fmt = fmt


def did_you_mean(name: Any, allowed: Iterable[str]) -> str:
    """`` (did you mean 'friction'?)`` when ``name`` is close to one of ``allowed``, else ``""``."""
    if not isinstance(name, str):
        return ""
    allowed = list(allowed)
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if not close and len(name) >= 3:  # an abbreviation: "pos" for "position"
        close = [a for a in allowed if a.startswith(name)][:1]
    if not close:  # a different case or separators ("Friction", "rolling-friction")
        folded = {a.lower().replace("-", "_").replace(" ", "_"): a for a in allowed}
        hit = folded.get(name.lower().replace("-", "_").replace(" ", "_"))
        close = [hit] if hit else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_number(value: Any) -> bool:
    """A real number that is not a bool (NumPy scalars included)."""
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_finite(name: str, value: Any) -> float:
    """A finite float, else an error naming ``name`` (strings and bools are refused)."""
    if not is_number(value):
        if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
            value = value[()]
        else:
            raise InputError(f"{name} must be a number, got {fmt(value)} ({type(value).__name__})")
    x = float(value)
    if not math.isfinite(x):
        raise InputError(f"{name} must be finite, got {x!r}")
    return x


def as_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` (NumPy bools too); anything else (``"no"``, 1, None) is refused."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {fmt(value)} ({type(value).__name__})")


def as_path(name: str, value: Any) -> Path:
    """A file or folder path: a non-empty ``str`` or ``os.PathLike`` (a number, None or bytes is refused)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be a path (a str or pathlib.Path, not empty), got {fmt(value)} "
                         f"({type(value).__name__})")
    return Path(value)


def as_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (an integral float such as ``4.0`` is accepted) within ``[low, high]``."""
    if not is_number(value) or not math.isfinite(float(value)) or float(value) != int(value):
        raise InputError(f"{name} must be an integer, got {fmt(value)}")
    k = int(value)
    if (low is not None and k < low) or (high is not None and k > high):
        lo = "" if low is None else f"{low} <= "
        hi = "" if high is None else f" <= {high}"
        raise InputError(f"{name} must satisfy {lo}{name.split(': ')[-1]}{hi}, got {k}")
    return k


def as_float_array(name: str, value: Any) -> np.ndarray:
    """``np.asarray(value, float64)``, refusing strings, bools and other non-numbers (NumPy would
    convert ``["1", "2"]`` silently)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, got {fmt(value)}") from None
    if raw.dtype.kind not in "iuf":
        if raw.dtype.kind == "O":
            flat = raw.ravel()
            if not all(is_number(x) for x in flat):
                bad = next(x for x in flat if not is_number(x))
                raise InputError(f"{name} must be numbers, got {fmt(bad)} ({type(bad).__name__}) in {fmt(value)}")
        else:
            what = {"U": "text", "S": "bytes", "b": "True/False"}.get(raw.dtype.kind, str(raw.dtype))
            raise InputError(f"{name} must be numbers, got {what}: {fmt(value)}")
    return raw.astype(np.float64)


def as_positive(name: str, value: Any, unit: str = "") -> float:
    """A finite float > 0, within the physical range of ``unit`` (:mod:`contactlab.magnitudes`)."""
    x = as_finite(name, value)
    if x <= 0.0:
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be > 0{u}, got {x!r}")
    return check_magnitude(name, x, unit)


def as_nonnegative(name: str, value: Any, unit: str = "") -> float:
    """A finite float >= 0, within the physical range of ``unit`` when not zero."""
    x = as_finite(name, value)
    if x < 0.0:
        u = f" {unit}" if unit else ""
        raise InputError(f"{name} must be >= 0{u}, got {x!r}")
    return check_magnitude(name, x, unit)


def as_vec3(name: str, value: Any, unit: str = "") -> np.ndarray:
    """Three finite floats as a float64 array of shape (3,), each within the range of ``unit``."""
    arr = as_float_array(name, value)
    if arr.shape != (3,):
        raise InputError(f"{name} must be 3 numbers (x, y, z), got shape {arr.shape}: {_fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    return check_magnitudes(name, arr.copy(), unit, positive=False)


def as_vec3_array(name: str, value: Any, n: int | None = None, unit: str = "") -> np.ndarray:
    """A finite float64 array of shape (n, 3); a single 3-vector is broadcast when ``n`` is given."""
    return as_vector_array(name, value, n, 3, unit=unit)


def as_vector_array(name: str, value: Any, n: int | None = None, width: int = 3, where: str = "", *,
                    unit: str = "") -> np.ndarray:
    """A finite float64 array of shape (n, width), each component within the range of ``unit``; a
    single vector is broadcast when ``n`` is given (``where``: appended to the shape error, e.g.
    " in a 2-D scene")."""
    arr = as_float_array(name, value)
    if arr.ndim == 1 and arr.shape == (width,) and n is not None:
        arr = np.broadcast_to(arr, (n, width))
    if arr.ndim != 2 or arr.shape[1] != width or (n is not None and arr.shape[0] != n):
        want = f"({n}, {width})" if n is not None else f"(N, {width})"
        raise InputError(f"{name} must have shape {want}{where}, got {arr.shape}")
    bad = ~np.all(np.isfinite(arr), axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{k}] must be finite, got {arr[k].tolist()}")
    return check_magnitudes(name, np.array(arr, dtype=np.float64, copy=True), unit, positive=False)


def as_positive_array(name: str, value: Any, n: int, unit: str = "") -> np.ndarray:
    """A float64 array of shape (n,) with every entry finite and > 0 (a scalar is broadcast)."""
    arr = as_float_array(name, value)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got {arr.shape}")
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        u = f" {unit}" if unit else ""
        raise InputError(f"{name}[{k}] must be finite and > 0{u}, got {float(arr[k])!r}")
    return check_magnitudes(name, np.array(arr, dtype=np.float64, copy=True), unit)


def as_unit_normal(name: str, value: Any) -> np.ndarray:
    """A nonzero finite 3-vector, normalised to unit length."""
    v = as_vec3(name, value)
    norm = float(np.linalg.norm(v))
    if not norm > 1e-300:
        raise InputError(f"{name} must be a nonzero vector, got {v.tolist()}")
    return v / norm


def call_problem(label: str, signature: inspect.Signature, args: tuple, kwargs: dict, *,
                 extra_allowed: Iterable[str] | None = None, describe: Callable[[str], str] | None = None) -> str:
    """What is wrong with a call of ``label`` that does not bind to ``signature``: unknown keywords
    (with a close match), too many positional arguments, an argument given twice, missing required
    ones.  ``self`` is skipped; ``extra_allowed`` names the keywords a ``**kwargs`` takes (given, no
    other keyword is allowed; None: a ``**kwargs`` takes any);
    ``describe(name)`` adds the unit and meaning of a missing one."""
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params, args = params[1:], args[1:]
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    extra = [e for e in (extra_allowed or ()) if e not in {p.name for p in named}]
    allowed = [p.name for p in named] + extra
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params) and extra_allowed is None
    problems = []
    unknown = [] if takes_any else [k for k in kwargs if k not in allowed]
    if unknown:
        named_text = ", ".join(f"{u!r}{did_you_mean(u, allowed)}" for u in unknown)
        problems.append(f"unknown argument{'s' if len(unknown) > 1 else ''} {named_text}; allowed: "
                        f"{', '.join(allowed)}")
    if len(args) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params):
        problems.append(f"takes at most {len(positional)} positional argument(s) "
                        f"({', '.join(p.name for p in positional)}), got {len(args)}: give the others by name")
    by_position = {p.name for p in positional[: len(args)]}
    twice = sorted(by_position & set(kwargs))
    if twice:
        problems.append(f"{', '.join(twice)} given twice (by position and by name)")
    given = by_position | set(kwargs)
    missing = [p.name for p in named if p.default is p.empty and p.name not in given]
    if missing:
        text = ", ".join(describe(m) if describe else m for m in missing)
        problems.append(f"missing required argument{'s' if len(missing) > 1 else ''} {text}")
    if not problems:  # pragma: no cover - bind failed for a reason not listed above
        problems.append(f"the arguments do not match {label}{signature}")
    return f"{label}: " + "; ".join(problems)


def checked_call(func=None, *, label: str | None = None):
    """Decorator for a public function or method: a call that does not fit its signature raises an
    :class:`InputError` naming the unknown keyword (and the close match), the missing arguments or
    the extra positional ones, instead of Python's ``TypeError``."""
    def wrap(f):
        signature = inspect.signature(f)
        name = label or f.__qualname__.replace(".__init__", "")

        @functools.wraps(f)
        def checked(*args, **kwargs):
            try:
                signature.bind(*args, **kwargs)
            except TypeError:
                raise InputError(call_problem(name, signature, args, kwargs)) from None
            return f(*args, **kwargs)

        checked.checks_its_call = True
        return checked

    return wrap(func) if func is not None else wrap


def checked_api(cls):
    """Class decorator: :func:`checked_call` on the constructor and every public method (plain
    functions and classmethods; properties are left alone), labelled ``Class.method``."""
    for name, member in list(vars(cls).items()):
        if name != "__init__" and name.startswith("_"):
            continue
        label = cls.__name__ if name == "__init__" else f"{cls.__name__}.{name}"
        if inspect.isfunction(member) and not getattr(member, "checks_its_call", False):
            setattr(cls, name, checked_call(member, label=label))
        elif isinstance(member, classmethod) and not getattr(member.__func__, "checks_its_call", False):
            setattr(cls, name, classmethod(checked_call(member.__func__, label=label)))
    return cls
