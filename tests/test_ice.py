"""The Ice model (spec 002): breakage in each sense at the spec's limits, yield after breakage, no
re-bonding, the bond log, the compiled law against its NumPy twin, and the energy balance.

References: the spec's limit forces (F_nb = c_n A, F_tb = beta_t F_nb, T_wb = beta_w c_n A^1.5,
T_rb = beta_r beta_t c_n A^1.5), stiffnesses and yield values, computed here from their formulas.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import contactlab as cl
from contactlab._jit import kernel
from contactlab.laws import ice

from test_laws import _random_geometries, _twin_steps

R = 1e-3
ICE = cl.Material(density=900.0, young=1e7, poisson=0.3, name="ice")
HEAVY = cl.Material(density=1e12, young=1e7, poisson=0.3, name="immobile")


@kernel(cache=False)
def _call(g, p, h, dt):
    return ice.law(g, p, h, dt)


def _spec_limits(E=1e7, r=R, break_n=1e-3, beta=(0.1, 0.1, 0.1), kt_div_kn=0.2, alpha=(1.0, 1.0)):
    """The spec's formulas for two spheres of radius r and modulus E."""
    A = math.pi * r * r
    kn = 1.0 / (r / (E * A) + r / (E * A))
    cn = (2 * r) / (r / E + r / E) * break_n   # E' eps_bn
    kt = kt_div_kn * kn
    return dict(A=A, k_n=kn, k_t=kt, k_w=alpha[0] * kt * A, k_r=alpha[1] * kn * A, F_nb=cn * A,
                F_tb=beta[0] * cn * A, T_wb=beta[1] * cn * A**1.5, T_rb=beta[2] * beta[0] * cn * A**1.5)


def test_limits_and_stiffnesses_follow_the_spec():
    model = cl.models.Ice(break_n=1e-3, beta=(0.3, 0.2, 0.1), alpha=(0.5, 0.25), kt_div_kn=0.4)
    got = model.limits(ICE, ICE, R, R)
    want = _spec_limits(break_n=1e-3, beta=(0.3, 0.2, 0.1), alpha=(0.5, 0.25), kt_div_kn=0.4)
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-12), key


def test_parameters_vectors_senses_and_bad_values():
    m = cl.models.Ice(alpha=(0.1, 0.2), beta=(0.3, 0.4, 0.5), bonded="nt", breakable="n")
    assert m.alpha == (0.1, 0.2) and m.beta == (0.3, 0.4, 0.5)
    assert (m.bonded, m.breakable) == (3.0, 1.0)
    assert cl.models.Ice(**{k: v for k, v in m.to_dict().items() if k != "type"}).values == m.values
    with pytest.raises(cl.InputError, match="unknown sense"):
        cl.models.Ice(bonded="nx")
    with pytest.raises(cl.InputError, match="3 components"):
        cl.models.Ice(beta=(0.1, 0.2))
    with pytest.raises(cl.InputError, match="break_n"):
        cl.models.Ice(break_n=0.0)
    with pytest.raises(cl.InputError, match="not both"):
        cl.models.Ice(alpha=(1, 1), alpha_w=2.0)
    a = cl.Material(density=900.0, young=1e7, poisson=0.3, name="a")
    b = cl.Material(density=900.0, young=1e7, poisson=0.3, name="b")
    mixed = cl.models.Ice(per_material={"a": dict(tan_phi=0.2, beta=(0.2, 0.1, 0.1)), b: dict(tan_phi=0.6)})
    t = mixed.pair_table((a, b))[0, 1]
    col = {name: k for k, name in enumerate(mixed.pair_fields)}
    assert t[col["tan_phi"]] == 0.2 and t[col["beta_t"]] == pytest.approx(0.15)


def test_compiled_law_equals_numpy_twin():
    model = cl.models.Ice(break_n=1e-4, beta=(0.3, 0.3, 0.3), tan_phi=0.4, mu=0.1)
    p = model.pair_table((ICE,))[0, 0]
    rng = np.random.default_rng(5)
    for start_bonded in (True, False):
        path = list(_random_geometries(rng, 500))
        for g in path:
            g["rel_rotation"] = g["rel_rotation"] * 0.1   # rotations 0.002, displacements 0.02 of the default
        rest = np.array([path[0]["overlap"] - 5e-7])  # a pre-compressed bond that later goes into tension
        start = model.initial_bond_history(dict(overlap=rest), p[None])[0] if start_bonded else None
        states = {np.sign(h[0]) for _, _, _, h in _twin_steps(_call, ice.reference_law, p, ice.HISTORY_SIZE, rng,
                                                              history=start, geometries=path, increments=0.02)}
        if start_bonded:
            assert states >= {1.0, -1.0}  # bonded, then broken


