"""Sensors: record any body, wall, contact or global quantity over time, in memory and/or to CSV.

A :class:`Recorder` is a reporter: the run loop stops the compiled kernel exactly at the steps it
is due (every ``every`` steps or every ``interval`` seconds), so recording never changes the
trajectory.  Recording costs one Python call per record: ``every=1`` is fine for a few bodies
over some thousands of steps (a force-overlap loop), use a larger ``every`` in big runs.

Created with :meth:`contactlab.Simulation.record`::

    rec = sim.record("overlap", "normal_force", contact=(0, 1))      # two spheres, every step
    sim.run(duration=1e-3)
    rec["overlap"], rec["normal_force"], rec.time                    # NumPy arrays
    rec.plot("overlap", "normal_force")                              # the force-overlap loop
    rec.to_csv("loop.csv")
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._arguments import as_bool, as_path, did_you_mean
from ..errors import InputError, OutputError
from ..plot import plot_recorded
from .atomic import ensure_writable_folder
from .reporter import Reporter

__all__ = ["Recorder", "SPHERE_QUANTITIES", "WALL_QUANTITIES", "GLOBAL_QUANTITIES"]

#: quantities of one sphere: name -> (unit, attribute of the simulation state)
SPHERE_QUANTITIES = {
    "position": ("m", "positions"),
    "velocity": ("m/s", "velocities"),
    "angular_velocity": ("rad/s", "angular_velocities"),
    "orientation": ("-", "orientations"),
    "force": ("N", "forces"),
    "torque": ("N m", "torques"),
}
#: quantities of one wall
WALL_QUANTITIES = {"point": "m", "velocity": "m/s", "force": "N"}
#: whole-simulation quantities (energy terms in J, see ``Simulation.energy``)
GLOBAL_QUANTITIES = ("kinetic", "rotational", "gravitational", "elastic", "dissipated", "total", "boundary_work",
                     "balance_error", "n_contacts", "linear_momentum", "angular_momentum")
_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3}


class Recorder(Reporter):
    """Records quantities of one target every ``every`` steps (or ``interval`` s).

    Parameters
    ----------
    quantities : sequence of str
        What to record; the allowed names depend on the target (see
        :meth:`contactlab.Simulation.record`).
    target : tuple
        ``("sphere", k)``, ``("wall", w)``, ``("contact", i, j)``, ``("contact_wall", i, w)``,
        ``("global",)`` or ``("region", region, sample)`` (``sample(sim, quantities)`` returns the
        values by name: :mod:`contactlab.measure.recording`).
    every, interval : int steps or float s
    csv : path, optional
        Also stream the records to this CSV file (one column per scalar: a vector ``v`` gives
        ``v_x``, ``v_y``, ``v_z``), written as they come and flushed at ``close``.
    keep : bool
        Keep the records in memory (default True).
    """

    def __init__(self, quantities, target, *, every=None, interval=None, csv=None, keep: bool = True):
        if every is None and interval is None:
            every = 1
        super().__init__(interval=interval, every=every)
        if isinstance(quantities, str):
            quantities = (quantities,)
        self.quantities = tuple(str(q) for q in quantities)
        if not self.quantities:
            raise InputError("record: name at least one quantity")
        self.target = tuple(target)
        self.keep = as_bool("keep", keep)
        self.csv_path = None if csv is None else as_path("record: csv", csv)
        self._csv = None
        self._rows: dict[str, list] = {"time": [], "step": []}
        for q in self.quantities:
            self._rows[q] = []

    # ------------------------------------------------------------------ sampling
    def output_files(self) -> list[Path]:
        return [] if self.csv_path is None else [self.csv_path]

    def attach(self, sim) -> None:
        super().attach(sim)
        sample = self._sample(sim)  # validates the names against the target
        if self.csv_path is not None:
            ensure_writable_folder(self.csv_path.parent, "recorder CSV folder")
            try:
                self._csv = open(self.csv_path, "w", encoding="utf-8")
            except OSError as exc:
                raise OutputError(f"cannot write {str(self.csv_path)!r}: {exc.strerror or exc}") from None
            header = ["time", "step"]
            for q in self.quantities:
                header += _columns(q, np.ndim(sample[q]) and np.size(sample[q]))
            self._csv.write(",".join(header) + "\n")

    def _sample(self, sim) -> dict:
        kind = self.target[0]
        if kind == "sphere":
            k = self.target[1]
            values = {}
            for q in self.quantities:
                if q not in SPHERE_QUANTITIES:
                    raise InputError(f"record: unknown sphere quantity {q!r}{did_you_mean(q, SPHERE_QUANTITIES)}; "
                                     f"allowed: {', '.join(SPHERE_QUANTITIES)}")
                values[q] = getattr(sim.state, SPHERE_QUANTITIES[q][1])[k].copy()
            return values
        if kind == "wall":
            w = self.target[1]
            values = {}
            for q in self.quantities:
                if q == "point":
                    values[q] = sim.state.wall_points[w].copy()
                elif q == "velocity":
                    values[q] = sim.state.wall_velocities[w].copy()
                elif q == "force":
                    values[q] = sim.wall_forces()[w]
                else:
                    raise InputError(f"record: unknown wall quantity {q!r}{did_you_mean(q, WALL_QUANTITIES)}; "
                                     f"allowed: {', '.join(WALL_QUANTITIES)}")
            return values
        if kind == "region":   # ("region", region, sample(sim, quantities)): see contactlab.measure.recording
            return self.target[2](sim, self.quantities)
        if kind in ("contact", "contact_wall"):
            if kind == "contact":
                data = sim.contact(self.target[1], self.target[2])
            else:
                data = sim.contact(self.target[1], wall=self.target[2])
            values = {}
            for q in self.quantities:
                if q not in data:
                    raise InputError(f"record: unknown contact quantity {q!r}{did_you_mean(q, data)}; "
                                     f"allowed: {', '.join(sorted(data))}")
                v = data[q]
                values[q] = v.copy() if isinstance(v, np.ndarray) else v
            return values
        e = None
        values = {}
        for q in self.quantities:
            if q == "n_contacts":
                values[q] = sim.n_contacts()
            elif q == "linear_momentum":
                values[q] = sim.linear_momentum()
            elif q == "angular_momentum":
                values[q] = sim.angular_momentum()
            elif q in GLOBAL_QUANTITIES:
                e = sim.energy() if e is None else e
                values[q] = e[q]
            else:
                raise InputError(f"record: unknown quantity {q!r}{did_you_mean(q, GLOBAL_QUANTITIES)}; allowed: "
                                 f"{', '.join(GLOBAL_QUANTITIES)} "
                                 f"(or give sphere=, wall= or contact= for body and contact quantities)")
        return values

    def report(self, sim) -> None:
        values = self._sample(sim)
        if self.keep:
            self._rows["time"].append(sim.time)
            self._rows["step"].append(sim.step)
            for q in self.quantities:
                self._rows[q].append(values[q])
        if self._csv is not None:
            cells = [repr(float(sim.time)), str(sim.step)]
            for q in self.quantities:
                cells += [repr(float(x)) for x in np.atleast_1d(np.asarray(values[q], dtype=float)).ravel()]
            self._csv.write(",".join(cells) + "\n")

    def close(self, sim=None) -> None:
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        super().close(sim)

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return len(self._rows["time"])

    @property
    def time(self) -> np.ndarray:
        """(T,) times of the records, s."""
        return np.asarray(self._rows["time"], dtype=float)

    @property
    def steps(self) -> np.ndarray:
        """(T,) step numbers of the records."""
        return np.asarray(self._rows["step"], dtype=np.int64)

    def __getitem__(self, name: str) -> np.ndarray:
        """The records of a quantity: (T,), (T, 3) or (T, 3, 3); also ``"q.x"`` (a component), ``"q.zz"``
        (a tensor's component) and ``"|q|"`` (the norm)."""
        if name == "time":
            return self.time
        if name == "step":
            return self.steps
        if name.startswith("|") and name.endswith("|"):
            v = self[name[1:-1]]
            return np.linalg.norm(v, axis=1) if v.ndim == 2 else np.abs(v)
        base, _, comp = name.rpartition(".")
        if base and comp in _COMPONENTS and base in self._rows:
            return self[base][:, _COMPONENTS[comp]]
        if base and len(comp) == 2 and set(comp) <= set("xyz") and base in self._rows:   # a tensor's "zz"
            return self[base][:, _COMPONENTS[comp[0]], _COMPONENTS[comp[1]]]
        if name not in self._rows:
            raise KeyError(f"{name!r} is not recorded; recorded: {', '.join(self.quantities)} (and time, step)")
        return np.asarray(self._rows[name], dtype=float)

    def as_dict(self) -> dict[str, np.ndarray]:
        """All records as arrays, with ``time`` and ``step``."""
        return {k: self[k] for k in ("time", "step") + self.quantities}

    def to_csv(self, path) -> Path:
        """Write the in-memory records to a CSV file (vectors as ``q_x, q_y, q_z``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        cols, names = [self.time[:, None], self.steps[:, None].astype(float)], ["time", "step"]
        for q in self.quantities:
            v = self[q]
            cols.append(v[:, None] if v.ndim == 1 else v.reshape(len(v), -1))
            names += _columns(q, 0 if v.ndim == 1 else int(np.prod(v.shape[1:])))
        table = np.hstack(cols) if len(self) else np.zeros((0, len(names)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(",".join(names) + "\n")
            for row in table:
                f.write(",".join(repr(float(x)) for x in row) + "\n")
        return path

    def plot(self, x: str = "time", y: str | None = None, *, ax=None, **style):
        """Plot ``y`` against ``x`` (names as for ``rec[...]``); returns the matplotlib Axes.

        See :func:`contactlab.plot.plot_recorded`.
        """
        return plot_recorded(self, x, y, ax=ax, **style)

    def loop_area(self, x: str = "overlap", y: str = "normal_force") -> float:
        """Signed area enclosed by the recorded ``y``-``x`` path (trapezoidal rule), e.g. the energy
        (J) dissipated over a closed force-overlap cycle."""
        xs, ys = self[x], self[y]
        return float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(xs)))


def _columns(name: str, size: int) -> list[str]:
    """CSV column names of a quantity: the name for a scalar (``size`` 0), else one per component."""
    if not size:
        return [name]
    suffixes = {3: "xyz", 4: "wxyz", 9: ["xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz"]}.get(
        size, [str(c) for c in range(size)])
    return [f"{name}_{c}" for c in suffixes]
