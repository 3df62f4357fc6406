"""Reporters: everything that writes or records during a run is a reporter (the engine writes nothing).

A reporter says when it is due (every ``every`` steps, or every ``interval`` seconds of simulated
time rounded to whole steps) and what to do then.  The run loop stops the compiled kernel exactly
at the due steps, so reports never change the trajectory.

A reporter follows one simulation: attaching it to a second one is refused (its files would mix
the two runs, a ``.pvd`` whose time runs backwards); make a new reporter for each simulation.  A
reporter that writes files names them (:meth:`Reporter.output_files`: a file, or a series' collection
file standing for its frames), and two reporters of one process may not write the same one (two
``VTKReporter`` on one folder would overwrite each other's frames): the second is refused while the
first is attached to a simulation that is still alive and not closed (:meth:`Simulation.close`).
"""
from __future__ import annotations

import gc
import math
import weakref
from pathlib import Path

from .._arguments import as_positive, is_number
from ..errors import InputError

__all__ = ["Reporter"]

#: the files written by the reporters of this process: resolved path -> the reporter (weakly held)
_WRITERS: dict[str, weakref.ref] = {}


def _writing(reporter) -> bool:
    """Whether ``reporter`` still writes its files: attached (in its simulation's reporters), the
    simulation alive and not closed."""
    ref = getattr(reporter, "_simulation", None)
    sim = None if ref is None else ref()
    return (sim is not None and not getattr(reporter, "_closed", False)
            and any(r is reporter for r in getattr(sim, "reporters", ())))


def _other_writer(key: str, reporter):
    holder = _WRITERS.get(key)
    holder = None if holder is None else holder()
    return holder if holder is not reporter and _writing(holder) else None


class Reporter:
    """Base class: subclasses implement :meth:`report` (and optionally :meth:`close`).

    Parameters
    ----------
    interval : float, optional
        Simulated time between reports, s.
    every : int, optional
        Steps between reports.  Give one of ``interval`` and ``every``.
    """

    def __init__(self, *, interval: float | None = None, every: int | None = None):
        if (interval is None) == (every is None):
            raise InputError(f"{type(self).__name__}: give exactly one of interval (s) or every (steps)")
        self.interval = None if interval is None else as_positive(f"{type(self).__name__}: interval", interval, "s")
        if every is not None and not (is_number(every) and math.isfinite(every) and int(every) == every
                                      and every >= 1):
            raise InputError(f"{type(self).__name__}: every must be a positive integer (steps), got {every!r}")
        self.every = None if every is None else int(every)
        self._last_step = None
        self._simulation = None     # the simulation it is attached to (weakly held)
        self._closed = False

    def output_files(self) -> list[Path]:
        """The files this reporter writes (for a series: its collection file); no other reporter
        of this process may write one of them while this one does.  None by default."""
        return []

    def attach(self, sim) -> None:
        """Called by ``Simulation.add_reporter`` (a subclass calls it first, before it opens files).

        Raises :class:`~contactlab.errors.InputError` if the reporter is attached to a simulation
        already, or if another reporter of this process writes one of its :meth:`output_files`."""
        name = type(self).__name__
        ref = getattr(self, "_simulation", None)   # (a subclass that did not call Reporter.__init__)
        bound = None if ref is None else ref()
        if bound is not None and any(r is self for r in getattr(bound, "reporters", ())):
            if bound is sim:
                raise InputError(f"add_reporter: this {name} is attached to this simulation already")
            raise InputError(f"add_reporter: this {name} is attached to another simulation already (at t = "
                             f"{bound.time:.6g} s, step {bound.step}); a reporter follows one simulation (its files "
                             f"would mix the two runs, times running backwards): make a new {name}(...) for this one "
                             f"(resume=True continues a series after a restart)")
        keys = [str(Path(f).resolve()) for f in self.output_files()]
        if any(_other_writer(k, self) is not None for k in keys):
            gc.collect()   # a simulation nothing refers to any more (a notebook cell run again) writes nothing
        for key in keys:
            other = _other_writer(key, self)
            if other is not None:
                osim = other._simulation()
                where = ("this simulation" if osim is sim else
                         f"a simulation at t = {osim.time:.6g} s, step {osim.step}")
                place = "folder" if hasattr(self, "directory") else "file"
                advice = "" if osim is sim else ", or close the other's simulation first (sim.close())"
                raise InputError(f"{name}: {key!r} is written by another {type(other).__name__} already (attached to "
                                 f"{where}); two writers of one file lose one's output: give this one another "
                                 f"{place}{advice}")
        self._simulation = weakref.ref(sim)
        self._closed = False
        for key in [k for k, r in _WRITERS.items() if r() is None]:
            del _WRITERS[key]
        for key in keys:
            _WRITERS[key] = weakref.ref(self)
        self._period = self.every if self.every is not None else max(1, int(round(self.interval / sim.dt)))

    def period(self) -> int:
        return self._period

    def next_step(self, sim) -> int:
        """Index of the next step at which this reporter is due."""
        p = self._period
        nxt = int(math.ceil(sim.step / p)) * p
        if nxt == self._last_step:
            nxt += p
        return nxt

    def maybe_report(self, sim) -> None:
        if sim.step % self._period == 0 and sim.step != self._last_step:
            self._last_step = sim.step
            self.report(sim)

    def report(self, sim) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self, sim) -> None:
        """Finish files (called by ``Simulation.close``); its files are free for other reporters
        then.  A subclass that overrides it calls it too."""
        self._closed = True
