"""The parallel-bond model (Potyondy and Cundall, 2004): an elastic cement disc between two bonded
spheres, in parallel with a frictional contact model that takes over once the bond breaks.

The bond is a disc of radius ``R_b = radius_multiplier min(r_i, r_j)``, area ``A = pi R_b^2``,
moments ``I = pi R_b^4 / 4`` and ``J = pi R_b^4 / 2``, with normal and shear stiffness per unit
area ``k_n``, ``k_s`` (N/m^3).  Its force and moment are incremental springs, carried with the
contact frame, on the exact relative displacement and rotation of each step::

    dF_n = k_n A du_n    (compressive > 0)     dF_s = k_s A du_s
    dM_t = k_s J dtheta_n (twisting)           dM_b = k_n I dtheta_s (bending)

and optionally viscous (``damping``: a fraction of the critical damping of each sense, with the
effective mass of the pair and the rotational inertia ``0.4 m* min(r)^2`` of two solid spheres).
The largest stresses on the disc's rim,

    sigma = -F_n / A + |M_b| R_b / I        tau = |F_s| / A + |M_t| R_b / J,

break the bond when ``sigma >= tensile_strength`` (reason "tension") or ``tau >= shear_strength``
("shear"); the energy the bond held is then booked as ``bond_breakage`` (the mean of its values at
the start and the end of the step in which it breaks: the trapezoidal work the integrator sees for
a force that drops to zero) and the pair is an ordinary
contact of the frictional model from then on (which also acts, in parallel, while the bond holds,
whenever the spheres overlap).

Bonds are made by :meth:`contactlab.Simulation.bond`, unloaded at the present distance.  The
contact is any model without bonds whose law books one dissipation total
(:class:`~contactlab.models.LinearSpringDashpot`, :class:`~contactlab.models.HertzMindlin`,
:class:`~contactlab.models.SphereSphereContact`, ...): one law module per contact law is generated
from :data:`LAW_TEMPLATE` (three lines: the bond, the contact's law, :func:`with_contact`), so that
the combination is an ordinary importable module that Numba caches, and no file is written per
combination.
"""
from __future__ import annotations

import importlib
import math
import re
from functools import lru_cache

import numpy as np

from .._jit import jit
from ..errors import InputError
from ..vec import axpy, dot, tangential_part
from ..kernel_cache import cache_dir, generated_name, module_source_hash, session_dir, write_module
from .base import ContactModel, HistoryField, PairCase, Parameter, geometry_arrays, history_size, verlet_limit
from ..stability import springs_of
from .stiffness import ContactSprings
from .connector import connector_lengths
from .linear_spring_dashpot import LinearSpringDashpot
from .springs import follow_frame, follow_frame_reference

__all__ = ["ParallelBond", "bond_part", "with_contact", "BOND_FIELDS", "BOND_HISTORY", "BOND_COLUMNS", "BOND_REASONS",
           "BOND_FIELD", "DISSIPATION_TERMS", "LAW_TEMPLATE", "law_module_for"]

#: the bond's history, before the contact law's
BOND_FIELDS = (
    HistoryField("bond_state", 1, "-", "1 bonded, -reason once broken, 0 never bonded"),
    HistoryField("bond_normal_force", 1, "N", "bond normal force (> 0 compressive)"),
    HistoryField("bond_shear_force", 3, "N", "bond shear force on i"),
    HistoryField("bond_twisting_moment", 1, "N m", "bond twisting moment on i about the normal"),
    HistoryField("bond_bending_moment", 3, "N m", "bond bending moment on i"),
)
BOND_HISTORY = history_size(BOND_FIELDS)
#: history index of the bond state (the law module's ``BOND_FIELD``)
BOND_FIELD = 0
(KN, KS, SIGMA_C, TAU_C, LAMBDA, BETA) = range(6)
BOND_COLUMNS = 6
BOND_REASONS = {1: "tension", 2: "shear"}
DISSIPATION_TERMS = ("contact", "viscous_bond", "bond_breakage")


