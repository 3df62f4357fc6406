"""Bit-identity fingerprint: run a fixed set of scenes and save every output array, or compare two.

For changes that must not change any result (a refactoring, a faster kernel that keeps the order of
the sums): save a fingerprint with the code before, one with the code after, and compare.

    PYTHONPATH=/path/to/old/src python benchmarks/fingerprint.py save old.npz
    python benchmarks/fingerprint.py save new.npz
    python benchmarks/fingerprint.py compare old.npz new.npz     # exit 1 if an array differs

The scenes: a pour of 1 mm glass beads with Hertz-Mindlin on 2 threads and with the serial kernel
forced on one, a restart from a checkpoint in the middle; every built-in model's probe over a random
load/slide/rotate path; a short pour with every model (Ice and parallel bonds made, then torn by
kicks); a piston with local damping and changed velocities; ellipsoids, boxes and spheres on a
mesh; VolumeContact boxes; the convex roll of spec 003; two debug-mode runs.  Saved per scene: every
State array, every key of ``contacts()``, every ``energy()`` term, the neighbour-list builds and,
for bonded models, ``bonds()``.  About 4 minutes with empty kernel caches, a few seconds cached.
"""
from __future__ import annotations

import math
import os
import sys
import tempfile

import numpy as np

import contactlab as cl
from contactlab import _jit


