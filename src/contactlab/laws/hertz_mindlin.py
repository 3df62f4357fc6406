"""Hertz-Mindlin: Hertz normal force, Mindlin no-slip tangential spring, Coulomb friction.

Normal (overlap ``d`` > 0, overlap rate ``d'``):

    F_n = max(0, 4/3 E* sqrt(R*) d^(3/2) + c sqrt(m* S_n) d'),   S_n = 2 E* sqrt(R* d)

with ``c`` chosen so that the measured restitution of a collision equals the requested one for
every impact speed, pair of materials and sizes (:func:`~contactlab.laws.restitution.hertz_damping_coefficient`).

Tangential: spring-slider (:mod:`contactlab.laws.springs`) of stiffness ``S_t = 8 G* sqrt(R* d)``
and viscosity ``c sqrt(m* S_t)``, sliding at ``mu F_n``.  The elastic displacement is history,
rotated into the current tangent plane at every step.  Because ``S_t`` changes with the overlap,
the stored displacement is rescaled by ``sqrt(S_t,old / S_t,new)`` when the overlap changes, so
that the spring's energy ``S_t |xi|^2 / 2`` changes only by work done on it (the plain
displacement-history Mindlin spring gains energy while the overlap grows under a stuck tangential
load and loses it on unloading; with the rescaling the contact is energy-consistent).

Rolling resistance (when ``rolling_friction`` > 0), one of two models chosen by ``rolling_model``:

* ``"spring"`` (default): elastic-plastic spring on the relative rotation (Iwashita and Oda's
  stiffness ``k_r = S_t R*^2``), sliding at the torque ``mu_r R* F_n``; it holds any moment below
  that limit at rest;
* ``"constant_torque"``: a torque ``mu_r R* F_n`` against the relative rolling rate and nothing
  at rest (Zhou et al. 1999; Ai et al. 2011, type A; :func:`~contactlab.laws.springs.constant_torque_rolling`).

The choice is a column of the pair table, read at run time: both models run in the same compiled
kernels, and a comparison of the two changes nothing else in the contact.

Mixing: ``1/E* = (1 - nu_a^2)/E_a + (1 - nu_b^2)/E_b``,
``1/G* = 2 (2 - nu_a)(1 + nu_a)/E_a + 2 (2 - nu_b)(1 + nu_b)/E_b``, ``R*`` and ``m*`` from the
geometry record (a wall is a body of infinite radius and mass).
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import did_you_mean
from .._jit import jit
from ..errors import InputError
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings, single_contact_limit
from .impact_reference import hertz_moduli, ode_impact, sphere_mass
from .restitution import hertz_damping_coefficient
from .springs import (constant_torque_rolling, constant_torque_rolling_reference, friction_senses,
                      friction_senses_reference)

__all__ = ["HertzMindlin", "law", "reference_law", "effective_moduli"]

#: gap (m) up to which the engine hands a pair to the law; farther pairs are reset (history zero)
INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("tangential_displacement", 3, "m", "elastic tangential displacement xi"),
    HistoryField("rolling_rotation", 3, "rad", "elastic relative rotation of the rolling spring (N m: the last "
                 "couple, with rolling_model='constant_torque')"),
    HistoryField("tangential_stiffness", 1, "N/m", "Mindlin stiffness S_t of the last step"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

# pair-table columns
E_STAR, G_STAR, MU, MU_ROLL, DAMPING, ROOT_T_OVER_N, ROLLING_MODEL = range(7)
#: the rolling models, by the value of the pair table's ``rolling_model`` column
ROLLING_MODELS = {"spring": 0.0, "constant_torque": 1.0}


@jit
def law(g, p, h, dt):
    """Hertz-Mindlin law (see the module docstring).

    History ``h`` (7 floats): tangential xi (3), rolling theta (3), tangential stiffness of the last
    step (1).  Returns ``(force on i, couple on i, stored energy, dissipation, active, new h)``.
    """
    delta = g.overlap
    if delta <= 0.0:
        z = (0.0, 0.0, 0.0)
        return z, z, 0.0, 0.0, False, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    n = g.normal
    e_star = p[E_STAR]
    g_star = p[G_STAR]
    c = p[DAMPING]
    rate = -dot(g.rel_velocity, n)  # overlap rate, > 0 while approaching
    root = math.sqrt(g.radius * delta)
    s_n = 2.0 * e_star * root
    f_el = (2.0 / 3.0) * s_n * delta
    # sqrt(m* S_n) and sqrt(m* S_t) from two square roots (S_t / S_n = 4 G* / E* per material pair)
    root_ms_n = math.sqrt(g.mass * s_n)
    f_n = f_el + c * root_ms_n * rate
    if f_n < 0.0:
        f_n = 0.0
    energy = 0.4 * f_el * delta
    diss = (f_n - f_el) * rate * dt
    # tangential and rolling
    s_t = 8.0 * g_star * root
    spring = p[ROLLING_MODEL] == 0.0
    f_t, couple, xi_t, xi_r, e_t, d_t = friction_senses(g, (h[0], h[1], h[2]), (h[3], h[4], h[5]), dt, f_n, s_t,
                                                        h[6], c * root_ms_n * p[ROOT_T_OVER_N], p[MU],
                                                        p[MU_ROLL] if spring else 0.0)
    if not spring:
        # the constant-torque model keeps its last couple where the spring keeps its rotation
        couple, d_r = constant_torque_rolling(n, g.rel_angular_velocity, g.rel_rotation, xi_r, p[MU_ROLL] * g.radius * f_n)
        xi_r = couple
        d_t += d_r
    force = (f_t[0] - f_n * n[0], f_t[1] - f_n * n[1], f_t[2] - f_n * n[2])
    h_new = (xi_t[0], xi_t[1], xi_t[2], xi_r[0], xi_r[1], xi_r[2], s_t)
    return force, couple, energy + e_t, diss + d_t, True, h_new


def effective_moduli(a, b) -> tuple[float, float]:
    """(E*, G*) in Pa for materials ``a`` and ``b``."""
    e_star = 1.0 / ((1.0 - a.poisson**2) / a.young + (1.0 - b.poisson**2) / b.young)
    g_star = 1.0 / (2.0 * (2.0 - a.poisson) * (1.0 + a.poisson) / a.young
                    + 2.0 * (2.0 - b.poisson) * (1.0 + b.poisson) / b.young)
    return e_star, g_star


class HertzMindlin(ContactModel):
    """Hertz-Mindlin contact with exact restitution, Coulomb friction and optional rolling resistance.

    Parameters
    ----------
    restitution : float
        Normal coefficient of restitution, 0 < e <= 1 (measured, for any impact speed).
    friction : float
        Coulomb friction coefficient mu >= 0.
    rolling_friction : float
        Rolling friction coefficient mu_r >= 0 (dimensionless; torque limit ``mu_r R* F_n``),
        default 0 (no rolling resistance).
    rolling_model : {"spring", "constant_torque"}, keyword only
        ``"spring"`` (default): elastic-plastic rolling spring sliding at ``mu_r R* F_n``;
        ``"constant_torque"``: the torque ``mu_r R* F_n`` against the relative rolling, none at
        rest (Zhou et al.'s rolling friction, a length ``mu_r R*``).  Same kernels either way.
    per_material : dict, optional
        ``{material or name: {"friction": value}}``: a material's own friction coefficient; a pair
        of materials slides at the smaller of the two (YADE's rule), e.g. frictionless platens.

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    """

    name = "HertzMindlin"
    law_module = "contactlab.laws.hertz_mindlin"
    parameters = (
        Parameter("restitution", "-", "normal coefficient of restitution", None, 0.0, 1.0, False, True),
        Parameter("friction", "-", "Coulomb friction coefficient", None, 0.0),
        Parameter("rolling_friction", "-", "rolling friction coefficient", 0.0, 0.0),
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("e_star", "g_star", "friction", "rolling_friction", "damping", "root_st_over_sn", "rolling_model")
    construction_keys = ("rolling_model", "per_material")
    #: ``per_material={"platen": {"friction": 0.0}}``: the smaller of two materials' values, as YADE
    #: mixes friction (frictionless platens in a triaxial cell)
    mixing = {"friction": "min"}
    # the limit is taken at the largest allowed overlap; typical overlaps are far smaller and softer.
    # 0.30 (0.35 before issue 42): the velocity predictor's mean of two accelerations, which keeps
    # damped packings stable, has a larger error constant than the last acceleration alone (7/12
    # against 1/3), and the energy balance of a compressed bed (tests/test_conservation.py) grew
    # from 0.73 % to 1.06 % of the boundary work at 0.35; at 0.30 it is back at ~0.8 %
    default_dt_fraction = 0.30

    def __init__(self, restitution, friction, rolling_friction=0.0, *, rolling_model="spring", **unknown):
        if not isinstance(rolling_model, str) or rolling_model not in ROLLING_MODELS:
            raise InputError(f"HertzMindlin: rolling_model must be one of {', '.join(map(repr, ROLLING_MODELS))}, "
                             f"got {rolling_model!r}{did_you_mean(rolling_model, ROLLING_MODELS)}")
        super().__init__(restitution=restitution, friction=friction, rolling_friction=rolling_friction, **unknown)
        self.rolling_model = rolling_model
        self._damping = hertz_damping_coefficient(self.restitution)

    def __repr__(self) -> str:
        text = super().__repr__()
        return text if self.rolling_model == "spring" else f"{text[:-1]}, rolling_model={self.rolling_model!r})"

    def to_dict(self) -> dict:
        out = super().to_dict()
        if self.rolling_model != "spring":
            out["rolling_model"] = self.rolling_model
        return out

    def unused_history(self) -> tuple[str, ...]:
        """The rolling spring's rotation without rolling friction: the law then hands the spring
        ``mu_r = 0`` (:func:`~contactlab.laws.springs.friction_senses` leaves its rotation as it
        came, zero), so the contact table need not store it (24 B per candidate pair).  The
        constant-torque model keeps its last couple there (its work over a step is booked with the
        mean of two couples).

        >>> import contactlab as cl
        >>> cl.models.HertzMindlin(restitution=0.5, friction=0.5).unused_history()
        ('rolling_rotation',)
        >>> cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1).unused_history()
        ()
        """
        if self.rolling_friction == 0.0:
            return ("rolling_rotation",)
        return ()

    @classmethod
    def examples(cls) -> dict:
        """The brief's standard: e = 0.5, mu = 0.5."""
        return {"hertz_mindlin": cls(restitution=0.5, friction=0.5)}

    @property
    def damping_coefficient(self) -> float:
        """Dimensionless c of ``F_d = c sqrt(m* S_n) d'`` (from the restitution)."""
        return self._damping

    def pair_table(self, materials):
        m = len(materials)
        table = np.zeros((m, m, len(self.pair_fields)))
        for a in range(m):
            for b in range(m):
                e_star, g_star = effective_moduli(materials[a], materials[b])
                table[a, b] = (e_star, g_star, self.pair_value("friction", materials[a], materials[b]),
                               self.rolling_friction, self._damping,
                               math.sqrt(4.0 * g_star / e_star), ROLLING_MODELS[self.rolling_model])
        return table

    stiffness_on_arrays = True

    def _springs(self, case: PairCase, frictional: bool) -> ContactSprings:
        """The Hertz and Mindlin tangent stiffnesses at ``case.overlap`` with their dashpots
        (``S_n = 2 E* sqrt(R* d)``, ``S_t = 8 G* sqrt(R* d)``, ``c sqrt(m* S)``), the rolling spring
        ``S_t R*^2`` when it acts; the tangential spring only if ``frictional``."""
        e_star, g_star = effective_moduli(case.material_i, case.material_j)
        root = np.sqrt(case.radius * np.maximum(case.overlap, 0.0))
        zero = 0.0 * root
        s_n = 2.0 * e_star * root
        s_t = 8.0 * g_star * root if frictional else zero
        c, m = self._damping, case.mass
        rolling = self.rolling_friction > 0.0 and self.rolling_model == "spring"
        return ContactSprings(s_n, s_t, s_t * case.radius**2 if rolling else zero, zero,
                                c * np.sqrt(m * s_n), c * np.sqrt(m * s_t), zero, zero)

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """:meth:`_springs` (closed form, arrays allowed); a pair that slides at zero friction (a
        frictionless platen) holds no tangential spring."""
        return self._springs(case, self.pair_value("friction", case.material_i, case.material_j) > 0.0)

    def stability_limit(self, case: PairCase) -> float:
        """One contact alone, its tangential spring counted whatever the friction (the step then
        stays valid when :meth:`~contactlab.Simulation.set_model` switches friction on)."""
        return single_contact_limit(self._springs(case, True), case)

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow (``contactlab.validation.battery.ModelProperties``):
        plain Coulomb sliding with ``friction`` (the rigid-body sliding limit of an oblique impact
        applies), rolling resistance when ``rolling_friction > 0``; no adhesion, no force at touch."""
        return dict(sliding_friction=self.friction, rolling_resistance=self.rolling_friction > 0.0)

    def closed_form_impact(self, material, radius, speed) -> dict:
        """Hertz (1882) with the law's viscous term ``c sqrt(m* S_n) d'`` (clipped at zero force):
        restitution as requested (exact by construction); duration from the 1-DOF equation
        (:func:`~contactlab.laws.impact_reference.ode_impact`), with Hertz's E* restated from Johnson
        (:func:`~contactlab.laws.impact_reference.hertz_moduli`), for a sphere of ``radius`` and
        ``material`` hitting a wall of the same material at the normal ``speed``."""
        e_star, _ = hertz_moduli(material, material)
        k = 4.0 / 3.0 * e_star * math.sqrt(radius)
        mass = sphere_mass(material, radius)
        c = self.damping_coefficient

        def force(d, v, _dmax):
            d = max(d, 0.0)
            return max(k * d**1.5 + c * math.sqrt(mass * 1.5 * k * math.sqrt(d)) * v, 0.0)

        d_max = (5.0 * mass * speed**2 / (4.0 * k)) ** 0.4
        ode = ode_impact(force, mass, speed, d_max / speed)
        return {"restitution": self.restitution, "duration": ode["duration"],
                "source": "Hertz (1882) elastic force with the law's Tsuji-type damping; restitution exact by "
                          "construction (requested e), duration from the 1-DOF equation of motion (SciPy DOP853)"}


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law`.

    ``geometry`` maps the record's field names to values (vectors as arrays); ``hist`` is a
    length-7 array, copied.  Returns ``(force, couple, stored, dissipation, active, hist_new)``.
    """
    g = geometry_arrays(geometry)
    hist = np.array(hist, dtype=float)
    delta = g["overlap"]
    if delta <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(7)
    e_star, g_star, mu, mu_r, c = (float(x) for x in params[:5])
    n = g["normal"]
    rate = -(g["rel_velocity"] @ n)
    s_n = 2 * e_star * np.sqrt(g["radius"] * delta)
    f_el = 4.0 / 3.0 * e_star * np.sqrt(g["radius"]) * delta**1.5
    f_n = max(0.0, f_el + c * np.sqrt(g["mass"] * s_n) * rate)
    stored = 8.0 / 15.0 * e_star * np.sqrt(g["radius"]) * delta**2.5
    diss = (f_n - f_el) * rate * dt
    s_t = 8 * g_star * np.sqrt(g["radius"] * delta)
    s_t_old, hist[6] = hist[6], s_t
    spring = float(params[ROLLING_MODEL]) == ROLLING_MODELS["spring"]
    f_t, couple, e_t, d_t = friction_senses_reference(g, hist, dt, f_n, s_t, s_t_old, c * np.sqrt(g["mass"] * s_t),
                                                      mu, mu_r if spring else 0.0)
    if not spring:
        couple, d_r = constant_torque_rolling_reference(n, g["rel_angular_velocity"], g["rel_rotation"], hist[3:6].copy(),
                                                        mu_r * g["radius"] * f_n)
        hist[3:6] = couple
        d_t += d_r
    return f_t - f_n * n, couple, stored + e_t, diss + d_t, True, hist
