"""Two spheres head-on (glass, r = 1 mm, 0.05 m/s each), Hertz-Mindlin, 1e5 steps of 1e-6 s on one
thread: microseconds per step (the fixed cost of a step), contactlab interleaved with serial LAMMPS
on the same input, best of 5 rounds each.

LAMMPS (Debian's ``lmp``, skipped when not installed or with ``--no-lammps``): the same two atoms
in a box of 0.1 m, ``pair_style granular`` with the coefficients of ``lammps/lammps_settle.py``
(Hertz-Mindlin, restitution damping matched to contactlab's), ``fix nve/sphere``, contactlab's
neighbour skin; its own ``Loop time`` (set-up excluded, as ``Simulation.run`` timing excludes
``Simulation`` construction).

Usage::

    python benchmarks/two_bodies.py [--rounds 5] [--no-lammps]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "lammps"))

import lammps_settle as ls  # noqa: E402
import settle_scene as sc  # noqa: E402

STEPS = 100_000
DT = 1e-6
GAP = 0.05e-3  # m between the surfaces at the start
SPEED = 0.05   # m/s, each sphere towards the other

_SCRIPT = """units si
atom_style sphere
atom_modify map array
boundary f f f
region box block -0.05 0.05 -0.05 0.05 -0.05 0.05
create_box 1 box
create_atoms 1 single 0.0 0.0 0.0
create_atoms 1 single 0.0 0.0 {z2!r}
set atom * diameter {d!r}
set atom * density {rho!r}
set atom 1 vz {v!r}
set atom 2 vz {mv!r}
comm_modify vel yes
{pair}
neighbor {skin!r} bin
neigh_modify delay 0 every 1 check yes
fix integrate all nve/sphere
timestep {dt!r}
thermo {steps}
run {steps}
print "@@V $(vz[1]:%.15g) $(vz[2]:%.15g)"
"""


def contactlab_run() -> dict:
    """One timed run: microseconds per step, the skin, the final velocities (m/s)."""
    import contactlab as cl

    glass = cl.Material(density=sc.DENSITY, young=sc.YOUNG, poisson=sc.POISSON)
    scene = cl.Scene(gravity=(0, 0, 0))
    r = sc.RADIUS
    scene.add_sphere(position=(0, 0, 0), radius=r, material=glass, velocity=(0, 0, SPEED))
    scene.add_sphere(position=(0, 0, 2 * r + GAP), radius=r, material=glass, velocity=(0, 0, -SPEED))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=sc.RESTITUTION, friction=sc.FRICTION), dt=DT,
                        threads=1)
    t0 = time.perf_counter()
    sim.run(steps=STEPS)
    us = (time.perf_counter() - t0) / STEPS * 1e6
    v = sim.state.velocities
    return dict(us_per_step=us, skin=float(sim.table.skin), vz=(float(v[0, 2]), float(v[1, 2])))


def lammps_run(lmp: str, skin: float, workdir: Path) -> dict:
    """The same run in serial LAMMPS: microseconds per step from its loop time, final velocities."""
    import contactlab as cl

    p = ls.model_parameters(cl.models.HertzMindlin(restitution=sc.RESTITUTION, friction=sc.FRICTION)
                            .damping_coefficient)
    pair = "\n".join(ls.model_commands(p, 0.1).split("\n")[:2])
    r = sc.RADIUS
    script = _SCRIPT.format(z2=2 * r + GAP, d=2 * r, rho=sc.DENSITY, v=SPEED, mv=-SPEED, pair=pair, skin=skin,
                            dt=DT, steps=STEPS)
    log = ls.run_lammps([lmp], script, workdir, "two_bodies")
    loop = ls.LOOP_RE.search(log)
    vz = next(line.split()[1:] for line in log.splitlines() if line.startswith("@@V"))
    return dict(us_per_step=float(loop.group(1)) / STEPS * 1e6, vz=tuple(float(x) for x in vz))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-lammps", action="store_true")
    args = ap.parse_args(argv)
    lmp = None if args.no_lammps else ls.find_lmp()
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(contactlab_run())
        if lmp:
            theirs.append(lammps_run(lmp, ours[-1]["skin"], HERE / "out" / "lammps-two-bodies"))
    result = {"contactlab_us_per_step": min(r["us_per_step"] for r in ours),
              "contactlab_rebound_vz": ours[-1]["vz"]}
    if theirs:
        result["lammps_us_per_step"] = min(r["us_per_step"] for r in theirs)
        result["lammps_rebound_vz"] = theirs[-1]["vz"]
        result["ratio_lammps_over_contactlab"] = result["lammps_us_per_step"] / result["contactlab_us_per_step"]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
