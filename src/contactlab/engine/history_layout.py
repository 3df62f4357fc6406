"""Which of a law's history columns the contact table stores.

A law's history is ``H`` floats per contact (its ``history_fields``, in order).  For some
parameters a law never uses a field: Hertz-Mindlin without rolling friction hands its rolling
spring ``mu_r = 0``, so the spring's rotation (3 floats) stays zero in every contact.  A model
names such fields (:meth:`contactlab.laws.base.ContactModel.unused_history`), and the contact
table then stores only the other columns, in order, followed as before by the dissipation columns
and (scenes of shapes) the three columns of the last normal: 24 B less per candidate pair for
Hertz-Mindlin without rolling friction, ~100 B per sphere in a settled packing.

The step kernels of such a table are a variant of the law's generated module
(:func:`contactlab.engine.codegen.kernel_module` with ``dropped``): they hand the law its full
history tuple with ``0.0`` in the dropped columns and store the other columns back, so the law
computes exactly what it computes with every column stored (the dropped ones hold zeros there).

A table *row* here is ``(K, width + rest)``: the stored history, then the ``rest`` columns that
follow it (dissipation, normals); in the full layout ``width = H``.  Everything outside the kernels
that reads history columns by index goes through :class:`HistoryLayout`: ``contacts()`` reports
every field (zeros for the dropped ones, :func:`contactlab.observables.pair_data`), checkpoints and
particle streams hand the table on in the full layout
(:meth:`contactlab.engine.stepper.Stepper.saved_table`), new bonds' histories are narrowed to it.

Which layout a run uses: the law's own (:meth:`HistoryLayout.of`), except where a column the law
drops holds a non-zero value in some row (a table restored from a checkpoint, or a model changed
with ``Simulation.set_model`` from rolling friction to none): such a column stays stored, as it
would be with every column stored (:func:`continued_layout`), so a run never loses history and
gives the same numbers as one that stores every column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ContactlabError

__all__ = ["HistoryLayout", "continued_layout"]


@dataclass(frozen=True)
class HistoryLayout:
    """The columns a contact table stores of a law's history of ``size`` floats: all but ``dropped``
    (ascending column indices of the full history)."""

    size: int
    dropped: tuple[int, ...] = ()

    def __post_init__(self):
        d = tuple(int(c) for c in self.dropped)
        if list(d) != sorted(set(d)) or any(not 0 <= c < self.size for c in d):
            raise ContactlabError(f"history layout: dropped columns must be distinct, ascending and below the "
                                  f"history size {self.size}, got {self.dropped!r}")
        object.__setattr__(self, "dropped", d)

    @classmethod
    def of(cls, law) -> "HistoryLayout":
        """The layout a new table of ``law`` (a ContactModel) uses: its unused history columns dropped."""
        return cls(law.history_size, law.unused_history_columns())

    @property
    def width(self) -> int:
        """Stored history columns per row (``size`` minus the dropped ones)."""
        return self.size - len(self.dropped)

    @property
    def kept(self) -> tuple[int, ...]:
        """The full-history columns that are stored, in order (stored column ``s`` is ``kept[s]``)."""
        return tuple(c for c in range(self.size) if c not in self.dropped)

    def column(self, c: int) -> int:
        """Where column ``c`` of a full row (the history, then what follows it) is stored; -1 for a
        dropped one."""
        if c in self.dropped:
            return -1
        return c - sum(1 for d in self.dropped if d < c)

    def _index(self, rest: int) -> np.ndarray:
        """Full-row column of each stored column, for rows with ``rest`` columns after the history."""
        return np.array(self.kept + tuple(range(self.size, self.size + rest)), dtype=np.int64)

    def widen(self, hist: np.ndarray) -> np.ndarray:
        """Rows ``(K, width + rest)`` of this layout as full rows ``(K, size + rest)`` (zeros in the
        dropped columns); the array itself when nothing is dropped."""
        if not self.dropped:
            return hist
        rest = hist.shape[1] - self.width
        out = np.zeros((hist.shape[0], self.size + rest))
        out[:, self._index(rest)] = hist
        return out

    def convert(self, hist: np.ndarray, to: "HistoryLayout") -> np.ndarray:
        """Rows of this layout in layout ``to`` (same history size); refuses to drop a column that
        holds a non-zero value (:func:`continued_layout` keeps such columns)."""
        if to.size != self.size:
            raise ContactlabError(f"history layout: cannot convert a history of {self.size} floats into one of "
                                  f"{to.size}")
        if to == self:
            return hist
        full = self.widen(hist)
        rest = full.shape[1] - self.size
        lost = [c for c in to.dropped if c not in self.dropped and np.any(full[:, c] != 0.0)]
        if lost:
            raise ContactlabError(f"history layout: columns {lost} hold non-zero history and cannot be dropped")
        return np.ascontiguousarray(full[:, to._index(rest)])


def continued_layout(law, hist: np.ndarray, layout: HistoryLayout) -> HistoryLayout:
    """The layout in which a table whose rows ``hist`` are in ``layout`` goes on under ``law``: the
    law's own (:meth:`HistoryLayout.of`), unless a column it would drop and ``layout`` stores holds
    a non-zero value in some row (the law carries it along as it would with every column stored;
    dropping it would lose it): then only the columns that ``layout`` drops too (a layout is
    always the law's own or one a run already had, so no other kernels are made)."""
    target = law.unused_history_columns()
    hist = np.asarray(hist)
    newly = [layout.column(c) for c in target if c not in layout.dropped]
    if newly and hist.shape[0] and np.any(hist[:, newly] != 0.0):
        target = tuple(c for c in target if c in layout.dropped)
    return HistoryLayout(law.history_size, target)
