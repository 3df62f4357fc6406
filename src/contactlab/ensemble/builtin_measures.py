"""Built-in measures of a finished simulation, by name (``--measure NAME`` of ``contactlab sweep``).

Each is ``measure(sim) -> float`` for the free bodies (fixed bodies are the container or the
rough base, not the material), with "up" opposite to gravity (a scene without gravity has no up:
those that need one raise).

===========================  ===================================================================
name                         value
===========================  ===================================================================
``kinetic_energy``           translational + rotational kinetic energy, J
``dissipated_energy``        energy dissipated by the contacts since the start, J
``contacts``                 number of active contacts
``coordination_number``      2 x (contacts between two free bodies) / (free bodies), plus the
                             contacts with walls, meshes and fixed bodies / (free bodies)
``pile_height``              top of the highest free body above the bottom of the lowest, m
``angle_of_repose``          slope of the free surface of a heap or a slumped bed, degrees
                             (:func:`surface_angle`)
``bulk_density``             mass of the free bodies per volume of an inner cell of the bed,
                             kg/m^3 (:func:`bulk_density_of`)
``solid_fraction``           volume of the bodies per volume of the same cell, -
===========================  ===================================================================

A user's measure is named ``"module:function"`` (the module importable in the workers).
"""
from __future__ import annotations

import importlib
import math

import numpy as np

from .._arguments import did_you_mean
from ..errors import InputError

__all__ = ["MEASURES", "measure_by_name", "kinetic_energy", "dissipated_energy", "contacts", "coordination_number",
           "pile_height", "angle_of_repose", "bulk_density", "solid_fraction", "surface_angle", "bulk_density_of"]


def _free(sim):
    """Positions (n, 3), radii (n,), masses (n,) and volumes (n,) of the free bodies."""
    m = sim.model
    free = ~np.asarray(m.fixed, dtype=bool)
    density = np.array([mat.density for mat in m.materials])[np.asarray(m.material)]
    mass = np.asarray(m.mass)
    return sim.positions[free], np.asarray(m.radius)[free], mass[free], (mass / density)[free]


def _up(sim) -> np.ndarray:
    g = np.asarray(sim.model.gravity, dtype=float)
    norm = float(np.linalg.norm(g))
    if norm == 0.0:
        raise InputError("this measure needs a direction 'up' (opposite to gravity), and the scene has no gravity")
    return -g / norm


def kinetic_energy(sim) -> float:
    """Translational plus rotational kinetic energy of the free bodies, J."""
    e = sim.energy()
    return float(e["kinetic"] + e["rotational"])


def dissipated_energy(sim) -> float:
    """Energy dissipated by the contacts since the start, J."""
    return float(sim.energy()["dissipated"])


def contacts(sim) -> int:
    """Number of active contacts."""
    return int(sim.n_contacts())


def coordination_number(sim) -> float:
    """Mean number of contacts per free body (a contact between two free bodies counts for both)."""
    c = sim.contacts()
    fixed = np.asarray(sim.model.fixed, dtype=bool)
    n_free = int((~fixed).sum())
    if n_free == 0:
        return math.nan
    i, j = np.asarray(c["i"]), np.asarray(c["j"])
    ends = (~fixed[i]).astype(int) + np.where(j >= 0, ~fixed[np.maximum(j, 0)], False).astype(int)
    return float(ends.sum() / n_free)


def pile_height(sim) -> float:
    """Top of the highest free body above the bottom of the lowest, along up, m."""
    x, r, _, _ = _free(sim)
    h = x @ _up(sim)
    return float((h + r).max() - (h - r).min()) if len(h) else math.nan


def surface_angle(positions: np.ndarray, radii: np.ndarray, up, *, bin_width: float | None = None,
                  fit_range: tuple[float, float] = (0.2, 0.8)) -> float:
    """Angle of the free surface of a heap with the horizontal, degrees.

    ``positions`` (n, 3), m; ``radii`` (n,), m; ``up`` (3,), the vertical.  The apex is the
    horizontal position of the highest body; every body is put in a bin of horizontal distance
    from the apex (``bin_width``, default two mean diameters) and the surface height of a bin is
    the top of its highest body.  The heap reaches out to the first bin whose surface is less than
    1.5 mean diameters above the bottom of the bed (the toe: beyond it lies at most one layer of
    bodies, rolled out of the heap); the angle is that of the
    least-squares line through the bins between ``fit_range`` (fractions of that reach, default
    20 % to 80 %: away from the rounded apex and the toe).  This is the usual reading of a heap
    (conical, or a bed slumped against a wall: then the distance is measured from the wall side).
    NaN when fewer than three bins fall in the fitted range.
    """
    up = np.asarray(up, dtype=float)
    up = up / np.linalg.norm(up)
    x = np.asarray(positions, dtype=float)
    r = np.asarray(radii, dtype=float)
    if len(r) < 3:
        return math.nan
    h = x @ up
    top = h + r
    horizontal = x - np.outer(h, up)
    apex = horizontal[int(np.argmax(top))]
    rho = np.linalg.norm(horizontal - apex, axis=1)
    d = 2.0 * float(r.mean())
    width = 2.0 * d if bin_width is None else float(bin_width)
    k = np.floor(rho / width).astype(int)
    n_bins = int(k.max()) + 1
    surface = np.full(n_bins, -np.inf)
    np.maximum.at(surface, k, top)
    filled = np.isfinite(surface)
    bottom = float((h - r).min())
    low = np.flatnonzero(filled & (surface < bottom + 1.5 * d))
    reach = int(low[0]) if len(low) else n_bins
    centres = (np.arange(n_bins) + 0.5) * width
    lo, hi = fit_range[0] * reach * width, fit_range[1] * reach * width
    use = filled & (centres >= lo) & (centres <= hi)
    if use.sum() < 3:
        return math.nan
    slope = np.polyfit(centres[use], surface[use], 1)[0]
    return float(math.degrees(math.atan(-slope)))


