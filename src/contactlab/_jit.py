"""The one place for Numba compile options.

Every compiled function in contactlab is decorated through :func:`jit` (serial) or :func:`pjit`
(parallel loops with ``prange``), so the options live here and nowhere else:

* ``cache=True``: compiled code is written next to the module (``__pycache__``) and reloaded by the
  next process.  Kernels that combine laws are generated as importable modules (see
  :mod:`contactlab.engine.codegen`) precisely so that this cache works for them too.
* ``error_model="numpy"``: division by zero gives inf/NaN instead of raising; the kernels check for
  non-finite values themselves and report them (kernels never raise).
* ``fastmath`` stays off: it would let LLVM assume that no NaN ever occurs, which would delete the
  very checks that detect a blow-up.
* ``nogil=True``: a running kernel does not hold the GIL (a progress bar can be drawn meanwhile).
"""
from __future__ import annotations

import numba

__all__ = ["jit", "pjit", "JIT_OPTIONS", "PARALLEL_OPTIONS"]

JIT_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
PARALLEL_OPTIONS = dict(JIT_OPTIONS, parallel=True)


def jit(func=None, **overrides):
    """Serial compiled function (``numba.njit`` with the project's options)."""
    opts = dict(JIT_OPTIONS, **overrides)
    if func is None:
        return numba.njit(**opts)
    return numba.njit(**opts)(func)


def pjit(func=None, **overrides):
    """Compiled function whose ``prange`` loops run in parallel."""
    opts = dict(PARALLEL_OPTIONS, **overrides)
    if func is None:
        return numba.njit(**opts)
    return numba.njit(**opts)(func)
