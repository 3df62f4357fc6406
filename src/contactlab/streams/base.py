"""What inlets and outlets share: when they act, and what a checkpoint keeps of them.

A stream acts every ``every`` steps counted from the step at which it was added (or, on a
restart, from that step of the run it continues), at step boundaries between kernel calls: the run
loop stops the kernel at those steps exactly as it does for reporters, so the steps in between are
those of a run without streams.  Its *configuration* (region, sizes, rate, ...) is given again
when a checkpoint is resumed (like reporters, streams are attached again); its *dynamic state*
(random generator, counters, records) is in the checkpoint and is taken back by the stream added
in the same place (the first inlet or outlet added gets the first saved one, ...).  The
configuration's scalar parameters are compared, so a different stream is refused.
"""
from __future__ import annotations

import json

import numpy as np

from .._arguments import as_int
from ..errors import InputError

__all__ = ["Stream"]


class Stream:
    """Base of :class:`~contactlab.streams.inlet.Inlet` and :class:`~contactlab.streams.outlet.Outlet`.

    Subclasses set ``kind`` and implement :meth:`config`, :meth:`dynamic` and :meth:`restore`.
    """

    kind = ""

    def __init__(self, every, anchor_step: int):
        #: steps between two actions
        self.every = as_int(f"{self.kind}: every", every, low=1)
        #: the step its schedule counts from
        self.anchor_step = int(anchor_step)

    def next_step(self, step: int) -> int:
        """The first step ``> step`` at which it acts (it acted at ``step`` already if due then)."""
        k = max(1, (step - self.anchor_step) // self.every + 1)
        return self.anchor_step + k * self.every

    def due(self, step: int) -> bool:
        return step > self.anchor_step and (step - self.anchor_step) % self.every == 0

    # ------------------------------------------------------------------ checkpoints
    def config(self) -> dict:
        """The scalar parameters a resumed run must give again (compared on restart)."""
        return {"every": self.every}

    def dynamic(self) -> tuple[dict, dict]:
        """``(scalars, arrays)``: what changes during the run (JSON-able scalars, NumPy arrays)."""
        return {"anchor_step": self.anchor_step}, {}

    def restore(self, scalars: dict, arrays: dict) -> None:
        self.anchor_step = int(scalars["anchor_step"])

    def saved(self) -> tuple[dict, dict]:
        """The entry of a checkpoint: ``({"kind", "config", "dynamic"}, arrays)``."""
        scalars, arrays = self.dynamic()
        return {"kind": self.kind, "config": self.config(), "dynamic": scalars}, arrays

    def take_saved(self, entry: dict, arrays: dict, position: int) -> None:
        """Take back the dynamic state of a checkpoint's stream ``position``, refusing another stream."""
        mine = json.loads(json.dumps(self.config()))
        if entry["kind"] != self.kind or entry["config"] != mine:
            raise InputError(f"the checkpoint's stream {position} is an {entry['kind']} with {entry['config']}, but "
                             f"the stream added in its place is an {self.kind} with {mine}: add the same inlets and "
                             f"outlets in the same order as in the run that wrote the checkpoint")
        self.restore(entry["dynamic"], {k: np.asarray(v) for k, v in arrays.items()})