@jit
def bond_part(g, p, h, dt):
    """The bond's force and couple on ``i`` and its bookkeeping.

    Returns ``(force, couple, stored, viscous, released, new bond history (9), bonded)``.
    """
    z = (0.0, 0.0, 0.0)
    if h[0] <= 0.0:
        return z, z, 0.0, 0.0, 0.0, (h[0], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), False
    n = g.normal
    ri, rj = connector_lengths(g.radius_i, g.radius_j)
    rb = p[LAMBDA] * min(ri, rj)
    area = math.pi * rb * rb
    inertia = 0.25 * area * rb * rb
    polar = 2.0 * inertia
    kn = p[KN] * area
    ks = p[KS] * area
    kb = p[KN] * inertia
    kt = p[KS] * polar
    du = g.rel_displacement
    dth = g.rel_rotation
    f_n = h[1] - kn * dot(du, n)  # the gap grows by du . n: tension
    twist = dot(g.pair_rotation, n)
    f_s = axpy(ks, tangential_part(du, n), follow_frame((h[2], h[3], h[4]), n, twist))
    m_t = h[5] + kt * dot(dth, n)
    m_b = axpy(kb, tangential_part(dth, n), follow_frame((h[6], h[7], h[8]), n, twist))
    stored = 0.5 * (f_n * f_n / kn + dot(f_s, f_s) / ks + m_t * m_t / kt + dot(m_b, m_b) / kb)
    sigma = -f_n / area + math.sqrt(dot(m_b, m_b)) * rb / inertia
    tau = math.sqrt(dot(f_s, f_s)) / area + abs(m_t) * rb / polar
    reason = 1.0 if sigma >= p[SIGMA_C] else (2.0 if tau >= p[TAU_C] else 0.0)
    if reason > 0.0:
        # released: the mean of the energy held at the start and at the end of the step (the
        # trapezoidal work that the integrator's kinetic energy sees for a force dropping to zero)
        held = 0.5 * (h[1] * h[1] / kn + (h[2] * h[2] + h[3] * h[3] + h[4] * h[4]) / ks + h[5] * h[5] / kt
                      + (h[6] * h[6] + h[7] * h[7] + h[8] * h[8]) / kb)
        return z, z, 0.0, 0.0, 0.5 * (held + stored), (-reason, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), False
    # dashpots (not part of the stored springs)
    force = (f_s[0] - f_n * n[0], f_s[1] - f_n * n[1], f_s[2] - f_n * n[2])
    couple = (m_b[0] + m_t * n[0], m_b[1] + m_t * n[1], m_b[2] + m_t * n[2])
    viscous = 0.0
    beta = p[BETA]
    if beta > 0.0:
        m = g.mass
        rot = 0.4 * m * min(ri, rj) ** 2
        v = g.rel_velocity
        w = g.rel_angular_velocity
        cn, cs = 2.0 * beta * math.sqrt(m * kn), 2.0 * beta * math.sqrt(m * ks)
        cb, ct = 2.0 * beta * math.sqrt(rot * kb), 2.0 * beta * math.sqrt(rot * kt)
        vn, wn = dot(v, n), dot(w, n)
        vs = tangential_part(v, n)
        ws = tangential_part(w, n)
        force = (force[0] + cn * vn * n[0] + cs * vs[0], force[1] + cn * vn * n[1] + cs * vs[1],
                 force[2] + cn * vn * n[2] + cs * vs[2])
        couple = (couple[0] + ct * wn * n[0] + cb * ws[0], couple[1] + ct * wn * n[1] + cb * ws[1],
                  couple[2] + ct * wn * n[2] + cb * ws[2])
        viscous = (cn * vn * vn + cs * dot(vs, vs) + ct * wn * wn + cb * dot(ws, ws)) * dt
    return force, couple, stored, viscous, 0.0, (h[0], f_n, f_s[0], f_s[1], f_s[2], m_t, m_b[0], m_b[1],
                                                 m_b[2]), True


