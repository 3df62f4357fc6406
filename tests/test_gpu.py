"""The GPU backend (``device="cuda"``) against the CPU engine on the same scenes.

Reference: the CPU engine itself, run in the same test on the same scene (never a stored file).
Under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, set by conftest.py: CI has no GPU) the
GPU kernels run their passes as on a device, with their own device copies of every array, and the
plain-Python twin of the CPU's building blocks, so the results agree bit for bit; on a GPU
(``CONTACTLAB_TEST_DEVICE=cuda``, benchmarks/gpu/run.sh) the same comparisons hold to 1e-12
relative: every sum is taken in the CPU's order (one thread per body gathering through the partner
index, no floating-point atomics) and the kernels are compiled without fused multiply-adds, so
only the math library's last bits (libdevice's ``pow``, ``exp``, ``atan2`` against the CPU's) can
differ.

Small scenes (<= 64 bodies, 200 steps, each with at least two neighbour-list rebuilds): the
simulator runs a kernel's threads as Python threads.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import contactlab as cl
from contactlab.gpu import DeviceError, available
from contactlab.laws.registry import MODELS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

from adhesive_law import elastic_plastic_adhesive  # noqa: E402
from helpers.range_law import reaching_spring  # noqa: E402

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"GPU backend not runnable here: {REASON}")

#: relative agreement of GPU and CPU runs (bit for bit under the simulator; rounding on a GPU)
RTOL = 1e-12
GLASS = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
R = 1e-3


def _box_scene(n_side=3, layers=2, seed=4, dimension=3, shuffle=False):
    """``n_side^2 * layers`` spheres thrown at each other in a box of plane walls, under gravity
    (``shuffle``: the 3-D spheres added in a random order, which scatters neighbours in memory)."""
    rng = np.random.default_rng(seed)
    scene = cl.Scene(gravity=(0, 0, -9.81) if dimension == 3 else (0, -9.81), dimension=dimension,
                     **({} if dimension == 3 else {"thickness": 2 * R}))
    gap = 2.05 * R
    spheres = []
    for a in range(n_side):
        for b in range(n_side):
            for c in range(layers):
                if dimension == 3:
                    x = (R + 1e-5 + gap * a, R + 1e-5 + gap * b, R + 1e-5 + gap * c)
                    v = tuple(0.3 * rng.standard_normal(3))
                    spheres.append(dict(position=x, radius=R * (1 + 0.05 * rng.random()) / 1.05, material=GLASS,
                                        velocity=v, angular_velocity=tuple(20 * rng.standard_normal(3))))
                else:
                    x = (R + 1e-5 + gap * a, R + 1e-5 + gap * (b + n_side * c))
                    scene.add_disk(position=x, radius=R * (1 + 0.05 * rng.random()) / 1.05, material=GLASS,
                                   velocity=tuple(0.3 * rng.standard_normal(2)))
    for k in (rng.permutation(len(spheres)) if shuffle else range(len(spheres))):
        scene.add_sphere(**spheres[k])
    side = gap * n_side + 2e-5
    if dimension == 3:
        for axis in range(3):
            for lo in (True, False):
                normal = [0.0, 0.0, 0.0]
                normal[axis] = 1.0 if lo else -1.0
                point = [0.0, 0.0, 0.0]
                point[axis] = 0.0 if lo else (side if axis < 2 else 3 * side)
                scene.add_wall(point=tuple(point), normal=tuple(normal), material=GLASS)
    else:
        scene.add_wall(point=(0, 0), normal=(0, 1), material=GLASS)
        scene.add_wall(point=(0, 0), normal=(1, 0), material=GLASS)
        scene.add_wall(point=(side, 0), normal=(-1, 0), material=GLASS)
    return scene


def _snapshot(sim) -> dict:
    """Everything the comparisons look at: the state, the contact table, the energy books."""
    t = sim.table
    n = t.n_pairs
    snap = dict(positions=sim.positions, velocities=sim.velocities, spins=sim.angular_velocities,
                orientations=sim.orientations, forces=sim.forces, torques=sim.torques,
                pairs=np.stack([t.pair_i[:n], t.pair_j[:n]]), history=t.hist[:n], outputs=t.out[:n],
                status=t.status[:n], i_start=t.i_start, j_start=t.j_start, j_pairs=t.j_pairs[: int(t.j_start[-1])],
                build_reference=t.ref_pos, walls=sim.wall_points)
    snap = {k: np.array(v, dtype=float) for k, v in snap.items()}
    snap.update({f"energy {k}": np.array([v]) for k, v in sim.energy().items()})
    snap["builds"] = np.array([t.builds], dtype=float)
    return snap


def _agree(cpu: dict, gpu: dict) -> None:
    assert cpu.keys() == gpu.keys()
    for key in cpu:
        a, b = cpu[key], gpu[key]
        assert a.shape == b.shape, key
        scale = max(float(np.abs(a).max(initial=0.0)), 1e-300)
        assert np.abs(a - b).max(initial=0.0) <= RTOL * scale, (key, np.abs(a - b).max(), scale)


def _both(build, run, **options):
    """Snapshots of the same scene run on the CPU and on the GPU (``run(sim)`` drives it)."""
    out = {}
    for device in ("cpu", "cuda"):
        sim = build(device, **options)
        run(sim)
        out[device] = _snapshot(sim)
        if device == "cuda" and sim.stepper.device_rebuild_possible():
            # the list was rebuilt on the device, and came out as the CPU's (the snapshots)
            assert sim.stepper.device_builds >= 2
    assert out["cpu"]["builds"][0] >= 3, "the scene should rebuild its neighbour list at least twice"
    return out["cpu"], out["cuda"]


def _steps(n):
    return lambda sim: sim.run(steps=n)


SPHERE_LAWS = [pytest.param(model, id=name) for cls in MODELS.values() for name, model in cls.examples().items()
               if cls.name not in ("ConvexRollContact", "VolumeContact")]
SPHERE_LAWS += [
    pytest.param(cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1), id="hm_rolling_spring"),
    pytest.param(cl.models.HertzMindlin(restitution=0.5, friction=0.5, rolling_friction=0.1,
                                        rolling_model="constant_torque"), id="hm_constant_torque"),
    pytest.param(cl.models.Contact(
        normal=elastic_plastic_adhesive(loading_stiffness=1e3, unloading_stiffness=5e3, adhesion_stiffness=2e2),
        damping=cl.parts.viscous_damping(coefficient=0.002),
        tangential=cl.parts.coulomb_friction(stiffness=3e2, friction=0.5)), id="user_law_with_history"),
    # a law that pulls across gaps up to 25 skins: the device's list takes its range too
    # (the composite of tests/test_interaction_range.py: its kernels are compiled once for both)
    pytest.param(cl.models.Contact(normal=reaching_spring(stiffness=2e3, pull=20.0)), id="user_law_across_a_gap"),
]


@pytest.mark.parametrize("model", SPHERE_LAWS)
def test_every_sphere_law_in_a_box_of_walls_matches_the_cpu(model):
    """Every built-in sphere law, a composite and a user law with history (plastic, adhesive,
    frictional), 18 spheres thrown about a box of six walls under gravity, 200 steps: positions,
    velocities, spins, forces, every pair's history and outputs and every energy term."""
    def build(device):
        return cl.Simulation(_box_scene(), model, device=device, skin=2e-5)

    cpu, gpu = _both(build, _steps(200))
    _agree(cpu, gpu)


