"""Exact volumes: how much of each sphere (disk in 2-D) lies inside a measurement region.

The regions are those of :mod:`contactlab.packing.regions` that have a volume in closed form:
an axis-aligned :func:`~contactlab.packing.regions.box`, a :func:`~contactlab.packing.regions.sphere`
and a finite :func:`~contactlab.packing.regions.cylinder` (any axis), plus :func:`domain`, the whole
simulation (every body counts whole).  For each sphere of centre ``x`` and radius ``r`` the part
inside the region is computed, never estimated from the centre:

* **sphere and box** -- in closed form.  The volume of the ball ``|x| < R`` with ``x > a``,
  ``y > b``, ``z > c`` (``a, b, c >= 0``) is ``int_c^zm A(a, b, rho(z)) dz`` with
  ``rho(z)^2 = R^2 - z^2``, ``zm^2 = R^2 - a^2 - b^2`` and the area of the disk of radius ``rho``
  beyond the corner ``(a, b)``::

      A(a, b, rho) = rho^2/2 (pi/2 - asin(a/rho) - asin(b/rho)) - a sqrt(rho^2 - a^2)/2 - b sqrt(rho^2 - b^2)/2 + a b

  whose ``z`` integral has the antiderivative written out in :func:`_octant_primitive`
  (``asin``, ``atan`` and square roots only).  Negative corner coordinates follow from the mirror
  symmetry, ``V(a < 0, b, c) = 2 V(0, b, c) - V(-a, b, c)``, and a box is the signed sum of its
  eight corners, ``1[lo, hi](x) = H(x - lo) - H(x - hi)`` on each axis.  Round-off only: the tests
  check it against the cap ``pi (R - a)^2 (2R + a) / 3`` to 1e-13 of the sphere's volume.
* **sphere and sphere** -- the lens ``pi (R + r - d)^2 (d^2 + 2 d r - 3 r^2 + 2 d R + 6 r R - 3 R^2) / (12 d)``.
* **sphere and cylinder** -- the integral along the axis of the area shared by the sphere's
  circular section (radius ``rho(z)``) and the cylinder's disk (radius ``R_c``, at the distance ``d``
  of the sphere's centre from the axis), a closed-form lens area.  The integrand is analytic
  except at the breakpoints ``rho = |R_c - d|`` and ``rho = R_c + d`` (half-integer powers) and
  at the ends of the sphere (a square root); the interval is cut at those points and at the
  sphere's equator, and each piece is integrated by 48-point Gauss-Legendre after the
  substitution ``z = z0 + (z1 - z0)(1 - cos t)/2``, which turns those powers into analytic
  functions of ``t``.  Measured against adaptive quadrature on 400 random configurations (sphere
  radius 1, distances, cylinder radii and heights from 0.05 to 3): largest error below 1e-13 of the
  sphere's volume (with 32 points 2e-13; the tests assert 1e-11, the reference's own accuracy).

In a 2-D scene (``Scene(dimension=2)``) the bodies are disks in the plane z = 0 and a region is
its section by that plane: a box is the rectangle of its x and y ranges (its z range must hold
0), a sphere region the circle of radius ``sqrt(R^2 - z_c^2)``, a cylinder must have its axis
along z (its section is its disk).  Areas then take the place of volumes: the disk and
rectangle in closed form (the corner area ``A`` above with the same signed sums), the disk and
circle as a lens.  A region's "volume" in 2-D is its area times the scene's thickness, so that
stresses stay in Pa.

:func:`fraction_inside` is the fraction of each body's volume (area) inside the region, in
[0, 1]; :func:`region_volume` the region's volume in m^3.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._arguments import as_positive, as_positive_array, as_vector_array, checked_call
from .._jit import jit, pkernel
from ..errors import InputError
from ..packing.regions import Region, _Box, _Cylinder, _Sphere

__all__ = ["Domain", "domain", "MeasureRegion", "as_measure_region", "region_volume", "region_bounds", "fraction_inside",
           "QUADRATURE_POINTS"]

#: Gauss-Legendre points per piece of the sphere-cylinder integral (see the module docstring)
QUADRATURE_POINTS = 48

# region kinds of the compiled kernels
_DOMAIN, _BOX, _BALL, _CYLINDER = 0, 1, 2, 3


class Domain:
    """The whole simulation as a measurement region: every body counts whole.

    ``volume`` (m^3, > 0): the volume the stress is divided by.  ``None`` (default): the
    axis-aligned bounding box of the bodies' bounding spheres (``min(x - r)`` to ``max(x + r)`` on
    each axis; in 2-D its area times the scene's thickness), evaluated at each measurement.  For a
    packing confined by walls give the volume between the walls.
    """

    def __init__(self, volume=None):
        self.volume = None if volume is None else as_positive("domain: volume", volume, "m^3")

    def __repr__(self):
        return f"domain(volume={self.volume!r})"


@checked_call
def domain(volume=None) -> Domain:
    """The whole simulation as a measurement region (see :class:`Domain`); ``volume`` in m^3."""
    return Domain(volume)


class MeasureRegion:
    """A region reduced to what the kernels take: ``kind`` and ``params`` (float64 array).

    ``params``: box ``(lo_x, lo_y, lo_z, hi_x, hi_y, hi_z)``; sphere ``(c_x, c_y, c_z, R)``;
    cylinder ``(c_x, c_y, c_z, a_x, a_y, a_z, R_c, height)`` (``a`` the unit axis, ``c`` the middle
    of the axis); domain ``()``.  ``region`` is the object given by the user.
    """

    def __init__(self, kind: int, params, region, volume=None):
        self.kind = int(kind)
        self.params = np.ascontiguousarray(params, dtype=np.float64)
        self.region = region
        self.volume = volume   # Domain only: the user's volume or None


def as_measure_region(region) -> MeasureRegion:
    """``region`` (a box, sphere or cylinder of :mod:`contactlab.packing.regions`, a
    :class:`Domain`, or ``None`` for :func:`domain`) as a :class:`MeasureRegion`; anything else
    raises an :class:`~contactlab.errors.InputError`."""
    if region is None:
        region = Domain()
    if isinstance(region, MeasureRegion):
        return region
    if isinstance(region, Domain):
        return MeasureRegion(_DOMAIN, np.zeros(0), region, region.volume)
    if isinstance(region, _Box):
        return MeasureRegion(_BOX, np.concatenate([region.lower, region.upper]), region)
    if isinstance(region, _Sphere):
        return MeasureRegion(_BALL, np.concatenate([region.centre, [region.radius]]), region)
    if isinstance(region, _Cylinder):
        return MeasureRegion(_CYLINDER, np.concatenate([region.centre, region.axis, [region.radius, region.height]]),
                             region)
    what = type(region).__name__ if not isinstance(region, Region) else "a combined or user-defined region"
    raise InputError(f"region must be cl.packing.regions.box(...), sphere(...) or cylinder(...) (regions with an "
                     f"exact volume), cl.measure.domain() or None (the whole simulation); got {what}: {region!r:.80}")


def _section_2d(reg: MeasureRegion) -> MeasureRegion:
    """The region's section by the plane z = 0, as a 2-D region (box: rectangle; sphere and
    z-axis cylinder: circle ``(c_x, c_y, 0, radius)``)."""
    p = reg.params
    if reg.kind == _BOX:
        if not p[2] <= 0.0 <= p[5]:
            raise InputError(f"in a 2-D scene a box region must hold the plane z = 0 (its z range is "
                             f"{p[2]!r} .. {p[5]!r} m); give lower z <= 0 <= upper z")
        return reg
    if reg.kind == _BALL:
        if abs(p[2]) >= p[3]:
            raise InputError(f"in a 2-D scene a sphere region must cut the plane z = 0: its centre z = {p[2]!r} m is "
                             f"not within its radius {p[3]!r} m of it")
        return MeasureRegion(_BALL, [p[0], p[1], 0.0, math.sqrt(p[3] ** 2 - p[2] ** 2)], reg.region)
    if reg.kind == _CYLINDER:
        if abs(abs(p[5]) - 1.0) > 1e-12:
            raise InputError(f"in a 2-D scene a cylinder region must have its axis along z (its section is then a "
                             f"disk); got axis {p[3:6].tolist()}")
        if abs(p[2]) >= 0.5 * p[7]:
            raise InputError(f"in a 2-D scene a cylinder region must hold the plane z = 0: its centre z = {p[2]!r} m "
                             f"is not within half its height {0.5 * p[7]!r} m of it")
        return MeasureRegion(_BALL, [p[0], p[1], 0.0, p[6]], reg.region)
    return reg


def region_volume(region, *, dimension: int = 3, thickness: float = 1.0, positions=None, radii=None) -> float:
    """Volume of a region, m^3.

    ``dimension`` 2: the area of the region's section by the plane z = 0 times ``thickness`` (m).
    A :class:`Domain` without a volume needs ``positions`` (N, 3) and ``radii`` (N,) for its
    bounding box.
    """
    reg = as_measure_region(region)
    if dimension == 2:
        reg = _section_2d(reg)
    p = reg.params
    if reg.kind == _BOX:
        ext = p[3:6] - p[0:3]
        return float(ext[0] * ext[1] * (thickness if dimension == 2 else ext[2]))
    if reg.kind == _BALL:
        if dimension == 2:
            return float(math.pi * p[3] ** 2 * thickness)
        return float(4.0 / 3.0 * math.pi * p[3] ** 3)
    if reg.kind == _CYLINDER:
        return float(math.pi * p[6] ** 2 * p[7])
    if reg.volume is not None:
        return float(reg.volume)
    if positions is None or radii is None or len(radii) == 0:
        raise InputError("domain() without a volume needs bodies to take their bounding box from")
    x = np.asarray(positions, dtype=np.float64)
    r = np.asarray(radii, dtype=np.float64)
    ext = (x + r[:, None]).max(axis=0) - (x - r[:, None]).min(axis=0)
    return float(ext[0] * ext[1] * (thickness if dimension == 2 else ext[2]))


@checked_call
def fraction_inside(region, positions, radii, *, dimension: int = 3) -> np.ndarray:
    """Fraction (N,) in [0, 1] of each sphere's volume (each disk's area, ``dimension=2``) that lies
    inside ``region``, exact (see the module docstring).

    Parameters
    ----------
    region : box, sphere or cylinder of :mod:`contactlab.packing.regions`, or :func:`domain`
    positions : (N, 3) float, m
        Centres (in 2-D the z coordinate is ignored: the disks lie in the plane z = 0).
    radii : (N,) float, m (or one radius for all)
    dimension : 3 or 2

    Example
    -------
    >>> import numpy as np
    >>> from contactlab.measure import fraction_inside
    >>> from contactlab.packing import regions
    >>> half = regions.box(lower=(-1, -1, 0), upper=(1, 1, 1))          # z >= 0 of a sphere at 0
    >>> fraction_inside(half, np.zeros((1, 3)), [0.5]).round(12).tolist()
    [0.5]
    """
    reg = as_measure_region(region)
    x = as_vector_array("positions", positions)
    r = as_positive_array("radii", radii, x.shape[0], "m")
    if dimension not in (2, 3):
        raise InputError(f"dimension must be 2 or 3, got {dimension!r}")
    out = np.zeros(x.shape[0])
    if reg.kind == _DOMAIN:
        out[:] = 1.0
        return out
    if dimension == 2:
        reg = _section_2d(reg)
        x = x.copy()
        x[:, 2] = 0.0
    nodes, weights = _nodes()
    _fractions(reg.kind, reg.params, x, r, dimension, nodes, weights, out)
    return out


def _nodes():
    """Gauss-Legendre nodes and weights of the substitution ``z = z0 + (z1 - z0)(1 - cos t)/2``,
    ``t`` in [0, pi], with ``dz/dt`` folded in as ``sin t / 2`` times the piece's length."""
    u, w = np.polynomial.legendre.leggauss(QUADRATURE_POINTS)
    t = 0.5 * math.pi * (u + 1.0)
    return 0.5 * (1.0 - np.cos(t)), 0.5 * math.pi * w * 0.5 * np.sin(t)


