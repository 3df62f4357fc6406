"""Volume-based ECC geometry (notes 004, contact-volume ECC model): intersection volume of convex
polyhedra (and of a polyhedron and a wall) and its derivatives, against theory and independent
references.

References used, per test:

* axis-aligned boxes: the intersection is the box of the axis overlaps, ``V = o_x o_y o_z``, and
  ``dV/dx_k = (d o_k / d x_k) o_l o_m`` (``d o_k / d x_k`` = +1 / -1 / 0 as the upper / lower /
  both / neither bound of the overlap belongs to the moving box); flush faces: the mean of the
  one-sided derivatives;
* random orientations: SciPy ``HalfspaceIntersection`` of the two hulls' facet inequalities
  (qhull) and ``ConvexHull`` of the result (volume; centroid from a tetrahedron fan);
* derivatives: central finite differences of the volume under translations and small global
  rotations ``q -> exp(dtheta) q``; invariance of the volume under rigid motions of both bodies
  (``dV/dx_j = -dV/dx_i``, ``dV/dtheta_j = -dV/dtheta_i - (x_i - x_j) x dV/dx_i``);
* twist: two cubes face to face, one turned by ``phi`` about the common axis: the intersection is a
  prism of the penetration depth over the octagon common to the two squares (area in closed form);
* energy: the work of ``F = -k dV/dx``, ``M = -k dV/dtheta`` along a path of translations and
  rotations, integrated numerically, against ``-k (V_end - V_start)``;
* wall: the cube cut by a plane, closed form by inclusion-exclusion over the cube's corners;
* spheres: the lens as the sum of two caps and the cap as the integral of the disc areas
  (``scipy.integrate.quad``), areas by finite differences.
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from scipy import integrate
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection
from scipy.spatial.transform import Rotation

from contactlab.geometry import polyhedron_overlap as po


# ------------------------------------------------------------------------------------------------
# setup helpers (NumPy/SciPy, independent of the code under test)
# ------------------------------------------------------------------------------------------------
def t3(v):
    """A 3-tuple of Python floats (the compiled functions take tuples of float64)."""
    return tuple(float(x) for x in v)


def polyhedron_block(vertices):
    """POLYHEDRON block ``[nv, nt, vertices, triangles]`` of the convex hull of ``vertices``,
    triangles counter-clockwise seen from outside."""
    v = np.asarray(vertices, dtype=float)
    hull = ConvexHull(v)
    assert len(hull.vertices) == len(v)
    tri = hull.simplices.copy()
    a, b, c = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0.0
    tri[inward, 1], tri[inward, 2] = tri[inward, 2].copy(), tri[inward, 1].copy()
    return np.concatenate(([len(v), len(tri)], v.ravel(), tri.ravel().astype(float)))


def box_vertices(half):
    return np.array(list(itertools.product(*[(-h, h) for h in half])), dtype=float)


def centred(vertices):
    """Vertices shifted so that the hull's centre of mass is the origin."""
    v = np.asarray(vertices, dtype=float)
    hull = ConvexHull(v)
    m = v.mean(axis=0)
    vols = np.array([abs(np.dot(v[s[0]] - m, np.cross(v[s[1]] - m, v[s[2]] - m))) / 6 for s in hull.simplices])
    cents = np.array([(m + v[s[0]] + v[s[1]] + v[s[2]]) / 4 for s in hull.simplices])
    return v - (vols[:, None] * cents).sum(axis=0) / vols.sum()


def random_quat(rng):
    x, y, z, w = Rotation.random(random_state=rng).as_quat()
    return (float(w), float(x), float(y), float(z))


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def quat_exp(rotvec):
    """Unit quaternion of the rotation by the global rotation vector ``rotvec``."""
    x, y, z, w = Rotation.from_rotvec(rotvec).as_quat()
    return (float(w), float(x), float(y), float(z))


def world(vertices, quat, pos):
    w, x, y, z = quat
    return Rotation.from_quat([x, y, z, w]).apply(vertices) + np.asarray(pos)