def test_threads_in_cell_order_give_the_same_bits(monkeypatch):
    """CONTACTLAB_GPU_ORDER=cells: each thread takes a body in the cell order of the last device
    build instead of its own index; every body's sums are still its own thread's, so the run is
    the CPU's (and the order used is a permutation of the bodies other than theirs)."""
    from contactlab.gpu import backend

    monkeypatch.setattr(backend, "BODY_ORDER", "cells")
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    orders = []

    def run(sim):
        sim.run(steps=200)
        if sim.device == "cuda":
            order = np.zeros(sim.model.n_spheres, dtype=np.int32)
            backend.to_host(sim.stepper._order, order)
            orders.append(order)

    cpu, gpu = _both(lambda device: cl.Simulation(_box_scene(seed=9), model, device=device, skin=2e-5), run)
    _agree(cpu, gpu)
    assert np.array_equal(np.sort(orders[0]), np.arange(len(orders[0])))
    assert not np.array_equal(orders[0], np.arange(len(orders[0])))


@pytest.mark.parametrize("order", ["sorted", "bodies"])
def test_the_bodies_stored_in_cell_order_on_the_gpu_give_the_cpus_bits_in_the_users_order(monkeypatch, order):
    """CONTACTLAB_GPU_ORDER=sorted (the default): at each device rebuild every per-body array is
    permuted into the build's cell order (the stored bodies are then in non-decreasing cell order
    and not in the user's), pairs owned and summed by the user's index; a sensor mid-run and the
    end of the run bring the state and table back in the user's order and the CPU's layout, equal
    to the CPU run bit for bit; ``bodies`` (no permutation) gives the same bits."""
    from contactlab.gpu import backend

    monkeypatch.setattr(backend, "BODY_ORDER", order)
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    labels = []
    records = {}

    def look(sim):
        """The stored order checked wherever a device rebuild has sorted the bodies since the
        last upload (when that happens depends on the scene's last bits, so on the CPU type:
        looked at after each chunk of the second run and at the end of the first)."""
        st = sim.stepper
        if sim.device != "cuda" or order != "sorted" or st._labels is None:
            return
        stored = np.zeros(sim.n_spheres, dtype=np.int32)
        backend.to_host(st._labels, stored)
        labels.append(stored)
        pos = np.zeros((sim.n_spheres, 3))
        backend.to_host(st._device[0].pos, pos)
        assert np.array_equal(pos, sim.positions[stored])   # stored row q holds the user's body labels[q]

    def run(sim):
        rec = sim.record("position", "velocity", sphere=5, every=25)
        sim.run(steps=100)
        look(sim)
        # user code between chunks (reads the state: brought back, then uploaded in the user's order)
        seen = []

        def progress(s, done, total, wall):
            seen.append(s.positions[0].copy())
            look(s)

        sim.run(steps=100, progress=progress)
        assert seen
        records[sim.device] = np.hstack([rec["position"], rec["velocity"]])

    cpu, gpu = _both(lambda device: cl.Simulation(_box_scene(n_side=4, seed=3, shuffle=True), model, device=device, skin=2e-5), run)
    _agree(cpu, gpu)
    for key in cpu:
        assert np.array_equal(cpu[key], gpu[key]), key
    assert np.array_equal(records["cpu"], records["cuda"])
    if order == "sorted":
        assert labels, "a device rebuild should have sorted the bodies (_both checks two builds)"
        for stored in labels:
            assert np.array_equal(np.sort(stored), np.arange(len(stored)))
        assert any(not np.array_equal(stored, np.arange(len(stored))) for stored in labels)


