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
STEPS = 6000        # the killed children's goal: far more than they reach before their kill
KILLS = 10
FINAL_RUN = 200     # steps the last, unkilled child runs beyond the newest checkpoint


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
    """The rows ended by a newline are whole and their steps run from 0 without a gap (rows before a
    restart kept, none twice); the text after the last newline may be a row cut by the kill."""
    lines = path.read_text().split("\n")
    assert lines[0].startswith("step,time,")
    width = len(lines[0].split(","))
    rows = lines[1:-1]
    assert all(len(r.split(",")) == width for r in rows)
    steps = [int(r.split(",")[0]) for r in rows]
    assert steps == list(range(0, fault_scene.OUTPUT_EVERY * len(steps), fault_scene.OUTPUT_EVERY)), steps
    return steps


def _child(out: Path, steps: int) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        [str(HELPER.parent.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, str(HELPER), str(out), str(steps)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_killed_while_writing_resumes_bit_for_bit_from_the_last_checkpoint(tmp_path, reference):
    """A run writing checkpoints (every 20 steps, 3 kept), VTK frames and energy rows (every 10)
    is killed with SIGKILL at random moments, ten times, each time restarted from its newest
    checkpoint as a user would; after every kill each checkpoint on disk loads and resumes bit for
    bit, the VTK collections list only complete frames and the CSV holds whole rows; the last
    restart runs on (``FINAL_RUN`` steps: with every write synced to disk, the whole run would
    take most of the test's time on a slow disk) and matches the uninterrupted run exactly, with no
    temporary file left behind."""
    rng = np.random.default_rng(2026)
    out = tmp_path / "run"
    out.mkdir()
    kills = cut_short = 0
    progress = []
    final_step = STEPS
    for cycle in range(KILLS + 1):
        if cycle == KILLS:
            final_step = min(STEPS, progress[-1] + FINAL_RUN)
        child = _child(out, final_step)
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
        for tmp in out.glob(".ckpt_*.npz.*.tmp"):     # a checkpoint the kill cut short
            cut_short += 1
            assert tmp not in saved
            try:
                _check_resumes(tmp, reference)          # killed after it was complete: it is whole
            except cl.CheckpointError as exc:
                assert tmp.name in str(exc)
        progress.append(cl.Simulation.load_checkpoint(saved[-1]).step if saved else 0)
        _check_vtk(out / "vtk", 30)
        if (out / "energy.csv").exists():
            _check_csv(out / "energy.csv")
    print(f"{kills} kills; {cut_short} times a checkpoint was being written")    # shown with pytest -s
    assert kills >= KILLS - 2, f"only {kills} of {KILLS} children were killed mid-run"
    assert progress == sorted(progress) and progress[-1] == final_step
    assert len(fault_scene.checkpoints(out)) == fault_scene.KEEP      # keep=3 holds across restarts
    final = cl.Simulation.load_checkpoint(fault_scene.checkpoints(out)[-1])
    assert final.step == final_step and _same(final, reference[final_step])
    leftovers = [p.name for p in list(out.iterdir()) + list((out / "vtk").iterdir()) if p.name.endswith(".tmp")]
    assert not leftovers, f"temporary files left: {leftovers}"
    assert _check_csv(out / "energy.csv")[-1] == final_step


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


def test_a_resume_that_fails_to_rewrite_the_energy_csv_keeps_its_rows(tmp_path, monkeypatch):
    """On a restart the CSV is rewritten with the rows before the checkpoint: through a temporary
    file, so a failure (or a kill) there leaves the old rows; a row cut by a kill is dropped."""
    csv = tmp_path / "energy.csv"
    sim = fault_scene.build()
    sim.add_reporter(cl.io.EnergyCSVReporter(csv, every=fault_scene.OUTPUT_EVERY))
    sim.run(steps=40)
    sim.close()
    path = sim.save_checkpoint(tmp_path / "c.npz")
    with open(csv, "a") as f:
        f.write("50,0.001,1.5")                              # half a row, as a killed writer leaves it
    before = csv.read_bytes()
    resumed = cl.Simulation.load_checkpoint(path)

    def failing_rename(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", failing_rename)
    with pytest.raises(cl.OutputError, match=r"cannot write '.*energy\.csv': Input/output error"):
        resumed.add_reporter(cl.io.EnergyCSVReporter(csv, every=fault_scene.OUTPUT_EVERY, resume=True))
    monkeypatch.undo()
    assert csv.read_bytes() == before and resumed.reporters == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.npz", "energy.csv"]
    resumed.add_reporter(cl.io.EnergyCSVReporter(csv, every=fault_scene.OUTPUT_EVERY, resume=True))
    resumed.run(steps=30)
    resumed.close()
    assert _check_csv(csv) == [0, 10, 20, 30, 40, 50, 60, 70]


def test_temporaries_of_a_killed_writer_are_removed_and_never_taken_for_output(tmp_path, checkpoint):
    """Files a killed writer leaves (``.<name>.<pid>.tmp``, the pid dead) are removed when the next
    reporter is attached to the folder; those of a live process are left alone; none is listed as
    a checkpoint, and loading one that was cut short names it."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead_pid, live_pid = int(dead.stdout), os.getppid()
    out = tmp_path / "run"
    (out / "vtk").mkdir(parents=True)
    half = checkpoint.read_bytes()[:3000]
    stale = [out / f".ckpt_0000000040.npz.{dead_pid}.tmp", out / f".energy.csv.{dead_pid}.tmp",
             out / f".contactlab-write-test.{dead_pid}.tmp", out / "vtk" / f".particles_000004.vtp.{dead_pid}.tmp",
             out / "vtk" / f".particles.pvd.{dead_pid}.tmp"]
    live = [out / f".ckpt_0000000060.npz.{live_pid}.tmp", out / "vtk" / f".walls.pvd.{live_pid}.tmp"]
    for path in stale + live:
        path.write_bytes(half)
    assert fault_scene.checkpoints(out) == []
    with pytest.raises(cl.CheckpointError, match=r"ckpt_0000000040\.npz\.\d+\.tmp' is truncated or damaged"):
        cl.Simulation.load_checkpoint(stale[0])
    sim = fault_scene.build()
    sim.add_reporter(cl.io.CheckpointReporter(out / "ckpt.npz", every=20, keep=3))
    sim.add_reporter(cl.io.VTKReporter(out / "vtk", every=10))
    sim.add_reporter(cl.io.EnergyCSVReporter(out / "energy.csv", every=10))
    assert not any(p.exists() for p in stale) and all(p.exists() for p in live)
    sim.run(steps=40)
    sim.close()
    assert [p.name for p in fault_scene.checkpoints(out)] == ["ckpt_0000000020.npz", "ckpt_0000000040.npz"]
    assert [name for _, name in read_pvd(out / "vtk" / "particles.pvd")] == [f"particles_{k:06d}.vtp" for k in range(5)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_an_unreadable_checkpoint_is_named(tmp_path, checkpoint):
    locked = tmp_path / "locked.npz"
    locked.write_bytes(checkpoint.read_bytes())
    locked.chmod(0o000)
    try:
        with pytest.raises(cl.CheckpointError, match=r"checkpoint '.*locked\.npz' cannot be read: Permission denied"):
            cl.Simulation.load_checkpoint(locked)
    finally:
        locked.chmod(0o600)


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
