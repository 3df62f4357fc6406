"""Spec 003, the convex roll: hull geometry and the ConvexRollContact law.

References (independent of the implementation under test):

* ``roll_plane`` and ``roll_support_local``: brute-force minimum / maximum over a dense sampling of
  the roll's surface (rings in ``s`` and ``phi``, rotated with SciPy's ``Rotation``), with the
  sampling error bounded from the grid spacing (``|f''| ds^2 / 8`` in ``s``, ``r (1 - cos(dphi/2))``
  around);
* mass properties: ``scipy.integrate.quad`` of the solid of revolution, and a cylinder's closed form;
* the law: its NumPy twin on random records, the spec's formulas (``f_N = k delta + d delta'``,
  ``|f_s| = mu |f_N|``), the Stribeck function as documented for ``exudyn.physics``, and the slip
  velocity of Exudyn's implementation (``vC_t + v1_t``) for a roll on the ground.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.integrate import IntegrationWarning, quad
from scipy.optimize import minimize_scalar
from scipy.spatial.transform import Rotation

import contactlab as cl
from contactlab._jit import kernel
from contactlab.errors import InputError
from contactlab.geometry.convex_roll import (PLANE_APART, PLANE_OK, bounding_radius, hull_derivative,
                                             roll_mass_properties, roll_plane, roll_shape_data,
                                             roll_support_local, roll_surface)
from contactlab.geometry.record import GEOMETRY_FIELDS, ContactGeometry
from contactlab.laws import convex_roll
from contactlab.laws.base import PairCase

SPEC_HULL = [-3.6, 0.0, 0.0165]          # spec 003's example: r(s) = 0.0165 - 3.6 s^2, m
SPEC_LENGTH = 0.1                         # m
#: hulls covering every code path: closed form (n <= 3) and Newton (n >= 4), symmetric and not
HULLS = {
    "spec": (SPEC_HULL, SPEC_LENGTH),
    "quartic": ([-200.0, 0.0, -3.0, 0.0, 0.02], 0.1),
    "asymmetric_cubic": ([-10.0, -3.0, 0.05, 0.02], 0.1),
    "quintic": ([-500.0, -300.0, -20.0, -4.0, 0.1, 0.03], 0.08),
    "cone": ([0.1, 0.02], 0.1),
    "cylinder": ([0.015], 0.06),
}


# ---------------------------------------------------------------------------- compiled entry points
@kernel(cache=False)
def _call_law(g, p, h, dt):
    return convex_roll.law(g, p, h, dt)


@kernel(cache=False)
def _stribeck_many(v, prm):
    out = np.empty(v.size)
    for i in range(v.size):
        out[i] = convex_roll.stribeck(v[i], prm[0], prm[1], prm[2], prm[3], prm[4])
    return out


@kernel(cache=False)
def _support_many(data, ref, dirs):
    out = np.empty((dirs.shape[0], 3))
    for i in range(dirs.shape[0]):
        p = roll_support_local(data, ref, (dirs[i, 0], dirs[i, 1], dirs[i, 2]))
        out[i, 0], out[i, 1], out[i, 2] = p[0], p[1], p[2]
    return out


@kernel(cache=False)
def _plane_many(data, ref, pos, quat, pp, pn):
    """roll_plane for each row: (separation, s_c, radius_c, status) (N, 4), normals and points (N, 3)."""
    m = pos.shape[0]
    scal = np.empty((m, 4))
    normals = np.empty((m, 3))
    points = np.empty((m, 3))
    for i in range(m):
        sep, nrm, pt, s_c, r_c, status = roll_plane(
            data, ref, (pos[i, 0], pos[i, 1], pos[i, 2]), (quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]),
            (pp[i, 0], pp[i, 1], pp[i, 2]), (pn[i, 0], pn[i, 1], pn[i, 2]))
        scal[i, 0], scal[i, 1], scal[i, 2], scal[i, 3] = sep, s_c, r_c, status
        for c in range(3):
            normals[i, c] = nrm[c]
            points[i, c] = pt[c]
    return scal, normals, points


# ---------------------------------------------------------------------------- brute-force references
def _grid(block, n_s=1001, n_phi=1024):
    """Dense sampling of the hull: axial coordinates, radii, angles (rings include both end rims)."""
    n = int(block[0])
    L, off, k = block[1], block[3], block[4:4 + n]
    s = np.linspace(-L / 2, L / 2, n_s)
    phi = 2 * np.pi * np.arange(n_phi) / n_phi
    return s, np.polyval(k, s), phi, off, k, L


def _sampling_error(block, d, n_s=1001, n_phi=1024):
    """Upper bound (m per unit |d|) of max_x d.x - max over the grid: ``rho max|r''| ds^2 / 8`` for
    the nearest ring, ``rho r_max (1 - cos(dphi / 2))`` for the nearest angle."""
    s, r, _, _, k, L = _grid(block, n_s, n_phi)
    rho = math.hypot(d[1], d[2])
    r2 = np.abs(np.polyval(np.polyder(k, 2), s)).max() if k.size >= 3 else 0.0
    ds = L / (n_s - 1)
    return rho * r2 * ds**2 / 8 + rho * r.max() * (1 - math.cos(math.pi / n_phi)) + 1e-15


def _brute_max(block, d, n_s=1001, n_phi=1024):
    """max over the sampled surface of d . x (body frame)."""
    s, r, phi, off, _, _ = _grid(block, n_s, n_phi)
    vals = d[0] * (off + s)[:, None] + r[:, None] * (d[1] * np.cos(phi) + d[2] * np.sin(phi))[None, :]
    return float(vals.max())


def _quad(f, a, b):
    """``scipy.integrate.quad`` to (near) machine precision; its round-off warning is expected at
    that tolerance and the result is compared explicitly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        return quad(f, a, b, epsabs=1e-300, epsrel=1e-13, limit=200)[0]


