"""Support mappings, GJK and EPA (notes 004: mixed shape pairs through the Minkowski difference)
checked against theory and independent references.

References (NumPy/SciPy, written here, sharing no code with the compiled functions):

* polytopes: the exact signed distance of two convex polytopes from the convex hull of their
  vertex differences ``D = {b - a}`` (``scipy.spatial.ConvexHull``): apart, the smallest
  point-triangle distance from the origin to the hull's facets; overlapping, the smallest distance
  from the origin to a facet plane (the penetration depth, the notes' Minkowski overlap);
* closed forms: axis-aligned boxes, sphere-box, sphere-sphere, ellipsoid against a plane, points
  on an ellipsoid's axis;
* the sphere-ellipsoid distance from the Lagrange condition of the closest point
  (``x_k = a_k^2 p_k / (a_k^2 + t)``, root ``t`` by ``scipy.optimize.brentq``);
* the support-function characterisation of the signed distance of convex sets,
  ``separation = max_{|u|=1} -h_D(u)``, with ``h_D`` from NumPy support functions (a roll's by
  ``scipy.optimize.minimize_scalar``): no direction may give more than the reported separation,
  and the reported normal must attain it.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from contactlab.geometry.convex_roll import roll_shape_data
from contactlab.geometry.gjk_epa import EPS_REL, GJK_DEGENERATE, GJK_OK, convex_pair
from contactlab.geometry.shapes import ELLIPSOID, POLYHEDRON, ROLL, SPHERE, TRIANGLE
from contactlab.geometry.support import (box_data, ellipsoid_support_local, polyhedron_data, shape_radius, support,
                                         support_local)

IDENTITY = (1.0, 0.0, 0.0, 0.0)
ZERO = (0.0, 0.0, 0.0)


# ---------------------------------------------------------------------------------------------
# the shape table used by most tests (one data array: one compilation of convex_pair)
# ---------------------------------------------------------------------------------------------
class Shapes:
    """A flat ``shape_data`` array and, per shape, ``(kind, ref, reference description)``."""

    def __init__(self):
        self.blocks = []
        self.table = {}
        self.size = 0

    def add(self, name, kind, block, ref_shape):
        self.table[name] = (kind, self.size, ref_shape)
        self.blocks.append(np.asarray(block, dtype=np.float64))
        self.size += len(block)

    def data(self):
        return np.ascontiguousarray(np.concatenate(self.blocks))


def _tetra_vertices():
    """A regular-ish tetrahedron with its centroid at the origin (body frame)."""
    v = np.array([[1.0, 0.0, -0.5], [-0.5, 0.9, -0.5], [-0.5, -0.9, -0.5], [0.0, 0.0, 1.0]])
    return v - v.mean(axis=0)


ROLL_COEFFS = [-0.5, 0.0, 0.3]    # r(s) = 0.3 - 0.5 s^2 on [-0.5, 0.5]
ROLL_LENGTH = 1.0
BIG = 10.0                         # half extent of the plane-like box
TRI = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])

SH = Shapes()
SH.add("ball", SPHERE, [0.5], ("sphere", 0.5))
SH.add("small_ball", SPHERE, [0.2], ("sphere", 0.2))
SH.add("ell", ELLIPSOID, [1.0, 0.6, 0.4], ("ellipsoid", np.array([1.0, 0.6, 0.4])))
SH.add("ell2", ELLIPSOID, [0.8, 0.5, 0.7], ("ellipsoid", np.array([0.8, 0.5, 0.7])))
SH.add("box", POLYHEDRON, box_data([1.0, 0.6, 0.4]), ("poly", None))
SH.add("box2", POLYHEDRON, box_data([0.5, 0.7, 0.3]), ("poly", None))
SH.add("big", POLYHEDRON, box_data([BIG, BIG, BIG]), ("poly", None))
SH.add("tet", POLYHEDRON, polyhedron_data(_tetra_vertices()), ("poly", None))
_rng_hull = np.random.default_rng(11)
_pts = _rng_hull.normal(size=(60, 3))
SH.add("blob", POLYHEDRON, polyhedron_data(0.6 * _pts / np.linalg.norm(_pts, axis=1)[:, None]), ("poly", None))
SH.add("tri", TRIANGLE, TRI.ravel(), ("poly", TRI))
SH.add("roll", ROLL, roll_shape_data(ROLL_COEFFS, ROLL_LENGTH), ("roll", None))
DATA = SH.data()


def _poly_vertices(name):
    kind, ref, _ = SH.table[name]
    nv = int(DATA[ref])
    return DATA[ref + 2:ref + 2 + 3 * nv].reshape(nv, 3).copy()


for _name in ("box", "box2", "big", "tet", "blob"):
    SH.table[_name] = (SH.table[_name][0], SH.table[_name][1], ("poly", _poly_vertices(_name)))


# ---------------------------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------------------------
def rot(q):
    """Rotation matrix of the quaternion ``(w, x, y, z)`` (SciPy, scalar-last)."""
    return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()


def random_quat(rng):
    x = Rotation.random(random_state=rng).as_quat()
    return (float(x[3]), float(x[0]), float(x[1]), float(x[2]))


def quat_about(axis, angle):
    x = Rotation.from_rotvec(np.asarray(axis, float) / np.linalg.norm(axis) * angle).as_quat()
    return (float(x[3]), float(x[0]), float(x[1]), float(x[2]))


def _roll_ref_support_local(d):
    """Roll support point by bounded maximisation over the axial coordinate (no slope matching)."""
    blk = DATA[SH.table["roll"][1]:]
    n, length, offset = int(blk[0]), blk[1], blk[3]
    k = blk[4:4 + n]
    h = 0.5 * length
    rho = math.hypot(d[1], d[2])

    def f(s):
        return -(d[0] * (offset + s) + rho * np.polyval(k, s))

    cands = [-h, h]
    res = minimize_scalar(f, bounds=(-h, h), method="bounded", options=dict(xatol=1e-13))
    cands.append(res.x)
    s = min(cands, key=f)
    r = np.polyval(k, s)
    if rho > 0.0:
        return np.array([offset + s, r * d[1] / rho, r * d[2] / rho])
    return np.array([offset + s, 0.0, 0.0])


def ref_support_local(name, d):
    """Support point (body frame) of a shape of the table, from its own definition."""
    kind, p = SH.table[name][2]
    d = np.asarray(d, float)
    if kind == "sphere":
        return p * d / np.linalg.norm(d)
    if kind == "ellipsoid":
        a2 = p ** 2
        return a2 * d / math.sqrt(d @ (a2 * d))
    if kind == "poly":
        return p[np.argmax(p @ d)]
    return _roll_ref_support_local(d)


def ref_support(name, pos, q, d, core=False):
    """Global support point; ``core``: a sphere's centre instead of its surface."""
    if core and SH.table[name][2][0] == "sphere":
        return np.asarray(pos, float)
    r = rot(q)
    return np.asarray(pos, float) + r @ ref_support_local(name, r.T @ np.asarray(d, float))


