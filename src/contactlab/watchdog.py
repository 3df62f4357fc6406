"""What a run keeps an eye on between steps: the energy balance, and the stable step of the
contacts present.

**The energy watchdog.**  Every :func:`check_interval` steps the run reads its energy terms
(:meth:`contactlab.Simulation.energy`).  A correct explicit integration only loses energy to the
laws' dissipation, up to its truncation error; a step that is unstable for some contacts creates
it (docs/physics.md, "Why a damped packing can create energy").  Over a window of the last
:data:`WINDOW` checks, the watchdog compares the growth of ``balance_error`` with the *energy in
play*: the largest stored energy (kinetic + rotational + the size of the elastic energy) in the
window plus the work done on the bodies in it (by moving walls, fixed bodies and a deforming
periodic cell, by gravity, and the energy inflowing and outflowing bodies bring).  When the growth
exceeds ``share`` of it (:data:`DEFAULT_SHARE`, 5 %) and :data:`NOISE` of the energy the run has
moved so far, at two checks in a row, the run stops with
:class:`~contactlab.errors.SimulationBlowUp`, ``cause="energy_created"``, whose message names the
bodies where the step is unstable (their rows of the packing bound,
:mod:`contactlab.packing_limit`, and whose net force reverses at every step), their contacts and
the step that would be stable.  ``Simulation(..., energy_watchdog=0.2)`` raises the share,
``energy_watchdog=None`` turns it off.

**The stability limit follows the run.**  Every :data:`REFRESH_EVERY` checks
(:data:`REFRESH_EVERY_STREAMED` beyond half a million contacts) the bound of the contacts present
is computed again; a step above it gives a
:class:`~contactlab.errors.StabilityWarning` with the numbers (once per crossing): a packing
compressed, or gaining contacts, until its step is no longer safe.

Checks fall on fixed step numbers (multiples of the interval), so a run split into ``run()``
calls checks the same states as one call, and the checks read the state only: results do not
depend on them.
"""
from __future__ import annotations

import math
import warnings
from collections import deque
from dataclasses import dataclass

import numpy as np

from ._stack import user_stack_level
from .engine.layout import ACTIVE
from .errors import InputError, SimulationBlowUp, StabilityWarning
from .packing_limit import KEEP_CONTACTS

__all__ = ["RunMonitor", "DEFAULT_SHARE", "WINDOW", "check_interval", "energy_watchdog_share"]

#: the balance error may grow by this share of the energy in play over a window (the default)
DEFAULT_SHARE = 0.05
#: checks in a window
WINDOW = 8
#: the bound of the contacts present is recomputed every this many checks (2000 steps from 100
#: bodies on): it costs 10-45 steps' worth (0.24 ms at 27 bodies, 22 ms at 1e4, 119 ms at 1e5 on
#: a 2-vCPU AMD EPYC VM), so ~0.5 % of a run; every rebuild would be up to every check in a flow
REFRESH_EVERY = 20
#: checks between refreshes of a packing whose contacts the bound evaluates again at each of its
#: passes (more than :data:`~contactlab.packing_limit.KEEP_CONTACTS`, a million spheres): 8000
#: steps, as its refresh costs ~35 steps' worth (7.5-9 s at 1e6 spheres, 0.22 s a step), ~0.5 %
REFRESH_EVERY_STREAMED = 80
#: a check costs ~30 us and a few ns per body; a step ~0.2 us and ~0.2 us per body: this many
#: body-steps between checks keeps them under ~1 % of a small scene's run
BODY_STEPS_PER_CHECK = 10_000
#: at least this many steps between checks
MIN_INTERVAL = 100
#: a growth below this share of the energy the run has moved so far is round-off (a packing at
#: rest, whose energy in play is nearly nothing, drifts by ~1e-7 of it over thousands of steps)
NOISE = 1e-5


