"""The validation battery: check any contact model the way the literature checks contact models.

``validate(model)`` runs a fixed set of experiments on a :class:`~contactlab.models.ContactModel`
(built-in or user-defined) and marks every check pass/fail against a stated criterion:

* ``hysteresis``: force-overlap loop under a prescribed load-unload-reload-separate path
  (quasi-static and at the reference impact speed); energy dissipated per cycle; the loop's
  work equals the energy the law books (stored + dissipated) and is never negative;
* ``impact``: normal impact on a wall over a range of speeds: restitution and contact duration,
  against the model's closed form where one exists, else physical sanity (``0 <= e <= 1``, finite
  duration, or a capture for an adhesive model);
* ``oblique``: oblique impact on a wall against the incident angle: tangential restitution, rebound
  spin and rebound angle, with the rigid-body Coulomb limits (Maw, Barber and Fawcett 1976) drawn for
  comparison and, in gross sliding, checked;
* ``symmetry``: objectivity (a loaded contact turned as a rigid body), i/j swap symmetry of the law
  and Newton's third law in a two-sphere collision (momentum and angular momentum conserved);
* ``continuity``: force at first touch and at separation (quasi-static and at impact speed);
* ``energy``: work done on the contact along a path in every sense equals stored plus dissipated
  energy; the force equals the gradient of the stored energy (finite differences) wherever the law
  books no dissipation;
* ``timestep``: time-step convergence of the impact results; the declared critical time step
  against the stiffness the law shows, and a run at 0.95 of it;
* ``column``: energy balance of a small granular column settling under gravity.

Every number comes from the model's law through the public probe (:func:`contactlab.probe`) and the
engine (:class:`contactlab.Simulation`); nothing in the battery depends on a model's name.  What a
check must allow (an adhesive normal force, a dashpot acting from first touch, the friction limit
of gross sliding) comes from the model's declared *properties* (:class:`ModelProperties`), and the
impact references from the model's *closed form* (:func:`closed_form_for`): a model supplies them
through ``validation_properties()`` and ``closed_form_impact(material, radius, speed)`` methods; for
the built-in models a small table below holds them.

The scales are the model's own: the quasi-static loading curve on a wall gives the impact speed
that compresses the contact to 5 % of the radius (``v_max``); the speeds span ``v_max/100`` to
``v_max`` and the reference speed is ``v_max/10`` (its overlap is the reference overlap).
"""
from __future__ import annotations

import math
import time as _time
import traceback
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .._arguments import checked_call, did_you_mean
from ..errors import ContactlabError, InputError, SimulationBlowUp
from ..laws.base import ContactModel, PairCase
from ..materials import Material
from ..probe import DEFAULT_PROBE_MATERIAL, probe

__all__ = ["validate", "ValidationReport", "Check", "ModelProperties", "GROUPS", "properties_for", "closed_form_for",
           "BUILTIN_PROPERTIES", "BUILTIN_CLOSED_FORMS"]

#: the check groups, in the order they run and appear in the report
GROUPS = ("hysteresis", "impact", "oblique", "symmetry", "continuity", "energy", "timestep", "column")

#: fraction of the radius the fastest impact of the sweep compresses the contact to (quasi-statically)
MAX_SWEEP_OVERLAP = 0.05
#: the Simulation's default max_overlap (the stability limit is evaluated at this overlap)
SIM_MAX_OVERLAP = 0.1
#: probe samples per reference overlap of path length (fine and coarse: the coarse run shows convergence)
PATH_DENSITY = 1000
#: quasi-static rate as a fraction of the reference impact speed
QUASI_STATIC = 1e-9


# ============================================================================ records
@dataclass
class Check:
    """One check: what was measured (``value``, ``unit``), the criterion, the reference it is
    compared with, whether it passed.  A check that does not apply to the model (``not_applicable``
    gives the reason) counts as passed."""

    name: str
    group: str
    passed: bool
    value: float | None
    unit: str
    criterion: str
    reference: str
    details: str = ""
    figure: str | None = None
    not_applicable: str | None = None
    data: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "n/a" if self.not_applicable else ("pass" if self.passed else "FAIL")

    def to_dict(self) -> dict:
        return {"name": self.name, "group": self.group, "status": self.status.lower(), "passed": bool(self.passed),
                "value": _jsonable(self.value), "unit": self.unit, "criterion": self.criterion,
                "reference": self.reference, "details": self.details, "figure": self.figure,
                "not_applicable": self.not_applicable, "data": _jsonable(self.data)}

    def line(self) -> str:
        """One line for a terminal: status, group, name, value."""
        value = "" if self.value is None else f" = {_fmt(self.value)}{(' ' + self.unit) if self.unit else ''}"
        why = f" ({self.not_applicable})" if self.not_applicable else ""
        return f"{self.status:>4}  {self.group:<10}  {self.name}{value}{why}"


@dataclass(frozen=True)
class ModelProperties:
    """What a model declares about itself, and what the battery's criteria then allow.

    adhesive : bool
        The normal force can pull the bodies together (adhesion, or a dashpot without clipping):
        a slow impact may end in capture, and friction in gross sliding is not ``mu`` times the
        (repulsive) normal impulse.
    force_at_touch, force_at_separation : float
        Quasi-static normal force (N, > 0 repulsive) the law exerts at zero overlap when a contact
        forms and when it is unloaded to zero overlap (0 for a continuous law; e.g. ``-f_adh`` for a
        constant pull-off force).
    viscous_at_touch : bool
        A dashpot acts from first touch (force ``c v`` at zero overlap, e.g. the linear
        spring-dashpot): the force jumps at touch at a finite approach speed; only its quasi-static
        part must then be continuous.
    sliding_friction : float or None
        Coulomb coefficient of gross sliding on the normal force (the dynamic one), for the
        rigid-body sliding limit of an oblique impact (checked on the impacts in which the normal
        force never pulls); ``None`` when the law's friction limit is not proportional to the
        normal force (the limit is then drawn for comparison only).
    rolling_resistance : bool
        The law resists rolling with a couple (the rigid-body spin of a sliding impact then does
        not apply).
    source : str
        Where the declaration comes from.
    """

    adhesive: bool = False
    force_at_touch: float = 0.0
    force_at_separation: float = 0.0
    viscous_at_touch: bool = False
    sliding_friction: float | None = None
    rolling_resistance: bool = False
    source: str = "defaults (the model declares no properties)"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("adhesive", "force_at_touch", "force_at_separation", "viscous_at_touch",
                                              "sliding_friction", "rolling_resistance", "source")}


@dataclass
class ValidationReport:
    """The result of :func:`validate`: every check, the figures' data, the settings and scales."""

    model_name: str
    model_repr: str
    parameters: dict
    properties: dict
    closed_form: str | None
    settings: dict
    scales: dict
    checks: list
    figures: list
    elapsed: float = 0.0
    written_to: str | None = None

    @property
    def passed(self) -> bool:
        """True when every check passed (or does not apply)."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list:
        return [c for c in self.checks if not c.passed]

    def summary(self) -> dict:
        """Plain data (the ``summary.json`` of :meth:`write`)."""
        counts = {s: sum(1 for c in self.checks if c.status.lower() == s) for s in ("pass", "fail", "n/a")}
        return {"model": self.model_name, "model_repr": self.model_repr, "parameters": _jsonable(self.parameters),
                "properties": _jsonable(self.properties), "closed_form": self.closed_form,
                "settings": _jsonable(self.settings), "scales": _jsonable(self.scales), "passed": self.passed,
                "counts": counts, "elapsed_seconds": round(self.elapsed, 3),
                "checks": [c.to_dict() for c in self.checks]}

    def write(self, out_dir) -> "object":
        """Write ``report.html``, ``summary.json`` and the PNG figures into ``out_dir``; returns its path."""
        from .report import write_report

        path = write_report(self, out_dir)
        self.written_to = str(path)
        return path

    def lines(self) -> list[str]:
        return [c.line() for c in self.checks]

    def __str__(self) -> str:
        head = f"{self.model_repr}: {'PASS' if self.passed else 'FAIL'} ({len(self.failed)} of {len(self.checks)} checks failed)"
        return "\n".join([head] + self.lines())


# ============================================================================ small helpers
def _fmt(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if x != x:
        return "nan"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    if x is None or isinstance(x, str):
        return x
    return str(x)


def _rotation(axis, angle) -> np.ndarray:
    """Rotation matrix about the unit ``axis`` by ``angle`` (rad), Rodrigues' formula."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def _sphere_mass(material: Material, radius: float) -> float:
    return 4.0 / 3.0 * math.pi * radius**3 * material.density


