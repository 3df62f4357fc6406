"""Calibration: find the parameters whose simulations reproduce measured targets.

:func:`calibrate` minimises the weighted sum of squared relative misfits

    objective(p) = sum_k  w_k ((measured_k(p) - target_k) / scale_k)^2

over the chosen parameters within their bounds, with an optimiser from SciPy; every evaluation is
one member of an ensemble (:class:`~contactlab.ensemble.runner.Ensemble`), so evaluations run on
the executor you give (local processes, a Dask cluster...), are recorded in the checkpoint folder
if you give one (a restarted calibration takes the evaluations already done from it), and a
member that fails does not stop the calibration (its objective is :data:`PENALTY`).

The optimisers work on the parameters scaled to [0, 1] over their bounds, so ``tolerance`` is a
fraction of each parameter's range:

* ``"bounded"`` (one parameter): Brent's bounded method (``scipy.optimize.minimize_scalar``),
  one evaluation at a time, stops when the bracket is ``tolerance`` wide;
* ``"nelder-mead"``: the Nelder-Mead simplex with bounds (``scipy.optimize.minimize``), one
  evaluation at a time, stops when the simplex is ``tolerance`` wide;
* ``"differential-evolution"``: ``scipy.optimize.differential_evolution``, global, and its
  population of ``popsize x parameters`` evaluations per generation runs as one ensemble, in
  parallel; stops when the population's objectives agree within ``tolerance`` (relative) or after
  ``max_evaluations``;
* ``"auto"`` (default): bounded for one parameter, differential evolution for more.

A Bayesian optimiser (Gaussian-process surrogate) would need fewer evaluations for smooth,
expensive objectives; none of the maintained ones was added as a dependency (scikit-optimize is no
longer maintained; Optuna and BoTorch are large): differential evolution already runs a
generation's evaluations in parallel, which is what an ensemble executor gives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import optimize

from .._arguments import as_finite, as_int, as_positive, fmt
from ..errors import InputError
from .runner import Ensemble

__all__ = ["calibrate", "CalibrationResult", "PENALTY", "METHODS"]

#: the objective of an evaluation whose member failed (finite, so that every optimiser copes)
PENALTY = 1e30
METHODS = ("auto", "bounded", "nelder-mead", "differential-evolution")


@dataclass
class CalibrationResult:
    """What :func:`calibrate` found.

    parameters : dict, the best parameters found (the fixed ones included); objective : float,
    their objective; measured : dict, the measured values of the target names there; targets :
    dict; history : pandas.DataFrame, one row per evaluation in order (``evaluation``, the
    parameters, the measured targets, ``objective``, ``status``, ``error``, ``wall_seconds``);
    method : str; success : bool and message : str, as the optimiser reports them;
    evaluations : int (members run or taken from the checkpoint folder).
    """

    parameters: dict
    objective: float
    measured: dict
    targets: dict
    history: object
    method: str
    success: bool
    message: str
    evaluations: int
    names: tuple = field(default_factory=tuple)

    def plot(self, path=None):
        """The objective per evaluation (and the best so far), and against each calibrated
        parameter; saved to ``path`` if given.  Returns the matplotlib figure."""
        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        h = self.history
        ok = h["status"] == "ok"
        obj = h["objective"].to_numpy(dtype=float)
        fig, axes = plt.subplots(1, 1 + len(self.names), figsize=(4.2 * (1 + len(self.names)), 3.6), squeeze=False)
        ax = axes[0, 0]
        ax.semilogy(h["evaluation"][ok], obj[ok], "o", ms=3, alpha=0.6, label="evaluation")
        best = np.minimum.accumulate(np.where(ok, obj, np.inf))
        ax.semilogy(h["evaluation"], best, "-", color="C3", label="best so far")
        if (~ok).any():
            ax.plot(h["evaluation"][~ok], np.full((~ok).sum(), np.nanmin(obj[ok]) if ok.any() else 1.0), "x",
                    color="k", label="failed")
        ax.set_xlabel("evaluation")
        ax.set_ylabel("objective")
        ax.set_title(f"{self.method}: {self.evaluations} evaluations")
        ax.legend(fontsize=8)
        for k, name in enumerate(self.names):
            ax = axes[0, k + 1]
            ax.semilogy(h[name][ok], obj[ok], "o", ms=3, alpha=0.6)
            ax.axvline(self.parameters[name], color="C3", lw=1)
            ax.set_xlabel(name)
            ax.set_ylabel("objective")
            ax.set_title(f"best {name} = {self.parameters[name]:.4g}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


class _Objective:
    """Evaluates batches of points (scaled to [0, 1]) as ensembles, remembering every result."""

    def __init__(self, ensemble: Ensemble, names, low, high, fixed, targets, scales, weights, seed):
        self.ensemble = ensemble
        self.names, self.low, self.high = names, low, high
        self.fixed, self.targets, self.scales, self.weights = fixed, targets, scales, weights
        self.seed = seed
        self.rows: list[dict] = []
        self.cache: dict[tuple, float] = {}

    def point(self, u) -> dict:
        x = self.low + np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * (self.high - self.low)
        return {**self.fixed, **{n: float(v) for n, v in zip(self.names, x)}}

    def batch(self, points) -> list[float]:
        points = [np.atleast_1d(np.asarray(u, dtype=float)) for u in points]
        keys = [tuple(u.tolist()) for u in points]
        new = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if new:
            table = self.ensemble.run([self.point(k) for k in new], seed=self.seed)
            self.ensemble.warmup = False  # the kernels are compiled now
            for key, (_, row) in zip(new, table.iterrows()):
                self.cache[key] = self._record(key, row)
        return [self.cache[k] for k in keys]

    def _record(self, key, row) -> float:
        measured = {}
        objective = PENALTY
        if row["status"] == "ok":
            missing = [t for t in self.targets if t not in row.index or _missing(row[t])]
            if missing:
                have = [c for c in row.index if c not in self.point(key)]
                raise InputError(f"measure returned no value named {missing[0]!r} (a target); the table's columns: "
                                 f"{', '.join(have)}")
            measured = {t: float(row[t]) for t in self.targets}
            objective = float(sum(self.weights[t] * ((measured[t] - self.targets[t]) / self.scales[t]) ** 2
                                  for t in self.targets))
            if not math.isfinite(objective):
                objective = PENALTY
        self.rows.append({"evaluation": len(self.rows), **self.point(key),
                          **{t: measured.get(t, math.nan) for t in self.targets}, "objective": objective,
                          "status": row["status"], "error": row["error"], "wall_seconds": row["wall_seconds"]})
        return objective

    def one(self, u) -> float:
        return self.batch([u])[0]

    def map(self, func, iterable):
        """The ``workers`` map of differential evolution: a generation as one ensemble."""
        return self.batch(list(iterable))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def calibrate(make_simulation: Callable, measure, targets: dict, parameters: dict, *, fixed: dict | None = None,
              scales: dict | None = None, weights: dict | None = None, method: str = "auto",
              tolerance: float = 1e-3, max_evaluations: int = 200, x0: dict | None = None, popsize: int = 8,
              seed: int = 0, executor=None, workers: int | None = None, threads_per_member: int | None = 1,
              duration: float | None = None, steps: int | None = None, checkpoint=None,
              progress=False) -> CalibrationResult:
    """Fit ``parameters`` so that the simulations' measured values match ``targets``.

    Parameters
    ----------
    make_simulation, measure
        As for :func:`contactlab.ensemble.run`: ``make_simulation(**p)`` builds a simulation,
        ``measure(sim)`` returns a dict (or a single value named after the function) holding a
        value for every target name.
    targets : dict
        ``{name: target value}``, e.g. ``{"angle_of_repose": 31.0, "bulk_density": 1520.0}``.
    parameters : dict
        ``{name: (low, high)}``: the parameters to fit and their bounds.
    fixed : dict, optional
        Further keyword arguments of ``make_simulation``, the same for every evaluation.
    scales : dict, optional
        Misfit scale per target (default ``|target|``, or 1 for a zero target): the objective
        adds ``((measured - target) / scale)^2``.
    weights : dict, optional
        Weight per target (default 1).
    method : str
        ``"auto"``, ``"bounded"``, ``"nelder-mead"`` or ``"differential-evolution"`` (see the
        module docstring).
    tolerance : float
        Stopping tolerance, a fraction of each parameter's range (default 1e-3); for differential
        evolution, the relative spread of the population's objectives.
    max_evaluations : int
        Most members to run (default 200).
    x0 : dict, optional
        Starting point (Nelder-Mead; default the middle of the bounds) or a member of the first
        population (differential evolution).
    popsize : int
        Differential evolution's population per parameter (default 8).
    seed : int
        Seed of differential evolution and of the members (:func:`contactlab.ensemble.run`).
    executor, workers, threads_per_member, duration, steps, checkpoint, progress
        As for :func:`contactlab.ensemble.run`.

    Returns
    -------
    CalibrationResult
    """
    if not isinstance(targets, dict) or not targets:
        raise InputError(f"targets must be a dict {{measured name: target value}}, got {fmt(targets)}")
    targets = {str(k): as_finite(f"targets[{k!r}]", v) for k, v in targets.items()}
    if not isinstance(parameters, dict) or not parameters:
        raise InputError(f"parameters must be a dict {{name: (low, high)}}, got {fmt(parameters)}")
    names = tuple(parameters)
    low, high = [], []
    for name, bounds in parameters.items():
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
            raise InputError(f"parameters[{name!r}] must be bounds (low, high), got {fmt(bounds)}")
        lo, hi = as_finite(f"parameters[{name!r}] low", bounds[0]), as_finite(f"parameters[{name!r}] high", bounds[1])
        if not lo < hi:
            raise InputError(f"parameters[{name!r}] must have low < high, got {fmt(bounds)}")
        low.append(lo)
        high.append(hi)
    low, high = np.array(low), np.array(high)
    fixed = dict(fixed or {})
    clash = sorted(set(fixed) & set(names))
    if clash:
        raise InputError(f"{clash[0]!r} is both calibrated (parameters) and fixed; give it once")
    for given, what in ((scales, "scales"), (weights, "weights")):
        unknown = sorted(set(given or {}) - set(targets))
        if unknown:
            raise InputError(f"{what} has {unknown[0]!r}, which is not a target; targets: {', '.join(targets)}")
    scales = {t: as_positive(f"scales[{t!r}]", (scales or {}).get(t, abs(v) or 1.0)) for t, v in targets.items()}
    weights = {t: as_positive(f"weights[{t!r}]", (weights or {}).get(t, 1.0)) for t in targets}
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "auto":
        method = "bounded" if len(names) == 1 else "differential-evolution"
    if method == "bounded" and len(names) != 1:
        raise InputError(f"method 'bounded' fits one parameter, got {len(names)} ({', '.join(names)}); use "
                         f"'nelder-mead' or 'differential-evolution'")
    tolerance = as_positive("tolerance", tolerance)
    max_evaluations = as_int("max_evaluations", max_evaluations, low=1)
    popsize = as_int("popsize", popsize, low=2)
    u0 = np.full(len(names), 0.5)
    if x0 is not None:
        if not isinstance(x0, dict) or set(x0) != set(names):
            raise InputError(f"x0 must be a dict with a value for each of {', '.join(names)}, got {fmt(x0)}")
        u0 = np.array([(as_finite(f"x0[{n!r}]", x0[n]) - lo) / (hi - lo) for n, lo, hi in zip(names, low, high)])
        if np.any((u0 < 0) | (u0 > 1)):
            raise InputError(f"x0 {fmt(x0)} is outside the bounds {fmt(parameters)}")

    with Ensemble(make_simulation, measure, executor=executor, workers=workers, threads_per_member=threads_per_member,
                  duration=duration, steps=steps, checkpoint=checkpoint, progress=progress) as ensemble:
        f = _Objective(ensemble, names, low, high, fixed, targets, scales, weights, seed)
        if method == "bounded":
            res = optimize.minimize_scalar(f.one, bounds=(0.0, 1.0), method="bounded",
                                           options={"xatol": tolerance, "maxiter": max_evaluations})
            best_u, success, message = np.array([res.x]), bool(res.success), str(res.message)
        elif method == "nelder-mead":
            res = optimize.minimize(f.one, u0, method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(names),
                                    options={"xatol": tolerance, "fatol": math.inf, "maxfev": max_evaluations})
            best_u, success, message = np.atleast_1d(res.x), bool(res.success), str(res.message)
        else:
            population = max(5, popsize * len(names))   # SciPy's population: popsize x N, at least 5
            generations = max(max_evaluations // population - 1, 1)
            res = optimize.differential_evolution(
                lambda u: f.one(u), [(0.0, 1.0)] * len(names), workers=f.map, updating="deferred",
                popsize=popsize, maxiter=generations, tol=tolerance, atol=0.0, polish=False, seed=seed,
                x0=u0 if x0 is not None else None, init="latinhypercube")
            best_u, success, message = np.atleast_1d(res.x), bool(res.success), str(res.message)

    import pandas as pd

    history = pd.DataFrame(f.rows)
    # the best evaluation seen (an optimiser's final point is one of them, but may not be the best)
    ok = history[history["status"] == "ok"]
    if len(ok):
        best = ok.loc[ok["objective"].idxmin()]
        best_params = {**fixed, **{n: float(best[n]) for n in names}}
        objective, measured = float(best["objective"]), {t: float(best[t]) for t in targets}
    else:
        best_params, objective, measured = f.point(best_u), math.inf, {}
        success, message = False, f"every evaluation failed; the first error: {history['error'].iloc[0]}"
    return CalibrationResult(parameters=best_params, objective=objective, measured=measured, targets=targets,
                             history=history, method=method, success=success, message=message,
                             evaluations=len(history), names=names)