def reference_intersection(va, vb):
    """Volume and centroid of hull(va) n hull(vb) by qhull's half-space intersection; (0, None)
    when there is no interior."""
    eq = np.vstack([ConvexHull(va).equations, ConvexHull(vb).equations])
    a, b = eq[:, :3], eq[:, 3]
    # Chebyshev centre: an interior point, and the radius of the largest inscribed ball
    res = linprog(np.r_[0.0, 0.0, 0.0, -1.0], A_ub=np.c_[a, np.linalg.norm(a, axis=1)], b_ub=-b,
                  bounds=[(None, None)] * 3 + [(0.0, None)])
    if res.status != 0 or res.x[3] < 1e-9:
        return 0.0, None
    hull = ConvexHull(HalfspaceIntersection(eq, res.x[:3]).intersections)
    p = hull.points
    m = p[hull.vertices].mean(axis=0)
    vols = np.array([abs(np.dot(p[s[0]] - m, np.cross(p[s[1]] - m, p[s[2]] - m))) / 6 for s in hull.simplices])
    cents = np.array([(m + p[s[0]] + p[s[1]] + p[s[2]]) / 4 for s in hull.simplices])
    return hull.volume, (vols[:, None] * cents).sum(axis=0) / vols.sum()


class Shapes:
    """Shape blocks in one data array: a unit cube, a box, and an irregular polyhedron (hull of
    40 points on an ellipsoid, ~76 triangles, no two faces parallel)."""

    def __init__(self):
        rng = np.random.default_rng(20240522)
        u = rng.normal(size=(40, 3))
        u /= np.linalg.norm(u, axis=1)[:, None]
        self.vertices = {"cube": box_vertices([0.5, 0.5, 0.5]), "box": box_vertices([0.6, 0.35, 0.25]),
                         "poly": centred(u * [0.6, 0.45, 0.35])}
        blocks, self.ref = [], {}
        o = 0
        for name, v in self.vertices.items():
            blk = polyhedron_block(v)
            self.ref[name] = o
            o += len(blk)
            blocks.append(blk)
        self.data = np.concatenate(blocks)

    def world(self, name, quat, pos):
        return world(self.vertices[name], quat, pos)


SHAPES = Shapes()
PAIRS = [("cube", "cube"), ("cube", "poly"), ("poly", "box"), ("poly", "poly")]


def gradients(name_i, pos_i, quat_i, name_j, pos_j, quat_j, shapes=SHAPES):
    return po.polyhedron_intersection_gradients(shapes.data, shapes.ref[name_i], t3(pos_i), quat_i,
                                                shapes.ref[name_j], t3(pos_j), quat_j)


def volume(*args, **kw):
    return gradients(*args, **kw)[0]


def overlapping_configs(rng, name_i, name_j, n, scale=0.5):
    """``n`` random configurations ``(pos_i, q_i, pos_j, q_j)`` with a positive intersection."""
    out = []
    while len(out) < n:
        qi, qj = random_quat(rng), random_quat(rng)
        pi, pj = rng.uniform(-0.1, 0.1, 3), rng.normal(size=3) * scale
        if volume(name_i, pi, qi, name_j, pj, qj) > 1e-4:
            out.append((pi, qi, pj, qj))
    return out


@pytest.fixture(scope="module")
def compile_times():
    """Compile every entry point once (the first call), timing it."""
    times = {}
    d, r = SHAPES.data, SHAPES.ref["cube"]
    z, q, up, above = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 0.9)
    for name, call in [
            ("polyhedron_intersection_gradients",
             lambda: po.polyhedron_intersection_gradients(d, r, z, q, r, above, q)),
            ("polyhedron_intersection", lambda: po.polyhedron_intersection(d, r, z, q, r, above, q)),
            ("polyhedron_halfspace_gradients", lambda: po.polyhedron_halfspace_gradients(d, r, z, q, z, up)),
            ("polyhedron_halfspace", lambda: po.polyhedron_halfspace(d, r, z, q, z, up)),
            ("sphere_sphere_lens", lambda: po.sphere_sphere_lens(1.0, 1.0, 1.5)),
            ("sphere_halfspace_cap", lambda: po.sphere_halfspace_cap(1.0, 0.5))]:
        t0 = time.perf_counter()
        call()
        times[name] = time.perf_counter() - t0
    return times


# ------------------------------------------------------------------------------------------------
# volume and translation gradient against closed forms and qhull
# ------------------------------------------------------------------------------------------------
def box_overlap(ci, hi, cj, hj):
    """Overlap length of [ci - hi, ci + hi] and [cj - hj, cj + hj] and its derivative with
    respect to ci (the moving box i): +1 if the upper bound is i's, -1 if the lower one is,
    the mean of the one-sided values where bounds coincide (within 1e-12 m, the documented
    tolerance of the code: 0.1 + 0.2 and 0.3 are the same plane)."""
    up_i, up_j, lo_i, lo_j = ci + hi, cj + hj, ci - hi, cj - hj
    o = min(up_i, up_j) - max(lo_i, lo_j)
    if o <= 1e-12:
        return 0.0, 0.0
    d_up = 0.5 if abs(up_i - up_j) <= 1e-12 else (1.0 if up_i < up_j else 0.0)
    d_lo = 0.5 if abs(lo_i - lo_j) <= 1e-12 else (1.0 if lo_i > lo_j else 0.0)
    return o, d_up - d_lo


