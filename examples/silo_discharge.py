"""A flat-bottomed silo fed by a particle stream and discharging through a circular orifice.

The silo is a cylinder wall (diameter ``silo_diameter``) on a flat bottom: a mesh wall shaped as an
annulus, whose hole of diameter ``orifice`` is the orifice.  A gate (a plane wall of its own
material) closes the orifice while an inlet fills the silo from the top; switching the gate off
(``sim.set_active(False, materials=(beads, gate))``) starts the discharge.  An outlet below the
orifice removes the spheres that fell through and records them: its record is the discharge
(``outlet.removed()``: id, time and mass of every sphere), and the inlet keeps feeding the silo at
Beverloo's rate so that the level stays up.  The mass flow rate, fitted to the outlet's record, is
compared with Beverloo's correlation for a flat-bottomed silo (Beverloo, Leniger & van de Velde,
Chem. Eng. Sci. 15 (1961) 260; Nedderman, *Statics and kinematics of granular materials*, 1992,
ch. 10):

    W = C rho_b sqrt(g) (D - k d)^(5/2),   C ~ 0.58, k ~ 1.5 (spheres)

with ``rho_b`` the bulk density measured in the silo before the discharge.  DEM discharges of
frictional spheres agree with it to about 10-30 % for ``D/d`` between 5 and 15 (e.g. Anand et
al., Chem. Eng. Sci. 63 (2008) 5821).

Run:  python examples/silo_discharge.py [--orifice 0.02] [--vtk out/silo]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import contactlab as cl

regions = cl.packing.regions


def annulus(r_in: float, r_out: float, z: float, sides: int = 48):
    """Vertices (2 sides, 3) m and triangles (2 sides, 3) of a flat ring between radii ``r_in`` and ``r_out``."""
    a = 2 * math.pi * np.arange(sides) / sides
    inner = np.column_stack([r_in * np.cos(a), r_in * np.sin(a), np.full(sides, z)])
    outer = np.column_stack([r_out * np.cos(a), r_out * np.sin(a), np.full(sides, z)])
    k = np.arange(sides)
    nxt = (k + 1) % sides
    faces = np.concatenate([np.column_stack([k, sides + k, sides + nxt]), np.column_stack([k, sides + nxt, nxt])])
    return np.vstack([inner, outer]), faces


def beverloo(rho_bulk: float, orifice: float, d: float, c: float = 0.58, k: float = 1.5) -> float:
    """Beverloo's mass flow rate (kg/s) through a circular orifice of diameter ``orifice`` (m) for
    particles of diameter ``d`` (m) at bulk density ``rho_bulk`` (kg/m^3)."""
    return c * rho_bulk * math.sqrt(9.81) * (orifice - k * d) ** 2.5


def run(*, radius=2e-3, orifice=0.02, silo_diameter=0.05, fill_height=0.05, fill_time=0.25, settle=0.1,
        discharge=0.3, young=1e7, seed=1, vtk=None, progress=False):
    """Fill, settle and discharge; returns ``(sim, measured rate, Beverloo's rate, details)`` (kg/s)."""
    beads = cl.Material(density=2500.0, young=young, poisson=0.3, name="beads")
    steel = cl.Material(density=7800.0, young=young, poisson=0.3, name="silo")
    gate = cl.Material(density=7800.0, young=young, poisson=0.3, name="gate")
    r_silo = 0.5 * silo_diameter
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), r_silo, steel)
    scene.add_mesh(annulus(0.5 * orifice, r_silo + 2 * radius, 0.0), steel, name="bottom")
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=gate)
    # one sphere resting on the gate to start with (a scene holds at least one body)
    scene.add_sphere(position=(0, 0, radius), radius=radius, material=beads)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5, rolling_friction=0.05))
    if vtk:
        sim.add_reporter(cl.io.VTKReporter(vtk, interval=0.01))
    d = 2 * radius
    # fill: the number of spheres of a bed of fill_height at a packing fraction of 0.6, over fill_time
    n_fill = 0.6 * math.pi * r_silo ** 2 * fill_height / (4 / 3 * math.pi * radius ** 3)
    feed = regions.cylinder((0, 0, fill_height + 3 * d), r_silo - 0.2 * radius, 4 * d)
    fill = sim.add_inlet(feed, beads, radius=radius, rate=n_fill / fill_time, velocity=(0, 0, -0.2), stop=fill_time,
                         every=100, seed=seed)
    sim.run(duration=fill_time + settle, progress=progress)
    # bulk density of the settled bed over its middle (exact sphere-cylinder volumes)
    probe = regions.cylinder((0, 0, 0.5 * fill_height), r_silo - d, 0.5 * fill_height)
    phi = float(cl.measure.packing_fraction(sim, probe))
    rho_b = phi * beads.density
    expected = beverloo(rho_b, orifice, d)
    # discharge: the gate opens, an outlet below takes what fell through, the inlet keeps the level
    outlet = sim.add_outlet(regions.half_space((0, 0, -1.5 * d), (0, 0, -1)), every=50)
    sim.add_inlet(feed, beads, radius=radius, mass_rate=expected, velocity=(0, 0, -0.2), every=100, seed=seed + 1)
    sim.set_active(False, materials=(beads, gate))
    t_open = sim.time
    sim.run(duration=discharge, progress=progress)
    gone = outlet.removed()
    t, m = gone["time"] - t_open, np.cumsum(gone["mass"])
    # the steady part: after the first tenth of the spheres (the flow starting), a line through the record
    steady = t > t[len(t) // 10] if len(t) > 10 else np.zeros(len(t), dtype=bool)
    rate = float(np.polyfit(t[steady], m[steady], 1)[0]) if steady.sum() > 5 else float("nan")
    sim.close()
    details = dict(packing_fraction=phi, bulk_density=rho_b, filled=fill.inserted, discharged=outlet.count,
                   times=t, masses=m)
    return sim, rate, expected, details


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orifice", type=float, default=0.02, help="orifice diameter, m (default 0.02 = 5 d)")
    parser.add_argument("--vtk", default=None)
    a = parser.parse_args()
    sim, rate, expected, info = run(orifice=a.orifice, vtk=a.vtk, progress=True)
    print(f"filled with {info['filled']} spheres, packing fraction {info['packing_fraction']:.3f} "
          f"(bulk density {info['bulk_density']:.0f} kg/m^3); {info['discharged']} discharged")
    print(f"discharge rate {rate * 1e3:.2f} g/s; Beverloo (C = 0.58, k = 1.5) {expected * 1e3:.2f} g/s; "
          f"ratio {rate / expected:.2f}")
    e = sim.energy()
    print(f"energy: {e['inflow']:.3g} J in, {e['outflow']:.3g} J out, balance error {e['balance_error']:.3g} J")


if __name__ == "__main__":
    main()
