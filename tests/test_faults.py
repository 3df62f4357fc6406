"""Faults: a run killed at random moments while it writes, damaged or foreign checkpoint files, and
output folders that cannot be written.

The reference for every resume is the same scene run once, uninterrupted, in this process: a
checkpoint must resume bit for bit (positions, velocities, angular velocities equal to the last
bit, ``np.array_equal``).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import contactlab as cl
from contactlab.cli import main as cli_main
from contactlab.io.reporter import Reporter
from contactlab.io.vtk import read_pvd
from helpers import fault_scene
from helpers.scene_text import TWO_BEADS_ON_A_FLOOR

HELPER = Path(fault_scene.__file__)
STEPS = 6000
KILLS = 10


class _Snapshots(Reporter):
    """Keeps a copy of the state every ``every`` steps (the uninterrupted reference)."""

    def __init__(self, every):
        super().__init__(every=every)
        self.states = {}

    def report(self, sim):
        self.states[sim.step] = (sim.positions, sim.velocities, sim.angular_velocities)


@pytest.fixture(scope="module")
def reference():
    sim = fault_scene.build()
    snaps = _Snapshots(fault_scene.OUTPUT_EVERY)
    sim.add_reporter(snaps)
    sim.run(steps=STEPS)
    return snaps.states


def _same(sim, state) -> bool:
    return all(np.array_equal(a, b) for a, b in zip((sim.positions, sim.velocities, sim.angular_velocities), state))


def _check_resumes(path: Path, reference) -> int:
    """The checkpoint loads and, run on to the next output step (and one more), is the reference."""
    sim = cl.Simulation.load_checkpoint(path)
    target = (sim.step // fault_scene.OUTPUT_EVERY + 2) * fault_scene.OUTPUT_EVERY
    if target > STEPS:
        target = STEPS
    sim.run(steps=target - sim.step)
    assert _same(sim, reference[target]), f"{path.name} does not resume bit for bit (to step {target})"
    return sim.step


def _check_vtk(folder: Path, n_bodies: int) -> None:
    """Every collection parses and lists only complete frames, in increasing time."""
    for series in ("particles", "contacts", "walls"):
        entries = read_pvd(folder / f"{series}.pvd")
        times = [t for t, _ in entries]
        assert times == sorted(times) and len(set(times)) == len(times), f"{series}.pvd: times out of order"
        for _, name in entries:
            data = (folder / name).read_bytes()
            assert data.startswith(b'<?xml version="1.0"?>') and data.rstrip().endswith(b"</VTKFile>"), name
    if read_pvd(folder / "particles.pvd"):
        import vtk

        reader = vtk.vtkXMLPolyDataReader()
        reader.SetFileName(str(folder / read_pvd(folder / "particles.pvd")[-1][1]))
        reader.Update()
        assert reader.GetOutput().GetNumberOfPoints() == n_bodies


def _check_csv(path: Path) -> list[int]:
    lines = path.read_text().split("\n")
    assert lines[0].startswith("step,time,")
    width = len(lines[0].split(","))
    rows = [r for r in lines[1:] if r]
    steps = [int(r.split(",")[0]) for r in rows[:-1]]   # the last row may be cut by the kill
    assert all(len(r.split(",")) == width for r in rows[:-1])
    assert steps == sorted(set(steps))
    return steps


def _child(out: Path) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        [str(HELPER.parent.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, str(HELPER), str(out), str(STEPS)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_killed_while_writing_resumes_bit_for_bit_from_the_last_checkpoint(tmp_path, reference):
    """A run writing checkpoints (every 20 steps, 3 kept), VTK frames and energy rows (every 10)
    is killed with SIGKILL at random moments, ten times, each time restarted from its newest
    checkpoint as a user would; after every kill each checkpoint on disk loads and resumes bit for
    bit, the VTK collections list only complete frames and the CSV holds whole rows; the last
    restart runs to the end and matches the uninterrupted run exactly, with no temporary file
    left behind."""
    rng = np.random.default_rng(2026)
    out = tmp_path / "run"
    out.mkdir()
    kills = 0
    progress = []
    for cycle in range(KILLS + 1):
        child = _child(out)
        line = child.stdout.readline()
        assert line.startswith("running"), (line, child.stderr.read() if child.poll() is not None else "")
        if cycle < KILLS:
            try:
                child.wait(timeout=float(rng.uniform(0.02, 0.35)))
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
                child.wait()
                kills += child.returncode == -signal.SIGKILL
        else:
            assert child.wait(timeout=300) == 0, child.stderr.read()
        child.stdout.close()
        child.stderr.close()
        saved = fault_scene.checkpoints(out)
        for path in saved:          # every file that looks like a checkpoint is a whole one
            _check_resumes(path, reference)
        progress.append(cl.Simulation.load_checkpoint(saved[-1]).step if saved else 0)
        _check_vtk(out / "vtk", 30)
        if (out / "energy.csv").exists():
            _check_csv(out / "energy.csv")
    assert kills >= KILLS - 2, f"only {kills} of {KILLS} children were killed mid-run"
    assert progress == sorted(progress) and progress[-1] == STEPS
    assert len(fault_scene.checkpoints(out)) == fault_scene.KEEP      # keep=3 holds across restarts
    final = cl.Simulation.load_checkpoint(fault_scene.checkpoints(out)[-1])
    assert final.step == STEPS and _same(final, reference[STEPS])
    leftovers = [p.name for p in list(out.iterdir()) + list((out / "vtk").iterdir()) if p.name.endswith(".tmp")]
    assert not leftovers, f"temporary files left: {leftovers}"
    steps = _check_csv(out / "energy.csv")
    assert steps[-1] == STEPS - fault_scene.OUTPUT_EVERY or steps[-1] == STEPS


# ------------------------------------------------------------------------------------------------ bad files
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A valid checkpoint of the fault scene after 40 steps."""
    sim = fault_scene.build()
    sim.run(steps=40)
    return sim.save_checkpoint(tmp_path_factory.mktemp("ckpt") / "good.npz")