def ref_h(a, pa, qa, b, pb, qb, u):
    """Support function ``h_D(u)`` of ``D = B (-) A`` (whole shapes)."""
    u = np.asarray(u, float)
    return u @ (ref_support(b, pb, qb, u) - ref_support(a, pa, qa, -u))


def world_vertices(name, pos, q):
    return _poly_vertices(name) @ rot(q).T + np.asarray(pos, float)


def point_triangle_distance(p, a, b, c):
    """Distance from ``p`` to the triangle ``abc``: projection on the plane if inside, else the
    closest of the three clamped edge projections."""
    n = np.cross(b - a, c - a)
    nn = n @ n
    q = p - (n @ (p - a)) / nn * n
    lam = [n @ np.cross(b - q, c - q), n @ np.cross(c - q, a - q), n @ np.cross(a - q, b - q)]
    if min(lam) >= 0.0:
        return float(np.linalg.norm(p - q)), q
    best = (math.inf, None)
    for u, v in ((a, b), (b, c), (c, a)):
        t = np.clip((p - u) @ (v - u) / ((v - u) @ (v - u)), 0.0, 1.0)
        r = u + t * (v - u)
        dist = float(np.linalg.norm(p - r))
        if dist < best[0]:
            best = (dist, r)
    return best


def polytope_separation(va, vb):
    """Exact signed separation of ``conv(va)`` and ``conv(vb)`` (global vertices, (n, 3)) and the
    unit normal from A to B, from the convex hull of ``D = {b - a}``."""
    d = (vb[None, :, :] - va[:, None, :]).reshape(-1, 3)
    hull = ConvexHull(d)
    eq = hull.equations                   # n . x + off <= 0 inside, n unit outward
    if np.all(eq[:, 3] < 0.0):
        k = int(np.argmin(-eq[:, 3]))
        return float(eq[k, 3]), -eq[k, :3]
    best = (math.inf, None)
    for s in hull.simplices:
        dist, q = point_triangle_distance(np.zeros(3), *d[s])
        if dist < best[0]:
            best = (dist, q)
    if best[0] == 0.0:
        return 0.0, None          # touching: the normal is the facet's, not needed here
    return best[0], best[1] / best[0]


