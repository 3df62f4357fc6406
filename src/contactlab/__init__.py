"""contactlab: discrete-element contact mechanics in Python at compiled speed.

Quick start::

    import contactlab as cl
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_sphere(position=(0, 0, 0.01), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    sim.run(duration=0.05)

All quantities are SI (m, kg, s, N, Pa, J).
"""
from . import distributions, io, measure, models, packing, streams
from ._jit import jit
from .laws import parts
from .laws.base import HistoryField, Parameter
from .laws.composite import Contact
from .laws.define import contact_law
from .errors import (CheckpointError, ContactlabError, ImportNotAllowedError, InputError, LawError, OutputError,
                     SceneFileError, SimulationBlowUp, StabilityError, StabilityWarning, StorageOrderWarning,
                     UncachedLawWarning)
from .materials import Material
from .probe import ProbeResult, probe
from .scene import Scene
from .scene.clumps import ClumpTemplate
from .simulation import Simulation
from .cell import PeriodicCell
from .dda import DDA
from .validation.battery import validate
from . import ensemble
from .ensemble import calibrate

__version__ = "0.1.0"

__all__ = [
    "Material",
    "Scene",
    "ClumpTemplate",
    "Simulation",
    "PeriodicCell",
    "DDA",
    "probe",
    "ProbeResult",
    "models",
    "parts",
    "contact_law",
    "Contact",
    "Parameter",
    "HistoryField",
    "jit",
    "LawError",
    "UncachedLawWarning",
    "StorageOrderWarning",
    "StabilityWarning",
    "io",
    "packing",
    "measure",
    "distributions",
    "streams",
    "ContactlabError",
    "InputError",
    "ImportNotAllowedError",
    "SceneFileError",
    "SimulationBlowUp",
    "StabilityError",
    "CheckpointError",
    "OutputError",
    "validate",
    "ensemble",
    "calibrate",
    "__version__",
]
