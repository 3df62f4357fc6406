"""Materials: the bulk properties a contact law mixes into pair parameters."""
from __future__ import annotations

from dataclasses import dataclass, field

from ._arguments import as_finite, as_positive, checked_api
from .errors import InputError

__all__ = ["Material"]


@checked_api
@dataclass(frozen=True, eq=False)
class Material:
    """Bulk material of spheres and walls.

    Parameters
    ----------
    density : float
        Mass density, kg/m^3 (> 0).  Ignored for walls, which are rigid bodies of infinite mass.
    young : float
        Young's modulus E, Pa (> 0).
    poisson : float
        Poisson's ratio nu, dimensionless, -1 < nu < 0.5.
    name : str, optional
        A label used in messages and output.

    Two ``Material`` objects are the same material only if they are the same object, so that two
    materials with equal numbers but different names stay distinct.

    Example
    -------
    >>> glass = Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    >>> round(glass.shear_modulus)
    3846154
    """

    density: float
    young: float
    poisson: float
    name: str = field(default="")

    def __post_init__(self):
        label = f"Material {self.name!r}" if self.name else "Material"
        object.__setattr__(self, "density", as_positive(f"{label}: density", self.density, "kg/m^3"))
        object.__setattr__(self, "young", as_positive(f"{label}: young", self.young, "Pa"))
        nu = as_finite(f"{label}: poisson", self.poisson)
        if not (-1.0 < nu < 0.5):
            raise InputError(f"{label}: poisson must satisfy -1 < poisson < 0.5, got {nu!r}")
        object.__setattr__(self, "poisson", nu)
        if not isinstance(self.name, str):
            raise InputError(f"Material: name must be text (str), got {self.name!r} ({type(self.name).__name__})")

    @property
    def shear_modulus(self) -> float:
        """G = E / (2 (1 + nu)), Pa."""
        return self.young / (2.0 * (1.0 + self.poisson))

    def to_dict(self) -> dict:
        """Plain-data form (used by checkpoints and scene files)."""
        return {"density": self.density, "young": self.young, "poisson": self.poisson, "name": self.name}
