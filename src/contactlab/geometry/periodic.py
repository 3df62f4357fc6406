"""The periodic cell: its columns, the minimum image and the wrap, compiled and in NumPy.

A periodic scene (:meth:`contactlab.Scene.set_periodic`) carries its cell in the state as one
float64 vector ``cell`` (columns ``CELL_*`` below), so that a checkpoint restores it with the
rest of the state.  The cell is the box ``lower <= x < lower + L`` on its periodic axes, possibly
sheared (Lees-Edwards): the image of a body across the upper face of the *gradient* axis ``g`` is
displaced by ``L_g`` along ``g`` and by the shear offset ``delta`` along the *flow* axis ``f``.
In matrix form the cell vectors are the columns of ``H`` with ``H[a, a] = L_a`` and
``H[f, g] = delta``; the image of body ``j`` by the integer vector ``n`` is at ``x_j + H n`` and
moves at ``v_j + Hdot n``: the velocity jump across a moving (deforming or sheared) boundary.

Conventions (read by every user of the cell):

* ``d = x_j - x_i`` is brought to its **minimum image** by taking out, first along the gradient
  axis, then along the others, the nearest whole number of cell vectors
  (``n = floor(d / L + 1/2)``, the same rounding everywhere); the velocity jump of that image is
  returned with it.  The minimum image is the right one while every interaction is shorter than
  half of every periodic length (checked at each neighbour-list build,
  :func:`contactlab.neighbors.periodic_list.check_cell`).
* The **wrap** brings a body's centre into ``[lower, lower + L)`` on each periodic axis by the
  same cell vectors, shifts its velocity by the same jump (a body leaving a sheared face keeps its
  velocity relative to the flow) and counts the vectors in its image counters, so that
  ``x + H images`` is its unwrapped position.
* ``delta`` is kept within ``[-L_f / 2, L_f / 2)`` at each wrap (a whole ``L_f`` is a lattice
  vector; the image counters are corrected so that unwrapped positions do not jump).

The cell's rates (``CELL_RATE``: ``dL/dt`` per axis, ``CELL_SHEAR_RATE``: ``d delta / dt``) are
what the step kernels move it by, see :mod:`contactlab.engine.cell_motion`.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit

__all__ = ["CELL_PERIODIC", "CELL_LOWER", "CELL_LENGTH", "CELL_SHEAR", "CELL_FLOW", "CELL_GRADIENT", "CELL_RATE",
           "CELL_SHEAR_RATE", "CELL_REF_LENGTH", "CELL_REF_SHEAR", "CELL_TARGET", "CELL_GAIN", "CELL_MAX_RATE",
           "CELL_STRESS", "N_CELL", "new_cell", "cell_length", "min_image", "min_image_np", "wrap_np", "lattice_shift_np"]

CELL_PERIODIC = 0     # 3 columns: 1.0 where the axis is periodic, else 0.0
CELL_LOWER = 3        # 3 columns: lower corner of the cell, m
CELL_LENGTH = 6       # 3 columns: cell lengths L, m (on non-periodic axes: unused)
CELL_SHEAR = 9        # the Lees-Edwards offset delta, m (image across the gradient axis's upper face)
CELL_FLOW = 10        # the flow axis (0, 1, 2) of the shear, -1 for none
CELL_GRADIENT = 11    # the gradient axis of the shear, -1 for none
CELL_RATE = 12        # 3 columns: dL/dt, m/s
CELL_SHEAR_RATE = 15  # d delta / dt, m/s
CELL_REF_LENGTH = 16  # 3 columns: L at the last neighbour-list build, m
CELL_REF_SHEAR = 19   # the shear offset at the last build (unreduced), m
CELL_TARGET = 20      # 3 columns: stress target of a servo-controlled axis, Pa (NaN: not servo-controlled)
CELL_GAIN = 23        # 3 columns: the servo's gain, 1/(Pa s)
CELL_MAX_RATE = 26    # 3 columns: the servo's largest strain rate |dL/dt| / L, 1/s
CELL_STRESS = 29      # 3 columns: the contact stress sigma_aa the servo saw last, Pa (compression > 0)
N_CELL = 32


def new_cell(lower, upper, periodic) -> np.ndarray:
    """A cell vector (``N_CELL``,) for the box ``lower``-``upper`` (m, (3,) each), periodic where
    ``periodic`` (3 bools) is true, at rest and unsheared."""
    c = np.zeros(N_CELL)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    c[CELL_PERIODIC: CELL_PERIODIC + 3] = np.asarray(periodic, dtype=bool)
    c[CELL_LOWER: CELL_LOWER + 3] = lo
    c[CELL_LENGTH: CELL_LENGTH + 3] = hi - lo
    c[CELL_REF_LENGTH: CELL_REF_LENGTH + 3] = hi - lo
    c[CELL_FLOW] = -1.0
    c[CELL_GRADIENT] = -1.0
    c[CELL_TARGET: CELL_TARGET + 3] = np.nan
    return c


@jit
def min_image(dx, dy, dz, cell):
    """The minimum image of ``d = x_j - x_i`` (m) and the velocity jump of that image (m/s):
    ``(dx, dy, dz, jvx, jvy, jvz)`` (module docstring).  No allocation: called per pair."""
    jx = 0.0
    jy = 0.0
    jz = 0.0
    g = int(cell[CELL_GRADIENT])
    if g >= 0:
        f = int(cell[CELL_FLOW])
        dg = dx if g == 0 else (dy if g == 1 else dz)
        n = math.floor(dg / cell[CELL_LENGTH + g] + 0.5)
        if n != 0.0:
            s_len = n * cell[CELL_LENGTH + g]
            v_len = n * cell[CELL_RATE + g]
            s_shear = n * cell[CELL_SHEAR]
            v_shear = n * cell[CELL_SHEAR_RATE]
            if g == 0:
                dx -= s_len
                jx -= v_len
            elif g == 1:
                dy -= s_len
                jy -= v_len
            else:
                dz -= s_len
                jz -= v_len
            if f == 0:
                dx -= s_shear
                jx -= v_shear
            elif f == 1:
                dy -= s_shear
                jy -= v_shear
            else:
                dz -= s_shear
                jz -= v_shear
    if g != 0 and cell[CELL_PERIODIC] != 0.0:
        n = math.floor(dx / cell[CELL_LENGTH] + 0.5)
        dx -= n * cell[CELL_LENGTH]
        jx -= n * cell[CELL_RATE]
    if g != 1 and cell[CELL_PERIODIC + 1] != 0.0:
        n = math.floor(dy / cell[CELL_LENGTH + 1] + 0.5)
        dy -= n * cell[CELL_LENGTH + 1]
        jy -= n * cell[CELL_RATE + 1]
    if g != 2 and cell[CELL_PERIODIC + 2] != 0.0:
        n = math.floor(dz / cell[CELL_LENGTH + 2] + 0.5)
        dz -= n * cell[CELL_LENGTH + 2]
        jz -= n * cell[CELL_RATE + 2]
    return dx, dy, dz, jx, jy, jz


def _order(cell):
    g = int(cell[CELL_GRADIENT])
    return ([g] if g >= 0 else []) + [a for a in range(3) if a != g and cell[CELL_PERIODIC + a] != 0.0]


def min_image_np(d: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`min_image` for (K, 3) separations: ``(d', jump)``, both (K, 3)."""
    d = np.array(d, dtype=np.float64).reshape(-1, 3)
    jv = np.zeros_like(d)
    g = int(cell[CELL_GRADIENT])
    for a in _order(cell):
        n = np.floor(d[:, a] / cell[CELL_LENGTH + a] + 0.5)
        d[:, a] -= n * cell[CELL_LENGTH + a]
        jv[:, a] -= n * cell[CELL_RATE + a]
        if a == g:
            f = int(cell[CELL_FLOW])
            d[:, f] -= n * cell[CELL_SHEAR]
            jv[:, f] -= n * cell[CELL_SHEAR_RATE]
    return d, jv


