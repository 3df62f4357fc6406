"""Pieces several checks share: figure data (:func:`curve`, :func:`panel`), the discretisation
criterion (:func:`converging`), the work and energy balance along a probe path, the general load
path and the bond's load scale."""
from __future__ import annotations

import math

import numpy as np

from ..context import PATH_DENSITY
from ..formatting import fmt

__all__ = ["curve", "panel", "converging", "path_work", "energy_balance", "general_legs", "bond_scale"]


def curve(x, y, label, kind="line", **extra) -> dict:
    """One series of a figure panel (plain lists: JSON-ready); ``kind`` is line, dashed or points."""
    return dict(x=[float(v) for v in np.asarray(x, dtype=float).ravel()],
                y=[float(v) for v in np.asarray(y, dtype=float).ravel()], label=label, kind=kind, **extra)


def panel(title, xlabel, ylabel, series, xscale="linear", yscale="linear", **extra) -> dict:
    """One panel of a figure: its title, axis labels and scales, and its :func:`curve` series."""
    return dict(title=title, xlabel=xlabel, ylabel=ylabel, series=series, xscale=xscale, yscale=yscale, **extra)


def converging(coarse: float, fine: float, tol: float, floor: float = 1e-8) -> tuple[bool, str]:
    """Discretisation-error criterion: the fine error is at most ``tol`` and at least 1.5 times
    smaller than the coarse one (the error falls as the resolution doubles), or below ``floor``."""
    if fine <= floor:
        return True, f"{fmt(fine)} <= {floor:g} (round-off level)"
    ratio = coarse / fine if fine > 0 else math.inf
    ok = fine <= tol and ratio >= 1.5
    return ok, f"{fmt(fine)} (coarse {fmt(coarse)}, ratio {fmt(ratio)})"


def path_work(res, q):
    """Cumulative work (J) done on the contact along a probe path with the identity frame:
    trapezoid of the force and couple on ``i`` over the increments of ``j`` relative to ``i``."""
    local = np.zeros((len(q), 3))
    local[:, :2] = q[:, 1:3]
    local[:, 2] = -q[:, 0]
    du, dth = np.diff(local, axis=0), np.diff(q[:, 3:6], axis=0)
    f, c = res.force, res.couple
    dw = np.einsum("ij,ij->i", 0.5 * (f[1:] + f[:-1]), du) + np.einsum("ij,ij->i", 0.5 * (c[1:] + c[:-1]), dth)
    return np.concatenate([[0.0], np.cumsum(dw)]), np.abs(dw).sum()


def energy_balance(res, q):
    """Largest |work - (stored change + dissipated)| along the path, relative to the total |work|."""
    w, scale = path_work(res, q)
    resid = w - (res.stored_energy - res.stored_energy[0]) - (res.dissipated - res.dissipation[0])
    return float(np.abs(resid).max() / max(scale, 1e-300)), w, scale


def general_legs(d, r_):
    """Every sense loaded and unloaded, ending separated."""
    return [(d, 0, 0, 0, 0, 0), (d, 0.3 * d, 0.2 * d, 0, 0, 0), (d, 0.3 * d, 0.2 * d, 0.2 * d / r_, -0.1 * d / r_, 0),
            (d, 0.3 * d, 0.2 * d, 0.2 * d / r_, -0.1 * d / r_, 0.2 * d / r_), (0.6 * d, -0.1 * d, 0.1 * d, 0, 0, 0),
            (-0.1 * d, -0.1 * d, 0.1 * d, 0, 0, 0)]


def bond_scale(ctx, legs_for, rate):
    """The largest load scale (<= the reference overlap) at which the bond survives the path."""
    scale = ctx.d_ref
    h0 = ctx.bond_history()
    field_ = ctx.model.bond_field
    for _ in range(40):
        q, dt = ctx.path(legs_for(scale), rate, density=PATH_DENSITY * ctx.d_ref / scale)
        res = ctx.probe_path(q, dt, history=h0)
        if np.all(res.history[:, field_] > 0):
            return scale
        scale /= 4.0
    raise RuntimeError("the bond breaks under any load the battery tried")
