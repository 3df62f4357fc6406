"""The Ice model (spec 002, as in WooDEM): elasticity, cohesion and friction in four senses (normal,
shear, twisting, rolling), each bonded or not and breakable or not.

Pair quantities (``l_i``, ``l_j``: the radii; a wall counts as a mirror image of the sphere;
``E``: Young's moduli of the two materials):

* contact area ``A = pi min(l_i, l_j)^2``;
* ``k_n = A / (l_i/E_i + l_j/E_j)``, ``k_t = kt_div_kn k_n`` (N/m), ``k_w = alpha_w k_t A`` and
  ``k_r = alpha_r k_n A`` (N m/rad);
* normal cohesion ``c_n = E' break_n`` with ``E' = (l_i + l_j) / (l_i/E_i + l_j/E_j)`` (Pa);
* breakage limits ``F_nb = c_n A``, ``F_tb = beta_t F_nb``, ``T_wb = beta_w c_n A^(3/2)``,
  ``T_rb = beta_r beta_t c_n A^(3/2)``.

Forces: normal ``f_n = k_n (delta - delta_rest)`` (> 0 compressive), with ``delta_rest`` the overlap
when the bond was made (zero force at bonding), zero for a contact that was never bonded (its
force follows the geometric overlap); shear force, twisting and rolling torques are incremental springs
(``F += k du`` on the exact relative displacement and rotation increments), carried with the
contact frame.

Bonds: a bond is made by :meth:`contactlab.Simulation.bond` in the senses ``bonded``, breakable in
the senses ``breakable``.  It breaks when, in a sense that is bonded and breakable, the trial force
exceeds its limit (tension ``-f_n > F_nb``, ``|F_t| > F_tb``, ``|T_w| > T_wb``, ``|T_r| > T_rb``);
then all senses become unbonded at once and never bond again by themselves.  The energy the springs
lose in that step is booked as ``bond_breakage``.

Unbonded senses yield: with ``N = max(0, f_n)`` the limits are ``F_ty = N tan_phi``,
``T_wy = sqrt(A/pi) N tan_phi``, ``T_ry = sqrt(A/pi) N mu`` (zero in tension); a force or torque
above its limit is scaled back to it (direction kept).  An unbonded contact in tension
(``delta < delta_rest``) ends.

Energy: each sense dissipates, per step, the work done on it minus the change of its stored energy
``|F|^2 / (2k)``, the work taken as the trapezoid of its forces at the two ends of the step over
the step's increment (what the integrator's kinetic energy sees; in steady sliding it is force
times slip exactly).  It is booked as the sense's plastic work, or as ``bond_breakage`` in the step
in which a bond breaks.

History (``HISTORY_SIZE`` = 10): bond state (``BOND_FIELD``: ``bonded + 16 breakable`` bit masks
while bonded, ``-reason`` once broken, 0 for a contact never bonded), ``delta_rest``, a flag that
the contact has started, shear force (3), twisting torque (1), rolling torque (3).  Bits: 1 normal,
2 shear, 4 twisting, 8 rolling.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..errors import InputError
from ..vec import axpy, dot, scale, tangential_part
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings
from .connector import connector_lengths
from .impact_reference import sphere_mass
from .springs import follow_frame, follow_frame_reference

__all__ = ["Ice", "law", "reference_law", "pair_constants", "SENSE_BITS", "parse_senses"]

INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("bond_state", 1, "-", "bonded + 16 breakable while bonded, -reason once broken, 0 never"),
    HistoryField("rest_overlap", 1, "m", "overlap at which the normal force is zero"),
    HistoryField("started", 1, "-", "1 once the contact exists"),
    HistoryField("shear_force", 3, "N", "elastic shear force on i"),
    HistoryField("twisting_torque", 1, "N m", "twisting torque on i about the normal"),
    HistoryField("rolling_torque", 3, "N m", "rolling (bending) torque on i"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)
BOND_FIELD = 0
DISSIPATION_TERMS = ("plastic_tangential", "plastic_twisting", "plastic_rolling", "bond_breakage")
#: why a bond broke (the bond state is -code afterwards)
BOND_REASONS = {1: "tension", 2: "shear", 3: "twisting", 4: "bending", 5: "separation"}
SENSE_BITS = {"n": 1, "t": 2, "w": 4, "r": 8}

(INV_E_I, INV_E_J, KT_DIV, TAN_PHI, ALPHA_W, ALPHA_R, BREAK_N, BETA_T, BETA_W, BETA_R, MU) = range(11)
PAIR_FIELDS = ("inv_young_i", "inv_young_j", "kt_div_kn", "tan_phi", "alpha_w", "alpha_r", "break_n", "beta_t",
               "beta_w", "beta_r", "mu")


@jit
def pair_constants(radius_i, radius_j, p):
    """Contact constants: ``(A, k_n, k_t, k_w, k_r, F_nb, F_tb, T_wb, T_rb)`` (SI units)."""
    li, lj = connector_lengths(radius_i, radius_j)
    r = min(li, lj)
    area = math.pi * r * r
    compliance = li * p[INV_E_I] + lj * p[INV_E_J]
    kn = area / compliance
    kt = p[KT_DIV] * kn
    cn = (li + lj) / compliance * p[BREAK_N]
    f_nb = cn * area
    root_a = math.sqrt(area)
    return (area, kn, kt, p[ALPHA_W] * kt * area, p[ALPHA_R] * kn * area, f_nb, p[BETA_T] * f_nb,
            p[BETA_W] * f_nb * root_a, p[BETA_R] * p[BETA_T] * f_nb * root_a)


@jit
def _limit(f, limit):
    """Scale ``f`` (3-tuple) back to ``|f| <= limit``, keeping its direction."""
    f2 = dot(f, f)
    if f2 <= limit * limit:
        return f
    return scale(limit / math.sqrt(f2), f)


@jit
def _energy(f, k):
    return 0.5 * dot(f, f) / k if k > 0.0 else 0.0


@jit
def law(g, p, h, dt):
    """The Ice law (module docstring); returns ``(force on i, couple on i, stored, dissipation (4),
    active, new h)``."""
    z = (0.0, 0.0, 0.0)
    zero_h = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    none = (0.0, 0.0, 0.0, 0.0)
    area, kn, kt, kw, kr, f_nb, f_tb, t_wb, t_rb = pair_constants(g.radius_i, g.radius_j, p)
    state = h[0]
    bonded = state > 0.0
    delta = g.overlap
    if h[2] == 0.0:  # a new contact: a bond's rest overlap, or the geometric overlap's zero
        if not bonded and delta < 0.0:
            return z, z, 0.0, none, False, zero_h
        rest = 0.0 if not bonded else h[1]
    else:
        rest = h[1]
    n = g.normal
    bits = int(state) if bonded else 0
    f_n = kn * (delta - rest)
    du = g.rel_displacement
    dth = g.rel_rotation
    # old forces carried with the contact frame, the step's increments, trial forces (incremental springs)
    twist = dot(g.pair_rotation, n)
    ft_old = follow_frame((h[3], h[4], h[5]), n, twist)
    tr_old = follow_frame((h[7], h[8], h[9]), n, twist)
    tw_old = scale(h[6], n)
    d_t = tangential_part(du, n)
    d_r = tangential_part(dth, n)
    d_w = scale(dot(dth, n), n)
    f_t = axpy(kt, d_t, ft_old)
    tw_vec = axpy(kw, d_w, tw_old)
    t_r = axpy(kr, d_r, tr_old)
    t_w = dot(tw_vec, n)
    # the normal sense over the step: overlap then and now, its force then
    d_n = -dot(du, n)
    fn_old = kn * (delta - d_n - rest)
    # breakage: any sense that is bonded and breakable, over its limit, breaks them all
    reason = 0.0
    if bonded:
        breakable = bits >> 4
        both = bits & breakable
        if both & 1 and -f_n > f_nb:
            reason = 1.0
        elif both & 2 and dot(f_t, f_t) > f_tb * f_tb:
            reason = 2.0
        elif both & 4 and abs(t_w) > t_wb:
            reason = 3.0
        elif both & 8 and dot(t_r, t_r) > t_rb * t_rb:
            reason = 4.0
        elif not (bits & 1) and f_n < 0.0:
            reason = 5.0  # the normal sense is not bonded: the pair separates, taking the bond with it
        if reason > 0.0:
            bonded = False
            bits = 0
            state = -reason
    if not bonded and f_n < 0.0:
        # an unbonded contact in tension ends: every force drops to zero; what the springs held is
        # released (bond breakage, or the sliding senses' plastic work)
        l_t = _loss(ft_old, z, d_t, kt)
        l_w = _loss(tw_old, z, d_w, kw)
        l_r = _loss(tr_old, z, d_r, kr)
        if reason > 0.0:
            l_n = 0.5 * fn_old * fn_old / kn + 0.5 * fn_old * d_n
            return z, z, 0.0, (0.0, 0.0, 0.0, l_n + l_t + l_w + l_r), False, (
                state, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return z, z, 0.0, (l_t, l_w, l_r, 0.0), False, zero_h
    # yield in the senses that are not bonded
    bond_bits = bits & 15
    load = max(f_n, 0.0)
    lever = math.sqrt(area / math.pi)
    if not bond_bits & 2:
        f_t = _limit(f_t, load * p[TAN_PHI])
    if not bond_bits & 4:
        tw_vec = _limit(tw_vec, lever * load * p[TAN_PHI])
    if not bond_bits & 8:
        t_r = _limit(t_r, lever * load * p[MU])
    # dissipation per sense: work done on it over the step (trapezoid of the forces at its two ends,
    # the work the integrator's kinetic energy sees) minus the change of its stored energy
    l_t = _loss(ft_old, f_t, d_t, kt)
    l_w = _loss(tw_old, tw_vec, d_w, kw)
    l_r = _loss(tr_old, t_r, d_r, kr)
    stored = 0.5 * kn * (delta - rest) ** 2 + _energy(f_t, kt) + _energy(tw_vec, kw) + _energy(t_r, kr)
    if reason > 0.0:
        diss = (0.0, 0.0, 0.0, l_t + l_w + l_r)  # the normal sense stays elastic
    else:
        diss = (l_t, l_w, l_r, 0.0)
    force = (f_t[0] - f_n * n[0], f_t[1] - f_n * n[1], f_t[2] - f_n * n[2])
    couple = (t_r[0] + tw_vec[0], t_r[1] + tw_vec[1], t_r[2] + tw_vec[2])
    h_new = (state, rest, 1.0, f_t[0], f_t[1], f_t[2], dot(tw_vec, n), t_r[0], t_r[1], t_r[2])
    return force, couple, stored, diss, True, h_new


@jit
def _loss(f_old, f_new, increment, k):
    """Energy a spring sense dissipates in a step: its stored energy at the start plus the work done
    on it (trapezoid of the forces at the two ends over the increment) minus its stored energy now."""
    work = 0.5 * (dot(f_old, increment) + dot(f_new, increment))
    return _energy(f_old, k) + work - _energy(f_new, k)


def parse_senses(name: str, value) -> int:
    """A set of senses as a bit mask: letters of ``"ntwr"`` (normal, shear, twisting, rolling), a
    sequence of them, or the mask itself (0-15)."""
    if isinstance(value, (int, np.integer, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or value != int(value) or not 0 <= int(value) <= 15:
            raise InputError(f"{name} must be letters of 'ntwr' or a bit mask 0-15, got {value!r}")
        return int(value)
    if not isinstance(value, str) and not (isinstance(value, (list, tuple)) and all(isinstance(c, str) for c in value)):
        raise InputError(f"{name} must be letters of 'ntwr' (e.g. 'ntwr', 'nt') or a bit mask 0-15, got {value!r}")
    letters = "".join(value)
    bad = sorted(set(letters) - set(SENSE_BITS))
    if bad:
        raise InputError(f"{name}: unknown sense(s) {', '.join(map(repr, bad))}; senses are 'n' (normal), "
                         f"'t' (shear), 'w' (twisting), 'r' (rolling), got {value!r}")
    return sum(SENSE_BITS[c] for c in set(letters))


class Ice(ContactModel):
    """The Ice model: bonds in four senses, breakage, cohesion and friction (spec 002).

    Parameters (the spec's names in snake_case; ``alpha`` and ``beta`` may be given as vectors
    ``alpha=(alpha_w, alpha_r)``, ``beta=(beta_t, beta_w, beta_r)``; all but the two sense sets may
    also be given per material, ``per_material={material or name: {...}}``, mixed as the spec says:
    average, except the minimum for ``tan_phi``):

    kt_div_kn : float
        Shear over normal stiffness (> 0); default 0.2.
    alpha_w, alpha_r : float
        Twisting and rolling stiffness factors: ``k_w = alpha_w k_t A``, ``k_r = alpha_r k_n A``
        (>= 0); defaults 1 (an isotropic circular beam has 1/(2 pi) and 1/(4 pi)).
    break_n : float
        Normal strain at breakage eps_bn (> 0); default 1e-4.
    beta_t, beta_w, beta_r : float
        Shear, twisting and rolling cohesion factors (>= 0); defaults 0.1.
    tan_phi : float
        Friction angle tangent (>= 0) of unbonded senses; default 0.5.
    mu : float
        Rolling (kinetic) friction coefficient (>= 0); default 0.05.
    bonded : str
        Senses bonded when a bond is made: letters of ``"ntwr"``; default all four.
    breakable : str
        Senses in which a bond can break; default all four (a bonded sense that is not breakable
        holds whatever the load).

    Young's modulus comes from each body's material.

    Example
    -------
    >>> import contactlab as cl
    >>> ice = cl.models.Ice(break_n=2e-4, beta=(0.5, 0.2, 0.2), bonded="ntwr", breakable="nt")
    >>> ice.beta_t, ice.breakable
    (0.5, 3.0)
    """

    name = "Ice"
    law_module = "contactlab.laws.ice"
    parameters = (
        Parameter("kt_div_kn", "-", "shear / normal stiffness", 0.2, 0.0, low_inclusive=False),
        Parameter("alpha_w", "-", "twisting stiffness factor", 1.0, 0.0),
        Parameter("alpha_r", "-", "rolling stiffness factor", 1.0, 0.0),
        Parameter("break_n", "-", "normal strain at breakage", 1e-4, 0.0, low_inclusive=False),
        Parameter("beta_t", "-", "shear cohesion factor", 0.1, 0.0),
        Parameter("beta_w", "-", "twisting cohesion factor", 0.1, 0.0),
        Parameter("beta_r", "-", "rolling cohesion factor", 0.1, 0.0),
        Parameter("tan_phi", "-", "friction angle tangent", 0.5, 0.0),
        Parameter("mu", "-", "rolling friction coefficient", 0.05, 0.0),
        Parameter("bonded", "-", "bit mask of the senses bonded when a bond is made", 15.0, 0.0, 15.0),
        Parameter("breakable", "-", "bit mask of the senses in which a bond can break", 15.0, 0.0, 15.0),
    )
    mixing = {"kt_div_kn": "mean", "alpha_w": "mean", "alpha_r": "mean", "break_n": "mean", "beta_t": "mean",
              "beta_w": "mean", "beta_r": "mean", "tan_phi": "min", "mu": "mean"}
    construction_keys = ("alpha", "beta", "per_material")
    history_fields = HISTORY_FIELDS
    pair_fields = PAIR_FIELDS
    default_dt_fraction = 0.15

    def __init__(self, alpha=None, beta=None, per_material=None, bonded="ntwr", breakable="ntwr", **params):
        params.update(self._expand(alpha, beta, params))
        if per_material:
            per_material = {k: {**{kk: vv for kk, vv in v.items() if kk not in ("alpha", "beta")},
                                **self._expand(v.get("alpha"), v.get("beta"), v)} if isinstance(v, dict) else v
                            for k, v in per_material.items()}
        super().__init__(per_material=per_material, bonded=parse_senses("bonded", bonded),
                         breakable=parse_senses("breakable", breakable), **params)

    @classmethod
    def examples(cls) -> dict:
        """The defaults (stiffness from Young's modulus)."""
        return {"ice": cls()}

    @staticmethod
    def _expand(alpha, beta, given) -> dict:
        out = {}
        for name, value, parts in (("alpha", alpha, ("alpha_w", "alpha_r")),
                                   ("beta", beta, ("beta_t", "beta_w", "beta_r"))):
            if value is None:
                continue
            if set(parts) & set(given):
                raise InputError(f"give {name} as a vector or as {', '.join(parts)}, not both")
            try:
                values = [float(x) for x in value]
            except (TypeError, ValueError):
                raise InputError(f"{name} must be a vector ({', '.join(parts)}), got {value!r}") from None
            if len(values) != len(parts):
                raise InputError(f"{name} must have {len(parts)} components ({', '.join(parts)}), got {value!r}")
            out.update(zip(parts, values))
        return out

    @property
    def alpha(self) -> tuple[float, float]:
        return (self.alpha_w, self.alpha_r)

    @property
    def beta(self) -> tuple[float, float, float]:
        return (self.beta_t, self.beta_w, self.beta_r)

    def pair_table(self, materials):
        m = len(materials)
        table = np.zeros((m, m, len(PAIR_FIELDS)))
        for a in range(m):
            for b in range(m):
                ma, mb = materials[a], materials[b]
                row = {name: self.pair_value(name, ma, mb) for name in self.mixing}
                row.update(inv_young_i=1.0 / ma.young, inv_young_j=1.0 / mb.young)
                table[a, b] = [row[f] for f in PAIR_FIELDS]
        return table

    def limits(self, material_i, material_j, radius_i, radius_j) -> dict[str, float]:
        """The pair's stiffnesses and breakage limits by name (``A``, ``k_n``, ``k_t``, ``k_w``,
        ``k_r``, ``F_nb``, ``F_tb``, ``T_wb``, ``T_rb``; SI units)."""
        p = self.pair_table((material_i, material_j))[0, 1]
        values = pair_constants(float(radius_i), float(radius_j), p)
        return dict(zip(("A", "k_n", "k_t", "k_w", "k_r", "F_nb", "F_tb", "T_wb", "T_rb"), values))

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """The four springs of spec 002 (``k_n``, ``k_t``, ``k_r``, ``k_w``; bonded or not), no damping."""
        c = self.limits(case.material_i, case.material_j, case.radius_i, case.radius_j)
        return ContactSprings(c["k_n"], c["k_t"], c["k_r"], c["k_w"])

    @property
    def bonded_senses(self) -> int:
        return int(self.bonded)

    def initial_bond_history(self, pairs: dict, params: np.ndarray) -> np.ndarray:
        bonded, breakable = int(self.bonded), int(self.breakable)
        if bonded == 0:
            raise InputError("Ice(bonded='') bonds no sense; give bonded as letters of 'ntwr'")
        h = np.zeros((len(pairs["overlap"]), HISTORY_SIZE))
        h[:, 0] = bonded + 16 * breakable
        h[:, 1] = pairs["overlap"]
        h[:, 2] = 1.0
        return h

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow (``contactlab.validation.battery.ModelProperties``):
        plain Coulomb sliding with ``tan_phi``; rolling resistance when ``alpha_r > 0`` and
        ``mu > 0``; no adhesion between unbonded spheres."""
        return dict(sliding_friction=self.tan_phi, rolling_resistance=self.alpha_r > 0.0 and self.mu > 0.0)

    def closed_form_impact(self, material, radius, speed) -> dict:
        """Spec 002, unbonded: a linear spring ``k_n = A / (l_i/E_i + l_j/E_j)`` without damping, for
        a sphere of ``radius`` and ``material`` hitting a wall at the normal ``speed``: ``e = 1``,
        ``t_c = pi sqrt(m / k_n)``."""
        mass = sphere_mass(material, radius)
        k_n = math.pi * radius**2 / (2.0 * radius / material.young)
        return {"restitution": 1.0, "duration": math.pi * math.sqrt(mass / k_n),
                "source": "undamped linear spring k_n = A / (l_i/E_i + l_j/E_j) of spec 002 (closed form)"}


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law`."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    h = np.array(hist, dtype=float)
    li = g["radius_i"]
    lj = g["radius_j"] if np.isfinite(g["radius_j"]) else li
    area = np.pi * min(li, lj) ** 2
    comp = li * p[INV_E_I] + lj * p[INV_E_J]
    kn = area / comp
    kt = p[KT_DIV] * kn
    kw, kr = p[ALPHA_W] * kt * area, p[ALPHA_R] * kn * area
    f_nb = (li + lj) / comp * p[BREAK_N] * area
    limits_b = {1: f_nb, 2: p[BETA_T] * f_nb, 4: p[BETA_W] * f_nb * np.sqrt(area),
                8: p[BETA_R] * p[BETA_T] * f_nb * np.sqrt(area)}
    zero = np.zeros(3)
    bonded = h[0] > 0
    delta = g["overlap"]
    if h[2] == 0:
        if not bonded and delta < 0:
            return zero, zero, 0.0, (0.0, 0.0, 0.0, 0.0), False, np.zeros(HISTORY_SIZE)
        rest = 0.0 if not bonded else h[1]
    else:
        rest = h[1]
    n = g["normal"]

    def tang(v):
        return v - (v @ n) * n

    def energy(f, k):
        return 0.5 * f @ f / k if k > 0 else 0.0

    def loss(f_old, f_new, inc, k):
        return energy(f_old, k) + 0.5 * (f_old + f_new) @ inc - energy(f_new, k)

    f_n = kn * (delta - rest)
    twist = g["pair_rotation"] @ n
    old = [follow_frame_reference(h[3:6], n, twist), h[6] * n, follow_frame_reference(h[7:10], n, twist)]
    inc = [tang(g["rel_displacement"]), (g["rel_rotation"] @ n) * n, tang(g["rel_rotation"])]
    stiff = [kt, kw, kr]
    new = [old[q] + stiff[q] * inc[q] for q in range(3)]
    d_n = -(g["rel_displacement"] @ n)
    fn_old = kn * (delta - d_n - rest)
    bits = int(h[0]) if bonded else 0
    state = h[0]
    reason = 0
    if bonded:
        both = bits & (bits >> 4)
        loads = {1: -f_n, 2: np.linalg.norm(new[0]), 4: np.linalg.norm(new[1]), 8: np.linalg.norm(new[2])}
        for code, bit in enumerate((1, 2, 4, 8), start=1):
            if both & bit and loads[bit] > limits_b[bit]:
                reason = code
                break
        if reason == 0 and not bits & 1 and f_n < 0:
            reason = 5
        if reason:
            bonded, bits, state = False, 0, -float(reason)
    if not bonded and f_n < 0:
        losses = [loss(old[q], zero, inc[q], stiff[q]) for q in range(3)]
        h_new = np.zeros(HISTORY_SIZE)
        if reason:
            h_new[0] = state
            released = 0.5 * fn_old**2 / kn + 0.5 * fn_old * d_n + sum(losses)
            return zero, zero, 0.0, (0.0, 0.0, 0.0, released), False, h_new
        return zero, zero, 0.0, (losses[0], losses[1], losses[2], 0.0), False, h_new
    load = max(f_n, 0.0)
    lever = np.sqrt(area / np.pi)
    limits_y = [load * p[TAN_PHI], lever * load * p[TAN_PHI], lever * load * p[MU]]
    for q, bit in enumerate((2, 4, 8)):
        size = np.linalg.norm(new[q])
        if not bits & bit and size > limits_y[q]:
            new[q] = new[q] * (limits_y[q] / size)
    losses = [loss(old[q], new[q], inc[q], stiff[q]) for q in range(3)]
    f_t, t_w, t_r = new
    stored = 0.5 * kn * (delta - rest) ** 2 + sum(energy(new[q], stiff[q]) for q in range(3))
    diss = (0.0, 0.0, 0.0, sum(losses)) if reason else (losses[0], losses[1], losses[2], 0.0)
    h_new = np.concatenate([[state, rest, 1.0], f_t, [t_w @ n], t_r])
    return f_t - f_n * n, t_r + t_w, stored, diss, True, h_new
