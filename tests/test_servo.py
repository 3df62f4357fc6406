"""Servo-controlled walls and meshes: the force follows the target, against closed forms.

References: Hertz's force ``4/3 E* sqrt(r) d^(3/2)`` and the linear spring ``k d`` for the overlap
that carries the target force; the stress measured independently from ``sim.contacts()``; the
controller's velocity from its NumPy twin (``contactlab.engine.servo.status``); a run without
interruption (restart) and on another thread count (determinism); the energy balance.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import contactlab as cl
from contactlab.errors import InputError

R = 1e-3
ROOT = Path(__file__).resolve().parent.parent


def _e_star(a, b):
    return 1.0 / ((1 - a.poisson**2) / a.young + (1 - b.poisson**2) / b.young)


def _hertz_overlap(force, e_star, radius):
    return (3.0 * force / (4.0 * e_star * math.sqrt(radius))) ** (2.0 / 3.0)


def _pressed_sphere(glass, model, **servo):
    """A sphere between a fixed floor and a servo-controlled top wall, no gravity."""
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(0.0, 0.0, R), radius=R, material=glass)
    floor = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    top = scene.add_wall(point=(0, 0, 2 * R + 1e-6), normal=(0, 0, -1), material=glass)
    sim = cl.Simulation(scene, model)
    return sim, floor, top


def _force_history(sim, steps):
    out = []
    for _ in range(steps):
        sim.run(steps=1)
        out.append(sim.servo_status()["force"][0])
    return np.array(out)


def test_servo_wall_presses_a_sphere_to_the_target_and_hertz_gives_the_overlaps(glass):
    """The wall's force converges to the target (within 1e-4 at rest) and both contacts carry it
    with Hertz's overlap for that force; the force on the fixed floor is the same."""
    target = 0.05
    sim, floor, top = _pressed_sphere(glass, cl.models.HertzMindlin(restitution=0.3, friction=0.3))
    sim.servo_wall(top, target_force=target)
    sim.run(steps=3000)
    st = sim.servo_status()
    assert st["force"][0] == pytest.approx(target, rel=1e-4)
    assert abs(st["velocity"][0]) < 1e-6
    d = _hertz_overlap(target, _e_star(glass, glass), R)
    assert sim.contact(0, wall=top)["overlap"] == pytest.approx(d, rel=1e-4)
    assert sim.contact(0, wall=floor)["overlap"] == pytest.approx(d, rel=1e-4)
    assert sim.wall_forces()[floor][2] == pytest.approx(-target, rel=1e-4)
    # the work the wall did went into the contacts and the dashpots: the balance closes
    e = sim.energy()
    assert e["boundary_work"] > 0 and abs(e["balance_error"]) < 1e-3 * e["boundary_work"]


def test_servo_with_a_linear_spring_gives_force_over_stiffness(glass):
    k = 2000.0
    sim, floor, top = _pressed_sphere(glass, cl.models.LinearSpringDashpot(stiffness=k, restitution=0.3, friction=0.0))
    sim.servo_wall(top, target_stress=2e4, area=2.5e-6)      # 0.05 N over 2.5 mm^2
    sim.run(steps=4000)
    assert sim.servo_status()["stress"][0] == pytest.approx(2e4, rel=1e-4)
    assert sim.contact(0, wall=top)["overlap"] == pytest.approx(0.05 / k, rel=1e-4)


@pytest.mark.parametrize("restitution, small_dt", [(0.05, False), (0.05, True), (0.9, False), (0.9, True)])
def test_default_gain_is_stable_for_damped_and_elastic_contacts_and_small_steps(glass, restitution, small_dt):
    """The default gain does not rattle (a proportional controller on a force that has a dashpot
    in it does, step to step, when its gain ignores the dashpot): from heavily damped Hertz
    contacts (e = 0.05) to nearly elastic ones (e = 0.9), at the default step and at 0.05 of the
    stability limit, the force settles at the target without a step-to-step oscillation."""
    target = 0.05
    sim, floor, top = _pressed_sphere(glass, cl.models.HertzMindlin(restitution=restitution, friction=0.0))
    if small_dt:
        sim.dt = 0.05 * sim.stability_limit
    sim.servo_wall(top, target_force=target)
    sim.run(steps=20000 if small_dt else 4000)
    tail = _force_history(sim, 100)
    assert np.all(np.abs(tail / target - 1.0) < 0.01)
    assert np.abs(np.diff(tail)).max() < 1e-4 * target               # no step-to-step rattle


