"""librdkafka's mock cluster, driven through ``ctypes`` on the library confluent-kafka loads.

librdkafka ships an in-process Kafka cluster for its own tests
(``src/rdkafka_mock.c``, API in ``rdkafka_mock.h``): brokers listening on
127.0.0.1, topics, and a fault API -- per-request error stacks
(``rd_kafka_mock_push_request_errors``), per-broker error+RTT stacks, broker
down/up, RTTs, leader and coordinator moves, request tracking.  The
``confluent-kafka`` wheel bundles a librdkafka that exports those functions,
but the Python package does not wrap them, so this module calls them through
``ctypes`` on the very shared object ``confluent_kafka.cimpl`` loaded (found in
``/proc/self/maps``), so the cluster and the clients share one library.

Pinned: confluent-kafka 2.16.x (librdkafka 2.16).  If a symbol is missing (an
older wheel, a librdkafka built without the mock), :class:`MockUnavailable`
names it.

The mock is a test double, not a broker, and keos's conformance run confirms
these documented gaps in it (see :data:`PROFILE`):

* a classic Fetch answers with ``LastStableOffset`` = log end and an empty
  ``AbortedTransactions`` list whatever the isolation level (the transaction
  filtering added with KIP-932 covers ShareFetch only), so read_committed
  consumers see aborted and still-open transactions: ``G1a`` and
  ``precommitted-read``;
* a second InitProducerId of one transactional.id does not fence the first
  instance: ``zombie-not-fenced``;
* a Produce is checked for duplicate sequence numbers only when it is
  transactional, so a non-transactional idempotent retry of an appended batch
  is appended again: ``duplicate``.
"""

from __future__ import annotations

import ctypes
import glob
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ..error_classes import ALIASES
from ..workload import Faults

__all__ = [
    "API_KEYS",
    "PINNED",
    "PROFILE",
    "MockCluster",
    "MockRequest",
    "MockUnavailable",
    "error_code",
    "librdkafka_path",
]

#: The confluent-kafka release the driver is written against (pyproject pins it too).
PINNED = "2.16"

#: Kafka protocol ApiKeys (``org.apache.kafka.common.protocol.ApiKeys``) faults are pushed for.
API_KEYS: dict[str, int] = {
    "Produce": 0,
    "Fetch": 1,
    "ListOffsets": 2,
    "Metadata": 3,
    "OffsetCommit": 8,
    "OffsetFetch": 9,
    "FindCoordinator": 10,
    "JoinGroup": 11,
    "Heartbeat": 12,
    "SyncGroup": 14,
    "ApiVersions": 18,
    "InitProducerId": 22,
    "AddPartitionsToTxn": 24,
    "AddOffsetsToTxn": 25,
    "EndTxn": 26,
    "TxnOffsetCommit": 28,
    "GetTelemetrySubscriptions": 71,
}
_API_NAMES = {v: k for k, v in API_KEYS.items()}

#: Documented deviations: anomaly kind -> why the mock shows it (see the module docstring).
PROFILE: dict[str, str] = {
    "G1a": "mock Fetch returns LastStableOffset = log end and no AbortedTransactions (rdkafka_mock_handlers.c)",
    "precommitted-read": "mock Fetch returns open transactions to read_committed consumers (LSO = log end)",
    "zombie-not-fenced": "mock InitProducerId does not fence the previous instance of the transactional.id",
    "duplicate": "mock Produce deduplicates sequence numbers only for transactional batches",
}

