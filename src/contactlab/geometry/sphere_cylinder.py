"""Narrow phase for a sphere and a cylinder wall (inside or outside, infinite or open-ended).

A cylinder wall is a wall (one row of the scene's walls, numbered with the plane walls) of kind
:data:`CYLINDER`: its axis passes through the wall's point (which moves with the wall's
translation velocity) along the unit ``axis`` (stored as the wall's "normal"), and its shape row
(``Model.wall_shape``, columns below) holds the radius ``Rc``, the side the bodies are on and the
extent along the axis.

Geometry (``t`` the axial coordinate of the sphere's centre from the axis point, ``rho`` its
distance from the axis, ``e`` the unit radial direction):

* **infinite** (no end, ``low = -inf`` and ``high = +inf``): one-sided, like a plane wall: the
  wall's material fills the other side.  ``side = +1`` (bodies inside, a silo or a cell): height
  ``Rc - rho``, normal ``+e`` (from the sphere into the wall); ``side = -1`` (bodies outside, a
  pillar): height ``rho - Rc``, normal ``-e``.  The overlap ``r - height`` grows without bound as
  a sphere goes deeper, as for a plane.
* **open-ended** (at least one finite end): a thin tube of zero thickness, open at its ends.  A
  sphere whose centre lies between the ends touches the lateral surface from the side its centre
  is on (so spheres that leave through an open end and pile up around the outside of the tube are
  held by its outer face); a sphere whose centre lies beyond an end touches the rim there, a
  circle: height = the distance from the centre to the nearest point of the circle, normal
  towards that point.  Lateral and rim contacts join continuously at the end planes.  A sphere
  passes out of the open end without a force as long as it keeps clear of the rim.  ``side``
  makes no difference to an open-ended tube (but for a centre exactly on the surface, which
  counts as on that side).

Curvature (``radius`` of the record, the effective radius the laws use; ``radius_j`` stays
``inf``, so that laws which treat the partner of radius ``inf`` as a wall, e.g. the connector
lengths of the bonded laws, do so here as well).  A sphere of radius ``r`` on the lateral surface
meets a surface curved in one direction only: the relative radii of curvature are
``R' = 1 / (1/r - 1/Rc)`` around the axis for a concave (inside) contact or
``R' = 1 / (1/r + 1/Rc)`` for a convex (outside) one, and ``R'' = r`` along the axis.  The record's
radius is Hertz's equivalent radius of such an elliptical contact, ``R_e = sqrt(R' R'')``
(Johnson, *Contact Mechanics*, 1985, section 4.2): a Hertz law then gives ``F = 4/3 E* sqrt(R_e)
d^(3/2)``, which for ``Rc >> r`` is the plane's ``R_e = r``.  (LAMMPS' and LIGGGHTS' granular walls
use the sphere's radius ``r`` whatever the curvature: for a bore of 10 radii the difference in
``R_e`` is 5 %, in the Hertz force 2.7 %.)  ``R'`` is capped at ``100 r`` (a bore within 1 % of the
sphere's diameter, a conforming contact outside Hertz's assumptions).  A rim contact is a sphere
on a sharp edge, which Hertz does not describe: it uses ``r``, as a plane would.

The record's contact volume and area (for volume-based laws) are those of the sphere cut by the
tangent plane at the contact (:func:`.lens.sphere_halfspace_cap` of the height): a function of the
overlap alone, so a law of the volume still conserves energy, an approximation of the true
sphere-cylinder intersection.

The NumPy twin :func:`cylinder_surface_np` (the same rules on arrays) serves the observables, the
initial-overlap check and the tests.
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..vec import add, cross, dot, scale, sub
from .sphere_wall import wall_record

__all__ = ["sphere_cylinder", "cylinder_surface", "cylinder_contact_radius", "cylinder_surface_np",
           "cylinder_contact_radius_np", "WALL_PLANE", "WALL_CYLINDER", "WALL_KIND_NAMES", "CYL_RADIUS", "CYL_SIDE",
           "CYL_LOW", "CYL_HIGH", "N_WALL_SHAPE", "CONCAVE", "CONVEX", "RIM", "MAX_CONFORMITY"]

#: wall kinds (``Model.wall_kind``): an infinite plane, a cylinder
WALL_PLANE = 0
WALL_CYLINDER = 1
WALL_KIND_NAMES = ("plane", "cylinder")

# columns of Model.wall_shape (per wall; zero for a plane)
CYL_RADIUS = 0   # Rc, m
CYL_SIDE = 1     # +1: bodies inside, -1: bodies outside
CYL_LOW = 2      # m, the lower end along the axis from the wall's point (-inf: none)
CYL_HIGH = 3     # m, the upper end (+inf: none)
N_WALL_SHAPE = 4

#: what a contact touches (the third value of :func:`cylinder_surface`)
CONCAVE = 0   # the lateral surface from inside
CONVEX = 1    # the lateral surface from outside
RIM = 2       # the rim circle at an open end

#: the largest ``R' / r`` of a concave contact (see the module docstring)
MAX_CONFORMITY = 100.0


@jit
def _perpendicular(axis):
    """A unit vector perpendicular to the unit ``axis`` (for a centre on the axis)."""
    if abs(axis[0]) < 0.9:
        p = cross(axis, (1.0, 0.0, 0.0))
    else:
        p = cross(axis, (0.0, 1.0, 0.0))
    return scale(1.0 / math.sqrt(dot(p, p)), p)


@jit
def cylinder_surface(x, point, axis, rc, side, low, high):
    """``(height, normal, what)`` of a point ``x`` against a cylinder wall.

    ``height`` (m): distance from ``x`` to the surface along ``normal`` (negative beyond the
    surface of a one-sided infinite cylinder); ``normal``: unit, from ``x`` into the wall (the
    record's normal); ``what``: :data:`CONCAVE`, :data:`CONVEX` or :data:`RIM`.  ``point``: on
    the axis; ``axis``: unit; ``rc``: radius (m); ``side``: +1 inside, -1 outside; ``low``,
    ``high``: the ends along the axis from ``point`` (m, infinite for none).
    """
    d = sub(x, point)
    t = dot(d, axis)
    rv = sub(d, scale(t, axis))
    rho = math.sqrt(dot(rv, rv))
    e = scale(1.0 / rho, rv) if rho > 0.0 else _perpendicular(axis)
    open_ended = low > -math.inf or high < math.inf
    if low <= t <= high:
        inner = (rho < rc or (rho == rc and side > 0.0)) if open_ended else side > 0.0
        if inner:
            return rc - rho, e, CONCAVE
        return rho - rc, scale(-1.0, e), CONVEX
    # beyond an open end: the nearest point of the rim circle (never at the centre itself)
    tc = low if t < low else high
    q = add(scale(tc - t, axis), scale(rc - rho, e))
    dist = math.sqrt(dot(q, q))
    return dist, scale(1.0 / dist, q), RIM


@jit
def cylinder_contact_radius(ri, rc, what):
    """The record's effective radius (m) of a sphere of radius ``ri`` on a cylinder of radius
    ``rc``: ``sqrt(R' R'')`` on the lateral surface, ``ri`` on a rim (module docstring)."""
    if what == RIM:
        return ri
    if what == CONCAVE:
        c = max(1.0 / ri - 1.0 / rc, 1.0 / (MAX_CONFORMITY * ri))
    else:
        c = 1.0 / ri + 1.0 / rc
    return math.sqrt(ri / c)


@jit
def sphere_cylinder(xi, ri, inv_mi, vi, wi, mvi, mwi, point, axis, rc, side, low, high, wall_velocity, dt):
    """Contact geometry of sphere ``i`` and a cylinder wall (body ``j``); ``(geometry, True)``.

    ``v``/``w``: the sphere's velocities at the force time; ``mv``/``mw``: at the middle of the
    step of length ``dt``.  The wall translates at ``wall_velocity`` (m/s) and does not turn; it
    has infinite mass.  See the module docstring for the geometry and the radius.
    """
    height, n, what = cylinder_surface(xi, point, axis, rc, side, low, high)
    return wall_record(xi, ri, inv_mi, vi, wi, mvi, mwi, n, height, cylinder_contact_radius(ri, rc, what),
                       wall_velocity, dt), True


# ---------------------------------------------------------------------- NumPy twin

def cylinder_surface_np(x, point, axis, shape):
    """:func:`cylinder_surface` on arrays: ``x`` (n, 3) points, one wall (``point`` (3,),
    unit ``axis`` (3,), ``shape`` its row of ``Model.wall_shape``).  Returns ``height`` (n,),
    ``normal`` (n, 3) and ``what`` (n,) int."""
    x = np.asarray(x, dtype=float).reshape(-1, 3)
    axis = np.asarray(axis, dtype=float)
    rc, side, low, high = (float(v) for v in shape[:N_WALL_SHAPE])
    d = x - np.asarray(point, dtype=float)
    t = d @ axis
    rv = d - t[:, None] * axis
    rho = np.linalg.norm(rv, axis=1)
    perp = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
    perp /= np.linalg.norm(perp)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(rho[:, None] > 0.0, rv / rho[:, None], perp)
    open_ended = low > -math.inf or high < math.inf
    lateral = (t >= low) & (t <= high)
    inner = ((rho < rc) | ((rho == rc) & (side > 0))) if open_ended else np.full(len(t), side > 0)
    height = np.where(inner, rc - rho, rho - rc)
    normal = np.where(inner[:, None], e, -e)
    what = np.where(inner, CONCAVE, CONVEX)
    rim = ~lateral
    if rim.any():
        tc = np.where(t[rim] < low, low, high)
        q = (tc - t[rim])[:, None] * axis + (rc - rho[rim])[:, None] * e[rim]
        dist = np.linalg.norm(q, axis=1)
        height[rim] = dist
        normal[rim] = q / dist[:, None]
        what[rim] = RIM
    return height, normal, what


def cylinder_contact_radius_np(ri, rc, what):
    """:func:`cylinder_contact_radius` on arrays (``ri`` (n,), ``what`` (n,))."""
    ri = np.asarray(ri, dtype=float)
    c = np.where(what == CONCAVE, np.maximum(1.0 / ri - 1.0 / rc, 1.0 / (MAX_CONFORMITY * ri)), 1.0 / ri + 1.0 / rc)
    return np.where(what == RIM, ri, np.sqrt(ri / c))