def test_bonds_made_and_broken_match_the_cpu():
    """A bonded lattice (the Ice model) pulled apart: bonds break in tension during the run
    (logged with their time and cause), and everything agrees with the CPU."""
    model = cl.models.Ice(break_n=1e-3)

    def build(device):
        scene = cl.Scene(gravity=(0, 0, 0))
        for a in range(3):
            for b in range(3):
                for c in range(2):
                    scene.add_sphere(position=(2 * R * a, 2 * R * b, 2 * R * c), radius=R, material=GLASS,
                                     velocity=(0, 0, 0.5 if c else -0.5))
        sim = cl.Simulation(scene, model, device=device, skin=2e-5)
        assert sim.bond(max_gap=1e-6) == 33
        return sim

    logs = {}

    def run(sim):
        sim.run(steps=200)
        logs[sim.device] = sim.bonds()

    cpu, gpu = _both(build, run)
    _agree(cpu, gpu)
    broken = ~logs["cpu"]["intact"]
    assert broken.any(), "the impact should break bonds"
    for key in ("broken", "why", "intact"):
        assert np.array_equal(logs["cpu"][key][broken], logs["cuda"][key][broken]), key


def test_switched_off_pairs_match_the_cpu():
    """Two materials, glass-steel contacts switched off, one glass pair and one wall contact
    switched off by their bodies (Simulation.set_active): the device rebuild drops them as the
    CPU's does, and everything agrees."""
    steel = cl.Material(density=7800.0, young=2e7, poisson=0.3, name="steel")

    def build(device):
        scene = _box_scene()
        rng = np.random.default_rng(6)
        for a in range(3):
            for b in range(2):
                scene.add_sphere(position=(R * (1.05 + 2.02 * a), R * (1.05 + 2.02 * b), 6.5 * R), radius=R,
                                 material=steel, velocity=tuple(0.3 * rng.standard_normal(3)))
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), device=device, skin=2e-5)
        sim.set_active(False, materials=(GLASS, steel))
        sim.set_active(False, spheres=(0, 1))
        sim.set_active(False, sphere=2, wall=0)
        assert sim.stepper.exclusions.any
        return sim

    cpu, gpu = _both(build, _steps(200))
    _agree(cpu, gpu)


def test_a_periodic_cell_under_lees_edwards_shear_matches_the_cpu():
    """A periodic cell of 27 spheres sheared at a constant rate (the image of a body across the
    sheared face moves with the cell's velocity jump), frictional Hertz-Mindlin, with local damping."""
    def build(device):
        scene = cl.Scene(gravity=(0, 0, 0))
        rng = np.random.default_rng(2)
        side = 6.3 * R
        for a in range(3):
            for b in range(3):
                for c in range(3):
                    x = (2.1 * R * (a + 0.5), 2.1 * R * (b + 0.5), 2.1 * R * (c + 0.5))
                    scene.add_sphere(position=x, radius=R, material=GLASS, velocity=tuple(0.5 * rng.standard_normal(3)))
        scene.set_periodic((0, 0, 0), (side, side, side))
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.4), device=device, skin=2e-5,
                            local_damping=0.1)
        sim.cell.shear(200.0, plane="xz")
        return sim

    images = {}

    def run(sim):
        sim.run(steps=200)
        images[sim.device] = sim.state.images.copy()

    cpu, gpu = _both(build, run)
    _agree(cpu, gpu)
    assert np.abs(images["cpu"]).sum() > 0, "bodies should cross the cell's faces"
    assert np.array_equal(images["cpu"], images["cuda"])