def _series(x, y, label, kind="line", **extra) -> dict:
    return dict(x=[float(v) for v in np.asarray(x, dtype=float).ravel()],
                y=[float(v) for v in np.asarray(y, dtype=float).ravel()], label=label, kind=kind, **extra)


def _panel(title, xlabel, ylabel, series, xscale="linear", yscale="linear", **extra) -> dict:
    return dict(title=title, xlabel=xlabel, ylabel=ylabel, series=series, xscale=xscale, yscale=yscale, **extra)


def _converging(coarse: float, fine: float, tol: float, floor: float = 1e-8) -> tuple[bool, str]:
    """Discretisation-error criterion: the fine error is at most ``tol`` and at least 1.5 times
    smaller than the coarse one (the error falls as the resolution doubles), or below ``floor``."""
    if fine <= floor:
        return True, f"{_fmt(fine)} <= {floor:g} (round-off level)"
    ratio = coarse / fine if fine > 0 else math.inf
    ok = fine <= tol and ratio >= 1.5
    return ok, f"{_fmt(fine)} (coarse {_fmt(coarse)}, ratio {_fmt(ratio)})"


# ============================================================================ properties and closed forms
def _props_hertz_mindlin(m) -> dict:
    return dict(sliding_friction=m.friction, rolling_resistance=m.rolling_friction > 0.0)


def _props_linear(m) -> dict:
    return dict(viscous_at_touch=m.restitution < 1.0, sliding_friction=m.friction,
                rolling_resistance=m.rolling_friction > 0.0)


def _ssc_hysteresis_factor(impact_model: int, e: float) -> float:
    """``lambda v_- / k_c`` of spec 000 for impact models 1 and 2 (0 for model 0), from the spec's
    formulas: Hunt-Crossley ``3/2 (e - 1)``; Carvalho-Martins ``3/2 (e - 1)(11 - e)/(1 + 9 e)`` for
    ``e > 1/3``, Gonthier et al. ``(e^2 - 1)/e`` otherwise."""
    if impact_model == 1:
        return 1.5 * (e - 1.0)
    if impact_model == 2:
        return 1.5 * (e - 1.0) * (11.0 - e) / (1.0 + 9.0 * e) if e > 1.0 / 3.0 else (e * e - 1.0) / e
    return 0.0


def _props_ssc(m) -> dict:
    edinburgh = m.impact_model == 0 and m.contact_plasticity_ratio > 0.0
    pull_off = m.constant_pull_off_force if edinburgh else 0.0
    adhesion = edinburgh and (m.adhesion_coefficient > 0.0 or pull_off > 0.0)
    # the hysteretic term k D^n (1 + |H| d'/v) pulls during restitution when |H| > 1
    strong = abs(_ssc_hysteresis_factor(m.impact_model, m.restitution_coefficient)) > 1.0
    pulls = adhesion or m.contact_damping > 0.0 or strong
    # friction mu_d |f_n| (regularised below v_reg): plain Coulomb while the normal force does not pull
    # (the oblique check uses only impacts in which it never pulled)
    return dict(adhesive=pulls, force_at_touch=-pull_off, force_at_separation=-pull_off,
                viscous_at_touch=m.contact_damping > 0.0, sliding_friction=m.dynamic_friction)


def _props_luding(m) -> dict:
    pulls = m.ka_div_kn > 0.0 or m.visc_n > 0.0
    return dict(adhesive=pulls, viscous_at_touch=m.visc_n > 0.0,
                # the sliding limit is tan_phi * dyn (f_n + k_c delta): with adhesion it is not
                # proportional to the normal force
                sliding_friction=None if m.ka_div_kn > 0.0 else m.tan_phi * m.dyn_div_stat,
                rolling_resistance=m.kr_div_kn > 0.0 and (m.stat_r > 0.0 or m.visc_r > 0.0))


def _props_ice(m) -> dict:
    return dict(sliding_friction=m.tan_phi, rolling_resistance=m.alpha_r > 0.0 and m.mu > 0.0)


def _props_parallel_bond(m) -> dict:
    inner = properties_for(m.contact)
    return {k: v for k, v in inner.to_dict().items() if k != "source"}


def _builtin_tables():
    from ..laws.hertz_mindlin import HertzMindlin
    from ..laws.ice import Ice
    from ..laws.linear_spring_dashpot import LinearSpringDashpot
    from ..laws.luding import Luding
    from ..laws.parallel_bond import ParallelBond
    from ..laws.sphere_sphere_contact import SphereSphereContact

    props = {HertzMindlin: _props_hertz_mindlin, LinearSpringDashpot: _props_linear, SphereSphereContact: _props_ssc,
             Luding: _props_luding, Ice: _props_ice, ParallelBond: _props_parallel_bond}
    forms = {HertzMindlin: _closed_hertz_mindlin, LinearSpringDashpot: _closed_linear, SphereSphereContact: _closed_ssc,
             Luding: _closed_luding, Ice: _closed_ice, ParallelBond: _closed_parallel_bond}
    return props, forms


class _LazyTable(dict):
    """The built-in table, filled on first use (keys are model classes; exact type, not subclasses:
    a subclass may change the law)."""

    def __init__(self, which):
        super().__init__()
        self._which = which

    def _fill(self):
        if not super().__len__():
            self.update(_builtin_tables()[self._which])

    def get(self, key, default=None):
        self._fill()
        return super().get(key, default)

    def __contains__(self, key):
        self._fill()
        return super().__contains__(key)

    def __len__(self):
        self._fill()
        return super().__len__()

    def __iter__(self):
        self._fill()
        return super().__iter__()

    def __getitem__(self, key):
        self._fill()
        return super().__getitem__(key)


#: declared properties of the built-in models: class -> function(model) -> dict of ModelProperties fields
BUILTIN_PROPERTIES = _LazyTable(0)
#: closed-form impacts of the built-in models: class -> function(model, material, radius, speed) -> dict
BUILTIN_CLOSED_FORMS = _LazyTable(1)


def properties_for(model: ContactModel, overrides: dict | None = None) -> ModelProperties:
    """The model's declared :class:`ModelProperties`: its ``validation_properties`` (a method
    returning a dict, or a dict), else the built-in table, else the defaults; ``overrides`` last."""
    values, source = {}, None
    own = getattr(model, "validation_properties", None)
    if own is not None:
        values = dict(own() if callable(own) else own)
        source = f"{type(model).__name__}.validation_properties"
    elif type(model) in BUILTIN_PROPERTIES:
        values = dict(BUILTIN_PROPERTIES[type(model)](model))
        source = f"built-in table (contactlab.validation.battery.BUILTIN_PROPERTIES[{type(model).__name__}])"
    if overrides:
        values.update(overrides)
        source = (source + " + " if source else "") + "validate(properties=...)"
    known = set(ModelProperties.__dataclass_fields__) - {"source"}
    bad = sorted(set(values) - known)
    if bad:
        named = ", ".join(f"{b!r}{did_you_mean(b, sorted(known))}" for b in bad)
        raise InputError(f"unknown model properties {named}; known: {', '.join(sorted(known))}")
    out = ModelProperties(**values)
    return replace(out, source=source) if source else out


def closed_form_for(model: ContactModel) -> tuple[Callable | None, str | None]:
    """``(function(material, radius, speed) -> {'restitution', 'duration', 'source'}, description)``
    for a sphere of ``radius`` and ``material`` hitting a plane wall of the same material at the
    normal ``speed``: the model's own ``closed_form_impact``, else the built-in table, else
    ``(None, None)``."""
    own = getattr(model, "closed_form_impact", None)
    if callable(own):
        return own, f"{type(model).__name__}.closed_form_impact"
    table = BUILTIN_CLOSED_FORMS.get(type(model))
    if table is not None:
        return (lambda material, radius, speed: table(model, material, radius, speed)), (
            f"built-in table (contactlab.validation.battery.BUILTIN_CLOSED_FORMS[{type(model).__name__}])")
    return None, None


