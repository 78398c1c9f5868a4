"""The checker: anomalies in a Kafka history, each with the operations that show it.

Names follow Jepsen's Kafka workload (``jepsen.tests.kafka``) where one exists,
so a report reads as Jepsen's would; keos adds the anomalies its model of
exactly-once semantics names.  Every anomaly carries the smallest set of
operations that demonstrates it: the writer and the reader of the record in
question, never the whole history.

Jepsen's names
--------------
``duplicate``            one value of a key at two offsets: an idempotent producer's retry
                         was appended twice (KIP-98 §5.2 sequence numbers exist to stop it).
``inconsistent-offsets`` two values observed at one offset of one key: readers disagree on
                         the log.
``lost-write``           an acknowledged send never read, although a reader read offsets
                         below and above it.
``G1a``                  aborted read: a read_committed poll returned a record of a
                         transaction that aborted (KIP-98 §4, the LSO and the aborted
                         transaction index must hide it).
``precommitted-read``    a read_committed poll returned a record before its transaction's
                         commit was even requested (open transactions stay below the LSO).
``poll-skip``            a consumer's successive polls of a key jumped over a committed
                         record.
``nonmonotonic-poll``    a consumer's successive polls of a key went backwards.
``nonmonotonic-send``    a producer's successive acknowledged sends to a key went backwards.
``G1c``                  circular information flow: committed operations that read each other's
                         writes (write-read dependencies) in a cycle, e.g. two consume-transform-
                         produce transactions each consuming the other's output.  ``G0`` (a cycle
                         of write-write orders alone) is not checked: Kafka promises no isolation
                         between concurrent transactional writers, so interleaved appends to two
                         partitions in opposite orders are allowed.

keos's names
------------
``torn-transaction``     a committed transaction is only partly visible: some of its
                         records were read, another was read past and never seen.
``zombie-not-fenced``    after a second instance of a transactional.id completed
                         InitProducerId (bumping the epoch, KIP-98 §5.1), the first
                         instance still had a send or commit succeed -- or a transaction
                         that was *open* at that moment committed or became visible to
                         read_committed readers (the coordinator must abort it).
``commit-after-expiry``  a commit acknowledged although its producer stalled, between its
                         last send and the commit, longer than ``transaction.timeout.ms``
                         plus the coordinator's abort interval; judged only on targets
                         whose history claims Kafka's semantics (``kafka_semantics``).
``hanging-lso``          with every transaction finished and the transaction timeout
                         elapsed, the last stable offset still lags the high watermark
                         (KAFKA-12671, the hanging transactions KIP-890 closes).
``invalid-client-transition``  the client's own state changes (librdkafka ``debug=eos``)
                         include one Kafka's ``TransactionManager`` never makes, or a new
                         InitProducerId kept the producer id without raising the epoch
                         (KIP-360).
``wrong-error-class``    the client classified an error differently from Kafka's producer
                         (retriable / abortable / fatal; KIP-360, KIP-588, KIP-890), or a
                         fenced zombie failed with something other than a fencing error.

Read isolation: a poll op's ``isolation`` field says how it read; an op without
one (as in Jepsen's histories, whose transactional workloads read committed) is
taken as ``read_committed``.  G1a, precommitted-read and torn-transaction are
judged on read_committed polls only.
"""

from __future__ import annotations

import bisect
import gc
import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .client_view import LIBRDKAFKA_STATES, valid
from .error_classes import FENCING_ERRORS, expected_classes
from .history import History, Op, Read, Write

__all__ = ["KINDS", "Analysis", "Anomaly", "AnomalyKind", "check", "kind"]


@dataclass(frozen=True)
class AnomalyKind:
    """One anomaly the checker looks for."""

    name: str
    origin: str  # "jepsen" or "keos"
    meaning: str
    reference: str
    needs: str  # what the history must contain for the check to say anything


