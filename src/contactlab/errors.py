"""Exceptions raised by contactlab.

All of them derive from :class:`ContactlabError`, so ``except cl.ContactlabError`` catches anything
the library raises on purpose.  Input errors also derive from :class:`ValueError` so that generic
code that validates input keeps working.
"""
from __future__ import annotations

__all__ = ["ContactlabError", "InputError", "SceneFileError", "StabilityError", "StabilityWarning", "CheckpointError", "OutputError",
           "ImportNotAllowedError", "RunTooLongError", "KernelCacheWarning",
           "SimulationBlowUp", "LawError", "UncachedLawWarning", "StorageOrderWarning"]


class ContactlabError(Exception):
    """Base class of every error raised on purpose by contactlab."""


class InputError(ContactlabError, ValueError):
    """A value given by the user is invalid (the message names the value and what is allowed)."""


class SceneFileError(InputError):
    """A scene file (TOML) is malformed, has an unknown key or an invalid value."""


class StabilityError(InputError):
    """The requested time step is above the stability limit of the contacts that can occur."""


class CheckpointError(InputError):
    """A checkpoint file cannot be resumed: it is missing, truncated or damaged, not a contactlab
    checkpoint, or of another format version (the message names the file and what is wrong)."""


class ImportNotAllowedError(InputError):
    """A data file (a scene file, a checkpoint) names a module to import (``type = "mod:name"`` of a
    user-defined law) that the person running contactlab has not allowed: importing it would run
    its code.  Raised before the import; the message names the module, the file and how to allow
    it (``allow_import=...``, ``--allow-import MOD``; see :mod:`contactlab.imports`)."""


class RunTooLongError(InputError):
    """A run that cannot end in any reasonable time (more than a week of wall time at the fastest
    or at the measured rate), or a time step so far below the stability limit that every run is
    (:mod:`contactlab.run_length`); ``allow_long_run=True`` insists."""


class OutputError(InputError):
    """An output file or folder cannot be written (a path through a file, no permission, a full
    disk).  Raised when a reporter is attached or ``contactlab run`` starts, before any step is
    taken, or when a write fails during a run (the previous checkpoint is then left intact)."""


class LawError(ContactlabError, ValueError):
    """A user-defined contact law is wrong: it returns the wrong shape, writes outside its history,
    produces NaN or cannot be compiled.  The message names the law, the offending line or value
    and a hint; ``law`` holds the law's name, ``line`` the ``file:line`` when known."""

    def __init__(self, message: str, *, law: str = "", line: str = ""):
        super().__init__(message)
        self.law = law
        self.line = line


class UncachedLawWarning(UserWarning):
    """A contact law defined in ``__main__`` or a notebook is compiled in this process only (its
    compiled kernels cannot be cached on disk: move it to an importable module to cache them)."""


class KernelCacheWarning(UserWarning):
    """A file of the kernel cache was damaged (empty, truncated, not what was written, unreadable)
    and has been rebuilt: a generated module rewritten, a kernel recompiled and its Numba file
    replaced.  One line per damaged file, located at the file; the run goes on with correct code.
    Seen again on every run, it means that something keeps damaging the cache (a full disk, two
    processes of different versions writing one folder): clear it (docs/performance.md)."""


class StabilityWarning(UserWarning):
    """A time step runs above the stability limit of the contacts present: given so with
    ``allow_unstable_dt=True``, or reached during a run as a packing is compressed or more
    contacts form (the limit follows the run, see docs/physics.md, "The time step").  The message
    names the body whose contacts set the limit and the step that would be stable; the energy
    watchdog stops the run if the step then creates energy."""


class StorageOrderWarning(UserWarning):
    """The spheres are stored in an order that scatters neighbours in memory (random order, say),
    which can make each step of a large dense scene two to three times as long: sort them with
    :func:`contactlab.packing.spatial_order` before adding them to the scene."""


class SimulationBlowUp(ContactlabError):
    """A running simulation produced a non-finite value or an excessive overlap and was stopped.

    Attributes
    ----------
    time : float
        Simulated time (s) of the step at which the problem was detected.
    step : int
        Index of that step.
    particles : tuple of int
        Indices of the body or bodies involved.
    cause : str
        What the numbers say caused it (see :mod:`contactlab.diagnosis`): ``"time_step"`` (dt near
        or above the stability limit), ``"soft_contact"`` (the overlap the law's stiffness gives
        for the impact speed or the load: allow it with ``max_overlap`` or stiffen the contact),
        ``"driven_body"`` (a prescribed motion pushing into a body that cannot get away),
        ``"law_non_finite"`` (the contact law returned NaN or inf), ``"state_non_finite"``,
        ``"energy_created"`` (the energy watchdog: the balance error grew beyond its share of the
        energy in play; ``details`` names the bodies, the step and the step that would be stable),
        or ``""`` when not diagnosed.
    details : dict
        The numbers behind the diagnosis (``dt``, ``stability_limit``, ``overlap``,
        ``overlap_ratio``, ``expected_peak_overlap``, ``impact_speed``, ... where they apply).
    """

    def __init__(self, message: str, *, time: float, step: int, particles: tuple[int, ...] = (), cause: str = "",
                 details: dict | None = None):
        super().__init__(message)
        self.time = time
        self.step = step
        self.particles = tuple(int(p) for p in particles)
        self.cause = cause
        self.details = dict(details or {})
