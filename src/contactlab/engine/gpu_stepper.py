"""The stepper on a GPU: the CPU stepper's state, table and records, its step kernels on the device.

:class:`GpuStepper` is a :class:`~contactlab.engine.stepper.Stepper` whose :meth:`~GpuStepper.advance`
runs the step on an NVIDIA GPU (:mod:`contactlab.engine.gpu_kernels`), rebuilding the neighbour
list there when a body leaves half the skin (:mod:`contactlab.engine.gpu_neighbors`): everything
else -- bonds made, broken bonds logged, the blow-up diagnosis, the time-step policy, the energy
books, servo control, sensors, reporters, checkpoints -- is the CPU stepper's, on the same host
arrays.  One call of :meth:`advance`:

1. copies the records' arrays to the device (the model's read-only arrays once for the stepper's
   life; the state's, the table's and the run's at the call, unless they are still there from the
   last call of the same run and the host changed nothing since, :meth:`resident`);
2. queues the steps in batches, without reading anything back inside a batch: the kernels stop
   by themselves once a step raises a flag (:mod:`contactlab.engine.gpu_kernels`), and the host
   reads the three control numbers once per batch (the batch grows while no flag comes, and
   shrinks when one does, so that few launches are wasted after a flag); a flag that asks only
   for a rebuild is handled on the device, and the steps go on;
3. copies the writable arrays back into the host arrays they came from (the state's own; the
   table's new arrays after a device rebuild), so that the host sees the state on a step boundary
   or in the middle of a step, as after the CPU's call -- at once outside a run, and inside one
   (:meth:`resident`) only when the host reads it (:meth:`to_host`).

At each neighbour-list rebuild on the device the bodies' arrays are permuted into the build's
cell order (:mod:`contactlab.engine.gpu_order`); the copy back puts every array into the user's
order and the table into the CPU's layout.

Inside a run the state reaches the host only where something reads it: a reporter's or sensor's
step, user code (a progress callable), a flag only the host handles, the stability bound's refresh
(every 20 watchdog checks), the end of the run.  The watchdog's energy terms, the speed check and
the progress bar's contact count come from a pass on the device (:meth:`run_numbers`,
:mod:`contactlab.engine.gpu_numbers`); nothing is copied per step.
"""
from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import numba
import numpy as np

from ..errors import LawError
from ..gpu import DeviceError, backend
from . import gpu_order, layout
from .codegen import gpu_kernel_module
from .gpu_neighbors import Relabel, build_list, cell_order, plane_walls, wrap_into_cell
from .gpu_numbers import RunNumbers, Sums, numbers
from .launch import launch
from .stepper import Stepper

__all__ = ["GpuStepper"]


