"""Giving freed memory back to the system after a large, short-lived computation.

NumPy's temporaries of a few megabytes come from the C library's heap once a larger block has
been freed (glibc then raises its threshold for mapping blocks of their own), and memory freed on
the heap stays with the process: after the stability bound of a million spheres its ~70 MB of
temporaries stayed resident, ~70 B a sphere on the peak memory of the rest of the run.
:func:`release_free_memory` asks glibc to return it (``malloc_trim``); elsewhere it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["release_free_memory"]


def _trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _trim()


def release_free_memory() -> None:
    """Return the heap's free memory to the system (glibc's ``malloc_trim(0)``; a no-op where the C
    library has none)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
