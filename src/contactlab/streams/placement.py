"""Places new spheres in a region without overlapping the bodies there or each other.

:func:`place` is random sequential addition into a region (a box, a ball or a cylinder of
:mod:`contactlab.packing.regions`, as :mod:`contactlab.measure.volumes` describes them) that is
already partly occupied: each new sphere, in the order given, tries up to ``attempts`` uniformly
random centres where it lies entirely inside the region, and takes the first one at which it
overlaps neither a body present (by the body's bounding radius) nor a sphere placed before it.
A sphere that finds no place is left out (the inlet defers it to its next batch).  The random
numbers are drawn beforehand by the caller's NumPy generator (three per attempt), so a placement
is a function of the generator's state: reproducible, and resumable from a checkpoint.
Neighbours are found in a grid of cells at least as large as the largest reach; the compiled loop
is the only per-sphere work.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit, kernel
from ..measure.volumes import _BALL, _BOX, _CYLINDER, region_bounds

__all__ = ["place", "region_room"]


def region_room(kind: int, p: np.ndarray, dimension: int) -> float:
    """The radius (m) of the largest sphere (disk) the region holds."""
    if kind == _BOX:
        return 0.5 * float((p[3:6] - p[0:3])[:dimension].min())
    if kind == _BALL:
        return float(p[3])
    return float(p[6]) if dimension == 2 else float(min(p[6], 0.5 * p[7]))


def _frame(kind: int, p: np.ndarray) -> np.ndarray:
    """(3, 3): a cylinder's radial unit vectors and axis as rows (identity otherwise)."""
    if kind != _CYLINDER:
        return np.eye(3)
    axis = p[3:6]
    trial = np.eye(3)[int(np.argmin(np.abs(axis)))]
    e1 = trial - (trial @ axis) * axis
    e1 /= np.linalg.norm(e1)
    return np.array([e1, np.cross(axis, e1), axis])


