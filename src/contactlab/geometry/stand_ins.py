"""Stand-ins for the narrow phases a scene does not need, with the signatures of the real ones.

The step kernels are generated per scene with only the narrow phases its pairs of shapes can use
(:func:`contactlab.engine.codegen.dispatch_module`), and these stand-ins, which the kernels never
call, take the place of the others so that their code is not compiled:

* a scene of spheres and plane walls only imports :func:`body_pair`, :func:`body_wall`,
  :func:`body_triangle` and :func:`select_triangles` from here instead of from :mod:`.dispatch`
  (its kernels then compile as fast as before non-spherical shapes existed);
* a scene with shapes imports a copy of :mod:`.dispatch` in which the solvers it cannot need
  (:func:`ellipsoid_pair`, :func:`convex_pair`, :func:`roll_plane`, the contact volume...) come
  from here.

Each stand-in returns "apart, far away".
"""
from __future__ import annotations

from .._jit import jit
from .sphere_wall import sphere_wall

__all__ = ["body_pair", "body_wall", "body_triangle", "select_triangles", "N_SCRATCH",
           "ellipsoid_pair", "ellipsoid_plane", "ellipse_pair_2d", "ellipse_line", "convex_pair", "roll_plane", "polyhedron_intersection_gradients",
           "polyhedron_halfspace", "line_of_action_point"]

N_SCRATCH = 8
_Z = (0.0, 0.0, 0.0)
_N = (0.0, 0.0, 1.0)


@jit
def ellipsoid_pair(pos_i, quat_i, axes_i, pos_j, quat_j, axes_j, warm, interaction_range=0.0):
    return 1.0, _N, pos_i, pos_j, 1.0, 1.0, 0, 3


@jit
def ellipsoid_plane(pos, quat, axes, plane_point, plane_normal):
    return 1.0, _N, pos, pos, 1.0


@jit
def ellipse_pair_2d(pos_i, angle_i, axes_i, pos_j, angle_j, axes_j, warm, interaction_range=0.0):
    return 1.0, (0.0, 1.0), pos_i, pos_j, 1.0, 1.0, 0, 3


@jit
def ellipse_line(pos, angle, axes, line_point, line_normal):
    return 1.0, (0.0, 1.0), pos, pos, 1.0


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


# the whole dispatch, for scenes of spheres and plane walls

@jit
def body_pair(i, j, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, hist, k, dt):
    return body_wall(i, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, (0.0, 0.0, 0.0),
                     (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), hist, k, dt)


@jit
def body_wall(i, pos, quat, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, wp, wn, wv, hist, k, dt):
    z = (0.0, 0.0, 0.0)
    return sphere_wall((pos[i, 0], pos[i, 1], pos[i, 2]), 1.0, inv_mass[i], z, z, z, z, wp, wn, wv, dt)


@jit
def select_triangles(i, k0, k1, pair_j, n_sw, pos, quat, radius, bodies, tri_ref, tri_mesh, scratch, hist, status,
                     n_law_hist, reach):
    return


@jit
def body_triangle(i, k, t, pos, vel, angvel, mid_vel, mid_angvel, inv_mass, bodies, scratch, mesh_point, mesh_vel,
                  mesh_angvel, dt):
    z = (0.0, 0.0, 0.0)
    return sphere_wall((pos[i, 0], pos[i, 1], pos[i, 2]), 1.0, inv_mass[i], z, z, z, z, z, (0.0, 0.0, 1.0), z, dt)
