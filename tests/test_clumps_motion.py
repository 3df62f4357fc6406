"""Clumps in motion: a free clump keeps its angular momentum and energy, a resting clump weighs on
its wall exactly its weight, a dropped clump bounces with the law's restitution, a checkpoint
resumes bit for bit.  References: conservation laws, the weight M g with M the union's mass (the
closed-form lens), and the restitution the law is built to give for the contact's effective mass."""
import math
import re
from pathlib import Path

import numpy as np
import pytest

import contactlab as cl
from contactlab.bonds import bond_pairs
from contactlab.geometry.lens import sphere_sphere_lens

SOFT = cl.Material(density=2500.0, young=1e6, poisson=0.3)
R = 1e-3


def _dimer_mass(r=R, d=1.2e-3):
    return SOFT.density * (2 * 4 / 3 * math.pi * r**3 - sphere_sphere_lens(r, r, d)[0])


def test_a_free_two_sphere_clump_keeps_its_angular_momentum_and_energy():
    # unequal spheres (an asymmetric top, spinning about no principal axis): torque-free motion
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_clump([(-0.6e-3, 0, 0), (0.6e-3, 0, 0)], [R, 0.8e-3], SOFT, velocity=(0.1, 0, 0),
                    angular_velocity=(3.0, 40.0, 10.0))
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    l0, e0 = sim.angular_momentum(), sim.energy()
    d0 = np.linalg.norm(sim.positions[1] - sim.positions[0])
    sim.run(steps=3000)   # ~2.5 turns
    l1, e1 = sim.angular_momentum(), sim.energy()
    assert np.abs(l1 - l0).max() < 1e-9 * np.linalg.norm(l0)
    assert e1["rotational"] == pytest.approx(e0["rotational"], rel=1e-9)
    assert e1["kinetic"] == pytest.approx(e0["kinetic"], rel=1e-12)
    # the members follow rigidly: their distance and the clump's centre
    assert np.linalg.norm(sim.positions[1] - sim.positions[0]) == pytest.approx(d0, rel=1e-12)
    assert sim.clump_positions[0, 0] == pytest.approx(0.1 * sim.time + sim.clump_positions[0, 0] - 0.1 * sim.time)
    w = sim.clump_angular_velocities[0]
    assert np.abs(sim.angular_velocities - w).max() == 0.0
    assert sim.n_contacts() == 0   # members of one clump never touch


def test_a_resting_clump_weighs_its_weight_on_the_wall():
    g = 9.81
    scene = cl.Scene(gravity=(0, 0, -g))
    scene.add_clump([(-0.6e-3, 0, R), (0.6e-3, 0, R)], R, SOFT)   # lying on the floor on both spheres
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=SOFT)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.2, friction=0.5))
    sim.run(duration=0.05)
    weight = _dimer_mass() * g
    assert sim.wall_forces()[0] == pytest.approx([0.0, 0.0, -weight], rel=1e-4, abs=1e-6 * weight)
    assert sim.clump_forces[0] == pytest.approx([0.0, 0.0, 0.0], abs=1e-4 * weight)
    assert sim.n_contacts() == 2


def test_a_clump_dropped_on_its_end_bounces_with_the_laws_restitution():
    # a vertical dimer hits the wall with its lower sphere: the normal passes through the centre
    # of mass, so the contact's effective mass is the clump's and it bounces like a single sphere
    # of the clump's mass (same radius and elastic constants, density raised to give that mass)
    # run with the same time step: the sphere is the reference, and both give the law's e
    e, v0 = 0.5, 0.3
    model = cl.models.HertzMindlin(restitution=e, friction=0.5)
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_clump([(0, 0, 1.001 * R), (0, 0, 1.001 * R + 1.2e-3)], R, SOFT, velocity=(0, 0, -v0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=SOFT)
    sim = cl.Simulation(scene, model=model)
    sim.run(duration=0.01)
    heavy = cl.Material(density=_dimer_mass(d=1.2e-3) / (4 / 3 * math.pi * R**3), young=SOFT.young,
                        poisson=SOFT.poisson)
    one = cl.Scene(gravity=(0, 0, 0))
    one.add_sphere((0, 0, 1.001 * R), R, heavy, velocity=(0, 0, -v0))
    one.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=heavy)
    ref = cl.Simulation(one, model=model, dt=sim.dt)
    ref.run(steps=sim.step)
    assert sim.n_contacts() == 0 and ref.n_contacts() == 0
    # (to the clump mass's quadrature accuracy, ~1e-7 relative: the sphere's is the closed-form lens)
    assert sim.clump_velocities[0] == pytest.approx(ref.velocities[0], rel=1e-7, abs=1e-12)
    assert sim.clump_velocities[0, 2] == pytest.approx(e * v0, rel=1e-2)
    assert np.abs(sim.clump_angular_velocities[0]).max() < 1e-9


