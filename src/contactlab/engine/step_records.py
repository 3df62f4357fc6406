"""The step's data, declared once: the records every compiled function of the step takes.

The :class:`~contactlab.engine.stepper.Stepper` builds these records from the frozen model, the
state, the contact table and its own run arrays (:func:`build`: each field names where it comes
from) and hands them to the step kernels (:mod:`contactlab.engine.kernels`), which pass them on,
whole, to every loop; a loop reads the fields it needs by name (``bodies.pos[i, 0]``).  Grouped by
owner:

* :data:`Bodies` -- per body: the model's constants, the state's motion, the run's predicted
  velocities and per-body contact sums, the shapes (and the optional rigid-body and clump data);
* :data:`Books` -- per body: the energy books the step writes (dissipation, boundary work, local
  damping);
* :data:`Boundaries` -- what surrounds the bodies: gravity, plane and cylinder walls, servo
  control, meshes, the periodic cell;
* :data:`Table` -- per candidate pair: the neighbour list, history, outputs and status, and the
  law's parameters per pair of materials;
* :data:`Run` -- the run's options and flags.

Optional parts are ``None`` when a scene has none (``Bodies.rigid``: spheres only; ``clumps``,
``Boundaries.cylinders``, ``cell``): Numba removes their code for ``None``, but only where the
value is an argument of the compiled function that tests it, so a loop that branches on one takes
it as an explicit argument (``kick_drift_block(..., bodies.rigid)``).  Nested groups
(:data:`Shapes`, :data:`Rigid`, :data:`Clumps`, :data:`Cylinders`, :data:`Servo`, :data:`Meshes`,
:data:`MeshMotion`) are records of the same kind.

A new per-body field (a temperature, say) is one line in :data:`Bodies` (its name, where it comes
from, its unit and shape) and the kernels that read or write it; ``docs/architecture.md``.
"""
from __future__ import annotations

import operator
from collections import namedtuple
from functools import lru_cache

__all__ = ["Bodies", "Books", "Boundaries", "Table", "Run", "Shapes", "Rigid", "Clumps", "Cylinders", "Servo",
           "Meshes", "MeshMotion", "build", "fields_of", "per_body_fields"]


def _record(name: str, doc: str, fields: list[tuple[str, str, str]]):
    """A record type: a named tuple (Numba compiles it as a tuple, reads a field by name at no
    cost and caches functions that take it) whose fields are ``(name, source, meaning)``."""
    cls = namedtuple(name, [f for f, _, _ in fields], module=__name__)
    cls.SOURCES = {f: source for f, source, _ in fields}
    cls.__doc__ = doc + "\n\nFields (source: meaning):\n\n" + "\n".join(
        f"* ``{f}`` (``{source}``): {meaning}" for f, source, meaning in fields)
    return cls


Shapes = _record("Shapes", "The bodies' shapes as the narrow phases take them (:mod:`contactlab.geometry.dispatch`).", [
    ("kind", "model.shape_kind", "(N,) shape code, contactlab.geometry.shapes"),
    ("ref", "model.shape_ref", "(N,) first entry of the body's shape in data"),
    ("data", "state.shape_data", "(S,) shape parameters, m (mesh vertices move with their mesh)"),
    ("contact_radius", "model.contact_radius", "(N,) radius of the bounding sphere, m"),
    ("geo_col", "stepper.geo_col", "first history column of a pair's last normal (-1: none)"),
    ("mode", "stepper.mode", "how convex bodies meet (MINKOWSKI, COMMON_PLANE, VOLUME)"),
])

Rigid = _record("Rigid", "Bodies that turn with a full inertia tensor (None in a scene of spheres or of 2-D bodies).", [
    ("kind", "model.shape_kind", "(N,) shape code (0: a sphere, which turns with its scalar inertia)"),
    ("inertia", "stepper.principal[0]", "(N, 3) principal moments, kg m^2"),
    ("inv_inertia", "stepper.principal[1]", "(N, 3) their inverses"),
])

Clumps = _record("Clumps", "Rigid clumps of member spheres (:mod:`contactlab.engine.clump_motion`; None without).", [
    ("first", "model.clump_first", "(C + 1,) first member of each clump in members"),
    ("members", "model.clump_members", "(Nm,) member bodies"),
    ("offsets", "model.clump_offsets", "(Nm, 3) member centres in the clump's principal frame, m"),
    ("mass", "model.clump_mass", "(C,) kg"),
    ("inertia", "model.clump_inertia", "(C, 3) principal moments, kg m^2"),
    ("inv_inertia", "stepper.clump_inv_inertia", "(C, 3) their inverses"),
    ("pos", "state.clump_positions", "(C, 3) centres of mass, m"),
    ("vel", "state.clump_velocities", "(C, 3) m/s"),
    ("angvel", "state.clump_angular_velocities", "(C, 3) rad/s"),
    ("quat", "state.clump_orientations", "(C, 4) principal frame to global"),
    ("force", "state.clump_forces", "(C, 3) N"),
    ("torque", "state.clump_torques", "(C, 3) N m"),
    ("previous", "state.clump_previous_loads", "(C, 6) float32: force and torque of the evaluation before the last"),
])

