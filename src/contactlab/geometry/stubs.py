"""Stand-ins for the narrow phases a scene does not need, with the same signatures.

The kernels of a scene are generated with only the narrow phases its pairs of shapes can use
(:func:`contactlab.engine.codegen.dispatch_module`); the others are replaced by these, which the
kernels never call, so that their code is not compiled.  Each returns "apart, far away".
"""
from __future__ import annotations

from .._jit import jit

__all__ = ["ellipsoid_pair", "ellipsoid_plane", "convex_pair", "roll_plane", "polyhedron_intersection_gradients",
           "polyhedron_halfspace", "line_of_action_point"]

_Z = (0.0, 0.0, 0.0)
_N = (0.0, 0.0, 1.0)


@jit
def ellipsoid_pair(pos_i, quat_i, axes_i, pos_j, quat_j, axes_j, warm, interaction_range=0.0):
    return 1.0, _N, pos_i, pos_j, 1.0, 1.0, 0, 3


@jit
def ellipsoid_plane(pos, quat, axes, plane_point, plane_normal):
    return 1.0, _N, pos, pos, 1.0


@jit
def convex_pair(kind_i, ref_i, pos_i, quat_i, kind_j, ref_j, pos_j, quat_j, data, warm):
    return 1.0, _N, pos_i, pos_j, 2


@jit
def roll_plane(data, ref, pos, quat, plane_point, plane_normal):
    return 1.0, _N, pos, 0.0, 1.0, 3


@jit
def polyhedron_intersection_gradients(data, ref_i, pos_i, quat_i, ref_j, pos_j, quat_j):
    return 0.0, _Z, _Z, pos_i, 3


@jit
def line_of_action_point(pos_i, grad, grad_rot, centroid):
    return centroid


@jit
def polyhedron_halfspace(data, ref, pos, quat, plane_point, plane_normal):
    return 0.0, _Z, pos, 3
