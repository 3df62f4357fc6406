"""Simple shear of a frictional packing in a periodic cell (no walls), at constant normal stress.

1. Spheres are placed at random in a cubic periodic cell (packing fraction 0.3).
2. A stress servo on the three cell lengths compresses them isotropically to ``pressure``.
3. x and y are then held, the z length keeps the normal stress at ``pressure`` and the cell is
   sheared in the xz plane (Lees-Edwards: flow along x, gradient along z) at ``shear_rate``.

Printed along the way: the shear strain, the stress ratio ``tau / p`` (the mobilised friction of the
packing: with sliding friction 0.5 it rises to about 0.3-0.4 in the literature's quasi-static
range), the packing fraction, and at the end the mean velocity profile (linear: the cell shears
the packing homogeneously, without walls).  See docs/periodic.md.

Run: ``python examples/simple_shear.py``; ``simple_shear(...)`` takes smaller sizes for a test.
"""
from __future__ import annotations

import numpy as np

import contactlab as cl


def simple_shear(*, side=0.014, pressure=2e4, shear_rate=5.0, strain=0.3, seed=1, report=10, verbose=True):
    """Compress, then shear; returns the simulation and a table (strain, tau/p, packing fraction)."""
    glass = cl.Material(density=2500.0, young=5e7, poisson=0.3)
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.set_periodic(lower=(0, 0, 0), upper=(side, side, side), axes="xyz")
    cube = cl.packing.regions.box(lower=(0, 0, 0), upper=(side, side, side))
    scene.fill(cube, cl.distributions.Uniform(1.6e-3, 2.4e-3), glass, packing_fraction=0.3, seed=seed)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5), local_damping=0.3)
    if verbose:
        print(f"{sim.n_spheres} spheres, dt = {sim.dt:.3g} s")

    # 1. isotropic compression to the pressure (stress servo on the three lengths)
    for axis in "xyz":
        sim.cell.servo(axis, pressure, max_rate=2.0)
    for k in range(40):
        sim.run(duration=0.01)
        p = cl.measure.mean_stress(cl.measure.stress(sim, kinetic="none"))
        if verbose:
            print(f"compressing {k + 1}/40 (at most): t = {sim.time:.2f} s, p = {p:.4g} Pa of {pressure:g} Pa",
                  flush=True)
        if abs(p / pressure - 1) < 0.01:
            break
    if verbose:
        p = cl.measure.mean_stress(cl.measure.stress(sim))
        print(f"compressed: p = {p:.4g} Pa, packing fraction {cl.measure.packing_fraction(sim):.3f}")

    # 2. shear at constant normal stress: x and y held, z follows the pressure
    sim.cell.release_servo("x")
    sim.cell.release_servo("y")
    sim.local_damping = 0.0
    sim.cell.shear(shear_rate, plane="xz")
    rows = []
    for k in range(report):
        sim.run(duration=strain / shear_rate / report)
        s = cl.measure.stress(sim)
        rows.append((strain * (k + 1) / report, -s[0, 2] / s[2, 2], cl.measure.packing_fraction(sim)))
        if verbose:
            print(f"shear strain {rows[-1][0]:.3f}: tau/p = {rows[-1][1]:.3f}, packing fraction {rows[-1][2]:.3f}")
    if verbose:
        z = sim.cell.wrapped_positions()[:, 2]
        edges = np.linspace(0.0, sim.cell.lengths[2], 5)
        for lo, hi in zip(edges[:-1], edges[1:]):
            sel = (z >= lo) & (z < hi)
            print(f"  z in [{lo * 1e3:5.2f}, {hi * 1e3:5.2f}) mm: mean v_x = {sim.velocities[sel, 0].mean():+.4f} m/s "
                  f"(affine: {shear_rate * (0.5 * (lo + hi) - sim.cell.lower[2] - 0.5 * sim.cell.lengths[2]):+.4f})")
    return sim, np.array(rows)


if __name__ == "__main__":
    simple_shear()