@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.3, 0.5, 0.9, 0.999])
def test_a_truncated_checkpoint_is_named(tmp_path, checkpoint, fraction):
    data = checkpoint.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: int(fraction * len(data))])
    expected = r"is empty \(0 bytes\)" if fraction == 0.0 else r"(is truncated or damaged|is damaged|is not a contactlab)"
    with pytest.raises(cl.CheckpointError, match=expected) as info:
        cl.Simulation.load_checkpoint(cut)
    assert "cut.npz" in str(info.value)


def test_foreign_and_damaged_files_are_named(tmp_path, checkpoint):
    cases = {}
    np.savez(tmp_path / "foreign.npz", positions=np.zeros((3, 3)), radius=np.ones(3))
    cases["foreign.npz"] = r"is a NumPy archive but not a contactlab checkpoint \(it holds positions, radius, no 'meta'\)"
    (tmp_path / "random.npz").write_bytes(np.random.default_rng(1).bytes(4096))
    cases["random.npz"] = r"is not a contactlab checkpoint \(a checkpoint is a NumPy \.npz archive"
    (tmp_path / "notes.npz").write_text("positions: 0 0 0\n")
    cases["notes.npz"] = r"is not a contactlab checkpoint .*starts with b'posi'"
    with np.load(checkpoint) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    np.savez(tmp_path / "old.npz", **dict(arrays, meta=np.array(json.dumps(dict(meta, version=4)))))
    cases["old.npz"] = r"is of format version 4; this contactlab reads version \d"
    np.savez(tmp_path / "partial.npz", **{k: v for k, v in arrays.items() if not k.startswith("table_")})
    cases["partial.npz"] = r"lacks table_pair_i, table_pair_j"
    flipped = bytearray(checkpoint.read_bytes())
    middle = len(flipped) // 2
    flipped[middle: middle + 64] = bytes(b ^ 0xFF for b in flipped[middle: middle + 64])   # 64 bytes inverted
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    cases["flipped.npz"] = r"(is damaged|is truncated or damaged)"
    cases["folder.npz"] = r"is a folder, not a checkpoint file"
    (tmp_path / "folder.npz").mkdir()
    for name, message in cases.items():
        with pytest.raises(cl.CheckpointError, match=message) as info:
            cl.Simulation.load_checkpoint(tmp_path / name)
        assert name in str(info.value)
    # and the good one still loads
    assert cl.Simulation.load_checkpoint(checkpoint).step == 40


