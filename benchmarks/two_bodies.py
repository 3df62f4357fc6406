"""Two spheres head-on (glass, r = 1 mm, 0.05 m/s each), Hertz-Mindlin, 1e5 steps of 1e-6 s on one
thread: microseconds per step (the fixed cost of a step), contactlab interleaved with serial LAMMPS
on the same input, best of 5 rounds each.

``--moving``: the two bodies that move, one at 1 m/s towards the other 50 mm away (1e5 steps of
1e-6 s, so that the neighbour list is rebuilt every few hundred steps: the cost of a rebuild, which
returns to Python, shows).

LAMMPS (Debian's ``lmp``, skipped when not installed or with ``--no-lammps``): the same two atoms
in a box of 0.1 m, ``pair_style granular`` with the coefficients of ``lammps/lammps_settle.py``
(Hertz-Mindlin, restitution damping matched to contactlab's), ``fix nve/sphere``, contactlab's
neighbour skin; its own ``Loop time`` (set-up excluded, as ``Simulation.run`` timing excludes
``Simulation`` construction).

Usage::

    python benchmarks/two_bodies.py [--rounds 5] [--no-lammps] [--moving]
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
region box block -{side!r} {side!r} -{side!r} {side!r} {zlo!r} {zhi!r}
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


#: the moving case: the second body's centre (m) and the first one's speed (m/s)
MOVING_DISTANCE = 0.05
MOVING_SPEED = 1.0


def _start(moving: bool) -> tuple[float, float, float]:
    """``(z of the second body, vz of the first, vz of the second)``."""
    if moving:
        return MOVING_DISTANCE, MOVING_SPEED, 0.0
    return 2 * sc.RADIUS + GAP, SPEED, -SPEED


def _box(moving: bool) -> dict:
    """LAMMPS's box (m): 0.1 m wide around the head-on pair; around the path of the moving pair
    (the second body ends ~40 mm further on), no wider than the motion needs (LAMMPS clears its
    bins at every rebuild)."""
    if moving:
        return dict(side=0.005, zlo=-0.005, zhi=MOVING_DISTANCE + 0.05)
    return dict(side=0.05, zlo=-0.05, zhi=0.05)


def contactlab_run(moving: bool = False) -> dict:
    """One timed run: microseconds per step, the skin, the final velocities (m/s), the rebuilds."""
    import contactlab as cl

    glass = cl.Material(density=sc.DENSITY, young=sc.YOUNG, poisson=sc.POISSON)
    scene = cl.Scene(gravity=(0, 0, 0))
    r = sc.RADIUS
    z2, v1, v2 = _start(moving)
    scene.add_sphere(position=(0, 0, 0), radius=r, material=glass, velocity=(0, 0, v1))
    scene.add_sphere(position=(0, 0, z2), radius=r, material=glass, velocity=(0, 0, v2))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=sc.RESTITUTION, friction=sc.FRICTION), dt=DT,
                        threads=1)
    builds = sim.table.builds
    t0 = time.perf_counter()
    sim.run(steps=STEPS)
    us = (time.perf_counter() - t0) / STEPS * 1e6
    v = sim.state.velocities
    return dict(us_per_step=us, skin=float(sim.table.skin), vz=(float(v[0, 2]), float(v[1, 2])),
                rebuilds=sim.table.builds - builds)


def lammps_run(lmp: str, skin: float, workdir: Path, moving: bool = False) -> dict:
    """The same run in serial LAMMPS: microseconds per step from its loop time, final velocities."""
    import contactlab as cl

    p = ls.model_parameters(cl.models.HertzMindlin(restitution=sc.RESTITUTION, friction=sc.FRICTION)
                            .damping_coefficient)
    pair = "\n".join(ls.model_commands(p, 0.1).split("\n")[:2])
    r = sc.RADIUS
    z2, v1, v2 = _start(moving)
    script = _SCRIPT.format(**_box(moving), z2=z2, d=2 * r, rho=sc.DENSITY, v=v1, mv=v2, pair=pair, skin=skin, dt=DT, steps=STEPS)
    log = ls.run_lammps([lmp], script, workdir, "two_bodies")
    loop = ls.LOOP_RE.search(log)
    vz = next(line.split()[1:] for line in log.splitlines() if line.startswith("@@V"))
    return dict(us_per_step=float(loop.group(1)) / STEPS * 1e6, vz=tuple(float(x) for x in vz))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-lammps", action="store_true")
    ap.add_argument("--moving", action="store_true", help="the two moving bodies (neighbour-list rebuilds)")
    args = ap.parse_args(argv)
    lmp = None if args.no_lammps else ls.find_lmp()
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(contactlab_run(args.moving))
        if lmp:
            theirs.append(lammps_run(lmp, ours[-1]["skin"], HERE / "out" / "lammps-two-bodies", args.moving))
    result = {"contactlab_us_per_step": min(r["us_per_step"] for r in ours),
              "contactlab_rebound_vz": ours[-1]["vz"], "contactlab_rebuilds": ours[-1]["rebuilds"]}
    if theirs:
        result["lammps_us_per_step"] = min(r["us_per_step"] for r in theirs)
        result["lammps_rebound_vz"] = theirs[-1]["vz"]
        result["ratio_lammps_over_contactlab"] = result["lammps_us_per_step"] / result["contactlab_us_per_step"]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