def _ode_impact(force, mass: float, speed: float, t_scale: float) -> dict:
    """Normal impact of a body of ``mass`` at ``speed`` from the 1-DOF equation of motion
    ``m d'' = -force(d, d', d_max)`` (``d`` the overlap, ``d_max`` the largest so far), integrated by
    SciPy (DOP853, rtol 1e-10) from touch until the overlap is zero again: restitution
    (separation over approach speed) and duration; ``captured`` if it never separates."""
    from scipy.integrate import solve_ivp

    d_scale = speed * t_scale
    opts = dict(method="DOP853", rtol=1e-10, atol=[1e-13 * d_scale, 1e-13 * speed], max_step=t_scale / 400.0)

    def turn(_t, y):
        return y[1]

    turn.terminal, turn.direction = True, -1
    load = solve_ivp(lambda _t, y: (y[1], -force(y[0], y[1], y[0]) / mass), (0.0, 50.0 * t_scale), (0.0, speed),
                     events=turn, **opts)
    if load.status != 1:
        raise RuntimeError("the reference impact did not reach its largest overlap")
    t1 = float(load.t_events[0][0])
    d_max = float(load.y_events[0][0][0])

    def out(_t, y):
        return y[0]

    out.terminal, out.direction = True, -1
    unload = solve_ivp(lambda _t, y: (y[1], -force(y[0], y[1], d_max) / mass), (0.0, 200.0 * t_scale),
                       (d_max, 0.0), events=out, **opts)
    if unload.status != 1:
        return {"restitution": 0.0, "duration": math.inf, "captured": True, "max_overlap": d_max}
    return {"restitution": float(-unload.y_events[0][0][1] / speed), "duration": t1 + float(unload.t_events[0][0]),
            "captured": False, "max_overlap": d_max}


def _hertz_moduli(a: Material, b: Material) -> tuple[float, float]:
    """Hertz's effective modulus E* and Mindlin's G* (Pa) of two materials (Johnson, ch. 4 and 7)."""
    e_star = 1.0 / ((1.0 - a.poisson**2) / a.young + (1.0 - b.poisson**2) / b.young)
    g_star = 1.0 / ((2.0 - a.poisson) * 2.0 * (1.0 + a.poisson) / a.young
                    + (2.0 - b.poisson) * 2.0 * (1.0 + b.poisson) / b.young)
    return e_star, g_star


def _closed_hertz_mindlin(m, material, radius, speed) -> dict:
    """Hertz (1882) with the law's viscous term ``c sqrt(m* S_n) d'`` (clipped at zero force):
    restitution as requested (exact by construction); duration from the 1-DOF equation."""
    e_star, _ = _hertz_moduli(material, material)
    k = 4.0 / 3.0 * e_star * math.sqrt(radius)
    mass = _sphere_mass(material, radius)
    c = m.damping_coefficient

    def force(d, v, _dmax):
        d = max(d, 0.0)
        return max(k * d**1.5 + c * math.sqrt(mass * 1.5 * k * math.sqrt(d)) * v, 0.0)

    d_max = (5.0 * mass * speed**2 / (4.0 * k)) ** 0.4
    ode = _ode_impact(force, mass, speed, d_max / speed)
    return {"restitution": m.restitution, "duration": ode["duration"],
            "source": "Hertz (1882) elastic force with the law's Tsuji-type damping; restitution exact by construction "
                      "(requested e), duration from the 1-DOF equation of motion (SciPy DOP853)"}


def _closed_linear(m, material, radius, speed) -> dict:
    """Linear spring-dashpot, clipped at zero force: restitution as requested; duration
    ``(theta / sqrt(1 - zeta^2) + 2 zeta) / omega`` (the force vanishes at ``theta / omega_d``, the
    overlap ``2 zeta / omega`` later)."""
    mass = _sphere_mass(material, radius)
    omega = math.sqrt(m.stiffness / mass)
    z = m.damping_ratio
    if z >= 1.0:
        return {"restitution": m.restitution, "duration": None, "source": "requested restitution (overdamped)"}
    wd = math.sqrt(1.0 - z * z)
    theta = math.pi - math.atan2(2.0 * z * wd, 1.0 - 2.0 * z * z)
    return {"restitution": m.restitution, "duration": (theta / wd + 2.0 * z) / omega,
            "source": "damped linear oscillator clipped at zero force (closed form); restitution exact by "
                      "construction (requested e)"}


def _closed_ssc(m, material, radius, speed) -> dict:
    """Spec 000: the 1-DOF equation of the spec's normal force (its formulas restated here)."""
    mass = _sphere_mass(material, radius)
    k, n, d_c = m.contact_stiffness, m.contact_stiffness_exponent, m.contact_damping
    if k <= 0.0:
        return {"restitution": None, "duration": None, "source": "no normal stiffness"}
    v_ref = max(m.minimum_impact_velocity, speed)
    factor = _ssc_hysteresis_factor(m.impact_model, m.restitution_coefficient)
    lam = k / v_ref * factor if v_ref > 0 else 0.0
    plastic = m.impact_model == 0 and m.contact_plasticity_ratio > 0.0
    lp = m.contact_plasticity_ratio
    k2 = k / (1.0 - lp)

    def power(x, e):
        return x**e if x > 0.0 else 0.0

    def force(d, v, d_max):
        d = max(d, 0.0)
        if plastic:
            d_p = lp ** (1.0 / n) * d_max
            f = min(k * power(d, n), k2 * (power(d, n) - power(d_p, n)))
            f = max(f, -m.adhesion_coefficient * power(d, m.adhesion_exponent)) - m.constant_pull_off_force
        else:
            f = k * power(d, n) - lam * power(d, n) * v       # lambda D^n v_n, v_n = -d'
        return f + d_c * v

    d_max = ((n + 1.0) * mass * speed**2 / (2.0 * k)) ** (1.0 / (n + 1.0))
    ode = _ode_impact(force, mass, speed, d_max / speed)
    what = {0: "Edinburgh elasto-plastic adhesive" if plastic else "linear/power-law spring with dashpot",
            1: "Hunt-Crossley", 2: "Gonthier / Carvalho-Martins"}[m.impact_model]
    return {"restitution": None if ode["captured"] else ode["restitution"],
            "duration": None if ode["captured"] else ode["duration"],
            "source": f"spec-000 normal force ({what}) restated from the spec, 1-DOF equation of motion (SciPy DOP853)"}


def _closed_luding(m, material, radius, speed) -> dict:
    """Luding (2008), spec 001: the 1-DOF equation of the normal branches (restated) with
    ``visc_n``; wall as the mirror image of the sphere."""
    mass = _sphere_mass(material, radius)
    li = lj = radius
    k2_hat = m.k2_hat if m.k2_hat > 0.0 else math.pi * radius**2 / (li / material.young + lj / material.young)
    a12 = 2.0 * li * lj / (li + lj)
    k1 = m.k1_div_kn * k2_hat
    kc = m.ka_div_kn * k2_hat
    d_lim = k2_hat / (k2_hat - k1) * m.delta_lim_rel * a12 if k1 < k2_hat else math.inf

    def force(d, v, d_max):
        d = max(d, 0.0)
        k2 = k2_hat if d_max >= d_lim else k1 + (k2_hat - k1) * d_max / d_lim
        d0 = d_max * (1.0 - k1 / k2)
        f = k2 * (d - d0)
        f = k1 * d if f >= k1 * d else (-kc * d if -kc * d >= f else f)
        return f + m.visc_n * v

    ode = _ode_impact(force, mass, speed, math.sqrt(mass / k1))
    return {"restitution": ode["restitution"], "duration": None if ode["captured"] else ode["duration"],
            "source": "Luding (2008) normal branches (spec 001, restated) with visc_n, 1-DOF equation of motion "
                      "(SciPy DOP853)"}


def _closed_ice(m, material, radius, speed) -> dict:
    """Spec 002, unbonded: a linear spring ``k_n = A / (l_i/E_i + l_j/E_j)`` without damping:
    ``e = 1``, ``t_c = pi sqrt(m / k_n)``."""
    mass = _sphere_mass(material, radius)
    k_n = math.pi * radius**2 / (2.0 * radius / material.young)
    return {"restitution": 1.0, "duration": math.pi * math.sqrt(mass / k_n),
            "source": "undamped linear spring k_n = A / (l_i/E_i + l_j/E_j) of spec 002 (closed form)"}


def _closed_parallel_bond(m, material, radius, speed) -> dict:
    """An unbonded pair is a contact of the frictional model."""
    inner, _ = closed_form_for(m.contact)
    out = dict(inner(material, radius, speed)) if inner else {}
    out["source"] = "unbonded: the contact model's closed form; " + out.get("source", "")
    return out


