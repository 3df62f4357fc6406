"""Contact history across neighbour-list rebuilds: every pair keeps its rows under its key ``(i, j)``.

A rebuild makes a new sorted list of candidate pairs.  Each pair of the new list takes the rows the
same pair had in the old list, found by binary search among the old partners of its first body.
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

The rows move within the table's own arrays (one table in memory, not two): the search for each
new pair's old row is a compiled loop over the new pairs in blocks (:func:`match_pairs`); the move
itself (:func:`move_rows`) is serial.  It is safe in place because both lists are sorted by the
same key: the surviving pairs keep their order, so the old row ``s`` of new row ``k`` grows with
``k``.  Rows moving down (``s > k``) are moved first, in increasing ``k``: the row a move writes is
below its source, and every source still to be read lies above it.  Rows moving up (``s < k``)
are moved next, in decreasing ``k``: symmetrically.  The rows of new pairs are zeroed last.  The
result is the same copy as into fresh arrays, whatever the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import jit, kernel, pkernel

__all__ = ["match_pairs", "move_rows"]


@jit
def _old_row(i, j, old_i_start, old_j):
    """The row of pair ``(i, j)`` in the old list (binary search among the old partners of ``i``,
    sorted), or -1."""
    lo = np.int64(old_i_start[i])
    hi = np.int64(old_i_start[i + 1])
    end = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if old_j[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and old_j[lo] == j:
        return lo
    return -1


@pkernel
def match_pairs(n_new, new_i, new_j, old_i_start, old_j, src, n_blocks):
    """``src[k]``: the old row of the new list's pair ``k`` (the same ``(i, j)``), -1 for a pair new
    to the list.  ``new_i``, ``new_j`` (uint32): the new list, sorted by ``(i, j)``, its first
    ``n_new`` pairs valid; ``old_i_start`` (N+1): the old list's CSR by first body and ``old_j``
    its partners; ``src`` (>= n_new,) int32, written."""
    b = max((n_new + n_blocks - 1) // n_blocks, 1)
    for c in prange((n_new + b - 1) // b):
        for k in range(c * b, min((c + 1) * b, n_new)):
            src[k] = _old_row(new_i[k], new_j[k], old_i_start, old_j)


@jit
def _copy_row(s, k, hist, out, status):
    for c in range(hist.shape[1]):
        hist[k, c] = hist[s, c]
    for c in range(out.shape[1]):
        out[k, c] = out[s, c]
    status[k] = status[s]


@kernel
def move_rows(n_new, src, hist, out, status):
    """Move each surviving pair's rows of history, outputs and status from its old row ``src[k]``
    to its new row ``k`` in the same arrays, and zero the rows of the pairs new to the list.

    Both lists are sorted by the same key, so ``src`` is increasing over the surviving pairs: a
    row moving down (``src[k] >= k``) is moved in increasing ``k`` and a row moving up in
    decreasing ``k``, and neither overwrites a row still to be read (the module docstring).  Serial:
    the order is what makes it safe."""
    for k in range(n_new):
        s = src[k]
        if s > k:
            _copy_row(s, k, hist, out, status)
    for k in range(n_new - 1, -1, -1):
        s = src[k]
        if 0 <= s < k:
            _copy_row(s, k, hist, out, status)
    for k in range(n_new):
        if src[k] < 0:
            for c in range(hist.shape[1]):
                hist[k, c] = 0.0
            for c in range(out.shape[1]):
                out[k, c] = 0.0
            status[k] = 0
