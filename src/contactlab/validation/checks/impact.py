"""The ``impact`` checks: normal impact of a sphere on a wall over a range of speeds.  Restitution
and contact duration against the model's closed form where one exists, else physical sanity
(``0 <= e <= 1``, a finite duration, a capture only for an adhesive model).
"""
from __future__ import annotations

import math

import numpy as np

from ...laws.impact_reference import hertz_moduli
from ..closed_forms import hertz_impact
from ..formatting import fmt
from ..results import Check
from .common import curve, panel

__all__ = ["check_impact"]


def check_impact(ctx) -> list:
    rows = []
    for v in ctx.speeds:
        ctx.log(f"  normal impact at {fmt(v)} m/s")
        series = ctx.impact_series(v)
        runs = series["runs"]
        fine = runs[ctx.steps[-1]]
        row = {"speed": v, "captured": fine["captured"], "max_overlap": fine["max_overlap"],
               "restitution_raw": fine["restitution"], "duration_raw": fine["duration"]}
        if fine["captured"]:
            row.update(restitution=0.0, duration=math.inf)
        else:
            row.update(restitution=ctx.extrapolate(runs, "restitution"), duration=ctx.extrapolate(runs, "duration"))
        ref = ctx.closed_form(ctx.material, ctx.radius, v) if ctx.closed_form else None
        row["ref_restitution"] = None if not ref else ref.get("restitution")
        row["ref_duration"] = None if not ref else ref.get("duration")
        row["ref_source"] = None if not ref else ref.get("source")
        rows.append(row)
    e = np.array([r["restitution"] for r in rows])
    tc = np.array([r["duration"] for r in rows])
    captured = [r["speed"] for r in rows if r["captured"]]
    fig = "impact.png"
    out = []
    ok = bool(np.all((e >= 0.0) & (e <= 1.0 + 1e-3)))
    if captured and not ctx.props.adhesive:
        ok = False
    out.append(Check(
        "restitution within [0, 1]", "impact", ok, float(np.max(e)), "max e",
        "0 <= e <= 1 + 1e-3 at every speed (allowance for the time integration); a capture (e = 0) only for a "
        "model declared adhesive", "energy conservation: an impact cannot create kinetic energy",
        f"e = {', '.join(fmt(x) for x in e)} at v = {', '.join(fmt(r['speed']) for r in rows)} m/s"
        + (f"; captured at {', '.join(fmt(s) for s in captured)} m/s" if captured else ""), fig))
    free = tc[np.isfinite(tc)]
    ok = bool(len(free) == len(tc) - len(captured) and np.all(free > 0))
    ok &= not (captured and not ctx.props.adhesive)
    out.append(Check(
        "contact duration finite", "impact", ok, float(np.max(free)) if len(free) else None, "s (max)",
        "every impact that separates does so after a finite, positive time (captures only for an adhesive model)",
        "physical sanity", f"t_c = {', '.join(fmt(x) for x in tc)} s", fig))
    for key, label in (("restitution", "restitution"), ("duration", "contact duration")):
        refs = [(r[key], r[f"ref_{key}"]) for r in rows if r[f"ref_{key}"] is not None and not r["captured"]]
        if not refs:
            why = ("the model declares no closed form (give it a closed_form_impact method)" if not ctx.closed_form
                   else "the closed form gives no value for it")
            out.append(Check(f"{label} vs closed form", "impact", True, None, "", "|measured - reference| <= 1 % of "
                             "the reference", "none", not_applicable=why, figure=fig))
            continue
        rel = max(abs(a - b) / abs(b) for a, b in refs)
        src = next(r["ref_source"] for r in rows if r["ref_source"])
        out.append(Check(
            f"{label} vs closed form", "impact", rel <= 0.01, rel, "relative",
            f"|measured - reference| <= 1 % of the reference at every speed (measured: extrapolated to dt -> 0 from "
            f"{ctx.steps[0]} and {ctx.steps[1]} steps per contact)",
            f"{src} [{ctx.closed_form_source}]",
            "; ".join(f"v = {fmt(r['speed'])}: {fmt(r[key])} vs {fmt(r[f'ref_{key}'])}" for r in rows
                      if r[f"ref_{key}"] is not None), fig))
    # the figure: e(v), t_c(v), with the references and Hertz's elastic duration for comparison
    v = np.array([r["speed"] for r in rows])
    e_star, _ = hertz_moduli(ctx.material, ctx.material)
    fine_v = np.geomspace(v.min(), v.max(), 50)
    hertz = [hertz_impact(e_star, ctx.radius, ctx.mass, s)["duration"] for s in fine_v]
    s1 = [curve(v, e, "measured (dt -> 0)", "points")]
    s2 = [curve(v, np.where(np.isfinite(tc), tc, np.nan), "measured (dt -> 0)", "points"),
          curve(fine_v, hertz, "Hertz, elastic (same material)", "dashed")]
    if any(r["ref_restitution"] is not None for r in rows):
        s1.append(curve(v, [np.nan if r["ref_restitution"] is None else r["ref_restitution"] for r in rows],
                        "closed form", "line"))
    if any(r["ref_duration"] is not None for r in rows):
        s2.append(curve(v, [np.nan if r["ref_duration"] is None else r["ref_duration"] for r in rows],
                        "closed form", "line"))
    ctx.figures.append(dict(name="impact", title="Normal impact on a wall against the impact speed", panels=[
        panel("coefficient of restitution", "impact speed (m/s)", "e", s1, xscale="log"),
        panel("contact duration", "impact speed (m/s)", "t_c (s)", s2, xscale="log", yscale="log")]))
    out[0].data = {"rows": rows}
    return out
