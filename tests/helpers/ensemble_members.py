"""Members for the ensemble tests: module-level functions, so that worker processes import them.

``impact``: a sphere hits a wall head-on without gravity (the closed form: it leaves at ``e``
times its approach speed, the restitution the Hertz-Mindlin damping is solved for, see
``contactlab.laws.restitution``).  ``drop``: the same with gravity; ``rebound_height`` reads the
height of the sphere's flight after the bounce from its energy (``h = z - R + v_z^2 / 2g``, exact
in free flight), and the closed form is ``h1 = e^2 h0``.

The time step is 1 % of the stability limit: the measured restitution converges as dt^2 (relative
error 1e-3 at 3 %, 1.2e-4 at 1 %, measured for e = 0.1, 0.5, 1).
"""
from __future__ import annotations

import math
import os
import signal
import time
from pathlib import Path

import numba

import contactlab as cl
from contactlab.validation.closed_forms import hertz_impact

RADIUS = 1e-3      # m
GAP = 1e-5         # m, between the sphere and the wall at the start
SPEED = 0.5        # m/s, approach speed
G = 9.81           # m/s^2
DT_FRACTION = 0.01
STEEL = dict(density=7800.0, young=2e11, poisson=0.3)


def _material():
    return cl.Material(**STEEL)


def contact_duration(speed: float = SPEED) -> float:
    """Undamped Hertzian contact time of the sphere on the wall, s (a damped contact is shorter)."""
    m = _material()
    e_star = 1.0 / (2.0 * (1.0 - m.poisson**2) / m.young)
    mass = m.density * 4.0 / 3.0 * math.pi * RADIUS**3
    return float(hertz_impact(e_star, RADIUS, mass, speed)["duration"])


def impact_duration(slowest: float = SPEED) -> float:
    """Simulated time for the gap to close and the contact to end, with a margin, for approach
    speeds down to ``slowest`` (m/s): far shorter than the flight to a second bounce."""
    return GAP / slowest + 3.0 * contact_duration(slowest)


#: simulated time of one impact member at SPEED
IMPACT_DURATION = impact_duration()


def impact(restitution: float, speed: float = SPEED, gravity: float = 0.0):
    """One steel sphere approaching a steel wall at ``speed`` (m/s), Hertz-Mindlin at ``restitution``."""
    steel = _material()
    scene = cl.Scene(gravity=(0.0, 0.0, -gravity))
    scene.add_sphere(position=(0.0, 0.0, RADIUS + GAP), radius=RADIUS, material=steel, velocity=(0.0, 0.0, -speed))
    scene.add_wall(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), material=steel)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=restitution, friction=0.0))
    sim.dt = DT_FRACTION * sim.stability_limit
    return sim


def rebound_velocity(sim) -> float:
    """Vertical velocity of the sphere, m/s."""
    return float(sim.velocities[0, 2])


def drop(restitution: float):
    """The impact under gravity (for the rebound height)."""
    return impact(restitution, gravity=G)


def drop_height(speed: float = SPEED) -> float:
    """Height of the free fall that ends in the impact (bottom of the sphere above the wall), m:
    GAP plus the height that gives the speed ``speed`` at GAP."""
    return GAP + speed**2 / (2.0 * G)


def rebound_height(sim) -> dict:
    """Height the sphere's bottom reaches after the bounce, from its energy in flight (m), the
    energy the contact dissipated (J), and the number of contacts (0: in flight)."""
    z, vz = float(sim.positions[0, 2]), float(sim.velocities[0, 2])
    return {"rebound_height": z - RADIUS + vz**2 / (2.0 * G), "dissipated": float(sim.energy()["dissipated"]),
            "in_contact": sim.n_contacts()}


def sphere_mass() -> float:
    """Mass of the sphere, kg."""
    return STEEL["density"] * 4.0 / 3.0 * math.pi * RADIUS**3


def thrown(restitution: float, speed: float):
    """The impact under gravity, thrown down at ``speed`` from GAP above the wall."""
    return impact(restitution, speed=speed, gravity=G)


def impact_or_die(restitution: float, marker: str = "", always: bool = False):
    """An impact, except that the first call (no ``marker`` file yet), or every call with
    ``always``, kills its own process as a crash or an out-of-memory kill would."""
    if always or (marker and not Path(marker).exists()):
        if marker:
            Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return impact(restitution)


def impact_or_raise(restitution: float):
    """An impact whose make_simulation raises for a restitution above 0.95 (a member's own error)."""
    if restitution > 0.95:
        raise ValueError(f"no simulation for restitution {restitution} in this test")
    return impact(restitution)


def slow_impact(restitution: float, pause: float = 0.0):
    """An impact that takes ``pause`` seconds longer to set up."""
    time.sleep(pause)
    return impact(restitution)


def threads_now(sim) -> int:
    """Numba's thread count in the member (the runner sets it to threads_per_member)."""
    return numba.get_num_threads()
