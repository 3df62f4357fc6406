"""Ellipsoids in the engine: the free rigid body (full inertia tensor), spheres given as ellipsoids
(reference: the sphere-sphere contact), an ellipsoid resting on its tip (Hertz closed form).
"""
import math

import numpy as np

import contactlab as cl

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
ELASTIC = cl.models.HertzMindlin(restitution=1.0, friction=0.0)


def _quat(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def test_torque_free_rigid_body_conserves_angular_momentum_and_energy():
    """An asymmetric ellipsoid spun near its intermediate axis tumbles: its angular momentum is
    conserved to round-off, its kinetic energy to 1e-6 (second-order integrator), and its angular
    velocity in the body frame follows Euler's equations (reference: scipy's solve_ivp)."""
    from scipy.integrate import solve_ivp

    scene = cl.Scene(gravity=(0, 0, 0))
    scene.add_ellipsoid(position=(0, 0, 0), semi_axes=(3e-3, 2e-3, 1e-3), material=GLASS,
                        angular_velocity=(2.0, 50.0, 3.0))
    scene.add_sphere(position=(1.0, 0, 0), radius=1e-3, material=GLASS)  # far away
    sim = cl.Simulation(scene, model=ELASTIC, dt=2e-5)
    L0 = sim.angular_momentum()
    e0 = sim.energy()["rotational"]
    inertia = sim.model.principal_inertia[0]
    w_body0 = sim.rotation_matrices()[0].T @ sim.angular_velocities[0]
    sim.run(steps=5000)  # 0.1 s
    np.testing.assert_allclose(sim.angular_momentum(), L0, rtol=0, atol=1e-10 * np.linalg.norm(L0))
    assert abs(sim.energy()["rotational"] - e0) < 1e-6 * e0

    def euler(t, w):
        i1, i2, i3 = inertia
        return [(i2 - i3) / i1 * w[1] * w[2], (i3 - i1) / i2 * w[2] * w[0], (i1 - i2) / i3 * w[0] * w[1]]

    ref = solve_ivp(euler, (0.0, sim.time), w_body0, rtol=1e-11, atol=1e-9).y[:, -1]
    w_body = sim.rotation_matrices()[0].T @ sim.angular_velocities[0]
    assert np.linalg.norm(ref - w_body0) > 10.0  # it tumbled: the spin moved to other axes
    np.testing.assert_allclose(w_body, ref, atol=1e-3 * np.linalg.norm(w_body0))


def _pair(kind, model, velocity, dt=None, duration=2e-3, friction_spin=(0, 0, 0)):
    scene = cl.Scene(gravity=(0, 0, 0))
    r = 1e-3
    for k, (x, v) in enumerate((((0, 0, 0), velocity), ((2.05e-3, 3e-4, 1e-4), (0, 0, 0)))):
        if kind == "sphere":
            scene.add_sphere(position=x, radius=r, material=GLASS, velocity=v, angular_velocity=friction_spin)
        else:
            scene.add_ellipsoid(position=x, semi_axes=(r, r, r), material=GLASS, velocity=v,
                                angular_velocity=friction_spin, orientation=_quat((1, 2, 3), 0.7 * k))
    sim = cl.Simulation(scene, model=model, dt=dt)
    rec = sim.record("overlap", "normal_force", contact=(0, 1))
    sim.run(duration=duration)
    return sim, rec


def test_spheres_given_as_ellipsoids_reproduce_the_sphere_contact():
    """An oblique frictional impact of two spheres and of the same two spheres given as ellipsoids
    with equal axes: same overlaps, forces, velocities and spins (reference: the sphere-sphere
    narrow phase)."""
    model = cl.models.HertzMindlin(restitution=0.6, friction=0.4)
    a, ra = _pair("sphere", model, (0.3, 0.0, 0.0), dt=2e-7, friction_spin=(0, 0, 40.0))
    b, rb = _pair("ellipsoid", model, (0.3, 0.0, 0.0), dt=2e-7, friction_spin=(0, 0, 40.0))
    assert ra["overlap"].max() > 1e-6
    np.testing.assert_allclose(rb["overlap"], ra["overlap"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(rb["normal_force"], ra["normal_force"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.velocities, a.velocities, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.angular_velocities, a.angular_velocities, rtol=1e-9, atol=1e-9)


def test_ellipsoid_rests_on_a_wall_on_its_tip():
    """A prolate ellipsoid standing on its long axis on a plane settles with its weight carried by
    the contact and its centre a semi-axis above the plane (minus the Hertz overlap at the tip's
    radius of curvature b^2/a: the closed form F = 4/3 E* sqrt(R) d^1.5)."""
    a, b = 2e-3, 1e-3
    scene = cl.Scene()
    scene.add_ellipsoid(position=(0, 0, a * 1.001), semi_axes=(b, b, a), material=GLASS)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5))
    sim.run(duration=0.05)
    weight = sim.model.mass[0] * 9.81
    np.testing.assert_allclose(sim.wall_forces()[0, 2], -weight, rtol=1e-4)
    e_star = 1.0 / (2 * (1 - GLASS.poisson**2) / GLASS.young)
    radius = b * b / a
    delta = (weight / (4 / 3 * e_star * math.sqrt(radius))) ** (2 / 3)
    np.testing.assert_allclose(sim.positions[0, 2], a - delta, rtol=0, atol=0.02 * delta)
