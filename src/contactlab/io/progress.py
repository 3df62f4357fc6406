"""A dependency-free progress bar for long runs: steps, simulated time, steps/s and ETA."""
from __future__ import annotations

import sys
import time

__all__ = ["make_progress", "ProgressBar", "clock"]


def clock(s: float) -> str:
    """``s`` seconds as ``m:ss`` or ``h:mm:ss`` (``--:--`` when unknown or infinite)."""
    if s != s or s == float("inf"):
        return "--:--"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


class ProgressBar:
    """Callable drawn between kernel chunks; writes one line to ``stream`` (stderr) with ``\\r``."""

    def __init__(self, stream=None, width: int = 28, min_interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.min_interval = min_interval
        self._last = 0.0

    def __call__(self, sim, done: int, total: int, wall: float, final: bool = False) -> None:
        now = time.perf_counter()
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        frac = done / total if total else 1.0
        filled = int(round(self.width * frac))
        rate = done / wall if wall > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("inf")
        line = (f"\r[{'#' * filled}{'.' * (self.width - filled)}] {100 * frac:5.1f}%  step {done}/{total}  "
                f"t={sim.time:.4g} s  {rate:,.0f} steps/s  ETA {clock(eta)}  contacts {sim.n_contacts()}")
        self.stream.write(line)
        if final:
            self.stream.write("\n")
        self.stream.flush()


def make_progress(progress):
    """``None``/``False``: no bar; ``True``: a :class:`ProgressBar`; a callable
    ``progress(sim, steps_done, steps_total, wall_seconds)`` is called with those four arguments
    after each chunk (the bar's closing call, ``final=True``, is the bar's own: the last chunk's
    call already had ``steps_done == steps_total``)."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar()
    if callable(progress):
        def call(sim, done: int, total: int, wall: float, final: bool = False) -> None:
            if not final:
                progress(sim, done, total, wall)
        return call
    raise TypeError(f"progress must be True, False, None or a callable, got {progress!r}")
