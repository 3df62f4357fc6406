"""Column layout of the per-contact data array and the status flags shared by kernels and launcher.

Per-contact data live in one float64 array ``cdata`` of shape (capacity, H + N_OUT), one row per
candidate pair of the neighbour list (``H`` = the law's history size).  The first ``H`` columns
are the law's history; the rest are written by the force kernel at every step.  Keeping them in
one row means a neighbour-list rebuild moves a contact's history and outputs together.
"""
from __future__ import annotations

__all__ = [
    "OUT_FORCE", "OUT_TORQUE_I", "OUT_TORQUE_J", "OUT_ELASTIC", "OUT_DISSIPATION",
    "OUT_BOUNDARY", "OUT_ACTIVE", "N_OUT", "CLEARED",
    "FLAG_REBUILD", "FLAG_OVERLAP", "FLAG_FORCE_NAN", "FLAG_STATE_NAN", "FLAG_FAST", "N_FLAGS",
]

# offsets after the history columns
OUT_FORCE = 0        # 3 columns: force on i, N, global frame
OUT_TORQUE_I = 3     # 3 columns: torque on i about its centre, N m
OUT_TORQUE_J = 6     # 3 columns: torque on j about its centre, N m (walls: unused)
OUT_ELASTIC = 9      # elastic energy stored in the contact, J
OUT_DISSIPATION = 10  # energy dissipated during the last step, J
OUT_BOUNDARY = 11    # work done on the free body by a driven body during the last step, J
OUT_ACTIVE = 12      # 1.0 when the law reports an active contact, 0.0 when not, CLEARED (see below)
N_OUT = 13

#: OUT_ACTIVE value of a row the engine has zeroed (a pair beyond the law's range): the row is all
#: zeros but this column, so the force kernel need not write it again while the pair stays apart
CLEARED = -1.0

# status flags (int64 array of length N_FLAGS)
FLAG_REBUILD = 0     # a sphere or wall would leave the skin during the next step
FLAG_OVERLAP = 1     # an overlap exceeds the allowed fraction of the smaller radius
FLAG_FORCE_NAN = 2   # a contact force or torque is not finite
FLAG_STATE_NAN = 3   # a position, velocity or angular velocity is not finite
FLAG_FAST = 4        # a sphere moves more than half the skin in one step
N_FLAGS = 5