def _random_unit(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]


# ---------------------------------------------------------------------------- shape data and validation
def test_shape_block_layout_and_bounding_radius():
    for coeffs, L in HULLS.values():
        blk = roll_shape_data(coeffs, L)
        n = len(coeffs)
        assert blk.dtype == np.float64 and blk.shape == (4 + n,)
        assert blk[0] == n and blk[1] == L and list(blk[4:]) == coeffs
        # offset = -centroid (by quad, independent of the Gauss-Legendre rule)
        vol = _quad(lambda s: np.polyval(coeffs, s) ** 2, -L / 2, L / 2)
        mom = _quad(lambda s: s * np.polyval(coeffs, s) ** 2, -L / 2, L / 2)
        assert blk[3] == pytest.approx(-mom / vol, abs=1e-15)
        # bounding sphere about the centre of mass vs the farthest of many sampled surface points
        s = np.linspace(-L / 2, L / 2, 200001)
        far = np.sqrt((blk[3] + s) ** 2 + np.polyval(coeffs, s) ** 2)
        assert far.max() <= blk[2] * (1 + 1e-14)
        # the sampled maximum is within (d far/ds) * ds/2 of the true one
        assert blk[2] - far.max() <= 0.5 * (s[1] - s[0]) * 2.0 + 1e-16
    # spec hull: the end rim is the farthest point, sqrt(0.05^2 + r(0.05)^2)
    blk = roll_shape_data(SPEC_HULL, SPEC_LENGTH)
    assert blk[3] == 0.0
    assert blk[2] == pytest.approx(math.hypot(0.05, 0.0165 - 3.6 * 0.05**2), rel=1e-15)
    assert bounding_radius(SPEC_HULL, SPEC_LENGTH) == pytest.approx(blk[2], rel=1e-15)


def test_hull_derivative():
    np.testing.assert_array_equal(hull_derivative(SPEC_HULL), [-7.2, 0.0])
    np.testing.assert_array_equal(hull_derivative([-200.0, 0.0, -3.0, 0.0, 0.02]), [-800.0, 0.0, -6.0, 0.0])
    np.testing.assert_array_equal(hull_derivative([0.015]), [0.0])


def _narrow_concave_violation():
    """A hull with ``r'' = c - a (s - s0)^2``: positive only for ``|s - s0| < 1e-4 m``, negative
    elsewhere; r > 0 on [-0.01, 0.01] (length 0.02 m)."""
    a, c, s0 = 1e6, 1e-2, 0.00234
    k2 = np.array([-a, 2 * a * s0, c - a * s0**2])
    k = np.polyint(k2, 2)
    k[-1] = 0.02
    return k


@pytest.mark.parametrize("coeffs, length, words", [
    ([], 0.1, "non-empty"),
    ([0.01, float("nan")], 0.1, "finite"),
    (SPEC_HULL, 0.0, "length"),
    (SPEC_HULL, -0.1, "length"),
    (SPEC_HULL, float("inf"), "length"),
    (SPEC_HULL, 0.2, "> 0"),                               # r(+-0.1) = 0.0165 - 0.036 < 0
    ([3.6, 0.0, 0.0165], 0.1, "convex"),                    # r'' = +7.2
    ([40.0, 0.0, -0.003, 0.0], 0.1, "> 0"),                 # r(0) = 0: not > 0
    ([0.01, 0.0], 0.1, "> 0"),                              # cone through zero: r(-0.05) < 0
    ("abc", 0.1, "numbers"),
])
def test_validation_errors(coeffs, length, words):
    with pytest.raises(InputError, match=words):
        roll_shape_data(coeffs, length)


def test_convexity_is_checked_between_samples():
    k = _narrow_concave_violation()
    s = np.linspace(-0.01, 0.01, 51)      # divided differences of r' on a sampling look convex ...
    assert np.all(np.diff(np.polyval(np.polyder(k), s)) < 0)
    assert np.all(np.polyval(k, np.linspace(-0.01, 0.01, 10001)) > 0)
    assert np.polyval(np.polyder(k, 2), 0.00234) > 0    # ... but r'' > 0 near s0
    with pytest.raises(InputError, match=r"convex.*r''"):
        roll_shape_data(k, 0.02)
    with pytest.raises(InputError, match="convex"):
        roll_mass_properties(k, 0.02, 1000.0)


# ---------------------------------------------------------------------------- mass properties
@pytest.mark.parametrize("name", list(HULLS))
def test_mass_properties_against_quad(name):
    coeffs, L = HULLS[name]
    rho = 7850.0

    def integral(f):
        return _quad(f, -L / 2, L / 2)

    r = lambda s: np.polyval(coeffs, s)  # noqa: E731
    mass = rho * math.pi * integral(lambda s: r(s) ** 2)
    sbar = rho * math.pi * integral(lambda s: s * r(s) ** 2) / mass
    i_xx = rho * math.pi / 2 * integral(lambda s: r(s) ** 4)
    # disc of radius r, thickness ds at distance (s - sbar): r^2/4 + (s - sbar)^2 per unit mass
    i_yy = rho * math.pi * integral(lambda s: r(s) ** 4 / 4 + (s - sbar) ** 2 * r(s) ** 2)
    m, c, inertia = roll_mass_properties(coeffs, L, rho)
    assert m == pytest.approx(mass, rel=1e-12)
    assert c == pytest.approx(sbar, rel=1e-10, abs=1e-16)
    np.testing.assert_allclose(inertia, [i_xx, i_yy, i_yy], rtol=1e-12)


