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

What is loaded is verified, and what is damaged is rebuilt (a full disk, a job killed while it
wrote, two versions sharing a home directory):

* a generated module is compared with the source that :func:`write_module` is asked to write
  (the name hashes that source, so a file of that name must hold exactly it); a file that
  differs (truncated, emptied, edited) is rewritten atomically, and a module whose intact
  source still fails to import (a damaged bytecode cache in its ``__pycache__``) is imported
  again without its ``.pyc``;
* Numba's files of every kernel compiled with ``cache=True`` (:mod:`contactlab._jit`: the
  built-in modules' kernels and the generated modules' alike) are written by
  :class:`CheckedCache`: each ``.nbi`` index and ``.nbc`` data file carries its length and a
  SHA-256 of its content, checked before it is unpickled; a damaged file is a cache miss (the
  kernel compiles again and the file is replaced).

Each repair is announced by one line, a :class:`KernelCacheWarning` located at the damaged file.

The compiled code of generated modules is keyed on their content, not on their folder: it lives
in the ``__pycache__`` next to them, or under ``$NUMBA_CACHE_DIR/contactlab-kernels/`` when that
is set (Numba's own keying would put it in a folder named after a hash of the kernel
directory's absolute path), and its index records a hash of the source file's content (not its
modification time).  So a kernel cache copied to another path or machine loads as is, given the
same CPU model, Python, Numba and contactlab; anything else recompiles.  The built-in modules'
kernels are cached next to contactlab's installed files (they move with the installation), or,
with ``$NUMBA_CACHE_DIR``, in a folder keyed by the installation's path, as Numba does (two
installations then never share index files).
"""
from __future__ import annotations

import ast
import atexit
import hashlib
import importlib
import importlib.util
import io
import itertools
import os
import pickle
import shutil
import sys
import tempfile
import uuid
import warnings
from functools import lru_cache
from pathlib import Path

import numba
from numba.core import caching as numba_caching
from numba.core import config as numba_config
from numba.core.dispatcher import Dispatcher
from numba.core.serialize import dumps as numba_dumps

from .errors import ContactlabError, KernelCacheWarning

__all__ = ["cache_dir", "session_dir", "write_module", "dependency_fingerprint", "module_source_hash", "generated_name",
           "KernelCacheWarning", "CheckedCache", "enable_checked_cache"]


def _one_line(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 200 else text[:197] + "..."


def _report(path, message: str) -> None:
    """Announce a repair in one line: ``<file>:0: KernelCacheWarning: <message>``."""
    warnings.warn_explicit(message, KernelCacheWarning, str(path), 0, module=__name__)


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


#: directories that hold generated modules (the kernel cache, session directories): the Numba
#: cache of the kernels defined there is keyed on the modules' content (:class:`_GeneratedModuleLocator`)
_GENERATED_DIRS: set[str] = set()


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ContactlabError(f"cannot write the generated module {path}: {exc}; free some space or point "
                              f"CONTACTLAB_CACHE_DIR at a writable folder") from exc


def _drop_bytecode(path: Path) -> None:
    """Remove the ``.pyc`` of ``path`` that Python keeps in ``__pycache__`` (if any)."""
    try:
        Path(importlib.util.cache_from_source(str(path))).unlink(missing_ok=True)
    except (OSError, ValueError, NotImplementedError):
        pass


def _damage(found: bytes, expected: bytes) -> str | None:
    """What is wrong with a generated module that should hold ``expected`` (None: nothing)."""
    if found == expected:
        return None
    if not found:
        return "empty"
    if expected.startswith(found):
        return f"truncated to {len(found)} of {len(expected)} bytes"
    if not found.strip():
        return f"emptied to {len(found)} bytes of white space"
    return f"{len(found)} bytes that are not its generated source of {len(expected)}"


def write_module(directory: Path, name: str, source: str):
    """Write ``source`` as module ``name`` in ``directory`` and import it.

    The name hashes the source (:func:`generated_name`), so a file of that name that is there
    already must hold exactly ``source``: it is compared, and a missing or damaged one is written
    atomically (a damaged one with a :class:`KernelCacheWarning`).  If the intact module still
    fails to import, its bytecode cache is removed and the import is tried once more (a second
    failure is a real error and is raised)."""
    directory = Path(directory)
    path = directory / f"{name}.py"
    expected = source.encode("utf-8")
    _GENERATED_DIRS.add(os.path.realpath(directory))
    try:
        found = path.read_bytes()
    except FileNotFoundError:
        found = None
    if found is None:
        _write_atomic(path, expected)
    else:
        damage = _damage(found, expected)
        if damage is not None:
            _write_atomic(path, expected)
            _drop_bytecode(path)
            _report(path, f"damaged generated module ({damage}): rewritten from its source")
    if str(directory) not in sys.path:
        sys.path.append(str(directory))
    importlib.invalidate_caches()
    try:
        return importlib.import_module(name)
    except Exception as first:  # noqa: BLE001 - any failure of an intact source: see the docstring
        sys.modules.pop(name, None)
        _drop_bytecode(path)
        importlib.invalidate_caches()
        module = importlib.import_module(name)
        _report(path, f"generated module failed to import ({_one_line(first)}) although its source "
                      f"is intact: its bytecode cache removed, imported again")
        return module


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


# --- Numba's files, verified -------------------------------------------------------------------
#
# Numba (numba.core.caching) keeps, per cached function, an index ``<base>.nbi`` (the Numba
# version, a stamp of the source file, and which data file holds which signature) and one data
# file ``<base>.<n>.nbc`` per signature, both pickles, and unpickles them unchecked: a truncated
# or emptied file raises UnpicklingError, EOFError... on every later run.  CheckedCache writes the
# same content framed by a header (a magic line, the length of the content, its SHA-256) and
# treats any file that fails the check, or fails to unpickle or to load, as a cache miss.

#: file names of checked files end ``.cl1.nbi`` / ``.cl1.<n>.nbc``: never mistaken for Numba's own
_NAME_SUFFIX = ".cl1"
_MAGIC = b"contactlab kernel cache 1\n"
_HEADER = len(_MAGIC) + 8 + 32


class _Damaged(Exception):
    """A checked file fails its check (the message says how)."""


def _seal(body: bytes) -> bytes:
    return _MAGIC + len(body).to_bytes(8, "little") + hashlib.sha256(body).digest() + body


def _unseal(path: str) -> bytes:
    """The content of checked file ``path`` (FileNotFoundError if there is none; _Damaged if it fails its check)."""
    with open(path, "rb") as f:
        blob = f.read()
    if not blob:
        raise _Damaged("empty")
    if not blob.startswith(_MAGIC):
        if _MAGIC.startswith(blob):
            raise _Damaged(f"truncated to {len(blob)} bytes")
        raise _Damaged(f"{len(blob)} bytes without the header that contactlab writes")
    if len(blob) < _HEADER:
        raise _Damaged(f"truncated to {len(blob)} bytes")
    size = int.from_bytes(blob[len(_MAGIC):len(_MAGIC) + 8], "little")
    body = blob[_HEADER:]
    if len(body) != size:
        raise _Damaged(f"{'truncated' if len(body) < size else 'lengthened'} to {len(blob)} of {_HEADER + size} bytes")
    if hashlib.sha256(body).digest() != blob[_HEADER - 32:_HEADER]:
        raise _Damaged("its content does not match its SHA-256")
    return body


@lru_cache(maxsize=1024)
def _content_stamp(path: str, mtime_ns: int, size: int) -> bytes:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


class _ContentStamp:
    """Locator mixin: the source stamp is a hash of the file's content (Numba before 0.61 used its
    modification time and size, which change when a cache is copied)."""

    def get_source_stamp(self):
        st = os.stat(self._py_file)
        return _content_stamp(self._py_file, st.st_mtime_ns, st.st_size)


class _GeneratedModuleLocator(_ContentStamp, numba_caching._SourceFileBackedLocatorMixin, numba_caching._CacheLocator):
    """Where the Numba files of a generated module's kernels live: next to the module (its
    ``__pycache__``), or in ``$NUMBA_CACHE_DIR/contactlab-kernels`` (a folder whose name does not
    depend on the kernel cache's path, unlike Numba's own choice; the module names hash their
    content, so one folder serves every kernel cache)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        if numba_config.CACHE_DIR:
            self._cache_path = os.path.join(numba_config.CACHE_DIR, "contactlab-kernels")
        else:
            self._cache_path = os.path.join(os.path.dirname(py_file), "__pycache__")

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.realpath(os.path.dirname(os.path.abspath(py_file))) not in _GENERATED_DIRS:
            return None
        return super().from_function(py_func, py_file)


