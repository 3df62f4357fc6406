"""The few numbers a run reads between its chunks, summed on the GPU where the state lives.

Between two chunks of a run the host reads a handful of scalars: the energy watchdog its energy
terms (:mod:`contactlab.watchdog`), the speed check the fastest body's travel in a step against its
radius (:func:`contactlab.diagnosis.check_speeds`), the progress bar the number of contacts.  On a
GPU those come from one pass over the device's arrays (:func:`numbers`), so that the state itself
stays there until a reporter, a sensor or user code reads it (docs/gpu.md, "What reaches the
host"): ~100 bytes back instead of ~1 kB a sphere.

The pass is the NumPy sums of :func:`contactlab.observables.energy_sums` (their reference) as a
kernel over a fixed number of threads, each summing every ``T``-th body and pair (coalesced reads),
then the host adding the per-thread sums in thread order: the same bits on repeat, the CPU's sums
to rounding (the order of the additions differs: pairwise NumPy sums there, per thread here), which
the watchdog's decisions (a share of 5 % of the energy in play) do not see.  The speed check and
the watchdog's diagnosis, if they fire, read the host's copy (brought back then) and say what the
CPU says.  Spheres only, as on the GPU (no clumps, no rigid bodies).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..geometry.periodic import CELL_FLOW, CELL_GRADIENT, CELL_LENGTH, CELL_PERIODIC, CELL_SHEAR
from ..gpu import backend
from ..gpu.backend import cuda, gpu_kernel
from ..observables import EnergySums
from .layout import ACTIVE, OUT_ELASTIC

__all__ = ["RunNumbers", "numbers", "Sums", "KINETIC", "ROTATIONAL", "GRAVITATIONAL", "ELASTIC", "DISSIPATED",
           "DAMPING", "BOUNDARY", "CONTACTS", "TRAVEL", "N_NUMBERS"]

#: the columns of a thread's sums (then one per dissipation term of the law)
KINETIC, ROTATIONAL, GRAVITATIONAL, ELASTIC, DISSIPATED, DAMPING, BOUNDARY, CONTACTS, TRAVEL, N_NUMBERS = range(10)
#: bodies (and pairs) per thread of the pass, about: the threads are a fixed function of the scene's size
ROWS_PER_THREAD = 256

#: what the pass reads (device arrays; the periodic cell's ``images`` and ``cell`` are arguments of
#: their own, None outside one: Numba drops a branch on None only for an argument)
Sums = namedtuple("Sums", ["vel", "angvel", "pos", "mass", "inertia", "radius", "fixed", "gravity", "dissipated",
                           "diss_terms", "damping_work", "boundary_work", "status", "out"])


class RunNumbers(namedtuple("RunNumbers", ["energy", "contacts", "travel"])):
    """``energy``: :class:`~contactlab.observables.EnergySums`; ``contacts``: active contacts;
    ``travel``: the largest ``|v| dt / radius`` of a body (dimensionless; above 1 a body can pass
    through another between two steps)."""


@gpu_kernel
def _sums(n_pairs, dt, s, images, cell, partial):
    """Thread ``t``: the sums over bodies and pairs ``t, t + T, t + 2T, ...`` (``T``: the threads)."""
    t = cuda.grid(1)
    threads = partial.shape[0]
    if t >= threads:
        return
    for c in range(partial.shape[1]):
        partial[t, c] = 0.0
    n = s.pos.shape[0]
    damping = s.damping_work.shape[0] > 0
    for p in range(t, n, threads):
        partial[t, DISSIPATED] += s.dissipated[p]
        partial[t, BOUNDARY] += s.boundary_work[p]
        if damping:
            partial[t, DAMPING] += s.damping_work[p]
        for c in range(s.diss_terms.shape[1]):
            partial[t, N_NUMBERS + c] += s.diss_terms[p, c]
        v2 = s.vel[p, 0] * s.vel[p, 0] + s.vel[p, 1] * s.vel[p, 1] + s.vel[p, 2] * s.vel[p, 2]
        travel = math.sqrt(v2) * dt / s.radius[p]
        if travel != travel or travel > partial[t, TRAVEL]:   # a NaN speed stays: it is the fastest
            partial[t, TRAVEL] = travel
        if s.fixed[p]:
            continue
        m = s.mass[p]
        partial[t, KINETIC] += 0.5 * (m * v2)
        w2 = s.angvel[p, 0] * s.angvel[p, 0] + s.angvel[p, 1] * s.angvel[p, 1] + s.angvel[p, 2] * s.angvel[p, 2]
        partial[t, ROTATIONAL] += 0.5 * (s.inertia[p] * w2)
        x, y, z = s.pos[p, 0], s.pos[p, 1], s.pos[p, 2]
        if cell is not None and images is not None:
            # unwrapped (observables.energy_sums: lattice_shift_np)
            x += images[p, 0] * cell[CELL_LENGTH] * cell[CELL_PERIODIC]
            y += images[p, 1] * cell[CELL_LENGTH + 1] * cell[CELL_PERIODIC + 1]
            z += images[p, 2] * cell[CELL_LENGTH + 2] * cell[CELL_PERIODIC + 2]
            g = int(cell[CELL_GRADIENT])
            if g >= 0:
                f = int(cell[CELL_FLOW])
                shift = images[p, g] * cell[CELL_SHEAR]
                if f == 0:
                    x += shift
                elif f == 1:
                    y += shift
                else:
                    z += shift
        partial[t, GRAVITATIONAL] -= m * (x * s.gravity[0] + y * s.gravity[1] + z * s.gravity[2])
    for r in range(t, n_pairs, threads):
        if s.status[r] == ACTIVE:
            partial[t, ELASTIC] += s.out[r, OUT_ELASTIC]
            partial[t, CONTACTS] += 1.0


def _threads(n: int) -> tuple[int, int, int]:
    """``(threads, blocks, threads per block)`` of the pass over ``n`` rows (2 threads under the
    simulator, whose threads are Python threads)."""
    if backend.simulated():
        return 2, 1, 2
    threads = max(1, -(-n // ROWS_PER_THREAD))
    per_block = 128
    return threads, -(-threads // per_block), per_block


def numbers(s: Sums, images, cell, n_pairs: int, dt: float) -> RunNumbers:
    """The run's numbers from the device's arrays (one pass, ~(9 + D) * 8 bytes a thread back);
    ``images``, ``cell``: the periodic cell's image counters and cell (None outside one)."""
    n_terms = s.diss_terms.shape[1]
    threads, blocks, per_block = _threads(max(s.pos.shape[0], n_pairs))
    partial_device = backend.device_zeros((threads, N_NUMBERS + n_terms), np.float64)
    with backend.cpu_arithmetic():   # compiled at the first launch, as the step's kernels: no fused multiply-adds
        _sums[blocks, per_block](int(n_pairs), float(dt), s, images, cell, partial_device)
    partial = np.zeros((threads, N_NUMBERS + n_terms))
    backend.to_host(partial_device, partial)
    total = partial.sum(axis=0)   # a fixed order for a fixed number of threads: the same bits on repeat
    travel = float(np.max(partial[:, TRAVEL])) if not np.isnan(partial[:, TRAVEL]).any() else float("nan")
    energy = EnergySums(float(total[KINETIC]), float(total[ROTATIONAL]), float(total[GRAVITATIONAL]),
                        float(total[ELASTIC]), float(total[DISSIPATED]), float(total[DAMPING]), float(total[BOUNDARY]),
                        tuple(float(x) for x in total[N_NUMBERS:]))
    return RunNumbers(energy, int(total[CONTACTS]), travel)
