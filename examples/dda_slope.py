"""A 2-D slope of disks brought to static equilibrium by particle DDA (``cl.DDA``).

Run: ``python examples/dda_slope.py``.  Equal disks stacked in a hexagonal heap (slopes of 60
degrees) stand on a frictional floor; DDA's static analysis (velocities reset every step) takes
steps of 10 ms, hundreds of times an explicit method's stability limit, until nothing moves.  At
equilibrium the floor carries the weight: its vertical contact forces add up to ``sum m g``.
"""
from __future__ import annotations

import numpy as np

import contactlab as cl


def settle_slope(layers: int = 4, radius: float = 0.01, friction: float = 0.5):
    """Build the heap (``layers`` rows of touching disks, the lowest the widest) and run DDA to
    equilibrium; returns ``(dda, floor_force / weight)``."""
    stone = cl.Material(density=2600.0, young=5e7, poisson=0.25)
    scene = cl.Scene(dimension=2, gravity=(0.0, -9.81), thickness=0.02)
    positions = [(radius * (1.0 + 2.0 * k + row), radius * (1.0 + np.sqrt(3.0) * row))
                 for row in range(layers) for k in range(layers - row)]
    scene.add_disks(positions, radius, stone)
    scene.add_wall(point=(0.0, 0.0), normal=(0.0, 1.0), material=stone)    # floor
    dda = cl.DDA(scene, dt=1e-2, friction=friction, dynamic=False)
    dda.settle(speed_tolerance=1e-9, max_duration=20.0)
    c = dda.contacts()
    on_floor = c["wall"] == 0
    floor = float(np.sum(c["normal_force"][on_floor] * c["normal"][on_floor, 1]))
    return dda, floor / float(np.sum(dda.masses) * 9.81)


if __name__ == "__main__":
    dda, ratio = settle_slope()
    log = dda.log
    print(f"{dda.n_bodies} disks at rest after {dda.n_steps} steps ({dda.time:.2f} s simulated)")
    print(f"floor force / weight = {ratio:.9f}")
    print(f"PCG iterations per step: mean {log['cg_iterations'].mean():.0f}, max {log['cg_iterations'].max()}")
    print(f"open-close iterations per step: max {log['open_close_iterations'].max()}; "
          f"largest penetration {log['max_penetration'].max():.2e} m")
