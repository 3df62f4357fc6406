"""Ellipsoid / ellipse narrow phase (common-normal method, notes 004) against independent references.

References (none of them solves the common-normal equations or uses the module's support points):

* **support-function optimum** (SciPy): the separation of two convex bodies is the largest value over
  unit directions ``n`` of ``(x_j - x_i) . n - h_i(n) - h_j(-n)`` (distance when apart, minus the
  minimum-translation depth when overlapping), with ``h(n) = |A R^T n|`` written here with SciPy's
  rotation matrices; maximised globally by a dense Fibonacci set of directions followed by
  Nelder-Mead from the best few (2-D: a dense angle grid and a bounded scalar search);
* **dense sampling** of both surfaces (curves) for the distance of separated pairs: every sampled
  pair is an upper bound of the distance and the sampling's covering radius bounds the error
  (global samples, then two finer local grids);
* **closed forms**: sphere-sphere (``|x_j - x_i| - r_i - r_j`` on the centre line) and the
  ellipsoid-plane support distance, and the spec's Gaussian-curvature formula evaluated at the
  returned point in the body frame.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.spatial.transform import Rotation

from contactlab._jit import kernel
from contactlab.geometry.ellipsoid import (STATUS_APART, STATUS_CONVERGED, ellipse_pair_2d, ellipsoid_pair,
                                           ellipsoid_plane)

EPS = np.finfo(float).eps
BIG_RANGE = 100.0      # interaction range that makes every pair of these tests "exact"


# ------------------------------------------------------------------------- compiled batch wrappers
@kernel(cache=False)
def _batch3(pos, quat, axes, warm, rng, out):
    """out[k] = separation, normal(3), point_i(3), point_j(3), curv_i, curv_j, iterations, status."""
    for k in range(pos.shape[0]):
        r = ellipsoid_pair((pos[k, 0, 0], pos[k, 0, 1], pos[k, 0, 2]),
                           (quat[k, 0, 0], quat[k, 0, 1], quat[k, 0, 2], quat[k, 0, 3]),
                           (axes[k, 0, 0], axes[k, 0, 1], axes[k, 0, 2]),
                           (pos[k, 1, 0], pos[k, 1, 1], pos[k, 1, 2]),
                           (quat[k, 1, 0], quat[k, 1, 1], quat[k, 1, 2], quat[k, 1, 3]),
                           (axes[k, 1, 0], axes[k, 1, 1], axes[k, 1, 2]),
                           (warm[k, 0], warm[k, 1], warm[k, 2]), rng)
        out[k, 0] = r[0]
        for q in range(3):
            out[k, 1 + q] = r[1][q]
            out[k, 4 + q] = r[2][q]
            out[k, 7 + q] = r[3][q]
        out[k, 10] = r[4]
        out[k, 11] = r[5]
        out[k, 12] = r[6]
        out[k, 13] = r[7]


@kernel(cache=False)
def _batch2(pos, angle, axes, warm, rng, out):
    """out[k] = separation, normal(2), point_i(2), point_j(2), curv_i, curv_j, iterations, status."""
    for k in range(pos.shape[0]):
        r = ellipse_pair_2d((pos[k, 0, 0], pos[k, 0, 1]), angle[k, 0], (axes[k, 0, 0], axes[k, 0, 1]),
                            (pos[k, 1, 0], pos[k, 1, 1]), angle[k, 1], (axes[k, 1, 0], axes[k, 1, 1]),
                            (warm[k, 0], warm[k, 1]), rng)
        out[k, 0] = r[0]
        for q in range(2):
            out[k, 1 + q] = r[1][q]
            out[k, 3 + q] = r[2][q]
            out[k, 5 + q] = r[3][q]
        out[k, 7] = r[4]
        out[k, 8] = r[5]
        out[k, 9] = r[6]
        out[k, 10] = r[7]


@kernel(cache=False)
def _batch_plane(pos, quat, axes, plane_point, plane_normal, out):
    """out[k] = separation, normal(3), point_i(3), point_plane(3), curvature."""
    for k in range(pos.shape[0]):
        r = ellipsoid_plane((pos[k, 0], pos[k, 1], pos[k, 2]), (quat[k, 0], quat[k, 1], quat[k, 2], quat[k, 3]),
                            (axes[k, 0], axes[k, 1], axes[k, 2]),
                            (plane_point[k, 0], plane_point[k, 1], plane_point[k, 2]),
                            (plane_normal[k, 0], plane_normal[k, 1], plane_normal[k, 2]))
        out[k, 0] = r[0]
        for q in range(3):
            out[k, 1 + q] = r[1][q]
            out[k, 4 + q] = r[2][q]
            out[k, 7 + q] = r[3][q]
        out[k, 10] = r[4]


def run3(pos, quat, axes, warm=None, rng=BIG_RANGE):
    pos, quat, axes = (np.ascontiguousarray(a, dtype=float) for a in (pos, quat, axes))
    warm = np.zeros((len(pos), 3)) if warm is None else np.ascontiguousarray(warm, dtype=float)
    out = np.empty((len(pos), 14))
    _batch3(pos, quat, axes, warm, float(rng), out)
    return dict(sep=out[:, 0], n=out[:, 1:4], pi=out[:, 4:7], pj=out[:, 7:10], ki=out[:, 10], kj=out[:, 11],
                it=out[:, 12].astype(int), status=out[:, 13].astype(int))


def run2(pos, angle, axes, warm=None, rng=BIG_RANGE):
    pos, angle, axes = (np.ascontiguousarray(a, dtype=float) for a in (pos, angle, axes))
    warm = np.zeros((len(pos), 2)) if warm is None else np.ascontiguousarray(warm, dtype=float)
    out = np.empty((len(pos), 11))
    _batch2(pos, angle, axes, warm, float(rng), out)
    return dict(sep=out[:, 0], n=out[:, 1:3], pi=out[:, 3:5], pj=out[:, 5:7], ki=out[:, 7], kj=out[:, 8],
                it=out[:, 9].astype(int), status=out[:, 10].astype(int))


# ------------------------------------------------------------------------- independent references
def rotation_matrix(q):
    """Body -> global matrix of the quaternion (w, x, y, z), by SciPy (scalar-last input)."""
    return Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()


def support_h(R, axes, n):
    """Support function ``|A R^T n|`` of a centred ellipsoid/ellipse for directions ``n`` (..., dim)."""
    return np.sqrt(((n @ R * axes) ** 2).sum(-1))


def fibonacci_sphere(count):
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    phi = math.pi * (1.0 + math.sqrt(5.0)) * k
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def tangent_chart(u0):
    a = np.eye(3)[np.argmin(np.abs(u0))]
    t1 = np.cross(u0, a)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(u0, t1)


def reference_separation_3d(d, Ri, ai, Rj, aj, count=6000, starts=4):
    """Global max over unit n of ``d.n - h_i(n) - h_j(n)``: Fibonacci directions, then Nelder-Mead."""
    def sep(n):
        return n @ d - support_h(Ri, ai, n) - support_h(Rj, aj, n)

    U = fibonacci_sphere(count)
    S = sep(U)
    chosen = []
    for k in np.argsort(-S):
        if all(U[k] @ U[c] < math.cos(0.3) for c in chosen):
            chosen.append(k)
        if len(chosen) == starts:
            break
    best = (-np.inf, None)
    for k in chosen:
        u0 = U[k]
        for _ in range(2):                       # re-centre the chart once for a clean polish
            t1, t2 = tangent_chart(u0)

            def f(x, u0=u0, t1=t1, t2=t2):
                v = u0 + x[0] * t1 + x[1] * t2
                return -sep(v / np.linalg.norm(v))

            r = minimize(f, np.zeros(2), method="Nelder-Mead",
                         options=dict(xatol=1e-13, fatol=1e-16, maxiter=4000,
                                      initial_simplex=[[0, 0], [0.03, 0], [0, 0.03]]))
            v = u0 + r.x[0] * t1 + r.x[1] * t2
            u0 = v / np.linalg.norm(v)
        if sep(u0) > best[0]:
            best = (sep(u0), u0)
    return best


def closest_pair(P, Q):
    """Indices and distance of the closest pair of points of the two clouds (all pairs, by blocks)."""
    best = (math.inf, 0, 0)
    q2 = (Q * Q).sum(1)
    for s in range(0, len(P), 2000):
        B = P[s:s + 2000]
        d2 = (B * B).sum(1)[:, None] + q2[None, :] - 2.0 * B @ Q.T
        k = np.unravel_index(np.argmin(d2), d2.shape)
        dist = np.linalg.norm(B[k[0]] - Q[k[1]])       # exact distance of the chosen pair
        if dist < best[0]:
            best = (dist, s + k[0], k[1])
    return best


def sampled_distance_3d(xi, Ri, ai, xj, Rj, aj):
    """Smallest distance between dense samples of the two surfaces and the error bound of that
    sampling (sum of the covering radii of the finest grids).  Level 0: 6000 Fibonacci points per
    surface (spacing ~0.046 rad); levels 1-4: 41 x 41 grids of a tangent chart of the unit sphere
    (mapped by ``x = x_c + R A u``) around the best pair so far, half-width 0.15, then +-3 steps of
    the level before."""
    def surface(x, R, a, U):
        return x + (U * a) @ R.T

    # level 0: 6000 Fibonacci points, keeping on each surface the half whose outward normal
    # R A^-1 u faces the other body (the closest points of separated bodies have n . d > 0)
    d = xj - xi
    U = fibonacci_sphere(6000)
    Ui = U[((U / ai) @ Ri.T) @ d > 0]
    Uj = U[((U / aj) @ Rj.T) @ d < 0]
    best, ki, kj = closest_pair(surface(xi, Ri, ai, Ui), surface(xj, Rj, aj, Uj))
    ui, uj = Ui[ki], Uj[kj]
    bound = math.inf
    half = 0.15
    for level in range(4):
        grid = np.linspace(-half, half, 41)
        g1, g2 = np.meshgrid(grid, grid)
        g1, g2 = g1.ravel()[:, None], g2.ravel()[:, None]

        def chart(u0):
            t1, t2 = tangent_chart(u0)
            V = u0 + g1 * t1 + g2 * t2
            return V / np.linalg.norm(V, axis=1)[:, None]

        Ui, Uj = chart(ui), chart(uj)
        best, ki, kj = closest_pair(surface(xi, Ri, ai, Ui), surface(xj, Rj, aj, Uj))
        ui, uj = Ui[ki], Uj[kj]
        # chart derivative |du/dg| <= 1, surface |dx/du| <= largest axis: covering radius of a cell
        bound = (ai.max() + aj.max()) * (grid[1] - grid[0]) * math.sqrt(0.5)
        half = 3.0 * (grid[1] - grid[0])
    return best, bound


def random_quats(rng, count):
    q = rng.normal(size=(count, 4))
    return q / np.linalg.norm(q, axis=1)[:, None]


def rotation_matrices(quat):
    """Body -> global matrices of quaternions (w, x, y, z) of shape (..., 4), by SciPy."""
    q = np.asarray(quat, dtype=float)
    return Rotation.from_quat(q.reshape(-1, 4)[:, [1, 2, 3, 0]]).as_matrix().reshape(q.shape[:-1] + (3, 3))


def common_normal_residuals_3d(res, pos, quat, axes):
    """The common-normal conditions at every solution, in each body's own frame (arrays over the
    pairs): deviation of the point from the surface, distance between the unit surface normals and
    +n (body i) / -n (body j), |(p_j - p_i) x n|, |(p_j - p_i) . n - separation|, and the relative
    error of the curvature against the spec's ``1/sqrt(K)``, ``K = 1/(a^2 b^2 c^2 (x^2/a^4 + y^2/b^4
    + z^2/c^4)^2)`` at the body-frame point."""
    n = res["n"]
    R = rotation_matrices(quat)
    out = {}
    for side, p, sign, kk in ((0, res["pi"], 1.0, res["ki"]), (1, res["pj"], -1.0, res["kj"])):
        a = axes[:, side]
        xb = np.einsum("kji,kj->ki", R[:, side], p - pos[:, side])           # R^T (p - x)
        out[f"surface{side}"] = np.abs(np.sum((xb / a) ** 2, axis=1) - 1.0)
        nb = np.einsum("kij,kj->ki", R[:, side], xb / a**2)
        nb /= np.linalg.norm(nb, axis=1)[:, None]
        out[f"normal{side}"] = np.linalg.norm(nb - sign * n, axis=1)
        K = 1.0 / (np.prod(a, axis=1) ** 2 * np.sum(xb**2 / a**4, axis=1) ** 2)
        out[f"curv{side}"] = np.abs(kk * np.sqrt(K) - 1.0)
    gap = res["pj"] - res["pi"]
    out["parallel"] = np.linalg.norm(np.cross(gap, n), axis=1)
    out["sep"] = np.abs(np.sum(gap * n, axis=1) - res["sep"])
    return out


def make_pairs_3d(seed, count, axis_range=(0.5, 2.0), rel_gap=(-0.1, 0.1)):
    """Random pairs with a separation of about ``rel_gap`` x the smallest semi-axis: the touching
    distance along a random direction is found with a coarse version of the support-function
    reference, then the target gap is added along that direction."""
    rng = np.random.default_rng(seed)
    axes = rng.uniform(*axis_range, size=(count, 2, 3))
    quat = random_quats(rng, 2 * count).reshape(count, 2, 4)
    pos = np.zeros((count, 2, 3))
    U = fibonacci_sphere(3000)
    for k in range(count):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        Ri, Rj = rotation_matrix(quat[k, 0]), rotation_matrix(quat[k, 1])
        H = support_h(Ri, axes[k, 0], U) + support_h(Rj, axes[k, 1], U)
        t0 = brentq(lambda t: np.max(t * (U @ u) - H), 0.0, axes[k].max() * 2.0)
        pos[k, 0] = rng.uniform(-1, 1, 3)
        pos[k, 1] = pos[k, 0] + (t0 + rng.uniform(*rel_gap) * axes[k].min()) * u
    return pos, quat, axes


# ------------------------------------------------------------------------- 3-D tests
@pytest.fixture(scope="module")
def random_pairs():
    pos, quat, axes = make_pairs_3d(seed=1, count=24)
    refs = []
    for k in range(len(pos)):
        Ri, Rj = rotation_matrix(quat[k, 0]), rotation_matrix(quat[k, 1])
        refs.append(reference_separation_3d(pos[k, 1] - pos[k, 0], Ri, axes[k, 0], Rj, axes[k, 1]))
    return pos, quat, axes, refs


def test_random_pairs_against_support_function_optimum(random_pairs):
    """Separation and normal of random pairs (axes 0.5-2, random orientations, overlaps up to ~10 % of
    the smallest semi-axis and gaps) against the independent global optimum of the support-function
    expression (SciPy), and the common-normal conditions at the solution checked in each body's frame
    (point on the surface, surface normals +n / -n, gap parallel to n, spec curvature formula)."""
    pos, quat, axes, refs = random_pairs
    res = run3(pos, quat, axes)
    ref_sep = np.array([r[0] for r in refs])
    assert (ref_sep < 0).sum() >= 8 and (ref_sep > 0).sum() >= 8          # both regimes are covered
    assert np.all(-ref_sep <= 0.1 * axes.min(axis=(1, 2)) + 1e-3)
    assert np.all(res["status"] == STATUS_CONVERGED)
    np.testing.assert_allclose(res["sep"], ref_sep, rtol=0, atol=1e-11)
    ref_n = np.array([r[1] for r in refs])
    # the reference normal is good to ~sqrt(eps / curvature) only
    assert np.linalg.norm(res["n"] - ref_n, axis=1).max() < 1e-6
    r = common_normal_residuals_3d(res, pos, quat, axes)
    assert max(r["surface0"].max(), r["surface1"].max()) < 1e-13
    assert max(r["normal0"].max(), r["normal1"].max()) < 1e-12
    assert r["parallel"].max() < 1e-12 and r["sep"].max() < 1e-14
    assert max(r["curv0"].max(), r["curv1"].max()) < 1e-12
    # overlapping: -separation = |point_i - point_j|
    over = ref_sep < 0
    np.testing.assert_allclose(-res["sep"][over], np.linalg.norm(res["pi"] - res["pj"], axis=1)[over],
                               rtol=0, atol=1e-14)


def test_random_separated_pairs_against_surface_sampling(random_pairs):
    """Distance of the separated random pairs against dense sampling of both surfaces: no sampled
    pair of surface points may be closer than the returned separation (a rigorous upper bound), and
    the closest sampled pair may exceed it by at most the covering radii of the sampling."""
    pos, quat, axes, refs = random_pairs
    res = run3(pos, quat, axes)
    apart = [k for k, r in enumerate(refs) if r[0] > 0]
    for k in apart:
        Ri, Rj = rotation_matrix(quat[k, 0]), rotation_matrix(quat[k, 1])
        ds, bound = sampled_distance_3d(pos[k, 0], Ri, axes[k, 0], pos[k, 1], Rj, axes[k, 1])
        assert res["sep"][k] <= ds + 1e-13
        assert res["sep"][k] >= ds - bound, (k, res["sep"][k], ds, bound)
        assert bound < 2e-4


def test_early_exit_gives_a_lower_bound(random_pairs):
    """With interaction range 0, separated pairs stop with status 3 and a positive lower bound of the
    distance (the reference optimum) which the returned normal proves: the separation equals
    ``d.n - h_i(n) - h_j(n)`` recomputed with the reference support function.  Overlapping pairs are
    not affected.  Far pairs (bounding spheres apart) exit before any iteration."""
    pos, quat, axes, refs = random_pairs
    res = run3(pos, quat, axes, rng=0.0)
    for k, (s, _) in enumerate(refs):
        if s > 1e-12:
            assert res["status"][k] == STATUS_APART
            assert 0.0 < res["sep"][k] <= s + 1e-12
            Ri, Rj = rotation_matrix(quat[k, 0]), rotation_matrix(quat[k, 1])
            n = res["n"][k]
            proof = (pos[k, 1] - pos[k, 0]) @ n - support_h(Ri, axes[k, 0], n) - support_h(Rj, axes[k, 1], n)
            assert abs(proof - res["sep"][k]) < 1e-13
        elif s < -1e-12:
            assert res["status"][k] == STATUS_CONVERGED
            assert abs(res["sep"][k] - s) < 1e-11
    far = pos.copy()
    far[:, 1] += 5.0 * (axes[:, 0].max(axis=1) + axes[:, 1].max(axis=1))[:, None] * np.array([1.0, 0.0, 0.0])
    d = far[:, 1] - far[:, 0]
    res = run3(far, quat, axes, rng=0.0)
    assert np.all(res["status"] == STATUS_APART) and np.all(res["it"] == 0)
    assert np.all(res["sep"] >= np.linalg.norm(d, axis=1) - axes[:, 0].max(axis=1) - axes[:, 1].max(axis=1) - 1e-12)


def test_many_pairs_aspect_five_are_global_optima():
    """Robustness: 1000 pairs with semi-axes 0.4-2 (aspect ratios up to 5) and overlaps up to ~10 % of
    the smallest semi-axis, without warm start.  All converge, the common-normal conditions hold,
    and none stops at a non-global stationary point: the separation is never below the best of 4000
    sampled directions of the reference support-function expression."""
    pos, quat, axes = make_pairs_3d(seed=7, count=1000, axis_range=(0.4, 2.0), rel_gap=(-0.1, 0.02))
    res = run3(pos, quat, axes)
    assert np.all(res["status"] == STATUS_CONVERGED)
    U = fibonacci_sphere(4000)
    R = rotation_matrices(quat)
    d = pos[:, 1] - pos[:, 0]
    for s in range(0, len(pos), 100):
        sl = slice(s, s + 100)
        h = [np.sqrt((np.einsum("ud,kde->kue", U, R[sl, side]) ** 2 * axes[sl, side, None, :] ** 2).sum(-1))
             for side in range(2)]
        coarse = np.max(np.einsum("ud,kd->ku", U, d[sl]) - h[0] - h[1], axis=1)
        assert np.all(res["sep"][sl] >= coarse - 1e-13)
    r = common_normal_residuals_3d(res, pos, quat, axes)
    assert max(r["normal0"].max(), r["normal1"].max()) < 1e-11 and r["parallel"].max() < 1e-11
    assert res["it"].max() <= 12


def test_spheres_as_ellipsoids_reproduce_sphere_sphere():
    """Equal semi-axes (spheres) at random orientations: normal, separation, points on the centre
    line and curvature equal the sphere-sphere closed form to a few ulp, overlapping and apart."""
    rng = np.random.default_rng(3)
    count = 200
    r = rng.uniform(0.2, 2.0, size=(count, 2))
    axes = np.repeat(r[:, :, None], 3, axis=2)
    quat = random_quats(rng, 2 * count).reshape(count, 2, 4)
    pos = np.zeros((count, 2, 3))
    pos[:, 0] = rng.uniform(-3, 3, (count, 3))
    u = rng.normal(size=(count, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    pos[:, 1] = pos[:, 0] + u * ((r[:, 0] + r[:, 1]) * rng.uniform(0.9, 1.1, count))[:, None]
    res = run3(pos, quat, axes)
    d = pos[:, 1] - pos[:, 0]
    dist = np.linalg.norm(d, axis=1)
    n = d / dist[:, None]
    assert np.all(res["status"] == STATUS_CONVERGED)
    tol = 4 * EPS * (dist + r.sum(axis=1))
    assert np.all(np.abs(res["n"] - n).max(axis=1) <= 4 * EPS)
    assert np.all(np.abs(res["sep"] - (dist - r[:, 0] - r[:, 1])) <= tol)
    assert np.all(np.abs(res["pi"] - (pos[:, 0] + r[:, :1] * n)).max(axis=1) <= 4 * EPS * (np.abs(pos).max() + 2))
    assert np.all(np.abs(res["pj"] - (pos[:, 1] - r[:, 1:] * n)).max(axis=1) <= 4 * EPS * (np.abs(pos).max() + 2))
    np.testing.assert_allclose(res["ki"], r[:, 0], rtol=4 * EPS, atol=0)
    np.testing.assert_allclose(res["kj"], r[:, 1], rtol=4 * EPS, atol=0)
    assert res["it"].max() == 1


def test_warm_start_after_small_motion(random_pairs):
    """Temporal coherence: after a small motion (translation 1e-3 of the size, rotations of 1e-3 rad)
    the previous normal as warm start converges in at most 3 Newton steps (at most 2 after a DEM-sized
    motion of 1e-5) to the same solution as a cold start (reference: the cold solve, itself checked
    against the support-function optimum above).  A stale warm normal (the opposite of the right
    one) still converges to the same solution: the centre line is always tried too."""
    pos, quat, axes, refs = random_pairs
    rng = np.random.default_rng(11)
    first = run3(pos, quat, axes)
    for motion, max_it in ((1e-3, 3), (1e-5, 2)):
        pos2 = pos + motion * rng.normal(size=pos.shape)
        quat2 = quat.copy()
        for k in range(len(pos)):
            for side in range(2):
                dq = Rotation.from_rotvec(motion * rng.normal(size=3))
                q = quat[k, side]
                qn = (dq * Rotation.from_quat([q[1], q[2], q[3], q[0]])).as_quat()
                quat2[k, side] = [qn[3], qn[0], qn[1], qn[2]]
        cold = run3(pos2, quat2, axes)
        warm = run3(pos2, quat2, axes, warm=first["n"])
        assert np.all(warm["status"] == STATUS_CONVERGED)
        assert warm["it"].max() <= max_it, (motion, warm["it"])
        assert np.abs(warm["n"] - cold["n"]).max() < 1e-12
        np.testing.assert_allclose(warm["sep"], cold["sep"], rtol=0, atol=1e-14)
    stale = run3(pos, quat, axes, warm=-first["n"])
    assert np.all(stale["status"] == STATUS_CONVERGED)
    assert np.abs(stale["n"] - first["n"]).max() < 1e-12
    assert first["it"].max() <= 8


def test_ellipsoid_plane_closed_form_and_sampling():
    """Ellipsoid-plane: separation against the support distance ``(x - p).n_p - |A R^T n_p|`` (SciPy
    rotations) and against dense surface sampling (lowest sampled point, within its covering
    radius); the point lies on the surface with outward normal -n_p; the curvature follows the spec's
    formula at that point."""
    rng = np.random.default_rng(5)
    count = 20
    pos = rng.uniform(-1, 1, (count, 3))
    quat = random_quats(rng, count)
    axes = rng.uniform(0.5, 2.0, (count, 3))
    pn = rng.normal(size=(count, 3))
    pn /= np.linalg.norm(pn, axis=1)[:, None]
    pp = pos - pn * (axes.max(axis=1) * rng.uniform(0.5, 1.1, count))[:, None]
    out = np.empty((count, 11))
    _batch_plane(pos, quat, axes, pp, pn, out)
    U = fibonacci_sphere(50000)
    for k in range(count):
        R = rotation_matrix(quat[k])
        closed = (pos[k] - pp[k]) @ pn[k] - support_h(R, axes[k], pn[k])
        assert abs(out[k, 0] - closed) < 1e-14
        np.testing.assert_array_equal(out[k, 1:4], -pn[k])
        heights = (pos[k] + (U * axes[k]) @ R.T - pp[k]) @ pn[k]
        spacing = math.sqrt(4 * math.pi / len(U))
        assert heights.min() >= out[k, 0] - 1e-14
        assert heights.min() <= out[k, 0] + axes[k].max() * spacing
        xb = R.T @ (out[k, 4:7] - pos[k])
        assert abs(np.sum((xb / axes[k]) ** 2) - 1) < 1e-14
        nb = R @ (xb / axes[k] ** 2)
        assert np.linalg.norm(nb / np.linalg.norm(nb) + pn[k]) < 1e-14
        assert abs((out[k, 7:10] - pp[k]) @ pn[k]) < 1e-14                 # on the plane
        assert np.linalg.norm(np.cross(out[k, 4:7] - out[k, 7:10], pn[k])) < 1e-14
        K = 1.0 / (np.prod(axes[k]) ** 2 * np.sum(xb**2 / axes[k] ** 4) ** 2)
        assert abs(out[k, 10] * math.sqrt(K) - 1) < 1e-13


# ------------------------------------------------------------------------- 2-D tests
def rot2(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


def reference_separation_2d(d, Ri, ai, Rj, aj):
    """Global max over the normal angle of ``d.n - h_i(n) - h_j(n)``: 20000-angle grid, then a
    bounded scalar search around the best grid angle."""
    def sep(phi):
        n = np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        return n @ d - support_h(Ri, ai, n) - support_h(Rj, aj, n)

    phi = np.linspace(-math.pi, math.pi, 20001)
    k = int(np.argmax(sep(phi)))
    h = phi[1] - phi[0]
    r = minimize_scalar(lambda p: -sep(p), bounds=(phi[k] - 2 * h, phi[k] + 2 * h), method="bounded",
                        options=dict(xatol=1e-13))
    return float(sep(r.x)), np.array([math.cos(r.x), math.sin(r.x)])


def sampled_distance_2d(xi, Ri, ai, xj, Rj, aj):
    """Closest pair of dense samples of the two ellipses (parameter t, x = x_c + R (a cos t, b sin t))
    with zooming: 2000 samples each, then 401-point windows of +-3 steps around the best pair
    (five times); returns the distance and the covering-radius bound of the last level."""
    ti = np.linspace(-math.pi, math.pi, 2001)
    tj = ti.copy()
    for level in range(6):
        Pi = xi + np.stack([ai[0] * np.cos(ti), ai[1] * np.sin(ti)], 1) @ Ri.T
        Pj = xj + np.stack([aj[0] * np.cos(tj), aj[1] * np.sin(tj)], 1) @ Rj.T
        best, ki, kj = closest_pair(Pi, Pj)
        hi, hj = ti[1] - ti[0], tj[1] - tj[0]
        bound = 0.5 * (ai.max() * hi + aj.max() * hj)
        ci, cj = ti[ki], tj[kj]
        ti = np.linspace(ci - 3 * hi, ci + 3 * hi, 401)
        tj = np.linspace(cj - 3 * hj, cj + 3 * hj, 401)
    return best, bound


@pytest.fixture(scope="module")
def random_pairs_2d():
    rng = np.random.default_rng(2)
    count = 40
    axes = rng.uniform(0.5, 2.0, (count, 2, 2))
    angle = rng.uniform(-math.pi, math.pi, (count, 2))
    pos = np.zeros((count, 2, 2))
    phi = np.linspace(-math.pi, math.pi, 4001)
    U = np.stack([np.cos(phi), np.sin(phi)], 1)
    for k in range(count):
        u = rng.normal(size=2)
        u /= np.linalg.norm(u)
        H = support_h(rot2(angle[k, 0]), axes[k, 0], U) + support_h(rot2(angle[k, 1]), axes[k, 1], U)
        t0 = brentq(lambda t: np.max(t * (U @ u) - H), 0.0, 2.0 * axes[k].max())
        pos[k, 0] = rng.uniform(-1, 1, 2)
        pos[k, 1] = pos[k, 0] + (t0 + rng.uniform(-0.1, 0.1) * axes[k].min()) * u
    refs = [reference_separation_2d(pos[k, 1] - pos[k, 0], rot2(angle[k, 0]), axes[k, 0], rot2(angle[k, 1]),
                                    axes[k, 1]) for k in range(count)]
    return pos, angle, axes, refs


def test_ellipses_against_references(random_pairs_2d):
    """2-D random ellipse pairs: separation vs the support-function optimum (angle grid + SciPy bounded
    search), distance of separated pairs vs dense sampling of both curves (upper bound, and lower
    bound by the covering radius), common-normal conditions (points on the curves, curve normals +n
    / -n, gap parallel to n) and the radius of curvature of an ellipse at a body-frame point,
    ``a^2 b^2 (x^2/a^4 + y^2/b^4)^(3/2)``."""
    pos, angle, axes, refs = random_pairs_2d
    res = run2(pos, angle, axes)
    ref_sep = np.array([r[0] for r in refs])
    assert (ref_sep < 0).sum() >= 10 and (ref_sep > 0).sum() >= 10
    assert np.all(res["status"] == STATUS_CONVERGED)
    np.testing.assert_allclose(res["sep"], ref_sep, rtol=0, atol=1e-12)
    for k, (s, n) in enumerate(refs):
        assert np.linalg.norm(res["n"][k] - n) < 1e-6
        for side, p, sign, rho in ((0, res["pi"][k], 1.0, res["ki"][k]), (1, res["pj"][k], -1.0, res["kj"][k])):
            R, a = rot2(angle[k, side]), axes[k, side]
            xb = R.T @ (p - pos[k, side])
            assert abs(np.sum((xb / a) ** 2) - 1) < 1e-13
            nb = R @ (xb / a**2)
            assert np.linalg.norm(nb / np.linalg.norm(nb) - sign * res["n"][k]) < 1e-12
            assert abs(rho / (np.prod(a) ** 2 * np.sum(xb**2 / a**4) ** 1.5) - 1) < 1e-12
        gap = res["pj"][k] - res["pi"][k]
        assert abs(gap[0] * res["n"][k][1] - gap[1] * res["n"][k][0]) < 1e-12
        assert abs(gap @ res["n"][k] - res["sep"][k]) < 1e-14
        if s > 0:
            ds, bound = sampled_distance_2d(pos[k, 0], rot2(angle[k, 0]), axes[k, 0], pos[k, 1],
                                            rot2(angle[k, 1]), axes[k, 1])
            assert res["sep"][k] <= ds + 1e-13
            assert res["sep"][k] >= ds - bound and bound < 1e-8


def test_ellipses_circles_early_exit_and_warm_start(random_pairs_2d):
    """2-D: circles given as ellipses reproduce the circle-circle closed form to a few ulp; with range
    0 separated pairs exit with status 3 and a valid lower bound (reference optimum); a warm start
    after a small motion converges in at most 3 steps to the cold solution."""
    rng = np.random.default_rng(8)
    count = 100
    r = rng.uniform(0.2, 2.0, (count, 2))
    axes = np.repeat(r[:, :, None], 2, axis=2)
    angle = rng.uniform(-math.pi, math.pi, (count, 2))
    pos = np.zeros((count, 2, 2))
    pos[:, 0] = rng.uniform(-3, 3, (count, 2))
    u = rng.normal(size=(count, 2))
    u /= np.linalg.norm(u, axis=1)[:, None]
    pos[:, 1] = pos[:, 0] + u * (r.sum(axis=1) * rng.uniform(0.9, 1.1, count))[:, None]
    res = run2(pos, angle, axes)
    d = pos[:, 1] - pos[:, 0]
    dist = np.linalg.norm(d, axis=1)
    assert np.all(res["status"] == STATUS_CONVERGED)
    assert np.all(np.abs(res["n"] - d / dist[:, None]).max(axis=1) <= 4 * EPS)
    assert np.all(np.abs(res["sep"] - (dist - r.sum(axis=1))) <= 4 * EPS * (dist + r.sum(axis=1)))
    # a^2 b^2 / h^3: six roundings
    np.testing.assert_allclose(res["ki"], r[:, 0], rtol=8 * EPS, atol=0)
    np.testing.assert_allclose(res["kj"], r[:, 1], rtol=8 * EPS, atol=0)

    pos, angle, axes, refs = random_pairs_2d
    ref_sep = np.array([r[0] for r in refs])
    res = run2(pos, angle, axes, rng=0.0)
    apart = ref_sep > 1e-12
    assert np.all(res["status"][apart] == STATUS_APART)
    assert np.all((res["sep"][apart] > 0) & (res["sep"][apart] <= ref_sep[apart] + 1e-12))
    first = run2(pos, angle, axes)
    pos2 = pos + 1e-3 * rng.normal(size=pos.shape)
    angle2 = angle + 1e-3 * rng.normal(size=angle.shape)
    cold = run2(pos2, angle2, axes)
    warm = run2(pos2, angle2, axes, warm=first["n"])
    assert np.all(warm["status"] == STATUS_CONVERGED) and warm["it"].max() <= 3
    assert np.abs(warm["n"] - cold["n"]).max() < 1e-12


def test_time_per_call(random_pairs):
    """Cost of a converged overlapping call (cold and warm), for the record; loose sanity bound only."""
    pos, quat, axes, _ = random_pairs
    reps = 200
    P, Q, A = (np.repeat(x, reps, axis=0) for x in (pos, quat, axes))
    first = run3(P, Q, A)
    t = time.perf_counter()
    run3(P, Q, A)
    cold = (time.perf_counter() - t) / len(P)
    t = time.perf_counter()
    run3(P, Q, A, warm=first["n"])
    warm = (time.perf_counter() - t) / len(P)
    print(f"\nellipsoid_pair: {cold * 1e6:.2f} us per cold call, {warm * 1e6:.2f} us per warm call")
    assert warm < 1e-4
