"""One bound on a run's length, for every way a run is asked for (``Simulation.run``, scene files,
the command line, ensembles): a run that cannot end in any reasonable time is refused with its
numbers instead of running for ever.

Two checks, both raising :class:`~contactlab.errors.RunTooLongError` unless the run is allowed
(``allow_long_run=True``):

* **up front**, before the first step: the steps asked for times the least time a step can take
  (:data:`FASTEST_STEP_SECONDS` plus :data:`FASTEST_BODY_STEP_SECONDS` a body, faster than any
  engine on any machine) or, when this simulation has run before, the time its steps took.  A
  run this estimate puts beyond :data:`LONGEST_RUN_SECONDS` is certain to be too long;
* **from the measured rate**, once the run has stepped for :data:`MEASURE_SECONDS` of wall time
  (the first chunk, which may compile, left out): the steps left times the measured time a step.

A time step far below the stability limit (less than :data:`SMALLEST_DT_FRACTION` of it, where a
contact's oscillation spans more steps than double precision can sum) is refused when it is set,
with the same keyword to insist.
"""
from __future__ import annotations

import math

from .errors import RunTooLongError

__all__ = ["LONGEST_RUN_SECONDS", "SMALLEST_DT_FRACTION", "RunClock", "check_run_length", "check_small_dt"]

#: the longest run (wall time, s) accepted without ``allow_long_run=True``: a week
LONGEST_RUN_SECONDS = 7 * 24 * 3600.0
#: the least wall time (s) any step takes, and the least per body (1e9 body-steps/s); a step of one
#: or two bodies takes ~1e-7 s on a 2-core VM (benchmarks/README.md, "The step as records"), so the
#: least is well below it: an estimate from it must never refuse a run that would end within the bound
FASTEST_STEP_SECONDS = 2e-8
FASTEST_BODY_STEP_SECONDS = 1e-9
#: wall time (s) after which the measured rate decides
MEASURE_SECONDS = 1.0
#: a given dt below this fraction of the stability limit is refused: one oscillation of a contact
#: would take more steps than double precision can sum times of (2^53 ~ 9e15 steps of dt); a
#: small dt is otherwise the user's choice (a slow load cycle sampled finely, heavy bodies on soft
#: contacts whose limit is hours), and the run's length is bounded on its own
SMALLEST_DT_FRACTION = 1e-15

_INSIST = "allow_long_run=True runs it anyway (in a scene file: allow_long_run = true in [simulation]; on the command line: --allow-long-run)"


def _duration_text(seconds: float) -> str:
    if seconds < 3600.0:
        return f"{seconds:.3g} s"
    if seconds < 86400.0 * 3:
        return f"{seconds / 3600:.3g} h"
    if seconds < 86400.0 * 365 * 3:
        return f"{seconds / 86400:.3g} days"
    return f"{seconds / (86400.0 * 365.25):.3g} years"


def _asked(steps: int | float, dt: float | None, duration: float | None) -> str:
    if duration is None:
        return f"{steps:.4g} steps"
    return f"duration={duration!r} s at dt={dt:.4g} s, {steps:.4g} steps"


def check_run_length(steps: float, n_bodies: int, dt: float | None, duration: float | None,
                     seconds_per_step: float | None) -> None:
    """Refuse, before any step, a run of ``steps`` steps whose least possible wall time is beyond
    :data:`LONGEST_RUN_SECONDS`; ``seconds_per_step`` is a rate measured earlier (None: none)."""
    least = FASTEST_STEP_SECONDS + FASTEST_BODY_STEP_SECONDS * n_bodies
    per_step = max(least, seconds_per_step or 0.0)
    estimate = steps * per_step
    if not estimate > LONGEST_RUN_SECONDS:
        return
    how = (f"at the {per_step:.3g} s a step this simulation took so far" if seconds_per_step and seconds_per_step > least
           else f"even at {1.0 / least:.3g} steps/s, faster than any machine steps {n_bodies} bod{'y' if n_bodies == 1 else 'ies'}")
    raise RunTooLongError(f"the run asked for ({_asked(steps, dt, duration)}) would take {_duration_text(estimate)} "
                          f"of wall time {how}, more than the {_duration_text(LONGEST_RUN_SECONDS)} accepted; "
                          f"{_hint(dt, duration)}; {_INSIST}")


def _hint(dt: float | None, duration: float | None) -> str:
    if duration is not None:
        return "check duration (s) and dt (s)"
    return "check steps"


class RunClock:
    """The measured rate of one run: ``step(n, seconds)`` after each chunk; raises
    :class:`RunTooLongError` once the steps left would take beyond :data:`LONGEST_RUN_SECONDS`."""

    def __init__(self, total: int, dt: float | None, duration: float | None, allowed: bool):
        self.total, self.dt, self.duration, self.allowed = total, dt, duration, allowed
        self.chunks = 0
        self.steps = 0
        self.seconds = 0.0
        self.checked = allowed

    def step(self, done: int, n: int, seconds: float) -> None:
        self.chunks += 1
        if self.chunks == 1:                     # may hold the compilation
            return
        self.steps += n
        self.seconds += seconds
        if self.checked or self.seconds < MEASURE_SECONDS:
            return
        self.checked = True
        per_step = self.seconds / self.steps
        left = (self.total - done) * per_step
        if left > LONGEST_RUN_SECONDS:
            raise RunTooLongError(
                f"the run asked for ({_asked(self.total, self.dt, self.duration)}) would take "
                f"{_duration_text(left)} more of wall time at the measured {per_step:.3g} s a step ({self.steps} steps "
                f"in {self.seconds:.3g} s), more than the {_duration_text(LONGEST_RUN_SECONDS)} accepted; it stopped "
                f"after {done} steps, at a state that can be saved or run on; {_hint(self.dt, self.duration)}; "
                f"{_INSIST}")

    @property
    def seconds_per_step(self) -> float | None:
        return self.seconds / self.steps if self.steps else None


def check_small_dt(dt: float, limit: float, what: str) -> None:
    """Refuse a time step below :data:`SMALLEST_DT_FRACTION` of the stability limit ``limit`` (s;
    ``what`` names what sets it)."""
    if math.isfinite(limit) and dt < SMALLEST_DT_FRACTION * limit:
        raise RunTooLongError(f"dt={dt!r} s is {dt / limit:.3g} of the stability limit {limit:.6g} s ({what}), below "
                              f"the {SMALLEST_DT_FRACTION:g} of it accepted: every run would take "
                              f"{limit / dt:.3g} steps per oscillation of a contact; use dt=None (a stable step) or a "
                              f"dt near the limit; {_INSIST}")
