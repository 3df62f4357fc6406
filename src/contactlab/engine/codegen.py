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
distance and their breakage is logged).

The module name carries a hash of the generated source, of every source file it imports directly
or indirectly (contactlab's own modules and the user's, found by reading their import statements:
the JIT options, vector helpers, the narrow phase it uses, the law and what the law imports) and of
the Numba and Python versions: any change to that code yields a new module and a fresh compilation
(Numba itself does not notice changes in called functions of other files), while a change to code
a kernel does not use (another law, another shape's narrow phase) leaves it cached.

The law-independent kernels (:mod:`contactlab.engine.integrate`: kick, drift, reduction, moving
walls and meshes) are written out the same way but once, not per law (:func:`integrate_module`),
and every law's module imports them, so they compile once per machine.

Generated modules live in ``$CONTACTLAB_CACHE_DIR`` or, by default, ``~/.cache/contactlab``
(``$XDG_CACHE_HOME/contactlab`` when set), under ``kernels/``.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numba

from ..errors import ContactlabError

__all__ = ["cache_dir", "kernel_module", "is_compiled", "source_fingerprint", "dependency_fingerprint", "python_law",
           "write_module", "session_dir", "dispatch_module", "integrate_module", "FEATURES", "shape_features"]

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
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """Directory of generated kernel modules (created if needed; a temporary one if not writable)."""
    env = os.environ.get("CONTACTLAB_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) / "contactlab" if xdg else Path.home() / ".cache" / "contactlab"
    path = base / "kernels"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError:
        path = Path(tempfile.gettempdir()) / f"contactlab-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}"
        path.mkdir(parents=True, exist_ok=True)
    return path


#: the files whose code can end up inside a compiled kernel (everything else is plain Python)
_KERNEL_SOURCES = ("_jit.py", "vec.py", "engine/layout.py", "engine/kernels.py", "engine/integrate.py", "geometry/*.py", "laws/*.py")


def _project_origin(name: str) -> str | None:
    """The source file of module ``name`` if it is project code (contactlab's, or a user's module
    outside the Python installation), else None (the standard library, numpy, numba...)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py") or not os.path.isfile(spec.origin):
        return None
    if name == "contactlab" or name.startswith("contactlab."):
        return spec.origin
    origin = os.path.realpath(spec.origin)
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        if origin.startswith(os.path.realpath(prefix) + os.sep):
            return None
    return spec.origin


def _imported_modules(source: str, package: str) -> list[str]:
    """Absolute names of the modules that ``source`` (a module of ``package``) imports, including
    submodules named in ``from package import submodule``."""
    import ast

    names = []
    # module-level imports only (compiled code can only use a module's globals; imports inside
    # functions belong to the plain-Python side), including those under top-level if/try blocks
    nodes, stack = [], list(ast.parse(source).body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.Try)):
            stack += node.body + node.orelse + getattr(node, "finalbody", []) + [
                x for h in getattr(node, "handlers", []) for x in h.body]
        else:
            nodes.append(node)
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod:
                names.append(mod)
                names += [f"{mod}.{a.name}" for a in node.names]
    return names


@lru_cache(maxsize=256)
def _file_imports(origin: str, package: str, mtime: float) -> tuple[str, ...]:
    return tuple(_imported_modules(Path(origin).read_text(), package))


_LAST_DEPENDENCIES: set = set()


def dependency_fingerprint(source: str, package: str = "") -> str:
    """Hash of every project source file that ``source`` imports, directly or through other
    project modules, plus the Numba and Python versions (what a compiled kernel can depend on)."""
    h = hashlib.sha256()
    seen: dict[str, str] = {}
    stack = list(_imported_modules(source, package))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        origin = _project_origin(name)
        seen[name] = origin or ""
        if origin is None:
            continue
        pkg = name if origin.endswith("__init__.py") else name.rsplit(".", 1)[0] if "." in name else ""
        stack += _file_imports(origin, pkg, os.path.getmtime(origin))
    for name in sorted(n for n, o in seen.items() if o):
        _LAST_DEPENDENCIES.add(name)
        h.update(name.encode())
        h.update(Path(seen[name]).read_bytes())
    h.update(numba.__version__.encode())
    h.update(sys.version.encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """Hash of contactlab's source files that kernels compile from, plus Numba/Python versions."""
    h = hashlib.sha256()
    files = sorted({f for pattern in _KERNEL_SOURCES for f in _PACKAGE_DIR.glob(pattern)})
    for f in files:
        h.update(str(f.relative_to(_PACKAGE_DIR)).encode())
        h.update(f.read_bytes())
    h.update(numba.__version__.encode())
    h.update(sys.version.encode())
    return h.hexdigest()


def _module_source_hash(module_name: str) -> str:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None or not os.path.isfile(spec.origin):
        raise ContactlabError(f"cannot find the source file of law module {module_name!r}; a law must live in an "
                              f"importable module to be compiled and cached")
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()


#: narrow phases a scene may need besides sphere-sphere, sphere-plane and sphere-triangle
FEATURES = ("ELLIPSOID", "CONVEX", "ROLL", "VOLUME")
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


def _generated_source(law_module: str, debug: bool = False, shapes=False) -> tuple[str, str]:
    """Source text and module name of the kernel module for ``law_module`` (``debug``: the same
    kernels left uncompiled, calling the law's plain-Python version; ``shapes``: False for spheres
    and plane walls only (stand-ins, never called, for the other narrow phases), else the narrow
    phases the scene needs besides the mesh triangles, a subset of :data:`FEATURES`)."""
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
    _replace_marked(lines, _HIST_SIZE_MARK, [f"HIST_SIZE = {size}  # the law's HISTORY_SIZE\n"])
    if shapes is False or shapes is None:
        _replace_marked(lines, _SHAPES_MARK, ["from contactlab.geometry.stand_ins import body_pair, body_triangle, "
                                              "body_wall, select_triangles  # spheres and planes only\n"])
    else:
        _replace_marked(lines, _SHAPES_MARK, [f"from {dispatch_module(shapes)} import body_pair, body_triangle, "
                                              f"body_wall, select_triangles  # the scene's narrow phases\n"])
    _integrate_import(lines, debug)
    load = [k for k, line in enumerate(lines) if _LOAD_MARK in line]
    store = [k for k, line in enumerate(lines) if _STORE_MARK in line]
    if len(load) != 1 or not store or store != list(range(store[0], store[-1] + 1)):
        raise ContactlabError("kernel template must contain one history load line and a block of store lines")
    items = ", ".join(f"hist[k, {q}]" for q in range(size))
    lines[load[0]] = f"    return ({items}{',' if size == 1 else ''})  # {size} history floats\n"
    stores = [f"    hist[k, {q}] = h[{q}]\n" for q in range(size)] or ["    pass\n"]
    lines[store[0]:store[-1] + 1] = stores
    _generate_energy_and_bonds(lines, module, law_module, size)
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
    digest.update(_module_source_hash(law_module).encode())
    tag = re.sub(r"[^0-9A-Za-z]+", "_", law_module)[-40:]
    kind = ("debug" if debug else "kernels") + ("" if shapes is False or shapes is None else
                                                 "_shapes" + "".join(f[0] for f in sorted(shapes)))
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
                 "add, cross, dot, scale, sub, sphere_sphere, sphere_wall = (\n"
                 "    f.py_func for f in (add, cross, dot, scale, sub, sphere_sphere, sphere_wall))\n")


def python_law(law_module: str):
    """The plain-Python version of a law module's ``law``: its ``PYTHON_LAW`` when it defines one
    (generated composite laws do), else the compiled function's original Python function."""
    module = importlib.import_module(law_module)
    python = getattr(module, "PYTHON_LAW", None)
    if python is not None:
        return python
    law = module.law
    return getattr(law, "py_func", law)


def dissipation_terms(module) -> tuple[str, ...]:
    """The law module's ``DISSIPATION_TERMS`` (validated), ``()`` when it returns one total."""
    terms = getattr(module, "DISSIPATION_TERMS", ())
    if not isinstance(terms, tuple) or not all(isinstance(t, str) and t.isidentifier() for t in terms):
        raise ContactlabError(f"law module {module.__name__!r}: DISSIPATION_TERMS must be a tuple of identifiers, "
                              f"got {terms!r}")
    return terms


def bond_field(module) -> int:
    """The law module's ``BOND_FIELD`` (history index of the bond state), -1 when it has no bonds."""
    field = getattr(module, "BOND_FIELD", -1)
    size = getattr(module, "HISTORY_SIZE", 0)
    if not isinstance(field, int) or not -1 <= field < max(size, 0):
        raise ContactlabError(f"law module {module.__name__!r}: BOND_FIELD must be a history index below "
                              f"HISTORY_SIZE = {size}, got {field!r}")
    return field


def _replace_marked(lines, mark, new_lines):
    found = [k for k, line in enumerate(lines) if mark in line]
    if not found or found != list(range(found[0], found[-1] + 1)):
        raise ContactlabError(f"kernel template must contain one block marked {mark}")
    lines[found[0]:found[-1] + 1] = new_lines


def _generate_energy_and_bonds(lines, module, law_module, size):
    terms = dissipation_terms(module)
    if terms:
        book = [f"    owner[i, N_OWN + {t}] += d[{t}]\n    hist[k, {size + t}] += d[{t}]\n" for t in range(len(terms))]
        total = "    return " + " + ".join(f"d[{t}]" for t in range(len(terms))) + "\n"
    else:
        book = [f"    hist[k, {size}] += d\n"]
        total = "    return d\n"
    _replace_marked(lines, _BOOK_MARK, book)
    _replace_marked(lines, _TOTAL_MARK, [total])
    field = bond_field(module)
    _replace_marked(lines, _BOND_MARK, [f"    return h[{field}]\n" if field >= 0 else "    return 0.0\n"])
    _replace_marked(lines, _BOND_ROW_MARK, [f"    return hist[k, {field}]\n" if field >= 0 else "    return 0.0\n"])


def is_compiled(law_module: str, shapes=False) -> bool:
    """True when the kernels for ``law_module`` are already compiled and cached on disk (the
    variant for spheres and planes, or with ``shapes`` the one with those narrow phases)."""
    try:
        if not getattr(importlib.import_module(law_module), "CACHEABLE", True):
            return False
        _, name = _generated_source(law_module, shapes=shapes)
    except Exception:
        return False
    pattern = f"{name}.advance*-*.nbi"  # the serial or the parallel step kernel
    if any((cache_dir() / "__pycache__").glob(pattern)):
        return True
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")  # Numba then keeps its index files there
    return bool(numba_dir) and any(Path(numba_dir).rglob(pattern))


def kernel_module(law_module: str, debug: bool = False, shapes=False):
    """Import (generating it first if needed) the kernel module specialised for ``law_module``;
    ``debug``: its plain-Python twin (nothing compiled, the law runs as written); ``shapes``:
    False for spheres and planes, else the tuple of narrow-phase features the scene needs (see
    :data:`FEATURES`; mesh triangles come with any shapes variant)."""
    if shapes is not False and shapes is not None:
        shapes = tuple(sorted(set(shapes)))
    return _kernel_module(law_module, bool(debug), shapes)


@lru_cache(maxsize=None)
def _kernel_module(law_module: str, debug: bool, shapes):
    source, name = _generated_source(law_module, debug, shapes)
    cacheable = getattr(importlib.import_module(law_module), "CACHEABLE", True)
    return write_module(cache_dir() if cacheable else session_dir(), name, source)


def write_module(directory: Path, name: str, source: str):
    """Write ``source`` as module ``name`` in ``directory`` (atomically, unless it is there
    already: generated names hash their source) and import it."""
    path = directory / f"{name}.py"
    if not path.exists():
        tmp = directory / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(source)
        os.replace(tmp, path)
    if str(directory) not in sys.path:
        sys.path.append(str(directory))
    importlib.invalidate_caches()
    return importlib.import_module(name)


_SESSION_DIR: Path | None = None


def session_dir() -> Path:
    """Per-process directory for generated modules that cannot be cached (laws defined in
    ``__main__``, a notebook or a function); removed when the process exits."""
    global _SESSION_DIR
    if _SESSION_DIR is None:
        _SESSION_DIR = Path(tempfile.mkdtemp(prefix="contactlab-session-"))
        atexit.register(shutil.rmtree, _SESSION_DIR, True)
    return _SESSION_DIR


def shape_features(shape_kind, n_triangles: int, volume: bool):
    """The narrow-phase features (:data:`FEATURES`) a scene's pairs can need, or False for a scene
    of spheres and plane walls only.  ``shape_kind``: per body (see :mod:`contactlab.geometry.shapes`);
    ``volume``: the contact-volume mode."""
    import numpy as np

    from ..geometry.shapes import ELLIPSOID, POLYHEDRON, ROLL, SPHERE

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
            if a in (SPHERE, ELLIPSOID) and b in (SPHERE, ELLIPSOID):
                need.add("ELLIPSOID")
            elif volume and a == POLYHEDRON and b == POLYHEDRON:
                need.add("VOLUME")
            else:
                need.add("CONVEX")
    for a in present:  # against plane walls and mesh triangles
        if a == ELLIPSOID:
            need.add("ELLIPSOID")
        elif a == ROLL:
            need.add("ROLL")
        elif a == POLYHEDRON and volume:
            need.add("VOLUME")
        if n_triangles and a != SPHERE:
            need.add("CONVEX")
    return tuple(sorted(need))
