"""Love-Weber stress, packing fraction, coordination and fabric of regions, against closed forms and
identities that use the engine's own force sums."""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab.packing import regions

K = 1e3            # N/m, linear spring
R = 1e-3           # m
DELTA = 1e-5       # m, overlap (1 % of the radius)


def lsd():
    return cl.models.LinearSpringDashpot(stiffness=K, restitution=0.5, friction=0.5)


def test_two_pressed_spheres(glass):
    """Two spheres pressed together at overlap delta by a linear spring: the contact force is
    ``F = k delta`` (no velocity, no damping), and the only stress is ``sigma_zz V = F d`` with ``d``
    the distance of the centres (compression positive).  A region that ends at the contact plane
    holds ``F (r - delta/2)``, the lever of one sphere: with centre weights exactly, with volume
    weights too (the cap of sphere 0 beyond the plane equals the cap of sphere 1 before it)."""
    scene = cl.Scene(gravity=(0, 0, 0))
    d = 2 * R - DELTA
    scene.add_sphere(position=(0, 0, 0), radius=R, material=glass)
    scene.add_sphere(position=(0, 0, d), radius=R, material=glass)
    sim = cl.Simulation(scene, model=lsd())
    F = K * DELTA
    whole = regions.box((-2 * R, -2 * R, -2 * R), (2 * R, 2 * R, 4 * R))
    volume = 4 * R * 4 * R * 6 * R
    s = cl.measure.stress(sim, whole)
    expected = np.zeros((3, 3))
    expected[2, 2] = F * d / volume
    np.testing.assert_allclose(s, expected, rtol=1e-12, atol=1e-12 * expected[2, 2])
    half = regions.box((-2 * R, -2 * R, -2 * R), (2 * R, 2 * R, d / 2))
    for weighting in ("centre", "volume"):
        s = cl.measure.stress(sim, half, weighting=weighting)
        assert s[2, 2] * (4 * R * 4 * R * (d / 2 + 2 * R)) == pytest.approx(F * (R - DELTA / 2), rel=1e-12)


def _lattice(glass, n):
    """A simple cubic lattice of n^3 spheres at spacing a = 2R - delta: every contact carries k delta."""
    a = 2 * R - DELTA
    g = np.arange(n) * a
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_spheres(np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3), R, glass)
    return cl.Simulation(scene, model=lsd()), a, g


def test_hydrostatic_lattice(glass):
    """A cubic lattice with the force ``F = k delta`` in every contact has ``sigma = (F / a^2) I``
    (one sphere per cell a^3, two levers a/2 per axis), 6 contacts per sphere, fabric ``I/3`` and
    packing fraction ``(4/3 pi R^3) / a^3``.  A box of whole cells around the interior measures this
    exactly with centre weights and with volume weights (the caps that leave the box equal those
    that enter it: the lattice is periodic)."""
    sim, a, g = _lattice(glass, 6)
    box = regions.box((g[2] - a / 2,) * 3, (g[3] + a / 2,) * 3)
    F = K * DELTA
    for weighting in ("volume", "centre"):
        np.testing.assert_allclose(cl.measure.stress(sim, box, weighting=weighting), F / a**2 * np.eye(3),
                                   rtol=1e-12, atol=1e-12 * F / a**2)
        z = cl.measure.coordination(sim, box, weighting=weighting)
        assert z["coordination"] == pytest.approx(6.0, rel=1e-14) and z["mechanical"] == pytest.approx(6.0, rel=1e-14)
        np.testing.assert_allclose(cl.measure.fabric(sim, box, weighting=weighting), np.eye(3) / 3, atol=1e-15)
    assert cl.measure.packing_fraction(sim, box) == pytest.approx(4 / 3 * math.pi * R**3 / a**3, rel=1e-12)


