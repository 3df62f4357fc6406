"""A minimal reader of contactlab's raw-appended .vtp files, independent of the writer (for the tests)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np


def read_vtp(path):
    """Minimal independent reader of our raw-appended .vtp files: arrays by name (points as 'Points')."""
    raw = Path(path).read_bytes()
    head, _, tail = raw.partition(b"<AppendedData encoding=\"raw\">")
    data = tail[tail.index(b"_") + 1:]
    root = ET.fromstring(head.decode() + "</VTKFile>")
    types = {"Float64": "<f8", "Int64": "<i8", "Int32": "<i4", "UInt8": "u1"}
    out = {}
    piece = root.find("PolyData/Piece")
    for section in piece:
        for arr in section.iter("DataArray"):
            off = int(arr.get("offset"))
            size = int(np.frombuffer(data[off:off + 8], "<u8")[0])
            values = np.frombuffer(data[off + 8:off + 8 + size], types[arr.get("type")])
            ncomp = int(arr.get("NumberOfComponents"))
            name = arr.get("Name") if section.tag != "Points" else "Points"
            out[(section.tag, name)] = values.reshape(-1, ncomp) if ncomp > 1 else values
    return piece.attrib, out
