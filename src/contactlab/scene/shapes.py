"""Non-spherical rigid bodies for the scene builder: orientation input, mass properties, shape blocks.

Every body is stored in its principal frame about its centre of mass (see
:mod:`contactlab.geometry.shapes`).  The functions here turn what a user gives (an orientation as a
rotation matrix or a quaternion, vertices in the user's own frame, a density) into that form.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from .._arguments import as_float_array, as_positive
from ..magnitudes import check_magnitudes
from ..errors import InputError
from ..geometry.convex_roll import roll_mass_properties, roll_shape_data
from ..geometry.rotation import quaternion_from_matrix, rotation_matrix
from ..geometry.shapes import ELLIPSOID, POLYHEDRON, ROLL

__all__ = ["as_orientation", "ellipsoid_body", "polyhedron_body",
           "roll_body", "box_vertices", "Body"]


def as_orientation(name: str, value) -> np.ndarray:
    """An orientation given as a (3, 3) rotation matrix (body to global: its columns are the body's
    axes in global coordinates) or a unit quaternion ``(w, x, y, z)``, as a unit quaternion."""
    if value is None:
        return np.array([1.0, 0.0, 0.0, 0.0])
    a = as_float_array(name, value)
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite, got {value!r}")
    if a.shape == (4,):
        n = np.linalg.norm(a)
        if abs(n - 1.0) > 1e-6:
            raise InputError(f"{name}: a quaternion (w, x, y, z) must have norm 1, got norm {n:.8g} ({value!r})")
        return a / n
    if a.shape == (3, 3):
        err = np.abs(a.T @ a - np.eye(3)).max()
        det = np.linalg.det(a)
        if err > 1e-6 or det < 0:
            raise InputError(f"{name} must be a rotation matrix (orthonormal, determinant +1); got one with "
                             f"|R^T R - I| = {err:.3g} and determinant {det:.6g}")
        return quaternion_from_matrix(a)
    raise InputError(f"{name} must be a 3x3 rotation matrix or a unit quaternion (w, x, y, z), got shape {a.shape}")


class Body:
    """A non-spherical body ready for the builder: everything in its principal frame."""

    def __init__(self, kind, block, mass, principal_inertia, centre, orientation, bounding_radius, contact_radius,
                 volume):
        self.kind = kind
        self.block = np.asarray(block, dtype=np.float64)
        self.mass = float(mass)
        self.principal_inertia = np.asarray(principal_inertia, dtype=float)
        self.centre = np.asarray(centre, dtype=float)          # centre of mass, global, m
        self.orientation = np.asarray(orientation, dtype=float)  # principal frame to global
        self.bounding_radius = float(bounding_radius)
        self.contact_radius = float(contact_radius)
        self.volume = float(volume)


def _principal(mass_or_none, inertia_or_none, mass, inertia_tensor):
    """Mass and the inertia tensor (3, 3, body frame), with the user's values where given."""
    if mass_or_none is not None:
        m_user = as_positive("mass", mass_or_none, "kg")
        inertia_tensor = inertia_tensor * (m_user / mass)
        mass = m_user
    if inertia_or_none is not None:
        i = as_float_array("inertia", inertia_or_none)
        if i.shape == (3,):
            i = np.diag(i)
        if i.shape != (3, 3) or not np.all(np.isfinite(i)) or np.abs(i - i.T).max() > 1e-12 * np.abs(i).max():
            raise InputError(f"inertia must be 3 principal moments or a symmetric 3x3 tensor (kg m^2, body frame), "
                             f"got {inertia_or_none!r}")
        ev = np.linalg.eigvalsh(i)
        if ev.min() <= 0 or ev[0] + ev[1] < ev[2] * (1 - 1e-9):
            raise InputError(f"inertia {inertia_or_none!r} is not the inertia of a rigid body (its principal moments "
                             f"{ev.tolist()} must be > 0 and satisfy the triangle inequality)")
        inertia_tensor = i
    return mass, inertia_tensor


def ellipsoid_body(position, semi_axes, orientation, density, mass=None, inertia=None) -> Body:
    """An ellipsoid with semi-axes ``(a, b, c)`` (m) along its own x, y, z axes."""
    axes = as_float_array("semi_axes", semi_axes)
    if axes.shape != (3,) or not np.all(np.isfinite(axes)) or np.any(axes <= 0):
        raise InputError(f"semi_axes must be three lengths > 0 m, got {semi_axes!r}")
    a, b, c = check_magnitudes("semi_axes", axes, "m")
    volume = 4.0 / 3.0 * math.pi * a * b * c
    m = density * volume
    tensor = np.diag([m / 5 * (b * b + c * c), m / 5 * (a * a + c * c), m / 5 * (a * a + b * b)])
    m, tensor = _principal(mass, inertia, m, tensor)
    if np.abs(tensor - np.diag(np.diag(tensor))).max() > 1e-12 * np.abs(tensor).max():
        raise InputError("the inertia tensor of an ellipsoid must be diagonal in its frame (its semi-axes)")
    return Body(ELLIPSOID, axes, m, np.diag(tensor), position, orientation, axes.max(), axes.min(), volume)


