"""Spark Connect: a sweep against ``sc://127.0.0.1:PORT`` equals the same sweep run without Spark.

Spark Connect (Spark 3.4+) splits the client from the driver: the client
sends unresolved plans over gRPC, the server (``SparkConnectServer``, a
``spark-submit`` application) runs them.  The sweep uses only the DataFrame
API (``spark.range`` -> ``mapInArrow`` -> ``toArrow``), so the same code must
give the same rows, run for run, on both.  The server is started from the
installed pyspark package on a free port of 127.0.0.1, with this interpreter
as its Python worker (so its executors import this keos), its logs in a
temporary directory, and is stopped (its process group) in a ``finally``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from keos.checker.sweep.campaign import plan_sweep, read_runs, run_sweep, spark_session

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).parent
REPO = Path(__file__).resolve().parent.parent
SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture
def connect_server(tmp_path: Path) -> Iterator[str]:
    """A Spark Connect server (local[2] inside) on a free port; yields its ``sc://`` URL."""
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (grpcio)")
    port = _free_port()
    log = tmp_path / "connect-server.log"
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp_path / "logs"),
        PYSPARK_PYTHON=sys.executable,  # the server's Python workers import this keos
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
    )
    cmd = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        "--class",
        SERVER,
        "--master",
        "local[2]",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        f"spark.pyspark.python={sys.executable}",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--conf",
        f"spark.local.dir={tmp_path / 'local'}",
    ]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _accepts(port):
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the Spark Connect server did not listen within 60s"
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        from keos.checker.sweep import campaign as sweep

        session = sweep._CONNECT_SESSIONS.pop(f"sc://127.0.0.1:{port}", None)
        if session is not None:
            session.stop()
        _stop(proc)


def test_sweep_over_spark_connect_equals_local(connect_server: str, tmp_path: Path) -> None:
    spec = plan_sweep(["idempotence_retry"], ["no_idempotence", "kafka"], runs=100, steps=30, seed=11, chunk_runs=70)
    remote = run_sweep(spec, tmp_path / "connect", master=connect_server, partitions=3)
    session = spark_session(connect_server)
    assert type(session).__module__.startswith("pyspark.sql.connect")  # really a Connect client
    # the reference runs in this process without Spark (``--local-python``): a classic local[*] session would start
    # a second JVM for rows that tests/test_sweep.py::test_spark_results_do_not_depend_on_partitioning already
    # shows equal local[2]'s, run for run
    local = run_sweep(spec, tmp_path / "local", local_python=True)
    remote_rows = read_runs(tmp_path / "connect").to_pylist()
    assert len(remote_rows) == 200 and remote.master == connect_server
    assert remote_rows == read_runs(tmp_path / "local").to_pylist()
    assert sorted(p.name for p in (tmp_path / "connect" / "runs").iterdir()) == [
        f"part-{k:05d}.parquet" for k in range(spec.chunks)
    ]
    assert remote.violating_runs == local.violating_runs > 0
    assert [(s.signature, s.count, s.shape) for s in remote.signatures] == [
        (s.signature, s.count, s.shape) for s in local.signatures
    ]
    assert remote.exit_code == local.exit_code == 1