def lattice_shift_np(images: np.ndarray, cell: np.ndarray) -> np.ndarray:
    """``H n`` for (K, 3) integer image counters ``n``: what takes a wrapped position to its
    unwrapped one (m, (K, 3))."""
    n = np.asarray(images, dtype=np.float64).reshape(-1, 3)
    shift = n * cell[CELL_LENGTH: CELL_LENGTH + 3] * cell[CELL_PERIODIC: CELL_PERIODIC + 3]
    g = int(cell[CELL_GRADIENT])
    if g >= 0:
        shift[:, int(cell[CELL_FLOW])] += n[:, g] * cell[CELL_SHEAR]
    return shift


def cell_length(cell: np.ndarray) -> float:
    """The shortest periodic length of the cell, m."""
    return float(cell[CELL_LENGTH: CELL_LENGTH + 3][cell[CELL_PERIODIC: CELL_PERIODIC + 3] != 0.0].min())


def wrap_np(positions: np.ndarray, cell: np.ndarray, velocities: np.ndarray | None = None):
    """The positions (K, 3) brought into the cell (a copy; the state and its counters untouched):
    what the VTK files show.  With ``velocities`` (K, 3), returns ``(positions, velocities)``, the
    velocities those of the wrapped images (a copy): a body brought across the gradient axis's
    face takes the image's velocity: along each axis crossed, less the rate ``dL/dt`` of the cell's
    length per length crossed, and across the gradient axis's face of a sheared cell, the flow
    velocity less the shear velocity ``d delta / dt`` (Lees-Edwards), as the engine's wraps do
    (:func:`contactlab.engine.cell_motion.wrap`)."""
    x = np.array(positions, dtype=np.float64).reshape(-1, 3)
    v = None if velocities is None else np.array(velocities, dtype=np.float64).reshape(-1, 3)
    g = int(cell[CELL_GRADIENT])
    for a in _order(cell):
        lo, length = cell[CELL_LOWER + a], cell[CELL_LENGTH + a]
        n = np.floor((x[:, a] - lo) / length)
        # rounding can leave x - n L == lo + L: it belongs to the lower face
        n += x[:, a] - n * length >= lo + length
        x[:, a] -= n * length
        if v is not None:
            v[:, a] -= n * cell[CELL_RATE + a]
        if a == g:
            x[:, int(cell[CELL_FLOW])] -= n * cell[CELL_SHEAR]
            if v is not None:
                v[:, int(cell[CELL_FLOW])] -= n * cell[CELL_SHEAR_RATE]
    return x if v is None else (x, v)