KINDS: tuple[AnomalyKind, ...] = (
    AnomalyKind(
        "duplicate",
        "jepsen",
        "a value appears at more than one offset of a key",
        "KIP-98 §5.2 (producer sequence numbers)",
        "sends or polls",
    ),
    AnomalyKind(
        "inconsistent-offsets",
        "jepsen",
        "two values were observed at one offset of a key",
        "Jepsen jepsen.tests.kafka",
        "sends or polls",
    ),
    AnomalyKind(
        "lost-write",
        "jepsen",
        "an acknowledged send was never read, though a reader read past it",
        "Jepsen jepsen.tests.kafka",
        "acknowledged sends and polls",
    ),
    AnomalyKind(
        "G1a",
        "jepsen",
        "a read_committed poll returned a record of an aborted transaction",
        "KIP-98 §4 (LSO, aborted transaction index)",
        "aborted transactions and read_committed polls",
    ),
    AnomalyKind(
        "precommitted-read",
        "jepsen",
        "a read_committed poll returned a record before its commit was asked",
        "KIP-98 §4 (last stable offset)",
        "committed transactions with commit_at and read_committed polls",
    ),
    AnomalyKind(
        "poll-skip",
        "jepsen",
        "a consumer's successive polls of a key jumped over a committed record",
        "Jepsen jepsen.tests.kafka",
        "two or more polls by one consumer",
    ),
    AnomalyKind(
        "nonmonotonic-poll",
        "jepsen",
        "a consumer's successive polls of a key went backwards",
        "Jepsen jepsen.tests.kafka",
        "two or more polls by one consumer",
    ),
    AnomalyKind(
        "int-poll-skip",
        "jepsen",
        "within one operation, a consumer's reads of a key jumped over a record it should have returned",
        "Jepsen jepsen.tests.kafka",
        "operations reading two or more records of a key",
    ),
    AnomalyKind(
        "int-nonmonotonic-poll",
        "jepsen",
        "within one operation, a consumer's reads of a key went backwards",
        "Jepsen jepsen.tests.kafka",
        "operations reading two or more records of a key",
    ),
    AnomalyKind(
        "int-nonmonotonic-send",
        "jepsen",
        "within one operation, a producer's sends to a key landed in the opposite order",
        "Jepsen jepsen.tests.kafka",
        "operations sending two or more records to a key",
    ),
    AnomalyKind(
        "unseen",
        "jepsen",
        "an acknowledged send no poll ever returned",
        "Jepsen jepsen.tests.kafka",
        "acknowledged sends and polls",
    ),
    AnomalyKind(
        "nonmonotonic-send",
        "jepsen",
        "a producer's successive acknowledged sends to a key went backwards",
        "Jepsen jepsen.tests.kafka",
        "two or more acknowledged sends by one producer",
    ),
    AnomalyKind(
        "G1c",
        "jepsen",
        "committed operations read each other's writes in a cycle (circular information flow)",
        "Adya's G1c; Jepsen jepsen.tests.kafka",
        "transactions that both poll and send",
    ),
    AnomalyKind(
        "torn-transaction",
        "keos",
        "a committed transaction is only partly visible to read_committed readers",
        "KIP-98 §4 (atomic multi-partition writes)",
        "committed multi-record transactions and polls",
    ),
    AnomalyKind(
        "zombie-not-fenced",
        "keos",
        "an older instance of a transactional.id succeeded after a newer one's InitProducerId",
        "KIP-98 §5.1 (epoch fencing)",
        "two init ops of one transactional.id",
    ),
    AnomalyKind(
        "commit-after-expiry",
        "keos",
        "a commit was acknowledged although the producer stalled past its transaction timeout",
        "KIP-98 §5.6 (transaction.timeout.ms), TransactionCoordinator.abortTimedOutTransactions",
        "a transaction committed after a stall past transaction.timeout.ms + the abort interval, "
        "on a target claiming Kafka semantics",
    ),
    AnomalyKind(
        "hanging-lso",
        "keos",
        "the last stable offset lags the high watermark after every transaction ended",
        "KAFKA-12671, KIP-890",
        "quiescent offsets probe (ListOffsets after every transaction ended)",
    ),
    AnomalyKind(
        "invalid-client-transition",
        "keos",
        "the client's transaction state machine took a step Kafka's producer never takes",
        "TransactionManager.State.isTransitionValid, KIP-360",
        "client state changes (librdkafka debug=eos)",
    ),
    AnomalyKind(
        "wrong-error-class",
        "keos",
        "an error was classified unlike Kafka's producer classifies it",
        "KIP-360, KIP-588, KIP-890",
        "failed operations with the client's error class",
    ),
)

_BY_NAME = {k.name: k for k in KINDS}


def kind(name: str) -> AnomalyKind:
    return _BY_NAME[name]


@dataclass(frozen=True)
class Anomaly:
    """One finding: its kind, the key it concerns, a sentence, and the evidence."""

    kind: str
    key: Any
    summary: str
    ops: tuple[Op, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "summary": self.summary, "ops": [o.to_json() for o in self.ops]}

    def evidence(self) -> str:
        return "\n".join(op.brief() for op in self.ops)


@dataclass
class Analysis:
    """What :func:`check` found: anomalies, and which kinds the history could exercise."""

    anomalies: list[Anomaly]
    exercised: dict[str, bool]
    stats: dict[str, int] = field(default_factory=dict)

    def by_kind(self) -> dict[str, list[Anomaly]]:
        out: dict[str, list[Anomaly]] = defaultdict(list)
        for a in self.anomalies:
            out[a.kind].append(a)
        return dict(out)


def _evidence(*ops: Op | None) -> tuple[Op, ...]:
    seen: dict[int, Op] = {}
    for op in ops:
        if op is not None:
            seen[op.index] = op
    return tuple(seen[i] for i in sorted(seen))


def _committed_read(r: Read) -> bool:
    iso = r.op.extra.get("isolation")
    return iso is None or iso == "read_committed"


def _kept_keys(op: Op) -> set[Any]:
    """Keys whose read position an ``assign``/``subscribe`` completion keeps (Jepsen's ``select-keys``).

    A plain list of keys keeps the consumer's position on each key it already held; keos's
    own rewind records ``[key, offset]`` pairs (an explicit seek), which moves every one of them.
    """
    if op.type != "ok" or op.f not in ("assign", "subscribe") or not isinstance(op.value, list):
        return set()
    if any(isinstance(k, list) for k in op.value):
        return set()
    return {k for k in op.value if isinstance(k, int | str)}


class _Run:
    """One consumer's successive reads of one key (cut at re-assignments and crashes), indexed by offset."""

    __slots__ = ("_ordered", "committed", "key", "offsets", "reads")

    def __init__(self, key: Any, reads: list[Read]) -> None:
        self.key = key
        self.reads = reads
        self.committed = _committed_read(reads[0])
        ordered = sorted(reads, key=lambda r: r.offset)
        self.offsets = [r.offset for r in ordered]
        self._ordered = ordered

    def around(self, offset: int) -> tuple[Read, Read] | None:
        """The reads just below and just above ``offset``, if this run read on both sides of it."""
        i = bisect.bisect_left(self.offsets, offset)
        j = bisect.bisect_right(self.offsets, offset)
        if i == 0 or j == len(self.offsets):
            return None
        return self._ordered[i - 1], self._ordered[j]


