"""The step on a GPU: the CPU engine's per-body and per-pair code, one thread per body.

This file is a *template*, as :mod:`contactlab.engine.kernels` is: :mod:`contactlab.engine.codegen`
writes a copy in which the one marked import (``@@KERNELS@@``) reads from the law's generated CPU
kernel module instead, so that the GPU runs the very functions the CPU runs (the law, its history
bindings, the narrow phases, the kick-drift, the reduction, the boundaries), compiled by numba-cuda
as device functions from the same source; nothing here is specific to a law.  Read as it stands,
the template is Hertz-Mindlin's for spheres and plane walls.

The CPU's ``_steps`` runs a step as a sweep over blocks of bodies; here each pass is a kernel over
all bodies, in the same order (:class:`contactlab.engine.gpu_stepper.GpuStepper` launches them):

1. :func:`first_half` -- ``kick_drift_block`` of each body (the first half kick, the drift, the
   velocity prediction; the rebuild flag when a body leaves half the skin: a race in which every
   writer writes the same 1, the flag array acting as the device's reduction of the largest
   displacement against the skin);
2. :func:`boundaries` -- one thread: the step's count, the stop when a flag was raised, the
   boundaries moved (servo walls, walls, the periodic cell) by ``move_boundaries``;
3. :func:`pairs` -- ``_pairs_chunk`` of each owner body ``i``: its pairs with ``j > i`` and its
   walls, its own side summed in ``owner[i]``, the partner's side stored per pair;
4. :func:`reduction` -- ``reduce_block`` of each body: its own side plus the partner sides of the
   pairs where it is ``j``, gathered through the partner index (CSR, fixed order) exactly as on the
   CPU, gravity, local damping, the energy books, the closing half kick.

No floating-point atomics: every sum is taken by one thread in the CPU's order, so a run gives the
same bits on repeat and matches the CPU engine to rounding (the GPU compiler may contract ``a*b+c``
into one fused multiply-add, the CPU build does not).

Every kernel first reads ``control`` (``HALTED``, ``DONE``, ``MID``: int64 on the device), so that
the host can queue many steps without reading anything back: once a step raises a flag (a rebuild,
a bond event, an overlap beyond the guard, a non-finite value) the kernels after it do nothing, and
the host reads ``control`` and the flags once per batch of steps.  ``per_thread``: bodies per
thread (1 on a GPU; the simulator runs a few threads of many bodies each, as its threads are
Python threads); ``order``: the body each thread takes (thread ``t`` body ``order[t]``): the
bodies' stored order (by default sorted in space at each rebuild, :mod:`contactlab.engine.gpu_order`),
or the cell order of the last neighbour build (``CONTACTLAB_GPU_ORDER=cells``:
threads of a warp then take neighbouring bodies, whose partners overlap).  A body's sums are its
own thread's in either order, so the results are the same bits.
"""
from __future__ import annotations

from contactlab.engine.kernels import _pairs_chunk, kick_drift_block, move_boundaries, reduce_block  # @@KERNELS@@
from contactlab.engine.layout import FLAG_OVERLAP, FLAG_STATE_NAN
from contactlab.gpu.backend import cuda, gpu_kernel

#: the entries of the control array
HALTED, DONE, MID, N_CONTROL = 0, 1, 2, 3

__all__ = ["first_half", "boundaries", "pairs", "reduction", "predict_from_state", "HALTED", "DONE", "MID",
           "N_CONTROL"]


@gpu_kernel
def predict_from_state(per_thread, order, bodies):
    """A force evaluation's predicted velocities: the state's (``n_steps = -1`` of the CPU's
    ``_steps``)."""
    t0 = cuda.grid(1) * per_thread
    vel, angvel, vel_pred, angvel_pred = bodies.vel, bodies.angvel, bodies.vel_pred, bodies.angvel_pred
    for t in range(t0, min(t0 + per_thread, vel.shape[0])):
        p = order[t]
        for d in range(3):
            vel_pred[p, d] = vel[p, d]
            angvel_pred[p, d] = angvel[p, d]


@gpu_kernel
def first_half(per_thread, order, dt, control, bodies, table, run):
    """The first half of a step for the thread's bodies, unless the run halted or this step's
    forces raised the overlap guard or found a non-finite value (the step then ends there)."""
    flags = run.flags
    if control[HALTED] != 0 or flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0:
        return
    t0 = cuda.grid(1) * per_thread
    for t in range(t0, min(t0 + per_thread, bodies.pos.shape[0])):
        p = order[t]
        kick_drift_block(p, p + 1, dt, bodies, table, run, bodies.rigid)


@gpu_kernel
def boundaries(dt, counts, last, control, bodies, books, bounds, table, run):
    """One thread: count the step whose forces were just evaluated (``counts``); halt on the
    overlap guard or a non-finite value (the state is on a step boundary); unless this is the
    call's last step (``last``), move the boundaries and halt in the middle of the step if any
    flag is raised (a rebuild, a bond event: the host acts, then resumes)."""
    if cuda.grid(1) != 0 or control[HALTED] != 0:
        return
    if counts:
        control[DONE] += 1
    flags = run.flags
    if flags[FLAG_OVERLAP] != 0 or flags[FLAG_STATE_NAN] != 0:
        control[HALTED] = 1
        return
    if last:
        return
    move_boundaries(dt, bodies, books, bounds, table, run)
    for f in range(flags.shape[0]):
        if flags[f] != 0:
            control[HALTED] = 1
            control[MID] = 1
            return


@gpu_kernel
def pairs(per_thread, order, dt, control, bodies, books, bounds, table, run):
    """Narrow phase and law of the pairs owned by the thread's bodies (``dt``: the step, 0 for a
    force evaluation)."""
    if control[HALTED] != 0:
        return
    t0 = cuda.grid(1) * per_thread
    for t in range(t0, min(t0 + per_thread, bodies.pos.shape[0])):
        i = order[t]
        _pairs_chunk(i, i + 1, dt, bodies, books, bounds, table, run, bounds.cylinders, bounds.cell)


@gpu_kernel
def reduction(per_thread, order, dt, control, bodies, books, bounds, table, run):
    """Total force and torque, energy books and closing half kick (``dt``; 0: none) of the
    thread's bodies."""
    if control[HALTED] != 0:
        return
    t0 = cuda.grid(1) * per_thread
    for t in range(t0, min(t0 + per_thread, bodies.pos.shape[0])):
        p = order[t]
        reduce_block(p, p + 1, dt, 0.0, bodies, books, bounds, table, run, bodies.rigid)