def ellipsoid_point_distance(axes, p):
    """Distance from an outside point ``p`` (body frame) to the ellipsoid with semi-axes ``axes``:
    the closest point is ``a_k^2 p_k / (a_k^2 + t)`` with ``sum (a_k p_k / (a_k^2 + t))^2 = 1``."""
    a2 = np.asarray(axes, float) ** 2
    g = lambda t: np.sum(a2 * p * p / (a2 + t) ** 2) - 1.0
    hi = 1.0
    while g(hi) > 0.0:
        hi *= 2.0
    t = brentq(g, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    x = a2 * p / (a2 + t)
    return float(np.linalg.norm(p - x))


# ---------------------------------------------------------------------------------------------
# calling the compiled function (one signature: ints, float tuples, the one data array)
# ---------------------------------------------------------------------------------------------
def pair(a, pa, qa, b, pb, qb, warm=ZERO, data=None):
    ka, ra, _ = SH.table[a]
    kb, rb, _ = SH.table[b]
    f3 = lambda v: (float(v[0]), float(v[1]), float(v[2]))
    f4 = lambda v: (float(v[0]), float(v[1]), float(v[2]), float(v[3]))
    sep, n, xi, xj, st = convex_pair(int(ka), int(ra), f3(pa), f4(qa), int(kb), int(rb), f3(pb), f4(qb),
                                     DATA if data is None else data, f3(warm))
    return sep, np.array(n), np.array(xi), np.array(xj), st


def pair_size(a, b):
    return sum(_radius(n) for n in (a, b))


def _radius(name):
    kind, ref, _ = SH.table[name]
    if kind == SPHERE:
        return DATA[ref]
    if kind == ELLIPSOID:
        return DATA[ref:ref + 3].max()
    if kind == ROLL:
        return DATA[ref + 2]
    if kind == TRIANGLE:
        return np.linalg.norm(TRI - TRI.mean(axis=0), axis=1).max()
    return np.linalg.norm(_poly_vertices(name), axis=1).max()


def tol_of(a, b):
    """The documented tolerance of convex_pair, with a little room for round-off."""
    return 2.0 * EPS_REL * pair_size(a, b) + 1e-14


def tangential_tol(a, b):
    """How far the witness points may be off the normal line (documented in convex_pair): round-off
    for polyhedra, triangles and spheres; Newton's last step (1e-9 rad) times the size for smooth
    pairs; for a smooth shape against a flat one GJK's direction on a curved Minkowski difference,
    sqrt(2 gap / R) with gap = EPS_REL size (a few sqrt(EPS_REL)), times the size."""
    smooth = {SH.table[n][2][0] for n in (a, b)} & {"ellipsoid", "roll"}
    flat = any(SH.table[n][2][0] == "poly" for n in (a, b))
    if not smooth:
        return 1e-12
    if not flat:
        return 1e-8 * pair_size(a, b)
    return 3.0 * math.sqrt(EPS_REL) * pair_size(a, b)


def check_witnesses(a, pa, qa, b, pb, qb, res, tol):
    """The output relations of convex_pair, and the support property of the witness points
    (checked against the reference support functions)."""
    sep, n, xi, xj, st = res
    assert st == GJK_OK
    assert abs(np.linalg.norm(n) - 1.0) < 1e-12
    # point_j - point_i = separation * normal (apart) / point_i - point_j = depth * normal
    g = xj - xi
    assert g @ n == pytest.approx(sep, abs=tol)
    assert np.linalg.norm(g - (g @ n) * n) <= max(tol, tangential_tol(a, b))
    # point_i supports i along +normal, point_j supports j along -normal
    assert n @ xi == pytest.approx(n @ ref_support(a, pa, qa, n), abs=tol)
    assert -n @ xj == pytest.approx(-n @ ref_support(b, pb, qb, -n), abs=tol)


# ---------------------------------------------------------------------------------------------
# support mappings
# ---------------------------------------------------------------------------------------------
@numba.njit
def _support_batch(kind, data, ref, pos, quat, dirs, local, glob, radius):
    for k in range(dirs.shape[0]):
        d = (dirs[k, 0], dirs[k, 1], dirs[k, 2])
        p = support_local(kind, data, ref, d)
        g = support(kind, data, ref, pos, quat, d)
        for c in range(3):
            local[k, c] = p[c]
            glob[k, c] = g[c]
    radius[0] = shape_radius(kind, data, ref)


@pytest.mark.parametrize("name", ["ball", "ell", "box", "tet", "blob", "tri", "roll"])
def test_support_matches_reference(name):
    """support_local / support against each shape's own definition (sphere surface point,
    ellipsoid closed form, vertex of largest d . v, roll by bounded maximisation over s): the
    support value d . s is exact; for strictly convex shapes the point itself."""
    rng = np.random.default_rng(1)
    kind, ref, desc = SH.table[name]
    dirs = rng.normal(size=(200, 3)) * rng.uniform(1e-3, 1e3, size=(200, 1))
    dirs[:3] = [[1.0, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, 3.0]]   # along axes
    q = IDENTITY if kind == TRIANGLE else random_quat(rng)
    pos = (0.0, 0.0, 0.0) if kind == TRIANGLE else (0.3, -1.2, 2.0)
    local = np.empty((len(dirs), 3))
    glob = np.empty((len(dirs), 3))
    radius = np.empty(1)
    _support_batch(kind, DATA, ref, pos, q, np.ascontiguousarray(dirs), local, glob, radius)
    r = rot(q)
    for k, d in enumerate(dirs):
        expect = ref_support_local(name, d)
        u = d / np.linalg.norm(d)
        assert u @ local[k] == pytest.approx(u @ expect, abs=1e-12)
        if desc[0] in ("sphere", "ellipsoid") or (desc[0] == "roll" and k >= 3):
            assert np.allclose(local[k], expect, atol=1e-9)
        g = np.asarray(pos) + r @ ref_support_local(name, r.T @ d)
        assert u @ glob[k] == pytest.approx(u @ g, abs=1e-12)
    assert radius[0] == pytest.approx(_radius(name), rel=1e-14)


def test_ellipsoid_support_is_the_surface_point_with_normal_d():
    """Theory: s = A^2 d / sqrt(d . A^2 d) lies on x^2/a^2 + y^2/b^2 + z^2/c^2 = 1 and its outward
    normal (the gradient A^-2 s) is parallel to d; any length of d."""
    axes = np.array([1.3, 0.4, 0.7])
    fn = numba.njit(lambda a, b, c, d: ellipsoid_support_local(a, b, c, d))
    rng = np.random.default_rng(2)
    for d in rng.normal(size=(50, 3)) * rng.uniform(1e-200, 1e200, size=(50, 1)):
        s = np.array(fn(1.3, 0.4, 0.7, (float(d[0]), float(d[1]), float(d[2]))))
        assert np.sum((s / axes) ** 2) == pytest.approx(1.0, abs=1e-14)
        g = s / axes ** 2
        u = d / np.abs(d).max()
        assert np.allclose(g / np.linalg.norm(g), u / np.linalg.norm(u), atol=1e-14)


def _oriented_volume(verts, tris):
    """Volume by the divergence theorem: positive iff the triangles are counter-clockwise seen
    from outside."""
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _unpack(block):
    nv, nt = int(block[0]), int(block[1])
    verts = block[2:2 + 3 * nv].reshape(nv, 3)
    tris = block[2 + 3 * nv:2 + 3 * nv + 3 * nt].reshape(nt, 3).astype(np.int64)
    assert np.all(block[2 + 3 * nv:] == tris.ravel())
    assert len(block) == 2 + 3 * nv + 3 * nt
    return verts, tris


def test_box_data_layout():
    """Layout of shapes.py (nv, nt, vertices, triangles as floats); the 12 triangles close the box
    counter-clockwise seen from outside: volume 8 hx hy hz, every face normal pointing away from
    the centre."""
    h = np.array([0.3, 0.5, 1.1])
    verts, tris = _unpack(box_data(h))
    assert len(verts) == 8 and len(tris) == 12
    assert np.allclose(np.sort(np.abs(verts), axis=0), np.tile(h, (8, 1)))
    assert _oriented_volume(verts, tris) == pytest.approx(8 * h.prod(), rel=1e-14)
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    assert np.all(np.einsum("ij,ij->i", np.cross(b - a, c - a), (a + b + c) / 3.0) > 0.0)
    # each edge used once in each direction: a closed, consistently oriented surface
    edges = {(int(t[k]), int(t[(k + 1) % 3])) for t in tris for k in range(3)}
    assert len(edges) == 36 and all((v, u) in edges for u, v in edges)


def test_polyhedron_data_from_hull():
    """Hull triangulation (SciPy) oriented counter-clockwise from outside; interior points are
    dropped; a given triangulation is stored as given."""
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(40, 3))
    pts = np.vstack([pts, 0.01 * rng.normal(size=(5, 3))])          # interior points
    verts, tris = _unpack(polyhedron_data(pts))
    hull = ConvexHull(pts)
    assert len(verts) == len(hull.vertices)
    assert _oriented_volume(verts, tris) == pytest.approx(hull.volume, rel=1e-12)
    c = verts.mean(axis=0)
    a, b, cc = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    assert np.all(np.einsum("ij,ij->i", np.cross(b - a, cc - a), a - c) > 0.0)
    v2, t2 = _unpack(polyhedron_data(verts, tris))
    assert np.array_equal(v2, verts) and np.array_equal(t2, tris)


