"""The built-in contact models (``cl.models.HertzMindlin(...)``, ``cl.models.LinearSpringDashpot(...)``,
``cl.models.SphereSphereContact(...)``)."""
from .laws.base import ContactModel
from .laws.hertz_mindlin import HertzMindlin
from .laws.linear_spring_dashpot import LinearSpringDashpot
from .laws.luding import Luding
from .laws.sphere_sphere_contact import SphereSphereContact

__all__ = ["ContactModel", "HertzMindlin", "LinearSpringDashpot", "Luding", "SphereSphereContact"]
