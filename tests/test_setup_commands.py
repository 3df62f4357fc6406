"""The README's two set-up commands work verbatim, in order, on a fresh machine.

``.ci/run`` runs them in a fresh virtual environment (so CI is the end-to-end check); these tests
catch the drift that broke them once: the install command not installing what the test command
needs (pytest itself, the plugins the pytest configuration's ``addopts`` call for, the packages
the tests import).
"""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import runpy
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

#: pytest options that come from a plugin, and the distribution that provides it
PLUGIN_OPTIONS = {"-n": "pytest-xdist", "--numprocesses": "pytest-xdist", "--dist": "pytest-xdist",
                  "--cov": "pytest-cov", "--timeout": "pytest-timeout", "--benchmark-skip": "pytest-benchmark",
                  "--hypothesis-seed": "hypothesis"}


def _commands() -> list[str]:
    return runpy.run_path(str(ROOT / ".ci" / "readme_commands.py"))["setup_commands"]()


def _name(requirement: str) -> str:
    return Requirement(requirement).name.lower().replace("_", "-")


def _installed_by(install: str) -> set[str]:
    """Distribution names a ``pip install -e ".[extra,...]"`` command asks for (the project's
    dependencies plus the named extras, not transitive ones)."""
    words = shlex.split(install)
    assert words[:3] == ["pip", "install", "-e"], f"unexpected install command {install!r}"
    target = words[3]
    match = re.fullmatch(r"\.(?:\[([\w,\s-]+)\])?", target)
    assert match, f"the install command should install this checkout (., .[extra]), got {target!r}"
    extras = [e.strip() for e in (match.group(1) or "").split(",") if e.strip()]
    optional = PYPROJECT["project"].get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    assert not unknown, f"the README installs extras {unknown} that pyproject.toml does not define"
    names = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    for e in extras:
        names |= {_name(r) for r in optional[e]}
    return names


def test_readme_has_exactly_the_install_then_the_test_command():
    commands = _commands()
    assert len(commands) == 2, commands
    install, test = commands
    assert install.startswith("pip install -e "), install
    assert test == "python -m pytest -q", test


def test_install_command_installs_pytest_and_every_plugin_addopts_needs():
    install, _ = _commands()
    names = _installed_by(install)
    assert "pytest" in names, f"{install!r} does not install pytest, which the test command runs"
    addopts = shlex.split(PYPROJECT["tool"]["pytest"]["ini_options"].get("addopts", ""))
    for opt in addopts:
        flag = opt.split("=", 1)[0]
        if flag in PLUGIN_OPTIONS:
            assert PLUGIN_OPTIONS[flag] in names, (
                f"pytest addopts use {flag} (from {PLUGIN_OPTIONS[flag]}), which {install!r} does not install")
    for plugin in re.findall(r"-p\s+(\S+)", " ".join(addopts)):
        assert plugin.startswith("no:") or plugin in sys.modules or plugin.replace("_", "-") in names, plugin


def _third_party_imports() -> set[str]:
    """Top-level modules the test files import that are neither the standard library nor ours."""
    modules = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    # the package, the tests' own helpers and the example scripts some tests import
    local = {"contactlab", "tests", "helpers", "conftest"} | {p.stem for p in (ROOT / "tests").rglob("*.py")} | {
        p.stem for p in (ROOT / "examples").glob("*.py")}
    return {m for m in modules if m not in sys.stdlib_module_names and m not in local}


def test_every_package_the_tests_import_is_installed_by_the_install_command():
    install, _ = _commands()
    names = _installed_by(install)
    provided = md.packages_distributions()
    # what the named distributions pull in as well (numba brings llvmlite, matplotlib brings packaging, ...)
    closure, todo = set(), list(names)
    while todo:
        dist = todo.pop()
        if dist in closure:
            continue
        closure.add(dist)
        try:
            requires = md.requires(dist) or []
        except md.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    missing = {}
    for module in sorted(_third_party_imports()):
        dists = {d.lower().replace("_", "-") for d in provided.get(module, [])}
        if not dists & closure:
            missing[module] = sorted(dists) or ["(not installed here)"]
    assert not missing, f"the tests import modules that {install!r} does not install: {missing}"


def test_ci_runs_the_readme_commands_in_a_fresh_environment():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "-m venv" in ci and "readme_commands.py" in ci
    printed = subprocess.run([sys.executable, str(ROOT / ".ci" / "readme_commands.py")], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    assert printed == _commands()
    assert subprocess.run([sys.executable, "-m", "contactlab.cli", "--help"], capture_output=True).returncode == 0