class _Index:
    """The facts of a history, indexed once, so every check is (near-)linear in the history's size."""

    def __init__(self, h: History) -> None:
        self.h = h
        self.pairs: list[tuple[Op, Op]] = list(h.pairs())
        self.writes = h.writes()
        self.reads = h.reads()
        self.writer: dict[tuple[Any, Any], Write] = {}
        self.writes_of: dict[int, list[Write]] = defaultdict(list)
        for w in self.writes:
            self.writer.setdefault((w.key, w.value), w)
            self.writes_of[w.op.index].append(w)
        self.reads_of_op: dict[int, list[Read]] = defaultdict(list)
        self.reads_by_value: dict[tuple[Any, Any], list[Read]] = defaultdict(list)
        for r in self.reads:
            self.reads_of_op[r.op.index].append(r)
            self.reads_by_value[(r.key, r.value)].append(r)
        self.pairs_by_tid: dict[str, list[tuple[Op, Op]]] = defaultdict(list)
        self.txn_pairs: list[tuple[Op, Op]] = []
        for inv, done in self.pairs:
            if done.f in ("send", "txn") and "transactional_id" in done.extra:
                self.pairs_by_tid[str(done.extra["transactional_id"])].append((inv, done))
            if done.f == "txn":
                self.txn_pairs.append((inv, done))
        # Jepsen's must-have-committed?: ok, or info with one of its sends read by an ok read.
        # Only a read_committed read proves a commit (a read_uncommitted one also returns open and
        # aborted transactions' records; Jepsen's transactional histories read committed).
        self.rc_reads: list[Read] = [r for r in self.reads if _committed_read(r)]
        rc_by_value: dict[tuple[Any, Any], Read] = {}
        for r in self.rc_reads:
            rc_by_value.setdefault((r.key, r.value), r)
        self.promoted: dict[int, Op] = {}  # info op -> an ok read_committed read proving one of its sends
        for i, ws in self.writes_of.items():
            if ws[0].op.type == "info":
                for w in ws:
                    proof = rc_by_value.get((w.key, w.value))
                    if proof is not None:
                        self.promoted[i] = proof.op
                        break
        # Jepsen's version order: key -> offset -> value -> first op that placed it there.  Sends
        # count when their writer must have committed; polls count whatever their operation's
        # outcome (a consumer must never return bad data, even inside an aborted transaction).
        self.at: dict[Any, dict[int, dict[Any, Op]]] = defaultdict(lambda: defaultdict(dict))
        for w in self.writes:
            if w.offset is not None and (w.op.type == "ok" or w.op.index in self.promoted):
                self.at[w.key][w.offset].setdefault(w.value, w.op)
        for r in self.reads:
            self.at[r.key][r.offset].setdefault(r.value, r.op)
        for op in h.ops:
            if op.type in ("fail", "info") and op.f in ("poll", "txn"):
                for key, records in _op_reads(op).items():
                    for offset, v in records:
                        self.at[key][offset].setdefault(v, op)
        self.read_values: dict[Any, set[Any]] = defaultdict(set)
        for r in self.reads:
            self.read_values[r.key].add(r.value)
        # process -> key -> [Read] in history order, cut at re-assignments and crashes
        self.runs: list[tuple[Any, list[Read]]] = []
        current: dict[tuple[Any, Any], list[Read]] = {}
        open_keys: dict[Any, set[Any]] = defaultdict(set)
        for op in h.ops:
            if op.f in ("assign", "subscribe") and op.type in ("invoke", "fail"):
                continue  # Jepsen: an assignment that did not happen changes no position
            if op.f in ("assign", "subscribe", "crash") or (op.type == "info" and op.f == "poll"):
                kept = _kept_keys(op)
                for k in list(open_keys.get(op.process, ())):
                    if k in kept:
                        continue
                    open_keys[op.process].discard(k)
                    self.runs.append((k, current.pop((op.process, k))))
                continue
            if op.type != "ok" or op.f not in ("poll", "txn"):
                continue
            for r in self.reads_of_op.get(op.index, ()):
                current.setdefault((op.process, r.key), []).append(r)
                open_keys[op.process].add(r.key)
        self.runs.extend((k, run) for (_, k), run in current.items())
        self.runs_by_key: dict[Any, list[_Run]] = defaultdict(list)
        for k, run in self.runs:
            self.runs_by_key[k].append(_Run(k, run))
        self._committed: dict[Any, tuple[dict[int, Write], list[int]]] = {}
        self._known: dict[Any, list[int]] = {}
        self.last_poll: Op = self.reads[-1].op if self.reads else h.ops[0] if h.ops else Op(0, 0, "ok", 0, "poll")
        # Values a read_committed reader saw: visible whoever wrote them (a skip over one is a skip).
        self.rc_seen: set[tuple[Any, Any]] = {(r.key, r.value) for r in self.rc_reads}

    def proof(self, op: Op | None) -> tuple[Op, ...]:
        """The read that promotes ``op`` (an ``info`` send) to committed, with its invocation, if any."""
        if op is None or op.index not in self.promoted:
            return ()
        read = self.promoted[op.index]
        return (self.h.invocation(read), read)

    def committed_op(self, op: Op) -> bool:
        """Jepsen's ``must-have-committed?``: ``ok``, or ``info`` and a read proves one of its sends."""
        return op.type == "ok" or op.index in self.promoted

    def reads_of(self, op: Op) -> list[Read]:
        return self.reads_of_op.get(op.index, [])

    def committed_offsets(self, key: Any) -> dict[int, Write]:
        """Offsets of a key holding a record whose writer's outcome is ``ok``."""
        return self._committed_sorted(key)[0]

    def _committed_sorted(self, key: Any) -> tuple[dict[int, Write], list[int]]:
        got = self._committed.get(key)
        if got is None:
            out: dict[int, Write] = {}
            for offset, values in self.at[key].items():
                for v in values:
                    w = self.writer.get((key, v))
                    if w is not None and (self.committed_op(w.op) or (key, v) in self.rc_seen):
                        out[offset] = w
                    elif w is None and (key, v) in self.rc_seen:  # no send recorded (e.g. Jepsen's setup)
                        out.setdefault(offset, Write(key, v, offset, values[v], values[v]))
            got = (out, sorted(out))
            self._committed[key] = got
        return got

    def committed_between(self, key: Any, lo: int, hi: int) -> int | None:
        """The smallest committed offset strictly between ``lo`` and ``hi``."""
        _, offsets = self._committed_sorted(key)
        i = bisect.bisect_right(offsets, lo)
        return offsets[i] if i < len(offsets) and offsets[i] < hi else None

    def known_between(self, key: Any, lo: int, hi: int) -> int | None:
        """The smallest offset anyone observed strictly between ``lo`` and ``hi``."""
        offsets = self._known.get(key)
        if offsets is None:
            offsets = self._known[key] = sorted(self.at[key])
        i = bisect.bisect_right(offsets, lo)
        return offsets[i] if i < len(offsets) and offsets[i] < hi else None


