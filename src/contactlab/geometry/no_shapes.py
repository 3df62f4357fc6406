"""Stand-ins for :mod:`.dispatch` in the kernels of scenes made of spheres and plane walls only.

The step kernels are generated in two variants per contact law: with the narrow phase of every
shape (:mod:`.dispatch`) and, for the common case of spheres and planes, with these trivial
stand-ins, which are never called there.  The sphere-only kernels then compile as fast as before
non-spherical shapes existed and carry none of their code.
"""
from __future__ import annotations

from .._jit import jit
from .sphere_wall import sphere_wall

__all__ = ["body_pair", "body_wall", "body_triangle", "select_triangles", "N_SCRATCH"]

N_SCRATCH = 8


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
