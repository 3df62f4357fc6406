"""A data file from elsewhere runs no code: a scene file or a checkpoint that names a module
(``type = "mod:name"`` of a user-defined law) is refused before the module is imported, unless
the person running contactlab allows it (``allow_import=...``, ``--allow-import MOD``).

The module of each test is written afresh (and taken out of ``sys.modules`` after the test), and
its top-level code writes a marker file: the marker must not exist after a refusal (nothing of
the module ran), and must exist once the import is allowed.  Its text is the same in every run
(the marker's path comes from the environment), so the modules a law generates in the kernel
cache are written once, not once per run.  The checkpoints are the stored format-5 checkpoint
with its model replaced (written again whole, so its checksums hold): a checkpoint from elsewhere
that is intact.
"""
from __future__ import annotations

import json
import pickle
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import contactlab as cl
from contactlab.cli import main as cli_main
from contactlab.ensemble import SceneFile
from contactlab.io.checkpoint import read_checkpoint
from contactlab.io.scenefile import load_scene_file
from contactlab.laws.registry import model_from_dict

DATA = Path(__file__).resolve().parent / "data"

LAW = '''
import os
import pathlib
pathlib.Path(os.environ["MARKER_LAW_IMPORTED"]).write_text("imported")

import contactlab as cl


@cl.contact_law("normal", parameters=[cl.Parameter("stiffness", "N/m", "spring stiffness", low=0.0)])
def spring(g, p, h, dt):
    if g.overlap <= 0.0:
        return 0.0, 0.0, 0.0, False, ()
    return p.stiffness * g.overlap, 0.5 * p.stiffness * g.overlap ** 2, 0.0, True, ()
'''

SCENE = '''
[simulation]
gravity = [0.0, 0.0, -9.81]
duration = 0.001

[materials.glass]
density = 2500.0
young = 1e7
poisson = 0.3

[[sphere]]
position = [0.0, 0.0, 0.0015]
radius = 0.001
material = "glass"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[model]
{model}
{extra}
'''

LSD = 'type = "LinearSpringDashpot", stiffness = 1e4, restitution = 0.5, friction = 0.5'