def _duplicates(ix: _Index) -> Iterable[Anomaly]:
    where: dict[tuple[Any, Any], dict[int, Op]] = defaultdict(dict)
    for key, offsets in ix.at.items():
        for offset, values in offsets.items():
            for v, op in values.items():
                where[(key, v)][offset] = op
    for (key, v), places in sorted(where.items(), key=lambda kv: repr(kv[0])):
        if len(places) > 1:
            w = ix.writer.get((key, v))
            shown = sorted(places)
            yield Anomaly(
                "duplicate",
                key,
                f"value {v} of key {key} is at offsets {shown}",
                _evidence(w.invoke if w else None, w.op if w else None, *places.values()),
            )


def _inconsistent(ix: _Index) -> Iterable[Anomaly]:
    for key, offsets in ix.at.items():
        for offset, values in sorted(offsets.items()):
            if len(values) > 1:
                yield Anomaly(
                    "inconsistent-offsets",
                    key,
                    f"offset {offset} of key {key} was seen holding {sorted(values, key=repr)}",
                    _evidence(*values.values(), *(p for op in values.values() for p in ix.proof(op))),
                )


def _aborted_reads(ix: _Index) -> Iterable[Anomaly]:
    seen: set[int] = set()
    for r in ix.rc_reads:
        w = ix.writer.get((r.key, r.value))
        if w is None or w.op.type != "fail" or w.op.index in seen:
            continue
        seen.add(w.op.index)  # one finding per aborted writer: its first read_committed reader
        yield Anomaly(
            "G1a",
            r.key,
            f"read_committed poll #{r.op.index} read value {r.value} of key {r.key} at offset {r.offset}, "
            f"written by #{w.op.index}, which {'aborted' if w.op.f == 'txn' else 'failed'}",
            _evidence(w.invoke, w.op, r.op),
        )


def _precommitted(ix: _Index) -> Iterable[Anomaly]:
    seen: set[int] = set()
    for r in ix.rc_reads:
        w = ix.writer.get((r.key, r.value))
        if w is not None and w.op.index == r.op.index and w.op.index not in seen:
            seen.add(w.op.index)  # Jepsen's precommitted read: a transaction polled its own send
            yield Anomaly(
                "precommitted-read",
                r.key,
                f"transaction #{r.op.index} polled its own send of value {r.value} to key {r.key} before it "
                "committed (read_committed consumers never see uncommitted records)",
                _evidence(ix.h.invocation(r.op), r.op),
            )
            continue
        if w is None or w.op.type != "ok" or "commit_at" not in w.op.extra:
            continue
        commit_at = int(w.op.extra["commit_at"])
        if r.op.time < commit_at and w.op.index not in seen:
            seen.add(w.op.index)
            yield Anomaly(
                "precommitted-read",
                r.key,
                f"read_committed poll #{r.op.index} returned value {r.value} of key {r.key} at "
                f"{r.op.time / 1e6:.1f} ms; its transaction #{w.op.index} asked to commit only at "
                f"{commit_at / 1e6:.1f} ms",
                _evidence(w.invoke, r.op, w.op),
            )


def _read_past(ix: _Index, key: Any, offset: int, committed_only: bool = False) -> tuple[Read, Read] | None:
    """A run of one consumer (a read_committed one if ``committed_only``) that read below and above ``offset``."""
    for run in ix.runs_by_key.get(key, ()):
        if committed_only and not run.committed:
            continue
        got = run.around(offset)
        if got is not None:
            return got
    return None


def _lost(ix: _Index) -> Iterable[Anomaly]:
    """Jepsen's lost write: below the highest offset any reader reached, an acknowledged send nobody read.

    For each key, the bound is the largest *first* offset of any value read (by any ok
    read, of either isolation level); every value whose *last* offset is at or below it
    must have been read by someone if its writer committed (``ok``, or ``info`` promoted
    by a read of another of its sends).  Values are placed by every acknowledged send and
    every read (Jepsen's version order).
    """
    first: dict[tuple[Any, Any], int] = {}
    last: dict[tuple[Any, Any], int] = {}
    for key, offsets in ix.at.items():
        for offset in sorted(offsets):
            for v in offsets[offset]:
                first.setdefault((key, v), offset)
                last[(key, v)] = offset
    bound: dict[Any, tuple[int, Read]] = {}
    for r in ix.reads:
        o = first.get((r.key, r.value), r.offset)
        if r.key not in bound or o > bound[r.key][0]:
            bound[r.key] = (o, r)
    for w in ix.writes:
        if w.offset is None or not ix.committed_op(w.op) or w.value in ix.read_values[w.key] or w.key not in bound:
            continue
        top, reader = bound[w.key]
        if last.get((w.key, w.value), w.offset) > top:
            continue
        yield Anomaly(
            "lost-write",
            w.key,
            f"value {w.value} acknowledged at offset {w.offset} of key {w.key} was never read, though "
            f"poll #{reader.op.index} read offset {reader.offset} of key {w.key}",
            _evidence(w.invoke, w.op, reader.op, *ix.proof(w.op)),
        )


