"""The same packing in a periodic cell and between six plane walls: mean stress and density (issue 18).

One random fill of ``n`` spheres (sizes 1 mm +- 10 %, packing fraction 0.3, every sphere inside a
cube of side ``L``) goes into two simulations with the same law (Hertz-Mindlin, friction 0.5) and
the same local damping: a cell periodic in x, y and z of side ``L``, and a box of six plane walls
at the cell's faces.  Both start with the same affine inward flow ``v = -2/s (x - centre)``, so
that the two compressions stay homogeneous.

(a) **Same stress.**  The cell's three lengths are stress-servoed (``sim.cell.servo``) and the six
    walls servo-controlled (``sim.servo_wall``, area from the gaps) to the same ``pressure`` until
    both are at rest.  Printed: the periodic cell's Love-Weber mean stress; the box's Love-Weber
    mean stress over its whole volume (wall contacts included); the walls' normal forces over
    their areas; the Love-Weber mean stress of interior boxes one and two diameters away from the
    walls; the packing fractions, and the box's excess volume per wall area (the wall layer: the
    walls keep the sphere centres a radius away, so the box needs more volume for the same
    spheres at the same stress).
(b) **Same strain.**  From the same fill, the cell shrinks at a constant face velocity and the
    six walls move in at the same velocities, to the same final volume (the walled box's volume
    at ``pressure`` in (a)); both then rest and the mean stresses are
    compared at that volume.  With the wall layer of (a) (an excess volume of 0.14-0.17 radius
    per wall area, 2-10 % of the volume at these sizes, while the packing needs about 1 % of
    volumetric strain from jamming to ``pressure``), the periodic packing is not even jammed at
    the walled box's volume: the two stresses differ by far more than 2 % at any size that runs
    (docs/periodic.md, "The periodic cell against walls").

Run: ``python examples/periodic_vs_walls.py [--sizes 150 400 1000] [--pressure 1e3]`` (150 and 400
spheres: under a minute on one core once compiled; 1000 adds about 2 minutes, 2000 about 4).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import contactlab as cl

#: walls in the order they are added: -x, +x, -y, +y, -z, +z
X0, X1, Y0, Y1, Z0, Z1 = range(6)
PAIRS = [(X0, X1), (Y0, Y1), (Z0, Z1)]


def random_spheres(n, radius, side, seed, spread=0.1):
    """``n`` non-overlapping spheres, radii ``radius (1 +- spread)``, each entirely inside the cube
    ``[0, side]^3`` (random sequential addition, rejection): positions (n, 3) m, radii (n,) m."""
    rng = np.random.default_rng(seed)
    pos, rad = np.zeros((n, 3)), np.zeros(n)
    k = 0
    for _ in range(1000 * n):
        r = radius * (1 + spread * rng.uniform(-1, 1))
        p = rng.uniform(r, side - r, 3)
        if np.all(np.linalg.norm(pos[:k] - p, axis=1) >= rad[:k] + r):
            pos[k], rad[k] = p, r
            k += 1
            if k == n:
                return pos, rad
    raise RuntimeError(f"placed only {k} of {n} spheres in a cube of side {side} m")


def build_pair(n, *, radius=1e-3, packing_fraction=0.3, seed=1, friction=0.5, inflow=2.0, threads=1):
    """(periodic simulation, walled simulation, side L): the same spheres, law, damping and
    initial flow ``-inflow (x - centre)`` (1/s) in a periodic cell of side L and between six plane
    walls at its faces."""
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    wall = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="wall")   # the same, frictionless
    side = (n * 4.0 / 3.0 * np.pi * radius**3 / packing_fraction) ** (1.0 / 3.0)
    pos, rad = random_spheres(n, radius, side, seed)
    vel = -inflow * (pos - 0.5 * side)
    sims = []
    for walls in (False, True):
        scene = cl.Scene(gravity=(0, 0, 0))
        if not walls:
            scene.set_periodic((0, 0, 0), (side,) * 3, axes="xyz")
        scene.add_spheres(positions=pos, radii=rad, material=glass, velocities=vel)
        if walls:
            for a in range(3):
                normal = np.eye(3)[a]
                scene.add_wall(point=np.zeros(3), normal=normal, material=wall)
                scene.add_wall(point=side * normal, normal=-normal, material=wall)
        # the walls frictionless (the periodic scene has none to name)
        model = cl.models.HertzMindlin(restitution=0.5, friction=friction,
                                       per_material={"wall": {"friction": 0.0}} if walls else None)
        sims.append(cl.Simulation(scene, model=model, dt=2e-6, threads=threads, local_damping=0.3))
    return sims[0], sims[1], side


def box_bounds(box):
    """(lower (3,), upper (3,)) of the walled box now, m."""
    p = box.wall_points
    return np.array([p[X0, 0], p[Y0, 1], p[Z0, 2]]), np.array([p[X1, 0], p[Y1, 1], p[Z1, 2]])


def wall_tractions(box):
    """(6,) Pa: each wall's normal force, summed over its contacts (``sim.contacts()``), over its
    current area (the product of the two gaps across it)."""
    lo, hi = box_bounds(box)
    gap = hi - lo
    area = [gap[1] * gap[2], gap[0] * gap[2], gap[0] * gap[1]]
    c = box.contacts()
    return np.array([np.sum(c["normal_force"][c["wall"] == w]) / area[w // 2] for w in range(6)])


def at_rest(sim):
    e = sim.energy()
    return e["kinetic"] < 1e-4 * e["elastic"]


def compress_to(per, box, pressure, *, tolerance=0.005, max_time=1.0, check_every=0.01, progress=None):
    """(a): servo the cell's three lengths and the six walls to ``pressure`` (Pa) and run both
    until each is at rest with its servo's stresses within ``tolerance``; returns the time (s).
    ``progress(time, cell stresses, wall stresses)`` (s, Pa) is called at every check."""
    for axis in "xyz":
        per.cell.servo(axis, pressure, max_rate=2.0)
    side = per.cell.lengths[0]
    for w in range(6):
        box.servo_wall(w, target_stress=pressure, area_from=[q for q in PAIRS if w not in q], max_speed=side)
    while per.time < max_time:
        per.run(duration=check_every)
        box.run(duration=check_every)
        if progress:
            progress(per.time, per.cell.stress(), box.servo_status()["stress"])
        done_per = np.all(np.abs(per.cell.stress() / pressure - 1) < tolerance) and at_rest(per)
        done_box = np.all(np.abs(box.servo_status()["stress"] / pressure - 1) < tolerance) and at_rest(box)
        if done_per and done_box:
            return per.time
    raise RuntimeError(f"no equilibrium at {pressure} Pa within {max_time} s")


def box_stress(box, margin=0.0, weighting="volume"):
    """(3, 3) Pa: the walled box's Love-Weber stress (no kinetic part) over the box ``margin``
    (m) inside the walls; margin 0 is the whole box, its wall contacts included."""
    lo, hi = box_bounds(box)
    if margin == 0.0:
        return cl.measure.stress(box, cl.measure.domain(volume=float(np.prod(hi - lo))), kinetic="none")
    return cl.measure.stress(box, cl.packing.regions.box(lower=lo + margin, upper=hi - margin), kinetic="none",
                             weighting=weighting)


def solid_volume(sim):
    return float(np.sum(4.0 / 3.0 * np.pi * sim.model.radius**3))


def compare_at_same_stress(per, box, radius):
    """The numbers of (a), once both are at rest: a dict."""
    lo, hi = box_bounds(box)
    v_box, v_per = float(np.prod(hi - lo)), per.cell.volume
    inner = cl.packing.regions.box(lower=lo + 4 * radius, upper=hi - 4 * radius)
    surface = 2 * ((hi - lo)[0] * (hi - lo)[1] + (hi - lo)[1] * (hi - lo)[2] + (hi - lo)[0] * (hi - lo)[2])
    return dict(
        periodic=cl.measure.mean_stress(cl.measure.stress(per, kinetic="none")),
        box=cl.measure.mean_stress(box_stress(box)),
        walls=float(np.mean(wall_tractions(box))),
        interior_1d=cl.measure.mean_stress(box_stress(box, 2 * radius)),
        interior_2d=cl.measure.mean_stress(box_stress(box, 4 * radius)),
        phi_periodic=solid_volume(per) / v_per,
        phi_box=solid_volume(box) / v_box,
        phi_interior_2d=cl.measure.packing_fraction(box, inner),
        excess_per_area=(v_box - v_per) / surface,
        side_in_diameters=(hi - lo)[0] / (2 * radius),
    )


def same_strain(n, final_volume, *, seed=1, rate=2.0, rest=0.05, progress=False):
    """(b): from a fresh fill, shrink the cell at the constant face velocity ``rate L/2`` and move
    the six walls in at the same velocities until the volume is ``final_volume`` (m^3), stop, let
    both rest for ``rest`` s; returns (periodic mean stress, box mean stress over its volume, box
    volume) or raises SimulationBlowUp if the walled box's overlaps pass the guard.
    ``progress=True``: contactlab's progress bar on stderr for each of the four runs."""
    per, box, side = build_pair(n, seed=seed)
    duration = (side - final_volume ** (1 / 3)) / (rate * side)
    per.cell.set_strain_rate((-rate,) * 3)
    for a in range(3):
        v = np.zeros(3)
        v[a] = 0.5 * rate * side
        box.set_wall_velocity(2 * a, v)
        box.set_wall_velocity(2 * a + 1, -v)
    per.run(duration=duration, progress=progress)
    box.run(duration=duration, progress=progress)
    per.cell.set_strain_rate((0.0,) * 3)
    for w in range(6):
        box.set_wall_velocity(w, (0.0, 0.0, 0.0))
    per.run(duration=rest, progress=progress)
    box.run(duration=rest, progress=progress)
    lo, hi = box_bounds(box)
    return (cl.measure.mean_stress(cl.measure.stress(per, kinetic="none")), cl.measure.mean_stress(box_stress(box)),
            float(np.prod(hi - lo)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 400], help="numbers of spheres")
    parser.add_argument("--pressure", type=float, default=1e3, help="target mean stress of (a), Pa (default 1e3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    radius = 1e-3
    results = []
    last = [0.0]

    def report(t, cell, walls):            # a line at most every 5 s of wall time while compressing
        if time.perf_counter() - last[0] >= 5.0:
            last[0] = time.perf_counter()
            print(f"    (a) t = {t:.2f} s: cell stresses {np.round(cell, 1)} Pa, wall stresses {np.round(walls, 1)} Pa",
                  flush=True)

    for n in args.sizes:
        start = last[0] = time.perf_counter()
        per, box, side = build_pair(n, radius=radius, seed=args.seed)
        print(f"N = {n}: (a) compressing the periodic cell and the walled box to {args.pressure:g} Pa", flush=True)
        compress_to(per, box, args.pressure, progress=report)
        a = compare_at_same_stress(per, box, radius)
        print(f"\n(a) N = {n}, box side {a['side_in_diameters']:.1f} diameters, same target {args.pressure:g} Pa "
              f"({time.perf_counter() - start:.0f} s)")
        print(f"    mean stress: periodic cell {a['periodic']:.1f} Pa, walled box {a['box']:.1f} Pa "
              f"(walls' force / area {a['walls']:.1f} Pa): difference {a['box'] / a['periodic'] - 1:+.2%}")
        print(f"    interior of the box, Love-Weber: 1 d from the walls {a['interior_1d']:.1f} Pa "
              f"({a['interior_1d'] / a['periodic'] - 1:+.1%}), 2 d {a['interior_2d']:.1f} Pa "
              f"({a['interior_2d'] / a['periodic'] - 1:+.1%})")
        print(f"    packing fraction: periodic {a['phi_periodic']:.4f}, box {a['phi_box']:.4f}, box interior (2 d) "
              f"{a['phi_interior_2d']:.4f}; wall layer: excess volume / wall area = "
              f"{a['excess_per_area'] / radius:.3f} r")
        start = time.perf_counter()
        final = float(np.prod(box_bounds(box)[1] - box_bounds(box)[0]))
        try:
            print(f"N = {n}: (b) straining both to the walled box's volume (progress bars on stderr)", flush=True)
            p_per, p_box, v_box = same_strain(n, final, seed=args.seed, progress=True)
            b = f"periodic {p_per:.3g} Pa, walled box {p_box:.4g} Pa (ratio {p_box / max(p_per, 1e-300):.3g})"
        except cl.SimulationBlowUp as err:
            b = f"the walled box's overlaps passed the guard ({str(err).split(':')[1].strip()[:60]}...)"
        print(f"(b) N = {n}, both strained to the walled box's volume at {args.pressure:g} Pa "
              f"({time.perf_counter() - start:.0f} s): {b}")
        results.append((n, a))
    return results


if __name__ == "__main__":
    main()