def test_the_kernel_sets_the_velocity_of_its_numpy_twin(glass):
    """The compiled update sets v = clip(r (F_t - F) / (K dt + C), +-v_max) from the forces of the
    step before (the twin's F, K, C from the contact table); a given gain is used as it is."""
    sim, floor, top = _pressed_sphere(glass, cl.models.HertzMindlin(restitution=0.3, friction=0.0))
    v_max = 0.02
    sim.servo_wall(top, target_force=0.05, relaxation=0.7, max_speed=v_max)
    sim.run(steps=320)
    checked = 0
    for _ in range(30):
        st = sim.servo_status()
        expected = 0.7 * (0.05 - st["force"][0]) / (st["stiffness"][0] * sim.dt + st["damping"][0]) \
            if st["stiffness"][0] > 0 else v_max
        expected = min(max(expected, -v_max), v_max)
        sim.run(steps=1)
        assert sim.servo_status()["velocity"][0] == pytest.approx(expected, rel=1e-12, abs=1e-18)
        checked += abs(expected) < v_max
    assert checked > 10
    sim.servo_wall(top, target_force=0.04, gain=0.01, max_speed=v_max)
    f = sim.servo_status()["force"][0]
    sim.run(steps=1)
    assert sim.servo_status()["velocity"][0] == pytest.approx(0.01 * (0.04 - f), rel=1e-12)


def _box(per_side=4, seed=2):
    """Spheres in a box of 6 plane walls (-x, +x, -y, +y, bottom, top), no gravity."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import isotropic_compression as example
    finally:
        sys.path.pop(0)
    return example, example.build(per_side, seed=seed)


def test_box_of_six_servo_walls_reaches_isotropic_stress_then_keeps_lateral_stress_under_axial_strain():
    """Isotropic compression to p: at rest each wall's normal force over its current area (the
    product of the gaps of the walls around it, both from sim.contacts() and the wall positions,
    not from the controller) is p within 1 %.  Then strain control: the top wall moves at a
    constant velocity (exactly: its position is linear in time), the bottom one stops, and the
    four lateral servo walls keep their stress within 3 % of p at an axial strain rate of 0.25 / s.
    (The controller is proportional: a wall moving at v lags by v / G, docs/walls.md.  At 0.5 / s
    the -y wall of this sample, moving out at up to 5 mm/s as the sample dilates, lagged by 4 %;
    before issue 42 the step created energy in its frictional contacts, which kept them sliding
    and the sample from dilating as much, and it stayed within 3 % at 0.5 / s.)"""
    p = 1e5
    example, sim = _box()
    example.compress_isotropically(sim, p, tolerance=0.002)
    c = sim.contacts()
    size = example.box_size(sim)
    areas = [size[1] * size[2]] * 2 + [size[0] * size[2]] * 2 + [size[0] * size[1]] * 2
    for w in range(6):
        on = c["wall"] == w
        force = float(np.sum(c["normal_force"][on]))
        assert force / areas[w] == pytest.approx(p, rel=0.01), w
    assert sim.energy()["kinetic"] < 1e-4 * sim.energy()["elastic"]
    z0, t0 = sim.wall_points[example.TOP, 2], sim.time
    v = 0.25 * size[2]                                           # axial strain rate 0.25 / s
    sim.set_wall_velocity(example.BOTTOM, (0.0, 0.0, 0.0))
    sim.set_wall_velocity(example.TOP, (0.0, 0.0, -v))
    assert list(sim.servo_status()["index"]) == [0, 1, 2, 3]
    lateral = []
    for _ in range(10):
        sim.run(duration=0.008)
        lateral.append(sim.servo_status()["stress"])
    assert 1.0 - example.box_size(sim)[2] / size[2] == pytest.approx(0.02, rel=0.01)
    assert sim.wall_points[example.TOP, 2] == pytest.approx(z0 - v * (sim.time - t0), rel=1e-12)
    np.testing.assert_allclose(lateral, p, rtol=0.03)
    assert sim.wall_stress(example.TOP, area_from=example.lateral_area_pairs(example.TOP)) > 1.1 * p


def test_servo_state_restarts_bit_for_bit_from_a_checkpoint(glass, tmp_path):
    """A run with servo walls (and a cylinder wall) saved half way and resumed gives the same bits
    as the uninterrupted run; the controllers come back with the checkpoint."""
    def build():
        scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
        rng = np.random.default_rng(4)
        pos = np.array([(x, y, z) for x in (-2.2, 0, 2.2) for y in (-2.2, 0, 2.2) for z in (1.15, 3.3, 5.45)]) * 1e-3
        scene.add_spheres(positions=pos + rng.uniform(-5e-5, 5e-5, pos.shape), radii=np.full(len(pos), R),
                          material=glass)
        scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), 0.0065, glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        top = scene.add_wall(point=(0, 0, 0.0066), normal=(0, 0, -1), material=glass)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.4))
        sim.servo_wall(top, target_stress=500.0, area=math.pi * 0.0065**2, max_speed=0.05)
        return sim
    a = build()
    a.run(steps=5000)
    path = a.save_checkpoint(tmp_path / "servo.npz")
    a.run(steps=5000)
    b = cl.Simulation.load_checkpoint(path)
    assert np.array_equal(b.state.servo_param, a.state.servo_param)
    b.run(steps=5000)     # the piston has come down on the bouncing spheres (at 5000 steps they are still settling)
    assert a.n_contacts() > 20 and a.servo_status()["force"][0] > 0 and a.contacts()["wall"].tolist().count(0) > 0
    for name in ("positions", "velocities", "angular_velocities", "wall_points"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.state.wall_velocities, b.state.wall_velocities)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 threads")
def test_servo_and_cylinder_walls_give_the_same_bits_on_one_or_two_threads(glass, monkeypatch):
    """The serial step on one thread and the parallel sweep on two (forced) agree bit for bit with a
    cylinder wall and a servo-controlled piston (test_determinism's method)."""
    from contactlab import _jit

    def build(threads):
        scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
        scene.fill_box((-0.005, -0.005, 0.0), (0.005, 0.005, 0.02), 1e-3, glass, jitter=0.5, seed=5)
        scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), 0.009, glass)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        top = scene.add_wall(point=(0, 0, 0.022), normal=(0, 0, -1), material=glass)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.4, friction=0.5), threads=threads)
        sim.servo_wall(top, target_force=0.05, max_speed=0.05)
        return sim
    monkeypatch.setattr(_jit, "SERIAL_BELOW", 10**9)
    a = build(1)
    a.run(duration=0.02)
    monkeypatch.setattr(_jit, "SERIAL_BELOW", 0)
    b = build(2)
    b.run(duration=0.02)
    assert a.n_contacts() > 50
    for name in ("positions", "velocities", "angular_velocities", "wall_points"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_servo_mesh_presses_a_sphere_like_a_wall(glass):
    """A mesh plate (two triangles) servo-controlled along -z presses a sphere on a floor: its force
    reaches the target and the overlaps are Hertz's for it (the mesh moves, as sim.mesh_positions
    shows)."""
    target = 0.03
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(0.0, 0.0, R), radius=R, material=glass)
    floor = scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    h = 2 * R + 1e-6
    plate = (np.array([[-3e-3, -3e-3, h], [3e-3, -3e-3, h], [3e-3, 3e-3, h], [-3e-3, 3e-3, h]]),
             np.array([[0, 1, 2], [0, 2, 3]]))
    q = scene.add_mesh(plate, material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.0))
    z0 = sim.mesh_positions[q, 2]
    sim.servo_mesh(q, (0.0, 0.0, -1.0), target_force=target)
    sim.run(steps=3000)
    assert sim.servo_status()["force"][0] == pytest.approx(target, rel=1e-4)
    assert sim.mesh_forces()[q][2] == pytest.approx(target, rel=1e-4)        # the sphere pushes it up
    d = _hertz_overlap(target, _e_star(glass, glass), R)
    assert sim.contact(0, wall=floor)["overlap"] == pytest.approx(d, rel=1e-4)
    assert z0 - sim.mesh_positions[q, 2] == pytest.approx(2 * d + 1e-6, rel=1e-3)
    sim.set_mesh_velocity(q, velocity=(0.0, 0.0, 0.0))
    assert len(sim.servo_status()["index"]) == 0