def test_a_failed_checkpoint_write_keeps_the_previous_one(tmp_path, monkeypatch):
    """A disk that fills up while a checkpoint is written: the error names the file, the previous
    checkpoint is untouched and loads, and no temporary file is left."""
    sim = fault_scene.build()
    sim.run(steps=20)
    path = sim.save_checkpoint(tmp_path / "c.npz")
    before = path.read_bytes()
    sim.run(steps=20)

    def full_disk(f, **arrays):
        f.write(b"PK\x03\x04" + bytes(1000))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", full_disk)
    with pytest.raises(cl.OutputError, match=r"cannot write '.*c\.npz': No space left on device \(the previous"):
        sim.save_checkpoint(path)
    monkeypatch.undo()
    assert path.read_bytes() == before and cl.Simulation.load_checkpoint(path).step == 20
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]


# ------------------------------------------------------------------------------------------------ output folders
def _blocked(tmp_path) -> Path:
    """A folder path that cannot be created, for root too: its parent is a regular file."""
    (tmp_path / "file.txt").write_text("a file, not a folder")
    return tmp_path / "file.txt" / "out"


@pytest.mark.parametrize("make", [
    lambda out: cl.io.VTKReporter(out, every=10),
    lambda out: cl.io.EnergyCSVReporter(out / "energy.csv", every=10),
    lambda out: cl.io.CheckpointReporter(out / "c.npz", every=10),
], ids=["vtk", "csv", "checkpoint"])
def test_an_unwritable_output_folder_is_reported_when_the_reporter_is_attached(tmp_path, make):
    sim = fault_scene.build()
    with pytest.raises(cl.OutputError, match=r"a part of the path is a file, not a folder \('.*file\.txt' is a file\)"):
        sim.add_reporter(make(_blocked(tmp_path)))
    assert sim.step == 0 and sim.reporters == []
    with pytest.raises(cl.OutputError, match="recorder CSV folder"):
        sim.record("kinetic", csv=_blocked(tmp_path) / "k.csv")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder_is_reported(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(cl.OutputError, match="cannot write in VTK output folder"):
            fault_scene.build().add_reporter(cl.io.VTKReporter(folder, every=10))
    finally:
        folder.chmod(0o700)


SCENE = TWO_BEADS_ON_A_FLOOR


def test_cli_reports_an_unwritable_output_folder_before_it_runs(tmp_path, capsys):
    (tmp_path / "scene.toml").write_text(SCENE)
    code = cli_main(["run", str(tmp_path / "scene.toml"), "--out", str(_blocked(tmp_path)), "--quiet"])
    io = capsys.readouterr()
    assert code != 0
    assert re.search(r"contactlab: error: cannot create output folder '.*file\.txt/out': a part of the path is a "
                     r"file", io.err)
    assert "ready in" not in io.out and "done." not in io.out        # nothing was built or run


def test_cli_restart_from_a_bad_checkpoint_writes_nothing(tmp_path, capsys):
    (tmp_path / "scene.toml").write_text(SCENE)
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 truncated")
    out = tmp_path / "out"
    code = cli_main(["run", str(tmp_path / "scene.toml"), "--out", str(out), "--restart", str(tmp_path / "bad.npz"),
                     "--quiet"])
    io = capsys.readouterr()
    assert code != 0 and "contactlab: error: checkpoint" in io.err and "bad.npz' is truncated or damaged" in io.err
    assert not out.exists()
