"""The default scene of `contactlab run`, written with the Python API, with its reporters.

Run:  python examples/pour_and_settle.py [N]   (N spheres, default 2000) and open
pour-out/particles.pvd and pour-out/contacts.pvd in ParaView.
"""
import sys

import contactlab as cl
from contactlab.io import EnergyCSVReporter, VTKReporter

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
side = 0.044
scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
scene.fill_box(lower=(0, 0, 0), upper=(side, side, 0.3), radius=1e-3, material=glass, radius_spread=0.05,
               spacing=2.2e-3, jitter=0.5, seed=1, max_count=n)
for point, normal in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((side, 0, 0), (-1, 0, 0)),
                      ((0, 0, 0), (0, 1, 0)), ((0, side, 0), (0, -1, 0))]:
    scene.add_wall(point=point, normal=normal, material=glass)
sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
sim.add_reporter(VTKReporter("pour-out", interval=0.01))
sim.add_reporter(EnergyCSVReporter("pour-out/energy.csv", interval=0.001))
sim.run(duration=0.15, progress=True)
sim.close()
summary = sim.summary()
print(f"{summary['particle_steps_per_second']:.3g} particle-steps/s, {summary['contacts']} contacts, "
      f"energy balance error {100 * summary['energy_balance_relative']:.3g} %")
