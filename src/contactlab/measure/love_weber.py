"""The Love-Weber stress of a region: contacts and kinetic part.

Sign convention: **compression positive** (soil mechanics), ``sigma = -sigma_Cauchy``; a sample
under pressure ``p`` has ``sigma = p I`` and the mean stress ``tr(sigma) / 3 > 0``.  (LAMMPS and
MercuryDPM report the Cauchy stress, tension positive: the negative of this.)

For a region of volume ``V`` holding bodies ``p`` with weights ``w_p``
(:mod:`~contactlab.measure.weights`: the exact fraction of each sphere inside, by default)::

    sigma_ij = -(1/V) sum_p w_p sum_{c of p} (x_c - x_p)_i f_j  +  (1/V) sum_p w_p m_p v'_i v'_j

* The contact part is written around the bodies' centres with the **contact point** ``x_c`` and
  the force ``f`` on body ``p`` at contact ``c`` (Christoffersen, Mehrabadi & Nemat-Nasser 1981;
  Bagi 1996).  A contact between two bodies of weight 1 contributes
  ``-(x_j - x_i) (x) f_i``, the branch-vector form; a contact cut by the region's boundary
  contributes each body's half with that body's weight; a contact with a plane wall or a mesh
  (which has no centre) contributes its body's half, ``-(x_c - x_p) (x) f``.  Gravity and other
  body forces act at the centres and contribute nothing.  At equilibrium, with no couples, the
  tensor is symmetric; it is returned as summed (``sigma_ij`` with ``i`` the lever's component).
* The kinetic part uses the velocity fluctuation ``v' = v - <v>`` about the region's
  mass-weighted mean velocity ``<v> = sum w m v / sum w m`` (``kinetic="fluctuation"``, the
  default; a sheared sample's mean flow then carries no pressure), the full velocity
  (``kinetic="full"``) or nothing (``kinetic="none"``).

For the whole simulation (:func:`~contactlab.measure.domain`) every body has weight 1 and the
sum of ``(x_c - x_p) (x) f`` over every contact, walls included, equals
``sum_walls x_c (x) f - sum_p x_p (x) (F_p - m_p g)`` (``F_p`` the body's total force): the tests
check this identity with the engine's own force sums.  In a 2-D scene ``V`` is the area times the
thickness (Pa) and the z row and column are zero.
"""
from __future__ import annotations

import numpy as np

from .._arguments import checked_call, did_you_mean
from .._jit import kernel
from ..errors import InputError
from .snapshot import Snapshot, snapshot
from .volumes import as_measure_region
from .weights import particle_weights, volume_of

__all__ = ["KINETIC", "stress", "stress_parts", "mean_stress", "stress_of"]

#: what the kinetic part is made of (see the module docstring)
KINETIC = ("fluctuation", "full", "none")


@kernel
def _contact_moment(ci, cj, point, force, x, shift, w, out):  # pragma: no cover - compiled
    """``out`` (3, 3) += ``sum_c w_i (x_c - x_i) (x) f_c - w_j (x_c - x_j - s_c) (x) f_c`` (``s_c``:
    ``shift``, where j's image is in a periodic scene; serial: a fixed order of summation, the same
    result at any thread count)."""
    for c in range(ci.shape[0]):
        i = ci[c]
        wi = w[i]
        if wi != 0.0:
            for a in range(3):
                lever = wi * (point[c, a] - x[i, a])
                for b in range(3):
                    out[a, b] += lever * force[c, b]
        j = cj[c]
        if j >= 0:
            wj = w[j]
            if wj != 0.0:
                for a in range(3):
                    lever = wj * (point[c, a] - x[j, a] - shift[c, a])
                    for b in range(3):
                        out[a, b] -= lever * force[c, b]


def _checked_kinetic(kinetic) -> str:
    if kinetic not in KINETIC:
        raise InputError(f"kinetic must be one of {', '.join(map(repr, KINETIC))}, got {kinetic!r}"
                         f"{did_you_mean(kinetic, KINETIC)}")
    return kinetic