def test_the_wrap_into_a_sheared_cell_on_the_device_equals_the_cpus():
    """Bodies scattered up to two cell lengths outside a sheared cell whose offset passed half a
    flow length: the device wrap (positions, velocities, image counters, the cell's work, the
    offset brought back) against the CPU's engine/cell_motion.wrap on the same arrays."""
    from types import SimpleNamespace

    from contactlab.engine.cell_motion import mark_built, wrap
    from contactlab.engine.gpu_neighbors import wrap_into_cell
    from contactlab.geometry.periodic import CELL_LENGTH, CELL_SHEAR
    from contactlab.gpu import backend

    scene = cl.Scene(gravity=(0, 0, 0))
    rng = np.random.default_rng(8)
    side = 0.01
    for k in range(40):
        scene.add_sphere(position=tuple(rng.uniform(0.1, 0.9, 3) * side), radius=R / 4, material=GLASS,
                         fixed=bool(k % 7 == 0))
    scene.set_periodic((0, 0, 0), (side, side, side))
    sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.4), dt=1e-6)
    sim.cell.shear(50.0, plane="xz")
    cell = sim.state.cell.copy()
    cell[CELL_SHEAR] = 0.7 * cell[CELL_LENGTH]
    n = 40
    arrays = dict(pos=rng.uniform(-2, 3, (n, 3)) * side, vel=rng.standard_normal((n, 3)),
                  vel_pred=rng.standard_normal((n, 3)), images=rng.integers(-3, 4, (n, 3)).astype(np.int64),
                  boundary_work=rng.standard_normal(n))
    mass = np.where(sim.model.fixed, 0.0, sim.model.mass)
    cpu = {k: v.copy() for k, v in arrays.items()}
    cpu_cell = cell.copy()
    wrap(cpu_cell, cpu["pos"], cpu["vel"], cpu["vel_pred"], cpu["images"], mass, cpu["boundary_work"])
    mark_built(cpu_cell)
    dev = {k: backend.to_device(v) for k, v in arrays.items()}
    bodies = SimpleNamespace(pos=dev["pos"], vel=dev["vel"], vel_pred=dev["vel_pred"],
                             mass=backend.to_device(sim.model.mass), fixed=backend.to_device(sim.model.fixed))
    books = SimpleNamespace(boundary_work=dev["boundary_work"])
    bounds = SimpleNamespace(cell=backend.to_device(cell))
    host_cell = wrap_into_cell(bodies, books, bounds, dev["images"], sim.model.radius, 1e-4, 0.0, 0)
    assert np.array_equal(host_cell, cpu_cell, equal_nan=True)   # the cell holds NaN targets (no servo)
    for key, value in cpu.items():
        got = np.zeros_like(value)
        backend.to_host(dev[key], got)
        assert np.array_equal(got, value), key
    assert cpu_cell[CELL_SHEAR] != cell[CELL_SHEAR] and np.any(cpu["images"] != arrays["images"])


def test_cylinder_walls_a_servo_wall_and_2d_disks_match_the_cpu():
    """Spheres inside a cylinder wall pressed by a servo-controlled lid; and 2-D disks in a box
    of line walls."""
    def cylinder(device):
        scene = cl.Scene(gravity=(0, 0, -9.81))
        for a in range(2):
            for b in range(2):
                for c in range(4):
                    scene.add_sphere(position=(2.1 * R * (a - 0.5), 2.1 * R * (b - 0.5), R * (1.05 + 2.1 * c)),
                                     radius=R, material=GLASS)
        scene.add_cylinder_wall((0, 0, 0), (0, 0, 1), 3.0 * R, GLASS)
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=GLASS)
        lid = scene.add_wall(point=(0, 0, 8.6 * R), normal=(0, 0, -1), material=GLASS)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.3, friction=0.5), device=device, skin=2e-5)
        sim.servo_wall(lid, target_force=5e-3, max_speed=0.5)
        return sim

    cpu, gpu = _both(cylinder, _steps(200))
    _agree(cpu, gpu)

    def disks(device):
        return cl.Simulation(_box_scene(dimension=2), cl.models.LinearSpringDashpot(stiffness=1e3, restitution=0.5,
                                                                                  friction=0.4),
                             device=device, skin=2e-5)

    cpu, gpu = _both(disks, _steps(200))
    _agree(cpu, gpu)


