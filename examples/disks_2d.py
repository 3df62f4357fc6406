"""A 2-D pile of disks settling in a box (``Scene(dimension=2)``): area fraction and energy balance.

Run: ``python examples/disks_2d.py``.  The disks are glass cylinders 2 mm thick; the laws act
between them as between spheres of the same radii (see docs/two_d.md).
"""
from __future__ import annotations

import numpy as np

import contactlab as cl


def settle_disks(columns: int = 20, rows: int = 15, radius: float = 1e-3, seed: int = 0, duration: float = 0.4,
                 progress: bool = False):
    """Drop ``columns x rows`` disks (radii 0.8-1.0 x ``radius``) into a box of line walls and let
    them settle; returns the simulation and the area fraction of the bottom half of the pile.
    ``progress=True``: contactlab's progress bar on stderr while they settle."""
    rng = np.random.default_rng(seed)
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    scene = cl.Scene(dimension=2, gravity=(0.0, -9.81), thickness=2e-3)
    pitch = 2.2 * radius
    width = columns * pitch
    x, y = np.meshgrid(np.arange(columns), np.arange(rows))
    positions = np.column_stack([x.ravel(), y.ravel()]) * pitch + 1.1 * radius
    positions[:, 0] += rng.uniform(-0.05, 0.05, len(positions)) * radius
    radii = rng.uniform(0.8, 1.0, len(positions)) * radius
    scene.add_disks(positions, radii, glass, velocities=(0.0, -0.1))
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=glass)     # floor
    scene.add_wall(point=(0.0, 0.0), normal=(1.0, 0.0), material=glass)     # left
    scene.add_wall(point=(width, 0.0), normal=(-1.0, 0.0), material=glass)  # right
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.4), local_damping=0.1)
    sim.run(duration=duration, progress=progress)
    top = float((sim.positions[:, 1] + radii).max())
    low = sim.positions[:, 1] < 0.5 * top
    area = float(np.sum(np.pi * radii[low] ** 2))
    return sim, area / (width * 0.5 * top)


if __name__ == "__main__":
    sim, phi = settle_disks(progress=True)
    e = sim.energy()
    print(f"{sim.n_spheres} disks, {sim.n_contacts()} contacts after {sim.time:.2f} s")
    print(f"area fraction of the lower half: {phi:.3f}")
    print(f"kinetic energy left: {e['kinetic']:.3g} J; energy balance error {e['balance_error']:.3g} J "
          f"of {e['dissipated']:.3g} J dissipated")
