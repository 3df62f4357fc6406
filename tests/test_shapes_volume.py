"""The contact-volume energy-conserving contact (spec 004), and a box resting on a plane (statics).
"""
import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.errors import InputError

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
ELASTIC = cl.models.HertzMindlin(restitution=1.0, friction=0.0)


def _quat(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def _cubes(seed, model, shape_contact="minkowski"):
    """Two cubes (10 mm) at random orientations thrown at each other off-centre at 0.8 m/s, no
    gravity, run (dt = 2 us, some 500 steps per impact) until they have met and parted."""
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


@pytest.mark.parametrize("seed", [1, 2])
def test_elastic_impact_of_two_cubes_conserves_energy_with_the_contact_volume(seed):
    """The contact-volume ECC (w = k_v V_c, spec 004): elastic cube impacts conserve energy within
    0.5 %."""
    sim, e0, met = _cubes(seed, cl.models.VolumeContact(volume_stiffness=2e8), shape_contact="volume")
    assert met and sim.n_contacts() == 0
    assert abs(sim.energy()["total"] - e0) < 5e-3 * e0


def test_volume_contact_rejects_shapes_it_cannot_measure():
    scene = cl.Scene()
    scene.add_ellipsoid(position=(0, 0, 0.01), semi_axes=(1e-3, 1e-3, 2e-3), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    with pytest.raises(InputError, match="volume"):
        cl.Simulation(scene, model=cl.models.VolumeContact(volume_stiffness=1e9))
    with pytest.raises(InputError, match="shape_contact"):
        cl.Simulation(scene, model=ELASTIC, shape_contact="nonsense")
