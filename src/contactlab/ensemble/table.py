"""The result table of an ensemble: one row per member (a pandas DataFrame), and its files.

Columns, in order:

* the parameters, one column each (named as in the parameter dicts, e.g. ``friction`` or
  ``model.friction``);
* ``seed`` and ``replicate``;
* the measured values, one column each (a scalar measure: float, int, bool or text; an array
  measure: an object column holding one NumPy array per member, see :func:`stack`); a measured
  name that clashes with a parameter gets the suffix ``_measured``;
* ``status`` ("ok" or "failed"), ``error`` (the exception's type and message on one line; ""
  when ok), ``attempts`` (runs of this member, more than 1 when its worker died),
  ``wall_seconds`` (the member's time in its worker), ``setup_seconds`` (make_simulation),
  ``run_seconds`` (the run), ``compiled`` (Numba functions compiled during the member: 0 when its
  kernels came from the on-disk cache), ``compile_seconds``, ``worker`` (``host:pid``) and
  ``resumed`` (True: taken from the checkpoint folder, not run now).

The index is the member number (``member``).  ``table.attrs`` holds ``parameters`` (the
parameter column names), ``measures`` (the measured columns), ``executor``, ``elapsed_seconds``
(the ensemble's wall time), ``slots`` (members that could run at once), and
``overhead_seconds_per_member``: ``(elapsed * slots - sum of wall_seconds) / members run``, the
time per member that went to starting processes, sending tasks and waiting, not to members (NaN
when the executor does not say how many members it runs at once).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .._arguments import as_path
from ..errors import InputError, OutputError
from ..io.atomic import atomic_write_bytes, ensure_writable_folder

__all__ = ["build_table", "stack", "member_parameters", "write_table", "TIMING_COLUMNS"]

TIMING_COLUMNS = ("status", "error", "attempts", "wall_seconds", "setup_seconds", "run_seconds", "compiled",
                  "compile_seconds", "worker", "resumed")


def build_table(members, records: dict, *, attrs: dict):
    """The DataFrame of ``members`` (in order) with their ``records`` (by key)."""
    import pandas as pd

    param_names: list[str] = []
    for m in members:
        param_names += [k for k in m.parameters if k not in param_names]
    measure_names: list[str] = []
    for m in members:
        rec = records.get(m.key)
        if rec is not None:
            measure_names += [k for k in rec["values"] if k not in measure_names]
    rename = {k: (f"{k}_measured" if k in param_names or k in ("seed", "replicate") else k) for k in measure_names}
    rows = []
    for m in members:
        rec = records.get(m.key) or {"status": "failed", "values": {}, "error": "not run",
                                     "attempts": 0, "resumed": False}
        row = {k: m.parameters.get(k) for k in param_names}
        row["seed"] = m.seed
        row["replicate"] = m.replicate
        for k in measure_names:
            row[rename[k]] = rec["values"].get(k)
        for k in TIMING_COLUMNS:
            row[k] = rec.get(k, _DEFAULTS[k])
        rows.append(row)
    columns = [*param_names, "seed", "replicate", *(rename[k] for k in measure_names), *TIMING_COLUMNS]
    table = pd.DataFrame(rows, columns=columns, index=pd.RangeIndex(len(rows), name="member"))
    for k in measure_names:
        col = rename[k]
        cells = [v for v in table[col] if v is not None]
        if cells and all(isinstance(v, (float, int)) and not isinstance(v, bool) for v in cells):
            table[col] = table[col].astype("float64")
    ran = [records[m.key] for m in members if m.key in records and not records[m.key].get("resumed")]
    busy = sum(r["wall_seconds"] for r in ran if r.get("wall_seconds") == r.get("wall_seconds"))
    table.attrs.update(attrs)
    table.attrs["parameters"] = param_names
    table.attrs["measures"] = [rename[k] for k in measure_names]
    slots = attrs.get("slots")   # None: the executor did not say how many members run at once
    table.attrs["overhead_seconds_per_member"] = ((attrs["elapsed_seconds"] * slots - busy) / len(ran)
                                                  if ran and slots else math.nan)
    return table


_DEFAULTS = {"status": "failed", "error": "", "attempts": 0, "wall_seconds": math.nan, "setup_seconds": math.nan,
             "run_seconds": math.nan, "compiled": 0, "compile_seconds": 0.0, "worker": "", "resumed": False}


def stack(table, column: str) -> np.ndarray:
    """An array measure of every member as one array of shape (members, ...), NaN for the rows
    of failed members (the members' arrays must share one shape)."""
    if column not in table.columns:
        raise InputError(f"the table has no column {column!r}; measured columns: {', '.join(table.attrs.get('measures', []))}")
    cells = list(table[column])
    shapes = {np.shape(c) for c in cells if c is not None and not (isinstance(c, float) and math.isnan(c))}
    if len(shapes) != 1:
        raise InputError(f"column {column!r} holds arrays of different shapes {sorted(shapes)} (or none): stack "
                         f"needs one shape")
    (shape,) = shapes
    out = np.full((len(cells), *shape), np.nan)
    for k, c in enumerate(cells):
        if c is not None and not (isinstance(c, float) and math.isnan(c)):
            out[k] = c
    return out


def member_parameters(table, member: int) -> tuple[dict, int]:
    """The parameters (dict) and seed of one member of a result table, to run it again alone with
    :func:`contactlab.ensemble.run_member`."""
    names = table.attrs.get("parameters")
    if names is None:
        raise InputError("this table has lost its attrs (it was read back from a file): give the parameters "
                         "yourself, e.g. dict(table.loc[member, ['friction', 'restitution']])")
    if member not in table.index:
        raise InputError(f"member {member!r} is not in the table (members {table.index.min()} to {table.index.max()})")
    row = table.loc[member]
    params = {k: _plain(row[k]) for k in names}
    return params, int(row["seed"])


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_table(table, path) -> Path:
    """Write the table as CSV (``.csv``) or Parquet (``.parquet``, needs pyarrow), atomically.
    Array measures are written as lists (Parquet) or their text (CSV)."""
    path = as_path("out", path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise InputError(f"the results file must end in .csv or .parquet, got {str(path)!r}")
    ensure_writable_folder(path.parent if str(path.parent) else Path("."), "results folder")
    if suffix == ".csv":
        atomic_write_bytes(path, table.to_csv().encode())
        return path
    try:
        import pyarrow  # noqa: F401  (pandas writes Parquet through it)
    except ImportError:
        raise OutputError(f"writing {str(path)!r} as Parquet needs pyarrow (pip install pyarrow, or pip install "
                          f"'contactlab[ensemble]'); or give a .csv file") from None
    out = table.copy()
    out.attrs = {}
    for col in out.columns:
        if out[col].dtype == object and any(isinstance(v, np.ndarray) for v in out[col]):
            out[col] = [v.tolist() if isinstance(v, np.ndarray) else v for v in out[col]]
    atomic_write_bytes(path, out.to_parquet())
    return path