def test_a_checkpoint_moves_cpu_to_gpu_to_cpu(tmp_path):
    """100 steps on the CPU, a checkpoint resumed on the GPU for 100, its checkpoint resumed on
    the CPU for 100: the same as 300 steps on the CPU alone, bit for bit under the simulator."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)

    def build():
        return cl.Simulation(_box_scene(), model, skin=2e-5)

    alone = build()
    alone.run(steps=300)
    first = build()
    first.run(steps=100)
    first.save_checkpoint(tmp_path / "cpu.npz")
    middle = cl.Simulation.load_checkpoint(tmp_path / "cpu.npz", device="cuda")
    assert middle.device == "cuda"
    middle.run(steps=100)
    middle.save_checkpoint(tmp_path / "gpu.npz")
    last = cl.Simulation.load_checkpoint(tmp_path / "gpu.npz")
    assert last.device == "cpu"
    last.run(steps=100)
    _agree(_snapshot(alone), _snapshot(last))


def test_sensors_and_reporters_see_the_gpu_state_and_repeats_give_the_same_bits(tmp_path):
    """A sensor recording every 10 steps and a VTK reporter on a GPU run record what the CPU run
    records; a second GPU run gives the same bits (no atomics: a fixed order of every sum)."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    series = {}
    snaps = []
    for run, device in enumerate(("cpu", "cuda", "cuda")):
        sim = cl.Simulation(_box_scene(), model, device=device, skin=2e-5)
        rec = sim.record("position", "velocity", sphere=3, every=10)
        sim.add_reporter(cl.io.VTKReporter(tmp_path / f"run{run}", every=50))
        sim.run(steps=200)
        sim.close()
        series[run] = np.hstack([rec["position"], rec["velocity"]])
        snaps.append(_snapshot(sim))
        if device == "cuda":
            # 20 chunks between the sensor's steps, the list rebuilt on the device: the records
            # went to the device at the set-up's evaluations and the run's first chunk only, the
            # 19 chunks after it found them there
            st = sim.stepper
            assert st.device_builds >= 2 and st.calls >= 22 and st.uploads <= st.calls - 19, (st.calls, st.uploads)
        assert len(list((tmp_path / f"run{run}").glob("*.vtp"))) >= 4
    assert series[0].shape[0] == 21
    np.testing.assert_allclose(series[1], series[0], rtol=RTOL, atol=0)
    assert np.array_equal(series[1], series[2])
    _agree(snaps[0], snaps[1])
    for key in snaps[1]:
        assert np.array_equal(snaps[1][key], snaps[2][key]), key


def test_a_law_the_gpu_compiler_refuses_at_the_first_launch_is_a_law_error(monkeypatch):
    """On a GPU the kernels compile at their first launch (the set-up's force evaluation, before
    any run): the compiler's refusal, translated as on the CPU, says it is the GPU's, keeps the
    law's name and line and points to cl.gpu.check_law (the refusal itself is raised here by a
    stand-in: under the simulator nothing is compiled)."""
    from contactlab.engine import gpu_stepper
    from contactlab.errors import LawError

    def refuse(law, *args):
        raise LawError("law my_spring cannot be compiled by Numba at my_law.py:8: work = np.zeros(2)",
                       law="my_spring", line="my_law.py:8")

    monkeypatch.setattr(gpu_stepper, "launch", refuse)
    with pytest.raises(LawError, match=r"(?s)the GPU compiler \(numba-cuda\) refuses this law: law my_spring .*"
                                       r"my_law.py:8.*cl.gpu.check_law") as info:
        cl.Simulation(_box_scene(), cl.models.HertzMindlin(restitution=0.5, friction=0.5), device="cuda")
    assert info.value.law == "my_spring" and info.value.line == "my_law.py:8"


