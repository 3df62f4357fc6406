"""Prescribed single-impact experiments: measure what a contact model does in one collision.

These drivers build a two-body scene (two spheres, or a sphere and a wall) without gravity, run it
through the normal engine and record the gap, overlap and contact force at every step.  They are
used by the validation tests and by anyone who wants to check a model by hand.
"""
from __future__ import annotations


import numpy as np

from ..materials import Material
from ..scene import Scene
from ..simulation import Simulation

__all__ = ["normal_impact", "oblique_wall_impact"]


def _crossing(t0, g0, t1, g1):
    """Time at which the gap crosses zero between two samples (linear interpolation)."""
    return t0 + (t1 - t0) * g0 / (g0 - g1)


def normal_impact(model, material: Material, radius: float, speed: float, *, wall: bool = False,
                  dt: float | None = None, steps_per_contact: int = 2000, wall_material: Material | None = None):
    """Head-on impact at relative speed ``speed`` (m/s); returns the measured quantities.

    Two equal spheres (``wall=False``) approach each other at ``speed/2`` each, or one sphere hits a
    wall at ``speed``.  ``dt`` defaults to ``contact duration / steps_per_contact`` estimated from a
    short first run.  Returns a dict: ``restitution`` (relative normal speed after / before),
    ``max_overlap`` (m), ``max_force`` (N, normal), ``duration`` (s, between the zero crossings of
    the gap, interpolated), ``dt`` (s), ``simulation`` (the finished Simulation).
    """
    gap0 = 1e-4 * radius

    def build():
        scene = Scene(gravity=(0.0, 0.0, 0.0))
        if wall:
            scene.add_sphere(position=(0.0, 0.0, radius + gap0), radius=radius, material=material,
                             velocity=(0.0, 0.0, -speed))
            scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=wall_material or material)
        else:
            scene.add_sphere(position=(0.0, 0.0, 0.0), radius=radius, material=material,
                             velocity=(0.0, 0.0, 0.5 * speed))
            scene.add_sphere(position=(0.0, 0.0, 2.0 * radius + gap0), radius=radius, material=material,
                             velocity=(0.0, 0.0, -0.5 * speed))
        return scene

    sim = Simulation(build(), model)
    if dt is None:
        # estimate the duration from a coarse run, then refine
        coarse = _record(sim, speed, radius, wall, gap0, max_steps=200000)
        dt = max(coarse["duration"], 10 * sim.dt) / steps_per_contact
        dt = min(dt, sim.dt)
        sim = Simulation(build(), model, dt=dt)
    else:
        sim.dt = dt
    out = _record(sim, speed, radius, wall, gap0, max_steps=50 * steps_per_contact + 100000)
    out["dt"] = sim.dt
    out["simulation"] = sim
    return out


def _record(sim, speed, radius, wall, gap0, max_steps):
    def gap_and_speed():
        x, v = sim.state.positions, sim.state.velocities
        if wall:
            return x[0, 2] - radius, -v[0, 2]
        return x[1, 2] - x[0, 2] - 2.0 * radius, v[0, 2] - v[1, 2]

    times, gaps, forces = [], [], []
    g, _ = gap_and_speed()
    times.append(sim.time)
    gaps.append(g)
    forces.append(0.0)
    started = False
    n = 0
    while n < max_steps:
        sim.run(steps=1)
        n += 1
        g, approach = gap_and_speed()
        times.append(sim.time)
        gaps.append(g)
        f = sim.state.forces[0, 2] if wall else -sim.state.forces[0, 2]
        forces.append(f)
        if g < 0:
            started = True
        if started and g > 0 and approach < 0:
            break
    times, gaps, forces = map(np.asarray, (times, gaps, forces))
    inside = np.flatnonzero(gaps < 0)
    if len(inside) == 0:
        raise RuntimeError("no contact happened")
    a, b = inside[0], inside[-1]
    t_in = _crossing(times[a - 1], gaps[a - 1], times[a], gaps[a])
    t_out = _crossing(times[b], gaps[b], times[b + 1], gaps[b + 1])
    _, approach = gap_and_speed()
    return {"restitution": -approach / speed, "max_overlap": float(-gaps.min()),
            "max_force": float(forces.max()), "duration": float(t_out - t_in)}


def oblique_wall_impact(model, material: Material, radius: float, normal_speed: float, tangential_speed: float,
                        spin: float = 0.0, *, dt: float | None = None, wall_material: Material | None = None):
    """A sphere hits the plane z = 0 with velocity ``(tangential_speed, 0, -normal_speed)`` (m/s) and
    spin ``(0, spin, 0)`` (rad/s); returns its velocity and spin after the impact.

    Returns a dict: ``velocity`` (3,), ``angular_velocity`` (3,), ``restitution`` (normal),
    ``simulation``.
    """
    scene = Scene(gravity=(0.0, 0.0, 0.0))
    scene.add_sphere(position=(0.0, 0.0, radius * (1 + 1e-4)), radius=radius, material=material,
                     velocity=(tangential_speed, 0.0, -normal_speed), angular_velocity=(0.0, spin, 0.0))
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=wall_material or material)
    sim = Simulation(scene, model, dt=dt)
    limit = 100.0 * radius / normal_speed
    while not (sim.state.velocities[0, 2] > 0.0 and sim.n_contacts() == 0):
        sim.run(steps=50)
        if sim.time > limit:
            raise RuntimeError("the impact did not end within 100 radii of travel")
    return {"velocity": sim.velocities[0], "angular_velocity": sim.angular_velocities[0],
            "restitution": sim.velocities[0, 2] / normal_speed, "simulation": sim}