# ---------------------------------------------------------------------------------------------
# spheres: exact
# ---------------------------------------------------------------------------------------------
def test_sphere_sphere_exact():
    """Sphere-sphere is r_i + r_j - |x_j - x_i| to the last bit (spheres are a point core plus a
    margin), normal (x_j - x_i)/|x_j - x_i|, contact points on the surfaces."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        xi = rng.normal(size=3)
        xj = xi + rng.normal(size=3) * rng.uniform(0.01, 2.0)
        sep, n, pi, pj, st = pair("ball", xi, IDENTITY, "small_ball", xj, random_quat(rng))
        d = (float(xj[0] - xi[0]), float(xj[1] - xi[1]), float(xj[2] - xi[2]))
        dist = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        assert st == GJK_OK
        assert -sep == 0.5 + 0.2 - dist
        assert np.allclose(n, np.array(d) / dist, atol=1e-15)
        assert np.allclose(pi, xi + 0.5 * n, atol=1e-14) and np.allclose(pj, xj - 0.2 * n, atol=1e-14)


@pytest.mark.parametrize("rotated", [False, True])
def test_sphere_box_analytic(rotated):
    """Sphere-box: the distance from the centre to the box, max(|p_k| - h_k, 0) per axis in the
    box frame, minus r; centre inside: depth r + min_k (h_k - |p_k|), normal along that axis."""
    rng = np.random.default_rng(5)
    h = np.array([1.0, 0.6, 0.4])
    r = 0.5
    for _ in range(150):
        q = random_quat(rng) if rotated else IDENTITY
        pb = rng.normal(size=3)
        local = rng.uniform(-2.2, 2.2, size=3) * np.array([1.0, 0.8, 0.7])
        xs = pb + rot(q) @ local
        gap = np.maximum(np.abs(local) - h, 0.0)
        if np.any(gap > 0.0):
            expect = np.linalg.norm(gap) - r
            out = np.sign(local) * gap
            n_expect = -(rot(q) @ out) / np.linalg.norm(out)
        else:
            inner = h - np.abs(local)
            k = int(np.argmin(inner))
            if np.sort(inner)[1] - inner[k] < 1e-6:
                continue              # two faces equally near: the normal is not unique
            expect = -(r + inner[k])
            e = np.zeros(3)
            e[k] = np.sign(local[k])
            n_expect = -(rot(q) @ e)
        res = pair("ball", xs, random_quat(rng), "box", pb, q)
        assert res[0] == pytest.approx(expect, abs=1e-13)
        assert np.allclose(res[1], n_expect, atol=1e-12)
        check_witnesses("ball", xs, IDENTITY, "box", pb, q, res, 1e-12)


def test_sphere_triangle_analytic():
    """Sphere-triangle: the point-triangle distance (projection or clamped edge) minus r, both
    apart and overlapping; a centre exactly in the plane gets the triangle's normal on the side of
    ``warm`` and separation -r."""
    rng = np.random.default_rng(6)
    a, b, c = TRI
    for _ in range(200):
        x = rng.uniform(-1.0, 3.0, size=3) * np.array([1.0, 1.0, 0.5])
        dist, q = point_triangle_distance(x, a, b, c)
        if dist < 1e-6:
            continue
        res = pair("ball", x, IDENTITY, "tri", ZERO, IDENTITY)
        assert res[0] == pytest.approx(dist - 0.5, abs=1e-13)
        assert np.allclose(res[1], (q - x) / dist, atol=1e-12)
        assert np.allclose(res[3], q, atol=1e-12)
    for warm, nz in (((0.0, 0.0, 1.0), 1.0), ((0.1, 0.0, -1.0), -1.0)):
        sep, n, pi, pj, st = pair("ball", (0.5, 0.4, 0.0), IDENTITY, "tri", ZERO, IDENTITY, warm=warm)
        assert st == GJK_OK and sep == -0.5 and np.allclose(n, (0.0, 0.0, nz))


# ---------------------------------------------------------------------------------------------
# polytopes
# ---------------------------------------------------------------------------------------------
def test_boxes_axis_aligned_analytic():
    """Axis-aligned boxes: apart, the distance is the norm of the per-axis gaps
    max(|c_k| - (h_k + g_k), 0); overlapping, the depth is the smallest per-axis overlap and the
    normal is that axis (signed from i to j)."""
    rng = np.random.default_rng(7)
    h1 = np.array([1.0, 0.6, 0.4])
    h2 = np.array([0.5, 0.7, 0.3])
    n_apart = n_overlap = 0
    for _ in range(300):
        c = rng.uniform(-2.5, 2.5, size=3) * np.array([1.0, 0.9, 0.6])
        over = h1 + h2 - np.abs(c)
        sep, n, pi, pj, st = pair("box", ZERO, IDENTITY, "box2", c, IDENTITY)
        assert st == GJK_OK
        if np.any(over < 0.0):
            gap = np.maximum(-over, 0.0)
            assert sep == pytest.approx(np.linalg.norm(gap), abs=1e-14)
            assert np.allclose(n, np.sign(c) * gap / np.linalg.norm(gap), atol=1e-12)
            n_apart += 1
        else:
            k = int(np.argmin(over))
            if np.sort(over)[1] - over[k] < 1e-6:
                continue
            assert sep == pytest.approx(-over[k], abs=1e-14)
            e = np.zeros(3)
            e[k] = np.sign(c[k])
            assert np.allclose(n, e, atol=1e-12)
            n_overlap += 1
        check_witnesses("box", ZERO, IDENTITY, "box2", c, IDENTITY, (sep, n, pi, pj, st), 1e-12)
    assert n_apart > 50 and n_overlap > 20


@pytest.mark.parametrize("a, b", [("box", "box2"), ("tet", "box2"), ("blob", "tet"), ("blob", "blob")])
def test_rotated_polytopes_against_hull_reference(a, b):
    """Rotated polyhedra, apart and overlapping: separation and normal against the exact
    convex-hull reference of the vertex differences, witness points on the supporting features."""
    rng = np.random.default_rng(8)
    n_over = 0
    cases = 40 if "blob" in (a, b) else 120       # the reference hull of 3600 points is slow
    for k in range(cases):
        qa, qb = random_quat(rng), random_quat(rng)
        pa = 0.3 * rng.normal(size=3)
        d = rng.normal(size=3)
        pb = pa + d / np.linalg.norm(d) * rng.uniform(0.1, 2.5)
        ref, nref = polytope_separation(world_vertices(a, pa, qa), world_vertices(b, pb, qb))
        res = pair(a, pa, qa, b, pb, qb)
        assert res[0] == pytest.approx(ref, abs=1e-12)
        assert np.allclose(res[1], nref, atol=1e-8)
        check_witnesses(a, pa, qa, b, pb, qb, res, 1e-11)
        n_over += ref < 0.0
    assert 0.15 * cases < n_over < 0.85 * cases


def test_tetrahedra_analytic():
    """Tetrahedra: a point (sphere centre, r -> margin) approaching a face, an edge and a vertex
    (plane, line and point distances); a vertex of one tetrahedron over / into a face of another
    (distance and depth = signed height of the vertex over the face plane, normal the face's)."""
    v = _tetra_vertices()
    faces = [(1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2)]
    r = 0.2
    for f in faces:
        p0, p1, p2 = v[list(f)]
        opp = v[[k for k in range(4) if k not in f][0]]
        nrm = np.cross(p1 - p0, p2 - p0)
        nrm /= np.linalg.norm(nrm)
        if nrm @ (opp - p0) > 0:
            nrm = -nrm
        centre = (p0 + p1 + p2) / 3.0
        for height in (0.7, 0.25, 0.05):
            x = centre + height * nrm
            sep, n, *_ = pair("tet", ZERO, IDENTITY, "small_ball", x, IDENTITY)
            assert sep == pytest.approx(height - r, abs=1e-14) and np.allclose(n, nrm, atol=1e-13)
        # edge p0 p1: along the sum of the two adjacent faces' outward normals (inside the
        # edge's normal cone), the closest feature is the edge: distance = offset
        i0, i1 = f[0], f[1]
        normals = []
        for g in faces:
            if i0 in g and i1 in g:
                q0, q1, q2 = v[list(g)]
                m = np.cross(q1 - q0, q2 - q0)
                m /= np.linalg.norm(m)
                normals.append(m if m @ (q0 - v.mean(axis=0)) > 0 else -m)
        out = normals[0] + normals[1]
        out /= np.linalg.norm(out)
        mid = 0.5 * (v[i0] + v[i1])
        sep, n, *_ = pair("tet", ZERO, IDENTITY, "small_ball", mid + 0.6 * out, IDENTITY)
        assert sep == pytest.approx(0.6 - r, abs=1e-14) and np.allclose(n, out, atol=1e-13)
    # vertex directions
    for vert in v:
        u = vert / np.linalg.norm(vert)
        sep, n, *_ = pair("tet", ZERO, IDENTITY, "small_ball", vert + 0.5 * u, IDENTITY)
        assert sep == pytest.approx(0.5 - r, abs=1e-14) and np.allclose(n, u, atol=1e-13)
    # the apex of tetrahedron j (pointing up, +z) under the bottom face z = zface of tetrahedron i
    # (outward normal -z): distance / depth = the apex's height below / above the face plane
    zface = v[0, 2]
    for height in (0.3, 0.01, -0.01, -0.05):
        tip = np.array([0.05, -0.03, zface - height])
        sep, n, pi, pj, st = pair("tet", ZERO, IDENTITY, "tet", tip - v[3], IDENTITY)
        assert st == GJK_OK
        assert sep == pytest.approx(height, abs=1e-13)
        assert np.allclose(n, (0.0, 0.0, -1.0), atol=1e-12)
        assert np.allclose(pj, tip, atol=1e-12)


def test_many_vertex_polyhedra_deep_overlap():
    """Deep overlaps of 60-vertex hulls (EPA with many faces) against the hull reference."""
    rng = np.random.default_rng(9)
    for _ in range(40):
        qa, qb = random_quat(rng), random_quat(rng)
        pb = 0.3 * rng.normal(size=3)
        ref, nref = polytope_separation(world_vertices("blob", ZERO, qa), world_vertices("blob", pb, qb))
        res = pair("blob", ZERO, qa, "blob", pb, qb)
        assert ref < 0.0
        assert res[4] == GJK_OK and res[0] == pytest.approx(ref, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# smooth shapes
# ---------------------------------------------------------------------------------------------
def test_ellipsoid_against_plane_like_box():
    """An ellipsoid over the top face z = 0 of a large box: separation = z_c - sqrt(e_z^T R A^2 R^T
    e_z) (its support function along -e_z), normal -e_z; apart and penetrating."""
    rng = np.random.default_rng(10)
    axes = np.array([1.0, 0.6, 0.4])
    for _ in range(60):
        q = random_quat(rng)
        r = rot(q)
        reach = math.sqrt(np.sum((axes * (r.T @ np.array([0.0, 0.0, 1.0]))) ** 2))
        zc = reach + rng.uniform(-0.2, 0.3)
        x = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), zc])
        res = pair("ell", x, q, "big", (0.0, 0.0, -BIG), IDENTITY)
        assert res[0] == pytest.approx(zc - reach, abs=tol_of("ell", "big"))
        assert np.allclose(res[1], (0.0, 0.0, -1.0), atol=1e-9)
        check_witnesses("ell", x, q, "big", (0.0, 0.0, -BIG), IDENTITY, res, tol_of("ell", "big"))


