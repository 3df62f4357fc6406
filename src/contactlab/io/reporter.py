"""Reporters: everything that writes or records during a run is a reporter (the engine writes nothing).

A reporter says when it is due (every ``every`` steps, or every ``interval`` seconds of simulated
time rounded to whole steps) and what to do then.  The run loop stops the compiled kernel exactly
at the due steps, so reports never change the trajectory.
"""
from __future__ import annotations

import math

from .._arguments import as_positive, is_number
from ..errors import InputError

__all__ = ["Reporter"]


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

    def attach(self, sim) -> None:
        """Called by ``Simulation.add_reporter``."""
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
        """Finish files (called by ``Simulation.close``)."""
