"""Particle streams: spheres inserted during a run (inlets) and removed (outlets), with stable ids.

``sim.add_inlet(region, material, rate=..., radius=... | distribution=...)`` and
``sim.add_outlet(region)`` (see :class:`contactlab.Simulation`); the modules:
:mod:`~contactlab.streams.inlet` (rates, sizes, the backlog), :mod:`~contactlab.streams.outlet`
(removal and its record), :mod:`~contactlab.packing.placement` (where new spheres go),
:mod:`~contactlab.streams.resize` (the model, state and contact table with other bodies) and
:mod:`~contactlab.streams.exchange` (when and how it happens, and the energy balance).  See
``docs/particle-streams.md``.
"""
from .inlet import Inlet
from .outlet import Outlet

__all__ = ["Inlet", "Outlet"]
