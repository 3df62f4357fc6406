"""Number and JSON formatting shared by the validation battery's records and its report."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fmt", "jsonable"]


def fmt(x) -> str:
    """A number for a line of text: 4 significant digits, exponent notation outside [1e-3, 1e5)."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if x != x:
        return "nan"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def jsonable(x):
    """``x`` as plain JSON data (NumPy scalars and arrays converted, non-finite floats as strings)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    if x is None or isinstance(x, str):
        return x
    return str(x)