def test_mass_properties_cylinder_closed_form():
    R, L, rho = 0.015, 0.06, 2700.0
    m, c, inertia = roll_mass_properties([R], L, rho)
    m_ref = rho * math.pi * R**2 * L
    assert m == pytest.approx(m_ref, rel=1e-14)
    assert c == pytest.approx(0.0, abs=1e-17)
    np.testing.assert_allclose(inertia, [m_ref * R**2 / 2, m_ref * (3 * R**2 + L**2) / 12,
                                         m_ref * (3 * R**2 + L**2) / 12], rtol=1e-14)


# ---------------------------------------------------------------------------- support mapping
@pytest.mark.parametrize("name", list(HULLS))
def test_support_against_brute_force(name):
    blk = roll_shape_data(*HULLS[name])
    rng = np.random.default_rng(11)
    dirs = np.vstack([_random_unit(rng, 40),
                      [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, -1], [0.6, 0.8, 0], [1, 1e-170, 0],
                       [-1, 0, 1e-9]]])
    data = np.concatenate(([7.0, 7.0, 7.0], blk))       # at an offset, as in the shared array
    sup = _support_many(data, 3, dirs)
    n = int(blk[0])
    k, L, off = blk[4:4 + n], blk[1], blk[3]
    for d, x in zip(dirs, sup):
        best = _brute_max(blk, d)
        value = float(d @ x)
        assert best - 1e-15 <= value <= best + _sampling_error(blk, d), (d, value, best)
        # the support point lies on the roll: inside the interval, on or inside the hull
        s = x[0] - off
        assert -L / 2 - 1e-15 <= s <= L / 2 + 1e-15
        assert math.hypot(x[1], x[2]) <= np.polyval(k, s) * (1 + 1e-14) + 1e-18
    # along the axis: the centre of the end disc; d = 0: the roll's centre
    np.testing.assert_array_equal(sup[40], [off + L / 2, 0, 0])
    np.testing.assert_array_equal(sup[41], [off - L / 2, 0, 0])
    np.testing.assert_array_equal(_support_many(data, 3, np.zeros((1, 3)))[0], [off, 0, 0])


def test_support_spec_hull_slope_matching():
    """Interior support points satisfy the spec's slope matching r'(s) = -d_x / |d_yz|."""
    blk = roll_shape_data(SPEC_HULL, SPEC_LENGTH)
    rng = np.random.default_rng(3)
    dirs = _random_unit(rng, 200)
    sup = _support_many(blk, 0, dirs)
    rho = np.hypot(dirs[:, 1], dirs[:, 2])
    s_theory = np.clip(dirs[:, 0] / (7.2 * rho), -0.05, 0.05)    # r'(s) = -7.2 s
    np.testing.assert_allclose(sup[:, 0], s_theory, rtol=1e-13, atol=1e-17)


# ---------------------------------------------------------------------------- roll on a plane
def _plane_cases(rng, m, r_bound):
    quat = rng.normal(size=(m, 4))
    quat /= np.linalg.norm(quat, axis=1)[:, None]
    pn = _random_unit(rng, m)
    pp = rng.normal(scale=0.3, size=(m, 3))
    height = rng.uniform(-0.3 * r_bound, 1.6 * r_bound, m)
    tang = rng.normal(scale=0.2, size=(m, 3))
    tang -= (tang * pn).sum(axis=1)[:, None] * pn
    pos = pp + height[:, None] * pn + tang
    return pos, quat, pp, pn


@pytest.mark.parametrize("name", list(HULLS))
def test_roll_plane_against_brute_force(name):
    blk = roll_shape_data(*HULLS[name])
    n = int(blk[0])
    k, L, off = blk[4:4 + n], blk[1], blk[3]
    rng = np.random.default_rng(5)
    pos, quat, pp, pn = _plane_cases(rng, 60, blk[2])
    scal, normals, points = _plane_many(blk, 0, pos, quat, pp, pn)
    # the largest radius, by SciPy's bounded scalar minimisation (and the ends)
    opt = minimize_scalar(lambda s: -np.polyval(k, s), bounds=(-L / 2, L / 2), method="bounded",
                          options=dict(xatol=1e-13))
    r_max = max(-opt.fun, np.polyval(k, -L / 2), np.polyval(k, L / 2))
    seen = {PLANE_OK: 0, PLANE_APART: 0}
    for q, p, a, nrm, (sep, s_c, r_c, status), normal, point in zip(quat, pos, pp, pn, scal, normals, points):
        rot = Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()     # SciPy: scalar last
        nb = rot.T @ nrm
        # brute force: the lowest sampled surface point above the plane
        exact_min = float((p - a) @ nrm) - _brute_max(blk, -nb)
        err = _sampling_error(blk, -nb)
        seen[int(status)] += 1
        np.testing.assert_array_equal(normal, -nrm)
        if status == PLANE_APART:
            # the pre-check: both end spheres of the largest radius clear the plane
            ends = [float((p + rot @ [off + e, 0, 0] - a) @ nrm) for e in (-L / 2, L / 2)]
            assert min(ends) - r_max > 0
            assert sep == pytest.approx(min(ends) - r_max, rel=1e-12, abs=1e-16)
            assert 0 < sep <= exact_min - err + 1e-15          # a lower bound of the separation
            continue
        assert status == PLANE_OK
        assert exact_min - err - 1e-15 <= sep <= exact_min + 1e-15, (sep, exact_min, err)
        # C is on the surface at s_c, and its height above the plane is the separation
        xb = rot.T @ (point - p)
        assert xb[0] - off == pytest.approx(s_c, abs=1e-15)
        assert math.hypot(xb[1], xb[2]) == pytest.approx(np.polyval(k, s_c), rel=1e-13)
        assert r_c == pytest.approx(np.polyval(k, s_c), rel=1e-15)
        assert float((point - a) @ nrm) == pytest.approx(sep, abs=1e-15)
    assert seen[PLANE_OK] >= 10 and seen[PLANE_APART] >= 10


