"""Volume, centroid and second moments of a union of (possibly overlapping) spheres, overlaps
counted once: the mass properties of a clump.

The method (exact in the radial direction, adaptive quadrature over directions):

* The union is split into disjoint pieces with the *power diagram* of the spheres: a point ``x`` is
  given to the sphere ``i`` of smallest power ``|x - c_i|^2 - r_i^2``.  A point of the union has a
  negative power for the sphere that holds it, so the sphere of smallest power holds it too: the
  union is the disjoint union of ``B_i ∩ P_i`` (ball ``i`` and its power cell, both convex).  Two
  spheres that overlap meet their share at the plane through their intersection circle; a sphere
  inside another gets nothing.  Three or more mutually overlapping spheres need no special case.
* ``B_i ∩ P_i`` is convex, so every ray from ``c_i`` in a direction ``u`` crosses it along one
  segment ``t0 <= t <= t1``: ``t <= r_i`` (the ball) and, for each other sphere ``j``,
  ``2 t u.(c_j - c_i) <= |c_j - c_i|^2 + r_i^2 - r_j^2`` (its power plane).  The integrals of 1,
  ``y`` and ``y y^T`` (``y = t u``) along the ray are ``int t^2 dt``, ``u int t^3 dt``,
  ``u u^T int t^4 dt``: closed forms.
* Over the sphere of directions (polar angle ``theta``, azimuth ``phi``, area element
  ``sin(theta) dtheta dphi``: smooth, where ``cos(theta)`` as a coordinate has a square-root
  singularity at the poles) the ray integrals are continuous and piecewise smooth (kinks where the segment's
  end switches from the sphere to a plane); they are integrated by adaptive 5 x 5 Gauss-Legendre
  cells: a cell is split in four until the four children agree with their parent within its
  share of the tolerance (``tolerance`` times the cell's size over ``2 pi``, in units of the
  sphere's own ``r^3``, ``r^4`` and ``r^5`` for the volume, first and second moments: a share per
  unit length, since the error concentrates along the kinks).

A kink that lies between a cell's outermost nodes and its edge is invisible to the nodes of the
cell and of its children (they integrate the same smooth piece and agree): the active bounds are
also computed at the cell's corners, and a cell whose corners disagree with its uniform nodes is
split whatever the agreement.

Accuracy (tests/test_clumps_mass.py), with the defaults (``tolerance=1e-5``, ``max_depth=8``):
two overlapping spheres (the lens) and three overlapping spheres in a row against the exact solid
of revolution (1-D integration of the union's circular sections): volume, centroid and second
moments within 3e-7 relative; random clumps against a Monte Carlo integration within its
statistical error.  The returned ``error`` is the sum of the accepted cells' ``|parent -
children|``, relative to the volume (1e-6 to 3e-6 in those cases: an upper bound there, the
children being far more accurate than their parent).  Smaller tolerances converge (1e-8 gives
~1e-10) but the cost grows about as ``1 / tolerance``: 0.2-0.7 s for 2-3 spheres, ~3 s for 8
mutually overlapping spheres at the default.

NumPy only (built once per clump shape, never in the step loop).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["union_moments", "UnionMoments"]

_GL_X, _GL_W = np.polynomial.legendre.leggauss(5)
#: the quadrature's 25 nodes on [-1, 1]^2 and their weights
_NODE_A = np.repeat(_GL_X, 5)
_NODE_B = np.tile(_GL_X, 5)
_NODE_W = np.repeat(_GL_W, 5) * np.tile(_GL_W, 5)
_N_NODES = 25
#: second-moment components, in this order: xx, yy, zz, xy, xz, yz
_PAIRS = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))


class UnionMoments:
    """What :func:`union_moments` returns (per unit density).

    Attributes
    ----------
    volume : float, m^3
    centroid : (3,) float64, m, in the frame of the given centres
    second_moment : (3, 3) float64, m^5: ``int (x - centroid)(x - centroid)^T dV``
    inertia : (3, 3) float64, m^5: the inertia tensor per unit density about the centroid,
        ``trace(S) 1 - S`` with ``S`` the second moment
    error : float: estimated quadrature error, relative to the volume (and to the second moment's
        size for the inertia)
    """

    def __init__(self, volume, centroid, second_moment, error):
        self.volume = float(volume)
        self.centroid = np.asarray(centroid, dtype=float)
        self.second_moment = np.asarray(second_moment, dtype=float)
        self.inertia = np.trace(self.second_moment) * np.eye(3) - self.second_moment
        self.error = float(error)


def _ray_integrals(theta, phi, i, centres, radii):
    """(K, 10) per ray direction ``(theta, phi)``: ``int t^2 dt``, ``u int t^3 dt`` (3), ``(u u^T)
    int t^4 dt`` (6, order of ``_PAIRS``) over the ray's segment in sphere ``i``'s share of the
    union, times ``sin(theta)`` (the area element)."""
    s = np.sin(theta)
    u = np.stack([s * np.cos(phi), s * np.sin(phi), np.cos(theta)], axis=1)
    t0 = np.zeros(len(theta))
    t1 = np.full(len(theta), radii[i])
    which = np.zeros(len(theta), dtype=np.int64)  # which bounds are active: the kinks' signature
    for j in range(len(radii)):
        if j == i:
            continue
        d = centres[j] - centres[i]
        slope = 2.0 * (u @ d)
        a = float(d @ d) + radii[i] ** 2 - radii[j] ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = a / slope
        up = slope > 0.0
        down = slope < 0.0
        upper = up & (bound < t1)
        lower = down & (bound > t0)
        t1 = np.where(upper, bound, t1)
        t0 = np.where(lower, bound, t0)
        which = np.where(upper, which % 64 + 64 * (j + 1), which)
        which = np.where(lower, which - which % 64 + j + 1, which)
        if a < 0.0:
            t1 = np.where(slope == 0.0, 0.0, t1)
    which = np.where(t1 <= t0, -1, which)
    t1 = np.maximum(t1, t0)
    p3 = s * (t1**3 - t0**3) / 3.0
    p4 = s * (t1**4 - t0**4) / 4.0
    p5 = s * (t1**5 - t0**5) / 5.0
    out = np.empty((len(theta), 10))
    out[:, 0] = p3
    out[:, 1:4] = u * p4[:, None]
    for c, (a, b) in enumerate(_PAIRS):
        out[:, 4 + c] = u[:, a] * u[:, b] * p5
    return out, which


def _cells_integral(cells, i, centres, radii):
    """(C, 10) integrals over the direction cells ``cells`` (C, 4): ``(theta0, theta1, phi0, phi1)``."""
    mid_theta = 0.5 * (cells[:, 0] + cells[:, 1])
    half_theta = 0.5 * (cells[:, 1] - cells[:, 0])
    mid_phi = 0.5 * (cells[:, 2] + cells[:, 3])
    half_phi = 0.5 * (cells[:, 3] - cells[:, 2])
    theta = (mid_theta[:, None] + half_theta[:, None] * _NODE_A[None, :]).ravel()
    phi = (mid_phi[:, None] + half_phi[:, None] * _NODE_B[None, :]).ravel()
    vals, which = _ray_integrals(theta, phi, i, centres, radii)
    vals = vals.reshape(len(cells), _N_NODES, 10)
    which = which.reshape(len(cells), _N_NODES)
    # the signature at the cell's corners: a kink between the outer nodes and the cell's edge is
    # invisible to the nodes of the cell and of its children (both integrate the same smooth
    # piece, agree, and miss the rest); such a cell is split whatever the agreement
    ct = np.concatenate([cells[:, 0], cells[:, 1], cells[:, 0], cells[:, 1]])
    cp = np.concatenate([cells[:, 2], cells[:, 2], cells[:, 3], cells[:, 3]])
    _, corner = _ray_integrals(ct, cp, i, centres, radii)
    corner = corner.reshape(4, len(cells)).T
    hidden = (which == which[:, :1]).all(axis=1) & (corner != which[:, :1]).any(axis=1)
    return np.einsum("cnk,n->ck", vals, _NODE_W) * (half_theta * half_phi)[:, None], hidden


def _split(cells):
    """The four children of each cell, (4C, 4), children of one cell consecutive."""
    m0, m1, p0, p1 = cells.T
    mm = 0.5 * (m0 + m1)
    pm = 0.5 * (p0 + p1)
    kids = np.stack([np.stack([m0, mm, p0, pm], 1), np.stack([mm, m1, p0, pm], 1),
                     np.stack([m0, mm, pm, p1], 1), np.stack([mm, m1, pm, p1], 1)], axis=1)
    return kids.reshape(-1, 4)


def _sphere_share(i, centres, radii, tolerance, max_depth):
    """(10,) local moments (about ``c_i``) of sphere ``i``'s share, and the error estimate
    (units of ``r_i^3``)."""
    r = radii[i]
    scale = np.array([r**3] + [r**4] * 3 + [r**5] * 6)
    n_theta, n_phi = 8, 16
    theta_edges = np.linspace(0.0, math.pi, n_theta + 1)
    phi_edges = np.linspace(0.0, 2.0 * math.pi, n_phi + 1)
    cells = np.array([(theta_edges[a], theta_edges[a + 1], phi_edges[b], phi_edges[b + 1])
                      for a in range(n_theta) for b in range(n_phi)])
    parent, hidden = _cells_integral(cells, i, centres, radii)
    total = np.zeros(10)
    error = 0.0
    for depth in range(max_depth + 1):
        if len(cells) == 0:
            break
        kids = _split(cells)
        kid_vals, kid_hidden = _cells_integral(kids, i, centres, radii)
        summed = kid_vals.reshape(-1, 4, 10).sum(axis=1)
        diff = (np.abs(summed - parent) / scale).sum(axis=1)
        # the tolerance per unit length of the cell (its size over the circumference 2 pi): along a
        # kink (the error of a cell ~ h^3) the cells' errors then sum to ~ tolerance per kink line,
        # where a share of the area would refine a kink forever (h^3 <= tolerance h^2)
        size = np.sqrt((cells[:, 1] - cells[:, 0]) * (cells[:, 3] - cells[:, 2]) * np.sin(0.5 * (cells[:, 0] + cells[:, 1])))
        done = (diff <= tolerance * size / (2.0 * math.pi)) & ~hidden & ~kid_hidden.reshape(-1, 4).any(axis=1)
        if depth == max_depth:
            done[:] = True
        total += summed[done].sum(axis=0)
        error += float(diff[done].sum())
        again = np.repeat(~done, 4)
        cells = kids[again]
        parent = kid_vals[again]
        hidden = kid_hidden[again]
    return total, error


def union_moments(centres, radii, *, tolerance: float = 1e-5, max_depth: int = 8) -> UnionMoments:
    """Volume, centroid and second moment of the union of spheres ``centres`` (n, 3), m, with
    ``radii`` (n,), m (see the module docstring for the method and its accuracy).  Exact
    duplicates (same centre and radius) count once."""
    c = np.asarray(centres, dtype=float).reshape(-1, 3)
    r = np.asarray(radii, dtype=float).reshape(-1)
    _, first = np.unique(np.column_stack([c, r]), axis=0, return_index=True)
    keep = np.sort(first)
    c, r = c[keep], r[keep]
    zero = c.mean(axis=0)  # moments about a point near the spheres: no cancellation
    c = c - zero
    vol = 0.0
    first_moment = np.zeros(3)
    second = np.zeros((3, 3))
    err = 0.0
    for i in range(len(r)):
        loc, e = _sphere_share(i, c, r, tolerance, max_depth)
        m0, m1 = loc[0], loc[1:4]
        m2 = np.zeros((3, 3))
        for k, (a, b) in enumerate(_PAIRS):
            m2[a, b] = m2[b, a] = loc[4 + k]
        vol += m0
        first_moment += c[i] * m0 + m1
        second += np.outer(c[i], c[i]) * m0 + np.outer(c[i], m1) + np.outer(m1, c[i]) + m2
        err += e * r[i] ** 3
    centroid = first_moment / vol
    second -= vol * np.outer(centroid, centroid)
    return UnionMoments(vol, centroid + zero, second, err / vol)
