"""An ensemble's parameters: names that ``make_simulation`` cannot take are refused before any
member starts, and NumPy values reach the member as NumPy values.

The members here build nothing (``make_simulation`` records what it was given and returns a
stand-in; with neither ``duration`` nor ``steps`` the runner measures what it returned), so the
file takes a fraction of a second.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import contactlab as cl
from contactlab.ensemble.parameters import canonical_json, make_members
from contactlab.ensemble.store import decode_record
from contactlab.ensemble.sweep import _toml_data

RECEIVED: list[dict] = []


class StandIn:
    """What the members' make_simulation returns: nothing to run."""


def record(x, y=0.0, *, label="a"):
    RECEIVED.append({"x": x, "y": y, "label": label})
    return StandIn()


def seeded(x, seed):
    RECEIVED.append({"x": x, "seed": seed})
    return StandIn()


def positional(x, /):
    RECEIVED.append({"x": x})
    return StandIn()


def anything(**parameters):
    RECEIVED.append(dict(parameters))
    return StandIn()


class CallableMember:
    """A make_simulation object (as SceneFile is): its __call__'s signature is checked."""

    def __call__(self, friction, restitution=0.5):
        RECEIVED.append({"friction": friction, "restitution": restitution})
        return StandIn()


def measured(sim):
    return {"members_so_far": len(RECEIVED)}


@pytest.fixture(autouse=True)
def _fresh():
    RECEIVED.clear()
    yield
    RECEIVED.clear()


SERIAL = dict(executor="serial")


@dataclass(frozen=True)
class Case:
    """``call(tmp)`` must raise ``error`` with a message matching ``message`` (a regex), with no
    member started and no checkpoint folder made."""

    name: str
    call: Callable
    error: type
    message: str


P = cl.InputError
SIGNATURE = r"make_simulation record\(x, y=0\.0, \*, label='a'\)"
NAMES = [
    Case("misspelt parameter",
         lambda tmp: cl.ensemble.run(record, [{"xx": 1.0}], measured, checkpoint=tmp / "ck", **SERIAL), P,
         r"parameters\[0\] gives 'xx' \(did you mean 'x'\?\), which " + SIGNATURE + r" does not take \(every member "
         r"would fail with a TypeError\); its parameters: x, y, label"),
    Case("misspelt grid axis",
         lambda tmp: cl.ensemble.run(record, {"x": [1.0, 2.0], "lable": ["b"]}, measured, checkpoint=tmp / "ck",
                                     **SERIAL), P, r"parameters\[0\] gives 'lable' \(did you mean 'label'\?\)"),
    Case("unknown name in a later member",
         lambda tmp: cl.ensemble.run(record, [{"x": 1.0}, {"x": 2.0, "z": 3.0}], measured, checkpoint=tmp / "ck",
                                     **SERIAL), P, r"parameters\[1\] gives 'z', which " + SIGNATURE),
    Case("missing required parameter",
         lambda tmp: cl.ensemble.run(record, [{"y": 1.0}], measured, checkpoint=tmp / "ck", **SERIAL), P,
         r"parameters\[0\] lacks 'x', which " + SIGNATURE + r" requires .*; given: y"),
    Case("seed to a function without one",
         lambda tmp: cl.ensemble.run(record, [{"x": 1.0, "seed": 3}], measured, **SERIAL), P,
         r"parameters\[0\] gives 'seed', which " + SIGNATURE + " does not take"),
    Case("positional-only parameter",
         lambda tmp: cl.ensemble.run(positional, [{"x": 1.0}], measured, **SERIAL), P,
         r"gives 'x', which make_simulation positional\(x, /\) does not take"),
    Case("callable object misspelt",
         lambda tmp: cl.ensemble.run(CallableMember(), [{"fricton": 0.3}], measured, **SERIAL), P,
         r"gives 'fricton' \(did you mean 'friction'\?\), which make_simulation CallableMember"
         r"\(friction, restitution=0\.5\)"),
    Case("run_member misspelt",
         lambda tmp: cl.ensemble.run_member(record, measured, {"x": 1.0, "lable": "b"}), P,
         r"gives 'lable' \(did you mean 'label'\?\)"),
    Case("calibrate misspelt",
         lambda tmp: cl.calibrate(record, measured, {"members_so_far": 1.0}, {"xs": (0.0, 1.0)},
                                  checkpoint=tmp / "ck", **SERIAL), P,
         r"gives 'xs' \(did you mean 'x'\?\), which " + SIGNATURE),
]


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c.name)
def test_names_make_simulation_cannot_take_are_refused_before_any_member_starts(case, tmp_path):
    with pytest.raises(case.error, match=case.message):
        case.call(tmp_path)
    assert RECEIVED == [] and not (tmp_path / "ck").exists()


