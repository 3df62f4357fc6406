"""Run an ensemble: many ordinary simulations, one per set of parameters, on any executor.

:func:`run` is the one-call form; :class:`Ensemble` keeps its executor (and its warm worker
processes) for several batches, as :func:`~contactlab.ensemble.calibration.calibrate` does.

How members are scheduled:

* at most as many members are in flight as can run at once (the pool's processes; twice the
  Dask cluster's threads), so that the progress line is true and a stopped run has little queued;
* **warm-up**: with a parallel executor the first member runs alone, and the others start when it
  has finished.  On a cold kernel cache that member compiles the kernels and writes them to the
  on-disk cache, and every other member loads them (without it, each worker process compiles the
  same kernels at the same time).  With a warm cache it costs about one member's time divided by
  the number of workers.  ``warmup=False`` turns it off;
* **a member's own failure** (an exception in make_simulation, the run or measure) is recorded
  with its message and never retried (it would fail again);
* **a worker process that dies** (killed, out of memory, a crash in compiled code) breaks
  contactlab's process pool and every member in flight on it.  The pool is recreated, and each of
  those members runs again **alone** in a pool of one process: the member that kills its process
  is then known, and is run again up to ``retries`` times before it is marked failed ("its worker
  process died ..."); the others simply finish.  On Dask the scheduler reruns the tasks of a lost
  worker itself;
* with ``checkpoint=FOLDER`` each finished member is written to the folder as it finishes
  (:mod:`contactlab.ensemble.store`), and a rerun of the same call takes those from the folder and
  runs the others only.
"""
from __future__ import annotations

import concurrent.futures as cf
import inspect
import math
import time
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

from .._arguments import as_int, as_positive, fmt
from ..errors import InputError
from . import builtin_measures
from .display import make_display
from .executors import Backend, backend_for, check_picklable, default_workers, is_dead_worker_error
from .parameters import RESERVED_COLUMNS, Member, check_signature, make_members
from .store import CheckpointStore
from .table import build_table
from .task import MemberTask, _advance, _make, call_measure, run_member_task

__all__ = ["Ensemble", "run", "run_member"]


def _callable_name(fn) -> str:
    if hasattr(fn, "__qualname__"):
        return f"{getattr(fn, '__module__', '?')}.{fn.__qualname__}"
    return repr(fn)


