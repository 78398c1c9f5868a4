"""The workload: real confluent-kafka producers and consumers, recorded as a history.

Every client call is recorded as an invocation and a completion
(:class:`keos.checker.conform.history.Recorder`), in Jepsen's Kafka shape.  Keys
are integers; key ``k`` is one partition of one topic (:class:`KeyMap`).  Every
value is unique, so each record read can be traced to the send that wrote it.

Phases (a workload is a list of them, :data:`WORKLOADS`):

``idempotent``   an idempotent producer (``enable.idempotence``, KIP-98 §5.2) sends
                 one record per operation while the target injects retriable faults
                 (NOT_LEADER_OR_FOLLOWER, leader moves, broker restarts: whatever
                 :class:`Faults` offers).  A correct client and broker lose and
                 duplicate nothing.
``late-response``  the broker appends a batch but answers after the client's
                 ``request.timeout.ms``: the client retries the same sequence number
                 and the broker must recognise it (KIP-98 §5.2; the mock does not for
                 non-transactional producers).
``transactions`` a transactional producer commits and aborts transactions across
                 several keys (its coordinator is moved half-way where the target
                 can); between the flush and the commit a read_committed consumer
                 polls, so a broker exposing open transactions is caught
                 (``precommitted-read``); ``commit_at`` records when commit was asked.
``zombie``       two instances of one transactional.id: the second's InitProducerId
                 must fence the first (KIP-98 §5.1), whose next transaction must fail
                 with a fencing error.
``pause``        (its own workload, about 15 s) the producer stalls inside a transaction for
                 longer than its timeout, then commits: a client-side fault that works on
                 any cluster, a user's included.
``abandoned``    (last, so it cannot block the others' reads) a transaction left open
                 by a producer that goes silent: the coordinator
                 must abort it after ``transaction.timeout.ms`` or the last stable
                 offset hangs (``hanging-lso``, KAFKA-12671).
``ctp``          consume-transform-produce (KIP-98 §4.3, KIP-447): a read_committed
                 consumer's batch is transformed and produced in a transaction with
                 ``send_offsets_to_transaction``; one batch is aborted and the
                 consumer rewound to its committed offsets.
``drain``        (always last) a read_committed and a read_uncommitted consumer read
                 every key from offset 0 to its high watermark, and a ListOffsets
                 probe records each key's last stable offset and high watermark.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from keos.checker.logs import client_logger

from .client_view import parse_pid, parse_state_change
from .error_classes import client_class, kafka_name
from .history import History, Op, Recorder

__all__ = ["WORKLOADS", "Faults", "KeyMap", "NoFaults", "Workload", "WorkloadConfig", "run_workload"]

#: The workloads ``keos conform --workload`` knows, as phase lists (``drain`` is appended).
WORKLOADS: dict[str, tuple[str, ...]] = {
    "default": ("idempotent", "late-response", "transactions", "zombie", "ctp", "abandoned"),
    "idempotent": ("idempotent",),
    "late-response": ("late-response",),
    "transactions": ("transactions", "zombie", "ctp", "abandoned"),
    "pause": ("pause",),
}


class Faults:
    """What a target can do to itself while the workload runs; each returns a description or ``None``."""

    def retriable_produce_errors(self, key_topic: str, partition: int) -> str | None:
        """Make the next produce requests fail with retriable errors (nothing appended)."""
        return None

    def late_produce_response(self, key_topic: str, partition: int) -> str | None:
        """Make the broker append the next produce but answer after the client gave up."""
        return None

    def producer_state_lost(self, key_topic: str, partition: int) -> str | None:
        """Make the next produce fail with UNKNOWN_PRODUCER_ID: the client must bump its epoch (KIP-360)."""
        return None

    def bounce(self) -> str | None:
        """Take a broker (or every connection) down and bring it back."""
        return None

    def move_transaction_coordinator(self, transactional_id: str) -> str | None:
        """Move ``transactional_id``'s coordinator: the client must find it again (NOT_COORDINATOR)."""
        return None


class NoFaults(Faults):
    """A target that offers no fault (a user's cluster without a proxy)."""


@dataclass(frozen=True)
class KeyMap:
    """Key ``k`` <-> (topic, partition): input keys first, then the consume-transform-produce output keys."""

    topic: str
    out_topic: str
    partitions: int

    def location(self, key: int) -> tuple[str, int]:
        if key < self.partitions:
            return self.topic, key
        return self.out_topic, key - self.partitions

    def key(self, topic: str, partition: int) -> int:
        return partition if topic == self.topic else self.partitions + partition

    def all(self) -> list[int]:
        return list(range(2 * self.partitions))


