"""The bodies' order in the GPU's memory: a spatial sort at every rebuild, every output in the user's.

At each neighbour-list rebuild on the device (:data:`contactlab.gpu.backend.BODY_ORDER` ``"sorted"``,
the default) the bodies' arrays are permuted into the build's cell order, so that the threads of a
warp, which take consecutive bodies, read rows stored side by side, and a body's partners sit in
nearby rows.  The user never sees that order:

* every field the records declare per body (``(N, ...)`` in :mod:`contactlab.engine.step_records`,
  :func:`~contactlab.engine.step_records.per_body_fields`) is gathered by the permutation
  (:func:`permuted`), the model's constants included, and scattered back into the host's arrays
  in the user's order when the state comes back (:meth:`Order.download`);
* ``labels[q]``, the user's index of the body stored at ``q``, takes the place of the body index
  wherever the CPU's build compares or sorts bodies (:mod:`contactlab.engine.gpu_neighbors`): a
  pair is owned by the body of the smaller user index, an owner's partners are sorted by their
  user indices, the pairs in which a body is the second (``j_pairs``), and a servo wall's pairs,
  by their owners' user indices.  Each body's and each wall's sums therefore run over the same
  terms in the same order as on the CPU, and the results are the CPU's bits;
* the contact table comes back in the CPU's layout (:func:`user_table`): rows by owner, partners
  and walls as the user's indices, the CSRs by second body and by wall rebuilt by the CPU's own
  functions.

One sum runs in another order: a stress-controlled periodic cell sums its contacts' stress over
the table's rows (:func:`contactlab.engine.cell_motion.cell_stress`), which on the device are in
storage order (a rounding-level difference; a Lees-Edwards cell at a set rate does not sum it).
"""
from __future__ import annotations

import numpy as np

from ..gpu import backend
from ..gpu.backend import cuda, gpu_kernel
from ..neighbors.celllist import boundary_pairs, transpose_pairs
from .layout import INDEX
from .step_records import per_body_fields

__all__ = ["LABEL", "gather", "identity", "rank_of", "permuted", "user_table"]

#: the dtype of labels (user indices) and ranks
LABEL = np.int32


@gpu_kernel
def _gather(per, src, items, dst):
    """``dst[q] = src[items[q]]`` (a 1-D array)."""
    q0 = cuda.grid(1) * per
    for q in range(q0, min(q0 + per, dst.shape[0])):
        dst[q] = src[items[q]]


@gpu_kernel
def _gather_rows(per, src, items, dst):
    """``dst[q, :] = src[items[q], :]`` (a 2-D array)."""
    q0 = cuda.grid(1) * per
    for q in range(q0, min(q0 + per, dst.shape[0])):
        p = items[q]
        for d in range(dst.shape[1]):
            dst[q, d] = src[p, d]


@gpu_kernel
def _rank(per, labels, rank):
    """``rank[labels[q]] = q``: where the body of each user index is stored."""
    q0 = cuda.grid(1) * per
    for q in range(q0, min(q0 + per, labels.shape[0])):
        rank[labels[q]] = q


def gather(src, items):
    """A new device array ``src[items]`` (rows of a 1-D or 2-D device array)."""
    dst = backend.device_zeros((items.shape[0],) + tuple(src.shape[1:]), src.dtype)
    if items.shape[0] == 0:
        return dst
    per, blocks, threads = backend.launch_shape(items.shape[0])
    if src.ndim == 1:
        _gather[blocks, threads](per, src, items, dst)
    elif src.shape[1] > 0:
        _gather_rows[blocks, threads](per, src, items, dst)
    return dst


def identity(n: int):
    """The labels of bodies stored in the user's order (device ``arange``)."""
    return backend.to_device(np.arange(n, dtype=LABEL))


def rank_of(labels):
    """``rank`` with ``rank[labels[q]] = q`` (device)."""
    rank = backend.device_zeros(labels.shape[0], LABEL)
    per, blocks, threads = backend.launch_shape(labels.shape[0])
    _rank[blocks, threads](per, labels, rank)
    return rank


def permuted(record, items, n: int, memo: dict):
    """``record`` (a device record of :mod:`contactlab.engine.step_records`, nested records
    included) with every per-body field gathered by ``items`` (``new[q] = old[items[q]]``);
    ``memo``: ``id(old array) -> new array``, shared by the records so that an array held in two
    fields stays one (filled here: the caller swaps its own references with it)."""
    if record is None or not hasattr(record, "_fields"):
        return record
    per_body = per_body_fields(type(record)) if hasattr(type(record), "SOURCES") else ()
    values = []
    for field in record._fields:
        value = getattr(record, field)
        if hasattr(value, "_fields"):
            value = permuted(value, items, n, memo)
        elif field in per_body and value is not None and len(value.shape) >= 1 and value.shape[0] == n:
            new = memo.get(id(value))
            if new is None:
                new = memo[id(value)] = (gather(value, items), value)
            value = new[0]
        values.append(value)
    return type(record)(*values)


def user_table(n: int, labels: np.ndarray, i_start: np.ndarray, pair_j: np.ndarray, rows: dict, n_pairs: int,
               n_boundary: int):
    """The device's contact table (host copies, storage order: ``i_start`` (N + 1,) by stored
    body, ``pair_j`` stored partners or ``N + wall``, ``rows``: name -> per-row array) in the CPU's
    layout: ``(i_start, pair_i, pair_j, rows, j_start, j_pairs, bound_start, bound_pairs)``, the
    owners' blocks of rows in the order of their user indices (each block is already sorted by its
    partners' user indices), indices as the user's, the CSRs by second body and by wall made by the
    CPU's :func:`~contactlab.neighbors.celllist.transpose_pairs` and ``boundary_pairs``
    (``n_boundary`` < 0: none)."""
    rank = np.empty(n, dtype=np.int64)
    rank[labels] = np.arange(n)
    count = np.diff(i_start.astype(np.int64))[rank]            # rows of each owner, by user index
    start_user = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(count, out=start_user[1:])
    # the storage row of each user row: owner u's block starts at i_start[rank[u]]
    first = i_start[:-1].astype(np.int64)[rank]
    order = np.repeat(first - start_user[:-1], count) + np.arange(n_pairs, dtype=np.int64)
    owner = np.repeat(np.arange(n, dtype=np.int64), count)
    j = pair_j[:n_pairs][order].astype(np.int64)
    body = j < n
    j[body] = labels[j[body]]
    out_rows = {name: a[:n_pairs][order] for name, a in rows.items()}
    pair_j_user = j.astype(INDEX)
    j_start, j_pairs = transpose_pairs(n, n_pairs, pair_j_user)
    bound_start = bound_pairs = None
    if n_boundary >= 0:
        bound_start, bound_pairs = boundary_pairs(n, n_boundary, n_pairs, pair_j_user)
    return (start_user.astype(i_start.dtype), owner.astype(INDEX), pair_j_user, out_rows, j_start, j_pairs,
            bound_start, bound_pairs)
