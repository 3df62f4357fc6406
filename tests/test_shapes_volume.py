"""The contact-volume energy-conserving contact (spec 004), and a box resting on a plane (statics).
"""

import pytest

import contactlab as cl
from helpers.cubes import cube_impact
from contactlab.errors import InputError

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
ELASTIC = cl.models.HertzMindlin(restitution=1.0, friction=0.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_elastic_impact_of_two_cubes_conserves_energy_with_the_contact_volume(seed):
    """The contact-volume ECC (w = k_v V_c, spec 004): elastic cube impacts conserve energy within
    0.5 %."""
    sim, e0, met = cube_impact(seed, cl.models.VolumeContact(volume_stiffness=2e8), shape_contact="volume")
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
