"""The validation battery's records: one :class:`Check`, the :class:`ModelProperties` a model
declares, and the :class:`ValidationReport` that :func:`~contactlab.validation.battery.validate`
returns (written to disk by :mod:`contactlab.validation.report`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .formatting import fmt, jsonable
from .report import write_report

__all__ = ["Check", "ModelProperties", "ValidationReport"]


@dataclass
class Check:
    """One check: what was measured (``value``, ``unit``), the criterion, the reference it is
    compared with, whether it passed.  A check that does not apply to the model (``not_applicable``
    gives the reason) counts as passed."""

    name: str
    group: str
    passed: bool
    value: float | None
    unit: str
    criterion: str
    reference: str
    details: str = ""
    figure: str | None = None
    not_applicable: str | None = None
    data: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "n/a" if self.not_applicable else ("pass" if self.passed else "FAIL")

    def to_dict(self) -> dict:
        return {"name": self.name, "group": self.group, "status": self.status.lower(), "passed": bool(self.passed),
                "value": jsonable(self.value), "unit": self.unit, "criterion": self.criterion,
                "reference": self.reference, "details": self.details, "figure": self.figure,
                "not_applicable": self.not_applicable, "data": jsonable(self.data)}

    def line(self) -> str:
        """One line for a terminal: status, group, name, value."""
        value = "" if self.value is None else f" = {fmt(self.value)}{(' ' + self.unit) if self.unit else ''}"
        why = f" ({self.not_applicable})" if self.not_applicable else ""
        return f"{self.status:>4}  {self.group:<10}  {self.name}{value}{why}"


@dataclass(frozen=True)
class ModelProperties:
    """What a model declares about itself, and what the battery's criteria then allow.

    adhesive : bool
        The normal force can pull the bodies together (adhesion, or a dashpot without clipping):
        a slow impact may end in capture, and friction in gross sliding is not ``mu`` times the
        (repulsive) normal impulse.
    force_at_touch, force_at_separation : float
        Quasi-static normal force (N, > 0 repulsive) the law exerts at zero overlap when a contact
        forms and when it is unloaded to zero overlap (0 for a continuous law; e.g. ``-f_adh`` for a
        constant pull-off force).
    viscous_at_touch : bool
        A dashpot acts from first touch (force ``c v`` at zero overlap, e.g. the linear
        spring-dashpot): the force jumps at touch at a finite approach speed; only its quasi-static
        part must then be continuous.
    sliding_friction : float or None
        Coulomb coefficient of gross sliding on the normal force (the dynamic one), for the
        rigid-body sliding limit of an oblique impact (checked on the impacts in which the normal
        force never pulls); ``None`` when the law's friction limit is not proportional to the
        normal force (the limit is then drawn for comparison only).
    rolling_resistance : bool
        The law resists rolling with a couple (the rigid-body spin of a sliding impact then does
        not apply).
    source : str
        Where the declaration comes from.
    """

    adhesive: bool = False
    force_at_touch: float = 0.0
    force_at_separation: float = 0.0
    viscous_at_touch: bool = False
    sliding_friction: float | None = None
    rolling_resistance: bool = False
    source: str = "defaults (the model declares no properties)"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("adhesive", "force_at_touch", "force_at_separation", "viscous_at_touch",
                                              "sliding_friction", "rolling_resistance", "source")}


@dataclass
class ValidationReport:
    """The result of :func:`validate`: every check, the figures' data, the settings and scales."""

    model_name: str
    model_repr: str
    parameters: dict
    properties: dict
    closed_form: str | None
    settings: dict
    scales: dict
    checks: list
    figures: list
    elapsed: float = 0.0
    written_to: str | None = None

    @property
    def passed(self) -> bool:
        """True when every check passed (or does not apply)."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list:
        return [c for c in self.checks if not c.passed]

    def summary(self) -> dict:
        """Plain data (the ``summary.json`` of :meth:`write`)."""
        counts = {s: sum(1 for c in self.checks if c.status.lower() == s) for s in ("pass", "fail", "n/a")}
        return {"model": self.model_name, "model_repr": self.model_repr, "parameters": jsonable(self.parameters),
                "properties": jsonable(self.properties), "closed_form": self.closed_form,
                "settings": jsonable(self.settings), "scales": jsonable(self.scales), "passed": self.passed,
                "counts": counts, "elapsed_seconds": round(self.elapsed, 3),
                "checks": [c.to_dict() for c in self.checks]}

    def write(self, out_dir) -> "object":
        """Write ``report.html``, ``summary.json`` and the PNG figures into ``out_dir``; returns its path."""
        path = write_report(self, out_dir)
        self.written_to = str(path)
        return path

    def lines(self) -> list[str]:
        return [c.line() for c in self.checks]

    def __str__(self) -> str:
        head = f"{self.model_repr}: {'PASS' if self.passed else 'FAIL'} ({len(self.failed)} of {len(self.checks)} checks failed)"
        return "\n".join([head] + self.lines())