@pytest.mark.parametrize("make_simulation, parameters, expected", [
    (anything, [{"anything.at.all": 1.0}], [{"anything.at.all": 1.0}]),                  # **kwargs: not checked
    (seeded, [{"x": 1.0}], None),                                                       # the runner gives the seed
    (CallableMember(), [{"friction": 0.3}], [{"friction": 0.3, "restitution": 0.5}]),
    (record, {"x": [1.0], "label": ["b"]}, [{"x": 1.0, "y": 0.0, "label": "b"}]),
], ids=["kwargs", "seed", "callable object", "grid"])
def test_names_make_simulation_takes_run(make_simulation, parameters, expected):
    table = cl.ensemble.run(make_simulation, parameters, measured, **SERIAL)
    assert (table.status == "ok").all(), table.error.tolist()
    if expected is None:
        assert RECEIVED == [{"x": 1.0, "seed": int(table.seed[0])}]
    else:
        assert RECEIVED == expected


# ------------------------------------------------------------------------------------------------ NumPy values
def _same(given, got) -> bool:
    """``got`` is ``given`` as a member should receive it: the same types all the way down, an
    array of the same dtype, shape and values (a copy), a NumPy scalar of the same dtype."""
    if type(got) is not type(given):
        return False
    if isinstance(given, np.ndarray):
        return got is not given and got.dtype == given.dtype and got.shape == given.shape and \
            np.array_equal(got, given)
    if isinstance(given, np.generic):
        return got.dtype == given.dtype and got == given
    if isinstance(given, (list, tuple)):
        return len(got) == len(given) and all(_same(a, b) for a, b in zip(given, got))
    if isinstance(given, dict):
        return got.keys() == given.keys() and all(_same(given[k], got[k]) for k in given)
    return got == given


VALUES = [
    ("float32 vector", np.array([0.1, 0.2, 0.3], dtype=np.float32)),
    ("int16 matrix", np.arange(6, dtype=np.int16).reshape(2, 3)),
    ("unsigned 3-D", np.arange(8, dtype=np.uint8).reshape(2, 2, 2)),
    ("bool array", np.array([True, False])),
    ("text array", np.array(["glass", "steel"])),
    ("0-d array", np.array(2.5)),
    ("empty array", np.zeros((0, 3))),
    ("float32 scalar", np.float32(0.3)),
    ("int64 scalar", np.int64(7)),
    ("bool scalar", np.bool_(True)),
    ("list of arrays", [np.zeros(2), np.ones(3, dtype=np.int32)]),
    ("dict of an array", {"gravity": np.array([0.0, 0.0, -9.81]), "name": "moon"}),
    ("tuple of scalars", (np.float64(1.5), np.int8(2))),
    ("plain float", 0.25),
    ("plain list", [1, 2.5, "a"]),
]


@pytest.mark.parametrize("value", [v for _, v in VALUES], ids=[n for n, _ in VALUES])
def test_numpy_values_reach_the_member_as_given(value):
    table = cl.ensemble.run(record, [{"x": value}], measured, **SERIAL)
    assert (table.status == "ok").all(), table.error.tolist()
    assert len(RECEIVED) == 1 and _same(value, RECEIVED[0]["x"]), (value, RECEIVED[0]["x"])


def test_a_grid_of_an_array_axis_gives_numpy_scalars_of_its_dtype():
    axis = np.array([0.1, 0.7], dtype=np.float32)
    cl.ensemble.run(record, {"x": axis}, measured, **SERIAL)
    assert [type(r["x"]) for r in RECEIVED] == [np.float32, np.float32]
    assert [r["x"] for r in RECEIVED] == list(axis)