def test_roll_plane_special_orientations():
    """Spec hull on the ground z = 0: lying on its side (contact in the middle, s_c = 0), standing on
    an end (the end disc's centre), and tilted so that the rim touches."""
    blk = roll_shape_data(SPEC_HULL, SPEC_LENGTH)
    up = np.array([[0.0, 0.0, 1.0]] * 3)
    ground = np.zeros((3, 3))
    side = [1.0, 0.0, 0.0, 0.0]                                       # axis along global x
    stand = [0.5, -0.5, -0.5, -0.5]                                  # body x -> global +z, exactly
    tilt = [math.cos(0.3), 0.0, -math.sin(0.3), 0.0]                   # axis tilted by 0.6 rad
    quat = np.array([side, stand, tilt])
    pos = np.array([[0.0, 0.0, 0.0160], [0.0, 0.0, 0.0490], [0.0, 0.0, 0.02]])
    scal, normals, points = _plane_many(blk, 0, pos, quat, ground, up)
    assert np.all(scal[:, 3] == PLANE_OK)
    # lying: deepest point straight below the centre, penetration 0.0165 - 0.016
    assert scal[0, 0] == pytest.approx(0.0160 - 0.0165, abs=1e-16)
    assert scal[0, 1] == 0.0 and scal[0, 2] == 0.0165
    np.testing.assert_allclose(points[0], [0.0, 0.0, 0.0160 - 0.0165], atol=1e-17)
    # standing: the lower end disc (body -x end, at global z = pos - L/2) is the contact
    assert scal[1, 0] == pytest.approx(0.0490 - 0.05, abs=1e-16)
    np.testing.assert_allclose(points[1], [0.0, 0.0, 0.0490 - 0.05], atol=1e-16)
    assert scal[1, 1] == -0.05
    # tilted: slope matching r'(s) = -7.2 s = n_b,x / rho with n_b = R^T e_z
    rot = Rotation.from_quat([tilt[1], tilt[2], tilt[3], tilt[0]]).as_matrix()
    nb = rot.T @ [0, 0, 1]
    s_c = float(np.clip(-nb[0] / (7.2 * math.hypot(nb[1], nb[2])), -0.05, 0.05))
    assert scal[2, 1] == pytest.approx(s_c, rel=1e-14)
    assert scal[2, 0] == pytest.approx(0.02 + nb[0] * s_c - (0.0165 - 3.6 * s_c**2) * math.hypot(nb[1], nb[2]),
                                       abs=1e-16)


# ---------------------------------------------------------------------------- surface mesh
@pytest.mark.parametrize("name", ["spec", "asymmetric_cubic", "cylinder"])
def test_roll_surface_closed_and_outward(name):
    coeffs, L = HULLS[name]
    blk = roll_shape_data(coeffs, L)
    v, t = roll_surface(blk, 64, 256)
    assert v.shape == (65 * 256 + 2, 3) and t.shape == (2 * 256 * 65, 3)
    # closed and consistently oriented: every directed edge once, its reverse once
    edges = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    directed = {tuple(e) for e in edges}
    assert len(directed) == len(edges)
    assert all((b, a) in directed for a, b in directed)
    # outward: the divergence theorem gives the (positive) volume, converging to the exact one
    vol = np.einsum("ij,ij->i", v[t[:, 0]], np.cross(v[t[:, 1]], v[t[:, 2]])).sum() / 6
    exact = math.pi * _quad(lambda s: np.polyval(coeffs, s) ** 2, -L / 2, L / 2)
    # inscribed: polygons of 256 sides (area factor sin(x)/x, x = 2 pi/256) on chords in s, which
    # lie within max|r''| ds^2 / 8 inside a concave hull
    s = np.linspace(-L / 2, L / 2, 10001)
    r = np.polyval(coeffs, s)
    r2 = np.abs(np.polyval(np.polyder(coeffs, 2), s)).max() if len(coeffs) >= 3 else 0.0
    x = 2 * math.pi / 256
    bound = 1 - math.sin(x) / x + 2 * r2 * (L / 64) ** 2 / 8 / r.min()
    assert 0 < exact - vol <= bound * exact * (1 + 1e-9)   # (the cylinder attains the bound)
    # vertices lie on the hull (body frame: roll centre at x = offset)
    s_v = v[:-2, 0] - blk[3]
    np.testing.assert_allclose(np.hypot(v[:-2, 1], v[:-2, 2]), np.polyval(coeffs, s_v), rtol=1e-13)


# ---------------------------------------------------------------------------- the law
def _params(**kw):
    base = dict(contact_stiffness=1e5, contact_damping=200.0, dynamic_friction=0.4, static_friction_offset=0.15,
                viscous_friction=0.8, exponential_decay_static=2e-3, friction_proportional_zone=1e-3)
    base.update(kw)
    model = cl.models.ConvexRollContact(**base)
    return model, model.pair_table((cl.Material(density=1000.0, young=1e7, poisson=0.3, name="m"),))[0, 0]


