"""TOML scene files: a one-to-one text form of the Python API.

Every table of the file is one call of the Python API, with the same names:

=====================  ==========================================================
TOML                    Python
=====================  ==========================================================
``[simulation]``        ``Scene(gravity=..., dimension=..., thickness=...)``,
                        ``Simulation(dt=..., skin=...,
                        max_overlap=..., initial_overlap_tolerance=...,
                        threads=..., local_damping=...)`` and ``sim.run(duration=...)``
``[materials.NAME]``    ``Material(density=..., young=..., poisson=..., name=NAME)``
``[model]``             ``cl.models.<type>(**parameters)``
``[[sphere]]``          ``scene.add_sphere(position=..., radius=..., material=NAME, ...)``
``[[spheres]]``         ``scene.add_spheres(positions=..., radii=..., material=NAME, ...)``
                        (arrays inline, or ``file`` = a CSV with columns
                        ``x,y,z,r`` and optionally ``vx,vy,vz``)
``[[fill_box]]``        ``scene.fill_box(lower=..., upper=..., radius=..., material=NAME, ...)``
``[[wall]]``            ``scene.add_wall(point=..., normal=..., material=NAME, ...)``
``[[cylinder_wall]]``   ``scene.add_cylinder_wall(axis_point=..., axis_direction=...,
                        radius=..., material=NAME, side=..., length=..., velocity=...)``
                        (numbered after the ``[[wall]]`` tables)
``[[mesh]]``            ``scene.add_mesh(source=FILE, material=NAME, ...)`` (STL, OBJ...;
                        the path relative to the scene file)
``[[ellipsoid]]``       ``scene.add_ellipsoid(position=..., semi_axes=..., material=NAME, ...)``
``[[box]]``             ``scene.add_box(position=..., half_extents=..., material=NAME, ...)``
``[[polyhedron]]``      ``scene.add_polyhedron(vertices=..., material=NAME, ...)``
``[[convex_roll]]``     ``scene.add_convex_roll(position=..., orientation=...,
                        hull_coefficients=..., length=..., material=NAME, ...)``
``[[disk]]``            ``scene.add_disk(position=..., radius=..., material=NAME, ...)`` (2-D)
``[[disks]]``           ``scene.add_disks(positions=..., radii=..., material=NAME, ...)`` (2-D)
``[[ellipse]]``         ``scene.add_ellipse(position=..., semi_axes=..., material=NAME, ...)``
                        (2-D)
``[[ellipses]]``        ``scene.add_ellipses(positions=..., semi_axes=..., material=NAME, ...)``
                        (2-D)
``[bonds]``             ``sim.bond(max_gap=...)`` right after the simulation is built
                        (models with bonds: Ice, ParallelBond)
``[output]``            reporters: VTK, CSV energy series, checkpoints
=====================  ==========================================================

A 2-D scene (``dimension = 2`` in ``[simulation]``) takes disks, ellipses and line walls (2-D
``point``, ``normal``, ``gravity``); the bodies of a file are numbered table kind by table kind in
the order of this table (all ``[[sphere]]`` first, ...), and within a kind in the file's order.

An unknown table or key, a missing required key, or a bad value raises
:class:`~contactlab.errors.SceneFileError` naming the file, the table and the key.  The whole file
is checked (and the scene built) before anything is written.  See ``docs/scene-files.md``.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .._arguments import did_you_mean
from ..errors import ImportNotAllowedError, InputError, RunTooLongError, SceneFileError, StabilityError
from ..imports import allowed_modules
from ..laws.registry import (MODELS, bonded_model_names, is_model_data, model_class, model_from_dict,
                              refuse_imports)
from ..materials import Material
from ..scene import Scene
from ..simulation import Simulation

__all__ = ["SceneSpec", "load_scene_file", "apply_overrides", "default_scene_path", "OUTPUT_DEFAULTS"]

_SIMULATION_KEYS = {"gravity", "dimension", "thickness", "dt", "duration", "threads", "skin", "max_overlap",
                    "initial_overlap_tolerance", "local_damping", "shape_contact", "allow_long_run"}
_BOND_KEYS = {"max_gap"}
_MATERIAL_KEYS = {"density", "young", "poisson"}
_SPHERE_KEYS = {"position", "radius", "material", "velocity", "angular_velocity", "fixed"}
_SPHERES_KEYS = {"positions", "radii", "material", "velocities", "angular_velocities", "fixed", "file"}
_FILL_KEYS = {"lower", "upper", "radius", "material", "spacing", "radius_spread", "jitter", "seed", "max_count",
              "velocity"}
_WALL_KEYS = {"point", "normal", "material", "velocity"}
_CYLINDER_KEYS = {"axis_point", "axis_direction", "radius", "material", "side", "length", "velocity"}
_OUTPUT_KEYS = {"directory", "vtk_interval", "vtk_contacts", "vtk_walls", "csv_interval", "checkpoint_interval",
                "progress"}
_BODY_MOTION = {"velocity", "angular_velocity", "fixed"}
_SHAPE_KEYS = {
    "mesh": ({"source", "material", "velocity", "angular_velocity", "centre", "scale", "name"}, {"source", "material"}),
    "ellipsoid": ({"position", "semi_axes", "material", "orientation"} | _BODY_MOTION,
                  {"position", "semi_axes", "material"}),
    "box": ({"position", "half_extents", "material", "orientation"} | _BODY_MOTION,
            {"position", "half_extents", "material"}),
    "polyhedron": ({"vertices", "material", "position", "orientation", "mass", "inertia"} | _BODY_MOTION,
                   {"vertices", "material"}),
    "convex_roll": ({"position", "orientation", "hull_coefficients", "length", "material", "mass", "inertia"}
                    | _BODY_MOTION, {"position", "orientation", "hull_coefficients", "length", "material"}),
    # 2-D scenes
    "disk": ({"position", "radius", "material"} | _BODY_MOTION, {"position", "radius", "material"}),
    "disks": ({"positions", "radii", "material", "velocities", "angular_velocities", "fixed"},
              {"positions", "radii", "material"}),
    "ellipse": ({"position", "semi_axes", "material", "angle"} | _BODY_MOTION, {"position", "semi_axes", "material"}),
    "ellipses": ({"positions", "semi_axes", "material", "angles", "velocities", "angular_velocities", "fixed"},
                 {"positions", "semi_axes", "material"}),
}
_TOP_KEYS = {"simulation", "materials", "model", "sphere", "spheres", "fill_box", "wall", "cylinder_wall", "bonds",
             "output",
             *_SHAPE_KEYS}

OUTPUT_DEFAULTS = {"directory": "contactlab-out", "vtk_interval": None, "vtk_contacts": True, "vtk_walls": True,
                   "csv_interval": None, "checkpoint_interval": None, "progress": True}


@dataclass
class SceneSpec:
    """A parsed scene file: everything needed to build and run the simulation."""

    path: Path
    scene: Scene
    model: Any
    simulation: dict = field(default_factory=dict)   # keyword arguments of Simulation
    duration: float | None = None                     # s
    output: dict = field(default_factory=lambda: dict(OUTPUT_DEFAULTS))
    bonds: dict | None = None                         # keyword arguments of sim.bond, or None

    def build_simulation(self):
        """The :class:`~contactlab.Simulation` described by the file (no reporters attached)."""
        try:
            sim = Simulation(self.scene, self.model, **self.simulation)
        except SceneFileError:
            raise
        except StabilityError as exc:  # dt from [simulation]: still a StabilityError for scripts that catch it
            raise StabilityError(f"{self.path}: [simulation] {exc}") from None
        except RunTooLongError as exc:  # a dt far below the limit: the same class, for the same reason
            raise RunTooLongError(f"{self.path}: [simulation] {exc}") from None
        except InputError as exc:  # another argument from [simulation], or the bodies it was given
            raise SceneFileError(f"{self.path}: [simulation] {exc}") from None
        if sim.dt is None:
            raise SceneFileError(f"{self.path}: [simulation] dt = \"auto\" (the default) derives the step from the "
                                 f"contacts that can occur, and none can in this scene (no two bodies and no body and "
                                 f"wall can meet); give dt = ... (s)")
        if self.bonds is not None:
            try:
                sim.bond(**self.bonds)
            except InputError as exc:
                raise SceneFileError(f"{self.path}: [bonds] {exc}") from None
        return sim


def default_scene_path() -> Path:
    """Path of the built-in default scene (10,000 glass beads settling in a box)."""
    return Path(str(resources.files("contactlab").joinpath("builtin_scene_files/default.toml")))


class _Ctx:
    """Error context: file and table, so that every message says where the problem is."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str):
        raise SceneFileError(f"{self.path}: [{where}] {message}")

    def check_keys(self, where: str, table: dict, allowed: set, required: set = frozenset()):
        if not isinstance(table, dict):
            self.fail(where, f"must be a table, got {type(table).__name__}")
        unknown = sorted(set(table) - allowed)
        if unknown:
            self.fail(where, f"unknown key{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(k) + did_you_mean(k, allowed) for k in unknown)}; allowed: "
                             f"{', '.join(sorted(allowed))}")
        missing = sorted(required - set(table))
        if missing:
            self.fail(where, f"missing required key(s) {', '.join(repr(k) for k in missing)}")

    def call(self, where: str, func, **kwargs):
        """Call an API function, re-raising input errors with the file/table context."""
        try:
            return func(**kwargs)
        except (SceneFileError, ImportNotAllowedError):   # the latter names the file and table itself
            raise
        except (InputError, TypeError, ValueError) as exc:
            self.fail(where, str(exc))


