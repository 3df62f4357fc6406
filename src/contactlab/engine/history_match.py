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

The copy is a compiled loop over the new pairs in blocks (no two blocks write the same row), so the
result does not depend on the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import kernel, pkernel

__all__ = ["remap_pairs"]


@kernel
def _remap_chunk(k0, k1, new_i, new_j, old_i_start, old_j, old_hist, new_hist, old_out, new_out, old_status,
                 new_status):
    for k in range(k0, k1):
        i = new_i[k]
        j = new_j[k]
        lo = np.int64(old_i_start[i])
        hi = np.int64(old_i_start[i + 1])
        end = hi
        # binary search for j among the old partners of i (sorted)
        while lo < hi:
            mid = (lo + hi) // 2
            if old_j[mid] < j:
                lo = mid + 1
            else:
                hi = mid
        if lo < end and old_j[lo] == j:
            for c in range(new_hist.shape[1]):
                new_hist[k, c] = old_hist[lo, c]
            for c in range(new_out.shape[1]):
                new_out[k, c] = old_out[lo, c]
            new_status[k] = old_status[lo]
        else:
            for c in range(new_hist.shape[1]):
                new_hist[k, c] = 0.0
            for c in range(new_out.shape[1]):
                new_out[k, c] = 0.0
            new_status[k] = 0


@pkernel
def remap_pairs(n_new, new_i, new_j, old_i_start, old_j, old_hist, new_hist, old_out, new_out, old_status,
                new_status, n_blocks):
    """Carry each pair's history, outputs and status from the old list to the same pair ``(i, j)`` in
    the new list (found by binary search); pairs new to the list start from zero (module docstring).

    ``new_i``, ``new_j`` (uint32): the new list, sorted by ``(i, j)``, its first ``n_new`` pairs
    valid; ``old_i_start`` (N+1): the old list's CSR by first body and ``old_j`` its partners;
    ``old_*``/``new_*`` rows of history (float64), outputs (float64) and status (int8)."""
    b = max((n_new + n_blocks - 1) // n_blocks, 1)
    for c in prange((n_new + b - 1) // b):
        _remap_chunk(c * b, min((c + 1) * b, n_new), new_i, new_j, old_i_start, old_j, old_hist, new_hist,
                     old_out, new_out, old_status, new_status)
