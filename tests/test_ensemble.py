"""Ensembles on contactlab's own process pool and in this process: results, failures, resumption.

The reference throughout is the closed form of a head-on impact: a Hertz-Mindlin contact damped
for the restitution ``e`` (solved for in ``contactlab.laws.restitution``) sends the sphere back at
``e`` times its approach speed.  At a time step of 1 % of the stability limit the simulated
rebound converges as dt^2 (relative error 1.2e-4 measured at 1 %, 1e-3 at 3 %), so ``rtol=1e-3``
bounds it.  Equality between executors is bit for bit: the same member runs the same code.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest

import contactlab as cl
from contactlab.ensemble.parameters import make_members, parse_values
from helpers import ensemble_members as em

ROOT = Path(__file__).resolve().parent.parent
E = np.linspace(0.1, 1.0, 10)
RUN = dict(duration=em.IMPACT_DURATION)


@pytest.fixture(scope="module")
def serial_table():
    return cl.ensemble.run(em.impact, {"restitution": E}, em.rebound_velocity, executor="serial", **RUN)


# ---------------------------------------------------------------- parameters
def test_value_ranges_are_numpy_linspace_and_geomspace():
    """Reference: NumPy's linspace/geomspace (ends included) and TOML's reading of each item."""
    assert parse_values("0.2:0.8:7") == np.linspace(0.2, 0.8, 7).tolist()
    assert parse_values("1e6:1e8:3:log") == np.geomspace(1e6, 1e8, 3).tolist()
    assert parse_values("0.1, 0.3,true,glass,\"a,b\",[0, 0, 1]") == [0.1, 0.3, True, "glass", "a,b", [0, 0, 1]]
    assert parse_values("[0, 0, -9.81]") == [[0, 0, -9.81]]
    grid = cl.ensemble.grid(friction=[0.2, 0.5], restitution="0.3:0.9:3")
    assert grid == [{"friction": f, "restitution": e} for f in (0.2, 0.5) for e in np.linspace(0.3, 0.9, 3)]


@pytest.mark.parametrize("text, match", [("0.2:0.8:0", "integer >= 1, got '0'"), ("0.2:0.8:2.5", "integer >= 1"),
                                         ("0:1:3:log", "START > 0"), ("0.1,,0.2", "empty value"),
                                         ("a:b:3", "START:STOP:N")])
def test_bad_value_ranges_are_named(text, match):
    with pytest.raises(cl.InputError, match=match):
        parse_values(text)


def test_seeds_follow_the_parameters_not_the_order():
    """A member's seed and key hash its parameters, replicate and the base seed: reordering the
    list keeps them; replicates and another base seed change them."""
    rows = [{"e": 0.1}, {"e": 0.2}, {"e": 0.3}]
    a, b = make_members(rows), make_members(rows[::-1])
    assert [m.seed for m in a] == [m.seed for m in b][::-1] and [m.key for m in a] == [m.key for m in b][::-1]
    reps = make_members(rows, replicates=3)
    assert len(reps) == 9 and len({m.seed for m in reps}) == 9
    assert [m.seed for m in make_members(rows, seed=1)] != [m.seed for m in a]
    with pytest.raises(cl.InputError, match="repeats parameters"):
        make_members([{"e": 0.1}, {"e": 0.1}])


@pytest.mark.parametrize("kwargs, match", [
    (dict(parameters=[1, 2]), "must be a dict"),
    (dict(parameters=[]), "at least one member"),
    (dict(parameters=[{"status": 1}]), "result table uses"),
    (dict(parameters=[{"e": cl.Material(density=1.0, young=1.0, poisson=0.3)}]), "is not data"),
    (dict(executor="threads"), "executor must be"),
    (dict(executor="serial", workers=2), "sizes contactlab's own"),
    (dict(threads_per_member=0), "threads_per_member must satisfy"),
    (dict(duration=1e-3, steps=10), "at most one of duration"),
    (dict(duration=-1.0), "duration must be > 0"),
    (dict(measure=42), "measure must be"),
    (dict(measure="angle_of_reposee"), "did you mean 'angle_of_repose'"),
    (dict(progress="yes"), "progress must be"),
])
def test_bad_arguments_are_named(kwargs, match):
    args = dict(make_simulation=em.impact, parameters=[{"restitution": 0.5}], measure=em.rebound_velocity,
                executor="serial")
    args.update(kwargs)
    with pytest.raises(cl.InputError, match=match):
        cl.ensemble.run(**args)


def test_functions_that_worker_processes_cannot_import_are_refused():
    """A lambda cannot be sent to a spawned process: refused before any process starts, with the fix."""
    with pytest.raises(cl.InputError, match="top level of a module.*executor='serial'"):
        cl.ensemble.run(lambda restitution: em.impact(restitution), {"restitution": [0.5]}, em.rebound_velocity,
                        workers=2, **RUN)
    with pytest.raises(cl.InputError, match="measure 'v'"):
        cl.ensemble.run(em.impact, {"restitution": [0.5]}, {"v": lambda sim: 0.0}, workers=2, **RUN)


# ---------------------------------------------------------------- results
def test_impact_ensemble_gives_the_closed_form_restitution(serial_table):
    t = serial_table
    assert list(t.restitution) == E.tolist() and (t.status == "ok").all() and (t.error == "").all()
    np.testing.assert_allclose(t.rebound_velocity / em.SPEED, E, rtol=1e-3)
    assert t.attrs["parameters"] == ["restitution"] and t.attrs["measures"] == ["rebound_velocity"]
    assert (t.wall_seconds >= t.run_seconds).all() and (t.attempts == 1).all() and not t.resumed.any()


def test_process_pool_is_bit_identical_and_compiles_nothing(serial_table):
    """Two worker processes give the serial results bit for bit; the kernels the serial run put in
    the on-disk cache are loaded, never compiled again, by every worker (Numba's compile events)."""
    t = cl.ensemble.run(em.impact, {"restitution": E}, [em.rebound_velocity, em.threads_now], workers=2, **RUN)
    assert (t.status == "ok").all()
    assert (t.threads_now == 1).all()   # threads_per_member=1 (the default) in every worker
    np.testing.assert_array_equal(t.rebound_velocity.to_numpy(), serial_table.rebound_velocity.to_numpy())
    np.testing.assert_array_equal(t.seed.to_numpy(), serial_table.seed.to_numpy())
    assert (t.compiled == 0).all(), t[["compiled", "worker"]]
    pids = {int(w.rsplit(":", 1)[1]) for w in t.worker}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert t.attrs["slots"] == 2 and t.attrs["executor"] == "local processes (2)"


class _SiteJob:
    """A job of a site's own executor (as submitit's): done() and result(), not a standard future."""

    def __init__(self, value):
        self._value = value

    def done(self):
        return True

    def result(self):
        return self._value


class _SiteExecutor:
    def submit(self, fn, *args):
        return _SiteJob(fn(*args))


def test_an_executor_with_its_own_futures_is_polled(serial_table):
    t = cl.ensemble.run(em.impact, {"restitution": E[:3]}, em.rebound_velocity, executor=_SiteExecutor(), **RUN)
    assert t.attrs["executor"] == "_SiteExecutor" and (t.status == "ok").all()
    np.testing.assert_array_equal(t.rebound_velocity.to_numpy(), serial_table.rebound_velocity[:3].to_numpy())


def test_each_member_runs_on_its_threads():
    """threads_per_member is Numba's thread count inside each member, restored afterwards (in the
    workers: test_process_pool_is_bit_identical_and_compiles_nothing)."""
    before = numba.get_num_threads()
    want = min(2, numba.config.NUMBA_NUM_THREADS)
    t = cl.ensemble.run(em.impact, {"restitution": [0.5]}, em.threads_now, executor="serial",
                        threads_per_member=2, **RUN)
    assert t.threads_now[0] == want and numba.get_num_threads() == before


def test_array_measures_stack_and_a_member_runs_again_alone(serial_table):
    """An array measure is one array per row; member_parameters + run_member rerun one member as
    the ensemble ran it, bit for bit."""
    t = cl.ensemble.run(em.impact, {"restitution": E[:3]}, {"velocity": em.rebound_velocity,
                                                             "v": lambda sim: sim.velocities[0]},
                        executor="serial", **RUN)
    v = cl.ensemble.stack(t, "v")
    assert v.shape == (3, 3)
    np.testing.assert_array_equal(v[:, 2], serial_table.rebound_velocity[:3])
    params, seed = cl.ensemble.member_parameters(t, 2)
    assert params == {"restitution": E[2]} and seed == t.seed[2]
    sim, values = cl.ensemble.run_member(em.impact, em.rebound_velocity, params, seed=seed, **RUN)
    assert values["rebound_velocity"] == serial_table.rebound_velocity[2] and sim.n_contacts() == 0


# ---------------------------------------------------------------- failures
def test_a_member_error_is_recorded_and_the_others_finish(serial_table):
    t = cl.ensemble.run(em.impact_or_raise, {"restitution": [E[4], 1.0, E[2]]}, em.rebound_velocity,
                        executor="serial", **RUN)
    assert list(t.status) == ["ok", "failed", "ok"]
    assert t.error[1] == "ValueError: no simulation for restitution 1.0 in this test"
    assert np.isnan(t.rebound_velocity[1]) and t.attempts[1] == 1
    assert t.rebound_velocity[0] == serial_table.rebound_velocity[4]


def test_killed_workers_leave_members_retried_or_failed_and_the_others_intact(tmp_path, serial_table):
    """Member 1 kills its worker process the first time it runs (SIGKILL, as the out-of-memory
    killer would), member 2 every time.  The pool breaks and is recreated; the members that were in
    flight run again alone: member 1 then finishes, member 2 kills its lone process twice more and is
    marked failed (retries=1); every member ends with the serial run's result."""
    marker = tmp_path / "killed-once"
    params = [{"restitution": e, "marker": str(marker) if k == 1 else "", "always": k == 2}
              for k, e in enumerate(E[:4])]
    t = cl.ensemble.run(em.impact_or_die, params, em.rebound_velocity, workers=2, retries=1, **RUN)
    assert marker.exists()
    assert list(t.status) == ["ok", "ok", "failed", "ok"], t[["status", "error"]]
    # member 1 ran twice, or three times when member 2 broke the pool before member 1 had started
    # (it then killed its first, lone, process)
    assert t.attempts[0] == 1 and t.attempts[1] in (2, 3) and t.attempts[3] == 1
    assert "worker process died" in t.error[2] and "2 time(s) when it ran alone" in t.error[2]
    assert t.attempts[2] == 3   # once in the pool, twice alone
    assert np.isnan(t.rebound_velocity[2])
    np.testing.assert_array_equal(t.rebound_velocity[[0, 1, 3]], serial_table.rebound_velocity[[0, 1, 3]])


# ---------------------------------------------------------------- progress and checkpoints
def test_progress_counts_members(capsys):
    seen = []
    cl.ensemble.run(em.impact_or_raise, {"restitution": [0.5, 1.0]}, em.rebound_velocity, executor="serial",
                    progress=seen.append, **RUN)
    assert seen[-1]["final"] and seen[-1]["done"] == 2 and seen[-1]["failed"] == 1 and seen[-1]["total"] == 2
    cl.ensemble.run(em.impact, {"restitution": [0.5]}, em.rebound_velocity, executor="serial", progress=True, **RUN)
    assert "1/1 done  0 running  0 failed" in capsys.readouterr().err


_JOB = """
import sys
import contactlab as cl
from helpers import ensemble_members as em
cl.ensemble.run(em.slow_impact, [{{"restitution": e, "pause": 0.5}} for e in {es}], em.rebound_velocity,
                executor="serial", duration={duration!r}, checkpoint={folder!r})
"""


def test_a_killed_job_resumes_with_the_unfinished_members_only(tmp_path, serial_table):
    """A job killed mid-way (SIGKILL) keeps the members it finished; the same call again runs the
    others only, and the table equals an uninterrupted run bit for bit."""
    folder = tmp_path / "ckpt"
    es = E[:6].tolist()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]))
    job = subprocess.Popen([sys.executable, "-c", _JOB.format(es=es, duration=em.IMPACT_DURATION, folder=str(folder))],
                           env=env)
    deadline = time.monotonic() + 120
    while len(list((folder / "members").glob("*.json"))) < 2 and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.05)
    job.kill()
    job.wait()
    done_before = len(list((folder / "members").glob("*.json")))
    assert 2 <= done_before < 6
    ran = []
    t = cl.ensemble.run(em.slow_impact, [{"restitution": e, "pause": 0.5} for e in es], em.rebound_velocity,
                        executor="serial", checkpoint=folder, progress=ran.append, **RUN)
    assert int(t.resumed.sum()) == done_before and ran[-1]["resumed"] == done_before
    assert (t.status == "ok").all()
    np.testing.assert_array_equal(t.rebound_velocity, serial_table.rebound_velocity[:6])
    assert len(list((folder / "members").glob("*.json"))) == 6
    # another ensemble in the same folder is refused, not mixed in
    with pytest.raises(cl.CheckpointError, match="holds another ensemble"):
        cl.ensemble.run(em.slow_impact, [{"restitution": 0.5}], em.threads_now, executor="serial",
                        checkpoint=folder, **RUN)
    manifest = json.loads((folder / "ensemble.json").read_text())
    assert manifest["make_simulation"] == "helpers.ensemble_members.slow_impact"


def test_failed_members_are_kept_unless_asked_to_retry(tmp_path):
    folder = tmp_path / "ckpt"
    args = (em.impact_or_raise, {"restitution": [0.5, 1.0]}, em.rebound_velocity)
    first = cl.ensemble.run(*args, executor="serial", checkpoint=folder, **RUN)
    again = cl.ensemble.run(*args, executor="serial", checkpoint=folder, **RUN)
    assert again.resumed.all() and list(again.status) == ["ok", "failed"] and again.error[1] == first.error[1]
    retried = cl.ensemble.run(*args, executor="serial", checkpoint=folder, retry_failed=True, **RUN)
    assert list(retried.resumed) == [True, False] and retried.status[1] == "failed"
