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
import importlib
import sys
import types

from .errors import (CheckpointError, ContactlabError, ImportNotAllowedError, InputError, KernelCacheWarning,
                     LawError, OutputError,
                     RunTooLongError, SceneFileError, SimulationBlowUp, StabilityError, StabilityWarning, StorageOrderWarning,
                     UncachedLawWarning)

#: where each public name lives: it is imported when first used (PEP 562), so that `import contactlab`
#: costs ~0.01 s until then (the whole API: ~1.5 s, most of it scipy.stats and Numba) and `contactlab
#: --help` answers at once; the errors above are imported as they are (plain classes, no imports)
_PUBLIC = {"Material": "materials", "Scene": "scene", "ClumpTemplate": "scene.clumps", "Simulation": "simulation",
           "PeriodicCell": "cell", "DDA": "dda", "probe": "probe", "ProbeResult": "probe", "jit": "_jit",
           "parts": "laws", "HistoryField": "laws.base", "Parameter": "laws.base", "Contact": "laws.composite",
           "contact_law": "laws.define", "validate": "validation.battery", "calibrate": "ensemble"}
_SUBPACKAGES = ("distributions", "io", "measure", "models", "packing", "streams", "ensemble", "gpu")


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = importlib.import_module(f"{__name__}.{_PUBLIC[name]}")
    value = getattr(home, name) if hasattr(home, name) else importlib.import_module(f"{home.__name__}.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package's module: importing the submodule ``contactlab.probe`` sets no attribute
    ``probe`` over the function :func:`contactlab.probe` (as when the API was imported at once)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and name in _PUBLIC and value.__name__ == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
    "RunTooLongError",
    "KernelCacheWarning",
    "validate",
    "ensemble",
    "calibrate",
    "gpu",
    "__version__",
]
