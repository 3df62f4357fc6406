"""The README example: one bead dropped on a floor next to another, with Hertz-Mindlin contacts."""
import numpy as np

import contactlab as cl

glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)        # SI units everywhere
scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
i = scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass, velocity=(0, 0, -1.0))
scene.add_spheres(positions=np.array([[0.003, 0, 0.002]]), radii=np.array([1e-3]), material=glass)
w = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)   # infinite plane

sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=None)
print(f"dt = {sim.dt:.3g} s (stability limit {sim.stability_limit:.3g} s)")
for _ in range(10):
    sim.run(duration=0.005)
    z = sim.positions[i, 2]
    print(f"t = {sim.time:.3f} s  height of sphere {i} = {1000 * z:.3f} mm  contacts = {sim.n_contacts()}")
e = sim.energy()
print({k: f"{v:.3e}" for k, v in e.items()})
