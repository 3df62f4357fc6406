"""Where a warning points: the user's line, not contactlab's."""
from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["user_stack_level"]

_PACKAGE = str(Path(__file__).resolve().parent)


def user_stack_level() -> int:
    """The ``stacklevel`` (for :func:`warnings.warn`) of the first caller outside contactlab (the
    user's line that built or ran the simulation), counted from the function that calls this one."""
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
