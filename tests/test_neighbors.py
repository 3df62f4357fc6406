"""The cell-list broad phase equals brute force; contact history survives neighbour-list rebuilds."""
from __future__ import annotations

import numpy as np
import pytest

import contactlab as cl
from contactlab.engine.contact_table import ContactTable
from contactlab.engine.history_match import carry_rows
from contactlab.neighbors.brute import brute_force_pairs
from contactlab.neighbors.celllist import build_pairs, check_bodies, check_pairs, segments_from_counts

from conftest import random_packing


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cell_list_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 700
    radius = rng.uniform(0.5e-3, 2e-3, n)  # polydisperse 1:4
    pos = rng.uniform(0, 0.03, (n, 3))     # overlapping and far pairs alike
    pos[:5] += 0.5                          # a few far-away spheres stretch the grid
    fixed = rng.uniform(size=n) < 0.1
    walls_p = np.array([[0, 0, 0], [0.03, 0, 0], [0, 0, 0.01]])
    walls_n = np.array([[0, 0, 1.0], [-1.0, 0, 0], [0.6, 0, 0.8]])
    skin = 0.3e-3
    got_i, got_j, n_pairs, i_start = build_pairs(pos, radius, fixed, skin, walls_p, walls_n,
                                                 np.empty(0, np.int32), np.empty(0, np.int32))
    got = list(zip(got_i[:n_pairs].tolist(), got_j[:n_pairs].tolist()))
    assert got == brute_force_pairs(pos, radius, fixed, skin, walls_p, walls_n)
    assert np.array_equal(i_start, np.concatenate([[0], np.cumsum(np.bincount(got_i[:n_pairs], minlength=n))]))


def test_small_grid_cap_still_exact():
    pos, radius = random_packing(150, 1e-3, 0.02, seed=5)
    fixed = np.zeros(len(radius), bool)
    a = build_pairs(pos, radius, fixed, 1e-3, np.zeros((0, 3)), np.zeros((0, 3)), np.empty(0, np.int32),
                    np.empty(0, np.int32), max_cells=8)
    assert list(zip(a[0][:a[2]].tolist(), a[1][:a[2]].tolist())) == brute_force_pairs(
        pos, radius, fixed, 1e-3, np.zeros((0, 3)), np.zeros((0, 3)))


def test_history_survives_rebuilds(glass):
    """A sphere sliding slowly on a floor keeps its tangential spring across many list rebuilds,
    identical to a run with a skin so large that the list is never rebuilt."""
    def run(skin):
        scene = cl.Scene(gravity=(0, 0, -9.81))
        scene.add_sphere(position=(0, 0, 0.9995e-3), radius=1e-3, material=glass, velocity=(0.02, 0, 0))
        scene.add_sphere(position=(0.01, 0, 0.9995e-3), radius=1e-3, material=glass, velocity=(-0.02, 0, 0))
        scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
        sim = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5), skin=skin)
        sim.run(duration=0.05)
        return sim

    small, large = run(2e-5), run(0.05)
    assert small.table.builds > 20 and large.table.builds == 1
    np.testing.assert_array_equal(small.positions, large.positions)
    np.testing.assert_array_equal(small.contacts()["tangential_displacement"],
                                  large.contacts()["tangential_displacement"])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rows_moved_in_place_equal_a_lookup_by_pair(seed):
    """The rebuild's in-place move of history, output and status rows (engine.history_match)
    against a dictionary from pair (i, j) to its old rows: each surviving pair carries its rows,
    each new pair starts from zero; lists that grow, shrink and shift both ways."""
    rng = np.random.default_rng(seed)
    n_bodies = 60
    universe = [(i, j) for i in range(n_bodies) for j in range(i + 1, n_bodies + 3)]

    def sorted_list(keep):
        return sorted(p for p, k in zip(universe, keep) if k)

    old = sorted_list(rng.uniform(size=len(universe)) < 0.15)
    new = sorted_list(rng.uniform(size=len(universe)) < rng.uniform(0.05, 0.3))
    n_old, n_new = len(old), len(new)
    cap = max(n_old, n_new) + 5
    hist = np.zeros((cap, 3))
    out = np.zeros((cap, 2))
    status = np.zeros(cap, dtype=np.int8)
    hist[:n_old] = rng.normal(size=(n_old, 3))
    out[:n_old] = rng.normal(size=(n_old, 2))
    status[:n_old] = rng.integers(1, 3, n_old)
    rows = {p: (hist[k].copy(), out[k].copy(), status[k]) for k, p in enumerate(old)}
    old_i = np.array([p[0] for p in old], dtype=np.uint32)
    old_j = np.array([p[1] for p in old], dtype=np.uint32)
    old_start = np.zeros(n_bodies + 3 + 1, dtype=np.uint32)
    old_start[1:] = np.cumsum(np.bincount(old_i, minlength=n_bodies + 3))
    new_i = np.array([p[0] for p in new], dtype=np.uint32)
    new_j = np.array([p[1] for p in new], dtype=np.uint32)
    new_start = np.zeros(n_bodies + 3 + 1, dtype=np.uint32)
    new_start[1:] = np.cumsum(np.bincount(new_i, minlength=n_bodies + 3))
    carry_rows(old_start, old_j, new_start, new_j, hist, out, status)
    for k, p in enumerate(new):
        want = rows.get(p, (np.zeros(3), np.zeros(2), 0))
        assert np.array_equal(hist[k], want[0]) and np.array_equal(out[k], want[1]) and status[k] == want[2], (k, p)
    assert any(p in rows for p in new) and any(p not in rows for p in new)


