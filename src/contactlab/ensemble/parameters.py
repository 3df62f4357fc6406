"""The members of an ensemble: parameter grids, value ranges, seeds, and each member's stable key.

A member is one set of parameters (a dict, passed to ``make_simulation(**parameters)``), a
replicate number and a seed.  Parameters are data: numbers, text, True/False, None, NumPy scalars
and arrays (of numbers, bools or text), or lists, tuples and dicts of them.  Build objects such as
materials or models inside ``make_simulation`` from such data; that keeps every member's inputs
printable, comparable, storable in a table and hashable into a key that does not change between
runs, Python versions or machines.  Each member gets its own copy of the values as they were
given: a NumPy array arrives as a NumPy array of the same dtype and shape, a NumPy scalar as a
NumPy scalar of its dtype, a tuple as a tuple (sent to worker processes by pickle, which keeps
them so).  Floats must be finite.

The **seed** of a member is derived from the ensemble's base seed, the member's parameters and its
replicate number (not from its position in the list), so a member keeps its seed when the grid is
extended or reordered, and the same parameters in two ensembles with the same base seed get the
same seed: ``seed = int.from_bytes(sha256(f"{base_seed}|{replicate}|{canonical parameters}")[:4])``.
The **key** of a member (its checkpoint file's name) hashes the same three things.  The
canonical parameters (:func:`canonical_json`) write a NumPy scalar as its Python number (``np.float64(0.3)``
and ``0.3`` are the same member) and an array as its values with its dtype and shape (an array
and the list of its values are two members).
"""
from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import numbers
import tomllib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from .._arguments import as_int, did_you_mean, fmt
from ..errors import InputError

__all__ = ["grid", "parse_values", "Member", "make_members", "canonical_json", "plain", "from_plain",
           "as_parameter_list", "check_signature"]

#: table columns the runner writes: a parameter or a measure may not take these names
RESERVED_COLUMNS = ("seed", "replicate", "status", "error", "attempts", "wall_seconds", "setup_seconds",
                    "run_seconds", "compiled", "compile_seconds", "worker", "resumed")