# ---------------------------------------------------------------------------------------------- compiled
@jit
def _clamped_asin(x):
    return math.asin(min(1.0, max(-1.0, x)))


@jit
def _root(x):
    return math.sqrt(max(0.0, x))


@jit
def _slice_primitive(a, R, z, s):
    """Antiderivative in z of ``(R^2 - z^2) asin(a / sqrt(R^2 - z^2)) + a sqrt(R^2 - a^2 - z^2)``
    (the two terms of one corner plane, ``0 <= a < R``; by parts, then partial fractions), given
    ``s = sqrt(R^2 - a^2 - z^2)``.  Every angle is taken with ``atan2`` of ``s``
    (``asin(a / rho) = atan2(a, s)``, ``asin(z / sqrt(R^2 - a^2)) = atan2(z, s)``): at the top of the
    corner ``s`` is known exactly (the other plane's coordinate), where a square root of a rounded
    difference would lose half the digits."""
    if a == 0.0:
        return 0.0
    k2 = R * R - a * a
    t = math.atan2(z, s)
    u = math.atan2(a, s)
    big_i = (u * (R * R * z - z ** 3 / 3.0) - (a / 3.0) * (0.5 * k2 * t - 0.5 * z * s - 2.0 * R * R * t)
             - (2.0 * R ** 3 / 3.0) * math.atan2(a * z, R * s))
    return big_i + a * (0.5 * z * s + 0.5 * k2 * t)


