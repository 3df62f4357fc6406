"""Periodic boundaries of a scene: ``Scene.set_periodic`` and the cell a finalized scene starts with.

The cell itself (columns, minimum image, wrap) is :mod:`contactlab.geometry.periodic`; how it moves
during a run, :mod:`contactlab.engine.cell_motion`; what a user changes during a run,
:class:`contactlab.cell.PeriodicCell`.
"""
from __future__ import annotations

import numpy as np

from .._arguments import as_vec3
from ..errors import InputError
from ..geometry.periodic import new_cell
from ..geometry.shapes import KIND_NAMES, SPHERE
from ..geometry.sphere_cylinder import WALL_PLANE
from .plane import as_vec2

__all__ = ["set_periodic", "periodic_axes", "cell_for"]

_AXES = "xyz"


def periodic_axes(axes, dimension: int = 3) -> np.ndarray:
    """(3,) bool from a string of distinct axis letters, e.g. ``"xz"``."""
    allowed = _AXES[:dimension]
    if not isinstance(axes, str) or not axes or any(a not in allowed for a in axes) or len(set(axes)) != len(axes):
        raise InputError(f"axes must be a string of distinct letters among {allowed!r} (e.g. 'xz': periodic in x and "
                         f"z), got {axes!r}")
    return np.array([a in axes for a in _AXES])


def set_periodic(self, lower, upper, axes: str = "xyz") -> None:
    """Make the scene periodic along ``axes`` in the box ``lower <= x < upper`` (m).

    A body leaving the box through a periodic face comes back through the opposite one with its
    velocity, and bodies meet across the faces (the minimum image convention, as LAMMPS's
    ``boundary p``, YADE's ``O.periodic`` and MercuryDPM's periodic boundaries).  Their contacts
    keep their history across the faces; ``sim.positions`` are wrapped into the box at each
    neighbour-list build (a body may stand out of it by up to a quarter of the skin between two
    builds), ``sim.cell.images`` counts the crossings and ``sim.cell.unwrapped_positions()`` gives
    the unwrapped ones; VTK files show the wrapped positions.

    Parameters
    ----------
    lower, upper : 3 floats, m (2 in a 2-D scene)
        Corners of the cell; only the periodic axes' values are used (a non-periodic axis is open
        or bounded by walls).
    axes : str
        The periodic axes: any of ``"x"``, ``"y"``, ``"z"`` (``"xy"`` at most in a 2-D scene),
        default ``"xyz"``.

    Rules: bodies must be spheres (disks in 2-D); each periodic length must exceed twice the
    longest interaction, ``2 (2 r_max + skin)`` (checked when the simulation is built); plane
    walls may stand only across non-periodic axes (their normal has no periodic component);
    cylinder walls and meshes are not repeated in the images (they act on the wrapped positions).
    During a run the cell can deform (strain rates, Lees-Edwards simple shear, a stress servo):
    :class:`contactlab.cell.PeriodicCell` (``sim.cell``) and ``docs/periodic.md``.

    Example
    -------
    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene(gravity=(0, 0, 0))
    >>> scene.set_periodic(lower=(0, 0, 0), upper=(0.02, 0.02, 0.02), axes="xyz")
    >>> _ = scene.add_sphere(position=(0.0195, 0.01, 0.01), radius=1e-3, material=glass, velocity=(1.0, 0, 0))
    >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
    >>> sim.run(steps=100)             # 1 mm to the right: out through x = 0.02, in through x = 0
    >>> round(float(sim.positions[0, 0]), 6), int(sim.cell.images[0, 0])
    (0.0005, 1)
    """
    if self.dimension == 2:
        lo, hi = as_vec2("lower", lower), as_vec2("upper", upper)
        hi[2] = self.thickness   # the cell's volume is its area times the disks' thickness
    else:
        lo, hi = as_vec3("lower", lower, unit="m"), as_vec3("upper", upper, unit="m")
    periodic = periodic_axes(axes, self.dimension)
    for a in np.flatnonzero(periodic):
        if not hi[a] > lo[a]:
            raise InputError(f"upper must exceed lower along the periodic axis {_AXES[a]}: got lower={lo[a]!r}, "
                             f"upper={hi[a]!r} (m)")
    self._periodic = (lo, hi, periodic)


def cell_for(scene, kind: np.ndarray, wall_kind: np.ndarray, wall_normal: np.ndarray):
    """The cell vector and image counters a finalized periodic scene starts with, or ``(None, None)``;
    refuses what a periodic scene cannot hold (see :func:`set_periodic`)."""
    spec = getattr(scene, "_periodic", None)
    if spec is None:
        return None, None
    lo, hi, periodic = spec
    clumps = getattr(scene, "_clumps", None)
    if clumps is not None and clumps.count:
        raise InputError(f"a periodic scene cannot hold clumps yet (this one has {clumps.count}): the cell wraps "
                         f"each member sphere on its own, not the clump as one body; use walls for clumps")
    if (kind != SPHERE).any():
        k = int(np.flatnonzero(kind != SPHERE)[0])
        raise InputError(f"a periodic scene holds spheres (disks in 2-D) only; body {k} is a "
                         f"{KIND_NAMES[int(kind[k])]} (periodic images of other shapes are not implemented)")
    for w in range(len(wall_kind)):
        if wall_kind[w] == WALL_PLANE and np.abs(wall_normal[w][periodic]).max(initial=0.0) > 1e-12:
            raise InputError(f"plane wall {w} (normal {tuple(float(x) for x in wall_normal[w])}) cuts the periodic "
                             f"axes {''.join(_AXES[a] for a in np.flatnonzero(periodic))}: a plane wall may only "
                             f"bound a non-periodic axis")
    return new_cell(lo, hi, periodic), np.zeros((len(kind), 3), dtype=np.int64)