def _record(g):
    """The compiled record of a geometry dict (fields it does not name, e.g. areas, are 0)."""
    vals = [g.get(f, 0.0) for f in GEOMETRY_FIELDS]
    return ContactGeometry(*[tuple(float(x) for x in v) if np.ndim(v) else float(v) for v in vals])


def _random_geometry(rng, dt):
    n = _random_unit(rng, 1)[0]
    w = rng.normal(size=3) * 10 ** rng.uniform(-5.5, -0.5)            # slip from 3e-6 to 0.3 m/s
    w += n * rng.normal(scale=0.1)                                     # normal rate
    return dict(normal=n, overlap=rng.uniform(-2e-5, 3e-4), contact_point=rng.normal(size=3),
                branch_i=0.02 * n, branch_j=-0.02 * n, rel_velocity=w, rel_angular_velocity=rng.normal(size=3),
                rel_displacement=w * dt * (1 + 0.01 * rng.normal()), rel_rotation=rng.normal(size=3) * dt,
                radius_i=0.0165, radius_j=math.inf, radius=0.0165, mass=0.06, pair_rotation=np.zeros(3))


@pytest.mark.parametrize("convention, friction_mass", [("contact_point", 0.0), ("centre", 0.0),
                                                       ("contact_point", 0.05), ("centre", 1e-3)])
def test_law_equals_numpy_twin(convention, friction_mass):
    model, p = _params(damping_convention=convention, friction_mass=friction_mass)
    assert convex_roll.HISTORY_SIZE == model.history_size == 3
    rng = np.random.default_rng(17)
    hist_rng = np.random.default_rng(18)
    dt = 1e-5
    pulled = linear = beyond = inactive = 0
    for _ in range(600):
        g = _random_geometry(rng, dt)
        hist = hist_rng.normal(size=3) * 10 ** hist_rng.uniform(-3, 1)  # the last step's friction, N
        f, m, e, d, active, h = _call_law(_record(g), p, tuple(hist), dt)
        rf, rm, re_, rd, ractive, rh = convex_roll.reference_law(g, p, hist, dt)
        assert active == ractive
        # implicit: the end slip u = v_s - half f_old and the Stribeck argument |u| - half peak are
        # differences of larger numbers, whose round-off the two codes make differently; the
        # friction (history) carries the round-off of the projection of w, as large as the force's
        rtol = 1e-12 if friction_mass == 0.0 else 1e-10
        atol = 1e-15 + rtol * (np.linalg.norm(hist) + np.linalg.norm(rf))
        np.testing.assert_allclose(h, rh, rtol=rtol, atol=atol)
        np.testing.assert_allclose(f, rf, rtol=rtol, atol=atol)
        assert m == (0.0, 0.0, 0.0)
        assert e == pytest.approx(re_, rel=1e-13, abs=0)
        assert d == pytest.approx(rd, rel=1e-11, abs=1e-25)
        if not active:
            inactive += 1
            assert f == (0.0, 0.0, 0.0) and e == 0.0 and d == 0.0
            continue
        n, w = g["normal"], g["rel_velocity"]
        slip = np.linalg.norm(w - (w @ n) * n)
        f_n = -float(np.dot(f, n))
        pulled += f_n < 0
        linear += slip <= 1e-3
        beyond += slip > 1e-3
    assert min(pulled, linear, beyond, inactive) >= 20


def _stribeck_formula(v, mu_d, mu_s, mu_v, v_exp, v_reg):
    """exudyn.physics.StribeckFunction as documented (regularized, with viscous part)."""
    if abs(v) <= v_reg and v_reg != 0:
        return (mu_d + mu_s) * v / v_reg
    sgn = 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)
    return sgn * (mu_d + mu_s * math.exp(-(abs(v) - v_reg) / v_exp) + mu_v * (abs(v) - v_reg))


@pytest.mark.parametrize("prm", [(0.4, 0.15, 0.8, 2e-3, 1e-3), (0.3, 0.0, 0.0, 1e-3, 0.0), (0.0, 0.5, 2.0, 0.1, 0.01)])
def test_stribeck_curve(prm):
    mu_d, mu_s, mu_v, v_exp, v_reg = prm
    v = np.concatenate([np.linspace(-0.05, 0.05, 2001), [0.0, v_reg, -v_reg, v_reg + v_exp, 10.0]])
    got = _stribeck_many(v, np.array(prm))
    want = np.array([_stribeck_formula(x, *prm) for x in v])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-17)
    np.testing.assert_allclose(convex_roll.stribeck_reference(v, *prm), want, rtol=1e-14, atol=1e-17)
    # static peak at v_reg, offset decayed to 1/e one v_exp further, odd in v
    if v_reg > 0:
        assert got[-4] == pytest.approx(mu_d + mu_s, rel=1e-15)
    np.testing.assert_array_equal(_stribeck_many(-v, np.array(prm)), -got)
    assert got[-2] == pytest.approx(mu_d + mu_s / math.e + mu_v * v_exp, rel=1e-14)
    assert got[-5] == 0.0