@jit
def _octant_primitive(a, b, R, z, sa, sb):
    """Antiderivative in z of the corner area ``A(a, b, rho(z))`` (module docstring), given
    ``sa = sqrt(R^2 - a^2 - z^2)`` and ``sb = sqrt(R^2 - b^2 - z^2)``."""
    return (0.25 * math.pi * (R * R * z - z ** 3 / 3.0) - 0.5 * _slice_primitive(a, R, z, sa)
            - 0.5 * _slice_primitive(b, R, z, sb) + a * b * z)


@jit
def _octant(a, b, c, R):
    """Volume of the ball ``|x| < R`` with ``x > a, y > b, z > c``, for ``a, b, c >= 0``."""
    top2 = R * R - a * a - b * b
    if top2 <= 0.0 or c * c >= top2:
        return 0.0
    zm = math.sqrt(top2)
    upper = _octant_primitive(a, b, R, zm, b, a)      # at z = zm: sqrt(R^2 - a^2 - zm^2) = b
    lower = _octant_primitive(a, b, R, c, _root(R * R - a * a - c * c), _root(R * R - b * b - c * c))
    return max(0.0, upper - lower)


@jit
def _corner(a, b, c, R):
    """Volume of the ball ``|x| < R`` with ``x > a, y > b, z > c`` for any signs (mirror symmetry:
    ``V(a < 0) = 2 V(0) - V(-a)`` on each axis)."""
    if a >= R or b >= R or c >= R:
        return 0.0
    total = 0.0
    for sa in range(2):
        if sa == 1 and a >= 0.0:
            continue
        ca = (2.0 if sa == 0 else -1.0) if a < 0.0 else 1.0
        va = 0.0 if (a < 0.0 and sa == 0) else abs(a)
        for sb in range(2):
            if sb == 1 and b >= 0.0:
                continue
            cb = (2.0 if sb == 0 else -1.0) if b < 0.0 else 1.0
            vb = 0.0 if (b < 0.0 and sb == 0) else abs(b)
            for sc in range(2):
                if sc == 1 and c >= 0.0:
                    continue
                cc = (2.0 if sc == 0 else -1.0) if c < 0.0 else 1.0
                vc = 0.0 if (c < 0.0 and sc == 0) else abs(c)
                total += ca * cb * cc * _octant(va, vb, vc, R)
    return total


