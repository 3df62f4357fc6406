"""Spheres poured into a hopper read from an STL file, then discharged through its outlet.

The hopper (``examples/data/hopper.stl``, millimetres: a 60-degree cone with an 18 mm outlet under
a cylindrical bin, see ``examples/data/make_hopper.py``) is a mesh wall.  A gate (a plane wall of
its own material) closes the outlet while the spheres settle; switching the gate off with
``sim.set_active(False, materials=...)`` starts the discharge.  The mass flow rate through the
outlet is compared with Beverloo's correlation ``W = C rho_b sqrt(g) (D - k d)^(5/2)`` (C = 0.58,
k = 1.5, rho_b the bulk density of the settled bed), and the load of the bed on the hopper is read
with ``sim.mesh_forces()``.

Run:  python examples/hopper_discharge.py [--spheres N] [--vtk out/hopper]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

import contactlab as cl

HERE = Path(__file__).resolve().parent


def build(n_target=1500, radius=1.5e-3, seed=1):
    beads = cl.Material(density=2500.0, young=5e6, poisson=0.3, name="beads")
    steel = cl.Material(density=7800.0, young=5e6, poisson=0.3, name="hopper")
    gate = cl.Material(density=7800.0, young=5e6, poisson=0.3, name="gate")
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_mesh(HERE / "data" / "hopper.stl", material=steel, scale=1e-3, name="hopper")
    scene.add_wall(point=(0, 0, 0.020), normal=(0, 0, 1), material=gate)      # the gate under the outlet
    scene.add_wall(point=(0, 0, -0.10), normal=(0, 0, 1), material=steel)     # the floor below
    # a loose lattice inside the bin (radius 30 mm), from the top of the cone upwards
    rng = np.random.default_rng(seed)
    spacing = 2.3 * radius
    xs = np.arange(-0.027, 0.027 + 1e-9, spacing)
    layer = np.array([(x, y) for x in xs for y in xs if x * x + y * y < (0.030 - 1.5 * radius) ** 2])
    n_layers = int(math.ceil(n_target / len(layer)))
    z = 0.060 + spacing * np.arange(n_layers)
    pos = np.array([(x, y, h) for h in z for x, y in layer])[:n_target]
    pos[:, :2] += rng.uniform(-0.1, 0.1, size=(len(pos), 2)) * radius
    radii = radius * rng.uniform(0.9, 1.1, size=len(pos))
    scene.add_spheres(pos, radii, beads)
    return scene, beads, gate


def main(n_spheres=1500, vtk=None, settle=0.35, discharge=0.4, progress=False):
    """Settle against the gate for ``settle`` s, discharge for ``discharge`` s; returns the simulation,
    the measured flow rate and Beverloo's (kg/s).  ``progress=True``: contactlab's progress bar
    while the bed settles, then a line per twentieth of the discharge."""
    scene, beads, gate = build(n_spheres)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5, rolling_friction=0.05))
    if vtk:
        sim.add_reporter(cl.io.VTKReporter(vtk, interval=0.01))
    print(f"{sim.n_spheres} spheres, {sim.model.n_triangles} hopper triangles, dt = {sim.dt:.3g} s")
    sim.run(duration=settle, progress=progress)
    load = sim.mesh_forces()[0]
    weight = float(sim.model.mass.sum() * 9.81)
    print(f"settled: the hopper carries {-load[2] / weight:.1%} of the weight, the gate {-sim.wall_forces()[0, 2] / weight:.1%}")
    below = lambda: float(sim.model.mass[sim.positions[:, 2] < 0.020].sum())  # noqa: E731
    # bulk density of the bed just above the outlet (a cylinder of radius 8 mm, 22-32 mm high), for
    # Beverloo's correlation; a random close packing (0.6) if the bed does not reach it
    pos, r = sim.positions, sim.model.radius
    probe = (np.hypot(pos[:, 0], pos[:, 1]) < 0.008) & (pos[:, 2] > 0.022) & (pos[:, 2] < 0.032)
    volume = math.pi * 0.008**2 * 0.010
    solid = float((4.0 / 3.0 * math.pi * r[probe] ** 3).sum() / volume)
    rho_b = beads.density * (solid if solid > 0.3 else 0.6)
    sim.set_active(False, materials=(beads, gate))
    times, masses = [], []
    steps = 20
    for k in range(steps):
        sim.run(duration=discharge / steps)
        times.append(sim.time)
        masses.append(below())
        if progress:
            print(f"  discharge {k + 1}/{steps}: t = {sim.time:.3f} s, {masses[-1] / sim.model.mass.sum():.1%} of the "
                  f"mass below the outlet", flush=True)
    times, masses = np.array(times), np.array(masses)
    flowing = masses > 0.1 * masses[-1]
    rate = np.polyfit(times[flowing], masses[flowing], 1)[0] if flowing.sum() > 2 else float("nan")
    d = 2 * float(np.mean(r))
    beverloo = 0.58 * rho_b * math.sqrt(9.81) * (0.018 - 1.5 * d) ** 2.5
    print(f"discharged {masses[-1] / sim.model.mass.sum():.1%} of the mass in {discharge} s; "
          f"flow rate {rate * 1e3:.2f} g/s, Beverloo {beverloo * 1e3:.2f} g/s (bulk density {rho_b:.0f} kg/m^3)")
    e = sim.energy()
    print(f"energy balance error {e['balance_error']:.3g} J of {e['dissipated']:.3g} J dissipated")
    sim.close()
    return sim, rate, beverloo


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spheres", type=int, default=1500)
    parser.add_argument("--vtk", default=None)
    a = parser.parse_args()
    main(a.spheres, a.vtk, progress=True)
