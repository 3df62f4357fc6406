"""Measurements of a granular sample: stress, packing fraction, coordination, fabric, coarse-grained fields.

Regions are those of :mod:`contactlab.packing.regions` with an exact volume -- ``box`` (axis
aligned), ``sphere`` and ``cylinder`` (any axis) -- or :func:`domain` (the whole simulation);
``None`` means :func:`domain`.  Bodies cut by a region's boundary count with the exact fraction of
their volume inside it (spheres and disks), see :mod:`~contactlab.measure.weights`.

* :func:`packing_fraction` -- solid fraction, exact sphere-box, sphere-sphere and sphere-cylinder
  volumes (:mod:`~contactlab.measure.volumes`; areas of disks in 2-D).
* :func:`stress`, :func:`stress_parts`, :func:`mean_stress` -- the Love-Weber stress of a region,
  contacts (walls included) and kinetic part, **compression positive**
  (:mod:`~contactlab.measure.love_weber`).
* :func:`coordination`, :func:`fabric` -- coordination numbers with and without rattlers, the
  fabric tensor (:mod:`~contactlab.measure.contact_network`).
* :func:`coarse_grain` with :class:`Gaussian` or :class:`Lucy` -- density, volume fraction,
  velocity, kinetic and contact stress on a grid as NumPy arrays, ``.write_vti(path)`` for
  ParaView (:mod:`~contactlab.measure.coarse_grain`); :class:`CoarseGrainReporter` writes a
  series during a run.
* ``sim.record("stress", "packing_fraction", ..., region=box)`` records them as a sensor
  (:mod:`~contactlab.measure.recording`).

Example
-------
>>> import contactlab as cl
>>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
>>> scene = cl.Scene(gravity=(0, 0, 0))
>>> _ = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
>>> _ = scene.add_sphere(position=(0, 0, 1.99e-3), radius=1e-3, material=glass)
>>> sim = cl.Simulation(scene, model=cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.5, friction=0.5))
>>> box = cl.packing.regions.box(lower=(-1e-3, -1e-3, -1e-3), upper=(1e-3, 1e-3, 2.99e-3))   # 15.96 mm^3
>>> # two spheres of 4.18879 mm^3 each, entirely inside; one contact shared by two spheres
>>> round(cl.measure.packing_fraction(sim, box), 6), cl.measure.coordination(sim, box)["coordination"]
(0.524911, 1.0)
"""
from .coarse_grain import CoarseGrainedFields, coarse_grain
from .contact_network import coordination, fabric
from .love_weber import mean_stress, stress, stress_parts
from .recording import REGION_QUANTITIES, CoarseGrainReporter
from .smoothing import Gaussian, Lucy
from .snapshot import Snapshot, snapshot
from .volumes import Domain, domain, fraction_inside, region_volume
from .weights import packing_fraction

__all__ = ["packing_fraction", "stress", "stress_parts", "mean_stress", "coordination", "fabric", "coarse_grain",
           "CoarseGrainedFields", "Gaussian", "Lucy", "CoarseGrainReporter", "REGION_QUANTITIES", "domain", "Domain",
           "fraction_inside", "region_volume", "snapshot", "Snapshot"]