@jit
def _quadrant(a, b, rho):
    """Area of the disk ``|x| < rho`` with ``x > a, y > b``, for ``a, b >= 0``."""
    if a * a + b * b >= rho * rho:
        return 0.0
    return max(0.0, 0.5 * rho * rho * (0.5 * math.pi - _clamped_asin(a / rho) - _clamped_asin(b / rho))
               - 0.5 * a * _root(rho * rho - a * a) - 0.5 * b * _root(rho * rho - b * b) + a * b)


@jit
def _corner_2d(a, b, rho):
    """Area of the disk ``|x| < rho`` with ``x > a, y > b`` for any signs."""
    if a >= rho or b >= rho:
        return 0.0
    total = 0.0
    for sa in range(2):
        if sa == 1 and a >= 0.0:
            continue
        ca = (2.0 if sa == 0 else -1.0) if a < 0.0 else 1.0
        va = 0.0 if (a < 0.0 and sa == 0) else abs(a)
        for sb in range(2):
            if sb == 1 and b >= 0.0:
                continue
            cb = (2.0 if sb == 0 else -1.0) if b < 0.0 else 1.0
            vb = 0.0 if (b < 0.0 and sb == 0) else abs(b)
            total += ca * cb * _quadrant(va, vb, rho)
    return total