@jit
def with_contact(bond, contact):
    """The bond and the contact model acting in parallel: sums of the two laws' outputs
    (``bond`` from :func:`bond_part`, ``contact`` from the contact law), the dissipation as
    ``(contact, viscous_bond, bond_breakage)`` and the history as the bond's then the contact's."""
    fb, mb, eb, vb, released, hb, bonded = bond
    fc, mc, ec, dc, touching, hc = contact
    force = (fb[0] + fc[0], fb[1] + fc[1], fb[2] + fc[2])
    couple = (mb[0] + mc[0], mb[1] + mc[1], mb[2] + mc[2])
    return force, couple, eb + ec, (dc, vb, released), bonded or touching, hb + hc


#: the law module of a parallel bond with the contact law of ``{contact}`` (``str.format`` fields)
LAW_TEMPLATE = """# Generated by contactlab (contactlab.laws.parallel_bond.LAW_TEMPLATE) for {contact}; do not edit.
from contactlab._jit import jit
from contactlab.laws.parallel_bond import (BOND_COLUMNS, BOND_FIELD, BOND_HISTORY, BOND_REASONS, DISSIPATION_TERMS,
                                           bond_part, with_contact)
from {contact} import HISTORY_SIZE as CONTACT_HISTORY
from {contact} import law as contact_law

INTERACTION_RANGE = {interaction_range!r}
HISTORY_SIZE = BOND_HISTORY + CONTACT_HISTORY
CACHEABLE = {cacheable!r}


@jit
def law(g, p, h, dt):
    \"\"\"Bond plus contact; returns ``(force on i, couple on i, stored, (contact, viscous_bond,
    bond_breakage), active, new h)``.\"\"\"
    return with_contact(bond_part(g, p, h[:BOND_HISTORY], dt),
                        contact_law(g, p[BOND_COLUMNS:], h[BOND_HISTORY:], dt))
"""


@lru_cache(maxsize=None)
def law_module_for(contact_module: str) -> str:
    """The name of the generated law module of a parallel bond whose contact is the law of the module
    ``contact_module`` (written once into the kernel cache, see :data:`LAW_TEMPLATE`)."""
    module = importlib.import_module(contact_module)
    cacheable = bool(getattr(module, "CACHEABLE", True))
    source = LAW_TEMPLATE.format(contact=contact_module, interaction_range=float(getattr(module, "INTERACTION_RANGE", 0.0)),
                                 cacheable=cacheable)
    tag = re.sub(r"[^0-9A-Za-z]+", "_", contact_module.rsplit(".", 1)[-1])[-40:]
    name = generated_name(f"_contactlab_law_parallel_bond_{tag}", source, module_source_hash(contact_module))
    write_module(cache_dir() if cacheable else session_dir(), name, source)
    return name