def _chain(model, n=4, speed=1e-3):
    scene = cl.Scene(gravity=(0, 0, 0))
    ids = [scene.add_sphere(position=(2 * R * k, 0, 0), radius=R, material=ICE, fixed=k in (0, n - 1))
           for k in range(n)]
    sim = cl.Simulation(scene, model=model)
    assert sim.bond() == n - 1
    return sim, ids


def test_bonded_chain_pulled_apart_breaks_at_the_cohesion_force():
    model = cl.models.Ice(break_n=1e-3)
    sim, ids = _chain(model)
    lim = _spec_limits(break_n=1e-3)
    recs = [sim.record("normal_force", contact=(ids[k], ids[k + 1])) for k in range(3)]
    sim.set_velocity(ids[-1], (1e-3, 0, 0))
    sim.run(duration=8e-3)
    bonds = sim.bonds()
    broken = np.flatnonzero(~bonds["intact"])
    assert len(broken) == 1 and bonds["why"][broken[0]] == "tension"
    k = int(broken[0])
    force = recs[k]["normal_force"]
    step_before = int(np.searchsorted(recs[k].time, bonds["broken"][k])) - 1
    # the tension just before breakage is the cohesion force c_n A (to one step's increment)
    assert -force[step_before] == pytest.approx(lim["F_nb"], rel=2e-3)
    assert -force.min() <= lim["F_nb"]
    # once broken the pair carries no tension and the bond never comes back
    after = recs[k].time > bonds["broken"][k]
    assert np.all(force[after] >= 0.0)
    e = sim.energy()
    assert e["dissipated_bond_breakage"] > 0
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]


def _pair(model, compress=0.0):
    """Sphere a (fixed, driven) bonded to an immobile sphere b, optionally pressed by ``compress`` m."""
    scene = cl.Scene(gravity=(0, 0, 0))
    a = scene.add_sphere(position=(0, 0, 0), radius=R, material=ICE, fixed=True)
    b = scene.add_sphere(position=(0, 0, 2 * R), radius=R, material=HEAVY)
    sim = cl.Simulation(scene, model=model, dt=2e-7)
    sim.bond()
    if compress:
        sim.set_velocity(a, (0, 0, 1e-3))
        sim.run(duration=compress / 1e-3)
        sim.set_velocity(a, (0, 0, 0))
    return sim, a, b


@pytest.mark.parametrize("sense, reason", [("shear", "shear"), ("twist", "twisting"), ("bend", "bending")])
def test_shear_twist_and_bend_break_at_their_limits_then_yield(sense, reason):
    model = cl.models.Ice(break_n=1e-3, beta=(0.3, 0.2, 0.2), tan_phi=0.4, mu=0.3)
    lim = _spec_limits(break_n=1e-3, beta=(0.3, 0.2, 0.2))
    press = 1e-6  # m: a compressive normal force k_n press
    sim, a, b = _pair(model, compress=press)
    rec = sim.record("force", "torque_i", "normal_force", "normal", "overlap", contact=(a, b))
    if sense == "shear":
        sim.set_velocity(a, (2e-3, 0, 0))
        limit, k = lim["F_tb"], lim["k_t"]
    elif sense == "twist":
        sim.set_velocity(a, (0, 0, 0), angular_velocity=(0, 0, 2.0))
        limit, k = lim["T_wb"], lim["k_w"]
    else:
        sim.set_velocity(a, (0, 0, 0), angular_velocity=(2.0, 0, 0))
        limit, k = lim["T_rb"], lim["k_r"]
    start = sim.time
    sim.run(duration=2.0 * limit / (k * (2e-3 if sense == "shear" else 2.0)))
    bonds = sim.bonds()
    assert not bonds["intact"][0] and bonds["why"][0] == reason
    t = rec.time
    before = (t > start) & (t < bonds["broken"][0])
    n, f = rec["normal"], rec["force"]
    # the pure couple on a: its torque minus the moment of the contact force about its centre
    couple = rec["torque_i"] - np.cross((R - 0.5 * rec["overlap"])[:, None] * n, f)
    twist = np.einsum("ij,ij->i", couple, n)
    if sense == "shear":
        load = np.linalg.norm(f - np.einsum("ij,ij->i", f, n)[:, None] * n, axis=1)
    elif sense == "twist":
        load = np.abs(twist)
    else:
        load = np.linalg.norm(couple - twist[:, None] * n, axis=1)
    peak = load[before].max()
    assert peak == pytest.approx(limit, rel=0.02)
    assert peak <= limit * 1.02
    # after breakage the unbonded senses yield at the spec's values under the compressive force
    after = t > bonds["broken"][0] + 5 * sim.dt
    f_n = rec["normal_force"][after]
    assert np.all(f_n > 0)
    lever = math.sqrt(lim["A"] / math.pi)
    yield_value = {"shear": 0.4 * f_n, "twist": lever * 0.4 * f_n, "bend": lever * 0.3 * f_n}[sense]
    # never above the yield value; at it once the spring has been loaded that far
    assert np.all(load[after] <= yield_value * (1 + 1e-6))
    tail = slice(int(0.8 * after.sum()), None)
    np.testing.assert_allclose(load[after][tail], yield_value[tail], rtol=1e-6)
    e = sim.energy()
    assert abs(e["balance_error"]) < 0.01 * e["dissipated"]