def _unseen(ix: _Index) -> Iterable[Anomaly]:
    """Jepsen's ``unseen``: at the end of the history, acknowledged sends no poll ever returned.

    Weaker evidence than a lost write (no reader need have gone past them); judged only
    on histories that read at all.  keos's workloads end with a drain reading every key
    to its high watermark, so an unseen send there is a send the brokers dropped.
    """
    if not ix.reads:
        return
    for w in ix.writes:
        if w.op.type == "ok" and w.value not in ix.read_values[w.key]:
            where = f"at offset {w.offset} " if w.offset is not None else ""
            yield Anomaly(
                "unseen",
                w.key,
                f"value {w.value} acknowledged {where}of key {w.key} was never polled by anyone "
                f"(the history's last poll is #{ix.last_poll.index})",
                _evidence(w.invoke, w.op, ix.last_poll),
            )


def _wr_graph(ix: _Index) -> nx.DiGraph:
    """Committed operation -> committed operation that read one of its records (write-read dependencies).

    Only operations that both read and wrote can lie on a cycle (a pure writer has no
    incoming edge, a pure reader no outgoing one), so only edges between such operations
    are built: the graph stays small however long the history.
    """
    both = {i for i in ix.reads_of_op if i in ix.writes_of}
    edges: dict[tuple[int, int], Read] = {}
    for i in both:
        for r in ix.reads_of_op[i]:
            w = ix.writer.get((r.key, r.value))
            if w is not None and w.op.type == "ok" and r.op.type == "ok" and w.op.index != i and w.op.index in both:
                edges.setdefault((w.op.index, i), r)
    g = nx.DiGraph()
    g.add_edges_from((a, b, {"read": r}) for (a, b), r in edges.items())
    return g


def _g1c(ix: _Index) -> Iterable[Anomaly]:
    g = _wr_graph(ix)
    ops = {op.index: op for op in ix.h.ops}
    for component in nx.strongly_connected_components(g):
        if len(component) < 2:
            continue
        sub = g.subgraph(component)
        # the shortest cycle in the component: a shortest path back from some edge's head to its tail
        best: list[int] | None = None
        for u, v in sub.edges:
            path = nx.shortest_path(sub, v, u)
            if best is None or len(path) < len(best):
                best = path
        assert best is not None
        cycle = best + [best[0]]
        steps = "; ".join(
            f"#{b} read value {sub.edges[a, b]['read'].value} of key {sub.edges[a, b]['read'].key} written by #{a}"
            for a, b in itertools.pairwise(cycle)
        )
        yield Anomaly(
            "G1c",
            None,
            f"committed operations read each other's writes in a cycle: {steps}",
            _evidence(*(ops[i] for i in best), *(ix.h.invocation(ops[i]) for i in best)),
        )


def _torn(ix: _Index) -> Iterable[Anomaly]:
    by_op: dict[int, list[Write]] = defaultdict(list)
    for w in ix.writes:
        if w.op.f == "txn" and w.op.type == "ok":
            by_op[w.op.index].append(w)
    committed_reads: dict[tuple[Any, Any], Read] = {}
    for r in ix.rc_reads:
        committed_reads.setdefault((r.key, r.value), r)
    for ws in by_op.values():
        if len(ws) < 2:
            continue
        seen = [w for w in ws if (w.key, w.value) in committed_reads]
        missing = [
            (w, past)
            for w in ws
            if (w.key, w.value) not in committed_reads
            and w.offset is not None
            and (past := _read_past(ix, w.key, w.offset, committed_only=True)) is not None
        ]
        if seen and missing:
            w0 = seen[0]
            wm, (below, above) = missing[0]
            yield Anomaly(
                "torn-transaction",
                wm.key,
                f"transaction #{w0.op.index} committed; poll #{committed_reads[(w0.key, w0.value)].op.index} read its "
                f"value {w0.value} of key {w0.key}, but its value {wm.value} at offset {wm.offset} of key {wm.key} was "
                f"read past (offsets {below.offset} and {above.offset}) and never seen",
                _evidence(w0.invoke, w0.op, committed_reads[(w0.key, w0.value)].op, below.op, above.op),
            )


def _op_reads(op: Op) -> dict[Any, list[tuple[int, Any]]]:
    """Every ``[offset, value]`` an operation's polls returned, per key, in order (any outcome)."""
    out: dict[Any, list[tuple[int, Any]]] = {}
    if not isinstance(op.value, list):
        return out
    for mop in op.value:
        if isinstance(mop, list) and len(mop) == 2 and mop[0] == "poll" and isinstance(mop[1], Mapping):
            for key, records in mop[1].items():
                for rec in records:
                    if isinstance(rec, list | tuple) and len(rec) == 2 and rec[0] is not None:
                        out.setdefault(key, []).append((int(rec[0]), rec[1]))
    return out


def _poll_order(ix: _Index) -> Iterable[Anomaly]:
    """Jepsen's poll-skip / nonmonotonic-poll (per process) and int-poll-skip / int-nonmonotonic-poll (per op).

    As ``poll-skip+nonmonotonic-cases-per-process``: each process's last *ok* read of a key
    is compared with the first read of the key by its next poll or transaction of any
    outcome (an aborted or crashed transaction's polls must also resume where the last
    committed one left off); an ``assign``/``subscribe`` forgets the keys it drops (keos's
    rewind, an explicit seek, forgets the keys it seeks).  Within one operation, successive
    reads of a key are compared the same way (``int-``).  A skip is over a record the
    reader should have returned: for read_committed, one whose writer committed (or was
    promoted by a read) or that a read_committed reader saw; for read_uncommitted, any.
    """
    last: dict[tuple[Any, Any], tuple[int, Op]] = {}
    for op in ix.h.ops:
        if op.type == "invoke":
            continue
        if op.f in ("assign", "subscribe", "crash"):
            if op.type == "fail":
                continue
            kept = _kept_keys(op) if op.f != "crash" else set()
            for pk in [pk for pk in last if pk[0] == op.process and pk[1] not in kept]:
                del last[pk]
            continue
        if op.f not in ("poll", "txn"):
            continue
        rc = (op.isolation or "read_committed") == "read_committed"
        for key, reads in _op_reads(op).items():
            prev = last.get((op.process, key))
            pairs: list[tuple[int, int, Op, str]] = []
            if prev is not None:
                pairs.append((prev[0], reads[0][0], prev[1], ""))
            # adjacent offsets can neither skip nor go back: only other pairs need a look
            pairs.extend((a[0], b[0], op, "int-") for a, b in itertools.pairwise(reads) if b[0] != a[0] + 1)
            for a_off, b_off, a_op, inner in pairs:
                if b_off != a_off + 1:
                    yield from _order_case(ix, key, a_off, b_off, a_op, op, inner, rc)
            if op.type == "ok":
                last[(op.process, key)] = (reads[-1][0], op)


