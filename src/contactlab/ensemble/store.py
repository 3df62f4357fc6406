"""The checkpoint folder of an ensemble: one record per finished member, so that a run that was
stopped (a cluster job past its wall time, a killed process, Ctrl-C) resumes with the unfinished
members only.

Layout::

    FOLDER/ensemble.json          what ensemble this is (make_simulation, measure, duration, steps)
    FOLDER/members/<key>.json     one file per finished member, written atomically when it finishes

``<key>`` is the member's key (:class:`~contactlab.ensemble.parameters.Member`): 16 hex digits
hashing its parameters, replicate and seed, so extending or reordering the grid keeps the records
of the members already run.  A record holds the member's parameters, seed, status, error text and
traceback, timings, and its measured values; numbers are written in Python's shortest exact form
and arrays (measured, or parameters) with their dtype and shape, so a resumed table is
bit-identical to an uninterrupted one.

Only outcomes that belong to the member are recorded: success, an exception raised by the member,
and a member that killed its worker process when run alone (see
:mod:`contactlab.ensemble.executors`).  A member lost to the executor (a broken user executor, a
lost cluster connection) is not recorded and runs again on resume.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..errors import CheckpointError
from ..io.atomic import atomic_write_bytes, ensure_writable_folder, remove_stale_temporaries
from .parameters import from_plain, plain

__all__ = ["CheckpointStore", "encode_record", "decode_record"]

FORMAT = 1
_ARRAY = "__ndarray__"


def _encode_value(value):
    if isinstance(value, np.ndarray):
        return {_ARRAY: value.tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
    return value


def _decode_value(value):
    if isinstance(value, dict) and _ARRAY in value:
        return np.array(value[_ARRAY], dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    return value


def encode_record(record: dict) -> bytes:
    """A member's record as JSON text (floats exact, arrays with dtype and shape)."""
    out = dict(record)
    out["values"] = {k: _encode_value(v) for k, v in record.get("values", {}).items()}
    if "parameters" in out:
        out["parameters"] = plain(out["parameters"])
    return json.dumps(out, indent=1, allow_nan=True).encode()


def decode_record(data: bytes) -> dict:
    record = json.loads(data)
    record["values"] = {k: _decode_value(v) for k, v in record.get("values", {}).items()}
    if "parameters" in record:
        record["parameters"] = from_plain(record["parameters"])
    return record


class CheckpointStore:
    """The records of the finished members in ``folder`` (created if needed).

    ``manifest``: what identifies the ensemble (names of ``make_simulation`` and ``measure``,
    ``duration``, ``steps``); a folder written by a different ensemble raises
    :class:`~contactlab.errors.CheckpointError` naming the difference, so that results of two
    different ensembles are never mixed.
    """

    def __init__(self, folder, manifest: dict):
        self.folder = Path(folder)
        self.members = self.folder / "members"
        ensure_writable_folder(self.members, "ensemble checkpoint folder")
        remove_stale_temporaries(self.members)
        manifest = {"format": FORMAT, **manifest}
        path = self.folder / "ensemble.json"
        if path.exists():
            try:
                saved = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise CheckpointError(f"{path} is not an ensemble manifest ({exc}); use another folder or remove "
                                      f"this one") from None
            for key, value in manifest.items():
                if not _same(saved.get(key), value):
                    raise CheckpointError(
                        f"checkpoint folder {str(self.folder)!r} holds another ensemble: its {key} is "
                        f"{saved.get(key)!r}, this run's is {value!r}; give another folder (or remove this one "
                        f"to start afresh)")
        else:
            atomic_write_bytes(path, json.dumps(manifest, indent=1).encode())

    def load(self) -> dict[str, dict]:
        """The saved records by member key (unreadable files, e.g. cut by a full disk, are skipped:
        those members run again)."""
        records = {}
        for path in sorted(self.members.glob("*.json")):
            try:
                records[path.stem] = decode_record(path.read_bytes())
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return records

    def save(self, key: str, record: dict) -> None:
        atomic_write_bytes(self.members / f"{key}.json", encode_record(record))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
