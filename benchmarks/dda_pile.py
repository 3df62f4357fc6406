"""Particle DDA against the explicit engine on a 2-D settling pile (issue 17).

Run: ``python benchmarks/dda_pile.py --columns 40 --rows 25 --seeds 0 1 2`` (the scene is
``tests/helpers/pile_2d.py``'s, shared with the test of tests/test_dda.py).

A loose lattice of bidisperse disks (radii 0.8-1.0 x ``radius``, thickness ``radius``) falls into a
box of three line walls and settles.  The explicit engine runs a linear spring-dashpot law whose
normal stiffness equals DDA's penalty, with local damping, at its default step; DDA runs at
``dt_factor`` times the explicit stability limit (default 100).  Both stop when the fastest body
is slower than ``speed`` (m/s, checked every 10 ms of simulated time); the explicit engine also
when its unbalanced force ratio is below ``force_ratio`` at two checks in a row (static
equilibrium: a disk rolling freely on the floor keeps its speed under local damping).
Reported per code: wall time to rest (compiled kernels warm), simulated time, the area fraction
of the pile's band from ``3 radius`` above the floor to 60 % of its height (exact intersections
with the bodies as they are: DDA's strained disks are ellipses), and for DDA the steps, Krylov
iterations per step and per solve, open-close iterations, the cut steps by cause and the peak
memory of the process.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

import contactlab as cl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers.pile_2d import band_fraction, explicit_law, pile_scene  # noqa: E402  (one scene for test and benchmark)


def run_explicit(columns, rows, radius, seed, friction, speed, max_time, force_ratio):
    """The explicit engine until it is at rest (every body slower than ``speed``) or in static
    equilibrium (``Simulation.unbalanced_force_ratio`` below ``force_ratio`` at two checks in a
    row): local damping opposes accelerations, not velocities, so a disk rolling freely on the
    floor (a pocket of the bottom row holds one in the 10,000-disk pile) keeps its speed."""
    scene, radii, stone, width = pile_scene(columns, rows, radius, seed)
    law = explicit_law(stone, radius, friction)
    sim = cl.Simulation(scene, law, local_damping=0.1)
    sim.run(steps=1)
    t0 = time.perf_counter()
    settled_by = None
    calm = 0
    while sim.time < max_time and settled_by is None:
        sim.run(duration=0.01)
        fastest = float(np.linalg.norm(sim.velocities, axis=1).max())
        ratio = sim.unbalanced_force_ratio()
        calm = calm + 1 if ratio < force_ratio else 0
        settled_by = "speed" if fastest < speed else "force ratio" if calm >= 2 else None
        if round(sim.time / 0.01) % 10 == 0:
            print(f"explicit t={sim.time:.2f} s wall={time.perf_counter() - t0:.0f} s "
                  f"max speed={fastest:.3g} m/s force ratio={ratio:.3g}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    v = np.linalg.norm(sim.velocities, axis=1)
    k = int(np.argmax(v))
    c = sim.contacts()
    return dict(code="explicit", seed=seed, n=len(radii), wall_s=wall, simulated_s=sim.time,
                settled=settled_by is not None, settled_by=settled_by, force_ratio=sim.unbalanced_force_ratio(),
                max_speed=float(v[k]), fastest_body=k, fastest_body_contacts=int(((c["i"] == k) | (c["j"] == k)).sum()),
                fastest_body_rolling=float(abs(sim.angular_velocities[k, 2]) * radii[k] / max(v[k], 1e-300)),
                dt=sim.dt, fraction=band_fraction(sim.positions[:, :2], radii, width, radius),
                peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)


def stability_limit(columns, rows, radius, seed):
    scene, radii, stone, _ = pile_scene(columns, rows, radius, seed)
    sim = cl.Simulation(scene, explicit_law(stone, radius, 0.4))
    return sim.stability_limit


def run_dda(columns, rows, radius, seed, friction, speed, max_time, dt, dynamic, newmark, velocity_ratio,
            rigid=False, cg_tolerance=1e-9):
    scene, radii, stone, width = pile_scene(columns, rows, radius, seed)
    dda = cl.DDA(scene, dt=dt, friction=friction, dynamic=dynamic, newmark=newmark,
                 max_displacement=0.25 * radius, velocity_ratio=velocity_ratio, cg_tolerance=cg_tolerance)
    if rigid:
        dda.fix(range(len(radii)), dofs=("eps_x", "eps_y", "gamma_xy"))
    t0 = time.perf_counter()
    settled = False
    while not settled and dda.time < max_time * (1.0 - 1e-12):
        # in pieces of 0.1 s, each followed by a line of progress on stderr
        settled = dda.settle(speed_tolerance=speed, max_duration=min(0.1, max_time - dda.time), check_every=0.01)
        print(f"dda t={dda.time:.2f} s wall={time.perf_counter() - t0:.0f} s steps={dda.n_steps} "
              f"max speed={dda.max_speed():.3g} m/s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    log = dda.log
    full = float(np.mean(log["dt"] >= 0.999 * dt))
    return dict(code="dda", seed=seed, n=len(radii), rigid=rigid, wall_s=wall, simulated_s=dda.time,
                settled=settled, dt=dt, steps=dda.n_steps, full_dt_steps=full,
                cg_per_step=float(log["cg_iterations"].mean()),
                cg_per_solve=float(log["cg_iterations"].sum() / log["open_close_iterations"].sum()),
                cut_cg_share=float(log["cut_cg_iterations"].sum()
                                   / max(1, log["cut_cg_iterations"].sum() + log["cg_iterations"].sum())),
                open_close_mean=float(log["open_close_iterations"].mean()),
                rejected=int(log["rejected"].sum()), cuts=[int(log[k].sum()) for k in
                                                        ("cut_open_close", "cut_solver", "cut_displacement",
                                                         "cut_penetration")],
                fraction=band_fraction(dda.positions, radii, width, radius, dda.shape_matrices),
                fraction_undeformed=band_fraction(dda.positions, radii, width, radius),
                peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", type=int, default=16)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--radius", type=float, default=0.01)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--friction", type=float, default=0.4)
    ap.add_argument("--speed", type=float, default=1e-3)
    ap.add_argument("--force-ratio", type=float, default=1e-5,
                    help="explicit engine: static equilibrium when the unbalanced force ratio is below this "
                         "(1e-5: the usual threshold of mean-ratio tests)")
    ap.add_argument("--max-time", type=float, default=3.0)
    ap.add_argument("--dt-factor", type=float, default=100.0)
    ap.add_argument("--static", action="store_true", help="DDA static analysis (velocities reset every step)")
    ap.add_argument("--newmark", type=float, nargs=2, default=(0.5, 1.0))
    ap.add_argument("--velocity-ratio", type=float, default=1.0, help="DDA's dynamic ratio (1: undamped)")
    ap.add_argument("--cg-tolerance", type=float, default=1e-9, help="DDA's cg_tolerance (relative residual)")
    ap.add_argument("--rigid", action="store_true",
                    help="DDA with rigid disks: every body's strain unknowns held at 0 (DDA.fix)")
    ap.add_argument("--codes", nargs="+", default=["explicit", "dda"])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    limit = stability_limit(args.columns, args.rows, args.radius, 0)
    rows = []
    for seed in args.seeds:
        for code in args.codes:
            if code == "explicit":
                r = run_explicit(args.columns, args.rows, args.radius, seed, args.friction, args.speed, args.max_time,
                                 args.force_ratio)
            else:
                r = run_dda(args.columns, args.rows, args.radius, seed, args.friction, args.speed, args.max_time,
                            args.dt_factor * limit, not args.static, tuple(args.newmark), args.velocity_ratio,
                            args.rigid, args.cg_tolerance)
            rows.append(r)
            print(json.dumps(r), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
