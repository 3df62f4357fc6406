"""The generated law module of a user-defined law or a composite of slot laws.

The slot laws of a model are composed into one importable module (in the kernel cache,
:mod:`contactlab.kernel_cache`) that imports each slot's function by ``module:qualname``, compiles
it with :func:`contactlab.jit` and composes the slots into the engine's ``law(g, p, h, dt)``:
parameters as named tuples built from the pair-table row, history as named tuples loaded from and
flattened back to the history row, the normal force (plus damping) handed to the tangential,
rolling and twisting slots, dissipation per slot as ``DISSIPATION_TERMS``.  The same module also
holds the composition uncompiled (``PYTHON_LAW``), which the debug kernels and the debug probe
call.  Its name hashes its text, which names each law's source-file hash, so the rest of the
caching chain is the built-in one.  Laws from ``__main__`` or a notebook get ``CACHEABLE = False``:
their modules go to a per-process directory (an :class:`~contactlab.errors.UncachedLawWarning`
says so).
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import re
import sys
import warnings
from functools import lru_cache
from pathlib import Path

from ..errors import UncachedLawWarning
from ..kernel_cache import cache_dir, dependency_fingerprint, session_dir, write_module
from .slots import ORDER
from .trial import checked

__all__ = ["law_module_of", "remember", "law_by_key", "part_function"]


def part_function(module: str, qualname: str):
    """The plain Python function of the law ``module:qualname`` (used by generated law modules)."""
    mod = sys.modules["__main__"] if module == "__main__" else importlib.import_module(module)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj.function



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
    """Hash of the file that defines a law class and of every project file it imports (the generated
    module finds the law by name, so the import scan of its own source cannot see them), and
    whether it can be cached (a law another process can import by ``module:qualname`` from a
    source file)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if cls.__module__ == "__main__" or not path or not os.path.isfile(path) or not _reachable(cls):
        try:
            text = inspect.getsource(cls.function)
        except (OSError, TypeError):
            text = repr(cls.function.__code__.co_code)
        return hashlib.sha256(f"{os.getpid()}:{id(cls)}:{text}".encode()).hexdigest(), False
    text = Path(path).read_text()
    package = getattr(module, "__package__", None) or ""
    return hashlib.sha256((text + dependency_fingerprint(text, package)).encode()).hexdigest(), True


#: every law made in this process, by key (generated modules of uncacheable laws find them here)
_LAWS: dict[str, type] = {}


def remember(cls) -> None:
    """Record a law class made in this process (see :func:`law_by_key`)."""
    _LAWS[_key(cls)] = cls


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
             "from contactlab.laws.composition import law_by_key as _law_by_key, part_function as _part_function", ""]
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
              '    """The composed law (see contactlab.laws.composition)."""']
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
    for slot in ORDER[1:]:
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
    all_hist = [x for slot in ORDER if slot in hist for x in hist[slot]]
    all_terms = [x for slot in ORDER if slot in dterms for x in dterms[slot]]
    out.append(f"return {force}, {couple}, {' + '.join(stored)}, ({', '.join(all_terms)},), True, "
               f"({', '.join(all_hist)}{',' if len(all_hist) == 1 else ''})")
    return "\n".join(out)


@lru_cache(maxsize=None)
def law_module_of(structure) -> str:
    """Generate (once per process and structure) the law module of a user law or composite."""
    for slot, cls in structure:
        if not cls.trusted:
            checked(cls)
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
