"""Per-body arrays that only repeat another are stored once (issue 16, memory per sphere).

A scene of spheres keeps its principal moments, contact radii, shape parameters and ``clump_of`` as
the arrays they repeat (or broadcast views of them), and a run without local damping keeps no
damping arrays.  Checked against the full arrays the scene would otherwise hold (the values must be
the same), and against runs that need the full forms (an ellipsoid, a mesh, local damping, a
checkpoint), whose results must not depend on how the arrays are stored.
"""
from __future__ import annotations

import numpy as np

import contactlab as cl
from contactlab.io.checkpoint import read_checkpoint

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 0.002


def _beads(scene, n_side=3, z0=0.0025):
    g = (np.arange(n_side) - (n_side - 1) / 2) * 2.2 * R
    x = np.stack(np.meshgrid(g, g, z0 + np.arange(n_side) * 2.2 * R, indexing="ij"), -1).reshape(-1, 3)
    scene.add_spheres(x, np.full(len(x), R), GLASS)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=GLASS)
    return len(x)


def _sim(local_damping=0.0, ellipsoid=False):
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    _beads(scene)
    if ellipsoid:
        scene.add_ellipsoid((0.0, 0.0, 0.02), (0.003, 0.002, 0.0015), GLASS)
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), local_damping=local_damping,
                         dt=2e-6)


def test_a_sphere_scene_stores_repeated_columns_once():
    m = _sim().model
    n = m.n_bodies
    # the values are those of the full arrays (a sphere's principal moments are its inertia three times)
    assert np.array_equal(m.principal_inertia, np.repeat(m.inertia[:, None], 3, axis=1))
    assert np.array_equal(m.inv_principal_inertia, np.where(m.fixed[:, None], 0.0, 1.0 / m.principal_inertia))
    assert np.array_equal(m.contact_radius, m.radius) and np.array_equal(m.shape_data, m.radius)
    assert np.array_equal(m.clump_of, np.full(n, -1))
    # ... held once: views of the arrays they repeat, no memory of their own
    assert m.contact_radius is m.radius and m.shape_data is m.radius
    assert np.shares_memory(m.principal_inertia, m.inertia) and m.principal_inertia.strides == (8, 0)
    assert np.shares_memory(m.inv_principal_inertia, m.inv_inertia)
    assert m.clump_of.strides == (0,)
    for a in (m.principal_inertia, m.inv_principal_inertia, m.clump_of):
        assert not a.flags.writeable
    # the kernels of rigid bodies get contiguous read-only copies
    for a in m.principal_arrays():
        assert a.flags.c_contiguous and not a.flags.writeable and a.shape == (n, 3)


def test_an_ellipsoid_keeps_the_full_arrays_and_runs_as_before():
    sim = _sim(ellipsoid=True)
    m = sim.model
    assert m.principal_inertia.strides[1] != 0 and not np.array_equal(m.principal_inertia[-1], [m.inertia[-1]] * 3)
    assert m.contact_radius is not m.radius
    sim.run(steps=300)
    assert np.isfinite(sim.positions).all()


def test_without_local_damping_the_run_keeps_no_damping_arrays(tmp_path):
    sim = _sim()
    assert sim.state.damping_work is None and sim.state.damping_force is None
    sim.run(steps=200)
    e = sim.energy()
    assert "dissipated_local_damping" not in e
    # a checkpoint still holds the format's zeros, and resumes bit for bit
    path = sim.save_checkpoint(tmp_path / "c.npz")
    saved = read_checkpoint(path)
    assert saved.state.damping_force.shape == (sim.model.n_bodies, 6) and not saved.state.damping_force.any()
    again = cl.Simulation.load_checkpoint(path)
    assert again.state.damping_force is None
    sim.run(steps=100)
    again.run(steps=100)
    assert np.array_equal(sim.positions, again.positions)


def test_local_damping_keeps_its_arrays_and_books_its_work():
    sim = _sim(local_damping=0.3)
    n = sim.model.n_bodies
    assert sim.state.damping_work.shape == (n,) and sim.state.damping_force.shape == (n, 6)
    sim.run(steps=300)
    # the damping takes energy (its work is negative of what it removes): booked, not lost
    e = sim.energy()
    assert e["dissipated_local_damping"] > 0.0 and sim.state.damping_force.any()
