"""Inlets: spheres inserted into a region at a given rate during a run.

An inlet (:meth:`contactlab.Simulation.add_inlet`) acts every ``every`` steps.  At each batch it
works out how many particles are due so that the inserted number (or mass) follows the requested
rate: with a number rate ``Q`` (1/s), ``floor(Q (t - t_start))`` particles in total by time ``t``;
with a mass rate ``W`` (kg/s), particles in the order drawn for as long as their cumulative mass
stays at or below ``W (t - t_start)``; none after ``stop``.  The sizes are drawn in order from
the inlet's own random generator (seeded with ``seed``), so the same inlet inserts the same
particles, and a checkpoint keeps the generator.

The due particles, with the particles of earlier batches that found no place (the *backlog*)
first, are placed by random sequential addition in the region among the bodies present
(:mod:`contactlab.packing.placement`): no inserted sphere overlaps any body (by its bounding
radius) or any other inserted sphere.  A particle that finds no free place in ``attempts`` tries
stays in the backlog for the next batch; the backlog holds at most ``max_backlog`` particles (by
default the particles of ten batches, at least 100), older ones beyond it are given up and
counted as ``skipped`` (the region is full: the rate then falls short, and :attr:`Inlet.backlog`
and :attr:`Inlet.skipped` say by how much).  Walls and meshes are not checked: give a region clear
of them.  New spheres get the inlet's velocity, no spin, and the inlet's material.
"""
from __future__ import annotations

import math

import numpy as np

from .._arguments import as_int, as_nonnegative, as_positive
from ..distributions import SizeDistribution
from ..errors import InputError
from ..materials import Material
from ..measure.volumes import _BALL, _BOX, _CYLINDER, _section_2d, as_measure_region
from ..packing.placement import place, region_room
from .base import Stream
from .resize import NewSpheres, sphere_mass_inertia

__all__ = ["Inlet", "DEFAULT_EVERY"]

#: steps between two batches unless ``every`` is given
DEFAULT_EVERY = 200
#: radii drawn from the generator at a time (the sequence does not depend on it)
_DRAW = 256


