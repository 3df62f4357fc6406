"""The command line names the flag in every error and never replaces or shortens output unasked;
``--restart`` appends; reporters refuse to share a file or a simulation (issue 43, sections 2 and 6).

Every refused command runs in a temporary folder that holds a copy of a finished run's output
(checkpoint, ``energy.csv``, ``summary.json``, VTK series), an earlier validation report and an
earlier sweep's table; each case checks the exit status, that the message names the flag (or the
scene file's key) and its value, and that the whole folder is byte for byte what it was.  The run
is two beads above a floor (:data:`helpers.scene_text.TWO_BEADS_ON_A_FLOOR`, HertzMindlin, ~100
steps), so the file takes a few seconds once the kernels are compiled.
"""
from __future__ import annotations

import gc
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

import contactlab as cl
from contactlab.cli import main
from contactlab.io.vtk import read_pvd
from helpers.scene_text import TWO_BEADS_ON_A_FLOOR as SCENE

MODEL = "contactlab.validation.builtin:hertz_mindlin"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "errors.md"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """The output folder of a finished ``contactlab run`` of SCENE (to t = 1 ms: 3 frames, 3 rows)."""
    folder = tmp_path_factory.mktemp("finished")
    (folder / "scene.toml").write_text(SCENE)
    assert main(["run", str(folder / "scene.toml"), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def _snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes, and every folder."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


class Env:
    """A temporary folder (the current folder while a case runs) with the scene file, a copy of
    the finished run in ``out/``, an earlier report in ``report/`` and an earlier results table."""

    def __init__(self, tmp: Path, finished: Path):
        self.tmp = tmp
        self.scene_file = tmp / "scene.toml"
        self.scene_file.write_text(SCENE)
        self.out = tmp / "out"
        shutil.copytree(finished, self.out)
        self.report = tmp / "report"
        self.report.mkdir()
        (self.report / "report.html").write_text("<html>an earlier report</html>\n")
        (self.report / "summary.json").write_text('{"figures": ["hysteresis.png"]}\n')
        (self.report / "hysteresis.png").write_bytes(b"\x89PNG earlier")
        self.table = tmp / "results.csv"
        self.table.write_text("friction,contacts\n0.3,1\n")
        self.fresh = tmp / "fresh"           # a folder no refused command may create

    @property
    def checkpoint(self) -> str:
        return str(self.out / "checkpoint.npz")

    def scene(self, *edits: tuple[str, str]) -> str:
        """SCENE with each ``(old, new)`` replaced once, as a file."""
        text = SCENE
        for old, new in edits:
            assert old in text, f"the edit {old!r} does not apply"
            text = text.replace(old, new, 1)
        path = self.tmp / "edited.toml"
        path.write_text(text)
        return str(path)

    def run(self, *flags: str, scene: str | None = None, out: str | None = None) -> list[str]:
        return ["run", scene or str(self.scene_file), "--out", str(self.out) if out is None else out, "--quiet",
                *flags]


@dataclass(frozen=True)
class Command:
    """``argv(env)`` must exit with status 2 and print ``message`` (a regex searched in stderr)."""

    name: str
    argv: Callable
    message: str


LSD = '[model]\ntype = "LinearSpringDashpot"\nstiffness = 1e4\nrestitution = 0.5\nfriction = 0.5'
EXTRA_SPHERE = '[[sphere]]\nposition = [0.0, 0.0, 0.008]\nradius = 0.001\nmaterial = "glass"\n\n[[wall]]'
EXTRA_WALL = '[[wall]]\npoint = [0.0, 0.0, 0.02]\nnormal = [0.0, 0.0, -1.0]\nmaterial = "glass"\n\n[model]'

COMMANDS = [
    # contactlab run: the flags
    Command("run --duration negative", lambda e: e.run("--duration", "-1"),
            r"--duration must be a finite number of s >= 0, got -1\.0"),
    Command("run --duration infinite", lambda e: e.run("--duration", "inf"),
            r"--duration must be a finite number of s >= 0, got inf"),
    Command("run --duration NaN", lambda e: e.run("--duration", "nan"),
            r"--duration must be a finite number of s >= 0, got nan"),
    Command("run --threads zero", lambda e: e.run("--threads", "0"),
            r"--threads must be an integer from 1 to \d+ \(the threads Numba has\), got 0"),
    Command("run --threads too many", lambda e: e.run("--threads", "100000"),
            r"--threads must be an integer from 1 to \d+ \(the threads Numba has\), got 100000"),
    Command("run --out empty", lambda e: e.run(out=""),
            r"--out must name a folder, got '' \(an empty name would write into the current folder\)"),
    Command("run --out a file", lambda e: e.run(out=str(e.out / "energy.csv")),
            r"cannot use output folder '.*energy\.csv': it exists and is a file, not a folder \(--out\)"),
    Command("run --restart empty", lambda e: e.run("--restart", ""), r"--restart must name a checkpoint file, got ''"),
    Command("run --restart with --overwrite", lambda e: e.run("--restart", e.checkpoint, "--overwrite"),
            r"give --restart \(go on with the output folder's series from the checkpoint\) or --overwrite "
            r"\(replace them\), not both"),
    # contactlab run: earlier output
    Command("run into a finished run's folder", lambda e: e.run(),
            r"--out: '.*out' holds the output of an earlier run \(checkpoint\.npz, contacts\.pvd, energy\.csv, "
            r"particles\.pvd, summary\.json, walls\.pvd, 9 VTK frames\); give --overwrite to replace it, --restart "
            r"'.*checkpoint\.npz' to go on from its checkpoint, or another --out"),
    Command("run into [output] directory of a finished run",
            lambda e: ["run", e.scene(("[output]", f'[output]\ndirectory = "{e.out}"')), "--quiet"],
            r"edited\.toml: \[output\] directory: '.*out' holds the output of an earlier run"),
    Command("run with [output] directory empty",
            lambda e: ["run", e.scene(("[output]", '[output]\ndirectory = ""')), "--quiet"],
            r"edited\.toml: \[output\] directory must name a folder, got '' \(an empty name would write into the "
            r"current folder\); leave the key out for the default 'contactlab-out'"),
    # contactlab run --restart: the time to reach
    Command("run --restart --duration before the checkpoint",
            lambda e: e.run("--restart", e.checkpoint, "--duration", "0.0005"),
            r"--duration 0\.0005 s is before the time of the --restart checkpoint, 0\.001\d* s \(the duration is the "
            r"simulated time to reach, not the time to add\); give --duration 0\.001\d* or more"),
    Command("run --restart scene duration before the checkpoint",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("duration = 0.001", "duration = 0.0005"))),
            r"edited\.toml: \[simulation\] duration 0\.0005 s is before the time of the --restart checkpoint"),
    Command("run --restart --duration that cannot end",
            lambda e: e.run("--restart", e.checkpoint, "--duration", "1e300"),
            r"the run asked for \(duration=1e\+300 s .* would take .* of wall time"),
    # contactlab run --restart: another scene's checkpoint
    Command("run --restart another friction",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("friction = 0.5", "friction = 0.3"))),
            r"checkpoint '.*checkpoint\.npz' holds another simulation than the scene .*edited\.toml \(differences, "
            r"in the scene / in the checkpoint: model\.friction 0\.3 / 0\.5\); resume a checkpoint with the scene file "
            r"that wrote it \(--restart\)"),
    Command("run --restart another model type",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(
                ('[model]\ntype = "HertzMindlin"\nrestitution = 0.5\nfriction = 0.5', LSD))),
            r"holds another simulation than .*: model type 'LinearSpringDashpot' / 'HertzMindlin'\)"),
    Command("run --restart another material",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("young = 1e7", "young = 2e7"))),
            r"holds another simulation than .*: material glass young 20000000\.0 / 10000000\.0\)"),
    Command("run --restart another material name",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(*[("glass", "sand")] * 4)),
            r"holds another simulation than .*: materials sand / glass\)"),
    Command("run --restart another radius",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("radius = 0.001\n", "radius = 0.0011\n"))),
            r"holds another simulation than .*: radius of body 0: 0\.0011 m / 0\.001 m\)"),
    Command("run --restart more bodies",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("[[wall]]", EXTRA_SPHERE))),
            r"holds another simulation than .*: bodies 3 / 2\)"),
    Command("run --restart another wall",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("[model]", EXTRA_WALL))),
            r"holds another simulation than .*: walls 2 / 1\)"),
    Command("run --restart several differences",
            lambda e: e.run("--restart", e.checkpoint, scene=e.scene(("friction = 0.5", "friction = 0.3"),
                                                                     ("young = 1e7", "young = 2e7"),
                                                                     ("[[wall]]", EXTRA_SPHERE))),
            r"model\.friction 0\.3 / 0\.5; material glass young 20000000\.0 / 10000000\.0; bodies 3 / 2\)"),
    Command("run --restart missing checkpoint", lambda e: e.run("--restart", str(e.tmp / "nothere.npz")),
            r"checkpoint '.*nothere\.npz' does not exist \(--restart\)"),
    Command("run --restart not a checkpoint", lambda e: e.run("--restart", str(e.out / "energy.csv")),
            r"'.*energy\.csv' is not a contactlab checkpoint .*\(--restart\)"),
    # contactlab validate
    Command("validate --out with an earlier report", lambda e: ["validate", MODEL, "--quick", "--out", str(e.report)],
            r"--out: '.*report' holds an earlier report \(report\.html, summary\.json, 1 figure\); give --overwrite "
            r"to replace it, or another --out"),
    Command("validate default folder with an earlier report",
            lambda e: (shutil.copytree(e.report, e.tmp / "validation-hertz_mindlin"), ["validate", MODEL])[1],
            r"the report folder \(the default of --out\): 'validation-hertz_mindlin' holds an earlier report"),
    Command("validate --radius negative", lambda e: ["validate", MODEL, "--radius", "-1", "--out", str(e.fresh)],
            r"--radius must be a finite number of m > 0, got -1\.0"),
    Command("validate --groups unknown", lambda e: ["validate", MODEL, "--groups", "hysterisis", "--out",
                                                    str(e.fresh)],
            r"--groups: unknown check group\(s\) 'hysterisis' \(did you mean 'hysteresis'\?\); groups: hysteresis"),
    Command("validate --out empty", lambda e: ["validate", MODEL, "--out", ""], r"--out must name a folder, got ''"),
    # contactlab sweep
    Command("sweep --out an earlier table", lambda e: ["sweep", str(e.scene_file), "--measure", "contacts", "--serial",
                                                       "--out", str(e.table)],
            r"--out: the results table '.*results\.csv' exists \(an earlier sweep's\); give --overwrite to replace "
            r"it, or another --out"),
    Command("sweep default table exists",
            lambda e: (e.table.rename(e.tmp / "scene-sweep.csv"), ["sweep", "scene.toml", "--measure", "contacts"])[1],
            r"--out: the results table 'scene-sweep\.csv' exists"),
    Command("sweep --workers zero", lambda e: ["sweep", "scene.toml", "--measure", "contacts", "--workers", "0"],
            r"--workers must be an integer >= 1, got 0"),
    Command("sweep --threads-per-member zero",
            lambda e: ["sweep", "scene.toml", "--measure", "contacts", "--threads-per-member", "0"],
            r"--threads-per-member must be an integer >= 1, got 0"),
    Command("sweep --replicates zero", lambda e: ["sweep", "scene.toml", "--measure", "contacts", "--replicates", "0"],
            r"--replicates must be an integer >= 1, got 0"),
    Command("sweep --seed negative", lambda e: ["sweep", "scene.toml", "--measure", "contacts", "--seed", "-1"],
            r"--seed must be an integer >= 0, got -1"),
    Command("sweep --duration negative", lambda e: ["sweep", "scene.toml", "--measure", "contacts",
                                                    "--duration", "-1"],
            r"--duration must be a finite number of s >= 0, got -1\.0"),
    Command("sweep --out empty", lambda e: ["sweep", "scene.toml", "--measure", "contacts", "--out", ""],
            r"--out must name a results file, got ''"),
]


