"""The parallel-bond model (Potyondy and Cundall 2004): a bonded cantilever against Euler-Bernoulli
beam theory, a bonded cube in uniaxial tension against the bond tensile strength, fall-back to the
frictional contact after breakage, the compiled law against its NumPy twin, and local damping.
"""
from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import contactlab as cl
from contactlab._jit import kernel
from contactlab.laws import linear_spring_dashpot, parallel_bond

from test_laws import _twin_steps

R = 1e-3
MAT = cl.Material(density=1000.0, young=1e7, poisson=0.3, name="cement")


def _model(kn=1e10, sigma_c=1e9, tau_c=1e9, damping=0.0, restitution=0.5):
    return cl.models.ParallelBond(normal_stiffness=kn, shear_stiffness=kn / 2.5, tensile_strength=sigma_c,
                                  shear_strength=tau_c, damping=damping,
                                  contact=cl.models.LinearSpringDashpot(stiffness=1e3, restitution=restitution,
                                                                        friction=0.5))


#: the law module of a parallel bond over the linear spring-dashpot (generated, one template for every contact)
parallel_bond_linear = importlib.import_module(_model().law_module)


@kernel(cache=False)
def _call(g, p, h, dt):
    return parallel_bond_linear.law(g, p, h, dt)


def test_compiled_law_equals_numpy_twin():
    model = _model(kn=1e9, sigma_c=100.0, tau_c=100.0, damping=0.3)
    p = model.pair_table((MAT,))[0, 0]
    rng = np.random.default_rng(11)
    start = model.initial_bond_history(dict(overlap=np.zeros(1)), p[None])[0]

    def twin(g, params, hist, dt):
        return parallel_bond.reference_law(g, params, hist, dt, linear_spring_dashpot.reference_law)

    states = {np.sign(h[0]) for _, _, _, h in _twin_steps(_call, twin, p, model.history_size, rng, history=start,
                                                          increments=0.05)}
    assert states == {1.0, -1.0}


def test_cantilever_matches_euler_bernoulli():
    """A row of 11 bonded spheres, the first fixed (clamped by its bond), bending under its own weight.
    Euler-Bernoulli: tip deflection sum_k P a_k^2 (3 L - a_k) / (6 EI) for the sphere weights P at a_k,
    with the beam's EI = k_n I_b times the sphere spacing (the bond is a beam segment of that length)."""
    n, g, gap = 11, 9.81, 1e-7
    scene = cl.Scene(gravity=(0, 0, -g))
    for k in range(n):
        scene.add_sphere(position=((2 * R + gap) * k, 0, 0), radius=R, material=MAT, fixed=k == 0)
    model = _model()
    sim = cl.Simulation(scene, model=model, local_damping=0.7)
    assert sim.bond(max_gap=2 * gap) == n - 1
    sim.run(duration=0.05)
    spacing = 2 * R + gap
    EI = model.bond_properties(R, R)["k_bend"] * spacing
    a = spacing * np.arange(1, n)
    weight = sim.model.mass[1] * g
    expected = float(np.sum(weight * a**2 * (3 * a[-1] - a) / (6 * EI)))
    tip = -sim.positions[-1, 2]
    assert tip == pytest.approx(expected, rel=0.03)
    # the deflection line follows the beam too (mid-span sphere)
    mid = n // 2
    x = a[mid - 1]
    expected_mid = float(np.sum(weight * np.where(a <= x, a**2 * (3 * x - a), x**2 * (3 * a - x)) / (6 * EI)))
    assert -sim.positions[mid, 2] == pytest.approx(expected_mid, rel=0.03)
    assert np.all(sim.bonds()["intact"])
    assert abs(np.linalg.norm(sim.velocities, axis=1)).max() < 1e-6
    e = sim.energy()   # what local damping took = the work of gravity minus what the bonds store
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]


def test_bonded_cube_fails_in_tension_at_the_bond_strength():
    """A simple-cubic block of 4x4x4 bonded spheres, bottom layer fixed, top layer pulled up slowly:
    every vertical bond carries sigma_macro (2R)^2, so the block fails at sigma_macro = sigma_c pi/4."""
    n, sigma_c = 4, 2e5
    scene = cl.Scene(gravity=(0, 0, 0))
    layers = {}
    for iz in range(n):
        for iy in range(n):
            for ix in range(n):
                k = scene.add_sphere(position=(2 * R * ix, 2 * R * iy, 2 * R * iz), radius=R, material=MAT,
                                     fixed=iz in (0, n - 1))
                layers.setdefault(iz, []).append(k)
    model = _model(sigma_c=sigma_c, tau_c=10 * sigma_c)
    sim = cl.Simulation(scene, model=model, local_damping=0.7)
    assert sim.bond() == 3 * n * n * (n - 1) - 2 * 2 * n * (n - 1)   # no bonds within the two fixed layers
    top = np.array(layers[n - 1])
    for k in top:
        sim.set_velocity(int(k), (0, 0, 2e-3))
    area = (n * 2 * R) ** 2
    stress = []
    while sim.bonds()["intact"].all() and sim.time < 0.1:
        sim.run(steps=20)
        stress.append(-sim.forces[top, 2].sum() / area)
    bonds = sim.bonds()
    assert not bonds["intact"].all()
    assert set(bonds["why"][~bonds["intact"]]) == {"tension"}
    peak = max(stress)
    assert peak == pytest.approx(sigma_c * math.pi / 4, rel=0.05)
    e = sim.energy()
    assert e["dissipated_bond_breakage"] > 0
    assert abs(e["balance_error"]) < 0.01 * (e["dissipated"] + e["elastic"])


def test_after_breakage_the_contact_model_takes_over():
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=MAT, fixed=True)
    b = scene.add_sphere(position=(0, 0, 2 * R), radius=R,
                         material=cl.Material(density=1e12, young=1e7, poisson=0.3, name="immobile"))
    model = _model(sigma_c=1e3, restitution=1.0)   # an undamped contact: its force is k * overlap
    sim = cl.Simulation(scene, model=model, dt=1e-7)
    sim.bond()
    sim.set_velocity(a, (0, 0, -1e-3))
    sim.run(duration=2e-4)
    assert sim.bonds()["why"][0] == "tension" and sim.n_contacts() == 0
    sim.set_velocity(a, (0, 0, 1e-3))
    sim.run(duration=4e-4)   # back into contact and 2e-7 m of overlap
    c = sim.contact(a, b)
    assert c["bond_state"] == 0.0   # a new, unbonded contact (the broken one ended when they parted)
    assert c["normal_force"] == pytest.approx(1e3 * c["overlap"], rel=1e-6, abs=1e-12)   # the linear contact


def test_bad_parameters():
    with pytest.raises(cl.InputError, match="contact must be"):
        cl.models.ParallelBond(normal_stiffness=1, shear_stiffness=1, tensile_strength=1, shear_strength=1,
                               contact="hertz")
    with pytest.raises(cl.InputError, match="tensile_strength"):
        cl.models.ParallelBond(normal_stiffness=1, shear_stiffness=1, tensile_strength=-1, shear_strength=1,
                               contact=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    m = _model()
    again = cl.laws.registry.model_from_dict(m.to_dict())
    assert again.to_dict() == m.to_dict()
    with pytest.raises(cl.InputError, match="local_damping"):
        scene = cl.Scene()
        scene.add_sphere(position=(0, 0, 0), radius=R, material=MAT)
        cl.Simulation(scene, model=m, dt=1e-7, local_damping=1.0)