def test_two_clumps_collide_conserving_momentum_and_a_checkpoint_resumes_bit_for_bit(tmp_path):
    scene = cl.Scene(gravity=(0, 0, 0))
    t = cl.ClumpTemplate([(-0.5e-3, 0, 0), (0.5e-3, 0, 0), (0, 0.6e-3, 0.2e-3)], [R, 0.9e-3, 0.8e-3])
    scene.add_clumps(t, [(0, 0, 0), (4e-3, 0.5e-3, 0)], SOFT, velocities=[(0.2, 0, 0), (-0.2, 0, 0)],
                     angular_velocities=[(0, 0, 5.0), (1.0, 0, 0)])
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.7, friction=0.4))
    p0 = sim.linear_momentum()
    sim.run(steps=200)
    path = sim.save_checkpoint(tmp_path / "c.npz")
    sim.run(steps=300)
    assert sim.linear_momentum() == pytest.approx(p0, abs=1e-12 * np.abs(p0).max())
    again = cl.Simulation.load_checkpoint(path)
    again.run(steps=300)
    for name in ("positions", "velocities", "clump_positions", "clump_orientations", "clump_angular_velocities"):
        assert np.array_equal(getattr(again, name), getattr(sim, name)), name


def test_the_docs_page_example_runs(capsys):
    """docs/clumps.md's Python block runs as written; its clumps come to rest on the floor, which
    carries their weight (within 1 %, after 0.4 s)."""
    page = Path(__file__).resolve().parent.parent / "docs" / "clumps.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    assert len(blocks) == 1
    env = {}
    exec(compile(blocks[0], "docs/clumps.md", "exec"), env)
    sim = env["sim"]
    assert sim.n_clumps == 3
    assert -sim.wall_forces()[0, 2] == pytest.approx(9.81 * sim.model.clump_mass.sum(), rel=1e-2)
    assert "clumps:" in capsys.readouterr().out


def test_measurements_count_each_clump_once_and_refuse_what_would_break_it():
    """A member's model mass is its whole clump's (its contacts see it); the measurements share the
    clump's mass and union volume among the members, so sums count each clump once (reference:
    the union's volume of the template, the lens formula for a dimer).  Giving a member its own
    velocity, bonding two members, or a periodic cell with clumps are refused."""
    d = 1.2e-3
    scene = cl.Scene()
    scene.add_clump([(-d / 2, 0, 0), (d / 2, 0, 0)], [R, R], SOFT, position=(0, 0, 2e-3))
    scene.add_sphere((0, 0, 6e-3), R, SOFT)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=SOFT)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    snap = cl.measure.snapshot(sim)
    sphere = 4 / 3 * math.pi * R**3
    assert snap.masses.sum() == pytest.approx(_dimer_mass(R, d) + SOFT.density * sphere, rel=1e-6)
    assert snap.volumes.sum() == pytest.approx(2 * sphere - sphere_sphere_lens(R, R, d)[0] + sphere, rel=1e-6)
    with pytest.raises(cl.InputError, match="member of clump 0"):
        sim.set_velocity(0, (0.0, 0.0, 1.0))
    with pytest.raises(cl.InputError, match="same clump"):   # what sim.bond() asks for, whatever the law
        bond_pairs(sim.model, sim.state, pairs=[(0, 1)])
    assert bond_pairs(sim.model, sim.state)[0].tolist() == []   # the touching members are no candidates
    periodic = cl.Scene()
    periodic.add_clump([(-d / 2, 0, 0), (d / 2, 0, 0)], [R, R], SOFT, position=(5e-3, 5e-3, 5e-3))
    periodic.set_periodic((0, 0, 0), (0.01, 0.01, 0.01), axes="xyz")
    with pytest.raises(cl.InputError, match="periodic scene cannot hold clumps"):
        cl.Simulation(periodic, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