# ============================================================================ the context
class _Context:
    """Settings, scales and cached experiments shared by the checks."""

    def __init__(self, model, material, radius, quick, debug, speeds, angles, properties, closed_form, log):
        self.model = model
        self.material = material
        self.radius = float(radius)
        self.quick = bool(quick)
        self.debug = bool(debug)
        self.props = properties
        self.closed_form, self.closed_form_source = closed_form
        self.log = log or (lambda msg: None)
        self.mass = _sphere_mass(material, self.radius)
        self.inertia = 0.4 * self.mass * self.radius**2
        # a second material and size for the swap and momentum checks (mixing rules, unequal bodies)
        self.partner_material = Material(density=1.5 * material.density, young=1.6 * material.young,
                                         poisson=min(material.poisson + 0.05, 0.45), name="partner")
        self.partner_radius = 1.4 * self.radius
        self.bonded = model.bond_field >= 0
        self.steps = (100, 200) if quick else (200, 400)
        self.study = (25, 50, 100, 200, 400) if quick else (25, 50, 100, 200, 400, 800)
        self.figures: list = []
        self._cache: dict = {}
        self._calibrate(speeds)
        if angles is None:
            angles = (30.0, 60.0, 85.0) if quick else (5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0,
                                                         84.0, 87.0)
        self.angles = tuple(float(a) for a in angles)

    # ---------------------------------------------------------------- probes
    def probe(self, overlap, *, wall=False, swap=False, **kw):
        """Probe the law between two spheres of the battery's radius and material (``wall``: a
        sphere and a wall; ``swap``: the unequal pair of the swap check, from either side)."""
        if wall:
            kw.update(radius=self.radius, partner_radius=math.inf, material=self.material)
        elif swap is None:
            kw.update(radius=self.radius, partner_radius=self.partner_radius, material=self.material,
                      partner_material=self.partner_material)
        elif swap:
            kw.update(radius=self.partner_radius, partner_radius=self.radius, material=self.partner_material,
                      partner_material=self.material)
        else:
            kw.update(radius=self.radius, partner_radius=self.radius, material=self.material)
        return probe(self.model, overlap, debug=self.debug, **kw)

    def bond_history(self, overlap=0.0, swap=None):
        """History of a new bond at ``overlap`` between the probe's two spheres (bonded models)."""
        if swap is None:
            ri = rj = self.radius
            mi, mj = self.material, self.material
        else:
            ri, rj, mi, mj = self.radius, self.partner_radius, self.material, self.partner_material
            if swap:
                ri, rj, mi, mj = rj, ri, mj, mi
        params = self.model.pair_table((mi, mj))[0, 1]
        info = dict(overlap=np.array([float(overlap)]), radius_i=np.array([ri]), radius_j=np.array([rj]),
                    mass_i=np.array([_sphere_mass(mi, ri)]), mass_j=np.array([_sphere_mass(mj, rj)]))
        return np.asarray(self.model.initial_bond_history(info, params[None]), dtype=float)[0]

    def _calibrate(self, speeds):
        """Quasi-static loading on a wall to 5 % of the radius: the impact speeds of the sweep."""
        r_ = self.radius
        d = np.linspace(0.0, MAX_SWEEP_OVERLAP * r_, 2001)
        rate = 1e-6 * r_  # m/s: a slow approach (the reference speed is not known yet)
        res = self.probe(d, wall=True, dt=(d[1] - d[0]) / rate)
        f = res.normal_force
        work = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(d))])
        self.loading_curve = (d, f)
        if work[-1] > 0.0 and np.all(np.isfinite(work)):
            v = np.sqrt(2.0 * np.maximum(work, 0.0) / self.mass)
            self.v_max = float(v[-1])
            self.speed_note = (f"v_max = {_fmt(self.v_max)} m/s compresses the contact quasi-statically to "
                               f"{MAX_SWEEP_OVERLAP:g} R")
        else:
            v = None
            self.v_max = 1.0
            self.speed_note = "the quasi-static loading stores no energy: speeds 0.01-1 m/s"
        self.v_ref = self.v_max / 10.0
        if speeds is None:
            speeds = np.geomspace(self.v_max / 100.0, self.v_max, 3 if self.quick else 9)
        self.speeds = tuple(float(s) for s in speeds)
        if v is not None:
            k = int(np.searchsorted(v, self.v_ref))
            self.d_ref = float(np.interp(self.v_ref, v[max(k - 1, 0):k + 1], d[max(k - 1, 0):k + 1]))
        else:
            self.d_ref = 0.005 * r_
        self.f_ref = float(np.interp(self.d_ref, d, f))

    def add_panels(self, name, title, panels) -> None:
        """Add panels to the figure ``name`` (created with ``title`` on first use)."""
        for fig in self.figures:
            if fig["name"] == name:
                fig["panels"].extend(panels)
                return
        self.figures.append(dict(name=name, title=title, panels=list(panels)))

    def scales(self) -> dict:
        return {"radius_m": self.radius, "mass_kg": self.mass, "v_max_m_s": self.v_max, "v_ref_m_s": self.v_ref,
                "reference_overlap_m": self.d_ref, "reference_force_N": self.f_ref, "speeds_m_s": list(self.speeds),
                "angles_deg": list(self.angles), "note": self.speed_note}

    # ---------------------------------------------------------------- paths
    def path(self, legs, rate, density=PATH_DENSITY, start=None, bounds=False):
        """Samples of a piecewise-linear path in (overlap, s_x, s_y, theta_x, theta_y, theta_z).

        ``legs``: target states (6-vectors, m and rad); samples per leg proportional to its length
        (angles counted as arc length on the radius); the time step makes the path's speed ``rate``
        (m/s).  Returns ``(q (T+1, 6), dt)``, and with ``bounds`` the index of each leg's last sample."""
        q = [np.zeros(6) if start is None else np.asarray(start, dtype=float)]
        ends = []
        scale = np.array([1.0, 1.0, 1.0, self.radius, self.radius, self.radius])
        step = self.d_ref / density
        for target in legs:
            target = np.asarray(target, dtype=float)
            length = float(np.linalg.norm((target - q[-1]) * scale))
            n = max(int(math.ceil(length / step - 1e-9)), 1)
            q.extend(q[-1] + (target - q[-1]) * (np.arange(1, n + 1) / n)[:, None])
            ends.append(len(q) - 1)
        q = np.array(q)
        return (q, step / rate, ends) if bounds else (q, step / rate)

    def probe_path(self, q, dt, **kw):
        tangential = np.zeros((len(q), 3))
        tangential[:, :2] = q[:, 1:3]
        return self.probe(q[:, 0], tangential=tangential, rotation=q[:, 3:6], dt=dt, **kw)

    # ---------------------------------------------------------------- impacts
    def wall_impact(self, vn, vt=0.0, steps=None, t_est=None):
        """A sphere hits the plane z = 0 with velocity (vt, 0, -vn); ``steps`` per contact duration
        ``t_est`` (default: the model's default time step).  Returns the measured quantities."""
        from ..scene import Scene
        from ..simulation import Simulation

        r_ = self.radius
        gap0 = 1e-6 * r_
        scene = Scene(gravity=(0.0, 0.0, 0.0))
        scene.add_sphere(position=(0.0, 0.0, r_ + gap0), radius=r_, material=self.material,
                         velocity=(vt, 0.0, -vn))
        scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=self.material)
        sim = Simulation(scene, self.model, dt=None, threads=1, debug=self.debug)
        if steps is not None and t_est is not None and math.isfinite(t_est):
            sim.dt = min(t_est / steps, sim.stability_limit)
        # how long to wait for the separation: 50 times the (quasi-static) estimate pi d_max / v
        d = self._overlap_for_speed(vn)
        limit = 50.0 * math.pi * d / vn if t_est is None or not math.isfinite(t_est) else 50.0 * t_est
        return _run_wall_impact(sim, r_, gap0, vn, vt, limit, self.inertia)

    def _overlap_for_speed(self, v):
        d, f = self.loading_curve
        work = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(d))])
        target = 0.5 * self.mass * v * v
        k = np.flatnonzero(work >= target)
        return float(d[k[0]]) if len(k) else float(d[-1])

    def impact_series(self, vn, vt=0.0, steps=None):
        """Default-dt run (gives the duration estimate), then runs at ``steps`` per contact."""
        key = ("series", vn, vt, steps or self.steps)
        if key in self._cache:
            return self._cache[key]
        coarse = self.wall_impact(vn, vt)
        runs = {}
        for n in steps or self.steps:
            runs[n] = coarse if coarse["captured"] else self.wall_impact(vn, vt, steps=n, t_est=coarse["duration"])
        out = {"default": coarse, "runs": runs}
        self._cache[key] = out
        return out

    def convergence(self):
        """The time-step study at the reference speed (cached): e and t_c at each resolution, the
        observed orders, the extrapolated values."""
        if "study" in self._cache:
            return self._cache["study"]
        series = self.impact_series(self.v_ref, steps=self.study)
        ns = list(self.study)
        out = {"steps": ns, "default": series["default"], "captured": series["default"]["captured"]}
        for key in ("restitution", "duration"):
            x = np.array([series["runs"][n][key] for n in ns], dtype=float)
            diffs = np.abs(np.diff(x))
            p = 1.0
            if len(diffs) >= 2 and diffs[-1] > 0 and diffs[0] > 0:
                # the average order over the study (single halvings can be noisy: the moment of first
                # touch within a step changes with the step)
                p = float(np.clip(math.log2(diffs[0] / diffs[-1]) / (len(diffs) - 1), 0.5, 4.0))
            extrap = x[-1] + (x[-1] - x[-2]) / (2.0**p - 1.0) if len(x) >= 2 and np.all(np.isfinite(x[-2:])) else x[-1]
            out[key] = {"values": x, "differences": diffs, "order": p, "extrapolated": float(extrap)}
        self._cache["study"] = out
        return out

    def extrapolate(self, runs, key):
        """Richardson extrapolation of ``key`` from the two resolutions of ``runs`` with the order
        observed in the time-step study."""
        n1, n2 = self.steps
        x1, x2 = runs[n1][key], runs[n2][key]
        if not (math.isfinite(x1) and math.isfinite(x2)):
            return x2
        p = self.convergence()[key]["order"] if not self.convergence()["captured"] else 1.0
        ratio = n2 / n1
        return x2 + (x2 - x1) / (ratio**p - 1.0)


