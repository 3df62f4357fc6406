"""Generate one importable kernel module per contact law, so that Numba's disk cache works.

Numba caches a compiled function next to the file that defines it and reloads it in the next
process only if the function does not close over anything or take functions as arguments.  So the
step kernels (:mod:`contactlab.engine.kernels`, a template) are written out as a module in which
the law is an ordinary global import, e.g.::

    from contactlab.laws.hertz_mindlin import law as LAW

the law module's ``INTERACTION_RANGE`` (m, default 0: the law acts only on overlapping pairs)
becomes the compile-time constant ``LAW_RANGE``, and its ``HISTORY_SIZE`` (the number of history
floats per contact) the length of the history tuple that the kernel loads, hands to the law and
writes back.  Two optional module constants shape the rest: ``DISSIPATION_TERMS`` (names; the law
then returns its dissipation as a tuple of that length, booked term by term per contact and per
sphere) and ``BOND_FIELD`` (the history index of the bond state; bonded pairs are kept at any
distance and their breakage is logged).  A variant for a contact table that does not store some of
the law's history columns (``dropped``, :mod:`contactlab.engine.history_layout`) hands the law
``0.0`` in those places of the tuple, stores the other places back to their columns and puts the
dissipation columns right after the stored ones; its name says which columns it drops.

The module name carries a hash of the generated source, of every source file it imports directly
or indirectly (contactlab's own modules and the user's, found by reading their import statements:
the JIT options, vector helpers, the narrow phase it uses, the law and what the law imports) and of
the Numba and Python versions: any change to that code yields a new module and a fresh compilation
(Numba itself does not notice changes in called functions of other files), while a change to code
a kernel does not use (another law, another shape's narrow phase) leaves it cached.

The law-independent kernels (:mod:`contactlab.engine.integrate`: kick, drift, reduction, moving
walls and meshes) are written out the same way but once, not per law (:func:`integrate_module`),
and every law's module imports them, so they compile once per machine.

Where generated modules live and how their names are made: :mod:`contactlab.kernel_cache`.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ContactlabError
from ..geometry.shapes import ELLIPSE, ELLIPSOID, POLYHEDRON, ROLL, SPHERE
from ..laws.base import law_bond_field, law_dissipation_terms
from .history_layout import HistoryLayout
from ..kernel_cache import cache_dir, dependency_fingerprint, module_source_hash, session_dir, write_module

__all__ = ["kernel_module", "is_compiled", "python_law", "dispatch_module", "integrate_module", "FEATURES",
           "shape_features"]

_MARK = "# @@LAW_IMPORT@@"
_RANGE_MARK = "# @@LAW_RANGE@@"
_LOAD_MARK = "# @@HIST_LOAD@@"
_STORE_MARK = "# @@HIST_STORE@@"
_BOOK_MARK = "# @@DISS_BOOK@@"
_TOTAL_MARK = "# @@DISS_TOTAL@@"
_BOND_MARK = "# @@BOND_STATE@@"
_BOND_ROW_MARK = "# @@BOND_ROW@@"
_HIST_SIZE_MARK = "# @@HIST_SIZE@@"
_SHAPES_MARK = "# @@SHAPES_IMPORT@@"
_INTEGRATE_MARK = "# @@INTEGRATE_IMPORT@@"
_PAIR_ROW_MARK = "# @@PAIR_ROW@@"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


#: narrow phases a scene may need besides sphere-sphere, sphere-plane and sphere-triangle (ELLIPSE:
#: the 2-D ellipse-ellipse, ellipse-disk and ellipse-line contacts)
FEATURES = ("ELLIPSOID", "CONVEX", "ROLL", "VOLUME", "ELLIPSE")
_FEATURE_STUBS = "from contactlab.geometry.stand_ins import {names}  # not needed by this scene\n"


def dispatch_module(features) -> str:
    """Name of the generated copy of :mod:`contactlab.geometry.dispatch` that keeps the narrow
    phases in ``features`` (a subset of :data:`FEATURES`) and replaces the others by the
    stand-ins of :mod:`contactlab.geometry.stand_ins` (written once into the kernel cache)."""
    features = tuple(sorted(set(features)))
    unknown = set(features) - set(FEATURES)
    if unknown:
        raise ContactlabError(f"unknown narrow-phase features {sorted(unknown)}; known: {FEATURES}")
    return _dispatch_module(features)


@lru_cache(maxsize=None)
def _dispatch_module(features: tuple) -> str:
    path = _PACKAGE_DIR / "geometry" / "dispatch.py"
    lines = path.read_text().splitlines(keepends=True)
    for feature in FEATURES:
        mark = f"# @@FEATURE_{feature}@@"
        found = [k for k, line in enumerate(lines) if mark in line]
        if len(found) != 1:
            raise ContactlabError(f"geometry/dispatch.py must contain one import line marked {mark}")
        if feature not in features:
            names = lines[found[0]].split(" import ", 1)[1].split("#", 1)[0].strip()
            lines[found[0]] = _FEATURE_STUBS.format(names=names)
    source = f"# Generated by contactlab from geometry/dispatch.py for {features or 'meshes'}; do not edit.\n" + \
        "".join(lines)
    digest = hashlib.sha256((source + dependency_fingerprint(source)).encode()).hexdigest()[:16]
    name = f"_contactlab_dispatch_{''.join(f[0] for f in features) or 'M'}_{digest}"
    write_module(cache_dir(), name, source)
    return name


def integrate_module(debug: bool = False) -> str:
    """Name of the generated copy of :mod:`contactlab.engine.integrate` (the law-independent
    kernels: kick, drift, reduction, moving walls and meshes), written once into the kernel cache
    and imported by every law's kernel module; ``debug``: its plain-Python twin."""
    return _integrate_module(bool(debug))