def grid(**axes) -> list[dict]:
    """Every combination of the values of each axis (a full-factorial grid), as a list of dicts.

    ``grid(friction=[0.2, 0.5], restitution=[0.3, 0.6, 0.9])`` gives 6 dicts, the last axis
    varying fastest.  An axis is a sequence of values (a list, a tuple, a 1-D NumPy array, whose
    values are NumPy scalars of its dtype, or text as :func:`parse_values` reads it:
    ``"0.2:0.8:7"``); a single value is an axis of one.

    >>> grid(a=[1, 2], b="0:1:3")
    [{'a': 1, 'b': 0.0}, {'a': 1, 'b': 0.5}, {'a': 1, 'b': 1.0}, {'a': 2, 'b': 0.0}, {'a': 2, 'b': 0.5}, {'a': 2, 'b': 1.0}]
    """
    if not axes:
        raise InputError("grid() needs at least one axis, e.g. grid(friction=[0.2, 0.5])")
    names, values = [], []
    for name, axis in axes.items():
        if isinstance(axis, str):
            axis = parse_values(axis)
        elif isinstance(axis, np.ndarray):
            if axis.ndim != 1:
                raise InputError(f"grid axis {name!r} must be a 1-D array of values, got shape {axis.shape}")
            axis = list(axis)
        elif isinstance(axis, (list, tuple, range)):
            axis = list(axis)
        else:
            axis = [axis]
        if not axis:
            raise InputError(f"grid axis {name!r} has no values")
        names.append(name)
        values.append(axis)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def parse_values(text: str) -> list:
    """The values written as text on the command line (``--param KEY=TEXT``):

    * ``START:STOP:N``: ``N`` evenly spaced numbers from START to STOP, both included
      (``numpy.linspace``); ``START:STOP:N:log``: evenly spaced in the logarithm
      (``numpy.geomspace``; START and STOP > 0);
    * ``A,B,C``: a list; each item is read as a TOML value (``0.3``, ``true``, ``"glass"``,
      ``[0, 0, 1]``), and an item that is not a TOML value is taken as text (``glass``);
    * anything else: one value, read the same way.

    >>> parse_values("0.2:0.8:4")
    [0.2, 0.4, 0.6000000000000001, 0.8]
    >>> parse_values("1,2.5,steel")
    [1, 2.5, 'steel']
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"a parameter's values must be text such as '0.2:0.8:7' or '0.1,0.3', got {fmt(text)}")
    text = text.strip()
    parts = text.split(":")
    if len(parts) in (3, 4) and not text.startswith(("[", '"', "'")):
        try:
            start, stop = float(parts[0]), float(parts[1])
            count = float(parts[2])
        except ValueError:
            raise InputError(f"a range of values is START:STOP:N (numbers, N an integer >= 1), optionally "
                             f"followed by ':log', got {text!r}") from None
        if count != int(count) or count < 1:
            raise InputError(f"the number of values N in START:STOP:N must be an integer >= 1, got {parts[2]!r} in "
                             f"{text!r}")
        n = int(count)
        if not (math.isfinite(start) and math.isfinite(stop)):
            raise InputError(f"a range's START and STOP must be finite, got {text!r}")
        if len(parts) == 4:
            if parts[3].strip() != "log":
                raise InputError(f"the fourth field of a range START:STOP:N:log can only be 'log', got {text!r}")
            if start <= 0 or stop <= 0:
                raise InputError(f"a logarithmic range needs START > 0 and STOP > 0, got {text!r}")
            return [float(v) for v in np.geomspace(start, stop, n)]
        return [float(v) for v in np.linspace(start, stop, n)]
    if text.startswith("["):  # a single list value, e.g. a gravity vector
        return [_toml_value(text)]
    return [_toml_value(item.strip()) for item in _split_items(text)]


def _split_items(text: str) -> list[str]:
    """Split ``A,B,C`` at the commas that are not inside brackets or quotes."""
    items, depth, quote, start = [], 0, "", 0
    for k, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    items.append(text[start:])
    if any(not item.strip() for item in items):
        raise InputError(f"an empty value in the list {text!r} (two commas in a row, or one at an end)")
    return items


def _toml_value(item: str):
    try:
        return tomllib.loads(f"v = {item}")["v"]
    except tomllib.TOMLDecodeError:
        return item


#: dtype kinds of the arrays a parameter may be: bools, integers, floats, text
_ARRAY_KINDS = "biufU"
#: how an array is written in the canonical parameters (and in the checkpoint folder's records)
ARRAY_TAG = "__ndarray__"


def _checked(value: Any, where: str):
    """A member's copy of the parameter ``value`` (NumPy arrays and scalars kept as they are, with
    their dtype and shape), or an InputError if it is not data."""
    if value is None or isinstance(value, (bool, str, np.bool_)):
        return value
    if isinstance(value, (numbers.Integral, np.integer)):
        return value
    if isinstance(value, (numbers.Real, np.floating)):
        if not math.isfinite(float(value)):
            raise InputError(f"parameter {where} must be finite, got {value!r}")
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            raise InputError(f"parameter {where} is an array of dtype {value.dtype}: an ensemble's array parameters "
                             f"hold numbers, bools or text (dtype kinds b, i, u, f, U), got {fmt(value)}")
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise InputError(f"parameter {where} must be finite, got an array with "
                             f"{int(np.count_nonzero(~np.isfinite(value)))} non-finite value(s): {fmt(value)}")
        return value.copy()
    if isinstance(value, (list, tuple)):
        items = [_checked(v, where) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"parameter {where}: dict keys must be text, got {fmt(k)}")
            out[k] = _checked(v, f"{where}[{k!r}]")
        return out
    raise InputError(f"parameter {where} = {fmt(value)} ({type(value).__name__}) is not data: an ensemble's "
                     f"parameters are numbers, text, True/False, None, NumPy arrays or lists/dicts of them; pass a "
                     f"name or a number and build the object inside make_simulation")


def plain(value: Any):
    """``value`` (a checked parameter) as plain JSON data: a NumPy scalar as its Python value, an
    array as ``{"__ndarray__": values, "dtype": ..., "shape": [...]}``, tuples as lists."""
    if isinstance(value, np.ndarray):
        return {ARRAY_TAG: value.tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value


def from_plain(value: Any):
    """The inverse of :func:`plain` for arrays (scalars stay Python numbers, tuples lists)."""
    if isinstance(value, dict) and ARRAY_TAG in value:
        return np.array(value[ARRAY_TAG], dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    if isinstance(value, list):
        return [from_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: from_plain(v) for k, v in value.items()}
    return value


def canonical_json(parameters: Mapping) -> str:
    """The parameters as JSON (:func:`plain`) with sorted keys and no spaces (floats in Python's
    shortest exact form): the text that seeds and keys hash."""
    return json.dumps(plain(parameters), sort_keys=True, separators=(",", ":"), allow_nan=False)


def as_parameter_list(parameters) -> list[dict]:
    """The members' parameters as a list of plain dicts: a list (or tuple) of dicts; a dict of
    sequences (taken as the axes of a :func:`grid`); or a pandas DataFrame (one member per row)."""
    if hasattr(parameters, "to_dict") and hasattr(parameters, "columns"):  # a pandas DataFrame
        parameters = parameters.to_dict(orient="records")
    elif isinstance(parameters, Mapping):
        parameters = grid(**parameters)
    elif isinstance(parameters, (str, bytes)) or not isinstance(parameters, Iterable):
        raise InputError(f"parameters must be a list of dicts (one per member), a dict of value lists (a grid) "
                         f"or a DataFrame, got {fmt(parameters)} ({type(parameters).__name__})")
    out = []
    for k, p in enumerate(parameters):
        if not isinstance(p, Mapping):
            raise InputError(f"parameters[{k}] must be a dict of keyword arguments for make_simulation, got "
                             f"{fmt(p)} ({type(p).__name__})")
        row = {}
        for name, value in p.items():
            if not isinstance(name, str) or not name:
                raise InputError(f"parameters[{k}] has a key {fmt(name)}: parameter names must be non-empty text")
            if name in RESERVED_COLUMNS and name != "seed":
                raise InputError(f"parameters[{k}] uses the name {name!r}, which the result table uses for itself "
                                 f"({', '.join(RESERVED_COLUMNS)}); rename the parameter")
            row[name] = _checked(value, f"{name!r} of member {k}")
        out.append(row)
    if not out:
        raise InputError("parameters is empty: an ensemble needs at least one member")
    return out


@dataclass(frozen=True)
class Member:
    """One member of an ensemble.

    index : int, its row in the result table; parameters : dict, keyword arguments of
    ``make_simulation``; replicate : int, 0 ... replicates - 1; seed : int, 0 <= seed < 2**32
    (passed to ``make_simulation`` when it takes a ``seed``; an explicit ``"seed"`` parameter is
    used as is); key : str, 16 hex digits naming its checkpoint record.
    """

    index: int
    parameters: dict
    replicate: int
    seed: int
    key: str


def make_members(parameters, *, replicates: int = 1, seed: int = 0) -> list[Member]:
    """The members: every parameter set, ``replicates`` times (replicate varying fastest)."""
    rows = as_parameter_list(parameters)
    replicates = as_int("replicates", replicates, low=1)
    base = as_int("seed", seed, low=0)
    members, seen = [], {}
    for row in rows:
        text = canonical_json(row)
        for rep in range(replicates):
            digest = hashlib.sha256(f"{base}|{rep}|{text}".encode()).digest()
            given = row.get("seed")
            explicit = isinstance(given, (numbers.Integral, np.integer)) and not isinstance(given, (bool, np.bool_))
            member_seed = int(given) if explicit else int.from_bytes(digest[:4], "little")
            key = digest[4:12].hex()
            if key in seen:
                raise InputError(f"parameters[{len(members) // replicates}] repeats parameters[{seen[key]}] "
                                 f"({text}); for repeated runs of the same parameters use replicates=N, which "
                                 f"gives each run its own seed")
            seen[key] = len(members) // replicates
            members.append(Member(len(members), row, rep, member_seed, key))
    return members


def check_signature(make_simulation, rows: list[dict], *, seed_passed: bool = False, label: str = "make_simulation"):
    """Refuse, before any member starts, parameters that ``make_simulation`` cannot take: a name
    it has no parameter for (with the close match), or a required parameter that no member's
    parameters give (``seed_passed``: the runner passes ``seed`` itself).  Every member would
    fail with the same TypeError.  A ``make_simulation`` with ``**kwargs`` (such as
    :class:`~contactlab.ensemble.SceneFile`), or one whose signature Python cannot read, is not
    checked."""
    try:
        signature = inspect.signature(make_simulation)
    except (TypeError, ValueError):
        return
    params = list(signature.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    keywords = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    name = getattr(make_simulation, "__qualname__", None) or type(make_simulation).__name__
    shown = f"{label} {name}{signature}"
    for k, row in enumerate(rows):
        unknown = [key for key in row if key not in keywords]
        if unknown:
            named = ", ".join(f"{key!r}{did_you_mean(key, keywords)}" for key in unknown)
            raise InputError(f"parameters[{k}] gives {named}, which {shown} does not take (every member would fail "
                             f"with a TypeError); its parameters: {', '.join(keywords) or 'none'}")
        missing = [p.name for p in params if p.default is p.empty and p.kind is not p.VAR_POSITIONAL
                   and p.name not in row and not (seed_passed and p.name == "seed"
                                                  and p.kind is not p.POSITIONAL_ONLY)]
        if missing:
            only = [p.name for p in params if p.kind is p.POSITIONAL_ONLY and p.name in missing]
            hint = (f"; {', '.join(only)} {'is' if len(only) == 1 else 'are'} positional-only, which keyword "
                    f"parameters cannot give" if only else "")
            raise InputError(f"parameters[{k}] lacks {', '.join(repr(m) for m in missing)}, which {shown} requires "
                             f"(every member would fail with a TypeError){hint}; given: "
                             f"{', '.join(row) or 'nothing'}")
