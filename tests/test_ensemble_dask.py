"""Ensembles on a real Dask cluster: a LocalCluster of two worker processes (one thread each),
started once for this module.

References: the closed-form restitution of the impact (as in test_ensemble.py: the rebound is
``e`` times the approach speed within 1e-3 at dt = 1 % of the stability limit) and the serial run
of the same members, which the cluster must reproduce bit for bit.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import contactlab as cl
from contactlab.cli import main
from helpers import ensemble_members as em

E = np.linspace(0.1, 1.0, 10)
RUN = dict(duration=em.IMPACT_DURATION)


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def serial_table():
    return cl.ensemble.run(em.impact, {"restitution": E}, em.rebound_velocity, executor="serial", **RUN)


def test_dask_cluster_gives_the_serial_results_bit_for_bit(client, serial_table):
    t = cl.ensemble.run(em.impact, {"restitution": E}, [em.rebound_velocity, em.threads_now], executor=client, **RUN)
    assert (t.status == "ok").all(), t[["status", "error"]]
    np.testing.assert_allclose(t.rebound_velocity / em.SPEED, E, rtol=1e-3)
    np.testing.assert_array_equal(t.rebound_velocity.to_numpy(), serial_table.rebound_velocity.to_numpy())
    assert (t.threads_now == 1).all() and (t.compiled == 0).all()
    assert t.attrs["executor"].startswith("dask tcp://") and t.attrs["slots"] == 2
    # the cluster's concurrent.futures face works as any executor does
    t2 = cl.ensemble.run(em.impact, {"restitution": E[:3]}, em.rebound_velocity,
                         executor=client.get_executor(pure=False), **RUN)
    np.testing.assert_array_equal(t2.rebound_velocity.to_numpy(), serial_table.rebound_velocity[:3].to_numpy())


def test_dask_reruns_the_member_of_a_killed_worker(client, tmp_path, serial_table):
    """Member 1 kills its Dask worker process the first time it runs: the nanny restarts the
    worker, the scheduler runs the member again, and every member ends with the serial result."""
    marker = tmp_path / "killed-once"
    params = [{"restitution": e, "marker": str(marker) if k == 1 else ""} for k, e in enumerate(E[:4])]
    t = cl.ensemble.run(em.impact_or_die, params, em.rebound_velocity, executor=client, **RUN)
    assert marker.exists()
    assert (t.status == "ok").all(), t[["status", "error"]]
    np.testing.assert_array_equal(t.rebound_velocity.to_numpy(), serial_table.rebound_velocity[:4].to_numpy())


def test_sweep_command_on_the_cluster(client, tmp_path, serial_table):
    """``contactlab sweep --scheduler ADDRESS`` on a scene file equal to the impact member: the
    same numbers as the Python members, written as CSV and as Parquet."""
    dt = min(em.impact(e).dt for e in (0.3, 0.6))
    scene = tmp_path / "impact.toml"
    scene.write_text(f"""
[simulation]
gravity = [0.0, 0.0, 0.0]
dt = {dt!r}
duration = {em.IMPACT_DURATION!r}

[materials.steel]
density = {em.STEEL['density']!r}
young = {em.STEEL['young']!r}
poisson = {em.STEEL['poisson']!r}

[model]
type = "HertzMindlin"
restitution = 0.5
friction = 0.0

[[sphere]]
position = [0.0, 0.0, {em.RADIUS + em.GAP!r}]
radius = {em.RADIUS!r}
velocity = [0.0, 0.0, {-em.SPEED!r}]
material = "steel"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "steel"
""")
    out = tmp_path / "results.csv"
    code = main(["sweep", str(scene), "--param", "model.restitution=0.3,0.6", "--measure",
                 "helpers.ensemble_members:rebound_velocity", "--measure", "contacts", "--scheduler",
                 client.scheduler.address, "--out", str(out), "--quiet"])
    assert code == 0
    table = pd.read_csv(out, index_col="member")
    assert list(table["model.restitution"]) == [0.3, 0.6] and (table["status"] == "ok").all()
    assert (table["contacts"] == 0).all()
    np.testing.assert_allclose(table["rebound_velocity"] / em.SPEED, [0.3, 0.6], rtol=1e-3)
    parquet = tmp_path / "results.parquet"
    assert main(["sweep", str(scene), "--param", "model.restitution=0.3,0.6", "--measure",
                 "helpers.ensemble_members:rebound_velocity", "--serial", "--out", str(parquet), "--quiet"]) == 0
    # the same numbers (CSV text read back by pandas < 3's fast float parser may differ in the last bit)
    np.testing.assert_allclose(pd.read_parquet(parquet)["rebound_velocity"].to_numpy(),
                               table["rebound_velocity"].to_numpy(), rtol=1e-15, atol=0)