def test_the_device_prefix_sum_and_sorts_equal_numpy():
    """The neighbour build's device prefix sum (three levels of chunks here) against np.cumsum, its
    counting sort by key against a stable argsort, and its per-segment sort against np.sort;
    integers: exact."""
    from contactlab.engine import gpu_neighbors as gn
    from contactlab.gpu import backend

    rng = np.random.default_rng(5)
    for n in (1, gn.CHUNK, gn.CHUNK + 1, 3 * gn.CHUNK * gn.CHUNK // 2 + 7):
        a = rng.integers(0, 9, n).astype(np.uint32)
        d = backend.to_device(a)
        gn.inclusive_scan(d, n)
        got = np.zeros_like(a)
        backend.to_host(d, got)
        assert np.array_equal(got, np.cumsum(a, dtype=np.uint32)), n
    keys = rng.integers(-1, 7, 300).astype(np.int64)   # -1: left out
    start, items = gn.bucket_sort(backend.to_device(keys), 7, np.int32, np.int32)
    got_start, got_items = np.zeros(8, np.int32), np.zeros(int((keys >= 0).sum()), np.int32)
    backend.to_host(start, got_start)
    backend.to_host(items, got_items)
    kept = np.flatnonzero(keys >= 0)
    assert np.array_equal(got_items, kept[np.argsort(keys[kept], kind="stable")])
    assert np.array_equal(got_start, np.concatenate([[0], np.cumsum(np.bincount(keys[kept], minlength=7))]))
    start = np.array([0, 0, 3, 4, 9], dtype=np.int32)
    values = rng.permutation(9).astype(np.int32)
    d = backend.to_device(values)
    gn._sort_segments[1, 2](2, 4, (backend.to_device(start), d))
    got = np.zeros_like(values)
    backend.to_host(d, got)
    expected = np.concatenate([np.sort(values[start[s]:start[s + 1]]) for s in range(4)])
    assert np.array_equal(got, expected)


def test_a_blow_up_on_the_gpu_is_diagnosed_as_on_the_cpu():
    """A sphere fired at 30 m/s into a soft lattice: the overlap guard stops both runs at the same
    step with the same diagnosis (bodies, cause), the GPU's state brought back on a step boundary."""
    errors = {}
    for device in ("cpu", "cuda"):
        scene = cl.Scene(gravity=(0, 0, 0))
        for a in range(3):
            for b in range(3):
                scene.add_sphere(position=(2.02 * R * a, 2.02 * R * b, 0.0), radius=R, material=GLASS)
        scene.add_sphere(position=(2.02 * R, 2.02 * R, 2.3 * R), radius=R, material=GLASS, velocity=(0, 0, -30.0))
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), device=device, skin=2e-5)
        with pytest.raises(cl.SimulationBlowUp) as info:
            sim.run(steps=200)
        errors[device] = (info.value, sim.step, sim.positions.copy())
    cpu, gpu = errors["cpu"], errors["cuda"]
    assert gpu[0].cause == cpu[0].cause and gpu[0].step == cpu[0].step == gpu[1] == cpu[1]
    assert list(gpu[0].particles) == list(cpu[0].particles)
    assert str(gpu[0]) == str(cpu[0])
    assert np.abs(gpu[2] - cpu[2]).max() <= RTOL * np.abs(cpu[2]).max()


