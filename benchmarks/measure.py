"""Time the measurements of contactlab.measure on a synthetic packing of N spheres (no simulation).

A cubic lattice of N spheres (spacing 2r - delta, so every neighbour pair is a contact, about 3
contacts per sphere in the table), random velocities; a box region cutting through the packing,
the whole domain, and a coarse-graining grid of G^3 points with a Lucy kernel of cutoff 2 d.

    python benchmarks/measure.py --n 1000000 --grid 40
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from contactlab.measure import Lucy
from contactlab.measure.coarse_grain import coarse_grain_of
from contactlab.measure.contact_network import coordination_of, fabric_of
from contactlab.measure.love_weber import stress_of
from contactlab.measure.snapshot import Snapshot
from contactlab.measure.volumes import domain
from contactlab.measure.weights import particle_weights
from contactlab.packing import regions


def lattice_snapshot(n: int, r: float = 1e-3, delta: float = 1e-5) -> Snapshot:
    side = int(round(n ** (1 / 3)))
    a = 2 * r - delta
    g = np.arange(side) * a
    pos = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    idx = np.arange(len(pos)).reshape(side, side, side)
    pairs = [np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1), np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
             np.stack([idx[:, :, :-1].ravel(), idx[:, :, 1:].ravel()], 1)]
    pairs = np.concatenate(pairs)
    normal = pos[pairs[:, 1]] - pos[pairs[:, 0]]
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    mass = np.full(len(pos), 2500 * 4 / 3 * np.pi * r ** 3)
    return Snapshot(positions=pos, radii=np.full(len(pos), r), masses=mass, volumes=mass / 2500,
                    velocities=np.random.default_rng(0).normal(0, 0.01, pos.shape), round=np.ones(len(pos), bool),
                    contact_i=pairs[:, 0].astype(np.int64), contact_j=pairs[:, 1].astype(np.int64),
                    contact_point=0.5 * (pos[pairs[:, 0]] + pos[pairs[:, 1]]), contact_force=-1e-2 * normal,
                    contact_normal=normal, dimension=3, thickness=1.0, time=0.0)


def timed(label, func, repeat=3):
    func()                      # compile / warm up
    best = min(_once(func) for _ in range(repeat))
    print(f"{label:<40s} {best:8.3f} s")
    return best


def _once(func):
    t = time.perf_counter()
    func()
    return time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--grid", type=int, default=40)
    args = parser.parse_args()
    snap = lattice_snapshot(args.n)
    hi = snap.positions.max(axis=0)
    print(f"N = {snap.n_bodies}, contacts = {len(snap.contact_i)}")
    box = regions.box(0.25 * hi, 0.75 * hi + 0.3e-3)            # cuts through spheres on all six faces
    timed("volume weights (box region)", lambda: particle_weights(snap, box))
    timed("Love-Weber stress (box region)", lambda: stress_of(snap, box))
    timed("Love-Weber stress (whole domain)", lambda: stress_of(snap, domain(volume=1.0)))
    timed("coordination (box region)", lambda: coordination_of(snap, box))
    timed("fabric (box region)", lambda: fabric_of(snap, box))
    timed(f"coarse graining, {args.grid}^3 grid, Lucy c = 2d",
          lambda: coarse_grain_of(snap, np.zeros(3), hi, (args.grid,) * 3, Lucy(cutoff=4e-3)), repeat=1)


if __name__ == "__main__":
    main()
