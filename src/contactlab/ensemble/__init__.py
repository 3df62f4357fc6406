"""Ensembles and calibration: many ordinary simulations, on any executor.

>>> import contactlab as cl
>>> cl.ensemble.grid(friction=[0.2, 0.5], restitution="0.3:0.9:3")[:2]
[{'friction': 0.2, 'restitution': 0.3}, {'friction': 0.2, 'restitution': 0.6}]

* :func:`run` runs ``make_simulation(**p)`` for every parameter set ``p``, measures each
  finished simulation with ``measure(sim)`` and returns a pandas DataFrame, one row per member
  (:mod:`~contactlab.ensemble.runner`, :mod:`~contactlab.ensemble.table`);
* members run in local processes by default, or in this process (``executor="serial"``), on a
  Dask cluster (a ``distributed.Client``) or any ``concurrent.futures.Executor``
  (:mod:`~contactlab.ensemble.executors`);
* :func:`calibrate` fits parameters to measured targets, each evaluation a member
  (:mod:`~contactlab.ensemble.calibration`);
* :class:`SceneFile` sweeps a TOML scene file, as ``contactlab sweep`` does
  (:mod:`~contactlab.ensemble.sweep`); built-in measures such as ``angle_of_repose`` and
  ``bulk_density`` are in :mod:`~contactlab.ensemble.builtin_measures`.

See docs/ensembles.md.
"""
from . import builtin_measures
from .calibration import CalibrationResult, calibrate
from .parameters import grid, parse_values
from .runner import Ensemble, run, run_member
from .sweep import SceneFile
from .table import member_parameters, stack, write_table

__all__ = ["run", "run_member", "Ensemble", "grid", "parse_values", "calibrate", "CalibrationResult", "SceneFile",
           "builtin_measures", "member_parameters", "stack", "write_table"]
