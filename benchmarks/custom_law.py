"""Speed of user-defined laws against the built-in laws they are equivalent to (issue 5).

The "settle" scene (N glass beads falling into a box, ``settle_scene.py``) runs with

* ``linear``: the built-in ``LinearSpringDashpot`` against the same law assembled from slot laws,
  ``Contact(normal=parts.hooke, damping=parts.viscous_damping, tangential=parts.coulomb_friction)``
  (identical physics between spheres; the composite's dashpot coefficient is the one for two
  equal spheres, so only the sphere-wall damping differs);
* ``adhesive``: the tutorial's user law (``examples/adhesive_law.py``: elastic-plastic normal
  force with adhesion, plus the built-in viscous damping and Coulomb friction) against the
  built-in elastic-plastic-adhesive law, ``Luding`` (which also computes rolling and twisting).

Each pair is timed in the same process, interleaved, best of ``--rounds``, over a falling phase
(from the lattice, few contacts) and a dense phase (the packing settled by the "settle" benchmark,
``benchmarks/out/settled-<N>.npz``, run ``settle.py`` first; each model first relaxes it for
``--relax-steps``).  Results: JSON in
``benchmarks/out/custom-law-<N>.json`` and a markdown table on stdout.

Usage::

    python benchmarks/custom_law.py --n 10000 --threads 2 --rounds 3
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

import settle_scene  # noqa: E402


def models():
    import contactlab as cl
    from adhesive_law import elastic_plastic_adhesive

    k, e, mu = 1e4, 0.5, 0.5
    lsd = cl.models.LinearSpringDashpot(stiffness=k, restitution=e, friction=mu)
    m = 0.5 * settle_scene.DENSITY * 4.0 / 3.0 * math.pi * settle_scene.RADIUS**3
    z = lsd.damping_ratio
    k_t = 2.0 / 7.0 * k
    linear = cl.models.Contact(
        normal=cl.parts.hooke(stiffness=k),
        damping=cl.parts.viscous_damping(coefficient=2 * z * math.sqrt(k * m)),
        tangential=cl.parts.coulomb_friction(stiffness=k_t, friction=mu, damping=2 * z * math.sqrt(k_t * m)))
    adhesive = cl.models.Contact(
        normal=elastic_plastic_adhesive(loading_stiffness=k, unloading_stiffness=5 * k, adhesion_stiffness=0.2 * k),
        damping=cl.parts.viscous_damping(coefficient=2 * z * math.sqrt(k * m)),
        tangential=cl.parts.coulomb_friction(stiffness=k_t, friction=mu))
    luding = cl.models.Luding(k2_hat=5 * k, k1_div_kn=0.2, ka_div_kn=0.04, kt_div_kn=k_t / (5 * k), tan_phi=mu,
                              visc_n=2 * z * math.sqrt(k * m), visc_r=0.0, visc_w=0.0)
    return {"linear": (lsd, linear), "adhesive": (luding, adhesive)}


def build(n, model, dt, packed=False):
    import contactlab as cl

    scene, _, lay = settle_scene.build_scene(n)
    if packed:
        import numpy as np

        settled = np.load(OUT / f"settled-{n}.npz", allow_pickle=False)
        positions = settled["state_positions"]
        scene = cl.Scene(gravity=settle_scene.GRAVITY)
        glass = cl.Material(density=settle_scene.DENSITY, young=settle_scene.YOUNG, poisson=settle_scene.POISSON,
                            name="glass")
        scene.add_spheres(positions, settled["model_radius"], glass)
        for point, normal in settle_scene.walls(lay["side"]):
            scene.add_wall(point=point, normal=normal, material=glass)
    return cl.Simulation(scene, model, dt=dt)


def measure(sim, steps):
    t0 = time.perf_counter()
    sim.run(steps=steps)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fall-steps", type=int, default=1500)
    ap.add_argument("--dense-steps", type=int, default=1000)
    ap.add_argument("--relax-steps", type=int, default=2000)
    args = ap.parse_args(argv)
    import numba

    numba.set_num_threads(args.threads)
    results = {}
    for label, (builtin, custom) in models().items():
        # the same time step for both: the smaller of their defaults
        dts = [build(8, m, None).dt for m in (builtin, custom)]
        dt = min(dts)
        sims = {"built-in": build(args.n, builtin, dt), "user-defined": build(args.n, custom, dt)}
        fall = {k: [] for k in sims}
        for _ in range(args.rounds):
            for name, sim in sims.items():
                fall[name].append(measure(sim, args.fall_steps // args.rounds))
        print(f"{label}: falling phase done (dt = {dt:.3g} s)", flush=True)
        sims = {"built-in": build(args.n, builtin, dt, packed=True), "user-defined": build(args.n, custom, dt, True)}
        for sim in sims.values():
            sim.run(steps=args.relax_steps)
        dense = {k: [] for k in sims}
        for _ in range(args.rounds):
            for name, sim in sims.items():
                dense[name].append(measure(sim, args.dense_steps // args.rounds))
        row = {}
        for name, sim in sims.items():
            row[name] = {
                "model": repr(sim.contact_model), "dt": dt,
                "falling_particle_steps_per_s": args.n * (args.fall_steps // args.rounds) / min(fall[name]),
                "dense_particle_steps_per_s": args.n * (args.dense_steps // args.rounds) / min(dense[name]),
                "contacts_per_sphere_dense": 2 * sim.n_contacts() / args.n,
            }
        results[label] = row
    OUT.mkdir(exist_ok=True)
    record = {"n": args.n, "threads": args.threads, "rounds": args.rounds, "cpu": settle_scene.cpu_name(),
              "python": platform.python_version(), "numba": numba.__version__, "results": results}
    (OUT / f"custom-law-{args.n}.json").write_text(json.dumps(record, indent=2))
    print("| pair | phase | built-in | user-defined | ratio (user / built-in) |")
    print("|---|---|---:|---:|---:|")
    for label, row in results.items():
        for phase in ("falling", "dense"):
            a = row["built-in"][f"{phase}_particle_steps_per_s"]
            b = row["user-defined"][f"{phase}_particle_steps_per_s"]
            print(f"| {label} | {phase} | {a:.3g} | {b:.3g} | {b / a:.3f} |")


if __name__ == "__main__":
    main()
