"""How the bodies move in a DDA step: the end-of-step update of an accepted step, and the two
measures of motion the step control uses (the largest displacement of a solution, the longest
step free flight allows).  One concept: the motion of bodies by a step's unknowns
``D = (u0, v0, r0, eps_x, eps_y, gamma_xy)`` (:mod:`.blocks`)."""
from __future__ import annotations

import math

from contactlab._jit import jit
from contactlab.dda.blocks import elastic_matrix, map_shape
from contactlab.dda.layout import (P_BETA, P_DYNAMIC, P_DT_MAX, P_GAMMA, P_GX, P_GY, P_MAX_DISP, P_PLANE_STRAIN,
                                   P_VELOCITY_RATIO)

__all__ = ["max_displacement", "update_bodies", "free_flight_step"]


@jit(inline="never")
def max_displacement(x, shp):
    """The largest displacement (m) that the step unknowns ``x`` (n, 6) give a point of a body:
    per body ``|(u0, v0)| + r (|r0| + |eps_x| + |eps_y| + |gamma_xy|)``, ``r`` (m) the largest
    semi-axis from the shape matrix ``shp`` (n, 3; m^2).  Applied to the rates ``vel`` (n, 6) it
    is the largest speed (m/s) in the same measure."""
    out = 0.0
    for i in range(x.shape[0]):
        r = math.sqrt(max(shp[i, 0], shp[i, 1]) + abs(shp[i, 2]))
        d = math.sqrt(x[i, 0] ** 2 + x[i, 1] ** 2) + r * (abs(x[i, 2]) + abs(x[i, 3]) + abs(x[i, 4]) + abs(x[i, 5]))
        out = max(out, d)
    return out


@jit(inline="never")
def update_bodies(bodies, loads, params, x, dt):
    """Apply the accepted step's unknowns ``x`` (n, 6: m, m, rad and three strains) over ``dt``
    (s): centroids, angles, shape matrices, stresses (Pa, turned with the body), velocities and
    accelerations by the Newmark rule scaled by the velocity ratio (or zero in static analysis),
    and the point loads' points (m, relative to the centroid)."""
    pos, angle, shp, mass, young, poisson, stress, vel, free, rate = bodies[:10]
    acc = bodies[10]
    beta = params[P_BETA]
    gamma = params[P_GAMMA]
    # Shi's dynamic ratio per full step dt_max, so per unit of time: a step cut to h carries
    # r^(h / dt_max) (per step, the shorter steps of a falling heap would damp it to a terminal
    # speed of ~g h / (1 - r): benchmarks/README.md)
    ratio = params[P_VELOCITY_RATIO] ** (dt / params[P_DT_MAX])
    lbody, lrel, lforce = loads
    plane_strain = params[P_PLANE_STRAIN] != 0.0
    dynamic = params[P_DYNAMIC] != 0.0
    n = pos.shape[0]
    for i in range(n):
        ex = x[i, 3]
        ey = x[i, 4]
        gxy = x[i, 5]
        r0 = x[i, 2]
        pos[i, 0] += x[i, 0]
        pos[i, 1] += x[i, 1]
        angle[i] += r0
        mxx, myy, mxy = map_shape(shp[i, 0], shp[i, 1], shp[i, 2], r0, ex, ey, gxy)
        shp[i, 0] = mxx
        shp[i, 1] = myy
        shp[i, 2] = mxy
        e11, e12, e33 = elastic_matrix(young[i], poisson[i], plane_strain)
        sx = stress[i, 0] + e11 * ex + e12 * ey
        sy = stress[i, 1] + e12 * ex + e11 * ey
        txy = stress[i, 2] + e33 * gxy
        c = math.cos(r0)
        s = math.sin(r0)
        stress[i, 0] = c * c * sx - 2.0 * s * c * txy + s * s * sy
        stress[i, 1] = s * s * sx + 2.0 * s * c * txy + c * c * sy
        stress[i, 2] = s * c * (sx - sy) + (c * c - s * s) * txy
        for d in range(6):
            if free[i, d] == 0.0:
                vel[i, d] = rate[i, d]
                acc[i, d] = 0.0
            elif dynamic:
                a1 = (x[i, d] - dt * vel[i, d] - dt * dt * (0.5 - beta) * acc[i, d]) / (beta * dt * dt)
                vel[i, d] = ratio * (vel[i, d] + dt * ((1.0 - gamma) * acc[i, d] + gamma * a1))
                acc[i, d] = a1
            else:
                vel[i, d] = 0.0
                acc[i, d] = 0.0
    for k in range(lbody.shape[0]):
        i = lbody[k]
        ax = lrel[k, 0]
        ay = lrel[k, 1]
        ex = x[i, 3]
        ey = x[i, 4]
        hg = 0.5 * x[i, 5]
        c = math.cos(x[i, 2])
        s = math.sin(x[i, 2])
        fx = (1.0 + ex) * ax + hg * ay
        fy = hg * ax + (1.0 + ey) * ay
        lrel[k, 0] = c * fx - s * fy
        lrel[k, 1] = s * fx + c * fy


@jit(inline="never")
def free_flight_step(bodies, params):
    """The largest step (s) in which no body would move more than 0.9 ``max_disp`` in free flight:
    its velocities (the measure of :func:`max_displacement` applied to ``vel``) and gravity,
    ``v h + |g| h^2 / 2``.  A try longer than this is, in a dynamic run, all but certain to be cut
    for its displacement, after a full open-close loop (at 10,000 disks the costliest tries of a
    settling pile: benchmarks/README.md)."""
    speed = max_displacement(bodies[7], bodies[2])
    reach = 0.9 * params[P_MAX_DISP]
    g = math.sqrt(params[P_GX] ** 2 + params[P_GY] ** 2)
    if g > 0.0:
        return (math.sqrt(speed * speed + 2.0 * g * reach) - speed) / g
    return reach / speed if speed > 0.0 else math.inf
