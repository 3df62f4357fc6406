"""The progress line of an ensemble: members done, running and failed, elapsed time and ETA.

``progress=True`` draws one line on stderr, redrawn in place (``\\r``) at most five times a
second::

    ensemble [##########..........]  16/32 done  2 running  1 failed  00:42 elapsed  ETA 00:40

A callable ``progress(counts)`` receives instead a dict with ``total``, ``done`` (finished,
failed included), ``running``, ``failed``, ``resumed`` (taken from the checkpoint folder),
``elapsed`` (s) and ``final`` (True on the last call).
"""
from __future__ import annotations

import sys
import time

from .._arguments import fmt
from ..errors import InputError
from ..io.progress import clock

__all__ = ["EnsembleProgress", "make_display"]


class EnsembleProgress:
    """Draws the progress line on ``stream`` (default stderr)."""

    def __init__(self, stream=None, width: int = 20, min_interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.min_interval = min_interval
        self._last = -1e9

    def __call__(self, counts: dict) -> None:
        now = time.perf_counter()
        final = counts.get("final", False)
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        total, done = counts["total"], counts["done"]
        frac = done / total if total else 1.0
        filled = int(round(self.width * frac))
        fresh = done - counts.get("resumed", 0)
        rate = fresh / counts["elapsed"] if counts["elapsed"] > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("inf")
        resumed = f"  ({counts['resumed']} from checkpoint)" if counts.get("resumed") else ""
        line = (f"\rensemble [{'#' * filled}{'.' * (self.width - filled)}]  {done}/{total} done  "
                f"{counts['running']} running  {counts['failed']} failed  {clock(counts['elapsed'])} elapsed"
                f"{'' if final else '  ETA ' + clock(eta)}{resumed}")
        self.stream.write(line)
        if final:
            self.stream.write("\n")
        self.stream.flush()


def make_display(progress):
    """``None``/``False``: nothing; ``True``: an :class:`EnsembleProgress`; a callable as is."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return EnsembleProgress()
    if callable(progress):
        return progress
    raise InputError(f"progress must be True, False, None or a callable progress(counts), got {fmt(progress)}")
