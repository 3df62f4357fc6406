"""The contact law of the convex roll (spec 003, Exudyn's ObjectContactConvexRoll): penalty normal
force with damping and regularized Stribeck friction (implicit by default).

The law reads any contact-geometry record (:mod:`contactlab.geometry.record`), so it also serves
sphere-sphere and sphere-wall pairs; for the roll on a plane the record comes from
:func:`contactlab.geometry.convex_roll.roll_plane` with body ``i`` the roll and ``j`` the plane
(the spec's marker m1 and the ground m0), ``normal`` from the roll into the plane and the branch
vector ``branch_i`` from the roll's centre of mass to the contact point C.

Normal force (on ``i`` along ``-normal``), the spec's penalty with damping::

    f_N = k_c delta + d_c delta'          for delta > 0, else 0 (no force, inactive)

with the overlap ``delta = -z_pen`` (m; the spec's penetration ``z_pen = (C - ground) . n`` is
negative in contact) and its rate ``delta' = -rel_velocity . normal`` (m/s) taken at the
material points at C.  As in the spec, ``f_N`` is not clamped: while the bodies separate fast
enough (``d_c delta' < -k_c delta``) the damper makes it pull.

Damping convention (``damping_convention``): by default the damper acts on the rate of the
penetration at C, which is what the spec's ``dz_pen/dt`` is; its power is then ``d_c delta'^2``.
Exudyn's implementation damps the normal velocity of the roll's centre instead
(``damping_convention="centre"``)::

    f_N = k_c delta + d_c delta'_c,   delta'_c = -(w - (omega_j - omega_i) x branch_i) . normal

the velocity of ``i``'s centre relative to body ``j`` (``j``'s motion carried rigidly to ``i``'s
centre; for a roll on fixed ground, minus the roll centre's velocity along the normal).  The two
agree for spheres (the branch is along the normal) and differ for a tilted spinning roll, whose
contact point sweeps over the hull while its centre stays at a height: in spec 003's drop test the
roll ends ~1.7 mm from Exudyn's at 0.5 s with the spec's form and within 0.1 mm with the centre's.
The damper's force acts at C, so its power is ``d_c delta'_c delta'``, which can be negative for
the centre convention (the damper then feeds the contact).

Slip velocity (m/s)::

    v_s = -(w - (w . normal) normal),   w = rel_velocity

the tangential velocity of ``i``'s material point at the contact relative to ``j``'s.  For the
roll on resting ground, with ``p = branch_i`` the lever from the roll's reference point to C,
``v_s = v_m1,t + (omega x p)_t``, i.e. ``v_s = v_C,t + v_m1,t`` with the spec's contact-point
velocity ``v_C = omega x p_m1,C`` and ``v_m1,t`` the tangential velocity of the roll's reference
point.  This is what Exudyn's implementation computes (``vDiff = vC_t - (-v1_t)``); the spec's
text writes ``v_s = v_C - v_m1,t``, which would not vanish in pure rolling -- a sign slip of the
documentation that is not followed.  ``v_s = 0`` is rolling without slip.

Friction force on ``i``::

    f_s = -mu(|v_s|) |f_N| v_s / |v_s|

with ``mu`` the regularized Stribeck function of exudyn.physics (:func:`stribeck`)::

    mu(v) = (mu_d + mu_s_off) v / v_reg                                        |v| <= v_reg, v_reg > 0
    mu(v) = sign(v) (mu_d + mu_s_off exp(-(|v| - v_reg)/v_exp) + mu_v (|v| - v_reg))   else

(evaluated, by default, at the slip the step ends with: see "Implicit friction" below), so below
``v_reg`` the friction is a linear tangential dashpot
``-(mu_d + mu_s_off) |f_N| / v_reg * v_s`` (no singularity at ``v_s = 0``).  Exudyn's
implementation, like this law, multiplies by ``|f_N|``: friction opposes the slip even while the
damper pulls.  The law returns no couple: the moment about the roll's centre of mass,
``branch_i x force`` (the spec's ``p_m1,C x (f_N + f_s)``), is applied by the engine.

Implicit friction (``implicit_friction=True``, the default): the dashpot below ``v_reg`` is stiff
(``(mu_d + mu_s) |f_N| / v_reg`` on the effective mass of sliding ``m_t``), and an explicit step
must stay below ``m_t / c`` or the friction chatters (first-order convergence).  The law instead
uses the slip the step ends with, ``v_e = u + dt/(2 m_t) f_s`` with ``u`` the predicted slip less
``dt/(2 m_t)`` times the last step's friction (the part of the prediction that friction made;
it is the law's history), and solves ``f_s = -(peak / v_reg) v_e`` in closed form in the
proportional zone (``|u| <= v_reg + dt/(2 m_t) peak``, ``peak = (mu_d + mu_s) |f_N|``), else
takes the Stribeck coefficient at ``|u| - dt/(2 m_t) peak`` along ``-u``.  This is the
trapezoidal (Crank-Nicolson) treatment of the dashpot: stable at any step for any ``m_t`` at
most the true effective mass, second order.  ``m_t`` is ``friction_mass`` when given, else the
bound :meth:`ConvexRollContact.scene_pair_table` computes from the scene's bodies.

Energy: stored ``k_c delta^2 / 2``; dissipation of a step: the damper's ``d_c delta'^2 dt`` (centre
convention: ``d_c delta'_c delta' dt``) plus
the work of friction over the step's tangential relative displacement of the material points
(``rel_displacement``, the integrator's exact increment), with the trapezoid of the last step's
friction and this step's (the work the integrator's kinetic energy sees; ``mu |f_N| |v_s| dt``
in steady sliding),
so the engine's energy balance closes.  History: the last step's friction force (3 floats); the
spec's data coordinates only serve Exudyn's discontinuous iteration and are not kept.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_bool, is_number
from .._jit import jit
from ..errors import InputError
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size, verlet_limit
from .stiffness import ContactSprings

__all__ = ["ConvexRollContact", "law", "reference_law", "stribeck", "stribeck_reference"]

#: gap (m) up to which the engine hands a pair to the law; farther pairs are reset
INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS: tuple[HistoryField, ...] = (
    HistoryField("friction", 3, "N", "friction force on i of the last step (the implicit friction's start)"),)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

# pair-table columns (the same for every pair of materials)
K_C, D_C, MU_D, MU_S, MU_V, V_EXP, V_REG, CENTRE, IMPLICIT, FRICTION_MASS = range(10)

#: ``damping_convention`` by name, and the pair-table value that stands for it
DAMPING_CONVENTIONS = {"contact_point": 0.0, "centre": 1.0}
#: other spellings accepted for them
_CONVENTION_ALIASES = {"spec": "contact_point", "center": "centre", "exudyn": "centre"}


@jit
def stribeck(v, mu_d, mu_s_off, mu_v, v_exp, v_reg):
    """Regularized Stribeck friction coefficient (exudyn.physics.StribeckFunction) at the signed
    velocity ``v`` (m/s): proportional ``(mu_d + mu_s_off) v / v_reg`` for ``|v| <= v_reg``
    (``v_reg > 0``), else ``sign(v) (mu_d + mu_s_off exp(-(|v| - v_reg) / v_exp) + mu_v (|v| - v_reg))``.
    ``mu_v`` in s/m, ``v_exp > 0`` and ``v_reg >= 0`` in m/s."""
    speed = abs(v)
    if speed <= v_reg and v_reg != 0.0:
        return (mu_d + mu_s_off) * v / v_reg
    if v == 0.0:
        return 0.0
    x = speed - v_reg
    mu = mu_d + mu_s_off * math.exp(-x / v_exp) + mu_v * x
    return mu if v > 0.0 else -mu


@jit
def law(g, p, h, dt):
    """Convex-roll contact law (see the module docstring); history ``h`` is the empty tuple.

    Returns ``(force on i, couple on i (zero), stored energy, dissipation, active, ())``.
    """
    delta = g.overlap
    z = (0.0, 0.0, 0.0)
    if delta <= 0.0:
        return z, z, 0.0, 0.0, False, z
    n = g.normal
    w = g.rel_velocity
    w_n = dot(w, n)
    rate = -w_n                              # overlap rate at the contact point, m/s
    k_c = p[K_C]
    d_c = p[D_C]
    damped = rate
    if p[CENTRE] != 0.0:
        # Exudyn's convention: the normal velocity of i's centre relative to body j (j's motion
        # carried to i's centre), -(w - (omega_j - omega_i) x branch_i) . n
        a = g.rel_angular_velocity
        b = g.branch_i
        damped = rate + (n[0] * (a[1] * b[2] - a[2] * b[1]) + n[1] * (a[2] * b[0] - a[0] * b[2])
                         + n[2] * (a[0] * b[1] - a[1] * b[0]))
    f_n = k_c * delta + d_c * damped         # may be < 0 (damper pulling), as in the spec
    stored = 0.5 * k_c * delta * delta
    # the damper's force works on the motion of the contact point: its power is d_c damped rate
    diss = d_c * damped * rate * dt
    # slip of i relative to j: minus the tangential part of w
    sx = -(w[0] - w_n * n[0])
    sy = -(w[1] - w_n * n[1])
    sz = -(w[2] - w_n * n[2])
    # implicit friction: the slip the step ends with, u + half f_s, with u the predicted slip less
    # the part of the last step's friction f_old the prediction carried (tangential part)
    half = 0.0
    if p[IMPLICIT] != 0.0 and p[FRICTION_MASS] > 0.0:
        half = 0.5 * dt / p[FRICTION_MASS]
    if half > 0.0:
        f_old = (h[0], h[1], h[2])
        fo_n = dot(f_old, n)
        sx -= half * (f_old[0] - fo_n * n[0])
        sy -= half * (f_old[1] - fo_n * n[1])
        sz -= half * (f_old[2] - fo_n * n[2])
    speed = math.sqrt(sx * sx + sy * sy + sz * sz)
    v_reg = p[V_REG]
    load = abs(f_n)
    c_t = 0.0                                # friction force per slip velocity, N s/m
    if speed > 0.0:
        peak = (p[MU_D] + p[MU_S]) * load    # the friction at v_reg, N
        zone = v_reg + half * peak           # predicted slip at which the end slip is v_reg
        if zone > 0.0 and speed <= zone:
            # proportional zone: f_s = -(peak / v_reg) x the end slip (v_reg = 0: the end slip is 0)
            c_t = peak / zone
        else:
            # beyond it: the Stribeck coefficient at the end slip (the predicted one when explicit)
            c_t = stribeck(speed - half * peak, p[MU_D], p[MU_S], p[MU_V], p[V_EXP], v_reg) * load / speed
    fx, fy, fz = -c_t * sx, -c_t * sy, -c_t * sz
    force = (-f_n * n[0] + fx, -f_n * n[1] + fy, -f_n * n[2] + fz)
    # friction work over the step: the trapezoid of the last step's friction and this one's over the
    # tangential displacement of i's point relative to j's (the work the integrator's kinetic
    # energy sees); -(f_old + f_s) / 2 . (d - d_n n)
    d = g.rel_displacement
    d_n = dot(d, n)
    tx, ty, tz = d[0] - d_n * n[0], d[1] - d_n * n[1], d[2] - d_n * n[2]
    diss += 0.5 * ((h[0] + fx) * tx + (h[1] + fy) * ty + (h[2] + fz) * tz)
    return force, z, stored, diss, True, (fx, fy, fz)


def _as_switch(name: str, value) -> float:
    """A yes/no parameter as its pair-table value 1.0 or 0.0: a bool, or the stored 0 or 1."""
    if is_number(value) and value in (0, 1):
        return float(value)
    return float(as_bool(name, value))


def parse_damping_convention(value) -> float:
    """``damping_convention`` as its pair-table value: a name of :data:`DAMPING_CONVENTIONS` (or an
    alias: ``"spec"``, ``"center"``, ``"exudyn"``), or the stored value 0 or 1 itself."""
    if isinstance(value, str):
        name = _CONVENTION_ALIASES.get(value.strip().lower(), value.strip().lower())
        if name not in DAMPING_CONVENTIONS:
            raise InputError(f"damping_convention must be 'contact_point' (the spec's penetration rate at the "
                             f"contact point) or 'centre' (Exudyn's: the roll centre's normal velocity), "
                             f"got {value!r}")
        return DAMPING_CONVENTIONS[name]
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and value in (0, 1):
        return float(value)
    raise InputError(f"damping_convention must be 'contact_point' or 'centre' (or 0 or 1), got {value!r}")


class ConvexRollContact(ContactModel):
    """Spec-003 contact (Exudyn's ObjectContactConvexRoll): penalty normal force with damping,
    regularized Stribeck friction; parameter names are the spec's (snake_case) with its defaults.

    Parameters
    ----------
    contact_stiffness : float
        k_c, N/m (>= 0, default 0).
    contact_damping : float
        d_c, N s/m (>= 0, default 0).
    dynamic_friction : float
        mu_d >= 0 (default 0).
    static_friction_offset : float
        mu_s_off >= 0 (default 0): static friction ``mu_d + mu_s_off``.
    viscous_friction : float
        mu_v, s/m (>= 0, default 0): friction coefficient per m/s of slip beyond ``v_reg``.
    exponential_decay_static : float
        v_exp, m/s (> 0, default 1e-3): decay velocity of the static offset (exudyn's expVel).
    friction_proportional_zone : float
        v_reg, m/s (>= 0, default 1e-3): below this slip speed the friction is proportional to it
        (exudyn's regVel).
    damping_convention : str
        Which normal velocity the damper ``d_c`` acts on. ``"contact_point"`` (default, the spec's
        equation): the penetration rate at the contact point, ``delta' = -rel_velocity . normal``.
        ``"centre"`` (alias ``"exudyn"``): the normal velocity of the roll's centre relative to the
        other body, as Exudyn's implementation of ObjectContactConvexRoll computes it
        (``contactDamping * v1[2]``); use it to reproduce Exudyn's results.  The two differ by
        ``((omega_j - omega_i) x branch_i) . normal``: zero for spheres, not for a tilted spinning
        roll, whose contact point sweeps over its hull.  Stored as 0 (contact point) or 1 (centre).
    implicit_friction : bool
        True (default): the regularized friction is evaluated at the slip the step ends with (see
        the module docstring), stable and second order at any step; False: at the predicted slip
        (explicit), which needs ``dt <= friction_mass / c`` (:meth:`accuracy_limit`) and
        converges only to first order in ``dt`` once it chatters.
    friction_mass : float
        m_t, kg (>= 0, default 0 = from the scene): the effective mass of sliding at a contact the
        implicit friction uses.  With 0 the engine takes, per pair of materials, the smallest one
        any two of the scene's bodies of those materials can have (a bound: rotation included,
        lever up to the body's bounding radius), which keeps the scheme stable for every contact.

    The model is the same for every pair of materials; the normal force may pull near separation
    (see :mod:`contactlab.laws.convex_roll`).

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.ConvexRollContact(contact_stiffness=1e5, contact_damping=50.0,
    ...                                     dynamic_friction=0.4, static_friction_offset=0.1)
    >>> model.friction_proportional_zone
    0.001
    """

    name = "ConvexRollContact"
    law_module = "contactlab.laws.convex_roll"
    parameters = (
        Parameter("contact_stiffness", "N/m", "normal contact stiffness k_c", 0.0, 0.0),
        Parameter("contact_damping", "N s/m", "normal contact damping d_c", 0.0, 0.0),
        Parameter("dynamic_friction", "-", "dynamic friction coefficient mu_d", 0.0, 0.0),
        Parameter("static_friction_offset", "-", "static friction offset mu_s_off (static = mu_d + mu_s_off)", 0.0,
                  0.0),
        Parameter("viscous_friction", "s/m", "viscous friction coefficient mu_v per m/s of slip", 0.0, 0.0),
        Parameter("exponential_decay_static", "m/s", "decay velocity v_exp of the static friction offset", 1e-3,
                  0.0, math.inf, False),
        Parameter("friction_proportional_zone", "m/s", "slip speed v_reg below which friction is proportional",
                  1e-3, 0.0),
        Parameter("damping_convention", "-", "velocity the damper acts on: 0 'contact_point' (spec), "
                  "1 'centre' (Exudyn's implementation)", 0.0, 0.0, 1.0),
        Parameter("implicit_friction", "-", "1: friction at the slip the step ends with (default), 0: explicit",
                  1.0, 0.0, 1.0),
        Parameter("friction_mass", "kg", "effective mass of sliding for the implicit friction (0: from the scene)",
                  0.0, 0.0),
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("k_c", "d_c", "mu_d", "mu_s_off", "mu_v", "v_exp", "v_reg", "centre_damping", "implicit_friction",
                   "friction_mass")
    # linear spring switched on at first touch, as LinearSpringDashpot: ~15 steps per contact
    default_dt_fraction = 0.15

    def __init__(self, contact_stiffness=0.0, contact_damping=0.0, dynamic_friction=0.0, static_friction_offset=0.0,
                 viscous_friction=0.0, exponential_decay_static=1e-3, friction_proportional_zone=1e-3,
                 damping_convention="contact_point", implicit_friction=True, friction_mass=0.0, **unknown):
        super().__init__(contact_stiffness=contact_stiffness, contact_damping=contact_damping,
                         dynamic_friction=dynamic_friction, static_friction_offset=static_friction_offset,
                         viscous_friction=viscous_friction, exponential_decay_static=exponential_decay_static,
                         friction_proportional_zone=friction_proportional_zone,
                         damping_convention=parse_damping_convention(damping_convention),
                         implicit_friction=_as_switch("implicit_friction", implicit_friction),
                         friction_mass=friction_mass, **unknown)

    @property
    def damping_convention_name(self) -> str:
        """The damping convention by name: ``"contact_point"`` or ``"centre"``."""
        return "centre" if self.damping_convention else "contact_point"

    #: a law of the roll on a plane (spec 003): validated by its own tests (tests/test_convex_roll.py)
    validation_battery = False

    @classmethod
    def examples(cls) -> dict:
        """Spec 003's example: a penalty contact with Stribeck friction."""
        return {"convex_roll": cls(contact_stiffness=1e3, contact_damping=1.0, dynamic_friction=0.9)}

    def row(self) -> tuple[float, ...]:
        """The pair-table row (the same for every pair), in the order of ``pair_fields``."""
        return (self.contact_stiffness, self.contact_damping, self.dynamic_friction, self.static_friction_offset,
                self.viscous_friction, self.exponential_decay_static, self.friction_proportional_zone,
                self.damping_convention, self.implicit_friction, self.friction_mass)

    def pair_table(self, materials):
        row = np.array(self.row(), dtype=float)
        return np.broadcast_to(row, (len(materials), len(materials), len(row))).copy()

    def scene_pair_table(self, model) -> np.ndarray:
        """The pair table with ``friction_mass`` filled in from the scene when it is 0: per pair of
        materials the bound :meth:`contactlab.frozen_model.Model.pair_sliding_mass`."""
        table = self.pair_table(model.materials)
        if self.friction_mass == 0.0:
            table[:, :, FRICTION_MASS] = model.pair_sliding_mass()
        return table

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """The penalty spring ``k_c`` and damper ``d_c`` along the normal; the regularized friction
        is a bounded force and does not enter (see :meth:`accuracy_limit`)."""
        return ContactSprings(normal=self.contact_stiffness, normal_damping=self.contact_damping)

    def stability_limit(self, case: PairCase) -> float:
        """Normal oscillation ``k_c`` with the damper ``d_c`` on the effective mass of the contact
        point, under the engine's integrator (s).

        The mass is ``case.tangential_mass`` (``1/m = sum(1/m + r^2/I)`` over the finite bodies),
        not ``case.mass``: the normal through a roll's contact point misses its centre of mass
        (lever up to the case radius, e.g. the bounding radius), so rotation lowers the mass the
        spring moves; for spheres this is conservative.  The damper sees the velocity predicted by
        the step kernels, ``v* = v(n+1/2) + dt/4 (a(n) + a(n-1))``; for ``m x'' = -k x - d v*``
        that scheme is stable up to ``(2/omega)(sqrt(1 + zeta^2) - zeta)`` with
        ``omega = sqrt(k/m)``, ``zeta = d / (2 sqrt(k m))`` (a damper alone: ``2 m / d``).  (Up to
        issue 42 the predictor was ``v(n+1/2) + dt/2 a(n)``, for which the damping ratio counted
        twice; the limit kept that margin: ``verlet_limit(omega, 2 zeta)``, a damper alone
        ``m / d``, which stays a stable, ~1.2-2 times smaller step now.)  ``inf`` without spring and
        damper.  The regularized friction is a bounded force and does not enter (see
        :meth:`accuracy_limit`).
        """
        k = self.contact_stiffness
        c = self.contact_damping
        m = case.tangential_mass
        if k == 0.0:
            return m / c if c > 0.0 else math.inf
        return verlet_limit(math.sqrt(k / m), c / math.sqrt(k * m))

    def accuracy_limit(self, case: PairCase) -> float:
        """Largest step resolving the explicit regularized friction (s; ``inf`` with the implicit
        friction, the default, which is stable at any step): below ``v_reg`` it is a tangential
        dashpot of coefficient ``c = (mu_d + mu_s_off) f_N / v_reg`` (``f_N = k_c`` times the
        reference overlap) on the effective mass of sliding ``m_t``; the engine's predicted velocity
        keeps such a dashpot stable up to ``2 m_t / c``, and this limit takes half of it,
        ``m_t / c``, a step that resolves it.  A larger step makes the friction chatter in stick
        (bounded force, ``mu |f_N|`` at most) but cannot blow up."""
        mu = self.dynamic_friction + self.static_friction_offset
        v_reg = self.friction_proportional_zone
        if self.implicit_friction or not (mu > 0.0 and v_reg > 0.0):
            return math.inf
        c_t = mu * self.contact_stiffness * case.overlap / v_reg
        return case.tangential_mass / c_t if c_t > 0.0 else math.inf


def stribeck_reference(v, mu_d, mu_s_off, mu_v=0.0, v_exp=1e-3, v_reg=1e-3):
    """NumPy twin of :func:`stribeck` (vectorised over ``v``)."""
    v = np.asarray(v, dtype=float)
    a = np.abs(v)
    x = a - v_reg
    outer = np.sign(v) * (mu_d + mu_s_off * np.exp(-x / v_exp) + mu_v * x)
    if v_reg == 0.0:
        return outer
    return np.where(a <= v_reg, (mu_d + mu_s_off) * v / v_reg, outer)


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law` (returns arrays; the history: the friction force on i)."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    delta = g["overlap"]
    if delta <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(3)
    n = g["normal"]
    w = g["rel_velocity"]
    rate = -float(w @ n)
    damped = rate
    if p[CENTRE]:
        damped = -float((w - np.cross(g["rel_angular_velocity"], g["branch_i"])) @ n)
    f_n = p[K_C] * delta + p[D_C] * damped
    v_s = -(w - (w @ n) * n)
    half = 0.5 * dt / p[FRICTION_MASS] if p[IMPLICIT] and p[FRICTION_MASS] > 0 else 0.0
    f_old = np.asarray(hist, dtype=float)[0:3]
    u = v_s - half * (f_old - (f_old @ n) * n)          # the end slip without this step's friction
    speed = float(np.linalg.norm(u))
    peak = (p[MU_D] + p[MU_S]) * abs(f_n)
    zone = p[V_REG] + half * peak
    if speed == 0:
        f_s = np.zeros(3)
    elif 0 < zone and speed <= zone:
        f_s = -peak / zone * u                           # = -(peak / v_reg) (u + half f_s)
    else:
        f_s = -float(stribeck_reference(speed - half * peak, p[MU_D], p[MU_S], p[MU_V], p[V_EXP], p[V_REG])) \
            * abs(f_n) * u / speed
    d = g["rel_displacement"]
    d_t = d - (d @ n) * n
    # the friction forces on i (last step's and this one's, trapezoid) times the displacement of
    # i's point relative to j's (-d_t), negated
    diss = p[D_C] * damped * rate * dt + 0.5 * float((f_old + f_s) @ d_t)
    return -f_n * n + f_s, np.zeros(3), 0.5 * p[K_C] * delta**2, diss, True, f_s.copy()