class ParallelBond(ContactModel):
    """Parallel bonds (Potyondy and Cundall 2004) in parallel with a frictional contact model.

    Parameters
    ----------
    normal_stiffness, shear_stiffness : float
        Bond stiffness per unit area k_n, k_s, N/m^3 (> 0).
    tensile_strength, shear_strength : float
        Bond strengths sigma_c, tau_c, Pa (> 0).
    radius_multiplier : float
        Bond radius over the smaller sphere radius, lambda (> 0); default 1.
    damping : float
        Viscous damping of the bond, as a fraction of critical (>= 0); default 0.
    contact : ContactModel
        The frictional contact model, active whenever the spheres overlap (bonded or not): a
        model without bonds whose law books one dissipation total (LinearSpringDashpot,
        HertzMindlin, SphereSphereContact, ...).

    Example
    -------
    >>> import contactlab as cl
    >>> model = cl.models.ParallelBond(normal_stiffness=1e12, shear_stiffness=4e11, tensile_strength=1e6,
    ...                                shear_strength=1e6,
    ...                                contact=cl.models.LinearSpringDashpot(stiffness=1e4, restitution=0.5,
    ...                                                                      friction=0.5))
    >>> model.radius_multiplier
    1.0
    """

    name = "ParallelBond"
    #: the module that declares the bond's constants (``BOND_FIELD``, ``BOND_REASONS``,
    #: ``DISSIPATION_TERMS``); each instance's ``law_module`` is the generated module of its contact
    law_module = "contactlab.laws.parallel_bond"
    parameters = (
        Parameter("normal_stiffness", "N/m^3", "bond normal stiffness per area", None, 0.0, low_inclusive=False),
        Parameter("shear_stiffness", "N/m^3", "bond shear stiffness per area", None, 0.0, low_inclusive=False),
        Parameter("tensile_strength", "Pa", "bond tensile strength", None, 0.0, low_inclusive=False),
        Parameter("shear_strength", "Pa", "bond shear strength", None, 0.0, low_inclusive=False),
        Parameter("radius_multiplier", "-", "bond radius / smaller sphere radius", 1.0, 0.0, low_inclusive=False),
        Parameter("damping", "-", "bond damping, fraction of critical", 0.0, 0.0),
    )
    construction_keys = ("contact",)
    required_construction_keys = ("contact",)
    def __init__(self, normal_stiffness, shear_stiffness, tensile_strength, shear_strength, contact,
                 radius_multiplier=1.0, damping=0.0, **unknown):
        super().__init__(normal_stiffness=normal_stiffness, shear_stiffness=shear_stiffness,
                         tensile_strength=tensile_strength, shear_strength=shear_strength,
                         radius_multiplier=radius_multiplier, damping=damping, **unknown)
        if not isinstance(contact, ContactModel) or contact.has_bonds or contact.dissipation_terms:
            raise InputError(f"ParallelBond: contact must be a contact model without bonds whose law books one "
                             f"dissipation total, e.g. cl.models.LinearSpringDashpot(...) or "
                             f"cl.models.HertzMindlin(...), got {contact!r}")
        self.contact = contact
        self.law_module = law_module_for(contact.law_module)
        self.history_fields = BOND_FIELDS + contact.history_fields
        self.pair_fields = ("normal_stiffness", "shear_stiffness", "tensile_strength", "shear_strength",
                            "radius_multiplier", "damping") + tuple(contact.pair_fields)
        self.default_dt_fraction = contact.default_dt_fraction

    @classmethod
    def examples(cls) -> dict:
        """Over the linear spring-dashpot; bond normal stiffness k_n A ~ 30 x the contact's, strengths
        of a weak cement (1 MPa)."""
        from_lsd = LinearSpringDashpot.examples()["linear_spring_dashpot"]
        return {"parallel_bond": cls(normal_stiffness=2e10, shear_stiffness=8e9, tensile_strength=1e6,
                                     shear_strength=1e6, contact=from_lsd)}

    def unused_history(self) -> tuple[str, ...]:
        """The contact model's unused fields (the bond's are always used): the generated law hands
        the contact law its part of the history as it came."""
        return self.contact.unused_history()

    def reference_law(self, geometry: dict, params, history, dt):
        """The NumPy twin: the bond's, in parallel with the contact model's own twin."""
        return reference_law(geometry, params, history, dt, self.contact.reference_law)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"ParallelBond({args}, contact={self.contact!r})"

    def to_dict(self) -> dict:
        return {**super().to_dict(), "contact": self.contact.to_dict()}

    def pair_table(self, materials):
        inner = self.contact.pair_table(materials)
        m = len(materials)
        bond = np.broadcast_to(np.array([self.normal_stiffness, self.shear_stiffness, self.tensile_strength,
                                         self.shear_strength, self.radius_multiplier, self.damping]),
                               (m, m, BOND_COLUMNS))
        return np.concatenate([bond, inner], axis=2)

    def bond_properties(self, radius_i, radius_j) -> dict[str, float]:
        """Bond radius, area, moments and stiffnesses for spheres of these radii (SI units)."""
        rb = self.radius_multiplier * min(radius_i, radius_j)
        area = math.pi * rb * rb
        inertia = 0.25 * area * rb * rb
        return dict(radius=rb, A=area, I=inertia, J=2 * inertia, k_n=self.normal_stiffness * area,
                    k_s=self.shear_stiffness * area, k_bend=self.normal_stiffness * inertia,
                    k_twist=self.shear_stiffness * 2 * inertia)

    def contact_springs(self, case: PairCase) -> ContactSprings:
        """The frictional contact's springs, plus the bond's where it holds (``case.history``'s
        bond state > 0; a contact about to form, ``history=None``, counts as bonded): normal
        ``k_n A``, shear ``k_s A``, bending ``k_n I``, twisting ``k_s J``, each with its dashpot,
        ``damping`` times critical on the effective mass (rotations: ``0.4 m* min(r)^2``)."""
        contact = springs_of(self.contact, PairCase(case.material_i, case.material_j, case.radius_i,
                                                          case.radius_j, case.mass_i, case.mass_j, case.inertia_i,
                                                          case.inertia_j, case.overlap))
        bonded = case.history is None or float(np.asarray(case.history).reshape(-1)[0]) > 0.0
        if not (bonded and math.isfinite(case.radius_i) and math.isfinite(case.radius_j)):
            return contact  # walls are never bonded
        b = self.bond_properties(case.radius_i, case.radius_j)
        m = float(case.mass)
        rot = 0.4 * m * min(case.radius_i, case.radius_j) ** 2
        z = 2.0 * self.damping
        bond = ContactSprings(b["k_n"], b["k_s"], b["k_bend"], b["k_twist"], z * math.sqrt(b["k_n"] * m),
                                z * math.sqrt(b["k_s"] * m), z * math.sqrt(b["k_bend"] * rot),
                                z * math.sqrt(b["k_twist"] * rot))
        return contact + bond

    def stability_limit(self, case: PairCase) -> float:
        """The bond's and the contact's springs act in parallel, so their squared frequencies add:
        ``1/dt^2 = 1/dt_bond^2 + 1/dt_contact^2`` (each the smallest over its senses)."""
        dt_contact = self.contact.stability_limit(case)
        if not (math.isfinite(case.radius_i) and math.isfinite(case.radius_j)):
            return dt_contact  # walls are never bonded
        dt = math.inf
        b = self.bond_properties(case.radius_i, case.radius_j)
        m, mt = case.mass, case.tangential_mass
        rot = 0.4 * m * min(case.radius_i, case.radius_j) ** 2
        inertia = case.rotational_inertia
        zeta = self.damping
        dt = min(dt, verlet_limit(math.sqrt(b["k_n"] / m), zeta))
        dt = min(dt, verlet_limit(math.sqrt(b["k_s"] / mt), zeta * math.sqrt(m / mt)))
        for k in (b["k_bend"], b["k_twist"]):
            if math.isfinite(inertia):
                dt = min(dt, verlet_limit(math.sqrt(k / inertia), zeta * math.sqrt(min(rot / inertia, 1.0))))
        return 1.0 / math.sqrt(dt**-2 + dt_contact**-2)

    def initial_bond_history(self, pairs: dict, params: np.ndarray) -> np.ndarray:
        h = np.zeros((len(pairs["overlap"]), self.history_size))
        h[:, 0] = 1.0
        return h

    # ------------------------------------------------------------------ for the validation battery
    def validation_properties(self) -> dict:
        """What the validation battery may allow: those of the frictional ``contact`` model (its
        ``validation_properties``, a method or a dict; none declared: the defaults), which acts
        alone between unbonded spheres."""
        own = getattr(self.contact, "validation_properties", None)
        return {} if own is None else dict(own() if callable(own) else own)

    def closed_form_impact(self, material, radius, speed) -> dict:
        """An unbonded pair is a contact of the frictional model: the ``contact`` model's own
        ``closed_form_impact`` (none declared: no values)."""
        own = getattr(self.contact, "closed_form_impact", None)
        out = dict(own(material, radius, speed)) if callable(own) else {}
        out["source"] = "unbonded: the contact model's closed form; " + out.get("source", "")
        return out