#: (name, restype, argtypes) of every mock function the driver calls.
_SIGNATURES: tuple[tuple[str, object, tuple[object, ...] | None], ...] = (
    ("rd_kafka_conf_new", ctypes.c_void_p, ()),
    (
        "rd_kafka_conf_set",
        ctypes.c_int,
        (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t),
    ),
    ("rd_kafka_new", ctypes.c_void_p, (ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)),
    ("rd_kafka_destroy", None, (ctypes.c_void_p,)),
    ("rd_kafka_err2name", ctypes.c_char_p, (ctypes.c_int,)),
    ("rd_kafka_mock_cluster_new", ctypes.c_void_p, (ctypes.c_void_p, ctypes.c_int)),
    ("rd_kafka_mock_cluster_destroy", None, (ctypes.c_void_p,)),
    ("rd_kafka_mock_cluster_bootstraps", ctypes.c_char_p, (ctypes.c_void_p,)),
    ("rd_kafka_mock_topic_create", ctypes.c_int, (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int)),
    (
        "rd_kafka_mock_push_request_errors_array",
        None,
        (ctypes.c_void_p, ctypes.c_int16, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)),
    ),
    ("rd_kafka_mock_clear_request_errors", None, (ctypes.c_void_p, ctypes.c_int16)),
    ("rd_kafka_mock_broker_push_request_error_rtts", ctypes.c_int, None),  # variadic
    ("rd_kafka_mock_broker_set_down", ctypes.c_int, (ctypes.c_void_p, ctypes.c_int32)),
    ("rd_kafka_mock_broker_set_up", ctypes.c_int, (ctypes.c_void_p, ctypes.c_int32)),
    ("rd_kafka_mock_broker_set_rtt", ctypes.c_int, (ctypes.c_void_p, ctypes.c_int32, ctypes.c_int)),
    (
        "rd_kafka_mock_coordinator_set",
        ctypes.c_int,
        (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32),
    ),
    (
        "rd_kafka_mock_partition_set_leader",
        ctypes.c_int,
        (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32),
    ),
    ("rd_kafka_mock_start_request_tracking", None, (ctypes.c_void_p,)),
    ("rd_kafka_mock_stop_request_tracking", None, (ctypes.c_void_p,)),
    ("rd_kafka_mock_get_requests", ctypes.POINTER(ctypes.c_void_p), (ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t))),
    ("rd_kafka_mock_request_id", ctypes.c_int32, (ctypes.c_void_p,)),
    ("rd_kafka_mock_request_api_key", ctypes.c_int16, (ctypes.c_void_p,)),
    ("rd_kafka_mock_request_timestamp", ctypes.c_int64, (ctypes.c_void_p,)),
    ("rd_kafka_mock_request_destroy_array", None, (ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t)),
)


class MockUnavailable(RuntimeError):
    """confluent-kafka or its librdkafka's mock API is not there (the message says what is missing)."""


def librdkafka_path() -> str:
    """The librdkafka shared object ``confluent_kafka`` has loaded into this process."""
    try:
        import confluent_kafka
    except ImportError as exc:
        raise MockUnavailable("confluent-kafka is not installed (pip install 'keos[conformance]')") from exc
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            for line in fh:
                path = line.rsplit(" ", 1)[-1].strip()
                if "librdkafka" in os.path.basename(path):
                    return path
    except OSError:
        pass
    here = os.path.dirname(confluent_kafka.__file__)
    found = sorted(glob.glob(os.path.join(here, "..", "confluent_kafka.libs", "librdkafka*.so*")))
    if not found:
        raise MockUnavailable(f"no librdkafka shared object found beside {here}")
    return found[0]


def _load() -> ctypes.CDLL:
    path = librdkafka_path()
    lib = ctypes.CDLL(path)
    missing = [name for name, _, _ in _SIGNATURES if not hasattr(lib, name)]
    if missing:
        raise MockUnavailable(f"{path} does not export {', '.join(missing)} (confluent-kafka {PINNED}.x bundles them)")
    for name, restype, argtypes in _SIGNATURES:
        fn = getattr(lib, name)
        fn.restype = restype
        if argtypes is not None:
            fn.argtypes = list(argtypes)
    return lib


def error_code(error: str | int) -> int:
    """A Kafka error code from its name (``NOT_LEADER_OR_FOLLOWER``) via confluent_kafka.KafkaError."""
    if isinstance(error, int):
        return error
    from confluent_kafka import KafkaError

    aliases = {v: k for k, v in ALIASES.items()}
    code = getattr(KafkaError, aliases.get(error, error), None)
    if not isinstance(code, int):
        raise ValueError(f"unknown Kafka error name {error!r}")
    return code


@dataclass(frozen=True)
class MockRequest:
    """One request the mock cluster received (request tracking)."""

    broker: int
    api: str
    timestamp_us: int