def load_scene_file(path, *, overrides: dict | None = None, allow_import=()) -> SceneSpec:
    """Parse and validate a TOML scene file, building the scene and the contact model.

    ``overrides`` maps dotted keys to values that replace (or add) keys of the file before it is
    read, e.g. ``{"model.friction": 0.3, "materials.glass.young": 5e6, "fill_box.seed": 4}``
    (see :func:`apply_overrides`); ``contactlab sweep`` and
    :class:`~contactlab.ensemble.SceneFile` vary scenes this way.

    ``allow_import``: the modules that a ``type = "module:name"`` of ``[model]`` (or of one of
    its slots, or a parallel bond's ``contact``) may import (a name or a list; a package allows
    its submodules).  contactlab's own modules and modules already imported need no permission;
    any other raises :class:`~contactlab.errors.ImportNotAllowedError` before it is imported and
    before the file's bodies are built (:mod:`contactlab.imports`).
    """
    allow_import = allowed_modules(allow_import)
    path = Path(path)
    ctx = _Ctx(path)
    if path.is_dir():
        raise SceneFileError(f"scene file {str(path)!r} is a folder, not a scene file (a TOML file)")
    if not path.is_file():
        raise SceneFileError(f"scene file {str(path)!r} does not exist")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise SceneFileError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise SceneFileError(f"{path}: not valid TOML: a scene file is UTF-8 text; byte {exc.object[exc.start]:#04x} "
                             f"at line {line} is not (is it a text file?)") from None
    if overrides:
        apply_overrides(doc, overrides, path)
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise SceneFileError(f"{path}: unknown table{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(k) + did_you_mean(k, _TOP_KEYS) for k in unknown)}; allowed: "
                             f"{', '.join(sorted(_TOP_KEYS))}")

    _refuse_model_imports(path, doc.get("model"), allow_import)

    sim_table = doc.get("simulation", {})
    ctx.check_keys("simulation", sim_table, _SIMULATION_KEYS)
    scene = ctx.call("simulation", Scene, gravity=sim_table.get("gravity"), dimension=sim_table.get("dimension", 3),
                     thickness=sim_table.get("thickness"))

    materials: dict[str, Material] = {}
    mats = doc.get("materials", {})
    if not isinstance(mats, dict) or not mats:
        raise SceneFileError(f"{path}: [materials] must define at least one material, e.g. [materials.glass]")
    for name, table in mats.items():
        where = f"materials.{name}"
        ctx.check_keys(where, table, _MATERIAL_KEYS, _MATERIAL_KEYS)
        materials[name] = ctx.call(where, Material, name=name, **table)

    def material(where: str, table: dict) -> Material:
        name = table.get("material")
        if name not in materials:
            ctx.fail(where, f"material {name!r} is not defined{did_you_mean(name, materials)}; defined: "
                            f"{', '.join(sorted(materials))} (a [materials.NAME] table each)")
        return materials[name]

    for k, table in enumerate(_as_list(ctx, doc, "sphere")):
        where = f"sphere #{k + 1}"
        ctx.check_keys(where, table, _SPHERE_KEYS, {"position", "radius", "material"})
        kwargs = {key: v for key, v in table.items() if key != "material"}
        ctx.call(where, scene.add_sphere, material=material(where, table), **kwargs)

    for k, table in enumerate(_as_list(ctx, doc, "spheres")):
        where = f"spheres #{k + 1}"
        ctx.check_keys(where, table, _SPHERES_KEYS, {"material"})
        kwargs = {key: v for key, v in table.items() if key not in ("material", "file")}
        if "file" in table:
            if "positions" in table or "radii" in table:
                ctx.fail(where, "give either 'file' or 'positions'/'radii', not both")
            kwargs.update(_read_sphere_csv(ctx, where, path.parent / table["file"]))
        elif not {"positions", "radii"} <= set(table):
            ctx.fail(where, "needs 'positions' and 'radii', or a 'file'")
        ctx.call(where, scene.add_spheres, material=material(where, table), **kwargs)

    for k, table in enumerate(_as_list(ctx, doc, "fill_box")):
        where = f"fill_box #{k + 1}"
        ctx.check_keys(where, table, _FILL_KEYS, {"lower", "upper", "radius", "material"})
        kwargs = {key: v for key, v in table.items() if key != "material"}
        ctx.call(where, scene.fill_box, material=material(where, table), **kwargs)

    for k, table in enumerate(_as_list(ctx, doc, "wall")):
        where = f"wall #{k + 1}"
        ctx.check_keys(where, table, _WALL_KEYS, {"point", "normal", "material"})
        kwargs = {key: v for key, v in table.items() if key != "material"}
        ctx.call(where, scene.add_wall, material=material(where, table), **kwargs)

    for k, table in enumerate(_as_list(ctx, doc, "cylinder_wall")):
        where = f"cylinder_wall #{k + 1}"
        ctx.check_keys(where, table, _CYLINDER_KEYS, {"axis_point", "axis_direction", "radius", "material"})
        kwargs = {key: v for key, v in table.items() if key != "material"}
        ctx.call(where, scene.add_cylinder_wall, material=material(where, table), **kwargs)

    adders = {"mesh": scene.add_mesh, "ellipsoid": scene.add_ellipsoid, "box": scene.add_box,
              "polyhedron": scene.add_polyhedron, "convex_roll": scene.add_convex_roll, "disk": scene.add_disk,
              "disks": scene.add_disks, "ellipse": scene.add_ellipse, "ellipses": scene.add_ellipses}
    for kind, (allowed, required) in _SHAPE_KEYS.items():
        for k, table in enumerate(_as_list(ctx, doc, kind)):
            where = f"{kind} #{k + 1}"
            ctx.check_keys(where, table, allowed, required)
            kwargs = {key: v for key, v in table.items() if key != "material"}
            if kind == "mesh":
                if not isinstance(table["source"], str):
                    ctx.fail(where, f"source must be the mesh file's name (text, relative to the scene file), got "
                                    f"{table['source']!r}")
                kwargs["source"] = path.parent / table["source"]
            ctx.call(where, adders[kind], material=material(where, table), **kwargs)

    if scene.n_spheres == 0:
        if scene.dimension == 2:
            raise SceneFileError(f"{path}: the 2-D scene has no bodies; add [[disk]], [[disks]], [[ellipse]] or "
                                 f"[[ellipses]] tables")
        raise SceneFileError(f"{path}: the scene has no bodies; add [[sphere]], [[spheres]], [[fill_box]], "
                             f"[[ellipsoid]], [[box]], [[polyhedron]] or [[convex_roll]] tables")

    model_table = doc.get("model", {})
    if not isinstance(model_table, dict):
        ctx.fail("model", f"must be a table ([model] with type = \"...\" and the parameters), got "
                          f"{type(model_table).__name__}: {model_table!r:.60}")
    model_table = dict(model_table)
    if "type" not in model_table:
        ctx.fail("model", f"needs a 'type': one of {', '.join(sorted(MODELS))}")
    kind = model_table.pop("type")
    try:
        cls = model_class(kind, allow_import=allow_import, source=f"{path}: [model]")
    except ImportNotAllowedError:
        raise
    except InputError as exc:
        ctx.fail("model", str(exc))
    # a slot of a Contact, a ParallelBond's contact: a model of its own, built as the registry builds one
    model_table = {k: ctx.call(f"model.{k}", model_from_dict, data=v, allow_import=allow_import,
                               source=f"{path}: [model.{k}]")
                   if is_model_data(v) else v
                   for k, v in model_table.items()}
    ctx.check_keys("model", model_table, {p.name for p in cls.parameters} | set(cls.construction_keys),
                   {p.name for p in cls.parameters if p.default is None} | set(cls.required_construction_keys))
    model = ctx.call("model", cls, **model_table)

    sim_kwargs = {}
    dt = sim_table.get("dt", "auto")
    if dt != "auto":
        if isinstance(dt, bool) or not isinstance(dt, (int, float)):
            ctx.fail("simulation", f"dt must be a number of seconds or \"auto\", got {dt!r}"
                                   f"{did_you_mean(dt, ['auto'])}")
        sim_kwargs["dt"] = float(dt)
    for key in ("threads", "skin", "max_overlap", "initial_overlap_tolerance", "local_damping", "shape_contact",
                "allow_long_run"):
        if key in sim_table:
            sim_kwargs[key] = sim_table[key]
    duration = sim_table.get("duration")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))
                                 or not math.isfinite(duration) or duration < 0):
        ctx.fail("simulation", f"duration must be a number of seconds >= 0, got {duration!r}")

    out_table = doc.get("output", {})
    ctx.check_keys("output", out_table, _OUTPUT_KEYS)
    output = dict(OUTPUT_DEFAULTS)
    output.update(out_table)
    for key in ("vtk_interval", "csv_interval", "checkpoint_interval"):
        v = output[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf):
            ctx.fail("output", f"{key} must be a positive number of seconds, got {v!r}")
    for key in ("vtk_contacts", "vtk_walls", "progress"):
        if not isinstance(output[key], bool):
            ctx.fail("output", f"{key} must be true or false, got {output[key]!r}")
    if not isinstance(output["directory"], str):
        ctx.fail("output", f"directory must be a string, got {output['directory']!r}")
    if not output["directory"].strip():
        ctx.fail("output", f"directory must name a folder, got {output['directory']!r} (an empty name would write "
                           f"into the current folder); leave the key out for the default {OUTPUT_DEFAULTS['directory']!r}")
    bonds = None
    if "bonds" in doc:
        ctx.check_keys("bonds", doc["bonds"], _BOND_KEYS)
        if model.bond_field < 0:
            ctx.fail("bonds", f"the model {model.name} has no bonds; models with bonds: "
                     f"{', '.join(bonded_model_names())}")
        bonds = dict(doc["bonds"])
    return SceneSpec(path=path, scene=scene, model=model, simulation=sim_kwargs,
                     duration=None if duration is None else float(duration), output=output, bonds=bonds)