def test_sphere_ellipsoid_analytic():
    """Sphere-ellipsoid, apart: the point-ellipsoid distance (Lagrange condition, root by brentq)
    minus r.  On the x axis: X - a - r outside; inside beyond the centre of curvature of the vertex
    (X >= a - min(b, c)^2 / a) the depth is r + a - X with normal along the axis."""
    rng = np.random.default_rng(12)
    axes = np.array([1.0, 0.6, 0.4])
    r = 0.2
    n_done = 0
    for _ in range(100):
        q = random_quat(rng)
        local = rng.normal(size=3) * 1.5
        if np.sum((local / axes) ** 2) < 1.05:
            continue
        pe = rng.normal(size=3)
        x = pe + rot(q) @ local
        expect = ellipsoid_point_distance(axes, local) - r
        for warm in (ZERO, rot(q) @ local / np.linalg.norm(local)):
            res = pair("ell", pe, q, "small_ball", x, IDENTITY, warm=warm)
            assert res[0] == pytest.approx(expect, abs=tol_of("ell", "small_ball"))
            check_witnesses("ell", pe, q, "small_ball", x, IDENTITY, res, 1e-9)
        n_done += 1
    assert n_done > 50
    q = random_quat(rng)
    ex = rot(q)[:, 0]
    for X in (1.5, 1.1, 1.0, 0.95, 0.9, 0.86):     # a - c^2 / a = 0.84
        res = pair("ell", ZERO, q, "small_ball", X * ex, IDENTITY)
        assert res[0] == pytest.approx(X - 1.0 - r, abs=tol_of("ell", "small_ball"))
        assert np.allclose(res[1], ex, atol=1e-8)


