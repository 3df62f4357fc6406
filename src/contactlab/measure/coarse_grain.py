"""Coarse-grained continuum fields on a regular grid: density, velocity, stress (MercuryCG style).

With a kernel ``phi`` (:mod:`~contactlab.measure.smoothing`) the fields at a grid point ``r`` are
(Goldhirsch 2010; Weinhart, Thornton, Luding & Bokhove 2012; Weinhart et al. 2013)::

    density          rho(r) = sum_p m_p phi(r - x_p)                                   kg/m^3
    volume fraction  nu(r)  = sum_p V_p phi(r - x_p)                                   -
    momentum         j(r)   = sum_p m_p v_p phi(r - x_p);  velocity V = j / rho        kg/(m^2 s), m/s
    kinetic stress   sigma_k = sum_p m_p v_p (x) v_p phi(r - x_p) - rho V (x) V        Pa
    contact stress   sigma_c = -sum_p sum_{c of p} (x_c - x_p) (x) f_pc int_0^1 phi(r - x_p - s (x_c - x_p)) ds

The contact stress spreads each body's share of a contact along its lever, the segment from the
body's centre to the contact point, so that it integrates over space to the Love-Weber sum
(:mod:`~contactlab.measure.love_weber`, same sign convention: **compression positive**); for two
spheres the two levers make up the branch vector and this is Weinhart's line integral along it.
A contact with a wall or a mesh has one lever, the body's.  The line integrals are exact
(:func:`~contactlab.measure.smoothing._line_mean`).  The kinetic stress uses the fluctuation
about the local coarse-grained velocity, so ``sigma = sigma_c + sigma_k`` is the full stress.

In a 2-D scene the kernel is the planar one (1/m^2) and every field is divided by the scene's
thickness, so densities stay in kg/m^3 and stresses in Pa; the grid lies in the plane z = 0.

The grid holds ``shape = (nx, ny, nz)`` points from ``lower`` to ``upper`` inclusive on each axis
(``linspace``; one point on an axis sits in the middle of its range).  The compiled kernel runs
over grid planes of constant x in parallel, each plane summing its bodies and levers in a fixed
order: the result does not depend on the number of threads.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from .._arguments import as_bool, as_float_array, as_int, checked_call
from .._jit import jit, pkernel
from ..errors import InputError
from .image_data import write_image_data
from .smoothing import SmoothingKernel, _line_mean, _value
from .snapshot import Snapshot, snapshot

__all__ = ["CoarseGrainedFields", "coarse_grain", "coarse_grain_of"]

# columns of the accumulator: mass, volume, momentum (3), m v v (9), contact stress (9)
_MASS, _VOLUME, _MOMENTUM, _MVV, _CONTACT, _NCOL = 0, 1, 2, 5, 14, 23


@dataclass(frozen=True, eq=False)
class CoarseGrainedFields:
    """Fields on a grid (see :mod:`contactlab.measure.coarse_grain`); point ``(i, j, k)`` is at
    ``(x[i], y[j], z[k])``.

    Attributes
    ----------
    x, y, z : (nx,), (ny,), (nz,) float64, m -- the grid's coordinates
    density : (nx, ny, nz) kg/m^3
    volume_fraction : (nx, ny, nz)
    momentum : (nx, ny, nz, 3) kg/(m^2 s)
    velocity : (nx, ny, nz, 3) m/s (zero where the density is zero)
    kinetic_stress, contact_stress, stress : (nx, ny, nz, 3, 3) Pa, compression positive
    kernel : the smoothing kernel;  time : s;  dimension : 3, or 2 (a grid in the plane z = 0)
    """

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    density: np.ndarray
    volume_fraction: np.ndarray
    momentum: np.ndarray
    velocity: np.ndarray
    kinetic_stress: np.ndarray
    contact_stress: np.ndarray
    stress: np.ndarray
    kernel: SmoothingKernel
    time: float
    dimension: int = 3

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.density.shape

    @property
    def pressure(self) -> np.ndarray:
        """(nx, ny, nz) mean stress ``tr(stress) / 3`` (in a 2-D scene the in-plane mean), Pa."""
        d = self.dimension
        return np.trace(self.stress[..., :d, :d], axis1=-2, axis2=-1) / d

    def as_dict(self) -> dict[str, np.ndarray]:
        """The fields by name (the arrays the .vti file holds)."""
        return {"density": self.density, "volume_fraction": self.volume_fraction, "velocity": self.velocity,
                "momentum": self.momentum, "stress": self.stress, "contact_stress": self.contact_stress,
                "kinetic_stress": self.kinetic_stress, "pressure": self.pressure}

    def write_vti(self, path):
        """Write every field to a VTK image-data file (.vti) for ParaView; returns the path."""
        spacing = [(a[-1] - a[0]) / (len(a) - 1) if len(a) > 1 else 1.0 for a in (self.x, self.y, self.z)]
        return write_image_data(path, (self.x[0], self.y[0], self.z[0]), spacing, self.as_dict())


def _axis(lo: float, hi: float, n: int) -> np.ndarray:
    return np.array([0.5 * (lo + hi)]) if n == 1 else np.linspace(lo, hi, n)


def grid_axes(lower, upper, shape, dimension: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The coordinates of a grid, checked: ``lower``, ``upper`` and ``shape`` have 3 entries (2 in a
    2-D scene, whose grid lies in the plane z = 0)."""
    want = dimension
    lo = as_float_array("lower", lower)
    hi = as_float_array("upper", upper)
    if lo.shape != (want,) or hi.shape != (want,):
        raise InputError(f"lower and upper must be {want} numbers each (the grid's corners"
                         f"{', in the plane z = 0' if want == 2 else ''}), got shapes {lo.shape} and {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise InputError(f"lower and upper must be finite, got {lo.tolist()} and {hi.tolist()}")
    if np.any(hi < lo):
        raise InputError(f"upper must not be below lower on any axis, got lower={lo.tolist()}, upper={hi.tolist()}")
    try:
        counts = [as_int(f"shape[{k}]", v, low=1) for k, v in enumerate(shape)]
    except TypeError:
        raise InputError(f"shape must be {want} integers (points along each axis), got {shape!r}") from None
    if len(counts) != want:
        raise InputError(f"shape must be {want} integers (points along each axis), got {shape!r}")
    flat = [k for k in range(want) if counts[k] > 1 and not hi[k] > lo[k]]
    if flat:
        k = flat[0]
        raise InputError(f"the grid has {counts[k]} points along {'xyz'[k]} but lower = upper = {lo[k]!r} m there; "
                         f"give upper > lower, or 1 point on that axis")
    if np.prod(counts, dtype=np.float64) * _NCOL * 8 > 8e9:
        raise InputError(f"a grid of shape {tuple(counts)} needs more than 8 GB; use fewer points")
    axes = [_axis(lo[k], hi[k], counts[k]) for k in range(want)]
    if want == 2:
        axes.append(np.zeros(1))
    return axes[0], axes[1], axes[2]


def _levers(snap: Snapshot):
    """Every body's lever of every contact: start (L, 3), vector (L, 3) and the tensor
    ``-lever (x) force on the body`` (L, 9), in a fixed order."""
    ci, cj = snap.contact_i, snap.contact_j
    xc, f = snap.contact_point, snap.contact_force
    pair = cj >= 0
    start = np.concatenate([snap.positions[ci], xc[pair]])
    xj = snap.positions[cj[pair]]
    if snap.contact_shift is not None:
        xj = xj + snap.contact_shift[pair]   # j's image in a periodic scene
    vec = np.concatenate([xc - snap.positions[ci], xj - xc[pair]])
    force = np.concatenate([f, f[pair]])      # -(x_j - x_c) (x) f = -(x_c - x_j) (x) (-f): j's share
    tensor = -(vec[:, :, None] * force[:, None, :]).reshape(-1, 9)
    return start, vec, tensor


def coarse_grain_of(snap: Snapshot, lower, upper, shape, kernel: SmoothingKernel, *,
                    contacts: bool = True) -> CoarseGrainedFields:
    """:func:`coarse_grain` of a :class:`~contactlab.measure.snapshot.Snapshot`."""
    if not isinstance(kernel, SmoothingKernel):
        raise InputError(f"kernel must be cl.measure.Gaussian(width=...) or cl.measure.Lucy(cutoff=...), "
                         f"got {type(kernel).__name__}: {kernel!r:.80}")
    contacts = as_bool("contacts", contacts)
    dim = snap.dimension
    x, y, z = grid_axes(lower, upper, shape, dim)
    origin = np.array([x[0], y[0], z[0]])
    step = np.array([(a[-1] - a[0]) / (len(a) - 1) if len(a) > 1 else 0.0 for a in (x, y, z)])
    counts = np.array([len(x), len(y), len(z)], dtype=np.int64)
    order = np.argsort(snap.positions[:, 0], kind="stable")
    pos = np.ascontiguousarray(snap.positions[order])
    if dim == 2:
        pos[:, 2] = 0.0
    if contacts and len(snap.contact_i):
        start, vec, tensor = _levers(snap)
        if dim == 2:
            start[:, 2] = 0.0
            vec[:, 2] = 0.0
    else:
        start, vec, tensor = np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 9))
    xmin = np.minimum(start[:, 0], start[:, 0] + vec[:, 0])
    lever_order = np.argsort(xmin, kind="stable")
    reach = float(np.abs(vec[:, 0]).max()) if len(vec) else 0.0
    acc = np.zeros((counts[0], counts[1], counts[2], _NCOL))
    _accumulate(origin, step, counts, kernel.code, kernel.width, kernel.support, kernel.normalisation(dim),
                pos, snap.masses[order], snap.volumes[order], snap.velocities[order],
                np.ascontiguousarray(start[lever_order]), np.ascontiguousarray(vec[lever_order]),
                np.ascontiguousarray(tensor[lever_order]), np.ascontiguousarray(xmin[lever_order]), reach, acc)
    if dim == 2:
        acc /= snap.thickness
    grid = acc.shape[:3]
    rho = acc[..., _MASS]
    momentum = acc[..., _MOMENTUM:_MOMENTUM + 3]
    velocity = np.zeros_like(momentum)
    filled = rho > 0.0
    velocity[filled] = momentum[filled] / rho[filled, None]
    kinetic = acc[..., _MVV:_MVV + 9].reshape(grid + (3, 3)) - rho[..., None, None] * velocity[..., :, None] * \
        velocity[..., None, :]
    contact = acc[..., _CONTACT:_CONTACT + 9].reshape(grid + (3, 3))
    return CoarseGrainedFields(x=x, y=y, z=z, density=rho, volume_fraction=acc[..., _VOLUME], momentum=momentum,
                               velocity=velocity, kinetic_stress=kinetic, contact_stress=contact,
                               stress=contact + kinetic, kernel=kernel, time=snap.time, dimension=dim)


