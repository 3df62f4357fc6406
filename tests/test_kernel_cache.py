"""A damaged kernel cache is rebuilt, and a copied one loads as is.

Every kind of file of the on-disk kernel cache (docs/performance.md, "The kernel cache") is
damaged the ways a full disk, a job killed while it wrote, or two versions sharing one folder
damage it, and the next run in a fresh process must give the right results, say what it rebuilt
in one line per damaged file (``KernelCacheWarning``), and leave files that the run after it loads
without a word and without compiling.

Nothing shared is damaged: the runs use a kernel cache and a Numba cache in ``tmp_path``
(``CONTACTLAB_CACHE_DIR``, ``NUMBA_CACHE_DIR``).  To stay fast they compile only tiny kernels: the
small scene's compiled kernels are copied from the cache the other tests use (run 0 loads them,
or compiles them once if that cache is cold), which is also the check that a cache copied to
another path loads without compiling.
"""
from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from numba.core.caching import UserProvidedCacheLocator

#: the tiny kernel of every case (``K`` differs per case, so each case has a module of its own)
TINY_SOURCE = '''from contactlab._jit import kernel

K = {k!r}


@kernel
def f(x):
    return K * x + 1.0
'''

#: the run: import (generated) or import (plain) each case's tiny module and call its kernel,
#: then ten steps of two beads on a floor (Hertz-Mindlin); print what it computed, which
#: functions Numba compiled, and the cache files of every kernel it used
DRIVER = r'''
import importlib, inspect, json, os, sys
import numpy as np
from numba.core import event as numba_event
from numba.core.dispatcher import Dispatcher
import contactlab as cl
from contactlab import kernel_cache

compiled = []


class Compiled(numba_event.Listener):
    def on_start(self, event):
        d = event.data["dispatcher"]
        compiled.append(f"{d.py_func.__module__}.{d.py_func.__qualname__}")

    def on_end(self, event):
        pass


numba_event.register("numba:compile", Compiled())
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["plain_dir"])
results, modules = {}, {}
for kind, tag, k in spec["tiny"]:
    source = spec["template"].format(k=k)
    if kind == "generated":
        name = kernel_cache.generated_name(f"_test_cache_{tag}", source)
        module = kernel_cache.write_module(kernel_cache.cache_dir(), name, source)
    else:
        module = importlib.import_module(tag)
    results[tag] = module.f(2.0)
    modules[tag] = {"module": module.__name__, "py": module.__file__}

glass = cl.Material(density=2500.0, young=1e7, poisson=0.3)
scene = cl.Scene(gravity=(0.0, 0.0, -9.81))
scene.add_sphere(position=(0, 0, 0.0011), radius=1e-3, material=glass, velocity=(0, 0, -0.1))
scene.add_sphere(position=(0.003, 0, 0.002), radius=1e-3, material=glass)
scene.add_wall(point=(0, 0, 0), normal=(0, 0, 1), material=glass)
sim = cl.Simulation(scene, model=cl.models.HertzMindlin(restitution=0.5, friction=0.5), dt=None)
sim.run(steps=10)

generated_dirs = {os.path.realpath(kernel_cache.cache_dir())}
kernels = {}
for module in list(sys.modules.values()):
    try:
        items = list(vars(module).items())
    except TypeError:
        continue
    for value in (v for _, v in items):
        if isinstance(value, Dispatcher) and isinstance(value._cache, kernel_cache.CheckedCache) and value.overloads:
            py_file = inspect.getfile(value.py_func)
            kernels[f"{value.py_func.__module__}.{value.py_func.__qualname__}"] = {
                "py_file": py_file, "paths": value._cache.paths(),
                "generated": os.path.realpath(os.path.dirname(py_file)) in generated_dirs}
scene_modules = sorted({k["py_file"] for k in kernels.values() if k["generated"]} |
                       {m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)
                        and os.path.realpath(os.path.dirname(m.__file__)) in generated_dirs})
json.dump({"results": results, "modules": modules, "positions": sim.positions.tolist(), "compiled": compiled,
           "kernels": kernels, "generated_modules": scene_modules}, sys.stdout)
'''


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _garbage(data: bytes) -> bytes:
    return np.random.default_rng(7).integers(0, 256, max(len(data), 64), dtype=np.uint8).tobytes()


def _flip(data: bytes) -> bytes:
    k = len(data) * 2 // 3
    return data[:k] + bytes([data[k] ^ 0xFF]) + data[k + 1:]


