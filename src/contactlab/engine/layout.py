"""Per-contact array layout and the status flags shared by the kernels and the launcher.

Each candidate pair ``k`` of the neighbour list owns:

* ``hist[k]``: the law's history (``H`` floats), followed by the energy the contact has dissipated
  since it formed, one column per dissipation term of the law (one column, the total, for a law
  that does not split its dissipation), J;
* ``out[k]``: what the force kernel wrote at the last evaluation for the partner ``j`` and for
  output (columns below); the owner ``i``'s side is summed per sphere into ``owner[i]``.  A scene
  of more than :data:`SWEEP_BLOCK` spheres and plane walls, without a periodic cell or servo
  control, keeps only the first :data:`N_OUT_FORCES` columns (:data:`N_OUT_BONDS` with a bonding law): its contact geometry is recomputed on demand,
  bit for bit, by :mod:`contactlab.engine.contact_geometry` (56 B a candidate pair instead of
  120 B, written at every step; see :func:`out_columns`);
* ``status[k]``: ``ACTIVE`` (a contact that exerts force), ``INACTIVE`` (the law said no contact;
  outputs are zero) or ``CLEARED`` (the pair is beyond the law's range; history and outputs are
  zero and need not be written again while it stays apart).

A neighbour-list rebuild carries all three to the pair's new index.  The torque on ``i`` is not
stored: ``torque_i + torque_j = (x_j - x_i) x force`` for two spheres (the branch vectors differ by
the centre distance), and ``torque_i = b_i x force - torque_j`` for a wall.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "OUT_FORCE", "OUT_TORQUE_J", "OUT_ELASTIC", "OUT_EVENT", "OUT_NORMAL", "OUT_OVERLAP", "OUT_POINT", "N_OUT",
    "N_OUT_FORCES", "N_OUT_BONDS", "out_columns", "SWEEP_BLOCK", "OWN_FORCE", "OWN_TORQUE", "OWN_DISSIPATION",
    "OWN_BOUNDARY", "N_OWN",
    "ACTIVE", "INACTIVE", "CLEARED", "INDEX",
    "FLAG_REBUILD", "FLAG_OVERLAP", "FLAG_FORCE_NAN", "FLAG_STATE_NAN", "FLAG_FAST", "FLAG_BOND_EVENT", "N_FLAGS",
    "SERVO_KIND", "SERVO_TARGET", "SERVO_GAPS", "N_SERVO_INDEX", "SERVO_DIRECTION", "SERVO_VALUE", "SERVO_AREA",
    "SERVO_GAIN", "SERVO_RELAXATION", "SERVO_MAX_SPEED", "N_SERVO_PARAM", "SERVO_WALL", "SERVO_MESH",
]

#: dtype of pair indices and of sphere indices stored per pair (unsigned: Numba then needs no
#: negative-index wrap-around code in the hot loops, which it cannot otherwise rule out for an
#: index read from memory; 32 bits hold any pair count that fits in memory)
INDEX = np.uint32

# columns of out (the side of the contact that the owner i does not sum itself)
OUT_FORCE = 0        # 3 columns: force on i, N, global frame (j receives the opposite)
OUT_TORQUE_J = 3     # 3 columns: torque on j about its centre, N m (for a wall: minus the couple)
OUT_ELASTIC = 6      # elastic energy stored in the contact, J
OUT_EVENT = 7        # 1 when the law broke the pair's bond during the last evaluation (the launcher logs and resets it)
OUT_NORMAL = 8       # 3 columns: the contact's unit normal (from i towards j) at the last evaluation
OUT_OVERLAP = 11     # the overlap, m, at the last evaluation
OUT_POINT = 12       # 3 columns: the contact point, m, global
N_OUT = 15
#: the columns every table has: the partner's force and torque and the elastic energy
N_OUT_FORCES = 7
#: with the bond-event column (a law that bonds)
N_OUT_BONDS = 8


#: bodies per block of the serial step's sweep (pairs, then reduction, block by block): the rows
#: a block writes stay in cache until its reduction and the next blocks' read them.  A scene of at
#: most this many bodies runs the fused sweep, in which a step that fails on a non-finite force
#: has already drifted the bodies when it stops: such a scene keeps the geometry columns (at most
#: a few hundred kB), so that the diagnosis reads the geometry of the evaluation that failed
SWEEP_BLOCK = 1024


def out_columns(geometry: bool, bonds: bool) -> int:
    """Width of ``out``: all :data:`N_OUT` columns when the contact geometry is stored
    (``geometry``: shapes, meshes, cylinder walls, a periodic cell, servo control, or at most
    :data:`SWEEP_BLOCK` bodies), else the force columns and, for a law with ``bonds``, the bond-event column."""
    if geometry:
        return N_OUT
    return N_OUT_BONDS if bonds else N_OUT_FORCES


# columns of owner (per sphere: the sums over the contacts it owns, written by the pair kernel)
OWN_FORCE = 0        # 3 columns, N
OWN_TORQUE = 3       # 3 columns, N m
OWN_DISSIPATION = 6  # J, during the last step
OWN_BOUNDARY = 7     # J, work done on the spheres by driven bodies during the last step
N_OWN = 8            # followed by one column per dissipation term of the law (J, during the last step)
# (the power of the driven bodies at the last evaluation, which the next step's boundary work
# needs, is state: State.boundary_power)

# values of status (int8)
ACTIVE = 1
INACTIVE = 0
CLEARED = -1

# status flags (int64 array of length N_FLAGS)
FLAG_REBUILD = 0     # a sphere or wall would leave the skin during the next step
FLAG_OVERLAP = 1     # an overlap exceeds the allowed fraction of the smaller radius
FLAG_FORCE_NAN = 2   # a contact force or torque is not finite (found by the launcher's diagnosis)
FLAG_STATE_NAN = 3   # a position, velocity or angular velocity is not finite
FLAG_FAST = 4        # a sphere moves more than half the skin in one step
FLAG_BOND_EVENT = 5  # a bond broke (pairs marked in out[:, OUT_EVENT])
N_FLAGS = 6

# servo controllers (State.servo_index, int64, and State.servo_param, float64: one row per wall or
# mesh whose motion follows a target force, see contactlab.servo and engine.integrate.servo_update)
SERVO_KIND = 0        # what moves: SERVO_WALL or SERVO_MESH
SERVO_TARGET = 1      # its index (wall or mesh)
SERVO_GAPS = 2        # 4 columns: walls (a1, b1, a2, b2); each pair's gap |(p_b - p_a) . n_a| multiplies the area (-1: none)
N_SERVO_INDEX = 6
SERVO_DIRECTION = 0   # 3 columns: unit direction in which the wall moves into the bodies (a wall: its normal)
SERVO_VALUE = 3       # target stress, Pa (or force, N, with an area factor 1)
SERVO_AREA = 4        # area factor: m^2, m (times one gap) or 1 (times two gaps, or a force target)
SERVO_GAIN = 5        # m/(s N); 0: from the wall's contact stiffness (SERVO_RELAXATION)
SERVO_RELAXATION = 6  # fraction of the force error removed per step at the wall's contact stiffness
SERVO_MAX_SPEED = 7   # m/s, the speed limit
N_SERVO_PARAM = 8

# values of SERVO_KIND
SERVO_WALL = 0
SERVO_MESH = 1
