"""The "settle" benchmark scene, shared by the contactlab and the LAMMPS runs.

N glass beads (r = 1 mm, 2500 kg/m^3, E = 1e7 Pa, nu = 0.3) on a loose cubic lattice (spacing
2.2 mm, positions jittered, fixed seed) inside a square box of walls (floor z = 0, side walls at
x = 0, x = L, y = 0, y = L), falling under gravity (-9.81 m/s^2 along z) and settling.  Contact
model: Hertz-Mindlin, restitution 0.5, friction 0.5.
"""
from __future__ import annotations

import math
import platform
from pathlib import Path

import numpy as np

RADIUS = 1e-3          # m
DENSITY = 2500.0       # kg/m^3
YOUNG = 1e7            # Pa
POISSON = 0.3
RESTITUTION = 0.5
FRICTION = 0.5
SPACING = 2.2e-3       # m
JITTER = 0.4
GRAVITY = (0.0, 0.0, -9.81)


def layout(n: int, seed: int = 1) -> dict:
    """Positions (n, 3), radii (n,), box side ``L`` and lattice height for ``n`` spheres."""
    from contactlab.scene.fill import lattice_in_box

    n_side = int(math.ceil(n ** (1.0 / 3.0)))
    layers = int(math.ceil(n / n_side**2))
    side = n_side * SPACING
    height = layers * SPACING
    pos, radii = lattice_in_box((0.0, 0.0, 0.0), (side, side, height), RADIUS, spacing=SPACING, jitter=JITTER,
                                seed=seed, max_count=n)
    return dict(positions=pos, radii=radii, side=side, height=height)


def walls(side: float):
    """(point, normal) of the five walls."""
    return [((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
            ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)), ((side, 0.0, 0.0), (-1.0, 0.0, 0.0)),
            ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((0.0, side, 0.0), (0.0, -1.0, 0.0))]


def build_scene(n: int, seed: int = 1):
    """The contactlab Scene and model of the benchmark."""
    import contactlab as cl

    glass = cl.Material(density=DENSITY, young=YOUNG, poisson=POISSON, name="glass")
    lay = layout(n, seed)
    scene = cl.Scene(gravity=GRAVITY)
    scene.add_spheres(lay["positions"], lay["radii"], glass)
    for point, normal in walls(lay["side"]):
        scene.add_wall(point=point, normal=normal, material=glass)
    model = cl.models.HertzMindlin(restitution=RESTITUTION, friction=FRICTION)
    return scene, model, lay


_ = np


def cpu_name() -> str:
    """The processor's model name (for benchmark records)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