def _order_case(ix: _Index, key: Any, a: int, b: int, a_op: Op, b_op: Op, inner: str, rc: bool) -> Iterable[Anomaly]:
    where = f"#{a_op.index}" if a_op.index == b_op.index else f"#{a_op.index}) and then (#{b_op.index}"
    if b <= a:
        yield Anomaly(
            f"{inner}nonmonotonic-poll",
            key,
            f"consumer p{b_op.process} read offset {a} of key {key} and then offset {b} ({where})",
            _evidence(a_op, b_op),
        )
        return
    o = ix.committed_between(key, a, b) if rc else ix.known_between(key, a, b)
    if o is None:
        return
    skipped = ix.committed_offsets(key).get(o)
    writer = skipped.op if skipped is not None and skipped.op.f in ("send", "txn") else None
    seen_by = [op for op in ix.at[key][o].values() if op.f in ("poll", "txn")]
    yield Anomaly(
        f"{inner}poll-skip",
        key,
        f"consumer p{b_op.process} read offset {a} of key {key} and then offset {b} ({where}), skipping offset {o}"
        + (f" (value {skipped.value}, written by #{writer.index})" if skipped and writer else ""),
        _evidence(a_op, b_op, writer, *(ix.h.invocation(x) for x in (a_op, b_op)), *seen_by[:1], *ix.proof(writer)),
    )


def _send_order(ix: _Index) -> Iterable[Anomaly]:
    """Jepsen's nonmonotonic-send and int-nonmonotonic-send (``ok`` and ``info`` sends).

    A send is placed by its acknowledged offset, or by a read of it.  Per process and key,
    each operation's first send must land after the previous operation's last send;
    within one operation, successive sends to a key must land in order.  An
    ``assign``/``subscribe`` forgets the keys it drops, as in Jepsen.
    """
    last: dict[tuple[Any, Any], tuple[Write, int]] = {}
    for op in ix.h.ops:
        if op.f in ("assign", "subscribe") and op.type not in ("invoke", "fail"):
            kept = _kept_keys(op)
            for pk in [pk for pk in last if pk[0] == op.process and pk[1] not in kept]:
                del last[pk]
            continue
        if op.type not in ("ok", "info") or op.f not in ("send", "txn"):
            continue
        previous_op = dict(last)
        for w in ix.writes_of.get(op.index, ()):
            offset = w.offset if w.offset is not None else _first_offset(ix, w.key, w.value)
            if offset is None:
                continue
            k = (w.op.process, w.key)
            prev = last.get(k)
            if prev is not None and offset <= prev[1]:
                pw, po = prev
                inner = "int-" if pw.op.index == w.op.index else ""
                if inner or previous_op.get(k) is prev:
                    yield Anomaly(
                        f"{inner}nonmonotonic-send",
                        w.key,
                        f"producer p{w.op.process} sent value {pw.value} to offset {po} of key {w.key} and then "
                        f"value {w.value} to offset {offset}",
                        _evidence(pw.invoke, pw.op, w.invoke, w.op, *_readers_of(ix, w), *_readers_of(ix, pw)),
                    )
            last[k] = (w, offset)


def _first_offset(ix: _Index, key: Any, value: Any) -> int | None:
    reads = ix.reads_by_value.get((key, value))
    return min(r.offset for r in reads) if reads else None


def _readers_of(ix: _Index, w: Write) -> tuple[Op, ...]:
    """The first read of an unacknowledged send (it places the send in the log)."""
    if w.offset is not None:
        return ()
    reads = ix.reads_by_value.get((w.key, w.value), [])
    return (reads[0].op,) if reads else ()


def _instances(h: History) -> dict[str, list[tuple[Any, Op]]]:
    """transactional.id -> [(instance, InitProducerId ok op)], in order of completion."""
    out: dict[str, list[tuple[Any, Op]]] = defaultdict(list)
    for op in h.ops:
        if op.f == "init" and op.type == "ok" and "transactional_id" in op.extra:
            out[str(op.extra["transactional_id"])].append((op.extra.get("instance"), op))
    return dict(out)


def _open_at(inv: Op, done: Op, fenced_at: int) -> bool:
    """Whether ``inv``..``done`` (an older instance's op) was still undecided when its successor's init completed.

    A send or transaction invoked after the successor's InitProducerId completed, or a
    transaction whose commit was asked only after it (``commit_at``; without one, one that
    completed after it): Kafka's coordinator had already bumped the epoch and aborted
    whatever the older instance had open (``TransactionCoordinator.handleInitProducerId``).
    """
    if inv.time > fenced_at:
        return True
    if done.f != "txn" or done.time <= fenced_at:
        return False
    commit_at = done.extra.get("commit_at")
    return commit_at is None or int(commit_at) > fenced_at


