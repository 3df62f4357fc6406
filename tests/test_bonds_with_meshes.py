"""Bonds in a scene with mesh walls: each new bond's history goes to its own pair of spheres.

The pair keys of the contact table count bodies, walls and mesh triangles (``i * n_bodies + j``).
Keys made with the bodies and walls only made a sphere's triangle pairs sort after the next
sphere's pairs, so the rows found for new bonds could be sphere-triangle rows: a row of six
touching spheres on a tessellated floor got two of its five bonds on triangles and four bonds
missing.  Reference: the five bonds ``sim.bond`` reports are exactly the five sphere-sphere pairs
whose history holds an intact bond.
"""
from __future__ import annotations

import numpy as np

import contactlab as cl


def test_new_bonds_land_on_their_sphere_pairs_when_the_scene_has_mesh_triangles():
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    scene = cl.Scene(gravity=(0, 0, -9.81))
    xs = np.arange(6) * 2e-3
    scene.add_spheres(positions=np.c_[xs, np.zeros(6), np.full(6, 1.0e-3)], radii=np.full(6, 1e-3), material=glass)
    n = 8
    gx, gy = np.meshgrid(np.linspace(-0.005, 0.015, n), np.linspace(-0.005, 0.005, n))
    vertices = np.c_[gx.ravel(), gy.ravel(), np.zeros(n * n)]
    faces = [f for a in range(n - 1) for b in range(n - 1) for f in
             ([a * n + b, a * n + b + 1, a * n + b + n + 1], [a * n + b, a * n + b + n + 1, a * n + b + n])]
    scene.add_mesh((vertices, np.array(faces)), glass)
    model = cl.models.Ice(break_n=1.0, beta=(0.3, 0.2, 0.1), alpha=(0.5, 0.25))
    sim = cl.Simulation(scene, model)
    assert sim.bond(max_gap=1e-4) == 5
    t = sim.table
    rows = np.flatnonzero(t.hist[: t.n_pairs, model.bond_field] > 0.0)
    bonded = sorted(zip(t.pair_i[rows].tolist(), t.pair_j[rows].tolist()))
    assert bonded == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    assert sorted(zip(sim.bonds()["i"].tolist(), sim.bonds()["j"].tolist())) == bonded
    assert any(int(j) >= sim.n_spheres for j in t.pair_j[: t.n_pairs])  # the spheres do have triangle pairs
    sim.run(steps=200)
    assert sim.bonds()["intact"].all()
