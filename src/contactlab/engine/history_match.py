"""Contact history across neighbour-list rebuilds: every pair keeps its rows under its key ``(i, j)``.

A rebuild makes a new sorted list of candidate pairs.  Each pair of the new list takes the rows the
same pair had in the old list, found among the old partners of its first body.
The rules:

* the key of a contact is the pair ``(i, j)``: the first body ``i`` and its partner ``j`` (a body,
  ``N + w`` for wall ``w``, ``N + W + t`` for mesh triangle ``t``), with ``i < j`` for two bodies, as
  the neighbour list stores it (bodies never change index during a run, so the key is stable);
* a pair found in the old list carries over its history row (the law's history, the dissipation
  booked so far and, for shapes, the warm-start columns), its output row (the last evaluation: the
  partner's force and torque, energy, normal, overlap, contact point, the bond event mark) and its
  status (ACTIVE, INACTIVE or CLEARED), all unchanged;
* a pair new to the list starts from zero rows and status INACTIVE (0): a new contact;
* a pair that is not in the new list loses its rows: it was farther apart than the skin, so the
  law had already reset it (a bonded pair is always kept in the list, see
  :meth:`~contactlab.engine.contact_table.ContactTable.rebuild`);
* a contact handed from one mesh triangle to its neighbour keeps its history through the
  triangle selection of the step kernel, not here (a different triangle is a different key).

The rows move within the table's own arrays (one table in memory, not two), found by walking the
old and the new partners of each first body side by side (both are sorted by partner): no array of
old rows is kept, and the old list's partners are read only, so the new partners can be written
into the buffer of the old first bodies (:meth:`~contactlab.engine.contact_table.ContactTable.rebuild`).
It is safe in place because both lists are sorted by the same key: the surviving pairs keep their
order, so the old row ``s`` of new row ``k`` grows with ``k``.  Rows moving down (``s > k``) are
moved first, in increasing ``k``: the row a move writes is below its source, and every source
still to be read lies above it.  Rows moving up (``s < k``) are moved next, in decreasing ``k``:
symmetrically; the rows of new pairs are zeroed in the same pass (the downward moves are done, and
an upward move still to come reads a row below its own destination, so below the zeroed row).  The result is the same copy as into fresh arrays.
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, kernel

__all__ = ["carry_rows", "copy_row", "zero_row"]


@jit
def copy_row(src_hist, src_out, src_status, s, hist, out, status, k):
    """Row ``s`` of history, outputs and status into row ``k`` (the same arrays or others)."""
    for c in range(hist.shape[1]):
        hist[k, c] = src_hist[s, c]
    for c in range(out.shape[1]):
        out[k, c] = src_out[s, c]
    status[k] = src_status[s]


@jit
def zero_row(k, hist, out, status):
    """Row ``k`` of a pair new to the list: zero history and outputs, status 0 (INACTIVE)."""
    for c in range(hist.shape[1]):
        hist[k, c] = 0.0
    for c in range(out.shape[1]):
        out[k, c] = 0.0
    status[k] = 0


@kernel
def carry_rows(old_start, old_j, new_start, new_j, hist, out, status):
    """Move each surviving pair's rows of history, outputs and status from its row in the old list
    to its row ``k`` in the new list, in the same arrays, and zero the rows of the pairs new to the
    list.

    ``old_start``, ``new_start`` (N+1,): each list's CSR by first body; ``old_j``, ``new_j``
    (uint32): each list's partners, sorted within a first body (the pair ``(i, j)`` is the key);
    ``hist`` (rows, H), ``out`` (rows, C), ``status`` (rows,): both lists' rows, written.  A pair's
    old row is found by walking the old partners of its first body alongside the new ones: forward
    for the rows moving down (in increasing ``k``), backward for the rows moving up (in decreasing
    ``k``) and the new pairs (the module docstring).  Serial: the order is what makes it safe."""
    n = new_start.shape[0] - 1
    for i in range(n):
        s = np.int64(old_start[i])
        s_end = np.int64(old_start[i + 1])
        for k in range(np.int64(new_start[i]), np.int64(new_start[i + 1])):
            j = new_j[k]
            while s < s_end and old_j[s] < j:
                s += 1
            if s < s_end and old_j[s] == j and s > k:
                copy_row(hist, out, status, s, hist, out, status, k)
    for i in range(n - 1, -1, -1):
        s = np.int64(old_start[i + 1]) - 1
        s_begin = np.int64(old_start[i])
        for k in range(np.int64(new_start[i + 1]) - 1, np.int64(new_start[i]) - 1, -1):
            j = new_j[k]
            while s >= s_begin and old_j[s] > j:
                s -= 1
            if s >= s_begin and old_j[s] == j:
                if s < k:
                    copy_row(hist, out, status, s, hist, out, status, k)
            else:
                zero_row(k, hist, out, status)