class MockCluster:
    """A running mock cluster of ``brokers`` brokers on 127.0.0.1; a context manager."""

    def __init__(self, brokers: int = 3) -> None:
        self._lib = _load()
        errstr = ctypes.create_string_buffer(512)
        conf = self._lib.rd_kafka_conf_new()
        # The handle only hosts the cluster's thread; it never connects anywhere.
        self._lib.rd_kafka_conf_set(conf, b"log_level", b"0", errstr, len(errstr))
        self._rk = self._lib.rd_kafka_new(0, conf, errstr, len(errstr))
        if not self._rk:
            raise MockUnavailable(f"rd_kafka_new failed: {errstr.value.decode(errors='replace')}")
        self._mc = self._lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._mc:
            self._lib.rd_kafka_destroy(self._rk)
            raise MockUnavailable("rd_kafka_mock_cluster_new returned NULL")
        self.brokers = brokers
        self.bootstrap_servers: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._mc).decode()

    def _check(self, err: int, what: str) -> None:
        if err:
            raise RuntimeError(f"{what}: {self._lib.rd_kafka_err2name(err).decode()}")

    def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        self._check(
            self._lib.rd_kafka_mock_topic_create(self._mc, topic.encode(), partitions, replication_factor),
            f"create topic {topic}",
        )

    def push_request_errors(self, api: str, errors: Sequence[str | int]) -> None:
        """The next ``len(errors)`` ``api`` requests (to any broker) fail with these codes, in order."""
        arr = (ctypes.c_int * len(errors))(*(error_code(e) for e in errors))
        self._lib.rd_kafka_mock_push_request_errors_array(self._mc, API_KEYS[api], len(errors), arr)

    def clear_request_errors(self, api: str) -> None:
        self._lib.rd_kafka_mock_clear_request_errors(self._mc, API_KEYS[api])

    def push_broker_errors_rtts(self, broker: int, api: str, pairs: Iterable[tuple[str | int, int]]) -> None:
        """Broker ``broker``'s next ``api`` requests: each answered with (error, after rtt ms).

        Error ``0`` with a long RTT is a request the broker *handles* but answers too
        late: the client times out and retries, the way a lost response looks.
        """
        items = list(pairs)
        args: list[object] = [ctypes.c_void_p(self._mc), ctypes.c_int32(broker), ctypes.c_int16(API_KEYS[api])]
        args.append(ctypes.c_size_t(len(items)))
        for err, rtt in items:
            args += [ctypes.c_int(error_code(err)), ctypes.c_int(rtt)]
        self._check(self._lib.rd_kafka_mock_broker_push_request_error_rtts(*args), f"push {api} errors")

    def broker_down(self, broker: int) -> None:
        self._check(self._lib.rd_kafka_mock_broker_set_down(self._mc, broker), f"broker {broker} down")

    def broker_up(self, broker: int) -> None:
        self._check(self._lib.rd_kafka_mock_broker_set_up(self._mc, broker), f"broker {broker} up")

    def set_rtt(self, broker: int, rtt_ms: int) -> None:
        self._check(self._lib.rd_kafka_mock_broker_set_rtt(self._mc, broker, rtt_ms), f"broker {broker} rtt")

    def set_coordinator(self, key_type: str, key: str, broker: int) -> None:
        """Move the ``transaction`` or ``group`` coordinator of ``key`` to ``broker``."""
        self._check(
            self._lib.rd_kafka_mock_coordinator_set(self._mc, key_type.encode(), key.encode(), broker),
            f"{key_type} coordinator of {key}",
        )

    def set_leader(self, topic: str, partition: int, broker: int) -> None:
        self._check(
            self._lib.rd_kafka_mock_partition_set_leader(self._mc, topic.encode(), partition, broker),
            f"leader of {topic}-{partition}",
        )

    def start_tracking(self) -> None:
        self._lib.rd_kafka_mock_start_request_tracking(self._mc)

    def requests(self) -> list[MockRequest]:
        """The requests received since tracking started."""
        cnt = ctypes.c_size_t(0)
        arr = self._lib.rd_kafka_mock_get_requests(self._mc, ctypes.byref(cnt))
        out = []
        for i in range(cnt.value):
            req = arr[i]
            api = int(self._lib.rd_kafka_mock_request_api_key(req))
            out.append(
                MockRequest(
                    int(self._lib.rd_kafka_mock_request_id(req)),
                    _API_NAMES.get(api, str(api)),
                    int(self._lib.rd_kafka_mock_request_timestamp(req)),
                )
            )
        if arr:
            self._lib.rd_kafka_mock_request_destroy_array(arr, cnt.value)
        return out

    def close(self) -> None:
        if self._mc:
            self._lib.rd_kafka_mock_stop_request_tracking(self._mc)
            self._lib.rd_kafka_mock_cluster_destroy(self._mc)
            self._mc = None
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


