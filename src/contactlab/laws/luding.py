"""Luding's contact model (spec 001, as in WooDEM): elasto-plastic-adhesive normal sense, and
tangential, rolling and twisting senses with static and dynamic Coulomb limits and viscosity.

Pair quantities (``l_i``, ``l_j``: the radii; a wall counts as a mirror image of the sphere,
``l_j = l_i``; ``E``: Young's moduli):

* contact area ``A = pi min(l_i, l_j)^2``, reduced radius ``a12 = 2 l_i l_j / (l_i + l_j)``;
* ``k2_hat`` (N/m): given on the model, or the two-spring stiffness ``A / (l_i/E_i + l_j/E_j)``;
* ``k_n1 = k1_div_kn k2_hat`` (plastic loading), ``k_nc = ka_div_kn k2_hat`` (adhesion),
  ``k_t = kt_div_kn k2_hat``;
* plastic limit overlap ``delta_lim = k2_hat / (k2_hat - k_n1) delta_lim_rel a12`` (infinite when
  ``k_n1 = k2_hat``: no plasticity).

Normal sense (overlap ``delta >= 0``; the contact ends when ``delta < 0``), with the largest past
overlap ``delta_max`` as history:

    k_n2 = k_n1 + (k2_hat - k_n1) min(delta_max / delta_lim, 1),   delta_0 = delta_max (1 - k_n1/k_n2)
    f_el = k_n1 delta                if k_n2 (delta - delta_0) >= k_n1 delta   (plastic loading)
         = -k_nc delta               if -k_nc delta >= k_n2 (delta - delta_0)   (adhesive)
         = k_n2 (delta - delta_0)    otherwise                                 (unloading/reloading)
    f_n = f_el + visc_n v_n           (v_n the approach rate; f_n > 0 pushes the bodies apart)

Tangential, rolling and twisting senses: one spring-slider routine
(:func:`~contactlab.laws.springs.coulomb_slider`) with the static limit ``tan_phi (f_n + k_nc
delta)`` (clamped at 0) scaled by ``a12`` for the torques, and the dynamic limit ``dyn_div_stat``
times it.  The elastic displacement (m) or rotation (rad) is history, carried into the current
contact frame at every step.  Rolling and twisting act on the relative rotation; their torque
stiffnesses are the spec's ``k_r = k2_hat kr_div_kn a12`` and ``k_w = k2_hat kw_div_kn a12`` times
``a12`` once more, the length the spec uses to turn forces into torques (N m/rad).  Viscous
coefficients: ``visc_n``, ``visc_t`` (N s/m), ``visc_r``, ``visc_w`` (N m s/rad).

Energy.  Dissipation is booked per sense (:data:`DISSIPATION_TERMS`): viscous work every step
(``visc v^2 dt``), plastic work of a slip (the work done on the spring minus the change of its
energy: force times slip in steady sliding; see :func:`~contactlab.laws.springs.coulomb_slider`
for how it relates to the spec's ``(|f_trial| + f_dyn)(|f_trial| - f_dyn) / (2k)``), and the
plastic normal work when the contact breaks, ``W_np = (k_n1 delta_max + k_nc delta_min) delta_0 / 2`` with
``delta_min = delta_0 k_n2 / (k_n2 + k_nc)`` (the area of the load-unload-adhesion loop; the spec
writes it without the factor 1/2, which counts the loop twice).  Until then the normal sense
holds the work done on it, ``k_n1 delta_max^2 / 2 - int_delta^delta_max f_el``: the recoverable
elastic energy plus the plastic work that the break will book, so that the energy balance closes
at every step.  The stored energy of the other senses is ``k |xi|^2 / 2``; when the contact ends,
what their springs still hold goes with them and is booked as each sense's plastic work (before
issue 42 it was dropped: 0.4-1.2 % of an oblique impact's energy missing from the balance).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..vec import dot, scale, tangential_part
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings
from .connector import connector_lengths
from .impact_reference import ode_impact, sphere_mass
from .springs import coulomb_slider, coulomb_slider_reference, follow_frame, follow_frame_reference

__all__ = ["Luding", "law", "reference_law", "plastic_work_at_break", "normal_force"]

INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("delta_max", 1, "m", "largest overlap of the contact so far"),
    HistoryField("tangential_displacement", 3, "m", "elastic tangential displacement xi_t"),
    HistoryField("rolling_rotation", 3, "rad", "elastic rolling rotation xi_r"),
    HistoryField("twisting_rotation", 1, "rad", "elastic twist xi_w"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)
DISSIPATION_TERMS = ("viscous_normal", "viscous_tangential", "viscous_rolling", "viscous_twisting",
                     "plastic_normal", "plastic_tangential", "plastic_rolling", "plastic_twisting")

# pair-table columns
(K2_HAT, INV_E_I, INV_E_J, KT_DIV, KR_DIV, KW_DIV, K1_DIV, DLIM_REL, KA_DIV, TAN_PHI, STAT_R, STAT_W, DYN,
 VISC_N, VISC_T, VISC_R, VISC_W) = range(17)
PAIR_FIELDS = ("k2_hat", "inv_young_i", "inv_young_j", "kt_div_kn", "kr_div_kn", "kw_div_kn", "k1_div_kn",
               "delta_lim_rel", "ka_div_kn", "tan_phi", "stat_r", "stat_w", "dyn_div_stat", "visc_n", "visc_t",
               "visc_r", "visc_w")


@jit
def pair_geometry(radius_i, radius_j, p):
    """(a12 (m), k2_hat (N/m)) of a contact: reduced radius and maximum normal stiffness."""
    li, lj = connector_lengths(radius_i, radius_j)
    a12 = 2.0 * li * lj / (li + lj)
    k2 = p[K2_HAT]
    if k2 <= 0.0:
        r = min(li, lj)
        k2 = math.pi * r * r / (li * p[INV_E_I] + lj * p[INV_E_J])
    return a12, k2


@jit
def normal_force(delta, delta_max, k1, k2_hat, kc, delta_lim):
    """Elastic normal force (N, > 0 repulsive) and the branch parameters of Luding's law.

    Returns ``(f_el, k2, delta_0, delta_min)`` for overlap ``delta`` and largest past overlap
    ``delta_max >= delta`` (m).
    """
    if delta_max >= delta_lim:
        k2 = k2_hat
    else:
        k2 = k1 + (k2_hat - k1) * delta_max / delta_lim
    delta0 = delta_max * (1.0 - k1 / k2)
    delta_min = delta0 * k2 / (k2 + kc)
    f_unload = k2 * (delta - delta0)
    if f_unload >= k1 * delta:
        f = k1 * delta
    elif -kc * delta >= f_unload:
        f = -kc * delta
    else:
        f = f_unload
    return f, k2, delta0, delta_min


@jit
def _unloading_integral(s, k2, kc, delta0, delta_min):
    """Integral of the elastic force from 0 to ``s`` along the unloading curve (adhesive branch
    below ``delta_min``, ``k2`` branch above), J."""
    if s <= delta_min:
        return -0.5 * kc * s * s
    return -0.5 * kc * delta_min * delta_min + 0.5 * k2 * ((s - delta0) ** 2 - (delta_min - delta0) ** 2)


@jit
def normal_work(delta, delta_max, k1, k2, kc, delta0, delta_min):
    """Work done on the normal sense since the contact formed (J): plastic loading to
    ``delta_max`` along ``k1``, then back along the present unloading curve to ``delta``."""
    return 0.5 * k1 * delta_max * delta_max - (_unloading_integral(delta_max, k2, kc, delta0, delta_min)
                                               - _unloading_integral(delta, k2, kc, delta0, delta_min))


@jit
def plastic_work_at_break(delta_max, k1, k2, kc):
    """Plastic normal work of a contact that breaks (J): ``(k1 delta_max + kc delta_min) delta_0 / 2``."""
    delta0 = delta_max * (1.0 - k1 / k2)
    delta_min = delta0 * k2 / (k2 + kc)
    return 0.5 * (k1 * delta_max + kc * delta_min) * delta0


@jit
def law(g, p, h, dt):
    """Luding's law (module docstring).  History ``h``: delta_max, xi_t (3), xi_r (3), xi_w.

    Returns ``(force on i, couple on i, stored energy, dissipation terms (8), active, new h)``.
    """
    z = (0.0, 0.0, 0.0)
    a12, k2_hat = pair_geometry(g.radius_i, g.radius_j, p)
    k1 = p[K1_DIV] * k2_hat
    kc = p[KA_DIV] * k2_hat
    delta = g.overlap
    if delta < 0.0:
        wp = wt = wr = ww = 0.0
        if h[0] > 0.0:
            # the contact breaks: book its plastic normal work (with the stiffness it had), and the
            # energy its tangential, rolling and twisting springs still hold, which goes with them
            # (each sense's plastic term: the contact ends there, the springs are reset)
            dl = k2_hat / (k2_hat - k1) * p[DLIM_REL] * a12 if k1 < k2_hat else math.inf
            k2 = k2_hat if h[0] >= dl else k1 + (k2_hat - k1) * h[0] / dl
            wp = plastic_work_at_break(h[0], k1, k2, kc)
            wt = 0.5 * p[KT_DIV] * k2_hat * (h[1] * h[1] + h[2] * h[2] + h[3] * h[3])
            wr = 0.5 * p[KR_DIV] * k2_hat * a12 * a12 * (h[4] * h[4] + h[5] * h[5] + h[6] * h[6])
            ww = 0.5 * p[KW_DIV] * k2_hat * a12 * a12 * h[7] * h[7]
        return z, z, 0.0, (0.0, 0.0, 0.0, 0.0, wp, wt, wr, ww), False, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    n = g.normal
    delta_lim = k2_hat / (k2_hat - k1) * p[DLIM_REL] * a12 if k1 < k2_hat else math.inf
    delta_max = max(h[0], delta)
    f_el, k2, delta0, delta_min = normal_force(delta, delta_max, k1, k2_hat, kc, delta_lim)
    v_n = -dot(g.rel_velocity, n)
    f_n = f_el + p[VISC_N] * v_n
    stored = normal_work(delta, delta_max, k1, k2, kc, delta0, delta_min)
    visc_n = p[VISC_N] * v_n * v_n * dt
    base = max(f_n + kc * delta, 0.0)
    dyn = p[DYN]
    # tangential (2-D)
    twist = dot(g.pair_rotation, n)
    xi_t = follow_frame((h[1], h[2], h[3]), n, twist)
    f_t, xi_t, e_t, vt, pt = coulomb_slider(xi_t, tangential_part(g.rel_displacement, n), tangential_part(g.rel_velocity, n),
                                            dt, p[KT_DIV] * k2_hat, p[VISC_T], p[TAN_PHI] * base, dyn)
    # rolling (2-D) and twisting (1-D, along the normal) on the relative rotation
    kr = p[KR_DIV] * k2_hat * a12 * a12
    xi_r = follow_frame((h[4], h[5], h[6]), n, twist)
    m_r, xi_r, e_r, vr, pr = coulomb_slider(xi_r, tangential_part(g.rel_rotation, n),
                                            tangential_part(g.rel_angular_velocity, n), dt, kr, p[VISC_R],
                                            p[STAT_R] * base * a12, dyn) if kr > 0.0 else (z, z, 0.0, 0.0, 0.0)
    kw = p[KW_DIV] * k2_hat * a12 * a12
    m_w, xw, e_w, vw, pw = coulomb_slider(scale(h[7], n), scale(dot(g.rel_rotation, n), n),
                                          scale(dot(g.rel_angular_velocity, n), n), dt, kw, p[VISC_W],
                                          p[STAT_W] * base * a12, dyn) if kw > 0.0 else (z, z, 0.0, 0.0, 0.0)
    force = (f_t[0] - f_n * n[0], f_t[1] - f_n * n[1], f_t[2] - f_n * n[2])
    couple = (m_r[0] + m_w[0], m_r[1] + m_w[1], m_r[2] + m_w[2])
    h_new = (delta_max, xi_t[0], xi_t[1], xi_t[2], xi_r[0], xi_r[1], xi_r[2], dot(xw, n))
    return (force, couple, stored + e_t + e_r + e_w, (visc_n, vt, vr, vw, 0.0, pt, pr, pw), True, h_new)


class Luding(ContactModel):
    """Luding's elasto-plastic adhesive model with friction, rolling and twisting resistance (spec 001).

    Parameters (the spec's attribute names in snake_case; all but ``k2_hat`` may also be given per
    material through ``per_material={material or name: {parameter: value}}``, mixed by the spec's
    rule: average for ``kt_div_kn``, ``k1_div_kn``, ``delta_lim_rel``, ``ka_div_kn`` and (then
    scaled by ``a12``) ``kr_div_kn``, ``kw_div_kn``; minimum for the friction and viscous
    coefficients):

    k2_hat : float or None
        Maximum (unloading) normal stiffness, N/m; ``None`` (default): from the materials' Young's
        moduli, ``pi min(r_i, r_j)^2 / (r_i/E_i + r_j/E_j)``.
    k1_div_kn : float
        Plastic loading stiffness over ``k2_hat``, 0 < x <= 1 (1: no plasticity); default 0.5.
    delta_lim_rel : float
        Plasticity depth phi_f (> 0), relative to ``a12``; default 0.1.
    ka_div_kn : float
        Adhesive stiffness ``k_nc`` over ``k2_hat``, >= 0; default 0.2.
    kt_div_kn, kr_div_kn, kw_div_kn : float
        Tangential, rolling, twisting stiffness over ``k2_hat`` (>= 0); defaults 0.2.
    tan_phi, stat_r, stat_w : float
        Static friction coefficients of the tangential, rolling, twisting senses (>= 0); defaults
        0.5, 0.4, 0.3.
    dyn_div_stat : float
        Dynamic over static friction, 0 <= x <= 1; default 0.7.
    visc_n, visc_t : float
        Normal and tangential viscous coefficients, N s/m (>= 0); defaults 0.
    visc_r, visc_w : float
        Rolling and twisting viscous coefficients, N m s/rad (>= 0); defaults 0.1 (WooDEM's).

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.Luding(k2_hat=1e4, ka_div_kn=0.1, visc_n=0.01, visc_r=0.0, visc_w=0.0)
    >>> model.k1_div_kn, model.dyn_div_stat
    (0.5, 0.7)
    """

    name = "Luding"
    law_module = "contactlab.laws.luding"
    parameters = (
        Parameter("k2_hat", "N/m", "maximum normal stiffness (0 or None: from Young's moduli)", 0.0, 0.0),
        Parameter("k1_div_kn", "-", "plastic loading stiffness / k2_hat", 0.5, 0.0, 1.0, False, True),
        Parameter("delta_lim_rel", "-", "plasticity depth phi_f relative to a12", 0.1, 0.0, low_inclusive=False),
        Parameter("ka_div_kn", "-", "adhesive stiffness / k2_hat", 0.2, 0.0),
        Parameter("kt_div_kn", "-", "tangential stiffness / k2_hat", 0.2, 0.0, low_inclusive=False),
        Parameter("kr_div_kn", "-", "rolling stiffness / k2_hat (scaled by a12)", 0.2, 0.0),
        Parameter("kw_div_kn", "-", "twisting stiffness / k2_hat (scaled by a12)", 0.2, 0.0),
        Parameter("tan_phi", "-", "static tangential friction coefficient", 0.5, 0.0),
        Parameter("stat_r", "-", "static rolling friction coefficient", 0.4, 0.0),
        Parameter("stat_w", "-", "static twisting friction coefficient", 0.3, 0.0),
        Parameter("dyn_div_stat", "-", "dynamic / static friction", 0.7, 0.0, 1.0),
        Parameter("visc_n", "N s/m", "normal viscous coefficient", 0.0, 0.0),
        Parameter("visc_t", "N s/m", "tangential viscous coefficient", 0.0, 0.0),
        Parameter("visc_r", "N m s/rad", "rolling viscous coefficient", 0.1, 0.0),
        Parameter("visc_w", "N m s/rad", "twisting viscous coefficient", 0.1, 0.0),
    )
    mixing = {"kt_div_kn": "mean", "kr_div_kn": "mean", "kw_div_kn": "mean", "k1_div_kn": "mean",
              "delta_lim_rel": "mean", "ka_div_kn": "mean", "tan_phi": "min", "stat_r": "min", "stat_w": "min",
              "dyn_div_stat": "min", "visc_n": "min", "visc_t": "min", "visc_r": "min", "visc_w": "min"}
    construction_keys = ("per_material",)
    history_fields = HISTORY_FIELDS
    pair_fields = PAIR_FIELDS
    default_dt_fraction = 0.1

    def __init__(self, k2_hat=None, per_material=None, **params):
        super().__init__(per_material=per_material, k2_hat=0.0 if k2_hat is None else k2_hat, **params)

    @classmethod
    def examples(cls) -> dict:
        """Plastic and adhesive, with a small normal viscosity and rolling/twisting springs."""
        return {"luding": cls(k1_div_kn=0.5, ka_div_kn=0.2, delta_lim_rel=0.1, visc_n=0.05, visc_t=0.0, visc_r=1e-8,
                              visc_w=1e-8, tan_phi=0.5, stat_r=0.4, stat_w=0.3, dyn_div_stat=0.7)}

    def pair_table(self, materials):
        m = len(materials)
        table = np.zeros((m, m, len(PAIR_FIELDS)))
        for a in range(m):
            for b in range(m):
                ma, mb = materials[a], materials[b]
                row = {name: self.pair_value(name, ma, mb) for name in self.mixing}
                row.update(k2_hat=self.k2_hat, inv_young_i=1.0 / ma.young, inv_young_j=1.0 / mb.young)
                table[a, b] = [row[f] for f in PAIR_FIELDS]
        return table

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """The largest normal stiffness ``k2`` (the unloading branch, stiffer than any other) with
        the normal viscosity; tangential ``kt_div_kn k2``, rolling and twisting ``k_div k2 a12^2``
        with their viscosities (spec 001)."""
        p = self.pair_table((case.material_i, case.material_j))[0, 1]
        a12, k2 = pair_geometry(float(case.radius_i), float(case.radius_j), p)
        return ContactSprings(k2, p[KT_DIV] * k2, p[KR_DIV] * k2 * a12 * a12, p[KW_DIV] * k2 * a12 * a12,
                                p[VISC_N], p[VISC_T], p[VISC_R], p[VISC_W])

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow (``contactlab.validation.battery.ModelProperties``):
        the normal force pulls (adhesive) with adhesion ``ka_div_kn > 0`` or a normal viscosity; the
        viscosity acts from first touch; the sliding limit ``tan_phi dyn (f_n + k_c delta)`` is plain
        Coulomb (``tan_phi dyn_div_stat``) only without adhesion; rolling resistance with a rolling
        spring and a rolling friction or viscosity."""
        pulls = self.ka_div_kn > 0.0 or self.visc_n > 0.0
        return dict(adhesive=pulls, viscous_at_touch=self.visc_n > 0.0,
                    # the sliding limit is tan_phi * dyn (f_n + k_c delta): with adhesion it is not
                    # proportional to the normal force
                    sliding_friction=None if self.ka_div_kn > 0.0 else self.tan_phi * self.dyn_div_stat,
                    rolling_resistance=self.kr_div_kn > 0.0 and (self.stat_r > 0.0 or self.visc_r > 0.0))

    def closed_form_impact(self, material, radius, speed) -> dict:
        """Luding (2008), spec 001: the 1-DOF equation of the normal branches (restated here,
        independently of :func:`normal_force`) with ``visc_n``, for a sphere of ``radius`` and
        ``material`` hitting a wall at the normal ``speed`` (the wall as the mirror image of the
        sphere), integrated by :func:`~contactlab.laws.impact_reference.ode_impact`."""
        mass = sphere_mass(material, radius)
        li = lj = radius
        k2_hat = self.k2_hat if self.k2_hat > 0.0 else math.pi * radius**2 / (li / material.young + lj / material.young)
        a12 = 2.0 * li * lj / (li + lj)
        k1 = self.k1_div_kn * k2_hat
        kc = self.ka_div_kn * k2_hat
        d_lim = k2_hat / (k2_hat - k1) * self.delta_lim_rel * a12 if k1 < k2_hat else math.inf

        def force(d, v, d_max):
            d = max(d, 0.0)
            k2 = k2_hat if d_max >= d_lim else k1 + (k2_hat - k1) * d_max / d_lim
            d0 = d_max * (1.0 - k1 / k2)
            f = k2 * (d - d0)
            f = k1 * d if f >= k1 * d else (-kc * d if -kc * d >= f else f)
            return f + self.visc_n * v

        ode = ode_impact(force, mass, speed, math.sqrt(mass / k1))
        return {"restitution": ode["restitution"], "duration": None if ode["captured"] else ode["duration"],
                "source": "Luding (2008) normal branches (spec 001, restated) with visc_n, 1-DOF equation of motion "
                          "(SciPy DOP853)"}


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law` (``geometry`` maps field names to values; ``hist`` copied)."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    h = np.array(hist, dtype=float)
    li = g["radius_i"]
    lj = g["radius_j"] if np.isfinite(g["radius_j"]) else li
    a12 = 2 * li * lj / (li + lj)
    k2_hat = p[K2_HAT] if p[K2_HAT] > 0 else np.pi * min(li, lj) ** 2 / (li * p[INV_E_I] + lj * p[INV_E_J])
    k1, kc = p[K1_DIV] * k2_hat, p[KA_DIV] * k2_hat
    delta_lim = k2_hat / (k2_hat - k1) * p[DLIM_REL] * a12 if k1 < k2_hat else np.inf
    delta = g["overlap"]
    zero = np.zeros(3)
    if delta < 0:
        wp = wt = wr = ww = 0.0
        if h[0] > 0:
            k2 = k2_hat if h[0] >= delta_lim else k1 + (k2_hat - k1) * h[0] / delta_lim
            d0 = h[0] * (1 - k1 / k2)
            wp = 0.5 * (k1 * h[0] + kc * d0 * k2 / (k2 + kc)) * d0
            # the springs' energy goes with the contact (booked as each sense's plastic work)
            wt = 0.5 * p[KT_DIV] * k2_hat * float(h[1:4] @ h[1:4])
            wr = 0.5 * p[KR_DIV] * k2_hat * a12**2 * float(h[4:7] @ h[4:7])
            ww = 0.5 * p[KW_DIV] * k2_hat * a12**2 * h[7] ** 2
        return zero, zero, 0.0, (0, 0, 0, 0, wp, wt, wr, ww), False, np.zeros(8)
    n = g["normal"]
    dmax = max(h[0], delta)
    k2 = k2_hat if dmax >= delta_lim else k1 + (k2_hat - k1) * dmax / delta_lim
    d0 = dmax * (1 - k1 / k2)
    dmin = d0 * k2 / (k2 + kc)
    f_el = min(k1 * delta, max(k2 * (delta - d0), -kc * delta))  # the three branches in one
    v_n = -(g["rel_velocity"] @ n)
    f_n = f_el + p[VISC_N] * v_n

    def integral(s):
        if s <= dmin:
            return -0.5 * kc * s * s
        return -0.5 * kc * dmin**2 + 0.5 * k2 * ((s - d0) ** 2 - (dmin - d0) ** 2)

    stored = 0.5 * k1 * dmax**2 - (integral(dmax) - integral(delta))
    base = max(f_n + kc * delta, 0.0)

    def tang(v):
        return v - (v @ n) * n

    twist = g["pair_rotation"] @ n
    f_t, xt, et, vt, pt = coulomb_slider_reference(follow_frame_reference(h[1:4], n, twist), tang(g["rel_displacement"]),
                                                   tang(g["rel_velocity"]), dt, p[KT_DIV] * k2_hat, p[VISC_T],
                                                   p[TAN_PHI] * base, p[DYN])
    kr = p[KR_DIV] * k2_hat * a12**2
    if kr > 0:
        m_r, xr, er, vr, pr = coulomb_slider_reference(follow_frame_reference(h[4:7], n, twist), tang(g["rel_rotation"]),
                                                       tang(g["rel_angular_velocity"]), dt, kr, p[VISC_R],
                                                       p[STAT_R] * base * a12, p[DYN])
    else:
        m_r, xr, er, vr, pr = zero, zero, 0.0, 0.0, 0.0
    kw = p[KW_DIV] * k2_hat * a12**2
    if kw > 0:
        m_w, xw, ew, vw, pw = coulomb_slider_reference(h[7] * n, (g["rel_rotation"] @ n) * n,
                                                       (g["rel_angular_velocity"] @ n) * n, dt, kw, p[VISC_W],
                                                       p[STAT_W] * base * a12, p[DYN])
    else:
        m_w, xw, ew, vw, pw = zero, zero, 0.0, 0.0, 0.0
    h_new = np.concatenate([[dmax], xt, xr, [xw @ n]])
    return (f_t - f_n * n, m_r + m_w, stored + et + er + ew,
            (p[VISC_N] * v_n**2 * dt, vt, vr, vw, 0.0, pt, pr, pw), True, h_new)
