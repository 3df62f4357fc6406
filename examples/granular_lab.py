"""The granular laboratory: fill a box from a log-normal size distribution, let it settle, measure.

1. ``scene.fill`` puts glass beads of log-normal diameters (median 2 mm) into a box at a packing
   fraction of 0.3 by random sequential addition (no overlaps, reproducible with the seed);
2. they settle under gravity in the box (five walls), while a sensor records the pressure,
   packing fraction and coordination number of a region in the lower part of the bed;
3. at rest: the Love-Weber stress, packing fraction, coordination numbers and fabric tensor of
   that region are printed and written to ``lab-out/measurements.txt``, and the coarse-grained
   density, velocity and stress fields of the whole box to ``lab-out/cg.vti`` (open it in
   ParaView; ``lab-out/sensor.csv`` holds the records).

Run:  python examples/granular_lab.py          (about 900 beads, 62 000 steps: ~30 s on one core
                                                once the kernels are compiled)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import contactlab as cl
from contactlab.packing import regions


def granular_lab(width=0.02, height=0.04, median=2e-3, duration=0.3, output="lab-out", seed=1, threads=None,
                 progress=False):
    """Fill, settle and measure (sizes in m, duration in s); returns the measurements as a dict.
    ``progress=True``: contactlab's progress bar on stderr while the beads settle."""
    out = Path(output)
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    sizes = cl.distributions.LogNormal(median=median, sigma=0.25)      # diameters, by number
    container = regions.box((0, 0, 0), (width, width, height))
    scene.fill(container, sizes, glass, packing_fraction=0.3, seed=seed)
    for point, normal in [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((width, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, width, 0), (0, -1, 0))]:
        scene.add_wall(point=point, normal=normal, material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.3, friction=0.5), threads=threads)

    # the probe: two diameters away from the side walls and the floor, up to a third of the fill height
    margin = 2 * median
    probe = regions.box((margin, margin, margin), (width - margin, width - margin, height / 3))
    rec = sim.record("pressure", "packing_fraction", "coordination", region=probe, interval=duration / 40,
                     csv=out / "sensor.csv")
    sim.run(duration=duration, progress=progress)
    sim.close()

    sigma = cl.measure.stress(sim, probe)                              # Pa, compression positive
    # force balance: a slab across the whole box, 2 diameters thick, transmits (sigma_zz times its
    # area) the weight of the beads above its middle minus what the side walls hold up above it
    mid = height / 6
    slab = regions.box((0, 0, mid - median), (width, width, mid + median))
    c = sim.contacts()
    side = (c["wall"] >= 1) & (c["contact_point"][:, 2] > mid)
    held = float(np.sum(sim.model.mass[sim.positions[:, 2] > mid])) * 9.81 - float(c["force"][side, 2].sum())
    z = cl.measure.coordination(sim, probe)
    top = float(np.max(sim.positions[:, 2] + sim.model.radius))
    phi_bed = cl.measure.packing_fraction(sim, regions.box((0, 0, 0), (width, width, top)))
    result = {
        "beads": sim.n_spheres,
        "bed_height": top,
        "kinetic_energy": sim.energy()["kinetic"],
        "stress": sigma,
        "pressure": cl.measure.mean_stress(sigma),
        "packing_fraction": cl.measure.packing_fraction(sim, probe),
        "bed_packing_fraction": phi_bed,
        "coordination": z["coordination"],
        "mechanical_coordination": z["mechanical"],
        "rattler_fraction": z["rattler_fraction"],
        "fabric": cl.measure.fabric(sim, probe),
        "slab_force": cl.measure.stress(sim, slab)[2, 2] * width ** 2,
        "weight_held_above": held,
        "recorded_pressure": rec["pressure"],
    }
    cg = cl.measure.coarse_grain(sim, (0, 0, 0), (width, width, top), (16, 16, max(2, int(16 * top / width))),
                                 cl.measure.Lucy(cutoff=2 * median))
    cg.write_vti(out / "cg.vti")
    with open(out / "measurements.txt", "w", encoding="utf-8") as f:
        for key, value in result.items():
            if key != "recorded_pressure":
                f.write(f"{key} = {np.array2string(np.asarray(value), precision=4)}\n")
    result["cg"] = cg
    return result


if __name__ == "__main__":
    r = granular_lab(progress=True)
    print(f"{r['beads']} beads, bed {1000 * r['bed_height']:.1f} mm high, kinetic energy {r['kinetic_energy']:.2e} J")
    print(f"probe: packing fraction {r['packing_fraction']:.3f} (bed {r['bed_packing_fraction']:.3f}), "
          f"Z = {r['coordination']:.2f}, Z_m = {r['mechanical_coordination']:.2f} "
          f"({100 * r['rattler_fraction']:.0f} % rattlers)")
    print("stress (Pa, compression positive):\n", np.array2string(r["stress"], precision=2))
    print(f"slab across the box at a sixth of the fill height: sigma_zz A = {1000 * r['slab_force']:.2f} mN; weight "
          f"above it less the side walls' friction {1000 * r['weight_held_above']:.2f} mN")
    print("fabric:\n", np.array2string(r["fabric"], precision=3))
    print("files: lab-out/measurements.txt, lab-out/cg.vti, lab-out/sensor.csv")