@lru_cache(maxsize=None)
def _integrate_module(debug: bool) -> str:
    source = (_PACKAGE_DIR / "engine" / "integrate.py").read_text()
    if debug:
        if _JIT_IMPORT not in source:
            raise ContactlabError("engine/integrate.py must import jit, kernel, pkernel from contactlab._jit in one line")
        source = source.replace(_JIT_IMPORT, _DEBUG_JIT_IMPORT)
    source = "# Generated by contactlab from engine/integrate.py; do not edit.\n" + source
    digest = hashlib.sha256((source + dependency_fingerprint(source)).encode()).hexdigest()[:16]
    name = f"_contactlab_integrate{'_debug' if debug else ''}_{digest}"
    write_module(cache_dir(), name, source)
    return name


def _integrate_import(lines, debug):
    """Point the template's import of the law-independent kernels at the generated module."""
    found = [k for k, line in enumerate(lines) if _INTEGRATE_MARK in line]
    if not found:
        raise ContactlabError(f"kernel template must contain the import block marked {_INTEGRATE_MARK}")
    text = "".join(line.split("#", 1)[0] for line in lines[found[0]:found[-1] + 1])
    names = text.split(" import ", 1)[1].replace("(", " ").replace(")", " ").replace("\\", " ")
    names = ", ".join(n.strip() for n in names.split(",") if n.strip())
    _replace_marked(lines, _INTEGRATE_MARK, [f"from {integrate_module(debug)} import {names}  # law-independent kernels\n"])


def pair_row_length(width: int) -> int:
    """The length of the parameter row the step kernels hand the law, for a pair table of
    ``width`` columns: the width, and 1 for a law without parameters (its table then gets one
    unused column of zeros: Numba has no tuple of no floats to index)."""
    return max(1, int(width))


