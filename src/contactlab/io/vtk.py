"""ParaView output: spheres, contacts (force chains) and walls as VTK XML PolyData, with .pvd series.

Files written by :class:`VTKReporter` into its directory, for frame ``k``:

* ``particles_<k>.vtp``: one vertex per sphere at its centre; point data ``id`` (the body's stable
  id, :attr:`contactlab.Simulation.ids`: it follows a body across frames of a particle stream), ``radius`` (m),
  ``velocity`` (m/s), ``angular_velocity`` (rad/s), ``force`` (N, total), ``torque`` (N m),
  ``orientation`` (quaternion w, x, y, z), ``material``, ``fixed``, ``clump`` (the clump a member
  sphere belongs to, -1 for none: colour by it to see the clumps).  In ParaView use the *Glyph*
  filter with a sphere source, scale by ``radius`` (scale factor 2, since the source has radius
  0.5).
* ``contacts_<k>.vtp``: one line per active contact, from the centre of ``i`` to the centre of
  ``j`` (or to the contact point for a wall); cell data ``force`` (N, on i), ``force_magnitude``,
  ``normal_force`` (N, compressive > 0), ``overlap`` (m), ``i``, ``j``, ``wall``.  Colour or tube
  the lines by ``force_magnitude`` to see force chains.
* ``walls_<k>.vtp``: each plane wall as a square patch covering the spheres' bounding box, each
  cylinder wall as a tube of 48 quadrilaterals between its ends (an infinite end cut at the
  extent of such a patch); cell data ``wall`` (index) and ``velocity`` (m/s).
* ``shapes_<k>.vtp``: the surface of every non-spherical body (ellipsoids, polyhedra, convex
  rolls) as triangles in their current position and orientation; cell data ``body`` (index),
  ``kind`` (see :mod:`contactlab.geometry.shapes`), ``velocity`` (m/s of the body's centre).
  In a 2-D scene it holds every body, disks included: each disk and ellipse is a flat filled
  polygon of :data:`~contactlab.geometry.shapes.OUTLINE_SIDES` sides in the plane z = 0 (a fan
  of triangles about its centre), at its size and turned with the body; ParaView shows them as
  they are (open ``shapes.pvd``, view along z).
* ``meshes_<k>.vtp``: the triangles of the mesh walls where they are now; cell data ``mesh``,
  ``triangle`` and ``force`` (N, the force of the bodies on each triangle).
* ``particles.pvd``, ``contacts.pvd``, ``walls.pvd``, ``shapes.pvd``, ``meshes.pvd``: time series
  that ParaView opens directly;
  they are rewritten (atomically) after every frame, so a run stopped at any point leaves valid
  collections.

The XML uses raw appended binary data (little endian, UInt64 headers): compact and fast to write.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .._arguments import as_bool, as_path, checked_api
from ..geometry.periodic import cell_length, wrap_np
from ..errors import InputError
from ..geometry.rotation import rotation_matrix
from ..geometry.shapes import SPHERE, ellipse_fan, surface_triangles
from ..geometry.sphere_cylinder import WALL_PLANE
from .atomic import atomic_write_bytes, ensure_writable_folder, remove_stale_temporaries
from .reporter import Reporter

__all__ = ["VTKReporter", "write_polydata", "write_pvd", "read_pvd", "SERIES", "series_files"]

#: the series a VTKReporter writes: ``<series>.pvd`` and its frames ``<series>_<k>.vtp``
SERIES = ("particles", "contacts", "walls", "bonds", "shapes", "meshes")
_FRAME = re.compile(rf"^(?:{'|'.join(SERIES)})_\d{{6,}}\.vtp$")

#: sides of the polygon a cylinder wall is drawn with
_TUBE_SIDES = 48

_VTK_TYPES = {
    np.dtype(np.float64): "Float64",
    np.dtype(np.float32): "Float32",
    np.dtype(np.int64): "Int64",
    np.dtype(np.int32): "Int32",
    np.dtype(np.uint8): "UInt8",
}


def write_polydata(path, points, *, verts: bool = False, lines=None, polys=None, point_data=None,
                   cell_data=None) -> None:
    """Write a VTK XML PolyData file (.vtp) with raw appended data.

    Parameters
    ----------
    points : (P, 3) float array
    verts : bool
        One vertex cell per point.
    lines : (L, 2) int array, optional
        Line cells as pairs of point indices.
    polys : (Q, k) int array, optional
        Polygon cells with k points each.
    point_data, cell_data : dict name -> array of shape (P,) / (P, c) and (cells,) / (cells, c)
    """
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    n_points = points.shape[0]
    point_data = point_data or {}
    cell_data = cell_data or {}
    blocks: list[bytes] = []
    offset = 0

    def add(array) -> int:
        nonlocal offset
        arr = np.ascontiguousarray(array)
        if arr.dtype not in _VTK_TYPES:
            arr = arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64)
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        blocks.append(np.uint64(len(raw)).tobytes() + raw)
        start = offset
        offset += 8 + len(raw)
        return start

    def data_array(name, array):
        arr = np.asarray(array)
        if arr.dtype == bool:
            arr = arr.astype(np.uint8)
        ncomp = 1 if arr.ndim == 1 else arr.shape[1]
        off = add(arr)
        kind = _VTK_TYPES.get(arr.dtype, "Float64" if arr.dtype.kind == "f" else "Int64")
        return (f'        <DataArray type="{kind}" Name="{name}" NumberOfComponents="{ncomp}" '
                f'format="appended" offset="{off}"/>\n')

    n_verts = n_points if verts else 0
    lines = np.zeros((0, 2), dtype=np.int64) if lines is None else np.asarray(lines, dtype=np.int64).reshape(-1, 2)
    polys = None if polys is None else np.asarray(polys, dtype=np.int64)
    n_polys = 0 if polys is None else polys.shape[0]
    head = [
        '<?xml version="1.0"?>\n',
        '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64">\n',
        '  <PolyData>\n',
        f'    <Piece NumberOfPoints="{n_points}" NumberOfVerts="{n_verts}" NumberOfLines="{lines.shape[0]}" '
        f'NumberOfStrips="0" NumberOfPolys="{n_polys}">\n',
    ]
    body = ["      <PointData>\n"]
    for name, arr in point_data.items():
        body.append(data_array(name, arr))
    body.append("      </PointData>\n      <CellData>\n")
    for name, arr in cell_data.items():
        body.append(data_array(name, arr))
    body.append("      </CellData>\n      <Points>\n")
    body.append(data_array("Points", points))
    body.append("      </Points>\n")
    if n_verts:
        body.append("      <Verts>\n")
        body.append(data_array("connectivity", np.arange(n_points, dtype=np.int64)))
        body.append(data_array("offsets", np.arange(1, n_points + 1, dtype=np.int64)))
        body.append("      </Verts>\n")
    if lines.shape[0]:
        body.append("      <Lines>\n")
        body.append(data_array("connectivity", lines.ravel()))
        body.append(data_array("offsets", 2 * np.arange(1, lines.shape[0] + 1, dtype=np.int64)))
        body.append("      </Lines>\n")
    if n_polys:
        k = polys.shape[1]
        body.append("      <Polys>\n")
        body.append(data_array("connectivity", polys.ravel()))
        body.append(data_array("offsets", k * np.arange(1, n_polys + 1, dtype=np.int64)))
        body.append("      </Polys>\n")
    tail = "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _"
    data = "".join(head + body).encode() + tail.encode() + b"".join(blocks) + b"\n  </AppendedData>\n</VTKFile>\n"
    atomic_write_bytes(Path(path), data)


def write_pvd(path, entries) -> None:
    """Write a ParaView collection: ``entries`` is a list of (time, relative file name)."""
    lines = ['<?xml version="1.0"?>\n',
             '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n',
             "  <Collection>\n"]
    for t, name in entries:
        lines.append(f'    <DataSet timestep="{t:.12g}" group="" part="0" file="{name}"/>\n')
    lines.append("  </Collection>\n</VTKFile>\n")
    atomic_write_bytes(Path(path), "".join(lines).encode())


def read_pvd(path) -> list[tuple[float, str]]:
    """Entries (time, file name) of a .pvd collection; empty if the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        root = ET.parse(path).getroot()
        return [(float(e.get("timestep")), e.get("file")) for e in root.iter("DataSet")]
    except (ET.ParseError, TypeError, ValueError) as exc:
        raise InputError(f"{str(path)!r} is not a readable ParaView collection (.pvd): {exc}") from None


