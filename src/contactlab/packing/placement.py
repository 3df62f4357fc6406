"""Placing spheres (disks in 2-D) in a region without overlap: random sequential addition on a grid.

Two entry points share one grid of linked lists (``head`` per cell of side at least the largest
reach, ``nxt`` per entry) and one test of a candidate centre against it:

* :func:`sequential_addition` -- the scene's fill (:mod:`contactlab.scene.random_packing`): into
  an empty region, largest first, up to ``max_attempts`` centres per sphere drawn by the kernel's
  own generator (seeded), stopping at the first sphere that finds no place;
* :func:`place` -- a particle stream's inlet (:mod:`contactlab.streams.inlet`): into a region that
  is already partly occupied; each new sphere, in the order given, tries the centres given by
  uniform numbers the caller drew beforehand (three per attempt, so a placement is a function of
  the caller's generator: reproducible and resumable from a checkpoint) and takes the first one at
  which it overlaps neither a body present (by the body's bounding radius) nor a sphere placed
  before it; a sphere that finds no place is left out (the inlet defers it to its next batch).

The regions are the box, ball and cylinder of :mod:`contactlab.packing.regions`, as
:mod:`contactlab.measure.volumes` describes them; a candidate centre always keeps its sphere
entirely inside.  The compiled loops are the only per-sphere work.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit, kernel
from ..measure.volumes import _BALL, _BOX, _CYLINDER, region_bounds

__all__ = ["place", "sequential_addition", "region_room", "region_frame"]


def region_room(kind: int, p: np.ndarray, dimension: int) -> float:
    """The radius (m) of the largest sphere (disk) the region holds."""
    if kind == _BOX:
        return 0.5 * float((p[3:6] - p[0:3])[:dimension].min())
    if kind == _BALL:
        return float(p[3])
    return float(p[6]) if dimension == 2 else float(min(p[6], 0.5 * p[7]))


def region_frame(kind: int, p: np.ndarray) -> np.ndarray:
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
    _place(int(kind), np.asarray(params, dtype=np.float64), region_frame(kind, params), np.asarray(radii, dtype=np.float64),
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
    head = np.full(dims[0] * dims[1] * dims[2], -1, dtype=np.int64)
    nxt = np.full(n_o + k, -1, dtype=np.int64)
    pos = np.empty((n_o + k, 3))
    rad = np.empty(n_o + k)
    for q in range(n_o):
        pos[q, 0], pos[q, 1], pos[q, 2] = others_pos[q, 0], others_pos[q, 1], others_pos[q, 2]
        rad[q] = others_r[q]
        _insert(q, _grid_cell(pos[q, 0], pos[q, 1], pos[q, 2], lower, cell, dims), dims, head, nxt)
    for s in range(k):
        r = radii[s]
        for a in range(u.shape[1]):
            x, y, z = _candidate_from(kind, p, frame, r, dimension, u[s, a, 0], u[s, a, 1], u[s, a, 2])
            c = _grid_cell(x, y, z, lower, cell, dims)
            if _is_free(x, y, z, r, c, dims, head, nxt, pos, rad):
                out[s, 0], out[s, 1], out[s, 2] = x, y, z
                placed[s] = True
                e = n_o + s
                pos[e, 0], pos[e, 1], pos[e, 2] = x, y, z
                rad[e] = r
                _insert(e, c, dims, head, nxt)
                break


@kernel
def sequential_addition(kind, p, frame, radii, dimension, seed, max_attempts, lower, cell, dims,
                        out):  # pragma: no cover - compiled
    """Random sequential addition of spheres ``radii`` (largest first) into the empty region:
    ``out[k]`` the centre of sphere ``k``; returns how many were placed (all, or the first that
    found no place in ``max_attempts`` tries stops it).  ``cell >= 2 r_max`` (module docstring)."""
    np.random.seed(seed)
    n = radii.shape[0]
    head = np.full(dims[0] * dims[1] * dims[2], -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        r = radii[k]
        found = False
        for _ in range(max_attempts):
            x, y, z = _candidate_random(kind, p, frame, r, dimension)
            c = _grid_cell(x, y, z, lower, cell, dims)
            if _is_free(x, y, z, r, c, dims, head, nxt, out, radii):
                out[k, 0], out[k, 1], out[k, 2] = x, y, z
                _insert(k, c, dims, head, nxt)
                found = True
                break
        if not found:
            return k
    return n


@jit
def _grid_cell(x, y, z, lower, cell, dims):
    """The grid cell ``(cx, cy, cz)`` of a point (points outside the grid go to its border cells)."""
    return (min(dims[0] - 1, max(0, int((x - lower[0]) / cell))), min(dims[1] - 1, max(0, int((y - lower[1]) / cell))),
            min(dims[2] - 1, max(0, int((z - lower[2]) / cell))))


@jit
def _insert(e, c, dims, head, nxt):
    """Entry ``e`` at the head of the linked list of grid cell ``c = (cx, cy, cz)``."""
    b = (c[0] * dims[1] + c[1]) * dims[2] + c[2]
    nxt[e] = head[b]
    head[b] = e


@jit
def _is_free(x, y, z, r, c, dims, head, nxt, pos, rad):
    """Whether a sphere of radius ``r`` at ``(x, y, z)`` in grid cell ``c`` overlaps none of the
    entries ``q`` (centre ``pos[q]``, radius ``rad[q]``) of the 27 cells around it."""
    cx, cy, cz = c
    for ix in range(max(0, cx - 1), min(dims[0], cx + 2)):
        for iy in range(max(0, cy - 1), min(dims[1], cy + 2)):
            for iz in range(max(0, cz - 1), min(dims[2], cz + 2)):
                q = head[(ix * dims[1] + iy) * dims[2] + iz]
                while q >= 0:
                    dx, dy, dz = x - pos[q, 0], y - pos[q, 1], z - pos[q, 2]
                    reach = r + rad[q]
                    if dx * dx + dy * dy + dz * dz < reach * reach:
                        return False
                    q = nxt[q]
    return True


@jit
def _candidate_from(kind, p, frame, r, dimension, u0, u1, u2):
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


@jit
def _candidate_random(kind, p, frame, r, dimension):
    """A uniformly random centre for a sphere of radius ``r`` entirely inside the region, from the
    kernel's own generator (rejection sampling in a ball or a cylinder's disk)."""
    if kind == _BOX:
        x = p[0] + r + np.random.random() * (p[3] - p[0] - 2.0 * r)
        y = p[1] + r + np.random.random() * (p[4] - p[1] - 2.0 * r)
        z = 0.0 if dimension == 2 else p[2] + r + np.random.random() * (p[5] - p[2] - 2.0 * r)
        return x, y, z
    if kind == _BALL:                              # a ball (a disk in 2-D)
        room = p[3] - r
        while True:
            u = 2.0 * np.random.random() - 1.0
            v = 2.0 * np.random.random() - 1.0
            w = 0.0 if dimension == 2 else 2.0 * np.random.random() - 1.0
            if u * u + v * v + w * w <= 1.0:
                return p[0] + room * u, p[1] + room * v, p[2] + room * w
    room = p[6] - r                                # cylinder: a disk of radius room, a height of h - 2r
    while True:
        u = 2.0 * np.random.random() - 1.0
        v = 2.0 * np.random.random() - 1.0
        if u * u + v * v <= 1.0:
            break
    h = 0.0 if dimension == 2 else (np.random.random() - 0.5) * (p[7] - 2.0 * r)
    a, b = room * u, room * v
    return (p[0] + a * frame[0, 0] + b * frame[1, 0] + h * frame[2, 0],
            p[1] + a * frame[0, 1] + b * frame[1, 1] + h * frame[2, 1],
            p[2] + a * frame[0, 2] + b * frame[1, 2] + h * frame[2, 2])
