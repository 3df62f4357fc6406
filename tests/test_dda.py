"""Particle DDA (cl.DDA, issue 17): sub-matrices against independent references, the matrix-free
PCG against a dense solve, and validation runs against theory (free fall, incline, a column's
contact forces, uniaxial compression of one deformable disk) and against the explicit engine
(settled packing of a pile, DDA at 100x the explicit stability limit)."""
from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np
import pytest

import contactlab as cl
from contactlab.dda import numpy_twin as reference
from contactlab.dda.blocks import add_elastic_block, mass_block
from contactlab.dda.pcg import apply_operator, apply_sgs, bicgstab, contact_lists, factor_preconditioner, pcg
from helpers.pile_2d import area_below, band_fraction, explicit_law, pile_scene

G = 9.81
ROCK = cl.Material(density=2500.0, young=1e7, poisson=0.25)


def _one_disk(position, radius=0.01, thickness=0.01, gravity=(0.0, -G), velocity=(0.0, 0.0)):
    scene = cl.Scene(dimension=2, gravity=gravity, thickness=thickness)
    scene.add_disk(position, radius, ROCK, velocity=velocity)
    return scene


# ---------------------------------------------------------------- sub-matrices and the solve
@pytest.mark.parametrize("a, b, angle", [(0.01, 0.01, 0.0), (0.03, 0.01, 0.7), (0.02, 0.015, -2.0)])
def test_inertia_block_matches_quadrature(a, b, angle):
    c, s = math.cos(angle), math.sin(angle)
    mxx, myy, mxy = a * a * c * c + b * b * s * s, a * a * s * s + b * b * c * c, (a * a - b * b) * s * c
    out = np.zeros((1, 6, 6))
    mass_block(2.5, mxx, myy, mxy, 1.0, out, 0)
    ref = reference.mass_matrix(2.5, a, b, angle)
    np.testing.assert_allclose(out[0], ref, rtol=1e-12, atol=1e-14 * np.abs(ref).max())


@pytest.mark.parametrize("plane", ["stress", "strain"])
def test_elastic_block_is_area_times_elasticity(plane):
    out = np.zeros((1, 6, 6))
    add_elastic_block(1e9, 0.3, plane == "strain", 2e-4, out, 0)
    np.testing.assert_allclose(out[0, 3:, 3:], 2e-4 * reference.elasticity(1e9, 0.3, plane), rtol=1e-14)
    assert not out[0, :3, :].any() and not out[0, :, :3].any()


def _random_system(seed):
    rng = np.random.default_rng(seed)
    n, m = 7, 12
    kd = np.zeros((n, 6, 6))
    for i in range(n):
        q = rng.normal(size=(6, 6))
        kd[i] = q @ q.T + 6 * np.eye(6)
    ci = rng.integers(-2, n, size=m)          # < 0: a wall
    cj = rng.integers(0, n, size=m)
    en, et = rng.normal(size=(m, 12)), rng.normal(size=(m, 12))
    cn = rng.choice([0.0, 50.0], size=m)      # open or closed
    ct = np.where(cn > 0, rng.choice([0.0, 20.0], size=m), 0.0)   # locked or not
    # sliding (closed, not locked): the friction block -sgn mu p e_t e_n^T, mu = 0.4
    cf = np.where((cn > 0) & (ct == 0), -rng.choice([-1.0, 1.0], size=m) * 0.4 * 50.0, 0.0)
    return n, m, kd, ci, cj, en, et, cn, ct, cf


def test_matrix_free_operator_matches_dense_assembly():
    n, m, kd, ci, cj, en, et, cn, ct, cf = _random_system(1)
    assert cf.any()
    start, entry = contact_lists(n, m, ci, cj)
    x = np.random.default_rng(2).normal(size=(n, 6))
    y = np.empty((n, 6))
    apply_operator(x, y, kd, np.ones((n, 6)), m, ci, cj, en, et, cn, ct, cf, start, entry, np.empty(m), np.empty(m))
    dense = reference.dense_matrix(kd, ci, cj, en, et, cn, ct, cf)
    np.testing.assert_allclose(y.ravel(), dense @ x.ravel(), rtol=1e-12, atol=1e-12 * np.abs(dense @ x.ravel()).max())