@checked_call
def coarse_grain(sim, lower, upper, shape, kernel: SmoothingKernel, *, contacts: bool = True) -> CoarseGrainedFields:
    """Coarse-grained density, velocity and stress fields on a regular grid (MercuryCG style).

    Parameters
    ----------
    sim : Simulation
    lower, upper : 3 floats, m (2 in a 2-D scene) -- the grid's corners (points on them included)
    shape : 3 ints (2 in a 2-D scene) -- points along x, y, z
    kernel : :class:`~contactlab.measure.Gaussian` or :class:`~contactlab.measure.Lucy`
    contacts : bool
        Compute the contact stress (default True; False leaves it zero).

    Returns a :class:`CoarseGrainedFields` (NumPy arrays; ``.write_vti(path)`` for ParaView).  The
    formulas: :mod:`contactlab.measure.coarse_grain`.

    Example
    -------
    >>> import contactlab as cl
    >>> glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    >>> scene = cl.Scene(gravity=(0, 0, 0))
    >>> _ = scene.add_sphere(position=(0, 0, 0), radius=1e-3, material=glass)
    >>> sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=1e-6)
    >>> cg = cl.measure.coarse_grain(sim, lower=(-3e-3, -3e-3, -3e-3), upper=(3e-3, 3e-3, 3e-3),
    ...                              shape=(13, 13, 13), kernel=cl.measure.Gaussian(width=1e-3))
    >>> mass = sim.model.mass[0]
    >>> round(float(cg.density[6, 6, 6] / (mass * cl.measure.Gaussian(width=1e-3)(0.0))), 12)   # at the centre
    1.0
    """
    return coarse_grain_of(snapshot(sim), lower, upper, shape, kernel, contacts=contacts)