def series_files(directory) -> list[Path]:
    """The files of VTKReporter series in ``directory`` (collections and frames), sorted; empty
    for a folder that does not exist."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(f for f in directory.iterdir()
                  if (f.suffix == ".pvd" and f.stem in SERIES) or _FRAME.match(f.name))


def _frame_index(name: str) -> int:
    try:
        return int(Path(name).stem.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return -1


@checked_api
class VTKReporter(Reporter):
    """Write spheres, contacts and walls for ParaView every ``interval`` seconds (or ``every`` steps).

    Parameters
    ----------
    directory : str or Path
        Output directory (created).
    interval : float, s, or every : int, steps
        When to write (give one).
    contacts : bool
        Write the contact network (force chains), default True.
    walls : bool
        Write the walls as patches, default True.
    bonds : bool
        For a model with bonds (Ice, ParallelBond), write every bond made so far as a line between
        the two sphere centres, with ``intact`` (1/0), ``created`` and ``broken`` times (s; -1 while
        intact) and ``reason`` (the law's code; 0 while intact), default True.
    resume : bool
        Continue the series found in ``directory`` (after a restart from a checkpoint): frames
        up to the current time are kept and numbering continues.
    """

    def __init__(self, directory, *, interval: float | None = None, every: int | None = None,
                 contacts: bool = True, walls: bool = True, bonds: bool = True, resume: bool = False):
        super().__init__(interval=interval, every=every)
        self.directory = as_path("VTKReporter: directory", directory)
        self.contacts = as_bool("VTKReporter: contacts", contacts)
        self.walls = as_bool("VTKReporter: walls", walls)
        self.bonds = as_bool("VTKReporter: bonds", bonds)
        self.resume = as_bool("VTKReporter: resume", resume)
        self.frames: dict[str, list] = {series: [] for series in SERIES}
        self._surfaces = None
        self._surfaces_model = None
        self._next_index = 0

    def output_files(self) -> list[Path]:
        """The collection files of its series (each stands for its frames)."""
        return [self.directory / f"{series}.pvd" for series in SERIES]

    def attach(self, sim) -> None:
        super().attach(sim)
        ensure_writable_folder(self.directory, "VTK output folder")
        remove_stale_temporaries(self.directory)
        if self.resume:
            for series in self.frames:
                # frames of earlier steps only (the collection stores times to 12 digits: half a
                # step of margin, so the frame of the restart step is written once, by this run)
                self.frames[series] = [(t, name) for t, name in read_pvd(self.directory / f"{series}.pvd")
                                       if t < sim.time - 0.5 * sim.dt]
            self._next_index = max((_frame_index(name) + 1 for entries in self.frames.values()
                                    for _, name in entries), default=0)

    def report(self, sim) -> None:
        k = self._next_index
        self._next_index += 1
        self._write_particles(sim, k)
        if self.contacts:
            self._write_contacts(sim, k)
        if self.walls and sim.model.n_walls:
            self._write_walls(sim, k)
        if self.bonds and sim.contact_model.bond_field >= 0:
            self._write_bonds(sim, k)
        if sim.model.shape_kind.any() or sim.model.dimension == 2:
            self._write_shapes(sim, k)
        if sim.model.n_meshes:
            self._write_meshes(sim, k)
        for series, entries in self.frames.items():
            if entries:
                write_pvd(self.directory / f"{series}.pvd", entries)

    def _write_particles(self, sim, k):
        s, m = sim.state, sim.model
        name = f"particles_{k:06d}.vtp"
        # a periodic scene: the positions wrapped into the cell (between two rebuilds a body may stand
        # out), with the velocities of the images shown (a sheared cell's velocity jump)
        positions, velocities = (s.positions, s.velocities) if s.cell is None else wrap_np(s.positions, s.cell,
                                                                                            s.velocities)
        write_polydata(self.directory / name, positions, verts=True, point_data={
            "id": s.ids if s.ids is not None else np.arange(m.n_spheres, dtype=np.int64),
            "radius": m.radius,
            "velocity": velocities,
            "angular_velocity": s.angular_velocities,
            "force": s.forces,
            "torque": s.torques,
            "orientation": s.orientations,
            "material": m.material.astype(np.int32),
            "fixed": m.fixed.astype(np.uint8),
            "clump": m.clump_of,
        })
        self.frames["particles"].append((sim.time, name))

    def _write_contacts(self, sim, k):
        s = sim.state
        c = sim.contacts()
        n_s = sim.model.n_spheres
        wall = (c["wall"] >= 0) | (c["mesh"] >= 0)
        # points: all body centres, then the contact points of wall and mesh contacts
        points = np.vstack([s.positions, c["contact_point"][wall]])
        j_point = c["j"].copy()
        j_point[wall] = n_s + np.arange(int(wall.sum()))
        if s.cell is not None:
            # a periodic scene: centres wrapped, and a contact across a face drawn to j's image
            points[:n_s] = wrap_np(s.positions, s.cell)
            pair = ~wall
            image = points[c["i"][pair]] + c["displacement"][pair]
            # a difference is a rounding error or a whole cell length
            across = np.flatnonzero(np.abs(image - points[c["j"][pair]]).max(axis=1) > 0.25 * cell_length(s.cell))
            rows = np.flatnonzero(pair)[across]
            j_point[rows] = len(points) + np.arange(len(rows))
            points = np.vstack([points, image[across]])
        lines = np.stack([c["i"], j_point], axis=1)
        f = c["force"]
        name = f"contacts_{k:06d}.vtp"
        # the law's own per-contact data: its history fields and dissipation per term, by name
        extra = {key: c[key] for key in sim.contact_model.history_slices() if key in c}
        extra.update({f"dissipated_{t}": c[f"dissipated_{t}"] for t in sim.dissipation_terms
                      if f"dissipated_{t}" in c})
        write_polydata(self.directory / name, points, lines=lines, cell_data={
            **extra,
            "force": f,
            "force_magnitude": np.linalg.norm(f, axis=1),
            "normal_force": -np.einsum("ij,ij->i", f, c["normal"]),
            "overlap": c["overlap"],
            "elastic_energy": c["elastic_energy"],
            "dissipated": c["dissipated"],
            "i": c["i"],
            "j": c["j"],
            "wall": c["wall"],
            "mesh": c["mesh"],
        })
        self.frames["contacts"].append((sim.time, name))

    def _write_shapes(self, sim, k):
        m, s = sim.model, sim.state
        if self._surfaces is None or self._surfaces_model is not m:   # a particle stream changes the bodies
            self._surfaces_model = m
            # 2-D: every body, a disk as the flat polygon of its circle
            bodies = np.arange(m.n_spheres) if m.dimension == 2 else np.flatnonzero(m.shape_kind != 0)
            self._surfaces = [(int(b),) + (ellipse_fan(m.radius[b], m.radius[b]) if m.shape_kind[b] == SPHERE else
                                           surface_triangles(int(m.shape_kind[b]), m.shape_data, int(m.shape_ref[b])))
                              for b in bodies]
        pts, tris, body, kind, vel = [], [], [], [], []
        base = 0
        for b, local, faces in self._surfaces:
            r = rotation_matrix(s.orientations[b])
            pts.append(local @ r.T + s.positions[b])
            tris.append(faces + base)
            base += len(local)
            body.append(np.full(len(faces), b, dtype=np.int64))
            kind.append(np.full(len(faces), int(m.shape_kind[b]), dtype=np.int32))
            vel.append(np.repeat(s.velocities[b][None, :], len(faces), axis=0))
        name = f"shapes_{k:06d}.vtp"
        write_polydata(self.directory / name, np.vstack(pts), polys=np.vstack(tris), cell_data={
            "body": np.concatenate(body), "kind": np.concatenate(kind), "velocity": np.vstack(vel)})
        self.frames["shapes"].append((sim.time, name))

    def _write_meshes(self, sim, k):
        m = sim.model
        tri = sim.mesh_triangles()
        c = sim.contacts()
        on = c["triangle"] >= 0
        force = np.zeros((m.n_triangles, 3))
        np.add.at(force, c["triangle"][on], -c["force"][on])
        name = f"meshes_{k:06d}.vtp"
        write_polydata(self.directory / name, tri.reshape(-1, 3), polys=np.arange(3 * len(tri)).reshape(-1, 3),
                       cell_data={"mesh": m.tri_mesh, "triangle": np.arange(m.n_triangles, dtype=np.int64),
                                  "force": force})
        self.frames["meshes"].append((sim.time, name))

    def _write_bonds(self, sim, k):
        b = sim.bonds()
        name = f"bonds_{k:06d}.vtp"
        write_polydata(self.directory / name, sim.state.positions, lines=np.stack([b["i"], b["j"]], axis=1),
                       cell_data={
                           "intact": b["intact"].astype(np.uint8),
                           "senses": b["senses"].astype(np.int32),
                           "created": b["created"],
                           "broken": np.where(b["intact"], -1.0, b["broken"]),
                           "reason": b["reason"].astype(np.int32),
                           "i": b["i"],
                           "j": b["j"],
                       })
        self.frames["bonds"].append((sim.time, name))

    def _write_walls(self, sim, k):
        s, m = sim.state, sim.model
        lo = s.positions.min(axis=0) - 2 * m.radius.max()
        hi = s.positions.max(axis=0) + 2 * m.radius.max()
        size = float(np.linalg.norm(hi - lo))
        centre = 0.5 * (lo + hi)
        pts, quads, owner = [], [], []
        for w in range(m.n_walls):
            n = m.wall_normal[w]
            p = s.wall_points[w]
            a = np.cross(n, [1.0, 0.0, 0.0])
            if np.linalg.norm(a) < 1e-6:
                a = np.cross(n, [0.0, 1.0, 0.0])
            a /= np.linalg.norm(a)
            b = np.cross(n, a)
            h = 0.5 * size
            base = len(pts)
            if m.wall_kind[w] == WALL_PLANE:
                c0 = centre - np.dot(centre - p, n) * n  # projection of the box centre on the plane
                pts += [c0 - h * a - h * b, c0 + h * a - h * b, c0 + h * a + h * b, c0 - h * a + h * b]
                quads.append([base, base + 1, base + 2, base + 3])
                owner.append(w)
                continue
            # a cylinder: a polygonal tube between its ends (an infinite end: the particles' box)
            rc, _, low, high = m.wall_shape[w][:4]
            t_mid = float(np.dot(centre - p, n))
            low = low if np.isfinite(low) else t_mid - h
            high = high if np.isfinite(high) else t_mid + h
            angles = np.linspace(0.0, 2.0 * np.pi, _TUBE_SIDES, endpoint=False)
            ring = rc * (np.cos(angles)[:, None] * a + np.sin(angles)[:, None] * b)
            pts += list(p + low * n + ring) + list(p + high * n + ring)
            for q in range(_TUBE_SIDES):
                r = (q + 1) % _TUBE_SIDES
                quads.append([base + q, base + r, base + _TUBE_SIDES + r, base + _TUBE_SIDES + q])
                owner.append(w)
        owner = np.array(owner, dtype=np.int64)
        name = f"walls_{k:06d}.vtp"
        write_polydata(self.directory / name, np.array(pts), polys=np.array(quads), cell_data={
            "wall": owner,
            "velocity": s.wall_velocities[owner],
        })
        self.frames["walls"].append((sim.time, name))
