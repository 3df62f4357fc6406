"""The periodic cell of a running simulation (``sim.cell``): where it is, how it deforms.

A scene made periodic with :meth:`contactlab.Scene.set_periodic` runs in a cell whose state lives
in the simulation's state (:mod:`contactlab.geometry.periodic`: checkpointed with it, restarted bit
for bit).  :class:`PeriodicCell` reads it and sets how it deforms from now on; the step kernels
move it (:mod:`contactlab.engine.cell_motion`).

Three ways to deform it, which combine (each axis has one rate; the shear has its own):

* :meth:`PeriodicCell.set_strain_rate`: a homogeneous deformation of the orthogonal cell, each
  periodic length growing at ``dL/dt = rate L`` (``L`` the length when it is set; a constant
  velocity of the faces from then on, about the cell's centre);
* :meth:`PeriodicCell.shear`: Lees-Edwards simple shear in a plane (e.g. ``"xz"``: flow along x,
  gradient along z), the images across the gradient axis's faces sliding by ``rate L_g t`` along
  the flow axis at the velocity jump ``rate L_g``;
* :meth:`PeriodicCell.servo`: a stress-controlled axis whose rate follows a target stress
  (proportional gain, largest rate), from the contact stress of the whole cell at each step.

Only the cell moves: the bodies follow through their contacts with the images (boundary-driven
deformation).  ``affine=True`` (the default of :meth:`~PeriodicCell.shear`) also adds, once, the
change of the homogeneous velocity field to the free bodies' velocities, so that a quasi-static
deformation starts from the flow it will reach instead of from rest; positions are never mapped.
"""
from __future__ import annotations

import math

import numpy as np

from ._arguments import as_finite, as_positive, as_vec3
from .engine.cell_motion import cell_stress
from .errors import InputError
from .geometry.periodic import (CELL_FLOW, CELL_GAIN, CELL_GRADIENT, CELL_LENGTH, CELL_LOWER, CELL_MAX_RATE,
                                CELL_PERIODIC, CELL_RATE, CELL_SHEAR, CELL_SHEAR_RATE, CELL_STRESS, CELL_TARGET,
                                lattice_shift_np, wrap_np)

__all__ = ["PeriodicCell"]

_AXES = "xyz"


def _axis(name: str, value, periodic: np.ndarray) -> int:
    if not isinstance(value, str) or value not in _AXES:
        raise InputError(f"{name} must be one of 'x', 'y', 'z', got {value!r}")
    a = _AXES.index(value)
    if not periodic[a]:
        raise InputError(f"{name}={value!r} is not a periodic axis of this cell (periodic: "
                         f"{''.join(_AXES[k] for k in np.flatnonzero(periodic))!r})")
    return a


