"""The particle-DDA time loop, compiled: steps, open-close iteration, step control (one call).

Written out into the kernel cache as a generated module (:func:`contactlab.dda.loader.kernels`),
so that Numba's disk cache is refreshed whenever this file or anything it imports changes.

A step (``dt`` the size tried):

1. candidates (:mod:`.contact_geometry`) with the margin ``2 max_disp + |v_wall| dt_max``; their
   geometry at the start of the step; each contact's history (state, shear force, normal force,
   normal) found by key in the last accepted step's contacts;
2. the bodies' blocks and right-hand sides (:mod:`.blocks`): inertia, elastic, initial stress,
   body load, point loads; fixed unknowns prescribed to ``rate dt``;
3. open-close iteration: with the contacts' current states, solve ``A D = b`` (:mod:`.pcg`: CG, or
   BiCGSTAB when a contact slides; to ``LOOSE_CG_TOL`` until the states settle, then once more to
   the tolerance to confirm them), then recompute every state from ``D``: the gap
   ``g = g0 + e_n . D`` closes a contact when negative and opens it when positive (no
   hysteresis: one of ``1e-3 pen_tol`` let closed contacts pull with ~60 times a disk's weight in
   a heap, the floor then carrying 1.2 times the weight); a closed contact carries ``F_n = -p g``
   and is locked if the trial shear force ``F_s0 + k_s e_t . D`` is within ``mu F_n``, else
   sliding with the friction ``mu F_n`` against the trial force's sign.  A bonded contact
   (Mohr-Coulomb with cohesion ``c`` and tensile strength ``T``, forces per contact) stays closed
   and locked while ``-F_n = p g <= T`` and ``|F_s| <= c + mu F_n`` (``F_n`` negative in tension);
   beyond either (by more than the force tolerance below) it breaks for good, within the
   iteration, and is an unbonded contact from then on.  A sliding contact's friction is implicit
   in ``F_n`` (the non-symmetric friction block): with the previous iteration's ``F_n`` instead,
   the iteration diverged in wedged packings (a friction force raising the normal forces that set
   it, by a factor ~100 per iteration).  The loop ends when no contact changes state, not
   counting a change that corrects a force below ``force_tol`` times the largest normal force (a
   contact at the brink of opening, or of slipping, flips back and forth with no effect on the
   solution); it is given
   up when a contact has changed state ``CYCLE_FLIPS`` times (a cycle, which would run to
   ``max_oc``);
4. acceptance: the loop converged, every PCG solve reached its tolerance, no point moved more than
   ``max_disp`` and no closed contact penetrates deeper than ``pen_tol``; otherwise the step is
   repeated at ``0.3 dt`` (at least) and, below ``dt_min``, the run stops with ``TOO_SMALL``;
5. update: centroids, angles, shapes (``M <- G M G^T``), stresses (``sigma + E eps``, turned with
   the body), velocities and accelerations by the Newmark rule (Shi's ``v <- 2 D / dt - v`` when ``beta = 1/2,
   gamma = 1``) or 0 (static), point loads' points, the
   contacts' history.  The next step tries ``min(1.3 dt, dt_max)`` after a step accepted at once,
   in a dynamic run no longer than free flight allows (:func:`.motion.free_flight_step`).

Contacts: body ``cj`` (always a body) and ``ci`` (a body, or ``-1 - w`` for wall ``w``); the normal
points from ``ci`` to ``cj``; a body-wall contact's ``e_n`` has zeros on side 0 and its gap a
constant term ``-n . v_wall dt``.  Shear force ``F_s`` acts on ``cj`` as ``-F_s t`` (``t`` the
normal turned by +90 degrees), on ``ci`` as ``+F_s t``.
"""
from __future__ import annotations

import math

import numpy as np

from contactlab._jit import jit, kernel
from contactlab.dda.blocks import add_elastic_block, area_of, mass_block, t_transpose_dot
from contactlab.dda.contact_geometry import (bounding_radii, candidate_pairs, count_candidates, pair_geometry,
                                             wall_geometry)
