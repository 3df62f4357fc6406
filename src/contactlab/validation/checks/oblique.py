"""The ``oblique`` checks: oblique impact on a wall against the incident angle.  Tangential
restitution, rebound spin and rebound angle, with the rigid-body Coulomb limits (Maw, Barber and
Fawcett 1976) drawn for comparison and, in gross sliding, checked.
"""
from __future__ import annotations

import math

import numpy as np

from ..formatting import fmt
from ..results import Check
from .common import curve, panel

__all__ = ["check_oblique"]


def check_oblique(ctx) -> list:
    vn = ctx.v_ref
    study = ctx.convergence()
    t_est = study["default"]["duration"]
    rows = []
    for angle in ctx.angles:
        ctx.log(f"  oblique impact at {fmt(angle)} deg")
        vt = vn * math.tan(math.radians(angle))
        r = ctx.wall_impact(vn, vt, steps=ctx.steps[0], t_est=t_est)
        v, w = r["velocity"], r["spin"]
        slip_in = vt                                     # contact-point velocity before (no spin)
        slip_out = v[0] - ctx.radius * w[1]
        rows.append({"angle": angle, "vt": vt, "e_n": r["restitution"], "vx": float(v[0]), "vz": float(v[2]),
                     "spin": float(w[1]), "e_t": -slip_out / slip_in, "kinetic_ratio": r["kinetic_ratio"],
                     "rebound_angle": math.degrees(math.atan2(v[0], v[2])) if v[2] > 0 else float("nan"),
                     "max_overlap": r["max_overlap"], "captured": r["captured"],
                     "pulled": r["min_force"] < 0.0})
    fig = "oblique.png"
    out = []
    ke = max(r["kinetic_ratio"] for r in rows)
    out.append(Check(
        "oblique impact creates no energy", "oblique", ke <= 1.0 + 1e-3, ke, "KE after / before (max)",
        "translational + rotational kinetic energy after the impact <= 1 + 1e-3 times that before, at every angle",
        "energy conservation", "; ".join(f"{fmt(r['angle'])} deg: {fmt(r['kinetic_ratio'])}" for r in rows), fig))
    mu = ctx.props.sliding_friction
    sliding = []
    if mu is not None and mu > 0:
        for r in rows:
            impulse = mu * (1.0 + r["e_n"]) * vn        # rigid-body sliding: tangential impulse / m
            r["sliding"] = r["vt"] > 2.0 * 3.5 * impulse and not r["captured"] and not r["pulled"]
            if r["sliding"]:
                dv_err = abs((r["vt"] - r["vx"]) - impulse) / impulse
                spin_ref = 2.5 * impulse / ctx.radius
                spin_err = abs(r["spin"] - spin_ref) / spin_ref
                sliding.append((r["angle"], dv_err, spin_err, r["max_overlap"] / ctx.radius))
    if mu is None or mu <= 0:
        why = ("the model declares no plain Coulomb sliding coefficient (ModelProperties.sliding_friction is None)"
               if mu is None else "frictionless")
        out.append(Check("gross sliding vs rigid-body Coulomb theory", "oblique", True, None, "",
                         "tangential impulse = mu (1 + e) m v_n", "Maw, Barber and Fawcett (1976)", figure=fig,
                         not_applicable=why))
    elif not sliding:
        out.append(Check("gross sliding vs rigid-body Coulomb theory", "oblique", True, None, "",
                         "tangential impulse = mu (1 + e) m v_n", "Maw, Barber and Fawcett (1976)", figure=fig,
                         not_applicable="no incident angle in gross sliding (tan(angle) > 7 mu (1 + e)) without "
                                        "the normal force pulling"))
    else:
        dv = max(s[1] for s in sliding)
        spin_ok = True
        spin_text = ""
        if ctx.props.rolling_resistance:
            spin_text = "rebound spin not checked (the law resists rolling)"
        else:
            spin_ok = all(s[2] <= s[3] + 1e-3 for s in sliding)
            spin_text = ("rebound spin vs 5/2 mu (1 + e) v_n / R: " + ", ".join(
                f"{fmt(s[0])} deg: {fmt(s[2])} (lever-arm allowance {fmt(s[3] + 1e-3)})" for s in sliding))
        out.append(Check(
            "gross sliding vs rigid-body Coulomb theory", "oblique", dv <= 1e-3 and spin_ok, dv, "relative",
            "in gross sliding (tan(angle) > 7 mu (1 + e)) with a normal force that never pulls: tangential velocity "
            "change = mu (1 + e) v_n within 1e-3; "
            "rebound spin = 5/2 mu (1 + e) v_n / R within d_max/R + 1e-3 (the lever arm is R - d/2), unless the law "
            "resists rolling; e is the measured normal restitution",
            f"rigid-body Coulomb impact, Maw, Barber and Fawcett (1976); mu = {fmt(mu)} from "
            f"{ctx.props.source}", f"tangential: {', '.join(f'{fmt(s[0])} deg: {fmt(s[1])}' for s in sliding)}; "
            + spin_text, fig))
    # figure: e_t, spin, rebound angle against the incident angle, rigid-body limits
    ang = np.array([r["angle"] for r in rows])
    fine = np.linspace(max(ang.min(), 0.5), min(ang.max(), 89.5), 200)
    e_mean = float(np.mean([r["e_n"] for r in rows]))
    tan_in = np.tan(np.radians(fine))
    s1 = [curve(ang, [r["e_t"] for r in rows], "measured", "points")]
    s2 = [curve(ang, [r["spin"] * ctx.radius / vn for r in rows], "measured", "points")]
    s3 = [curve(ang, [r["rebound_angle"] for r in rows], "measured", "points")]
    mu_line = mu if mu else (getattr(ctx.model, "friction", None) if isinstance(getattr(ctx.model, "friction", None),
                                                                                float) else None)
    if mu_line:
        j = mu_line * (1.0 + e_mean)
        slide = tan_in > 3.5 * j
        e_t_rigid = np.where(slide, -1.0 + 3.5 * j / tan_in, 0.0)
        spin_rigid = np.where(slide, 2.5 * j, 5.0 / 7.0 * tan_in)
        tan_out = np.where(slide, (tan_in - j) / e_mean, 5.0 / 7.0 * tan_in / e_mean)
        lab = f"rigid body, Coulomb mu = {fmt(mu_line)} (sliding / rolling)"
        s1.append(curve(fine, e_t_rigid, lab, "dashed"))
        s2.append(curve(fine, spin_rigid, lab, "dashed"))
        s3.append(curve(fine, np.degrees(np.arctan(tan_out)), lab, "dashed"))
    ctx.figures.append(dict(name="oblique", title=f"Oblique impact on a wall at v_n = {fmt(vn)} m/s", panels=[
        panel("tangential restitution (contact point)", "incident angle (deg)", "e_t", s1),
        panel("rebound spin", "incident angle (deg)", "R omega / v_n", s2),
        panel("rebound angle", "incident angle (deg)", "rebound angle (deg)", s3)]))
    out[0].data = {"rows": rows}
    return out
