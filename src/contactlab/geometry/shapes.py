"""Shape kinds and the layout of their parameters (one flat float64 array for all bodies).

Every body is a row of the per-body arrays (position of its centre of mass, velocity, angular
velocity, orientation quaternion, mass, principal moments of inertia), in the order the bodies
were added.  ``shape_kind[b]`` says what it is and ``shape_ref[b]`` where its parameters start in
``shape_data`` (float64, m unless said otherwise).  Parameters are in the body's own frame: its
origin is the centre of mass and its axes are the principal axes of inertia.

==========  =====  ===========================================================================
kind        value  ``shape_data[ref:]``
==========  =====  ===========================================================================
SPHERE      0      ``r``
ELLIPSOID   1      ``a, b, c``: semi-axes along the body's x, y, z axes
POLYHEDRON  2      ``nv, nt, x0, y0, z0, ..., x_{nv-1}, ..., t0a, t0b, t0c, ...``: ``nv`` vertices
                   (body frame) of a convex polyhedron, then ``nt`` surface triangles (vertex
                   indices stored as floats, counter-clockwise seen from outside)
ROLL       3      ``n, length, r_bound, offset, k_0, ..., k_{n-1}``: convex roll (spec 003),
                   axis = body x; hull radius ``r(s) = sum_i k_i s^(n-1-i)`` for ``s`` in
                   ``[-length/2, length/2]`` measured from the roll's centre, which sits at body
                   ``x = offset`` (``-`` the centroid of the hull); ``r_bound`` the radius of
                   the bounding sphere about the centre of mass
TRIANGLE    4      ``ax, ay, az, bx, by, bz, cx, cy, cz``: a triangle of a mesh wall, global
                   frame (used with position 0 and the identity orientation)
ELLIPSE     5      ``a, b``: semi-axes along the body's x, y axes of an ellipse of a 2-D scene
                   (``Scene(dimension=2)``)
==========  =====  ===========================================================================

2-D scenes hold SPHERE bodies (their disks: solid cylinders of the scene's thickness) and
ELLIPSE bodies, solid elliptic cylinders of that thickness whose axis is z, centred in the plane
z = 0, orientation a rotation about z by the angle ``theta`` (quaternion ``(cos(theta/2), 0, 0,
sin(theta/2))``, so the body's x axis is ``(cos theta, sin theta)``).  An ellipse is a kind of its
own, not an ELLIPSOID with a flag, because everything about it differs from a flattened
ellipsoid: its narrow phase is the 2-D common normal (one unknown angle), its radius of curvature
the plane curve's ``a^2 b^2 / h^3`` (not the Gaussian ``a b c / h^2``), its mass and inertia
those of a cylinder, and it meets only disks, ellipses and line walls.
"""
from __future__ import annotations

import numpy as np

from .convex_roll import roll_surface

__all__ = ["SPHERE", "ELLIPSOID", "POLYHEDRON", "ROLL", "TRIANGLE", "ELLIPSE", "KIND_NAMES", "OUTLINE_SIDES",
           "surface_triangles", "ellipse_fan"]

SPHERE = 0
ELLIPSOID = 1
POLYHEDRON = 2
ROLL = 3
TRIANGLE = 4
ELLIPSE = 5

KIND_NAMES = {SPHERE: "sphere", ELLIPSOID: "ellipsoid", POLYHEDRON: "polyhedron", ROLL: "convex roll",
              TRIANGLE: "triangle", ELLIPSE: "ellipse"}

#: sides of the polygon that stands for a disk or an ellipse in output (:func:`ellipse_fan`)
OUTLINE_SIDES = 48


def _sphere_grid(n_lat: int = 12, n_lon: int = 24):
    """A closed unit sphere: (V, 3) points and (F, 3) counter-clockwise triangles (seen from outside)."""
    theta = np.linspace(0.0, np.pi, n_lat + 1)[1:-1]
    phi = np.linspace(0.0, 2.0 * np.pi, n_lon, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    pts = np.vstack([[0.0, 0.0, 1.0], ring, [0.0, 0.0, -1.0]])
    south = len(pts) - 1
    faces = []
    for b in range(n_lon):
        faces.append([0, 1 + b, 1 + (b + 1) % n_lon])
    for a in range(n_lat - 2):
        for b in range(n_lon):
            p0 = 1 + a * n_lon + b
            p1 = 1 + a * n_lon + (b + 1) % n_lon
            q0 = p0 + n_lon
            q1 = p1 + n_lon
            faces += [[p0, q0, q1], [p0, q1, p1]]
    last = 1 + (n_lat - 2) * n_lon
    for b in range(n_lon):
        faces.append([last + b, south, last + (b + 1) % n_lon])
    return pts, np.array(faces, dtype=np.int64)


def ellipse_fan(a: float, b: float, sides: int = OUTLINE_SIDES):
    """A flat ellipse of semi-axes ``a``, ``b`` (m) in the body's x-y plane as a fan of triangles
    about its centre: ``(vertices (sides + 1, 3), triangles (sides, 3))``, the centre first, the
    outline's vertices on the ellipse, counter-clockwise seen from +z (a disk: ``a = b = r``)."""
    phi = 2.0 * np.pi * np.arange(sides) / sides
    pts = np.zeros((sides + 1, 3))
    pts[1:, 0] = a * np.cos(phi)
    pts[1:, 1] = b * np.sin(phi)
    k = np.arange(sides)
    return pts, np.stack([np.zeros(sides, dtype=np.int64), 1 + k, 1 + (k + 1) % sides], axis=1)


def surface_triangles(kind: int, data: np.ndarray, ref: int):
    """The surface of a body in its own frame for output: ``(vertices (V, 3), triangles (F, 3))``
    (an ellipse: the flat fan of :func:`ellipse_fan`)."""
    if kind == ELLIPSE:
        return ellipse_fan(float(data[ref]), float(data[ref + 1]))
    if kind == SPHERE:
        pts, faces = _sphere_grid()
        return pts * data[ref], faces
    if kind == ELLIPSOID:
        pts, faces = _sphere_grid()
        return pts * np.asarray(data[ref: ref + 3]), faces
    if kind == POLYHEDRON:
        nv, nt = int(data[ref]), int(data[ref + 1])
        verts = np.asarray(data[ref + 2: ref + 2 + 3 * nv]).reshape(nv, 3)
        tris = np.asarray(data[ref + 2 + 3 * nv: ref + 2 + 3 * nv + 3 * nt]).reshape(nt, 3).astype(np.int64)
        return verts.copy(), tris
    if kind == ROLL:
        n = int(data[ref])
        return roll_surface(np.asarray(data[ref: ref + 4 + n]))
    raise ValueError(f"no surface for shape kind {kind}")
