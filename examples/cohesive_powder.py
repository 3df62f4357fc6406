"""A cohesive powder compressed and released (Luding's model, spec 001).

Soft, sticky spheres settle in a box; a piston (a wall) pushes down on them, then pulls back.
Luding's normal law makes the compression plastic (contacts load on k_n1 and unload on the stiffer
k_n2(delta_max)) and the adhesion grows with how hard a contact was pressed (the k_nc branch), so
the compacted plug does not spring back to its loose height and it clings to the piston as it
leaves: the piston force turns from pushing to pulling.  The script prints the heights, the peak
push and pull on the piston and where the energy went (viscous and plastic, per sense), and writes
ParaView files (spheres and force chains with per-contact energy) to
``contactlab-out/cohesive_powder/``.

Run:  python examples/cohesive_powder.py      (about 5 minutes on a shared 2-core machine once compiled;
the first run on a machine compiles the kernels first, about 30-50 s on a 2-core machine)
"""
from __future__ import annotations

import numpy as np

import contactlab as cl

POWDER = cl.Material(density=1500.0, young=2e6, poisson=0.3, name="powder")


def cohesive_powder(per_side=6, layers=8, radius=1e-3, squeeze=0.03, speed=0.05, output="contactlab-out/cohesive_powder",
                    progress=False):
    """Settle, compress by ``squeeze`` of the settled height, release; returns a dict of results.
    ``progress=True``: a progress bar while the powder settles and a line as each stage ends."""
    rng = np.random.default_rng(1)
    spacing = 2.2 * radius
    width = per_side * spacing
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    for iz in range(layers):
        for ix in range(per_side - iz % 2):
            for iy in range(per_side - iz % 2):
                jitter = rng.uniform(-0.08, 0.08, 3) * radius * (1, 1, 0)
                shift = 0.5 * spacing * (iz % 2)   # alternate layers offset: no straight columns
                scene.add_sphere(position=((ix + 0.5) * spacing + jitter[0] + shift,
                                           (iy + 0.5) * spacing + jitter[1] + shift,
                                           (iz + 0.5) * spacing + 1.2 * radius),
                                 radius=radius * rng.uniform(0.85, 1.0), material=POWDER)
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((width, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, width, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=POWDER)
    top = (layers + 1) * spacing + 2 * radius
    piston = scene.add_wall(point=(0, 0, top), normal=(0, 0, -1), material=POWDER)
    model = cl.models.Luding(k1_div_kn=0.3, ka_div_kn=0.5, delta_lim_rel=0.05, tan_phi=0.5, visc_n=0.02,
                             visc_t=0.005, visc_r=1e-8, visc_w=1e-8)
    sim = cl.Simulation(scene, model=model, local_damping=0.3, max_overlap=0.2)
    if output:
        sim.add_reporter(cl.io.VTKReporter(output, interval=0.01))
    sim.run(duration=0.15, progress=progress)       # settle
    settled = float((sim.positions[:, 2] + sim.model.radius).max())
    if progress:
        print(f"settled at t = {sim.time:.3f} s: {sim.n_spheres} spheres, {1e3 * settled:.2f} mm high; "
              f"the piston comes down", flush=True)
    gap = sim.wall_points[piston, 2] - settled
    sim.set_wall_velocity(piston, (0, 0, -speed))    # approach and compress
    push = []
    travel = gap + squeeze * settled
    steps = int(travel / speed / sim.dt)
    for _ in range(40):
        sim.run(steps=max(steps // 40, 1))
        push.append(float(sim.wall_forces()[piston, 2]))
    compressed = float(sim.wall_points[piston, 2])
    if progress:
        print(f"compressed at t = {sim.time:.3f} s: piston at {1e3 * compressed:.2f} mm, pushed with up to "
              f"{max(push):.4f} N; the piston withdraws", flush=True)
    sim.set_wall_velocity(piston, (0, 0, speed))     # release: the piston withdraws
    pull = []
    for _ in range(40):
        sim.run(steps=max(steps // 80, 1))
        pull.append(float(sim.wall_forces()[piston, 2]))
    sim.set_wall_velocity(piston, (0, 0, 0))
    sim.run(duration=0.05)
    sim.close()
    released = float((sim.positions[:, 2] + sim.model.radius).max())
    stuck = int(np.count_nonzero(sim.contacts()["wall"] == piston))
    # the force of the spheres on the piston: + z pushes it up, - z pulls it down (adhesion)
    return dict(sim=sim, settled=settled, compressed=compressed, released=released, stuck=stuck,
                peak_push=max(push), peak_pull=-min(pull), energy=sim.energy())


def main():
    r = cohesive_powder(progress=True)
    e = r["energy"]
    print(f"height: settled {1e3 * r['settled']:.2f} mm, piston at {1e3 * r['compressed']:.2f} mm, "
          f"after release {1e3 * r['released']:.2f} mm")
    print(f"piston: pushed with up to {r['peak_push']:.4f} N, held back by adhesion with up to "
          f"{r['peak_pull']:.4f} N; {r['stuck']} spheres still cling to it")
    terms = [k for k in e if k.startswith("dissipated_")]
    print("dissipated (J): " + ", ".join(f"{k[len('dissipated_'):]} {e[k]:.3e}" for k in terms))
    print(f"energy balance error: {e['balance_error']:.2e} J of {e['dissipated']:.3e} J dissipated")
    print("ParaView: open contactlab-out/cohesive_powder/particles.pvd and contacts.pvd")


if __name__ == "__main__":
    main()