def _content_stamped(locator):
    return type(locator.__name__, (_ContentStamp, locator), {"__module__": __name__})


class _CheckedImpl(numba_caching.CompileResultCacheImpl):
    _locator_classes = [_GeneratedModuleLocator] + [
        _content_stamped(c) if issubclass(c, numba_caching._SourceFileBackedLocatorMixin) else c
        for c in numba_caching.CompileResultCacheImpl._locator_classes]

    def get_filename_base(self, fullname, abiflags):
        return super().get_filename_base(fullname, abiflags) + _NAME_SUFFIX


class _CheckedFiles:
    """The index and data files of one cached function, checked on load (the counterpart of
    ``numba.core.caching.IndexDataCacheFile``, same content, framed by :func:`_seal`)."""

    def __init__(self, cache_path, filename_base, source_stamp, qualname):
        self._cache_path = cache_path
        self._index_path = os.path.join(cache_path, f"{filename_base}.nbi")
        self._data_pattern = f"{filename_base}.{{:d}}.nbc"
        self._stamp = source_stamp
        self._version = numba.__version__
        self._qualname = qualname
        self._reported: set[str] = set()

    def damaged(self, path: str, reason: str) -> None:
        """Announce (once per file and process) that ``path`` is damaged; the compilation that
        follows the miss replaces it."""
        if path not in self._reported:
            self._reported.add(path)
            _report(path, f"damaged Numba cache file ({reason}): recompiling {self._qualname} and replacing it")

    def flush(self):
        self._save_index({})

    def load(self, key):
        """The cached data for ``key``, or None (a miss: none, stale, or damaged)."""
        name = self._load_index().get(key)
        if name is None:
            return None
        path = os.path.join(self._cache_path, name)
        try:
            body = _unseal(path)
        except FileNotFoundError:
            return None
        except _Damaged as exc:
            self.damaged(path, str(exc))
            return None
        except OSError:
            return None
        try:
            stamp, found_key, data = pickle.loads(body)
        except Exception as exc:  # noqa: BLE001 - an unreadable file is a miss
            self.damaged(path, f"cannot be unpickled: {_one_line(exc)}")
            return None
        if stamp != self._stamp or found_key != key:
            return None  # written for another version of the source or another entry (a race)
        return data

    def data_path(self, key) -> str | None:
        name = self._load_index().get(key)
        return None if name is None else os.path.join(self._cache_path, name)

    def save(self, key, data):
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            used = set(overloads.values())
            name = next(n for n in (self._data_pattern.format(i) for i in itertools.count(1)) if n not in used)
            overloads[key] = name
        # data first: a reader never finds an index entry whose data file is not there yet
        self._write(os.path.join(self._cache_path, name), numba_dumps((self._stamp, key, data)))
        self._save_index(overloads)

    def _load_index(self) -> dict:
        try:
            body = _unseal(self._index_path)
        except FileNotFoundError:
            return {}
        except _Damaged as exc:
            self.damaged(self._index_path, str(exc))
            return {}
        except OSError:
            return {}
        try:
            stream = io.BytesIO(body)
            version = pickle.load(stream)
            if version != self._version:
                return {}  # another Numba version: its pickles may not load here
            stamp, overloads = pickle.loads(stream.read())
        except Exception as exc:  # noqa: BLE001 - an unreadable index is a miss
            self.damaged(self._index_path, f"cannot be unpickled: {_one_line(exc)}")
            return {}
        return overloads if stamp == self._stamp else {}

    def _save_index(self, overloads):
        self._write(self._index_path, pickle.dumps(self._version, protocol=-1) + numba_dumps((self._stamp, overloads)))

    @staticmethod
    def _write(path, body):
        tmp = f"{path}.tmp.{uuid.uuid4().hex[:16]}"
        try:
            with open(tmp, "wb") as f:
                f.write(_seal(body))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _glob_data(base: str) -> list[str]:
    folder, prefix = os.path.split(base)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names
            if n.startswith(prefix + ".") and n.endswith(".nbc") and n[len(prefix) + 1:-4].isdigit()]