def test_law_follows_the_spec_formulas():
    """f_N = k delta + d delta' along -n; |f_s| = mu(|v_s|) |f_N| opposing the slip (the explicit
    evaluation: ``friction_mass = 0``); stored k delta^2/2; dissipation d delta'^2 dt + mu |f_N| |v_s| dt
    for a step that moves the points by rel_velocity dt under a steady friction (the last step's
    equal to this one's), and half the friction's share when the friction starts at this step
    (the trapezoid of the forces at the two ends of the step)."""
    model, p = _params()
    rng = np.random.default_rng(23)
    dt = 2e-6
    for _ in range(200):
        g = _random_geometry(rng, dt)
        g["overlap"] = abs(g["overlap"]) + 1e-6
        g["rel_displacement"] = g["rel_velocity"] * dt
        n, w = g["normal"], g["rel_velocity"]
        rate = -float(w @ n)
        f_n = 1e5 * g["overlap"] + 200.0 * rate
        v_s = -(w - (w @ n) * n)
        speed = np.linalg.norm(v_s)
        mu = _stribeck_formula(speed, 0.4, 0.15, 0.8, 2e-3, 1e-3)
        friction = -mu * abs(f_n) * v_s / speed
        f, _, e, d, active, h = _call_law(_record(g), p, tuple(friction), dt)
        f = np.array(f)
        assert active
        assert -float(f @ n) == pytest.approx(f_n, rel=1e-12, abs=1e-12)
        f_t = f - (f @ n) * n
        np.testing.assert_allclose(f_t, friction, rtol=0, atol=1e-12 * np.linalg.norm(f))
        np.testing.assert_allclose(h, friction, rtol=0, atol=1e-12 * np.linalg.norm(f))
        assert e == pytest.approx(0.5e5 * g["overlap"] ** 2, rel=1e-14)
        assert d == pytest.approx(200.0 * rate**2 * dt + mu * abs(f_n) * speed * dt, rel=1e-11)
        d_first = _call_law(_record(g), p, (0.0, 0.0, 0.0), dt)[3]
        assert d_first == pytest.approx(200.0 * rate**2 * dt + 0.5 * mu * abs(f_n) * speed * dt, rel=1e-11)
    # no force when apart or just touching
    g = _random_geometry(rng, dt)
    for overlap in (0.0, -1e-6):
        g["overlap"] = overlap
        f, m, e, d, active, _ = _call_law(_record(g), p, (0.0, 0.0, 0.0), dt)
        assert not active and f == (0.0, 0.0, 0.0) and e == 0.0 and d == 0.0


def test_roll_on_ground_slip_matches_exudyn():
    """A roll on the ground z = 0 (body i = roll, j = ground at rest): the law's slip velocity is
    the tangential velocity of the roll's material point at C, i.e. Exudyn's implementation
    ``vDiff = vC_t + v1_t`` with ``vC = omega x p_m1,C`` and ``v1`` the velocity of the roll's
    centre (marker m1); pure rolling exerts no friction."""
    model, p = _params(contact_damping=0.0)
    blk = roll_shape_data([-10.0, -3.0, 0.05, 0.02], 0.1)     # asymmetric: centre != centre of mass
    q = np.array([0.96, 0.1, -0.2, 0.15])
    q /= np.linalg.norm(q)
    rot = Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix()
    pos = np.array([0.1, -0.2, 0.015])
    scal, normals, points = _plane_many(blk, 0, pos[None, :], q[None, :], np.zeros((1, 3)),
                                        np.array([[0.0, 0.0, 1.0]]))
    sep = scal[0, 0]
    assert scal[0, 3] == PLANE_OK and sep < 0
    c = points[0]
    centre = pos + rot @ [blk[3], 0, 0]                          # the roll's centre (spec's m1)
    rng = np.random.default_rng(2)
    ez = np.array([0.0, 0.0, 1.0])
    for case in range(20):
        omega = rng.normal(scale=5.0, size=3)
        v_com = rng.normal(scale=0.05, size=3)
        if case == 0:                                            # pure rolling: the point at C rests
            v_com = -np.cross(omega, c - pos)
            v_com -= (v_com @ ez) * ez - 1e-3 * ez               # (any normal velocity)
        v1 = v_com + np.cross(omega, centre - pos)              # velocity of the roll's centre
        v_c = np.cross(omega, c - centre)                        # spec: vC = omega x p_m1,C
        v_diff = (v_c - (v_c @ ez) * ez) + (v1 - (v1 @ ez) * ez)
        g = dict(normal=-ez, overlap=-sep, contact_point=c, branch_i=c - pos, branch_j=np.zeros(3),
                 rel_velocity=-(v_com + np.cross(omega, c - pos)), rel_angular_velocity=-omega,
                 rel_displacement=np.zeros(3), rel_rotation=np.zeros(3), radius_i=scal[0, 2], radius_j=math.inf,
                 radius=scal[0, 2], mass=0.1, pair_rotation=np.zeros(3))
        f, _, _, _, active, _ = _call_law(_record(g), p, (0.0, 0.0, 0.0), 1e-5)
        f = np.array(f)
        f_n = 1e5 * (-sep)
        f_t = f - (f @ ez) * ez
        assert active and f[2] == pytest.approx(f_n, rel=1e-12)
        speed = np.linalg.norm(v_diff)
        if case == 0:
            assert speed < 1e-15 and np.linalg.norm(f_t) < 1e-12 * f_n
            continue
        mu = _stribeck_formula(speed, 0.4, 0.15, 0.8, 2e-3, 1e-3)
        np.testing.assert_allclose(f_t, -mu * f_n * v_diff / speed, rtol=1e-9, atol=1e-12 * f_n)


