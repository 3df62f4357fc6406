"""Scene building: spheres, walls and materials, frozen into a Model and an initial State."""
from .scene import Scene

__all__ = ["Scene"]