class Env:
    """A module ``mod`` (and a package ``pkg`` with a submodule ``pkg.sub``) of a user law, not
    imported, each writing its marker when imported; scene files and checkpoints naming them."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.mod, self.pkg = "marker_law_module", "marker_law_package"
        code = tmp / "code"
        (code / self.pkg).mkdir(parents=True)
        self.marker, self.pkg_marker = tmp / "mod-imported", tmp / "pkg-imported"
        (code / f"{self.mod}.py").write_text(LAW)
        (code / self.pkg / "__init__.py").write_text(
            "import os\nimport pathlib\npathlib.Path(os.environ['MARKER_LAW_PACKAGE_IMPORTED']).touch()\n")
        (code / self.pkg / "sub.py").write_text(LAW)
        self.code = code
        self.out = tmp / "out"

    def scene(self, model: str, extra: str = "", name: str = "scene.toml") -> Path:
        path = self.tmp / name
        path.write_text(SCENE.format(model=model.format(mod=self.mod, pkg=self.pkg), extra=extra))
        return path

    def checkpoint(self, model: dict, name: str = "c.npz") -> Path:
        """The stored format-5 checkpoint with its model replaced by ``model`` (``{mod}`` filled in)."""
        with np.load(DATA / "checkpoint_v5.npz") as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays["meta"]))
        meta["contact_model"] = json.loads(json.dumps(model).replace("{mod}", self.mod))
        arrays["meta"] = np.array(json.dumps(meta))
        path = self.tmp / name
        np.savez(path, **arrays)
        return path

    def imported(self) -> bool:
        return self.marker.exists() or self.pkg_marker.exists()


@pytest.fixture
def env(tmp_path, monkeypatch):
    e = Env(tmp_path)
    assert e.mod not in sys.modules and e.pkg not in sys.modules
    monkeypatch.setenv("MARKER_LAW_IMPORTED", str(e.marker))
    monkeypatch.setenv("MARKER_LAW_PACKAGE_IMPORTED", str(e.pkg_marker))
    monkeypatch.syspath_prepend(str(e.code))
    yield e
    for name in [m for m in sys.modules if m.startswith((e.mod, e.pkg))]:
        del sys.modules[name]


SPRING = {"type": "{mod}:spring", "stiffness": 1e4}


@dataclass(frozen=True)
class Case:
    """``call(env)`` must raise ``error`` with a message matching ``message``, before anything
    of the named module ran."""

    name: str
    call: Callable
    error: type
    message: str


REFUSED = cl.ImportNotAllowedError
HOW = r"--allow-import {mod} \(contactlab run, contactlab sweep\), allow_import=\['{mod}'\]"
REFUSALS = [
    Case("scene file [model] type", lambda e: load_scene_file(e.scene('type = "{mod}:spring"\nstiffness = 1e4')),
         REFUSED, r"scene\.toml: \[model\] type '{mod}:spring' names the module '{mod}', which is not imported yet; "
                  r"importing it would run its code.*" + HOW),
    Case("scene file Contact slot",
         lambda e: load_scene_file(e.scene('type = "Contact"\nnormal = {{ type = "{mod}:spring", stiffness = 1e4 }}')),
         REFUSED, r"scene\.toml: \[model\.normal\] type '{mod}:spring' names the module '{mod}'"),
    Case("scene file ParallelBond contact",
         lambda e: load_scene_file(e.scene('type = "ParallelBond"\nnormal_stiffness = 1e12\nshear_stiffness = 4e11\n'
                                           'tensile_strength = 1e6\nshear_strength = 1e6\n'
                                           'contact = {{ type = "{mod}:spring", stiffness = 1e4 }}')),
         REFUSED, r"\[model\.contact\] type '{mod}:spring' names the module '{mod}'"),
    Case("scene file submodule of a package",
         lambda e: load_scene_file(e.scene('type = "{pkg}.sub:spring"\nstiffness = 1e4')),
         REFUSED, r"names the module '{pkg}\.sub'.*--allow-import {pkg}\.sub"),
    Case("scene file with another module allowed",
         lambda e: load_scene_file(e.scene('type = "{mod}:spring"\nstiffness = 1e4'), allow_import=["numpy.linalg"]),
         REFUSED, r"names the module '{mod}'.*allowed now: numpy\.linalg"),
    Case("scene file allowing a submodule only",
         lambda e: load_scene_file(e.scene('type = "{pkg}:spring"'), allow_import=["{pkg}.sub".format(pkg=e.pkg)]),
         REFUSED, r"names the module '{pkg}'"),
    Case("scene file naming one allowed module and one refused",
         lambda e: load_scene_file(e.scene('type = "Contact"\nnormal = {{ type = "{pkg}.sub:spring", stiffness = 1e4 }}'
                                           '\ntangential = {{ type = "{mod}:spring", stiffness = 1e4 }}'),
                                   allow_import=[e.pkg]),
         REFUSED, r"\[model\.tangential\] type '{mod}:spring' names the module '{mod}'"),
    Case("scene file swept", lambda e: SceneFile(e.scene('type = "{mod}:spring"\nstiffness = 1e4')), REFUSED,
         r"\[model\] type '{mod}:spring' names the module '{mod}'"),
    Case("checkpoint model", lambda e: cl.Simulation.load_checkpoint(e.checkpoint(SPRING)), REFUSED,
         r"checkpoint '.*c\.npz': its contact model type '{mod}:spring' names the module '{mod}', which is not "
         r"imported yet.*checksum proves a file whole, not where it came from.*" + HOW),
    Case("checkpoint Contact slot",
         lambda e: read_checkpoint(e.checkpoint({"type": "Contact", "normal": SPRING})), REFUSED,
         r"its contact model type '{mod}:spring' names the module '{mod}'"),
    Case("checkpoint with another module allowed",
         lambda e: read_checkpoint(e.checkpoint(SPRING), allow_import="json"), REFUSED,
         r"names the module '{mod}'.*allowed now: json"),
    Case("model data from a file", lambda e: model_from_dict({"type": f"{e.mod}:spring", "stiffness": 1e4}), REFUSED,
         r"a data file's model type '{mod}:spring' names the module '{mod}'"),
    Case("allow_import a number", lambda e: load_scene_file(e.scene('type = "{mod}:spring"'), allow_import=3),
         cl.InputError, r"allow_import must be module names \(a str or a list of them.*got 3 \(int\)"),
    Case("allow_import with a law's name", lambda e: read_checkpoint(e.checkpoint(SPRING),
                                                                     allow_import=[f"{e.mod}:spring"]),
         cl.InputError, r"load_checkpoint: allow_import: '{mod}:spring' is not a module name"),
    Case("type with no module name", lambda e: load_scene_file(e.scene('type = "../{mod}:spring"')),
         cl.InputError, r"\[model\] type '\.\./{mod}:spring' does not start with a module name"),
]


def test_the_refusals_are_many_and_their_names_unique():
    assert len(REFUSALS) >= 12 and len({c.name for c in REFUSALS}) == len(REFUSALS)


@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: c.name)
def test_a_data_file_naming_a_module_is_refused_before_importing_it(case, env):
    with pytest.raises(case.error) as caught:
        case.call(env)
    message = str(caught.value)
    assert isinstance(caught.value, REFUSED) == (case.error is REFUSED)   # a bad argument is no refusal
    pattern = case.message.replace("{mod}", env.mod).replace("{pkg}", env.pkg)
    assert re.search(pattern, message), message
    assert not env.imported(), "the module's code ran"
    assert env.mod not in sys.modules and f"{env.pkg}.sub" not in sys.modules


@dataclass(frozen=True)
class Command:
    """``contactlab ARGS`` must exit with a non-zero status (``code`` where it is fixed: ``sweep``
    refuses with 2; ``run`` with 1, or 2 once its statuses tell refusals from failed runs) and
    print ``message`` (a regex) on stderr, nothing of the module having run and no output folder
    made."""

    name: str
    args: Callable
    code: int | None
    message: str


COMMANDS = [
    Command("run a scene file", lambda e: ["run", str(e.scene('type = "{mod}:spring"\nstiffness = 1e4')),
                                           "--out", str(e.out), "--quiet"], None,
            r"contactlab: error: .*scene\.toml: \[model\] type '{mod}:spring' names the module '{mod}'.*"
            r"--allow-import {mod}"),
    Command("run a restart checkpoint", lambda e: ["run", str(e.scene(LSD.replace(", ", "\n"))), "--restart",
                                                   str(e.checkpoint(SPRING)), "--out", str(e.out), "--quiet"], None,
            r"contactlab: error: checkpoint '.*c\.npz'.*'{mod}:spring'"),   # or: it holds another scene's model
    Command("run allowing another module", lambda e: ["run", str(e.scene('type = "{mod}:spring"\nstiffness = 1e4')),
                                                      "--out", str(e.out), "--quiet", "--allow-import", "json"], None,
            r"names the module '{mod}'.*allowed now: json"),
    Command("sweep a scene file", lambda e: ["sweep", str(e.scene('type = "{mod}:spring"\nstiffness = 1e4')),
                                             "--measure", "contacts", "--serial", "--quiet",
                                             "--out", str(e.out / "t.csv")], 2,
            r"contactlab: error: .*scene\.toml: \[model\] type '{mod}:spring' names the module '{mod}'"),
]


@pytest.mark.parametrize("case", COMMANDS, ids=lambda c: c.name)
def test_the_commands_refuse_a_data_file_naming_a_module(case, env, capsys):
    code = cli_main(case.args(env))
    assert code != 0 and code == (case.code or code)
    err = capsys.readouterr().err
    pattern = case.message.replace("{mod}", env.mod)
    assert re.search(pattern, err), err
    assert not env.imported(), "the module's code ran"
    assert not env.out.exists()


# ------------------------------------------------------------------------------------------------ allowed
def test_a_scene_file_imports_the_module_it_is_allowed_to(env):
    spec = load_scene_file(env.scene('type = "{mod}:spring"\nstiffness = 1e4'), allow_import=[env.mod])
    assert env.marker.exists() and spec.model.to_dict() == {"type": f"{env.mod}:spring", "stiffness": 1e4}
    assert spec.model.name == "spring"


def test_allowing_a_package_allows_its_submodules(env):
    spec = load_scene_file(env.scene('type = "Contact"\nnormal = {{ type = "{pkg}.sub:spring", stiffness = 2e4 }}'),
                           allow_import=env.pkg)
    assert env.pkg_marker.exists() and env.marker.exists()
    assert spec.model.parts["normal"].to_dict() == {"type": f"{env.pkg}.sub:spring", "stiffness": 2e4}


def test_a_parallel_bond_contact_from_a_scene_file_is_built(env):
    """The contact of a ParallelBond is a model table of its own, built as the registry builds one
    (through the same gate as a Contact's slots: refused above when it names a module)."""
    spec = load_scene_file(env.scene('type = "ParallelBond"\nnormal_stiffness = 1e12\nshear_stiffness = 4e11\n'
                                     'tensile_strength = 1e6\nshear_strength = 1e6\n'
                                     'contact = {{ ' + LSD + ' }}'))
    assert isinstance(spec.model.contact, cl.models.LinearSpringDashpot)
    lsd = cl.models.LinearSpringDashpot(stiffness=1e4, restitution=0.5, friction=0.5)
    assert spec.model.contact.to_dict() == lsd.to_dict()


def test_a_checkpoint_imports_the_module_it_is_allowed_to(env):
    saved = read_checkpoint(env.checkpoint({"type": "Contact", "normal": SPRING}), allow_import=(env.mod,))
    assert env.marker.exists()
    assert saved.law.to_dict() == {"type": "Contact", "normal": {"type": f"{env.mod}:spring", "stiffness": 1e4}}


def test_a_module_already_imported_needs_no_permission(env):
    """The person's own script imported it: importing it again runs nothing, and a law defined in
    a script or a test module keeps loading from its own scene files and checkpoints."""
    __import__(env.mod)
    env.marker.unlink()
    spec = load_scene_file(env.scene('type = "{mod}:spring"\nstiffness = 1e4'))
    saved = read_checkpoint(env.checkpoint(SPRING))
    assert spec.model.to_dict() == saved.law.to_dict() == {"type": f"{env.mod}:spring", "stiffness": 1e4}
    assert not env.marker.exists()   # not imported a second time


def test_contactlabs_own_modules_need_no_permission(env):
    spec = load_scene_file(env.scene('type = "Contact"\n'
                                     'normal = {{ type = "contactlab.laws.parts:hooke", stiffness = 1e4 }}\n'
                                     'tangential = {{ type = "contactlab.laws.parts:coulomb_friction", '
                                     'stiffness = 3e3, friction = 0.5 }}'))
    assert spec.model.to_dict()["tangential"]["type"] == "contactlab.laws.parts:coulomb_friction"


def test_the_run_command_passes_allow_import_on(env, capsys):
    """``--allow-import`` reaches the scene file (a later error of the same file keeps the run
    short: the module was imported, then ``[output]`` refused)."""
    path = env.scene('type = "{mod}:spring"\nstiffness = 1e4', extra="[output]\nvtk_interval = 0")
    assert cli_main(["run", str(path), "--out", str(env.out), "--quiet", "--allow-import", env.mod]) != 0
    err = capsys.readouterr().err
    assert "[output] vtk_interval must be a positive number" in err and "names the module" not in err
    assert env.marker.exists() and not env.out.exists()


def test_the_sweep_command_passes_allow_import_on(env, capsys):
    path = env.scene('type = "{mod}:spring"\nstiffness = 1e4', extra="[output]\nvtk_interval = 0")
    assert cli_main(["sweep", str(path), "--measure", "contacts", "--serial", "--quiet",
                     "--allow-import", env.pkg, "--allow-import", env.mod]) == 2
    err = capsys.readouterr().err
    assert "[output] vtk_interval must be a positive number" in err and "names the module" not in err
    assert env.marker.exists()


def test_a_scene_file_member_carries_its_permission_to_the_workers(env):
    """SceneFile keeps allow_import, and adds the modules the file names that this process has
    imported (a worker process has imported nothing of the user's), and is picklable with them."""
    path = env.scene('type = "{mod}:spring"\nstiffness = 1e4')
    scene = SceneFile(path, allow_import=["json"] + [env.mod])
    again = pickle.loads(pickle.dumps(scene))
    assert again.allow_import == ("json", env.mod) and again.path == scene.path
    assert SceneFile(path).allow_import == (env.mod,)   # imported now, by the first SceneFile
    own = SceneFile(env.scene('type = "Contact"\nnormal = {{ type = "contactlab.laws.parts:hooke", stiffness = 1e4 }}',
                              name="own.toml"))
    assert own.allow_import == ()


def test_docs_list_every_case():
    """docs/errors.md lists every refusal of this file with its message and the fix."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    section = doc[doc.index("## Data files that name a module"):doc.index("## The catalogue")]
    rows = {m["name"]: m["fix"].strip() for m in
            re.finditer(r"^\| (?P<name>[^|`]+?) \| `[^`]+`[^|]* \| (?P<fix>[^\n]*) \|$", section, flags=re.MULTILINE)}
    missing = [c.name for c in REFUSALS + COMMANDS if not rows.get(c.name)]
    assert not missing, f"docs/errors.md does not list (with a fix): {missing}"
