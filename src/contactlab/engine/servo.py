"""Servo-controlled walls and meshes: a wall that moves so that the force (or the stress over an
area) its contacts exert follows a target.  One concept: the controller, its compiled update and
the checks and numbers of its Python side.

The controller (per wall or mesh, a row of ``State.servo_index`` / ``State.servo_param``, columns
``SERVO_*`` of :mod:`contactlab.engine.layout`) is proportional, as in YADE's
``TriaxialStressController`` and PFC's servo: before each step's walls move, :func:`servo_update`
sets its velocity along its direction ``d`` (a plane wall: its normal, into the bodies) to

    v = clip(G (F_t - F), -v_max, v_max),    F_t = sigma A   (or a given force),

with ``F`` the force its contacts exerted on the bodies along ``d`` at the evaluation that ended the
last step (compression > 0) and ``A`` a constant area or the product of the gaps of pairs of
opposite walls (the lateral walls of a box: the area of the top wall).

The gain ``G`` (m/(s N)) is given, or by default

    G = relaxation / (K dt + C),   K = sum_c k_c (n_c . d)^2,   C = 4 sum_c sqrt(m_c k_c) (n_c . d)^2,

over the wall's active contacts ``c`` (``n_c`` the contact normal, ``m_c`` the body's mass), with
``k_c = 2 E_c / overlap_c^2`` from the elastic energy ``E_c`` the law stores in the contact (a
linear spring's stiffness; 8/15 of Hertz's tangent stiffness), whatever the dashpot does to the
force.  ``K dt + C`` bounds the change of the wall's force in one step per unit change of its
velocity: ``K dt`` through the springs, ``C`` through dashpots of up to twice the critical
damping of ``k_c`` (a dashpot responds at once: the error a proportional controller on the total
force must not amplify, or the wall rattles step to step).  So the wall removes at most
``relaxation`` (0 < r <= 1, default 0.5) of the force error per step: YADE's and PFC's rule of
moving the wall a fraction of what would cancel the error at the wall's stiffness, with the
dashpots counted.  Its loop is stable for contact stiffness and damping within those bounds
(Hertz-Mindlin down to a restitution of 0.05 and a linear spring-dashpot with ``r`` = 0.5, both
checked in ``tests/test_servo.py`` at the default step and at 0.05 of the stability limit); a
wall with no contact approaches at ``v_max``.  A given ``gain`` is used as it is (the user then
keeps ``G (K dt + D) < 1``).

Everything is computed in compiled code in a fixed order (serial): bit-identical at any thread
count, and restarted bit for bit (the rows are state, checkpointed with it, and the forces they
read are the contact table's).  The boundary power of the last evaluation is brought to the new
velocity (``f . dv`` per contact), so that the energy balance books the work of the moving wall
as for a wall moving at a set velocity.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_finite, as_int, as_nonnegative, as_positive, as_unit_normal
from .._jit import kernel
from ..errors import InputError
from ..geometry.sphere_cylinder import WALL_PLANE
from .contact_geometry import pair_geometry
from .layout import (ACTIVE, N_SERVO_INDEX, N_SERVO_PARAM, OUT_ELASTIC, OUT_FORCE, OUT_NORMAL, OUT_OVERLAP, SERVO_AREA,
                     SERVO_DIRECTION, SERVO_GAIN, SERVO_GAPS, SERVO_KIND, SERVO_MAX_SPEED, SERVO_MESH,
                     SERVO_RELAXATION, SERVO_TARGET, SERVO_VALUE, SERVO_WALL)

__all__ = ["servo_update", "servo_rows", "empty_rows", "install", "release", "status", "boundary_force", "gap_area",
           "wall_direction", "mesh_direction", "KINDS", "DEFAULT_RELAXATION", "DEFAULT_STEP_FRACTION", "DAMPING_BOUND"]

#: the default ``relaxation`` (fraction of the force error removed per step at the contact stiffness)
DEFAULT_RELAXATION = 0.5
#: the default speed limit moves the wall by this fraction of the smallest body radius per step
DEFAULT_STEP_FRACTION = 1e-4
#: the default gain allows per contact a dashpot of up to DAMPING_BOUND sqrt(m k) (twice the critical damping)
DAMPING_BOUND = 4.0


@kernel
def servo_update(dt, servo, wall_point, wall_vel, wall_normal, out, status, boundary_power):
    """Set the velocity of every servo-controlled wall or mesh for the next step.

    ``servo``: the record :data:`contactlab.engine.step_records.Servo`, i.e. the controllers (rows of ``State.servo_index``/``servo_param``, columns
    ``SERVO_*`` of :mod:`contactlab.engine.layout`), the pairs' first bodies, the CSR of the pairs by
    wall or mesh triangle, the bodies' inverse masses, the meshes' velocities and first triangles.
    For each, in a fixed order (serial: bit-identical at any thread count):

    * ``F``, N: the force its active contacts exerted on the bodies at the last evaluation, along
      its direction ``d`` (into the bodies): compression > 0;
    * ``K`` (N/m) and ``C`` (N s/m): its contacts' stiffness ``2 E / overlap^2`` and the damping
      bound ``DAMPING_BOUND sqrt(m k)``, each times ``(n . d)^2`` (module docstring);
    * ``A``, m^2: the area factor times the gaps ``|(p_b - p_a) . n_a|`` of its wall pairs; the
      target force is ``F_t = value A``;
    * ``v = gain (F_t - F)``, or with no gain given ``relaxation (F_t - F) / (K dt + C)``,
      ``v_max`` towards ``F_t`` while no contact stores energy; clipped to ``[-v_max, v_max]``;
      the velocity is ``v d``.

    The boundary power of the last evaluation is brought to the new velocity (``f . dv`` per
    contact), so that the next step's trapezoidal boundary work uses the velocity of that step.
    """
    servo_index, servo_param, pair_i, bound_start = servo.indices, servo.param, servo.pair_i, servo.bound_start
    bound_pairs, inv_mass, mesh_vel, mesh_first = servo.bound_pairs, servo.inv_mass, servo.mesh_vel, servo.mesh_first
    n_walls = wall_point.shape[0]
    for s in range(servo_index.shape[0]):
        target = servo_index[s, SERVO_TARGET]
        wall = servo_index[s, SERVO_KIND] == SERVO_WALL
        if wall:
            lo = target
            hi = target + 1
        else:
            lo = n_walls + mesh_first[target]
            hi = n_walls + mesh_first[target + 1]
        d0 = servo_param[s, SERVO_DIRECTION]
        d1 = servo_param[s, SERVO_DIRECTION + 1]
        d2 = servo_param[s, SERVO_DIRECTION + 2]
        force = 0.0
        stiffness = 0.0
        damping = 0.0
        for b in range(lo, hi):
            for q in range(bound_start[b], bound_start[b + 1]):
                k = bound_pairs[q]
                if status[k] != ACTIVE:
                    continue
                fx = out[k, OUT_FORCE]
                fy = out[k, OUT_FORCE + 1]
                fz = out[k, OUT_FORCE + 2]
                force += fx * d0 + fy * d1 + fz * d2
                overlap = out[k, OUT_OVERLAP]
                energy = out[k, OUT_ELASTIC]
                if overlap > 0.0 and energy > 0.0:
                    c2 = (out[k, OUT_NORMAL] * d0 + out[k, OUT_NORMAL + 1] * d1 + out[k, OUT_NORMAL + 2] * d2) ** 2
                    k_n = 2.0 * energy / (overlap * overlap)
                    stiffness += k_n * c2
                    im = inv_mass[pair_i[k]]
                    if im > 0.0:
                        damping += DAMPING_BOUND * math.sqrt(k_n / im) * c2
        area = servo_param[s, SERVO_AREA]
        for g in range(2):
            a = servo_index[s, SERVO_GAPS + 2 * g]
            if a >= 0:
                bw = servo_index[s, SERVO_GAPS + 2 * g + 1]
                gap = 0.0
                for c in range(3):
                    gap += (wall_point[bw, c] - wall_point[a, c]) * wall_normal[a, c]
                area *= abs(gap)
        error = servo_param[s, SERVO_VALUE] * area - force
        gain = servo_param[s, SERVO_GAIN]
        v_max = servo_param[s, SERVO_MAX_SPEED]
        if gain > 0.0:
            v = gain * error
        elif stiffness > 0.0 and dt > 0.0:
            v = servo_param[s, SERVO_RELAXATION] * error / (stiffness * dt + damping)
        else:
            v = v_max if error > 0.0 else (-v_max if error < 0.0 else 0.0)
        v = min(max(v, -v_max), v_max)
        if wall:
            dv0 = v * d0 - wall_vel[target, 0]
            dv1 = v * d1 - wall_vel[target, 1]
            dv2 = v * d2 - wall_vel[target, 2]
            wall_vel[target, 0] = v * d0
            wall_vel[target, 1] = v * d1
            wall_vel[target, 2] = v * d2
        else:
            dv0 = v * d0 - mesh_vel[target, 0]
            dv1 = v * d1 - mesh_vel[target, 1]
            dv2 = v * d2 - mesh_vel[target, 2]
            mesh_vel[target, 0] = v * d0
            mesh_vel[target, 1] = v * d1
            mesh_vel[target, 2] = v * d2
        for b in range(lo, hi):
            for q in range(bound_start[b], bound_start[b + 1]):
                k = bound_pairs[q]
                if status[k] == ACTIVE:
                    boundary_power[pair_i[k]] += out[k, OUT_FORCE] * dv0 + out[k, OUT_FORCE + 1] * dv1 + \
                        out[k, OUT_FORCE + 2] * dv2


# ---------------------------------------------------------------------- the Python side

def empty_rows() -> tuple[np.ndarray, np.ndarray]:
    """No controller: ``(servo_index (0, 6) int64, servo_param (0, 8) float64)``."""
    return np.zeros((0, N_SERVO_INDEX), dtype=np.int64), np.zeros((0, N_SERVO_PARAM))


def _gap_pairs(model, area_from) -> list[tuple[int, int]]:
    """The wall pairs of ``area_from``, checked: plane walls, two pairs in 3-D (one in 2-D)."""
    need = 1 if model.dimension == 2 else 2
    what = ("one pair (a, b) of opposite line walls (the area is the gap times the thickness)" if need == 1 else
            "two pairs ((a1, b1), (a2, b2)) of opposite plane walls (the area is the product of their gaps)")
    try:
        pairs = [tuple(p) for p in area_from]
        if need == 1 and len(pairs) == 2 and all(not isinstance(x, tuple) for x in pairs):
            pairs = [tuple(area_from)]
    except TypeError:
        raise InputError(f"area_from must be {what}, got {area_from!r}") from None
    if len(pairs) != need or any(len(p) != 2 for p in pairs):
        raise InputError(f"area_from must be {what}, got {area_from!r}")
    out = []
    for a, b in pairs:
        a = as_int("area_from wall", a, low=0, high=model.n_walls - 1)
        b = as_int("area_from wall", b, low=0, high=model.n_walls - 1)
        if a == b:
            raise InputError(f"area_from: a pair of opposite walls needs two different walls, got ({a}, {b})")
        for w in (a, b):
            if model.wall_kind[w] != WALL_PLANE:
                raise InputError(f"area_from: wall {w} is a cylinder; the gaps are those of pairs of plane walls")
        out.append((a, b))
    return out


def servo_rows(model, *, kind: int, index: int, direction, target_force, target_stress, area, area_from, gain,
               relaxation, max_speed) -> tuple[np.ndarray, np.ndarray]:
    """The controller's rows ``(servo_index (6,), servo_param (8,))`` from the user's arguments
    (see :meth:`contactlab.Simulation.servo_wall`), checked."""
    if (target_force is None) == (target_stress is None):
        raise InputError(f"give exactly one of target_force (N) or target_stress (Pa), got "
                         f"target_force={target_force!r}, target_stress={target_stress!r}")
    idx = np.full(N_SERVO_INDEX, -1, dtype=np.int64)
    par = np.zeros(N_SERVO_PARAM)
    idx[SERVO_KIND] = kind
    idx[SERVO_TARGET] = index
    par[SERVO_DIRECTION: SERVO_DIRECTION + 3] = direction
    if target_force is not None:
        if area is not None or area_from is not None:
            raise InputError("a target_force needs no area (area and area_from go with target_stress)")
        par[SERVO_VALUE] = as_nonnegative("target_force", target_force, "N")
        par[SERVO_AREA] = 1.0
    else:
        par[SERVO_VALUE] = as_nonnegative("target_stress", target_stress, "Pa")
        if (area is None) == (area_from is None):
            raise InputError("a target_stress needs exactly one of area (m^2, constant) or area_from (pairs of "
                             "opposite plane walls whose gaps give the area as they move)")
        if area is not None:
            par[SERVO_AREA] = as_positive("area", area, "m^2")
        else:
            pairs = _gap_pairs(model, area_from)
            for g, (a, b) in enumerate(pairs):
                idx[SERVO_GAPS + 2 * g] = a
                idx[SERVO_GAPS + 2 * g + 1] = b
            par[SERVO_AREA] = model.thickness if model.dimension == 2 else 1.0
    par[SERVO_GAIN] = 0.0 if gain is None else as_positive("gain", gain, "m/(s N)")
    r = as_finite("relaxation", relaxation)
    if not 0.0 < r <= 1.0:
        raise InputError(f"relaxation must satisfy 0 < relaxation <= 1 (the fraction of the force error removed per "
                         f"step at the wall's contact stiffness), got {relaxation!r}")
    par[SERVO_RELAXATION] = r
    par[SERVO_MAX_SPEED] = as_positive("max_speed", max_speed, "m/s")
    return idx, par


def install(state, idx: np.ndarray, par: np.ndarray) -> None:
    """Put the controller into the state (replacing one of the same wall or mesh)."""
    rows = _find(state, int(idx[SERVO_KIND]), int(idx[SERVO_TARGET]))
    if len(rows):
        state.servo_index[rows[0]] = idx
        state.servo_param[rows[0]] = par
    else:
        state.servo_index = np.vstack([state.servo_index, idx[None, :]])
        state.servo_param = np.vstack([state.servo_param, par[None, :]])


def release(state, kind: int, index: int) -> bool:
    """Remove the controller of a wall or mesh; True if there was one."""
    rows = _find(state, kind, index)
    if not len(rows):
        return False
    keep = np.ones(state.servo_index.shape[0], dtype=bool)
    keep[rows] = False
    state.servo_index = np.ascontiguousarray(state.servo_index[keep])
    state.servo_param = np.ascontiguousarray(state.servo_param[keep])
    return True


def _find(state, kind: int, index: int) -> np.ndarray:
    si = state.servo_index
    return np.flatnonzero((si[:, SERVO_KIND] == kind) & (si[:, SERVO_TARGET] == index))


def boundary_force(model, state, table, kind: int, index: int, direction) -> tuple[float, float, float]:
    """``(F, K, C)``: the force (N) the active contacts of a wall or mesh exerted on the bodies along
    ``direction`` at the last evaluation, their stiffness (N/m) and damping bound (N s/m) along it,
    as :func:`servo_update` computes them (NumPy, from the contact table: its twin)."""
    n = table.n_pairs
    j = table.pair_j[:n].astype(np.int64) - model.n_spheres
    if kind == SERVO_WALL:
        mine = j == index
    else:
        lo, hi = model.n_walls + model.mesh_first[index], model.n_walls + model.mesh_first[index + 1]
        mine = (j >= lo) & (j < hi)
    rows = np.flatnonzero(mine & (table.status[:n] == ACTIVE))
    f = table.out[rows, OUT_FORCE: OUT_FORCE + 3]
    d = np.asarray(direction, dtype=float)
    n_c, overlap, _ = pair_geometry(model, state, table, rows)
    energy = table.out[rows, OUT_ELASTIC]
    ok = (overlap > 0.0) & (energy > 0.0)
    k = 2.0 * energy[ok] / overlap[ok] ** 2
    c2 = (n_c[ok] @ d) ** 2
    inv_m = model.inv_mass[table.pair_i[rows[ok]]]
    with np.errstate(divide="ignore"):
        damping = np.where(inv_m > 0.0, DAMPING_BOUND * np.sqrt(k / np.where(inv_m > 0.0, inv_m, 1.0)), 0.0)
    return float((f @ d).sum()), float(np.sum(k * c2)), float(np.sum(damping * c2))


def gap_area(model, state, idx: np.ndarray, par: np.ndarray) -> float:
    """The controller's area now (m^2): its area factor times the gaps of its wall pairs."""
    area = float(par[SERVO_AREA])
    for g in range(2):
        a, b = int(idx[SERVO_GAPS + 2 * g]), int(idx[SERVO_GAPS + 2 * g + 1])
        if a >= 0:
            area *= abs(float((state.wall_points[b] - state.wall_points[a]) @ model.wall_normal[a]))
    return area