def box_pair_data(hi, hj):
    bi, bj = polyhedron_block(box_vertices(hi)), polyhedron_block(box_vertices(hj))
    return np.concatenate([bi, bj]), 0, len(bi)


def check_boxes(hi, ci, hj, cj, rel=1e-13):
    data, ri, rj = box_pair_data(hi, hj)
    q = (1.0, 0.0, 0.0, 0.0)
    v, g, m, c, st = po.polyhedron_intersection_gradients(data, ri, t3(ci), q, rj, t3(cj), q)
    ov = [box_overlap(ci[k], hi[k], cj[k], hj[k]) for k in range(3)]
    v_ref = ov[0][0] * ov[1][0] * ov[2][0]
    if v_ref == 0.0:
        assert (st, v, g) == (po.STATUS_APART, 0.0, (0.0, 0.0, 0.0))
        return
    assert st == po.STATUS_OK
    assert v == pytest.approx(v_ref, rel=rel)
    g_ref = [ov[k][1] * ov[(k + 1) % 3][0] * ov[(k + 2) % 3][0] for k in range(3)]
    np.testing.assert_allclose(g, g_ref, rtol=0, atol=rel * max(abs(x) for x in g_ref + [v_ref ** (2 / 3)]))
    # the centroid of a box intersection is the centre of the overlap intervals
    c_ref = [0.5 * (max(ci[k] - hi[k], cj[k] - hj[k]) + min(ci[k] + hi[k], cj[k] + hj[k])) for k in range(3)]
    np.testing.assert_allclose(c, c_ref, rtol=0, atol=1e-13)


def test_axis_aligned_boxes_against_axis_overlaps(compile_times):
    rng = np.random.default_rng(1)
    n_overlap = 0
    for _ in range(40):
        hi, hj = rng.uniform(0.1, 0.8, 3), rng.uniform(0.1, 0.8, 3)
        ci, cj = rng.uniform(-0.3, 0.3, 3), rng.uniform(-0.6, 0.6, 3)
        check_boxes(hi, ci, hj, cj)
        n_overlap += all(box_overlap(ci[k], hi[k], cj[k], hj[k])[0] > 0 for k in range(3))
    assert n_overlap >= 20   # most of them overlap: the checks above are not all "apart"


def test_flush_and_coincident_faces():
    """Faces in a common plane: the volume stays exact and the gradient is the mean of the
    one-sided derivatives (no sideways force between flush faces)."""
    h = np.array([0.5, 0.5, 0.5])
    check_boxes(h, [0.0, 0.0, 0.0], h, [0.0, 0.0, 0.999])                    # stacked, sides flush
    check_boxes(h, [0.1 + 0.2, 0.0, 0.0], h, [0.3, 0.0, 0.7])                  # flush up to rounding
    check_boxes(h, [0.0, 0.0, 0.0], h, [0.0, 0.0, 0.0])                        # identical
    check_boxes(h, [0.0, 0.0, 0.0], h / 2, [0.25, 0.25, 0.0])                  # inside, two faces flush
    check_boxes([0.5, 0.4, 0.3], [0.0, 0.0, 0.0], [0.2, 0.4, 0.3], [0.6, 0.0, 0.1])
    check_boxes(h, [0.0, 0.0, 0.0], h, [0.0, 0.0, 1.0])                        # touching: apart
    check_boxes(h, [0.0, 0.0, 0.0], h, [1.0, 1.0, 0.3])                        # touching along an edge
    # the same with rotated copies of the stack (vertices no longer exactly representable)
    q = random_quat(np.random.default_rng(5))
    rot = Rotation.from_quat([q[1], q[2], q[3], q[0]])
    v, g, m, c, st = gradients("cube", [0.0, 0.0, 0.0], q, "cube", rot.apply([0.0, 0.0, 0.999]), q)
    assert st == po.STATUS_OK and v == pytest.approx(0.001, rel=1e-9)
    np.testing.assert_allclose(g, rot.apply([0.0, 0.0, 1.0]), rtol=0, atol=1e-9)


