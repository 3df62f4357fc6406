"""The validation battery: check any contact model the way the literature checks contact models.

``validate(model)`` runs a fixed set of experiments on a :class:`~contactlab.models.ContactModel`
(built-in or user-defined) and marks every check pass/fail against a stated criterion:

* ``hysteresis``: force-overlap loop under a prescribed load-unload-reload-separate path
  (quasi-static and at the reference impact speed); energy dissipated per cycle; the loop's
  work equals the energy the law books (stored + dissipated) and is never negative;
* ``impact``: normal impact on a wall over a range of speeds: restitution and contact duration,
  against the model's closed form where one exists, else physical sanity (``0 <= e <= 1``, finite
  duration, or a capture for an adhesive model);
* ``oblique``: oblique impact on a wall against the incident angle: tangential restitution, rebound
  spin and rebound angle, with the rigid-body Coulomb limits (Maw, Barber and Fawcett 1976) drawn for
  comparison and, in gross sliding, checked;
* ``symmetry``: objectivity (a loaded contact turned as a rigid body), i/j swap symmetry of the law
  and Newton's third law in a two-sphere collision (momentum and angular momentum conserved);
* ``continuity``: force at first touch and at separation (quasi-static and at impact speed);
* ``energy``: work done on the contact along a path in every sense equals stored plus dissipated
  energy; the force equals the gradient of the stored energy (finite differences) wherever the law
  books no dissipation;
* ``timestep``: time-step convergence of the impact results; the declared critical time step
  against the stiffness the law shows, and a run at 0.95 of it;
* ``column``: energy balance of a small granular column settling under gravity;
* ``lattice``: a confined 3 x 3 x 3 lattice with random spins at the default time step does not
  create energy (a step unstable for a body's contacts together would: issue 42).

Every number comes from the model's law through the public probe (:func:`contactlab.probe`) and the
engine (:class:`contactlab.Simulation`); nothing in the battery depends on a model's name.  What a
check must allow (an adhesive normal force, a dashpot acting from first touch, the friction limit
of gross sliding) comes from the model's declared *properties* (:class:`ModelProperties`), and the
impact references from the model's *closed form* (:func:`closed_form_for`): a model supplies them
through ``validation_properties()`` and ``closed_form_impact(material, radius, speed)`` methods.  The
built-in models define theirs in their law files (``contactlab/laws/<law>.py``, the closed forms
with the reference tools of :mod:`contactlab.laws.impact_reference`); :data:`BUILTIN_PROPERTIES` and
:data:`BUILTIN_CLOSED_FORMS` map the registered classes to those methods.

The scales are the model's own: the quasi-static loading curve on a wall gives the impact speed
that compresses the contact to 5 % of the radius (``v_max``); the speeds span ``v_max/100`` to
``v_max`` and the reference speed is ``v_max/10`` (its overlap is the reference overlap).

This module is the entry point (:func:`validate`, :func:`make_context`, :data:`GROUPS`,
:data:`CHECKS`); the checks are in :mod:`contactlab.validation.checks`, one module per group, the
context they share in :mod:`contactlab.validation.context`, the results (:class:`Check`,
:class:`ModelProperties`, :class:`ValidationReport`) in :mod:`contactlab.validation.results` and the
report writer in :mod:`contactlab.validation.report`.
"""
from __future__ import annotations

import time as _time
import traceback
import warnings
from dataclasses import replace
from typing import Callable

from .._arguments import checked_call, did_you_mean
from ..errors import ContactlabError, InputError
from ..laws import registry
from ..laws.base import ContactModel
from ..laws.impact_reference import ode_impact
from ..materials import Material
from ..probe import DEFAULT_PROBE_MATERIAL
from .checks.column import check_column
from .checks.lattice import check_lattice
from .checks.continuity import check_continuity
from .checks.energy import check_elastic_gradient, check_work_energy
from .checks.hysteresis import check_hysteresis
from .checks.impact import check_impact
from .checks.oblique import check_oblique
from .checks.symmetry import check_momentum, check_objectivity, check_swap
from .checks.timestep import check_convergence, check_critical_dt, check_stable_run
from .context import Context
from .results import Check, ModelProperties, ValidationReport

