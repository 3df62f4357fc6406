"""Numbers stated in scene files and docs hold where they are computed (issue 43, section 6).

A comment that gives a bead count, a size or a bed depth is checked against what contactlab's own
scene-file loader builds from the same file (``load_scene_file`` and ``Scene.finalize``: no
simulation, nothing compiled), and every statement of the first run's compilation time uses the
range the README gives.  Reading the four scene files and finalizing their scenes (10,000 beads
among them) takes about a second.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from contactlab.io.scenefile import default_scene_path, load_scene_file

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = default_scene_path()
COLUMN = ROOT / "examples" / "column_collapse.toml"
PISTON = ROOT / "examples" / "piston_compression.toml"


def header(path: Path) -> str:
    """The comment lines that open a TOML file, without their ``#``, as one line of text."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(" ".join(lines).split())


def found(pattern: str, text: str, where: str) -> tuple[str, ...]:
    """The groups of ``pattern`` in ``text``; fails naming ``where`` when it is not there."""
    m = re.search(pattern, text)
    assert m, f"{where}: no statement matching {pattern!r} in {text[:300]!r}"
    return m.groups()


def count(text: str) -> int:
    """``'10,000'`` -> 10000."""
    return int(text.replace(",", ""))


_BUILT: dict[Path, tuple] = {}


def built(path: Path):
    """(the file's TOML document, positions (N, 3) m, radii (N,) m) of the scene the loader builds."""
    if path not in _BUILT:
        model, state = load_scene_file(path).scene.finalize()
        with open(path, "rb") as f:
            doc = tomllib.load(f)
        _BUILT[path] = (doc, np.asarray(state.positions), np.asarray(model.radius))
    return _BUILT[path]


def box_widths(doc: dict) -> tuple[float, float]:
    """(x, y) m between the file's side walls (the walls whose normals are +-x and +-y)."""
    widths = []
    for axis in (0, 1):
        at = [w["point"][axis] for w in doc["wall"] if abs(w["normal"][axis]) == 1.0]
        widths.append(max(at) - min(at))
    return widths[0], widths[1]


@dataclass(frozen=True)
class Count:
    """The bead count that ``text`` (a file) states, matched by ``pattern``, is the number of
    spheres of ``scene`` as loaded."""

    name: str
    text: Path
    pattern: str
    scene: Path


COUNTS = [
    Count("default.toml's header", DEFAULT, r"([\d,]+) glass beads poured", DEFAULT),
    Count("README's built-in scene", ROOT / "README.md", r"built-in scene: ([\d,]+) glass beads", DEFAULT),
    Count("column_collapse.toml's header", COLUMN, r"([\d,]+) beads fill a narrow column", COLUMN),
    Count("piston_compression.toml's header", PISTON, r"compresses ([\d,]+) beads", PISTON),
]


@pytest.mark.parametrize("case", COUNTS, ids=[c.name for c in COUNTS])
def test_stated_bead_counts_are_what_the_loader_builds(case):
    text = header(case.text) if case.text.suffix == ".toml" else case.text.read_text(encoding="utf-8")
    (stated,) = found(case.pattern, text, case.name)
    _, _, radii = built(case.scene)
    assert count(stated) == len(radii), f"{case.name} says {stated} beads; {case.scene.name} builds {len(radii)}"


def test_the_default_scenes_lattice_box_and_bed_depth_are_computed_from_its_tables():
    """default.toml: the lattice (spacing, radii, heights), the box, and the settled bed's depth
    as the beads' solid volume over the floor at the stated packing fractions."""
    text = header(DEFAULT)
    doc, pos, radii = built(DEFAULT)
    fill = doc["fill_box"][0]
    spacing, radius, spread = (float(v) for v in found(r"spacing ([\d.]+) mm, radii ([\d.]+) mm \+/- (\d+) %",
                                                         text, "default.toml"))
    assert spacing == pytest.approx(1e3 * fill["spacing"]) and radius == pytest.approx(1e3 * fill["radius"])
    assert spread == pytest.approx(100 * fill["radius_spread"])
    assert radii.min() >= 1e-3 * radius * (1 - spread / 100) and radii.max() <= 1e-3 * radius * (1 + spread / 100)
    low, high = (int(v) for v in found(r"(\d+)-(\d+) mm above the floor", text, "default.toml"))
    assert (low, high) == (round(1e3 * (pos[:, 2] - radii).min()), round(1e3 * (pos[:, 2] + radii).max()))
    wide, deep = (float(v) for v in found(r"floor of a (\d+) mm x (\d+) mm box", text, "default.toml"))
    x, y = box_widths(doc)
    assert (wide, deep) == (round(1e3 * x), round(1e3 * y))
    solid = float(np.sum(4.0 / 3.0 * math.pi * radii**3))                   # m^3
    (volume,) = found(r"their (\d+) cm\^3 of glass", text, "default.toml")
    assert int(volume) == round(1e6 * solid)
    shallow, deepest = (int(v) for v in found(r"bed about (\d+)-(\d+) mm deep", text, "default.toml"))
    dense, loose = (float(v) for v in found(r"packing fraction of a poured bed, ([\d.]+)-([\d.]+)", text,
                                            "default.toml"))
    assert (shallow, deepest) == (round(1e3 * solid / (dense * x * y)), round(1e3 * solid / (loose * x * y)))