def test_what_the_gpu_refuses_is_named_before_anything_is_built(monkeypatch):
    """Meshes, clumps, non-spherical bodies, debug mode, particle streams, unknown devices and a
    machine without a GPU: a DeviceError saying what, and what runs on the GPU."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    with monkeypatch.context() as m:
        m.setattr(cl.gpu, "available", lambda: "no CUDA device found (numba.cuda.is_available() is False)")
        with pytest.raises(DeviceError, match="device='cuda' cannot run here: no CUDA device found"):
            cl.Simulation(_box_scene(), model, device="cuda")
    from contactlab.gpu import backend
    with monkeypatch.context() as m:
        m.setattr(backend, "free_memory", lambda: 10_000)   # a GPU with 10 kB free
        with pytest.raises(DeviceError, match=r"this scene needs about .* GB on the GPU \(18 bodies, .*; 1e-05 GB "
                                              r"of its memory is free"):
            cl.Simulation(_box_scene(), model, device="cuda")
    with pytest.raises(DeviceError, match="device must be one of"):
        cl.Simulation(_box_scene(), model, device="tpu")
    scene = cl.Scene()
    scene.add_ellipsoid(position=(0, 0, 0.01), semi_axes=(2e-3, 1e-3, 1e-3), material=GLASS)
    with pytest.raises(DeviceError, match=r"non-spherical bodies \(ellipsoid\).*On the GPU run: spheres"):
        cl.Simulation(scene, model, device="cuda")
    scene = cl.Scene()
    scene.add_clump([(0, 0, 0.01), (1.5e-3, 0, 0.01)], [1e-3, 1e-3], GLASS)
    with pytest.raises(DeviceError, match="clumps"):
        cl.Simulation(scene, model, device="cuda")
    with pytest.raises(DeviceError, match="debug=True"):
        cl.Simulation(_box_scene(), model, device="cuda", debug=True)
    sim = cl.Simulation(_box_scene(), model, device="gpu")
    assert sim.device == "cuda"
    with pytest.raises(DeviceError, match="add_inlet: particle inlets and outlets do not run on the GPU"):
        sim.add_inlet(cl.packing.regions.box((0, 0, 0), (1e-2, 1e-2, 1e-2)), GLASS, rate=10.0, radius=R)
    with pytest.raises(DeviceError, match="particle DDA runs on the CPU only"):
        cl.DDA(_box_scene(dimension=2), dt=1e-5, device="cuda")
    scene = cl.Scene()
    scene.add_sphere(position=(0, 0, 0.01), radius=R, material=GLASS)
    scene.add_mesh((np.array([[-0.01, -0.01, 0.0], [0.01, -0.01, 0.0], [0.0, 0.01, 0.0]]), [[0, 1, 2]]), material=GLASS)
    with pytest.raises(DeviceError, match=r"triangle meshes \(this scene has 1 mesh"):
        cl.Simulation(scene, model, device="cuda")


_PTX_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {examples!r})
    import numpy as np
    import contactlab as cl
    from contactlab import gpu
    from contactlab.errors import LawError
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.add_sphere(position=(0, 0, 1.05e-3), radius=1e-3, material=glass)
    scene.add_sphere(position=(2.2e-3, 0, 1.05e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    from adhesive_law import elastic_plastic_adhesive
    law = cl.models.Contact(normal=elastic_plastic_adhesive(loading_stiffness=1e3, unloading_stiffness=5e3),
                            tangential=cl.parts.coulomb_friction(stiffness=3e2, friction=0.5))
    ptx = gpu.check_law(cl.Simulation(scene, law))
    assert ".entry" in ptx and "sm_90" in ptx
    # compiled without fused multiply-adds: the CPU's arithmetic, operation for operation
    assert "fma.rn" not in ptx
    print("PTX", len(ptx))
    from contactlab.engine.gpu_check import compile_neighbour_ptx
    neighbours = compile_neighbour_ptx()
    assert all(".entry" in text for text in neighbours.values()) and len(neighbours) == 18
    print("NEIGHBOUR PTX", len(neighbours))
    from contactlab.engine.gpu_check import compile_numbers_ptx
    assert all(".entry" in text and "fma.rn" not in text for text in compile_numbers_ptx().values())
    print("NUMBERS PTX", len(compile_numbers_ptx()))
    from contactlab.engine.gpu_check import compile_order_ptx
    order = compile_order_ptx()
    assert all(".entry" in text for text in order.values())
    print("ORDER PTX", len(order))
    from gpu_refused_law import allocating_spring
    try:
        gpu.check_law(cl.Simulation(scene, allocating_spring(stiffness=1e3)))
    except LawError as exc:
        print("REFUSED", exc, exc.line)
    else:
        print("NOT REFUSED")
""")


