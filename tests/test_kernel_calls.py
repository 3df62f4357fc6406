"""The compiled code's calls stay below CPython's limit for a plain call.

CPython compiles a call with more than 30 arguments (a keyword counts twice), or a tuple display
of more than 30 items, into a list turned into a tuple at run time (``CALL_FUNCTION_EX``,
``LIST_TO_TUPLE``).  Numba compiles that tuple as built and dropped at every call, and reference-
counts every array in it: around the pair pass of every step that was ~70 atomic operations, the
two-body step at 0.61 us instead of 0.46 us (``benchmarks/README.md``, "Two bodies, fixed").  Nothing
in the physics shows it; this test does, for every function compiled by Numba in contactlab.
"""
from __future__ import annotations

import ast
from pathlib import Path

import contactlab

#: CPython's STACK_USE_GUARDRAIL (Python/compile.c, 3.11-3.13): above it, a call is built as a tuple
GUARDRAIL = 30
#: the decorators of compiled code (contactlab._jit, and Numba's own)
COMPILED = {"jit", "kernel", "pkernel", "pjit", "kernel_nocache", "pkernel_nocache", "njit"}
SOURCE = Path(contactlab.__file__).resolve().parent


def _decorator_name(node) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _compiled_functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_decorator_name(d) in COMPILED for d in node.decorator_list):
            yield node


def _over_the_limit(function) -> list[str]:
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            width = len(node.args) + 2 * len(node.keywords)
            if width > GUARDRAIL:
                found.append(f"line {node.lineno}: call of {ast.unparse(node.func)} with {width} argument slots")
        elif isinstance(node, ast.Tuple) and len(node.elts) > GUARDRAIL and isinstance(node.ctx, ast.Load):
            found.append(f"line {node.lineno}: tuple of {len(node.elts)} items")
    return found


def test_the_scan_sees_the_step_kernels():
    """The scan finds the step kernels and the pair pass (a scan that finds nothing passes vacuously)."""
    tree = ast.parse((SOURCE / "engine" / "kernels.py").read_text())
    names = {f.name for f in _compiled_functions(tree)}
    assert {"advance", "advance_parallel", "_pairs_chunk", "_sweep_ranges"} <= names


def test_a_call_above_the_limit_is_found():
    """The check itself: a compiled function calling with 31 arguments is reported, 30 is not."""
    args31 = ", ".join(f"a{q}" for q in range(31))
    tree = ast.parse(f"@kernel\ndef f():\n    g({args31})\n    g({args31[:-5]})\n")
    (function,) = _compiled_functions(tree)
    assert _over_the_limit(function) == ["line 3: call of g with 31 argument slots"]


def test_no_compiled_function_calls_with_more_than_30_arguments():
    problems = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in _compiled_functions(tree):
            problems += [f"{path.relative_to(SOURCE)}: {function.name}: {p}" for p in _over_the_limit(function)]
    assert not problems, "\n".join(problems)
