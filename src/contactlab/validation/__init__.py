"""Validation: closed-form references and prescribed-motion experiments for contact models."""
from .closed_forms import hertz_impact, incline_acceleration, linear_impact, oblique_impact_sliding
from .impact import normal_impact, oblique_wall_impact

__all__ = ["hertz_impact", "linear_impact", "oblique_impact_sliding", "incline_acceleration", "normal_impact",
           "oblique_wall_impact"]
