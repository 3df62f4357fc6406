"""Contact-volume energy-conserving contact (ECC): the energy is proportional to the overlap volume.

The notes' contact-volume ECC model (spec 004, "The contact-volume based ECC model"): a contact
potential ``w = k_v V_c`` of the volume ``V_c`` common to the two bodies gives the normal force
``F_n = k_v S_n`` with ``S_n = dV_c/d(overlap)``, the area of the intersection surface projected on
the normal, acting on the line through the energy-consistent contact point, plus a couple
``-k_v dV/dtheta . n`` for the part of the moment about the normal (``contact_twist``) that no
force through a point carries.  The narrow phase
computes ``V_c`` (record field ``contact_volume``), ``S_n`` (``contact_area``), the normal
(``S_n``'s direction) and the contact point for spheres (lens, cap), convex polyhedra and plane
walls (:mod:`contactlab.geometry.polyhedron_overlap`); the simulation switches to that narrow phase
(``shape_contact="volume"``) for this model.  Elastic impacts then conserve energy whatever the
shapes and orientations (the force is the gradient of the potential, the moment its derivative
with respect to rotations).

Optional normal damping ``c S_n d'`` (a viscous pressure, N s/m^3) and Coulomb friction with a
tangential spring of stiffness ``k_t = ratio k_v sqrt(S_n)`` (an area-based stiffness: for a
circular contact of radius ``a`` the elastic tangential stiffness grows like ``a``).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..vec import dot
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size
from .stiffness import ContactSprings
from .springs import friction_senses, friction_senses_reference

__all__ = ["VolumeContact", "law", "reference_law"]

INTERACTION_RANGE = 0.0
#: the per-contact history: named fields, declared once (the model's ``history_fields``)
HISTORY_FIELDS = (
    HistoryField("tangential_displacement", 3, "m", "elastic tangential displacement xi"),
    HistoryField("tangential_stiffness", 1, "N/m", "k_t at the last step"),
)
#: history floats per contact (derived from the fields)
HISTORY_SIZE = history_size(HISTORY_FIELDS)

STIFFNESS, DAMPING, MU, RATIO = range(4)


@jit
def law(g, p, h, dt):
    """Contact-volume law; history: tangential spring xi (3), its stiffness at the last step (1)."""
    area = g.contact_area
    if g.overlap <= 0.0 or area <= 0.0:
        z = (0.0, 0.0, 0.0)
        return z, z, 0.0, 0.0, False, (0.0, 0.0, 0.0, 0.0)
    n = g.normal
    k = p[STIFFNESS]
    rate = -dot(g.rel_velocity, n)
    f_el = k * area
    f_n = f_el + p[DAMPING] * area * rate
    if f_n < 0.0:
        f_n = 0.0
    energy = k * g.contact_volume
    diss = (f_n - f_el) * rate * dt
    k_t = p[RATIO] * k * math.sqrt(area)
    k_old = h[3] if h[3] > 0.0 else k_t
    f_t, couple, xi_t, xi_r, e_t, d_t = friction_senses(g, (h[0], h[1], h[2]), (0.0, 0.0, 0.0), dt, f_n, k_t,
                                                        k_old, 0.0, p[MU], 0.0)
    force = (f_t[0] - f_n * n[0], f_t[1] - f_n * n[1], f_t[2] - f_n * n[2])
    # the part of the potential's moment about the normal (a twist of face contacts) as a couple
    tw = -k * g.contact_twist
    couple = (couple[0] + tw * n[0], couple[1] + tw * n[1], couple[2] + tw * n[2])
    return force, couple, energy + e_t, diss + d_t, True, (xi_t[0], xi_t[1], xi_t[2], k_t)


class VolumeContact(ContactModel):
    """Contact-volume energy-conserving contact (spec 004): ``F_n = k_v dV/d(overlap)``.

    Parameters
    ----------
    volume_stiffness : float
        ``k_v``, Pa (J/m^3): the contact energy per overlap volume; the normal force is ``k_v``
        times the projected area of the intersection (for two spheres of effective radius ``R*``
        at overlap ``d``, about ``2 pi R* d k_v``, a linear spring of stiffness ``2 pi R* k_v``).
    damping : float
        ``c``, N s/m^3: normal damping force ``c S_n d'`` (default 0: elastic).
    friction : float
        Coulomb friction coefficient (default 0).
    tangential_stiffness_ratio : float
        ``k_t = ratio k_v sqrt(S_n)`` (default 1).

    Works on spheres, convex polyhedra (``Scene.add_polyhedron``, ``add_box``) and plane walls.

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.VolumeContact(volume_stiffness=1e9)
    """

    name = "VolumeContact"
    law_module = "contactlab.laws.volume_contact"
    #: the simulation computes overlap volumes for this model (``shape_contact="volume"``)
    needs_volume = True
    parameters = (
        Parameter("volume_stiffness", "Pa", "contact energy per overlap volume k_v", None, 0.0, math.inf, False),
        Parameter("damping", "N s/m^3", "normal damping per projected area", 0.0, 0.0),
        Parameter("friction", "-", "Coulomb friction coefficient", 0.0, 0.0),
        Parameter("tangential_stiffness_ratio", "-", "k_t / (k_v sqrt(S_n))", 1.0, 0.0),
    )
    history_fields = HISTORY_FIELDS
    pair_fields = ("volume_stiffness", "damping", "friction", "tangential_stiffness_ratio")
    default_dt_fraction = 0.15

    def __init__(self, volume_stiffness, damping=0.0, friction=0.0, tangential_stiffness_ratio=1.0, **unknown):
        super().__init__(volume_stiffness=volume_stiffness, damping=damping, friction=friction,
                         tangential_stiffness_ratio=tangential_stiffness_ratio, **unknown)

    #: a law of overlap volumes of polyhedra: validated by its own tests (tests/test_shapes_volume.py)
    validation_battery = False

    @classmethod
    def examples(cls) -> dict:
        """A contact energy of 2e8 Pa times the overlap volume, with damping and friction."""
        return {"volume_contact": cls(volume_stiffness=2e8, damping=1e3, friction=0.3)}

    def pair_table(self, materials):
        m = len(materials)
        row = (self.volume_stiffness, self.damping, self.friction, self.tangential_stiffness_ratio)
        return np.broadcast_to(np.array(row, dtype=float), (m, m, len(row))).copy()

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """Two spheres: the lens's area ``S = pi a^2 ~ 2 pi R* d``, so the normal stiffness is
        ``2 pi R* k_v`` and the dashpot ``c S``; the tangential spring ``ratio k_v sqrt(S)`` with
        friction."""
        k = 2.0 * math.pi * case.radius * self.volume_stiffness
        area = 2.0 * math.pi * case.radius * case.overlap
        k_t = self.tangential_stiffness_ratio * self.volume_stiffness * math.sqrt(area) if self.friction > 0 else 0.0
        return ContactSprings(normal=k, tangential=k_t, normal_damping=self.damping * area)


def reference_law(geometry: dict, params, hist, dt):
    """Plain NumPy twin of :func:`law`."""
    g = geometry_arrays(geometry)
    hist = np.array(hist, dtype=float)
    area = g["contact_area"]
    if g["overlap"] <= 0 or area <= 0:
        return np.zeros(3), np.zeros(3), 0.0, 0.0, False, np.zeros(4)
    k, c, mu, ratio = (float(x) for x in params[:4])
    n = g["normal"]
    rate = -(g["rel_velocity"] @ n)
    f_el = k * area
    f_n = max(0.0, f_el + c * area * rate)
    diss = (f_n - f_el) * rate * dt
    k_t = ratio * k * np.sqrt(area)
    k_old = hist[3] if hist[3] > 0 else k_t
    work = np.concatenate([hist[:3], np.zeros(3)])
    f_t, couple, e_t, d_t = friction_senses_reference(g, work, dt, f_n, k_t, k_old, 0.0, mu, 0.0)
    couple = couple - k * g.get("contact_twist", 0.0) * n
    return f_t - f_n * n, couple, k * g["contact_volume"] + e_t, diss + d_t, True, np.concatenate([work[:3], [k_t]])