@dataclass(frozen=True)
class WorkloadConfig:
    """Sizes of a run; the defaults keep one target under a minute."""

    partitions: int = 3
    sends: int = 24
    transactions: int = 8
    abort_every: int = 3
    ctp_batches: int = 4
    seed: int = 1
    request_timeout_ms: int = 2000
    transaction_timeout_ms: int = 10000
    poll_timeout_s: float = 0.5
    drain_timeout_s: float = 8.0
    lso_grace_s: float = 5.0
    abandoned_timeout_ms: int = 3000
    pause_margin_s: float = 11.0  # past transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s)
    abort_interval_ms: int = 10000  # the coordinator's transaction.abort.timed.out.transaction.cleanup.interval.ms
    txn_attempts: int = 3  # tries per transaction: a failed one is retried after abort or re-init
    id_suffix: str = ""  # appended to transactional ids and the group id (unique per run on a shared cluster)
    debug_eos: bool = True


def _kafka_error(exc: BaseException) -> Any:
    """The ``KafkaError`` an exception carries, looking through the exceptions it was raised from.

    confluent-kafka can end a call (``flush``, ``commit_transaction``) with CPython's ``SystemError:
    <built-in method ...> returned a result with an exception set`` when a callback ran into the client's
    own error (seen under load, when the zombie is fenced during ``flush``).  CPython chains the real
    exception as the ``SystemError``'s ``__cause__`` (``_PyErr_FormatFromCause``), so the ``KafkaException``
    -- and the fencing it reports -- is found on the chain.  ``None`` when no exception on it has one.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        err = cur.args[0] if cur.args else None
        if err is not None and hasattr(err, "name"):
            return err
        cur = cur.__cause__ or cur.__context__
    return None


def _error_fields(exc: BaseException) -> dict[str, Any]:
    """``error`` and ``error_class`` of a confluent_kafka exception or KafkaError."""
    err = _kafka_error(exc)
    if err is None:
        return {"error": type(exc).__name__, "error_class": "other"}
    return _kafka_error_fields(err)


def _kafka_error_fields(err: Any) -> dict[str, Any]:
    return {
        "error": kafka_name(err.name()),
        "error_class": client_class(
            fatal=bool(err.fatal()), abortable=bool(err.txn_requires_abort()), retriable=bool(err.retriable())
        ),
    }


class _ClientLog(logging.Handler):
    """librdkafka's log lines (``debug=eos``) kept as the client's own view."""

    def __init__(self, recorder: Recorder, who: str) -> None:
        super().__init__()
        self.recorder = recorder
        self.who = who
        self.lines: list[tuple[int, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        change = parse_state_change(msg)
        if change is not None:
            # Logs reach Python when the client is polled, so the time is when keos saw the change.
            self.recorder.note(f"client:{self.who}", "client-state", list(change))
        pid = parse_pid(msg)
        if pid is not None:
            self.recorder.note(f"client:{self.who}", "client-pid", list(pid))
        if any(s in msg for s in ("state change", "ProducerId", "fenced", "Fenced", "epoch")):
            self.lines.append((self.recorder.now(), self.who, msg[:300]))


@dataclass
class _TxnClient:
    """A transactional producer and the instance of its transactional.id it is."""

    producer: Any
    process: int
    tid: str
    instance: int
    who: str
    timeout_ms: int = 0

    @property
    def extra(self) -> dict[str, Any]:
        return {"transactional_id": self.tid, "instance": self.instance}


class Workload:
    """One run of phases against ``bootstrap_servers``; :meth:`run` returns the history."""

    def __init__(
        self,
        bootstrap_servers: str,
        keys: KeyMap,
        config: WorkloadConfig,
        faults: Faults,
        recorder: Recorder,
        client_overrides: Mapping[str, Any] | None = None,
        producer_overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.bootstrap = bootstrap_servers
        self.producer_overrides = dict(producer_overrides or {})
        self.keys = keys
        self.cfg = config
        self.faults = faults
        self.rec = recorder
        self.rng = random.Random(config.seed)
        self._values = itertools.count(1)
        self._processes = itertools.count(0)
        self.client_overrides = dict(client_overrides or {})
        self.client_view: list[_ClientLog] = []
        self._abandoned: list[Any] = []
        self._txn_timeouts: dict[int, int] = {}  # id(producer) -> its transaction.timeout.ms
        self._stall_requested = threading.Event()  # set by the random nemesis (client-pause)
        self.quiet_faults = False  # with a random nemesis the phases' fixed faults are off and not recorded

    # -- clients ---------------------------------------------------------------------

    def _base(self, who: str, debug: bool = False) -> dict[str, Any]:
        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "client.id": f"keos-{who}"}
        log = logging.getLogger(f"keos.conform.client.{who}")
        log.propagate = False
        log.setLevel(logging.DEBUG)
        handler = _ClientLog(self.rec, who)
        log.handlers[:] = [handler]
        self.client_view.append(handler)
        conf["logger"] = log
        if debug and self.cfg.debug_eos:
            conf["debug"] = "eos"
        conf.update(self.client_overrides)
        return conf

    def producer(self, who: str, transactional_id: str | None = None, transaction_timeout_ms: int = 0) -> Any:
        from confluent_kafka import Producer

        conf = self._base(who, debug=True)
        conf.update(
            {
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 0,
                "retry.backoff.ms": 20,
                "request.timeout.ms": self.cfg.request_timeout_ms,
                "socket.timeout.ms": self.cfg.request_timeout_ms,
                "message.timeout.ms": 4 * self.cfg.request_timeout_ms + 2000,
            }
        )
        if transactional_id is not None:
            conf["transactional.id"] = transactional_id
            conf["transaction.timeout.ms"] = transaction_timeout_ms or self.cfg.transaction_timeout_ms
            # librdkafka requires message.timeout.ms <= transaction.timeout.ms
            conf["message.timeout.ms"] = min(conf["message.timeout.ms"], conf["transaction.timeout.ms"])
            producer = Producer(conf)
            self._txn_timeouts[id(producer)] = int(conf["transaction.timeout.ms"])
            return producer
        else:
            conf.update(self.producer_overrides)  # a scenario's [producer] settings (transactions need idempotence)
        return Producer(conf)

    def consumer(self, who: str, isolation: str, group: str | None = None) -> Any:
        from confluent_kafka import Consumer

        conf = self._base(who)
        conf.update(
            {
                "group.id": group or f"keos-{who}",
                "enable.auto.commit": False,
                "isolation.level": isolation,
                "auto.offset.reset": "earliest",
                "enable.partition.eof": False,
                "fetch.wait.max.ms": 50,
            }
        )
        return Consumer(conf)

    def _value(self) -> int:
        return next(self._values)

    def _process(self) -> int:
        return next(self._processes)

    def request_client_pause(self) -> None:
        """The nemesis asks the transactional producer to stall inside its next transaction."""
        self._stall_requested.set()

    def _maybe_stall(self, timeout_ms: int) -> None:
        """A client pause: longer than ``transaction.timeout.ms`` + the coordinator's abort interval (+2.5 s)."""
        if not self._stall_requested.is_set():
            return
        self._stall_requested.clear()
        pause = (timeout_ms + self.cfg.abort_interval_ms) / 1000 + 2.5
        inv = self.rec.invoke("nemesis-client", "fault", ["client-pause", None, round(pause, 3)])
        time.sleep(pause)
        self.rec.complete(inv, "info", f"the transactional producer stalled {pause:.1f} s inside its transaction")

    def _fault(self, what: Callable[[], str | None]) -> None:
        if self.quiet_faults:
            return
        inv = self.rec.invoke("nemesis", "fault", None)
        said = what()
        self.rec.complete(inv, "info", said or "not offered by this target")

    # -- sends -----------------------------------------------------------------------

    def _produce(self, producer: Any, sends: Sequence[tuple[int, int]]) -> list[Any]:
        """Produce ``(key, value)`` pairs; the list fills with ``(err, partition, offset)`` as reports arrive."""
        reports: list[Any] = [None] * len(sends)
        for i, (key, value) in enumerate(sends):
            topic, partition = self.keys.location(key)

            def on_delivery(err: Any, msg: Any, i: int = i) -> None:
                reports[i] = (err, msg.partition(), msg.offset())

            producer.produce(
                topic, value=str(value).encode(), key=str(key).encode(), partition=partition, on_delivery=on_delivery
            )
        return reports

    def send_one(self, producer: Any, process: int, key: int, extra: Mapping[str, Any]) -> Op:
        value = self._value()
        inv = self.rec.invoke(process, "send", [["send", key, value]], **extra)
        try:
            reports = self._produce(producer, [(key, value)])
            producer.flush(4 * self.cfg.request_timeout_ms / 1000 + 3)
        except Exception as exc:  # BufferError, KafkaException: outcome unknown
            return self.rec.complete(inv, "info", **_error_fields(exc))
        report = reports[0]
        if report is None:
            return self.rec.complete(inv, "info", error="no delivery report")
        err, _, offset = report
        if err is not None:
            # A failed idempotent delivery may still have been appended: unknown, not failed.
            return self.rec.complete(inv, "info", **_kafka_error_fields(err))
        return self.rec.complete(inv, "ok", [["send", key, [offset, value]]])

    # -- phases ----------------------------------------------------------------------

    def phase_idempotent(self) -> None:
        p = self._process()
        producer = self.producer(f"idempotent-{p}")
        keys = self.keys.all()[: self.keys.partitions]
        for i in range(self.cfg.sends):
            key = keys[i % len(keys)]
            if i % 6 == 2:
                topic, partition = self.keys.location(key)
                self._fault(functools.partial(self.faults.retriable_produce_errors, topic, partition))
            if i == self.cfg.sends // 2:
                self._fault(self.faults.bounce)
            if i == 3 and i != self.cfg.sends // 2:
                # On a first attempt, not a retry: librdkafka bumps the epoch only when no earlier attempt
                # of the batch is outstanding (rdkafka_request.c), and fails the producer otherwise.
                topic, partition = self.keys.location(key)
                self._fault(functools.partial(self.faults.producer_state_lost, topic, partition))
            self.send_one(producer, p, key, {})
        producer.flush(10)

    def phase_late_response(self) -> None:
        p = self._process()
        producer = self.producer(f"late-{p}")
        key = 0
        for i in range(4):
            if i in (1, 3):
                topic, partition = self.keys.location(key)
                self._fault(functools.partial(self.faults.late_produce_response, topic, partition))
            self.send_one(producer, p, key, {})
        producer.flush(10)

    def _init(self, producer: Any, process: int, tid: str, instance: int) -> Op:
        inv = self.rec.invoke(process, "init", None, transactional_id=tid, instance=instance)
        try:
            producer.init_transactions(15)
        except Exception as exc:
            return self.rec.complete(inv, "fail", **_error_fields(exc))
        return self.rec.complete(inv, "ok")

    def transaction(
        self,
        producer: Any,
        process: int,
        sends: Sequence[tuple[int, int]],
        commit: bool,
        extra: Mapping[str, Any],
        while_open: Callable[[], object] | None = None,
    ) -> Op:
        """One ``txn`` op: begin, produce, flush, (``while_open``), commit or abort."""
        timeout_ms = self._txn_timeouts.get(id(producer), self.cfg.transaction_timeout_ms)
        inv = self.rec.invoke(process, "txn", [["send", k, v] for k, v in sends], **extra)
        commit_at: int | None = None  # set once commitTransaction is called: from then on the outcome is unknown
        sent_at: int | None = None
        try:
            producer.begin_transaction()
            reports = self._produce(producer, sends)
            producer.flush(10)
            sent_at = self.rec.now()  # flushed: AddPartitionsToTxn done, the coordinator's clock is running
            if while_open is not None:
                while_open()
            if not commit:
                producer.abort_transaction(10)
                return self.rec.complete(inv, "fail", error="aborted by the workload")
            commit_at = self.rec.now()
            producer.commit_transaction(15)
        except Exception as exc:
            fields = _error_fields(exc)
            err = _kafka_error(exc)
            if err is not None and hasattr(err, "txn_requires_abort") and err.txn_requires_abort():
                timing = {"commit_at": commit_at, "sent_at": sent_at, "transaction_timeout_ms": timeout_ms}
                kept: dict[str, Any] = {k: v for k, v in timing.items() if v}
                try:
                    producer.abort_transaction(10)
                    return self.rec.complete(inv, "fail", **{**fields, **kept})
                except Exception:
                    return self.rec.complete(inv, "info", **{**fields, **kept})
            timing = {"commit_at": commit_at, "sent_at": sent_at, "transaction_timeout_ms": timeout_ms}
            return self.rec.complete(
                inv, "fail" if commit_at is None else "info", **{**fields, **{k: v for k, v in timing.items() if v}}
            )
        done = []
        for (k, v), report in zip(sends, reports):
            offset = report[2] if report is not None and report[0] is None else None
            done.append(["send", k, [offset, v]] if offset is not None else ["send", k, v])
        return self.rec.complete(
            inv, "ok", done, commit_at=commit_at, sent_at=sent_at, transaction_timeout_ms=timeout_ms
        )

    def _poller(self, isolation: str, keys: Sequence[int], who: str) -> tuple[Any, int]:
        from confluent_kafka import TopicPartition

        p = self._process()
        c = self.consumer(f"{who}-{p}", isolation)
        inv = self.rec.invoke(p, "assign", list(keys), isolation=isolation)
        c.assign([TopicPartition(*self.keys.location(k), 0) for k in keys])
        self.rec.complete(inv, "ok")
        return c, p

    def poll(self, consumer: Any, process: int, isolation: str, timeout: float | None = None) -> Op:
        inv = self.rec.invoke(process, "poll", [["poll"]], isolation=isolation)
        try:
            msgs = consumer.consume(500, timeout if timeout is not None else self.cfg.poll_timeout_s)
        except Exception as exc:
            return self.rec.complete(inv, "info", **_error_fields(exc))
        polled: dict[int, list[list[int]]] = {}
        for m in msgs:
            if m.error() is not None:
                continue
            k = self.keys.key(m.topic(), m.partition())
            polled.setdefault(k, []).append([m.offset(), int(m.value().decode())])
        return self.rec.complete(inv, "ok", [["poll", polled]])

    def _txn_client(self, who: str, tid: str, instance: int = 1, timeout_ms: int = 0) -> _TxnClient | None:
        """A transactional producer, initialised (retried a few times, as a client retries a timed-out init)."""
        for _ in range(3):
            p = self._process()
            producer = self.producer(f"{who}-{p}", tid, transaction_timeout_ms=timeout_ms)
            if self._init(producer, p, tid, instance).type == "ok":
                return _TxnClient(producer, p, tid, instance, who, timeout_ms)
            instance += 1
        return None

    def _recover(self, client: _TxnClient, op: Op) -> _TxnClient | None:
        """What Kafka's documentation prescribes after a failed transaction (``KafkaProducer`` javadoc, 4.0).

        An abortable error was already answered with ``abortTransaction`` (the workload
        then retries with fresh values); after a fatal error -- fencing included -- or an
        outcome the client never learnt, the producer is closed and a new one initialises
        the same transactional.id (a new *instance*: the old one is a zombie from then on,
        and must stay fenced).
        """
        if op.type == "ok" or (op.type == "fail" and op.error == "aborted by the workload"):
            return client
        if op.type == "fail" and op.extra.get("error_class") in ("abortable", "retriable"):
            return client
        inv = self.rec.invoke("nemesis", "recover", None, transactional_id=client.tid, instance=client.instance)
        with contextlib.suppress(Exception):
            client.producer.flush(0)
        self.rec.complete(
            inv, "info", f"{client.tid}: instance {client.instance} ended {op.type} ({op.error}); re-init"
        )
        return self._txn_client(client.who, client.tid, client.instance + 1, client.timeout_ms)

    def phase_transactions(self) -> None:
        """Transactions across keys, some aborted; after a failure the workload retries (abort, or re-init)."""
        tid = f"keos-conform-txn{self.cfg.id_suffix}"
        client = self._txn_client("txn", tid)
        if client is None:
            return
        keys = self.keys.all()[: self.keys.partitions]
        probe, probe_p = self._poller("read_committed", keys, "open-txn-reader")
        for i in range(self.cfg.transactions):
            if i == self.cfg.transactions // 2:
                self._fault(functools.partial(self.faults.move_transaction_coordinator, tid))
            commit = (i + 1) % self.cfg.abort_every != 0
            for _attempt in range(self.cfg.txn_attempts):
                chosen = self.rng.sample(keys, min(2, len(keys)))
                sends = [(k, self._value()) for k in chosen]

                def while_open(client: _TxnClient = client) -> None:
                    self.poll(probe, probe_p, "read_committed", 0.3)
                    self._maybe_stall(client.timeout_ms or self.cfg.transaction_timeout_ms)

                op = self.transaction(client.producer, client.process, sends, commit, client.extra, while_open)
                if op.type == "ok" or op.error == "aborted by the workload":
                    break
                client = self._recover(client, op)
                if client is None:
                    break
            if client is None:
                break
        self.poll(probe, probe_p, "read_committed")
        probe.close()
        if client is not None:
            client.producer.flush(5)

    def phase_abandoned(self) -> None:
        """A transaction left open by a producer that stops talking (a crashed client).

        The coordinator must abort it once ``transaction.timeout.ms`` passes
        (``TransactionCoordinator`` expiration, KIP-98 §5.6), or its first offset pins the
        last stable offset and read_committed consumers stall: a hanging transaction
        (KAFKA-12671; KIP-890 part 1).  The op is recorded ``info``: the client never learnt
        the outcome.  The producer object is kept (not closed, which would abort) until the run ends.
        """
        p = self._process()
        tid = f"keos-conform-abandoned{self.cfg.id_suffix}"
        producer = self.producer(f"abandoned-{p}", tid, transaction_timeout_ms=self.cfg.abandoned_timeout_ms)
        if self._init(producer, p, tid, 1).type != "ok":
            return
        key = self.keys.all()[0]
        sends = [(key, self._value())]
        inv = self.rec.invoke(p, "txn", [["send", k, v] for k, v in sends], transactional_id=tid, instance=1)
        try:
            producer.begin_transaction()
            self._produce(producer, sends)
            producer.flush(10)
        except Exception as exc:
            self.rec.complete(inv, "fail", **_error_fields(exc))
            return
        self.rec.complete(inv, "info", error="abandoned by the workload (never committed or aborted)")
        self._abandoned.append(producer)

    def phase_pause(self) -> None:
        """A client-side fault any target allows: the producer stalls inside a transaction.

        Like a long GC pause (KAFKA-6119's zombie): the producer begins a transaction, sends,
        then stops for longer than its ``transaction.timeout.ms`` plus the coordinator's
        expiry interval (``transaction.abort.timed.out.transaction.cleanup.interval.ms``,
        10 s by default), then asks to commit.  A coordinator that expired the transaction
        aborts it and bumps the epoch, so the commit must fail and the records stay
        invisible to read_committed consumers; a commit that succeeds must make them visible.
        Either way the history decides (``G1a``, ``lost-write``, ``wrong-error-class``).
        """
        p = self._process()
        tid = f"keos-conform-pause{self.cfg.id_suffix}"
        producer = self.producer(f"pause-{p}", tid, transaction_timeout_ms=self.cfg.abandoned_timeout_ms)
        if self._init(producer, p, tid, 1).type != "ok":
            return
        keys = self.keys.all()[: self.keys.partitions]
        sends = [(k, self._value()) for k in keys[:2]]
        pause = self.cfg.abandoned_timeout_ms / 1000 + self.cfg.pause_margin_s

        def stall() -> None:
            inv = self.rec.invoke("nemesis", "fault", None)
            time.sleep(pause)
            self.rec.complete(inv, "info", f"client paused {pause:.0f} s inside its transaction")

        self.transaction(producer, p, sends, True, {"transactional_id": tid, "instance": 1}, while_open=stall)

    def phase_zombie(self) -> None:
        """Fencing between transactions and during one (KIP-98 §5.1; ``TransactionCoordinator.handleInitProducerId``).

        Instance 1 commits, instance 2 initialises, instance 1 tries another transaction:
        it must fail with a fencing error.  Then instance 3 begins a transaction and sends,
        and while that transaction is *open* instance 4 initialises: Kafka's coordinator
        aborts the open transaction (it answers ``CONCURRENT_TRANSACTIONS`` until the
        abort markers are written, then bumps the epoch), so instance 3's commit must fail
        and its records must never reach a read_committed reader.
        """
        tid = f"keos-conform-zombie{self.cfg.id_suffix}"
        keys = self.keys.all()[: self.keys.partitions]
        pa, pb = self._process(), self._process()
        a = self.producer(f"zombie-a-{pa}", tid)
        if self._init(a, pa, tid, 1).type != "ok":
            return
        self.transaction(a, pa, [(keys[0], self._value())], True, {"transactional_id": tid, "instance": 1})
        b = self.producer(f"zombie-b-{pb}", tid)
        if self._init(b, pb, tid, 2).type != "ok":
            return
        # The fenced instance tries again: a correct broker rejects it (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH).
        self.transaction(a, pa, [(keys[-1], self._value())], True, {"transactional_id": tid, "instance": 1})
        self.transaction(b, pb, [(keys[0], self._value())], True, {"transactional_id": tid, "instance": 2})
        # Fenced while its transaction is open: the successor's InitProducerId comes between send and commit.
        pc, pd = self._process(), self._process()
        c = self.producer(f"zombie-c-{pc}", tid)
        if self._init(c, pc, tid, 3).type != "ok":
            return
        d = self.producer(f"zombie-d-{pd}", tid)

        def successor() -> None:
            self._init(d, pd, tid, 4)

        sends = [(k, self._value()) for k in keys[:2]]
        self.transaction(c, pc, sends, True, {"transactional_id": tid, "instance": 3}, while_open=successor)
        self.transaction(d, pd, [(keys[-1], self._value())], True, {"transactional_id": tid, "instance": 4})

    def phase_ctp(self) -> None:
        from confluent_kafka import TopicPartition

        tid = f"keos-conform-ctp{self.cfg.id_suffix}"
        p = self._process()
        producer = self.producer(f"ctp-{p}", tid)
        extra: dict[str, Any] = {"transactional_id": tid, "instance": 1, "isolation": "read_committed"}
        if self._init(producer, p, tid, 1).type != "ok":
            return
        group = f"keos-conform-ctp{self.cfg.id_suffix}"
        consumer = self.consumer(f"ctp-in-{p}", "read_committed", group=group)
        inputs = self.keys.all()[: self.keys.partitions]
        tps = [TopicPartition(*self.keys.location(k), 0) for k in inputs]
        inv = self.rec.invoke(p, "assign", inputs, isolation="read_committed")
        consumer.assign(tps)
        self.rec.complete(inv, "ok")
        for batch in range(self.cfg.ctp_batches):
            inv = self.rec.invoke(p, "txn", [["poll"]], **extra)
            reads: dict[int, list[list[int]]] = {}
            sends: list[tuple[int, int]] = []
            positions: dict[tuple[str, int], int] = {}
            try:
                msgs = consumer.consume(6, self.cfg.poll_timeout_s)
                for m in msgs:
                    if m.error() is not None:
                        continue
                    k = self.keys.key(m.topic(), m.partition())
                    reads.setdefault(k, []).append([m.offset(), int(m.value().decode())])
                    positions[(m.topic(), m.partition())] = m.offset() + 1
                    sends.append((self.keys.partitions + k, self._value()))
                producer.begin_transaction()
                reports = self._produce(producer, sends)
                offsets = [TopicPartition(t, q, o) for (t, q), o in positions.items()]
                if offsets:
                    producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 10)
                producer.flush(10)
                mops: list[Any] = [["poll", reads]]
                if batch == 1:
                    producer.abort_transaction(10)
                    self.rec.complete(
                        inv, "fail", mops + [["send", k, v] for k, v in sends], error="aborted by the workload"
                    )
                    self._rewind(consumer, p, tps, group)
                    continue
                commit_at = self.rec.now()
                producer.commit_transaction(15)
            except Exception as exc:
                # Keep going as Kafka's documentation prescribes: abort after an abortable error,
                # a new producer (same transactional.id, next instance) after a fatal or unknown one;
                # either way the consumer goes back to the group's committed offsets.
                fields = _error_fields(exc)
                err = _kafka_error(exc)
                if err is not None and hasattr(err, "txn_requires_abort") and err.txn_requires_abort():
                    try:
                        producer.abort_transaction(10)
                        self.rec.complete(inv, "fail", [["poll", reads]] + [["send", k, v] for k, v in sends], **fields)
                        self._rewind(consumer, p, tps, group)
                        continue
                    except Exception:
                        pass
                self.rec.complete(inv, "info", **fields)
                instance = int(extra["instance"]) + 1
                producer = self.producer(f"ctp-{p}-{instance}", tid)
                if self._init(producer, p, tid, instance).type != "ok":
                    break
                extra["instance"] = instance
                self._rewind(consumer, p, tps, group)
                continue
            for (k, v), report in zip(sends, reports):
                ok = report is not None and report[0] is None
                mops.append(["send", k, [report[2], v]] if ok else ["send", k, v])
            self.rec.complete(inv, "ok", mops, commit_at=commit_at)
        consumer.close()

    def _rewind(self, consumer: Any, process: int, tps: list[Any], group: str) -> None:
        """After an abort the consumer goes back to the group's committed offsets (KIP-447)."""
        from confluent_kafka import TopicPartition

        inv = self.rec.invoke(
            process, "assign", [self.keys.key(t.topic, t.partition) for t in tps], isolation="read_committed"
        )
        try:
            committed = consumer.committed(tps, 10)
            for tp in committed:
                consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
        except Exception as exc:  # offsets unknown (a broker down): start over from the beginning
            with contextlib.suppress(Exception):
                consumer.assign([TopicPartition(t.topic, t.partition, 0) for t in tps])
            self.rec.complete(inv, "info", **_error_fields(exc))
            return
        self.rec.complete(inv, "ok", [[self.keys.key(t.topic, t.partition), t.offset] for t in committed])

    def phase_drain(self) -> None:
        keys = self.keys.all()
        highs = self.offsets_probe()
        for isolation in ("read_committed", "read_uncommitted"):
            c, p = self._poller(isolation, keys, f"drain-{isolation}")
            reached: dict[int, int] = {k: 0 for k in keys}
            deadline = time.monotonic() + self.cfg.drain_timeout_s
            idle = 0
            while time.monotonic() < deadline and idle < 4:
                op = self.poll(c, p, isolation)
                got = op.value[0][1] if op.type == "ok" else {}
                for k, recs in got.items():
                    reached[k] = max(reached[k], max(o for o, _ in recs) + 1)
                idle = 0 if got else idle + 1
                if all(reached[k] >= highs.get(k, 0) for k in keys) and idle >= 1:
                    break
            c.close()

    def offsets_probe(self) -> dict[int, int]:
        """ListOffsets with both isolation levels: each key's high watermark and last stable offset.

        Transaction markers are written after EndTxn returns (the coordinator answers once
        PrepareCommit/PrepareAbort is in its log, KIP-98 §5.4), so a last stable offset may lag
        for a moment after the last commit.  The probe repeats until every key's LSO reaches its
        high watermark or a grace period ends -- ``lso_grace_s``, plus ``transaction.timeout.ms``
        when a transaction's outcome is unknown (the coordinator must time it out first).  Only
        the last probe is *quiescent*: the one ``hanging-lso`` is judged on.
        """
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import AdminClient, OffsetSpec

        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "logger": client_logger("admin"),
                                **self.client_overrides}
        admin = AdminClient(conf)
        unknown = any(op.f == "txn" and op.type == "info" for op in self.rec.history().ops)
        grace = self.cfg.lso_grace_s + (self.cfg.transaction_timeout_ms / 1000 if unknown else 0.0)
        deadline = time.monotonic() + grace
        while True:
            last = time.monotonic() >= deadline
            inv = self.rec.invoke("probe", "offsets", None, quiescent=last)
            marks: dict[int, dict[str, int]] = {k: {} for k in self.keys.all()}
            try:
                for iso, name in (
                    (IsolationLevel.READ_UNCOMMITTED, "high_watermark"),
                    (IsolationLevel.READ_COMMITTED, "last_stable"),
                ):
                    req = {TopicPartition(*self.keys.location(k)): OffsetSpec.latest() for k in self.keys.all()}
                    futs = admin.list_offsets(req, isolation_level=iso, request_timeout=10)
                    for tp, fut in futs.items():
                        marks[self.keys.key(tp.topic, tp.partition)][name] = fut.result().offset
            except Exception as exc:
                self.rec.complete(inv, "info", **_error_fields(exc))
                return {}
            lagging = any(m["last_stable"] < m["high_watermark"] for m in marks.values())
            if not lagging:
                self.rec.complete(inv, "ok", marks, quiescent=True)  # caught up: this probe settles it
                break
            self.rec.complete(inv, "ok", marks)
            if last:
                break
            time.sleep(0.5)
        return {k: m.get("high_watermark", 0) for k, m in marks.items()}

    def run(self, phases: Sequence[str], nemesis: Any = None, time_limit_s: float = 0.0) -> History:
        """Run ``phases`` once; with a nemesis, run them in cycles until ``time_limit_s`` while it injects faults."""
        if nemesis is None:
            for phase in phases:
                getattr(self, "phase_" + phase.replace("-", "_"))()
        else:
            self.quiet_faults = True
            deadline = time.monotonic() + time_limit_s
            base = self.cfg.id_suffix
            nemesis.start()
            try:
                cycle = 0
                while time.monotonic() < deadline:
                    cycle += 1  # each cycle its own transactional ids and group: instances stay distinct
                    self.cfg = replace(self.cfg, id_suffix=f"{base}-c{cycle}")
                    for phase in phases:
                        getattr(self, "phase_" + phase.replace("-", "_"))()
                        if time.monotonic() >= deadline:
                            break
            finally:
                nemesis.stop()
            self.cfg = replace(self.cfg, id_suffix=base)
            self.rec.meta["nemesis"]["injected"] = list(nemesis.injected)
            self.rec.meta["nemesis"]["errors"] = list(nemesis.errors)
        self.phase_drain()
        self._abandoned.clear()
        view = [line for h in self.client_view for line in h.lines]
        self.rec.meta["client_view"] = [{"time": t, "client": who, "line": msg} for t, who, msg in sorted(view)]
        return self.rec.history()


