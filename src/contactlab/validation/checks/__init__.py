"""The validation battery's checks, one module per group of
:data:`contactlab.validation.battery.GROUPS` (:data:`contactlab.validation.battery.CHECKS` lists
them in order).  Each check function takes the context of
:func:`~contactlab.validation.battery.make_context` and returns a list of
:class:`~contactlab.validation.results.Check`; :mod:`.common` holds the pieces several share."""
from .column import check_column
from .continuity import check_continuity
from .energy import check_elastic_gradient, check_work_energy
from .hysteresis import check_hysteresis
from .impact import check_impact
from .lattice import check_lattice
from .oblique import check_oblique
from .symmetry import check_momentum, check_objectivity, check_swap
from .timestep import check_convergence, check_critical_dt, check_stable_run

__all__ = ["check_hysteresis", "check_impact", "check_oblique", "check_objectivity", "check_swap", "check_momentum",
           "check_continuity", "check_work_energy", "check_elastic_gradient", "check_convergence",
           "check_critical_dt", "check_stable_run", "check_column", "check_lattice"]