_UNLISTED = frozenset({"Fetch", "Metadata", "ApiVersions", "GetTelemetrySubscriptions", "ListOffsets"})


class MockFaults(Faults):
    """Faults through the mock's own API: error stacks, late responses, broker restarts, leader moves."""

    def __init__(self, cluster: MockCluster, leaders: Mapping[tuple[str, int], int], request_timeout_ms: int) -> None:
        self.cluster = cluster
        self.leaders = dict(leaders)
        self.request_timeout_ms = request_timeout_ms
        self._bounces = 0
        self._coordinator_moves = 0

    def retriable_produce_errors(self, key_topic: str, partition: int) -> str | None:
        errors = ["NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS"]
        self.cluster.push_request_errors("Produce", errors)
        return f"next 2 Produce requests fail with {', '.join(errors)} (nothing appended)"

    def producer_state_lost(self, key_topic: str, partition: int) -> str | None:
        self.cluster.push_request_errors("Produce", ["UNKNOWN_PRODUCER_ID"])
        return "next Produce request fails with UNKNOWN_PRODUCER_ID (the broker lost the producer's state)"

    def late_produce_response(self, key_topic: str, partition: int) -> str | None:
        broker = self.leaders[(key_topic, partition)]
        rtt = self.request_timeout_ms + 1500
        self.cluster.push_broker_errors_rtts(broker, "Produce", [("NO_ERROR", rtt)])
        return f"broker {broker} appends the next Produce but answers after {rtt} ms (request.timeout.ms exceeded)"

    def bounce(self) -> str | None:
        self._bounces += 1
        (topic, partition), broker = next(iter(sorted(self.leaders.items())))
        other = broker % self.cluster.brokers + 1
        self.cluster.broker_down(broker)
        time.sleep(0.3)
        self.cluster.set_leader(topic, partition, other)
        self.cluster.broker_up(broker)
        self.leaders[(topic, partition)] = other
        return f"broker {broker} down 300 ms and back; leader of {topic}-{partition} moved to broker {other}"

    def move_transaction_coordinator(self, transactional_id: str) -> str | None:
        self._coordinator_moves += 1
        broker = self._coordinator_moves % self.cluster.brokers + 1
        self.cluster.set_coordinator("transaction", transactional_id, broker)
        return f"transaction coordinator of {transactional_id} moved to broker {broker}"


class LibrdkafkaMockTarget:
    """A 3-broker mock cluster inside this process."""

    def __init__(self, brokers: int = 3, request_timeout_ms: int = 2000) -> None:
        try:
            self.cluster = MockCluster(brokers)
        except MockUnavailable as exc:
            from . import TargetUnavailable

            raise TargetUnavailable(str(exc)) from None
        import confluent_kafka

        from . import TargetInfo

        self.info = TargetInfo(
            "librdkafka-mock",
            f"librdkafka {confluent_kafka.libversion()[0]} (confluent-kafka {confluent_kafka.version()[0]})",
            PROFILE,
            (f"library: {librdkafka_path()}",),
        )
        self.bootstrap_servers = self.cluster.bootstrap_servers
        self.request_timeout_ms = request_timeout_ms
        self._leaders: dict[tuple[str, int], int] = {}
        self.faults = MockFaults(self.cluster, self._leaders, request_timeout_ms)
        self.client_overrides: dict[str, Any] = {}
        self.cluster.start_tracking()

    def create_topic(self, topic: str, partitions: int) -> None:
        self.cluster.create_topic(topic, partitions, min(3, self.cluster.brokers))
        for p in range(partitions):
            broker = p % self.cluster.brokers + 1
            self.cluster.set_leader(topic, p, broker)
            self._leaders[(topic, p)] = broker
        self.faults.leaders.update(self._leaders)

    def broker_trace(self) -> dict[str, Any]:
        """Request counts per API, and the protocol requests in order (``[broker, api, timestamp µs]``).

        Fetch, Metadata, ApiVersions and telemetry requests are counted but not listed.
        """
        counts: dict[str, int] = {}
        listed: list[list[Any]] = []
        for req in self.cluster.requests():
            counts[req.api] = counts.get(req.api, 0) + 1
            if req.api not in _UNLISTED:
                listed.append([req.broker, req.api, req.timestamp_us])
        return {"requests_by_api": dict(sorted(counts.items())), "requests": listed}

    def stop(self) -> None:
        self.cluster.close()
