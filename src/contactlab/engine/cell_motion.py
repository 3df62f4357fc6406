"""The periodic cell in the step: its motion and stress servo (compiled, each step) and the wrap of
the bodies into it (at each neighbour-list build).  One concept: how the cell of
:mod:`contactlab.geometry.periodic` changes during a run.

Each step, right after the drift (:func:`move_cell`, called by the step kernels with ``cell = None``
in a scene without a periodic cell, where it compiles to nothing):

1. a stress-controlled axis ``a`` (``CELL_TARGET`` not NaN) sets its rate from the contact part of
   the Love-Weber stress of the whole cell at the last evaluation (compression positive;
   ``sigma_aa = -(1/V) sum_c d_a f_a``, ``d`` the minimum image of ``x_j - x_i``, ``f`` the force on
   ``i``, body pairs only, ``V`` the product of the three periodic lengths)::

       dL_a/dt = L_a clip(G (sigma_aa - sigma_target), -rate_max, rate_max)

   (the cell grows while it is more compressed than the target: a proportional servo with gain
   ``G`` in 1/(Pa s), as YADE's ``PeriTriaxController`` and PFC's servo);
2. the cell moves by its rates: ``L += dt dL/dt`` (about the cell's centre) and
   ``delta += dt d delta / dt``;
3. a change of the cell since the last build by more than twice the half-skin the kernels use
   (``sum_a |L_a - L_a,ref| + |delta - delta_ref|``) flags a rebuild.  A pair across a face
   changes its distance by at most that, so with the bodies' own threshold (a quarter of the skin
   in a periodic scene, :class:`contactlab.engine.stepper.Stepper`) no pair closer than the
   skin at a build is missed.

The bodies are **not** moved with the cell: a deforming cell drives them through its images
(the boundary-driven Lees-Edwards and "box-only" homogeneous deformation); the Python side can add
the homogeneous velocity field once when a rate is set (``affine=True`` of
:class:`contactlab.cell.PeriodicCell`), after which positions and velocities follow by Newton's
law alone.  At each build (:func:`wrap`) every body whose centre left the cell is brought back by
a cell vector, with its velocity jump and image counters (:mod:`contactlab.geometry.periodic`).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit, kernel
from ..geometry.periodic import (CELL_FLOW, CELL_GAIN, CELL_GRADIENT, CELL_LENGTH, CELL_LOWER, CELL_MAX_RATE,
                                 CELL_PERIODIC, CELL_RATE, CELL_REF_LENGTH, CELL_REF_SHEAR, CELL_SHEAR,
                                 CELL_SHEAR_RATE, CELL_STRESS, CELL_TARGET, min_image)
from .layout import ACTIVE, FLAG_REBUILD, OUT_FORCE

__all__ = ["move_cell", "cell_stress", "wrap", "wrap_body", "shear_offset_shift", "mark_built"]


@kernel
def cell_stress(cell, pos, i_start, pair_j, out, status):
    """The diagonal of the contact stress of the whole cell (Pa, compression positive) from the
    last evaluation (module docstring, item 1): ``(s_xx, s_yy, s_zz)``."""
    n = pos.shape[0]
    sx = 0.0
    sy = 0.0
    sz = 0.0
    for i in range(n):
        for k in range(i_start[i], i_start[i + 1]):
            j = pair_j[k]
            if j < n and status[k] == ACTIVE:
                dx, dy, dz, _, _, _ = min_image(pos[j, 0] - pos[i, 0], pos[j, 1] - pos[i, 1], pos[j, 2] - pos[i, 2],
                                                cell)
                sx -= dx * out[k, OUT_FORCE]
                sy -= dy * out[k, OUT_FORCE + 1]
                sz -= dz * out[k, OUT_FORCE + 2]
    volume = cell[CELL_LENGTH] * cell[CELL_LENGTH + 1] * cell[CELL_LENGTH + 2]
    return sx / volume, sy / volume, sz / volume


@kernel
def move_cell(dt, cell, pos, i_start, pair_j, out, status, half_skin, flags):
    """One step of the cell (module docstring); nothing when ``cell`` is None."""
    if cell is None:
        return
    servo = False
    for a in range(3):
        if not math.isnan(cell[CELL_TARGET + a]):
            servo = True
    if servo:
        s = cell_stress(cell, pos, i_start, pair_j, out, status)
        for a in range(3):
            cell[CELL_STRESS + a] = s[a]
            if not math.isnan(cell[CELL_TARGET + a]):
                rate = cell[CELL_GAIN + a] * (s[a] - cell[CELL_TARGET + a])
                top = cell[CELL_MAX_RATE + a]
                rate = min(max(rate, -top), top)
                cell[CELL_RATE + a] = rate * cell[CELL_LENGTH + a]
    change = 0.0
    for a in range(3):
        if cell[CELL_PERIODIC + a] != 0.0:
            dl = dt * cell[CELL_RATE + a]
            cell[CELL_LENGTH + a] += dl
            cell[CELL_LOWER + a] -= 0.5 * dl
            change += abs(cell[CELL_LENGTH + a] - cell[CELL_REF_LENGTH + a])
    cell[CELL_SHEAR] += dt * cell[CELL_SHEAR_RATE]
    change += abs(cell[CELL_SHEAR] - cell[CELL_REF_SHEAR])
    if change > 2.0 * half_skin:
        flags[FLAG_REBUILD] = 1


@jit
def wrap_body(p, pos, vel, vel_pred, images, cell, mass_p, boundary_work):
    """Bring body ``p``'s centre into the cell by whole cell vectors, gradient axis first (module
    docstring of :mod:`contactlab.geometry.periodic`), with the velocity jump and the image
    counters.  The kinetic energy a velocity jump changes is the cell's work on the body (a
    deforming cell's images move with it): it is added to ``boundary_work[p]``, with the velocity
    predicted to the end of the step (the kinetic energy the balance reads there); ``mass_p``: the
    body's mass, 0 for a fixed body."""
    g = int(cell[CELL_GRADIENT])
    f = int(cell[CELL_FLOW])
    before = vel_pred[p, 0] ** 2 + vel_pred[p, 1] ** 2 + vel_pred[p, 2] ** 2
    for step in range(4):
        a = g if step == 0 else step - 1
        if a < 0 or (step > 0 and a == g) or cell[CELL_PERIODIC + a] == 0.0:
            continue
        lo = cell[CELL_LOWER + a]
        length = cell[CELL_LENGTH + a]
        n = math.floor((pos[p, a] - lo) / length)
        if pos[p, a] - n * length >= lo + length:
            n += 1.0   # rounding left it on the upper face: it belongs to the lower one
        if n != 0.0:
            pos[p, a] -= n * length
            vel[p, a] -= n * cell[CELL_RATE + a]
            vel_pred[p, a] -= n * cell[CELL_RATE + a]
            images[p, a] += np.int64(n)
            if a == g:
                pos[p, f] -= n * cell[CELL_SHEAR]
                vel[p, f] -= n * cell[CELL_SHEAR_RATE]
                vel_pred[p, f] -= n * cell[CELL_SHEAR_RATE]
    if mass_p > 0.0:
        after = vel_pred[p, 0] ** 2 + vel_pred[p, 1] ** 2 + vel_pred[p, 2] ** 2
        if after != before:
            boundary_work[p] += 0.5 * mass_p * (after - before)