def status(model, state, table) -> dict[str, np.ndarray]:
    """One row per controller (see :meth:`contactlab.Simulation.servo_status`)."""
    si, sp = state.servo_index, state.servo_param
    n = si.shape[0]
    out = {"kind": np.array(["wall" if k == SERVO_WALL else "mesh" for k in si[:, SERVO_KIND]], dtype=object),
           "index": si[:, SERVO_TARGET].copy(), "force": np.zeros(n), "target_force": np.zeros(n),
           "area": np.zeros(n), "stress": np.zeros(n), "velocity": np.zeros(n), "stiffness": np.zeros(n),
           "damping": np.zeros(n)}
    for s in range(n):
        d = sp[s, SERVO_DIRECTION: SERVO_DIRECTION + 3]
        kind, index = int(si[s, SERVO_KIND]), int(si[s, SERVO_TARGET])
        f, k, c = boundary_force(model, state, table, kind, index, d)
        area = gap_area(model, state, si[s], sp[s])
        vel = state.wall_velocities[index] if kind == SERVO_WALL else state.mesh_velocities[index]
        out["force"][s] = f
        out["stiffness"][s] = k
        out["damping"][s] = c
        out["area"][s] = area
        out["target_force"][s] = sp[s, SERVO_VALUE] * area
        out["stress"][s] = f / area
        out["velocity"][s] = float(vel @ d)
    return out


def wall_direction(model, wall: int) -> np.ndarray:
    """A plane wall's servo direction: its normal (a cylinder wall is refused)."""
    if model.wall_kind[wall] != WALL_PLANE:
        raise InputError(f"wall {wall} is a cylinder wall; servo control moves plane walls (along their normal) "
                         f"and meshes")
    return model.wall_normal[wall].copy()


def mesh_direction(direction) -> np.ndarray:
    """The unit direction of a mesh servo (into the bodies), checked."""
    return as_unit_normal("direction", direction)


KINDS = {"wall": SERVO_WALL, "mesh": SERVO_MESH}