def _has_nvvm() -> bool:
    """Whether numba-cuda finds libNVVM here (the gpu extra's nvidia wheels, or a CUDA toolkit)."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        load_nvidia_dynamic_lib("nvvm")
        load_nvidia_dynamic_lib("nvrtc")
        return True
    except Exception:
        return False


@pytest.mark.skipif(not _has_nvvm(), reason="no libNVVM here (the gpu extra brings it)")
def test_the_gpu_compiler_takes_a_user_law_and_names_what_it_refuses(tmp_path):
    """Without a GPU: the step kernels of a user law with history and the device neighbour build
    compile to PTX for sm_90 (what a Hopper GPU runs); a law
    that allocates an array (which the GPU compiler refuses and the CPU's takes) gets a LawError
    naming the law and the line."""
    (tmp_path / "gpu_refused_law.py").write_text(textwrap.dedent('''
        import numpy as np
        import contactlab as cl

        @cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "k", low=0.0, low_inclusive=False)])
        def allocating_spring(g, p, h, dt):
            if g.overlap <= 0.0:
                return 0.0, 0.0, 0.0, False, ()
            work = np.zeros(2)
            work[0] = p.stiffness * g.overlap
            return work[0], 0.5 * work[0] * g.overlap, 0.0, True, ()
    '''))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=str(tmp_path))
    env.pop("NUMBA_ENABLE_CUDASIM")
    done = subprocess.run([sys.executable, "-c", _PTX_SCRIPT.format(examples=str(ROOT / "examples"))],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "PTX" in done.stdout and "NEIGHBOUR PTX 18" in done.stdout, done.stdout[-3000:]
    assert "NUMBERS PTX 2" in done.stdout and "ORDER PTX 11" in done.stdout, done.stdout[-3000:]
    assert "REFUSED" in done.stdout and "allocating_spring" in done.stdout, done.stdout[-3000:]
    assert "the GPU compiler" in done.stdout and "gpu_refused_law.py" in done.stdout, done.stdout[-3000:]


def test_the_gpu_example_runs_and_agrees_with_the_cpu(capsys):
    """examples/gpu_drop.py (docs/gpu.md) on a small lattice: both devices, the same positions."""
    sys.path.insert(0, str(ROOT / "examples"))
    import gpu_drop

    result = gpu_drop.main(["--side", "3", "--steps", "150"])
    assert result["difference"] <= RTOL * float(np.abs(result["cpu"]).max())
    out = capsys.readouterr().out
    assert "cuda: 27 spheres" in out and "cpu : 27 spheres" in out


def test_inside_a_run_the_state_stays_on_the_gpu_until_the_host_reads_it():
    """A run without reporters copies the state back once, at its end, whatever its chunks; the
    numbers the run reads between chunks (energy terms, contacts, fastest travel) are summed on the
    device and equal the host's sums of the same state (reference: ``observables.energy_sums``, the
    NumPy sums, once the state is brought back) to rounding."""
    model = cl.models.HertzMindlin(restitution=0.5, friction=0.5)
    sim = cl.Simulation(_box_scene(), model, device="cuda", skin=2e-5)
    st = sim.stepper
    sim.run(steps=10)   # (its first steps widen the skin: a flag the host handles, the state brought back)
    calls, downloads, builds = st.calls, st.downloads, st.device_builds
    sim.run(steps=200)
    assert st.device_builds - builds >= 2
    assert st.calls - calls >= 3 and st.downloads - downloads == 1, (st.calls - calls, st.downloads - downloads)
    with st.resident():
        st.take_steps(40, sim.dt)
        st.take_steps(40, sim.dt)
        downloads = st.downloads
        numbers = st.run_numbers(sim.dt)
        device_energy, device_contacts = sim._run_energy(), sim.n_contacts()
        assert numbers is not None and st.downloads == downloads, "the numbers came without the state"
        st.to_host()
        assert st.downloads == downloads + 1 and st.run_numbers(sim.dt) is None
        host_energy, host_contacts = sim.energy(), sim.n_contacts()
    assert device_contacts == host_contacts > 0
    assert device_energy.keys() == host_energy.keys()
    scale = max(abs(v) for v in host_energy.values())
    for key, value in host_energy.items():
        assert abs(device_energy[key] - value) <= RTOL * scale, (key, device_energy[key], value)
    travel = np.linalg.norm(sim.velocities, axis=1) * sim.dt / sim.model.radius
    assert numbers.travel == pytest.approx(travel.max(), rel=1e-14)


def test_the_energy_watchdog_stops_a_gpu_run_as_it_stops_the_cpus():
    """A lattice pressed into frictionless walls at 0.9 of the single-contact limit creates energy:
    the watchdog (checked every 20 steps here), reading the GPU's energy sums on the device, stops
    the GPU run at the CPU run's step with the CPU's diagnosis (which reads the state, brought back)."""
    errors = {}
    for device in ("cpu", "cuda"):
        d = 0.01 * R
        a = 2 * R - d
        idx = np.stack(np.meshgrid(*(np.arange(2),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
        scene = cl.Scene(gravity=(0.0, 0.0, 0.0))
        scene.add_spheres(positions=idx * a + R - 0.5 * d, radii=np.full(8, R), material=GLASS,
                          angular_velocities=np.random.default_rng(0).uniform(-50, 50, (8, 3)))
        for axis in range(3):
            normal = np.zeros(3)
            normal[axis] = 1.0
            scene.add_wall(point=np.zeros(3), normal=normal, material=GLASS)
            scene.add_wall(point=(a + 2 * R - d) * normal, normal=-normal, material=GLASS)
        model = cl.models.HertzMindlin(restitution=0.3, friction=0.5)
        probe = cl.Simulation(scene, model, device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.StabilityWarning)
            sim = cl.Simulation(scene, model, device=device, dt=0.9 * probe.contact_limit, allow_unstable_dt=True)
        sim.monitor.interval = 20
        before = getattr(sim.stepper, "downloads", 0)
        with pytest.raises(cl.SimulationBlowUp) as info:
            sim.run(steps=3000)
        errors[device] = (info.value, sim.step)
        if device == "cuda":
            # the checks read the device's sums: the state came back for the diagnosis only
            checks = sim.step // 20
            assert checks >= 4 and sim.stepper.downloads - before == 1, (checks, sim.stepper.downloads - before)
    cpu, gpu = errors["cpu"], errors["cuda"]
    assert cpu[0].cause == gpu[0].cause == "energy_created"
    assert gpu[1] == cpu[1] and gpu[0].step == cpu[0].step
    assert list(gpu[0].particles) == list(cpu[0].particles)
    assert str(gpu[0]) == str(cpu[0])
