"""Small 3-vector helpers on tuples, for compiled code (values stay in registers)."""
from __future__ import annotations

import math

from ._jit import jit

__all__ = ["add", "sub", "scale", "dot", "cross", "norm", "axpy", "tangential_part"]


@jit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@jit
def axpy(s, a, b):
    """s * a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@jit
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit
def tangential_part(a, n):
    """Component of ``a`` perpendicular to the unit vector ``n``."""
    s = a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
    return (a[0] - s * n[0], a[1] - s * n[1], a[2] - s * n[2])