def check_interval(n_bodies: int) -> int:
    """Steps between two checks: ``max(100, 10000 / N)`` (100 steps from 100 bodies on)."""
    return max(MIN_INTERVAL, -(-BODY_STEPS_PER_CHECK // max(int(n_bodies), 1)))


def energy_watchdog_share(value) -> float | None:
    """The ``energy_watchdog`` option checked: a share > 0 (of the energy in play), or None / False
    / 0 (off)."""
    if value is None or value is False or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                           and value == 0):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or \
            not math.isfinite(value) or value <= 0:
        raise InputError(f"energy_watchdog must be a share of the energy in play > 0 (default {DEFAULT_SHARE}: the "
                         f"balance error may grow by 5 % of it over a window before the run stops), or None to turn "
                         f"it off; got {value!r}")
    return float(value)


@dataclass
class _Sample:
    step: int
    time: float
    balance: float
    stored: float
    boundary: float
    gravitational: float
    streams: float
    scale: float


class RunMonitor:
    """The energy watchdog and the refreshed stability bound of one simulation (see the module
    docstring).  ``share``: the watchdog's share (None: off)."""

    def __init__(self, share: float | None, n_bodies: int):
        self.share = share
        self.interval = check_interval(n_bodies)
        self.samples: deque[_Sample] = deque(maxlen=WINDOW + 1)
        self.over = 0            # consecutive checks above the share
        self.checks_since_refresh = 0
        self.warned_limit = None  # the bound the last StabilityWarning was about
        self.run_scale = 0.0      # the largest energy the run has moved so far (J)

    def reset(self) -> None:
        """Forget the window (the energy's reference changed: a new model, bodies added or removed)."""
        self.samples.clear()
        self.over = 0
        self.run_scale = 0.0

    def next_step(self, step: int) -> int:
        """The next step number at which to check (a multiple of the interval after ``step``)."""
        return (step // self.interval + 1) * self.interval

    def check(self, sim) -> None:
        """At a check step: refresh the bound (every REFRESH_EVERY checks), sample the energy,
        stop a run that creates energy."""
        if sim.state.step % self.interval:
            return
        self._refresh(sim)
        if self.share is not None:
            self._watch(sim)

    # ------------------------------------------------------------------ the bound
    def _refresh(self, sim) -> None:
        self.checks_since_refresh += 1
        last = sim._packing
        every = REFRESH_EVERY if last is None or last.n_contacts <= KEEP_CONTACTS else REFRESH_EVERY_STREAMED
        if self.checks_since_refresh < every:
            return
        self.checks_since_refresh = 0
        packing = sim._refresh_packing_limit()
        dt = sim.dt
        if dt is None or packing is None:
            return
        if dt > packing.limit:
            if self.warned_limit is None or packing.limit < 0.9 * self.warned_limit:
                self.warned_limit = packing.limit
                warnings.warn(StabilityWarning(
                    f"at t={sim.time:.6g} s (step {sim.state.step}) the step dt={dt:.6g} s is above the stability limit "
                    f"{packing.limit:.6g} s of the contacts present ({packing.describe()} and its neighbours: the "
                    f"packing has stiffened or more contacts have formed); it may create energy (the energy watchdog "
                    f"stops the run if it does); set sim.dt = {0.9 * packing.limit:.6g} (0.9 of the limit)"),
                    stacklevel=user_stack_level())
        else:
            self.warned_limit = None

    # ------------------------------------------------------------------ the energy
    def _watch(self, sim) -> None:
        e = sim._run_energy()   # (on a GPU summed on the device: the state stays there)
        # an adhesive contact stores negative energy: its size counts
        stored = e["kinetic"] + e["rotational"] + abs(e["elastic"])
        streams = e.get("inflow", 0.0) - e.get("outflow", 0.0)
        e0 = sim.state.initial_energy or {}
        # the energy the run has moved so far: stored, dissipated, released by gravity, done by the
        # boundaries; a growth far below it (round-off of a packing at rest) is not a creation
        moved = (stored + abs(e["dissipated"]) + abs(e["gravitational"] - e0.get("gravitational", 0.0))
                 + abs(e["boundary_work"]) + abs(streams))
        self.run_scale = max(self.run_scale, moved)
        self.samples.append(_Sample(sim.state.step, sim.time, e["balance_error"], stored, e["boundary_work"],
                                    e["gravitational"], streams, moved))
        if len(self.samples) < 3:
            return
        first, now = self.samples[0], self.samples[-1]
        growth = now.balance - min(s.balance for s in self.samples)
        in_play = (max(s.stored for s in self.samples) + abs(now.boundary - first.boundary)
                   + abs(now.gravitational - first.gravitational) + abs(now.streams - first.streams))
        if growth > self.share * in_play and growth > NOISE * self.run_scale:
            self.over += 1
        else:
            self.over = 0
        if self.over >= 2:
            start = min(self.samples, key=lambda s: s.balance)
            sim.stepper.to_host()   # the diagnosis reads the state
            raise energy_created(sim, growth, in_play, self.share, start, now)


def energy_created(sim, growth: float, in_play: float, share: float, start: _Sample, now: _Sample) -> SimulationBlowUp:
    """The diagnosis of the energy watchdog: where the step is unstable and what step is stable."""
    s, m = sim.state, sim.model
    dt = sim.dt
    packing = sim._refresh_packing_limit()
    # the bodies whose net force reverses at every step carry the unstable motion: their half-step
    # velocity change dt/2 a is large against their velocity (a period-2 oscillation that the
    # full-step velocities average away); ranked by the kinetic energy of that change
    free = ~m.fixed
    half = 0.5 * dt
    mass, inertia = m.mass, m.inertia
    with np.errstate(divide="ignore", invalid="ignore"):
        jolt = 0.5 * half * half * (np.einsum("ij,ij->i", s.forces, s.forces) / mass
                                    + np.einsum("ij,ij->i", s.torques, s.torques) / np.where(inertia > 0, inertia, np.inf))
    jolt = np.where(free & np.isfinite(jolt), jolt, 0.0)
    unstable = np.flatnonzero(free & (packing.local < dt)) if packing is not None and packing.local is not None \
        else np.zeros(0, dtype=np.int64)
    ranked = unstable[np.argsort(-jolt[unstable], kind="stable")] if len(unstable) else \
        np.argsort(-jolt, kind="stable")[: min(5, len(jolt))]
    bodies = [int(b) for b in ranked[:5]]
    stable = 0.9 * packing.limit if packing is not None and math.isfinite(packing.limit) else 0.5 * dt
    contacts = _contacts_of(sim, bodies[0]) if bodies else []
    where = ", ".join(f"body {b}" for b in bodies) if bodies else "no body in particular"
    partners = ", ".join(f"{b}-{p}" if p >= 0 else f"{b}-wall {-1 - p}" for b, p in contacts[:6])
    rate = growth / max(now.time - start.time, 1e-300)
    message = (f"energy is being created: the energy balance error grew by {growth:.4g} J between t={start.time:.6g} s "
               f"and t={now.time:.6g} s (steps {start.step}-{now.step}, {rate:.4g} W), {growth / max(in_play, 1e-300):.3g} "
               f"of the energy in play ({in_play:.4g} J: stored energy plus the work done on the bodies), more than the "
               f"watchdog's share {share:g}.  Where: {where}"
               + (f" (contacts {partners})" if partners else "")
               + (f"; the step dt={dt:.6g} s is above the stability limit {packing.limit:.6g} s of their contacts "
                  f"together ({packing.describe()})" if packing is not None and dt > packing.limit else
                  f"; dt={dt:.6g} s is within the bound of the contacts present ({packing.limit:.6g} s)"
                  if packing is not None else "")
               + f".  A step of {stable:.6g} s is stable: cl.Simulation(..., dt={stable:.3g}) or sim.dt = {stable:.3g}; "
               f"if the law creates the energy itself, check it with contactlab validate; energy_watchdog=None turns "
               f"the watchdog off")
    details = dict(dt=dt, stability_limit=sim.stability_limit, packing_limit=packing.limit if packing else math.inf,
                   growth=growth, energy_in_play=in_play, share=share, window_steps=(start.step, now.step),
                   bodies=bodies, contacts=contacts, stable_dt=stable, power=rate)
    return SimulationBlowUp(message, time=s.time, step=s.step, particles=tuple(bodies), cause="energy_created",
                            details=details)


def _contacts_of(sim, body: int) -> list[tuple[int, int]]:
    """The active contacts of ``body`` as (body, partner) pairs (partner ``-1 - w`` for wall or
    mesh triangle ``w``)."""
    t, m = sim.table, sim.model
    n = t.n_pairs
    act = t.status[:n] == ACTIVE
    i = t.pair_i[:n].astype(np.int64)
    j = t.pair_j[:n].astype(np.int64)
    out = []
    for k in np.flatnonzero(act & ((i == body) | (j == body))):
        other = int(j[k] if i[k] == body else i[k])
        out.append((body, other if other < m.n_bodies else -1 - (other - m.n_bodies)))
    return out