def test_column_on_a_floor_at_rest(glass):
    """N spheres stacked on a floor under gravity, at rest: the contact below sphere k (counted
    from the top) carries the weight of k spheres, so its overlap is ``k m g / k_s`` and
    ``sigma_zz V = sum_{k<N} k m g (2R - k m g / k_s) + N m g (R - N m g / (2 k_s))`` (closed form;
    the floor's lever ends at the contact point, midway through the overlap)."""
    n, g0 = 4, 9.81
    scene = cl.Scene(gravity=(0, 0, -g0))
    scene.add_spheres(np.array([[0, 0, R + 2.1 * R * k] for k in range(n)]), R, glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, model=lsd(), local_damping=0.7)
    sim.run(duration=0.3)
    assert np.abs(sim.velocities).max() < 1e-9
    m = sim.model.mass[0]
    w = m * g0
    expected = sum(k * w * (2 * R - k * w / K) for k in range(1, n)) + n * w * (R - n * w / (2 * K))
    volume = 1e-6
    s = cl.measure.stress(sim, cl.measure.domain(volume=volume), kinetic="none")
    assert s[2, 2] * volume == pytest.approx(expected, rel=1e-7)
    assert abs(s[0, 0]) < 1e-9 * s[2, 2] and abs(s[1, 1]) < 1e-9 * s[2, 2]


def test_love_sum_equals_the_engine_force_sums_in_a_moving_packing(glass):
    """For the whole simulation ``sum_p sum_c (x_c - x_p) (x) f = sum_walls x_c (x) f - sum_p x_p (x)
    (F_p - m_p g)`` exactly (the two forces of a pair act at one point), whatever the motion:
    checked mid-fall with friction, walls on five sides, against ``sim.contacts()`` and the
    engine's per-body total forces ``sim.forces``."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    box = regions.box((0, 0, 0), (8e-3, 8e-3, 12e-3))
    scene.fill(box, cl.distributions.Uniform(1.6e-3, 2.4e-3), glass, packing_fraction=0.3, seed=3)
    for point, normal in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((8e-3, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, 8e-3, 0), (0, -1, 0))]:
        scene.add_wall(point=point, normal=normal, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(duration=0.02)
    assert sim.n_contacts() > 10 and np.abs(sim.velocities).max() > 1e-3      # moving, in contact
    volume = 8e-3 * 8e-3 * 12e-3
    love = -cl.measure.stress_parts(sim, cl.measure.domain(volume=volume))["contact"] * volume
    c = sim.contacts()
    on_wall = c["wall"] >= 0
    assert on_wall.sum() >= 4
    walls = np.einsum("ca,cb->ab", c["contact_point"][on_wall], c["force"][on_wall])
    contact_total = sim.forces - sim.model.mass[:, None] * sim.model.gravity
    expected = walls - np.einsum("pa,pb->ab", sim.positions, contact_total)
    scale = np.abs(sim.positions).max() * np.abs(contact_total).sum()
    np.testing.assert_allclose(love, expected, rtol=0, atol=1e-11 * scale)


def test_kinetic_stress(glass):
    """Spheres flying apart (no contact): with ``kinetic="full"`` the trace times the volume is twice
    the kinetic energy the simulation reports; the fluctuation part does not change when every
    body gets the same extra velocity U, the full part grows by ``(M/V) U (x) U``."""
    rng = np.random.default_rng(2)
    pos = np.array([[x, y, 0.0] for x in range(3) for y in range(3)]) * 5e-3
    vel = rng.normal(0, 0.1, (9, 3))
    U = np.array([0.3, -0.2, 0.5])
    sims = []
    for extra in (np.zeros(3), U):
        scene = cl.Scene(gravity=(0, 0, 0))
        scene.add_spheres(pos, R, glass, velocities=vel + extra)
        sims.append(cl.Simulation(scene, model=lsd(), dt=1e-6))
    region = cl.measure.domain(volume=1e-6)
    full = cl.measure.stress(sims[0], region, kinetic="full")
    assert np.trace(full) * 1e-6 == pytest.approx(2 * sims[0].energy()["kinetic"], rel=1e-12)
    np.testing.assert_allclose(cl.measure.stress(sims[1], region), cl.measure.stress(sims[0], region), rtol=1e-9)
    mass = sims[0].model.mass.sum()
    shift = cl.measure.stress(sims[1], region, kinetic="full") - cl.measure.stress(sims[0], region, kinetic="full")
    cross = mass / 1e-6 * (np.outer(U, U))
    mean_v = sims[0].model.mass @ vel / mass
    cross += mass / 1e-6 * (np.outer(U, mean_v) + np.outer(mean_v, U))
    np.testing.assert_allclose(shift, cross, rtol=1e-9)


def test_coordination_with_rattlers_and_fabric(glass):
    """Three mutually touching spheres, a fourth touching one of them, a fifth alone: C = 4, N = 5,
    N_0 = N_1 = 1, so ``Z = 2C/N = 1.6`` and Thornton's ``Z_m = (2C - N_1)/(N - N_0 - N_1) = 7/3``;
    removing rattlers until none is left gives 2 (the triangle).  The fabric is the mean of
    ``n n`` over the four contacts' normals, taken from the centres."""
    d = 2 * R - DELTA
    p = np.array([[0, 0, 0], [d, 0, 0], [d / 2, d * math.sqrt(3) / 2, 0], [0, 0, d], [0.05, 0.05, 0.05]])
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_spheres(p, R, glass)
    sim = cl.Simulation(scene, model=lsd())
    z = cl.measure.coordination(sim, walls=False)
    assert z["coordination"] == pytest.approx(1.6) and z["mechanical"] == pytest.approx(7 / 3)
    assert z["rattler_fraction"] == pytest.approx(0.4)
    assert cl.measure.coordination(sim, iterative=True)["mechanical"] == pytest.approx(2.0)
    pairs = [(0, 1), (0, 2), (1, 2), (0, 3)]
    n = np.array([(p[j] - p[i]) / np.linalg.norm(p[j] - p[i]) for i, j in pairs])
    np.testing.assert_allclose(cl.measure.fabric(sim), n.T @ n / 4, atol=1e-14)


