"""The GPU step kernels compiled to PTX without a GPU: whether the GPU compiler takes a law.

:func:`compile_step_ptx` compiles every kernel of :mod:`contactlab.engine.gpu_kernels` for a
simulation's law and scene with the argument types the GPU stepper would launch them with (the
records' arrays as writable C-contiguous device arrays), for one compute capability.  A construct
the GPU compiler refuses (an allocation, a Python object, an exception with a computed message)
raises :class:`~contactlab.errors.LawError` naming the law and the line, as the CPU compiler's do.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import ContactlabError, LawError
from ..gpu import backend
from . import gpu_neighbors as gn
from . import gpu_numbers, gpu_order
from .codegen import gpu_kernel_module
from .launch import launch

__all__ = ["compile_step_ptx", "compile_neighbour_ptx", "compile_numbers_ptx", "compile_order_ptx", "device_types"]


def _device_like(x):
    """A stand-in with the type the device twin of ``x`` has (arrays: writable, C-contiguous)."""
    if isinstance(x, np.ndarray):
        return np.zeros((0,) * x.ndim, dtype=x.dtype)
    if isinstance(x, tuple):
        items = [_device_like(f) for f in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    return x


def device_types(records) -> tuple:
    """Numba types of the records' device twins."""
    return tuple(numba.typeof(_device_like(r)) for r in records)


def compile_step_ptx(sim, cc=(9, 0)) -> str:
    """PTX of ``sim``'s GPU step kernels for compute capability ``cc`` (the pair pass's first;
    all compiled).  Needs numba-cuda with libNVVM and no simulator."""
    if backend.cuda is None:
        raise ContactlabError(backend.NUMBA_CUDA_MISSING)
    if backend.simulated():
        raise ContactlabError("the GPU compiler does not run under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1): "
                              "check a law's GPU compilation in a process without it")
    st = sim.stepper
    g = gpu_kernel_module(st.law.law_module, shapes=st.shape_features, dropped=st.history_layout.dropped,
                          row_length=st.row_length)
    bodies, books, bounds, table, run = device_types(st.records())
    i64, f64, b1 = numba.int64, numba.float64, numba.boolean
    control = numba.int64[::1]
    order = numba.int32[::1]
    signatures = {
        "pairs": (i64, order, f64, control, bodies, books, bounds, table, run),
        "reduction": (i64, order, f64, control, bodies, books, bounds, table, run),
        "first_half": (i64, order, f64, control, bodies, table, run),
        "boundaries": (f64, b1, b1, control, bodies, books, bounds, table, run),
        "predict_from_state": (i64, order, bodies),
    }
    ptx = {}
    for name, sig in signatures.items():
        try:
            ptx[name] = launch(st.law, backend.compile_ptx, getattr(g, name).py_func, sig, cc)
        except LawError as exc:
            raise LawError(f"the GPU compiler (numba-cuda, sm_{cc[0]}{cc[1]}) refuses this law: {exc}\n  hint: on "
                           f"the GPU a law may not allocate (np.zeros, np.empty, lists, dicts), build strings or call "
                           f"Python objects: return tuples and use math.* (docs/gpu.md, 'A GPU-safe law')",
                           law=exc.law, line=exc.line) from exc
    return ptx["pairs"]


def _need_compiler() -> None:
    """The PTX checks need numba-cuda's compiler (libNVVM), which its simulator replaces."""
    if backend.cuda is None or backend.simulated():
        raise ContactlabError("the GPU compiler needs numba-cuda outside its simulator")


def _empty(dtype, ndim: int = 1) -> np.ndarray:
    """An empty array of ``dtype`` and ``ndim`` dimensions: a stand-in whose type a kernel argument has."""
    return np.zeros((0,) * ndim, dtype=dtype)