def _run_wall_impact(sim, radius, gap0, vn, vt, limit, inertia) -> dict:
    """Step a one-sphere wall impact until the sphere has left the wall (or ``limit`` s)."""
    st = sim.state
    t, gaps = [sim.time], [float(st.positions[0, 2] - radius)]
    fmax, fmin = 0.0, math.inf
    started = ended = False
    ke0 = 0.5 * float(sim.model.mass[0]) * (vn * vn + vt * vt)
    while sim.time < limit:
        sim.run(steps=1)
        g = float(st.positions[0, 2] - radius)
        t.append(sim.time)
        gaps.append(g)
        fz = float(st.forces[0, 2])
        fmax = max(fmax, fz)
        if g < 0.0 or sim.n_contacts():
            fmin = min(fmin, fz)
        started = started or g < 0.0
        if started and g > 0.0 and st.velocities[0, 2] > 0.0 and sim.n_contacts() == 0:
            ended = True
            break
    t, gaps = np.asarray(t), np.asarray(gaps)
    v, w = sim.velocities[0], sim.angular_velocities[0]
    inside = np.flatnonzero(gaps < 0.0)
    out = {"dt": sim.dt, "steps": sim.step, "max_overlap": float(-gaps.min()) if len(inside) else 0.0,
           "max_force": fmax, "min_force": fmin, "velocity": v, "spin": w, "captured": not ended}
    m = float(sim.model.mass[0])
    out["kinetic_ratio"] = (0.5 * m * float(v @ v) + 0.5 * inertia * float(w @ w)) / ke0
    if not ended:
        out.update(restitution=0.0, duration=math.inf)
        return out
    a, b = inside[0], inside[-1]

    def cross(k):
        return t[k] + (t[k + 1] - t[k]) * gaps[k] / (gaps[k] - gaps[k + 1])

    out.update(restitution=float(v[2] / vn), duration=float(cross(b) - cross(a - 1)))
    return out


# ============================================================================ checks: hysteresis
def _work(res, q):
    """Cumulative work (J) done on the contact along a probe path with the identity frame:
    trapezoid of the force and couple on ``i`` over the increments of ``j`` relative to ``i``."""
    local = np.zeros((len(q), 3))
    local[:, :2] = q[:, 1:3]
    local[:, 2] = -q[:, 0]
    du, dth = np.diff(local, axis=0), np.diff(q[:, 3:6], axis=0)
    f, c = res.force, res.couple
    dw = np.einsum("ij,ij->i", 0.5 * (f[1:] + f[:-1]), du) + np.einsum("ij,ij->i", 0.5 * (c[1:] + c[:-1]), dth)
    return np.concatenate([[0.0], np.cumsum(dw)]), np.abs(dw).sum()


def _balance(res, q):
    """Largest |work - (stored change + dissipated)| along the path, relative to the total |work|."""
    w, scale = _work(res, q)
    resid = w - (res.stored_energy - res.stored_energy[0]) - (res.dissipated - res.dissipation[0])
    return float(np.abs(resid).max() / max(scale, 1e-300)), w, scale


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
        err_f, w, scale = _balance(fine, fine_q)
        err_c, _, _ = _balance(coarse, coarse_q)
        # the inner unload-reload cycle: from the first peak back to the same overlap
        first = int(np.argmax(fine_q[:, 0] >= d))
        back = first + 1 + int(np.argmax(fine_q[first + 1:, 0] >= d - 1e-15 * d))
        dw = np.diff(w)
        runs[label] = dict(res=fine, q=fine_q, err=(err_c, err_f), w_total=float(w[-1]), w_cycle=float(w[back] - w[first]),
                           dissipated=float(fine.dissipated[-1] - fine.dissipation[0]), scale=scale,
                           loading=float(dw[dw > 0].sum()))
        panels.append(_panel(f"force-overlap loop, {label}", "overlap / reference overlap", "normal force (N)",
                             [_series(fine_q[:, 0] / d, fine.normal_force, "load-unload-reload-separate")]))
    ctx.figures.append(dict(name="hysteresis", title="Load-unload-reload: force against overlap (wall contact)",
                            panels=panels))
    fig = "hysteresis.png"
    ok_all, parts = True, []
    for label, r in runs.items():
        ok, text = _converging(*r["err"], tol=1e-2)
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
        f"booked dissipation over the path: quasi-static {_fmt(qs['dissipated'])} J, at v_ref "
        f"{_fmt(dyn['dissipated'])} J; loop work (trapezoid) quasi-static {_fmt(qs['w_total'])} J, at v_ref "
        f"{_fmt(dyn['w_total'])} J; inner cycle {_fmt(qs['w_cycle'])} J / {_fmt(dyn['w_cycle'])} J; fraction "
        f"of the work put in that is lost: quasi-static {_fmt(qs['w_total'] / max(qs['loading'], 1e-300))}, at v_ref "
        f"{_fmt(dyn['w_total'] / max(dyn['loading'], 1e-300))}", fig,
        data={k: {"dissipated_J": r["dissipated"], "loop_work_J": r["w_total"], "inner_cycle_work_J": r["w_cycle"],
                  "work_in_J": r["loading"]} for k, r in runs.items()}))
    return out


# ============================================================================ checks: normal impact
def check_impact(ctx) -> list:
    rows = []
    for v in ctx.speeds:
        ctx.log(f"  normal impact at {_fmt(v)} m/s")
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
        f"e = {', '.join(_fmt(x) for x in e)} at v = {', '.join(_fmt(r['speed']) for r in rows)} m/s"
        + (f"; captured at {', '.join(_fmt(s) for s in captured)} m/s" if captured else ""), fig))
    free = tc[np.isfinite(tc)]
    ok = bool(len(free) == len(tc) - len(captured) and np.all(free > 0))
    ok &= not (captured and not ctx.props.adhesive)
    out.append(Check(
        "contact duration finite", "impact", ok, float(np.max(free)) if len(free) else None, "s (max)",
        "every impact that separates does so after a finite, positive time (captures only for an adhesive model)",
        "physical sanity", f"t_c = {', '.join(_fmt(x) for x in tc)} s", fig))
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
            "; ".join(f"v = {_fmt(r['speed'])}: {_fmt(r[key])} vs {_fmt(r[f'ref_{key}'])}" for r in rows
                      if r[f"ref_{key}"] is not None), fig))
    # the figure: e(v), t_c(v), with the references and Hertz's elastic duration for comparison
    v = np.array([r["speed"] for r in rows])
    from .closed_forms import hertz_impact

    e_star, _ = _hertz_moduli(ctx.material, ctx.material)
    fine_v = np.geomspace(v.min(), v.max(), 50)
    hertz = [hertz_impact(e_star, ctx.radius, ctx.mass, s)["duration"] for s in fine_v]
    s1 = [_series(v, e, "measured (dt -> 0)", "points")]
    s2 = [_series(v, np.where(np.isfinite(tc), tc, np.nan), "measured (dt -> 0)", "points"),
          _series(fine_v, hertz, "Hertz, elastic (same material)", "dashed")]
    if any(r["ref_restitution"] is not None for r in rows):
        s1.append(_series(v, [np.nan if r["ref_restitution"] is None else r["ref_restitution"] for r in rows],
                          "closed form", "line"))
    if any(r["ref_duration"] is not None for r in rows):
        s2.append(_series(v, [np.nan if r["ref_duration"] is None else r["ref_duration"] for r in rows],
                          "closed form", "line"))
    ctx.figures.append(dict(name="impact", title="Normal impact on a wall against the impact speed", panels=[
        _panel("coefficient of restitution", "impact speed (m/s)", "e", s1, xscale="log"),
        _panel("contact duration", "impact speed (m/s)", "t_c (s)", s2, xscale="log", yscale="log")]))
    out[0].data = {"rows": rows}
    return out


