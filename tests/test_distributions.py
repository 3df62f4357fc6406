"""Size distributions (sampled against scipy's distributions and the sieve table itself) and
``Scene.fill`` (no overlap, inside the region, the requested packing fraction, reproducible)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.spatial import cKDTree

import contactlab as cl
from contactlab.distributions import LogNormal, Normal, Sieve, Uniform
from contactlab.measure import fraction_inside, region_volume
from contactlab.packing import regions

ALPHA = 0.01       # KS tests: reject at 1 % (fixed seeds: the same verdict every run)


def truncated(cdf, a, b):
    """The CDF of a distribution truncated to [a, b], from its untruncated scipy CDF."""
    return lambda d: np.clip((cdf(np.clip(d, a, b)) - cdf(a)) / (cdf(b) - cdf(a)), 0.0, 1.0)


NUMBER_CASES = [
    (Uniform(1e-3, 3e-3), lambda d: stats.uniform(1e-3, 2e-3).cdf(d)),
    (Normal(2e-3, 0.3e-3), truncated(stats.norm(2e-3, 0.3e-3).cdf, 1.1e-3, 2.9e-3)),
    (Normal(1e-3, 0.5e-3, d_min=0.2e-3, d_max=3e-3), truncated(stats.norm(1e-3, 0.5e-3).cdf, 0.2e-3, 3e-3)),
    (LogNormal(1e-3, 0.4), truncated(stats.lognorm(0.4, scale=1e-3).cdf, 1e-3 * math.exp(-1.2), 1e-3 * math.exp(1.2))),
]


@pytest.mark.parametrize("dist, cdf", NUMBER_CASES, ids=["uniform", "normal", "normal-bounds", "lognormal"])
def test_sizes_by_number_follow_the_distribution(dist, cdf):
    """Kolmogorov-Smirnov against scipy's (truncated) distribution, and the class's own CDF agrees."""
    d = dist.sample_diameters(20_000, seed=12)
    assert stats.kstest(d, cdf).pvalue > ALPHA
    grid = np.linspace(dist.d_min, dist.d_max, 50)
    np.testing.assert_allclose(dist.number_cdf(grid), cdf(grid), atol=1e-12)
    np.testing.assert_array_equal(dist.sample_radii(100, seed=3), dist.sample_diameters(100, seed=3) / 2)
    assert not np.array_equal(dist.sample_diameters(100, seed=3), dist.sample_diameters(100, seed=4))


def mass_passing(d, sizes):
    """Mass fractions (by d^3) of a sample below each size, with their standard errors (ratio
    estimator: var = var(y - p x) / (n mean(x)^2))."""
    x = d ** 3
    out = []
    for s in sizes:
        y = np.where(d <= s, x, 0.0)
        p = y.sum() / x.sum()
        se = np.std(y - p * x) / (math.sqrt(len(d)) * x.mean())
        out.append((p, se))
    return out


SIEVE = Sieve(sizes=[0.25e-3, 0.5e-3, 1e-3, 2e-3, 4e-3], passing=[0.0, 0.1, 0.35, 0.8, 1.0])
MASS_CASES = [
    (SIEVE, {0.5e-3: 0.1, 1e-3: 0.35, 2e-3: 0.8}),
    (Sieve(sizes=[0.25e-3, 0.5e-3, 1e-3, 2e-3, 4e-3], passing=[0.0, 0.1, 0.35, 0.8, 1.0], interpolation="linear"),
     {0.5e-3: 0.1, 1e-3: 0.35, 2e-3: 0.8, 3e-3: 0.9}),
    (Uniform(1e-3, 3e-3, basis="mass"), {1.5e-3: 0.25, 2e-3: 0.5, 2.5e-3: 0.75}),
    (LogNormal(1e-3, 0.5, basis="mass"),
     {s: float(truncated(stats.lognorm(0.5, scale=1e-3).cdf, 1e-3 * math.exp(-1.5), 1e-3 * math.exp(1.5))(s))
      for s in (0.6e-3, 1e-3, 2e-3)}),
    (Normal(2e-3, 0.5e-3, basis="mass"),
     {s: float(truncated(stats.norm(2e-3, 0.5e-3).cdf, 0.5e-3, 3.5e-3)(s)) for s in (1.5e-3, 2e-3, 2.5e-3)}),
]


@pytest.mark.parametrize("dist, passing", MASS_CASES, ids=["sieve", "sieve-linear", "uniform", "lognormal", "normal"])
def test_mass_based_curves_are_reproduced_by_particles_drawn_by_number(dist, passing):
    """A distribution by mass: the particles are drawn by number (weighted by d^-3), and the mass
    of the sample passing each size reproduces the given curve (the sieve table itself, or
    scipy's CDF) within 4 standard errors.  Drawing the sizes from the mass curve directly fails
    the same check by far: the test sees the d^-3 weighting."""
    d = dist.sample_diameters(100_000, seed=8)
    sizes = sorted(passing)
    for s, (p, se) in zip(sizes, mass_passing(d, sizes)):
        assert abs(p - passing[s]) < 4 * se, (s, p, passing[s], se)
        assert dist.mass_cdf(s) == pytest.approx(passing[s], abs=1e-12)
    u = np.random.default_rng(8).random(100_000)
    grid = np.linspace(dist.d_min, dist.d_max, 20001)
    naive = np.interp(u, dist.mass_cdf(grid), grid)            # the wrong way: sizes from the mass curve
    worst = max(abs(p - passing[s]) / se for s, (p, se) in zip(sizes, mass_passing(naive, sizes)))
    assert worst > 10


def test_number_cdf_of_a_sieve_curve():
    """The number CDF of a mass-based sieve curve, integrated here from the table (mass density per
    d in a class ``(P_k+1 - P_k) / (ln(d_k+1 / d_k) d)``, number density that over ``d^3``) by
    quadrature: the class's closed form agrees and the sample passes a KS test against it."""
    d_k, p_k = SIEVE.sizes, SIEVE.passing

    def number_density(x):
        k = min(np.searchsorted(d_k, x, side="right") - 1, len(d_k) - 2)
        return (p_k[k + 1] - p_k[k]) / math.log(d_k[k + 1] / d_k[k]) / x ** 4

    total = sum(integrate.quad(number_density, d_k[k], d_k[k + 1], epsrel=1e-12)[0] for k in range(len(d_k) - 1))

    def cdf(x):
        x = float(x)
        parts = [integrate.quad(number_density, d_k[k], min(x, d_k[k + 1]), epsrel=1e-12)[0]
                 for k in range(len(d_k) - 1) if d_k[k] < x]
        return sum(parts) / total

    for x in (0.3e-3, 0.5e-3, 0.9e-3, 2.5e-3):
        assert SIEVE.number_cdf(x) == pytest.approx(cdf(x), rel=1e-9)
    d = SIEVE.sample_diameters(5000, seed=2)
    assert stats.kstest(d, np.vectorize(cdf)).pvalue > ALPHA


def test_bad_distributions():
    with pytest.raises(cl.InputError, match="give d_min > 0"):
        Normal(1e-3, 0.5e-3)
    with pytest.raises(cl.InputError, match="not percent"):
        Sieve([1e-3, 2e-3], [0, 100])
    with pytest.raises(cl.InputError, match="rise from 0"):
        Sieve([1e-3, 2e-3, 3e-3], [0.1, 0.5, 1.0])
    with pytest.raises(cl.InputError, match="basis must be"):
        Uniform(1e-3, 2e-3, basis="volume")
    with pytest.raises(cl.InputError, match="d_max must exceed d_min"):
        Uniform(2e-3, 1e-3)


# ------------------------------------------------------------------------------------------------ fill
def _check_packing(positions, radii, region, dimension=3):
    """No two particles overlap; every particle lies inside the region (its exact volume fraction
    inside is 1)."""
    if len(radii) > 1:
        pairs = cKDTree(positions).query_pairs(2 * radii.max(), output_type="ndarray")
        gap = np.linalg.norm(positions[pairs[:, 0]] - positions[pairs[:, 1]], axis=1) - radii[pairs].sum(axis=1)
        assert gap.min() >= -1e-12 * radii.max()
    np.testing.assert_array_equal(fraction_inside(region, positions, radii, dimension=dimension), 1.0)


def test_fill_a_box_from_a_lognormal_distribution(glass):
    """``scene.fill`` at packing fraction 0.3: no overlap, all inside, the packing fraction measured
    with the exact region volumes is the requested one within half the largest particle's volume,
    the radii pass a KS test against the distribution (scipy's truncated log-normal), the same
    seed gives the same scene and another seed another."""
    box = regions.box((0, 0, 0), (0.02, 0.015, 0.01))
    dist = LogNormal(1e-3, 0.3)
    scene = cl.Scene()
    idx = scene.fill(box, dist, glass, packing_fraction=0.3, seed=5)
    model, state = scene.finalize()
    pos, radii = state.positions, model.radius
    assert len(idx) == len(radii) > 500
    _check_packing(pos, radii, box)
    volume = region_volume(box)
    measured = np.sum(fraction_inside(box, pos, radii) * 4 / 3 * np.pi * radii ** 3) / volume
    assert abs(measured - 0.3) <= 0.5 * 4 / 3 * np.pi * radii.max() ** 3 / volume
    ref = truncated(stats.lognorm(0.3, scale=1e-3).cdf, 1e-3 * math.exp(-0.9), 1e-3 * math.exp(0.9))
    assert stats.kstest(2 * radii, ref).pvalue > ALPHA
    again = cl.Scene()
    again.fill(box, dist, glass, packing_fraction=0.3, seed=5)
    m2, s2 = again.finalize()
    np.testing.assert_array_equal(s2.positions, pos)
    np.testing.assert_array_equal(m2.radius, radii)
    other = cl.Scene()
    other.fill(box, dist, glass, packing_fraction=0.3, seed=6)
    assert not np.array_equal(other.finalize()[1].positions[:10], pos[:10])


def test_fill_cylinders_spheres_and_disks(glass):
    """Tilted cylinder and sphere regions by count, and disks in a 2-D scene by area fraction: no
    overlap, all inside; a cylinder filled to 0.25 measures 0.25 exactly up to the last particle."""
    dist = Uniform(1e-3, 2e-3)
    for region in (regions.cylinder((0, 0, 0), 6e-3, 20e-3, axis=(1, 1, 1)), regions.sphere((1e-3, 0, 0), 8e-3)):
        scene = cl.Scene()
        scene.fill(region, dist, glass, count=150, seed=1)
        model, state = scene.finalize()
        assert len(model.radius) == 150
        _check_packing(state.positions, model.radius, region)
    cyl = regions.cylinder((0, 0, 0), 8e-3, 12e-3)
    scene = cl.Scene()
    scene.fill(cyl, dist, glass, packing_fraction=0.25, seed=2)
    model, state = scene.finalize()
    v = 4 / 3 * np.pi * model.radius ** 3
    assert abs(np.sum(fraction_inside(cyl, state.positions, model.radius) * v) / region_volume(cyl) - 0.25) <= \
        0.5 * v.max() / region_volume(cyl)
    disk = regions.cylinder((0.01, 0.01, 0), 0.01, 1e-3)
    flat = cl.Scene(dimension=2, thickness=1e-3)
    flat.fill(disk, dist, glass, packing_fraction=0.45, seed=3, velocity=(0.0, -0.1))
    model, state = flat.finalize()
    _check_packing(state.positions, model.radius, disk, dimension=2)
    area = np.pi * model.radius ** 2
    assert abs(area.sum() / (np.pi * 0.01 ** 2) - 0.45) <= 0.5 * area.max() / (np.pi * 0.01 ** 2)
    assert np.all(state.velocities == [0.0, -0.1, 0.0]) and np.all(state.positions[:, 2] == 0.0)


def test_fill_refuses_an_unreachable_fraction_and_adds_nothing(glass):
    """Random sequential addition of equal spheres jams near 0.30-0.38: asking for 0.45 raises an
    error that says how far it got and what to do, and leaves the scene as it was."""
    scene = cl.Scene()
    scene.add_sphere(position=(1, 1, 1), radius=1e-3, material=glass)
    box = regions.box((0, 0, 0), (0.01, 0.01, 0.01))
    with pytest.raises(cl.InputError, match=r"random sequential addition placed \d+ of \d+ .*method='relax'"):
        scene.fill(box, Uniform(1e-3, 1.001e-3), cl.Material(density=1.0, young=1e6, poisson=0.2),
                   packing_fraction=0.45, seed=1, max_attempts=2000)
    assert scene.n_bodies == 1 and len(scene.materials) == 1
    with pytest.raises(cl.InputError, match="densest packing"):
        scene.fill(box, Uniform(1e-3, 2e-3), glass, packing_fraction=0.8)
    with pytest.raises(cl.InputError, match="does not fit"):
        scene.fill(box, Uniform(12e-3, 14e-3), glass, count=1)       # radius 6-7 mm in 10 mm
    with pytest.raises(cl.InputError, match="exactly one of packing_fraction"):
        scene.fill(box, Uniform(1e-3, 2e-3), glass)


def test_fill_by_relaxation_reaches_half(glass):
    """``method="relax"`` fills a box to 0.5: overlaps and protrusions below 1e-3 of the radius."""
    box = regions.box((0, 0, 0), (0.012, 0.012, 0.012))
    scene = cl.Scene()
    scene.fill(box, LogNormal(1.2e-3, 0.25), glass, packing_fraction=0.5, seed=4, method="relax")
    model, state = scene.finalize()
    pos, radii = state.positions, model.radius
    pairs = cKDTree(pos).query_pairs(2 * radii.max(), output_type="ndarray")
    overlap = radii[pairs].sum(axis=1) - np.linalg.norm(pos[pairs[:, 0]] - pos[pairs[:, 1]], axis=1)
    assert np.max(overlap / radii[pairs].min(axis=1)) <= 1e-3 * (1 + 1e-9)
    assert np.max(box(pos) + radii) <= 1e-3 * radii.min()
    assert np.sum(4 / 3 * np.pi * radii ** 3) / region_volume(box) == pytest.approx(0.5, abs=0.01)
