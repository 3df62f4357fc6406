"""Where members run: in this process, in contactlab's own pool of processes, on a Dask cluster,
or on any ``concurrent.futures.Executor``.

=================================  ================================================================
``executor=``                      members run
=================================  ================================================================
``None`` (default)                 in ``workers`` local processes (a ``ProcessPoolExecutor`` with
                                   the *spawn* start method: safe with Numba's threads, the same on
                                   Linux, macOS and Windows); nothing to start or configure
``"serial"``                       one after the other in this process (debugging, tiny ensembles)
a ``distributed.Client``           on the Dask cluster it is connected to, through
                                   ``client.get_executor(pure=False)``
any ``concurrent.futures.Executor``  through ``submit``: ``mpi4py.futures.MPIPoolExecutor``,
                                   a ``ProcessPoolExecutor`` of your own...; or any object
                                   with ``submit(fn, arg)`` returning a future with ``done()``
                                   and ``result()`` (submitit's executors)
=================================  ================================================================

Only contactlab's own pool is recreated when a worker process dies (a ``BrokenProcessPool``
breaks every member in flight): the runner then reruns each member that was in flight **alone**,
in a pool of one process (:meth:`LocalProcessBackend.submit_alone`), so that a member that kills
its worker is identified and charged, and the others are not.  Dask reschedules the tasks of a
lost worker itself (up to its ``distributed.scheduler.allowed-failures``, then ``KilledWorker``).

Process pools send ``make_simulation`` and ``measure`` by reference (pickle): they must be
module-level functions (or instances of module-level classes) that a fresh process can import.
:func:`check_picklable` says so before anything starts.  Dask sends them with cloudpickle, by
value, so lambdas and notebook functions work there.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import pickle
import sys

from .._arguments import as_int, fmt
from ..errors import InputError

__all__ = ["SERIAL", "Backend", "SerialBackend", "LocalProcessBackend", "ExecutorBackend", "backend_for",
           "check_picklable", "is_dead_worker_error", "default_workers"]

SERIAL = "serial"


def default_workers(threads_per_member: int) -> int:
    """Processes for the local pool: the cores this process may use, divided by the threads of
    one member (at least 1)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, threads_per_member))


def is_dead_worker_error(exc: BaseException) -> bool:
    """True for an executor's report that the process running a task died (killed, crashed)."""
    return isinstance(exc, cf.BrokenExecutor) or type(exc).__name__ == "KilledWorker"


class Backend:
    """The interface the runner uses (see the module docstring for the kinds)."""

    #: how the table's ``attrs["executor"]`` describes it
    name = "backend"
    #: members in flight at once (None: submit everything)
    capacity: int | None = None
    #: members that can run at the same time (None: unknown)
    slots: int | None = None
    #: whether members run concurrently (a warm-up member first makes sense then)
    parallel = True
    #: whether the backend can replace a pool whose worker died (and isolate suspects)
    recovers = False
    #: whether make_simulation and measure must pickle by reference
    needs_pickle = False

    def submit(self, fn, arg) -> cf.Future:
        raise NotImplementedError

    def submit_alone(self, fn, arg) -> cf.Future:
        """Run one task in a fresh pool of one process (recovering backends only)."""
        raise NotImplementedError

    def renew(self) -> None:
        """Replace a broken pool (recovering backends only)."""

    def shutdown(self) -> None:
        """Release what this backend started (never an executor the user passed)."""


class SerialBackend(Backend):
    """Members one after the other, in this process."""

    name = "serial"
    capacity = 1
    slots = 1
    parallel = False

    def submit(self, fn, arg) -> cf.Future:
        future = cf.Future()
        future.set_running_or_notify_cancel()
        future.set_result(fn(arg))  # run_member_task never raises for a member's own failure
        return future