def test_the_collapse_columns_lattice_is_what_fill_box_lays():
    """column_collapse.toml: the column and box sizes, the lattice's spacing and its 8 x 8 x 33
    sites (counted from the built positions: the jitter moves a centre by less than half the free
    gap, so each rounds to its site), fewer than max_count."""
    text = header(COLUMN)
    doc, pos, radii = built(COLUMN)
    fill = doc["fill_box"][0]
    column = tuple(float(v) for v in found(r"narrow column \((\d+) mm x (\d+) mm x (\d+) mm\)", text, "column"))
    assert column == tuple(round(1e3 * (u - lo)) for lo, u in zip(fill["lower"], fill["upper"], strict=True))
    box = tuple(float(v) for v in found(r"wide box \((\d+) mm x (\d+) mm\)", text, "column"))
    assert box == tuple(round(1e3 * w) for w in box_widths(doc))
    largest, spacing = (float(v) for v in found(r"largest radius of ([\d.]+) mm: ([\d.]+) mm", text, "column"))
    assert largest == pytest.approx(1e3 * fill["radius"] * (1 + fill["radius_spread"]))
    assert spacing == pytest.approx(2.2 * largest)
    assert radii.max() <= 1e-3 * largest
    sites = tuple(int(v) for v in found(r"holds (\d+) x (\d+) x (\d+) of", text, "column"))
    per_axis = tuple(len(np.unique(np.round((pos[:, k] - pos[:, k].min()) / (1e-3 * spacing)))) for k in range(3))
    assert sites == per_axis and math.prod(sites) == len(radii) < fill["max_count"]


#: where the first run's compilation time is stated for users
DOC_FILES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*.py"),
                    *(ROOT / "examples").glob("*.toml"), *(ROOT / "src" / "contactlab" / "builtin_scene_files").glob(
                        "*.toml")])
SECONDS = re.compile(r"\b\d+(?:\.\d+)?(?:\s*-\s*\d+(?:\.\d+)?)?\s*s\b|\b(?:half )?a minute\b|\bminutes\b")
RANGE = re.compile(r"\b(\d+)\s*-\s*(\d+)\s*s\b")


def sentences(path: Path) -> list[str]:
    """The file's text as sentences: lines without comment marks, joined, split after a full stop
    or semicolon."""
    text = " ".join(line.strip().lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines())
    return re.split(r"(?<=[.;])\s+(?=[A-Z(`\[])", " ".join(text.split()))


def first_compile_statements() -> list[tuple[str, str]]:
    """(file, sentence) for every sentence that speaks of a first run's (or time's) compilation
    and gives a time in seconds or minutes."""
    out = []
    for path in DOC_FILES:
        for s in sentences(path):
            if re.search(r"compil", s, re.I) and re.search(r"\bfirst\b", s, re.I) and SECONDS.search(s):
                out.append((str(path.relative_to(ROOT)), s))
    return out


def test_the_first_compilation_time_is_stated_one_way_everywhere():
    """The README states it once (the range of the first run on a machine, and that of a further
    law); every other statement of a first run's compilation time in the README, docs/ and
    examples/ gives that range, and no other range than those two.  (src/contactlab/cli.py prints
    it too, "~20-50 s" and "~20-40 s" when this test was written: to be brought in line where
    cli.py is edited.)"""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    first, further = found(r"The first run compiles the kernels \(~?(\d+-\d+ s) on a 2-core machine, ~?(\d+-\d+ s) "
                           r"for each further law\)", readme, "README.md")
    allowed = {first, further}
    statements = first_compile_statements()
    files = {f for f, _ in statements}
    assert {"README.md", "docs/performance.md", "docs/custom-laws.md", "docs/validation.md"} <= files, files
    wrong = [(f, s) for f, s in statements
             if first not in s or {f"{a}-{b} s" for a, b in RANGE.findall(s)} - allowed]
    assert not wrong, (f"a first compilation time other than the README's {first} (a further law: {further}):\n"
                       + "\n".join(f"{f}: {s}" for f, s in wrong))