from contactlab.dda.layout import (DONE, LOCKED, LOG_FULL, NOT_FINITE, OPEN, P_CG_TOL, P_COHESION, P_DT_MAX,
                                   P_DT_MIN, P_BETA, P_DYNAMIC, P_FORCE_TOL, P_FRICTION, P_GX, P_GY, P_MAX_DISP,
                                   P_PEN_TOL, P_PENALTY, P_PLANE_STRAIN, P_SHEAR, P_TENSILE, P_THICKNESS, SLIDING,
                                   TOO_SMALL)
from contactlab.dda.motion import free_flight_step, max_displacement, update_bodies
from contactlab.dda.pcg import bicgstab, contact_lists, factor_preconditioner, pcg

__all__ = ["advance", "detect"]


#: a contact that changed state this many times in one try marks a cycle: the open-close loop
#: is given up (the try is cut) instead of running to ``max_oc`` (benchmarks/README.md)
CYCLE_FLIPS = 6
#: the open-close loop's solves stop at this relative residual until the states settle; then one
#: more solve to ``cg_tolerance`` confirms them (benchmarks/README.md)
LOOSE_CG_TOL = 1e-4


@jit
def _find(keys, count, key):
    lo = 0
    hi = count
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < count and keys[lo] == key:
        return lo
    return -1


@jit(inline="never")
def detect(bodies, walls, margin, hist):
    """Contacts at the start of a step, in key order: ``(ci, cj, key, g0, nrm, pts, en, et, state,
    fs0, fn0, bond)`` (``pts``: the two support points relative to their centroids); the state,
    shear and normal force and the bond come from the history of the same key."""
    pos, shp = bodies[0], bodies[2]
    wpt, wnrm = walls[0], walls[1]
    hkey, hstate, hfs, hfn, hnrm, hbond = hist
    hcount = hkey.shape[0]
    n = pos.shape[0]
    nw = wpt.shape[0]
    nkeys = n + nw
    bound = bounding_radii(shp)
    npair = count_candidates(pos, bound, margin)
    pi = np.empty(npair, dtype=np.int64)
    pj = np.empty(npair, dtype=np.int64)
    candidate_pairs(pos, bound, margin, pi, pj)
    cap = npair + n * nw
    keys = np.empty(cap, dtype=np.int64)
    ci = np.empty(cap, dtype=np.int64)
    cj = np.empty(cap, dtype=np.int64)
    g0 = np.empty(cap)
    nrm = np.empty((cap, 2))
    pts = np.empty((cap, 4))
    m = 0
    for k in range(npair):
        i = pi[k]
        j = pj[k]
        key = i * nkeys + j
        h = _find(hkey, hcount, key)
        w0 = 0.0
        w1 = 0.0
        if h >= 0:
            w0 = hnrm[h, 0]
            w1 = hnrm[h, 1]
        apart, sep, n0, n1, xi, yi, xj, yj = pair_geometry(pos, shp, i, j, w0, w1, margin)
        if apart or sep > margin:
            continue
        keys[m] = key
        ci[m] = i
        cj[m] = j
        g0[m] = sep
        nrm[m, 0] = n0
        nrm[m, 1] = n1
        pts[m, 0] = xi
        pts[m, 1] = yi
        pts[m, 2] = xj
        pts[m, 3] = yj
        m += 1
    for w in range(nw):
        for b in range(n):
            gap, x, y = wall_geometry(pos, shp, b, wpt, wnrm, w)
            if gap > margin:
                continue
            keys[m] = (n + w) * nkeys + b
            ci[m] = -1 - w
            cj[m] = b
            g0[m] = gap
            nrm[m, 0] = wnrm[w, 0]
            nrm[m, 1] = wnrm[w, 1]
            pts[m, 0] = 0.0
            pts[m, 1] = 0.0
            pts[m, 2] = x
            pts[m, 3] = y
            m += 1
    order = np.argsort(keys[:m])
    o_ci = ci[:m][order]
    o_cj = cj[:m][order]
    o_key = keys[:m][order]
    o_g0 = g0[:m][order]
    o_nrm = nrm[:m][order]
    o_pts = pts[:m][order]
    en = np.zeros((m, 12))
    et = np.zeros((m, 12))
    state = np.zeros(m, dtype=np.int8)
    fs0 = np.zeros(m)
    fn0 = np.zeros(m)
    bond = np.zeros(m, dtype=np.int8)
    for c in range(m):
        n0 = o_nrm[c, 0]
        n1 = o_nrm[c, 1]
        t_transpose_dot(en, c, 6, o_pts[c, 2], o_pts[c, 3], n0, n1)
        t_transpose_dot(et, c, 6, o_pts[c, 2], o_pts[c, 3], -n1, n0)
        if o_ci[c] >= 0:
            t_transpose_dot(en, c, 0, o_pts[c, 0], o_pts[c, 1], -n0, -n1)
            t_transpose_dot(et, c, 0, o_pts[c, 0], o_pts[c, 1], n1, -n0)
        h = _find(hkey, hcount, o_key[c])
        if h >= 0:
            state[c] = hstate[h]
            fs0[c] = hfs[h]
            fn0[c] = hfn[h]
            bond[c] = hbond[h]
    return o_ci, o_cj, o_key, o_g0, o_nrm, o_pts, en, et, state, fs0, fn0, bond


