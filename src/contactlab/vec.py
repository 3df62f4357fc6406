"""Small 3-vector helpers on tuples, for compiled code (values stay in registers).

Compiled once each as separate functions (``inline="never"``) and inlined by LLVM when the kernels
are optimised: inlining them at Numba's IR level instead copied and re-typed every one of their
hundreds of call sites, which made a law's pair kernel take ~19 s to compile instead of ~11 s for
the same speed (``benchmarks/README.md``, compile time).
"""
from __future__ import annotations

import math

from ._jit import jit

__all__ = ["add", "sub", "scale", "dot", "cross", "norm", "axpy", "tangential_part"]


@jit(inline="never")
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit(inline="never")
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit(inline="never")
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@jit(inline="never")
def axpy(s, a, b):
    """s * a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@jit(inline="never")
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit(inline="never")
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit(inline="never")
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit(inline="never")
def tangential_part(a, n):
    """Component of ``a`` perpendicular to the unit vector ``n``."""
    s = a[0] * n[0] + a[1] * n[1] + a[2] * n[2]
    return (a[0] - s * n[0], a[1] - s * n[1], a[2] - s * n[2])