__all__ = ["validate", "ValidationReport", "Check", "ModelProperties", "GROUPS", "CHECKS", "make_context",
           "properties_for", "closed_form_for", "BUILTIN_PROPERTIES", "BUILTIN_CLOSED_FORMS", "check_hysteresis",
           "check_impact", "check_oblique", "check_objectivity", "check_swap", "check_momentum", "check_continuity",
           "check_work_energy", "check_elastic_gradient", "check_convergence", "check_critical_dt",
           "check_stable_run", "check_column"]

#: the check groups, in the order they run and appear in the report
GROUPS = ("hysteresis", "impact", "oblique", "symmetry", "continuity", "energy", "timestep", "column", "lattice")

#: the check functions of each group (each takes the context of :func:`make_context`, returns Checks)
CHECKS = {"hysteresis": (check_hysteresis,), "impact": (check_impact,), "oblique": (check_oblique,),
          "symmetry": (check_objectivity, check_swap, check_momentum), "continuity": (check_continuity,),
          "energy": (check_work_energy, check_elastic_gradient),
          "timestep": (check_convergence, check_critical_dt, check_stable_run), "column": (check_column,),
          "lattice": (check_lattice,)}

#: the 1-DOF impact integrator of the closed forms (:func:`contactlab.laws.impact_reference.ode_impact`)
_ode_impact = ode_impact


# ============================================================================ properties and closed forms
def _registered(method: str) -> dict:
    """``class -> class.method`` (a function of the model and the method's arguments) for every
    registered model class (:data:`contactlab.laws.registry.MODELS`) that defines ``method``."""
    return {cls: getattr(cls, method) for cls in registry.MODELS.values() if callable(getattr(cls, method, None))}


#: declared properties of the built-in models: class -> function(model) -> dict of ModelProperties
#: fields (the class's ``validation_properties``, in its law file)
BUILTIN_PROPERTIES = _registered("validation_properties")
#: closed-form impacts of the built-in models: class -> function(model, material, radius, speed) -> dict
#: (the class's ``closed_form_impact``, in its law file)
BUILTIN_CLOSED_FORMS = _registered("closed_form_impact")


def properties_for(model: ContactModel, overrides: dict | None = None) -> ModelProperties:
    """The model's declared :class:`ModelProperties`: its ``validation_properties`` (a method
    returning a dict, or a dict; the built-in models define theirs in their law files), else the
    defaults; ``overrides`` last."""
    values, source = {}, None
    own = getattr(model, "validation_properties", None)
    if own is not None:
        values = dict(own() if callable(own) else own)
        source = f"{type(model).__name__}.validation_properties"
    if overrides:
        values.update(overrides)
        source = (source + " + " if source else "") + "validate(properties=...)"
    known = set(ModelProperties.__dataclass_fields__) - {"source"}
    bad = sorted(set(values) - known)
    if bad:
        named = ", ".join(f"{b!r}{did_you_mean(b, sorted(known))}" for b in bad)
        raise InputError(f"unknown model properties {named}; known: {', '.join(sorted(known))}")
    out = ModelProperties(**values)
    return replace(out, source=source) if source else out


def closed_form_for(model: ContactModel) -> tuple[Callable | None, str | None]:
    """``(function(material, radius, speed) -> {'restitution', 'duration', 'source'}, description)``
    for a sphere of ``radius`` and ``material`` hitting a plane wall of the same material at the
    normal ``speed``: the model's own ``closed_form_impact`` (the built-in models define theirs in
    their law files), else ``(None, None)``."""
    own = getattr(model, "closed_form_impact", None)
    if callable(own):
        return own, f"{type(model).__name__}.closed_form_impact"
    return None, None


# ============================================================================ the context
def make_context(model: ContactModel, *, material: Material | None = None, radius: float = 1e-3,
                 quick: bool = False, debug: bool = False, speeds=None, angles=None, properties: dict | None = None,
                 log: Callable[[str], None] | None = None) -> Context:
    """The settings and scales the checks share (the calibration runs here); for calling single
    check functions (``CHECKS[group]``) by hand."""
    if not isinstance(model, ContactModel):
        raise InputError(f"validate() needs a contact model (a contactlab.models.ContactModel), got "
                         f"{type(model).__name__}")
    props = properties_for(model, properties)
    return Context(model, material or DEFAULT_PROBE_MATERIAL, radius, quick, debug, speeds, angles, props,
                   closed_form_for(model), log)