@kernel
def _wrap_bodies(pos, vel, vel_pred, images, cell, mass, boundary_work):
    """:func:`wrap_body` of every body."""
    for p in range(pos.shape[0]):
        wrap_body(p, pos, vel, vel_pred, images, cell, mass[p], boundary_work)


def shear_offset_shift(cell: np.ndarray) -> int:
    """The whole flow-axis lengths ``m`` that bring the shear offset into ``[-L_f/2, L_f/2)`` (0
    without shear); :func:`wrap` takes them off the offset and adds ``m`` times each body's image
    counter across the gradient axis to its counter along the flow axis."""
    g = int(cell[CELL_GRADIENT])
    if g < 0:
        return 0
    f = int(cell[CELL_FLOW])
    return int(math.floor(cell[CELL_SHEAR] / cell[CELL_LENGTH + f] + 0.5))


def wrap(cell: np.ndarray, positions: np.ndarray, velocities: np.ndarray, predicted: np.ndarray,
         images: np.ndarray, mass: np.ndarray, boundary_work: np.ndarray) -> None:
    """Before a build: bring the shear offset into ``[-L_f/2, L_f/2)`` (a whole ``L_f`` is a cell
    vector: the image counters along the flow axis take it, so unwrapped positions do not move)
    and the bodies into the cell (:func:`_wrap_bodies`; ``mass`` (N,) kg, 0 for a fixed body, and
    the state's ``boundary_work`` take the kinetic energy of the velocity jumps), all in place."""
    m = shear_offset_shift(cell)
    if m != 0:
        g, f = int(cell[CELL_GRADIENT]), int(cell[CELL_FLOW])
        cell[CELL_SHEAR] -= m * cell[CELL_LENGTH + f]
        images[:, f] += m * images[:, g]
    _wrap_bodies(positions, velocities, predicted, images, cell, mass, boundary_work)


def mark_built(cell: np.ndarray) -> None:
    """The cell's build reference (what :func:`move_cell` measures its change from)."""
    cell[CELL_REF_LENGTH: CELL_REF_LENGTH + 3] = cell[CELL_LENGTH: CELL_LENGTH + 3]
    cell[CELL_REF_SHEAR] = cell[CELL_SHEAR]