@jit(inline="never")
def _body_system(bodies, loads, params, dt, dynamic):
    """Diagonal blocks ``kd`` (n, 6, 6), right-hand side ``b`` (n, 6) of the bodies' own terms,
    the free mask and the prescribed values of the fixed unknowns (in ``x0``, the start guess)."""
    pos, angle, shp, mass, young, poisson, stress, vel, free, rate = bodies[:10]
    acc = bodies[10]
    lbody, lrel, lforce = loads
    n = pos.shape[0]
    t = params[P_THICKNESS]
    plane_strain = params[P_PLANE_STRAIN] != 0.0
    kd = np.zeros((n, 6, 6))
    b = np.zeros((n, 6))
    x0 = np.empty((n, 6))
    beta = params[P_BETA]
    inertia = 1.0 / (beta * dt * dt)
    mv = np.empty((1, 6, 6))     # one body's inertia block, reused
    for i in range(n):
        mass_block(mass[i], shp[i, 0], shp[i, 1], shp[i, 2], inertia, kd, i)
        volume = area_of(shp[i, 0], shp[i, 1], shp[i, 2]) * t
        add_elastic_block(young[i], poisson[i], plane_strain, volume, kd, i)
        b[i, 0] += mass[i] * params[P_GX]
        b[i, 1] += mass[i] * params[P_GY]
        b[i, 3] -= volume * stress[i, 0]
        b[i, 4] -= volume * stress[i, 1]
        b[i, 5] -= volume * stress[i, 2]
        if dynamic:
            # Newmark: a1 = (D - dt v0 - dt^2 (1/2 - beta) a0) / (beta dt^2), so the inertia force
            # -M a1 puts M / (beta dt^2) on the diagonal and M (dt v0 + dt^2 (1/2 - beta) a0) /
            # (beta dt^2) on the right-hand side (Shi: beta = 1/2, the a0 term drops out)
            mv[0] = 0.0
            mass_block(mass[i], shp[i, 0], shp[i, 1], shp[i, 2], inertia, mv, 0)
            for r in range(6):
                s = 0.0
                for q in range(6):
                    s += mv[0, r, q] * (dt * vel[i, q] + dt * dt * (0.5 - beta) * acc[i, q])
                b[i, r] += s
        for d in range(6):
            x0[i, d] = vel[i, d] * dt if dynamic else 0.0
            if free[i, d] == 0.0:
                x0[i, d] = rate[i, d] * dt
    for k in range(lbody.shape[0]):
        i = lbody[k]
        x = lrel[k, 0]
        y = lrel[k, 1]
        fx = lforce[k, 0]
        fy = lforce[k, 1]
        b[i, 0] += fx
        b[i, 1] += fy
        b[i, 2] += -y * fx + x * fy
        b[i, 3] += x * fx
        b[i, 4] += y * fy
        b[i, 5] += 0.5 * (y * fx + x * fy)
    return kd, b, x0


@jit
def _dot6(e, c, o, x, i):
    s = 0.0
    for d in range(6):
        s += e[c, o + d] * x[i, d]
    return s


@jit
def _gap_and_shear(c, ci, cj, g0, nrm, en, et, walls, dt, x):
    """Gap (m) and shear displacement (m) of contact ``c`` after the step ``x``."""
    g, s = _wall_terms(c, ci, nrm, walls, dt)
    g += g0[c] + _dot6(en, c, 6, x, cj[c])
    s += _dot6(et, c, 6, x, cj[c])
    if ci[c] >= 0:
        g += _dot6(en, c, 0, x, ci[c])
        s += _dot6(et, c, 0, x, ci[c])
    return g, s


