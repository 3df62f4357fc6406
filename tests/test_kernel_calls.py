"""The compiled code's calls stay short: the step's data travels as records, not as flat lists.

CPython compiles a call with more than 30 arguments (a keyword counts twice), or a tuple display
of more than 30 items, into a list turned into a tuple at run time (``CALL_FUNCTION_EX``,
``LIST_TO_TUPLE``).  Numba compiles that tuple as built and dropped at every call, and reference-
counts every array in it: around the pair pass of every step that was ~70 atomic operations, the
two-body step at 0.61 us instead of 0.46 us (``benchmarks/README.md``, "Two bodies, fixed").  Since
the step takes its data as records (``engine/step_records.py``), no compiled call needs more than 12
argument slots; a longer one is a field list written out again.  Nothing in the physics shows it;
this test does, for every function compiled by Numba in contactlab.
"""
from __future__ import annotations

import ast
from pathlib import Path

import contactlab

#: CPython's STACK_USE_GUARDRAIL (Python/compile.c, 3.11-3.13): above it, a call is built as a tuple
GUARDRAIL = 30
#: the most argument slots a call of one of the step's own functions (compiled functions of
#: contactlab/engine/) may take: they pass records.  The building blocks they call (narrow phases,
#: laws, vector helpers) take values, vectors as tuples, and are inlined, so that their width costs
#: nothing at run time; they keep CPython's limit.
STEP_LIMIT = 12
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


def _step_functions() -> set[str]:
    """The names of the compiled functions of contactlab/engine/ (the step's own functions)."""
    return {f.name for path in sorted((SOURCE / "engine").glob("*.py"))
            for f in _compiled_functions(ast.parse(path.read_text()))}


def _over_the_limit(function, step_functions=frozenset()) -> list[str]:
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            width = len(node.args) + 2 * len(node.keywords)
            name = ast.unparse(node.func).rsplit(".", 1)[-1]
            if name in step_functions and width > STEP_LIMIT:
                found.append(f"line {node.lineno}: call of {ast.unparse(node.func)} with {width} argument slots "
                             f"(a step function: at most {STEP_LIMIT})")
            elif width > GUARDRAIL:
                found.append(f"line {node.lineno}: call of {ast.unparse(node.func)} with {width} argument slots")
        elif isinstance(node, ast.Tuple) and len(node.elts) > GUARDRAIL and isinstance(node.ctx, ast.Load):
            found.append(f"line {node.lineno}: tuple of {len(node.elts)} items")
    return found


def test_the_scan_sees_the_step_kernels():
    """The scan finds the step kernels and the pair pass (a scan that finds nothing passes vacuously)."""
    tree = ast.parse((SOURCE / "engine" / "kernels.py").read_text())
    names = {f.name for f in _compiled_functions(tree)}
    assert {"advance", "_pairs_chunk", "sweep_parallel", "_sweep_range", "_steps"} <= names


def test_a_call_above_the_limit_is_found():
    """The check itself: a compiled function calling with 31 arguments is reported, 30 is not; a
    step function called with 13 is reported, with 12 not."""
    args = [f"a{q}" for q in range(GUARDRAIL + 1)]
    tree = ast.parse(f"@kernel\ndef f():\n    g({', '.join(args)})\n    g({', '.join(args[:-1])})\n"
                     f"    step({', '.join(args[:STEP_LIMIT + 1])})\n    step({', '.join(args[:STEP_LIMIT])})\n")
    (function,) = _compiled_functions(tree)
    assert _over_the_limit(function, {"step"}) == [
        f"line 3: call of g with {GUARDRAIL + 1} argument slots",
        f"line 5: call of step with {STEP_LIMIT + 1} argument slots (a step function: at most {STEP_LIMIT})"]


def test_the_step_functions_are_found():
    """The step's own functions are known to the scan (else the 12-slot limit checks nothing)."""
    assert {"advance", "_pairs_chunk", "reduce_block", "kick_drift_block", "clump_kick", "servo_update",
            "move_boundaries"} <= _step_functions()


def test_no_step_function_is_called_with_more_than_12_arguments():
    """Every call of a step function takes at most 12 argument slots (records, not field lists), and
    every other compiled call at most CPython's 30."""
    problems = []
    step = _step_functions()
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in _compiled_functions(tree):
            problems += [f"{path.relative_to(SOURCE)}: {function.name}: {p}" for p in _over_the_limit(function, step)]
    assert not problems, "\n".join(problems)
