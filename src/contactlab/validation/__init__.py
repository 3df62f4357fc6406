"""Validation: closed-form references, prescribed-motion experiments and the validation battery
(:func:`validate`, ``contactlab validate MODULE:MODEL``) for contact models."""
from .battery import validate
from .closed_forms import hertz_impact, incline_acceleration, linear_impact, oblique_impact_sliding
from .impact import normal_impact, oblique_wall_impact
from .results import Check, ModelProperties, ValidationReport

__all__ = ["hertz_impact", "linear_impact", "oblique_impact_sliding", "incline_acceleration", "normal_impact",
           "oblique_wall_impact", "validate", "ValidationReport", "Check", "ModelProperties"]
