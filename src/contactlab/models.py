"""The built-in contact models (``cl.models.HertzMindlin(...)``, ``cl.models.LinearSpringDashpot(...)``,
``cl.models.SphereSphereContact(...)``, ``cl.models.Luding(...)``, ``cl.models.Ice(...)``,
``cl.models.ParallelBond(...)``), and ``cl.models.Contact(normal=..., ...)``, a model assembled
from slot laws (built-in ones in :mod:`contactlab.laws.parts`, or your own, :func:`contactlab.contact_law`)."""
from .laws.base import ContactModel
from .laws.convex_roll import ConvexRollContact
from .laws.define import Contact
from .laws.hertz_mindlin import HertzMindlin
from .laws.ice import Ice
from .laws.linear_spring_dashpot import LinearSpringDashpot
from .laws.luding import Luding
from .laws.parallel_bond import ParallelBond
from .laws.sphere_sphere_contact import SphereSphereContact
from .laws.volume_contact import VolumeContact

__all__ = ["ContactModel", "Contact", "ConvexRollContact", "HertzMindlin", "Ice", "LinearSpringDashpot", "Luding", "ParallelBond", "SphereSphereContact", "VolumeContact"]