Bodies = _record("Bodies", "Per body: constants, motion, the run's per-body work arrays, shapes.", [
    ("radius", "model.radius", "(N,) m"),
    ("mass", "model.mass", "(N,) kg"),
    ("inv_mass", "model.inv_mass", "(N,) 1/kg (0: fixed)"),
    ("inv_inertia", "model.inv_inertia", "(N,) 1/(kg m^2), the scalar moment's inverse"),
    ("fixed", "model.fixed", "(N,) bool: driven, not integrated"),
    ("material", "model.material", "(N,) material index"),
    ("pos", "state.positions", "(N, 3) m"),
    ("vel", "state.velocities", "(N, 3) m/s (between the two half kicks: at the middle of the step)"),
    ("angvel", "state.angular_velocities", "(N, 3) rad/s"),
    ("quat", "state.orientations", "(N, 4) body frame to global"),
    ("force", "state.forces", "(N, 3) N, of the last evaluation (gravity and local damping included)"),
    ("torque", "state.torques", "(N, 3) N m"),
    ("previous", "state.previous_loads", "(N, 6) float32: force and torque of the evaluation before the last"),
    ("vel_pred", "stepper.vel_pred", "(N, 3) m/s, velocities predicted to the force time (dead between steps)"),
    ("angvel_pred", "stepper.angvel_pred", "(N, 3) rad/s"),
    ("owner", "stepper.owner", "(N, N_OWN + D) sums of the contacts a body owns (engine.layout OWN_*)"),
    ("shape", "stepper.shapes", "Shapes"),
    ("rigid", "stepper.rigid", "Rigid or None"),
    ("clumps", "stepper.clumps", "Clumps or None"),
])

Books = _record("Books", "Per body: the energy books of the step (J).", [
    ("dissipated", "state.dissipated", "(N,) energy dissipated in the contacts a body owns"),
    ("diss_terms", "state.dissipation_terms", "(N, D) the same per dissipation term of the law"),
    ("boundary_work", "state.boundary_work", "(N,) work of driven bodies on the free ones"),
    ("boundary_power", "state.boundary_power", "(N,) W, that power at the last evaluation"),
    ("damping_work", "stepper.damping[0]", "(N,) work of local damping (empty without it)"),
    ("damping_force", "stepper.damping[1]", "(N, 6) local damping's force and torque at the last evaluation"),
])

Cylinders = _record("Cylinders", "Cylinder walls (None in a scene of plane walls only).", [
    ("kind", "model.wall_kind", "(W,) 0 a plane, 1 a cylinder"),
    ("shape", "model.wall_shape", "(W, 4) a cylinder's radius, half length, ... (contactlab.geometry.sphere_cylinder)"),
])

Servo = _record("Servo", "Walls and meshes that follow a target force (:func:`contactlab.engine.servo.servo_update`).", [
    ("indices", "state.servo_index", "(S, N_SERVO_INDEX) int64 rows (engine.layout SERVO_*)"),
    ("param", "state.servo_param", "(S, N_SERVO_PARAM) float rows"),
    ("pair_i", "table.pair_i", "(pairs,) first body of each pair"),
    ("bound_start", "table.bound_start", "CSR of the pairs by wall and mesh triangle"),
    ("bound_pairs", "table.bound_pairs", "its pair indices"),
    ("inv_mass", "model.inv_mass", "(N,) 1/kg"),
    ("mesh_vel", "state.mesh_velocities", "(M, 3) m/s"),
    ("mesh_first", "model.mesh_first", "(M + 1,) first triangle of each mesh"),
])

Meshes = _record("Meshes", "Kinematic triangle meshes (empty arrays without).", [
    ("tri_ref", "model.tri_ref", "(T,) first entry of each triangle's vertices in Shapes.data"),
    ("tri_mesh", "model.tri_mesh", "(T,) the mesh of each triangle"),
    ("pos", "state.mesh_positions", "(M, 3) reference points, m"),
    ("quat", "state.mesh_orientations", "(M, 4)"),
    ("vel", "state.mesh_velocities", "(M, 3) m/s"),
    ("angvel", "state.mesh_angular_velocities", "(M, 3) rad/s"),
    ("material", "model.mesh_material", "(M,) material index"),
])

