"""Spec 000 (the sphere-sphere contact connector) in two small experiments.

1. A steel ball bouncing between two fixed steel balls, once per impact model (0: adhesive
   elasto-plastic, 1: Hunt-Crossley, 2: Gonthier / Carvalho-Martins): the rebound speed after each
   impact.  Model 2 loses the requested fraction (e = 0.7) at every impact; Hunt-Crossley loses
   less (its restitution formula holds for e near 1); model 0 with lambda_P = 0.5 loses energy
   plastically.
2. Newton's cradle as a horizontal row of five balls, 10 micrometres apart: the first ball hits the
   row and the last one leaves with (nearly) its speed.

Run:  python examples/sphere_sphere_contact.py      (a few seconds once compiled; the first run on a
machine compiles the kernels first, about 30-50 s on a 2-core machine)
"""
from __future__ import annotations

import numpy as np

import contactlab as cl

STEEL = cl.Material(density=7800.0, young=2e11, poisson=0.3, name="steel")
R = 0.01          # m
K = 1e7           # N/m, contact stiffness k_c (exponent 1)


def bouncing(model, speed=0.5, impacts=6):
    """Rebound speeds (m/s) of a ball between two fixed balls 2 mm of free flight apart."""
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    left = scene.add_sphere(position=(-0.021, 0.0, 0.0), radius=R, material=STEEL, fixed=True)
    ball = scene.add_sphere(position=(0.0, 0.0, 0.0), radius=R, material=STEEL, velocity=(speed, 0.0, 0.0))
    right = scene.add_sphere(position=(0.021, 0.0, 0.0), radius=R, material=STEEL, fixed=True)
    sim = cl.Simulation(scene, model=model, dt=1e-6)
    rec = sim.record("velocity", sphere=ball, every=5)
    while True:
        sim.run(duration=0.01)
        vx = rec["velocity.x"]
        flips = np.flatnonzero(np.sign(vx[1:]) != np.sign(vx[:-1]))
        if len(flips) >= impacts or abs(vx[-1]) < 1e-3:
            break
    # the velocity turns in the middle of each impact; between two turns the speed is largest in
    # free flight, i.e. it is the rebound speed of the impact
    bounds = list(flips[:impacts]) + [len(vx) - 1]
    _ = (left, right)
    return [float(np.abs(vx[a + 1: b + 1]).max()) for a, b in zip(bounds[:-1], bounds[1:])]


def newtons_cradle(n=5, speed=0.5, gap=1e-5):
    """Final velocities (m/s) of a row of n balls after the first one hits the others."""
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    for k in range(n):
        v = (speed, 0.0, 0.0) if k == 0 else (0.0, 0.0, 0.0)
        scene.add_sphere(position=(k * (2 * R + gap), 0.0, 0.0), radius=R, material=STEEL, velocity=v)
    model = cl.models.SphereSphereContact(contact_stiffness=1e9, contact_stiffness_exponent=1.5, impact_model=2,
                                          restitution_coefficient=1.0)
    sim = cl.Simulation(scene, model=model, dt=1e-7)
    sim.run(duration=1e-3)
    return sim.velocities[:, 0]


def main():
    models = {
        "0 adhesive elasto-plastic (lambda_P = 0.5)": cl.models.SphereSphereContact(
            contact_stiffness=K, impact_model=0, contact_plasticity_ratio=0.5),
        "1 Hunt-Crossley (e = 0.7)": cl.models.SphereSphereContact(
            contact_stiffness=K, impact_model=1, restitution_coefficient=0.7),
        "2 Gonthier/Carvalho-Martins (e = 0.7)": cl.models.SphereSphereContact(
            contact_stiffness=K, impact_model=2, restitution_coefficient=0.7),
    }
    print("rebound speed after each impact (m/s), launched at 0.5 m/s:")
    results = {}
    for name, model in models.items():
        speeds = bouncing(model)
        results[name] = speeds
        print(f"  model {name}: " + ", ".join(f"{s:.4f}" for s in speeds))
    v = newtons_cradle()
    print("Newton's cradle, final velocities (m/s): " + ", ".join(f"{x:+.4f}" for x in v))
    return results, v


if __name__ == "__main__":
    main()