# ============================================================================ entry point
@checked_call
def validate(model: ContactModel, *, out=None, material: Material | None = None, radius: float = 1e-3,
             quick: bool = False, debug: bool = False, groups=None, speeds=None, angles=None,
             properties: dict | None = None, log: Callable[[str], None] | None = None) -> ValidationReport:
    """Run the validation battery on ``model`` (any :class:`~contactlab.models.ContactModel`).

    Parameters
    ----------
    model : ContactModel
        Built-in or user-defined.
    out : path, optional
        Write the report there (``report.html``, ``summary.json``, PNG figures).
    material : Material
        Material of the spheres and walls (default :data:`contactlab.probe.DEFAULT_PROBE_MATERIAL`,
        glass-like, E = 1e7 Pa).
    radius : float
        Sphere radius, m (default 1 mm).
    quick : bool
        The reduced sweep used in CI (3 speeds, 3 angles, coarser steps, a 20-sphere column).
    debug : bool
        Run the law and the kernels as plain Python (slow: for checking a new law with breakpoints).
    groups : iterable of str, optional
        Run only these groups (of :data:`GROUPS`).
    speeds, angles : optional
        Impact speeds (m/s) and incident angles (deg, from the normal) instead of the model's own.
    properties : dict, optional
        Override the model's declared :class:`ModelProperties`.
    log : callable, optional
        Called with a line of text as the battery progresses.

    Returns
    -------
    ValidationReport
        ``.passed``, ``.checks``, ``.summary()``, ``.write(dir)``.

    Example
    -------
    >>> import contactlab as cl
    >>> report = cl.validate(cl.models.HertzMindlin(restitution=0.5, friction=0.5), quick=True,
    ...                      groups=["symmetry"])                               # doctest: +SKIP
    >>> report.passed                                                            # doctest: +SKIP
    """
    groups = tuple(GROUPS if groups is None else groups)
    bad = sorted(set(groups) - set(GROUPS), key=str)
    if bad:
        named = ", ".join(f"{b!r}{did_you_mean(b, GROUPS)}" for b in bad)
        raise InputError(f"unknown check group(s) {named}; groups: {', '.join(GROUPS)}")
    start = _time.perf_counter()
    ctx = make_context(model, material=material, radius=radius, quick=quick, debug=debug, speeds=speeds,
                       angles=angles, properties=properties, log=log)
    material, props = ctx.material, ctx.props
    checks = []
    for group in GROUPS:
        if group not in groups:
            continue
        ctx.log(f"{group} ...")
        for func in CHECKS[group]:
            t0 = _time.perf_counter()
            try:
                with warnings.catch_warnings():
                    # the battery's scenes hold its own material, none of those a model's
                    # per_material names: their values are not used here, as the report says
                    warnings.filterwarnings("ignore", message=r".*per_material gives values for the material .* "
                                                              r"which this scene does not have", category=UserWarning)
                    found = func(ctx)
            except (ContactlabError, RuntimeError, ValueError, ArithmeticError, IndexError) as exc:
                found = [Check(f"{func.__name__[6:].replace('_', ' ')}: the experiment failed", group, False, None,
                               "", "the experiment runs", "-",
                               f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")]
            for c in found:
                c.data.setdefault("seconds", round(_time.perf_counter() - t0, 3))
            checks.extend(found)
    try:
        params = model.to_dict()
    except Exception:  # noqa: BLE001 - a user model's to_dict may fail; the values are enough
        params = dict(getattr(model, "values", {}))
    report = ValidationReport(
        model_name=type(model).__name__, model_repr=repr(model), parameters=params, properties=props.to_dict(),
        closed_form=ctx.closed_form_source, settings={"material": {"density": material.density, "young": material.young,
                                                                   "poisson": material.poisson, "name": material.name},
                                                      "radius_m": ctx.radius, "quick": ctx.quick, "debug": ctx.debug,
                                                      "groups": list(groups), "steps_per_contact": list(ctx.steps),
                                                      "time_step_study": list(ctx.study)},
        scales=ctx.scales(), checks=checks, figures=ctx.figures, elapsed=_time.perf_counter() - start)
    if out is not None:
        report.write(out)
    return report
