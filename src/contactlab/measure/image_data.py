"""VTK image data (.vti): fields on a regular grid for ParaView, written without the vtk package.

The file is VTK's XML ImageData format with raw appended binary data (little endian, UInt64
block headers), as :func:`contactlab.io.vtk.write_polydata` writes PolyData: ParaView and
``vtk.vtkXMLImageDataReader`` read it.  A field of shape ``(nx, ny, nz)`` is a scalar, ``(nx, ny,
nz, 3)`` a vector, ``(nx, ny, nz, 3, 3)`` a tensor (9 components, row-major ``xx, xy, xz, yx, ...``,
which ParaView shows as a tensor); point ``(i, j, k)`` is at ``origin + (i, j, k) * spacing``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io.atomic import atomic_write_bytes

__all__ = ["write_image_data"]


def write_image_data(path, origin, spacing, fields: dict) -> Path:
    """Write point fields on a regular grid to a ``.vti`` file (atomically); returns the path.

    Parameters
    ----------
    path : str or Path
    origin : 3 floats, m -- the point ``(0, 0, 0)``
    spacing : 3 floats, m (> 0) -- the distance between neighbouring points along x, y, z
    fields : dict name -> array of shape (nx, ny, nz), (nx, ny, nz, 3) or (nx, ny, nz, 3, 3)
        All with the same ``(nx, ny, nz)``.
    """
    if not fields:
        raise InputError("write_image_data needs at least one field")
    shape = None
    blocks: list[bytes] = []
    arrays = []
    offset = 0
    for name, value in fields.items():
        a = np.asarray(value, dtype=np.float64)
        if a.ndim < 3:
            raise InputError(f"field {name!r} must have shape (nx, ny, nz[, ...]), got {a.shape}")
        if shape is None:
            shape = a.shape[:3]
        if a.shape[:3] != shape:
            raise InputError(f"field {name!r} has grid shape {a.shape[:3]}, the others {shape}")
        ncomp = int(np.prod(a.shape[3:], dtype=np.int64))
        # VTK orders points with x fastest: (nz, ny, nx, components)
        flat = np.ascontiguousarray(np.moveaxis(a.reshape(shape + (ncomp,)), (0, 1, 2), (2, 1, 0)))
        raw = flat.astype("<f8", copy=False).tobytes()
        blocks.append(np.uint64(len(raw)).tobytes() + raw)
        arrays.append(f'        <DataArray type="Float64" Name="{name}" NumberOfComponents="{ncomp}" '
                      f'format="appended" offset="{offset}"/>\n')
        offset += 8 + len(raw)
    nx, ny, nz = shape
    extent = f"0 {nx - 1} 0 {ny - 1} 0 {nz - 1}"
    o = " ".join(repr(float(v)) for v in origin)
    s = " ".join(repr(float(v)) for v in spacing)
    head = ('<?xml version="1.0"?>\n'
            '<VTKFile type="ImageData" version="1.0" byte_order="LittleEndian" header_type="UInt64">\n'
            f'  <ImageData WholeExtent="{extent}" Origin="{o}" Spacing="{s}">\n'
            f'    <Piece Extent="{extent}">\n'
            '      <PointData>\n' + "".join(arrays) + '      </PointData>\n'
            '      <CellData>\n      </CellData>\n'
            '    </Piece>\n  </ImageData>\n  <AppendedData encoding="raw">\n   _')
    data = head.encode() + b"".join(blocks) + b"\n  </AppendedData>\n</VTKFile>\n"
    path = Path(path)
    atomic_write_bytes(path, data)
    return path