@pytest.mark.parametrize("case", COMMANDS, ids=[c.name for c in COMMANDS])
def test_a_refused_command_names_the_flag_and_leaves_every_file_as_it_was(case, finished, tmp_path, monkeypatch,
                                                                          capsys):
    monkeypatch.chdir(tmp_path)
    env = Env(tmp_path, finished)
    argv = case.argv(env)
    before = _snapshot(tmp_path)
    assert main(argv) == 2
    io = capsys.readouterr()
    assert io.err.startswith("contactlab: error: "), io.err
    assert re.search(case.message, io.err), io.err
    assert "ready in" not in io.out and "validating" not in io.out     # refused before building or running
    assert _snapshot(tmp_path) == before, "a refused command changed the folder"


def _rows(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_text().splitlines()[1:]]


def test_a_restart_appends_to_the_series_and_to_energy_csv(finished, tmp_path):
    """The restart keeps what the series and the rows hold before the checkpoint's time, byte for
    byte, and adds the new ones: each .pvd's times and energy.csv's steps and times increase."""
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    (tmp_path / "scene.toml").write_text(SCENE)
    restart_step = cl.Simulation.load_checkpoint(out / "checkpoint.npz").step
    restart_time = float(_rows(out / "energy.csv")[-1][1])
    restart_time -= 0.5 * restart_time / restart_step   # half a step: the .pvd keeps times to 12 digits
    series = {s: read_pvd(out / f"{s}.pvd") for s in ("particles", "contacts", "walls")}
    earlier = {name: (out / name).read_bytes() for entries in series.values() for t, name in entries
               if t < restart_time}
    rows = _rows(out / "energy.csv")
    assert len(earlier) == 6 and len(rows) == 3       # frames and rows at 0 and 0.5 ms, and the rows at 1 ms

    assert main(["run", str(tmp_path / "scene.toml"), "--out", str(out), "--quiet", "--restart",
                 str(out / "checkpoint.npz"), "--duration", "0.002"]) == 0

    for s, entries in series.items():
        now = read_pvd(out / f"{s}.pvd")
        kept = [(t, name) for t, name in entries if t < restart_time]
        assert now[:len(kept)] == kept, s
        assert len(now) == len(entries) + 2, s                              # 1.5 and 2 ms added
        times = [t for t, _ in now]
        assert all(a < b for a, b in zip(times, times[1:])), (s, times)
        assert times[-1] == pytest.approx(0.002, rel=0.02)
    assert {name: (out / name).read_bytes() for name in earlier} == earlier
    now = _rows(out / "energy.csv")
    assert now[:2] == [r for r in rows if int(r[0]) < restart_step]
    steps, times = [int(r[0]) for r in now], [float(r[1]) for r in now]
    assert len(now) == 5 and all(a < b for a, b in zip(steps, steps[1:])) and all(a < b for a, b in
                                                                                  zip(times, times[1:]))
    assert cl.Simulation.load_checkpoint(out / "checkpoint.npz").time == pytest.approx(times[-1])