def stress_of(snap: Snapshot, region=None, *, weighting: str = "volume", kinetic: str = "fluctuation") -> dict:
    """:func:`stress_parts` of a :class:`~contactlab.measure.snapshot.Snapshot` (no simulation needed)."""
    _checked_kinetic(kinetic)
    reg = as_measure_region(region)
    w = particle_weights(snap, reg, weighting)
    volume = volume_of(snap, reg)
    moment = np.zeros((3, 3))
    shift = snap.contact_shift if snap.contact_shift is not None else np.zeros_like(snap.contact_point)
    _contact_moment(snap.contact_i, snap.contact_j, snap.contact_point, snap.contact_force, snap.positions, shift, w,
                    moment)
    contact = -moment / volume
    mass = w * snap.masses
    total_mass = float(mass.sum())
    if kinetic == "none" or total_mass == 0.0:
        mean_v = np.zeros(3)
        kin = np.zeros((3, 3))
    else:
        mean_v = (mass @ snap.velocities) / total_mass if kinetic == "fluctuation" else np.zeros(3)
        dv = snap.velocities - mean_v
        kin = np.einsum("k,ka,kb->ab", mass, dv, dv) / volume
    return {"total": contact + kin, "contact": contact, "kinetic": kin, "volume": volume, "mean_velocity": mean_v,
            "weight": float(w.sum())}


@checked_call
def stress_parts(sim, region=None, *, weighting: str = "volume", kinetic: str = "fluctuation") -> dict:
    """The Love-Weber stress of a region and its parts (compression positive, Pa).

    Returns a dict: ``total``, ``contact``, ``kinetic`` ((3, 3) arrays, Pa), ``volume`` (m^3, the
    region's), ``mean_velocity`` ((3,), m/s: the velocity the kinetic part is taken about),
    ``weight`` (the sum of the bodies' weights: the number of bodies the region holds).  The
    arguments are those of :func:`stress`.
    """
    return stress_of(snapshot(sim), region, weighting=weighting, kinetic=kinetic)


@checked_call
def stress(sim, region=None, *, weighting: str = "volume", kinetic: str = "fluctuation") -> np.ndarray:
    """The Love-Weber stress tensor (3, 3) of a region, Pa, **compression positive**.

    Parameters
    ----------
    sim : Simulation
    region : box, sphere or cylinder of :mod:`contactlab.packing.regions`, or :func:`~contactlab.measure.domain`
        ``None``: the whole simulation (every body, every contact; divided by the volume given to
        ``domain(volume=...)``, else by the bodies' bounding box).
    weighting : ``"volume"`` (default) or ``"centre"``
        How a body cut by the region's boundary counts (:mod:`~contactlab.measure.weights`).
    kinetic : ``"fluctuation"`` (default), ``"full"`` or ``"none"``
        The kinetic part: about the region's mean velocity, about zero, or left out.

    The formula, the treatment of walls and cut contacts: :mod:`contactlab.measure.love_weber`.

    Example
    -------
    Two spheres pressed together by a linear spring of stiffness ``k`` at overlap ``delta``: the
    only stress is ``sigma_zz = F d / V`` with ``F = k delta`` and ``d`` the distance of the centres.

    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene(gravity=(0, 0, 0))
    >>> r, delta = 1e-3, 1e-5
    >>> _ = scene.add_sphere(position=(0, 0, 0), radius=r, material=glass)
    >>> _ = scene.add_sphere(position=(0, 0, 2 * r - delta), radius=r, material=glass)
    >>> sim = cl.Simulation(scene, model=cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.5, friction=0.5))
    >>> box = cl.packing.regions.box(lower=(-2e-3, -2e-3, -2e-3), upper=(2e-3, 2e-3, 4e-3))
    >>> s = cl.measure.stress(sim, box)
    >>> round(float(s[2, 2]) / (1e3 * delta * (2 * r - delta) / (4e-3 * 4e-3 * 6e-3)), 12)
    1.0
    """
    return stress_parts(sim, region, weighting=weighting, kinetic=kinetic)["total"]


@checked_call
def mean_stress(sigma, *, dimension: int = 3) -> float:
    """The mean stress (pressure) of a stress tensor: ``tr(sigma) / 3``, or in a 2-D scene the
    in-plane mean ``(sigma_xx + sigma_yy) / 2``; positive in compression with :func:`stress`."""
    s = np.asarray(sigma, dtype=np.float64)
    if s.shape != (3, 3):
        raise InputError(f"sigma must be a (3, 3) stress tensor, got shape {s.shape}")
    if dimension not in (2, 3):
        raise InputError(f"dimension must be 2 or 3, got {dimension!r}")
    return float(np.trace(s[:dimension, :dimension]) / dimension)