# ============================================================================ checks: oblique impact
def check_oblique(ctx) -> list:
    vn = ctx.v_ref
    study = ctx.convergence()
    t_est = study["default"]["duration"]
    rows = []
    for angle in ctx.angles:
        ctx.log(f"  oblique impact at {_fmt(angle)} deg")
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
        "energy conservation", "; ".join(f"{_fmt(r['angle'])} deg: {_fmt(r['kinetic_ratio'])}" for r in rows), fig))
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
                f"{_fmt(s[0])} deg: {_fmt(s[2])} (lever-arm allowance {_fmt(s[3] + 1e-3)})" for s in sliding))
        out.append(Check(
            "gross sliding vs rigid-body Coulomb theory", "oblique", dv <= 1e-3 and spin_ok, dv, "relative",
            "in gross sliding (tan(angle) > 7 mu (1 + e)) with a normal force that never pulls: tangential velocity "
            "change = mu (1 + e) v_n within 1e-3; "
            "rebound spin = 5/2 mu (1 + e) v_n / R within d_max/R + 1e-3 (the lever arm is R - d/2), unless the law "
            "resists rolling; e is the measured normal restitution",
            f"rigid-body Coulomb impact, Maw, Barber and Fawcett (1976); mu = {_fmt(mu)} from "
            f"{ctx.props.source}", f"tangential: {', '.join(f'{_fmt(s[0])} deg: {_fmt(s[1])}' for s in sliding)}; "
            + spin_text, fig))
    # figure: e_t, spin, rebound angle against the incident angle, rigid-body limits
    ang = np.array([r["angle"] for r in rows])
    fine = np.linspace(max(ang.min(), 0.5), min(ang.max(), 89.5), 200)
    e_mean = float(np.mean([r["e_n"] for r in rows]))
    tan_in = np.tan(np.radians(fine))
    s1 = [_series(ang, [r["e_t"] for r in rows], "measured", "points")]
    s2 = [_series(ang, [r["spin"] * ctx.radius / vn for r in rows], "measured", "points")]
    s3 = [_series(ang, [r["rebound_angle"] for r in rows], "measured", "points")]
    mu_line = mu if mu else (getattr(ctx.model, "friction", None) if isinstance(getattr(ctx.model, "friction", None),
                                                                                float) else None)
    if mu_line:
        j = mu_line * (1.0 + e_mean)
        slide = tan_in > 3.5 * j
        e_t_rigid = np.where(slide, -1.0 + 3.5 * j / tan_in, 0.0)
        spin_rigid = np.where(slide, 2.5 * j, 5.0 / 7.0 * tan_in)
        tan_out = np.where(slide, (tan_in - j) / e_mean, 5.0 / 7.0 * tan_in / e_mean)
        lab = f"rigid body, Coulomb mu = {_fmt(mu_line)} (sliding / rolling)"
        s1.append(_series(fine, e_t_rigid, lab, "dashed"))
        s2.append(_series(fine, spin_rigid, lab, "dashed"))
        s3.append(_series(fine, np.degrees(np.arctan(tan_out)), lab, "dashed"))
    ctx.figures.append(dict(name="oblique", title=f"Oblique impact on a wall at v_n = {_fmt(vn)} m/s", panels=[
        _panel("tangential restitution (contact point)", "incident angle (deg)", "e_t", s1),
        _panel("rebound spin", "incident angle (deg)", "R omega / v_n", s2),
        _panel("rebound angle", "incident angle (deg)", "rebound angle (deg)", s3)]))
    out[0].data = {"rows": rows}
    return out


# ============================================================================ checks: symmetry
def _loaded_state_legs(d, r_):
    """Load normally, then tangentially, then roll and twist (every sense loaded)."""
    return [(d, 0, 0, 0, 0, 0), (d, 0.3 * d, 0.15 * d, 0, 0, 0), (d, 0.3 * d, 0.15 * d, 0.2 * d / r_, -0.1 * d / r_,
                                                                   0.15 * d / r_)]


def _bond_scale(ctx, legs_for, rate):
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
        scale = _bond_scale(ctx, lambda s: _loaded_state_legs(s, ctx.radius), QUASI_STATIC * ctx.v_ref)
        variants.append((" (bonded)", ctx.bond_history(), scale))
    fig = "objectivity.png"
    panels = []
    for suffix, hist, scale in variants:
        for label, axis in (("about a tangent axis", (1.0, 1.0, 0.0)), ("about the normal", (0.0, 0.0, 1.0))):
            coarse = _objectivity(ctx, axis, 1000, hist, scale)
            fine = _objectivity(ctx, axis, 2000, hist, scale)
            ok, text = _converging(coarse["err"], fine["err"], tol=1e-2, floor=1e-9)
            ok_e = fine["e_err"] <= 1e-6 and fine["diss"] <= 1e-6
            out.append(Check(
                f"objectivity: rigid rotation {label}{suffix}", "symmetry", ok and ok_e, fine["err"], "relative",
                "a loaded contact (all senses) turned 90 deg as a rigid body: its force and couple in the contact "
                "frame change by <= 1e-2 of their size at 2000 rotation steps and the change falls at least 1.5 times "
                "from 1000 steps (first-order convergence, or < 1e-9); stored energy kept within 1e-6 and "
                "dissipation <= 1e-6 of it",
                "material frame-indifference: a rigid motion of the pair leaves its state unchanged",
                f"force/couple change {text}; stored energy change {_fmt(fine['e_err'])}, dissipation "
                f"{_fmt(fine['diss'])} (relative to the stored energy)", fig,
                data={"error_1000": coarse["err"], "error_2000": fine["err"], "force_error": fine["f_err"],
                      "couple_error": fine["c_err"]}))
            r, k0 = fine["res"], fine["k0"]
            deg = np.degrees(fine["angles"][k0:])
            fr = np.linalg.norm(fine["f_ref"])
            panels.append(_panel(f"rotation {label}{suffix}", "rotation angle (deg)", "local force / |F|",
                                 [_series(deg, r.local_force[k0:, j] / fr, f"F_{'xyz'[j]} (local)") for j in range(3)]
                                 + [_series(deg, r.local_couple[k0:, j] / max(np.linalg.norm(fine['c_ref']), 1e-300),
                                            f"C_{'xyz'[j]} (local) / |C|", "dashed") for j in range(3)
                                    if np.linalg.norm(fine["c_ref"]) > 0]))
    ctx.add_panels("objectivity", "Objectivity: a loaded contact turned as a rigid body", panels)
    return out


def _general_legs(d, r_):
    """Every sense loaded and unloaded, ending separated."""
    return [(d, 0, 0, 0, 0, 0), (d, 0.3 * d, 0.2 * d, 0, 0, 0), (d, 0.3 * d, 0.2 * d, 0.2 * d / r_, -0.1 * d / r_, 0),
            (d, 0.3 * d, 0.2 * d, 0.2 * d / r_, -0.1 * d / r_, 0.2 * d / r_), (0.6 * d, -0.1 * d, 0.1 * d, 0, 0, 0),
            (-0.1 * d, -0.1 * d, 0.1 * d, 0, 0, 0)]