def compile_neighbour_ptx(cc=(9, 0)) -> dict:
    """PTX of every kernel of the device neighbour build (:mod:`contactlab.engine.gpu_neighbors`),
    law-independent, for compute capability ``cc``: ``{kernel name: PTX}``."""
    _need_compiler()
    f64, i32, u32, i8, u8 = np.float64, np.int32, np.uint32, np.int8, np.uint8

    build = gn.Build(_empty(f64, 2), _empty(f64), _empty(np.bool_), _empty(f64, 2), _empty(f64), _empty(f64), _empty(np.int64),
                     _empty(i32), _empty(i32), _empty(f64, 2), _empty(f64, 2), _empty(f64, 2), _empty(u8), _empty(f64, 2), _empty(u32),
                     _empty(u32), _empty(u32), _empty(u32), _empty(f64), _empty(i32), _empty(i32))
    wrap = gn.Wrap(_empty(f64, 2), _empty(f64, 2), _empty(f64, 2), _empty(np.int64, 2), _empty(f64), _empty(f64), _empty(np.bool_),
                   _empty(f64))
    union = gn.Union(_empty(u32), _empty(u32), _empty(u32), _empty(u32), _empty(f64, 2), _empty(u32), _empty(u32), _empty(u32), _empty(i32),
                     _empty(i32))
    switched_off = gn.Filter(_empty(u32), _empty(u32), _empty(np.uint16), _empty(np.uint16), _empty(u8, 2), _empty(np.int64),
                             _empty(u32), _empty(u32), _empty(u32), _empty(i32), _empty(i32))
    carry = gn.Carry(_empty(u32), _empty(u32), _empty(u32), _empty(u32), _empty(f64, 2), _empty(f64, 2), _empty(i8), _empty(f64, 2),
                     _empty(f64, 2), _empty(i8), _empty(i32), _empty(i32))
    t = numba.typeof
    i64, f, b1 = numba.int64, numba.float64, numba.boolean
    keys = numba.int64[::1]
    signatures = {
        "_chunk_sums": (i64, t((_empty(u32), _empty(np.int64)))),
        "_chunk_scan": (i64, t((_empty(u32), _empty(np.int64)))),
        "_bounds": (i64, t(build)), "_cell_keys": (i64, t(build), keys), "_copy_sorted": (i64, t(build)),
        "_pair_keys": (i64, i64, i64, numba.uint32[::1], keys),
        "_count_keys": (i64, t(gn.Buckets(_empty(np.int64), _empty(i32), _empty(i32), _empty(i32)))),
        "_place_keys": (i64, t(gn.Buckets(_empty(np.int64), _empty(u32), _empty(u32), _empty(u32)))),
        "_sort_segments": (i64, i64, t((_empty(i32), _empty(i32)))),
        "_scan_pairs": (i64, f, f, b1, t(build._replace(cell=None)), numba.none),
        "_scan_pairs (periodic)": (i64, f, f, b1, t(build), numba.float64[::1]),
        "_drop_switched_off": (i64, i64, b1, t(switched_off)),
        "_wrap": (i64, i64, t(wrap)), "_join_bonds": (i64, i64, b1, t(union)), "_carry": (i64, t(carry)),
        "_copy_rows": (i64, t((_empty(f64, 2), _empty(f64, 2)))),
        "_to_storage": (i64, i64, numba.int32[::1], numba.uint32[::1]),
        "_sort_by_owner": (i64, i64, t((_empty(u32), _empty(u32), _empty(u32), _empty(i32)))),
    }
    return {name: backend.compile_ptx(getattr(gn, name.split()[0]).py_func, sig, cc)
            for name, sig in signatures.items()}


def compile_numbers_ptx(cc=(9, 0)) -> dict:
    """PTX of the run numbers' pass (:mod:`contactlab.engine.gpu_numbers`) for compute capability
    ``cc``: outside a periodic cell and in one (``{variant: PTX}``)."""
    _need_compiler()
    f64 = np.float64

    sums = gpu_numbers.Sums(_empty(f64, 2), _empty(f64, 2), _empty(f64, 2), _empty(f64), _empty(f64), _empty(f64), _empty(np.bool_),
                            _empty(f64), _empty(f64), _empty(f64, 2), _empty(f64), _empty(f64), _empty(np.int8), _empty(f64, 2))
    cells = {"plain": (numba.none, numba.none), "periodic": (numba.int64[:, ::1], numba.float64[::1])}
    out = {}
    with backend.cpu_arithmetic():
        for name, (images, cell) in cells.items():
            sig = (numba.int64, numba.float64, numba.typeof(sums), images, cell, numba.float64[:, ::1])
            out[name] = backend.compile_ptx(gpu_numbers._sums.py_func, sig, cc)
    return out


def compile_order_ptx(cc=(9, 0)) -> dict:
    """PTX of the spatial sort's kernels (:mod:`contactlab.engine.gpu_order`) for compute
    capability ``cc``: the gathers for the records' dtypes (1-D and 2-D) and the rank."""
    _need_compiler()
    items = numba.int32[::1]
    out = {"_rank": backend.compile_ptx(gpu_order._rank.py_func, (numba.int64, items, items), cc)}
    for dtype in (numba.float64, numba.float32, numba.boolean, numba.int64, numba.int32, numba.uint16, numba.uint8):
        out[f"_gather {dtype}"] = backend.compile_ptx(gpu_order._gather.py_func,
                                                      (numba.int64, dtype[::1], items, dtype[::1]), cc)
    for dtype in (numba.float64, numba.float32, numba.int64):
        out[f"_gather_rows {dtype}"] = backend.compile_ptx(gpu_order._gather_rows.py_func,
                                                           (numba.int64, dtype[:, ::1], items, dtype[:, ::1]), cc)
    return out