class CheckedCache(numba_caching.FunctionCache):
    """Numba's per-function disk cache with its files checked on load (:class:`_CheckedFiles`)
    and keyed on content (:class:`_GeneratedModuleLocator`, :class:`_ContentStamp`): a damaged
    file is a miss, announced by one :class:`KernelCacheWarning`, and replaced by the
    compilation that follows."""

    _impl_class = _CheckedImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CheckedFiles(self._cache_path, self._impl.filename_base,
                                         self._impl.locator.get_source_stamp(),
                                         f"{py_func.__module__}.{py_func.__qualname__}")

    def paths(self) -> list[str]:
        """The index and data files of this function that are on disk (any signature)."""
        base = os.path.join(self._cache_path, self._impl.filename_base)
        return sorted(p for p in (f"{base}.nbi", *_glob_data(base)) if os.path.isfile(p))

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        data = self._cache_file.load(key)
        if data is None:
            return None
        try:
            return self._impl.rebuild(target_context, data)
        except Exception as exc:  # noqa: BLE001 - a file that passed its check but cannot be loaded
            path = self._cache_file.data_path(key) or self._cache_path
            self._cache_file.damaged(path, f"cannot be loaded: {_one_line(exc)}")
            return None


def enable_checked_cache(dispatcher):
    """Give a Numba dispatcher (``numba.njit(...)`` without ``cache=True``) the checked disk cache
    (what ``cache=True`` would do, with :class:`CheckedCache`); anything else (a plain function,
    with ``NUMBA_DISABLE_JIT``) is returned as it is."""
    if isinstance(dispatcher, Dispatcher):
        dispatcher._cache = CheckedCache(dispatcher.py_func)
    return dispatcher