def _takes_seed(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get("seed")
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


def normalized_measure(measure):
    """``measure`` as the task expects it: one callable, or a tuple of ``(name, callable)``
    pairs (from a dict, or a list of callables and built-in measure names)."""
    if isinstance(measure, str):
        return builtin_measures.measure_by_name(measure)
    if callable(measure):
        return measure
    if isinstance(measure, dict):
        pairs = list(measure.items())
    elif isinstance(measure, (list, tuple)):
        pairs = []
        for m in measure:
            fn = builtin_measures.measure_by_name(m) if isinstance(m, str) else m
            pairs.append((m.rsplit(":", 1)[-1] if isinstance(m, str) else getattr(fn, "__name__", None), fn))
    else:
        raise InputError(f"measure must be a callable measure(sim), a built-in measure's name, or a list or dict of "
                         f"them, got {fmt(measure)} ({type(measure).__name__})")
    if not pairs:
        raise InputError("measure is empty: give at least one callable")
    names = set()
    for name, fn in pairs:
        if not isinstance(name, str) or not name:
            raise InputError(f"measure {fmt(fn)} has no name: give measures as a dict {{name: function}}")
        if isinstance(fn, str):
            fn = builtin_measures.measure_by_name(fn)
        if not callable(fn):
            raise InputError(f"measure {name!r} must be callable, got {fmt(fn)}")
        if name in names:
            raise InputError(f"two measures are named {name!r}: give them as a dict with distinct names")
        if name in RESERVED_COLUMNS:
            raise InputError(f"measure name {name!r} is a column of the result table; rename it")
        names.add(name)
    return tuple((name, builtin_measures.measure_by_name(fn) if isinstance(fn, str) else fn) for name, fn in pairs)


def _crash_record(member: Member, times: int) -> dict:
    return {"status": "failed", "values": {},
            "error": f"WorkerDied: the worker process died while running this member, {times} time(s) when it ran "
                     f"alone (killed, out of memory, or a crash in compiled code)",
            "traceback": "", "wall_seconds": math.nan, "setup_seconds": math.nan, "run_seconds": math.nan,
            "compiled": 0, "compile_seconds": 0.0, "worker": ""}


def _executor_failure(exc: BaseException) -> dict:
    text = " ".join(str(exc).split())
    dead = " (the executor lost the worker running it)" if is_dead_worker_error(exc) else ""
    return {"status": "failed", "values": {},
            "error": f"{type(exc).__name__}: {text}{dead}" if text else f"{type(exc).__name__}{dead}",
            "traceback": "", "wall_seconds": math.nan, "setup_seconds": math.nan, "run_seconds": math.nan,
            "compiled": 0, "compile_seconds": 0.0, "worker": ""}


class Ensemble:
    """An ensemble runner bound to one executor, for one or several batches of members.

    Parameters are those of :func:`run` (except ``parameters``, ``replicates``, ``seed`` and
    ``retry_failed``, which :meth:`run` takes).  Use it as a context manager, or call
    :meth:`close`, to stop the worker processes it started.
    """

    def __init__(self, make_simulation: Callable, measure, *, executor=None, workers: int | None = None,
                 threads_per_member: int | None = 1, duration: float | None = None, steps: int | None = None,
                 checkpoint=None, retries: int = 1, warmup: bool = True, progress=False):
        if not callable(make_simulation):
            raise InputError(f"make_simulation must be a callable make_simulation(**parameters) returning a "
                             f"Simulation, got {fmt(make_simulation)}")
        self.make_simulation = make_simulation
        self.measure = normalized_measure(measure)
        if duration is not None and steps is not None:
            raise InputError(f"give at most one of duration (s) or steps, got duration={duration!r}, steps={steps!r}")
        self.duration = None if duration is None else as_positive("duration", duration, "s")
        self.steps = None if steps is None else as_int("steps", steps, low=1)
        self.threads = None if threads_per_member is None else as_int("threads_per_member", threads_per_member,
                                                                          low=1)
        self.retries = as_int("retries", retries, low=0)
        if not isinstance(warmup, bool):
            raise InputError(f"warmup must be True or False, got {fmt(warmup)}")
        self.warmup = warmup
        self.display = make_display(progress)
        if executor is None and workers is None:
            workers = default_workers(self.threads or 1)
        self.backend: Backend = backend_for(executor, workers)
        if self.backend.needs_pickle:
            check_picklable(make_simulation, "make_simulation")
            if isinstance(self.measure, tuple):
                for name, fn in self.measure:
                    check_picklable(fn, f"measure {name!r}")
            else:
                check_picklable(self.measure, "measure")
        self.takes_seed = _takes_seed(make_simulation)
        self.checkpoint = checkpoint
        self.store = None   # the checkpoint folder, opened by the first run() once its members are checked

    def _open_store(self) -> None:
        if self.checkpoint is None or self.store is not None:
            return
        measure_id = ([f"{n}={_callable_name(f)}" for n, f in self.measure] if isinstance(self.measure, tuple)
                      else _callable_name(self.measure))
        self.store = CheckpointStore(self.checkpoint, {"make_simulation": _callable_name(self.make_simulation),
                                                       "measure": measure_id, "duration": self.duration,
                                                       "steps": self.steps})

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Stop the worker processes this runner started (an executor you passed stays up)."""
        self.backend.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ running
    def _task(self, m: Member) -> MemberTask:
        seed = m.seed if self.takes_seed and "seed" not in m.parameters else None
        return MemberTask(self.make_simulation, self.measure, m.parameters, seed, self.duration, self.steps,
                          self.threads)

    def run(self, parameters, *, replicates: int = 1, seed: int = 0, retry_failed: bool = False):
        """Run the members of ``parameters``; returns the result table (see :func:`run`)."""
        members = make_members(parameters, replicates=replicates, seed=seed)
        if not isinstance(retry_failed, bool):
            raise InputError(f"retry_failed must be True or False, got {fmt(retry_failed)}")
        check_signature(self.make_simulation, [m.parameters for m in members if m.replicate == 0],
                        seed_passed=self.takes_seed)
        self._open_store()
        records: dict[str, dict] = {}
        if self.store is not None:
            wanted = {m.key for m in members}
            for key, rec in self.store.load().items():
                if key in wanted and (rec["status"] == "ok" or not retry_failed):
                    rec["resumed"] = True
                    records[key] = rec
        todo = [m for m in members if m.key not in records]
        t0 = time.perf_counter()
        self._execute(todo, records, len(members), t0)
        attrs = {"executor": self.backend.name, "elapsed_seconds": time.perf_counter() - t0, "slots": self.backend.slots,
                 "threads_per_member": self.threads, "duration": self.duration, "steps": self.steps}
        return build_table(members, records, attrs=attrs)

    def _execute(self, todo: list[Member], records: dict, total: int, t0: float) -> None:
        backend = self.backend
        queue, alone = deque(todo), deque()
        in_flight: dict[cf.Future, tuple[Member, bool, int]] = {}
        runs = {m.key: 0 for m in todo}
        crashes = {m.key: 0 for m in todo}
        generation = [0]
        warming = [self.warmup and backend.parallel and len(todo) > 1]
        resumed = len(records)

        def finish(m: Member, rec: dict, keep: bool) -> None:
            rec["attempts"] = runs[m.key]
            rec["resumed"] = False
            records[m.key] = rec
            warming[0] = False
            if keep and self.store is not None:
                self.store.save(m.key, {"index": m.index, "parameters": m.parameters, "replicate": m.replicate,
                                        "seed": m.seed, **rec})

        def submit(m: Member, solo: bool) -> None:
            runs[m.key] += 1
            task = self._task(m)
            for _ in range(2):
                try:
                    f = backend.submit_alone(run_member_task, task) if solo else backend.submit(run_member_task, task)
                except BrokenProcessPool:  # our pool broke before this submission: renew it once
                    if not backend.recovers:
                        raise
                    backend.renew()
                    generation[0] += 1
                    continue
                except Exception as exc:  # the executor refused the task (shut down, cannot pickle it...)
                    finish(m, _executor_failure(exc), keep=False)
                    return
                in_flight[f] = (m, solo, generation[0])
                return
            finish(m, _executor_failure(BrokenProcessPool("the process pool broke twice at submission")), False)

        def show(final: bool = False) -> None:
            if self.display is not None:
                failed = sum(1 for r in records.values() if r["status"] != "ok")
                running = len(in_flight) if backend.slots is None else min(len(in_flight), backend.slots)
                self.display({"total": total, "done": len(records), "running": running, "failed": failed,
                              "resumed": resumed, "elapsed": time.perf_counter() - t0, "final": final})

        try:
            while queue or alone or in_flight:
                solos = sum(1 for _, solo, _ in in_flight.values() if solo)
                if alone or solos:
                    while alone and len(in_flight) < (backend.capacity or 1):
                        submit(alone.popleft(), True)
                elif not (warming[0] and in_flight):
                    limit = 1 if warming[0] else (backend.capacity or math.inf)
                    while queue and len(in_flight) < limit:
                        submit(queue.popleft(), False)
                show()
                if not in_flight:
                    continue
                done = _wait(list(in_flight), 0.25)
                for f in done:
                    m, solo, gen = in_flight.pop(f)
                    try:
                        rec = f.result()
                    except (cf.CancelledError, Exception) as exc:
                        if backend.recovers and isinstance(exc, BrokenProcessPool):
                            if solo:
                                crashes[m.key] += 1
                                if crashes[m.key] > self.retries:
                                    finish(m, _crash_record(m, crashes[m.key]), keep=True)
                                else:
                                    alone.append(m)
                            else:
                                if gen == generation[0]:
                                    backend.renew()
                                    generation[0] += 1
                                alone.append(m)
                        else:
                            finish(m, _executor_failure(exc), keep=False)
                        continue
                    finish(m, rec, keep=True)
            show(final=True)
        except BaseException:
            for f in in_flight:
                cancel = getattr(f, "cancel", None)
                if callable(cancel):
                    cancel()
            raise


def _wait(futures: list, timeout: float) -> list:
    """The futures done, waiting up to ``timeout`` s for one: ``concurrent.futures.wait`` for
    standard futures, polling ``done()`` for others (submitit's jobs)."""
    if all(isinstance(f, cf.Future) for f in futures):
        return list(cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)[0])
    end = time.perf_counter() + timeout
    while True:
        done = [f for f in futures if f.done()]
        if done or time.perf_counter() >= end:
            return done
        time.sleep(min(0.02, timeout))


def run(make_simulation: Callable, parameters, measure, *, executor=None, workers: int | None = None,
        threads_per_member: int | None = 1, duration: float | None = None, steps: int | None = None,
        replicates: int = 1, seed: int = 0, checkpoint=None, retry_failed: bool = False, retries: int = 1,
        warmup: bool = True, progress=False):
    """Run an ensemble of simulations, one per set of parameters; returns a pandas DataFrame.

    Parameters
    ----------
    make_simulation : callable
        ``make_simulation(**parameters)`` builds one member's simulation (a
        :class:`~contactlab.Simulation`).  If it takes an argument named ``seed``, it also gets
        the member's seed (an int, see :mod:`contactlab.ensemble.parameters`).  With process
        workers it must be a module-level function (or an instance of a module-level class, such
        as :class:`~contactlab.ensemble.SceneFile`).
    parameters : list of dict, dict of lists, or DataFrame
        One dict of keyword arguments per member; a dict of value lists is a full grid
        (:func:`~contactlab.ensemble.grid`); a DataFrame gives one member per row.  Values are data:
        numbers, text, bools, lists.
    measure : callable, str, list or dict
        ``measure(sim)`` after the run returns a number, an array, text, or a dict of them (one
        column each).  A list or dict combines several; a str names a built-in measure
        (:mod:`contactlab.ensemble.builtin_measures`) or ``"module:function"``.
    executor : None, "serial", dask.distributed.Client or concurrent.futures.Executor
        Where members run (:mod:`contactlab.ensemble.executors`): default, ``workers`` local
        processes.
    workers : int, optional
        Processes of the default pool; default: the cores available divided by ``threads_per_member``.
    threads_per_member : int or None
        Numba threads of each member (default 1: members, not threads, use the cores).  None
        leaves each worker's setting.
    duration, steps : optional
        Advance each simulation by ``duration`` s (or ``steps`` steps) before measuring; neither:
        measure the simulation as ``make_simulation`` returned it (which may have run it).
    replicates : int
        Runs of each parameter set, each with its own seed (default 1).
    seed : int
        Base seed from which each member's seed is derived (default 0).
    checkpoint : path, optional
        Folder that keeps each finished member's result; running the same call again resumes:
        only the members without a result run.  Members that failed are kept as failed unless
        ``retry_failed=True``.
    retries : int
        Reruns of a member whose worker process died while it ran alone (default 1).
    warmup : bool
        Run the first member alone before the others (compiles the kernels once; default True).
    progress : bool or callable
        ``True``: a progress line on stderr (members done, running, failed, ETA); or a callable
        (:mod:`contactlab.ensemble.display`).

    Returns
    -------
    pandas.DataFrame
        One row per member: parameters, ``seed``, ``replicate``, the measured values, ``status``,
        ``error``, ``attempts``, timings, ``compiled``, ``worker``, ``resumed``
        (:mod:`contactlab.ensemble.table`).  A failed member has ``status == "failed"``, its
        error text, and NaN measures; the others are unaffected.
    """
    with Ensemble(make_simulation, measure, executor=executor, workers=workers, threads_per_member=threads_per_member,
                  duration=duration, steps=steps, checkpoint=checkpoint, retries=retries, warmup=warmup,
                  progress=progress) as ensemble:
        return ensemble.run(parameters, replicates=replicates, seed=seed, retry_failed=retry_failed)


def run_member(make_simulation: Callable, measure, parameters: dict, *, seed: int | None = None,
               duration: float | None = None, steps: int | None = None):
    """Run one member in this process, as the ensemble ran it, and return ``(simulation, values)``.

    For looking at one member again (its parameters and seed from the table:
    :func:`~contactlab.ensemble.member_parameters`).  Errors are raised, not recorded.  ``seed``
    is passed to ``make_simulation`` if given and it takes one.
    """
    if not isinstance(parameters, dict):
        raise InputError(f"parameters must be a dict of keyword arguments for make_simulation, got {fmt(parameters)}")
    if duration is not None and steps is not None:
        raise InputError(f"give at most one of duration (s) or steps, got duration={duration!r}, steps={steps!r}")
    passes_seed = seed is not None and _takes_seed(make_simulation)
    check_signature(make_simulation, [parameters], seed_passed=passes_seed)
    task = MemberTask(make_simulation, normalized_measure(measure), dict(parameters),
                      seed if passes_seed else None,
                      None if duration is None else as_positive("duration", duration, "s"),
                      None if steps is None else as_int("steps", steps, low=1), None)
    sim = _make(task)
    _advance(sim, task)
    return sim, call_measure(task.measure, sim)