def _generated_source(law_module: str, debug: bool = False, shapes=False, dropped=(),
                      row_length: int = 1) -> tuple[str, str]:
    """Source text and module name of the kernel module for ``law_module`` (``debug``: the same
    kernels left uncompiled, calling the law's plain-Python version; ``shapes``: False for spheres
    and plane walls only (stand-ins, never called, for the other narrow phases), else the narrow
    phases the scene needs besides the mesh triangles, a subset of :data:`FEATURES`; ``dropped``:
    the law's history columns the contact table does not store, see
    :mod:`contactlab.engine.history_layout`; ``row_length``: the pair table's row length P, see
    :func:`pair_row_length`).

    The row's length is written into the module (``_pair_row`` reads P columns into a tuple), not
    handed to the kernels as a tuple of P zeros: seven floats more among the pair pass's arguments
    made LLVM copy them all through registers at every call, 0.46 instead of 0.22 us a two-body
    step (``benchmarks/README.md``, "Two bodies, fixed")."""
    if not isinstance(row_length, int) or row_length < 1:
        raise ContactlabError(f"kernel module for {law_module!r}: row_length must be an int >= 1, got {row_length!r}")
    template_path = Path(__file__).resolve().parent / "kernels.py"
    template = template_path.read_text()
    lines = template.splitlines(keepends=True)
    marked = [k for k, line in enumerate(lines) if _MARK in line]
    ranged = [k for k, line in enumerate(lines) if _RANGE_MARK in line]
    if len(marked) != 1 or len(ranged) != 1:
        raise ContactlabError("kernel template must contain exactly one law import marker and one range marker")
    module = importlib.import_module(law_module)
    law_range = float(getattr(module, "INTERACTION_RANGE", 0.0))
    size = getattr(module, "HISTORY_SIZE", None)
    if not isinstance(size, int) or size < 0:
        raise ContactlabError(f"law module {law_module!r} must define HISTORY_SIZE, the number of history floats "
                              f"per contact (an int >= 0), got {size!r}")
    lines[marked[0]] = f"from {law_module} import law as LAW  # generated for this law\n"
    lines[ranged[0]] = f"LAW_RANGE = {law_range!r}  # the law's INTERACTION_RANGE, m\n"
    hist_layout = HistoryLayout(size, dropped)  # checks the dropped columns
    if law_bond_field(module) in hist_layout.dropped:
        raise ContactlabError(f"law module {law_module!r}: its bond state (history column {law_bond_field(module)}) "
                              f"cannot be dropped from the contact table")
    width = hist_layout.width
    _replace_marked(lines, _HIST_SIZE_MARK, [f"HIST_SIZE = {width}  # the stored part of the law's HISTORY_SIZE\n"])
    if shapes is False or shapes is None:
        _replace_marked(lines, _SHAPES_MARK, ["from contactlab.geometry.stand_ins import body_pair, body_triangle, "
                                              "body_wall, select_triangles  # spheres and planes only\n"])
    else:
        _replace_marked(lines, _SHAPES_MARK, [f"from {dispatch_module(shapes)} import body_pair, body_triangle, "
                                              f"body_wall, select_triangles  # the scene's narrow phases\n"])
    _integrate_import(lines, debug)
    items = ", ".join(f"pair_params[a, b, {c}]" for c in range(row_length))
    _replace_marked(lines, _PAIR_ROW_MARK, [f"    return ({items}{',' if row_length == 1 else ''})  "
                                            f"# the pair table's {row_length} columns\n"])
    spheres_only = shapes is False or shapes is None
    _replace_marked(lines, "# @@SPHERES_ONLY@@", [f"SPHERES_ONLY = {spheres_only}  # spheres and plane walls only\n"])
    load = [k for k, line in enumerate(lines) if _LOAD_MARK in line]
    store = [k for k, line in enumerate(lines) if _STORE_MARK in line]
    if len(load) != 1 or not store or store != list(range(store[0], store[-1] + 1)):
        raise ContactlabError("kernel template must contain one history load line and a block of store lines")
    # the law's full history tuple: stored columns loaded, dropped ones 0.0 (never stored back)
    items = ", ".join(f"hist[k, {hist_layout.column(q)}]" if q not in dropped else "0.0" for q in range(size))
    lines[load[0]] = f"    return ({items}{',' if size == 1 else ''})  # {size} history floats\n"
    stores = [f"    hist[k, {hist_layout.column(q)}] = h[{q}]\n" for q in hist_layout.kept] or ["    pass\n"]
    lines[store[0]:store[-1] + 1] = stores
    _generate_energy_and_bonds(lines, module, law_module, hist_layout)
    if debug:
        _make_debug(lines, law_module)
    elif not getattr(module, "CACHEABLE", True):
        # a law from __main__ or a notebook: its kernels cannot be reloaded by another process
        lines[lines.index(_JIT_IMPORT)] = ("from contactlab._jit import jit, kernel_nocache as kernel, "
                                           "pkernel_nocache as pkernel\n")
    source = (f"# Generated by contactlab from {template_path.name} for {law_module}; do not edit.\n"
              + "".join(lines))
    digest = hashlib.sha256()
    digest.update(source.encode())
    digest.update(dependency_fingerprint(source).encode())
    digest.update(module_source_hash(law_module).encode())
    tag = re.sub(r"[^0-9A-Za-z]+", "_", law_module)[-40:]
    kind = ("debug" if debug else "kernels") + ("" if shapes is False or shapes is None else
                                                 "_shapes" + "".join(f[0] for f in sorted(shapes)))
    if dropped:
        kind += "_drop" + "_".join(map(str, dropped))
    kind += f"_p{row_length}"
    return source, f"_contactlab_{kind}_{tag}_{digest.hexdigest()[:16]}"