def _zombies(ix: _Index) -> Iterable[Anomaly]:
    """An older instance's send or transaction that succeeded, or became visible, after it was fenced.

    Judged for fencing *between* transactions (the op began after the successor's
    InitProducerId completed) and *during* one (the op's transaction was open then: the
    coordinator must abort it, so its commit must fail and its records stay invisible to
    read_committed readers, whatever the zombie was told).
    """
    h = ix.h
    for tid, inits in _instances(h).items():
        by_instance: dict[Any, list[tuple[Op, Op]]] = defaultdict(list)
        for inv, done in ix.pairs_by_tid.get(tid, ()):
            by_instance[done.extra.get("instance")].append((inv, done))
        for i, (older, older_init) in enumerate(inits):
            for newer, newer_init in inits[i + 1 :]:
                if newer == older:
                    continue
                for inv, done in by_instance.get(older, ()):
                    if not _open_at(inv, done, newer_init.time):
                        continue
                    visible = [
                        r
                        for w in ix.writes_of.get(done.index, ())
                        for r in ix.reads_by_value.get((w.key, w.value), ())
                        if _committed_read(r)
                    ]
                    if done.type != "ok" and not visible:
                        continue
                    during = inv.time <= newer_init.time
                    what = "whose transaction was open when" if during else "after"
                    outcome = "completed" if done.type == "ok" else f"ended {done.type} ({done.error}) for"
                    yield Anomaly(
                        "zombie-not-fenced",
                        None,
                        f"instance {older} of transactional.id {tid} {outcome} #{done.index} ({done.f}) {what} "
                        f"instance {newer} finished InitProducerId (#{newer_init.index})"
                        + (f"; read_committed poll #{visible[0].op.index} returned its record" if visible else ""),
                        _evidence(older_init, newer_init, inv, done, visible[0].op if visible else None),
                    )
                    break


def _commit_after_expiry(ix: _Index) -> Iterable[Anomaly]:
    """A commit acknowledged although the producer had stalled past its transaction timeout.

    Kafka's coordinator aborts a transaction once ``transaction.timeout.ms`` passed since
    its first AddPartitionsToTxn, checking every
    ``transaction.abort.timed.out.transaction.cleanup.interval.ms``
    (``TransactionCoordinator.abortTimedOutTransactions``, KIP-98 §5.6) and bumping the
    epoch, so a producer that then asks to commit is fenced.  Judged only on targets that
    claim Kafka's semantics (history meta ``kafka_semantics``) and know the interval
    (``abort_interval_ms``), with a 2 s margin for the clock of keos's own recording.
    """
    if not ix.h.meta.get("kafka_semantics") or ix.h.meta.get("abort_interval_ms") is None:
        return
    for inv, done, stall, limit in _stalled_commits(ix):
        if done.type != "ok":
            continue
        yield Anomaly(
            "commit-after-expiry",
            None,
            f"transaction #{done.index} committed although its producer stalled {stall / 1e9:.1f} s between its "
            f"last send and its commit, past transaction.timeout.ms + the coordinator's abort interval "
            f"({limit / 1e9:.1f} s with margin): the coordinator should have aborted it and fenced the producer",
            _evidence(inv, done),
        )


_EXPIRY_MARGIN_NS = 2_000_000_000


def _stalled_commits(ix: _Index) -> Iterable[tuple[Op, Op, int, int]]:
    interval_ms = int(ix.h.meta.get("abort_interval_ms") or 0)
    for inv, done in ix.txn_pairs:
        sent_at, commit_at, timeout_ms = (done.extra.get(k) for k in ("sent_at", "commit_at", "transaction_timeout_ms"))
        if sent_at is None or commit_at is None or timeout_ms is None:
            continue
        stall = int(commit_at) - int(sent_at)
        limit = (int(timeout_ms) + interval_ms) * 1_000_000 + _EXPIRY_MARGIN_NS
        if stall > limit:
            yield inv, done, stall, limit


def _hanging_lso(ix: _Index) -> Iterable[Anomaly]:
    for op in ix.h.ops:
        if op.f != "offsets" or op.type != "ok" or not op.extra.get("quiescent") or not isinstance(op.value, Mapping):
            continue
        for key, marks in op.value.items():
            lso, high = marks.get("last_stable"), marks.get("high_watermark")
            if lso is None or high is None or lso >= high:
                continue
            # The suspects: transactions on this key whose outcome the client never learnt (``info``)
            # first, then aborted ones (whose abort markers the broker may have failed to write).
            open_txns = sorted(
                (
                    done
                    for inv, done in ix.h.pairs()
                    if done.f == "txn"
                    and done.type != "ok"
                    and any(
                        isinstance(m, list) and len(m) == 3 and m[0] == "send" and str(m[1]) == str(key)
                        for m in (inv.value or [])
                    )
                ),
                key=lambda op: (op.type != "info", -op.index),
            )
            yield Anomaly(
                "hanging-lso",
                key,
                f"at the final probe (every transaction committed, aborted or abandoned past its timeout) key "
                f"{key}'s last stable offset is {lso} but its high watermark is {high}",
                _evidence(*(ix.h.invocation(t) for t in open_txns[:1]), *open_txns[:1], op),
            )


def _error_classes(ix: _Index) -> Iterable[Anomaly]:
    h = ix.h
    fenced_at: dict[str, tuple[Any, Op]] = {}
    first_init: dict[tuple[str, Any], Op] = {}
    for txn_id, inits in _instances(h).items():
        for instance, init in inits:
            first_init.setdefault((txn_id, instance), init)
        if len(inits) > 1:
            fenced_at[txn_id] = (inits[-1][0], inits[-1][1])
    for inv, done in h.pairs():
        if done.error is None or done.type == "ok":
            continue
        said = done.extra.get("error_class")
        allowed = expected_classes(done.error)
        if said is not None and allowed and said not in allowed:
            yield Anomaly(
                "wrong-error-class",
                None,
                f"#{done.index} failed with {done.error}, which the client classified as {said}; Kafka's producer "
                f"treats it as {' or '.join(sorted(allowed))}",
                _evidence(inv, done),
            )
            continue
        tid = done.extra.get("transactional_id")
        if tid in fenced_at:
            newest, newest_init = fenced_at[tid]
            if (
                done.extra.get("instance") != newest
                and _open_at(inv, done, newest_init.time)
                and done.error not in FENCING_ERRORS
                and done.f in ("send", "txn")
            ):
                yield Anomaly(
                    "wrong-error-class",
                    None,
                    f"fenced instance {done.extra.get('instance')} of {tid} failed #{done.index} with {done.error}, "
                    f"not a fencing error ({', '.join(sorted(FENCING_ERRORS))})",
                    _evidence(first_init.get((str(tid), done.extra.get("instance"))), newest_init, inv, done),
                )