def test_symmetric_gauss_seidel_matches_its_dense_form():
    """The matrix-free block SGS preconditioner against ``(D + L) D^-1 (D + U)`` assembled densely
    (D: each body's diagonal block of the symmetric springs, L/U: the contact blocks of the dense
    assembly below/above it), fixed unknowns held out."""
    n, m, kd, ci, cj, en, et, cn, ct, cf = _random_system(5)
    cj = np.where(cj == ci, (cj + 1) % n, cj)       # no body touches itself
    free = np.ones((n, 6))
    free[3, 1] = 0.0
    start, entry = contact_lists(n, m, ci, cj)
    chol = np.zeros((n, 6, 6))
    assert factor_preconditioner(kd, free, m, en, et, cn, ct, start, entry, chol) == -1
    r = np.random.default_rng(6).normal(size=(n, 6)) * free
    z = np.zeros((n, 6))
    apply_sgs(chol, free, ci, cj, en, et, cn, ct, cf, start, entry, r, z)
    a = reference.dense_matrix(kd, ci, cj, en, et, cn, ct, cf)
    sym = reference.dense_matrix(kd, ci, cj, en, et, cn, ct)
    d = np.zeros_like(a)
    for i in range(n):
        d[6 * i:6 * i + 6, 6 * i:6 * i + 6] = sym[6 * i:6 * i + 6, 6 * i:6 * i + 6]
    body = np.repeat(np.arange(n), 6)
    low = np.where(body[:, None] > body[None, :], a, 0.0)
    up = np.where(body[:, None] < body[None, :], a, 0.0)
    f = free.ravel() > 0
    dd, ll, uu = (x[np.ix_(f, f)] for x in (d, low, up))
    want = np.linalg.solve(dd + uu, dd @ np.linalg.solve(dd + ll, r.ravel()[f]))
    np.testing.assert_allclose(z.ravel()[f], want, rtol=1e-10, atol=1e-12 * np.abs(want).max())
    assert not z.ravel()[~f].any()


@pytest.mark.parametrize("solver", ["pcg", "bicgstab"])
def test_block_jacobi_krylov_matches_dense_solve_with_fixed_unknowns(solver):
    """CG on the symmetric system (no sliding contact), BiCGSTAB on the non-symmetric one (sliding
    contacts' friction blocks), both against numpy.linalg.solve of the dense assembly."""
    n, m, kd, ci, cj, en, et, cn, ct, cf = _random_system(3)
    if solver == "pcg":
        cf = np.zeros(m)
    free = np.ones((n, 6))
    free[2, [0, 2]] = 0.0                      # two prescribed unknowns
    x = np.zeros((n, 6))
    x[2, 0], x[2, 2] = 0.3, -0.1
    b = np.random.default_rng(4).normal(size=(n, 6))
    start, entry = contact_lists(n, m, ci, cj)
    chol = np.zeros((n, 6, 6))
    assert factor_preconditioner(kd, free, m, en, et, cn, ct, start, entry, chol) == -1
    solve = pcg if solver == "pcg" else bicgstab
    iters, res = solve(x, b, kd, free, m, ci, cj, en, et, cn, ct, cf, start, entry, chol, 1e-12, 500)
    assert res <= 1e-12 and 0 < iters <= 6 * n
    dense = reference.dense_matrix(kd, ci, cj, en, et, cn, ct, cf)
    f = free.ravel() > 0
    fixed_values = x.ravel()[~f]
    want = np.linalg.solve(dense[np.ix_(f, f)], b.ravel()[f] - dense[np.ix_(f, ~f)] @ fixed_values)
    np.testing.assert_allclose(x.ravel()[f], want, rtol=1e-9, atol=1e-10 * np.abs(want).max())
    np.testing.assert_array_equal(x.ravel()[~f], [0.3, -0.1])