_JIT_IMPORT = "from contactlab._jit import jit, kernel, pkernel\n"
_DEBUG_JIT_IMPORT = ("from contactlab._jit import python_only as jit, python_only as kernel, "
                     "python_only as pkernel\n")


def _make_debug(lines, law_module):
    """Turn the generated kernels into plain Python: identity decorators, and the uncompiled
    versions of the law, the narrow phase and the vector helpers (compiled helpers they call are
    still compiled on first use)."""
    if _JIT_IMPORT not in lines:
        raise ContactlabError("kernel template must import jit, kernel, pkernel from contactlab._jit in one line")
    k = lines.index(_JIT_IMPORT)
    lines[k] = _DEBUG_JIT_IMPORT
    law_line = next(q for q, line in enumerate(lines) if line.startswith(f"from {law_module} import law as LAW"))
    lines.insert(law_line + 1, f"from contactlab.engine.codegen import python_law as _python_law\n"
                               f"LAW = _python_law({law_module!r})  # debug mode: the law as plain Python\n")
    lines.append("\n\n# debug mode: the building blocks as plain Python\n"
                 "add, cross, dot, scale, sub, sphere_sphere, sphere_sphere_offset, centre_offset, sphere_wall, \\\n"
                 "    sphere_cylinder, cylinder_surface = (\n"
                 "    f.py_func for f in (add, cross, dot, scale, sub, sphere_sphere, sphere_sphere_offset, centre_offset,\n"
                 "                        sphere_wall, sphere_cylinder,\n"
                 "                        cylinder_surface))\n")


def python_law(law_module: str):
    """The plain-Python version of a law module's ``law``: its ``PYTHON_LAW`` when it defines one
    (generated composite laws do), else the compiled function's original Python function."""
    module = importlib.import_module(law_module)
    python = getattr(module, "PYTHON_LAW", None)
    if python is not None:
        return python
    law = module.law
    return getattr(law, "py_func", law)


def _replace_marked(lines, mark, new_lines):
    found = [k for k, line in enumerate(lines) if mark in line]
    if not found or found != list(range(found[0], found[-1] + 1)):
        raise ContactlabError(f"kernel template must contain one block marked {mark}")
    lines[found[0]:found[-1] + 1] = new_lines


def _generate_energy_and_bonds(lines, module, law_module, hist_layout):
    """The dissipation columns (after the stored history, ``hist_layout.width``) and the bond state
    (its index in the law's tuple, and its stored column)."""
    size = hist_layout.width
    terms = law_dissipation_terms(module)
    if terms:
        book = [f"    owner[i, N_OWN + {t}] += d[{t}]\n    hist[k, {size + t}] += d[{t}]\n" for t in range(len(terms))]
        total = "    return " + " + ".join(f"d[{t}]" for t in range(len(terms))) + "\n"
    else:
        book = [f"    hist[k, {size}] += d\n"]
        total = "    return d\n"
    _replace_marked(lines, _BOOK_MARK, book)
    _replace_marked(lines, _TOTAL_MARK, [total])
    field = law_bond_field(module)
    _replace_marked(lines, _BOND_MARK, [f"    return h[{field}]\n" if field >= 0 else "    return 0.0\n"])
    _replace_marked(lines, _BOND_ROW_MARK, [f"    return hist[k, {hist_layout.column(field)}]\n" if field >= 0
                                            else "    return 0.0\n"])


