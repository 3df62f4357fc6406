"""The lengths of the fictitious connector between two bodies, shared by the connector-type laws
(Luding, Ice, parallel bond): the radii of the two spheres, a wall counting as the mirror image of
the sphere (as WooDEM's lengths for a wall contact)."""
from __future__ import annotations

import math

from .._jit import jit

__all__ = ["connector_lengths"]


@jit
def connector_lengths(radius_i, radius_j):
    """``(l_i, l_j)`` in m: the radii, with ``l_j = l_i`` for a wall (``radius_j`` infinite)."""
    return radius_i, (radius_j if math.isfinite(radius_j) else radius_i)
