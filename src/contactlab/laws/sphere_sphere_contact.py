"""The sphere-sphere contact connector of spec 000: three impact models and regularized friction.

Notation of the spec (body ``i`` is the spec's sphere 0 / marker m0, body ``j`` its sphere 1 /
marker m1; the record's ``normal`` points from ``i`` to ``j``):

* gap ``g = |p_1 - p_0| - (r_0 + r_1)``, overlap ``delta = -g`` (> 0 in contact);
* normal gap velocity ``v_n = (v_a1 - v_a0) . n`` and tangential velocity
  ``v_t = (v_a1 - v_a0) - v_n n`` at the contact point, where ``v_a = v + omega x b`` with the
  lever arms ``b_0 = (r_0 - delta/2) n`` and ``b_1 = -(r_1 - delta/2) n``;
* normal force on sphere 1: ``f_1n n`` with ``f_1n = f_c + f_d`` and ``f_d = -d_c v_n``;
* tangential force on sphere 1: ``f_1t = -v_t mu_d |f_1n| / max(|v_t|, v_reg)``;
* torques ``tau_1 = -n (r_1 - delta/2) x f_1`` and ``tau_0 = n (r_0 - delta/2) x f_0``
  (the engine applies them through the record's branch vectors), ``f_0 = -f_1``.

Elastic part ``f_c`` by impact model (``D = delta^n_exp``):

* 0, adhesive elasto-plastic (Edinburgh model), active when ``lambda_P > 0``:
  ``f_c = -f_adh + max(min(k_c D, k_2 (D - delta_p^n_exp)), -k_adh delta^n_adh)`` with
  ``k_2 = k_c / (1 - lambda_P)`` -- the spec's three branches (loading on ``k_c``, un/reloading on
  ``k_2``, adhesion), written as one clamp.  The plastic overlap
  ``delta_p = max(delta_p, lambda_P^(1/n_exp) delta)`` is history (it grows only on the loading
  branch, where ``k_2 (D - delta_p^n) = k_c D``), reset to zero when the spheres separate.  With
  ``lambda_P = 0`` the Edinburgh model is off, as the spec's parameter says: ``f_c = k_c D``
  (no pull-off force, no adhesion).
* 1, Hunt-Crossley: ``f_c = k_c D + lambda D v_n``, ``lambda = k_c / v_- * 3/2 (e - 1)``;
* 2, Carvalho-Martins for ``e > 1/3``: ``lambda = k_c / v_- * 3/2 (e - 1)(11 - e)/(1 + 9 e)``,
  Gonthier et al. for ``e <= 1/3``: ``lambda = k_c / v_- * (e^2 - 1)/e``.

``v_- = max(v_min, -v_n at first touch)``: the impact velocity is recorded when the contact starts
and kept for its life; if ``v_- <= 0`` (a contact that starts without approaching and no minimum
impact velocity) the hysteretic term is zero.

Per-contact history (the spec's four data values): the gap (m), the tangential speed
``|v_t|`` (m/s), the impact velocity (m/s) and the plastic overlap (m), all at the last
evaluation, all zero for a new contact (a contact is new when its stored gap is 0: an ongoing one
stores a negative gap).

Energy: ``stored`` is ``k_c delta^(n+1)/(n+1)`` for models 1 and 2 and for model 0 without
plasticity; with plasticity it is the energy the ``k_2`` branch gives back,
``k_2 [(delta^(n+1) - delta_p^(n+1))/(n+1) - delta_p^n (delta - delta_p)]`` for
``delta > delta_p``.  The dissipation of a step is the dashpot and hysteresis power times ``dt``,
the friction force times the tangential slip of the step, and, for model 0, the work of ``f_c``
over the step (trapezoidal rule) minus the change of ``stored``: the plastic work, plus the net
work of adhesion (negative while adhesion pulls the spheres together).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..errors import InputError
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings
from .impact_reference import ode_impact, sphere_mass

__all__ = ["SphereSphereContact", "law", "reference_law", "impact_factor", "IMPACT_MODELS"]

#: gap (m) up to which the engine hands a pair to the law; farther pairs are reset (history zero)
INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("gap", 1, "m", "gap at the last evaluation (negative in contact; spec data[0])"),
    HistoryField("tangential_speed", 1, "m/s", "|v_t| at the contact point (spec data[1])"),
    HistoryField("impact_velocity", 1, "m/s", "approach speed at first touch (spec data[2])"),
    HistoryField("plastic_overlap", 1, "m", "plastic overlap delta_p of model 0 (spec data[3])"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

#: impact_model values and their names
IMPACT_MODELS = {0: "adhesive elasto-plastic (Edinburgh)", 1: "Hunt-Crossley", 2: "Gonthier / Carvalho-Martins"}

# pair-table columns (the same for every pair of materials)
(K_C, D_C, N_EXP, MODEL, V_MIN, MU_D, V_REG, F_ADH, LAMBDA_P, K_ADH, N_ADH, K_2, HYST, ROOT_LP) = range(14)


def impact_factor(model: int, restitution: float) -> float:
    """``lambda v_- / k_c`` of the hysteretic term for impact model 1 or 2 (0 for model 0)."""
    e = float(restitution)
    if model == 1:
        return 1.5 * (e - 1.0)
    if model == 2:
        if e > 1.0 / 3.0:
            return 1.5 * (e - 1.0) * (11.0 - e) / (1.0 + 9.0 * e)
        return (e * e - 1.0) / e
    return 0.0


@jit
def _power(x, n):
    """``x**n`` for ``x >= 0`` (exact and fast for n = 1)."""
    if n == 1.0:
        return x
    if x <= 0.0:
        return 0.0
    return x**n


@jit
def _eepa_force(delta, delta_p, p):
    """Elastic force f_c (N, repulsive > 0) of the Edinburgh model at overlap ``delta`` (m)."""
    n = p[N_EXP]
    d_n = _power(delta, n)
    f = min(p[K_C] * d_n, p[K_2] * (d_n - _power(delta_p, n)))
    f = max(f, -p[K_ADH] * _power(delta, p[N_ADH]))
    return f - p[F_ADH]


@jit
def _eepa_energy(delta, delta_p, p):
    """Energy (J) the k_2 branch gives back from ``delta`` down to ``delta_p``."""
    if delta <= delta_p:
        return 0.0
    n = p[N_EXP]
    return p[K_2] * ((_power(delta, n + 1.0) - _power(delta_p, n + 1.0)) / (n + 1.0)
                     - _power(delta_p, n) * (delta - delta_p))


@jit
def law(g, p, h, dt):
    """Spec-000 sphere-sphere contact (see the module docstring).

    History ``h`` (4 floats): gap, tangential speed, impact velocity, plastic overlap.
    Returns ``(force on i, couple on i, stored energy, dissipation, active, new h)``.
    """
    delta = g.overlap
    if delta <= 0.0:
        z = (0.0, 0.0, 0.0)
        return z, z, 0.0, 0.0, False, (0.0, 0.0, 0.0, 0.0)
    n = g.normal
    v = g.rel_velocity
    v_n = dot(v, n)                   # gap velocity, < 0 while approaching
    new = h[0] == 0.0                 # an ongoing contact stores a negative gap
    v_imp = -v_n if new else h[2]
    k_c = p[K_C]
    n_exp = p[N_EXP]
    d_n = _power(delta, n_exp)
    model = p[MODEL]
    delta_p = 0.0
    diss = 0.0
    if model == 0.0 and p[LAMBDA_P] > 0.0:
        delta_old = 0.0 if new else -h[0]
        delta_p_old = h[3]
        delta_p = max(delta_p_old, p[ROOT_LP] * delta)
        f_c = _eepa_force(delta, delta_p, p)
        stored = _eepa_energy(delta, delta_p, p)
        f_old = _eepa_force(delta_old, delta_p_old, p)
        diss = 0.5 * (f_old + f_c) * (delta - delta_old) - (stored - _eepa_energy(delta_old, delta_p_old, p))
    else:
        f_c = k_c * d_n
        stored = k_c * d_n * delta / (n_exp + 1.0)
        if model != 0.0:
            v_ref = max(p[V_MIN], v_imp)
            if v_ref > 0.0:
                f_h = (k_c / v_ref) * p[HYST] * d_n * v_n
                f_c += f_h
                diss -= f_h * v_n * dt
    f_d = -p[D_C] * v_n
    diss -= f_d * v_n * dt
    f_1n = f_c + f_d
    # regularized Coulomb friction against the tangential contact-point velocity
    vt = (v[0] - v_n * n[0], v[1] - v_n * n[1], v[2] - v_n * n[2])
    speed = math.sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2])
    f1 = (f_1n * n[0], f_1n * n[1], f_1n * n[2])
    mu = p[MU_D]
    if mu > 0.0:
        scale_v = max(speed, p[V_REG])
        if scale_v > 0.0:
            c_t = mu * abs(f_1n) / scale_v
            f1 = (f1[0] - c_t * vt[0], f1[1] - c_t * vt[1], f1[2] - c_t * vt[2])
            s = g.rel_displacement
            s_n = dot(s, n)
            diss += c_t * (vt[0] * (s[0] - s_n * n[0]) + vt[1] * (s[1] - s_n * n[1]) + vt[2] * (s[2] - s_n * n[2]))
    force_i = (-f1[0], -f1[1], -f1[2])
    return force_i, (0.0, 0.0, 0.0), stored, diss, True, (-delta, speed, v_imp, delta_p)


class SphereSphereContact(ContactModel):
    """Spec-000 contact: linear/power-law normal spring with three impact models, regularized friction.

    Parameter names are the spec's (snake_case), with its defaults; SI units.

    Parameters
    ----------
    contact_stiffness : float
        k_c, N/m^n_exp (>= 0; default 0: no normal force).
    contact_damping : float
        d_c, N s/m (>= 0): linear normal damping ``-d_c v_n``, added for every impact model.
    contact_stiffness_exponent : float
        n_exp > 0, default 1: the elastic force is ``k_c delta^n_exp``.
    impact_model : int
        0: adhesive elasto-plastic (Edinburgh; linear spring plus ``d_c`` when
        ``contact_plasticity_ratio`` is 0), 1: Hunt-Crossley, 2: Gonthier / Carvalho-Martins.
    restitution_coefficient : float
        e, 0 < e <= 1, default 1 (models 1 and 2).
    minimum_impact_velocity : float
        Lower bound of the impact velocity v_- (m/s, >= 0) in the hysteretic damping of models 1, 2.
    dynamic_friction : float
        mu_d >= 0, default 0 (no friction).
    friction_proportional_zone : float
        v_reg, m/s (>= 0, default 1e-3): below this tangential speed the friction force is
        proportional to the speed.
    constant_pull_off_force : float
        f_adh, N (>= 0): constant adhesion force of model 0 (with plasticity).
    contact_plasticity_ratio : float
        lambda_P, 0 <= lambda_P < 1: ``k_2 = k_c / (1 - lambda_P)``; 0 switches the Edinburgh
        model off.
    adhesion_coefficient : float
        k_adh, N/m^n_adh (>= 0): adhesion branch of model 0.
    adhesion_exponent : float
        n_adh >= 0, default 1.

    Walls are spheres of infinite radius (the wall is the spec's sphere 1).  The model is the same
    for every pair of materials; the materials only give the spheres their masses.

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.SphereSphereContact(contact_stiffness=1e6, impact_model=2,
    ...                                       restitution_coefficient=0.7)
    >>> model.impact_model
    2
    """

    name = "SphereSphereContact"
    law_module = "contactlab.laws.sphere_sphere_contact"
    parameters = (
        Parameter("contact_stiffness", "N/m^n_exp", "normal contact stiffness k_c", 0.0, 0.0),
        Parameter("contact_damping", "N s/m", "linear normal contact damping d_c", 0.0, 0.0),
        Parameter("contact_stiffness_exponent", "-", "exponent n_exp of the normal force", 1.0, 0.0, math.inf, False),
        Parameter("impact_model", "-", "0: adhesive elasto-plastic, 1: Hunt-Crossley, 2: Gonthier/Carvalho-Martins",
                  0, 0.0, 2.0),
        Parameter("restitution_coefficient", "-", "coefficient of restitution e", 1.0, 0.0, 1.0, False, True),
        Parameter("minimum_impact_velocity", "m/s", "lower bound of the impact velocity", 0.0, 0.0),
        Parameter("dynamic_friction", "-", "dynamic friction coefficient mu_d", 0.0, 0.0),
        Parameter("friction_proportional_zone", "m/s", "speed v_reg below which friction is proportional", 1e-3,
                  0.0),
        Parameter("constant_pull_off_force", "N", "constant adhesion force f_adh (model 0)", 0.0, 0.0),
        Parameter("contact_plasticity_ratio", "-", "lambda_P = 1 - k_c/k_2 (model 0)", 0.0, 0.0, 1.0, True, False),
        Parameter("adhesion_coefficient", "N/m^n_adh", "adhesion coefficient k_adh (model 0)", 0.0, 0.0),
        Parameter("adhesion_exponent", "-", "adhesion exponent n_adh (model 0)", 1.0, 0.0),
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("k_c", "d_c", "n_exp", "impact_model", "v_min", "mu_d", "v_reg", "f_adh", "lambda_p", "k_adh",
                   "n_adh", "k_2", "hysteresis_factor", "root_lambda_p")
    default_dt_fraction = 0.2

    def __init__(self, contact_stiffness=0.0, contact_damping=0.0, contact_stiffness_exponent=1.0, impact_model=0,
                 restitution_coefficient=1.0, minimum_impact_velocity=0.0, dynamic_friction=0.0,
                 friction_proportional_zone=1e-3, constant_pull_off_force=0.0, contact_plasticity_ratio=0.0,
                 adhesion_coefficient=0.0, adhesion_exponent=1.0, **unknown):
        if isinstance(impact_model, bool) or impact_model not in IMPACT_MODELS:
            raise InputError(f"SphereSphereContact: impact_model must be one of "
                             f"{', '.join(f'{k} ({v})' for k, v in IMPACT_MODELS.items())}, got {impact_model!r}")
        super().__init__(contact_stiffness=contact_stiffness, contact_damping=contact_damping,
                         contact_stiffness_exponent=contact_stiffness_exponent, impact_model=impact_model,
                         restitution_coefficient=restitution_coefficient,
                         minimum_impact_velocity=minimum_impact_velocity, dynamic_friction=dynamic_friction,
                         friction_proportional_zone=friction_proportional_zone,
                         constant_pull_off_force=constant_pull_off_force,
                         contact_plasticity_ratio=contact_plasticity_ratio,
                         adhesion_coefficient=adhesion_coefficient, adhesion_exponent=adhesion_exponent, **unknown)
        self._values["impact_model"] = int(impact_model)

    @classmethod
    def examples(cls) -> dict:
        """One instance per impact model: the Edinburgh elasto-plastic adhesive model (k_2 = 2 k_c,
        linear adhesion); Hunt-Crossley and Carvalho-Martins (e > 1/3) on a Hertzian spring (k_c ~
        4/3 E* sqrt(R) of the glass), the impact velocity in their damping at least 5 cm/s (without
        a floor a contact that starts slowly is damped without bound); friction regularised below
        1 cm/s."""
        hertzian = dict(contact_stiffness=2e5, contact_stiffness_exponent=1.5, minimum_impact_velocity=0.05,
                        dynamic_friction=0.3, friction_proportional_zone=0.01)
        return {
            "sphere_sphere_contact_edinburgh": cls(contact_stiffness=2e3, impact_model=0, contact_plasticity_ratio=0.5,
                                                   adhesion_coefficient=400.0, dynamic_friction=0.4,
                                                   friction_proportional_zone=0.01),
            "sphere_sphere_contact_hunt_crossley": cls(impact_model=1, restitution_coefficient=0.7, **hertzian),
            "sphere_sphere_contact_gonthier": cls(impact_model=2, restitution_coefficient=0.5, **hertzian),
        }

    @property
    def k2(self) -> float:
        """Un/reloading stiffness ``k_2 = k_c / (1 - lambda_P)`` of model 0, N/m^n_exp."""
        return self.contact_stiffness / (1.0 - self.contact_plasticity_ratio)

    @property
    def edinburgh(self) -> bool:
        """Whether the adhesive elasto-plastic branches are on (model 0 with lambda_P > 0)."""
        return self.impact_model == 0 and self.contact_plasticity_ratio > 0.0

    def row(self) -> tuple[float, ...]:
        """The pair-table row (the same for every pair), in the order of ``pair_fields``."""
        lp = self.contact_plasticity_ratio
        n = self.contact_stiffness_exponent
        return (self.contact_stiffness, self.contact_damping, n, float(self.impact_model),
                self.minimum_impact_velocity, self.dynamic_friction, self.friction_proportional_zone,
                self.constant_pull_off_force, lp if self.impact_model == 0 else 0.0, self.adhesion_coefficient,
                self.adhesion_exponent, self.k2, impact_factor(self.impact_model, self.restitution_coefficient),
                lp ** (1.0 / n))

    def pair_table(self, materials):
        row = np.array(self.row(), dtype=float)
        return np.broadcast_to(row, (len(materials), len(materials), len(row))).copy()

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """The normal sense at ``case.overlap``, with the dashpot and the hysteretic damping.

        Stiffness ``n k delta^(n-1)`` (``k = k_2`` for the Edinburgh model, whose unloading is
        stiffer); hysteretic damping coefficient ``|lambda| k delta^n / v_imp``.  The slowest
        impact that can end at ``delta`` is one that forms at the minimum impact velocity and is
        then pressed further (a sphere under a load): with ``minimum_impact_velocity > 0`` that
        speed is used, otherwise (the spec's default, an unbounded coefficient) the speed of an
        impact that reaches ``delta`` by its own momentum.  Regularized friction is a bounded
        force (``mu_d |f_n|``): too large a step makes it chatter in stick but cannot blow up, so
        it does not enter (see :meth:`accuracy_limit`).
        """
        k_c = self.contact_stiffness
        n = self.contact_stiffness_exponent
        m = float(case.mass)
        d = float(case.overlap)
        k = self.k2 if self.edinburgh else k_c
        k_eff = max(n * k * d ** (n - 1.0), 0.0) if d > 0.0 else (k if n == 1.0 else 0.0)
        c = self.contact_damping
        factor = impact_factor(self.impact_model, self.restitution_coefficient)
        if factor != 0.0 and k_c > 0.0:
            v0 = math.sqrt(2.0 * k_c * d ** (n + 1.0) / ((n + 1.0) * m)) if math.isfinite(m) else math.inf
            v_ref = self.minimum_impact_velocity if self.minimum_impact_velocity > 0.0 else v0
            if math.isfinite(v_ref) and v_ref > 0.0:
                c += abs(factor) * k_c * d**n / v_ref
        return ContactSprings(normal=k_eff, normal_damping=c)

    def accuracy_limit(self, case: PairCase) -> float:
        """Largest step that integrates the regularized friction faithfully (s): below ``v_reg`` it
        is a tangential dashpot of coefficient ``mu_d f_n / v_reg`` (``f_n`` at the reference
        overlap) on the effective mass of sliding, resolved while ``dt <= 2 m_t / c``.  A simulation's
        default step (``dt=None``) stays below it; a step given explicitly may exceed it (the force
        is bounded: it chatters in stick instead of blowing up; sliding is unaffected)."""
        if not (self.dynamic_friction > 0.0 and self.friction_proportional_zone > 0.0):
            return math.inf
        n = self.contact_stiffness_exponent
        k = self.k2 if self.edinburgh else self.contact_stiffness
        c_t = self.dynamic_friction * k * case.overlap**n / self.friction_proportional_zone
        return 2.0 * case.tangential_mass / c_t if c_t > 0.0 else math.inf

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow (``contactlab.validation.battery.ModelProperties``),
        from the spec's normal force: it pulls (adhesive) with the Edinburgh model's adhesion or
        pull-off force, with a dashpot ``d_c``, or when the hysteretic term ``k D^n (1 + |H| d'/v)``
        pulls during restitution (``|H| > 1``); a constant pull-off force is the force at touch and
        at separation; the dashpot acts from first touch; friction ``mu_d |f_n|`` (regularised below
        ``v_reg``) is plain Coulomb while the normal force does not pull (the oblique check uses only
        impacts in which it never pulled)."""
        edinburgh = self.impact_model == 0 and self.contact_plasticity_ratio > 0.0
        pull_off = self.constant_pull_off_force if edinburgh else 0.0
        adhesion = edinburgh and (self.adhesion_coefficient > 0.0 or pull_off > 0.0)
        # the hysteretic term k D^n (1 + |H| d'/v) pulls during restitution when |H| > 1
        strong = abs(_spec_hysteresis_factor(self.impact_model, self.restitution_coefficient)) > 1.0
        pulls = adhesion or self.contact_damping > 0.0 or strong
        # friction mu_d |f_n| (regularised below v_reg): plain Coulomb while the normal force does not pull
        # (the oblique check uses only impacts in which it never pulled)
        return dict(adhesive=pulls, force_at_touch=-pull_off, force_at_separation=-pull_off,
                    viscous_at_touch=self.contact_damping > 0.0, sliding_friction=self.dynamic_friction)

    def closed_form_impact(self, material, radius, speed) -> dict:
        """Spec 000: the 1-DOF equation of the spec's normal force (its formulas restated here,
        independently of :func:`law`, with :func:`_spec_hysteresis_factor`) for a sphere of
        ``radius`` and ``material`` hitting a wall at the normal ``speed``, integrated by
        :func:`~contactlab.laws.impact_reference.ode_impact`; no values when the sphere is captured."""
        mass = sphere_mass(material, radius)
        k, n, d_c = self.contact_stiffness, self.contact_stiffness_exponent, self.contact_damping
        if k <= 0.0:
            return {"restitution": None, "duration": None, "source": "no normal stiffness"}
        v_ref = max(self.minimum_impact_velocity, speed)
        factor = _spec_hysteresis_factor(self.impact_model, self.restitution_coefficient)
        lam = k / v_ref * factor if v_ref > 0 else 0.0
        plastic = self.impact_model == 0 and self.contact_plasticity_ratio > 0.0
        lp = self.contact_plasticity_ratio
        k2 = k / (1.0 - lp)

        def power(x, e):
            return x**e if x > 0.0 else 0.0

        def force(d, v, d_max):
            d = max(d, 0.0)
            if plastic:
                d_p = lp ** (1.0 / n) * d_max
                f = min(k * power(d, n), k2 * (power(d, n) - power(d_p, n)))
                f = max(f, -self.adhesion_coefficient * power(d, self.adhesion_exponent)) - self.constant_pull_off_force
            else:
                f = k * power(d, n) - lam * power(d, n) * v       # lambda D^n v_n, v_n = -d'
            return f + d_c * v

        d_max = ((n + 1.0) * mass * speed**2 / (2.0 * k)) ** (1.0 / (n + 1.0))
        ode = ode_impact(force, mass, speed, d_max / speed)
        what = {0: "Edinburgh elasto-plastic adhesive" if plastic else "linear/power-law spring with dashpot",
                1: "Hunt-Crossley", 2: "Gonthier / Carvalho-Martins"}[self.impact_model]
        return {"restitution": None if ode["captured"] else ode["restitution"],
                "duration": None if ode["captured"] else ode["duration"],
                "source": f"spec-000 normal force ({what}) restated from the spec, 1-DOF equation of motion "
                          "(SciPy DOP853)"}


def _spec_hysteresis_factor(impact_model: int, e: float) -> float:
    """``lambda v_- / k_c`` of spec 000 for impact models 1 and 2 (0 for model 0), restated from the
    spec's formulas for the validation battery's references (independently of :func:`impact_factor`,
    which the law's pair table uses): Hunt-Crossley ``3/2 (e - 1)``; Carvalho-Martins
    ``3/2 (e - 1)(11 - e)/(1 + 9 e)`` for ``e > 1/3``, Gonthier et al. ``(e^2 - 1)/e`` otherwise."""
    if impact_model == 1:
        return 1.5 * (e - 1.0)
    if impact_model == 2:
        return 1.5 * (e - 1.0) * (11.0 - e) / (1.0 + 9.0 * e) if e > 1.0 / 3.0 else (e * e - 1.0) / e
    return 0.0


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law` (same conventions as the Hertz-Mindlin twin)."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    h = np.array(hist, dtype=float)
    delta = g["overlap"]
    if delta <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(4)
    n_vec = g["normal"]
    v = g["rel_velocity"]
    v_n = float(v @ n_vec)
    new = h[0] == 0.0
    v_imp = -v_n if new else h[2]
    n = p[N_EXP]

    def power(x, e):
        return x**e if x > 0 else 0.0

    def force_c(d, dp):
        f = min(p[K_C] * power(d, n), p[K_2] * (power(d, n) - power(dp, n)))
        return max(f, -p[K_ADH] * power(d, p[N_ADH])) - p[F_ADH]

    def energy(d, dp):
        if d <= dp:
            return 0.0
        return p[K_2] * ((power(d, n + 1) - power(dp, n + 1)) / (n + 1) - power(dp, n) * (d - dp))

    diss = 0.0
    dp = 0.0
    if p[MODEL] == 0 and p[LAMBDA_P] > 0:
        d_old = 0.0 if new else -h[0]
        dp = max(h[3], p[LAMBDA_P] ** (1.0 / n) * delta)
        f_c = force_c(delta, dp)
        stored = energy(delta, dp)
        diss = 0.5 * (force_c(d_old, h[3]) + f_c) * (delta - d_old) - (stored - energy(d_old, h[3]))
    else:
        f_c = p[K_C] * power(delta, n)
        stored = p[K_C] * power(delta, n + 1) / (n + 1)
        if p[MODEL] != 0:
            v_ref = max(p[V_MIN], v_imp)
            if v_ref > 0:
                lam = p[K_C] / v_ref * p[HYST]
                f_c += lam * power(delta, n) * v_n
                diss -= lam * power(delta, n) * v_n * v_n * dt
    f_d = -p[D_C] * v_n
    diss -= f_d * v_n * dt
    f_1n = f_c + f_d
    vt = v - v_n * n_vec
    speed = float(np.linalg.norm(vt))
    f1 = f_1n * n_vec
    if p[MU_D] > 0 and max(speed, p[V_REG]) > 0:
        c_t = p[MU_D] * abs(f_1n) / max(speed, p[V_REG])
        f1 = f1 - c_t * vt
        s = g["rel_displacement"]
        diss += c_t * float(vt @ (s - (s @ n_vec) * n_vec))
    return -f1, np.zeros(3), stored, diss, True, np.array([-delta, speed, v_imp, dp])
