"""A law that acts across a gap (``@cl.contact_law(..., interaction_range=...)``) sees every pair
within its range, whatever the neighbour-list skin, and the time-step policy takes such a contact.

Reference: the law's own formula (``k delta`` across the gap, helpers/range_law.py) at the pair's
distance, and Newton's second law for the first step's accelerations.
"""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from helpers.range_law import RANGE, reaching_spring

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3
K = 10.0


def _two_spheres_and_a_wall(gap: float, wall_gap: float, periodic: bool = False):
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(4 * R, 4 * R, 4 * R), radius=R, material=GLASS)
    scene.add_sphere(position=(6 * R + gap, 4 * R, 4 * R), radius=R, material=GLASS)
    if periodic:
        scene.set_periodic((0.0, 0.0, 0.0), (12 * R, 12 * R, 12 * R), axes="xy")
    scene.add_wall(point=(0.0, 0.0, 4 * R - R - wall_gap), normal=(0.0, 0.0, 1.0), material=GLASS)
    return scene


@pytest.mark.parametrize("periodic", [False, True], ids=["box", "periodic"])
def test_pairs_across_a_gap_within_the_range_are_in_the_list_whatever_the_skin(periodic):
    """Two spheres 0.6 of the range apart, both 0.8 of it above a wall, with a skin 40 times
    smaller than the range: the law pulls on all three pairs from the first evaluation (the list
    takes pairs within the skin plus the range), forces as the formula gives."""
    gap, wall_gap = 0.6 * RANGE, 0.8 * RANGE
    sim = cl.Simulation(_two_spheres_and_a_wall(gap, wall_gap, periodic), cl.models.Contact(normal=reaching_spring(
        stiffness=K, pull=K)), dt=1e-6, skin=RANGE / 40)
    assert sim.table.skin == pytest.approx(RANGE / 40) and sim.n_contacts() == 3
    f = sim.forces
    # the normal force k * delta (delta = -gap: a pull) along the line of centres
    assert f[0] == pytest.approx([K * gap, 0.0, -K * wall_gap], rel=1e-12, abs=1e-15)
    assert f[1] == pytest.approx([-K * gap, 0.0, -K * wall_gap], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("skin", [None, RANGE / 40], ids=["default_skin", "small_skin"])
def test_a_contact_across_a_gap_takes_part_in_the_time_step_policy_and_the_run(skin):
    """``dt=None`` with a contact present at a gap: the stability estimate probes the law out to
    that gap (it used to stop with "dt must be > 0 s, got 0.0").  The two spheres, pulled together
    by the spring across the gap (the wall out of range), close it as the harmonic solution says:
    ``gap(t) = gap0 cos(omega t)``, ``omega = sqrt(2 k / m)`` (the reduced mass m/2), to 2 % of the
    gap over the quarter period."""
    gap0 = 0.6 * RANGE
    sim = cl.Simulation(_two_spheres_and_a_wall(gap0, 2 * RANGE), cl.models.Contact(normal=reaching_spring(
        stiffness=K, pull=K)), skin=skin)
    assert sim.dt is not None and sim.dt > 0.0 and sim.n_contacts() == 1
    omega = np.sqrt(2 * K / float(sim.model.mass[0]))
    quarter = 0.5 * np.pi / omega
    for _ in range(4):
        sim.run(duration=0.2 * quarter)
        gap = np.linalg.norm(sim.positions[1] - sim.positions[0]) - 2 * R
        assert abs(gap - gap0 * np.cos(omega * sim.time)) < 0.02 * gap0, (sim.time, gap)