class PeriodicCell:
    """The periodic cell of simulation ``sim`` (``sim.cell``; see the module docstring).

    Lengths in m, rates in 1/s, stresses in Pa (compression positive, as :mod:`contactlab.measure`).
    """

    def __init__(self, sim):
        self._sim = sim

    @property
    def _cell(self) -> np.ndarray:
        return self._sim.state.cell

    @property
    def _periodic(self) -> np.ndarray:
        return self._cell[CELL_PERIODIC: CELL_PERIODIC + 3] != 0.0

    # ------------------------------------------------------------------ where it is
    @property
    def axes(self) -> str:
        """The periodic axes, e.g. ``"xz"``."""
        return "".join(_AXES[a] for a in np.flatnonzero(self._periodic))

    @property
    def lower(self) -> np.ndarray:
        """(3,) lower corner, m (on a non-periodic axis: as given to ``set_periodic``)."""
        return self._cell[CELL_LOWER: CELL_LOWER + 3].copy()

    @property
    def lengths(self) -> np.ndarray:
        """(3,) cell lengths, m (on a non-periodic axis: ``upper - lower`` as given)."""
        return self._cell[CELL_LENGTH: CELL_LENGTH + 3].copy()

    @property
    def upper(self) -> np.ndarray:
        """(3,) upper corner, m."""
        return self.lower + self.lengths

    @property
    def volume(self) -> float:
        """The cell's volume, m^3: the product of its three lengths (give the non-periodic axes'
        extent in ``set_periodic``), the volume ``cl.measure.domain(volume=...)`` takes."""
        return float(np.prod(self.lengths))

    @property
    def shear_offset(self) -> float:
        """The Lees-Edwards offset, m: how far the image across the gradient axis's upper face is
        displaced along the flow axis, within ``[-L_flow/2, L_flow/2)`` after each rebuild."""
        return float(self._cell[CELL_SHEAR])

    @property
    def shear_plane(self) -> str | None:
        """The shear plane (flow axis, then gradient axis), e.g. ``"xz"``, or None."""
        g = int(self._cell[CELL_GRADIENT])
        return None if g < 0 else _AXES[int(self._cell[CELL_FLOW])] + _AXES[g]

    @property
    def shear_rate(self) -> float:
        """The shear rate of the Lees-Edwards shear, 1/s: the velocity jump over the gradient length."""
        g = int(self._cell[CELL_GRADIENT])
        return 0.0 if g < 0 else float(self._cell[CELL_SHEAR_RATE] / self._cell[CELL_LENGTH + g])

    @property
    def strain_rate(self) -> np.ndarray:
        """(3,) the rate of each length over the length now, 1/s (a servo's of the last step)."""
        return self._cell[CELL_RATE: CELL_RATE + 3] / self._cell[CELL_LENGTH: CELL_LENGTH + 3]

    @property
    def images(self) -> np.ndarray:
        """(N, 3) int64, per body: the cell vectors its position was wrapped by (a copy)."""
        return self._sim.state.images.copy()

    def unwrapped_positions(self) -> np.ndarray:
        """(N, 3) positions without the wraps, m: ``x + H images`` with the cell vectors of now."""
        s = self._sim.state
        return s.positions + lattice_shift_np(s.images, self._cell)

    def wrapped_positions(self) -> np.ndarray:
        """(N, 3) positions inside the cell, m (``sim.positions`` may stand out by up to a quarter
        of the skin between neighbour-list builds)."""
        return wrap_np(self._sim.state.positions, self._cell)

    def stress(self) -> np.ndarray:
        """(3,) the diagonal of the contact stress of the whole cell at the last evaluation (Pa,
        compression positive; body pairs only, no kinetic part): what :meth:`servo` controls."""
        t = self._sim.table
        return np.array(cell_stress(self._cell, self._sim.state.positions, t.i_start, t.pair_j, t.out, t.status))

    def status(self) -> dict:
        """``lengths`` (m), ``strain_rate`` (1/s), ``target`` (Pa, NaN where not servo-controlled),
        ``stress`` (Pa, what the servo saw last), ``shear_plane``, ``shear_rate`` (1/s),
        ``shear_offset`` (m), ``volume`` (m^3)."""
        c = self._cell
        return {"lengths": self.lengths, "strain_rate": self.strain_rate,
                "target": c[CELL_TARGET: CELL_TARGET + 3].copy(), "stress": c[CELL_STRESS: CELL_STRESS + 3].copy(),
                "shear_plane": self.shear_plane, "shear_rate": self.shear_rate, "shear_offset": self.shear_offset,
                "volume": self.volume}

    # ------------------------------------------------------------------ how it deforms
    def _free(self) -> np.ndarray:
        return self._sim.model.inv_mass > 0.0

    def set_strain_rate(self, rate, *, affine: bool = False) -> None:
        """Deform the orthogonal cell homogeneously from now on: each periodic length grows at
        ``dL/dt = rate[a] L`` (3 floats, 1/s, negative to compress; ``L`` the length now, the
        faces then move at constant velocity); a servo-controlled axis is released.  The rate of
        a non-periodic axis must be 0.  ``affine``: also add the change of the homogeneous
        velocity field ``d(dL/dt)/L (x - centre)`` to the free bodies' velocities (once).

        Example
        -------
        >>> import contactlab as cl
        >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        >>> scene = cl.Scene(gravity=(0, 0, 0))
        >>> scene.set_periodic((0, 0, 0), (0.01, 0.01, 0.01))
        >>> _ = scene.add_sphere(position=(0.005, 0.005, 0.005), radius=1e-3, material=glass)
        >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
        >>> sim.cell.set_strain_rate((-1.0, 0.0, 0.0))
        >>> sim.run(steps=1000)           # 0.01 s at -1/s: the x length shrinks by 1 %
        >>> [round(float(x), 8) for x in sim.cell.lengths]
        [0.0099, 0.01, 0.01]
        """
        r = as_vec3("rate", rate)
        bad = [_AXES[a] for a in range(3) if r[a] != 0.0 and not self._periodic[a]]
        if bad:
            raise InputError(f"rate along {', '.join(bad)} must be 0: not a periodic axis of this cell (periodic: "
                             f"{self.axes!r})")
        c = self._cell
        new = r * c[CELL_LENGTH: CELL_LENGTH + 3]
        if affine:
            s = self._sim.state
            free = self._free()
            centre = c[CELL_LOWER: CELL_LOWER + 3] + 0.5 * c[CELL_LENGTH: CELL_LENGTH + 3]
            change = (new - c[CELL_RATE: CELL_RATE + 3]) / c[CELL_LENGTH: CELL_LENGTH + 3]
            s.velocities[free] += change * (s.positions[free] - centre)
        c[CELL_RATE: CELL_RATE + 3] = np.where(self._periodic, new, 0.0)
        c[CELL_TARGET: CELL_TARGET + 3] = np.nan
        self._sim._refresh_forces()

    def shear(self, rate: float, plane: str = "xz", *, affine: bool = True) -> None:
        """Lees-Edwards simple shear from now on: velocity ``rate (x_g - centre_g)`` along the flow
        axis (the plane's first letter) growing along the gradient axis (its second), both
        periodic; the images across the gradient axis's faces slide at the velocity jump
        ``rate L_g`` (``L_g`` now).  ``rate`` in 1/s (0 stops the shear; the offset stays).
        ``affine`` (default True): add the change of that velocity field to the free bodies'
        velocities, so that the flow starts linear.  One shear plane per cell.

        Example
        -------
        >>> import contactlab as cl
        >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
        >>> scene = cl.Scene(gravity=(0, 0, 0))
        >>> scene.set_periodic((0, 0, 0), (0.01, 0.01, 0.01))
        >>> _ = scene.add_sphere(position=(0.005, 0.005, 0.0075), radius=1e-3, material=glass)
        >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-5)
        >>> sim.cell.shear(10.0, plane="xz")      # v_x = 10/s (z - 0.005 m): this sphere moves at 0.025 m/s
        >>> round(float(sim.velocities[0, 0]), 6), sim.cell.shear_plane
        (0.025, 'xz')
        """
        rate = as_finite("rate", rate)
        if not isinstance(plane, str) or len(plane) != 2 or plane[0] == plane[1]:
            raise InputError(f"plane must be two different axes, the flow axis then the gradient axis (e.g. 'xz': "
                             f"flow along x, gradient along z), got {plane!r}")
        f = _axis("plane's flow axis", plane[0], self._periodic)
        g = _axis("plane's gradient axis", plane[1], self._periodic)
        c = self._cell
        old_g = int(c[CELL_GRADIENT])
        if old_g >= 0 and (old_g != g or int(c[CELL_FLOW]) != f) and (c[CELL_SHEAR] != 0.0 or c[CELL_SHEAR_RATE] != 0):
            raise InputError(f"this cell is already sheared in the plane {self.shear_plane!r}; one shear plane per "
                             f"cell (got plane={plane!r})")
        old_rate = self.shear_rate if old_g == g else 0.0
        if affine:
            s = self._sim.state
            free = self._free()
            centre = c[CELL_LOWER + g] + 0.5 * c[CELL_LENGTH + g]
            s.velocities[free, f] += (rate - old_rate) * (s.positions[free, g] - centre)
        c[CELL_FLOW] = f
        c[CELL_GRADIENT] = g
        c[CELL_SHEAR_RATE] = rate * c[CELL_LENGTH + g]
        self._sim._refresh_forces()

    def servo(self, axis: str, target_stress: float, *, max_rate: float, gain: float | None = None) -> None:
        """Control the stress along ``axis`` from the next step on: the length's rate is
        ``L clip(G (sigma - target_stress), -max_rate, max_rate)`` with ``sigma`` the contact
        stress of the whole cell along the axis at the last evaluation (Pa, compression positive;
        :meth:`stress`), ``max_rate`` in 1/s and the gain ``G`` in 1/(Pa s), by default
        ``10 max_rate / |target_stress|`` (the largest rate at an error of a tenth of the target).
        A cell periodic in x, y and z only (its volume is the stress's).  Ends with
        :meth:`release_servo` or :meth:`set_strain_rate`.

        Example
        -------
        An isotropic compression to 1 kPa: ``for a in "xyz": sim.cell.servo(a, 1e3, max_rate=0.5)``
        (``docs/periodic.md`` runs one).
        """
        if not self._periodic.all():
            raise InputError(f"servo needs a cell periodic in x, y and z (its volume is the stress's); this one is "
                             f"periodic in {self.axes!r}")
        a = _axis("axis", axis, self._periodic)
        target = as_finite("target_stress", target_stress)
        top = as_positive("max_rate", max_rate, "1/s")
        if gain is None:
            if target == 0.0:
                raise InputError("gain: its default (10 max_rate / |target_stress|) needs a non-zero target; give "
                                 "gain=... (1/(Pa s))")
            gain = 10.0 * top / abs(target)
        g = as_positive("gain", gain, "1/(Pa s)")
        c = self._cell
        c[CELL_TARGET + a] = target
        c[CELL_GAIN + a] = g
        c[CELL_MAX_RATE + a] = top

    def release_servo(self, axis: str) -> None:
        """End the stress control of ``axis``; its length stops changing."""
        a = _axis("axis", axis, self._periodic)
        c = self._cell
        if math.isnan(c[CELL_TARGET + a]):
            raise InputError(f"axis {axis!r} is not stress-controlled")
        c[CELL_TARGET + a] = np.nan
        c[CELL_RATE + a] = 0.0
        self._sim._refresh_forces()