def test_centre_damping_is_exudyns_normal_force():
    """``damping_convention="centre"``: the normal force is Exudyn's ``k delta - d v1_z`` with ``v1``
    the velocity of the roll's centre (body i on the resting ground z = 0, tilted and spinning),
    whatever the spin; the default damps the penetration rate at C instead, which differs by
    ``d (omega x p_C)_z``.  The dissipation is the damper's force times the contact point's rate."""
    k, d = 1e5, 200.0
    _, p_point = _params(contact_damping=d)
    _, p_centre = _params(contact_damping=d, damping_convention="centre")
    rng = np.random.default_rng(5)
    ez = np.array([0.0, 0.0, 1.0])
    dt = 1e-5
    for _ in range(50):
        lever = np.array([rng.normal(scale=0.02), rng.normal(scale=0.02), -0.016])   # centre to C
        omega = rng.normal(scale=50.0, size=3)
        v_c = rng.normal(scale=0.05, size=3)                                         # centre's velocity
        v_point = v_c + np.cross(omega, lever)
        delta = rng.uniform(1e-6, 1e-4)
        g = dict(normal=-ez, overlap=delta, contact_point=lever, branch_i=lever, branch_j=np.zeros(3),
                 rel_velocity=-v_point, rel_angular_velocity=-omega, rel_displacement=-v_point * dt,
                 rel_rotation=np.zeros(3), radius_i=0.0165, radius_j=math.inf, radius=0.0165, mass=0.1,
                 pair_rotation=np.zeros(3))
        f = _call_law(_record(g), p_centre, (0.0, 0.0, 0.0), dt)[0]
        assert f[2] == pytest.approx(k * delta - d * v_c[2], rel=1e-12, abs=1e-9)
        f0 = _call_law(_record(g), p_point, (0.0, 0.0, 0.0), dt)[0]
        assert f0[2] == pytest.approx(k * delta - d * v_point[2], rel=1e-12, abs=1e-9)
        assert f0[2] - f[2] == pytest.approx(-d * np.cross(omega, lever)[2], rel=1e-9, abs=1e-9)
        # without friction, the dissipation is the damper's force times the contact point's rate
        _, p_bare = _params(contact_damping=d, damping_convention="centre", dynamic_friction=0.0,
                            static_friction_offset=0.0, viscous_friction=0.0)
        diss = _call_law(_record(g), p_bare, (0.0, 0.0, 0.0), dt)[3]
        assert diss == pytest.approx(d * v_c[2] * v_point[2] * dt, rel=1e-12)


# ---------------------------------------------------------------------------- the model
def test_model_parameters_and_limits():
    m = cl.models.ConvexRollContact()
    assert m.values == dict(contact_stiffness=0.0, contact_damping=0.0, dynamic_friction=0.0,
                            static_friction_offset=0.0, viscous_friction=0.0, exponential_decay_static=1e-3,
                            friction_proportional_zone=1e-3, damping_convention=0.0, implicit_friction=1.0,
                            friction_mass=0.0)
    assert m.damping_convention_name == "contact_point"
    from contactlab.laws import registry
    assert registry.model_class("ConvexRollContact") is cl.models.ConvexRollContact
    assert registry.model_from_dict(m.to_dict()).values == m.values
    for name in ("centre", "center", "exudyn", 1):
        c = cl.models.ConvexRollContact(damping_convention=name)
        assert c.damping_convention == 1.0 and c.damping_convention_name == "centre"
        assert registry.model_from_dict(c.to_dict()).values == c.values
    for bad in ("middle", 0.5, True, None):
        with pytest.raises(InputError, match="damping_convention"):
            cl.models.ConvexRollContact(damping_convention=bad)
    with pytest.raises(InputError, match="exponential_decay_static"):
        cl.models.ConvexRollContact(exponential_decay_static=0.0)
    with pytest.raises(InputError, match="contact_damping"):
        cl.models.ConvexRollContact(contact_damping=-1.0)
    with pytest.raises(InputError, match="unknown"):
        cl.models.ConvexRollContact(stiffness=1.0)
    mat = cl.Material(density=1000.0, young=1e7, poisson=0.3, name="m")
    mass, _, inertia = roll_mass_properties(SPEC_HULL, SPEC_LENGTH, 7850.0)
    r_b = roll_shape_data(SPEC_HULL, SPEC_LENGTH)[2]
    case = PairCase(mat, mat, r_b, math.inf, mass, math.inf, float(inertia.min()), math.inf, 1e-4)
    m_t = 1.0 / (1.0 / mass + r_b**2 / inertia.min())
    k, d = 1e5, 30.0
    model, _ = _params(contact_stiffness=k, contact_damping=d)
    # the limit of the engine's scheme (bisection on its amplification matrix, see below)
    assert model.stability_limit(case) == pytest.approx(_scheme_limit(m_t, k, d), rel=1e-9)
    assert _params(contact_stiffness=0.0, contact_damping=d)[0].stability_limit(case) == pytest.approx(
        _scheme_limit(m_t, 0.0, d), rel=1e-9)
    assert cl.models.ConvexRollContact().stability_limit(case) == math.inf
    # friction below v_reg: a dashpot (mu_d + mu_s) k delta_ref / v_reg on the mass of sliding
    c_t = (0.4 + 0.15) * k * 1e-4 / 1e-3
    explicit, _ = _params(contact_stiffness=k, contact_damping=d, implicit_friction=False)
    assert explicit.accuracy_limit(case) == pytest.approx(_scheme_limit(m_t, 0.0, c_t), rel=1e-9)
    assert _params(friction_proportional_zone=0.0, implicit_friction=False)[0].accuracy_limit(case) == math.inf
    assert model.accuracy_limit(case) == math.inf                        # the implicit friction: any step


