"""The convex roll of spec 003 (Exudyn's ObjectContactConvexRoll): spun, dropped, rolling and drifting.

A roll whose hull radius is r(x) = -3.6 x^2 + 0.0165 (m) over a length of 0.1 m, its axis tilted by
pi/16, spinning at 1000 rad/s about its axis, is dropped from 1.2 times its radius onto the ground
(contact stiffness 1e3 N/m, damping 1 N s/m, dynamic friction 0.9, as in the spec's example).  It
lands, the regularized Stribeck friction turns its spin into rolling, and it drifts over the
ground along a curve.  Prints the spec's outputs (contact position, trail velocity, force, torque).

Run:  python examples/convex_roll.py [--vtk out/roll]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import contactlab as cl


def main(vtk=None, duration=1.0):
    steel = cl.Material(density=7800.0, young=2e11, poisson=0.3, name="steel")
    tilt = math.pi / 16
    rot = np.array([[math.cos(tilt), 0, math.sin(tilt)], [0, 1, 0], [-math.sin(tilt), 0, math.cos(tilt)]])
    # as in the spec's example, the mass and inertia of a steel rod of radius 3 mm (the hull is the
    # contact surface only); leave mass and inertia out to take them from the hull and the density
    length, rod = 0.1, 3e-3
    mass = steel.density * math.pi * rod**2 * length
    inertia = [0.5 * mass * rod**2, mass * (3 * rod**2 + length**2) / 12, mass * (3 * rod**2 + length**2) / 12]
    scene = cl.Scene()
    roll = scene.add_convex_roll(position=(0, 0, 1.2 * 0.0165), orientation=rot, hull_coefficients=[-3.6, 0, 0.0165],
                                 length=length, material=steel, mass=mass, inertia=inertia,
                                 angular_velocity=-1000.0 * rot[:, 0])
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=steel)
    model = cl.models.ConvexRollContact(contact_stiffness=1e3, contact_damping=1.0, dynamic_friction=0.9)
    sim = cl.Simulation(scene, model=model)
    if vtk:
        sim.add_reporter(cl.io.VTKReporter(vtk, interval=0.01))
    print(f"roll: mass {sim.model.mass[roll]:.4f} kg, principal moments {sim.model.principal_inertia[roll]} kg m^2, "
          f"dt = {sim.dt:.3g} s")
    for k in range(10):
        sim.run(duration=duration / 10)
        out = sim.convex_roll_output(roll)
        if len(out["Position"]):
            c = out["Position"][0]
            print(f"t = {sim.time:.2f} s: centre {np.round(sim.positions[roll], 4)}, contact {np.round(c, 4)}, "
                  f"normal force {out['normal_force'][0]:.3f} N, slip {np.linalg.norm(out['slip_velocity'][0]):.2e} m/s, "
                  f"spin {np.linalg.norm(sim.angular_velocities[roll]):.0f} rad/s")
        else:
            print(f"t = {sim.time:.2f} s: in the air, centre {np.round(sim.positions[roll], 4)}")
    sim.close()
    return sim


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vtk", default=None)
    main(parser.parse_args().vtk)
