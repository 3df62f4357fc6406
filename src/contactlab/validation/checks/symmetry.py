"""The ``symmetry`` checks: objectivity (a loaded contact turned as a rigid body), i/j swap
symmetry of the law, and Newton's third law in a two-sphere collision (momentum and angular
momentum conserved).
"""
from __future__ import annotations

import math

import numpy as np

from ...scene import Scene
from ...simulation import Simulation
from ..context import PATH_DENSITY, QUASI_STATIC
from ..formatting import fmt
from ..results import Check
from .common import bond_scale, converging, curve, general_legs, panel

__all__ = ["check_objectivity", "check_swap", "check_momentum"]


def _rotation(axis, angle) -> np.ndarray:
    """Rotation matrix about the unit ``axis`` by ``angle`` (rad), Rodrigues' formula."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def _loaded_state_legs(d, r_):
    """Load normally, then tangentially, then roll and twist (every sense loaded)."""
    return [(d, 0, 0, 0, 0, 0), (d, 0.3 * d, 0.15 * d, 0, 0, 0), (d, 0.3 * d, 0.15 * d, 0.2 * d / r_, -0.1 * d / r_,
                                                                   0.15 * d / r_)]


def _objectivity(ctx, axis, n_rot, history=None, scale=None):
    d = scale or ctx.d_ref
    legs = _loaded_state_legs(d, ctx.radius)
    q, dt = ctx.path(legs, QUASI_STATIC * ctx.v_ref, density=PATH_DENSITY * ctx.d_ref / d)
    hold = 5
    q = np.vstack([q, np.repeat(q[-1:], hold + n_rot, axis=0)])
    n_load = len(q) - hold - n_rot
    angles = np.concatenate([np.zeros(n_load + hold), np.linspace(0.0, 0.5 * math.pi, n_rot + 1)[1:]])
    frames = np.array([_rotation(axis, a) for a in angles])
    tangential = np.zeros((len(q), 3))
    tangential[:, :2] = q[:, 1:3]
    res = ctx.probe(q[:, 0], tangential=tangential, rotation=q[:, 3:6], frame=frames, dt=dt, history=history)
    k0 = n_load + hold - 1
    fl, cl = res.local_force, res.local_couple
    f_ref, c_ref = fl[k0], cl[k0]
    f_err = np.abs(fl[k0:] - f_ref).max() / max(np.linalg.norm(f_ref), 1e-300)
    c_norm = np.linalg.norm(c_ref)
    c_err = np.abs(cl[k0:] - c_ref).max() / c_norm if c_norm > 1e-12 * np.linalg.norm(f_ref) * ctx.radius else 0.0
    e_ref = res.stored_energy[k0]
    e_err = np.abs(res.stored_energy[k0:] - e_ref).max() / max(abs(e_ref), 1e-300)
    diss = float(np.abs(res.dissipation[k0 + 1:]).sum()) / max(abs(e_ref), 1e-300)
    return dict(err=max(f_err, c_err), f_err=f_err, c_err=c_err, e_err=e_err, diss=diss, res=res, k0=k0,
                angles=angles, f_ref=f_ref, c_ref=c_ref)


def check_objectivity(ctx) -> list:
    out = []
    variants = [("", None, None)]
    if ctx.bonded:
        scale = bond_scale(ctx, lambda s: _loaded_state_legs(s, ctx.radius), QUASI_STATIC * ctx.v_ref)
        variants.append((" (bonded)", ctx.bond_history(), scale))
    fig = "objectivity.png"
    panels = []
    for suffix, hist, scale in variants:
        for label, axis in (("about a tangent axis", (1.0, 1.0, 0.0)), ("about the normal", (0.0, 0.0, 1.0))):
            coarse = _objectivity(ctx, axis, 1000, hist, scale)
            fine = _objectivity(ctx, axis, 2000, hist, scale)
            ok, text = converging(coarse["err"], fine["err"], tol=1e-2, floor=1e-9)
            ok_e = fine["e_err"] <= 1e-6 and fine["diss"] <= 1e-6
            out.append(Check(
                f"objectivity: rigid rotation {label}{suffix}", "symmetry", ok and ok_e, fine["err"], "relative",
                "a loaded contact (all senses) turned 90 deg as a rigid body: its force and couple in the contact "
                "frame change by <= 1e-2 of their size at 2000 rotation steps and the change falls at least 1.5 times "
                "from 1000 steps (first-order convergence, or < 1e-9); stored energy kept within 1e-6 and "
                "dissipation <= 1e-6 of it",
                "material frame-indifference: a rigid motion of the pair leaves its state unchanged",
                f"force/couple change {text}; stored energy change {fmt(fine['e_err'])}, dissipation "
                f"{fmt(fine['diss'])} (relative to the stored energy)", fig,
                data={"error_1000": coarse["err"], "error_2000": fine["err"], "force_error": fine["f_err"],
                      "couple_error": fine["c_err"]}))
            r, k0 = fine["res"], fine["k0"]
            deg = np.degrees(fine["angles"][k0:])
            fr = np.linalg.norm(fine["f_ref"])
            panels.append(panel(f"rotation {label}{suffix}", "rotation angle (deg)", "local force / |F|",
                                [curve(deg, r.local_force[k0:, j] / fr, f"F_{'xyz'[j]} (local)") for j in range(3)]
                                + [curve(deg, r.local_couple[k0:, j] / max(np.linalg.norm(fine['c_ref']), 1e-300),
                                         f"C_{'xyz'[j]} (local) / |C|", "dashed") for j in range(3)
                                   if np.linalg.norm(fine["c_ref"]) > 0]))
    ctx.add_panels("objectivity", "Objectivity: a loaded contact turned as a rigid body", panels)
    return out


def check_swap(ctx) -> list:
    out = []
    variants = [("", False)]
    if ctx.bonded:
        variants.append((" (bonded)", True))
    for suffix, bonded in variants:
        d = ctx.d_ref
        if bonded:
            d = bond_scale(ctx, lambda s: general_legs(s, ctx.radius)[:4], ctx.v_ref)
        q, dt = ctx.path(general_legs(d, ctx.radius), ctx.v_ref, density=PATH_DENSITY * ctx.d_ref / d)
        tangential = np.zeros((len(q), 3))
        tangential[:, :2] = q[:, 1:3]
        flip = np.diag([1.0, -1.0, -1.0])                # turns the normal around: i's view -> j's view
        h1 = ctx.bond_history(swap=False) if bonded else None
        h2 = ctx.bond_history(swap=True) if bonded else None
        a = ctx.probe(q[:, 0], tangential=tangential, rotation=q[:, 3:6], dt=dt, swap=None, history=h1)
        b = ctx.probe(q[:, 0], tangential=-(tangential @ flip), rotation=-(q[:, 3:6] @ flip), frame=flip, dt=dt,
                      swap=True, history=h2)
        f_scale = max(np.abs(a.force).max(), 1e-300)
        c_scale = max(np.abs(a.couple).max(), f_scale * ctx.radius)
        e_scale = max(np.abs(a.stored_energy).max(), np.abs(a.dissipated).max(), 1e-300)
        errs = {"force": np.abs(a.force + b.force).max() / f_scale, "couple": np.abs(a.couple + b.couple).max() / c_scale,
                "stored": np.abs(a.stored_energy - b.stored_energy).max() / e_scale,
                "dissipation": np.abs(a.dissipated - b.dissipated).max() / e_scale}
        worst = max(errs.values())
        out.append(Check(
            f"i/j swap symmetry (third law in the law){suffix}", "symmetry", worst <= 1e-9, worst, "relative",
            "the same contact (unequal radii and materials) described from j's side (normal reversed, relative motion "
            "negated, bodies swapped): force and couple on the other body exactly opposite, same stored and "
            "dissipated energy, within 1e-9 of their size",
            "Newton's third law (actio = reactio); the law must not depend on which body is called i",
            ", ".join(f"{k}: {fmt(v)}" for k, v in errs.items()), data=errs))
    return out


def check_momentum(ctx) -> list:
    r1, r2 = ctx.radius, ctx.partner_radius
    scene = Scene(gravity=(0.0, 0.0, 0.0))
    v = ctx.v_ref
    direction = np.array([math.sin(math.radians(35.0)), 0.2, math.cos(math.radians(35.0))])
    direction /= np.linalg.norm(direction)
    scene.add_sphere(position=(0.0, 0.0, 0.0), radius=r1, material=ctx.material, velocity=(0.2 * v, 0.3 * v, 0.5 * v),
                     angular_velocity=(0.3 * v / r1, -0.2 * v / r1, 0.5 * v / r1))
    scene.add_sphere(position=tuple((r1 + r2) * (1.0 + 1e-6) * direction), radius=r2, material=ctx.partner_material,
                     velocity=(-0.1 * v, 0.0, -0.5 * v), angular_velocity=(0.0, 0.4 * v / r2, -0.1 * v / r2))
    sim = Simulation(scene, ctx.model, threads=1, debug=ctx.debug)
    mass = sim.model.mass
    p0, l0 = sim.linear_momentum(), sim.angular_momentum()
    p_scale = float((mass[:, None] * np.abs(sim.state.velocities)).sum())
    x = sim.state.positions
    l_scale = float(np.abs(np.cross(x, mass[:, None] * sim.state.velocities)).sum()
                    + (sim.model.inertia[:, None] * np.abs(sim.state.angular_velocities)).sum())
    dp = dl = 0.0
    started = False
    limit = 50.0 * math.pi * ctx.d_ref / v
    while sim.time < limit:
        sim.run(steps=1)
        dp = max(dp, float(np.abs(sim.linear_momentum() - p0).max()))
        dl = max(dl, float(np.abs(sim.angular_momentum() - l0).max()))
        if sim.n_contacts():
            started = True
        elif started:
            break
    ok = started and dp <= 1e-12 * p_scale and dl <= 1e-10 * l_scale
    return [Check(
        "momentum conservation in a two-sphere collision", "symmetry", ok, max(dp / p_scale, dl / l_scale), "relative",
        "oblique collision of spinning unequal spheres: total linear momentum constant within 1e-12 of sum m|v| and "
        "angular momentum about the origin within 1e-10 of sum (|x x m v| + I|omega|), at every step",
        "Newton's third law: contact forces and couples act on both bodies with opposite signs, through the same "
        "contact point", f"linear {fmt(dp / p_scale)}, angular {fmt(dl / l_scale)}; contact "
        f"{'made' if started else 'NOT made'} ({sim.step} steps)", data={"linear": dp / p_scale, "angular": dl / l_scale})]