class LocalProcessBackend(Backend):
    """contactlab's own pool of ``workers`` spawned processes, recreated if a worker dies."""

    recovers = True
    needs_pickle = True

    def __init__(self, workers: int):
        self.workers = workers
        self.capacity = workers
        self.slots = workers
        self.name = f"local processes ({workers})"
        self._context = multiprocessing.get_context("spawn")
        self._pool: cf.ProcessPoolExecutor | None = None
        self._alone: set[cf.ProcessPoolExecutor] = set()

    def _main(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=self._context)
            # a spawn pool starts a process only when a task finds no idle one: one small task per
            # worker starts them all now, in parallel (each imports contactlab, ~1 s), instead of
            # one by one as members arrive
            for _ in range(self.workers):
                self._pool.submit(os.getpid)
        return self._pool

    def submit(self, fn, arg) -> cf.Future:
        return self._main().submit(fn, arg)

    def submit_alone(self, fn, arg) -> cf.Future:
        pool = cf.ProcessPoolExecutor(max_workers=1, mp_context=self._context)
        self._alone.add(pool)
        future = pool.submit(fn, arg)

        def release(_future, pool=pool):
            self._alone.discard(pool)
            pool.shutdown(wait=False)

        future.add_done_callback(release)
        return future

    def renew(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    def shutdown(self) -> None:
        for pool in [self._pool, *self._alone]:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None
        self._alone.clear()


class ExecutorBackend(Backend):
    """A ``concurrent.futures.Executor`` the user passed (left running afterwards)."""

    def __init__(self, executor: cf.Executor, *, name: str | None = None, slots: int | None = None,
                 capacity: int | None = None, owned: cf.Executor | None = None):
        self.executor = executor
        self.name = name or type(executor).__name__
        self.slots = slots
        self.capacity = capacity
        self.needs_pickle = isinstance(executor, cf.ProcessPoolExecutor)
        self._owned = owned

    def submit(self, fn, arg) -> cf.Future:
        return self.executor.submit(fn, arg)

    def shutdown(self) -> None:
        if self._owned is not None:
            self._owned.shutdown(wait=False)


def _dask_threads(client) -> int | None:
    """The cluster's worker threads now (None when unknown or none yet: an adaptive cluster)."""
    try:
        threads = sum(client.nthreads().values())
    except Exception:  # a client that cannot answer now: no window
        return None
    return threads or None


def _dask_backend(executor, client, name: str, owned=None) -> ExecutorBackend:
    threads = _dask_threads(client) if client is not None else None
    # twice the threads in flight: a worker that finishes finds its next member already there
    return ExecutorBackend(executor, name=name, slots=threads, capacity=2 * threads if threads else None,
                           owned=owned)


def backend_for(executor, workers) -> Backend:
    """The backend for the ``executor`` argument of :func:`contactlab.ensemble.run`."""
    if executor is None:
        return LocalProcessBackend(as_int("workers", workers, low=1))
    if workers is not None:
        raise InputError(f"workers={workers!r} sizes contactlab's own process pool (executor=None); with "
                         f"executor={fmt(executor)} the executor decides how many members run at once")
    if isinstance(executor, str):
        if executor == SERIAL:
            return SerialBackend()
        raise InputError(f"executor must be None (local processes), 'serial', a dask.distributed Client or a "
                         f"concurrent.futures.Executor, got {executor!r}")
    kind = type(executor)
    if kind.__name__ == "Client" and kind.__module__.split(".")[0] == "distributed":
        cf_executor = executor.get_executor(pure=False)
        return _dask_backend(cf_executor, executor, f"dask {executor.scheduler.address}", owned=cf_executor)
    if kind.__name__ == "ClientExecutor" and kind.__module__.split(".")[0] == "distributed":
        return _dask_backend(executor, getattr(executor, "_client", None), "dask ClientExecutor")
    if isinstance(executor, cf.Executor) or callable(getattr(executor, "submit", None)):
        # a concurrent.futures.Executor, or an executor of that shape whose futures are its own
        # (submitit's, whose jobs have done() and result()): the runner polls those
        n = getattr(executor, "_max_workers", None)
        return ExecutorBackend(executor, slots=n, capacity=n)
    raise InputError(f"executor must be None (local processes), 'serial', a dask.distributed Client or a "
                     f"concurrent.futures.Executor (an object with submit()), got {fmt(executor)} ({kind.__name__})")


def check_picklable(obj, what: str) -> None:
    """Refuse, with the reason and the fix, a callable that worker processes cannot load."""
    hint = (f"{what} must be a function defined with def at the top level of a module (or an instance of such a "
            f"class) so that worker processes can import it; or run with executor='serial' (in this process) or "
            f"a dask.distributed Client (which sends functions by value)")
    module = getattr(obj, "__module__", None)
    if module == "__main__" and not getattr(sys.modules.get("__main__"), "__file__", None):
        raise InputError(f"{what} = {fmt(obj)} is defined in a notebook or an interactive session, which worker "
                         f"processes cannot import; put it in a module (e.g. my_sweep.py next to the notebook) "
                         f"and import it from there; {hint}")
    try:
        pickle.dumps(obj)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise InputError(f"{what} = {fmt(obj)} cannot be sent to worker processes ({exc}); {hint}") from None