def test_no_rebonding_on_contact_and_the_bond_log(tmp_path):
    model = cl.models.Ice(break_n=1e-3)
    sim, a, b = _pair(model)
    sim.set_velocity(a, (0, 0, -5e-3))           # pull apart: breaks in tension
    sim.run(duration=1e-3)
    assert sim.bonds()["why"][0] == "tension" and sim.n_contacts() == 0
    sim.set_velocity(a, (0, 0, 5e-3))            # back into contact: an unbonded, compressive contact
    sim.run(duration=1.2e-3)
    c = sim.contact(a, b)
    assert c["in_contact"] and c["bond_state"] == 0.0 and c["normal_force"] > 0
    sim.set_velocity(a, (0, 0, -5e-3))           # and it cannot pull
    rec = sim.record("normal_force", contact=(a, b))
    sim.run(duration=1e-3)
    assert rec["normal_force"].min() >= 0.0
    assert len(sim.bonds()["i"]) == 1
    path = sim.export_bonds(tmp_path / "bonds.csv")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("i,j,bonded_in,created_s") and lines[1].endswith("tension")
    assert lines[1].split(",")[2] == "ntwr"
    # checkpoints keep the log
    sim.save_checkpoint(tmp_path / "c.npz")
    again = cl.Simulation.load_checkpoint(tmp_path / "c.npz")
    assert again.bonds()["why"][0] == "tension"
    # by hand a bond can be made again (explicit pairs: at any distance), and it holds
    sim.set_velocity(a, (0, 0, 0))
    assert sim.bond(pairs=[(a, b)]) == 1
    assert sim.bond(pairs=[(a, b)]) == 0   # already bonded
    log = sim.bonds()
    assert len(log["i"]) == 2 and list(log["intact"]) == [False, True]
    sim.set_velocity(a, (0, 0, -1e-4))
    sim.run(duration=2e-3)
    assert sim.contact(a, b)["normal_force"] < 0   # tension: bonded
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0), radius=R, material=ICE)
    with pytest.raises(cl.InputError, match="has no bonds"):
        cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-6).bond()


def test_scene_file_with_bonds_and_vector_parameters(tmp_path):
    from contactlab.io.scenefile import load_scene_file

    path = tmp_path / "chain.toml"
    path.write_text("""
[simulation]
gravity = [0.0, 0.0, 0.0]
local_damping = 0.2
[materials.ice]
density = 900.0
young = 1e7
poisson = 0.3
[model]
type = "Ice"
break_n = 1e-3
beta = [0.3, 0.2, 0.1]
bonded = "nt"
per_material = { ice = { tan_phi = 0.3 } }
[[spheres]]
positions = [[0.0, 0.0, 0.0], [0.002, 0.0, 0.0], [0.004, 0.0, 0.0]]
radii = [0.001, 0.001, 0.001]
material = "ice"
[bonds]
max_gap = 1e-6
""")
    spec = load_scene_file(path)
    sim = spec.build_simulation()
    assert sim.local_damping == 0.2 and spec.model.beta == (0.3, 0.2, 0.1) and spec.model.bonded == 3.0
    assert len(sim.bonds()["i"]) == 2 and sim.bonds()["intact"].all()
    assert list(sim.bonds()["bonded_in"]) == ["nt", "nt"]
    bad = path.read_text().replace('type = "Ice"', 'type = "HertzMindlin"\nrestitution = 0.5\nfriction = 0.5').replace(
        'break_n = 1e-3\nbeta = [0.3, 0.2, 0.1]\nbonded = "nt"\nper_material = { ice = { tan_phi = 0.3 } }\n', "")
    path.write_text(bad)
    with pytest.raises(cl.SceneFileError, match=r"\[bonds\].*no bonds"):
        load_scene_file(path)
