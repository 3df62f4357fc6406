"""The ``hysteresis`` checks: the force-overlap loop of a wall contact under a prescribed
load-unload-reload-separate path, quasi-statically and at the reference impact speed.  The loop's
work equals the energy the law books (stored + dissipated), and the energy lost per cycle is never
negative.
"""
from __future__ import annotations

import numpy as np

from ..context import PATH_DENSITY, QUASI_STATIC
from ..formatting import fmt
from ..results import Check
from .common import converging, curve, energy_balance, panel

__all__ = ["check_hysteresis"]


def check_hysteresis(ctx) -> list:
    d = ctx.d_ref
    legs = [(d, 0, 0, 0, 0, 0), (0.4 * d, 0, 0, 0, 0, 0), (d, 0, 0, 0, 0, 0), (1.5 * d, 0, 0, 0, 0, 0),
            (-0.1 * d, 0, 0, 0, 0, 0)]
    out, panels, runs = [], [], {}
    for label, rate in (("quasi-static", QUASI_STATIC * ctx.v_ref), ("at v_ref", ctx.v_ref)):
        fine_q, fine_dt = ctx.path(legs, rate)
        coarse_q, coarse_dt = ctx.path(legs, rate, density=PATH_DENSITY // 2)
        fine = ctx.probe_path(fine_q, fine_dt, wall=True)
        coarse = ctx.probe_path(coarse_q, coarse_dt, wall=True)
        err_f, w, scale = energy_balance(fine, fine_q)
        err_c, _, _ = energy_balance(coarse, coarse_q)
        # the inner unload-reload cycle: from the first peak back to the same overlap
        first = int(np.argmax(fine_q[:, 0] >= d))
        back = first + 1 + int(np.argmax(fine_q[first + 1:, 0] >= d - 1e-15 * d))
        dw = np.diff(w)
        runs[label] = dict(res=fine, q=fine_q, err=(err_c, err_f), w_total=float(w[-1]), w_cycle=float(w[back] - w[first]),
                           dissipated=float(fine.dissipated[-1] - fine.dissipation[0]), scale=scale,
                           loading=float(dw[dw > 0].sum()))
        panels.append(panel(f"force-overlap loop, {label}", "overlap / reference overlap", "normal force (N)",
                            [curve(fine_q[:, 0] / d, fine.normal_force, "load-unload-reload-separate")]))
    ctx.figures.append(dict(name="hysteresis", title="Load-unload-reload: force against overlap (wall contact)",
                            panels=panels))
    fig = "hysteresis.png"
    ok_all, parts = True, []
    for label, r in runs.items():
        ok, text = converging(*r["err"], tol=1e-2)
        ok_all &= ok
        parts.append(f"{label}: {text}")
    qs, dyn = runs["quasi-static"], runs["at v_ref"]
    out.append(Check(
        "loop work = stored + dissipated energy", "hysteresis", ok_all, runs["at v_ref"]["err"][1], "relative",
        "largest |work - (stored change + booked dissipation)| along the path <= 1e-2 of the total |work| at "
        f"{PATH_DENSITY} samples per reference overlap, and at least 1.5 times smaller than at half that "
        "resolution (or < 1e-8)",
        "work-energy theorem: the trapezoidal work of the law's force on the prescribed overlap path",
        "; ".join(parts), fig, data={k: {"relative_error_coarse_fine": list(r["err"])} for k, r in runs.items()}))
    worst = min(r["w_total"] / r["scale"] for r in runs.values())
    worst_cycle = min(r["w_cycle"] / r["scale"] for r in runs.values())
    ok = worst >= -1e-9 and worst_cycle >= -1e-9
    out.append(Check(
        "energy dissipated per cycle >= 0", "hysteresis", ok, qs["dissipated"], "J",
        "the net work done on the contact over the closed path (separated to separated) and over the inner "
        "unload-reload cycle is >= -1e-9 of the total |work| (the law creates no energy over a cycle)",
        "second law: a passive contact can only absorb energy over a closed cycle",
        f"booked dissipation over the path: quasi-static {fmt(qs['dissipated'])} J, at v_ref "
        f"{fmt(dyn['dissipated'])} J; loop work (trapezoid) quasi-static {fmt(qs['w_total'])} J, at v_ref "
        f"{fmt(dyn['w_total'])} J; inner cycle {fmt(qs['w_cycle'])} J / {fmt(dyn['w_cycle'])} J; fraction "
        f"of the work put in that is lost: quasi-static {fmt(qs['w_total'] / max(qs['loading'], 1e-300))}, at v_ref "
        f"{fmt(dyn['w_total'] / max(dyn['loading'], 1e-300))}", fig,
        data={k: {"dissipated_J": r["dissipated"], "loop_work_J": r["w_total"], "inner_cycle_work_J": r["w_cycle"],
                  "work_in_J": r["loading"]} for k, r in runs.items()}))
    return out
