"""The ``energy`` checks: the work done on the contact along a path in every sense equals stored
plus dissipated energy; the force equals the gradient of the stored energy (finite differences)
wherever the law books no dissipation.
"""
from __future__ import annotations

import numpy as np

from ..context import PATH_DENSITY, QUASI_STATIC
from ..formatting import fmt
from ..results import Check
from .common import bond_scale, converging, curve, energy_balance, general_legs, panel

__all__ = ["check_work_energy", "check_elastic_gradient"]


def check_work_energy(ctx) -> list:
    out = []
    variants = [("", None, ctx.d_ref)]
    if ctx.bonded:
        scale = bond_scale(ctx, lambda s: general_legs(s, ctx.radius)[:4], ctx.v_ref)
        variants.append((" (bonded)", ctx.bond_history(), scale))
    panels = []
    for suffix, hist, d in variants:
        errs = []
        for density in (PATH_DENSITY // 2, PATH_DENSITY):
            q, dt = ctx.path(general_legs(d, ctx.radius), ctx.v_ref, density=density * ctx.d_ref / d)
            res = ctx.probe_path(q, dt, history=hist)
            err, w, _ = energy_balance(res, q)
            errs.append(err)
        ok, text = converging(errs[0], errs[1], tol=1e-2)
        out.append(Check(
            f"work = stored + dissipated energy, every sense{suffix}", "energy", ok, errs[1], "relative",
            "along a path at the reference speed loading and unloading every sense (normal, sliding, rolling, "
            "twisting) to separation: largest |work - (stored change + booked dissipation)| <= 1e-2 of the total "
            f"|work| at {PATH_DENSITY} samples per reference overlap and at least 1.5 times smaller than at half that "
            "resolution (or < 1e-8)", "work-energy theorem (trapezoidal work of the force and couple on the "
            "prescribed relative motion)", text, "energy.png", data={"relative_error_coarse_fine": errs}))
        panels.append(panel(f"energy along the path{suffix}", "sample", "J", [
            curve(np.arange(len(w)), w, "work done on the contact"),
            curve(np.arange(len(w)), res.stored_energy - res.stored_energy[0], "stored energy", "dashed"),
            curve(np.arange(len(w)), res.dissipated - res.dissipation[0], "dissipated energy", "dashed"),
            curve(np.arange(len(w)), res.stored_energy - res.stored_energy[0] + res.dissipated - res.dissipation[0],
                  "stored + dissipated", "line")]))
    ctx.add_panels("energy", "Energy bookkeeping of the law", panels)
    return out


def check_elastic_gradient(ctx) -> list:
    """Where the law books no dissipation, each generalized force equals dE/dq (central differences)."""
    d, r_ = ctx.d_ref, ctx.radius
    legs = [(d, 0, 0, 0, 0, 0), (d, 0.05 * d, 0, 0, 0, 0), (d, 0.05 * d, 0, 0.05 * d / r_, 0, 0),
            (d, 0.05 * d, 0, 0.05 * d / r_, 0, 0.05 * d / r_), (0.3 * d, 0.05 * d, 0, 0.05 * d / r_, 0, 0.05 * d / r_)]
    coords = [0, 1, 3, 5, 0]                  # the coordinate each leg moves
    q, dt, ends = ctx.path(legs, QUASI_STATIC * ctx.v_ref, density=2 * PATH_DENSITY, bounds=True)
    res = ctx.probe_path(q, dt)
    fl, cl = res.local_force, res.local_couple
    gen = np.stack([-fl[:, 2], fl[:, 0], fl[:, 1], cl[:, 0], cl[:, 1], cl[:, 2]], axis=1)   # Q conjugate to q
    e = res.stored_energy
    diss = res.dissipation
    worst, used, q_max = 0.0, 0, 0.0
    leg_start = 0
    series = []
    for leg_no, (end, c) in enumerate(zip(ends, coords), start=1):
        k = np.arange(leg_start + 1, end)
        dq = q[k + 1, c] - q[k - 1, c]
        work = np.abs(gen[k, c] * (q[k + 1, c] - q[k, c]))
        elastic = (np.abs(diss[k]) <= 1e-6 * work) & (np.abs(diss[k + 1]) <= 1e-6 * work) & (dq != 0)
        q_max = max(q_max, float(np.abs(gen[leg_start:end + 1, c]).max()))
        if elastic.any():
            fd = (e[k + 1] - e[k - 1])[elastic] / dq[elastic]
            err = np.abs(gen[k[elastic], c] - fd)
            worst = max(worst, float(err.max()))
            used += int(elastic.sum())
            if c == 0:
                series.append(curve(q[k[elastic], 0] / d, gen[k[elastic], 0], f"F_n, leg {leg_no}", "line"))
                series.append(curve(q[k[elastic], 0] / d, fd, f"dE/d(overlap), leg {leg_no}", "dashed"))
        leg_start = end
    if series:
        ctx.add_panels("energy", "Energy bookkeeping of the law", [panel(
            "normal force and dE/d(overlap) (elastic samples)", "overlap / reference overlap", "N", series)])
    if used < 10:
        return [Check("force = dE/dq where no energy is dissipated", "energy", True, None, "",
                     "|Q - dE/dq| <= 1e-3 max|Q|", "finite differences of the stored energy", figure="energy.png",
                     not_applicable="the law books dissipation on (nearly) every quasi-static step (rate-independent "
                                    "hysteresis): the work-energy balance covers it")]
    rel = worst / max(q_max, 1e-300)
    return [Check(
        "force = dE/dq where no energy is dissipated", "energy", rel <= 1e-3, rel, "relative",
        "on every quasi-static step where the law books no dissipation (|D| <= 1e-6 |Q dq|), each generalized force "
        "(normal force, tangential force, rolling and twisting couples) equals the central finite difference of the "
        "stored energy, within 1e-3 of its largest value", "conservative elastic part: F = dE/dq (no energy created "
        "or lost by the elastic part)", f"{used} elastic samples on 5 legs; largest |Q - dE/dq| = {fmt(worst)}",
        "energy.png", data={"elastic_samples": used})]
