"""The contact-geometry record that every narrow-phase routine emits and every contact law reads.

Conventions (written once, here):

* Body ``i`` is the first body of the pair, body ``j`` the second.  For a sphere-sphere pair
  ``i < j``; for a sphere-wall pair ``i`` is the sphere and ``j`` the wall.
* ``normal`` (unit) points from ``i`` towards ``j``.  For a wall it points from the sphere into the
  wall, i.e. it is the opposite of the wall's normal.
* ``overlap`` (m) is positive in contact, negative for a gap: ``r_i + r_j - |x_j - x_i|`` for two
  spheres, ``r_i - (x_i - p_wall) . n_wall`` for a sphere and a wall.
* ``contact_point`` (m, global) is the middle of the overlap zone along the normal; the branch
  vectors go from each body's centre to it: ``branch_i = (r_i - overlap/2) normal`` and
  ``branch_j = -(r_j - overlap/2) normal`` for spheres.  A wall is a sphere of infinite radius whose
  material point at the contact moves with the wall's translation velocity.
* ``rel_velocity`` (m/s) is the velocity of ``j``'s material point at the contact point minus that
  of ``i``, each including ``omega x branch``.  Its normal component ``rel_velocity . normal`` is
  the gap rate (negative while the bodies approach); the overlap rate is its negation.
* ``rel_angular_velocity`` (rad/s) is ``omega_j - omega_i`` (zero spin for walls).
* ``rel_displacement`` (m) is how far ``j``'s material point at the contact moved relative to
  ``i``'s during the step that just ended (``dt`` times the relative contact velocity at the
  middle of the step), and ``rel_rotation`` (rad) is ``dt (omega_j - omega_i)`` at the middle of
  the step.  Springs (tangential, rolling, twisting) accumulate these: they are the exact
  increments of the integrator, so a spring stores exactly the work done on it.  Dashpots use
  the velocities.  Both are zero for an evaluation that does not advance time.
* ``pair_rotation`` (rad) is how far the pair as a whole turned during the step:
  ``dt (omega_i + omega_j) / 2`` at the middle of the step (a wall does not turn).  Stored
  tangent-plane vectors (springs, bond forces) turn with the pair about the normal by
  ``pair_rotation . normal``; a rigidly rotating loaded contact then keeps its force in the
  contact's frame (objectivity).  Zero for an evaluation that does not advance time.
* ``radius_i``, ``radius_j`` (m): radii of curvature at the contact (``inf`` for a wall);
  ``radius`` (m): the effective radius ``R* = r_i r_j / (r_i + r_j)`` (``r_i`` for a wall).
* ``contact_area`` (m^2) and ``contact_volume`` (m^3): the size of the overlap region, for laws
  whose energy is a function of the overlap volume (the volume-based energy-conserving contact,
  :class:`contactlab.models.VolumeContact`): ``contact_volume`` is the volume common to both
  bodies and ``contact_area = d(contact_volume)/d(overlap)``, the area of the intersection surface
  projected on the normal (for two spheres the lens volume and the area of its disc).  Zero apart.
  Shapes without a computed volume (ellipsoids, rolls, mesh triangles) report 0.
  ``contact_twist`` (m^3): the derivative of ``contact_volume`` with respect to a rotation of
  ``i`` about the normal (the part of the volume's rotational gradient that no force through a
  point can carry; a volume-based law returns ``-k contact_twist normal`` as a couple).  0 for
  spheres and walls.
* ``mass`` (kg): the effective mass ``m* = m_i m_j / (m_i + m_j)``, where a wall or a fixed sphere
  counts as infinitely heavy (``m*`` is then the mass of the free body).

A contact law returns the force on ``i`` (global frame, N) and a pure couple on ``i`` (N m); the
engine applies ``-force`` and ``-couple`` to ``j`` and adds the moments of the force about each
centre through the branch vectors.  The velocities in the record are the velocities predicted at
the time of the force evaluation (second-order accurate, see :mod:`contactlab.engine.kernels`).
"""
from __future__ import annotations

from collections import namedtuple

__all__ = ["ContactGeometry", "GEOMETRY_FIELDS"]

GEOMETRY_FIELDS = (
    "normal",
    "overlap",
    "contact_point",
    "branch_i",
    "branch_j",
    "rel_velocity",
    "rel_angular_velocity",
    "rel_displacement",
    "rel_rotation",
    "radius_i",
    "radius_j",
    "radius",
    "mass",
    "pair_rotation",
    "contact_area",
    "contact_volume",
    "contact_twist",
)

ContactGeometry = namedtuple("ContactGeometry", GEOMETRY_FIELDS)
ContactGeometry.__doc__ = "Contact-geometry record; see the module docstring for the conventions."
