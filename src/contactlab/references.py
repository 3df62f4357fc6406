"""The user's references to bodies, walls, meshes and materials, turned into indices.

Every public method that takes a body, a wall, a mesh, a material or a pair of them checks it here,
so that a wrong one gets the same clear :class:`~contactlab.errors.InputError` everywhere: it names
the bad value and what is allowed (the index range, the scene's materials with a close match).
Bodies are named "sphere" in messages, after the API's keywords (``sphere=k``, ``spheres=(i, j)``);
every shape shares the one body index space.
"""
from __future__ import annotations

import numpy as np

from ._arguments import did_you_mean
from .errors import InputError
from .materials import Material

__all__ = ["body_index", "wall_index", "mesh_index", "material_index", "body_pair", "material_pair",
           "recorder_target"]


def body_index(model, k) -> int:
    """Body ``k`` (an integer in ``0 .. N-1``)."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise InputError(f"sphere index must be an integer, got {k!r}")
    if not 0 <= int(k) < model.n_spheres:
        raise InputError(f"sphere index {k} is out of range 0..{model.n_spheres - 1}")
    return int(k)


def wall_index(model, w) -> int:
    """Wall ``w`` (an integer in ``0 .. W-1``)."""
    if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, np.integer)) or not 0 <= int(w) < model.n_walls:
        raise InputError(f"wall index {w!r} is out of range 0..{model.n_walls - 1}")
    return int(w)


def mesh_index(model, q) -> int:
    """Mesh wall ``q`` (an integer in ``0 .. Mm-1``)."""
    n = model.n_meshes
    if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) or not 0 <= int(q) < n:
        raise InputError(f"mesh index {q!r} is out of range 0..{n - 1}" if n else "the scene has no mesh walls")
    return int(q)


def material_index(model, x) -> int:
    """The index of material ``x`` (a :class:`~contactlab.materials.Material` of the scene, or its name)."""
    mats = model.materials
    for k, mat in enumerate(mats):
        if (isinstance(x, Material) and mat is x) or (isinstance(x, str) and mat.name == x):
            return k
    names = ", ".join(repr(mat.name) if mat.name else f"<unnamed {k}>" for k, mat in enumerate(mats))
    hint = did_you_mean(x, [mat.name for mat in mats if mat.name])
    raise InputError(f"material {x!r} is not used in this scene{hint}; its materials: {names}")


def body_pair(model, pair, name: str = "spheres") -> tuple[int, int]:
    """Two different bodies ``(i, j)`` given as the argument ``name``."""
    try:
        i, j = pair
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a pair (i, j) of sphere indices, got {pair!r}") from None
    i, j = body_index(model, i), body_index(model, j)
    if i == j:
        raise InputError(f"{name} must be two different spheres, got ({i}, {j})")
    return i, j


def material_pair(model, pair) -> tuple[int, int]:
    """Two materials ``(a, b)`` (Materials or names; ``a`` may equal ``b``)."""
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise InputError(f"materials must be a pair (a, b) of materials or names, got {pair!r}") from None
    return material_index(model, a), material_index(model, b)


def recorder_target(model, sphere=None, contact=None, wall=None) -> tuple:
    """What a recorder watches: ``("sphere", k)``, ``("contact", i, j)``, ``("contact_wall", i, w)``,
    ``("wall", w)`` or ``("global",)`` (see :meth:`contactlab.Simulation.record`)."""
    one = "give one target: sphere=, contact= (with wall= for a wall contact) or wall="
    if contact is not None:
        if wall is not None:
            target = ("contact_wall", body_index(model, contact), wall_index(model, wall))
        else:
            try:
                i, j = contact
            except (TypeError, ValueError):
                raise InputError(f"contact must be a pair (i, j) of spheres, or a sphere i with wall=w; "
                                 f"got {contact!r}") from None
            target = ("contact", body_index(model, i), body_index(model, j))
        if sphere is not None:
            raise InputError(one)
        return target
    if sphere is not None:
        if wall is not None:
            raise InputError(one)
        return ("sphere", body_index(model, sphere))
    if wall is not None:
        return ("wall", wall_index(model, wall))
    return ("global",)
