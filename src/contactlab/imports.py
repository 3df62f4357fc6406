"""Importing a module that a data file names: the choice of the person running contactlab.

A user-defined law (:func:`~contactlab.contact_law`) is stored by name, ``"module:qualname"``: in
a scene file's ``[model] type`` (and a slot's, or a parallel bond's ``contact``), in a
checkpoint's stored model, and so in every ensemble member that reads one of them.  Reaching the
law means importing ``module``, and importing a module runs its top-level code.  A checkpoint is
pickle-free and checksummed, but a checksum proves that a file is whole, not where it came from:
a file from elsewhere must not run code by being read.  So every name read from a data file that
leads to an import goes through :func:`import_named` (:func:`check_import`, then the import),
which imports the module only when

* it is contactlab's own (``contactlab`` or ``contactlab.*``, e.g. the built-in slot laws of
  :mod:`contactlab.laws.parts`): always allowed;
* it is already imported in this process (in ``sys.modules``): importing it again runs nothing,
  so a law your own script imported, or defined in ``__main__``, is found as before;
* or it is allowed: ``allow_import=("mod", ...)`` of
  :func:`~contactlab.io.scenefile.load_scene_file`, :meth:`contactlab.Simulation.load_checkpoint`,
  :func:`~contactlab.io.checkpoint.read_checkpoint`, :class:`contactlab.ensemble.SceneFile` and
  :func:`~contactlab.laws.registry.model_from_dict`, or ``--allow-import mod`` (repeatable) of
  ``contactlab run`` and ``contactlab sweep``.  Allowing a package allows its submodules
  (``mylaws`` allows ``mylaws.adhesion``); allowing ``mylaws.adhesion`` also runs the package's
  ``mylaws/__init__.py``, as any import of it does.

Anything else raises :class:`~contactlab.errors.ImportNotAllowedError` before the import, naming
the module, the file and how to allow it.  Code is the caller's explicit choice everywhere else
and is not gated: a model object passed to :class:`~contactlab.Simulation`, ``cl.models.NAME``,
``contactlab validate MODULE:MODEL`` and ``--measure module:function`` (named on the command
line), a ``"module:function"`` measure given to :func:`contactlab.ensemble.run`.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from ._arguments import fmt
from .errors import ImportNotAllowedError, InputError

__all__ = ["allowed_modules", "is_allowed", "check_import", "import_named", "OWN_PACKAGE"]

#: contactlab's own package: its modules are always allowed
OWN_PACKAGE = "contactlab"


def _is_module_name(name) -> bool:
    return isinstance(name, str) and bool(name) and all(part.isidentifier() for part in name.split("."))


def allowed_modules(allow_import, name: str = "allow_import") -> frozenset[str]:
    """``allow_import`` as a set of module names: None or ``()`` (nothing beyond the always
    allowed), one name, or an iterable of names (``("mylaws", "lab.contacts")``); anything else,
    or a name that is not a dotted Python module name, is an InputError naming ``name``."""
    if allow_import is None:
        return frozenset()
    if isinstance(allow_import, str):
        allow_import = (allow_import,)
    try:
        names = tuple(allow_import)
    except TypeError:
        raise InputError(f"{name} must be module names (a str or a list of them, e.g. ('mylaws',)), got "
                         f"{fmt(allow_import)} ({type(allow_import).__name__})") from None
    for module in names:
        if not _is_module_name(module):
            raise InputError(f"{name}: {fmt(module)} is not a module name (dotted Python names such as 'mylaws' or "
                             f"'lab.contacts', without ':name')")
    return frozenset(names)


def is_allowed(module: str, allowed: frozenset[str] = frozenset()) -> bool:
    """Whether ``module`` may be imported for a data file: contactlab's own, already imported, or
    ``module`` or a package above it in ``allowed``."""
    parts = module.split(".")
    if parts[0] == OWN_PACKAGE or module in sys.modules:
        return True
    return any(".".join(parts[:k]) in allowed for k in range(1, len(parts) + 1))


def check_import(module: str, *, allow_import=(), source: str = "a data file's model", what: str = "") -> None:
    """Raise :class:`~contactlab.errors.ImportNotAllowedError` unless ``module``, named by a data
    file, :func:`is_allowed`.  ``source`` says where, ending where ``what`` (the name as the file
    wrote it) follows: ``"scene.toml: [model]"`` and ``"type 'mylaws:adhesive'"``.  Imports nothing."""
    allowed = allowed_modules(allow_import)
    what = what or "a name"
    if not _is_module_name(module):
        raise InputError(f"{source} {what} does not start with a module name (a dotted Python name such as "
                         f"'mylaws' or 'lab.contacts' before the ':'), got {fmt(module)}")
    if not is_allowed(module, allowed):
        raise ImportNotAllowedError(
            f"{source} {what} names the module {module!r}, which is not imported yet; importing it would run its "
            f"code, and contactlab imports a module named by a data file only when you allow it (a file from "
            f"elsewhere could run anything: a checksum proves a file whole, not where it came from). If you trust "
            f"it: --allow-import {module} (contactlab run, contactlab sweep), allow_import=[{module!r}] "
            f"(load_scene_file, Simulation.load_checkpoint, cl.ensemble.SceneFile), or import it yourself first"
            f"{'; allowed now: ' + ', '.join(sorted(allowed)) if allowed else ''}")


def import_named(module: str, *, allow_import=(), source: str = "a data file's model", what: str = "") -> ModuleType:
    """Import ``module``, named by a data file, after :func:`check_import` (which raises before
    anything is imported when it may not be)."""
    check_import(module, allow_import=allow_import, source=source, what=what)
    return importlib.import_module(module)


def add_allow_import_argument(parser) -> None:
    """``--allow-import MODULE`` (repeatable), for ``contactlab run`` and ``contactlab sweep`` (here,
    in a light module, so that ``contactlab run --help`` imports nothing heavy)."""
    parser.add_argument("--allow-import", action="append", default=[], metavar="MODULE",
                        help="let the scene file (and a --restart checkpoint of run) import MODULE for a user-defined law "
                             "it names as type = \"MODULE:name\" (a package allows its submodules; repeatable); "
                             "without it such a file is refused, since importing a module runs its code")


def add_allow_long_run_argument(parser) -> None:
    """``--allow-long-run``: run what :mod:`contactlab.run_length` would refuse (more than a week of
    wall time, a dt below 1e-15 of the stability limit)."""
    parser.add_argument("--allow-long-run", action="store_true",
                        help="run even when the run would take more than a week of wall time (estimated before it "
                             "starts and from its first second) or dt is below 1e-15 of the stability limit; "
                             "without it such a run is refused with the numbers")
