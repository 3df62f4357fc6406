"""The package's shape: no import cycles, imports at the top, small modules, no twin names.

The import graph is built from the source (Python's ``ast``), not by importing: an edge for every
module-level import of one of contactlab's modules (including those under a module-level ``if`` or
``try``), plus an edge to each package the imported module lives in (importing
``contactlab.io.sensors`` runs ``contactlab/io/__init__.py`` first), except the importer's own
packages, which are initialised before it.  The root package's ``__init__`` is left out of the
cycle search: it imports the public API and Python initialises it before any submodule.
"""
from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "contactlab"

#: third-party modules a function may import where it needs them, and why; a function-level import
#: of contactlab's own modules is never allowed (it hides an import cycle)
LAZY_IMPORTS = {
    "matplotlib": "optional dependency (the [plot] extra): figures of recorders and validation reports",
    "PIL": "comes with matplotlib: the validation report's PNG metadata",
    "trimesh": "loads mesh files only (scene/meshes.py): importing it takes ~0.8 s, as long as the rest of "
               "contactlab, and most scenes have no mesh",
    "pandas": "the result tables of ensembles only (ensemble/): importing it adds ~0.2 s (a third) to every "
              "`import contactlab`, most of which never build a table",
    "pyarrow": "optional dependency (the [ensemble] extra): Parquet files of ensemble results",
    "distributed": "optional dependency (the [ensemble] extra): `contactlab sweep --scheduler` connects to Dask",
}
#: modules whose functions import what they need, and why: the command line's subcommands import the
#: engine only when they run, so that `contactlab --help` and `--version` answer in ~0.1 s, not ~1.5 s
LAZY_IMPORTERS = {
    "contactlab.cli": "the command's --help and --version answer without importing the engine",
    "contactlab.gpu": "the GPU backend (numba.cuda: ~0.2 s and the CUDA bindings) loads only when a simulation "
                      "asks for device='cuda'",
}
#: a module longer than this says in its docstring why it is one concept ("one concept")
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path):
    """``(imported module, line, inside a function or class)`` for every import statement."""
    found = []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, nested) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                target = _absolute(module, path, child)
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    found.append((sub if sub in MODULES else target, child.lineno, nested))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        own = {".".join(module.split(".")[:k]) for k in range(1, module.count(".") + 1)}
        edges = set()
        for target, _, nested in _imports(module, path):
            if nested or target not in MODULES:
                continue
            parts = target.split(".")
            edges |= {target} | {".".join(parts[:k]) for k in range(2, len(parts))}  # and its packages
        graph[module] = edges - own - {"contactlab", module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_import_graph_is_built_from_the_source():
    graph = _graph()
    assert len(graph) > 100
    assert "contactlab.engine.stepper" in graph["contactlab.simulation"]
    assert {"contactlab.io", "contactlab.io.sensors"} <= graph["contactlab.simulation"]  # and the package
    assert "contactlab.laws.base" in graph["contactlab.laws.hertz_mindlin"]
    # the search finds a cycle when there is one
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_package():
    assert _cycles(_graph()) == []


def test_function_level_imports_only_for_optional_dependencies():
    bad = []
    for module, path in sorted(MODULES.items()):
        for target, line, nested in _imports(module, path):
            if nested and target.split(".")[0] not in LAZY_IMPORTS and module not in LAZY_IMPORTERS:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target} inside a function")
    assert bad == [], "\n".join(bad)


def test_modules_are_small_or_say_why_they_are_one_concept():
    long = []
    for module, path in sorted(MODULES.items()):
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        doc = ast.get_docstring(ast.parse(text)) or ""
        if n > MAX_LINES and "one concept" not in doc.lower():
            long.append(f"{module}: {n} lines")
    assert long == [], long


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def test_no_two_module_names_differ_by_one_letter():
    """``model``/``models`` (frozen arrays / the laws), ``record``/``records``, ``scene``/``scenes`` (the builder / the bundled scene files):
    names one letter apart that mean different things are renamed."""
    names = sorted({p.stem for p in PACKAGE.rglob("*.py") if p.stem != "__init__"}
                   | {p.name for p in PACKAGE.rglob("*") if p.is_dir() and not p.name.startswith(("_", "."))})
    twins = [(a, b) for a, b in itertools.combinations(names, 2) if _distance(a, b) == 1]
    assert twins == []


@pytest.mark.parametrize("module", ["contactlab.engine.kernels", "contactlab.engine.integrate"])
def test_kernel_templates_import_only_compiled_code(module):
    """The step-kernel templates are copied into generated modules: they import contactlab's
    compiled building blocks only, by absolute name (a relative import would break in the copy)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module}:{node.lineno} uses a relative import"
