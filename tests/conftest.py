"""Shared fixtures.  Kernels are compiled once per contact law and cached on disk (first run ~20 s each)."""
from __future__ import annotations

import math
import os

# the GPU tests (tests/test_gpu.py) run under numba-cuda's simulator unless a GPU is asked for
# (CONTACTLAB_TEST_DEVICE=cuda, benchmarks/gpu/run.sh); set before Numba is imported, which reads it once
if os.environ.get("CONTACTLAB_TEST_DEVICE", "simulator") != "cuda":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import contactlab as cl  # noqa: E402


def pytest_configure(config):
    """Under pytest-xdist (two workers on two cores) each worker runs its kernels on one thread:
    two workers with two threads each oversubscribe the cores, and the parallel loops of small
    scenes (a few bodies, millions of steps) then spend their time waiting for each other.  Tests
    that ask for threads=... still get them (results do not depend on the thread count)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        numba.set_num_threads(1)


@pytest.fixture
def glass():
    """Soft glass as in the benchmark: 2500 kg/m^3, E = 1e7 Pa, nu = 0.3."""
    return cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")


@pytest.fixture
def steel():
    return cl.Material(density=7800.0, young=2e8, poisson=0.29, name="steel")


def sphere_mass(material, radius):
    """Mass of a solid sphere, kg."""
    return material.density * 4.0 / 3.0 * math.pi * radius**3


def random_packing(n, radius, box, seed, spread=0.2, min_gap=0.0):
    """Non-overlapping random spheres in a cube of side ``box`` (rejection sampling), for tests."""
    rng = np.random.default_rng(seed)
    pos, rad = [], []
    tries = 0
    while len(pos) < n and tries < 200000:
        tries += 1
        r = radius * (1 + spread * rng.uniform(-1, 1))
        p = rng.uniform(r, box - r, 3)
        if all(np.linalg.norm(p - q) >= r + s + min_gap for q, s in zip(pos, rad)):
            pos.append(p)
            rad.append(r)
    return np.array(pos), np.array(rad)
