"""Calling the generated kernels: compiled, or as their plain-Python twin (debug mode).

Every kernel call of the engine goes through here: the simulation's step kernels
(:class:`~contactlab.engine.stepper.Stepper`) and the single-contact probe
(:func:`contactlab.probe`).  :func:`kernels_for` gives the kernel module of a law, compiled or its
plain-Python twin (the same template with identity decorators and the law's uncompiled
version, :func:`contactlab.engine.codegen.kernel_module`); :func:`launch` calls one of its
kernels, so that a law Numba cannot compile (Numba compiles on the first call) is reported as a
:class:`~contactlab.errors.LawError` naming the law, its line and a hint, and a failure inside
contactlab's own engine code as an internal error.

Debug mode is chosen per call (``debug=True``), or for every probe without an explicit choice
inside :func:`debug_probes` (a simulation in debug mode estimates a user law's stability limit by
probing it: uncompiled, compiling nothing).
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import re
from pathlib import Path

import numba

from ..errors import ContactlabError
from ..laws.compile_errors import explain_compile_error
from .codegen import kernel_module

__all__ = ["launch", "kernels_for", "debug_probes", "probe_debug"]

_ENGINE = str(Path(__file__).resolve().parent.parent)
_DEBUG_PROBES = contextvars.ContextVar("contactlab_debug_probes", default=False)


def kernels_for(law_module: str, *, debug: bool = False, shapes=False, dropped=(), row_length: int = 1):
    """The kernel module of ``law_module``: compiled (cached on disk), or with ``debug`` its
    plain-Python twin; ``shapes``: the narrow-phase features of the scene (see
    :func:`contactlab.engine.codegen.shape_features`), False for spheres and plane walls;
    ``dropped``: the law's history columns the contact table does not store
    (:mod:`contactlab.engine.history_layout`); ``row_length``: the pair table's row length
    (:func:`contactlab.engine.codegen.pair_row_length`)."""
    return kernel_module(law_module, debug, shapes, dropped, row_length)


def launch(contact_model, kernel, *args):
    """``kernel(*args)``, with Numba's compilation errors translated (see the module docstring)."""
    try:
        return kernel(*args)
    except numba.core.errors.NumbaError as exc:
        first = next((m.group(1) for m in re.finditer(r'File "([^"]+)", line \d+', str(exc))), "")
        if first and os.path.abspath(first).startswith(_ENGINE) and "/laws/" not in first.replace(os.sep, "/"):
            # the failing line is in contactlab's own engine or geometry, not in the law
            raise ContactlabError(f"contactlab's step kernels failed to compile at {first} (an internal error, "
                                  f"not a problem of the law {getattr(contact_model, 'name', '')}); please report "
                                  f"it with Numba's message, chained below") from exc
        raise explain_compile_error(exc, contact_model) from exc


@contextlib.contextmanager
def debug_probes(debug: bool = True):
    """Within this block, probes with ``debug=None`` run the law as plain Python."""
    token = _DEBUG_PROBES.set(bool(debug))
    try:
        yield
    finally:
        _DEBUG_PROBES.reset(token)


def probe_debug() -> bool:
    """Whether a probe without an explicit ``debug`` runs as plain Python (inside :func:`debug_probes`)."""
    return _DEBUG_PROBES.get()