@pytest.mark.parametrize("a, b", [("ell", "ell2"), ("ell", "ball"), ("ell", "box2"), ("box", "ell2"),
                                  ("roll", "box2"), ("roll", "ell"), ("roll", "ball"), ("tri", "ell")])
def test_smooth_pairs_support_function_bound(a, b):
    """Theory (convex sets): separation = max_{|u|=1} -h_D(u).  With h_D from the reference
    support functions, no sampled or locally optimised direction gives more than the reported
    separation (+ tol), and the reported normal attains it: -h_D(-normal) = separation."""
    rng = np.random.default_rng(13)
    tol = tol_of(a, b)
    dirs = rng.normal(size=(300, 3))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    n_over = 0
    fixed_a = SH.table[a][0] == TRIANGLE
    cases = 10 if a == "roll" else 25               # the reference roll support is slow
    for _ in range(cases):
        qa = IDENTITY if fixed_a else random_quat(rng)
        pa = np.zeros(3) if fixed_a else 0.3 * rng.normal(size=3)
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        pb = pa + d * rng.uniform(0.2, 1.8) + (TRI.mean(axis=0) if fixed_a else 0.0)
        qb = random_quat(rng)
        res = pair(a, pa, qa, b, pb, qb)
        sep, n = res[0], res[1]
        assert res[4] == GJK_OK

        def f(u):
            return ref_h(a, pa, qa, b, pb, qb, u / np.linalg.norm(u))

        assert -f(-n) == pytest.approx(sep, abs=tol)
        best = max(-f(u) for u in dirs)
        opt = minimize(f, -n + 1e-3 * rng.normal(size=3), method="Nelder-Mead",
                       options=dict(xatol=1e-11, fatol=1e-15, maxiter=3000))
        assert max(best, -opt.fun) <= sep + tol
        check_witnesses(a, pa, qa, b, pb, qb, res, tol)
        n_over += sep < 0.0
    assert n_over > 0