# ---------------------------------------------------------------- validation against theory
@pytest.mark.parametrize("newmark", [(0.5, 1.0), (0.5625, 1.0)])
def test_free_fall_is_exact(newmark):
    """Constant acceleration within a step: free fall is reproduced to round-off (closed form)."""
    dda = cl.DDA(_one_disk((0.0, 1.0), velocity=(0.3, 2.0)), dt=1e-3, newmark=newmark,
                 max_displacement=0.01)
    dda.run(0.25)
    t = dda.time
    np.testing.assert_allclose(dda.positions[0], (0.3 * t, 1.0 + 2.0 * t - 0.5 * G * t * t), rtol=1e-12)
    np.testing.assert_allclose(dda.velocities[0], (0.3, 2.0 - G * t), rtol=1e-12)
    assert dda.n_steps == 250 and dda.log["rejected"].sum() == 0


def test_a_dynamic_step_is_as_long_as_free_flight_allows():
    """A thrown disk with ``dt`` far above what ``max_displacement`` allows: every step is chosen
    so that free flight moves it at most 0.9 max_displacement (no try is cut), the first one
    exactly ``v h + g h^2 / 2 = 0.9 max_displacement``, and the fall stays the closed form."""
    v0, d_max = (0.3, 2.0), 0.002
    dda = cl.DDA(_one_disk((0.0, 1.0), velocity=v0), dt=0.05, max_displacement=d_max)
    dda.run(0.3)
    log = dda.log
    assert log["rejected"].sum() == 0 and (log["max_displacement"] <= 0.9 * d_max * (1.0 + 1e-12)).all()
    speed = math.hypot(*v0)
    assert log["dt"][0] == pytest.approx((math.sqrt(speed ** 2 + 2.0 * G * 0.9 * d_max) - speed) / G, rel=1e-12)
    t = dda.time
    np.testing.assert_allclose(dda.positions[0], (0.3 * t, 1.0 + 2.0 * t - 0.5 * G * t * t), rtol=1e-12)


def test_the_work_of_cut_tries_is_logged():
    """Static analysis (no free-flight bound): a free disk falls ``g h^2 / 2`` per step, 49 mm at
    ``dt`` = 0.1 s against a 1 mm limit, so the first try is cut once for its displacement; its
    open-close iterations (two with no contact: a solve to the loop's loose tolerance, then the
    one to ``cg_tolerance`` that confirms the states) and Krylov iterations are logged apart from
    the accepted try's."""
    dda = cl.DDA(_one_disk((0.0, 1.0)), dt=0.1, dynamic=False, max_displacement=0.001)
    dda.run(0.05)
    log = dda.log
    assert log["rejected"][0] == 1 and log["cut_displacement"][0] == 1
    assert log["cut_open_close_iterations"][0] == 2 and log["cut_cg_iterations"][0] >= 1
    assert (log["residual"] <= 1e-9).all()
    clean = log["rejected"] == 0
    assert clean.any() and (log["cut_open_close_iterations"][clean] == 0).all()
    assert (log["cut_cg_iterations"][clean] == 0).all()


def _incline(theta, mu, duration=0.2, **bond):
    """A disk whose rotation is held (a block) on a line wall inclined at ``theta``, started at
    rest at the penalty spring's equilibrium sink (``bond``: the DDA's cohesion arguments);
    returns the slide along the incline (m)."""
    r, t = 0.01, 0.01
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=t)
    normal = np.array([-math.sin(theta), math.cos(theta)])
    mass = ROCK.density * math.pi * r * r * t
    penalty = 1e6
    sink = mass * G * math.cos(theta) / penalty
    scene.add_disk(tuple(normal * (r - sink)), r, ROCK)
    scene.add_wall((0.0, 0.0), tuple(normal), ROCK)
    dda = cl.DDA(scene, dt=1e-3, friction=mu, penalty=penalty, **bond)
    dda.fix(0, "r0")
    start = dda.positions[0].copy()
    dda.run(duration)
    down = np.array([-math.cos(theta), -math.sin(theta)])
    return dda, float((dda.positions[0] - start) @ down), float((dda.positions[0] - start) @ normal)