def run_workload(
    bootstrap_servers: str,
    phases: Sequence[str],
    config: WorkloadConfig,
    faults: Faults,
    keys: KeyMap,
    meta: Mapping[str, Any] | None = None,
    client_overrides: Mapping[str, Any] | None = None,
    producer_overrides: Mapping[str, Any] | None = None,
    nemesis: tuple[Any, Sequence[Any], Mapping[str, Any], float] | None = None,
) -> History:
    """Run ``phases`` (then ``drain``) and return the recorded history.

    ``nemesis`` is ``(driver, events, meta, time_limit_s)``: the phases then run in cycles
    until the time limit while a :class:`keos.checker.conform.nemesis.Nemesis` injects the
    scheduled faults (``meta`` -- seed, kinds, schedule -- goes into the history).
    """
    rec = Recorder(
        {
            **(meta or {}),
            "phases": list(phases),
            "keys": {str(k): list(keys.location(k)) for k in keys.all()},
            "seed": config.seed,
        }
    )
    if producer_overrides:
        rec.meta["producer_overrides"] = dict(producer_overrides)
    wl = Workload(bootstrap_servers, keys, config, faults, rec, client_overrides, producer_overrides)
    if nemesis is None:
        return wl.run(phases)
    from .nemesis import Nemesis

    driver, events, nmeta, time_limit_s = nemesis
    rec.meta["nemesis"] = dict(nmeta)
    return wl.run(phases, Nemesis(driver, events, rec, wl.request_client_pause), time_limit_s)