def test_overwrite_replaces_the_earlier_output_as_a_whole(finished, tmp_path):
    """Given --overwrite, a shorter run leaves no frame or row of the earlier one; files that are
    not a run's output stay."""
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    (out / "notes.txt").write_text("my notes\n")
    (tmp_path / "scene.toml").write_text(SCENE)
    assert main(["run", str(tmp_path / "scene.toml"), "--out", str(out), "--quiet", "--overwrite",
                 "--duration", "0.0005"]) == 0
    for s in ("particles", "contacts", "walls"):
        entries = read_pvd(out / f"{s}.pvd")
        assert [t for t, _ in entries] == pytest.approx([0.0, 0.0005], rel=0.03)
        assert sorted(p.name for p in out.glob(f"{s}_*.vtp")) == sorted(name for _, name in entries)
    assert [int(r[0]) for r in _rows(out / "energy.csv")] == [0, 47]
    assert (out / "notes.txt").read_text() == "my notes\n"


HELP = [["--help"], ["-h"], ["run", "--help"], ["validate", "--help"], ["sweep", "--help"], ["--version"]]


@pytest.mark.parametrize("argv", HELP, ids=" ".join)
def test_help_and_version_exit_0(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert (f"contactlab {cl.__version__}" if argv == ["--version"] else "usage: contactlab") in out


BAD = [
    ([], r"the following arguments are required: command"),
    (["bogus"], r"argument command: invalid choice: 'bogus'"),
    (["run", "--bogus"], r"unrecognized arguments: --bogus"),
    (["run", "--threads", "two"], r"argument --threads: invalid int value: 'two'"),
    (["run", "--duration", "1s"], r"argument --duration: invalid float value: '1s'"),
    (["validate"], r"the following arguments are required: MODULE:MODEL"),
    (["validate", MODEL, "--radius", "big"], r"argument --radius: invalid float value: 'big'"),
    (["sweep"], r"the following arguments are required: scene"),
    (["sweep", "s.toml", "--workers", "2", "--serial"], r"argument --serial: not allowed with argument --workers"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) or "nothing" for a, _ in BAD])
