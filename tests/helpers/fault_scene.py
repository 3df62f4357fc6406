"""The scene of the fault tests (tests/test_faults.py), and the run a killed child process makes.

Run as a script, ``python fault_scene.py OUT STEPS`` runs the scene to ``STEPS`` steps writing a
checkpoint every 20 steps (the newest 3 kept), VTK frames and energy rows every 10, into OUT; if OUT
holds checkpoints it resumes from the newest (as a user restarts a killed job).  It prints
``running <step>`` when it starts stepping, so that the parent can kill it mid-run.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import contactlab as cl

GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
DT = 2e-5
CHECKPOINT_EVERY, OUTPUT_EVERY, KEEP = 20, 10, 3


def build() -> cl.Simulation:
    """30 beads dropped into a box with some spin: contacts form and break throughout."""
    rng = np.random.default_rng(7)
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    grid = np.stack(np.meshgrid(np.arange(3), np.arange(2), np.arange(5), indexing="ij"), axis=-1).reshape(-1, 3)
    pos = 1.5e-3 + 2.3e-3 * grid + rng.uniform(-1e-4, 1e-4, size=grid.shape)
    scene.add_spheres(positions=pos, radii=1e-3, material=GLASS, velocities=rng.normal(0.0, 0.05, size=pos.shape),
                      angular_velocities=rng.normal(0.0, 20.0, size=pos.shape))
    for point, normal in (((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((7.6e-3, 0, 0), (-1, 0, 0)),
                          ((0, 0, 0), (0, 1, 0)), ((0, 5.3e-3, 0), (0, -1, 0))):
        scene.add_wall(point=point, normal=normal, material=GLASS)
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.4), dt=DT)


def checkpoints(out: Path) -> list[Path]:
    """The checkpoint files in ``out``, oldest first (by step)."""
    return sorted(out.glob("ckpt_*.npz"))


def main(out: Path, steps: int) -> None:
    saved = checkpoints(out)
    if saved:
        sim = cl.Simulation.load_checkpoint(saved[-1])
    else:
        sim = build()
    resume = bool(saved)
    sim.add_reporter(cl.io.CheckpointReporter(out / "ckpt.npz", every=CHECKPOINT_EVERY, keep=KEEP))
    sim.add_reporter(cl.io.VTKReporter(out / "vtk", every=OUTPUT_EVERY, resume=resume))
    sim.add_reporter(cl.io.EnergyCSVReporter(out / "energy.csv", every=OUTPUT_EVERY, resume=resume))
    print(f"running {sim.step}", flush=True)
    sim.run(steps=max(steps - sim.step, 0))
    sim.close()
    print(f"finished {sim.step}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