def _pyc_body_half(data: bytes) -> bytes:
    return data[:16] + data[16:][: (len(data) - 16) // 2]  # header (magic, flags, source mtime and size) intact


@dataclass(frozen=True)
class Case:
    """Damage ``file`` (``py``: the module, ``pyc``: its bytecode cache, ``nbi``: Numba's index of
    its kernel, ``nbc``: Numba's compiled code) of a tiny ``module`` (``generated``: written by
    ``kernel_cache.write_module`` like the step kernels, in the kernel cache; ``plain``: an
    ordinary module like contactlab's built-in ones) with ``damage``; ``reproduces`` is the
    failure every later run met before the cache checked what it loads."""

    name: str
    module: str
    file: str
    damage: Callable[[bytes], bytes]
    reproduces: str


CASES = [
    Case("gen_py_half", "generated", "py", _half, "a job killed while writing: SyntaxError on every run"),
    Case("gen_py_empty", "generated", "py", lambda d: b"", "a full disk: AttributeError (module has no 'f')"),
    Case("gen_py_ten", "generated", "py", lambda d: d[:10], "10 bytes written: SyntaxError / ImportError"),
    Case("gen_py_emptied", "generated", "py", lambda d: b"\n\n\n", "emptied to white space: AttributeError"),
    Case("gen_py_other", "generated", "py", lambda d: b"K = 0.0\n", "valid Python of another content: "
         "AttributeError, or wrong results"),
    Case("gen_pyc_half", "generated", "pyc", _pyc_body_half, "a damaged .pyc of an intact module: EOFError "
         "(bad marshal data) on every run"),
    Case("gen_nbi_half", "generated", "nbi", _half, "Numba's index truncated: UnpicklingError / EOFError"),
    Case("gen_nbi_empty", "generated", "nbi", lambda d: b"", "Numba's index empty: EOFError"),
    Case("gen_nbi_garbage", "generated", "nbi", _garbage, "Numba's index overwritten: UnpicklingError"),
    Case("gen_nbc_half", "generated", "nbc", _half, "compiled code truncated: UnpicklingError"),
    Case("gen_nbc_empty", "generated", "nbc", lambda d: b"", "compiled code empty: EOFError"),
    Case("gen_nbc_ten", "generated", "nbc", lambda d: d[:10], "compiled code cut to 10 bytes: UnpicklingError"),
    Case("gen_nbc_flipped", "generated", "nbc", _flip, "one byte of compiled code changed: loaded unchecked"),
    Case("plain_nbi_ten", "plain", "nbi", lambda d: d[:10], "a built-in module's index cut: UnpicklingError"),
    Case("plain_nbc_half", "plain", "nbc", _half, "a built-in module's compiled code truncated: UnpicklingError"),
    Case("plain_nbc_garbage", "plain", "nbc", _garbage, "a built-in module's compiled code overwritten"),
]

#: the small scene's own files, damaged in the same run (picked from what run 1 loaded): the step
#: kernels' generated module, the index of the smallest built-in kernel, the compiled code of the
#: next smallest (the generated kernels that the scene loads are the step kernels, whose
#: recompilation takes 10-20 s: the tiny generated cases stand for them)
SCENE_CASES = [
    ("scene_step_module_half", "step kernel module", _half),
    ("scene_builtin_nbi_garbage", "built-in nbi", _garbage),
    ("scene_builtin_nbc_ten", "built-in nbc", lambda d: d[:10]),
]


def _run(tmp_path: Path, root: Path | None, spec: dict) -> tuple[dict, list[str]]:
    """One run in a fresh process; ``root``: the kernel and Numba caches to use (None: those of
    this process, read as any test reads them)."""
    env = dict(os.environ, PYTHONWARNINGS="default")
    env.pop("NUMBA_DISABLE_JIT", None)
    if root is not None:
        env.update(CONTACTLAB_CACHE_DIR=str(root / "cl"), NUMBA_CACHE_DIR=str(root / "nb"))
    (tmp_path / "driver.py").write_text(DRIVER)
    proc = subprocess.run([sys.executable, str(tmp_path / "driver.py"), json.dumps(spec)], env=env, check=False,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout), proc.stderr.splitlines()


def _layout(report: dict, root: Path) -> None:
    """Copy the scene's generated modules and compiled kernels reported by a run into ``root``
    (``cl/kernels/`` and ``nb/``, where a run with those caches looks for them)."""
    kernels_dir = root / "cl" / "kernels"
    kernels_dir.mkdir(parents=True)
    for py in report["generated_modules"]:
        shutil.copy2(py, kernels_dir)
    for info in report["kernels"].values():
        sub = "contactlab-kernels" if info["generated"] else UserProvidedCacheLocator.get_suitable_cache_subpath(
            info["py_file"])
        (root / "nb" / sub).mkdir(parents=True, exist_ok=True)
        for path in info["paths"]:
            shutil.copy2(path, root / "nb" / sub)


def _damage(path: Path, damage) -> None:
    data = path.read_bytes()
    path.write_bytes(damage(data))


def _scene_targets(report: dict) -> dict[str, tuple[str, Path]]:
    """The files of the scene that :data:`SCENE_CASES` damage (and the kernel each belongs to)."""
    step = max((p for p in report["generated_modules"] if "_contactlab_kernels_" in Path(p).name),
               key=lambda p: Path(p).stat().st_size)
    scene_kernels = {n: k for n, k in report["kernels"].items() if not n.startswith(_TINY_PREFIXES)}

    builtin = sorted((n for n, k in scene_kernels.items() if not k["generated"]),
                     key=lambda n: (sum(Path(p).stat().st_size for p in scene_kernels[n]["paths"]), n))

    def file_of(name: str, suffix: str) -> tuple[str, Path]:
        return name, Path(next(p for p in scene_kernels[name]["paths"] if p.endswith(suffix)))

    # the smallest built-in kernels are the quickest to recompile
    return {"step kernel module": ("", Path(step)), "built-in nbi": file_of(builtin[0], ".nbi"),
            "built-in nbc": file_of(builtin[1], ".nbc")}


#: module names of the tiny kernels (generated ones start with the prefix, plain ones are the case names)
_TINY_PREFIXES = ("_test_cache_",) + tuple(f"{c.name}." for c in CASES if c.module == "plain")


def test_every_kind_of_damaged_cache_file_is_rebuilt_and_a_copied_cache_loads_as_is(tmp_path):
    """Run 0 uses the shared caches (nothing is damaged there) and reports the small scene's files;
    they are laid out in ``a/`` and ``a/`` is copied to ``b/``: run 1 in ``b/`` compiles none of
    the scene's kernels (a cache copied to another path loads as is: before, Numba's files of the
    generated kernels were keyed on the kernel folder's path and all of them recompiled, 15-35 s)
    and builds the tiny modules of :data:`CASES`.  Then each case's file and the scene's files of
    :data:`SCENE_CASES` are damaged; run 2 must give the same results, say in one line per file
    what it rebuilt, and recompile exactly the kernels whose Numba files were damaged; run 3 must
    compile nothing and say nothing (the damaged files were replaced by good ones)."""
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    tiny = []
    for k, case in enumerate(CASES):
        value = 1.5 + k
        tiny.append((case.module, case.name, value))
        if case.module == "plain":
            (plain_dir / f"{case.name}.py").write_text(TINY_SOURCE.format(k=value))
    spec = {"plain_dir": str(plain_dir), "template": TINY_SOURCE, "tiny": tiny}
    expected = {case.name: 2.0 * value + 1.0 for (_, _, value), case in zip(tiny, CASES)}

    report0, _ = _run(tmp_path, None, dict(spec, tiny=[]))
    _layout(report0, tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    root = tmp_path / "b"
    report1, _ = _run(tmp_path, root, spec)
    assert report1["results"] == expected
    assert report1["positions"] == report0["positions"]
    assert [n for n in report1["compiled"] if not n.startswith(_TINY_PREFIXES)] == [], \
        "a kernel cache copied to another path recompiled the scene's kernels"

    targets: dict[str, Path] = {}
    for case in CASES:
        info = report1["modules"][case.name]
        kernel = report1["kernels"][f"{info['module']}.f"]
        if case.file == "py":
            targets[case.name] = Path(info["py"])
        elif case.file == "pyc":
            targets[case.name] = Path(importlib.util.cache_from_source(info["py"]))
            py_compile.compile(info["py"], cfile=str(targets[case.name]), doraise=True)
        else:
            targets[case.name] = Path(next(p for p in kernel["paths"] if p.endswith("." + case.file)))
    scene_files = _scene_targets(report1)
    for name, which, _ in SCENE_CASES:
        targets[name] = scene_files[which][1]
    intact = {name: path.read_bytes() for name, path in targets.items()}
    for case in CASES:
        _damage(targets[case.name], case.damage)
    for name, _, damage in SCENE_CASES:
        _damage(targets[name], damage)

    report2, stderr2 = _run(tmp_path, root, spec)
    assert report2["results"] == expected
    assert report2["positions"] == report1["positions"]
    lines = [line for line in stderr2 if "KernelCacheWarning" in line]
    for name, path in targets.items():
        located = path if path.suffix != ".pyc" else Path(report1["modules"][name]["py"])  # the module whose .pyc it is
        mentions = [line for line in lines if line.startswith(f"{located}:")]
        assert len(mentions) == 1, f"{name}: {len(mentions)} lines about {path.name} in\n" + "\n".join(lines)
        assert re.search(r"damaged|failed to import", mentions[0]), mentions[0]
    assert len(lines) == len(targets), "\n".join(lines)
    # exactly the kernels whose Numba files were damaged compile again (with the building blocks
    # they call): a rewritten module loads its compiled code (the index holds a hash of its content)
    tiny_modules = {report2["modules"][c.name]["module"]: c for c in CASES}
    recompiled = {n for n in report2["compiled"] if n.rsplit(".", 1)[0] in tiny_modules or n in report1["kernels"]}
    damaged_kernels = {f"{report2['modules'][c.name]['module']}.f" for c in CASES if c.file in ("nbi", "nbc")}
    damaged_kernels |= {kernel for kernel, _ in scene_files.values() if kernel}
    assert recompiled == damaged_kernels
    for name, path in targets.items():
        if path.suffix == ".py":
            assert path.read_bytes() == intact[name], f"{name}: {path.name} not rewritten"

    report3, stderr3 = _run(tmp_path, root, spec)
    assert report3["results"] == expected
    assert report3["positions"] == report1["positions"]
    assert [line for line in stderr3 if "KernelCacheWarning" in line] == []
    assert report3["compiled"] == [], "the rebuilt files did not load"