class Inlet(Stream):
    """A particle stream's source (made by :meth:`contactlab.Simulation.add_inlet`, which
    documents the parameters).

    Attributes (read them during or after a run)
    ----------
    inserted : int, and inserted_mass : float, kg: particles inserted so far
    backlog : int: particles due that found no place yet (tried again at the next batch)
    skipped : int, and skipped_mass, kg: particles given up (the backlog overflowed)
    """

    kind = "inlet"

    def __init__(self, region, material: Material, *, rate, mass_rate, distribution, radius, velocity, every,
                 start, stop, seed, attempts, max_backlog, dimension: int, thickness: float, anchor_step: int,
                 time: float):
        super().__init__(DEFAULT_EVERY if every is None else every, anchor_step)
        if (rate is None) == (mass_rate is None):
            raise InputError(f"add_inlet: give exactly one of rate (particles/s) or mass_rate (kg/s), got "
                             f"rate={rate!r}, mass_rate={mass_rate!r}")
        self.rate = None if rate is None else as_positive("add_inlet: rate", rate, "1/s")
        self.mass_rate = None if mass_rate is None else as_positive("add_inlet: mass_rate", mass_rate, "kg/s")
        if (distribution is None) == (radius is None):
            raise InputError(f"add_inlet: give exactly one of distribution (a cl.distributions size distribution) or "
                             f"radius (m, all particles alike), got distribution={distribution!r}, radius={radius!r}")
        if distribution is not None and not isinstance(distribution, SizeDistribution):
            raise InputError(f"add_inlet: distribution must be a size distribution such as "
                             f"cl.distributions.Uniform(d_min, d_max), got {type(distribution).__name__}: "
                             f"{distribution!r:.80}")
        self.distribution = distribution
        self.radius = None if radius is None else as_positive("add_inlet: radius", radius, "m")
        if not isinstance(material, Material):
            raise InputError(f"add_inlet: material must be a cl.Material, got {type(material).__name__}")
        self.material = material
        self.velocity = np.asarray(velocity, dtype=np.float64).reshape(3)
        self._start_given = None if start is None else as_nonnegative("add_inlet: start", start, "s")
        #: when the stream starts, s
        self.start = float(time) if start is None else self._start_given
        self.stop = math.inf if stop is None else as_positive("add_inlet: stop", stop, "s")
        if self.stop <= self.start:
            raise InputError(f"add_inlet: stop must come after start, got start={self.start!r} s, stop={self.stop!r} s")
        self.seed = as_int("add_inlet: seed", seed, low=0)
        self.attempts = as_int("add_inlet: attempts", attempts, low=1)
        self.dimension = int(dimension)
        self.thickness = float(thickness)
        reg = as_measure_region(region)
        if reg.kind not in (_BOX, _BALL, _CYLINDER):
            raise InputError("add_inlet: the region must be cl.packing.regions.box(...), sphere(...) or "
                             "cylinder(...), got the whole domain")
        self.region = _section_2d(reg) if dimension == 2 else reg
        room = region_room(self.region.kind, self.region.params, dimension)
        if self.largest_radius >= room:
            raise InputError(f"add_inlet: the largest particle (radius {self.largest_radius!r} m) does not fit in the "
                             f"region (it holds spheres of radius < {room!r} m); use a larger region or smaller sizes")
        self.max_backlog = None if max_backlog is None else as_int("add_inlet: max_backlog", max_backlog, low=0)
        self._rng = np.random.default_rng(self.seed)
        self._queue = np.zeros(0)          # radii drawn in order: the backlog first, then those not yet due
        self.backlog = 0
        self.issued = 0                    # particles that fell due so far (inserted, backlog, skipped)
        self.issued_mass = 0.0
        self.inserted = 0
        self.inserted_mass = 0.0
        self.skipped = 0
        self.skipped_mass = 0.0
        self._log = {"time": [], "step": [], "inserted": [], "inserted_mass": []}

    # ------------------------------------------------------------------ sizes
    @property
    def smallest_radius(self) -> float:
        """The smallest radius it can insert, m (the stability limit is checked for it)."""
        return self.radius if self.radius is not None else 0.5 * float(self.distribution.d_min)

    @property
    def largest_radius(self) -> float:
        return self.radius if self.radius is not None else 0.5 * float(self.distribution.d_max)

    def _draw(self, n: int) -> None:
        """Make the queue hold at least ``n`` radii (drawn in blocks of ``_DRAW``)."""
        while self._queue.shape[0] < n:
            if self.radius is not None:
                more = np.full(_DRAW, self.radius)
            else:
                more = self.distribution.sample_radii(_DRAW, self._rng)
            self._queue = np.concatenate([self._queue, more])

    def _masses(self, radii: np.ndarray, material: int, materials) -> np.ndarray:
        mats = np.full(radii.shape[0], material, dtype=np.int64)
        return sphere_mass_inertia(materials, mats, radii, self.dimension, self.thickness)[0]

    # ------------------------------------------------------------------ a batch
    def batch(self, time: float, step: int, material: int, materials, others_pos: np.ndarray, others_r: np.ndarray) -> NewSpheres:
        """The spheres of the batch at ``time`` (s): due ones placed among the bodies ``others_pos``
        (M, 3) m of bounding radii ``others_r`` (M,) m; ``material`` is the inlet material's index
        in ``materials`` (the new model's)."""
        t = min(time, self.stop) - self.start
        n_new = 0
        if t > 0.0:
            if self.rate is not None:
                n_new = max(0, int(math.floor(self.rate * t * (1.0 + 1e-12))) - self.issued)
                self._draw(self.backlog + n_new)
            else:
                target = self.mass_rate * t * (1.0 + 1e-12)
                self._draw(self.backlog + 1)
                while True:   # how many of the queue after the backlog fall due
                    future = self._queue[self.backlog:]
                    cum = self.issued_mass + np.cumsum(self._masses(future, material, materials))
                    n_new = int(np.searchsorted(cum, target, side="right"))
                    if n_new < future.shape[0]:
                        break
                    self._draw(self._queue.shape[0] + _DRAW)
        due = self.backlog + n_new
        radii = self._queue[:due]
        self.issued += n_new
        self.issued_mass += float(self._masses(radii[self.backlog:], material, materials).sum())
        u = self._rng.random((due, self.attempts, 3))
        pos, placed = place(self.region.kind, self.region.params, self.dimension, radii, u, others_pos, others_r)
        left = radii[~placed]
        limit = self.max_backlog if self.max_backlog is not None else max(100, 10 * max(n_new, 1))
        drop = max(0, left.shape[0] - limit)
        if drop:
            self.skipped += drop
            self.skipped_mass += float(self._masses(left[:drop], material, materials).sum())
            left = left[drop:]
        self._queue = np.concatenate([left, self._queue[due:]])
        self.backlog = int(left.shape[0])
        k = int(placed.sum())
        got = radii[placed]
        mass = self._masses(got, material, materials)
        self.inserted += k
        self.inserted_mass += float(mass.sum())
        for key, v in (("time", time), ("step", step), ("inserted", self.inserted),
                       ("inserted_mass", self.inserted_mass)):
            self._log[key].append(v)
        vel = np.broadcast_to(self.velocity, (k, 3)).copy()
        return NewSpheres(pos[placed], got, np.full(k, material, dtype=np.int64), vel, np.zeros((k, 3)))

    def log(self) -> dict[str, np.ndarray]:
        """One row per batch: ``time`` (s), ``step``, ``inserted`` and ``inserted_mass`` (kg) so far."""
        return {k: np.asarray(v, dtype=np.int64 if k == "step" or k == "inserted" else np.float64)
                for k, v in self._log.items()}

    # ------------------------------------------------------------------ checkpoints
    def config(self) -> dict:
        return {"every": self.every, "rate": self.rate, "mass_rate": self.mass_rate, "radius": self.radius,
                "distribution": repr(self.distribution), "seed": self.seed, "attempts": self.attempts,
                "start": self._start_given, "stop": None if math.isinf(self.stop) else self.stop,
                "velocity": self.velocity.tolist(), "material": self.material.to_dict()}

    def dynamic(self) -> tuple[dict, dict]:
        scalars, arrays = super().dynamic()
        scalars.update(start=self.start, rng=self._rng.bit_generator.state, backlog=self.backlog, issued=self.issued,
                       issued_mass=self.issued_mass, inserted=self.inserted, inserted_mass=self.inserted_mass,
                       skipped=self.skipped, skipped_mass=self.skipped_mass)
        arrays = dict(arrays, queue=self._queue, **{f"log_{k}": np.asarray(v) for k, v in self._log.items()})
        return scalars, arrays

    def restore(self, scalars: dict, arrays: dict) -> None:
        super().restore(scalars, arrays)
        self.start = float(scalars["start"])
        self._rng.bit_generator.state = scalars["rng"]
        for key in ("backlog", "issued", "inserted", "skipped"):
            setattr(self, key, int(scalars[key]))
        for key in ("issued_mass", "inserted_mass", "skipped_mass"):
            setattr(self, key, float(scalars[key]))
        self._queue = np.array(arrays["queue"], dtype=np.float64)
        self._log = {k: list(np.asarray(arrays[f"log_{k}"]).tolist()) for k in self._log}

    def __repr__(self):
        what = f"rate={self.rate!r}" if self.rate is not None else f"mass_rate={self.mass_rate!r}"
        return f"Inlet({what}, every={self.every}, inserted={self.inserted}, backlog={self.backlog})"
