"""Generated modules in the kernel cache: where they live, how they are named, how they are written.

Numba caches a compiled function next to the file that defines it and reloads it in a new process
only if the function closes over nothing and takes no functions as arguments.  So everything that
composes compiled code at run time writes it out as an ordinary importable module instead: the step
kernels specialised per law (:mod:`contactlab.engine.codegen`), the composite law of slot laws
(:mod:`contactlab.laws.composition`), a parallel bond with its contact law
(:mod:`contactlab.laws.parallel_bond`).  Their names hash their source and every source file they
import, directly or indirectly (:func:`dependency_fingerprint`), so any change to code a kernel
uses gives a new module and a fresh compilation, while a change to code it does not use leaves it
cached.

Generated modules live in ``$CONTACTLAB_CACHE_DIR`` or, by default, ``~/.cache/contactlab``
(``$XDG_CACHE_HOME/contactlab`` when set), under ``kernels/``; modules that cannot be cached (a law
defined in ``__main__`` or a notebook) in a per-process directory (:func:`session_dir`).
"""
from __future__ import annotations

import ast
import atexit
import hashlib
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import numba

from .errors import ContactlabError

__all__ = ["cache_dir", "session_dir", "write_module", "dependency_fingerprint", "module_source_hash", "generated_name"]


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
        h.update(name.encode())
        h.update(Path(seen[name]).read_bytes())
    h.update(numba.__version__.encode())
    h.update(sys.version.encode())
    return h.hexdigest()


def module_source_hash(module_name: str) -> str:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None or not os.path.isfile(spec.origin):
        raise ContactlabError(f"cannot find the source file of module {module_name!r}; a law must live in an "
                              f"importable module to be compiled and cached")
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()


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


def generated_name(prefix: str, source: str, *extra: str) -> str:
    """``prefix`` followed by 16 hex digits hashing ``source``, the source files it imports
    (:func:`dependency_fingerprint`) and any ``extra`` text: the name of a generated module."""
    digest = hashlib.sha256((source + dependency_fingerprint(source) + "".join(extra)).encode()).hexdigest()[:16]
    return f"{prefix}_{digest}"
