"""One member, run where the executor puts it: build, run, measure, and report what happened.

:func:`run_member_task` is what every executor runs (a module-level function, so that any
executor can send it by reference).  It never raises for a member's own failure: an exception in
``make_simulation``, in the run (a :class:`~contactlab.errors.SimulationBlowUp`, say) or in
``measure`` becomes a record with ``status = "failed"`` and the error's text, so the executor only
ever reports failures of its own (a worker process that died, a lost connection).

The record also says where the member ran (``host:pid``), how long each phase took, and how many
Numba functions were compiled during the member (counted by listening to Numba's
``numba:compile`` events, which fire on a real compilation and not on a load from the on-disk
cache): zero in a worker whose kernels came from the cache.  The count is exact when a process
runs one member at a time (one thread per Dask worker, one member per pool process).

Threads: the member's compiled kernels run on ``threads`` threads (``numba.set_num_threads``,
which applies to the calling thread, so it also holds in a Dask worker's task thread); the
previous setting is restored afterwards.
"""
from __future__ import annotations

import math
import numbers
import os
import socket
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numba
import numpy as np
from numba.core import event as numba_event

from ..errors import InputError

__all__ = ["MemberTask", "run_member_task", "measure_names", "call_measure", "CompileCounter"]


@dataclass(frozen=True)
class MemberTask:
    """Everything a worker needs to run one member (picklable when the callables are).

    make_simulation : callable, ``make_simulation(**parameters[, seed=seed])``; measure : a
    callable, or a tuple of ``(name, callable)`` pairs; parameters : dict; seed : int or None
    (None: not passed); duration : float or None, s of simulated time the runner advances the
    simulation by (``sim.run(duration=...)``); steps : int or None, or that many steps; threads :
    int or None, Numba threads for the member (None: leave the process's setting).
    """

    make_simulation: Callable
    measure: Any
    parameters: dict
    seed: int | None
    duration: float | None
    steps: int | None
    threads: int | None


class CompileCounter(numba_event.Listener):
    """Counts Numba compilations (every function compiled, nested ones included) and the wall
    time of the outermost ones, s."""

    def __init__(self):
        self.count = 0
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, event):
        self.count += 1
        self._depth += 1
        if self._depth == 1:
            self._t0 = time.perf_counter()

    def on_end(self, event):
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0


def measure_names(measure) -> tuple[str, ...] | None:
    """The names of a measure given as several callables, else None (a single callable names its
    values itself, or takes its own name for a single value)."""
    if isinstance(measure, tuple):
        return tuple(name for name, _ in measure)
    return None


def _clean(name: str, value):
    """A measured value as a plain Python scalar, text, or a NumPy array."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (numbers.Integral, np.integer)):
        return int(value)
    if isinstance(value, (numbers.Real, np.floating)):
        return float(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.array(value)
        if arr.dtype.kind not in "biuf":
            raise InputError(f"measure returned {name!r} = {value!r:.80}: an array must hold numbers")
        return arr.item() if arr.ndim == 0 else arr
    raise InputError(f"measure returned {name!r} = {value!r:.80} ({type(value).__name__}): a measure returns "
                     f"numbers, arrays or text, or a dict of them")


def call_measure(measure, sim) -> dict:
    """Apply ``measure`` (a callable, or ``(name, callable)`` pairs) to ``sim``: a dict of values."""
    if isinstance(measure, tuple):
        raw = {}
        for name, fn in measure:
            value = fn(sim)
            if isinstance(value, dict):
                raw.update({f"{name}.{k}": v for k, v in value.items()})
            else:
                raw[name] = value
    else:
        value = measure(sim)
        if isinstance(value, dict):
            raw = value
        else:
            raw = {getattr(measure, "__name__", "value"): value}
    out = {}
    for name, value in raw.items():
        if not isinstance(name, str):
            raise InputError(f"measure returned a dict with key {name!r}: the names of measured values are text")
        out[name] = _clean(name, value)
    return out


def _make(task: MemberTask):
    kwargs = dict(task.parameters)
    if task.seed is not None:
        kwargs["seed"] = task.seed
    return task.make_simulation(**kwargs)


def _advance(sim, task: MemberTask) -> None:
    if task.duration is None and task.steps is None:
        return
    if not callable(getattr(sim, "run", None)):
        raise InputError(f"make_simulation returned {type(sim).__name__}, which has no run() method; it must "
                         f"return a contactlab.Simulation (or give neither duration nor steps, and run it "
                         f"yourself in make_simulation or measure)")
    if task.duration is not None:
        sim.run(duration=task.duration)
    else:
        sim.run(steps=task.steps)


def _close(sim) -> None:
    close = getattr(sim, "close", None)
    if callable(close):
        close()


def run_member_task(task: MemberTask) -> dict:
    """Run one member; return its record (never raises for the member's own errors).

    Keys: ``status`` ("ok" or "failed"), ``values`` (dict), ``error`` (one line, "" when ok),
    ``traceback`` (text), ``setup_seconds`` (make_simulation), ``run_seconds`` (the run),
    ``wall_seconds`` (everything, measure included), ``compiled`` (Numba functions compiled),
    ``compile_seconds``, ``worker`` (``host:pid``).
    """
    counter = CompileCounter()
    old_threads = numba.get_num_threads()
    record = {"status": "failed", "values": {}, "error": "", "traceback": "", "setup_seconds": math.nan,
              "run_seconds": math.nan, "wall_seconds": math.nan, "compiled": 0, "compile_seconds": 0.0,
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    t0 = time.perf_counter()
    sim = None
    numba_event.register("numba:compile", counter)
    try:
        if task.threads is not None:
            numba.set_num_threads(min(task.threads, numba.config.NUMBA_NUM_THREADS))
        sim = _make(task)
        t1 = time.perf_counter()
        record["setup_seconds"] = t1 - t0
        _advance(sim, task)
        record["run_seconds"] = time.perf_counter() - t1
        values = call_measure(task.measure, sim)
        _close(sim)
        record["values"] = values
        record["status"] = "ok"
    except Exception as exc:  # the member's own failure: reported, never raised (the executor only sees its own)
        text = " ".join(line.strip() for line in str(exc).strip().splitlines())
        record["error"] = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        record["traceback"] = traceback.format_exc(limit=-12)
        try:
            _close(sim)  # let the member's reporters finish their files
        except Exception:  # the member's error is the one to report
            pass
    finally:
        numba_event.unregister("numba:compile", counter)
        if task.threads is not None:
            numba.set_num_threads(old_threads)
        record["wall_seconds"] = time.perf_counter() - t0
        record["compiled"] = counter.count
        record["compile_seconds"] = counter.seconds
    return record