def test_keys_tell_an_array_from_the_list_of_its_values():
    """An array and the list of its values are two members (different keys and seeds); a NumPy
    scalar and its Python number are one (refused as a repeat, as two equal floats are)."""
    a, b = make_members([{"x": np.array([1.0, 2.0])}, {"x": [1.0, 2.0]}])
    assert a.key != b.key and a.seed != b.seed
    f32, f64 = make_members([{"x": np.array([0.5], dtype=np.float32)}, {"x": np.array([0.5])}])
    assert f32.key != f64.key
    assert json.loads(canonical_json(a.parameters)) == {"x": {"__ndarray__": [1.0, 2.0], "dtype": "<f8",
                                                              "shape": [2]}}
    with pytest.raises(cl.InputError, match="repeats parameters"):
        make_members([{"x": np.float64(0.3)}, {"x": 0.3}])
    with pytest.raises(cl.InputError, match="repeats parameters"):
        make_members([{"x": np.int64(3)}, {"x": 3}])
    explicit = make_members([{"x": 1.0, "seed": np.int64(11)}])[0]
    assert explicit.seed == 11


def test_a_resumed_ensemble_keeps_array_parameters(tmp_path):
    """The checkpoint folder's records hold array parameters with their dtype and shape; a rerun
    takes every member from the folder."""
    grid = [{"x": np.arange(4, dtype=np.int32).reshape(2, 2)}, {"x": np.array([0.5, 1.5], dtype=np.float32)}]
    first = cl.ensemble.run(record, grid, measured, checkpoint=tmp_path / "ck", **SERIAL)
    assert (first.status == "ok").all() and len(RECEIVED) == 2
    again = cl.ensemble.run(record, grid, measured, checkpoint=tmp_path / "ck", **SERIAL)
    assert again.resumed.all() and len(RECEIVED) == 2
    stored = sorted((decode_record(p.read_bytes()) for p in (tmp_path / "ck" / "members").glob("*.json")),
                    key=lambda r: r["index"])
    for given, rec in zip(grid, stored):
        assert _same(given["x"], rec["parameters"]["x"])


P_VALUE = [
    ("object array", np.array([object(), 1], dtype=object), r"'x' of member 0 is an array of dtype object"),
    ("NaN in an array", np.array([1.0, math.nan]), r"'x' of member 0 must be finite, got an array with 1 non-finite"),
    ("complex array", np.array([1j]), r"is an array of dtype complex128"),
    ("inf scalar", np.float32(np.inf), r"'x' of member 0 must be finite, got np\.float32\(inf\)|must be finite, got inf"),
    ("array in a dict with NaN", {"g": np.array([math.nan])}, r"'x' of member 0\['g'\] must be finite"),
    ("a Material", cl.Material(density=1.0, young=1.0, poisson=0.3), r"is not data"),
]


@pytest.mark.parametrize("value, message", [(v, m) for _, v, m in P_VALUE], ids=[n for n, _, _ in P_VALUE])
def test_values_that_are_not_data_are_refused(value, message):
    with pytest.raises(cl.InputError, match=message):
        cl.ensemble.run(record, [{"x": value}], measured, **SERIAL)
    assert RECEIVED == []


@pytest.mark.parametrize("value, expected", [
    (np.float32(0.5), 0.5), (np.int64(3), 3), (np.bool_(True), True), (np.array([1, 2]), [1, 2]),
    ((np.float64(1.0), 2), [1.0, 2]), ({"a": np.array([[0.5]])}, {"a": [[0.5]]}), ("glass", "glass"),
])
def test_a_scene_files_overrides_are_toml_data(value, expected):
    """SceneFile hands NumPy values to the scene file as a TOML file would hold them (Python
    numbers and lists), so the file's own checks read them as they read the file."""
    got = _toml_data(value)
    assert got == expected and type(got) is type(expected)
    assert not any(isinstance(v, np.generic) for v in _flatten(got))


def _flatten(value) -> list[Any]:
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    return [value]
