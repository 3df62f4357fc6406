"""Write hopper.stl: a conical hopper (flat-bottomed funnel) with a cylindrical bin on top.

The surface of revolution about the z axis runs through the profile points (radius, height) in
millimetres below, cut into 48 sectors; it is open at the outlet and at the top.  Run
``python examples/data/make_hopper.py`` to regenerate the file (needs trimesh).
"""
from pathlib import Path

import numpy as np

#: (radius, height) of the profile, mm: outlet of radius 9 mm at 20 mm, cone at 60 degrees from the
#: horizontal up to radius 30 mm, then a vertical bin up to 120 mm
PROFILE = [(9.0, 20.0), (30.0, 20.0 + 21.0 * np.tan(np.radians(60.0))), (30.0, 120.0)]
SECTORS = 48


def hopper_mesh(profile=PROFILE, sectors=SECTORS):
    """Vertices (V, 3) and triangles (F, 3) of the surface of revolution (mm)."""
    phi = np.linspace(0.0, 2.0 * np.pi, sectors, endpoint=False)
    rings = [np.stack([r * np.cos(phi), r * np.sin(phi), np.full(sectors, z)], axis=1) for r, z in profile]
    vertices = np.vstack(rings)
    faces = []
    for a in range(len(profile) - 1):
        for b in range(sectors):
            p0, p1 = a * sectors + b, a * sectors + (b + 1) % sectors
            q0, q1 = p0 + sectors, p1 + sectors
            faces += [[p0, p1, q1], [p0, q1, q0]]
    return vertices, np.array(faces)


if __name__ == "__main__":
    import trimesh

    v, f = hopper_mesh()
    path = Path(__file__).with_name("hopper.stl")
    trimesh.Trimesh(v, f, process=False).export(path)
    print(f"wrote {path} ({len(f)} triangles, millimetres)")