@jit
def _wall_terms(c, ci, nrm, walls, dt):
    """Constant terms of contact ``c``'s gap and shear displacement (a moving wall's), m."""
    if ci[c] >= 0:
        return 0.0, 0.0
    w = -1 - ci[c]
    vx = walls[2][w, 0] * dt
    vy = walls[2][w, 1] * dt
    return -(nrm[c, 0] * vx + nrm[c, 1] * vy), -(-nrm[c, 1] * vx + nrm[c, 0] * vy)


@jit
def _add_side(b, e, c, o, i, f):
    for d in range(6):
        b[i, d] += f * e[c, o + d]


@jit(inline="never")
def solve_step(bodies, walls, loads, params, ints, con, dt):
    """One step of size ``dt`` with the open-close iteration; returns ``(converged, x, state, fn,
    fs, gap, oc_iterations, cg_iterations, residual, cg_ok, bond)`` (``bond``: the bonds left)."""
    ci, cj, key, g0, nrm, pts, en, et, state0, fs0, fn0, bond0 = con
    free = bodies[8]
    n = bodies[0].shape[0]
    m = ci.shape[0]
    p = params[P_PENALTY]
    ks = params[P_SHEAR]
    mu = params[P_FRICTION]
    cohesion = params[P_COHESION]
    tensile = params[P_TENSILE]
    dynamic = params[P_DYNAMIC] != 0.0
    max_oc = ints[0]
    max_cg = ints[1]
    kd, bb, x = _body_system(bodies, loads, params, dt, dynamic)
    start, entry = contact_lists(n, m, ci, cj)
    state = state0.copy()
    bond = bond0.copy()
    sgn = np.zeros(m)
    for c in range(m):
        sgn[c] = 1.0 if fs0[c] >= 0.0 else -1.0
    cn = np.zeros(max(m, 1))
    ct = np.zeros(max(m, 1))
    cf = np.zeros(max(m, 1))
    chol = np.zeros((n, 6, 6))
    b = np.empty((n, 6))
    gap = np.zeros(m)
    fn = np.zeros(m)
    fs = np.zeros(m)
    flips = np.zeros(m, dtype=np.int64)
    converged = False
    cg_total = 0
    residual = 0.0
    cg_ok = True
    tol = max(params[P_CG_TOL], LOOSE_CG_TOL)
    it = 0
    while it < max_oc:
        it += 1
        for i in range(n):
            for d in range(6):
                b[i, d] = bb[i, d]
        sliding = False
        for c in range(m):
            gw, sw = _wall_terms(c, ci, nrm, walls, dt)
            cn[c] = 0.0
            ct[c] = 0.0
            cf[c] = 0.0
            if state[c] == OPEN:
                continue
            cn[c] = p
            f = -p * (g0[c] + gw)
            if state[c] == LOCKED:
                ct[c] = ks
                fsh = -(fs0[c] + ks * sw)
            else:
                # friction -sgn mu F_n with F_n = -p g implicit in the step's gap: the constant
                # part here, the part in e_n . D in the matrix (cf, non-symmetric)
                cf[c] = -sgn[c] * mu * p
                fsh = -sgn[c] * mu * f
                sliding = True
            _add_side(b, en, c, 6, cj[c], f)
            _add_side(b, et, c, 6, cj[c], fsh)
            if ci[c] >= 0:
                _add_side(b, en, c, 0, ci[c], f)
                _add_side(b, et, c, 0, ci[c], fsh)
        bad = factor_preconditioner(kd, free, m, en, et, cn, ct, start, entry, chol)
        if bad >= 0:
            cg_ok = False
            break
        if sliding:
            # BiCGSTAB can stagnate or break down where CG would not: restarted from where it
            # stopped (a fresh shadow residual) up to three times within the iteration budget
            iters = 0
            for attempt in range(4):
                k_it, residual = bicgstab(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, chol,
                                          tol, max_cg - iters)
                iters += k_it
                if residual <= tol or iters >= max_cg:
                    break
        else:
            iters, residual = pcg(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, chol,
                                  tol, max_cg)
        cg_total += iters
        if not residual <= tol:
            cg_ok = False
            break
        # the scale of a significant change: force_tol of the largest normal force of the solve
        fmax = 0.0
        for c in range(m):
            if state[c] != OPEN:
                g, s = _gap_and_shear(c, ci, cj, g0, nrm, en, et, walls, dt, x)
                fmax = max(fmax, p * abs(g) if bond[c] != 0 else -p * g)   # a bond's tension counts
        ftol = params[P_FORCE_TOL] * fmax
        changed = 0
        cycling = False
        for c in range(m):
            g, s = _gap_and_shear(c, ci, cj, g0, nrm, en, et, walls, dt, x)
            gap[c] = g
            old = state[c]
            if bond[c] != 0:
                # a bond holds while its tension p g is within T and its shear within c + mu F_n
                # (F_n < 0 in tension); beyond either by more than ftol (as any change of state,
                # so that round-off cannot break one) it breaks, for good
                trial = fs0[c] + ks * s
                if p * g <= tensile + ftol and abs(trial) <= cohesion - mu * p * g + ftol:
                    state[c] = LOCKED
                    fn[c] = -p * g
                    fs[c] = trial
                    if old != LOCKED:
                        changed += 1
                    continue
                bond[c] = 0
                changed += 1
                old = OPEN if g > 0.0 else LOCKED
            if old == OPEN:
                closed = g < 0.0
            else:
                closed = g <= 0.0
            # a change of state counts when the force it corrects is above ftol: the normal force
            # p |g| when the contact opens or closes, the friction excess when it locks or slips
            miss = p * abs(g)
            if not closed:
                new = OPEN
                fn[c] = 0.0
                fs[c] = 0.0
            else:
                fn[c] = max(-p * g, 0.0)
                trial = fs0[c] + ks * s
                if old == SLIDING:
                    # a sliding contact locks when its plastic slip, the slip beyond the spring's
                    # share ``(sgn mu F_n - F_s0) / k_s``, turns back: the trial force falls below
                    # the friction on the side it slides to (a lock then may slide the other way)
                    slide = trial * sgn[c] > mu * fn[c]
                else:
                    slide = abs(trial) > mu * fn[c]
                if not slide:
                    new = LOCKED
                    fs[c] = trial
                    if old == SLIDING:
                        miss = mu * fn[c] - trial * sgn[c]
                else:
                    new = SLIDING
                    if old != SLIDING:
                        sgn[c] = 1.0 if trial >= 0.0 else -1.0
                        if old == LOCKED:
                            miss = abs(trial) - mu * fn[c]
                    fs[c] = sgn[c] * mu * fn[c]
            if new != old and miss > ftol:
                changed += 1
                flips[c] += 1
                if flips[c] >= CYCLE_FLIPS:
                    cycling = True
            state[c] = new
        if changed == 0:
            if tol <= params[P_CG_TOL]:
                converged = True
                break
            # the states settled on the loose solves: solve again to the tolerance and check
            tol = params[P_CG_TOL]
            continue
        if cycling:
            break
    return converged and cg_ok, x, state, fn, fs, gap, it, cg_total, residual, cg_ok, bond


