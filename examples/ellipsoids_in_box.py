"""Ellipsoids settling in a box: rigid bodies with full inertia tensors and the common-normal contact.

A few hundred prolate and oblate ellipsoids, randomly oriented on a loose lattice, fall into a box
of five plane walls and settle.  Ellipsoid-ellipsoid contacts are found by the common-normal method
(Newton-Raphson with a Levenberg-Marquardt fallback, warm-started from the last step's normal),
ellipsoid-wall contacts in closed form; the Hertz-Mindlin law sees the radii of curvature at the
contact points.  Prints the energy terms as the bed settles and the orientation order of the bed
(ellipsoids lying down: their long axes end up mostly horizontal).  With ``--vtk DIR`` the
ellipsoids' surfaces are written for ParaView (``shapes.pvd``).

Run:  python examples/ellipsoids_in_box.py [--count N] [--vtk out/ellipsoids]
"""
from __future__ import annotations

import argparse

import numpy as np

import contactlab as cl


def random_quaternions(n, rng):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def main(count=200, vtk=None, duration=0.6, seed=2, progress=False):
    """Settle ``count`` ellipsoids for ``duration`` s, printing the energy six times; returns the
    simulation.  ``progress=True``: contactlab's progress bar on stderr between those lines."""
    rng = np.random.default_rng(seed)
    grain = cl.Material(density=2500.0, young=2e7, poisson=0.3, name="grain")
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    half = 0.012
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((-half, 0, 0), (1, 0, 0)), ((half, 0, 0), (-1, 0, 0)),
                          ((0, -half, 0), (0, 1, 0)), ((0, half, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=grain)
    spacing = 4.4e-3
    xs = np.arange(-half + spacing / 2, half - spacing / 2 + 1e-9, spacing)
    sites = np.array([(x, y, 0.004 + spacing * k) for k in range(100) for x in xs for y in xs])[:count]
    quats = random_quaternions(len(sites), rng)
    for k, (p, q) in enumerate(zip(sites, quats)):
        axes = (2.0e-3, 1.0e-3, 1.0e-3) if k % 2 == 0 else (1.6e-3, 1.6e-3, 0.8e-3)  # prolate / oblate
        scene.add_ellipsoid(position=p, semi_axes=axes, material=grain, orientation=q,
                            velocity=rng.normal(scale=0.05, size=3))
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.4, friction=0.4))
    if vtk:
        sim.add_reporter(cl.io.VTKReporter(vtk, interval=0.02))
    print(f"{sim.n_spheres} ellipsoids, dt = {sim.dt:.3g} s")
    for k in range(6):
        sim.run(duration=duration / 6, progress=progress)
        e = sim.energy()
        print(f"t = {sim.time:.3f} s: kinetic {e['kinetic']:.3e} J, rotational {e['rotational']:.3e} J, "
              f"contacts {sim.n_contacts()}, balance error {e['balance_error']:.2e} J")
    r = sim.rotation_matrices()
    prolate = np.arange(sim.n_spheres) % 2 == 0
    long_axis = r[prolate][:, :, 0]
    print(f"prolate grains: mean |cos| of the long axis with the vertical {np.abs(long_axis[:, 2]).mean():.2f} "
          f"(0.5 for random orientations, 0 for all lying flat)")
    sim.close()
    return sim


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--vtk", default=None)
    a = parser.parse_args()
    main(a.count, a.vtk, progress=True)
