"""The one place for Numba compile options.

Two kinds of compiled functions, two decorators:

* :func:`jit` — building blocks (laws, narrow phase, vector helpers).  They are **not** cached on
  their own: they are compiled into the kernels that call them.  Numba's cache does not notice a
  change in a function of another file, so a separately cached building block could go stale
  inside a freshly compiled kernel.
* :func:`kernel` / :func:`pkernel` — entry points called from Python (step kernels, neighbour
  build).  They are cached on disk (``cache=True``), and every building block they call comes
  from their own file or from a generated module whose name hashes all of contactlab's sources
  (:mod:`contactlab.engine.codegen`), so a cached kernel is never stale.  ``pkernel`` runs its
  ``prange`` loops in parallel.  Their disk cache is :class:`contactlab.kernel_cache.CheckedCache`
  (Numba's, with every file checked on load and a damaged one recompiled and replaced, keyed on
  the source's content; see :mod:`contactlab.kernel_cache`), not Numba's plain ``cache=True``.

Common options: ``error_model="numpy"`` (division by zero gives inf/NaN instead of raising; the
kernels check for non-finite values themselves, kernels never raise), ``fastmath`` off (it would
let LLVM assume that no NaN occurs and delete the blow-up checks), ``nogil=True``.
"""
from __future__ import annotations

import numba

from .kernel_cache import enable_checked_cache

__all__ = ["jit", "kernel", "pkernel", "pjit", "python_only", "plain_python", "kernel_nocache", "pkernel_nocache", "JIT_OPTIONS", "KERNEL_OPTIONS", "PARALLEL_OPTIONS", "n_blocks",
           "BLOCKS_PER_THREAD"]

#: ``_nrt=True`` said explicitly: a compiled function that does not say it inherits the setting of the
#: function whose compilation compiled it, and the step's loops that allocate nothing are compiled
#: without reference counting (``_nrt=False``, engine/integrate.py); what they call must keep it
JIT_OPTIONS = dict(cache=False, nogil=True, error_model="numpy", fastmath=False, inline="always", _nrt=True)
KERNEL_OPTIONS = dict(JIT_OPTIONS, cache=True, inline="never")
PARALLEL_OPTIONS = dict(KERNEL_OPTIONS, parallel=True)


def _decorate(options, func, overrides, building_block=False):
    opts = dict(options, **overrides)
    cached = opts.pop("cache", False)

    def decorate(f):
        dispatcher = numba.njit(cache=False, **opts)(f)
        if building_block:
            dispatcher._contactlab_building_block = True  # what plain_python turns back into Python
        return enable_checked_cache(dispatcher) if cached else dispatcher

    return decorate if func is None else decorate(func)


def jit(func=None, **overrides):
    """Building block compiled into the kernels that call it (not cached on its own)."""
    return _decorate(JIT_OPTIONS, func, overrides, building_block=True)


def kernel(func=None, **overrides):
    """Serial entry point, cached on disk."""
    return _decorate(KERNEL_OPTIONS, func, overrides)


def pkernel(func=None, **overrides):
    """Entry point whose ``prange`` loops run in parallel, cached on disk."""
    return _decorate(PARALLEL_OPTIONS, func, overrides)


pjit = pkernel


def kernel_nocache(func=None, **overrides):
    """:func:`kernel` without the disk cache (kernels of laws defined in ``__main__``)."""
    return _decorate(dict(KERNEL_OPTIONS, cache=False), func, overrides)


def pkernel_nocache(func=None, **overrides):
    """:func:`pkernel` without the disk cache (kernels of laws defined in ``__main__``)."""
    return _decorate(dict(PARALLEL_OPTIONS, cache=False), func, overrides)


def python_only(func=None, **overrides):
    """Leave ``func`` uncompiled (the debug mode's stand-in for :func:`jit`, :func:`kernel` and
    :func:`pkernel`: the kernels then run as plain Python, breakpoints and prints included)."""
    if func is None:
        return lambda f: f
    return func


def plain_python(namespace: dict) -> None:
    """Replace, in a module's ``namespace``, every compiled building block (:func:`jit`) by its
    Python function: what the debug twin of a generated kernel module does with what it imports
    (entry points, :func:`kernel` and :func:`pkernel`, stay compiled)."""
    for name, value in list(namespace.items()):
        if getattr(value, "_contactlab_building_block", False):
            namespace[name] = value.py_func


#: parallel loops are split into this many blocks per thread (see :func:`n_blocks`)
BLOCKS_PER_THREAD = 8


#: a step over fewer bodies than this runs its loops serially on one thread (see :func:`n_blocks`):
#: entering the two parallel regions of a step costs ~5-10 us, and on the 2-core VM of
#: ``benchmarks/README.md`` the serial step was faster up to ~100-125 beads, on one thread (27: 2.1e6
#: vs 1.1e6 particle-steps/s, 125: 2.6e6 vs 2.7e6, 1000: 2.7e6 vs 4.9e6) as on two (64 beads: 25 vs
#: 38 us per step, 128: 55 vs 49)
SERIAL_BELOW = 100


def n_blocks(n_items: int | None = None) -> int:
    """Number of blocks a parallel loop is split into: ``BLOCKS_PER_THREAD`` per thread, or 1 for
    fewer than ``SERIAL_BELOW`` items (the serial step kernel then calls the loops directly,
    without entering a parallel region).

    Each block is one call of a compiled function whose array arguments Numba reference-counts
    with atomic operations on counters shared by all threads; a few large blocks keep that cost
    negligible (one block per 64 spheres cost a sizeable part of a step).  The count is passed to
    the kernels as an argument: calling ``numba.get_num_threads()`` inside them would make them
    uncacheable.  Blocking never changes a result.
    """
    if n_items is not None and n_items < SERIAL_BELOW:
        return 1
    return BLOCKS_PER_THREAD * numba.get_num_threads()
