"""The ``timestep`` checks: time-step convergence of the impact results; the declared critical
time step against the stiffness the law shows; a run at 0.95 of it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...errors import SimulationBlowUp, StabilityWarning
from ...laws.base import PairCase
from ...scene import Scene
from ...simulation import Simulation
from ..context import QUASI_STATIC, SIM_MAX_OVERLAP
from ..formatting import fmt
from ..results import Check
from .common import curve, panel

__all__ = ["check_convergence", "check_critical_dt", "check_stable_run"]


def check_convergence(ctx) -> list:
    out = []
    study = ctx.convergence()
    fig = "timestep.png"
    if study["captured"]:
        out.append(Check("time-step convergence of the impact", "timestep", bool(ctx.props.adhesive), None, "",
                         "e and t_c converge as dt halves", "Richardson", figure=fig,
                         details="the reference impact ends in capture",
                         not_applicable="captured at the reference speed" if ctx.props.adhesive else None))
    else:
        oks, parts = [], []
        for key in ("restitution", "duration"):
            s = study[key]
            x, diffs = s["values"], s["differences"]
            halvings = len(diffs) - 1
            # converging at an order >= 0.58 from the largest change of the study on (a coarse run that
            # lands close to the limit by chance makes its own change small, and the changes then grow
            # before they fall), or converged: every change below 1e-4 of the value (where the first
            # touch falls within a step makes an impact's result jitter at about that level, so an
            # order measured on such changes is noise)
            top = int(np.argmax(diffs))
            ok = bool(top < halvings and diffs[-1] <= diffs[top] / 1.5 ** (halvings - top)
                      or max(diffs) <= 1e-4 * abs(x[-1]))
            oks.append(ok)
            dflt = study["default"][key]
            parts.append(f"{key}: {', '.join(fmt(v) for v in x)} at {', '.join(map(str, study['steps']))} steps per "
                         f"contact; change per halving {fmt(diffs[0])} -> {fmt(diffs[-1])}, average order "
                         f"{fmt(s['order'])}; extrapolated {fmt(s['extrapolated'])}; at the default dt "
                         f"({fmt(study['default']['dt'])} s) {fmt(dflt)}, "
                         f"{fmt(abs(dflt - s['extrapolated']) / abs(s['extrapolated']))} from it")
        out.append(Check(
            "time-step convergence of the impact", "timestep", all(oks), study["restitution"]["order"],
            "average order (e)",
            f"the change of e and of t_c per halving of dt falls by at least 1.5^m over the m halvings of the study "
            f"({study['steps'][0]} to {study['steps'][-1]} steps per contact: an average order >= 0.58), counted from "
            f"the largest change on, or every "
            "change is below 1e-4 of the value (converged to the jitter of where the first touch falls in a step)", "a consistent time integration converges as dt -> 0 (Richardson)",
            "; ".join(parts), fig, data={k: {"values": study[k]["values"], "order": study[k]["order"],
                                             "extrapolated": study[k]["extrapolated"]}
                                         for k in ("restitution", "duration")} | {"steps": study["steps"]}))
        ns = np.array(study["steps"], dtype=float)
        default = study["default"]
        n_default = default["duration"] / default["dt"]
        panels = []
        for key, unit in (("restitution", "e"), ("duration", "t_c (s)")):
            x = study[key]["values"]
            panels.append(panel(key, "steps per contact", unit, [
                curve(ns, x, "measured", "points"),
                curve([ns[0], ns[-1]], [study[key]["extrapolated"]] * 2, "extrapolated to dt -> 0", "dashed"),
                curve([n_default], [default[key]], "default time step", "points")], xscale="log"))
        panels.append(panel("change per halving of dt", "steps per contact", "|change| / value", [
            curve(ns[1:], study[key]["differences"] / abs(study[key]["values"][-1]), key, "points")
            for key in ("restitution", "duration")], xscale="log", yscale="log"))
        ctx.figures.append(dict(name="timestep", title=f"Impact at {fmt(ctx.v_ref)} m/s against the time step",
                                panels=panels))
    return out


def _stiffness(ctx, history, overlap, wall=False):
    """Largest one-sided finite-difference stiffness of each sense at ``overlap`` from ``history``
    (quasi-static): normal, tangential (N/m), rolling, twisting (N m/rad)."""
    h = 1e-6 * max(overlap, ctx.d_ref)
    slow = h / (QUASI_STATIC * ctx.v_ref)
    base = np.array([overlap, 0, 0, 0, 0, 0], dtype=float)
    out = []
    for c, scale in ((0, 1.0), (1, 1.0), (3, 1.0 / ctx.radius), (5, 1.0 / ctx.radius)):
        best = 0.0
        for sign in (1.0, -1.0):
            q = np.array([base, base])
            q[1, c] += sign * h * scale
            res = ctx.probe_path(q, slow, history=history, wall=wall)
            fl, cl = res.local_force, res.local_couple
            gen = [-fl[:, 2], fl[:, 0], None, cl[:, 0], None, cl[:, 2]][c]
            best = max(best, abs(gen[1] - gen[0]) / (h * scale))
        out.append(best)
    return out


def check_critical_dt(ctx) -> list:
    out = []
    r_, m, inertia = ctx.radius, ctx.mass, ctx.inertia
    d_case = SIM_MAX_OVERLAP * r_
    rows = []
    cases = [("two spheres", False, None)]
    if ctx.bonded:
        cases.append(("two bonded spheres", False, "bonded"))
    cases.append(("sphere and wall", True, None))
    for label, wall, bonded in cases:
        case = PairCase(ctx.material, ctx.material, r_, math.inf if wall else r_, m, math.inf if wall else m,
                        inertia, math.inf if wall else inertia, d_case)
        declared = float(ctx.model.stability_limit(case))
        if bonded:
            hist = ctx.bond_history(overlap=d_case)
        else:
            q, dt = ctx.path([(d_case, 0, 0, 0, 0, 0)], QUASI_STATIC * ctx.v_ref, density=200 * ctx.d_ref / d_case)
            hist = ctx.probe_path(q, dt, wall=wall).history[-1]
        k_n, k_t, k_r, k_w = _stiffness(ctx, hist, d_case, wall=wall)
        omega2 = max(k_n / case.mass, k_t / case.tangential_mass, k_r / case.rotational_inertia,
                     k_w / case.rotational_inertia)
        bound = 2.0 / math.sqrt(omega2) if omega2 > 0 else math.inf
        rows.append(dict(case=label, declared=declared, bound=bound, k_n=k_n, k_t=k_t, k_r=k_r, k_w=k_w))
    ok = all(r["declared"] <= r["bound"] * (1.0 + 1e-6) for r in rows)
    worst = max(r["declared"] / r["bound"] for r in rows)
    out.append(Check(
        "declared critical time step vs the law's stiffness", "timestep", ok, worst, "declared / 2/omega_max (max)",
        f"the model's stability limit (at the engine's reference overlap {SIM_MAX_OVERLAP:g} R) <= 2/omega_max "
        "(x 1 + 1e-6), omega_max^2 the largest of k_n/m*, k_t/m_t, k_r/I*, k_w/I* with the stiffnesses measured by "
        "finite differences of the law at that overlap (damping only lowers the true limit)",
        "velocity Verlet is stable for omega dt < 2 (undamped oscillator)",
        "; ".join(f"{r['case']}: declared {fmt(r['declared'])} s, 2/omega_max {fmt(r['bound'])} s (k_n "
                  f"{fmt(r['k_n'])}, k_t {fmt(r['k_t'])} N/m, k_r {fmt(r['k_r'])}, k_w {fmt(r['k_w'])} N m/rad)"
                  for r in rows), data={"rows": rows}))
    return out


def check_stable_run(ctx) -> list:
    """A sphere pressed on a wall by a strong gravity, released at touch, at 0.95 of the declared limit;
    bonded models also a bonded pair oscillating."""
    r_ = ctx.radius
    d, f = ctx.loading_curve
    d_static = 0.4 * SIM_MAX_OVERLAP * r_
    f_static = float(np.interp(d_static, d, f))
    runs = []
    if f_static > 0:
        runs.append(("sphere on a wall under gravity", None))
    if ctx.bonded:
        runs.append(("bonded pair", "bond"))
    if not runs:
        return [Check("stable at 0.95 x the declared critical time step", "timestep", True, None, "", "no blow-up",
                      "velocity Verlet", not_applicable="the law exerts no repulsive force to press a sphere on a wall")]
    # Verlet's measured energy of an undamped oscillator at omega dt = h differs from its conserved
    # (shadow) energy by up to h^2 / (4 - h^2) times the oscillation energy: 9.3 at h = 0.95 x 2
    allowance = 1.9**2 / (4.0 - 1.9**2)
    steps = 200 if ctx.debug else 2000
    parts, ok_all, data = [], True, {}
    for label, kind in runs:
        amp = 0.1 * ctx.d_ref
        for _attempt in range(4):
            scene = Scene(gravity=(0.0, 0.0, 0.0 if kind else -f_static / ctx.mass))
            if kind:
                scene.add_sphere(position=(0.0, 0.0, 0.0), radius=r_, material=ctx.material)
                scene.add_sphere(position=(0.0, 0.0, 2.0 * r_), radius=r_, material=ctx.material)
            else:
                # released at rest at half the static overlap: it oscillates between 1/2 and 3/2 of
                # it and never grazes separation (repeated touch-downs would add the onset errors of
                # a penalty contact, which the continuity and column checks cover, to this check)
                scene.add_sphere(position=(0.0, 0.0, r_ - 0.5 * d_static), radius=r_, material=ctx.material)
                scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=ctx.material)
            # the law's own declared limit (a single contact), whatever the bound of the contacts
            # present says: this run checks the declaration (and the watchdog does not stop it)
            sim = Simulation(scene, ctx.model, dt=None, threads=1, debug=ctx.debug, initial_overlap_tolerance=0.05,
                             allow_unstable_dt=True, energy_watchdog=None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", StabilityWarning)
                sim.dt = 0.95 * sim.contact_limit
            if kind:
                sim.bond(pairs=np.array([[0, 1]]))
                k_n = _stiffness(ctx, ctx.bond_history(), 0.0)[0]
                sim.set_velocity(1, (0.0, 0.0, amp * math.sqrt(2.0 * k_n / ctx.mass)))
                scale = 0.5 * ctx.mass * float(sim.velocities[1] @ sim.velocities[1])
            else:
                scale = f_static * d_static       # work of gravity to the static overlap
            errs, blow = [], None
            try:
                # every step: the error of a bounded oscillation beats against any coarser sampling,
                # which can make the first half's samples look small and the error seem to grow
                for _ in range(steps):
                    sim.run(steps=1)
                    errs.append(abs(sim.energy()["balance_error"]))
            except SimulationBlowUp as exc:
                blow = str(exc).splitlines()[0]
            intact = bool(sim.bonds()["intact"].all()) if kind else True
            if intact or blow:
                break
            amp /= 10.0                      # the bond broke: a smaller oscillation
        if blow:
            ok = False
            text = f"{label}: BLOW-UP: {blow}"
        else:
            half = len(errs) // 2
            first, second, worst = max(errs[:half]), max(errs[half:]), max(errs)
            ok = worst <= allowance * scale and second <= 2.0 * first + 1e-12 * scale
            text = (f"{label}: {steps} steps at dt = {fmt(sim.dt)} s; largest energy error {fmt(worst / scale)} of "
                    f"the oscillation energy {fmt(scale)} J (first half {fmt(first / scale)}, second half "
                    f"{fmt(second / scale)})" + ("" if intact else "; the bond broke"))
        ok_all &= ok
        parts.append(text)
        data[label] = {"ok": ok}
    return [Check(
        "stable at 0.95 x the declared critical time step", "timestep", ok_all, None, "",
        f"a sphere pressed onto a wall by gravity to a static overlap of {0.4 * SIM_MAX_OVERLAP:g} R, released at "
        f"rest at half of it (and, for bonded models, a bonded pair oscillating), {steps} steps at 0.95 of the Simulation's "
        f"stability limit: no blow-up, the energy error stays below h^2/(4 - h^2) = {fmt(allowance)} times the "
        "oscillation energy (h = omega dt = 1.9: the largest deviation of Verlet's measured energy from its conserved "
        "one) and does not grow (second half <= 2 x first half)",
        "velocity Verlet is stable below the critical step", "; ".join(parts), data=data)]