def test_block_on_incline_sticks_below_friction_angle():
    theta = math.radians(20.0)
    dda, slide, off = _incline(theta, 0.5)   # tan 20 = 0.36 < 0.5
    c = dda.contacts()
    assert list(c["state"]) == ["locked"]
    # held by the shear spring: it carries the weight's component along the incline, and the disk
    # moves no more than that spring's (and its own elastic) deflection, ~1e-7 m
    along = dda.masses[0] * G * math.sin(theta)
    assert abs(c["shear_force"][0]) == pytest.approx(along, rel=1e-2)
    assert abs(slide) < 2 * along / dda.shear_penalty and abs(off) < 1e-6


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_block_on_incline_slides_as_theory(mu):
    theta = math.radians(30.0)
    dda, slide, off = _incline(theta, mu)
    expected = 0.5 * G * (math.sin(theta) - mu * math.cos(theta)) * dda.time ** 2
    # to the disk's elastic strain, which shifts its centroid by ~1e-7 m against 0.05 m slid
    assert slide == pytest.approx(expected, rel=1e-5)
    assert abs(off) < 1e-6                      # stays on the line (sinks by its elastic strain only)
    assert list(dda.contacts()["state"]) == ["sliding"]

# ---------------------------------------------------------------- bonds: Mohr-Coulomb with cohesion

@pytest.mark.parametrize("margin", [1.25, 0.8])
def test_bonded_block_on_incline_is_held_by_cohesion_or_slides(margin):
    """Mohr-Coulomb with cohesion: a bonded block on an incline steeper than its friction angle
    holds while ``m g (sin - mu cos) <= c`` (the shear force then carries ``m g sin``); with ``c``
    below that the bond breaks in the first step and the block slides as an unbonded one,
    ``s = g (sin - mu cos) t^2 / 2``."""
    theta, mu = math.radians(30.0), 0.3
    mass = ROCK.density * math.pi * 0.01 ** 2 * 0.01
    needed = mass * G * (math.sin(theta) - mu * math.cos(theta))
    dda, slide, off = _incline(theta, mu, cohesion=margin * needed)
    c = dda.contacts()
    if margin > 1.0:
        assert list(c["state"]) == ["locked"] and list(c["bonded"]) == [True] and dda.n_bonds == 1
        assert abs(c["shear_force"][0]) == pytest.approx(mass * G * math.sin(theta), rel=1e-2)
        assert abs(slide) < 2 * mass * G * math.sin(theta) / dda.shear_penalty
    else:
        assert list(c["bonded"]) == [False] and dda.n_bonds == 0
        assert slide == pytest.approx(0.5 * G * (math.sin(theta) - mu * math.cos(theta)) * dda.time ** 2, rel=1e-5)


@pytest.mark.parametrize("strength", [2.0, 0.5])
def test_disk_hangs_from_a_bond_until_its_weight_exceeds_the_tensile_strength(strength):
    """A disk touching a ceiling (a line wall facing down), bonded: with ``T = 2 m g`` it hangs, the
    bond in tension carrying its weight (static analysis: ``F_n = -m g``, the gap ``m g / p``);
    with ``T = m g / 2`` the bond breaks in the first step and the disk falls freely,
    ``y0 - g t^2 / 2``."""
    r = 0.01
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
    scene.add_disk((0.0, -r), r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, -1.0), ROCK)
    weight = ROCK.density * math.pi * r * r * 0.01 * G
    dda = cl.DDA(scene, dt=1e-3, tensile_strength=strength * weight, dynamic=strength < 1.0)
    assert dda.n_bonds == 1
    dda.run(0.05)
    c = dda.contacts()
    if strength > 1.0:
        assert list(c["bonded"]) == [True]
        assert c["normal_force"][0] == pytest.approx(-weight, rel=1e-6)
        assert c["gap"][0] == pytest.approx(weight / dda.penalty, rel=1e-3)
    else:
        assert dda.n_bonds == 0 and not c["bonded"].any()
        assert dda.positions[0, 1] == pytest.approx(-r - 0.5 * G * dda.time ** 2, rel=1e-9)


