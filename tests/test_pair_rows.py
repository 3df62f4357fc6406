"""Each contact gets its own material pair's parameters and its own partner's geometry.

The pair loop of the step kernels hands the law its parameter row as a tuple (``_pair_row`` in
``engine/kernels.py``) and computes the centre offset of the next sphere partner one pair ahead
(``_centre_offset``), so a mistake in either would give a contact another pair's stiffness or
another partner's normal.  Reference: Hertz's elastic force ``4/3 E* sqrt(R*) delta^(3/2)`` along
the line of centres (Hertz 1882; ``E*`` of the two materials from ``effective_moduli``), summed per
sphere in NumPy, for spheres at rest (no damping or friction force yet), with three materials,
touching and separated neighbours and a floor in the same pair lists.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import contactlab as cl
from contactlab.laws.hertz_mindlin import effective_moduli

R = 1e-3
MATERIALS = [cl.Material(density=2500.0, young=e, poisson=nu, name=f"m{k}")
             for k, (e, nu) in enumerate([(1e7, 0.3), (5e7, 0.25), (2e8, 0.35)])]


def _cluster(seed):
    """A 4 x 4 x 3 lattice of spheres (spacing 1.998 mm, radii within 0.3 % of 1 mm: about half
    the neighbours overlap by up to 0.8 % of a radius), random materials, the bottom layer
    pressed into a floor at z = 0."""
    rng = np.random.default_rng(seed)
    spacing = 1.998e-3
    pos = np.array([(x * spacing, y * spacing, R * 0.999 + z * spacing)
                    for x, y, z in itertools.product(range(4), range(4), range(3))])
    radius = R * (1.0 + rng.uniform(-0.003, 0.003, len(pos)))
    mats = rng.integers(0, len(MATERIALS), len(pos))
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    for p, r, m in zip(pos, radius, mats):
        scene.add_sphere(position=tuple(p), radius=float(r), material=MATERIALS[m])
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=MATERIALS[2])
    return scene, pos, radius, mats


def _hertz_forces(pos, radius, mats):
    """Per-sphere sum of Hertz's elastic forces (N), NumPy, pairs and the floor."""
    force = np.zeros_like(pos)
    n_touching = 0
    for i, j in itertools.combinations(range(len(pos)), 2):
        d = pos[j] - pos[i]
        dist = np.linalg.norm(d)
        overlap = radius[i] + radius[j] - dist
        if overlap <= 0.0:
            continue
        n_touching += 1
        e_star, _ = effective_moduli(MATERIALS[mats[i]], MATERIALS[mats[j]])
        r_star = radius[i] * radius[j] / (radius[i] + radius[j])
        f = 4.0 / 3.0 * e_star * np.sqrt(r_star) * overlap**1.5 * d / dist
        force[i] -= f
        force[j] += f
    for i in range(len(pos)):
        overlap = radius[i] - pos[i, 2]
        if overlap > 0.0:
            e_star, _ = effective_moduli(MATERIALS[mats[i]], MATERIALS[2])
            force[i, 2] += 4.0 / 3.0 * e_star * np.sqrt(radius[i]) * overlap**1.5
    return force, n_touching


@pytest.mark.parametrize("seed", [0, 1])
def test_every_contact_gets_its_material_pair_and_its_partner(seed):
    scene, pos, radius, mats = _cluster(seed)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-7)
    sim.run(steps=0)
    expected, n_touching = _hertz_forces(pos, radius, mats)
    assert 20 < n_touching < 100                        # touching and separated pairs in the lists
    assert len(set(mats.tolist())) == 3
    scale = np.abs(expected).max()
    np.testing.assert_allclose(sim.forces, expected, rtol=0, atol=1e-12 * scale)


@cl.contact_law("normal")
def parameterless_spring(g, p, h, dt):
    """A linear spring of 1e4 N/m with its stiffness written in: no parameters, an empty pair row."""
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return 1e4 * g.overlap, 0.5e4 * g.overlap**2, 0.0, True, ()


def test_a_law_without_parameters_runs():
    """Its pair table has no columns (the kernels hand it a row of one unused zero).  Reference: a
    bead placed at the spring's static equilibrium on a floor, overlap m g / k, stays there."""
    glass = MATERIALS[0]
    mass = glass.density * 4.0 / 3.0 * np.pi * R**3
    rest = R - mass * 9.81 / 1e4
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_sphere(position=(0.0, 0.0, rest), radius=R, material=glass)
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=glass)
    sim = cl.Simulation(scene, parameterless_spring(), dt=1e-5)
    assert sim.stepper.pair_params.shape[2] == 0
    sim.run(steps=1000)
    assert abs(sim.positions[0, 2] - rest) < 1e-9 * R