def check_swap(ctx) -> list:
    out = []
    variants = [("", False)]
    if ctx.bonded:
        variants.append((" (bonded)", True))
    for suffix, bonded in variants:
        d = ctx.d_ref
        if bonded:
            d = _bond_scale(ctx, lambda s: _general_legs(s, ctx.radius)[:4], ctx.v_ref)
        q, dt = ctx.path(_general_legs(d, ctx.radius), ctx.v_ref, density=PATH_DENSITY * ctx.d_ref / d)
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
            ", ".join(f"{k}: {_fmt(v)}" for k, v in errs.items()), data=errs))
    return out


def check_momentum(ctx) -> list:
    from ..scene import Scene
    from ..simulation import Simulation

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
        "contact point", f"linear {_fmt(dp / p_scale)}, angular {_fmt(dl / l_scale)}; contact "
        f"{'made' if started else 'NOT made'} ({sim.step} steps)", data={"linear": dp / p_scale, "angular": dl / l_scale})]


# ============================================================================ checks: continuity
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
            parts.append(f"{label}: |F - {_fmt(declared)} N| at 1e-8 d_ref = {_fmt(last)} of max|F|"
                         + (f", decay exponent {_fmt(p)}" if p is not None else ""))
            series.append(_series(eps, np.maximum(resid / max(scale, 1e-300), 1e-300), label,
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
            f"continuity of the contact force (F_declared = {_fmt(declared)} N from {prop} of {ctx.props.source})",
            "; ".join(parts) + note, "continuity.png", data=data))
        panels.append(_panel(f"at {event}", "overlap / reference overlap", "|F_n - F_declared| / max|F_n|", series,
                             xscale="log", yscale="log"))
    ctx.figures.append(dict(name="continuity", title="Force near zero overlap (wall contact)", panels=panels))
    return out


