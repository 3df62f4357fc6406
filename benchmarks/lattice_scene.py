"""The "lattice" benchmark scene: a dense simple-cubic lattice of glass beads in a box, under gravity.

``n_side**3`` beads (r = 1 mm, the glass of :mod:`settle_scene`) on a simple-cubic lattice whose
spacing makes every pair of neighbours overlap by 0.1 % of a diameter (``2 r (1 - 0.001)``), inside
a box of five walls (floor z = 0, side walls x = 0, x = L, y = 0, y = L) placed so that the outer
beads overlap them by the same amount, under gravity.  Contact model: Hertz-Mindlin, restitution
0.5, friction 0.5 (as ``settle_scene``); time step 1e-5 s.  Every bead touches its six lattice
neighbours (or a wall) from the first step: about three contacts per bead, the densest regular
packing a benchmark can start from without settling anything, and the same input for any N.
"""
from __future__ import annotations

import math

import numpy as np

from settle_scene import DENSITY, FRICTION, GRAVITY, POISSON, RADIUS, RESTITUTION, YOUNG

#: relative overlap of neighbouring beads (of a diameter) and of the outer beads with the walls
OVERLAP = 1e-3
#: time step, s
DT = 1e-5
SPACING = 2.0 * RADIUS * (1.0 - OVERLAP)


def n_side_for(n: int) -> int:
    """Beads along an edge for about ``n`` beads in all (``round(n ** (1/3))``)."""
    return max(2, int(round(n ** (1.0 / 3.0))))


def layout(n: int) -> dict:
    """Positions (N, 3), radii (N,), the box side ``L`` and the lattice height, N = ``n_side_for(n)**3``.

    The beads are stored x fastest, then y, then z (lattice order)."""
    k = n_side_for(n)
    first = RADIUS * (1.0 - 2.0 * OVERLAP)          # the outer beads overlap the walls by 2 r OVERLAP
    c = first + SPACING * np.arange(k)
    z, y, x = np.meshgrid(c, c, c, indexing="ij")
    pos = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
    side = float(c[-1] + first)
    return dict(positions=pos, radii=np.full(len(pos), RADIUS), side=side, height=float(c[-1] + RADIUS))


def walls(side: float):
    """(point, normal) of the five walls."""
    return [((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
            ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)), ((side, 0.0, 0.0), (-1.0, 0.0, 0.0)),
            ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((0.0, side, 0.0), (0.0, -1.0, 0.0))]


def build_scene(n: int, positions=None):
    """The contactlab Scene and model (``positions``: other bead centres in the same box)."""
    import contactlab as cl

    glass = cl.Material(density=DENSITY, young=YOUNG, poisson=POISSON, name="glass")
    lay = layout(n)
    pos = lay["positions"] if positions is None else positions
    scene = cl.Scene(gravity=GRAVITY)
    scene.add_spheres(pos, np.full(len(pos), RADIUS), glass)
    for point, normal in walls(lay["side"]):
        scene.add_wall(point=point, normal=normal, material=glass)
    model = cl.models.HertzMindlin(restitution=RESTITUTION, friction=FRICTION)
    return scene, model, lay


_ = math
