"""Level-set static relaxation (spec 004) and its packing tools, ``contactlab.packing``.

Independent references:

* containers (ball, torus, box with a hole, ellipsoid): after the relaxation the distance from
  every centre to the container surface is computed here from the geometry (closed forms, and for
  the ellipsoid the nearest-point equation of Eberly, "Distance from a point to an ellipse, an
  ellipsoid, or a hyperellipsoid", solved by bisection), never with the region's own function;
* overlaps from all pair distances (``scipy.spatial.distance.pdist``, not the k-d tree used inside);
* the single-sphere move against the closed form for a plane (the centre ends one radius inside)
  and against the notes' formula evaluated here from ``d0`` and ``d1``;
* the filled volume fraction against the analytic torus volume ``2 pi^2 R a^2``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import pdist

import contactlab as cl
from contactlab.packing import fill_region, levelset_move, measure, regions, relax_into

RADIUS = 1e-3  # m


def pair_overlap_ratio(pos, radii):
    """Largest overlap of two spheres over the smaller radius, from all N (N-1) / 2 distances."""
    dist = pdist(pos)
    n = len(radii)
    i, j = np.triu_indices(n, 1)
    ratio = (radii[i] + radii[j] - dist) / np.minimum(radii[i], radii[j])
    return max(float(ratio.max()), 0.0)


def torus_depth(pos, centre, major, minor):
    """Exact distance (m) from each centre to the surface of a torus with axis z, > 0 inside."""
    d = pos - np.asarray(centre)
    rho = np.hypot(d[:, 0], d[:, 1])
    return minor - np.hypot(rho - major, d[:, 2])


def ellipsoid_distance(y, semi_axes):
    """Distance from interior points y (N, 3) to the surface of the ellipsoid sum (x_i / e_i)^2 = 1.

    Eberly's construction: the nearest surface point is x_i = e_i^2 y_i / (t + e_i^2) with t the
    unique root in (-e_min^2, inf) of sum (e_i y_i / (t + e_i^2))^2 = 1; found by bisection."""
    e2 = np.asarray(semi_axes, dtype=float) ** 2
    y = np.abs(y)
    lo = np.full(len(y), -e2.min() * (1 - 1e-15))
    hi = np.full(len(y), float(np.sqrt(e2).max() * np.linalg.norm(y, axis=1).max()))
    for _ in range(200):
        t = 0.5 * (lo + hi)
        g = np.sum((np.sqrt(e2) * y / (t[:, None] + e2)) ** 2, axis=1) - 1.0
        lo = np.where(g > 0, t, lo)
        hi = np.where(g > 0, hi, t)
    x = e2 * y / (t[:, None] + e2)
    return np.linalg.norm(y - x, axis=1)


def scatter(rng, n, half_width, radius=RADIUS, spread=0.2):
    pos = rng.uniform(-half_width, half_width, (n, 3))
    radii = radius * (1 + spread * rng.uniform(-1, 1, n))
    return pos, radii


# ---------------------------------------------------------------------------- single-sphere move
def test_single_move_on_a_plane_is_the_closed_form():
    """Plane with outward normal m: a sphere whose surface pokes out (height h > -r of its centre
    above the plane) ends with its centre at height -r, one radius inside; one further inside stays."""
    m = np.array([1.0, 2.0, -2.0]) / 3.0
    point = np.array([0.01, -0.02, 0.005])
    plane = regions.half_space(point, -m)            # normal into the region
    r = np.array([1e-3, 2e-3, 1e-3, 1e-3, 1.5e-3, 1e-3])
    h = np.array([0.05, 1.2e-3, 0.0, -0.4e-3, -1.5e-3, -3e-3])   # centre heights along m, m
    tangential = np.cross(m, [0.0, 0.0, 1.0]) * np.linspace(-0.01, 0.01, len(h))[:, None]
    pos = point + h[:, None] * m + tangential
    dx = levelset_move(plane, pos, r)
    expected = np.where((h > -r)[:, None], -(h + r)[:, None] * m, 0.0)
    np.testing.assert_allclose(dx, expected, rtol=0, atol=1e-15)
    # applied: the surface touches the plane from inside (or is left alone)
    new_h = (pos + dx - point) @ m
    np.testing.assert_allclose(new_h, np.where(h > -r, -r, h), rtol=0, atol=1e-15)


@pytest.mark.parametrize("with_gradient", [True, False])
def test_single_move_is_the_notes_formula_for_a_curved_level_set(with_gradient):
    """f = exp(s / L) - 1 of the plane distance s: not a distance, so the linear interpolation is
    inexact; the move must still equal dx = -(1 + |d0| / (d0 - d1)) r n with d0 = f(x0),
    d1 = f(x0 - sign(d0) r n), n the unit gradient, and 0 where d0 < 0 and d1 < 0."""
    m = np.array([0.0, 0.6, 0.8])
    L = 2e-3

    def f(p):
        return np.expm1((p @ m) / L)

    def grad(p):
        return (np.exp((p @ m) / L) / L)[:, None] * m

    region = regions.function(f, gradient=grad if with_gradient else None)
    r = np.full(7, 1e-3)
    s = np.array([3e-3, 1e-3, 0.2e-3, -0.3e-3, -0.9e-3, -1e-3 - 1e-6, -4e-3])
    pos = s[:, None] * m + np.array([0.003, 0.0008, -0.0006])      # offset perpendicular to m
    d0 = f(pos)
    sign = np.where(d0 >= 0, 1.0, -1.0)
    d1 = f(pos - (sign * r)[:, None] * m)
    notes = -(1 + np.abs(d0) / (d0 - d1))[:, None] * r[:, None] * m
    notes[(d0 < 0) & (d1 < 0)] = 0.0
    dx = levelset_move(region, pos, r)
    # analytic gradient: round-off only; central differences: direction error ~ (step / L)^2
    atol = 1e-15 if with_gradient else 1e-12
    np.testing.assert_allclose(dx, notes, rtol=0, atol=atol)
    assert np.all(np.linalg.norm(dx[:4], axis=1) > 0) and np.all(dx[5:] == 0)


# ---------------------------------------------------------------------------- containers
def test_spheres_in_and_around_a_ball_end_inside_without_overlaps():
    rng = np.random.default_rng(3)
    centre, R = np.array([0.002, -0.001, 0.05]), 0.015
    pos, radii = scatter(rng, 300, 0.025)
    pos += centre
    outside_before = np.linalg.norm(pos - centre, axis=1) + radii > R
    assert outside_before.sum() > 150                # many start (partly) outside
    res = relax_into(regions.sphere(centre, R), pos, radii, seed=1)
    assert res.converged and res.iterations > 0
    depth = R - np.linalg.norm(res.positions - centre, axis=1)      # exact distance to the surface
    # exact signed distance: the last move puts every sphere at most touching (round-off only)
    assert np.all(depth >= radii * (1 - 1e-12)), (depth - radii).min()
    assert pair_overlap_ratio(res.positions, radii) <= 1e-3
    assert res.max_violation <= 1e-12 * RADIUS
    assert res.max_overlap == pytest.approx(pair_overlap_ratio(res.positions, radii), rel=1e-9, abs=1e-15)


def test_spheres_in_and_around_a_torus_end_inside_without_overlaps():
    rng = np.random.default_rng(5)
    centre, R, a = (0.0, 0.0, 0.01), 0.03, 0.008
    ring = regions.torus(centre, R, a)
    pos, radii = scatter(rng, 500, 0.045)
    pos[:, 2] = 0.01 + rng.uniform(-0.015, 0.015, len(pos))
    pos[:3] = [(0.0, 0.0, 0.01), (0.0, 0.0, 0.03), (0.0, 0.0, -0.01)]   # on the axis: the radial direction is arbitrary
    assert (torus_depth(pos, centre, R, a) < radii).sum() > 400
    res = relax_into(ring, pos, radii, seed=2)
    assert res.converged, res
    depth = torus_depth(res.positions, centre, R, a)
    assert np.all(depth >= radii * (1 - 1e-12)), (depth - radii).min()
    assert pair_overlap_ratio(res.positions, radii) <= 1e-3


def test_torus_with_a_tilted_axis_matches_the_rotated_geometry():
    """The torus region with axis n is the z-axis torus rotated: compare the values point by point."""
    rng = np.random.default_rng(0)
    axis = np.array([1.0, -2.0, 2.0]) / 3.0
    e1 = np.cross(axis, [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    rot = np.stack([e1, e2, axis], axis=1)          # columns: local x, y, z
    local = rng.uniform(-0.05, 0.05, (1000, 3))
    c = np.array([0.1, 0.2, -0.3])
    world = c + local @ rot.T
    np.testing.assert_allclose(regions.torus(c, 0.03, 0.01, axis)(world), -torus_depth(local, (0, 0, 0), 0.03, 0.01),
                               rtol=0, atol=1e-15)


def test_box_with_a_cylindrical_hole_and_the_combinators():
    """difference(box, cylinder): spheres end inside the box and outside the hole (coordinates and
    radial distance checked directly); the operator forms give the same region."""
    rng = np.random.default_rng(7)
    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([0.03, 0.02, 0.01])
    hole_c, hole_r = np.array([0.015, 0.01, 0.005]), 0.005
    region = regions.difference(regions.box(lo, hi), regions.cylinder(hole_c, hole_r, 0.02, axis=(0, 0, 1)))
    pos = rng.uniform(lo - 0.004, hi + 0.004, (150, 3))
    radii = np.full(150, RADIUS)
    tol = 1e-3
    res = relax_into(region, pos, radii, seed=0, iterations=400, tolerance=tol)
    assert res.converged, res
    p = res.positions
    # along an edge or in a corner a sweep moves a sphere off one face only, so the last overlap
    # push may leave it poking out of another face: by at most the tolerance, the promise
    assert np.all(p - radii[:, None] >= lo - tol * RADIUS) and np.all(p + radii[:, None] <= hi + tol * RADIUS)
    assert np.all(np.hypot(p[:, 0] - hole_c[0], p[:, 1] - hole_c[1]) >= hole_r + RADIUS - tol * RADIUS)
    assert pair_overlap_ratio(p, radii) <= 1e-3
    same = regions.box(lo, hi) - regions.cylinder(hole_c, hole_r, 0.02)
    np.testing.assert_array_equal(same(pos), region(pos))
    inter = regions.box(lo, hi) & ~regions.cylinder(hole_c, hole_r, 0.02)
    np.testing.assert_array_equal(inter(pos), region(pos))
    two = regions.union(regions.sphere((0, 0, 0), 1.0), regions.sphere((3, 0, 0), 1.0))
    np.testing.assert_allclose(two([[0.5, 0, 0], [2.0, 0, 0], [1.5, 0, 0]]), [-0.5, 0.0, 0.5])


def test_primitives_are_signed_distances():
    """Values at points whose distance is known in closed form, and gradients against central
    differences of the values."""
    b = regions.box((0, 0, 0), (2, 4, 6))
    np.testing.assert_allclose(b([[1, 2, 3], [0.5, 2, 3], [3, 2, 3], [3, 5, 7], [1, 2, 8]]),
                               [-1.0, -0.5, 1.0, math.sqrt(3.0), 2.0])
    cyl = regions.cylinder((0, 0, 0), 1.0, 4.0, axis=(1, 0, 0))
    np.testing.assert_allclose(cyl([[0, 0, 0], [1.9, 0, 0], [0, 3, 0], [5, 0, 4], [0, 0.3, 0.4], [-2, 0.6, 0.8]]),
                               [-1.0, -0.1, 2.0, math.sqrt(18.0), -0.5, 0.0], atol=1e-15)
    rng = np.random.default_rng(1)
    pts = rng.uniform(-3, 3, (400, 3))
    h = 1e-6
    for region in (b, cyl, regions.torus((0.1, 0, 0), 1.5, 0.5, (0, 1, 1)), regions.sphere((0, 0, 1), 1.0)):
        _, g = region.evaluate(pts)
        fd = np.stack([(region(pts + h * e) - region(pts - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
        # away from the kinks of the distance (its gradient jumps there), both agree
        smooth = np.abs(np.linalg.norm(fd, axis=1) - 1) < 1e-6
        assert smooth.mean() > 0.9
        np.testing.assert_allclose(g[smooth], fd[smooth], atol=1e-6)


def peanut_depth(y, c1, c2, R):
    """Exact distance (m) from points y (N, 3) inside the union of two equal balls (centres c1, c2,
    radius R, overlapping) to its surface.  The surface is the part of each sphere outside the
    other ball; on a sphere the distance from y has one minimum (the radial projection), so the
    nearest point of a piece is that projection when it lies on the piece, else on the circle
    where the spheres meet."""
    c1, c2 = np.asarray(c1, float), np.asarray(c2, float)
    axis = (c2 - c1) / np.linalg.norm(c2 - c1)
    half = 0.5 * np.linalg.norm(c2 - c1)
    ring_centre, ring_radius = 0.5 * (c1 + c2), math.sqrt(R**2 - half**2)
    # distance to the circle of intersection
    d = y - ring_centre
    z = d @ axis
    rho = np.linalg.norm(d - z[:, None] * axis, axis=1)
    to_ring = np.hypot(rho - ring_radius, z)
    best = to_ring
    for a, b in ((c1, c2), (c2, c1)):
        v = y - a
        foot = a + R * v / np.linalg.norm(v, axis=1)[:, None]          # radial projection on sphere a
        on_piece = np.linalg.norm(foot - b, axis=1) >= R
        best = np.where(on_piece, np.minimum(best, R - np.linalg.norm(v, axis=1)), best)
    return best


def test_union_of_two_balls_keeps_spheres_out_of_the_waist():
    """min(f1, f2) is not the distance inside a union: near the waist a sphere can poke out of the
    groove although the point one radius along the gradient is inside the other ball.  The refined
    inside check catches this; the exact distance to the peanut surface is the reference."""
    c1, c2, R = (-0.008, 0.0, 0.0), (0.008, 0.0, 0.0), 0.011
    peanut = regions.union(regions.sphere(c1, R), regions.sphere(c2, R))
    assert not peanut.exact_inside
    rng = np.random.default_rng(12)
    pos, radii = scatter(rng, 300, 0.02, radius=1.2e-3)
    pos[:100, 0] = rng.uniform(-0.002, 0.002, 100)                  # many near the waist
    res = relax_into(peanut, pos, radii, seed=0, iterations=400)
    assert res.converged, res
    gap = peanut_depth(res.positions, c1, c2, R) - radii
    assert np.all(gap >= -1e-3 * radii), (gap / radii).min()
    assert pair_overlap_ratio(res.positions, radii) <= 1e-3


def l_prism_depth(p, corners, height):
    """Exact distance (m) from points p (N, 3) inside a prism (polygon ``corners`` in the xy plane,
    0 <= z <= height) to its surface: the nearest of the side segments and the two caps."""
    xy = p[:, :2]
    best = np.minimum(p[:, 2], height - p[:, 2])
    for a, b in zip(corners, corners[1:] + corners[:1]):
        a, b = np.asarray(a, float), np.asarray(b, float)
        t = np.clip((xy - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(xy - (a + t[:, None] * (b - a)), axis=1))
    return best


def test_l_shaped_union_of_two_boxes_keeps_spheres_off_the_reentrant_edge():
    """An L from two boxes: near the re-entrant edge the gradient of min(f1, f2) at the centre
    points to a face hidden inside the other box.  Reference: the exact distance to the L prism."""
    a = regions.box((0, 0, 0), (0.02, 0.01, 0.01))
    b = regions.box((0, 0, 0), (0.01, 0.02, 0.01))
    ell = a | b
    rng = np.random.default_rng(0)
    pos = rng.uniform((-0.003, -0.003, -0.003), (0.023, 0.023, 0.013), (150, 3))
    pos[:60, :2] = 0.01 + rng.uniform(-0.0015, 0.0015, (60, 2))      # many at the re-entrant edge
    radii = np.full(150, RADIUS)
    res = relax_into(ell, pos, radii, seed=0, iterations=400)
    assert res.converged, res
    p = res.positions
    in_l = (p[:, 0] >= 0) & (p[:, 1] >= 0) & ((p[:, 0] <= 0.01) | (p[:, 1] <= 0.01))
    assert in_l.all()
    gap = l_prism_depth(p, [(0, 0), (0.02, 0), (0.02, 0.01), (0.01, 0.01), (0.01, 0.02), (0, 0.02)], 0.01) - radii
    assert np.all(gap >= -1e-3 * radii), (gap / radii).min()
    assert pair_overlap_ratio(p, radii) <= 1e-3


def test_peanut_reference_distance():
    """The reference itself: on the axis and in the waist plane the distance is known in closed form."""
    c1, c2, R = (-0.8, 0.0, 0.0), (0.8, 0.0, 0.0), 1.0
    y = np.array([[0.0, 0.0, 0.0], [0.0, 0.3, 0.0], [-1.0, 0.0, 0.0], [1.5, 0.1, 0.0]])
    ring = math.sqrt(1.0 - 0.8**2)
    expected = [ring, ring - 0.3, 0.8, R - math.hypot(0.7, 0.1)]
    np.testing.assert_allclose(peanut_depth(y, c1, c2, R), expected, atol=1e-15)


def test_user_callable_without_gradient_fills_an_ellipsoid():
    """A plain function (not a distance, no gradient): x^2/a^2 + y^2/b^2 + z^2/c^2 - 1."""
    semi = np.array([0.02, 0.012, 0.008])

    def ellipsoid(p):
        return np.sum((p / semi) ** 2, axis=1) - 1.0

    rng = np.random.default_rng(11)
    pos, radii = scatter(rng, 200, 0.025)
    res = relax_into(ellipsoid, pos, radii, seed=0, iterations=600)
    assert res.converged, res
    inside = ellipsoid(res.positions) < 0
    assert inside.all()
    gap = ellipsoid_distance(res.positions, semi) - radii          # exact distance to the surface
    # f is not a distance: the inside check looks along a refined direction and the move
    # interpolates a curved f linearly, so the promise is the tolerance, 1e-3 of the radius
    assert np.all(gap >= -1e-3 * radii), (gap / radii).min()
    assert pair_overlap_ratio(res.positions, radii) <= 1e-3


def test_a_sphere_is_exactly_inside_an_ellipsoid_reference():
    """The Eberly reference itself, on a sphere (all semi-axes equal) where the distance is R - |y|."""
    rng = np.random.default_rng(2)
    y = rng.uniform(-0.5, 0.5, (100, 3)) * 0.9
    np.testing.assert_allclose(ellipsoid_distance(y, [1.0, 1.0, 1.0]), 1.0 - np.linalg.norm(y, axis=1), atol=1e-12)


def test_push_out_of_a_ball_with_inside_false_and_invert():
    rng = np.random.default_rng(4)
    centre, R = np.zeros(3), 0.01
    ball = regions.sphere(centre, R)
    pos, radii = scatter(rng, 200, 0.012)
    res = relax_into(ball, pos, radii, inside=False, seed=3, iterations=400)
    assert res.converged, res
    dist = np.linalg.norm(res.positions - centre, axis=1)
    assert np.all(dist - radii >= R * (1 - 1e-12))                  # every sphere entirely outside
    assert pair_overlap_ratio(res.positions, radii) <= 1e-3
    again = relax_into(regions.invert(ball), pos, radii, seed=3, iterations=400)
    np.testing.assert_array_equal(again.positions, res.positions)


def test_boundary_only_without_separation():
    """separate=False: one sweep puts every sphere inside a ball (exact distance), overlaps stay."""
    rng = np.random.default_rng(8)
    pos, radii = scatter(rng, 400, 0.02)
    res = relax_into(regions.sphere((0, 0, 0), 0.01), pos, radii, separate=False)
    assert res.converged and res.iterations == 1
    assert np.all(0.01 - np.linalg.norm(res.positions, axis=1) >= radii * (1 - 1e-12))
    assert res.max_overlap > 0.5


def test_region_too_small_is_reported_not_raised():
    pos = np.array([[0.0, 0.0, 0.0], [0.001, 0.0, 0.0], [0.0, 0.003, 0.0]])
    res = relax_into(regions.sphere((0, 0, 0), 1e-3), pos, 2e-3, iterations=50, seed=0)
    assert not res.converged and res.iterations == 50
    assert np.isfinite(res.max_violation) and res.max_violation > 1e-3   # a 2 mm sphere in a 1 mm ball
    assert np.all(np.isfinite(res.positions))
    # two 1 mm spheres in a 1.2 mm ball: inside, their centres are within 0.2 mm of its centre, so
    # they overlap by at least 2 - 0.4 = 1.6 radii; the last move puts them inside (exact distance)
    res = relax_into(regions.sphere((0, 0, 0), 1.2e-3), pos[:2], 1e-3, iterations=100, seed=0)
    assert not res.converged and res.iterations == 100
    assert res.max_violation <= 1e-12 * 1e-3
    assert res.max_overlap >= 1.6 * (1 - 1e-9)


def test_already_inside_takes_no_sweep_and_is_deterministic():
    rng = np.random.default_rng(9)
    pos, radii = scatter(rng, 300, 0.02)
    a = relax_into(regions.sphere((0, 0, 0), 0.02), pos, radii, seed=5)
    b = relax_into(regions.sphere((0, 0, 0), 0.02), pos, radii, seed=5)
    np.testing.assert_array_equal(a.positions, b.positions)
    c = relax_into(regions.sphere((0, 0, 0), 0.02), a.positions, radii)
    assert c.converged and c.iterations == 0
    np.testing.assert_array_equal(c.positions, a.positions)
    assert measure(regions.sphere((0, 0, 0), 0.02), a.positions, radii) == (c.max_violation, c.max_overlap)


# ---------------------------------------------------------------------------- fill_region
def test_fill_region_reaches_the_volume_fraction_of_a_torus():
    R, a, phi = 0.04, 0.012, 0.35
    centre = (0.0, 0.0, a)
    ring = regions.torus(centre, R, a)
    bounds = ((-R - a, -R - a, 0.0), (R + a, R + a, 2 * a))
    pos, radii, res = fill_region(ring, bounds, 1.2e-3, volume_fraction=phi, radius_spread=0.1, seed=1,
                                  return_result=True)
    assert res.converged, res
    assert np.all((radii >= 1.2e-3 * 0.9) & (radii <= 1.2e-3 * 1.1))
    solid = 4.0 / 3.0 * math.pi * np.sum(radii**3) / (2 * math.pi**2 * R * a**2)   # analytic torus volume
    # Monte Carlo volume: 2e5 points, 44 % of them inside, relative error 0.25 % (1.5 % is 6 sigma)
    assert solid == pytest.approx(phi, rel=0.015)
    depth = torus_depth(pos, centre, R, a)
    assert np.all(depth >= radii * (1 - 1e-12))
    assert pair_overlap_ratio(pos, radii) <= 1e-3
    again = fill_region(ring, bounds, 1.2e-3, volume_fraction=phi, radius_spread=0.1, seed=1)
    np.testing.assert_array_equal(again[0], pos)


def test_fill_region_with_count_keeps_spheres_in_the_bounds_of_an_unbounded_region():
    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([0.02, 0.02, 0.05])
    floor = regions.half_space((0, 0, 0.01), (0, 0, 1))            # z >= 0.01, unbounded
    pos, radii = fill_region(floor, (lo, hi), 1e-3, count=300, seed=2)
    assert pos.shape == (300, 3) and np.all(radii == 1e-3)
    tol = 1e-3                                                       # fill_region's default tolerance
    assert np.all(pos[:, 2] - radii >= 0.01 - tol * radii)
    assert np.all(pos - radii[:, None] >= lo - tol * 1e-3) and np.all(pos + radii[:, None] <= hi + tol * 1e-3)
    assert pair_overlap_ratio(pos, radii) <= 1e-3


def test_fill_region_too_dense_warns_with_numbers():
    with pytest.warns(RuntimeWarning, match=r"not relaxed within 5 sweeps: max overlap"):
        fill_region(regions.sphere((0, 0, 0), 0.01), ((-0.01,) * 3, (0.01,) * 3), 1e-3, volume_fraction=0.5,
                    iterations=5)


# ---------------------------------------------------------------------------- input errors
def test_input_errors():
    ball = regions.sphere((0, 0, 0), 0.01)
    pos = np.zeros((3, 3))
    with pytest.raises(cl.InputError, match=r"positions\[1\] must be finite"):
        relax_into(ball, [[0, 0, 0], [0, math.nan, 0], [0, 0, 0]], 1e-3)
    with pytest.raises(cl.InputError, match=r"positions must have shape \(N, 3\)"):
        relax_into(ball, np.zeros((3, 2)), 1e-3)
    with pytest.raises(cl.InputError, match=r"radii\[2\] must be finite and > 0 m"):
        relax_into(ball, pos, [1e-3, 1e-3, -1e-3])
    with pytest.raises(cl.InputError, match=r"radii\[0\] must be finite and > 0 m"):
        relax_into(ball, pos, 0.0)
    with pytest.raises(cl.InputError, match=r"radii must have shape \(3,\)"):
        relax_into(ball, pos, [1e-3, 1e-3])
    with pytest.raises(cl.InputError,
                       match=r"returned shape \(3, 1\) for 3 points; it must return an array of shape \(3,\)"):
        relax_into(lambda p: p[:, :1], pos, 1e-3)
    with pytest.raises(cl.InputError, match=r"returned nan at point"):
        relax_into(lambda p: np.full(len(p), math.nan), pos, 1e-3)
    with pytest.raises(cl.InputError, match=r"failed on an \(3, 3\) array"):
        relax_into(lambda p: p.missing_attribute, pos, 1e-3)
    with pytest.raises(cl.InputError, match=r"region must be .* got str"):
        relax_into("ball", pos, 1e-3)
    with pytest.raises(cl.InputError, match=r"iterations must be an integer >= 0, got -1"):
        relax_into(ball, pos, 1e-3, iterations=-1)
    with pytest.raises(cl.InputError, match=r"tolerance must be > 0"):
        relax_into(ball, pos, 1e-3, tolerance=0.0)
    with pytest.raises(cl.InputError, match=r"minor_radius must be > 0 m"):
        regions.torus((0, 0, 0), 0.03, -0.01)
    with pytest.raises(cl.InputError, match=r"axis must be a nonzero vector"):
        regions.cylinder((0, 0, 0), 0.01, 0.02, axis=(0, 0, 0))
    with pytest.raises(cl.InputError, match=r"upper must exceed lower on every axis.*\(axis y\)"):
        regions.box((0, 0, 0), (1, 0, 1))
    with pytest.raises(cl.InputError, match=r"exactly one of count .* and volume_fraction"):
        fill_region(ball, ((-0.01,) * 3, (0.01,) * 3), 1e-3)
    with pytest.raises(cl.InputError, match=r"exactly one of count"):
        fill_region(ball, ((-0.01,) * 3, (0.01,) * 3), 1e-3, count=10, volume_fraction=0.2)
    with pytest.raises(cl.InputError, match=r"volume_fraction must be <= 0.74"):
        fill_region(ball, ((-0.01,) * 3, (0.01,) * 3), 1e-3, volume_fraction=0.8)
    with pytest.raises(cl.InputError, match=r"radius_spread must be < 1"):
        fill_region(ball, ((-0.01,) * 3, (0.01,) * 3), 1e-3, count=10, radius_spread=1.0)
    with pytest.raises(cl.InputError, match=r"bounds: the upper corner must exceed"):
        fill_region(ball, ((0.01,) * 3, (-0.01,) * 3), 1e-3, count=10)
    with pytest.raises(cl.InputError, match=r"no point inside bounds"):
        fill_region(ball, ((1.0,) * 3, (2.0,) * 3), 1e-3, count=10)


# ---------------------------------------------------------------------------- docs and example
def test_docs_examples_run():
    """The Python blocks of docs/packing.md run as written (their own asserts included)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "packing.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    exec(compile("\n".join(blocks), "docs/packing.md", "exec"), namespace)
    assert namespace["sim"].step > 0 and namespace["res"].converged


def test_example_fills_a_torus_and_settles():
    """examples/levelset_packing.py, smaller: its exact checks (distance to the torus surface, all
    pair distances, analytic torus volume) agree with what the relaxation reports."""
    import runpy
    from pathlib import Path

    ns = runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / "levelset_packing.py"))
    r = ns["main"](major=0.02, minor=0.007, radius=1.5e-3, volume_fraction=0.3, settle=0.001)
    assert r["converged"]
    assert r["exact_poke_out"] <= 1e-12 * 1.5e-3 * 1.1                 # touching at most (round-off)
    assert r["exact_max_overlap"] <= 1e-3
    assert r["exact_max_overlap"] == pytest.approx(r["max_overlap"], rel=1e-9)
    assert r["volume_fraction"] == pytest.approx(0.3, rel=0.02)        # Monte Carlo volume estimate
    assert r["settle_steps"] > 0 and abs(r["balance_error"]) < 0.01 * max(r["dissipated"], r["kinetic"])