def test_bonded_chain_hangs_with_the_weight_below_each_bond():
    """Three disks hanging in a chain from a ceiling by bonds without cohesion (static analysis):
    each bond's tension is the weight below it (reference: statics, as the column test), and
    round-off shear does not break bonds whose shear strength in tension is nil."""
    r = 0.01
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
    scene.add_disks([(0.0, -r - 2 * r * k) for k in range(3)], r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, -1.0), ROCK)
    weight = ROCK.density * math.pi * r * r * 0.01 * G
    dda = cl.DDA(scene, dt=1e-2, tensile_strength=5 * weight, dynamic=False)
    assert dda.settle(speed_tolerance=1e-12, max_duration=5.0)
    c = dda.contacts()
    below = np.where(c["wall"] == 0, 3, 2 - c["body_i"])     # bodies below each bond
    assert dda.n_bonds == 3 and c["bonded"].all()
    np.testing.assert_allclose(c["normal_force"], -below * weight, rtol=1e-6)


def test_only_contacts_of_the_start_are_bonded():
    """Two disks: one resting on the floor at the start (bonded), one dropped on it later (not)."""
    r = 0.01
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
    scene.add_disks([(0.0, r), (0.0, 3.5 * r)], r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
    dda = cl.DDA(scene, dt=1e-3, friction=0.5, cohesion=1.0, tensile_strength=1.0, velocity_ratio=0.9)
    assert dda.n_bonds == 1
    dda.run(0.2)
    c = dda.contacts()
    closed = c["state"] != "open"
    floor = closed & (c["wall"] == 0)
    pair = closed & (c["body_i"] == 0) & (c["body_j"] == 1)
    assert floor.sum() == 1 and pair.sum() == 1
    assert c["bonded"][floor].all() and not c["bonded"][pair].any()



def test_column_of_disks_carries_the_weight_above_each_contact():
    r, n = 0.01, 8
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
    scene.add_disks([(0.0, r + 2 * r * k) for k in range(n)], r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
    dda = cl.DDA(scene, dt=1e-2, dynamic=False, friction=0.5)
    assert dda.settle(1e-12, 20.0)
    c = dda.contacts()
    closed = c["state"] != "open"
    weight = dda.masses[0] * G
    # the contact under disk k carries disks k..n-1
    carried = {int(j): f / weight for j, f in zip(c["body_j"][closed], c["normal_force"][closed])}
    np.testing.assert_allclose([carried[k] for k in range(n)], np.arange(n, 0, -1), rtol=1e-7)
    assert dda.log["residual"][-1] <= 1e-9


@pytest.mark.parametrize("plane", ["stress", "strain"])
def test_uniaxial_compression_between_plates(plane):
    """A deformable disk squeezed between a fixed floor and a plate moving down: the strain of the
    body (from its shape) is the mean stress / E (Hooke, plane stress: eps_y = sigma_y / E,
    eps_x = -nu sigma_y / E; plane strain: (1 - nu^2) and -nu (1 + nu)), where the mean stress
    of a disk loaded by two opposite forces P is sigma_y = -2 P / (pi a t) (average-stress theorem, a
    the deformed half-width)."""
    r, t, nu = 0.01, 0.01, ROCK.poisson
    scene = cl.Scene(dimension=2, gravity=(0.0, 0.0), thickness=t)
    scene.add_disk((0.0, r), r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
    scene.add_wall((0.0, 2 * r), (0.0, -1.0), ROCK, velocity=(0.0, -1e-4))
    dda = cl.DDA(scene, dt=1e-2, dynamic=False, plane=plane, penalty=1e7)
    dda.fix(0, ("u0", "r0"))
    dda.run(0.02)                                    # the plate moves down by 2 um, then stops
    dda.set_wall_velocity(1, (0.0, 0.0))
    assert dda.settle(1e-12, 5.0)
    c = dda.contacts()
    p = c["normal_force"][c["state"] != "open"]
    assert len(p) == 2 and p[0] == pytest.approx(p[1], rel=1e-9)
    mxx, myy, mxy = dda.shape_matrices[0]
    eps_x, eps_y = math.sqrt(mxx) / r - 1, math.sqrt(myy) / r - 1
    sigma = -2 * p[0] / (math.pi * math.sqrt(mxx) * t)    # over the deformed width (eps_x ~ 3e-5)
    scale = (1 - nu * nu, -nu * (1 + nu)) if plane == "strain" else (1.0, -nu)
    assert eps_y == pytest.approx(scale[0] * sigma / ROCK.young, rel=1e-3)
    assert eps_x == pytest.approx(scale[1] * sigma / ROCK.young, rel=1e-3)
    assert dda.stresses[0, 1] == pytest.approx(sigma, rel=1e-6)
    assert abs(dda.stresses[0, 0]) < 1e-6 * abs(sigma) and abs(mxy) < 1e-12 * myy


# ---------------------------------------------------------------- ellipses
def _ellipse_on_floor(angle, a=0.02, b=0.01, t=0.01):
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=t)
    height = math.sqrt((a * math.sin(angle)) ** 2 + (b * math.cos(angle)) ** 2)   # support along -y
    scene.add_ellipse((0.0, height), (a, b), ROCK, angle=angle)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
    return scene


def test_lying_ellipse_carries_its_weight():
    a, b, t = 0.02, 0.01, 0.01
    dda = cl.DDA(_ellipse_on_floor(0.0, a, b, t), dt=1e-2, dynamic=False)
    assert dda.settle(1e-12, 10.0)
    assert dda.masses[0] == pytest.approx(ROCK.density * math.pi * a * b * t, rel=1e-12)
    c = dda.contacts()
    assert c["normal_force"][0] == pytest.approx(dda.masses[0] * G, rel=1e-7)
    np.testing.assert_allclose(c["point"][0], (0.0, 0.0), atol=1e-6)


def test_tilted_ellipse_topples_onto_its_long_side():
    """Standing at 60 degrees off lying on a frictional floor, an ellipse turns down to lying flat,
    the minimum of its potential energy m g h(angle), h = sqrt(a^2 sin^2 + b^2 cos^2) (static
    analysis: in a dynamic run, with no contact damping, it would rock about lying for long)."""
    a, b = 0.02, 0.01
    dda = cl.DDA(_ellipse_on_floor(math.radians(60.0), a, b), dt=2e-3, friction=0.8, dynamic=False)
    assert dda.settle(1e-10, 20.0)
    assert abs(math.sin(dda.angles[0])) < 1e-6
    assert dda.positions[0, 1] == pytest.approx(b, rel=1e-4)     # b less the penalty sink
    assert dda.contacts()["normal_force"][0] == pytest.approx(dda.masses[0] * G, rel=1e-7)


def test_circle_given_as_ellipse_runs_as_the_disk():
    def pile(as_ellipse):
        scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
        for k, (x, y) in enumerate([(0.0, 0.0101), (0.0205, 0.0101), (0.0102, 0.03)]):
            if as_ellipse:
                scene.add_ellipse((x, y), (0.01, 0.01), ROCK, angle=0.3 * k)
            else:
                scene.add_disk((x, y), 0.01, ROCK)
        scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
        dda = cl.DDA(scene, dt=1e-3, friction=0.4, cg_tolerance=1e-13)
        dda.run(0.1)
        return dda
    disk, ellipse = pile(False), pile(True)
    # the same to round-off, amplified by the contact solver once the strains make the circles
    # slightly elliptic (both then go through the common-normal solver): 1e-10 m of 1 cm disks;
    # the linear solves run to 1e-13 so that their stopping point (BiCGSTAB with sliding contacts
    # takes a different path through round-off for the two) stays below that
    np.testing.assert_allclose(ellipse.positions, disk.positions, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ellipse.angles - [0.0, 0.3, 0.6], disk.angles, atol=1e-8)


# ---------------------------------------------------------------- errors and the log
def test_log_reports_iterations_and_residuals():
    r = 0.01
    scene = cl.Scene(dimension=2, gravity=(0.0, -G), thickness=0.01)
    scene.add_disks([(0.0, r), (2 * r, r), (r, r + math.sqrt(3) * r)], r, ROCK)
    scene.add_wall((0.0, 0.0), (0.0, 1.0), ROCK)
    dda = cl.DDA(scene, dt=1e-3, friction=0.5, cg_tolerance=1e-10).run(0.02)
    log = dda.log
    assert set(log) >= {"time", "dt", "open_close_iterations", "cg_iterations", "residual", "closed_contacts",
                        "max_penetration", "max_displacement", "rejected"}
    assert len(log["time"]) == dda.n_steps == 20
    assert (log["cg_iterations"] >= log["open_close_iterations"]).all() and (log["residual"] <= 1e-10).all()
    # two on the floor, two from the top disk, and the bottom pair, which touches at zero gap
    assert (log["closed_contacts"] == 5).all() and (log["max_penetration"] <= dda.penetration_tolerance).all()


def test_velocity_ratio_scales_the_carried_velocity():
    """Shi's dynamic ratio r in free fall: each step ends with v <- r (v + g dt) (Shi's scheme
    gains g dt per step), so after N steps v_N = r^N v_0 + r g dt (1 - r^N) / (1 - r)."""
    r, dt, steps = 0.8, 1e-3, 50
    dda = cl.DDA(_one_disk((0.0, 1.0), velocity=(0.0, 2.0)), dt=dt, velocity_ratio=r, max_displacement=0.01)
    dda.run(steps * dt)
    assert dda.n_steps == steps
    want = r**steps * 2.0 - r * G * dt * (1.0 - r**steps) / (1.0 - r)
    assert dda.velocities[0, 1] == pytest.approx(want, rel=1e-12)


def test_velocity_ratio_is_per_unit_of_time_whatever_the_step_control():
    """Without gravity a thrown disk keeps ``r^(t / dt) v_0``: the ratio is applied per full
    step, a step cut to ``h`` (here by the free-flight bound of a small ``max_displacement``)
    carrying ``r^(h / dt)``, so the damping per second does not depend on the step control."""
    r, dt = 0.8, 0.01
    dda = cl.DDA(_one_disk((0.0, 1.0), gravity=(0.0, 0.0), velocity=(2.0, 0.0)), dt=dt, velocity_ratio=r,
                 max_displacement=0.002)
    dda.run(0.05)
    assert dda.n_steps > 20 and (dda.log["dt"] < dt).all()
    assert dda.velocities[0, 0] == pytest.approx(2.0 * r ** (dda.time / dt), rel=1e-12)


def test_area_of_an_ellipse_below_a_height_against_sampling():
    """The pile's packing measure cuts strained disks (ellipses) by horizontal lines in closed form;
    reference: counting the points of a fine grid inside the ellipse and below the line."""
    rng = np.random.default_rng(4)
    for _ in range(4):
        a, b, phi = rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5), rng.uniform(0.0, np.pi)
        rot = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
        m = rot @ np.diag([a * a, b * b]) @ rot.T
        h = rng.uniform(-np.sqrt(m[1, 1]), np.sqrt(m[1, 1]))
        closed = area_below(np.array([0.0]), np.array([[m[0, 0], m[1, 1], m[0, 1]]]), h)[0]
        g = np.linspace(-1.6, 1.6, 2001)
        x, y = np.meshgrid(g, g)
        inv = np.linalg.inv(m)
        inside = inv[0, 0] * x * x + 2 * inv[0, 1] * x * y + inv[1, 1] * y * y <= 1.0
        sampled = np.count_nonzero(inside & (y <= h)) * (g[1] - g[0]) ** 2
        assert closed == pytest.approx(sampled, rel=3e-3, abs=3e-3)


@pytest.mark.slow
def test_settling_pile_at_100x_the_explicit_limit_matches_the_explicit_packing():
    """96 bidisperse disks dropped into a box (tests/helpers/pile_2d.py), three seeds.  Reference:
    the explicit engine (an independent method) on the same scene, a linear spring-dashpot of
    DDA's penalty stiffness with local damping 0.1.  DDA runs at 100 times the explicit stability
    limit with Shi's velocity ratio 0.95 (its counterpart of local damping): it stays stable (no
    penetration beyond the tolerance, steps at the full size taken), settles, and the mean area
    fraction of the settled piles matches the explicit engine's within 2 %.  (Single seeds
    scatter by a few per cent either way in both methods at this size: benchmarks/README.md.)"""
    radius, friction = 0.01, 0.4
    explicit, implicit = [], []
    oc_cuts = oc_cut_iterations = 0
    for seed in (0, 1, 2):
        scene, radii, stone, width = pile_scene(12, 8, radius, seed)
        sim = cl.Simulation(scene, explicit_law(stone, radius, friction), local_damping=0.1)
        limit = sim.stability_limit
        while sim.time < 3.0 and not (sim.time > 0.1 and np.abs(sim.velocities).max() < 1e-3):
            sim.run(duration=0.01)
        assert np.abs(sim.velocities).max() < 1e-3
        explicit.append(band_fraction(sim.positions[:, :2], radii, width, radius))

        scene, radii, stone, width = pile_scene(12, 8, radius, seed)
        dda = cl.DDA(scene, dt=100.0 * limit, friction=friction, velocity_ratio=0.95, max_displacement=0.25 * radius)
        assert dda.settle(speed_tolerance=1e-3, max_duration=3.0, check_every=0.01)
        log = dda.log
        assert (log["max_penetration"] <= dda.penetration_tolerance).all()
        assert (log["dt"] >= 0.999 * 100.0 * limit).sum() >= 10
        implicit.append(band_fraction(dda.positions, radii, width, radius, dda.shape_matrices))
        # tries cut for an open-close loop that cycles are given up early (a contact that changed
        # state 6 times), not after max_open_close = 30 iterations each
        only = (log["rejected"] > 0) & (log["cut_open_close"] == log["rejected"])
        oc_cuts += log["rejected"][only].sum()
        oc_cut_iterations += log["cut_open_close_iterations"][only].sum()
    assert oc_cuts > 0 and oc_cut_iterations < 15 * oc_cuts
    assert np.mean(implicit) == pytest.approx(np.mean(explicit), rel=0.02)


@pytest.mark.parametrize("make, match", [
    (lambda s: cl.DDA(cl.Scene(), dt=1e-3), "needs a 2-D scene"),
    (lambda s: cl.DDA(s, dt=-1.0), "dt"),
    (lambda s: cl.DDA(s, dt=1e-3, plane="stres"), "did you mean 'stress'"),
    (lambda s: cl.DDA(s, dt=1e-3, newmark=(0.2, 0.5)), "2 beta >= gamma"),
    (lambda s: cl.DDA(s, dt=1e-3, friction=-0.1), "friction"),
    (lambda s: cl.DDA(s, dt=1e-3, cohesion=-1.0), "cohesion"),
    (lambda s: cl.DDA(s, dt=1e-3, tensile_strength=math.nan), "tensile_strength"),
    (lambda s: cl.DDA(s, dt=1e-3, velocity_ratio=1.5), "velocity_ratio must be in"),
    (lambda s: cl.DDA(s, dt=1e-3, force_tolerance=2.0), "force_tolerance must be below 1"),
    (lambda s: cl.DDA(s, dt=1e-3).fix(0, "rotation"), "did you mean|allowed"),
    (lambda s: cl.DDA(s, dt=1e-3).fix(5, "u0"), "body must satisfy"),
    (lambda s: cl.DDA(s, dt=1e-3).contacts(), "call run"),
])
def test_bad_input_is_refused_with_a_clear_message(make, match):
    with pytest.raises(cl.InputError, match=match):
        make(_one_disk((0.0, 1.0)))


def test_initial_overlap_is_named():
    scene = cl.Scene(dimension=2, thickness=0.01)
    scene.add_disks([(0.0, 0.0), (0.015, 0.0)], 0.01, ROCK)
    with pytest.raises(cl.InputError, match="bodies 0 and 1 overlap by 0.005 m"):
        cl.DDA(scene, dt=1e-3)


def test_slope_example_reaches_equilibrium():
    """examples/dda_slope.py: the floor carries the heap's weight (static equilibrium)."""
    path = pathlib.Path(__file__).parent.parent / "examples" / "dda_slope.py"
    spec = importlib.util.spec_from_file_location("dda_slope", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dda, ratio = module.settle_slope(layers=3)
    assert dda.max_speed() < 1e-9
    assert ratio == pytest.approx(1.0, rel=1e-9)