def test_a_bad_invocation_exits_2_naming_the_argument(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_help_and_version_import_no_engine():
    """``contactlab --help`` and ``--version`` answer without importing the engine (NumPy, SciPy,
    Numba, the simulation): ~0.1 s instead of ~1.5 s (the console script runs the same main)."""
    code = ("import sys\nfrom contactlab.cli import main\n"
            "for argv in (['--help'], ['--version']):\n"
            "    try:\n        main(argv)\n    except SystemExit as e:\n        assert e.code == 0\n"
            "heavy = sorted(m for m in ('numpy', 'scipy', 'numba', 'contactlab.simulation') if m in sys.modules)\n"
            "print('heavy:', heavy)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "heavy: []" in res.stdout, res.stdout
    res = subprocess.run([sys.executable, "-m", "contactlab.cli", "validate", "--help"], capture_output=True,
                         timeout=120)
    assert res.returncode == 0


# ------------------------------------------------------------------------------------------------ reporters
def _simulation() -> cl.Simulation:
    glass = cl.Material(density=2500.0, young=1e7, poisson=0.3, name="glass")
    scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
    scene.add_sphere(position=(0, 0, 1.5e-3), radius=1e-3, material=glass)
    scene.add_sphere(position=(0, 0, 3.6e-3), radius=1e-3, material=glass)
    scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
    return cl.Simulation(scene, cl.models.HertzMindlin(restitution=0.5, friction=0.5))


class Sims:
    """Two simulations; ``a`` has run 20 steps with a VTK series, an energy CSV, a checkpoint
    series and a recorder's CSV in ``tmp``."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.a, self.b = _simulation(), _simulation()
        self.vtk = cl.io.VTKReporter(tmp / "vtk", every=10)
        for r in (self.vtk, cl.io.EnergyCSVReporter(tmp / "energy.csv", every=10),
                  cl.io.CheckpointReporter(tmp / "c.npz", every=10)):
            self.a.add_reporter(r)
        self.a.record("kinetic", csv=tmp / "kinetic.csv")
        self.a.run(steps=20)


@dataclass(frozen=True)
class Case:
    """``call(sims)`` must raise ``error`` with a message matching ``message``, attaching nothing
    and writing nothing (after ``setup(sims)``)."""

    name: str
    call: Callable
    error: type
    message: str
    setup: Callable | None = None


I = cl.InputError
REPORTERS = [
    Case("two VTKReporters on one folder", lambda s: s.b.add_reporter(cl.io.VTKReporter(s.tmp / "vtk", every=5)), I,
         r"VTKReporter: '.*vtk/particles\.pvd' is written by another VTKReporter already \(attached to a simulation "
         r"at t = .* s, step 20\); two writers of one file lose one's output: give this one another folder, or close "
         r"the other's simulation first \(sim\.close\(\)\)"),
    Case("two VTKReporters on one folder of one simulation",
         lambda s: s.a.add_reporter(cl.io.VTKReporter(s.tmp / "vtk", every=5)), I,
         r"'.*vtk/particles\.pvd' is written by another VTKReporter already"),
    Case("two VTKReporters on one folder by another path",
         lambda s: s.b.add_reporter(cl.io.VTKReporter(s.tmp / "x" / ".." / "vtk", every=5)), I,
         r"'.*vtk/particles\.pvd' is written by another VTKReporter already"),
    Case("two EnergyCSVReporters on one file",
         lambda s: s.b.add_reporter(cl.io.EnergyCSVReporter(s.tmp / "energy.csv", every=5)), I,
         r"EnergyCSVReporter: '.*energy\.csv' is written by another EnergyCSVReporter already .* give this one "
         r"another file"),
    Case("two CheckpointReporters on one file",
         lambda s: s.b.add_reporter(cl.io.CheckpointReporter(s.tmp / "c.npz", every=5, keep=3)), I,
         r"CheckpointReporter: '.*c\.npz' is written by another CheckpointReporter already"),
    Case("two recorders on one CSV", lambda s: s.b.record("kinetic", csv=s.tmp / "kinetic.csv"), I,
         r"Recorder: '.*kinetic\.csv' is written by another Recorder already"),
    Case("an energy CSV over a recorder's CSV",
         lambda s: s.b.add_reporter(cl.io.EnergyCSVReporter(s.tmp / "kinetic.csv", every=5)), I,
         r"EnergyCSVReporter: '.*kinetic\.csv' is written by another Recorder already"),
    Case("one reporter on two simulations", lambda s: s.b.add_reporter(s.vtk), I,
         r"add_reporter: this VTKReporter is attached to another simulation already \(at t = .* s, step 20\); a "
         r"reporter follows one simulation \(its files would mix the two runs, times running backwards\): make a new "
         r"VTKReporter\(\.\.\.\) for this one"),
    Case("one reporter on a closed simulation's successor", lambda s: s.b.add_reporter(s.vtk), I,
         r"this VTKReporter is attached to another simulation already", setup=lambda s: s.a.close()),
    Case("one reporter twice on one simulation", lambda s: s.a.add_reporter(s.vtk), I,
         r"add_reporter: this VTKReporter is attached to this simulation already"),
]


@pytest.mark.parametrize("case", REPORTERS, ids=[c.name for c in REPORTERS])
def test_reporters_refuse_a_shared_file_or_simulation(case, tmp_path):
    sims = Sims(tmp_path)
    if case.setup is not None:
        case.setup(sims)
    before = _snapshot(tmp_path)
    attached = (list(sims.a.reporters), list(sims.b.reporters))
    with pytest.raises(case.error, match=case.message):
        case.call(sims)
    assert (sims.a.reporters, sims.b.reporters) == attached
    sims.b.run(steps=10)                     # writes nothing: the refused reporter is not attached
    assert _snapshot(tmp_path) == before
    if case.setup is None:                   # the first simulation's series goes on in time
        sims.a.run(steps=10)
        times = [t for t, _ in read_pvd(tmp_path / "vtk" / "particles.pvd")]
        assert len(times) == 4 and all(a < b for a, b in zip(times, times[1:]))


def test_a_file_is_free_again_once_its_writer_is_closed_or_gone(tmp_path):
    """Another reporter takes the folder once the first simulation is closed, or once nothing refers
    to it (a notebook cell run again), and a failed attach claims nothing."""
    first = _simulation()
    first.add_reporter(cl.io.VTKReporter(tmp_path, every=10))
    first.run(steps=10)
    first.close()
    second = _simulation()
    second.add_reporter(cl.io.VTKReporter(tmp_path, every=10))           # the first is closed
    second.run(steps=10)
    del second
    third = _simulation()
    third.add_reporter(cl.io.VTKReporter(tmp_path, every=10, resume=True))   # the second is gone
    (tmp_path / "c.npz").mkdir()
    with pytest.raises(cl.OutputError, match="is a folder"):
        third.add_reporter(cl.io.CheckpointReporter(tmp_path / "c.npz", every=10))
    (tmp_path / "c.npz").rmdir()
    third.add_reporter(cl.io.CheckpointReporter(tmp_path / "c.npz", every=10))     # the failed one claims nothing
    third.add_reporter(cl.io.EnergyCSVReporter(tmp_path / "e.csv", every=10))       # one folder, other files
    assert len(third.reporters) == 3
    third.run(steps=10)
    assert [t for t, _ in read_pvd(tmp_path / "particles.pvd")] == pytest.approx([0.0, third.time], rel=1e-11)
    gc.collect()


def test_docs_list_the_cases():
    """docs/errors.md lists every case of this file (| case | `message` | how to fix |)."""
    doc = DOCS.read_text()
    missing = [c.name for c in COMMANDS + REPORTERS if f"| {c.name} | `" not in doc]
    assert not missing, f"docs/errors.md does not list: {missing}"