def _save(target) -> int:
    out = {}
    GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    STEEL = cl.Material(density=7800.0, young=2e11, poisson=0.3, name="steel")

    def snap(name, sim):
        s = sim.state
        for k, v in s.arrays().items():
            out[f"{name}/state/{k}"] = v.copy()
        out[f"{name}/time"] = np.array([s.time, s.step])
        for k, v in sim.contacts().items():
            out[f"{name}/contacts/{k}"] = np.asarray(v).copy()
        for k, v in sim.energy().items():
            out[f"{name}/energy/{k}"] = np.array([v])
        out[f"{name}/builds"] = np.array([sim.table.builds])

    def pour(model, threads=None, n_extra=None):
        scene = cl.Scene()
        L = 0.014
        scene.fill_box((0, 0, 0), (L, L, 0.03), 1e-3, GLASS, jitter=0.5, seed=11, radius_spread=0.2)
        for p, n in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((L, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)),
                     ((0, L, 0), (0, -1, 0))]:
            scene.add_wall(point=p, normal=n, material=GLASS)
        return cl.Simulation(scene, model, threads=threads, energy_watchdog=None)

    def HM():
        return cl.models.HertzMindlin(restitution=0.4, friction=0.5, rolling_friction=0.05)
    # 1 pour, parallel and forced serial, with restart
    a = pour(HM(), threads=2)
    a.run(duration=0.02)
    tmp = tempfile.mkdtemp(prefix="contactlab-fingerprint-")
    path = a.save_checkpoint(os.path.join(tmp, "c.npz"))
    a.run(duration=0.02)
    snap("pour_hm", a)
    b = cl.Simulation.load_checkpoint(path)
    b.run(duration=0.02)
    snap("pour_hm_restart", b)
    old = _jit.SERIAL_BELOW
    _jit.SERIAL_BELOW = 10**9
    c = pour(HM(), threads=1)
    c.run(duration=0.01)
    snap("pour_hm_serial", c)
    _jit.SERIAL_BELOW = old
    # probe of every model
    models = {
        "hm": HM(),
        "hm_torque": cl.models.HertzMindlin(restitution=0.4, friction=0.5, rolling_friction=0.05,
                                            rolling_model="constant_torque"),
        "lsd": cl.models.LinearSpringDashpot(stiffness=3e3, restitution=0.4, friction=0.3, rolling_friction=0.1),
        "ssc0": cl.models.SphereSphereContact(contact_stiffness=2e3, impact_model=0, contact_plasticity_ratio=0.6,
                                              constant_pull_off_force=0.02, adhesion_coefficient=40.0, adhesion_exponent=1.5,
                                              dynamic_friction=0.4, friction_proportional_zone=0.02),
        "ssc2": cl.models.SphereSphereContact(contact_stiffness=2e3, impact_model=2, restitution_coefficient=0.2),
        "luding": cl.models.Luding(k1_div_kn=0.3, ka_div_kn=0.5, delta_lim_rel=0.05, tan_phi=0.5, visc_n=0.02),
        "ice": cl.models.Ice(break_n=2e-5, beta=(0.3, 0.2, 0.1), alpha=(0.5, 0.25), kt_div_kn=0.4),
        "pb_lsd": cl.models.ParallelBond(normal_stiffness=1e11, shear_stiffness=4e10, tensile_strength=3e3, shear_strength=3e3,
                                         damping=0.1, contact=cl.models.LinearSpringDashpot(stiffness=1e4, restitution=0.5, friction=0.5)),
        "pb_hm": cl.models.ParallelBond(normal_stiffness=1e11, shear_stiffness=4e10, tensile_strength=3e3, shear_strength=3e3,
                                        contact=cl.models.HertzMindlin(restitution=0.5, friction=0.5)),
        "composite": cl.models.Contact(normal=cl.parts.hooke(stiffness=1e4), damping=cl.parts.viscous_damping(coefficient=0.05),
                                       tangential=cl.parts.coulomb_friction(stiffness=3e3, friction=0.5),
                                       rolling=cl.parts.rolling_resistance(stiffness=1e-6, friction=0.1),
                                       twisting=cl.parts.twisting_resistance(stiffness=1e-6, friction=0.1)),
    }
    rng = np.random.default_rng(3)
    T = 200
    ov = 1e-5 * np.sin(np.linspace(0, 3 * np.pi, T)) + 2e-6
    tang = np.cumsum(rng.normal(scale=2e-7, size=(T, 3)), axis=0)
    rot = np.cumsum(rng.normal(scale=2e-4, size=(T, 3)), axis=0)
    for name, m in models.items():
        r = cl.probe(m, ov, tangential=tang, rotation=rot, dt=1e-5)
        for f in ("force", "couple", "stored_energy", "dissipation", "active", "history", "dissipation_terms"):
            out[f"probe/{name}/{f}"] = np.asarray(getattr(r, f))
    # 2 short pours with each model (bonded: bond first)
    for name, m in models.items():
        if name == "hm":
            continue
        sim = pour(m, threads=2)
        if name in ("ice", "pb_lsd", "pb_hm"):
            sim.run(steps=300)
            print(name, "bonds made", sim.bond(max_gap=1e-3))
            for q in range(0, 60, 7):
                sim.set_velocity(q, (0.5, 0.3, 1.0))
        sim.run(steps=1500)
        snap(f"pour_{name}", sim)
        if name in ("ice", "pb_lsd", "pb_hm"):
            for k, v in sim.bonds().items():
                out[f"pour_{name}/bonds/{k}"] = np.asarray(v)
    # 3 local damping + piston wall + set_velocity
    scene = cl.Scene()
    scene.fill_box((0, 0, 0), (0.01, 0.01, 0.02), 1e-3, GLASS, jitter=0.3, seed=2)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    w = scene.add_wall(point=(0, 0, 0.022), normal=(0, 0, -1), material=GLASS, velocity=(0, 0, -0.05))
    for p, n in [((0, 0, 0), (1, 0, 0)), ((0.01, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 1, 0)), ((0, 0.01, 0), (0, -1, 0))]:
        scene.add_wall(point=p, normal=n, material=GLASS)
    sim = cl.Simulation(scene, cl.models.LinearSpringDashpot(stiffness=2e3, restitution=0.5, friction=0.4), local_damping=0.7, energy_watchdog=None)
    sim.run(steps=1500)
    sim.set_velocity(0, (0.01, 0, 0))
    sim.set_wall_velocity(w, (0, 0, 0.0))
    sim.run(steps=500)
    snap("piston_damped", sim)
    # 4 shapes: ellipsoids, boxes, a mesh, roll, volume
    scene = cl.Scene()
    for k in range(4):
        scene.add_ellipsoid(position=(0.004 * k, 0, 0.004), semi_axes=(1.5e-3, 1e-3, 0.8e-3), material=GLASS,
                            orientation=(math.cos(0.3 * k), math.sin(0.3 * k), 0, 0))
        scene.add_box(position=(0.004 * k, 0.005, 0.004), half_extents=(1e-3, 0.8e-3, 0.6e-3), material=GLASS,
                      orientation=(math.cos(0.2 * k), 0, math.sin(0.2 * k), 0))
        scene.add_sphere(position=(0.004 * k, -0.004, 0.003), radius=1e-3, material=GLASS)
    v = np.array([[-0.01, -0.01, 0], [0.03, -0.01, 0], [0.03, 0.02, 0], [-0.01, 0.02, 0], [0.01, 0.005, -0.002]])
    f = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    scene.add_mesh((v, f), GLASS)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.4), energy_watchdog=None)
    sim.run(steps=3000)
    snap("shapes_mesh", sim)
    scene = cl.Scene()
    for k in range(3):
        scene.add_box(position=(0.0025 * k, 0, 0.002 + 0.0025 * k), half_extents=(1e-3, 1e-3, 1e-3), material=GLASS,
                      orientation=(math.cos(0.2 * k), 0, math.sin(0.2 * k), 0))
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
    sim = cl.Simulation(scene, cl.models.VolumeContact(volume_stiffness=1e12, damping=1e3, friction=0.3)
                        if "volume_stiffness" in [p.name for p in cl.models.VolumeContact.parameters] else
                        cl.models.VolumeContact(**{p.name: (p.default if p.default is not None else 1e12) for p in cl.models.VolumeContact.parameters}),
                        energy_watchdog=None)
    sim.run(steps=2000)
    snap("volume", sim)
    tilt = math.pi / 16
    rotm = np.array([[math.cos(tilt), 0, math.sin(tilt)], [0, 1, 0], [-math.sin(tilt), 0, math.cos(tilt)]])
    scene = cl.Scene()
    length, rod = 0.1, 3e-3
    mass = STEEL.density * math.pi * rod**2 * length
    inertia = [0.5 * mass * rod**2, mass * (3 * rod**2 + length**2) / 12, mass * (3 * rod**2 + length**2) / 12]
    roll = scene.add_convex_roll(position=(0, 0, 1.2 * 0.0165), orientation=rotm, hull_coefficients=[-3.6, 0, 0.0165],
                                 length=length, material=STEEL, mass=mass, inertia=inertia, angular_velocity=-1000.0 * rotm[:, 0])
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=STEEL)
    sim = cl.Simulation(scene, cl.models.ConvexRollContact(contact_stiffness=1e3, contact_damping=1.0, dynamic_friction=0.9),
                        energy_watchdog=None)
    sim.run(steps=20000)
    snap("roll", sim)
    for k, v in sim.convex_roll_output(roll).items():
        out[f"roll/output/{k}"] = v
    # 5 debug mode (plain Python kernels) on a tiny scene, composite law and a built-in one
    for name in ("composite", "hm"):
        scene = cl.Scene()
        scene.add_sphere(position=(0, 0, 0.0011), radius=1e-3, material=GLASS, velocity=(0.01, 0, -0.1))
        scene.add_sphere(position=(0.0005, 0, 0.0032), radius=1e-3, material=GLASS)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
        sim = cl.Simulation(scene, models[name], debug=True, energy_watchdog=None)
        sim.run(steps=60)
        snap(f"debug_{name}", sim)
    np.savez(target, **out)
    print(f"{len(out)} arrays saved to {target}")
    return 0


def _same(x, y) -> bool:
    if x.shape != y.shape:
        return False
    if x.dtype.kind == "O":
        return list(x.ravel()) == list(y.ravel())
    return np.array_equal(x, y, equal_nan=x.dtype.kind == "f")


def _compare(first, second) -> int:
    a, b = np.load(first, allow_pickle=True), np.load(second, allow_pickle=True)
    ka, kb = set(a.files), set(b.files)
    if ka - kb:
        print(f"only in {first}: {sorted(ka - kb)}")
    if kb - ka:
        print(f"only in {second} ({len(kb - ka)}): {sorted(kb - ka)[:10]} ...")
    bad = [k for k in sorted(ka & kb) if not _same(a[k], b[k])]
    print(f"{len(ka & kb) - len(bad)} arrays identical, {len(bad)} differ{': ' + ', '.join(bad[:40]) if bad else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "save":
        sys.exit(_save(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(_compare(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