def is_compiled(law_module: str, shapes=False, dropped=(), row_length: int = 1) -> bool:
    """True when the kernels for ``law_module`` are already compiled and cached on disk (the
    variant for spheres and planes, or with ``shapes`` the one with those narrow phases; with
    ``dropped`` the one for a table without those history columns; ``row_length``: the pair
    table's row length, :func:`pair_row_length`)."""
    try:
        if not getattr(importlib.import_module(law_module), "CACHEABLE", True):
            return False
        _, name = _generated_source(law_module, shapes=shapes, dropped=tuple(dropped), row_length=row_length)
    except Exception:
        return False
    pattern = f"{name}.advance*-*.nbi"  # the serial or the parallel step kernel
    if any((cache_dir() / "__pycache__").glob(pattern)):
        return True
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")  # Numba then keeps its index files there
    return bool(numba_dir) and any(Path(numba_dir).rglob(pattern))


def kernel_module(law_module: str, debug: bool = False, shapes=False, dropped=(), row_length: int = 1):
    """Import (generating it first if needed) the kernel module specialised for ``law_module``;
    ``debug``: its plain-Python twin (nothing compiled, the law runs as written); ``shapes``:
    False for spheres and planes, else the tuple of narrow-phase features the scene needs (see
    :data:`FEATURES`; mesh triangles come with any shapes variant); ``dropped``: the law's history
    columns the contact table does not store (:mod:`contactlab.engine.history_layout`; () for the
    full layout, which the probe uses); ``row_length``: the pair table's row length P (the step
    kernels hand the law P floats; the probe, which takes its row as an array, any)."""
    if shapes is not False and shapes is not None:
        shapes = tuple(sorted(set(shapes)))
    return _kernel_module(law_module, bool(debug), shapes, tuple(int(c) for c in dropped), row_length)


@lru_cache(maxsize=None)
def _kernel_module(law_module: str, debug: bool, shapes, dropped: tuple = (), row_length: int = 1):
    source, name = _generated_source(law_module, debug, shapes, dropped, row_length)
    cacheable = getattr(importlib.import_module(law_module), "CACHEABLE", True)
    return write_module(cache_dir() if cacheable else session_dir(), name, source)


def shape_features(shape_kind, n_triangles: int, volume: bool):
    """The narrow-phase features (:data:`FEATURES`) a scene's pairs can need, or False for a scene
    of spheres and plane walls only.  ``shape_kind``: per body (see :mod:`contactlab.geometry.shapes`);
    ``volume``: the contact-volume mode."""
    kinds, counts = np.unique(np.asarray(shape_kind), return_counts=True)
    count = dict(zip(kinds.tolist(), counts.tolist()))
    if set(count) <= {SPHERE} and n_triangles == 0:
        return False
    need = set()
    present = sorted(count)
    for a in present:
        for b in present:
            if a > b or (a == b and count[a] < 2) or (a == SPHERE and b == SPHERE):
                continue
            if a == ELLIPSE or b == ELLIPSE:  # 2-D scenes: with disks and ellipses only
                need.add("ELLIPSE")
            elif a in (SPHERE, ELLIPSOID) and b in (SPHERE, ELLIPSOID):
                need.add("ELLIPSOID")
            elif volume and a == POLYHEDRON and b == POLYHEDRON:
                need.add("VOLUME")
            else:
                need.add("CONVEX")
    for a in present:  # against plane walls and mesh triangles
        if a == ELLIPSOID:
            need.add("ELLIPSOID")
        elif a == ELLIPSE:
            need.add("ELLIPSE")
        elif a == ROLL:
            need.add("ROLL")
        elif a == POLYHEDRON and volume:
            need.add("VOLUME")
        if n_triangles and a != SPHERE:
            need.add("CONVEX")
    return tuple(sorted(need))
