"""Linear spring-dashpot (Cundall-Strack) with exact restitution and Coulomb friction.

Normal: ``F_n = max(0, k d + 2 zeta sqrt(k m*) d')`` with ``zeta`` giving the requested
restitution exactly (:func:`~contactlab.laws.restitution.linear_damping_ratio`; the force never
pulls, and the collision ends when it vanishes).  The contact duration of an undamped collision
is ``pi sqrt(m*/k)``.

Tangential: spring-slider of stiffness ``k_t = ratio k`` (``2/7`` by default, which makes the
tangential oscillation of a sphere on a plane as fast as the normal one) and viscosity
``2 zeta sqrt(k_t m*)``, sliding at ``mu F_n``.  Optional rolling resistance as in
:mod:`contactlab.laws.hertz_mindlin` with ``k_r = k_t R*^2``.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings, single_contact_limit
from .impact_reference import sphere_mass
from .restitution import linear_damping_ratio
from .springs import friction_senses, friction_senses_reference

__all__ = ["LinearSpringDashpot", "law", "reference_law"]

#: gap (m) up to which the engine hands a pair to the law; farther pairs are reset (history zero)
INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("tangential_displacement", 3, "m", "elastic tangential displacement xi"),
    HistoryField("rolling_rotation", 3, "rad", "elastic relative rotation of the rolling spring"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

STIFFNESS, T_STIFFNESS, MU, MU_ROLL, ZETA, ROOT_K, ROOT_KT = range(7)


@jit
def law(g, p, h, dt):
    """Linear spring-dashpot law; history ``h`` (6 floats): tangential xi (3), rolling theta (3).

    Returns ``(force on i, couple on i, stored energy, dissipation, active, new h)``.
    """
    delta = g.overlap
    if delta <= 0.0:
        z = (0.0, 0.0, 0.0)
        return z, z, 0.0, 0.0, False, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    n = g.normal
    k = p[STIFFNESS]
    zeta = p[ZETA]
    rate = -dot(g.rel_velocity, n)
    f_el = k * delta
    root_m = math.sqrt(g.mass)
    f_n = f_el + 2.0 * zeta * p[ROOT_K] * root_m * rate
    if f_n < 0.0:
        f_n = 0.0
    energy = 0.5 * k * delta * delta
    diss = (f_n - f_el) * rate * dt
    k_t = p[T_STIFFNESS]
    f_t, couple, xi_t, xi_r, e_t, d_t = friction_senses(g, (h[0], h[1], h[2]), (h[3], h[4], h[5]), dt, f_n, k_t,
                                                        k_t, 2.0 * zeta * p[ROOT_KT] * root_m, p[MU], p[MU_ROLL])
    force = (f_t[0] - f_n * n[0], f_t[1] - f_n * n[1], f_t[2] - f_n * n[2])
    return force, couple, energy + e_t, diss + d_t, True, (xi_t[0], xi_t[1], xi_t[2], xi_r[0], xi_r[1], xi_r[2])


class LinearSpringDashpot(ContactModel):
    """Linear spring-dashpot (Cundall-Strack) contact with Coulomb friction.

    Parameters
    ----------
    stiffness : float
        Normal stiffness k, N/m (> 0), the same for every pair.
    restitution : float
        Normal coefficient of restitution, 0 < e <= 1 (exact for every impact speed).
    friction : float
        Coulomb friction coefficient mu >= 0.
    tangential_stiffness_ratio : float
        k_t / k, default 2/7.
    rolling_friction : float
        Rolling friction coefficient mu_r >= 0, default 0.

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.LinearSpringDashpot(stiffness=1e4, restitution=0.8, friction=0.3)
    """

    name = "LinearSpringDashpot"
    law_module = "contactlab.laws.linear_spring_dashpot"
    parameters = (
        Parameter("stiffness", "N/m", "normal stiffness", None, 0.0, math.inf, False),
        Parameter("restitution", "-", "normal coefficient of restitution", None, 0.0, 1.0, False, True),
        Parameter("friction", "-", "Coulomb friction coefficient", None, 0.0),
        Parameter("tangential_stiffness_ratio", "-", "tangential over normal stiffness", 2.0 / 7.0, 0.0),
        Parameter("rolling_friction", "-", "rolling friction coefficient", 0.0, 0.0),
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("stiffness", "tangential_stiffness", "friction", "rolling_friction", "damping_ratio",
                   "root_stiffness", "root_tangential_stiffness")
    # the stiffness is the same at every overlap (unlike Hertz, whose limit is taken at the largest
    # allowed overlap), and the dashpot switches on at first touch: ~15 steps per contact by default
    default_dt_fraction = 0.15

    def __init__(self, stiffness, restitution, friction, tangential_stiffness_ratio=2.0 / 7.0, rolling_friction=0.0,
                 **unknown):
        super().__init__(stiffness=stiffness, restitution=restitution, friction=friction,
                         tangential_stiffness_ratio=tangential_stiffness_ratio, rolling_friction=rolling_friction,
                         **unknown)
        self._zeta = linear_damping_ratio(self.restitution)

    @classmethod
    def examples(cls) -> dict:
        """The stiffness of the test suite (contact time ~0.2 ms for 1 mm glass), e = 0.5, mu = 0.5."""
        return {"linear_spring_dashpot": cls(stiffness=2e3, restitution=0.5, friction=0.5)}

    @property
    def damping_ratio(self) -> float:
        """zeta of ``F_d = 2 zeta sqrt(k m*) d'`` (from the restitution)."""
        return self._zeta

    def pair_table(self, materials):
        m = len(materials)
        k_t = self.stiffness * self.tangential_stiffness_ratio
        row = (self.stiffness, k_t, self.friction, self.rolling_friction, self._zeta, math.sqrt(self.stiffness),
               math.sqrt(k_t))
        return np.broadcast_to(np.array(row, dtype=float), (m, m, len(row))).copy()

    stiffness_on_arrays = True

    def _springs(self, case: PairCase, frictional: bool) -> ContactSprings:
        """``k`` and ``k_t = ratio k`` with their dashpots ``2 zeta sqrt(k m*)``, the rolling spring
        ``k_t R*^2`` with rolling friction; the tangential spring only if ``frictional``."""
        m = case.mass
        zero = 0.0 * m
        k = self.stiffness + zero
        k_t = self.stiffness * self.tangential_stiffness_ratio + zero if frictional else zero
        z = self._zeta
        k_r = k_t * case.radius**2 if self.rolling_friction > 0.0 else zero
        return ContactSprings(k, k_t, k_r, zero, 2.0 * z * np.sqrt(k * m), 2.0 * z * np.sqrt(k_t * m), zero, zero)

    def contact_springs(self, case: PairCase) -> ContactSprings:
        return self._springs(case, self.friction > 0.0)

    def stability_limit(self, case: PairCase) -> float:
        """One contact alone, its tangential spring counted whatever the friction."""
        return single_contact_limit(self._springs(case, True), case)

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow (``contactlab.validation.battery.ModelProperties``):
        the dashpot acts from first touch (a force ``c d'`` at zero overlap) unless ``e = 1``; plain
        Coulomb sliding with ``friction``; rolling resistance when ``rolling_friction > 0``."""
        return dict(viscous_at_touch=self.restitution < 1.0, sliding_friction=self.friction,
                    rolling_resistance=self.rolling_friction > 0.0)

    def closed_form_impact(self, material, radius, speed) -> dict:
        """The damped linear oscillator, clipped at zero force, for a sphere of ``radius`` and
        ``material`` hitting a wall at the normal ``speed``: restitution as requested (exact by
        construction); duration ``(theta / sqrt(1 - zeta^2) + 2 zeta) / omega`` (the force vanishes
        at ``theta / omega_d``, the overlap ``2 zeta / omega`` later); no duration when overdamped."""
        mass = sphere_mass(material, radius)
        omega = math.sqrt(self.stiffness / mass)
        z = self.damping_ratio
        if z >= 1.0:
            return {"restitution": self.restitution, "duration": None, "source": "requested restitution (overdamped)"}
        wd = math.sqrt(1.0 - z * z)
        theta = math.pi - math.atan2(2.0 * z * wd, 1.0 - 2.0 * z * z)
        return {"restitution": self.restitution, "duration": (theta / wd + 2.0 * z) / omega,
                "source": "damped linear oscillator clipped at zero force (closed form); restitution exact by "
                          "construction (requested e)"}


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law`; same conventions as the Hertz-Mindlin twin."""
    g = geometry_arrays(geometry)
    hist = np.array(hist, dtype=float)
    delta = g["overlap"]
    if delta <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(6)
    k, k_t, mu, mu_r, zeta = (float(x) for x in params[:5])
    n = g["normal"]
    rate = -(g["rel_velocity"] @ n)
    f_el = k * delta
    f_n = max(0.0, f_el + 2 * zeta * np.sqrt(k * g["mass"]) * rate)
    stored = 0.5 * k * delta**2
    diss = (f_n - f_el) * rate * dt
    f_t, couple, e_t, d_t = friction_senses_reference(g, hist, dt, f_n, k_t, k_t, 2 * zeta * np.sqrt(k_t * g["mass"]),
                                                      mu, mu_r)
    return f_t - f_n * n, couple, stored + e_t, diss + d_t, True, hist