def _hull(vertices):
    v = as_float_array("vertices", vertices)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or not np.all(np.isfinite(v)):
        raise InputError(f"vertices must be an (n, 3) array of at least 4 finite points (m), got shape {v.shape}")
    check_magnitudes("vertices", v, "m", positive=False)
    try:
        hull = ConvexHull(v)
    except QhullError as exc:
        raise InputError(f"the vertices do not span a volume (flat or degenerate polyhedron): "
                         f"{str(exc).strip().splitlines()[0]}") from None
    if len(hull.vertices) > 64:
        raise InputError(f"a convex polyhedron may have at most 64 vertices on its hull, got {len(hull.vertices)}")
    used = np.sort(hull.vertices)
    index = -np.ones(len(v), dtype=np.int64)
    index[used] = np.arange(len(used))
    tris = index[hull.simplices]
    pts = v[used]
    # orient every triangle counter-clockwise seen from outside
    centre = pts.mean(axis=0)
    for k, (i, j, l) in enumerate(tris):
        nrm = np.cross(pts[j] - pts[i], pts[l] - pts[i])
        if np.dot(nrm, pts[i] - centre) < 0:
            tris[k] = (i, l, j)
    return pts, tris


def polyhedron_mass_properties(points, tris):
    """Volume, centroid and inertia tensor per unit density (about the centroid) of a closed,
    outward-oriented triangulated surface, by tetrahedra from the origin (exact)."""
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    volume = det.sum() / 6.0
    centroid = (det[:, None] * (a + b + c)).sum(axis=0) / (24.0 * volume)
    # second moments of each tetrahedron (0, a, b, c): integral of x x^T
    s = a + b + c
    cov = (np.einsum("k,ki,kj->ij", det, a, a) + np.einsum("k,ki,kj->ij", det, b, b)
           + np.einsum("k,ki,kj->ij", det, c, c) + np.einsum("k,ki,kj->ij", det, s, s)) / 120.0
    cov -= volume * np.outer(centroid, centroid)
    tensor = np.trace(cov) * np.eye(3) - cov
    return volume, centroid, tensor


def polyhedron_body(vertices, position, orientation, density, mass=None, inertia=None) -> Body:
    """A convex polyhedron, the convex hull of ``vertices`` ((n, 3), m, in its own frame: placed at
    ``position`` with ``orientation``).  Its centre of mass and principal axes are computed."""
    pts, tris = _hull(vertices)
    volume, centroid, tensor = polyhedron_mass_properties(pts, tris)
    m = density * volume
    tensor = tensor * density
    m, tensor = _principal(mass, inertia, m, tensor)
    moments, axes = np.linalg.eigh(tensor)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1.0
    r_user = rotation_matrix(orientation)
    local = (pts - centroid) @ axes           # vertices in the principal frame
    block = np.concatenate([[len(local), len(tris)], local.ravel(), tris.ravel().astype(float)])
    centre = np.asarray(position, float) + r_user @ centroid
    q = quaternion_from_matrix(r_user @ axes)
    bound = float(np.linalg.norm(local, axis=1).max())
    return Body(POLYHEDRON, block, m, moments, centre, q, bound, (3.0 * volume / (4.0 * math.pi)) ** (1 / 3), volume)


def box_vertices(half_extents) -> np.ndarray:
    """(8, 3) corners of a box centred at the origin with half-extents ``(hx, hy, hz)`` (m)."""
    h = as_float_array("half_extents", half_extents)
    if h.shape != (3,) or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise InputError(f"half_extents must be three lengths > 0 m, got {half_extents!r}")
    return np.array([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def roll_body(position, orientation, coefficients, length, density, mass=None, inertia=None) -> Body:
    """A convex roll (spec 003): hull radius polynomial ``coefficients`` (numpy.polyval order, m),
    ``length`` (m), axis = its own x axis; ``position`` is the roll's centre (s = 0)."""
    block = roll_shape_data(coefficients, length)
    m, centroid_s, moments = roll_mass_properties(coefficients, length, density)
    tensor = np.diag(moments)
    m, tensor = _principal(mass, inertia, m, tensor)
    if np.abs(tensor - np.diag(np.diag(tensor))).max() > 1e-12 * np.abs(tensor).max():
        raise InputError("the inertia tensor of a roll must be diagonal in its frame (axis = local x)")
    r = rotation_matrix(orientation)
    centre = np.asarray(position, float) + r @ np.array([centroid_s, 0.0, 0.0])
    radii = np.polyval(np.asarray(coefficients, float), np.linspace(-0.5 * length, 0.5 * length, 201))
    volume = m / density if mass is None else float("nan")
    return Body(ROLL, block, m, np.diag(tensor), centre, orientation, float(block[2]), float(radii.max()), volume)