@jit
def _ball_box(x, y, z, r, p):
    """Volume of the ball (centre ``x, y, z``, radius ``r``) inside the box ``p = (lo, hi)``."""
    full = 4.0 / 3.0 * math.pi * r ** 3
    lx, ly, lz, hx, hy, hz = p[0] - x, p[1] - y, p[2] - z, p[3] - x, p[4] - y, p[5] - z
    if lx <= -r and ly <= -r and lz <= -r and hx >= r and hy >= r and hz >= r:
        return full
    dx = max(lx, 0.0, -hx)
    dy = max(ly, 0.0, -hy)
    dz = max(lz, 0.0, -hz)
    if dx * dx + dy * dy + dz * dz >= r * r:
        return 0.0
    total = 0.0
    for ex in range(2):
        bx = lx if ex == 0 else hx
        for ey in range(2):
            by = ly if ey == 0 else hy
            for ez in range(2):
                bz = lz if ez == 0 else hz
                sign = -1.0 if (ex + ey + ez) % 2 == 1 else 1.0
                total += sign * _corner(bx, by, bz, r)
    return min(full, max(0.0, total))


@jit
def _disk_rectangle(x, y, r, p):
    """Area of the disk (centre ``x, y``, radius ``r``) inside the rectangle of ``p`` (x, y ranges)."""
    full = math.pi * r * r
    lx, ly, hx, hy = p[0] - x, p[1] - y, p[3] - x, p[4] - y
    if lx <= -r and ly <= -r and hx >= r and hy >= r:
        return full
    dx = max(lx, 0.0, -hx)
    dy = max(ly, 0.0, -hy)
    if dx * dx + dy * dy >= r * r:
        return 0.0
    total = 0.0
    for ex in range(2):
        bx = lx if ex == 0 else hx
        for ey in range(2):
            by = ly if ey == 0 else hy
            sign = -1.0 if (ex + ey) % 2 == 1 else 1.0
            total += sign * _corner_2d(bx, by, r)
    return min(full, max(0.0, total))


@jit
def _lens_volume(r, big_r, d):
    """Volume shared by balls of radii ``r`` and ``big_r`` whose centres are ``d`` apart."""
    if d >= r + big_r:
        return 0.0
    if d <= abs(big_r - r):
        return 4.0 / 3.0 * math.pi * min(r, big_r) ** 3
    return (math.pi * (big_r + r - d) ** 2
            * (d * d + 2.0 * d * r - 3.0 * r * r + 2.0 * d * big_r + 6.0 * r * big_r - 3.0 * big_r * big_r) / (12.0 * d))


@jit
def _lens_area(r, big_r, d):
    """Area shared by disks of radii ``r`` and ``big_r`` whose centres are ``d`` apart."""
    if r <= 0.0 or d >= r + big_r:
        return 0.0
    if d <= abs(big_r - r):
        m = min(r, big_r)
        return math.pi * m * m
    c1 = min(1.0, max(-1.0, (d * d + r * r - big_r * big_r) / (2.0 * d * r)))
    c2 = min(1.0, max(-1.0, (d * d + big_r * big_r - r * r) / (2.0 * d * big_r)))
    k = (-d + r + big_r) * (d + r - big_r) * (d - r + big_r) * (d + r + big_r)
    return r * r * math.acos(c1) + big_r * big_r * math.acos(c2) - 0.5 * _root(k)