def _poured(glass):
    """Beads poured onto a floor for 400 steps: two of these are twins, bit for bit."""
    scene = cl.Scene(gravity=(0, 0, -9.81))
    scene.fill_box((0, 0, 0), (0.008, 0.008, 0.012), 1e-3, glass, jitter=0.5, seed=3)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    s = cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))
    s.run(steps=400)
    return s


def test_failed_rebuild_leaves_the_list_as_it_was(glass, monkeypatch):
    """A rebuild that fails after the build has written into the table's buffers (here the merge of
    the pairs to keep) leaves the list as it was: the run then continues bit for bit like a twin
    run that never tried (the reference)."""
    a, b = _poured(glass), _poured(glass)
    t = a.table
    assert t.n_pairs > 0
    before = {k: getattr(t, k).copy() for k in ("pair_i", "pair_j", "i_start", "j_start", "j_pairs", "hist", "out",
                                                 "status")}

    def fail(*args):
        raise MemoryError("merge refused (test)")

    monkeypatch.setattr(ContactTable, "_merge", fail)
    with pytest.raises(MemoryError, match="test"):
        a.stepper.rebuild(extra_pairs=(np.array([0]), np.array([1])))
    monkeypatch.undo()
    n = t.n_pairs
    for k, v in before.items():
        got, want = (getattr(t, k)[:n], v[:n]) if k in ("pair_i", "pair_j", "hist", "out", "status") else (getattr(t, k), v)
        assert np.array_equal(got, want), k
    a.run(steps=400)
    b.run(steps=400)
    assert a.table.builds == b.table.builds
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.contacts()["tangential_displacement"], b.contacts()["tangential_displacement"])


def test_an_interrupt_during_the_row_move_waits_for_a_whole_table(glass, monkeypatch):
    """Ctrl-C (SIGINT) arriving while a rebuild moves the rows in place is delivered once the new
    indices are in place: the table is whole, and the run continues bit for bit like a twin that
    was never interrupted (the reference)."""
    import signal

    import contactlab.engine.contact_table as contact_table

    a, b = _poured(glass), _poured(glass)
    carry = contact_table.carry_rows
    # Python's own Ctrl-C handler, whatever this process inherited: a shell ignores SIGINT in the
    # commands it starts in the background (`... &`), and the deferral then rightly delivers nothing
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_then_compare(a, b, contact_table, carry, monkeypatch)
    finally:
        signal.signal(signal.SIGINT, inherited)


def _interrupt_then_compare(a, b, contact_table, carry, monkeypatch):
    import os
    import signal

    def interrupted(*args):
        os.kill(os.getpid(), signal.SIGINT)   # arrives in the middle of the move
        carry(*args)

    monkeypatch.setattr(contact_table, "carry_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        a.stepper.rebuild()
    monkeypatch.undo()
    b.stepper.rebuild()
    ta, tb = a.table, b.table
    assert ta.n_pairs == tb.n_pairs and ta.builds == tb.builds
    n = ta.n_pairs
    for k in ("pair_i", "pair_j", "hist", "out", "status"):
        assert np.array_equal(getattr(ta, k)[:n], getattr(tb, k)[:n]), k
    for k in ("i_start", "j_start", "j_pairs"):
        assert np.array_equal(getattr(ta, k), getattr(tb, k)), k
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    a.run(steps=300)
    b.run(steps=300)
    np.testing.assert_array_equal(a.positions, b.positions)


def test_index_limits_are_refused_clearly():
    """The cell list's int32 body index and the uint32 pair index: counts whose total reaches 2**32
    are summed exactly (against Python's integers) and left as they were, and both limits raise."""
    counts = np.array([0, 2**32 - 1, 7, 3], dtype=np.uint32)
    i_start = counts.copy()
    assert segments_from_counts(i_start) == sum(int(c) for c in counts)
    assert np.array_equal(i_start, counts)
    small = np.array([0, 2, 0, 5], dtype=np.uint32)
    assert segments_from_counts(small) == 7 and small.tolist() == [0, 2, 2, 7]
    with pytest.raises(MemoryError, match="32-bit pair index"):
        check_pairs(2**32)
    with pytest.raises(MemoryError, match="2147483648 bodies"):
        check_bodies(2**31)
    check_bodies(2**31 - 1)