# ---------------------------------------------------------------------------------------------- compiled
@jit
def _span(lo, hi, origin, step, n):
    """First and last index of the grid points ``origin + i step`` (``0 <= i < n``) within
    ``[lo, hi]``; ``(0, 0)`` on an axis of one point; an empty range when none is."""
    if n == 1:
        return 0, 0
    i0 = max(0, int(np.ceil((lo - origin) / step)))
    i1 = min(n - 1, int(np.floor((hi - origin) / step)))
    return i0, i1


@pkernel
def _accumulate(origin, step, counts, code, w, c, norm, pos, mass, vol, vel, start, vec, tensor, xmin, reach,
                acc):  # pragma: no cover - compiled
    """Sum the bodies and the levers into ``acc`` (nx, ny, nz, 23), one grid plane x = const per
    parallel iteration (bodies sorted by x, levers by their smallest x)."""
    nx, ny, nz = counts[0], counts[1], counts[2]
    c2 = c * c
    for ix in prange(nx):
        gx = origin[0] + ix * step[0]
        lo = np.searchsorted(pos[:, 0], gx - c)
        hi = np.searchsorted(pos[:, 0], gx + c, side="right")
        for k in range(lo, hi):
            dx = gx - pos[k, 0]
            j0, j1 = _span(pos[k, 1] - c, pos[k, 1] + c, origin[1], step[1], ny)
            i0, i1 = _span(pos[k, 2] - c, pos[k, 2] + c, origin[2], step[2], nz)
            for iy in range(j0, j1 + 1):
                dy = origin[1] + iy * step[1] - pos[k, 1]
                for iz in range(i0, i1 + 1):
                    dz = origin[2] + iz * step[2] - pos[k, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 >= c2:
                        continue
                    phi = _value(code, w, c, norm, r2)
                    a = acc[ix, iy, iz]
                    mp = mass[k] * phi
                    a[0] += mp
                    a[1] += vol[k] * phi
                    for q in range(3):
                        a[2 + q] += mp * vel[k, q]
                        for s in range(3):
                            a[5 + 3 * q + s] += mp * vel[k, q] * vel[k, s]
        lo = np.searchsorted(xmin, gx - c - reach)
        hi = np.searchsorted(xmin, gx + c, side="right")
        for k in range(lo, hi):
            if xmin[k] + abs(vec[k, 0]) <= gx - c:
                continue
            ylo = min(start[k, 1], start[k, 1] + vec[k, 1])
            zlo = min(start[k, 2], start[k, 2] + vec[k, 2])
            j0, j1 = _span(ylo - c, ylo + abs(vec[k, 1]) + c, origin[1], step[1], ny)
            i0, i1 = _span(zlo - c, zlo + abs(vec[k, 2]) + c, origin[2], step[2], nz)
            px = start[k, 0] - gx
            for iy in range(j0, j1 + 1):
                py = start[k, 1] - (origin[1] + iy * step[1])
                for iz in range(i0, i1 + 1):
                    pz = start[k, 2] - (origin[2] + iz * step[2])
                    mean = _line_mean(code, w, c, norm, px, py, pz, vec[k, 0], vec[k, 1], vec[k, 2])
                    if mean == 0.0:
                        continue
                    a = acc[ix, iy, iz]
                    for q in range(9):
                        a[14 + q] += tensor[k, q] * mean