def _refuse_model_imports(path: Path, model_table, allow_import: frozenset) -> None:
    """Refuse, before anything of the file is built, a ``[model]`` (or a slot or contact of it)
    whose ``type`` names a module that may not be imported (:mod:`contactlab.imports`)."""
    if not isinstance(model_table, dict):
        return   # reported where [model] is read
    try:
        refuse_imports({"type": model_table.get("type")}, allow_import=allow_import, source=f"{path}: [model]")
        for key, value in model_table.items():
            if is_model_data(value):
                refuse_imports(value, allow_import=allow_import, source=f"{path}: [model.{key}]")
    except ImportNotAllowedError:
        raise
    except InputError as exc:   # a type that names no module: the message names the file and the table
        raise SceneFileError(str(exc)) from None


def apply_overrides(doc: dict, overrides: dict, path: Path) -> None:
    """Set the dotted keys of ``overrides`` in the parsed file ``doc`` (in place).

    ``table.key`` sets a key of a table (``model.friction``, ``simulation.dt``), creating the
    top-level table if the file has none; ``materials.NAME.key`` a material's key; for the arrays
    of tables (``[[fill_box]]``, ``[[wall]]``...) ``kind.N.key`` sets a key of the N-th table of
    that kind, counted from 1 as in error messages (``wall.2.velocity``), and ``kind.key`` is
    enough when the file has one table of that kind.  A key that is not there is added (the usual
    checks then say whether the table takes it); a table or material that is not there is an
    error, as is a number past the count.
    """
    for dotted, value in overrides.items():
        if not isinstance(dotted, str) or not dotted or any(not p for p in dotted.split(".")):
            raise SceneFileError(f"{path}: override {dotted!r}: give a dotted key such as 'model.friction'")
        parts = dotted.split(".")
        if parts[0] not in _TOP_KEYS:
            raise SceneFileError(f"{path}: override {dotted!r}: no table {parts[0]!r}{did_you_mean(parts[0], _TOP_KEYS)}; "
                                 f"tables: {', '.join(sorted(_TOP_KEYS))}")
        node, k = doc, 0
        while True:
            part = parts[k]
            if isinstance(node, list):
                if part.isdigit():
                    n = int(part)
                    if not 1 <= n <= len(node):
                        raise SceneFileError(f"{path}: override {dotted!r}: the file has {len(node)} "
                                             f"[[{parts[0]}]] table(s); {n} is not one of 1..{len(node)}")
                    node, k = node[n - 1], k + 1
                    continue
                if len(node) != 1:
                    raise SceneFileError(f"{path}: override {dotted!r}: the file has {len(node)} [[{parts[0]}]] "
                                         f"tables; say which, e.g. {parts[0]}.1.{'.'.join(parts[k:])}")
                node = node[0]
                continue
            if not isinstance(node, dict):
                raise SceneFileError(f"{path}: override {dotted!r}: {'.'.join(parts[:k])} is a value, not a table")
            if k == len(parts) - 1:
                node[part] = value
                break
            if part not in node:
                if k == 0:  # a top-level table the file leaves out, e.g. [simulation]
                    node[part] = {}
                else:
                    raise SceneFileError(f"{path}: override {dotted!r}: there is no {'.'.join(parts[:k + 1])!r} "
                                         f"in the file{did_you_mean(part, node)}")
            node, k = node[part], k + 1


def _as_list(ctx: _Ctx, doc: dict, key: str) -> list:
    value = doc.get(key, [])
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        ctx.fail(key, f"must be an array of tables ([[{key}]]), got {type(value).__name__}")
    return value


def _read_sphere_csv(ctx: _Ctx, where: str, file: Path) -> dict:
    if not file.is_file():
        ctx.fail(where, f"sphere file {str(file)!r} does not exist")
    try:
        data = np.genfromtxt(file, delimiter=",", names=True)
    except Exception as exc:
        ctx.fail(where, f"cannot read {str(file)!r}: {exc}")
    names = set(data.dtype.names or ())
    if not {"x", "y", "z", "r"} <= names:
        ctx.fail(where, f"{str(file)!r} needs a header with columns x,y,z,r (and optionally vx,vy,vz); "
                        f"found {sorted(names)}")
    data = np.atleast_1d(data)
    out = {"positions": np.stack([data["x"], data["y"], data["z"]], axis=1), "radii": data["r"]}
    if {"vx", "vy", "vz"} <= names:
        out["velocities"] = np.stack([data["vx"], data["vy"], data["vz"]], axis=1)
    return out
