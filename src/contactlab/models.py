"""The built-in contact models (``cl.models.HertzMindlin(...)``, ``cl.models.LinearSpringDashpot(...)``)."""
from .laws.base import ContactModel
from .laws.hertz_mindlin import HertzMindlin
from .laws.linear_spring_dashpot import LinearSpringDashpot

__all__ = ["ContactModel", "HertzMindlin", "LinearSpringDashpot"]
