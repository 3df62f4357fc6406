"""Numba's compilation errors, translated: the law that failed, its line and a hint.

Numba compiles a law on the first call of the kernels that use it; its error names a file, a line
and an internal message.  :func:`explain_compile_error` turns it into a
:class:`~contactlab.errors.LawError` that names the user's law (the slot law whose file the
traceback names, or the one that uses an unknown name), the line, and what usually causes it.
"""
from __future__ import annotations

import inspect
import os
import re

from ..errors import LawError
from .trial import law_line

__all__ = ["explain_compile_error"]


def explain_compile_error(exc: BaseException, model) -> LawError:
    """Turn a Numba compilation error raised while compiling ``model``'s kernels into a
    :class:`~contactlab.errors.LawError` naming the law, its line and a hint."""
    text = str(exc)
    slots = getattr(model, "_slots", None)  # a model made of user-written slot laws
    parts = [part for _, part in slots()] if slots is not None else []
    files = {type(p).function.__code__.co_filename: type(p) for p in parts}
    culprit, loc, src = None, "", ""
    for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
        path = m.group(1)
        for f, cls in files.items():
            if os.path.abspath(path) == os.path.abspath(f) or path.endswith(os.path.basename(f)):
                culprit = cls
                loc, src = law_line(cls, int(m.group(2)))
                break
        if culprit is not None:
            break
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if not ln.startswith(("Failed in", "During", "File ", "<source"))),
                 lines[0] if lines else "")
    # the names Numba could not compile (a function it has no implementation of, a global it cannot
    # type), in the order they are named; when Numba did not say where, the first that a line of
    # the law uses is the culprit
    symbols = (re.findall(r"No implementation of function Function\(<built-in function (\w+)>\)", text)
               + re.findall(r"(?:Untyped global name|name) '(\w+)'", text))
    for symbol in symbols if culprit is None else ():
        for cls in files.values():
            try:
                src_lines, start = inspect.getsourcelines(cls.function)
            except (OSError, TypeError):
                continue
            for k, ln in enumerate(src_lines):
                if re.search(rf"\b{symbol}\b", ln) and not ln.lstrip().startswith(("def ", "@")):
                    culprit = cls
                    loc, src = law_line(cls, start + k)
                    break
            if culprit is not None:
                break
        if culprit is not None:
            break
    hints = []
    if "Untyped global name" in text or "is not defined" in text:
        hints.append("a law can only call compiled functions: decorate the helper with @contactlab.jit "
                     "(math.* functions work as they are)")
    if "Unknown attribute" in text:
        hints.append("an unknown field of p, h or g: check the names the law declares")
    if "Cannot unify" in text or "can't unify" in text.lower():
        hints.append("a value takes different types in different branches: use floats everywhere (0.0, not 0) "
                     "and return tuples of the same length from every return")
    if "reflected list" in text or "array(" in text and "Tuple" in text:
        hints.append("return tuples, not lists or NumPy arrays")
    if "Unsupported" in text or "unsupported" in text or "NotImplemented" in text:
        hints.append("this construct is not supported in compiled code (Numba's nopython mode)")
    hints.append("run the law as plain Python to debug it: cl.probe(model, ..., debug=True) or "
                 "cl.Simulation(..., debug=True)")
    name = culprit.name if culprit is not None else getattr(model, "name", type(model).__name__)
    where = f" at {src}" if src else ""
    message = (f"law {name} cannot be compiled by Numba{where}:\n  {first}\n" + "\n".join(f"  hint: {h}" for h in hints)
               + "\n  (Numba's full message is chained below)")
    return LawError(message, law=name, line=loc)