def test_one_body_inside_the_other():
    """A small cube wholly inside a big one: V = its volume, no gradient (moving either body a
    little changes nothing), the point falls back to the centroid = the small cube's centre."""
    data, r_small, r_big = box_pair_data([0.1, 0.1, 0.1], [0.5, 0.5, 0.5])
    q_small, q_big = random_quat(np.random.default_rng(8)), random_quat(np.random.default_rng(9))
    x_small, x_big = (0.15, -0.1, 0.2), (0.0, 0.05, 0.0)
    for args, x_point in [((r_small, x_small, q_small, r_big, x_big, q_big), x_small),
                          ((r_big, x_big, q_big, r_small, x_small, q_small), x_small)]:
        v, g, m, c, st = po.polyhedron_intersection_gradients(data, *args)
        assert st == po.STATUS_OK and v == pytest.approx(0.008, rel=1e-13)
        assert g == (0.0, 0.0, 0.0)
        np.testing.assert_allclose(c, x_point, rtol=0, atol=1e-14)
        v, g, p, st = po.polyhedron_intersection(data, *args)
        np.testing.assert_allclose(p, x_point, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name_i,name_j", PAIRS)
def test_volume_and_centroid_against_qhull(name_i, name_j):
    rng = np.random.default_rng(PAIRS.index((name_i, name_j)))
    n_in = n_out = 0
    for _ in range(25):
        qi, qj = random_quat(rng), random_quat(rng)
        pi, pj = rng.uniform(-0.1, 0.1, 3), rng.normal(size=3) * 0.6
        v, g, m, c, st = gradients(name_i, pi, qi, name_j, pj, qj)
        v_ref, c_ref = reference_intersection(SHAPES.world(name_i, qi, pi), SHAPES.world(name_j, qj, pj))
        if v_ref == 0.0:
            n_out += 1
            assert st == po.STATUS_APART and v == 0.0
            continue
        n_in += 1
        assert st == po.STATUS_OK
        assert v == pytest.approx(v_ref, rel=1e-11, abs=1e-14)
        np.testing.assert_allclose(c, c_ref, rtol=0, atol=1e-10)
    assert n_in >= 10 and n_out >= 1


# ------------------------------------------------------------------------------------------------
# derivatives
# ------------------------------------------------------------------------------------------------
FD_STEP = 1e-6   # m and rad, bodies of size ~1 m
# central differences: truncation ~ h^2 V''' / 6 ~ 1e-13, rounding ~ 1e-16 V / h ~ 1e-10 (both
# relative to the derivative's scale, L^2 for dV/dx and L^3 for dV/dtheta, L = 1 m)
FD_TOL = 1e-8


def fd_gradients(name_i, pi, qi, name_j, pj, qj, h=FD_STEP):
    g, m = np.zeros(3), np.zeros(3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        g[k] = (volume(name_i, pi + e, qi, name_j, pj, qj) - volume(name_i, pi - e, qi, name_j, pj, qj)) / (2 * h)
        m[k] = (volume(name_i, pi, quat_mul(quat_exp(e), qi), name_j, pj, qj)
                - volume(name_i, pi, quat_mul(quat_exp(-e), qi), name_j, pj, qj)) / (2 * h)
    return g, m


@pytest.mark.parametrize("name_i,name_j", PAIRS)
def test_gradients_against_finite_differences(name_i, name_j):
    rng = np.random.default_rng(7 + PAIRS.index((name_i, name_j)))
    for pi, qi, pj, qj in overlapping_configs(rng, name_i, name_j, 8):
        v, g, m, c, st = gradients(name_i, pi, qi, name_j, pj, qj)
        g_fd, m_fd = fd_gradients(name_i, pi, qi, name_j, pj, qj)
        np.testing.assert_allclose(g, g_fd, rtol=0, atol=FD_TOL)
        np.testing.assert_allclose(m, m_fd, rtol=0, atol=FD_TOL)
        # rigid-motion invariance: the same volume seen from body j
        v2, g2, m2, c2, st2 = gradients(name_j, pj, qj, name_i, pi, qi)
        assert v2 == pytest.approx(v, rel=1e-12)
        np.testing.assert_allclose(g2, -np.array(g), rtol=0, atol=1e-12)
        np.testing.assert_allclose(m2, -np.array(m) - np.cross(pi - pj, g), rtol=0, atol=1e-12)
        np.testing.assert_allclose(c2, c, rtol=0, atol=1e-12)


def squares_overlap_area(a, phi):
    """Area common to two squares of half side ``a`` with a common centre, one turned by ``phi``
    (0 < phi < pi/2), and its derivative with respect to ``phi``: each corner of one square
    sticks out of the other as a right triangle with legs ``a (1 - tan(phi/2))`` and
    ``a (1 + tan(phi) - sec(phi))``."""
    l1 = a * (1 - math.tan(phi / 2))
    l2 = a * (1 + math.tan(phi) - 1 / math.cos(phi))
    dl1 = -a / (2 * math.cos(phi / 2) ** 2)
    dl2 = a * (1 / math.cos(phi) ** 2 - math.tan(phi) / math.cos(phi))
    return 4 * a * a - 2 * l1 * l2, -2 * (dl1 * l2 + l1 * dl2)


@pytest.mark.parametrize("phi", [0.2, 0.5, 1.1])
def test_twist_of_cubes_face_to_face(phi):
    """Cube j on top of cube i, turned by phi about the common vertical axis, depth delta: V =
    delta A(phi), dV/dx_i = (0, 0, A), dV/dtheta_i = (0, 0, -delta A'(phi)) -- a twist that a
    point force cannot carry; the contact point is on the axis, at the prism's mid-height."""
    a, delta = 0.5, 0.01
    qj = quat_exp([0.0, 0.0, phi])
    pos_i = np.array([0.2, -0.1, 0.3])
    pos_j = pos_i + [0.0, 0.0, 2 * a - delta]
    area, d_area = squares_overlap_area(a, phi)
    v, g, m, c, st = gradients("cube", pos_i, (1.0, 0.0, 0.0, 0.0), "cube", pos_j, qj)
    assert v == pytest.approx(delta * area, rel=1e-12)
    np.testing.assert_allclose(g, [0.0, 0.0, area], rtol=0, atol=1e-13)
    np.testing.assert_allclose(m, [0.0, 0.0, -delta * d_area], rtol=0, atol=1e-13)
    assert abs(m[2]) > 1e-4       # the twist is really there
    v, g2, p, st = po.polyhedron_intersection(SHAPES.data, SHAPES.ref["cube"], t3(pos_i), (1.0, 0.0, 0.0, 0.0),
                                              SHAPES.ref["cube"], t3(pos_j), qj)
    assert g2 == g
    np.testing.assert_allclose(p, pos_i + [0.0, 0.0, a - delta / 2], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name_i,name_j", PAIRS)
def test_contact_point(name_i, name_j):
    """The point is on the line of action of F = -k grad (its moment is -k dV/dtheta without the
    twist along grad) and is the point of that line nearest the intersection's centroid."""
    rng = np.random.default_rng(11 + PAIRS.index((name_i, name_j)))
    d = SHAPES.data
    for pi, qi, pj, qj in overlapping_configs(rng, name_i, name_j, 6):
        v, g, m, c, st = gradients(name_i, pi, qi, name_j, pj, qj)
        v2, g2, p, st2 = po.polyhedron_intersection(d, SHAPES.ref[name_i], t3(pi), qi, SHAPES.ref[name_j], t3(pj), qj)
        assert (v2, g2, st2) == (v, g, st)
        g, m, p, c = map(np.asarray, (g, m, p, c))
        n = g / np.linalg.norm(g)
        m_perp = m - np.dot(m, n) * n
        np.testing.assert_allclose(np.cross(p - pi, g), m_perp, rtol=0, atol=1e-12)
        assert abs(np.dot(c - p, n)) < 1e-12
        # the centroid itself against qhull's
        c_ref = reference_intersection(SHAPES.world(name_i, qi, pi), SHAPES.world(name_j, qj, pj))[1]
        np.testing.assert_allclose(c, c_ref, rtol=0, atol=1e-10)


def path_work(state, grads, n_steps, k=1.0):
    """Work of F = -k dV/dx, M = -k dV/dtheta on body i along ``state(s) -> (x, q, x', omega)``
    for s in [0, 1] (composite Simpson), with ``grads(x, q) -> (dV/dx, dV/dtheta)``."""
    s = np.linspace(0.0, 1.0, n_steps + 1)
    power = np.empty_like(s)
    for idx, si in enumerate(s):
        x, q, dx, omega = state(si)
        g, m = grads(x, q)
        power[idx] = -k * (np.dot(g, dx) + np.dot(m, omega))
    return integrate.simpson(power, x=s)


def helical_path(x0, q0, shift, bend, omega):
    """x(s) = x0 + s shift + bend sin(pi s), q(s) = exp(s omega) q0."""
    x0, shift, bend, omega = map(np.asarray, (x0, shift, bend, omega))

    def state(s):
        return (x0 + s * shift + bend * math.sin(math.pi * s), quat_mul(quat_exp(s * omega), q0),
                shift + bend * math.pi * math.cos(math.pi * s), omega)
    return state


@pytest.mark.parametrize("name_i,name_j", [("cube", "cube"), ("poly", "cube"), ("poly", "poly")])
def test_energy_consistency_along_a_path(name_i, name_j):
    """sum of F . dx + M . dtheta along a path of translations and rotations = -k (V_1 - V_0).

    V is C^1 along the path with jumps of the second derivative where vertices cross faces, so
    Simpson's rule converges only as h^2 there: 2000 intervals leave ~1e-10 of the volume change."""
    rng = np.random.default_rng(3)
    qi, qj = random_quat(rng), random_quat(rng)
    xj = np.array([0.0, 0.0, 0.0])
    # start in contact, move through deeper overlap while turning by ~0.6 rad about a skew axis
    x0 = np.array([0.55, 0.35, 0.2])
    state = helical_path(x0, qi, [-0.25, -0.15, 0.1], [0.0, 0.05, -0.04], [0.3, -0.4, 0.35])

    def grads(x, q):
        v, g, m, c, st = gradients(name_i, x, q, name_j, xj, qj)
        return np.asarray(g), np.asarray(m)

    x_start, q_start = state(0.0)[:2]
    x_end, q_end = state(1.0)[:2]
    v_start = volume(name_i, x_start, q_start, name_j, xj, qj)
    v_end = volume(name_i, x_end, q_end, name_j, xj, qj)
    assert v_start > 0.0 and abs(v_end - v_start) > 0.01
    work = path_work(state, grads, 2000)
    assert work == pytest.approx(-(v_end - v_start), rel=1e-8)


# ------------------------------------------------------------------------------------------------
# wall
# ------------------------------------------------------------------------------------------------
def cube_below_plane(side, normal_body, c):
    """Volume of {y in [-side/2, side/2]^3 : n . y < c} and the area of its section by the plane
    (``n`` a unit body-frame normal with no zero component).  With z = y + side/2 and, for each
    negative component, z_k -> side - z_k, the region is sum |n_k| z_k < C over [0, side]^3; by
    inclusion-exclusion over the corners v: V = sum_v (-1)^|v| max(0, C - side |n| . v)^3 /
    (6 prod |n_k|), the section area A = dV/dC."""
    n = np.asarray(normal_body, dtype=float)
    an = np.abs(n)
    cc = c + side / 2 * n.sum() - side * n[n < 0].sum()
    vol = area = 0.0
    for v in itertools.product((0, 1), repeat=3):
        t = max(0.0, cc - side * np.dot(an, v))
        sign = (-1) ** sum(v)
        vol += sign * t ** 3
        area += sign * 3 * t ** 2
    return vol / (6 * an.prod()), area / (6 * an.prod())


def wall_gradients(name, pos, quat, point, normal):
    return po.polyhedron_halfspace_gradients(SHAPES.data, SHAPES.ref[name], t3(pos), quat, t3(point), t3(normal))


def test_cube_cut_by_a_wall_against_closed_form():
    rng = np.random.default_rng(17)
    checked = 0
    while checked < 20:
        q = random_quat(rng)
        normal = rng.normal(size=3)
        normal /= np.linalg.norm(normal)
        w, x, y, z = q
        nb = Rotation.from_quat([x, y, z, w]).inv().apply(normal)
        if np.abs(nb).min() < 0.15:          # keep the inclusion-exclusion well conditioned
            continue
        pos = rng.uniform(-1, 1, 3)
        height = rng.uniform(-0.9, 0.9)       # of the cube's centre above the plane
        shift = rng.normal(size=3)
        point = pos - height * normal + shift - np.dot(shift, normal) * normal   # a point of the plane
        v_ref, area = cube_below_plane(1.0, nb, -height)
        v, g, m, c, st = wall_gradients("cube", pos, q, point, normal)
        if v_ref == 0.0:
            assert st == po.STATUS_APART
            continue
        checked += 1
        assert st == po.STATUS_OK
        assert v == pytest.approx(v_ref, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(g, -area * normal, rtol=0, atol=1e-12)
        # twist-free, and the point lies on the wall normal through the section's centroid:
        # rotating the cube by dtheta about its centre moves the section's centroid c_s by
        # dtheta x (c_s - x) and the volume by -A n . (dtheta x (c_s - x)).  Check with finite
        # differences, and that the energy-consistent point reproduces the whole moment.
        m = np.asarray(m)
        assert abs(np.dot(m, normal)) < 1e-12
        m_fd = np.zeros(3)
        for k in range(3):
            e = np.zeros(3)
            e[k] = FD_STEP
            m_fd[k] = (wall_gradients("cube", pos, quat_mul(quat_exp(e), q), point, normal)[0]
                       - wall_gradients("cube", pos, quat_mul(quat_exp(-e), q), point, normal)[0]) / (2 * FD_STEP)
        np.testing.assert_allclose(m, m_fd, rtol=0, atol=FD_TOL)
        v2, g2, p, st2 = po.polyhedron_halfspace(SHAPES.data, SHAPES.ref["cube"], t3(pos), q, t3(point), t3(normal))
        assert (v2, g2, st2) == (v, g, st)
        np.testing.assert_allclose(np.cross(np.asarray(p) - pos, g), m, rtol=0, atol=1e-12)
        assert abs(np.dot(np.asarray(c) - p, normal)) < 1e-12


def test_wall_special_cases():
    up = (0.0, 0.0, 1.0)
    q = (1.0, 0.0, 0.0, 0.0)
    origin = (0.0, 0.0, 0.0)
    # resting face down, 1 mm deep: a^2 delta, full face area
    v, g, m, c, st = wall_gradients("cube", [0.3, 0.2, 0.499], q, origin, up)
    assert st == po.STATUS_OK and v == pytest.approx(1e-3, rel=1e-12)
    np.testing.assert_allclose(g, [0.0, 0.0, -1.0], rtol=0, atol=1e-13)
    np.testing.assert_allclose(c, [0.3, 0.2, -0.0005], rtol=0, atol=1e-13)
    # touching: apart; far above: apart
    assert wall_gradients("cube", [0.0, 0.0, 0.5], q, origin, up)[4] == po.STATUS_APART
    assert wall_gradients("cube", [0.0, 0.0, 3.0], q, origin, up)[4] == po.STATUS_APART
    # immersed with the top face in the plane: V = a^3, gradient the mean of 0 and -a^2 n
    v, g, m, c, st = wall_gradients("cube", [0.0, 0.0, -0.5], q, origin, up)
    assert v == pytest.approx(1.0, rel=1e-14)
    np.testing.assert_allclose(g, [0.0, 0.0, -0.5], rtol=0, atol=1e-13)
    # deep inside: V = a^3, no gradient; the point falls back to the centroid
    v, g, p, st = po.polyhedron_halfspace(SHAPES.data, SHAPES.ref["cube"], (1.0, 2.0, -5.0), q, origin, up)
    assert (v, g, st) == (pytest.approx(1.0, rel=1e-14), (0.0, 0.0, 0.0), po.STATUS_OK)
    np.testing.assert_allclose(p, [1.0, 2.0, -5.0], rtol=0, atol=1e-13)
    # the plane normal need not be unit
    v2 = wall_gradients("cube", [0.3, 0.2, 0.499], q, origin, (0.0, 0.0, 7.0))[0]
    assert v2 == pytest.approx(1e-3, rel=1e-12)


def test_wall_energy_with_the_contact_point():
    """For a wall the twist vanishes, so the force through the returned point alone does the
    work -k Delta V along a path of translations and rotations."""
    rng = np.random.default_rng(23)
    q0 = random_quat(rng)
    point, normal = np.array([0.1, -0.2, 0.05]), np.array([0.3, -0.2, 0.9])
    normal /= np.linalg.norm(normal)
    x0 = point + 0.4 * normal
    state = helical_path(x0, q0, -0.2 * normal + [0.1, 0.05, 0.0], [0.03, -0.02, 0.01], [0.5, 0.3, -0.6])
    d, r = SHAPES.data, SHAPES.ref["poly"]

    def grads(x, q):
        v, g, p, st = po.polyhedron_halfspace(d, r, t3(x), q, t3(point), t3(normal))
        g = np.asarray(g)
        return g, np.cross(np.asarray(p) - x, g)    # dV/dtheta = (p - x) x dV/dx

    def vol(s):
        x, q = state(s)[:2]
        return po.polyhedron_halfspace(d, r, t3(x), q, t3(point), t3(normal))[0]

    v_start, v_end = vol(0.0), vol(1.0)
    assert v_start > 0.0 and abs(v_end - v_start) > 0.01
    assert path_work(state, grads, 2000) == pytest.approx(-(v_end - v_start), rel=1e-8)


# ------------------------------------------------------------------------------------------------
# spheres
# ------------------------------------------------------------------------------------------------
def cap_volume_quad(r, depth):
    """Volume of a cap of height ``depth`` of a sphere of radius ``r``: integral of the disc areas."""
    return integrate.quad(lambda z: math.pi * (r * r - z * z), r - depth, r, epsabs=0, epsrel=1e-13)[0]


@pytest.mark.parametrize("ri,rj,d", [(1.0, 1.0, 1.5), (1.0, 0.5, 1.2), (0.3, 1.0, 0.9), (2e-3, 1e-3, 2.99e-3),
                                     (1.0, 0.6, 0.5)])
def test_sphere_lens(ri, rj, d):
    v, area = po.sphere_sphere_lens(ri, rj, d)
    # the radical plane at distance x from centre i splits the lens into two caps
    x = (d * d + ri * ri - rj * rj) / (2 * d)
    v_ref = cap_volume_quad(ri, ri - x) + cap_volume_quad(rj, rj - (d - x))
    assert v == pytest.approx(v_ref, rel=1e-12)
    assert area == pytest.approx(math.pi * (ri * ri - x * x), rel=1e-9)
    h = 1e-6 * d
    fd = -(po.sphere_sphere_lens(ri, rj, d + h)[0] - po.sphere_sphere_lens(ri, rj, d - h)[0]) / (2 * h)
    assert area == pytest.approx(fd, rel=1e-6)


def test_sphere_lens_limits():
    assert po.sphere_sphere_lens(1.0, 0.5, 1.5) == (0.0, 0.0)
    assert po.sphere_sphere_lens(1.0, 0.5, 2.0) == (0.0, 0.0)
    v, a = po.sphere_sphere_lens(1.0, 0.5, 0.4)       # the small one inside
    assert (v, a) == (pytest.approx(4 / 3 * math.pi * 0.125, rel=1e-15), 0.0)


@pytest.mark.parametrize("r,height", [(1.0, 0.5), (1.0, -0.3), (1e-3, 0.999e-3), (0.5, -0.49)])
def test_sphere_cap(r, height):
    v, area = po.sphere_halfspace_cap(r, height)
    assert v == pytest.approx(cap_volume_quad(r, r - height), rel=1e-12)
    assert area == pytest.approx(math.pi * (r * r - height * height), rel=1e-12)
    h = 1e-6 * r
    fd = -(po.sphere_halfspace_cap(r, height + h)[0] - po.sphere_halfspace_cap(r, height - h)[0]) / (2 * h)
    assert area == pytest.approx(fd, rel=1e-6)
    assert po.sphere_halfspace_cap(r, r) == (0.0, 0.0)
    assert po.sphere_halfspace_cap(r, -r)[0] == pytest.approx(4 / 3 * math.pi * r ** 3, rel=1e-15)


# ------------------------------------------------------------------------------------------------
# bad data, and the cost
# ------------------------------------------------------------------------------------------------
def test_unusable_shape_data():
    blk = polyhedron_block(box_vertices([0.5, 0.5, 0.5]))
    bad = blk.copy()
    bad[2 + 24 + 4] = 8.0                          # a vertex index out of range
    data = np.concatenate([blk, bad])
    q, z = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    assert po.polyhedron_intersection_gradients(data, 0, z, q, len(blk), (0.0, 0.0, 0.5), q)[4] == po.STATUS_CAPACITY
    assert po.polyhedron_halfspace_gradients(data, len(blk), z, q, z, (0.0, 0.0, 1.0))[4] == po.STATUS_CAPACITY


def test_report_compile_time_and_cost(compile_times):
    """Not a check: prints the compile times and the cost per call seen from Python (``-s``)."""
    d, r = SHAPES.data, SHAPES.ref
    q1 = random_quat(np.random.default_rng(2))
    z, up = (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    cases = {"cube-cube": lambda: po.polyhedron_intersection(d, r["cube"], z, q1, r["cube"], (0.2, 0.1, 0.85), q1),
             "poly-poly": lambda: po.polyhedron_intersection(d, r["poly"], z, q1, r["poly"], (0.2, 0.1, 0.5), q1),
             "cube-wall": lambda: po.polyhedron_halfspace(d, r["cube"], (0.0, 0.0, 0.4), q1, z, up)}
    print()
    for name, t in compile_times.items():
        print(f"compile {name}: {t:.2f} s")
    for name, call in cases.items():
        assert call()[3] == po.STATUS_OK
        n = 2000
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        print(f"{name}: {(time.perf_counter() - t0) / n * 1e6:.1f} us per call from Python")
