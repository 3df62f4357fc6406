"""Packing tools: put spheres into (or out of) containers of any shape before a dynamic run.

* :mod:`contactlab.packing.regions` -- signed functions (negative inside, m) for spheres, tori,
  boxes, cylinders, half-spaces and their unions, intersections, differences and complements;
  any vectorised callable ``f(points) -> values`` works too.
* :func:`relax_into` -- the level-set static relaxation of spec 004: moves every sphere so that it
  ends inside the region (or outside, ``inside=False``), alternating with pushing overlapping
  pairs apart, and reports convergence with numbers.
* :func:`fill_region` -- scatter spheres in a region and relax them (a ready-made initial packing).
* :func:`spatial_order` -- the permutation that stores spheres along a space-filling (Morton) curve,
  so that neighbours in space are neighbours in memory (faster steps at 1e5 spheres and beyond).

Example
-------
>>> from contactlab.packing import regions, fill_region
>>> ring = regions.torus(centre=(0, 0, 0.02), major_radius=0.05, minor_radius=0.02)
>>> pos, radii = fill_region(ring, bounds=((-0.07, -0.07, 0), (0.07, 0.07, 0.04)), radius=2e-3,
...                          volume_fraction=0.3)
>>> pos.shape[1], bool((ring(pos) + radii <= 1e-3 * radii).all())
(3, True)
"""
from . import regions
from .levelset import RelaxResult, fill_region, levelset_move, measure, relax_into
from .order import morton_codes, spatial_order

__all__ = ["regions", "relax_into", "fill_region", "levelset_move", "measure", "RelaxResult", "spatial_order",
           "morton_codes"]