MeshMotion = _record("MeshMotion", "What moving a mesh needs (:func:`contactlab.engine.integrate.move_meshes`).", [
    ("local", "model.mesh_local", "(T, 9) vertices relative to the mesh's reference point, mesh frame, m"),
    ("first", "model.mesh_first", "(M + 1,) first triangle of each mesh"),
    ("build_pos", "table.mesh_ref_pos", "(M, 3) reference point at the last neighbour-list build, m"),
    ("build_quat", "table.mesh_ref_quat", "(M, 4) orientation then"),
    ("size", "model.mesh_size", "(M,) largest distance of a vertex from the reference point, m"),
])

Boundaries = _record("Boundaries", "What surrounds the bodies.", [
    ("gravity", "model.gravity", "(3,) m/s^2"),
    ("wall_point", "state.wall_points", "(W, 3) a point of each wall (a cylinder's centre), m"),
    ("wall_vel", "state.wall_velocities", "(W, 3) m/s"),
    ("wall_normal", "model.wall_normal", "(W, 3) unit normal into the bodies (a cylinder's axis)"),
    ("wall_material", "model.wall_material", "(W,) material index"),
    ("wall_ref", "table.wall_ref", "(W, 3) wall points at the last neighbour-list build, m"),
    ("cylinders", "stepper.cylinders", "Cylinders or None"),
    ("servo", "stepper.servo", "Servo"),
    ("meshes", "stepper.meshes", "Meshes"),
    ("mesh_motion", "stepper.mesh_motion", "MeshMotion"),
    ("cell", "state.cell", "(CELL_SIZE,) the periodic cell (contactlab.geometry.periodic) or None"),
])

Table = _record("Table", "Per candidate pair: the neighbour list and what each pair carries (engine.layout).", [
    ("i_start", "table.i_start", "(N + 1,) CSR: the pairs a body owns (partners j > i, walls, triangles)"),
    ("pair_j", "table.pair_j", "(pairs,) the partner: body j, or n + wall, or n + walls + triangle"),
    ("j_start", "table.j_start", "(N + 1,) CSR: the pairs in which a body is the partner j"),
    ("j_pairs", "table.j_pairs", "their pair indices, in increasing order"),
    ("hist", "table.hist", "(pairs, H + D [+ 3]) the law's stored history, the dissipation per term, a shape pair's last normal"),
    ("out", "table.out", "(pairs, N_OUT or fewer) the partner's side of the force, energy, geometry"),
    ("status", "table.status", "(pairs,) int8 ACTIVE, INACTIVE, CLEARED"),
    ("ref_pos", "table.ref_pos", "(N, 3) positions at the last build, m"),
    ("pair_params", "stepper.pair_table", "(M, M, P) the law's parameters per pair of materials"),
    ("scratch", "stepper.scratch", "(pairs, N_SCRATCH) the triangle selection's work rows (empty without meshes)"),
])

Run = _record("Run", "The run's options and flags.", [
    ("half_skin", "stepper.half_skin", "m a body may move before the list is rebuilt"),
    ("overlap_limit", "stepper.max_overlap", "the overlap guard, a fraction of the smaller radius"),
    ("local_damping", "stepper.local_damping", "Cundall's coefficient (0: none)"),
    ("flags", "stepper.flags", "(N_FLAGS,) int64 status flags (engine.layout FLAG_*)"),
])


def fields_of(record) -> tuple[str, ...]:
    """The field names of a record type (its declaration above is the only list of them)."""
    return record._fields


@lru_cache(maxsize=None)
def per_body_fields(record) -> tuple[str, ...]:
    """The fields of a record type that hold one row per body (declared ``(N,)`` or ``(N, ...)``
    above): what a permutation of the bodies permutes (:mod:`contactlab.engine.gpu_order`)."""
    doc = record.__doc__
    out = []
    for field in record._fields:
        line = doc[doc.index(f"* ``{field}`` ("):]
        meaning = line[line.index("): ") + 3:]
        if meaning.startswith("(N,") or meaning.startswith("(N)"):
            out.append(field)
    return tuple(out)


def _getter(path: str):
    """A function of an object that reads ``path`` from it (``a.b``, ``a[0]``)."""
    if path.endswith("]"):
        name, index = path[:-1].split("[")
        return lambda obj, name=name, index=int(index): getattr(obj, name)[index]
    return operator.attrgetter(path)


@lru_cache(maxsize=None)
def _getters(record) -> tuple:
    """Per field of ``record``: the name of its source object and the function that reads it."""
    out = []
    for field in record._fields:
        head, _, rest = record.SOURCES[field].partition(".")
        out.append((head, _getter(rest)))
    return tuple(out)


def build(record, **sources):
    """An instance of ``record`` with each field taken from where its declaration says
    (``model``, ``state``, ``table``, ``stepper``: the objects passed by those names)."""
    return record(*[get(sources[head]) for head, get in _getters(record)])
