"""A real (standalone) Spark cluster: master + one worker from the installed pyspark, on 127.0.0.1.

The sweep's results must not depend on where it runs: the same spec on the
cluster and in this process without Spark gives the same rows, run for run; and
the Spark BFS on the cluster equals the sequential search.  The master and the worker are
started with the pyspark package's ``spark-class`` on free ports and stopped
(their process groups) in a ``finally``.  One test starts one cluster for both
workloads: its JVMs' start-up is most of the cost (two clusters took 81.5
CPU-s, one 49.0, session 27).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from test_parallel_search import _spark_equals_local

from keos.checker.sweep import campaign as sweep
from keos.checker.sweep.campaign import plan_sweep, read_runs, run_sweep

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as fh:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: stopping it stops its executors too
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as resp:
            data = json.load(resp)
    except OSError:
        return 0
    return int(data.get("aliveworkers", 0))


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp_path / "logs"),
        SPARK_WORKER_DIR=str(tmp_path / "work"),
        PYSPARK_PYTHON=sys.executable,
    )
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                ],
                tmp_path / "master.log",
                env,
            )
        )
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "2",
                    "--memory",
                    "1g",
                    "--webui-port",
                    str(worker_ui),
                    "--work-dir",
                    str(tmp_path / "work"),
                ],
                tmp_path / "worker.log",
                env,
            )
        )
        deadline = time.monotonic() + 60
        while _alive_workers(ui) < 1:
            for p in procs:
                assert p.poll() is None, (tmp_path / "master.log").read_text() + (tmp_path / "worker.log").read_text()
            assert time.monotonic() < deadline, "the worker did not register with the master within 60s"
            time.sleep(0.5)
        yield master_url
    finally:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None and active.sparkContext.master == master_url:
            active.stop()
        for p in reversed(procs):
            _stop(p)


def test_sweep_and_spark_bfs_on_a_standalone_cluster_equal_local(standalone_cluster: str, tmp_path: Path) -> None:
    """Both Spark workloads on one cluster (its master, worker and executor JVMs are most of the cost): the
    sweep's rows equal those of the same sweep without Spark, run for run, then the Spark BFS (``keos explore
    --engine spark``) on the same session equals the sequential search
    (``test_parallel_search._spark_equals_local``)."""
    spec = plan_sweep(["idempotence_retry"], ["no_idempotence", "kafka"], runs=100, steps=30, seed=11, chunk_runs=150)
    cluster = run_sweep(spec, tmp_path / "cluster", master=standalone_cluster, partitions=3)
    spark = sweep.spark_session(standalone_cluster)
    assert spark.sparkContext.master == standalone_cluster
    # the level-synchronous Spark BFS on the sweep's session
    (tmp_path / "bfs").mkdir()
    _spark_equals_local(standalone_cluster, tmp_path / "bfs")
    # the reference runs in this process without Spark (``--local-python``), not on a second, local[*] Spark
    # context: tests/test_sweep.py::test_spark_results_do_not_depend_on_partitioning shows those rows equal
    # local[2]'s, run for run
    local = run_sweep(spec, tmp_path / "local", local_python=True)
    cols = ["run", "run_id", "seed", "fault_weights", "steps", "violation", "signature", "trace_actions", "events"]
    cluster_rows = read_runs(tmp_path / "cluster").select(cols).to_pylist()
    assert cluster_rows == read_runs(tmp_path / "local").select(cols).to_pylist()
    assert len(cluster_rows) == 200
    assert cluster.violating_runs == local.violating_runs > 0
    assert [(s.signature, s.count) for s in cluster.signatures] == [(s.signature, s.count) for s in local.signatures]
