"""Particle DDA: discontinuous deformation analysis of 2-D disks and ellipses (implicit,
matrix-free PCG), see :class:`DDA` and docs/dda.md."""
from .solver import DDA

__all__ = ["DDA"]