def _amplification(dt, m, k, c):
    """One step of the engine's scheme for ``m x'' = -k x - c v*`` as a matrix on ``(x, v, a)``:
    ``v(n+1/2) = v + dt/2 a``, ``x += dt v(n+1/2)``, ``v* = v(n+1/2) + dt/2 a`` (the predicted
    velocity the laws see), ``a' = (-k x - c v*) / m``, ``v' = v(n+1/2) + dt/2 a'``."""
    cols = []
    for x, v, a in np.eye(3):
        v_half = v + 0.5 * dt * a
        x = x + dt * v_half
        a_new = (-k * x - c * (v_half + 0.5 * dt * a)) / m
        cols.append([x, v_half + 0.5 * dt * a_new, a_new])
    return np.array(cols).T


def _scheme_limit(m, k, c):
    """Largest dt with spectral radius <= 1 (bisection; the scheme is stable below, unstable above)."""
    lo, hi = 0.0, 10.0 * m / c if c > 0 else 10.0 * math.sqrt(m / k)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.abs(np.linalg.eigvals(_amplification(mid, m, k, c))).max() <= 1 + 1e-13:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize("zeta", [0.0, 0.03, 0.3, 1.5])
def test_stability_limit_of_the_engine_scheme(zeta):
    """The model's limit against the spectral radius of the engine's step, and a run just below /
    above it."""
    mat = cl.Material(density=1000.0, young=1e7, poisson=0.3, name="m")
    case = PairCase(mat, mat, 0.01, math.inf, 0.2, math.inf, 1e-5, math.inf, 1e-4)
    m, k = case.tangential_mass, 1e5
    c = 2 * zeta * math.sqrt(k * m)
    limit = _params(contact_stiffness=k, contact_damping=c)[0].stability_limit(case)
    assert limit == pytest.approx(_scheme_limit(m, k, c), rel=1e-9)
    for factor, stable in ((0.999, True), (1.01, False)):
        y = np.array([1e-4, 0.0, -k * 1e-4 / m])
        step = _amplification(factor * limit, m, k, c)
        for _ in range(3000):
            y = step @ y
            if not abs(y[0]) <= 1.0:         # grown by 4 orders of magnitude: unstable
                break
        assert (abs(y[0]) <= 1e-4) == stable


def test_sliding_mass_bounds_every_contact_point():
    """The effective mass of sliding the implicit friction uses by default: a sphere's mobility is
    exactly ``1/m + r^2/I``; a roll's bound is at least the mobility ``1/m + sum_k (b x t)_k^2 / I_k``
    of every sampled surface point ``b`` (from the centre of mass, asymmetric hull) and tangential
    direction ``t`` (brute force), and not loose by more than a factor 2; per pair of materials
    the scene's pair table carries ``1 / (W_a + W_b)`` (0 where nothing can move)."""
    hull = [-3.6, 0.08, 0.0165]
    steel = cl.Material(density=7800.0, young=2e11, poisson=0.3, name="steel")
    plastic = cl.Material(density=1000.0, young=1e7, poisson=0.3, name="plastic")
    wood = cl.Material(density=600.0, young=1e10, poisson=0.3, name="wood")
    scene = cl.Scene()
    ball = scene.add_sphere(position=(0.5, 0, 0.1), radius=0.01, material=steel)
    roll = scene.add_convex_roll(position=(0, 0, 0.1), orientation=np.eye(3), hull_coefficients=hull,
                                 length=SPEC_LENGTH, material=plastic)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=wood)
    sim = cl.Simulation(scene, model=cl.models.ConvexRollContact(contact_stiffness=1e3, dynamic_friction=0.5))
    model = sim.model
    w = model.sliding_mobility()
    m_ball = model.mass[ball]
    assert w[ball] == pytest.approx(1 / m_ball + 0.01**2 / (0.4 * m_ball * 0.01**2), rel=1e-12)
    mass, centroid, inertia = roll_mass_properties(hull, SPEC_LENGTH, plastic.density)
    s = np.linspace(-SPEC_LENGTH / 2, SPEC_LENGTH / 2, 201)
    phi = np.linspace(0, 2 * np.pi, 73)
    r = np.polyval(hull, s)
    b = np.stack([np.repeat(s - centroid, phi.size), np.outer(r, np.cos(phi)).ravel(),
                  np.outer(r, np.sin(phi)).ravel()], axis=1)
    rng = np.random.default_rng(3)
    t = rng.normal(size=b.shape)
    t /= np.linalg.norm(t, axis=1)[:, None]
    true = 1 / mass + (np.cross(b, t) ** 2 / np.asarray(inertia)).sum(axis=1)
    assert true.max() <= w[roll] <= 2 * true.max()
    table = sim.stepper.pair_params
    col = convex_roll.FRICTION_MASS
    i_steel, i_plastic, i_wood = (model.materials.index(x) for x in (steel, plastic, wood))
    assert table[i_steel, i_plastic, col] == pytest.approx(1 / (w[ball] + w[roll]), rel=1e-12)
    assert table[i_plastic, i_wood, col] == pytest.approx(1 / w[roll], rel=1e-12)
    assert table[i_wood, i_wood, col] == 0.0
    given = cl.Simulation(scene, model=cl.models.ConvexRollContact(contact_stiffness=1e3, friction_mass=0.2))
    assert np.all(given.stepper.pair_params[:, :, col] == 0.2)