class GpuStepper(Stepper):
    """A :class:`Stepper` whose step kernels run on the GPU (same arguments)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: the model's read-only arrays on the device: id -> (host array, device array)
        self._resident: dict[int, tuple] = {}
        #: steps queued before the control numbers are read back (adapted as the run goes)
        self.batch = 8
        #: neighbour lists built on the device in the current call (the last one is the table's)
        self._built: list = []
        #: neighbour-list rebuilds done on the device so far (the others ran on the host)
        self.device_builds = 0
        #: inside a run (:meth:`resident`): the device records, the (device, host) pairs to copy back
        #: and the image counters, kept on the device for the next call while the host changes nothing
        self._kept = None
        self._keep = False
        #: calls of :meth:`advance` and uploads of the records so far (a call that found them kept
        #: uploads nothing)
        self.calls = self.uploads = 0
        #: the body each thread takes (:meth:`_body_order`), on the device
        self._order = None
        #: the kernels specialized for their argument types (:meth:`_kernels_for`), by those types
        self._specializations: dict = {}
        #: plane walls' kinds and shapes on the device, for the device rebuild (set on first use)
        self._plane_walls = None
        #: inside a run: the (device, host) pairs not yet copied back (None: the host's copy is current)
        self._pending = None
        #: copies of the state back to the host so far (inside a run only where the host reads it)
        self.downloads = 0
        #: the run numbers of the device's state (:meth:`run_numbers`), by (step, dt)
        self._numbers = None
        self._inertia = None
        #: the bodies' storage on the device (:mod:`contactlab.engine.gpu_order`): the user's index of
        #: the body stored at each row (None: the user's order, as uploaded), and the host arrays
        #: copied back row by row into the user's order
        self._labels = None
        self._per_body: set = set()
        #: the (device, host) pairs of the current call (a permutation swaps the device arrays)
        self._copies: list = []
        self._gpu_kernels()

    def device_rebuild_possible(self) -> bool:
        """Whether the neighbour list can be rebuilt on the device (:mod:`contactlab.engine.gpu_neighbors`):
        every scene the GPU runs (spheres, plane and cylinder walls, bonds, periodic cells and
        Lees-Edwards shear, servo walls, switched-off pairs); the host's rebuild (the state copied
        there and back) stays for what the GPU refuses."""
        return self.model.n_triangles == 0 and self.model.n_clumps == 0 and self.shape_features is False

    def _gpu_kernels(self) -> None:
        # under the simulator the kernels call the plain-Python twin of the CPU's building blocks:
        # the passes run as on a device, and nothing is compiled for a CPU that stands in for one
        self.gpu = gpu_kernel_module(self.law.law_module, shapes=self.shape_features,
                                     dropped=self.history_layout.dropped, row_length=self.row_length,
                                     debug=backend.simulated())

    def set_law(self, law, pair_params: np.ndarray) -> None:
        self.to_host()
        self._kept = None
        super().set_law(law, pair_params)
        self._gpu_kernels()   # the history layout may have changed with the law

    # ------------------------------------------------------------------ residency within a run
    @contextlib.contextmanager
    def resident(self):
        """A ``with`` block (the run loop) in which the records stay on the device from one call to
        the next, and the state comes back to the host only when read (:meth:`to_host`); it is
        uploaded again only after the host changed something (:meth:`host_changed`: a flag
        handled, a rebuild or bond made on the host, user code).  The host's copy is current
        again when the block ends."""
        self._keep = True
        try:
            yield
        finally:
            self._keep = False
            self._kept = None
            self.to_host()

    def to_host(self) -> None:
        """Bring the state and table back to the host if the device's copy is newer (inside a run)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.download(pending)
            self.downloads += 1

    def host_changed(self) -> None:
        """The host wrote to the state or the table: the next call uploads the records again."""
        self.to_host()
        self._kept = None

    def run_numbers(self, dt: float) -> RunNumbers | None:
        """The energy sums, active contacts and fastest travel of the device's state, summed there
        (:func:`contactlab.engine.gpu_numbers.numbers`), while the host's copy is not current;
        None when it is (the host computes them)."""
        if self._pending is None:
            return None
        key = (self.state.step, float(dt), self.calls)
        if self._numbers is None or self._numbers[0] != key:
            bodies, books, bounds, table, run = self._device
            if self._inertia is None or self._inertia[0] is not self.model.inertia:
                self._inertia = (self.model.inertia, backend.to_device(np.ascontiguousarray(self.model.inertia)))
            inertia = self._inertia[1] if self._labels is None else gpu_order.gather(self._inertia[1], self._labels)
            s = Sums(bodies.vel, bodies.angvel, bodies.pos, bodies.mass, inertia, bodies.radius, bodies.fixed,
                     bounds.gravity, books.dissipated, books.diss_terms, books.damping_work, books.boundary_work,
                     table.status, table.out)
            self._numbers = (key, numbers(s, self._images, bounds.cell, self.table.n_pairs, dt))
        return self._numbers[1]

    def handle_flags(self, dt: float) -> None:
        if self.flags.any():
            self.to_host()
            self._kept = None   # what follows writes the host's state or table
        super().handle_flags(dt)

    def rebuild(self, extra_pairs=None) -> None:
        self.to_host()
        self._kept = None
        super().rebuild(extra_pairs)

    def make_bonds(self, i: np.ndarray, j: np.ndarray) -> int:
        self.to_host()
        self._kept = None
        return super().make_bonds(i, j)

    # ------------------------------------------------------------------ transfers
    def _to_device(self, x, memo: dict, copies: list):
        """The device twin of a record (the same record type, its arrays on the device)."""
        if isinstance(x, np.ndarray):
            key = (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype.str)
            if key in memo:  # one host array (or an identical view of it) in several fields
                return memo[key]
            if not x.flags.writeable:
                hit = self._resident.get(id(x))
                if hit is None or hit[0] is not x:
                    hit = self._resident[id(x)] = (x, backend.to_device(x))
                device = hit[1]
            else:
                device = backend.to_device(x)
                copies.append((device, x))
            memo[key] = device
            return device
        if isinstance(x, tuple):
            items = [self._to_device(f, memo, copies) for f in x]
            return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
        return x

    def upload(self, host_records) -> tuple[tuple, list]:
        """The records on the device and the (device, host) pairs to copy back; a scene the
        device's memory cannot hold is refused first (:func:`check_device_memory`)."""
        check_device_memory(host_records, self.table, self._resident)
        memo: dict = {}
        copies: list = []
        device = self._to_device(tuple(host_records), memo, copies)
        _check_no_partial_aliases([host for _, host in copies])
        return device, copies

    def _adopt_built(self, copies) -> None:
        """The last list built on the device becomes the host table's: new host arrays (filled when
        the state is copied back) in place of the old ones, in ``copies`` too; the counts now."""
        if not self._built:
            return
        t = self.table
        replaced = {id(a) for a in (t.i_start, t.pair_i, t.pair_j, t.j_start, t.j_pairs, t.hist, t.out, t.status,
                                    t.bound_start, t.bound_pairs)}
        new = self._built[-1]

        def host(device):
            return np.empty(device.shape, dtype=device.dtype)

        t.pair_i, t.pair_j, t.hist, t.out, t.status = (host(new.pair_i), host(new.pair_j), host(new.hist),
                                                       host(new.out), host(new.status))
        t.i_start, t.j_start, t.j_pairs = host(new.i_start), host(new.j_start), host(new.j_pairs)
        if new.bound_start is not None:
            t.bound_start, t.bound_pairs = host(new.bound_start), host(new.bound_pairs)
        # the pairs to copy back from now on: the new list's arrays in place of the old ones
        copies[:] = [(d, h) for d, h in copies if id(h) not in replaced]
        copies += [(new.pair_i, t.pair_i), (new.pair_j, t.pair_j), (new.hist, t.hist), (new.out, t.out),
                   (new.status, t.status), (new.i_start, t.i_start), (new.j_start, t.j_start),
                   (new.j_pairs, t.j_pairs)]
        if new.bound_start is not None:
            copies += [(new.bound_start, t.bound_start), (new.bound_pairs, t.bound_pairs)]
        t.n_pairs = new.n_pairs
        t.builds += len(self._built)
        self.device_builds += len(self._built)
        self._built = []

    def _rebuild_on_device(self, device, dt: float, done: int):
        """The neighbour list rebuilt on the device (records in, records out: the Table record with
        the new list's arrays); ``done``: the steps this call has completed (for an error's time)."""
        bodies, books, bounds, table, run = device
        if bounds.cylinders is not None:
            walls = (bounds.cylinders.kind, bounds.cylinders.shape)
        else:
            if self._plane_walls is None or self._plane_walls[0].shape[0] != bounds.wall_point.shape[0]:
                self._plane_walls = plane_walls(bounds.wall_point.shape[0])
            walls = self._plane_walls
        cell = None
        if bounds.cell is not None:
            step = self.state.step + done
            cell = wrap_into_cell(bodies, books, bounds, self._images, self.model.radius, self.table.reach,
                                  self.state.time_at(step, dt), step)
        t = self.table
        max_radius = float(self.model.radius.max())
        relabel = None
        if backend.BODY_ORDER == "sorted":
            # the spatial sort: the bodies stored in this build's cell order from now on
            items = cell_order(bodies.pos, bodies.radius, bodies.fixed, t.reach, max_radius, cell)
            old_labels = self._labels if self._labels is not None else gpu_order.identity(bodies.pos.shape[0])
            bodies, books, bounds, table, run = self._permute((bodies, books, bounds, table, run), items)
            relabel = Relabel(self._labels, gpu_order.rank_of(self._labels), items, old_labels)
        built = build_list(bodies, bounds, table, t.reach, max_radius, walls, t.bond_column, cell,
                           t.n_bodies - t.n_spheres if t.track_boundaries else -1, self.exclusions, relabel)
        if built.bound_start is not None:
            bounds = bounds._replace(servo=bounds.servo._replace(pair_i=built.pair_i, bound_start=built.bound_start,
                                                                 bound_pairs=built.bound_pairs))
        self._built.append(built)
        table = table._replace(i_start=built.i_start, pair_j=built.pair_j, j_start=built.j_start,
                               j_pairs=built.j_pairs, hist=built.hist, out=built.out, status=built.status)
        return bodies, books, bounds, table, run

    def _permute(self, device, items):
        """The records (and the image counters) with every per-body array gathered by ``items``
        (``new[q] = old[items[q]]``, :func:`contactlab.engine.gpu_order.permuted`), the labels
        following; the pairs to copy back point at the new arrays."""
        n = device[0].pos.shape[0]
        memo: dict = {}
        device = tuple(gpu_order.permuted(r, items, n, memo) for r in device)
        if self._images is not None:
            memo[id(self._images)] = (gpu_order.gather(self._images, items), self._images)
            self._images = memo[id(self._images)][0]
        labels = self._labels if self._labels is not None else gpu_order.identity(n)
        self._labels = gpu_order.gather(labels, items)
        swapped = []
        for d, h in self._copies:
            new = memo.get(id(d))
            if new is not None:
                self._per_body.add(id(h))
                d = new[0]
            swapped.append((d, h))
        self._copies[:] = swapped
        return device

    def download(self, copies) -> None:
        """Copy the device's writable arrays back into the host arrays they came from; with the
        bodies stored in another order (:mod:`contactlab.engine.gpu_order`), each per-body array
        row by row into the user's order and the contact table into the CPU's layout."""
        labels = None
        if self._labels is not None:
            labels = np.empty(self._labels.shape[0], dtype=gpu_order.LABEL)
            backend.to_host(self._labels, labels)
        t = self.table
        table_arrays = {id(a): name for name, a in (("pair_i", t.pair_i), ("pair_j", t.pair_j), ("hist", t.hist),
                                                     ("out", t.out), ("status", t.status), ("i_start", t.i_start),
                                                     ("j_start", t.j_start), ("j_pairs", t.j_pairs),
                                                     ("bound_start", t.bound_start),
                                                     ("bound_pairs", t.bound_pairs)) if a is not None}
        stored = {}
        for device, host in copies:
            if host.size == 0:
                continue
            if labels is not None and id(host) in table_arrays:
                stored[table_arrays[id(host)]] = device
                continue
            if host.flags.c_contiguous and (labels is None or id(host) not in self._per_body):
                backend.to_host(device, host)
                continue
            tmp = np.empty(host.shape, dtype=host.dtype)
            backend.to_host(device, tmp)
            if labels is not None and id(host) in self._per_body:
                host[labels] = tmp
            else:
                host[...] = tmp
        if stored:
            self._table_to_host(labels, stored)

    def _table_to_host(self, labels, stored: dict) -> None:
        """The device's table (storage order) into the host table, in the CPU's layout
        (:func:`contactlab.engine.gpu_order.user_table`)."""
        t = self.table

        def host(name):
            d = stored[name]
            a = np.empty(d.shape, dtype=d.dtype)
            backend.to_host(d, a)
            return a

        n = labels.shape[0]
        rows = {name: host(name) for name in ("hist", "out", "status")}
        i_start, pair_i, pair_j, rows, j_start, j_pairs, bound_start, bound_pairs = gpu_order.user_table(
            n, labels, host("i_start"), host("pair_j"), rows, t.n_pairs,
            t.n_bodies - t.n_spheres if "bound_start" in stored else -1)   # (the servo walls' CSR if built)
        p = t.n_pairs
        t.i_start[...] = i_start
        t.pair_i[:p], t.pair_j[:p] = pair_i, pair_j
        t.hist[:p], t.out[:p], t.status[:p] = rows["hist"], rows["out"], rows["status"]
        t.j_start[...] = j_start
        t.j_pairs[:len(j_pairs)] = j_pairs
        if bound_start is not None:
            t.bound_start[...] = bound_start
            t.bound_pairs[:len(bound_pairs)] = bound_pairs

    # ------------------------------------------------------------------ the step
    def _body_order(self, n: int):
        """The body each thread of the per-body kernels takes (:data:`backend.BODY_ORDER`): the
        bodies' own order, or with ``"cells"`` the cell order of the last neighbour build on the
        device (the bodies' own order until there is one)."""
        if backend.BODY_ORDER == "cells" and self._built:
            self._order = self._built[-1].items   # (stored as uploaded: in the user's order)
        elif self._order is None or self._order.shape[0] != n:
            self._order = backend.to_device(np.arange(n, dtype=np.int32))
        return self._order

    def _kernels_for(self, per, order, dt, control, device) -> SimpleNamespace:
        """The step's kernels specialized for the argument types of this call: typed here once,
        where numba-cuda's plain launch types every argument at every launch (``numba.typeof`` of
        the five records is ~0.4 ms on a CPU core, four launches a step).  The types change only
        with the records' make-up (a new kernel module, a feature switched on), not with a rebuild."""
        g = self.gpu
        key = (id(g), numba.typeof(order), *(numba.typeof(r) for r in device))
        kernels = self._specializations.get(key)
        if kernels is None:
            bodies, books, bounds, table, run = device
            kernels = SimpleNamespace(
                pairs=g.pairs.specialize(per, order, dt, control, *device),
                reduction=g.reduction.specialize(per, order, dt, control, *device),
                first_half=g.first_half.specialize(per, order, dt, control, bodies, table, run),
                boundaries=g.boundaries.specialize(dt, True, True, control, *device),
                predict_from_state=g.predict_from_state.specialize(per, order, bodies))
            self._specializations[key] = kernels
        return kernels

    def advance(self, n_steps: int, dt: float, resume: bool) -> tuple[int, bool]:
        """One call of the step on the GPU (as :meth:`Stepper.advance`: ``n_steps = -1`` evaluates
        the forces of the current state only); returns ``(steps completed, mid_step)``."""
        self.flags[:] = 0
        if n_steps == 0:
            return 0, bool(resume)
        self.calls += 1
        if self._keep and self._kept is not None:
            device, copies, self._images = self._kept
            backend.zero(device[4].flags)
        else:
            self.to_host()   # (nothing pending here: whatever dropped the kept records brought them back)
            self.uploads += 1
            device, copies = self.upload(self.records())
            self._labels = None   # uploaded in the user's order
            self._per_body = set()
            # the image counters of a periodic cell (not read by the step: the wrap at a device
            # rebuild moves them)
            self._images = None
            if self.state.images is not None:
                self._images = backend.to_device(self.state.images)
                copies.append((self._images, self.state.images))
        self._kept = None
        self._built = []
        self._device = device
        self._copies = copies
        interval = sys.getswitchinterval()
        failed = False
        if backend.simulated():
            # the simulator's launcher polls its threads holding the interpreter lock, which each
            # thread needs to enter a compiled function: hand it over often (5 ms by default)
            sys.setswitchinterval(1e-5)
        try:
            with backend.cpu_arithmetic():   # the kernels compile at their first launch: the CPU's arithmetic
                return launch(self.law, self._steps, int(n_steps), float(dt), bool(resume), device)
        except LawError as exc:
            # the kernels compile at their first launch (before the run: the set-up's evaluation)
            raise LawError(f"the GPU compiler (numba-cuda) refuses this law: {exc}\n  hint: on the GPU a law may "
                           f"not allocate (np.zeros, np.empty, lists, dicts), build strings or call Python objects; "
                           f"cl.gpu.check_law(sim) checks a law without a GPU (docs/gpu.md, 'A GPU-safe law')",
                           law=exc.law, line=exc.line) from exc
        except Exception as exc:
            if "OUT_OF_MEMORY" in str(exc):   # a rebuild that found more pairs than the memory holds
                raise DeviceError(f"the GPU ran out of memory at step {self.state.step} ({self.table.n_spheres} "
                                  f"bodies, {self.table.n_pairs} candidate pairs at the last build): run fewer bodies "
                                  f"per GPU, a smaller skin, or device='cpu'") from exc
            raise
        except BaseException:
            failed = True
            raise
        finally:
            sys.setswitchinterval(interval)
            self._adopt_built(copies)
            if self._keep and not failed:
                # inside a run: the state stays on the device until the host reads it (to_host);
                # the flags come back now (the host acts on them)
                self._pending = copies
                backend.to_host(self._device[4].flags, self.flags)
                self._kept = (self._device, copies, self._images)
            else:
                self._pending = None
                self.download(copies)
                self.downloads += 1
                if self._keep:
                    self._kept = (self._device, copies, self._images)

    def _steps(self, n_steps: int, dt: float, resume: bool, device) -> tuple[int, bool]:
        """The CPU's ``_steps`` as kernel launches (:mod:`contactlab.engine.gpu_kernels`)."""
        g = self.gpu
        bodies, books, bounds, table, run = device
        per, blocks, threads = backend.launch_shape(bodies.pos.shape[0])
        control = backend.device_zeros(g.N_CONTROL, np.int64)
        body_grid = (blocks, threads)
        order = self._body_order(bodies.pos.shape[0])
        k = self._kernels_for(per, order, float(dt), control, device)
        if n_steps < 0:
            k.predict_from_state[body_grid](per, order, bodies)
            k.pairs[body_grid](per, order, 0.0, control, bodies, books, bounds, table, run)
            k.reduction[body_grid](per, order, 0.0, control, bodies, books, bounds, table, run)
            backend.synchronize()
            return 0, bool(resume)
        if not resume:
            k.first_half[body_grid](per, order, dt, control, bodies, table, run)
            k.boundaries[1, 1](dt, False, False, control, bodies, books, bounds, table, run)
        queued = 0
        numbers = np.zeros(g.N_CONTROL, dtype=np.int64)
        flags = np.zeros(layout.N_FLAGS, dtype=np.int64)
        on_device = self.device_rebuild_possible()
        if not resume and on_device:
            # the first half may already ask for a rebuild
            backend.to_host(control, numbers)
            queued = -1 if numbers[g.HALTED] else 0
        while queued < n_steps:
            if queued >= 0:
                batch = min(self.batch, n_steps - queued)
                for b in range(batch):
                    last = queued + b == n_steps - 1
                    k.pairs[body_grid](per, order, dt, control, bodies, books, bounds, table, run)
                    k.reduction[body_grid](per, order, dt, control, bodies, books, bounds, table, run)
                    if not last:
                        k.first_half[body_grid](per, order, dt, control, bodies, table, run)
                    k.boundaries[1, 1](dt, True, last, control, bodies, books, bounds, table, run)
                queued += batch
                backend.to_host(control, numbers)
            if not numbers[g.HALTED]:
                self.batch = min(self.batch * 2, 256)
                continue
            # a flag came: fewer steps queued next time (each queued after it is a wasted launch)
            self.batch = max(1, self.batch // 2)
            backend.to_host(run.flags, flags)
            rebuild_only = flags[layout.FLAG_REBUILD] != 0 and not np.any(np.delete(flags, layout.FLAG_REBUILD))
            if not (on_device and numbers[g.MID] and rebuild_only):
                break
            # in the middle of a step, only the list to rebuild: on the device, and on
            bodies, books, bounds, table, run = self._rebuild_on_device((bodies, books, bounds, table, run), dt,
                                                                        int(numbers[g.DONE]))
            order = self._body_order(bodies.pos.shape[0])
            backend.zero(run.flags)
            backend.to_device_into(np.array([0, numbers[g.DONE], 0], dtype=np.int64), control)
            queued = int(numbers[g.DONE])
            numbers[g.HALTED] = numbers[g.MID] = 0
            self._device = (bodies, books, bounds, table, run)
        return int(numbers[g.DONE]), bool(numbers[g.MID])


def _arrays(x, out: dict) -> dict:
    """The arrays of a record tree, by identity."""
    if isinstance(x, np.ndarray):
        out[id(x)] = x
    elif isinstance(x, tuple):
        for f in x:
            _arrays(f, out)
    return out


def check_device_memory(host_records, table, resident: dict) -> None:
    """Refuse a scene whose records, with the room a neighbour-list rebuild takes (a second table:
    new pair indices, history, outputs and status next to the old; a second copy of the per-body
    arrays while the spatial sort permutes them), exceed the device's free
    memory: a :class:`~contactlab.gpu.DeviceError` saying how much is needed and how much is
    free, before anything is copied (nothing under the simulator)."""
    free = backend.free_memory()
    if free is None:
        return
    arrays = _arrays(tuple(host_records), {})
    needed = sum(a.nbytes for key, a in arrays.items() if key not in resident)
    rows = max(table.n_pairs, 1)
    needed += int(1.5 * rows) * (table.hist.shape[1] * 8 + table.out.shape[1] * 8 + 9) + 64 * table.n_spheres
    if backend.BODY_ORDER == "sorted":
        # the spatial sort at a rebuild gathers the per-body arrays into new ones before freeing the old
        n = table.n_spheres
        needed += sum(a.nbytes for a in arrays.values() if a.ndim >= 1 and a.shape[0] == n)
    if needed > free:
        raise DeviceError(f"this scene needs about {needed / 1e9:.3g} GB on the GPU ({table.n_spheres} bodies, "
                          f"{table.n_pairs} candidate pairs, with room for a neighbour-list rebuild); "
                          f"{free / 1e9:.3g} GB of its memory is free: run fewer bodies per GPU, a smaller skin "
                          f"(fewer candidate pairs), or device='cpu'")


def _check_no_partial_aliases(arrays) -> None:
    """The writable arrays copied to the device must not overlap unless they are the same view
    (each becomes its own device array: a write through one would not be seen through another)."""
    spans = []
    for a in arrays:
        if a.size == 0:
            continue
        lo, hi = np.byte_bounds(a) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(a)
        spans.append((lo, hi))
    spans.sort()
    for (lo0, hi0), (lo1, hi1) in zip(spans, spans[1:]):
        if lo1 < hi0:
            raise RuntimeError("contactlab's GPU records hold two writable arrays that overlap in memory "
                               "(an internal error: please report it)")
