"""Tutorial: write a contact law in plain Python, check it, validate it, and run it at compiled speed.

The law is in ``adhesive_law.py`` next to this file: a linear elastic-plastic normal force with
adhesion (Walton and Braun's hysteresis with Luding's adhesive branch), ~30 lines of Python with a
``@cl.contact_law`` decorator.  Kept in its own module, its compiled kernels are cached on disk
like the built-in ones.  This script

1. probes the law on a prescribed load-unload-reload cycle (no simulation): the force-overlap
   loop, and the plastic work it books against the loop's area;
2. runs it once as plain Python (``debug=True``): the same numbers, and a place for breakpoints;
3. combines it with the built-in viscous damping and Coulomb friction into a full model and runs
   ``cl.validate`` on it and on the built-in elastic-plastic-adhesive model (Luding) with the same
   stiffnesses, side by side;
4. pours 10,000 spheres into a box with it and reports the speed in particle-steps per second
   (``benchmarks/custom_law.py`` compares it with the built-in laws).

Run from this directory::

    python custom_law.py              # full: 10,000 spheres, full validation battery
    python custom_law.py --quick      # smaller (1,000 spheres, reduced battery)
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import contactlab as cl
from adhesive_law import elastic_plastic_adhesive

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
RADIUS = 1e-3                        # m
K1, K2, KC = 1e4, 5e4, 2e3           # N/m: loading, unloading, adhesion
DAMPING = 0.02                       # N s/m
FRICTION = 0.5


def custom_model():
    """The user law plus the built-in viscous damping and Coulomb friction."""
    return cl.models.Contact(
        normal=elastic_plastic_adhesive(loading_stiffness=K1, unloading_stiffness=K2, adhesion_stiffness=KC),
        damping=cl.parts.viscous_damping(coefficient=DAMPING),
        tangential=cl.parts.coulomb_friction(stiffness=2.0 / 7.0 * K1, friction=FRICTION))


def builtin_model():
    """The built-in elastic-plastic-adhesive law with the same limiting stiffnesses and friction."""
    return cl.models.Luding(k2_hat=K2, k1_div_kn=K1 / K2, ka_div_kn=KC / K2, kt_div_kn=2.0 / 7.0 * K1 / K2,
                            tan_phi=FRICTION, visc_n=DAMPING, visc_r=0.0, visc_w=0.0)


def probe_cycle(verbose=True):
    """Step 1-2: load to 10 um, unload, pull apart; compiled and plain Python."""
    law = elastic_plastic_adhesive(loading_stiffness=K1, unloading_stiffness=K2, adhesion_stiffness=KC)
    d_max = 1e-5
    overlap = np.r_[np.linspace(0.0, d_max, 101), np.linspace(d_max, 0.5 * d_max, 51)[1:],
                    np.linspace(0.5 * d_max, d_max, 51)[1:], np.linspace(d_max, 0.0, 201)[1:]]
    fast = cl.probe(law, overlap=overlap, dt=1e-6, radius=RADIUS, material=GLASS)
    slow = cl.probe(law, overlap=overlap, dt=1e-6, radius=RADIUS, material=GLASS, debug=True)
    area = float(np.trapezoid(fast.normal_force, overlap))
    out = {"peak_force": float(fast.normal_force.max()), "pull_off_force": float(-fast.normal_force.min()),
           "plastic_work": float(fast.dissipated[-1]), "loop_area": area,
           "plain_python_agrees": bool(np.array_equal(fast.force, slow.force))}
    if verbose:
        print(f"1. probe: peak force {out['peak_force']:.4g} N, pull-off {out['pull_off_force']:.4g} N; plastic "
              f"work booked {out['plastic_work']:.6g} J = loop area {area:.6g} J")
        print(f"2. plain Python (debug=True) gives the same forces: {out['plain_python_agrees']}")
    return out


def validate_both(out: Path, quick: bool, verbose=True):
    """Step 3: the standard battery on the user law and on the built-in one (``verbose``: a line
    as each group of checks starts, then the table)."""
    reports = {}
    if verbose:
        print(f"3. running the {'reduced' if quick else 'full'} validation battery on both laws", flush=True)
    for label, model in (("user law", custom_model()), ("built-in Luding", builtin_model())):
        log = (lambda line, label=label: print(f"   {label}: {line}", flush=True)) if verbose else None
        reports[label] = cl.validate(model, out=out / label.replace(" ", "_"), material=GLASS, radius=RADIUS,
                                     quick=quick, log=log)
    if verbose:
        names = [c.name for c in reports["user law"].checks]
        print("   validation battery (pass/fail):")
        print(f"   {'check':44s} {'user law':>9s} {'Luding':>9s}")
        other = {c.name: c for c in reports["built-in Luding"].checks}
        for c in reports["user law"].checks:
            o = other.get(c.name)
            print(f"   {c.name:44s} {'pass' if c.passed else 'FAIL':>9s} "
                  f"{('pass' if o.passed else 'FAIL') if o else '-':>9s}")
        print(f"   reports: {out}/user_law/report.html, {out}/built-in_Luding/report.html ({len(names)} checks)")
    return reports


def pour(n=10000, duration=0.25, model=None, output: Path | None = None, verbose=True, progress=False):
    """Step 4: ``n`` spheres fall from a loose lattice into a box and settle (``progress=True``:
    contactlab's progress bar on stderr while it runs)."""
    from contactlab.scene.fill import lattice_in_box

    model = model or custom_model()
    spacing = 2.2 * RADIUS
    per_side = int(math.ceil(n ** (1.0 / 3.0)))
    side = per_side * spacing
    layers = int(math.ceil(n / per_side**2))
    pos, radii = lattice_in_box((0.0, 0.0, 0.0), (side, side, layers * spacing), RADIUS, spacing=spacing,
                                jitter=0.4, seed=1, max_count=n)
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_spheres(pos, radii, GLASS)
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((side, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, side, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=GLASS)
    t0 = time.perf_counter()
    sim = cl.Simulation(scene, model)
    setup = time.perf_counter() - t0
    if output is not None:
        sim.add_reporter(cl.io.VTKReporter(output, interval=duration / 5))
    t0 = time.perf_counter()
    sim.run(duration=duration, progress=progress)
    wall = time.perf_counter() - t0
    e = sim.energy()
    out = {"n": len(radii), "steps": sim.step, "dt": sim.dt, "setup_seconds": setup, "wall_seconds": wall,
           "particle_steps_per_second": len(radii) * sim.step / wall, "contacts": sim.n_contacts(),
           "energy": e, "simulation": sim}
    if verbose:
        print(f"4. {len(radii)} spheres, {sim.step} steps of {sim.dt:.3g} s in {wall:.1f} s (+ {setup:.1f} s set-up): "
              f"{out['particle_steps_per_second']:.3g} particle-steps/s; {out['contacts']} contacts; dissipated: "
              f"plastic {e['dissipated_plastic']:.3g} J, damping {e['dissipated_damping']:.3g} J, friction "
              f"{e['dissipated_tangential']:.3g} J; energy balance error {abs(e['balance_error']) / e['dissipated']:.2%}"
              f" of the dissipation")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="contactlab tutorial: a user-defined contact law")
    ap.add_argument("--quick", action="store_true", help="1,000 spheres and the reduced validation battery")
    ap.add_argument("--out", default="custom-law-out", help="output directory (reports, ParaView files)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    probe_cycle()
    validate_both(out / "validation", quick=args.quick)
    n = 1000 if args.quick else 10000
    print(f"4. pouring {n} spheres (the progress bar on stderr)", flush=True)
    pour(n=n, duration=0.1 if args.quick else 0.25, output=out / "pour", progress=True)


if __name__ == "__main__":
    main()