@jit
def _ball_cylinder(x, y, z, r, p, nodes, weights):
    """Volume of the ball (centre ``x, y, z``, radius ``r``) inside the cylinder ``p``: the axis
    integral of the lens area of its section and the cylinder's disk (module docstring)."""
    ex, ey, ez = x - p[0], y - p[1], z - p[2]
    zc = ex * p[3] + ey * p[4] + ez * p[5]              # axial coordinate of the centre
    qx, qy, qz = ex - zc * p[3], ey - zc * p[4], ez - zc * p[5]
    d = math.sqrt(qx * qx + qy * qy + qz * qz)           # distance from the axis
    big_r = p[6]
    half = 0.5 * p[7]
    if d >= big_r + r or abs(zc) >= half + r:
        return 0.0
    if d + r <= big_r and abs(zc) + r <= half:
        return 4.0 / 3.0 * math.pi * r ** 3
    z0 = max(-half, zc - r)
    z1 = min(half, zc + r)
    cuts = np.empty(8)
    cuts[0] = z0
    cuts[1] = z1
    n = 2
    if z0 < zc < z1:
        cuts[n] = zc
        n += 1
    for k in range(2):
        rb = abs(big_r - d) if k == 0 else big_r + d
        if rb < r:
            h = math.sqrt(r * r - rb * rb)
            for s in (zc - h, zc + h):
                if z0 < s < z1:
                    cuts[n] = s
                    n += 1
    cuts = np.sort(cuts[:n])
    total = 0.0
    for piece in range(n - 1):
        a, b = cuts[piece], cuts[piece + 1]
        length = b - a
        if length <= 0.0:
            continue
        part = 0.0
        for q in range(nodes.shape[0]):
            zz = a + length * nodes[q]
            rho = _root(r * r - (zz - zc) ** 2)
            part += weights[q] * _lens_area(rho, big_r, d)
        total += length * part
    return min(4.0 / 3.0 * math.pi * r ** 3, max(0.0, total))


@pkernel
def _fractions(kind, p, x, r, dimension, nodes, weights, out):  # pragma: no cover - compiled
    """``out[k]``: the fraction of body ``k`` (centre ``x[k]``, radius ``r[k]``) inside the region."""
    n = x.shape[0]
    for k in prange(n):
        rk = r[k]
        if dimension == 2:
            full = math.pi * rk * rk
            if kind == _BOX:
                v = _disk_rectangle(x[k, 0], x[k, 1], rk, p)
            else:
                dx, dy = x[k, 0] - p[0], x[k, 1] - p[1]
                v = _lens_area(rk, p[3], math.sqrt(dx * dx + dy * dy))
        else:
            full = 4.0 / 3.0 * math.pi * rk ** 3
            if kind == _BOX:
                v = _ball_box(x[k, 0], x[k, 1], x[k, 2], rk, p)
            elif kind == _BALL:
                dx, dy, dz = x[k, 0] - p[0], x[k, 1] - p[1], x[k, 2] - p[2]
                v = _lens_volume(rk, p[3], math.sqrt(dx * dx + dy * dy + dz * dz))
            else:
                v = _ball_cylinder(x[k, 0], x[k, 1], x[k, 2], rk, p, nodes, weights)
        out[k] = min(1.0, max(0.0, v / full))


def region_bounds(kind: int, p: np.ndarray, dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned bounding box ``(lower, upper)`` (3,) m of a box, ball or cylinder region
    (``kind``, ``params`` of a :class:`~contactlab.measure.volumes.MeasureRegion`); z = 0 in 2-D."""
    if kind == _BOX:
        lo, hi = p[0:3].copy(), p[3:6].copy()
    elif kind == _BALL:
        lo, hi = p[0:3] - p[3], p[0:3] + p[3]
    else:
        axis = p[3:6]
        half = 0.5 * p[7] * np.abs(axis) + p[6] * np.sqrt(np.maximum(0.0, 1.0 - axis ** 2))
        lo, hi = p[0:3] - half, p[0:3] + half
    if dimension == 2:
        lo[2], hi[2] = 0.0, 0.0
    return lo, hi
