"""Exact volumes of spheres (areas of disks) inside measurement regions, against closed forms and
independent quadrature."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

import contactlab as cl
from contactlab.measure import fraction_inside, region_volume
from contactlab.packing import regions

BALL = 4.0 / 3.0 * math.pi


def cap(R, h):
    """Volume of a spherical cap of height h on a sphere of radius R (closed form)."""
    return math.pi * h * h * (3.0 * R - h) / 3.0


def segment(R, h):
    """Area of a circular segment of height h on a circle of radius R (closed form)."""
    return R * R * math.acos((R - h) / R) - (R - h) * math.sqrt(2.0 * R * h - h * h)


def volume_in(region, centre, r, dimension=3):
    f = fraction_inside(region, np.asarray(centre, dtype=float)[None, :], [r], dimension=dimension)[0]
    return f * (BALL * r ** 3 if dimension == 3 else math.pi * r * r)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("h", [1e-9, 0.05, 0.3, 1.0, 1.7, 2.0 - 1e-9])
def test_a_sphere_cut_by_a_box_face_is_the_analytic_cap(axis, h):
    """The issue's validation: a sphere cut by one face of a box holds exactly the cap
    ``pi h^2 (3R - h) / 3`` (closed form), for caps from a sliver to nearly the whole sphere, on
    every axis and on both sides of the face."""
    R = 1.3
    centre = np.array([0.2, -0.1, 0.4])
    lo, hi = centre - 10.0, centre + 10.0
    hi_cut = hi.copy()
    hi_cut[axis] = centre[axis] - R + h          # the sphere pokes into the box from above by h
    below = volume_in(regions.box(lo, hi_cut), centre, R)
    lo_cut = lo.copy()
    lo_cut[axis] = centre[axis] + R - h
    above = volume_in(regions.box(lo_cut, hi), centre, R)
    assert below == pytest.approx(cap(R, h), rel=1e-12, abs=1e-13 * BALL * R ** 3)
    assert above == pytest.approx(cap(R, h), rel=1e-12, abs=1e-13 * BALL * R ** 3)


def test_eight_boxes_around_a_sphere_hold_it_whole():
    """Any corner point cuts space into eight boxes whose parts of the sphere add up to the whole
    sphere (a partition), for corners inside, on and outside the sphere."""
    rng = np.random.default_rng(4)
    R = 1.0
    for _ in range(15):
        corner = rng.uniform(-1.2, 1.2, 3)
        total = 0.0
        for bits in range(8):
            side = [(bits >> k) & 1 for k in range(3)]
            lo = [corner[k] if side[k] else -5.0 for k in range(3)]
            hi = [5.0 if side[k] else corner[k] for k in range(3)]
            total += volume_in(regions.box(lo, hi), (0, 0, 0), R)
        assert total == pytest.approx(BALL, rel=1e-13)


def test_sphere_in_a_box_corner_against_quadrature():
    """A sphere reaching over an edge and a corner of a box: the volume equals the double integral
    of the sphere's height over the box's footprint (scipy dblquad, independent of the closed form)."""
    R = 1.0
    rng = np.random.default_rng(7)
    for _ in range(3):
        lo = rng.uniform(-0.9, 0.2, 3)
        hi = lo + rng.uniform(0.5, 1.5, 3)

        def height(y, x):
            h2 = R * R - x * x - y * y
            if h2 <= 0.0:
                return 0.0
            h = math.sqrt(h2)
            return max(0.0, min(h, hi[2]) - max(-h, lo[2]))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, _ = integrate.dblquad(height, lo[0], hi[0], lo[1], hi[1], epsabs=1e-10, epsrel=1e-9)
        assert volume_in(regions.box(lo, hi), (0, 0, 0), R) == pytest.approx(ref, rel=1e-7, abs=1e-9)


def test_sphere_region_is_the_lens_of_two_caps():
    """Sphere in a sphere region: the lens equals the sum of the two caps cut by the plane of the
    circles' intersection, ``x = (d^2 + R^2 - r^2) / (2d)`` from the region's centre (closed form)."""
    r, R = 0.7, 1.1
    for d in (0.41, 0.5, 1.0, 1.5, 1.79):
        x = (d * d + R * R - r * r) / (2 * d)
        expected = cap(R, R - x) + cap(r, r - (d - x))
        got = volume_in(regions.sphere((0, 0, 0), R), (d, 0, 0), r)
        assert got == pytest.approx(expected, rel=1e-12)
    assert volume_in(regions.sphere((0, 0, 0), R), (0.3, 0, 0), r) == pytest.approx(BALL * r ** 3, rel=1e-15)
    assert volume_in(regions.sphere((0, 0, 0), R), (1.81, 0, 0), r) == 0.0


def test_sphere_cut_by_a_cylinder_cap_and_axis():
    """Cylinder regions: a sphere cut by one flat end holds the cap (closed form), and a sphere on
    the axis of a long cylinder thinner than itself holds ``4pi/3 (r^3 - (r^2 - R_c^2)^(3/2))``
    (the sphere minus the two caps beyond the cylinder: closed form), for any axis direction."""
    r = 1.0
    for axis in ((0, 0, 1), (1, 2, -0.5)):
        a = np.array(axis, dtype=float) / np.linalg.norm(axis)
        cyl = regions.cylinder(centre=(0, 0, 0), radius=5.0, height=4.0, axis=axis)
        for h in (0.1, 0.9, 1.6):
            centre = (2.0 + r - h) * a
            assert volume_in(cyl, centre, r) == pytest.approx(cap(r, h), rel=1e-12)
        for rc in (0.2, 0.6, 0.95):
            thin = regions.cylinder(centre=(0, 0, 0), radius=rc, height=10.0, axis=axis)
            expected = BALL * (r ** 3 - (r * r - rc * rc) ** 1.5)
            assert volume_in(thin, 0.3 * a, r) == pytest.approx(expected, rel=1e-12)


def test_sphere_cylinder_against_adaptive_quadrature():
    """Off-axis spheres cut by the mantle and the ends of a cylinder: the 48-point quadrature of the
    module agrees with scipy's adaptive quadrature of the same lens areas (the reference's own
    accuracy is ~1e-13) to 1e-11 of the sphere's volume."""
    rng = np.random.default_rng(11)
    r = 1.0

    def lens(rho, rc, d):
        if rho <= 0.0 or d >= rho + rc:
            return 0.0
        if d <= abs(rc - rho):
            return math.pi * min(rho, rc) ** 2
        c1 = min(1.0, max(-1.0, (d * d + rho * rho - rc * rc) / (2 * d * rho)))
        c2 = min(1.0, max(-1.0, (d * d + rc * rc - rho * rho) / (2 * d * rc)))
        k = (-d + rho + rc) * (d + rho - rc) * (d - rho + rc) * (d + rho + rc)
        return rho * rho * math.acos(c1) + rc * rc * math.acos(c2) - 0.5 * math.sqrt(max(0.0, k))

    for _ in range(60):
        d, rc, zc = rng.uniform(0, 2.5), rng.uniform(0.1, 2.5), rng.uniform(-1.4, 1.4)
        height = rng.choice([2.0, 10.0])
        z0, z1 = max(-height / 2, zc - r), min(height / 2, zc + r)
        breaks = [zc + s * math.sqrt(r * r - b * b) for b in (abs(rc - d), rc + d) if b < r for s in (-1, 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = integrate.quad(lambda z: lens(math.sqrt(max(0.0, r * r - (z - zc) ** 2)), rc, d), z0, z1,
                                 points=[b for b in breaks + [zc] if z0 < b < z1] or None, epsabs=1e-15,
                                 epsrel=1e-14, limit=400)[0] if z1 > z0 else 0.0
        got = volume_in(regions.cylinder((0, 0, 0), rc, height), (d, 0, zc), r)
        assert abs(got - ref) < 1e-11 * BALL


@pytest.mark.parametrize("h", [0.01, 0.4, 1.0, 1.9])
def test_disk_areas_in_2d(h):
    """2-D: a disk cut by a rectangle's side holds the circular segment (closed form); a disk on a
    circle region's rim holds the lens of two segments; four quadrants around a disk hold it whole."""
    R = 1.0
    rect = regions.box((-5, -5, -1), (-1 + h, 5, 1))
    assert volume_in(rect, (0, 0, 0), R, dimension=2) == pytest.approx(segment(R, h), rel=1e-12)
    big = 1.5
    d = big + R - h
    x = (d * d + big * big - R * R) / (2 * d)
    lens = segment(big, big - x) + segment(R, R - (d - x))
    assert volume_in(regions.cylinder((0, 0, 0), big, 1.0), (d, 0, 0), R, dimension=2) == pytest.approx(lens, rel=1e-12)
    corner = (0.3 - h / 4, -0.2)
    parts = sum(volume_in(regions.box(lo, hi), (0, 0, 0), R, dimension=2)
                for lo, hi in [((-5, -5, -1), (corner[0], corner[1], 1)), ((corner[0], -5, -1), (5, corner[1], 1)),
                               ((-5, corner[1], -1), (corner[0], 5, 1)), ((corner[0], corner[1], -1), (5, 5, 1))])
    assert parts == pytest.approx(math.pi, rel=1e-13)


def test_region_volumes():
    """Closed forms: box, ball, cylinder; in 2-D the section's area times the thickness."""
    assert region_volume(regions.box((0, 0, 0), (1, 2, 3))) == pytest.approx(6.0)
    assert region_volume(regions.sphere((0, 0, 0), 2.0)) == pytest.approx(BALL * 8)
    assert region_volume(regions.cylinder((0, 0, 0), 2.0, 3.0, axis=(1, 1, 1))) == pytest.approx(math.pi * 12)
    assert region_volume(regions.box((0, 0, -1), (1, 2, 3)), dimension=2, thickness=0.1) == pytest.approx(0.2)
    assert region_volume(regions.sphere((0, 0, 0.6), 1.0), dimension=2, thickness=1.0) == pytest.approx(math.pi * 0.64)


def test_regions_without_an_exact_volume_are_refused():
    ring = regions.torus((0, 0, 0), 1.0, 0.2)
    with pytest.raises(cl.InputError, match="exact volume"):
        fraction_inside(ring, np.zeros((1, 3)), [0.1])
    with pytest.raises(cl.InputError, match="axis along z"):
        fraction_inside(regions.cylinder((0, 0, 0), 1.0, 1.0, axis=(1, 0, 0)), np.zeros((1, 3)), [0.1], dimension=2)