def place(kind: int, params: np.ndarray, dimension: int, radii: np.ndarray, u: np.ndarray,
          others_pos: np.ndarray, others_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centres for the spheres ``radii`` (K,) m in the region, avoiding the bodies ``others_pos``
    (M, 3) m of bounding radii ``others_r`` (M,) m.

    ``u`` (K, A, 3): uniform random numbers in [0, 1), three per attempt, A attempts per sphere.
    Returns ``(positions (K, 3), placed (K,) bool)``; the rows of spheres not placed are zero.
    Every placed sphere lies inside the region and at a distance of at least ``r_a + r_b`` from
    every other body and placed sphere (no overlap at all).
    """
    k = radii.shape[0]
    out = np.zeros((k, 3))
    placed = np.zeros(k, dtype=bool)
    if k == 0:
        return out, placed
    lower, upper = region_bounds(kind, params, dimension)
    r_new = float(radii.max())
    # only the bodies that can reach a sphere in the region
    if len(others_r):
        reach = others_r + r_new
        near = np.all((others_pos >= lower - reach[:, None]) & (others_pos <= upper + reach[:, None]), axis=1)
        others_pos, others_r = others_pos[near], others_r[near]
    r_other = float(others_r.max()) if len(others_r) else 0.0
    cell = max(2.0 * r_new, r_new + r_other)
    extent = upper - lower
    cell = max(cell, float(np.prod(np.maximum(extent, cell)[:dimension]) / 4e6) ** (1.0 / dimension))
    lower = lower - cell
    dims = np.maximum(1, np.ceil((extent + 2.0 * cell) / cell).astype(np.int64))
    if dimension == 2:
        dims[2] = 1
    _place(int(kind), np.asarray(params, dtype=np.float64), _frame(kind, params), np.asarray(radii, dtype=np.float64),
           np.ascontiguousarray(u, dtype=np.float64), int(dimension), lower, float(cell), dims,
           np.ascontiguousarray(others_pos, dtype=np.float64), np.ascontiguousarray(others_r, dtype=np.float64),
           out, placed)
    return out, placed


@kernel
def _place(kind, p, frame, radii, u, dimension, lower, cell, dims, others_pos, others_r, out,
           placed):  # pragma: no cover - compiled
    """The loop of :func:`place`: the bodies present and the spheres placed share one grid of
    linked lists (``head`` per cell, ``nxt`` per entry; entries ``< M`` are the bodies present)."""
    n_o = others_r.shape[0]
    k = radii.shape[0]
    nx, ny, nz = dims[0], dims[1], dims[2]
    head = np.full(nx * ny * nz, -1, dtype=np.int64)
    nxt = np.full(n_o + k, -1, dtype=np.int64)
    pos = np.empty((n_o + k, 3))
    rad = np.empty(n_o + k)
    for q in range(n_o):
        pos[q, 0], pos[q, 1], pos[q, 2] = others_pos[q, 0], others_pos[q, 1], others_pos[q, 2]
        rad[q] = others_r[q]
        c = _cell_of(pos[q, 0], pos[q, 1], pos[q, 2], lower, cell, nx, ny, nz)
        nxt[q] = head[c]
        head[c] = q
    for s in range(k):
        r = radii[s]
        for a in range(u.shape[1]):
            x, y, z = _candidate(kind, p, frame, r, dimension, u[s, a, 0], u[s, a, 1], u[s, a, 2])
            cx = min(nx - 1, max(0, int((x - lower[0]) / cell)))
            cy = min(ny - 1, max(0, int((y - lower[1]) / cell)))
            cz = min(nz - 1, max(0, int((z - lower[2]) / cell)))
            free = True
            for ix in range(max(0, cx - 1), min(nx, cx + 2)):
                for iy in range(max(0, cy - 1), min(ny, cy + 2)):
                    for iz in range(max(0, cz - 1), min(nz, cz + 2)):
                        q = head[(ix * ny + iy) * nz + iz]
                        while q >= 0 and free:
                            dx, dy, dz = x - pos[q, 0], y - pos[q, 1], z - pos[q, 2]
                            reach = r + rad[q]
                            if dx * dx + dy * dy + dz * dz < reach * reach:
                                free = False
                            q = nxt[q]
            if free:
                out[s, 0], out[s, 1], out[s, 2] = x, y, z
                placed[s] = True
                e = n_o + s
                pos[e, 0], pos[e, 1], pos[e, 2] = x, y, z
                rad[e] = r
                c = (cx * ny + cy) * nz + cz
                nxt[e] = head[c]
                head[c] = e
                break


@jit
def _cell_of(x, y, z, lower, cell, nx, ny, nz):
    """The grid cell of a point (points outside the grid go to its border cells)."""
    cx = min(nx - 1, max(0, int((x - lower[0]) / cell)))
    cy = min(ny - 1, max(0, int((y - lower[1]) / cell)))
    cz = min(nz - 1, max(0, int((z - lower[2]) / cell)))
    return (cx * ny + cy) * nz + cz


@jit
def _candidate(kind, p, frame, r, dimension, u0, u1, u2):
    """The centre, for the uniform numbers ``u0, u1, u2``, of a sphere of radius ``r`` uniformly
    distributed over the positions where it lies inside the region (inverse transforms: a box's
    sides, a ball's radius ``room u^(1/3)`` (2-D ``room sqrt(u)``) and direction, a cylinder's
    radius ``room sqrt(u)``, angle and height)."""
    if kind == _BOX:
        x = p[0] + r + u0 * (p[3] - p[0] - 2.0 * r)
        y = p[1] + r + u1 * (p[4] - p[1] - 2.0 * r)
        z = 0.0 if dimension == 2 else p[2] + r + u2 * (p[5] - p[2] - 2.0 * r)
        return x, y, z
    phi = 2.0 * math.pi * u1
    if kind == _BALL:
        room = p[3] - r
        if dimension == 2:
            rho = room * math.sqrt(u2)
            return p[0] + rho * math.cos(phi), p[1] + rho * math.sin(phi), 0.0
        cos_t = 2.0 * u0 - 1.0
        sin_t = math.sqrt(max(0.0, 1.0 - cos_t * cos_t))
        rho = room * u2 ** (1.0 / 3.0)
        return (p[0] + rho * sin_t * math.cos(phi), p[1] + rho * sin_t * math.sin(phi), p[2] + rho * cos_t)
    rho = (p[6] - r) * math.sqrt(u0)
    a, b = rho * math.cos(phi), rho * math.sin(phi)
    h = 0.0 if dimension == 2 else (u2 - 0.5) * (p[7] - 2.0 * r)
    return (p[0] + a * frame[0, 0] + b * frame[1, 0] + h * frame[2, 0],
            p[1] + a * frame[0, 1] + b * frame[1, 1] + h * frame[2, 1],
            p[2] + a * frame[0, 2] + b * frame[1, 2] + h * frame[2, 2])
