"""Shared driver of the energy-conserving-contact tests: two cubes thrown at each other."""
import numpy as np

import contactlab as cl

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")


def cube_impact(seed, model, shape_contact="minkowski"):
    """Two cubes (10 mm) at random orientations thrown at each other off-centre at 0.8 m/s, no
    gravity, run (dt = 2 us, some 500 steps per impact) until they have met and parted.
    Returns ``(sim, initial total energy (J), whether they met)``."""
    rng = np.random.default_rng(seed)
    scene = cl.Scene(gravity=(0, 0, 0))
    for k, x in enumerate(((0.0, 0.0, 0.0), (0.0185, 0.003, -0.002))):
        q = rng.normal(size=4)
        scene.add_box(position=x, half_extents=(5e-3, 5e-3, 5e-3), material=GLASS, orientation=q / np.linalg.norm(q),
                      velocity=(0.4 if k == 0 else -0.4, 0.0, 0.0), angular_velocity=rng.normal(scale=5.0, size=3))
    sim = cl.Simulation(scene, model=model, shape_contact=shape_contact, dt=2e-6)
    e0 = sim.energy()["total"]
    rec = sim.record("n_contacts")
    for _ in range(200):
        sim.run(steps=100)
        if max(rec["n_contacts"]) > 0 and sim.n_contacts() == 0:
            break
    return sim, e0, max(rec["n_contacts"]) > 0
