"""Start real Apache Kafka (KRaft) on 127.0.0.1: one combined node or a three-node quorum.

Kafka since 3.3 runs without ZooKeeper (KIP-500, KIP-833): every node is a
*broker*, a *controller* (a voter of the ``__cluster_metadata`` Raft quorum,
KIP-595/KIP-631) or both (``process.roles=broker,controller``).  Before its first
start a node's log directory is *formatted* with the cluster id
(``kafka.tools.StorageTool format``, ``core/src/main/scala/kafka/tools/StorageTool.scala``);
every node of a cluster must be formatted with the same id.  keos runs each node
as broker and controller, with ``controller.quorum.voters`` listing every node
(a static quorum), exactly as Kafka's quickstart does for a combined node.

The distribution is found like Kafka's own scripts find their jars
(``$KAFKA_HOME/libs/*``): ``--kafka-home``, else ``$KAFKA_HOME``, else
``../shared/kafka`` next to the repository or the working directory.  Any
official ``kafka_2.13-*.tgz`` unpacked anywhere has the same layout.  Java comes
from ``$JAVA_HOME/bin/java`` or ``PATH``.

A node is *ready* when a transactional ``InitProducerId`` (KIP-98) succeeds: that
needs the broker registered with the controller, ``__transaction_state`` created
with its replication factor and the transaction coordinator loaded
(``TransactionStateManager.scala``).  Until then the broker answers
``COORDINATOR_LOAD_IN_PROGRESS`` / ``NOT_COORDINATOR`` and clients retry.

Every process is started in its own session (so a terminal's Ctrl-C reaches only
keos, which then kills it) and killed with SIGKILL on :meth:`KafkaCluster.stop`;
the run directory (storage, configs, logs unless ``log_dir`` is given) is
removed.  :meth:`stop` also runs from ``atexit`` and on SIGTERM/SIGHUP, so an
exception, Ctrl-C or a ``kill`` of keos leaves no JVM and no directory behind.
Faults per node: :meth:`kill` (``kill -9``), :meth:`restart`, :meth:`pause`
(SIGSTOP) and :meth:`resume` (SIGCONT).  With ``proxied=True`` each broker
advertises a :class:`keos.checker.conform.proxy.Proxy` in front of it, so every
client connection crosses a proxy keos can reset or make drop answers.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ..proxy import Proxy
from . import TargetUnavailable

__all__ = [
    "KafkaCluster",
    "KafkaNode",
    "KafkaUnavailable",
    "default_broker_properties",
    "find_java",
    "kafka_version",
    "process_state",
    "resolve_kafka_home",
]


class KafkaUnavailable(TargetUnavailable):
    """No Kafka distribution, no ``java``, or a node that would not start; ``keos`` maps it to exit 2."""


def resolve_kafka_home(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The Kafka distribution: ``explicit``, else ``$KAFKA_HOME``, else ``../shared/kafka`` when present.

    ``../shared/kafka`` (then ``../../shared/kafka``, for a git worktree) is tried
    relative to the working directory and to the repository holding this file.  A
    directory without ``libs/kafka*.jar`` is not a distribution.
    """
    tried: list[str] = []
    candidates: list[tuple[str, Path]] = []
    if explicit:
        candidates.append(("--kafka-home", Path(explicit)))
    elif os.environ.get("KAFKA_HOME"):
        candidates.append(("KAFKA_HOME", Path(os.environ["KAFKA_HOME"])))
    else:
        here = Path(__file__).resolve()
        repo = here.parents[3]  # checker/conform/targets/kafka_broker.py -> repository root
        seen: set[Path] = set()
        for base in (cwd or Path.cwd(), repo):
            # ../shared/kafka beside the clone; a git worktree one level deeper finds ../../shared/kafka
            for up in (base.parent, base.parent.parent):
                if up not in seen:
                    seen.add(up)
                    candidates.append(("shared/kafka", up / "shared" / "kafka"))
    for source, path in candidates:
        libs = path / "libs"
        if libs.is_dir() and any(libs.glob("kafka*.jar")):
            return path.resolve()
        tried.append(f"{source}={path}")
    raise KafkaUnavailable(
        "no Kafka distribution found (" + "; ".join(tried) + "): pass --kafka-home DIR or set KAFKA_HOME "
        "to an unpacked kafka_2.13-*.tgz (a directory with libs/kafka*.jar)"
    )


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` or ``java`` on ``PATH`` (Kafka 4.0 brokers need Java 17)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        p = Path(home) / "bin" / "java"
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    found = shutil.which("java")
    if not found:
        raise KafkaUnavailable("java not found (install Java 17 or set JAVA_HOME): real Kafka brokers need a JVM")
    return found


def kafka_version(home: Path) -> str:
    """The version in the broker jar's name (``kafka_2.13-4.0.0.jar`` or ``kafka-core-4.0.0-SNAPSHOT.jar``)."""
    for pattern, prefix in (
        ("kafka_2.*-*.jar", "kafka_2."),
        ("kafka-core-*.jar", "kafka-core-"),
        ("kafka-clients-*.jar", "kafka-clients-"),
    ):
        for jar in sorted((home / "libs").glob(pattern)):
            stem = jar.stem
            if any(stem.endswith(s) for s in ("-sources", "-javadoc", "-test", "-test-sources")):
                continue
            rest = stem[len(prefix) :]
            return rest.split("-", 1)[1] if prefix == "kafka_2." else rest
    return "unknown"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def default_broker_properties(nodes: int) -> dict[str, str]:
    """Broker settings for a small loopback cluster (every value overridable).

    Replication as Kafka recommends for durability on three nodes (RF 3,
    ``min.insync.replicas`` 2); fewer internal-topic partitions than Kafka's 50 so
    a node starts in seconds.  ``transaction.state.log.min.isr`` is Kafka's own
    default capped by the node count.
    """
    rf = min(nodes, 3)
    isr = 2 if nodes >= 3 else 1
    return {
        "num.partitions": "3",
        "default.replication.factor": str(rf),
        "min.insync.replicas": str(isr),
        "offsets.topic.replication.factor": str(rf),
        "offsets.topic.num.partitions": "5",
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": str(isr),
        "transaction.state.log.num.partitions": "5",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        "unclean.leader.election.enable": "false",
        "log.flush.interval.messages": "9223372036854775807",
    }


_LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d{{ISO8601}}] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.org.name = org.apache.kafka
logger.org.level = INFO
logger.zk.name = org.apache.zookeeper
logger.zk.level = WARN
logger.coord.name = kafka.coordinator.transaction
logger.coord.level = DEBUG
"""


@dataclass
class KafkaNode:
    """One JVM: broker and controller; ``port`` is what clients are told (the proxy's with ``proxied``)."""

    node_id: int
    broker_port: int
    controller_port: int
    config: Path
    data_dir: Path
    log_file: Path
    stdout_file: Path
    proxy: Proxy | None = None
    proc: subprocess.Popen[bytes] | None = None
    paused: bool = False
    starts: int = 0
    events: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.proxy.port if self.proxy is not None else self.broker_port

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


_LIVE: set[KafkaCluster] = set()
_LIVE_LOCK = threading.Lock()
_HANDLERS_INSTALLED = False


def _stop_all() -> None:
    with _LIVE_LOCK:
        clusters = list(_LIVE)
    for c in clusters:
        with contextlib.suppress(Exception):
            c.stop()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _stop_all()
    raise SystemExit(128 + signum)


def _install_handlers() -> None:
    """``atexit`` always; SIGTERM/SIGHUP only from the main thread and only where nobody else handles them."""
    global _HANDLERS_INSTALLED
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(_stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)


class KafkaCluster:
    """``nodes`` KRaft nodes (broker+controller each) on free 127.0.0.1 ports; a context manager.

    ``broker_properties`` override :func:`default_broker_properties` (e.g.
    ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` low for tests).
    ``log_dir`` keeps the nodes' logs (``node-N.log``) after :meth:`stop`;
    without it they live and die with the run directory.
    """

    def __init__(
        self,
        nodes: int = 1,
        kafka_home: str | os.PathLike[str] | None = None,
        broker_properties: Mapping[str, Any] | None = None,
        heap: str = "768m",
        proxied: bool = False,
        log_dir: str | os.PathLike[str] | None = None,
        startup_timeout_s: float = 120.0,
        format_args: Sequence[str] = (),
    ) -> None:
        if nodes < 1:
            raise ValueError("a Kafka cluster needs at least one node")
        self.home = resolve_kafka_home(kafka_home)
        self.java = find_java()
        self.version = kafka_version(self.home)
        self.heap = heap
        self.proxied = proxied
        self.startup_timeout_s = startup_timeout_s
        self.format_args = tuple(format_args)  # e.g. ``--feature transaction.version=2`` (StorageTool, KIP-1022)
        self.properties = {
            **default_broker_properties(nodes),
            **{k: str(v) for k, v in (broker_properties or {}).items()},
        }
        self.cluster_id = ""
        self.nodes: list[KafkaNode] = []
        self._run_dir: Path | None = None
        self._log_dir = Path(log_dir) if log_dir is not None else None
        self._stopped = False
        self._lock = threading.RLock()
        self._n = nodes

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def start(self) -> KafkaCluster:
        """Format every node, start them, wait until a transactional InitProducerId succeeds."""
        _install_handlers()
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            self._run_dir = Path(tempfile.mkdtemp(prefix="keos-kafka-"))
            logs = self._log_dir or (self._run_dir / "logs")
            logs.mkdir(parents=True, exist_ok=True)
            for i in range(1, self._n + 1):
                broker_port, controller_port = _free_port(), _free_port()
                node_dir = self._run_dir / f"node-{i}"
                node_dir.mkdir()
                proxy = Proxy("127.0.0.1", broker_port) if self.proxied else None
                self.nodes.append(
                    KafkaNode(
                        i,
                        broker_port,
                        controller_port,
                        node_dir / "server.properties",
                        node_dir / "data",
                        logs / f"node-{i}.log",
                        logs / f"node-{i}.stdout",
                        proxy,
                    )
                )
            self.cluster_id = self._random_uuid()
            for node in self.nodes:
                self._write_config(node)
                self._format(node)
            for node in self.nodes:
                self._spawn(node)
            self.wait_ready(self.startup_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """SIGKILL every node (paused ones too), close the proxies, remove the run directory."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            for node in self.nodes:
                self._kill_proc(node)
                if node.proxy is not None:
                    with contextlib.suppress(Exception):
                        node.proxy.close()
            if self._run_dir is not None:
                # A signal can land inside subprocess.Popen after the fork (a restart under Ctrl-C):
                # that JVM is not in node.proc, but its command line names this run's unique directory.
                _kill_strays(self._run_dir)
                shutil.rmtree(self._run_dir, ignore_errors=True)
        with _LIVE_LOCK:
            _LIVE.discard(self)

    @property
    def run_dir(self) -> Path | None:
        return self._run_dir

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def node(self, node_id: int) -> KafkaNode:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(f"no Kafka node {node_id} (nodes: {[n.node_id for n in self.nodes]})")

    # -- faults --------------------------------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """``kill -9`` the node: no controlled shutdown, unflushed page cache kept by the OS (the files survive)."""
        with self._lock:
            node = self.node(node_id)
            self._kill_proc(node)
            node.events.append(f"kill -9 at {time.time():.3f}")

    def restart(self, node_id: int, wait_s: float | None = 60.0) -> None:
        """Start a killed node again from its data (killing it first if it still runs); wait for its port."""
        with self._lock:
            node = self.node(node_id)
            if node.alive:
                self._kill_proc(node)
            self._spawn(node)
            node.events.append(f"restart at {time.time():.3f}")
        if wait_s:
            self._wait_port(node, wait_s)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the JVM freezes (a long GC pause); its sessions and leases time out on the others."""
        with self._lock:
            node = self.node(node_id)
            if node.alive and not node.paused:
                os.kill(node.proc.pid, signal.SIGSTOP)  # type: ignore[union-attr]
                _await_stopped(node.proc.pid, True)  # type: ignore[union-attr]
                node.paused = True
                node.events.append(f"SIGSTOP at {time.time():.3f}")

    def resume(self, node_id: int) -> None:
        """SIGCONT a paused node."""
        with self._lock:
            node = self.node(node_id)
            if node.alive and node.paused:
                os.kill(node.proc.pid, signal.SIGCONT)  # type: ignore[union-attr]
                _await_stopped(node.proc.pid, False)  # type: ignore[union-attr]
            node.paused = False
            node.events.append(f"SIGCONT at {time.time():.3f}")

    # -- readiness -----------------------------------------------------------------------------------------------

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Wait until every live node listens and a transactional InitProducerId succeeds."""
        deadline = time.monotonic() + timeout_s
        for node in self.nodes:
            if node.alive:
                self._wait_port(node, max(1.0, deadline - time.monotonic()))
        try:
            from confluent_kafka import KafkaException, Producer
        except ImportError:
            raise KafkaUnavailable("confluent-kafka is not installed (pip install 'keos[conformance]')") from None
        last = "no attempt"
        while time.monotonic() < deadline:
            self._check_alive()
            producer = Producer(
                {
                    "bootstrap.servers": self.bootstrap_servers,
                    "transactional.id": f"keos-ready-{uuid.uuid4().hex[:8]}",
                    "transaction.timeout.ms": 60000,
                    "socket.timeout.ms": 5000,
                    "logger": _quiet_logger(),
                }
            )
            try:
                producer.init_transactions(min(15.0, max(1.0, deadline - time.monotonic())))
                return
            except KafkaException as exc:
                last = str(exc.args[0]) if exc.args else repr(exc)
            finally:
                with contextlib.suppress(Exception):
                    producer.flush(0)
                del producer
            time.sleep(0.5)
        raise KafkaUnavailable(
            f"Kafka ({self._n} node(s)) not ready within {timeout_s:.0f} s: InitProducerId did not succeed "
            f"({last}); logs: {', '.join(str(n.log_file) for n in self.nodes)}"
        )

    # -- internals -----------------------------------------------------------------------------------------------

    def _classpath(self) -> str:
        return str(self.home / "libs" / "*")

    def _random_uuid(self) -> str:
        """A cluster id as ``StorageTool random-uuid`` makes one (``Uuid.randomUuid``, clients 4.0).

        16 random bytes, URL-safe base64 without padding; Kafka never hands out an id
        starting with ``-`` (it would read as a command-line flag) nor the reserved
        zero and metadata-topic ids.
        """
        while True:
            text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            if not text.startswith("-") and text not in ("AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ"):
                return text

    def _write_config(self, node: KafkaNode) -> None:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
        props = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{node.broker_port},CONTROLLER://127.0.0.1:{node.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(node.data_dir),
            **self.properties,
        }
        node.config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (node.config.parent / "log4j2.properties").write_text(_LOG4J2.format(log=node.log_file))

    def _format(self, node: KafkaNode) -> None:
        cmd = [
            self.java,
            "-cp",
            self._classpath(),
            "kafka.tools.StorageTool",
            "format",
            "-t",
            self.cluster_id,
            "-c",
            str(node.config),
            *self.format_args,
        ]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        except (subprocess.SubprocessError, OSError) as exc:
            raise KafkaUnavailable(f"formatting Kafka node {node.node_id} failed: {exc}") from None
        if res.returncode != 0:
            raise KafkaUnavailable(
                f"formatting Kafka node {node.node_id} failed ({res.returncode}): {(res.stderr or res.stdout).strip()}"
            )

    def _spawn(self, node: KafkaNode) -> None:
        cmd = [
            self.java,
            f"-Xmx{self.heap}",
            f"-Xms{min(256, _mb(self.heap))}m",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={node.config.parent / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={node.log_file.parent}",
            "-cp",
            self._classpath(),
            "kafka.Kafka",
            str(node.config),
        ]
        out = node.stdout_file.open("ab")
        try:
            node.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            raise KafkaUnavailable(f"cannot start Kafka node {node.node_id}: {exc}") from None
        finally:
            out.close()
        node.paused = False
        node.starts += 1

    def _kill_proc(self, node: KafkaNode) -> None:
        proc = node.proc
        if proc is None or proc.poll() is not None:
            node.paused = False
            return
        with contextlib.suppress(OSError):
            proc.kill()  # SIGKILL works on a stopped process too
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        node.paused = False

    def _check_alive(self) -> None:
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is not None and node.starts and not node.events:
                tail = ""
                with contextlib.suppress(OSError):
                    tail = node.stdout_file.read_text(errors="replace")[-600:].strip()
                raise KafkaUnavailable(
                    f"Kafka node {node.node_id} exited with {node.proc.returncode} during start-up; "
                    f"log {node.log_file}{': ' + tail if tail else ''}"
                )

    def _wait_port(self, node: KafkaNode, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", node.broker_port), timeout=0.5):
                return
            time.sleep(0.2)
        raise KafkaUnavailable(f"Kafka node {node.node_id} did not listen on 127.0.0.1:{node.broker_port}")


def _kill_strays(run_dir: Path) -> None:
    """SIGKILL every process whose command line names ``run_dir`` (only this run's JVMs can)."""
    marker = str(run_dir).encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)
    time.sleep(0.2)  # let the kernel reap them before their directory goes


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of ``pid`` (``T`` = stopped), from ``/proc`` where there is one."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _await_stopped(pid: int, stopped: bool, timeout_s: float = 5.0) -> None:
    """Signals are delivered asynchronously: wait until the process is (no longer) stopped."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = process_state(pid)
        if state is None or (state == "T") == stopped:
            return
        time.sleep(0.01)


def _quiet_logger() -> logging.Logger:
    """librdkafka's connection-refused lines while a node starts are expected: keep them off stderr."""
    log = logging.getLogger("keos.conform.kafka.ready")
    log.propagate = False
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    return log


def _mb(heap: str) -> int:
    h = heap.strip().lower()
    mult = {"k": 1 / 1024, "m": 1, "g": 1024}.get(h[-1:])
    try:
        return int(float(h[:-1]) * mult) if mult is not None else int(h) // (1024 * 1024)
    except ValueError:
        return 256
