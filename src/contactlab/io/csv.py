"""CSV time series of the energy terms and contact counts."""
from __future__ import annotations

import time as _time
from pathlib import Path

from .._arguments import as_bool, as_path, checked_api
from ..errors import OutputError
from .atomic import atomic_write_bytes, ensure_writable_folder, remove_stale_temporaries
from .reporter import Reporter

__all__ = ["EnergyCSVReporter", "ENERGY_COLUMNS"]

ENERGY_COLUMNS = ("step", "time", "kinetic", "rotational", "gravitational", "elastic", "dissipated", "total",
                  "boundary_work", "balance_error", "contacts", "wall_seconds")


def _complete(row: str) -> bool:
    """A whole row: every column present and the step an integer."""
    cells = row.split(",")
    return len(cells) == len(ENERGY_COLUMNS) and cells[0].isdigit() and all(cells)


@checked_api
class EnergyCSVReporter(Reporter):
    """Append one row per report to a CSV file.

    Columns: ``step``, ``time`` (s), the energy terms of :meth:`Simulation.energy` (J),
    ``contacts`` (number of active contacts) and ``wall_seconds`` (seconds since the reporter was
    attached).  The header is written when the file is created.  Rows are flushed at once, so the
    file can be followed while the run goes on.

    Parameters
    ----------
    path : str or Path
    interval : float, s, or every : int, steps
    resume : bool
        Continue an existing file after a restart from a checkpoint: its rows up to the current
        step are kept, later ones dropped.  Otherwise the file is started afresh.
    """

    def __init__(self, path, *, interval: float | None = None, every: int | None = None, resume: bool = False):
        super().__init__(interval=interval, every=every)
        self.path = as_path("EnergyCSVReporter: path", path)
        self.resume = as_bool("EnergyCSVReporter: resume", resume)
        self._file = None
        self._start = None

    def output_files(self) -> list[Path]:
        return [self.path]

    def attach(self, sim) -> None:
        super().attach(sim)
        ensure_writable_folder(self.path.parent, "CSV output folder")
        remove_stale_temporaries(self.path.parent, keep=lambda name: name == self.path.name)
        kept = []
        try:
            if self.resume and self.path.exists():
                with open(self.path, encoding="utf-8", errors="replace") as f:
                    rows = f.read().split("\n")[1:-1]   # the text after the last newline is no whole row
                # complete rows of earlier steps only: a run killed while writing may have left half a row
                kept = [r for r in rows if _complete(r) and int(r.split(",", 1)[0]) < sim.step]
            # header and kept rows replace the file atomically (a run killed here keeps the old rows),
            # then rows are appended
            atomic_write_bytes(self.path, "".join(r + "\n" for r in [",".join(ENERGY_COLUMNS), *kept]).encode())
            self._file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {str(self.path)!r}: {exc.strerror or exc}") from None
        self._start = _time.perf_counter()

    def report(self, sim) -> None:
        e = sim.energy()
        row = [str(sim.step), repr(sim.time)]
        row += [repr(e[k]) for k in ENERGY_COLUMNS[2:10]]
        row += [str(sim.n_contacts()), f"{_time.perf_counter() - self._start:.3f}"]
        try:
            self._file.write(",".join(row) + "\n")
            self._file.flush()
        except OSError as exc:
            raise OutputError(f"cannot write {str(self.path)!r}: {exc.strerror or exc}") from None

    def close(self, sim) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close(sim)