def _client_transitions(ix: _Index) -> Iterable[Anomaly]:
    last_pid: dict[Any, Op] = {}
    for op in ix.h.ops:
        if op.f == "client-pid" and isinstance(op.value, list) and len(op.value) == 2:
            prev = last_pid.get(op.process)
            last_pid[op.process] = op
            if prev is not None and prev.value[0] == op.value[0] and int(op.value[1]) <= int(prev.value[1]):
                yield Anomaly(
                    "invalid-client-transition",
                    None,
                    f"client {op.process} acquired producer id {op.value[0]} with epoch {op.value[1]} after epoch "
                    f"{prev.value[1]}: an InitProducerId for the same producer id must bump the epoch (KIP-360)",
                    _evidence(prev, op),
                )
            continue
        if op.f != "client-state" or not (isinstance(op.value, list) and len(op.value) == 2):
            continue
        source, target = str(op.value[0]), str(op.value[1])
        if valid(source, target) is False:
            yield Anomaly(
                "invalid-client-transition",
                None,
                f"client {op.process} went {source} -> {target}: Kafka's producer never enters "
                f"{LIBRDKAFKA_STATES[target]} from {LIBRDKAFKA_STATES[source]}",
                _evidence(op),
            )


_CHECKS = (
    ("duplicate", _duplicates),
    ("inconsistent-offsets", _inconsistent),
    ("lost-write", _lost),
    ("G1a", _aborted_reads),
    ("precommitted-read", _precommitted),
    ("poll-skip", None),
    ("nonmonotonic-poll", None),
    ("int-poll-skip", None),
    ("int-nonmonotonic-poll", None),
    ("nonmonotonic-send", _send_order),
    ("int-nonmonotonic-send", None),
    ("unseen", _unseen),
    ("G1c", _g1c),
    ("torn-transaction", _torn),
    ("zombie-not-fenced", _zombies),
    ("commit-after-expiry", _commit_after_expiry),
    ("hanging-lso", _hanging_lso),
    ("invalid-client-transition", _client_transitions),
    ("wrong-error-class", _error_classes),
)


def _reads_and_writes(value: Any) -> bool:
    mops = value if isinstance(value, list) else []
    kinds = {m[0] for m in mops if isinstance(m, list) and m}
    return {"poll", "send"} <= kinds


def _exercised(ix: _Index) -> dict[str, bool]:
    h = ix.h
    acked = [w for w in ix.writes if w.op.type == "ok" and w.offset is not None]
    rc_reads = ix.rc_reads
    aborted = any(w.op.type == "fail" and w.op.f == "txn" for w in ix.writes)
    committed_txn = [w for w in ix.writes if w.op.f == "txn" and w.op.type == "ok"]
    long_runs = any(len(run) > 1 for _, run in ix.runs)
    by_proc: dict[tuple[Any, Any], int] = defaultdict(int)
    for w in acked:
        by_proc[(w.op.process, w.key)] += 1
    return {
        "duplicate": bool(ix.writes or ix.reads),
        "inconsistent-offsets": bool(ix.writes or ix.reads),
        "lost-write": bool(acked and ix.reads),
        "G1a": aborted and bool(rc_reads),
        "precommitted-read": any("commit_at" in w.op.extra for w in committed_txn) and bool(rc_reads),
        "poll-skip": long_runs,
        "nonmonotonic-poll": long_runs,
        "nonmonotonic-send": any(n > 1 for n in by_proc.values()),
        "int-poll-skip": any(len(rs) > 1 for rs in ix.reads_of_op.values()),
        "int-nonmonotonic-poll": any(len(rs) > 1 for rs in ix.reads_of_op.values()),
        "int-nonmonotonic-send": any(len(ws) > len({w.key for w in ws}) for ws in ix.writes_of.values()),
        "unseen": bool(acked and ix.reads),
        "G1c": sum(1 for op in h.ops if op.type == "ok" and op.f == "txn" and _reads_and_writes(op.value)) > 1,
        "torn-transaction": bool(committed_txn) and bool(rc_reads),
        "zombie-not-fenced": any(len(v) > 1 for v in _instances(h).values()),
        "commit-after-expiry": bool(h.meta.get("kafka_semantics") and h.meta.get("abort_interval_ms") is not None)
        and any(True for _ in _stalled_commits(ix)),
        "hanging-lso": any(op.f == "offsets" and op.type == "ok" and op.extra.get("quiescent") for op in h.ops),
        "invalid-client-transition": any(op.f in ("client-state", "client-pid") for op in h.ops),
        "wrong-error-class": any(op.error is not None and op.type != "invoke" for op in h.ops),
    }


def check(history: History) -> Analysis:
    """Every anomaly of :data:`KINDS` in ``history``.

    The cyclic garbage collector is paused meanwhile: the index holds hundreds of
    thousands of small objects and none of them forms a cycle, so each collection
    pass would only re-walk them (making a large history's check superlinear).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _check(history)
    finally:
        if enabled:
            gc.enable()


def _check(history: History) -> Analysis:
    ix = _Index(history)
    found: list[Anomaly] = []
    for name, fn in _CHECKS:
        if fn is not None:
            found.extend(fn(ix))
        elif name == "poll-skip":
            found.extend(_poll_order(ix))
    stats = {
        "operations": len(history),
        "sends": len(ix.writes),
        "acknowledged_sends": sum(1 for w in ix.writes if w.op.type == "ok"),
        "records_read": len(ix.reads),
        "keys": len({w.key for w in ix.writes} | {r.key for r in ix.reads}),
    }
    return Analysis(found, _exercised(ix), stats)
