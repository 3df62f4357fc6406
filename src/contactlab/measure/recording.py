"""Measurements as sensors: what ``sim.record(..., region=...)`` records, and the coarse-graining reporter.

``sim.record("stress", "packing_fraction", region=box, every=100)`` attaches a
:class:`~contactlab.io.sensors.Recorder` whose target is a region; at each due step it calls
:func:`region_sample`, which evaluates the named quantities of :data:`REGION_QUANTITIES` from one
:func:`~contactlab.measure.snapshot.snapshot` (the weights and the stress are shared between
quantities).  :class:`CoarseGrainReporter` writes coarse-grained fields as a ParaView series of
``.vti`` files.
"""
from __future__ import annotations

import functools

import numpy as np

from .._arguments import as_bool, as_path, checked_api, did_you_mean
from ..errors import InputError
from ..io.atomic import ensure_writable_folder, remove_stale_temporaries
from ..io.reporter import Reporter
from ..io.vtk import write_pvd
from .coarse_grain import coarse_grain_of, grid_axes
from .contact_network import coordination_of, fabric_of
from .love_weber import mean_stress, stress_of
from .smoothing import SmoothingKernel
from .snapshot import snapshot
from .volumes import as_measure_region
from .weights import _checked_weighting, particle_weights, volume_of

__all__ = ["REGION_QUANTITIES", "region_sample", "region_sampler", "CoarseGrainReporter"]

#: what a region sensor can record: name -> unit and meaning
REGION_QUANTITIES = {
    "stress": ("Pa", "Love-Weber stress (3, 3), compression positive"),
    "contact_stress": ("Pa", "its contact part (3, 3)"),
    "kinetic_stress": ("Pa", "its kinetic part (3, 3), about the region's mean velocity"),
    "pressure": ("Pa", "mean stress tr(stress)/3 (in-plane mean in 2-D)"),
    "mean_velocity": ("m/s", "mass-weighted mean velocity (3,)"),
    "packing_fraction": ("-", "solid fraction, exact at the boundary"),
    "coordination": ("-", "contacts per body (walls included)"),
    "mechanical_coordination": ("-", "contacts per body, rattlers (< 2 contacts) excluded"),
    "fabric": ("-", "fabric tensor <n n> (3, 3)"),
    "bodies": ("-", "sum of the bodies' weights"),
}


def region_sample(sim, region, quantities, weighting: str = "volume") -> dict:
    """The ``quantities`` (names of :data:`REGION_QUANTITIES`) of ``region`` now, by name."""
    for q in quantities:
        if q not in REGION_QUANTITIES:
            raise InputError(f"record: unknown region quantity {q!r}{did_you_mean(q, REGION_QUANTITIES)}; allowed: "
                             f"{', '.join(REGION_QUANTITIES)}")
    snap = snapshot(sim)
    reg = as_measure_region(region)
    values = {}
    need_stress = {"stress", "contact_stress", "kinetic_stress", "pressure", "mean_velocity"} & set(quantities)
    parts = stress_of(snap, reg, weighting=weighting) if need_stress else None
    network = None
    for q in quantities:
        if q in ("stress", "contact_stress", "kinetic_stress"):
            values[q] = parts["total" if q == "stress" else q.split("_")[0]].copy()
        elif q == "pressure":
            values[q] = mean_stress(parts["total"], dimension=snap.dimension)
        elif q == "mean_velocity":
            values[q] = parts["mean_velocity"].copy()
        elif q == "packing_fraction":
            w = particle_weights(snap, reg, "volume")
            values[q] = float(np.dot(w, snap.volumes) / volume_of(snap, reg))
        elif q in ("coordination", "mechanical_coordination", "bodies"):
            network = network or coordination_of(snap, reg, weighting=weighting)
            values[q] = network["mechanical" if q == "mechanical_coordination" else q]
        elif q == "fabric":
            values[q] = fabric_of(snap, reg, weighting=weighting)
    return values


def region_sampler(region, weighting: str = "volume"):
    """``sample(sim, quantities)`` for a recorder watching ``region`` (checked now)."""
    reg = as_measure_region(region)
    return functools.partial(_sample, reg, _checked_weighting(weighting))


def _sample(reg, weighting, sim, quantities):
    return region_sample(sim, reg, quantities, weighting)


@checked_api
class CoarseGrainReporter(Reporter):
    """Write coarse-grained fields every ``interval`` seconds (or ``every`` steps) as a ParaView
    series: ``<name>_<k>.vti`` (one per report) and ``<name>.pvd`` (rewritten after each).

    Parameters
    ----------
    directory : str or Path
        Output folder (created).
    lower, upper, shape, kernel, contacts
        The grid and kernel of :func:`~contactlab.measure.coarse_grain`.
    interval : float, s, or every : int, steps
    name : str
        File name stem (default ``"cg"``).

    ``reporter.fields`` holds the last :class:`~contactlab.measure.CoarseGrainedFields`.
    """

    def __init__(self, directory, lower, upper, shape, kernel: SmoothingKernel, *, interval: float | None = None,
                 every: int | None = None, contacts: bool = True, name: str = "cg"):
        super().__init__(interval=interval, every=every)
        self.directory = as_path("CoarseGrainReporter: directory", directory)
        if not isinstance(kernel, SmoothingKernel):
            raise InputError(f"CoarseGrainReporter: kernel must be cl.measure.Gaussian(width=...) or "
                             f"cl.measure.Lucy(cutoff=...), got {type(kernel).__name__}")
        if not isinstance(name, str) or not name or not name.replace("_", "").replace("-", "").isalnum():
            raise InputError(f"CoarseGrainReporter: name must be letters, digits, '_' or '-', got {name!r}")
        self.lower, self.upper, self.shape, self.kernel = lower, upper, shape, kernel
        self.contacts = as_bool("CoarseGrainReporter: contacts", contacts)
        self.name = name
        self.frames: list[tuple[float, str]] = []
        self.fields = None

    def output_files(self) -> list:
        return [self.directory / f"{self.name}.pvd"]   # and its frames

    def attach(self, sim) -> None:
        grid_axes(self.lower, self.upper, self.shape, sim.model.dimension)   # checks the grid before any run
        super().attach(sim)
        ensure_writable_folder(self.directory, "coarse-graining output folder")
        remove_stale_temporaries(self.directory)

    def report(self, sim) -> None:
        self.fields = coarse_grain_of(snapshot(sim), self.lower, self.upper, self.shape, self.kernel,
                                      contacts=self.contacts)
        file = f"{self.name}_{len(self.frames):06d}.vti"
        self.fields.write_vti(self.directory / file)
        self.frames.append((sim.time, file))
        write_pvd(self.directory / f"{self.name}.pvd", self.frames)
