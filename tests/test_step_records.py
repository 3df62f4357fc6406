"""The step's data is declared once (engine/step_records.py) and its generated code is readable.

* no record's field list is written out again in the engine (a tuple naming all, or all but one,
  of a record's fields is such a list);
* the Stepper's records hold the model's, the state's and the table's own arrays (no copies: the
  kernels write the state through them);
* the kernel template has one marker, the law-independent template none, and a law's generated
  bindings module says what its kernels run (its history columns, its dissipation terms);
* the debug twin runs every compiled building block it imports as plain Python.
"""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np

import contactlab as cl
from contactlab.engine import step_records as records
from contactlab.engine.codegen import kernel_module
from contactlab.engine.sharing import share

ENGINE = Path(records.__file__).resolve().parent
RECORDS = [getattr(records, name) for name in records.__all__ if hasattr(getattr(records, name), "_fields")]


def _name_tuples(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
            yield node.lineno, {e.id for e in node.elts}


def _relisted(source: str) -> list[str]:
    found = []
    for lineno, names in _name_tuples(ast.parse(source)):
        for record in RECORDS:
            fields = set(record._fields)
            if len(fields) >= 4 and len(fields - names) <= 1:
                found.append(f"line {lineno}: {record.__name__}'s fields")
    return found


def test_a_relisted_record_is_found():
    """The check itself: unpacking every field of a record but one is found; a few are not."""
    fields = records.Table._fields
    assert _relisted(f"{', '.join(fields[:-1])} = table\n") == ["line 1: Table's fields"]
    assert _relisted("i_start, pair_j, hist = table.i_start, table.pair_j, table.hist\n") == []


def test_no_record_field_list_is_written_out_again_in_the_engine():
    problems = []
    for path in sorted(ENGINE.glob("*.py")):
        if path.name != "step_records.py":
            problems += [f"engine/{path.name}: {p}" for p in _relisted(path.read_text())]
    assert problems == []


def test_every_field_says_where_it_comes_from_and_the_stepper_builds_them(glass):
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.05e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.3), dt=1e-6)
    for record in RECORDS:
        assert set(record.SOURCES) == set(record._fields), record.__name__
        assert all(f"``{f}``" in record.__doc__ for f in record._fields), record.__name__
    bodies, books, bounds, table, run = sim.stepper.records()
    s, t = sim.state, sim.table
    assert bodies.pos is s.positions and bodies.previous is s.previous_loads and bodies.owner is sim.stepper.owner
    assert books.dissipated is s.dissipated and bounds.wall_point is s.wall_points and table.hist is t.hist
    assert bodies.rigid is None and bodies.clumps is None and bounds.cell is None and bounds.cylinders is None
    assert run.flags is sim.stepper.flags and run.half_skin == sim.stepper.half_skin
    # plain Python (the debug twin) shares a record as itself
    assert share(bodies) is bodies


def test_one_marker_in_the_templates_and_a_readable_bindings_module():
    def marked(path):
        return [line for line in path.read_text().splitlines() if "# @@" in line]

    assert len(marked(ENGINE / "kernels.py")) == 1 and "# @@BINDINGS@@" in marked(ENGINE / "kernels.py")[0]
    assert marked(ENGINE / "integrate.py") == []
    module = kernel_module("contactlab.laws.hertz_mindlin", dropped=(3, 4, 5), row_length=7)
    bindings = inspect.getsource(inspect.getmodule(module.load_history))
    # what the kernels of this variant run, in plain text: the dropped columns handed to the law as 0.0
    assert "from contactlab.laws.hertz_mindlin import law as LAW" in bindings
    assert "0.0, 0.0, 0.0" in bindings and "HIST_SIZE = 4" in bindings
    assert module.LAW_RANGE == 0.0 and module.HIST_SIZE == 4


def test_the_debug_twin_runs_the_building_blocks_as_python():
    debug = kernel_module("contactlab.laws.hertz_mindlin", debug=True)
    compiled = kernel_module("contactlab.laws.hertz_mindlin")
    for name in ("sphere_sphere_offset", "sphere_wall", "add", "cross", "min_image", "clump_kick", "load_history"):
        assert hasattr(getattr(compiled, name), "py_func"), name
        assert inspect.isfunction(getattr(debug, name)), name
    assert inspect.isfunction(debug.LAW) and inspect.isfunction(debug.advance)
    assert debug.reduce_block.__module__.startswith("_contactlab_integrate_debug_")
    h = np.zeros((1, 8))
    assert debug.load_history(h, 0) == compiled.load_history(h, 0)
