"""Where one step's time goes: each kernel of the step timed alone on the dense lattice.

For the lattice scene of :mod:`lattice_scene` (lattice order, or ``--order random``: the same
spheres stored in a random order, or ``--order morton``: that random order sorted with
:func:`contactlab.packing.spatial_order`), after 20 steps, prints per step (microseconds): the whole step
(``Simulation.run``, Python between kernel calls included), the pair pass alone (narrow phase, law,
per-contact writes, per-sphere sums of the owner's side), the reduction alone (partner sides
gathered, kick, flag checks), the kick-drift alone, one neighbour-list rebuild (milliseconds) and
the rebuilds per 1000 steps of the run, plus the bytes per sphere of the stepper's arrays.  The
standalone passes are timed with ``dt = 0`` (nothing moves; the same loops).

Usage::

    python benchmarks/profile_step.py --n 10000 100000 --threads 1 2 [--order lattice|random|morton]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lattice_scene as L  # noqa: E402


def profile(n: int, threads: int, order: str = "lattice", scene_kind: str = "lattice") -> dict:
    import contactlab as cl
    from contactlab._jit import n_blocks

    import scale

    inp = scale.scene_input(scene_kind, n)
    pos = inp["positions"]
    if order in ("random", "morton"):
        pos = pos[np.random.default_rng(0).permutation(len(pos))]
    if order == "morton":
        # the random order sorted again along the Morton curve (contactlab.packing.spatial_order)
        pos = pos[cl.packing.spatial_order(pos)]
    if scene_kind == "lattice":
        scene, model, _ = L.build_scene(n, positions=pos)
    else:
        scene, model = scale.build(dict(inp, positions=pos))
    sim = cl.Simulation(scene, model, dt=inp["dt"], threads=threads)
    big = len(pos)
    sim.run(steps=20)
    st, t, k = sim.stepper, sim.table, sim.stepper.kernels
    reps = max(3, int(2e6 / big))
    b0 = t.builds
    t0 = time.perf_counter()
    sim.run(steps=2 * reps)
    full = (time.perf_counter() - t0) / (2 * reps)
    builds = t.builds - b0
    (radius, mass, inv_mass, inv_inertia, fixed, material, gravity, wall_normal, wall_material,
     pair_params) = st._model_args
    (pos_, vel, angvel, quat, force, torque, previous, wall_point, wall_vel, dissipated, diss_terms, boundary_work,
     boundary_power, damping_work, damping_force) = st._state_args
    bodies, rigid, meshes, motion, clumps = st._shape_args()
    blocks = n_blocks(big)
    half = 0.5 * t.skin

    def pair_pass():
        k.pair_forces(t.i_start, t.pair_j, pos_, st.vel_pred, st.angvel_pred, vel, angvel, radius, inv_mass, fixed,
                      material, wall_point, wall_normal, wall_vel, wall_material, pair_params, t.hist, t.out,
                      t.status, st.owner, boundary_power, 0.0, st.max_overlap, st.flags, blocks, quat, bodies, meshes,
                      st.cylinders)

    def reduction():
        k.reduce_kick(t.j_start, t.j_pairs, t.out, t.status, st.owner, mass, inv_mass, inv_inertia, gravity, pos_, vel, angvel,
                      quat, force, torque, previous, st.vel_pred, st.angvel_pred, dissipated, diss_terms, boundary_work,
                      t.ref_pos, 0.0, 0.0, half, st.flags, blocks, (st.local_damping, damping_work, damping_force),
                      rigid)

    def kick_drift():
        k.kick_drift(0.0, pos_, vel, angvel, quat, force, torque, previous, inv_mass, inv_inertia, st.vel_pred,
                     st.angvel_pred, t.ref_pos, half, st.flags, blocks, rigid)

    def timed(f, r):
        with st.threads_scope():
            f()
            t0 = time.perf_counter()
            for _ in range(r):
                f()
            return (time.perf_counter() - t0) / r

    return dict(n=big, threads=threads, order=order, pairs=int(t.n_pairs), contacts=int(sim.n_contacts()),
                step_us=full * 1e6, pair_pass_us=timed(pair_pass, reps) * 1e6,
                reduction_us=timed(reduction, reps) * 1e6, kick_drift_us=timed(kick_drift, reps) * 1e6,
                rebuild_ms=timed(st.rebuild, 3) * 1e3, rebuilds_per_1000_steps=1000 * builds / (2 * reps),
                particle_steps_per_s=big / full, stepper_bytes_per_sphere=st.nbytes / big)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--order", choices=("lattice", "random", "morton"), default="lattice")
    ap.add_argument("--scene", choices=("lattice", "packing", "falling"), default="lattice",
                    help="a scene of scale.py (default: the dense lattice)")
    args = ap.parse_args(argv)
    print("| N | threads | step, us | pair pass | reduction | kick-drift | rest (Python, fusion) | rebuild, ms "
          "| rebuilds/1000 steps | p-steps/s | stepper B/sphere |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.n:
        for th in args.threads:
            r = profile(n, th, args.order, args.scene)
            rest = r["step_us"] - r["pair_pass_us"] - r["reduction_us"] - r["kick_drift_us"]
            print(f"| {r['n']} | {th} | {r['step_us']:.0f} | {r['pair_pass_us']:.0f} | {r['reduction_us']:.0f} | "
                  f"{r['kick_drift_us']:.0f} | {rest:.0f} | {r['rebuild_ms']:.1f} | {r['rebuilds_per_1000_steps']:.1f} "
                  f"| {r['particle_steps_per_s']:.3g} | {r['stepper_bytes_per_sphere']:.0f} |", flush=True)
            print(json.dumps(r), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