# ============================================================================ checks: energy
def check_work_energy(ctx) -> list:
    out = []
    variants = [("", None, ctx.d_ref)]
    if ctx.bonded:
        scale = _bond_scale(ctx, lambda s: _general_legs(s, ctx.radius)[:4], ctx.v_ref)
        variants.append((" (bonded)", ctx.bond_history(), scale))
    panels = []
    for suffix, hist, d in variants:
        errs = []
        for density in (PATH_DENSITY // 2, PATH_DENSITY):
            q, dt = ctx.path(_general_legs(d, ctx.radius), ctx.v_ref, density=density * ctx.d_ref / d)
            res = ctx.probe_path(q, dt, history=hist)
            err, w, _ = _balance(res, q)
            errs.append(err)
        ok, text = _converging(errs[0], errs[1], tol=1e-2)
        out.append(Check(
            f"work = stored + dissipated energy, every sense{suffix}", "energy", ok, errs[1], "relative",
            "along a path at the reference speed loading and unloading every sense (normal, sliding, rolling, "
            "twisting) to separation: largest |work - (stored change + booked dissipation)| <= 1e-2 of the total "
            f"|work| at {PATH_DENSITY} samples per reference overlap and at least 1.5 times smaller than at half that "
            "resolution (or < 1e-8)", "work-energy theorem (trapezoidal work of the force and couple on the "
            "prescribed relative motion)", text, "energy.png", data={"relative_error_coarse_fine": errs}))
        panels.append(_panel(f"energy along the path{suffix}", "sample", "J", [
            _series(np.arange(len(w)), w, "work done on the contact"),
            _series(np.arange(len(w)), res.stored_energy - res.stored_energy[0], "stored energy", "dashed"),
            _series(np.arange(len(w)), res.dissipated - res.dissipation[0], "dissipated energy", "dashed"),
            _series(np.arange(len(w)), res.stored_energy - res.stored_energy[0] + res.dissipated - res.dissipation[0],
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
                series.append(_series(q[k[elastic], 0] / d, gen[k[elastic], 0], f"F_n, leg {leg_no}", "line"))
                series.append(_series(q[k[elastic], 0] / d, fd, f"dE/d(overlap), leg {leg_no}", "dashed"))
        leg_start = end
    if series:
        ctx.add_panels("energy", "Energy bookkeeping of the law", [_panel(
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
        "or lost by the elastic part)", f"{used} elastic samples on 5 legs; largest |Q - dE/dq| = {_fmt(worst)}",
        "energy.png", data={"elastic_samples": used})]


# ============================================================================ checks: time step
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
            # converging at an order >= 0.58, or converged: every change below 1e-4 of the value (where
            # the first touch falls within a step makes an impact's result jitter at about that level,
            # so an order measured on such changes is noise)
            ok = bool(diffs[-1] <= diffs[0] / 1.5**halvings or max(diffs) <= 1e-4 * abs(x[-1]))
            oks.append(ok)
            dflt = study["default"][key]
            parts.append(f"{key}: {', '.join(_fmt(v) for v in x)} at {', '.join(map(str, study['steps']))} steps per "
                         f"contact; change per halving {_fmt(diffs[0])} -> {_fmt(diffs[-1])}, average order "
                         f"{_fmt(s['order'])}; extrapolated {_fmt(s['extrapolated'])}; at the default dt "
                         f"({_fmt(study['default']['dt'])} s) {_fmt(dflt)}, "
                         f"{_fmt(abs(dflt - s['extrapolated']) / abs(s['extrapolated']))} from it")
        out.append(Check(
            "time-step convergence of the impact", "timestep", all(oks), study["restitution"]["order"],
            "average order (e)",
            f"the change of e and of t_c per halving of dt falls by at least 1.5^m over the m halvings of the study "
            f"({study['steps'][0]} to {study['steps'][-1]} steps per contact: an average order >= 0.58), or every "
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
            panels.append(_panel(key, "steps per contact", unit, [
                _series(ns, x, "measured", "points"),
                _series([ns[0], ns[-1]], [study[key]["extrapolated"]] * 2, "extrapolated to dt -> 0", "dashed"),
                _series([n_default], [default[key]], "default time step", "points")], xscale="log"))
        panels.append(_panel("change per halving of dt", "steps per contact", "|change| / value", [
            _series(ns[1:], study[key]["differences"] / abs(study[key]["values"][-1]), key, "points")
            for key in ("restitution", "duration")], xscale="log", yscale="log"))
        ctx.figures.append(dict(name="timestep", title=f"Impact at {_fmt(ctx.v_ref)} m/s against the time step",
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
        "; ".join(f"{r['case']}: declared {_fmt(r['declared'])} s, 2/omega_max {_fmt(r['bound'])} s (k_n "
                  f"{_fmt(r['k_n'])}, k_t {_fmt(r['k_t'])} N/m, k_r {_fmt(r['k_r'])}, k_w {_fmt(r['k_w'])} N m/rad)"
                  for r in rows), data={"rows": rows}))
    return out


def check_stable_run(ctx) -> list:
    """A sphere pressed on a wall by a strong gravity, released at touch, at 0.95 of the declared limit;
    bonded models also a bonded pair oscillating."""
    from ..scene import Scene
    from ..simulation import Simulation

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
            sim = Simulation(scene, ctx.model, dt=None, threads=1, debug=ctx.debug, initial_overlap_tolerance=0.05)
            sim.dt = 0.95 * sim.stability_limit
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
            text = (f"{label}: {steps} steps at dt = {_fmt(sim.dt)} s; largest energy error {_fmt(worst / scale)} of "
                    f"the oscillation energy {_fmt(scale)} J (first half {_fmt(first / scale)}, second half "
                    f"{_fmt(second / scale)})" + ("" if intact else "; the bond broke"))
        ok_all &= ok
        parts.append(text)
        data[label] = {"ok": ok}
    return [Check(
        "stable at 0.95 x the declared critical time step", "timestep", ok_all, None, "",
        f"a sphere pressed onto a wall by gravity to a static overlap of {0.4 * SIM_MAX_OVERLAP:g} R, released at "
        f"rest at half of it (and, for bonded models, a bonded pair oscillating), {steps} steps at 0.95 of the Simulation's "
        f"stability limit: no blow-up, the energy error stays below h^2/(4 - h^2) = {_fmt(allowance)} times the "
        "oscillation energy (h = omega dt = 1.9: the largest deviation of Verlet's measured energy from its conserved "
        "one) and does not grow (second half <= 2 x first half)",
        "velocity Verlet is stable below the critical step", "; ".join(parts), data=data)]


# ============================================================================ checks: column
def _column_run(ctx, fraction):
    from ..scene import Scene
    from ..simulation import Simulation

    r_ = ctx.radius
    side, height = (6.0, 12.0) if ctx.quick else (10.0, 20.0)
    lx = side * r_
    scene = Scene(gravity=(0.0, 0.0, -9.81))
    scene.fill_box((0.0, 0.0, 0.0), (lx, lx, height * r_), r_, ctx.material, jitter=0.5, seed=1, radius_spread=0.1)
    for p, n in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((lx, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                 ((0, lx, 0), (0, -1, 0))):
        scene.add_wall(point=p, normal=n, material=ctx.material)
    sim = Simulation(scene, ctx.model, dt=None, threads=1, debug=ctx.debug)
    sim.dt = fraction * sim.dt
    e0 = sim.energy()
    duration = 2.0 * math.sqrt(2.0 * height * r_ / 9.81)
    samples = 20
    t, err, scale, ke = [], [], [], []
    for _ in range(samples):
        sim.run(duration=duration / samples)
        e = sim.energy()
        released = abs(e0["gravitational"] - e["gravitational"]) + e0["kinetic"] + e0["rotational"]
        t.append(sim.time)
        err.append(e["balance_error"])
        scale.append(max(released, 1e-300))
        ke.append(e["kinetic"] + e["rotational"])
    rel = np.abs(np.array(err)) / np.array(scale)
    return dict(sim=sim, t=t, err=err, released=scale, ke=ke, rel=rel, worst=float(rel.max()))


def check_column(ctx) -> list:
    full = _column_run(ctx, 1.0)
    half = _column_run(ctx, 0.5)
    sim = full["sim"]
    ctx.figures.append(dict(name="column", title=f"Granular column: {sim.n_spheres} spheres settling in a box",
                            panels=[_panel("energy (default time step)", "time (s)", "J", [
                                _series(full["t"], full["released"], "potential energy released"),
                                _series(full["t"], full["ke"], "kinetic + rotational"),
                                _series(full["t"], full["err"], "balance error", "dashed")]),
                                _panel("balance error / energy released", "time (s)", "relative", [
                                    _series(full["t"], np.maximum(full["rel"], 1e-300), "default time step"),
                                    _series(half["t"], np.maximum(half["rel"], 1e-300), "half of it", "dashed")],
                                       yscale="log")]))
    a, b = full["worst"], half["worst"]
    ok = a <= 1e-2 or (b <= 1e-2 and a >= 1.5 * b)
    return [Check(
        "energy balance of a granular column", "column", bool(ok), a, "relative (max, default dt)",
        "kinetic + rotational + gravitational + elastic + dissipated energy constant within 1 % of the potential "
        "energy released so far, at each of 20 samples of the pour, at the model's default time step; or, if not, "
        "within 1 % at half that step and at least 1.5 times closer than at the default (the excess is then a "
        "discretisation error of the default step, not an error of the energy bookkeeping)",
        "energy conservation (the balance of tests/test_conservation.py)",
        f"{sim.n_spheres} spheres, 5 walls, {sim.step} steps of {_fmt(sim.dt)} s (the default), {_fmt(sim.time)} s; "
        f"largest |balance error| / released: {_fmt(a)} at the default step, {_fmt(b)} at half of it"
        + ("" if a <= 1e-2 else " (the default step exceeds 1 %)")
        + f"; final kinetic energy {_fmt(full['ke'][-1] / full['released'][-1])} of the released; dissipated "
        f"{_fmt(sim.energy()['dissipated'])} J", "column.png",
        data={"spheres": sim.n_spheres, "dt": sim.dt, "error_default_dt": a, "error_half_dt": b})]


#: the check functions of each group (each takes the context of :func:`make_context`, returns Checks)
CHECKS = {"hysteresis": (check_hysteresis,), "impact": (check_impact,), "oblique": (check_oblique,),
          "symmetry": (check_objectivity, check_swap, check_momentum), "continuity": (check_continuity,),
          "energy": (check_work_energy, check_elastic_gradient),
          "timestep": (check_convergence, check_critical_dt, check_stable_run), "column": (check_column,)}


def make_context(model: ContactModel, *, material: Material | None = None, radius: float = 1e-3,
                 quick: bool = False, debug: bool = False, speeds=None, angles=None, properties: dict | None = None,
                 log: Callable[[str], None] | None = None) -> _Context:
    """The settings and scales the checks share (the calibration runs here); for calling single
    check functions (``CHECKS[group]``) by hand."""
    if not isinstance(model, ContactModel):
        raise InputError(f"validate() needs a contact model (a contactlab.models.ContactModel), got "
                         f"{type(model).__name__}")
    props = properties_for(model, properties)
    return _Context(model, material or DEFAULT_PROBE_MATERIAL, radius, quick, debug, speeds, angles, props,
                    closed_form_for(model), log)


# ============================================================================ entry point
@checked_call
def validate(model: ContactModel, *, out=None, material: Material | None = None, radius: float = 1e-3,
             quick: bool = False, debug: bool = False, groups=None, speeds=None, angles=None,
             properties: dict | None = None, log: Callable[[str], None] | None = None) -> ValidationReport:
    """Run the validation battery on ``model`` (any :class:`~contactlab.models.ContactModel`).

    Parameters
    ----------
    model : ContactModel
        Built-in or user-defined.
    out : path, optional
        Write the report there (``report.html``, ``summary.json``, PNG figures).
    material : Material
        Material of the spheres and walls (default :data:`contactlab.probe.DEFAULT_PROBE_MATERIAL`,
        glass-like, E = 1e7 Pa).
    radius : float
        Sphere radius, m (default 1 mm).
    quick : bool
        The reduced sweep used in CI (3 speeds, 3 angles, coarser steps, a 20-sphere column).
    debug : bool
        Run the law and the kernels as plain Python (slow: for checking a new law with breakpoints).
    groups : iterable of str, optional
        Run only these groups (of :data:`GROUPS`).
    speeds, angles : optional
        Impact speeds (m/s) and incident angles (deg, from the normal) instead of the model's own.
    properties : dict, optional
        Override the model's declared :class:`ModelProperties`.
    log : callable, optional
        Called with a line of text as the battery progresses.

    Returns
    -------
    ValidationReport
        ``.passed``, ``.checks``, ``.summary()``, ``.write(dir)``.

    Example
    -------
    >>> import contactlab as cl
    >>> report = cl.validate(cl.models.HertzMindlin(restitution=0.5, friction=0.5), quick=True,
    ...                      groups=["symmetry"])                               # doctest: +SKIP
    >>> report.passed                                                            # doctest: +SKIP
    """
    groups = tuple(GROUPS if groups is None else groups)
    bad = sorted(set(groups) - set(GROUPS), key=str)
    if bad:
        named = ", ".join(f"{b!r}{did_you_mean(b, GROUPS)}" for b in bad)
        raise InputError(f"unknown check group(s) {named}; groups: {', '.join(GROUPS)}")
    start = _time.perf_counter()
    ctx = make_context(model, material=material, radius=radius, quick=quick, debug=debug, speeds=speeds,
                       angles=angles, properties=properties, log=log)
    material, props = ctx.material, ctx.props
    checks = []
    for group in GROUPS:
        if group not in groups:
            continue
        ctx.log(f"{group} ...")
        for func in CHECKS[group]:
            t0 = _time.perf_counter()
            try:
                found = func(ctx)
            except (ContactlabError, RuntimeError, ValueError, ArithmeticError, IndexError) as exc:
                found = [Check(f"{func.__name__[6:].replace('_', ' ')}: the experiment failed", group, False, None,
                               "", "the experiment runs", "-",
                               f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")]
            for c in found:
                c.data.setdefault("seconds", round(_time.perf_counter() - t0, 3))
            checks.extend(found)
    try:
        params = model.to_dict()
    except Exception:  # noqa: BLE001 - a user model's to_dict may fail; the values are enough
        params = dict(getattr(model, "values", {}))
    report = ValidationReport(
        model_name=type(model).__name__, model_repr=repr(model), parameters=params, properties=props.to_dict(),
        closed_form=ctx.closed_form_source, settings={"material": {"density": material.density, "young": material.young,
                                                                   "poisson": material.poisson, "name": material.name},
                                                      "radius_m": ctx.radius, "quick": ctx.quick, "debug": ctx.debug,
                                                      "groups": list(groups), "steps_per_contact": list(ctx.steps),
                                                      "time_step_study": list(ctx.study)},
        scales=ctx.scales(), checks=checks, figures=ctx.figures, elapsed=_time.perf_counter() - start)
    if out is not None:
        report.write(out)
    return report
