"""Plotting helpers (matplotlib) for recorded quantities.

``matplotlib`` is an optional dependency (``pip install -e ".[plot]"``); it is imported only when a
plot is made.
"""
from __future__ import annotations

from .errors import InputError

__all__ = ["plot_recorded", "UNITS"]

#: units of the quantities commonly recorded, used for axis labels
UNITS = {
    "time": "s", "overlap": "m", "gap": "m", "normal_force": "N", "force": "N", "Force": "N", "torque": "N m",
    "torque_i": "N m", "torque_j": "N m", "Torque": "N m", "position": "m", "velocity": "m/s",
    "angular_velocity": "rad/s", "relative_velocity": "m/s", "Velocity": "m/s", "displacement": "m",
    "Displacement": "m", "tangential_speed": "m/s", "impact_velocity": "m/s", "plastic_overlap": "m",
    "elastic_energy": "J", "kinetic": "J", "rotational": "J", "gravitational": "J", "elastic": "J",
    "dissipated": "J", "total": "J", "balance_error": "J",
}


def _label(name: str) -> str:
    base = name.strip("|").rpartition(".")[0] or name.strip("|")
    unit = UNITS.get(base)
    return f"{name} ({unit})" if unit else name


def plot_recorded(recorder, x: str = "time", y: str | None = None, *, ax=None, **style):
    """Plot recorded ``y`` against ``x`` on ``ax`` (a new figure if None); returns the Axes.

    Names are those of the recorder (``"overlap"``, ``"normal_force"``, a component
    ``"Force.z"``, a norm ``"|velocity|"``, ``"time"``).  ``y`` defaults to the first recorded
    quantity.  Extra keywords go to ``Axes.plot``.

    Example: the force-overlap loop of a contact, ``plot_recorded(rec, "overlap", "normal_force")``.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise InputError("plotting needs matplotlib: pip install matplotlib") from exc
    if y is None:
        y = recorder.quantities[0]
    xs, ys = recorder[x], recorder[y]
    if ys.ndim != 1 or xs.ndim != 1:
        raise InputError(f"plot: {x!r} and {y!r} must be scalar series; pick a component, e.g. {y}.z or |{y}|")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.6), constrained_layout=True)
    ax.plot(xs, ys, **style)
    ax.set_xlabel(_label(x))
    ax.set_ylabel(_label(y))
    ax.grid(True, alpha=0.3)
    return ax
