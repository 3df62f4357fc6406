"""Support mappings of the convex shapes (for GJK/EPA) and setup-time helpers for polyhedra.

The support point of a convex set ``A`` for a direction ``d`` is a point ``s_A(d)`` of ``A`` that
maximises ``d . x``; ``h_A(d) = d . s_A(d)`` is the support function.  Support mappings add up
over Minkowski sums (notes 004, mixed pairs of shapes): ``s_{A (+) B}(d) = s_A(d) + s_B(d)`` and
``s_{-B}(d) = -s_B(-d)``, which is all that GJK and EPA (:mod:`contactlab.geometry.gjk_epa`)
need to know about a shape.  ``d`` may have any length > 0; the result does not depend on it.

Compiled building blocks (``@jit``, inlined into their callers):

* :func:`support_local` -- support point (m, body frame) for a body-frame direction, for every
  shape kind of :mod:`contactlab.geometry.shapes`;
* :func:`support` -- the same for a body at a global position and orientation;
* :func:`ellipsoid_support_local` -- the ellipsoid's closed form;
* :func:`shape_radius` -- a size scale of a shape (for tolerances).

Setup-time helpers (NumPy, not compiled): :func:`polyhedron_data` and :func:`box_data` build
``POLYHEDRON`` parameter blocks.

Where several points are extremal (a face or an edge of a polyhedron or triangle seen head-on)
the first extremal vertex in storage order is returned.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial import ConvexHull

from .._jit import jit
from .convex_roll import roll_support_local
from .rotation import to_body, to_global
from .shapes import ELLIPSOID, POLYHEDRON, ROLL, SPHERE, TRIANGLE

__all__ = ["support_local", "support", "ellipsoid_support_local", "shape_radius", "polyhedron_data",
           "box_data", "POLY_HEADER"]

#: floats before the vertex coordinates in a POLYHEDRON block: nv, nt
POLY_HEADER = 2


# ----------------------------------------------------------------------------------------------
# compiled building blocks
# ----------------------------------------------------------------------------------------------
@jit
def ellipsoid_support_local(a, b, c, d):
    """Support point (m, body frame) of the ellipsoid ``x^2/a^2 + y^2/b^2 + z^2/c^2 <= 1``
    (semi-axes ``a, b, c`` in m along the body axes) for the body-frame direction ``d``.

    Closed form ``A^2 d / sqrt(d . A^2 d) = A (A d) / |A d|`` with ``A = diag(a, b, c)``: the
    surface point whose outward normal is ``d``.  ``d`` need not be unit; ``d = 0`` gives NaN.
    """
    ad0 = a * d[0]
    ad1 = b * d[1]
    ad2 = c * d[2]
    # |A d| without overflow/underflow for any length of d
    m = max(abs(ad0), abs(ad1), abs(ad2))
    u0 = ad0 / m
    u1 = ad1 / m
    u2 = ad2 / m
    inv = 1.0 / math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    return (a * u0 * inv, b * u1 * inv, c * u2 * inv)


@jit
def _vertex_support(data, first, count, d):
    """The vertex of largest ``d . v`` among ``count`` points stored as ``x, y, z`` triples from
    ``data[first]`` (the first one of equal largest value)."""
    best = first
    best_h = d[0] * data[first] + d[1] * data[first + 1] + d[2] * data[first + 2]
    for k in range(1, count):
        o = first + 3 * k
        h = d[0] * data[o] + d[1] * data[o + 1] + d[2] * data[o + 2]
        if h > best_h:
            best_h = h
            best = o
    return (data[best], data[best + 1], data[best + 2])


@jit
def support_local(kind, data, ref, d):
    """Support point (m, body frame) of the shape ``kind`` with parameters ``data[ref:]``
    (layouts in :mod:`contactlab.geometry.shapes`) for the body-frame direction ``d`` (3-tuple,
    any length > 0).

    * SPHERE: the surface point ``r d / |d|``;
    * ELLIPSOID: :func:`ellipsoid_support_local`;
    * POLYHEDRON: the vertex of largest ``d . v`` (all vertices are scanned);
    * TRIANGLE: the vertex of largest ``d . v``; its coordinates are global already (the triangle
      is used with position 0 and the identity orientation);
    * ROLL: :func:`contactlab.geometry.convex_roll.roll_support_local`.

    An unknown kind gives ``(nan, nan, nan)`` (compiled code does not raise).
    """
    if kind == SPHERE:
        r = data[ref]
        s = r / math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        return (s * d[0], s * d[1], s * d[2])
    if kind == ELLIPSOID:
        return ellipsoid_support_local(data[ref], data[ref + 1], data[ref + 2], d)
    if kind == POLYHEDRON:
        return _vertex_support(data, ref + POLY_HEADER, int(data[ref]), d)
    if kind == TRIANGLE:
        return _vertex_support(data, ref, 3, d)
    if kind == ROLL:
        return roll_support_local(data, ref, d)
    return (math.nan, math.nan, math.nan)


@jit
def support(kind, data, ref, pos, quat, d):
    """Global support point (m) of a body of shape ``kind`` (parameters ``data[ref:]``) whose
    centre of mass is at ``pos`` (m, global) and whose orientation is the unit quaternion
    ``quat = (w, x, y, z)`` (body to global), for the global direction ``d`` (any length > 0):
    ``pos + R s_local(R^T d)``."""
    p = support_local(kind, data, ref, to_body(quat, d))
    g = to_global(quat, p)
    return (pos[0] + g[0], pos[1] + g[1], pos[2] + g[2])


@jit
def shape_radius(kind, data, ref):
    """A size scale (m) of the shape: the radius of a sphere about the body origin that contains
    it (SPHERE ``r``, ELLIPSOID ``max(a, b, c)``, POLYHEDRON the largest vertex distance, ROLL the
    stored bounding radius), for a TRIANGLE the largest distance of a vertex from its centroid.
    Used to scale tolerances; NaN for an unknown kind."""
    if kind == SPHERE:
        return data[ref]
    if kind == ELLIPSOID:
        return max(data[ref], data[ref + 1], data[ref + 2])
    if kind == POLYHEDRON:
        nv = int(data[ref])
        o = ref + POLY_HEADER
        r2 = 0.0
        for k in range(nv):
            x = data[o + 3 * k]
            y = data[o + 3 * k + 1]
            z = data[o + 3 * k + 2]
            r2 = max(r2, x * x + y * y + z * z)
        return math.sqrt(r2)
    if kind == TRIANGLE:
        cx = (data[ref] + data[ref + 3] + data[ref + 6]) / 3.0
        cy = (data[ref + 1] + data[ref + 4] + data[ref + 7]) / 3.0
        cz = (data[ref + 2] + data[ref + 5] + data[ref + 8]) / 3.0
        r2 = 0.0
        for k in range(3):
            x = data[ref + 3 * k] - cx
            y = data[ref + 3 * k + 1] - cy
            z = data[ref + 3 * k + 2] - cz
            r2 = max(r2, x * x + y * y + z * z)
        return math.sqrt(r2)
    if kind == ROLL:
        return data[ref + 2]
    return math.nan


# ----------------------------------------------------------------------------------------------
# setup-time helpers (NumPy)
# ----------------------------------------------------------------------------------------------
def polyhedron_data(vertices, triangles=None) -> np.ndarray:
    """The ``POLYHEDRON`` parameter block ``[nv, nt, x0, y0, z0, ..., t0a, t0b, t0c, ...]``
    (float64, vertex indices stored as floats).

    ``vertices``: (nv, 3) body-frame coordinates (m) -- the caller puts the origin at the centre
    of mass and the axes along the principal axes.  ``triangles``: (nt, 3) vertex indices of the
    surface triangles, counter-clockwise seen from outside; when omitted they are those of the
    convex hull (``scipy.spatial.ConvexHull``), oriented counter-clockwise seen from outside, and
    the vertices that are not hull vertices are dropped (they never support the shape).  The
    compiled code only uses the vertices (support mapping); the triangles serve output and
    volume computations.
    """
    v = np.asarray(vertices, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 4:
        raise ValueError(f"vertices must have shape (nv >= 4, 3), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("vertices must be finite")
    if triangles is None:
        hull = ConvexHull(v)
        keep = np.asarray(hull.vertices, dtype=np.int64)
        keep.sort()
        new_index = np.full(len(v), -1, dtype=np.int64)
        new_index[keep] = np.arange(len(keep))
        t = np.asarray(hull.simplices, dtype=np.int64).copy()
        # orient each facet counter-clockwise seen from outside: (b - a) x (c - a) along the
        # facet's outward normal (the first three entries of ConvexHull.equations)
        a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
        flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0.0
        t[flip, 1], t[flip, 2] = t[flip, 2].copy(), t[flip, 1].copy()
        v = v[keep]
        t = new_index[t]
    else:
        t = np.asarray(triangles, dtype=np.int64)
        if t.ndim != 2 or t.shape[1] != 3 or t.shape[0] < 4:
            raise ValueError(f"triangles must have shape (nt >= 4, 3), got {t.shape}")
        if t.min() < 0 or t.max() >= len(v):
            raise ValueError(f"triangle vertex indices must lie in [0, {len(v) - 1}]")
    return np.concatenate(([float(len(v)), float(len(t))], v.ravel(), t.astype(np.float64).ravel()))


def box_data(half_extents) -> np.ndarray:
    """``POLYHEDRON`` block of the box ``|x| <= hx, |y| <= hy, |z| <= hz`` (half extents in m,
    body frame centred on the box): 8 vertices ``(+-hx, +-hy, +-hz)`` (vertex ``k`` has the sign
    of bit 0, 1, 2 of ``k`` on x, y, z: set = +) and 12 triangles, two per face,
    counter-clockwise seen from outside."""
    h = np.asarray(half_extents, dtype=np.float64).reshape(3)
    if not np.all(np.isfinite(h)) or np.any(h <= 0.0):
        raise ValueError(f"half extents must be finite and > 0, got {h.tolist()}")
    k = np.arange(8)
    signs = np.stack([np.where(k & 1, 1.0, -1.0), np.where(k & 2, 1.0, -1.0), np.where(k & 4, 1.0, -1.0)], axis=1)
    verts = signs * h
    # faces as quads (v0, v1, v2, v3) counter-clockwise seen from outside -> triangles (0,1,2), (0,2,3)
    quads = [(0, 4, 6, 2),   # -x
             (1, 3, 7, 5),   # +x
             (0, 1, 5, 4),   # -y
             (2, 6, 7, 3),   # +y
             (0, 2, 3, 1),   # -z
             (4, 5, 7, 6)]   # +z
    tris = []
    for q in quads:
        tris.append((q[0], q[1], q[2]))
        tris.append((q[0], q[2], q[3]))
    return polyhedron_data(verts, np.array(tris, dtype=np.int64))