def test_servo_arguments_are_checked(glass):
    sim, floor, top = _pressed_sphere(glass, cl.models.HertzMindlin(restitution=0.3, friction=0.0))
    bad = [dict(), dict(target_force=1.0, target_stress=1.0), dict(target_force=-1.0),
           dict(target_stress=1.0), dict(target_stress=1.0, area=1.0, area_from=((0, 1), (0, 1))),
           dict(target_force=1.0, area=1.0), dict(target_stress=1.0, area_from=((0, 1),)),
           dict(target_stress=1.0, area_from=((0, 0), (0, 1))), dict(target_force=1.0, relaxation=1.5),
           dict(target_force=1.0, gain=-1.0), dict(target_force=1.0, max_speed=0.0)]
    for kwargs in bad:
        with pytest.raises(InputError):
            sim.servo_wall(top, **kwargs)
    with pytest.raises(InputError, match="out of range"):
        sim.servo_wall(7, target_force=1.0)
    with pytest.raises(InputError, match="not servo-controlled"):
        sim.release_servo(top)
    assert sim.state.servo_index.shape[0] == 0                   # nothing half-installed
    sim.servo_wall(top, target_force=1.0)
    sim.servo_wall(top, target_force=2.0)                         # replaces, does not add
    assert sim.servo_status()["target_force"].tolist() == [2.0]
    sim.release_servo(top)
    assert sim.servo_status()["index"].shape == (0,) and not sim.state.wall_velocities.any()
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0), radius=R, material=glass)
    w = scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), 0.01, glass)
    cyl = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.0))
    with pytest.raises(InputError, match="cylinder"):
        cyl.servo_wall(w, target_force=1.0)


def test_a_servo_wall_crushing_a_sphere_is_diagnosed_as_such(glass):
    """A servo wall allowed to move far faster than the bodies can respond stops the run with a
    diagnosis that names the servo and its max_speed (not a 'prescribed velocity')."""
    sim, floor, top = _pressed_sphere(glass, cl.models.HertzMindlin(restitution=0.3, friction=0.0))
    sim.servo_wall(top, target_force=10.0, max_speed=2.0)
    with pytest.raises(cl.SimulationBlowUp, match="servo control.*max_speed") as err:
        sim.run(steps=200)
    assert err.value.cause == "driven_body"
