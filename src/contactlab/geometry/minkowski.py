"""Support mapping of the Minkowski difference of two cores, and what GJK and EPA share.

One of the four modules of the convex-pair narrow phase (overview, strategies and tolerances in
:mod:`contactlab.geometry.gjk_epa`; GJK in :mod:`.gjk`, EPA in :mod:`.epa`).  With
``D = B (-) A = {b - a : a in A, b in B}`` the support point of ``D`` in a direction ``d`` is
``s_B(d) - s_A(-d)`` (notes 004; the shapes' own mappings are in
:mod:`contactlab.geometry.support`).  GJK and EPA run on the bodies' *cores*: a sphere's core is
its centre (its radius is a margin added back by :func:`~contactlab.geometry.gjk_epa.convex_pair`),
any other shape is its own core.  :func:`_mink_support` returns the support point ``w`` of ``D``
together with the two support points ``a`` on A and ``b`` on B that make it, from which GJK and
EPA interpolate the witness points.

Also here, because GJK, EPA and the entry point all read them: the status codes and the
flatness tolerance of simplices and EPA faces, and the zero 3-tuple.

These are compiled building blocks (``inline="never"``: one compiled function each, called by
the others; see the implementation notes in :mod:`contactlab.geometry.gjk_epa`).  The names with
a leading underscore are internal to the convex-pair modules.
"""
from __future__ import annotations

from .._jit import jit
from .shapes import SPHERE
from .support import shape_radius, support

__all__ = ["GJK_OK", "GJK_MAX_ITER", "GJK_DEGENERATE"]

#: status codes of :func:`~contactlab.geometry.gjk_epa.convex_pair` (and of GJK and EPA inside it)
GJK_OK = 0
GJK_MAX_ITER = 1
GJK_DEGENERATE = 2
#: a triangle or tetrahedron thinner than this (relative to its longest edge) counts as flat
_FLAT_REL = 1e-12

_ZERO3 = (0.0, 0.0, 0.0)


# ----------------------------------------------------------------------------------------------
# support mapping of the Minkowski difference (cores)
# ----------------------------------------------------------------------------------------------
@jit(inline="never")
def _core_support(kind, data, ref, pos, quat, d):
    """Support point of a body's core: a sphere's centre, any other shape itself."""
    if kind == SPHERE:
        return (pos[0], pos[1], pos[2])
    return support(kind, data, ref, pos, quat, d)


@jit(inline="never")
def _radius(kind, data, ref):
    """:func:`~contactlab.geometry.support.shape_radius`, compiled once."""
    return shape_radius(kind, data, ref)


@jit(inline="never")
def _mink_support(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, d):
    """Support point of ``D = B (-) A`` (cores) for the direction ``d``: ``(w, a, b)`` with
    ``w = b - a``, ``a = s_A(-d)``, ``b = s_B(d)``."""
    a = _core_support(kind_i, data, ref_i, pos_i, quat_i, (-d[0], -d[1], -d[2]))
    b = _core_support(kind_j, data, ref_j, pos_j, quat_j, d)
    return (b[0] - a[0], b[1] - a[1], b[2] - a[2]), a, b