def reference_law(geometry: dict, params, hist, dt, contact_reference):
    """Plain NumPy twin of the combined law (bond plus ``contact_reference``, the contact model's twin)."""
    g = geometry_arrays(geometry)
    p = np.asarray(params, dtype=float)
    h = np.array(hist, dtype=float)
    hb = h[:BOND_HISTORY].copy()
    fc, mc, ec, dc, touching, hc = contact_reference(geometry, p[BOND_COLUMNS:], h[BOND_HISTORY:], dt)
    force, couple, stored, viscous, released = np.zeros(3), np.zeros(3), 0.0, 0.0, 0.0
    bonded = hb[0] > 0
    if bonded:
        n = g["normal"]
        ri = g["radius_i"]
        rj = g["radius_j"] if np.isfinite(g["radius_j"]) else ri
        rb = p[LAMBDA] * min(ri, rj)
        area = np.pi * rb**2
        inertia = np.pi * rb**4 / 4
        kn, ks, kb, kt = p[KN] * area, p[KS] * area, p[KN] * inertia, p[KS] * 2 * inertia

        def tang(v):
            return v - (v @ n) * n

        f_n = hb[1] - kn * (g["rel_displacement"] @ n)
        twist = g["pair_rotation"] @ n
        f_s = follow_frame_reference(hb[2:5], n, twist) + ks * tang(g["rel_displacement"])
        m_t = hb[5] + kt * (g["rel_rotation"] @ n)
        m_b = follow_frame_reference(hb[6:9], n, twist) + kb * tang(g["rel_rotation"])
        energy = 0.5 * (f_n**2 / kn + f_s @ f_s / ks + m_t**2 / kt + m_b @ m_b / kb)
        sigma = -f_n / area + np.linalg.norm(m_b) * rb / inertia
        tau = np.linalg.norm(f_s) / area + abs(m_t) * rb / (2 * inertia)
        if sigma >= p[SIGMA_C] or tau >= p[TAU_C]:
            held = 0.5 * (hb[1] ** 2 / kn + hb[2:5] @ hb[2:5] / ks + hb[5] ** 2 / kt + hb[6:9] @ hb[6:9] / kb)
            hb = np.zeros(BOND_HISTORY)
            hb[0] = -1.0 if sigma >= p[SIGMA_C] else -2.0
            released, bonded = 0.5 * (held + energy), False
        else:
            stored = energy
            force = f_s - f_n * n
            couple = m_b + m_t * n
            if p[BETA] > 0:
                m = g["mass"]
                rot = 0.4 * m * min(ri, rj) ** 2
                v, w = g["rel_velocity"], g["rel_angular_velocity"]
                c = [2 * p[BETA] * np.sqrt(x) for x in (m * kn, m * ks, rot * kb, rot * kt)]
                force = force + c[0] * (v @ n) * n + c[1] * tang(v)
                couple = couple + c[3] * (w @ n) * n + c[2] * tang(w)
                viscous = (c[0] * (v @ n) ** 2 + c[1] * tang(v) @ tang(v) + c[3] * (w @ n) ** 2
                           + c[2] * tang(w) @ tang(w)) * dt
            hb = np.concatenate([[hb[0], f_n], f_s, [m_t], m_b])
    return (force + fc, couple + mc, stored + ec, (dc, viscous, released), bool(bonded or touching),
            np.concatenate([hb, hc]))