def angle_of_repose(sim) -> float:
    """Slope of the free surface of the free bodies, degrees (:func:`surface_angle`)."""
    x, r, _, _ = _free(sim)
    return surface_angle(x, r, _up(sim))


def bulk_density_of(positions: np.ndarray, masses: np.ndarray, volumes: np.ndarray, radii: np.ndarray, up,
                    *, margin: float | None = None, thickness: float | None = None) -> tuple[float, float]:
    """Bulk density (kg/m^3) and solid fraction of a bed, counted in an inner cell.

    The cell is the box (aligned with ``up`` and the coordinate axes across it) of the bodies'
    centres shrunk by ``margin`` on every side (default two mean diameters: away from the walls,
    the floor and the free surface, where the packing is looser).  A body counts, whole, when its
    centre is in the cell, so the count is off by about one layer of bodies on the cell's faces:
    a relative error of order ``d / L`` for a cell of side ``L``.  ``positions`` (n, 3) m,
    ``masses`` (n,) kg, ``volumes`` (n,) m^3, ``radii`` (n,) m.  ``thickness`` (m): for a 2-D
    scene, the cell's extent along z.
    """
    up = np.asarray(up, dtype=float)
    up = up / np.linalg.norm(up)
    x = np.asarray(positions, dtype=float)
    d = 2.0 * float(np.mean(radii))
    margin = 2.0 * d if margin is None else float(margin)
    # axes: up, and the coordinate axes most perpendicular to it
    axes = [up]
    for e in np.eye(3)[np.argsort(np.abs(np.eye(3) @ up))]:
        e = e - (e @ up) * up
        for a in axes[1:]:
            e = e - (e @ a) * a
        if np.linalg.norm(e) > 1e-9 and len(axes) < 3:
            axes.append(e / np.linalg.norm(e))
    coords = x @ np.array(axes).T
    lo, hi = coords.min(axis=0) + margin, coords.max(axis=0) - margin
    if thickness is not None:  # 2-D: no extent along z
        k = int(np.argmax(np.abs(np.array(axes) @ np.array([0.0, 0.0, 1.0]))))
        lo[k], hi[k] = -np.inf, np.inf
    if np.any(hi <= lo):
        return math.nan, math.nan
    inside = np.all((coords >= lo) & (coords < hi), axis=1)
    extent = hi - lo
    if thickness is not None:
        extent[~np.isfinite(extent)] = thickness
    volume = float(np.prod(extent))
    return float(np.sum(np.asarray(masses)[inside]) / volume), float(np.sum(np.asarray(volumes)[inside]) / volume)


def _bed(sim) -> tuple[float, float]:
    x, r, mass, vol = _free(sim)
    thickness = float(sim.model.thickness) if getattr(sim, "dimension", 3) == 2 else None
    return bulk_density_of(x, mass, vol, r, _up(sim), thickness=thickness)


def bulk_density(sim) -> float:
    """Mass of the free bodies per volume in an inner cell of the bed, kg/m^3 (:func:`bulk_density_of`)."""
    return _bed(sim)[0]


def solid_fraction(sim) -> float:
    """Volume of the free bodies per volume in an inner cell of the bed (:func:`bulk_density_of`)."""
    return _bed(sim)[1]


#: the built-in measures by name
MEASURES = {f.__name__: f for f in (kinetic_energy, dissipated_energy, contacts, coordination_number, pile_height,
                                    angle_of_repose, bulk_density, solid_fraction)}


def measure_by_name(name: str):
    """A built-in measure (a name of :data:`MEASURES`) or ``"module:function"``."""
    if not isinstance(name, str) or not name:
        raise InputError(f"a measure's name must be text, got {name!r}")
    if name in MEASURES:
        return MEASURES[name]
    module_name, sep, attr = name.partition(":")
    if not sep:
        raise InputError(f"unknown measure {name!r}{did_you_mean(name, MEASURES)}; built-in measures: "
                         f"{', '.join(MEASURES)}, or 'module:function' for your own")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import module {module_name!r} of measure {name!r} ({exc}); it must be importable "
                         f"(on PYTHONPATH or installed)") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"module {module_name!r} has no function {attr!r} (measure {name!r})")
    return fn
