"""Pour clumps (three-sphere triangles and unequal dimers) into a box and let them settle.

Run: python examples/clumps_pour.py [--out DIR] [--duration T]
Writes a ParaView series to DIR (default ./clumps-out): glyph the particles by ``radius`` and colour
them by ``clump``.  Prints the floor's force against the clumps' weight at the end.
"""
import argparse

import numpy as np

import contactlab as cl

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="clumps-out")
parser.add_argument("--duration", type=float, default=0.3, help="simulated time, s")
args = parser.parse_args()

glass = cl.Material(density=2500.0, young=5e6, poisson=0.3)
r = 1e-3
triangle = cl.ClumpTemplate([(0, 0, 0), (1.2 * r, 0, 0), (0.6 * r, 1.0 * r, 0)], r)
dimer = cl.ClumpTemplate([(-0.6 * r, 0, 0), (0.6 * r, 0, 0)], [r, 0.8 * r])

scene = cl.Scene(gravity=(0, 0, -9.81))
rng = np.random.default_rng(1)
grid = np.array([(x, y, z) for z in np.arange(4e-3, 25e-3, 4.5e-3)
                 for x in np.arange(-6e-3, 6.1e-3, 4.5e-3) for y in np.arange(-6e-3, 6.1e-3, 4.5e-3)])
quats = rng.normal(size=(len(grid), 4))
quats /= np.linalg.norm(quats, axis=1)[:, None]
half = len(grid) // 2
scene.add_clumps(triangle, grid[:half], glass, orientations=quats[:half])
scene.add_clumps(dimer, grid[half:], glass, orientations=quats[half:])
for point, normal in [((0, 0, 0), (0, 0, 1)), ((-9e-3, 0, 0), (1, 0, 0)), ((9e-3, 0, 0), (-1, 0, 0)),
                      ((0, -9e-3, 0), (0, 1, 0)), ((0, 9e-3, 0), (0, -1, 0))]:
    scene.add_wall(point=point, normal=normal, material=glass)

sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5))
sim.add_reporter(cl.io.VTKReporter(args.out, interval=0.01))
sim.run(duration=args.duration, progress=True)
sim.close()
e = sim.energy()
print(f"{sim.n_clumps} clumps ({sim.n_spheres} spheres), {sim.n_contacts()} contacts, "
      f"kinetic energy {e['kinetic']:.3g} J")
print(f"floor force {-sim.wall_forces()[0, 2]:.5g} N, weight {9.81 * sim.model.clump_mass.sum():.5g} N")
