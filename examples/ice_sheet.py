"""An ice sheet of bonded spheres broken by a falling ball (the Ice model, spec 002).

A square sheet of n x n ice spheres, bonded to their neighbours in all four senses (breakable in
all), rests on its fixed rim.  A steel ball falls on its centre.  Bonds around the impact break in
bending, shear and tension; the script prints how many broke and why, where the energy went, and
writes ParaView files (spheres, force chains, and every bond with its state, breakage time and
reason) to ``contactlab-out/ice_sheet/``.

Run:  python examples/ice_sheet.py      (a few seconds once compiled; the first run on a machine
compiles the kernels first, about 30-50 s on a 2-core machine)
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

import contactlab as cl

ICE = cl.Material(density=917.0, young=5e7, poisson=0.3, name="ice")
STEEL = cl.Material(density=7800.0, young=5e7, poisson=0.3, name="steel")


def ice_sheet(n=15, radius=2e-3, ball_radius=5e-3, speed=3.0, duration=6e-3, output="contactlab-out/ice_sheet"):
    """Run the impact; returns the simulation (bonds, energy) after ``duration`` seconds."""
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    spacing = 2 * radius
    for ix in range(n):
        for iy in range(n):
            rim = ix in (0, n - 1) or iy in (0, n - 1)
            scene.add_sphere(position=(ix * spacing, iy * spacing, 0.0), radius=radius, material=ICE, fixed=rim)
    centre = 0.5 * (n - 1) * spacing
    ball = scene.add_sphere(position=(centre, centre, radius + ball_radius + 1e-4), radius=ball_radius,
                            material=STEEL, velocity=(0.0, 0.0, -speed))
    model = cl.models.Ice(break_n=2e-3, beta=(0.5, 0.5, 0.5), alpha=(1 / (2 * np.pi), 1 / (4 * np.pi)),
                          tan_phi=0.3, mu=0.1)
    sim = cl.Simulation(scene, model=model)
    sim.bond(spheres=np.arange(n * n))          # the sheet, not the ball
    if output:
        sim.add_reporter(cl.io.VTKReporter(output, interval=duration / 30))
    sim.run(duration=duration)
    sim.close()
    if output:
        sim.export_bonds(Path(output) / "bonds.csv")
    sim.ball = ball
    return sim


def main():
    sim = ice_sheet()
    b = sim.bonds()
    broken = Counter(b["why"][~b["intact"]])
    e = sim.energy()
    print(f"bonds: {len(b['i'])} made, {int((~b['intact']).sum())} broken "
          f"({', '.join(f'{v} {k}' for k, v in broken.most_common())})")
    print(f"ball: {sim.velocities[sim.ball, 2]:+.3f} m/s after the impact (was -3.000 m/s)")
    print("energy (J): " + ", ".join(f"{k} {e[k]:.3e}" for k in ("kinetic", "elastic", "dissipated_bond_breakage",
                                                                  "dissipated_plastic_tangential",
                                                                  "dissipated_plastic_rolling", "balance_error")))
    print("ParaView: open contactlab-out/ice_sheet/bonds.pvd (colour by 'intact' or 'reason') and particles.pvd")


if __name__ == "__main__":
    main()
