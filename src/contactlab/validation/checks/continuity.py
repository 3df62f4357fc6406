"""The ``continuity`` checks: the normal force at first touch and at separation (quasi-statically
and at the reference impact speed) tends to the force the model declares there.
"""
from __future__ import annotations

import math

import numpy as np

from ..context import QUASI_STATIC
from ..formatting import fmt
from ..results import Check
from .common import curve, panel

__all__ = ["check_continuity"]


def _decay(eps, resid, scale):
    """Continuity criterion: the residual at the smallest overlap is <= 1e-3 of the force scale, or
    falls at least like overlap^0.2 over the last two decades."""
    r = resid / max(scale, 1e-300)
    if r[-1] <= 1e-3:
        return True, float(r[-1]), None
    p = math.log10(max(r[-3], 1e-300) / max(r[-1], 1e-300)) / math.log10(eps[-3] / eps[-1])
    return p >= 0.2, float(r[-1]), p


def check_continuity(ctx) -> list:
    d = ctx.d_ref
    eps = 10.0 ** -np.arange(0, 9)                    # 1 ... 1e-8 of the reference overlap
    overlaps = np.concatenate([[0.0], d * eps[::-1], d * eps[1:], [0.0, -1e-8 * d]])
    runs = {}
    for label, rate in (("quasi-static", QUASI_STATIC * ctx.v_ref), ("at v_ref", ctx.v_ref)):
        t = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(overlaps)))]) / rate
        runs[label] = ctx.probe(overlaps, time=t, wall=True)
    n = len(eps)
    touch_idx = np.arange(n, 0, -1)                   # the loading samples, from 1 down to 1e-8
    sep_idx = np.arange(n, 2 * n)                     # the unloading samples, from 1 down to 1e-8
    out = []
    panels = []
    for event, idx, declared, prop in (("first touch", touch_idx, ctx.props.force_at_touch, "force_at_touch"),
                                       ("separation", sep_idx, ctx.props.force_at_separation, "force_at_separation")):
        parts, oks, data = [], {}, {}
        series = []
        for label, res in runs.items():
            f = res.normal_force
            scale = np.abs(f).max()
            resid = np.abs(f[idx] - declared)
            ok, last, p = _decay(eps, resid, scale)
            oks[label] = ok
            data[label] = {"residual_at_1e-8": last, "decay_exponent": p}
            parts.append(f"{label}: |F - {fmt(declared)} N| at 1e-8 d_ref = {fmt(last)} of max|F|"
                         + (f", decay exponent {fmt(p)}" if p is not None else ""))
            series.append(curve(eps, np.maximum(resid / max(scale, 1e-300), 1e-300), label,
                                "line" if label == "quasi-static" else "dashed"))
        ok = oks["quasi-static"] and (oks["at v_ref"] or ctx.props.viscous_at_touch)
        note = ""
        if not oks["at v_ref"] and ctx.props.viscous_at_touch:
            note = "; the jump at impact speed is the dashpot the model declares (viscous_at_touch)"
        out.append(Check(
            f"force continuous at {event}", "continuity", ok, data["quasi-static"]["residual_at_1e-8"], "relative",
            f"|F_n - F_declared| -> 0 as the overlap -> 0 at {event}: <= 1e-3 of max|F_n| at 1e-8 of the reference "
            "overlap, or falling at least like overlap^0.2 over the last two decades; quasi-statically always, at "
            "the reference impact speed unless the model declares a dashpot acting from first touch",
            f"continuity of the contact force (F_declared = {fmt(declared)} N from {prop} of {ctx.props.source})",
            "; ".join(parts) + note, "continuity.png", data=data))
        panels.append(panel(f"at {event}", "overlap / reference overlap", "|F_n - F_declared| / max|F_n|", series,
                            xscale="log", yscale="log"))
    ctx.figures.append(dict(name="continuity", title="Force near zero overlap (wall contact)", panels=panels))
    return out