def test_roll_on_ground_analytic():
    """Roll (spec 003) on the top face z = 0 of a large box, tilted about y: separation = z_c +
    min over the hull of the global z of a surface point, the lowest point found by bounded
    maximisation of the support (reference) -- and equal for a warm start."""
    for tilt in (0.0, 0.3, 1.2, math.pi / 2):
        q = quat_about((0.0, 1.0, 0.0), tilt)
        low = ref_support("roll", ZERO, q, (0.0, 0.0, -1.0))[2]
        for zc in (-low + 0.05, -low, -low - 0.02):
            res = pair("roll", (0.1, 0.2, zc), q, "big", (0.0, 0.0, -BIG), IDENTITY)
            assert res[0] == pytest.approx(zc + low, abs=1e-9)
            assert np.allclose(res[1], (0.0, 0.0, -1.0), atol=1e-8)
            warm = pair("roll", (0.1, 0.2, zc), q, "big", (0.0, 0.0, -BIG), IDENTITY, warm=(0.0, 0.0, -1.0))
            assert warm[0] == pytest.approx(res[0], abs=1e-9)


# ---------------------------------------------------------------------------------------------
# conventions, continuity, warm starts, degenerate input
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [("box", "box2"), ("ell", "ell2"), ("ell", "box2"), ("ball", "tet")])
def test_normal_is_the_gradient_of_the_separation(a, b):
    """Sign convention: moving j by +eps along the normal increases the separation by eps (the
    normal is grad_{x_j} separation), moving it sideways changes it only to second order."""
    rng = np.random.default_rng(14)
    eps = 1e-5
    for _ in range(10):
        qa, qb = random_quat(rng), random_quat(rng)
        d = rng.normal(size=3)
        pb = d / np.linalg.norm(d) * rng.uniform(0.4, 1.6)
        sep, n, *_ = pair(a, ZERO, qa, b, pb, qb)
        up = pair(a, ZERO, qa, b, pb + eps * n, qb)[0]
        down = pair(a, ZERO, qa, b, pb - eps * n, qb)[0]
        assert (up - down) / (2 * eps) == pytest.approx(1.0, abs=1e-4)
        t = np.cross(n, rng.normal(size=3))
        t /= np.linalg.norm(t)
        side = pair(a, ZERO, qa, b, pb + eps * t, qb)[0]
        assert abs(side - sep) < 1e-3 * eps + 1e-9