@jit(inline="never")
def _wall_reach(walls, dt):
    out = 0.0
    wvel = walls[2]
    for w in range(wvel.shape[0]):
        out = max(out, math.sqrt(wvel[w, 0] ** 2 + wvel[w, 1] ** 2) * dt)
    return out


@kernel
def advance(bodies, walls, loads, params, ints, hist, log, time, t_end, dt, max_steps):
    """Run steps until ``t_end`` (s) or ``max_steps`` steps or the log is full.

    ``bodies``: ``(pos (n,2), angle (n,), shp (n,3), mass, young, poisson, stress (n,3), vel (n,6),
    free (n,6), rate (n,6), acc (n,6))``, updated in place; ``walls``: ``(point (w,2), normal (w,2), velocity
    (w,2))``; ``loads``: ``(body (k,), point relative to the centroid (k,2), force (k,2))``;
    ``hist``: the last step's contacts ``(key, state, shear force, normal force, normal, bond)``;
    ``log`` (rows, N_LOG).  Returns ``(status, steps, time, dt, hist, contacts)`` where
    ``contacts = (ci, cj, normal, point, gap, normal force, shear force, state, bond)`` of the
    last accepted step (point: the midpoint of the two support points, global).
    """
    pos = bodies[0]
    shp = bodies[2]
    n = pos.shape[0]
    status = DONE
    steps = 0
    # a bond in tension keeps its contact up to the gap T / p
    margin = (2.0 * params[P_MAX_DISP] + _wall_reach(walls, params[P_DT_MAX])
              + params[P_TENSILE] / params[P_PENALTY])
    e_ci = np.zeros(0, dtype=np.int64)
    e_f = np.zeros(0)
    e_v = np.zeros((0, 2))
    out = (e_ci, e_ci.copy(), e_v, e_v.copy(), e_f, e_f.copy(), e_f.copy(), np.zeros(0, dtype=np.int8),
           np.zeros(0, dtype=np.int8))
    while steps < max_steps and time < t_end * (1.0 - 1e-14) - 1e-300:
        if steps >= log.shape[0]:
            status = LOG_FULL
            break
        con = detect(bodies, walls, margin, hist)
        ci, cj, key, nrm, pts = con[0], con[1], con[2], con[4], con[5]
        m = ci.shape[0]
        rejected = 0
        cuts = np.zeros(4)
        cut_oc = 0  # the iterations spent in the tries that were cut
        cut_cg = 0
        h = dt
        if params[P_DYNAMIC] != 0.0:
            h = min(h, free_flight_step(bodies, params))
        h = min(h, t_end - time)
        if t_end - time - h < 0.01 * h:
            h = t_end - time
        while True:
            ok, x, state, fn, fs, gap, oc, cg, res, cg_ok, bond = solve_step(bodies, walls, loads, params, ints,
                                                                             con, h)
            finite = True
            for i in range(n):
                for d in range(6):
                    if not math.isfinite(x[i, d]):
                        finite = False
            if not finite:
                return NOT_FINITE, steps, time, h, hist, out
            disp = max_displacement(x, shp)
            pen = 0.0
            closed = 0
            for c in range(m):
                if state[c] != OPEN:
                    closed += 1
                    pen = max(pen, -gap[c])
            if ok and disp <= params[P_MAX_DISP] and pen <= params[P_PEN_TOL]:
                break
            rejected += 1
            cut_oc += oc
            cut_cg += cg
            if not cg_ok:
                cuts[1] += 1
            elif not ok:
                cuts[0] += 1
            elif disp > params[P_MAX_DISP]:
                cuts[2] += 1
            else:
                cuts[3] += 1
            cut = 0.3
            if ok and disp > params[P_MAX_DISP]:
                cut = min(0.9 * math.sqrt(params[P_MAX_DISP] / disp), 0.5)
            h *= max(cut, 0.1)
            if h < params[P_DT_MIN]:
                return TOO_SMALL, steps, time, h, hist, out
        # the contacts of the accepted step, global points before the update
        cpt = np.empty((m, 2))
        for c in range(m):
            j = cj[c]
            if ci[c] >= 0:
                i = ci[c]
                cpt[c, 0] = 0.5 * (pos[i, 0] + pts[c, 0] + pos[j, 0] + pts[c, 2])
                cpt[c, 1] = 0.5 * (pos[i, 1] + pts[c, 1] + pos[j, 1] + pts[c, 3])
            else:
                cpt[c, 0] = pos[j, 0] + pts[c, 2]
                cpt[c, 1] = pos[j, 1] + pts[c, 3]
        update_bodies(bodies, loads, params, x, h)
        wpt, wvel = walls[0], walls[2]
        for w in range(wpt.shape[0]):
            wpt[w, 0] += wvel[w, 0] * h
            wpt[w, 1] += wvel[w, 1] * h
        hist = (key.copy(), state.copy(), fs.copy(), fn.copy(), nrm.copy(), bond.copy())
        out = (ci, cj, nrm, cpt, gap, fn, fs, state, bond)
        time += h
        row = log[steps]
        row[0] = time
        row[1] = h
        row[2] = oc
        row[3] = cg
        row[4] = res
        row[5] = closed
        row[6] = pen
        row[7] = disp
        row[8] = rejected
        for k in range(4):
            row[9 + k] = cuts[k]
        row[13] = cut_oc
        row[14] = cut_cg
        steps += 1
        if rejected == 0:
            dt = min(params[P_DT_MAX], max(dt, h) * 1.3)
        else:
            dt = h
    return status, steps, time, dt, hist, out
