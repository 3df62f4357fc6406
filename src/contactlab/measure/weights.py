"""How much of each body a region holds: the weights of the regional averages, and the packing fraction.

Every regional measurement (:mod:`~contactlab.measure.love_weber`,
:mod:`~contactlab.measure.contact_network`)
sums per-body quantities with a weight ``w_k`` in [0, 1]:

* ``weighting="volume"`` (default): ``w_k`` is the fraction of body ``k``'s volume inside the
  region, exact for spheres and disks (:func:`~contactlab.measure.volumes.fraction_inside`); a
  body cut by the region's boundary counts in part, so that a uniform field is measured without
  the bias of counting whole bodies on one side of the boundary.  Bodies of other shapes count
  by their centre (1 inside, 0 outside).
* ``weighting="centre"``: 1 for a body whose centre is inside (the region's signed function
  ``<= 0``), else 0.

For :func:`~contactlab.measure.volumes.domain` every body has weight 1.

The packing fraction of a region is ``sum_k V_k f_k / V_region`` with ``f_k`` the exact fraction
of sphere ``k`` inside (areas in 2-D: disks over the region's section by the plane z = 0).
"""
from __future__ import annotations

import numpy as np

from .._arguments import checked_call, did_you_mean
from ..errors import InputError
from .snapshot import Snapshot, snapshot
from .volumes import _DOMAIN, _section_2d, as_measure_region, fraction_inside, region_volume

__all__ = ["WEIGHTINGS", "particle_weights", "packing_fraction", "volume_of"]

#: the ways a region weighs the bodies it cuts
WEIGHTINGS = ("volume", "centre")


def _checked_weighting(weighting) -> str:
    if weighting not in WEIGHTINGS:
        raise InputError(f"weighting must be one of {', '.join(map(repr, WEIGHTINGS))}, got {weighting!r}"
                         f"{did_you_mean(weighting, WEIGHTINGS)}")
    return weighting


def particle_weights(snap: Snapshot, region, weighting: str = "volume") -> np.ndarray:
    """Weights (N,) in [0, 1] of the bodies of ``snap`` in ``region`` (see the module docstring)."""
    _checked_weighting(weighting)
    reg = as_measure_region(region)
    n = snap.n_bodies
    if reg.kind == _DOMAIN:
        return np.ones(n)
    x = snap.positions
    if snap.dimension == 2:
        _section_2d(reg)   # checks that the region cuts the plane
    inside_centre = (reg.region(x) <= 0.0).astype(np.float64)
    if weighting == "centre":
        return inside_centre
    w = inside_centre
    if snap.round.any():
        rows = np.flatnonzero(snap.round)
        w[rows] = fraction_inside(reg, x[rows], snap.radii[rows], dimension=snap.dimension)
    return w


def volume_of(snap: Snapshot, region) -> float:
    """The region's volume (m^3; in 2-D its section's area times the thickness); the whole
    simulation without a given volume in a periodic scene: the cell's."""
    if snap.cell_volume is not None and region.kind == _DOMAIN and region.volume is None:
        return snap.cell_volume
    return region_volume(region, dimension=snap.dimension, thickness=snap.thickness, positions=snap.positions,
                         radii=snap.radii)


@checked_call
def packing_fraction(sim, region=None) -> float:
    """Solid fraction of a region: the volume of the bodies inside it over its volume (area
    fraction in a 2-D scene), with the exact part of every sphere (disk) cut by its boundary.

    Parameters
    ----------
    sim : Simulation
    region : box, sphere or cylinder of :mod:`contactlab.packing.regions`, or
        :func:`~contactlab.measure.domain` (``None``: the whole simulation, divided by the volume
        given to ``domain`` or else by the bodies' bounding box)

    Bodies other than spheres and disks are exact in :func:`~contactlab.measure.domain` only
    (their volume is their mass over their density); a bounded region with such bodies raises an
    :class:`~contactlab.errors.InputError`.

    Example
    -------
    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene(gravity=(0, 0, 0))
    >>> _ = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
    >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-6)
    >>> upper_half = cl.packing.regions.box(lower=(-1e-3, -1e-3, 0), upper=(1e-3, 1e-3, 1e-3))
    >>> round(cl.measure.packing_fraction(sim, upper_half), 12)      # half a sphere in a 2 x 2 x 1 mm box
    0.523598775598
    """
    snap = snapshot(sim)
    reg = as_measure_region(region)
    if reg.kind != _DOMAIN and not snap.round.all():
        k = int(np.flatnonzero(~snap.round)[0])
        raise InputError(f"the packing fraction of a bounded region is exact for spheres and disks only; body {k} is "
                         f"not one (use cl.measure.domain(volume=...) for the whole simulation)")
    w = particle_weights(snap, reg, "volume")
    return float(np.dot(w, snap.volumes) / volume_of(snap, reg))