@pytest.mark.parametrize("a, b, rotated", [("box", "box2", False), ("box", "box2", True), ("ell", "box2", True),
                                           ("ell", "ell2", True), ("ball", "box", True)])
def test_continuity_through_touching(a, b, rotated):
    """Sliding j through touching contact along a fixed line, the separation changes
    continuously: consecutive samples differ by at most the step (it is 1-Lipschitz in the
    translation), with no jump where GJK hands over to EPA; the polytope case matches the hull
    reference at every sample."""
    rng = np.random.default_rng(15)
    qa = random_quat(rng) if rotated else IDENTITY
    qb = random_quat(rng) if rotated else IDENTITY
    line = np.array([1.0, 0.2, -0.1])
    line /= np.linalg.norm(line)
    # bracket the touching offset, then sample densely around it
    lo, hi = 0.0, 4.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if pair(a, ZERO, qa, b, mid * line, qb)[0] < 0.0:
            lo = mid
        else:
            hi = mid
    offsets = hi + np.linspace(-1e-3, 1e-3, 201)
    offsets = np.concatenate([offsets, hi + np.linspace(-1e-9, 1e-9, 41)])
    offsets.sort()
    seps = np.array([pair(a, ZERO, qa, b, s * line, qb)[0] for s in offsets])
    tol = tol_of(a, b)
    assert np.all(np.abs(np.diff(seps)) <= np.diff(offsets) + 2 * tol)
    assert np.all(np.diff(seps) >= -2 * tol)           # moving j away never decreases it here
    assert seps[0] < 0.0 < seps[-1]
    if SH.table[a][2][0] == "poly" and SH.table[b][2][0] == "poly":
        for s, got in zip(offsets[::10], seps[::10]):
            ref, _ = polytope_separation(world_vertices(a, ZERO, qa), world_vertices(b, s * line, qb))
            assert got == pytest.approx(ref, abs=1e-13)


@pytest.mark.parametrize("a, b", [("ell", "ell2"), ("ell", "box2"), ("box", "box2"), ("roll", "ell")])
def test_warm_start_gives_the_same_answer(a, b):
    """A warm start (the last normal, or a perturbed one) changes only the path, not the result."""
    rng = np.random.default_rng(16)
    for _ in range(20):
        qa, qb = random_quat(rng), random_quat(rng)
        d = rng.normal(size=3)
        pb = d / np.linalg.norm(d) * rng.uniform(0.5, 1.5)
        cold = pair(a, ZERO, qa, b, pb, qb)
        for warm in (cold[1], cold[1] + 0.05 * rng.normal(size=3)):
            hot = pair(a, ZERO, qa, b, pb, qb, warm=warm)
            assert hot[4] == GJK_OK
            assert hot[0] == pytest.approx(cold[0], abs=tol_of(a, b))
            assert np.allclose(hot[1], cold[1], atol=1e-4)


def test_degenerate_input():
    """Status 2: a NaN position, an unknown kind, coinciding sphere centres (separation -(r_i +
    r_j), no normal)."""
    nan = (math.nan, 0.0, 0.0)
    assert pair("ball", nan, IDENTITY, "box", ZERO, IDENTITY)[4] == GJK_DEGENERATE
    assert pair("ell", ZERO, IDENTITY, "ell2", (1.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 0.0))[4] == GJK_DEGENERATE
    res = convex_pair(9, 0, ZERO, IDENTITY, 0, 0, (1.0, 0.0, 0.0), IDENTITY, DATA, ZERO)
    assert res[4] == GJK_DEGENERATE
    sep, n, pi, pj, st = pair("ball", (1.0, 2.0, 3.0), IDENTITY, "small_ball", (1.0, 2.0, 3.0), IDENTITY)
    assert st == GJK_DEGENERATE and sep == -(0.5 + 0.2)
