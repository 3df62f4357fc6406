"""Named columns of the particle-DDA kernels' arrays (one place, so no kernel indexes by number).

Unknowns of a body (first-order DDA, Shi 1988): ``D = (u0, v0, r0, eps_x, eps_y, gamma_xy)``, the
displacement of the centroid (m), the rotation about it (rad, counter-clockwise) and the constant
strain of the step (engineering shear ``gamma_xy``).  ``DOF_NAMES`` gives the names a user passes
to :meth:`contactlab.DDA.fix`.

``PARAM``: the float parameters of a run, one vector; ``LOG``: the columns of the per-step log;
contact states ``OPEN``, ``SLIDING``, ``LOCKED``; status codes of the advance kernel.
"""
from __future__ import annotations

__all__ = ["N_DOF", "DOF_NAMES", "U0", "V0", "R0", "EPS_X", "EPS_Y", "GAMMA_XY", "OPEN", "SLIDING", "LOCKED",
           "P_PENALTY", "P_SHEAR", "P_FRICTION", "P_THICKNESS", "P_GX", "P_GY", "P_DT_MAX", "P_MAX_DISP",
           "P_PEN_TOL", "P_CG_TOL", "P_PLANE_STRAIN", "P_DYNAMIC", "P_DT_MIN", "P_FORCE_TOL", "P_BETA", "P_GAMMA",
           "P_VELOCITY_RATIO", "P_COHESION", "P_TENSILE",
           "N_PARAM",
           "LOG_COLUMNS", "N_LOG", "DONE", "NEED_ROOM", "TOO_SMALL", "LOG_FULL", "NOT_FINITE"]

N_DOF = 6
U0, V0, R0, EPS_X, EPS_Y, GAMMA_XY = range(N_DOF)
DOF_NAMES = ("u0", "v0", "r0", "eps_x", "eps_y", "gamma_xy")

#: contact states of the open-close iteration
OPEN, SLIDING, LOCKED = 0, 1, 2

# float parameters (one vector handed to the kernels)
P_PENALTY = 0        # normal penalty spring (N/m)
P_SHEAR = 1          # shear penalty spring (N/m)
P_FRICTION = 2       # Coulomb friction coefficient tan(phi)
P_THICKNESS = 3      # thickness of every body (m)
P_GX = 4             # gravity (m/s^2)
P_GY = 5
P_DT_MAX = 6         # largest time step (s): the user's
P_MAX_DISP = 7       # largest displacement of any point in one step (m)
P_PEN_TOL = 8        # largest penetration accepted at the end of a step (m)
P_CG_TOL = 9         # PCG stop: |r| <= tol |b|
P_PLANE_STRAIN = 10  # 1: plane strain, 0: plane stress
P_DYNAMIC = 11       # 1: velocities carried over (dynamic), 0: reset each step (static analysis)
P_DT_MIN = 12        # a step cut below this stops the run (s)
P_FORCE_TOL = 13     # open-close iteration: a change of state counts when the force it corrects is above
                     # this fraction of the largest normal force
P_BETA = 14          # Newmark beta of the time integration (Shi's DDA: 1/2)
P_GAMMA = 15         # Newmark gamma (Shi's DDA: 1)
P_VELOCITY_RATIO = 16  # Shi's dynamic ratio: the velocities carried into the next step are scaled by it
P_COHESION = 17      # shear strength (N) of a bonded contact at zero normal force (Mohr-Coulomb's c, per contact)
P_TENSILE = 18       # largest tension (N) a bonded contact carries
N_PARAM = 19

#: per-step log: time at the end of the step (s), its dt (s), open-close iterations, CG iterations
#: (all solves of the step), largest relative residual of its last solve, closed contacts, largest
#: penetration (m), largest displacement (m), tries rejected before it was accepted, and of them
#: those cut because the open-close iteration did not settle, a solve failed, a point moved more
#: than the largest displacement, a contact penetrated beyond the tolerance; then the open-close
#: and CG iterations spent in the tries that were cut (the counts before are the accepted try's)
LOG_COLUMNS = ("time", "dt", "open_close_iterations", "cg_iterations", "residual", "closed_contacts",
               "max_penetration", "max_displacement", "rejected", "cut_open_close", "cut_solver",
               "cut_displacement", "cut_penetration", "cut_open_close_iterations", "cut_cg_iterations")
N_LOG = len(LOG_COLUMNS)

# status of the advance kernel
DONE = 0          # reached the end time or the step count
NEED_ROOM = 1     # the contact arrays are full: grow them and call again
TOO_SMALL = 2     # the step was cut below the smallest step
LOG_FULL = 3      # the log is full: read it and call again
NOT_FINITE = 4    # a solve produced a non-finite value