def test_two_dimensional_stress_and_area_fraction(glass):
    """2-D: two disks pressed along x give ``sigma_xx = F d / (A t)`` with ``A t`` the rectangle's
    area times the thickness; the area fraction of the rectangle is ``2 pi R^2 / A``."""
    t = 2e-3
    scene = cl.Scene(dimension=2, thickness=t, gravity=(0, 0))
    d = 2 * R - DELTA
    scene.add_disks(np.array([[0, 0], [d, 0]]), R, glass)
    sim = cl.Simulation(scene, model=lsd())
    rect = regions.box((-2 * R, -2 * R, -1), (4 * R, 2 * R, 1))
    area = 6 * R * 4 * R
    s = cl.measure.stress(sim, rect)
    assert s[0, 0] == pytest.approx(K * DELTA * d / (area * t), rel=1e-12)
    assert abs(s[1, 1]) < 1e-12 * s[0, 0] and not s[2].any()
    assert cl.measure.mean_stress(s, dimension=2) == pytest.approx(s[0, 0] / 2)
    assert cl.measure.packing_fraction(sim, rect) == pytest.approx(2 * math.pi * R**2 / area, rel=1e-12)


def test_region_sensor_records_the_measurements(glass, tmp_path):
    """``sim.record(..., region=)`` records the regional measurements at its steps: the last record
    is the measurement of the final state, tensors are (T, 3, 3) and reach the CSV as xx..zz."""
    sim, a, g = _lattice(glass, 4)
    box = regions.box((g[1] - a / 2,) * 3, (g[2] + a / 2,) * 3)
    rec = sim.record("stress", "pressure", "packing_fraction", "coordination", "fabric", region=box, every=5,
                     csv=tmp_path / "box.csv")
    sim.run(steps=10)
    sim.close()
    assert rec["stress"].shape == (3, 3, 3) and len(rec) == 3
    np.testing.assert_array_equal(rec["stress"][-1], cl.measure.stress(sim, box))
    assert rec["stress.zz"][-1] == rec["stress"][-1, 2, 2]
    assert rec["pressure"][-1] == pytest.approx(np.trace(rec["stress"][-1]) / 3)
    assert rec["packing_fraction"][-1] == cl.measure.packing_fraction(sim, box)
    header = (tmp_path / "box.csv").read_text().splitlines()[0].split(",")
    assert "stress_xx" in header and "fabric_zz" in header and "coordination" in header
    with pytest.raises(cl.InputError, match="did you mean 'stress'"):
        sim.record("stres", region=box)


def test_bad_measurement_inputs(glass):
    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_sphere(position=(0, 0, 0), radius=R, material=glass)
    sim = cl.Simulation(scene, model=lsd(), dt=1e-6)
    with pytest.raises(cl.InputError, match="exact volume"):
        cl.measure.stress(sim, regions.torus((0, 0, 0), 1.0, 0.1))
    with pytest.raises(cl.InputError, match="did you mean 'volume'"):
        cl.measure.stress(sim, weighting="volumes")
    with pytest.raises(cl.InputError, match="kinetic must be one of"):
        cl.measure.stress(sim, kinetic="mean")
    with pytest.raises(cl.InputError, match="one target"):
        sim.record("stress", sphere=0, region=cl.measure.domain())
