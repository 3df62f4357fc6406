"""The contact law of the convex roll (spec 003, Exudyn's ObjectContactConvexRoll): penalty normal
force with damping and regularized Stribeck friction, no history.

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
enough (``d_c delta' < -k_c delta``) the damper makes it pull.  (Exudyn's code damps the normal
velocity of the roll's centre; the rate of the penetration at C, used here, is what the spec's
``dz_pen/dt`` is, and it makes the damper's power ``d_c delta'^2``.)

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

so below ``v_reg`` the friction is a linear tangential dashpot
``-(mu_d + mu_s_off) |f_N| / v_reg * v_s`` (no singularity at ``v_s = 0``).  Exudyn's
implementation, like this law, multiplies by ``|f_N|``: friction opposes the slip even while the
damper pulls.  The law returns no couple: the moment about the roll's centre of mass,
``branch_i x force`` (the spec's ``p_m1,C x (f_N + f_s)``), is applied by the engine.

Energy: stored ``k_c delta^2 / 2``; dissipation of a step: the damper's ``d_c delta'^2 dt`` plus
the work of friction over the step's tangential relative displacement of the material points
(``rel_displacement``, the integrator's exact increment; ``= mu |f_N| |v_s| dt`` to first order),
so the engine's energy balance closes.  No history (``HISTORY_SIZE = 0``): the spec's data
coordinates only serve Exudyn's discontinuous iteration.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size, verlet_limit

__all__ = ["ConvexRollContact", "law", "reference_law", "stribeck", "stribeck_reference"]

#: gap (m) up to which the engine hands a pair to the law; farther pairs are reset
INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS: tuple[HistoryField, ...] = ()
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

# pair-table columns (the same for every pair of materials)
K_C, D_C, MU_D, MU_S, MU_V, V_EXP, V_REG = range(7)


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
        return z, z, 0.0, 0.0, False, ()
    n = g.normal
    w = g.rel_velocity
    w_n = dot(w, n)
    rate = -w_n                              # overlap rate, m/s
    k_c = p[K_C]
    d_c = p[D_C]
    f_n = k_c * delta + d_c * rate           # may be < 0 (damper pulling), as in the spec
    stored = 0.5 * k_c * delta * delta
    diss = d_c * rate * rate * dt
    # slip of i relative to j: minus the tangential part of w
    sx = -(w[0] - w_n * n[0])
    sy = -(w[1] - w_n * n[1])
    sz = -(w[2] - w_n * n[2])
    speed = math.sqrt(sx * sx + sy * sy + sz * sz)
    v_reg = p[V_REG]
    c_t = 0.0                                # friction force per slip velocity, N s/m
    if speed <= v_reg and v_reg > 0.0:
        c_t = (p[MU_D] + p[MU_S]) * abs(f_n) / v_reg
    elif speed > 0.0:
        c_t = stribeck(speed, p[MU_D], p[MU_S], p[MU_V], p[V_EXP], v_reg) * abs(f_n) / speed
    force = (-f_n * n[0] - c_t * sx, -f_n * n[1] - c_t * sy, -f_n * n[2] - c_t * sz)
    if c_t != 0.0:
        # friction work over the step: f_s . (displacement of i's point relative to j's)
        d = g.rel_displacement
        d_n = dot(d, n)
        diss += c_t * (sx * (d_n * n[0] - d[0]) + sy * (d_n * n[1] - d[1]) + sz * (d_n * n[2] - d[2]))
    return force, z, stored, diss, True, ()


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
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("k_c", "d_c", "mu_d", "mu_s_off", "mu_v", "v_exp", "v_reg")
    # linear spring switched on at first touch, as LinearSpringDashpot: ~15 steps per contact
    default_dt_fraction = 0.15

    def __init__(self, contact_stiffness=0.0, contact_damping=0.0, dynamic_friction=0.0, static_friction_offset=0.0,
                 viscous_friction=0.0, exponential_decay_static=1e-3, friction_proportional_zone=1e-3, **unknown):
        super().__init__(contact_stiffness=contact_stiffness, contact_damping=contact_damping,
                         dynamic_friction=dynamic_friction, static_friction_offset=static_friction_offset,
                         viscous_friction=viscous_friction, exponential_decay_static=exponential_decay_static,
                         friction_proportional_zone=friction_proportional_zone, **unknown)

    #: a law of the roll on a plane (spec 003): validated by its own tests (tests/test_convex_roll.py)
    validation_battery = False

    @classmethod
    def examples(cls) -> dict:
        """Spec 003's example: a penalty contact with Stribeck friction."""
        return {"convex_roll": cls(contact_stiffness=1e3, contact_damping=1.0, dynamic_friction=0.9)}

    def row(self) -> tuple[float, ...]:
        """The pair-table row (the same for every pair), in the order of ``pair_fields``."""
        return (self.contact_stiffness, self.contact_damping, self.dynamic_friction, self.static_friction_offset,
                self.viscous_friction, self.exponential_decay_static, self.friction_proportional_zone)

    def pair_table(self, materials):
        row = np.array(self.row(), dtype=float)
        return np.broadcast_to(row, (len(materials), len(materials), len(row))).copy()

    def stability_limit(self, case: PairCase) -> float:
        """Normal oscillation ``k_c`` with the damper ``d_c`` on the effective mass of the contact
        point, under the engine's integrator (s).

        The mass is ``case.tangential_mass`` (``1/m = sum(1/m + r^2/I)`` over the finite bodies),
        not ``case.mass``: the normal through a roll's contact point misses its centre of mass
        (lever up to the case radius, e.g. the bounding radius), so rotation lowers the mass the
        spring moves; for spheres this is conservative.  The damper sees the velocity predicted by
        the step kernels, ``v* = v(n+1/2) + dt/2 a(n)``; for ``m x'' = -k x - d v*`` that scheme
        is stable up to ``(2/omega)(sqrt(1 + (2 zeta)^2) - 2 zeta)`` with ``omega = sqrt(k/m)``,
        ``zeta = d / (2 sqrt(k m))`` -- ``verlet_limit(omega, 2 zeta)`` (the damping ratio counts
        twice; a damper alone: ``m / d``).  ``inf`` without spring and damper.  The regularized
        friction is a bounded force and does not enter (see :meth:`accuracy_limit`).
        """
        k = self.contact_stiffness
        c = self.contact_damping
        m = case.tangential_mass
        if k == 0.0:
            return m / c if c > 0.0 else math.inf
        return verlet_limit(math.sqrt(k / m), c / math.sqrt(k * m))

    def accuracy_limit(self, case: PairCase) -> float:
        """Largest step resolving the regularized friction (s): below ``v_reg`` it is a tangential
        dashpot of coefficient ``c = (mu_d + mu_s_off) f_N / v_reg`` (``f_N = k_c`` times the
        reference overlap) on the effective mass of sliding ``m_t``; with the engine's predicted
        velocity a dashpot is resolved while ``dt <= m_t / c``.  A larger step makes the friction
        chatter in stick (bounded force, ``mu |f_N|`` at most) but cannot blow up."""
        mu = self.dynamic_friction + self.static_friction_offset
        v_reg = self.friction_proportional_zone
        if not (mu > 0.0 and v_reg > 0.0):
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
    """Plain NumPy twin of :func:`law` (returns arrays; history an empty array)."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    delta = g["overlap"]
    if delta <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(0)
    n = g["normal"]
    w = g["rel_velocity"]
    rate = -float(w @ n)
    f_n = p[K_C] * delta + p[D_C] * rate
    v_s = -(w - (w @ n) * n)
    speed = float(np.linalg.norm(v_s))
    mu = float(stribeck_reference(speed, p[MU_D], p[MU_S], p[MU_V], p[V_EXP], p[V_REG]))
    f_s = -mu * abs(f_n) * v_s / speed if speed > 0 else np.zeros(3)
    d = g["rel_displacement"]
    d_t = d - (d @ n) * n
    # friction force on i times the displacement of i's point relative to j's (-d_t), negated
    diss = p[D_C] * rate**2 * dt - float(f_s @ (-d_t))
    return -f_n * n + f_s, np.zeros(3), 0.5 * p[K_C] * delta**2, diss, True, np.zeros(0)
