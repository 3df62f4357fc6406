"""The one module that imports the GPU compiler: numba-cuda's ``numba.cuda`` API.

Everything of contactlab that runs on a GPU reaches the compiler through the names defined here
(``cuda``, :func:`gpu_kernel`, :func:`to_device`, :func:`to_host`, :func:`compile_ptx`), so that
moving to numba-cuda-mlir, announced as its compatible successor, is the one import line below.

Two ways to run: on an NVIDIA GPU through its driver, or under numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1`` in the environment before Numba is imported; no driver needed), where a
kernel runs as Python threads and the compiled CPU building blocks it calls run as compiled CPU
code.  Under the simulator a "device array" is a private NumPy copy, so that a value that was
never copied to or from the device shows as a wrong result in a test, as it would on a GPU.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os

import numba
import numpy as np

__all__ = ["cuda", "gpu_kernel", "to_device", "to_host", "device_zeros", "zero", "to_device_into", "synchronize",
           "compile_ptx", "cpu_arithmetic", "free_memory", "simulated", "unavailable_reason", "NUMBA_CUDA_MISSING", "ALLOW_FMA",
           "BODY_ORDER", "launch_shape", "THREADS_PER_BLOCK", "SIMULATOR_THREADS"]

NUMBA_CUDA_MISSING = ("the GPU backend needs numba-cuda: pip install -e \".[gpu]\" (an NVIDIA driver for a GPU; "
                      "NUMBA_ENABLE_CUDASIM=1 runs it without one, slowly, under numba-cuda's simulator)")

def _numba_cuda_installed() -> bool:
    try:
        return importlib.util.find_spec("numba_cuda") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as none
        return False


if _numba_cuda_installed():
    from numba import cuda  # the GPU compiler: numba-cuda (numba-cuda-mlir would be this one line)
    from numba.cuda import dispatcher as _dispatcher
    from numba.cuda.cudadrv import nvvm as _nvvm
else:  # pragma: no cover - the CPU install
    cuda = _dispatcher = _nvvm = None

#: whether the GPU compiler may fuse a multiply and an add into one instruction (``fma``, rounded
#: once): off by default, so that the GPU's arithmetic is the CPU's (whose build never contracts),
#: operation for operation; ``CONTACTLAB_GPU_FMA=1`` allows it (a few per cent faster where the
#: arithmetic, not memory, bounds a kernel; results then differ from the CPU's in the last bits)
ALLOW_FMA = os.environ.get("CONTACTLAB_GPU_FMA", "0") == "1"

#: how the bodies sit in the device's memory and which each thread takes:
#: ``"sorted"`` (default): at every neighbour-list rebuild on the device the bodies' arrays are
#: permuted into the build's cell order (a spatial sort: a warp's threads take neighbouring bodies,
#: stored side by side), thread ``t`` taking the body stored at ``t``; every output comes back in
#: the user's order, and pair ownership and every sum follow the user's index, so the results are
#: the CPU's bits (:mod:`contactlab.engine.gpu_order`).  ``"bodies"``: the user's order, not
#: permuted; ``"cells"``: the user's order in memory, threads in the last build's cell order.  The
#: same bits in all three (tested): ``CONTACTLAB_GPU_ORDER`` is an A/B for a GPU profile.
BODY_ORDER = os.environ.get("CONTACTLAB_GPU_ORDER", "sorted")
if BODY_ORDER not in ("sorted", "bodies", "cells"):
    raise ValueError(f"CONTACTLAB_GPU_ORDER must be 'sorted', 'bodies' or 'cells', got {BODY_ORDER!r}")

def simulated() -> bool:
    """Whether the kernels run under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return bool(numba.config.ENABLE_CUDASIM)


def unavailable_reason() -> str | None:
    """Why no GPU run is possible here (None when one is: a device, or the simulator)."""
    if cuda is None:
        return NUMBA_CUDA_MISSING
    if simulated():
        return None
    try:
        if cuda.is_available():
            return None
    except Exception as exc:  # a driver that fails to load says why
        return f"no usable CUDA device: {exc}"
    return ("no CUDA device found (numba.cuda.is_available() is False: no NVIDIA GPU or driver here); "
            "NUMBA_ENABLE_CUDASIM=1 runs the GPU kernels under numba-cuda's simulator")


