"""A drained triaxial test on a polydisperse frictional packing, to compare with the DEM literature.

The sample: ``n`` spheres (default 4000) of diameters uniform by number in [1.6, 2.4] mm, quartz
density, Hertz-Mindlin contacts (E = 0.5 GPa, softened quartz, nu = 0.3, restitution 0.3) in a box of
six frictionless plane walls, no gravity.

1. **Isotropic compression** (stress control): random sequential addition at a packing fraction
   of 0.3, then all six walls servo-controlled to the confining pressure ``p`` = 100 kPa (each
   wall's area from the gaps of the four around it) with the friction ``mu_prep`` between the
   spheres (0 by default: the densest state a frictionless packing reaches, the usual way to make a
   dense sample; a larger value makes a looser one), until the walls are at ``p`` and at rest.
2. The friction becomes ``mu`` = 0.5 (:meth:`contactlab.Simulation.set_model`, contacts and their
   history kept) and the packing is brought to rest at ``p`` again.
3. **Axial loading** (strain control): the bottom wall stops, the top wall moves down at a
   constant axial strain rate, the four lateral walls stay servo-controlled at ``p``.  The rate is
   chosen from the inertial number ``I = rate d sqrt(rho / p)`` (default 5e-4: quasi-static).

Every ``--every`` of axial strain it records the axial and lateral stresses twice: from the walls
(normal force over the current area) and from the Love-Weber stress of the whole sample
(``cl.measure.stress`` over the volume between the walls, the wall contacts included), the
mobilised friction angle ``sin phi = (s1 - s3) / (s1 + s3)``, the volumetric strain and the
coordination number.  At the end: the peak friction angle, the critical-state one (the mean over
the last quarter of the strain), the maximum dilatancy angle
``sin psi = d eps_v / (d eps_v - 2 d eps_1)`` (compression positive; Schanz & Vermeer 1996),
written to ``<out>/triaxial.csv`` and drawn in ``<out>/triaxial.png``.  docs/triaxial.md compares
them with published DEM values.

Run:  python examples/triaxial.py [--n 4000] [--strain 0.15] [--mu-prep 0.0] [--inertial 5e-4]
      [--out triaxial-out] [--threads 2]
(4000 spheres to 15 % axial strain: about half an hour on two busy cores; --n 500 --strain 0.1: minutes)
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import contactlab as cl
from contactlab.packing import regions

#: walls in the order they are added: -x, +x, -y, +y, bottom, top
X0, X1, Y0, Y1, BOTTOM, TOP = range(6)
PAIRS = ((X0, X1), (Y0, Y1), (BOTTOM, TOP))
LATERAL = (X0, X1, Y0, Y1)

#: the columns of the recorded table (one row per sample)
COLUMNS = ("axial_strain", "volumetric_strain", "sigma1_wall", "sigma3_wall", "sigma1_lw", "sigma3_lw",
           "sin_phi_wall", "sin_phi_lw", "bottom_over_top", "coordination", "packing_fraction")


def area_pairs(wall: int):
    """The two pairs of opposite walls whose gaps give the area of ``wall``."""
    return [p for p in PAIRS if wall not in p]


def build(n=4000, *, d_min=1.6e-3, d_max=2.4e-3, density=2650.0, young=5e8, poisson=0.3, restitution=0.3,
          mu_prep=0.0, packing_fraction=0.3, local_damping=0.0, seed=1, threads=None):
    """The loose sample in its box of six frictionless walls (friction ``mu_prep`` between spheres).

    ``local_damping`` (Cundall's) is 0 by default: it acts against each sphere's absolute velocity,
    so under axial loading, where the spheres move steadily with the deformation, it is a drag on
    the sample (measured with 150 spheres at I = 5e-4: with 0.2 the bottom wall carried 5 % less
    than the top one and the axial force was 30 % lower at 2 % strain; with 0 they agree to
    0.1 %).  The contacts' dashpots (restitution 0.3) dissipate."""
    grain = cl.Material(density=density, young=young, poisson=poisson, name="grain")
    platen = cl.Material(density=density, young=young, poisson=poisson, name="platen")
    sizes = cl.distributions.Uniform(d_min, d_max)                 # diameters, by number
    mean_d3 = (d_max**4 - d_min**4) / (4.0 * (d_max - d_min))     # E[d^3] of the uniform distribution
    side = (n * math.pi / 6.0 * mean_d3 / packing_fraction) ** (1.0 / 3.0)
    scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
    scene.fill(regions.box((0.0, 0.0, 0.0), (side, side, side)), sizes, grain, count=n, seed=seed)
    for axis in range(3):
        normal = np.zeros(3)
        normal[axis] = 1.0
        scene.add_wall(point=np.zeros(3), normal=normal, material=platen)
        scene.add_wall(point=side * normal, normal=-normal, material=platen)
    model = law(mu_prep, restitution)
    return cl.Simulation(scene, model, local_damping=local_damping, threads=threads)


def law(friction: float, restitution: float = 0.3):
    """Hertz-Mindlin with ``friction`` between the spheres and none with the walls (platens)."""
    return cl.models.HertzMindlin(restitution=restitution, friction=friction,
                                  per_material={"platen": {"friction": 0.0}})


def box_size(sim) -> np.ndarray:
    """(3,) the gaps between opposite walls, m."""
    p = sim.wall_points
    return np.array([p[X1, 0] - p[X0, 0], p[Y1, 1] - p[Y0, 1], p[TOP, 2] - p[BOTTOM, 2]])


def settle(sim, pressure, *, max_speed=0.2, tolerance=0.005, kinetic=1e-5, max_time=1.0, check_every=0.002,
           progress=None):
    """Servo-control all six walls to ``pressure`` (Pa) and run until every wall is within
    ``tolerance`` of it and the kinetic energy is below ``kinetic`` times the elastic energy;
    returns the simulated time it took (s).  ``progress(time, stresses, kinetic / elastic)`` is
    called at every check."""
    for w in range(6):
        sim.servo_wall(w, target_stress=pressure, area_from=area_pairs(w), max_speed=max_speed)
    start = sim.time
    while sim.time - start < max_time:
        sim.run(duration=check_every)
        stress = sim.servo_status()["stress"]
        e = sim.energy()
        if progress:
            progress(sim.time, stress, e["kinetic"] / max(e["elastic"], 1e-300))
        if np.all(np.abs(stress / pressure - 1.0) < tolerance) and e["kinetic"] < kinetic * e["elastic"]:
            return sim.time - start
    raise RuntimeError(f"no isotropic equilibrium at {pressure} Pa within {max_time} s: wall stresses {stress} Pa")


def sample_state(sim) -> dict:
    """The stresses (Pa, compression positive) from the walls and from the Love-Weber stress of the
    whole sample, and the coordination number, now."""
    size = box_size(sim)
    volume = float(np.prod(size))
    top = sim.wall_stress(TOP, area_from=area_pairs(TOP))
    bottom = sim.wall_stress(BOTTOM, area_from=area_pairs(BOTTOM))
    lateral = np.mean([sim.wall_stress(w, area_from=area_pairs(w)) for w in LATERAL])
    sigma = cl.measure.stress(sim, cl.measure.domain(volume=volume))
    z = cl.measure.coordination(sim)
    solid = float(np.sum(4.0 / 3.0 * np.pi * sim.model.radius**3))
    return {"size": size, "volume": volume, "sigma1_wall": 0.5 * (top + bottom), "sigma3_wall": float(lateral),
            "sigma1_lw": float(sigma[2, 2]), "sigma3_lw": 0.5 * float(sigma[0, 0] + sigma[1, 1]),
            "bottom_over_top": bottom / top, "lw_tensor": sigma, "coordination": float(z["coordination"]),
            "packing_fraction": solid / volume}


def strain_rate(sim, pressure, inertial):
    """The axial strain rate (1/s) of inertial number ``inertial``: ``I = rate d sqrt(rho / p)``
    with ``d`` the mean diameter and ``rho`` the grains' density (GDR MiDi 2004; da Cruz et al. 2005)."""
    d = 2.0 * float(np.mean(sim.model.radius))
    rho = float(sim.model.mass[0] / (4.0 / 3.0 * np.pi * sim.model.radius[0] ** 3))
    return inertial / (d * math.sqrt(rho / pressure))


def axial_loading(sim, pressure, *, strain=0.3, rate=1.0, every=0.005, corrections=4, progress=None):
    """Strain control: the top wall moves down at ``rate`` (1/s) times the initial height, the
    bottom one stops, the lateral ones stay at ``pressure``.  Returns (K, len(COLUMNS)) rows.

    The servo is proportional: while a lateral wall moves at a steady speed ``v`` its stress lags
    the target by ``v / G`` (docs/walls.md), several per cent here as the sample dilates.  So
    ``corrections`` times per sample each lateral wall's target is raised by the lag it had then
    (an integral term outside the compiled step, at the pace of the deformation: the lag changes
    slowly); without it (``corrections=0``) the lateral stress of 300 spheres at I = 1e-3 drifted
    to 111 kPa for 100 kPa by 5 % axial strain."""
    s0 = sample_state(sim)
    size0, volume0 = s0["size"], s0["volume"]
    bias = np.zeros(len(LATERAL))
    for w in LATERAL:
        sim.servo_wall(w, target_stress=pressure, area_from=area_pairs(w), max_speed=0.05)
    sim.set_wall_velocity(BOTTOM, (0.0, 0.0, 0.0))
    sim.set_wall_velocity(TOP, (0.0, 0.0, -rate * size0[2]))
    rows = [_row(0.0, s0, volume0)]
    if progress:
        progress(rows[0])
    samples = int(round(strain / every))
    chunks = max(corrections, 1)
    for k in range(samples):
        for _ in range(chunks):
            sim.run(duration=every / rate / chunks)
            if corrections:
                for q, w in enumerate(LATERAL):
                    bias[q] += pressure - sim.wall_stress(w, area_from=area_pairs(w))
                    sim.servo_wall(w, target_stress=pressure + bias[q], area_from=area_pairs(w), max_speed=0.05)
        s = sample_state(sim)
        rows.append(_row(1.0 - s["size"][2] / size0[2], s, volume0))
        if progress:
            progress(rows[-1])
    return np.array(rows)


def _row(axial, s, volume0):
    def sin_phi(a, b):
        return (a - b) / (a + b)
    return (axial, 1.0 - s["volume"] / volume0, s["sigma1_wall"], s["sigma3_wall"], s["sigma1_lw"], s["sigma3_lw"],
            sin_phi(s["sigma1_wall"], s["sigma3_wall"]), sin_phi(s["sigma1_lw"], s["sigma3_lw"]),
            s["bottom_over_top"], s["coordination"], s["packing_fraction"])


def summary(rows, *, critical_from=0.75) -> dict:
    """Peak and critical-state friction angles (degrees, from the walls and from Love-Weber), the
    strain at the peak, the largest dilatancy angle (degrees) and the volumetric strain at the end.

    The critical state is the mean over axial strains beyond ``critical_from`` of the largest;
    the dilatancy angle comes from the slope of eps_v against eps_1 over a window of 5 samples
    (a straight-line fit), ``sin psi = d eps_v / (d eps_v - 2 d eps_1)``, compression positive."""
    col = {c: rows[:, i] for i, c in enumerate(COLUMNS)}
    eps, vol = col["axial_strain"], col["volumetric_strain"]
    late = eps >= critical_from * eps[-1]
    out = {}
    for src in ("wall", "lw"):
        s = col[f"sin_phi_{src}"]
        out[f"phi_peak_{src}"] = math.degrees(math.asin(s.max()))
        out[f"phi_critical_{src}"] = math.degrees(math.asin(s[late].mean()))
        out[f"phi_critical_spread_{src}"] = math.degrees(math.asin(s[late].max())) - math.degrees(
            math.asin(s[late].min()))
    out["strain_at_peak"] = float(eps[np.argmax(col["sin_phi_wall"])])
    w = 5
    slopes = np.array([np.polyfit(eps[k:k + w], vol[k:k + w], 1)[0] for k in range(len(eps) - w + 1)])
    sin_psi = slopes / (slopes - 2.0)
    out["psi_max"] = math.degrees(math.asin(sin_psi.max()))
    out["strain_at_psi_max"] = float(eps[np.argmax(sin_psi) + w // 2])
    out["final_volumetric_strain"] = float(vol[-1])
    out["final_dilatancy_rate"] = float(slopes[-1])
    return out


def plot(rows, path, title=""):
    """sin phi (walls and Love-Weber) and the volumetric strain against the axial strain."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    col = {c: rows[:, i] for i, c in enumerate(COLUMNS)}
    eps = 100 * col["axial_strain"]
    fig, (a, b) = plt.subplots(2, 1, figsize=(6.4, 7.0), sharex=True)
    a.plot(eps, np.degrees(np.arcsin(col["sin_phi_wall"])), label="walls (force / area)")
    a.plot(eps, np.degrees(np.arcsin(col["sin_phi_lw"])), "--", label="Love-Weber, whole sample")
    a.set_ylabel("mobilised friction angle (deg)")
    a.grid(alpha=0.3)
    a.legend()
    a.set_title(title)
    b.plot(eps, 100 * col["volumetric_strain"])
    b.set_xlabel("axial strain (%)")
    b.set_ylabel("volumetric strain (%, compression > 0)")
    b.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000, help="spheres (default 4000)")
    ap.add_argument("--pressure", type=float, default=1e5, help="confining pressure, Pa (default 1e5)")
    ap.add_argument("--mu", type=float, default=0.5, help="friction between the spheres while shearing")
    ap.add_argument("--mu-prep", type=float, default=0.0, help="friction during the isotropic compression "
                                                                "(0: dense sample; larger: looser)")
    ap.add_argument("--strain", type=float, default=0.15, help="final axial strain (default 0.15)")
    ap.add_argument("--every", type=float, default=0.005, help="axial strain between samples (default 0.005)")
    ap.add_argument("--inertial", type=float, default=5e-4, help="inertial number of the axial loading")
    ap.add_argument("--young", type=float, default=5e8, help="Young's modulus of the spheres, Pa (default 5e8)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default="triaxial-out", help="directory for triaxial.csv and triaxial.png")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    sim = build(a.n, mu_prep=a.mu_prep, young=a.young, seed=a.seed, threads=a.threads)
    print(f"{sim.n_spheres} spheres, dt = {sim.dt:.3g} s", flush=True)
    last = [time.perf_counter()]

    def report(t, stress, ratio):          # a line at most every 5 s of wall time while settling
        if time.perf_counter() - last[0] >= 5.0:
            last[0] = time.perf_counter()
            print(f"  t = {t:.3f} s: wall stresses {np.round(stress / 1e3, 2)} kPa, kinetic / elastic {ratio:.2e}",
                  flush=True)

    # a frictionless packing keeps rearranging near jamming: a looser rest criterion here, the strict
    # one after the friction is switched on (which arrests it)
    took = settle(sim, a.pressure, tolerance=0.01, kinetic=1e-4, progress=report)
    s = sample_state(sim)
    print(f"compressed with mu = {a.mu_prep} in {took:.3f} s simulated: packing fraction {s['packing_fraction']:.4f}, "
          f"Z = {s['coordination']:.2f} ({time.perf_counter() - t0:.0f} s)", flush=True)
    sim.set_model(law(a.mu))
    took = settle(sim, a.pressure, progress=report)
    s = sample_state(sim)
    print(f"at rest with mu = {a.mu} after {took:.3f} s: walls {s['sigma1_wall']:.1f} / {s['sigma3_wall']:.1f} Pa, "
          f"Love-Weber {np.round(np.diag(s['lw_tensor']), 1)} Pa, packing fraction {s['packing_fraction']:.4f}, "
          f"Z = {s['coordination']:.2f} ({time.perf_counter() - t0:.0f} s)", flush=True)
    rate = strain_rate(sim, a.pressure, a.inertial)
    print(f"axial strain rate {rate:.4g} 1/s (I = {a.inertial:g}); {a.strain / rate / sim.dt:.0f} steps", flush=True)

    def progress(r):
        print(f"  eps_a {r[0]:.3f}  eps_v {r[1]:+.4f}  phi walls {math.degrees(math.asin(r[6])):5.2f}  "
              f"LW {math.degrees(math.asin(r[7])):5.2f}  s3 {r[3] / 1e3:6.2f} kPa  Z {r[9]:.2f}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)

    csv = open(out / "triaxial.csv", "w", encoding="utf-8")
    csv.write(",".join(COLUMNS) + "\n")

    def progress_and_save(r):
        csv.write(",".join(f"{x:.9g}" for x in r) + "\n")
        csv.flush()
        progress(r)

    rows = axial_loading(sim, a.pressure, strain=a.strain, rate=rate, every=a.every, progress=progress_and_save)
    csv.close()
    result = summary(rows)
    for k, v in result.items():
        print(f"{k} = {v:.4g}")
    plot(rows, out / "triaxial.png", title=f"{sim.n_spheres} spheres, mu = {a.mu} (prepared with {a.mu_prep}), "
                                            f"p = {a.pressure / 1e3:g} kPa, I = {a.inertial:g}")
    print(f"{out / 'triaxial.csv'}, {out / 'triaxial.png'} ({time.perf_counter() - t0:.0f} s)")
    return rows, result


if __name__ == "__main__":
    main()