class _NoneArguments:
    """A kernel-argument extension: a ``None`` in a record (a feature the scene lacks, whose
    branches compile away) is passed as the null pointer Numba's CUDA target represents it by;
    numba-cuda passes tuples of device arrays but has no rule of its own for None."""

    def prepare_args(self, ty, val, stream=None, retr=None):
        if isinstance(ty, numba.types.NoneType):
            return numba.types.CPointer(numba.types.int8), 0
        return ty, val


_NONE_ARGUMENTS = _NoneArguments()


def gpu_kernel(func):
    """A GPU kernel (cached on disk next to its generated module; see :mod:`contactlab.engine.gpu_kernels`)."""
    if simulated():
        return cuda.jit(func)
    return cuda.jit(cache=True, extensions=[_NONE_ARGUMENTS])(func)


def to_device(host: np.ndarray):
    """A device copy of ``host`` (under the simulator a private NumPy copy)."""
    if simulated():
        return np.array(host, copy=True, order="C")
    return cuda.to_device(np.ascontiguousarray(host))


def device_zeros(shape, dtype):
    """A zero-filled device array."""
    if simulated():
        return np.zeros(shape, dtype=dtype)
    return cuda.to_device(np.zeros(shape, dtype=dtype))


def to_host(device, host: np.ndarray) -> None:
    """Copy ``device`` back into the host array ``host`` in place."""
    if simulated():
        np.copyto(host, device)
    else:
        device.copy_to_host(host)


@contextlib.contextmanager
def cpu_arithmetic():
    """A block in which the kernels numba-cuda compiles (at their first launch) are compiled
    without fused multiply-adds (:data:`ALLOW_FMA`): NVVM's ``-fma=0``, the one option numba-cuda
    does not expose; every other option as numba-cuda sets it."""
    if ALLOW_FMA or _nvvm is None or simulated() or not hasattr(_nvvm, "compile_ir"):
        yield
        return
    compile_ir = _nvvm.compile_ir

    def without_fma(llvmir, **options):
        if not options.get("fastmath"):
            options.setdefault("fma", False)
        return compile_ir(llvmir, **options)

    _nvvm.compile_ir = without_fma
    try:
        yield
    finally:
        _nvvm.compile_ir = compile_ir


def free_memory() -> int | None:
    """Free device memory, bytes (None under the simulator)."""
    if simulated():
        return None
    free, _ = cuda.current_context().get_memory_info()
    return int(free)


def zero(device) -> None:
    """Set every element of a device array to zero."""
    if simulated():
        device[...] = 0
    else:
        device.copy_to_device(np.zeros(device.shape, dtype=device.dtype))


def to_device_into(host: np.ndarray, device) -> None:
    """Copy the host array ``host`` into the existing device array ``device``."""
    if simulated():
        np.copyto(device, host)
    else:
        device.copy_to_device(np.ascontiguousarray(host, dtype=device.dtype))


#: threads per block of the per-item kernels on a GPU
THREADS_PER_BLOCK = 128
#: threads the simulator runs a per-item kernel on (each a Python thread, so a few, of many items each)
SIMULATOR_THREADS = 2


def launch_shape(n: int) -> tuple[int, int, int]:
    """``(items per thread, blocks, threads per block)`` of a kernel over ``n`` items (bodies,
    pairs, cells): one item a thread on a GPU, a few threads of many items under the simulator."""
    if simulated():
        return max(1, -(-n // SIMULATOR_THREADS)), 1, SIMULATOR_THREADS
    return 1, max(1, -(-n // THREADS_PER_BLOCK)), THREADS_PER_BLOCK


def synchronize() -> None:
    """Wait for every kernel launched so far."""
    if not simulated():
        cuda.synchronize()


def compile_ptx(func, argument_types, cc=(9, 0)):
    """PTX of the Python kernel function ``func`` for ``argument_types`` (Numba types) and compute
    capability ``cc``: what a GPU would run, compiled without one (needs libNVVM, which the
    ``gpu`` extra brings, and numba-cuda outside the simulator).  Returns the PTX text."""
    class _Target:
        compute_capability = cc

    # a CPU building block called from a kernel is compiled for the current device's compute
    # capability: name the one asked for instead of asking a driver that may not be there
    saved = _dispatcher.get_current_device
    _dispatcher.get_current_device = lambda: _Target
    try:
        with cpu_arithmetic():
            ptx, _ = cuda.compile_ptx(func, argument_types, cc=cc)
    finally:
        _dispatcher.get_current_device = saved
    return ptx
