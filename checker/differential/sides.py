"""The two sides of a differential run: the model's handlers and a real Kafka broker.

Both sides answer the same :class:`~keos.checker.differential.cases.Step` with the same
normalised :class:`Answer` and expose the same :class:`Observation` after every step, so the
runner compares plain values.

**The model side** calls the model's pure request handlers directly, exactly as the composed
systems do (``model/systems/transactions.py`` ``_on_produce`` / ``_send_markers`` / ``_on_marker``):
``TransactionCoordinator`` (``model/coordinator/transaction/transaction_coordinator.py``), the
partition leader with KIP-890 part 1 verification (``model/log/partition.py``), markers
(``model/log/txn_markers.py``), the classic group (``model/coordinator/group/classic_group.py``)
and committed/pending offsets (``model/coordinator/group/group_coordinator.py``).  Markers are
written and the transaction completed before the next request (:meth:`ModelSide.settle`): the
broker does the same asynchronously within milliseconds and the Kafka side waits for it.

**The Kafka side** sends the requests with :class:`~keos.checker.differential.wire.KafkaWire`
(kio's schema classes) and reads the observers DescribeTransactions, DescribeProducers,
ListTransactions, Fetch (read_uncommitted for the batch layout, read_committed for the LSO and
the aborted transactions) and OffsetFetch.

Identifiers the broker allocates (producer ids, member ids) are symbolic on the model side; the
runner maps Kafka's real ones to the model's consistently (:class:`Bijection`).  Offsets are
compared as *batch indexes* (the model's log holds one entry per batch, Kafka's one offset per
record): the Kafka side converts every offset through the read_uncommitted batch layout.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any, NamedTuple

from keos.checker.differential.wire import KafkaWire, WireError, batch_bytes, error_name, read_batches
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.log import partition as part
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.variants import ProtocolFlags

__all__ = ["PARTITIONS", "Answer", "Bijection", "KafkaSide", "ModelSide", "Observation"]

#: Data partitions of a case's topic; the group's ``__consumer_offsets`` partition is ``OFFSETS``.
PARTITIONS = 2
OFFSETS = tc.OFFSETS_PARTITION_BASE
#: The model's only group (``AddOffsetsToTxn`` adds partition ``OFFSETS_PARTITION_BASE + 0``).
GROUP = 0
#: Kafka's TransactionMetadata states as DescribeTransactions names them (``TransactionState.java``).
PREPARE = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)


class Answer(NamedTuple):
    """A handler's answer, normalised: error name and the identifiers the model controls."""

    error: str
    producer_id: str = ""
    producer_epoch: int | None = None
    extra: tuple[Any, ...] = ()


class Observation(NamedTuple):
    """What the observers show after a step (offsets as batch indexes)."""

    transaction: tuple[Any, ...]  # (state, sorted partitions, pid, epoch) or ("absent",)
    listed: str  # ListTransactions' state for the id, "" when not listed
    producers: tuple[Any, ...]  # per partition: sorted (pid, epoch, last_seq, txn_start, coordinator_epoch)
    logs: tuple[Any, ...]  # per partition: batches (pid, epoch, base_seq, values, transactional, control)
    stable: tuple[Any, ...]  # per partition: (LSO, aborted (pid, first)) read_committed sees
    offsets: tuple[Any, ...]  # committed offsets of the group's partitions (OffsetFetch, -1: none)


def txn_partitions(parts: Any) -> tuple[str, ...]:
    """A transaction's partitions as sorted names (data partitions by index, the group's as ``offsets``)."""
    return tuple(sorted(str(p) for p in parts))


class Bijection:
    """Kafka's identifiers <-> the model's symbols, bound on first sight and never rebound."""

    def __init__(self, prefix: str, unknown_base: int) -> None:
        self.to_sym: dict[Any, str] = {}
        self.to_real: dict[str, Any] = {}
        self.prefix = prefix
        self.unknown_base = unknown_base

    def symbol(self, real: Any, hint: str = "") -> str:
        """The model's symbol for Kafka's ``real`` (bound to ``hint`` if both are new)."""
        if real in (-1, "", None):
            return str(real) if real != "" else ""
        if real in self.to_sym:
            return self.to_sym[real]
        if hint and hint not in self.to_real and not hint.startswith("?"):
            self.to_sym[real], self.to_real[hint] = hint, real
            return hint
        return f"?{real}"

    def real(self, sym: str) -> Any:
        """Kafka's identifier for a model symbol; a symbol Kafka never allocated maps to an unused one."""
        if sym in self.to_real:
            return self.to_real[sym]
        return sym


# -- the model ------------------------------------------------------------------------------------------


class ModelSide:
    """The model's handlers for one case: one transactional id, two partitions, one group."""

    def __init__(self, transaction_version: int = 1) -> None:
        self.flags = ProtocolFlags(transaction_version=transaction_version, partition_verification=True)
        self.cfg = tc.coordinator_config(self.flags, tc.SHORT_MAX_VALUE)
        self.tv = transaction_version
        self.md: tc.TransactionMetadata | None = None
        self.leaders = [part.PartitionLeader() for _ in range(PARTITIONS)]
        self.group = cg.empty_group("g")
        self.offsets = gc.GroupMetadata(GROUP)
        self.group_exists = False  # a JoinGroup or a simple (generation -1) commit creates the group
        self.next_pid = 0
        self.tid = 0

    # identifiers
    def _fresh_pid(self) -> int:
        self.next_pid += 1
        return self.next_pid - 1

    @staticmethod
    def pid_sym(pid: int) -> str:
        return "-1" if pid < 0 else f"p{pid}"

    @staticmethod
    def pid_int(sym: str) -> int:
        return int(sym[1:]) if sym.startswith("p") else int(sym)

    def _apply(self, out: tc.Outcome) -> None:
        self.md = out.metadata
        if out.used_fresh_pid:
            pass

    # transaction coordinator
    def init_producer_id(self, transactional: bool, pid: str, epoch: int) -> Answer:
        if not transactional:  # ProducerIdManager: a fresh id at epoch 0 (``handleInitProducerId`` without id)
            return Answer(Errors.NONE, self.pid_sym(self._fresh_pid()), 0)
        fresh = self.next_pid
        out = tc.handle_init_producer_id(self.md, self.tid, self.pid_int(pid), epoch, fresh, self.cfg)
        if out.used_fresh_pid:
            self.next_pid += 1
        self._apply(out)
        if out.error != Errors.NONE:
            return Answer(out.error, "-1", -1)
        return Answer(out.error, self.pid_sym(out.producer_id), out.producer_epoch)

    def add_partitions(self, pid: str, epoch: int, partitions: tuple[int, ...]) -> Answer:
        out = tc.handle_add_partitions(self.md, self.pid_int(pid), epoch, partitions)
        self._apply(out)
        return Answer(out.error)

    def add_offsets(self, pid: str, epoch: int) -> Answer:
        out = tc.handle_add_offsets(self.md, self.pid_int(pid), epoch, GROUP, True)
        self._apply(out)
        return Answer(out.error)

    def end_txn(self, pid: str, epoch: int, committed: bool) -> Answer:
        out = tc.handle_end_txn(self.md, self.pid_int(pid), epoch, committed, self.next_pid, self.cfg)
        if out.used_fresh_pid:
            self.next_pid += 1
        self._apply(out)
        if self.tv >= 2 and out.error == Errors.NONE:
            # EndTxn v5 answers the producer id and the bumped epoch (KIP-890 part 2, ``EndTxnResponse.json``)
            return Answer(out.error, self.pid_sym(out.producer_id), out.producer_epoch)
        return Answer(out.error)

    def timeout_abort(self) -> Answer:
        out = tc.timeout_abort(self.md, self.cfg)
        if out is not None:
            self._apply(out)
        return Answer(Errors.NONE if out is None else out.error)

    # partition leader
    def produce(self, pid: str, epoch: int, partition: int, base_seq: int, values: tuple[int, ...],
                transactional: bool) -> Answer:
        req = ProduceRequest(0, 0, partition, self.pid_int(pid), epoch, base_seq, values, transactional)
        leader = self.leaders[partition]
        verification = Errors.NONE
        if part.txn_produce_needs_verification(leader, req, self.flags):
            # the Produce request names this case's transactional id (``ReplicaManager.appendRecords``)
            verification = tc.handle_verify_partition(self.md, req.producer_id, epoch, partition)
        if transactional or self.md is not None:
            leader, resp, _ = part.handle_txn_produce(leader, req, self.flags, verification)
        else:
            leader, resp0, _ = part.handle_produce(leader, req, "all", self.flags)
            assert resp0 is not None
            resp = resp0
        self.leaders[partition] = leader
        return Answer(resp.error, extra=(resp.base_offset,))

    # markers (``TransactionMarkerChannelManager``) and completion, before the next request
    def settle(self) -> None:
        md = self.md
        if md is None or md.state not in PREPARE:
            return
        committed = md.state == TransactionState.PREPARE_COMMIT
        for q in md.partitions:
            marker = WriteTxnMarkersRequest(self.tid, md.producer_id, md.producer_epoch, 0, committed, q)
            if q >= OFFSETS:
                self.offsets, error, _ = gc.handle_txn_marker(self.offsets, marker, self.tv, self.cfg.markers)
            else:
                self.leaders[q], error, _ = append_end_txn_marker(self.leaders[q], marker, self.tv,
                                                                  self.cfg.markers)
            new_md, _ = tc.handle_marker_response(self.md, md.producer_id, md.producer_epoch, q, error)
            self.md = new_md
        if self.md is not None and self.md.state in PREPARE and not self.md.partitions:
            self._apply(tc.complete_transaction(self.md))

    def find_coordinator(self, key_type: int) -> Answer:
        """One broker hosts every coordinator in the model (no FindCoordinator handler: always this broker)."""
        del key_type
        return Answer(Errors.NONE)

    # group coordinator
    def _view(self) -> gc.GroupMetadata | None:
        """The offsets side's view of the classic group's membership (generation, state, members);
        ``None`` while the group does not exist."""
        if not self.group_exists:
            return None
        members = tuple(sorted(self._member_index(m.member_id) for m in self.group.members))
        return self.offsets._replace(generation=self.group.generation, state=self.group.state, members=members)

    @staticmethod
    def _member_index(member: str) -> int:
        return int(member.split("-")[1]) if member.startswith("c0-") else -2

    def join(self, member: str) -> Answer:
        res = cg.join_group(self.group, 0, member, ())
        # GroupMetadataManager.classicGroupJoin: getOrMaybeCreateClassicGroup(groupId, createIfNotExists =
        # the member id is empty): a JoinGroup naming a member of a group that does not exist creates nothing
        self.group_exists = self.group_exists or not member
        group = res.group
        if res.error == Errors.NONE and not res.immediate and cg.join_complete_ready(group):
            group = cg.complete_join(group, "range")
        self.group = group
        if res.error != Errors.NONE:
            return Answer(res.error, extra=(res.member_id, -1))
        return Answer(res.error, extra=(res.member_id, group.generation, group.leader == res.member_id))

    def sync(self, member: str, generation: int) -> Answer:
        res = cg.sync_group(self.group, member, generation, {member: (0, 1)})
        if res is None:
            return Answer("PARKED")
        self.group = res.group
        return Answer(res.error, extra=(res.assignment,))

    def heartbeat(self, member: str, generation: int) -> Answer:
        return Answer(cg.heartbeat(self.group, member, generation))

    def leave(self, member: str) -> Answer:
        if self.group.member(member) is None:
            return Answer(Errors.UNKNOWN_MEMBER_ID)
        self.group = cg.remove_member(self.group, member)
        return Answer(Errors.NONE)

    def offset_commit(self, member: str, generation: int, partition: int, offset: int) -> Answer:
        view = self._view()
        if view is None:
            error = gc.validate_offset_commit(None, self._member_index(member), generation, False)
            if error != Errors.NONE:
                return Answer(error)
            self.group_exists = True  # a simple group (generation -1)
            view = self._view()
            assert view is not None
        view, error, _ = gc.handle_offset_commit(view, self._member_index(member), generation, partition, offset)
        self.offsets = view
        return Answer(error)

    def txn_offset_commit(self, pid: str, epoch: int, member: str, generation: int, partition: int,
                          offset: int) -> Answer:
        """As ``model/systems/eos.py`` ``_on_txn_offset_commit``: the transaction check first (KIP-890 part 1
        verification of the offsets partition, skipped while the producer has a transaction open there), then
        the group's checks, then stage the offset."""
        view = self._view()
        error = Errors.NONE
        if gc.txn_offset_commit_needs_verification(self.offsets, self.pid_int(pid), epoch):
            verdict = tc.handle_verify_partition(self.md, self.pid_int(pid), epoch, OFFSETS + GROUP)
            error = gc.verification_error(verdict)
        if error == Errors.NONE:
            error = gc.validate_offset_commit(view, self._member_index(member), generation, True)
        if error == Errors.NONE:
            self.group_exists = True
            view = self._view()
            assert view is not None
            view, error, _ = gc.append_txn_offset_commit(view, self.pid_int(pid), epoch, partition, offset)
            self.offsets = view
        return Answer(error)

    def offset_fetch(self, partition: int, require_stable: bool) -> Answer:
        error, offset = gc.handle_offset_fetch(self.offsets, partition, require_stable)
        return Answer(error, extra=(offset,))

    # observers
    def observe(self) -> Observation:
        md = self.md
        if md is None:
            txn: tuple[Any, ...] = ("absent",)
            listed = ""
        else:
            parts = txn_partitions("offsets" if p >= OFFSETS else p for p in md.partitions)
            txn = (md.state, parts, self.pid_sym(md.producer_id), md.producer_epoch)
            listed = md.state
        producers = []
        logs = []
        stable = []
        for leader in self.leaders:
            producers.append(tuple(sorted(
                (self.pid_sym(e.producer_id), e.producer_epoch, e.last_seq, e.current_txn_first_offset,
                 e.coordinator_epoch)
                for e in leader.producers)))
            logs.append(tuple(
                (self.pid_sym(e.producer_id), e.producer_epoch, e.base_sequence, e.records, e.transactional, e.control)
                for e in leader.log))
            aborted = tuple(sorted((self.pid_sym(a.producer_id), a.first_offset) for a in leader.aborted))
            stable.append((part.last_stable_offset(leader), aborted))
        offsets = tuple(gc.handle_offset_fetch(self.offsets, p, False)[1] for p in range(PARTITIONS))
        return Observation(txn, listed, tuple(producers), tuple(logs), tuple(stable), offsets)


# -- Kafka ------------------------------------------------------------------------------------------------


class KafkaSide:
    """One case on a real broker: a fresh transactional id, topic (two partitions) and group."""

    def __init__(self, wire: KafkaWire, name: str, transaction_timeout_ms: int = 60000,
                 settle_timeout: float = 10.0) -> None:
        self.wire = wire
        self.tid = f"{name}-txn"
        self.topic = f"{name}-t"
        self.group = f"{name}-g"
        self.timeout_ms = transaction_timeout_ms
        self.settle_timeout = settle_timeout
        self.topic_id = self._create_topic()
        self.last_member = ""

    def _create_topic(self) -> uuid.UUID:
        m = self.wire.module("create_topics")
        topic = m.CreatableTopic(name=self.topic, num_partitions=PARTITIONS, replication_factor=1,
                                 assignments=(), configs=())
        resp = self.wire.call("create_topics", topics=(topic,), timeout=_ms(30000), validate_only=False)
        res = resp.topics[0]
        if error_name(res.error_code) != "NONE":
            raise RuntimeError(f"CreateTopics {self.topic}: {error_name(res.error_code)}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the partitions need a leader before Produce
            if all(self._fetch_raw(0)[p][0] == "NONE" for p in range(PARTITIONS)):
                break
            time.sleep(0.05)
        return res.topic_id

    def delete(self) -> None:
        """Delete the case's topic (its producer state and logs go with it)."""
        with contextlib.suppress(WireError):  # cleanup only: the verdict is already made
            self.wire.call("delete_topics", topics=(self.wire.module("delete_topics").DeleteTopicState(
                name=self.topic, topic_id=uuid.UUID(int=0)),), timeout=_ms(30000))

    # transaction coordinator
    def init_producer_id(self, transactional: bool, pid: int, epoch: int) -> Answer:
        deadline = time.monotonic() + self.settle_timeout
        while True:
            r = self.wire.call("init_producer_id", transactional_id=self.tid if transactional else None,
                               transaction_timeout=_ms(self.timeout_ms), producer_id=pid, producer_epoch=epoch)
            err = error_name(r.error_code)
            # coordinator loading after start is not a protocol answer (the client retries it)
            if err not in ("COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR") or time.monotonic() > deadline:
                return Answer(err, str(int(r.producer_id)), int(r.producer_epoch))
            time.sleep(0.2)

    def add_partitions(self, pid: int, epoch: int, partitions: tuple[int, ...]) -> Answer:
        m = self.wire.module("add_partitions_to_txn")
        topics = (m.AddPartitionsToTxnTopic(name=self.topic, partitions=tuple(partitions)),)
        r = self.wire.call("add_partitions_to_txn", v3_and_below_transactional_id=self.tid,
                           v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
                           v3_and_below_topics=topics)
        errors = sorted({error_name(p.partition_error_code) for t in r.results_by_topic_v3_and_below
                         for p in t.results_by_partition})
        # all-or-nothing: one real error and OPERATION_NOT_ATTEMPTED for the rest (``AddPartitionsToTxnResult``)
        real = [e for e in errors if e != "OPERATION_NOT_ATTEMPTED"]
        return Answer(real[0] if len(real) == 1 else ",".join(errors))

    def add_offsets(self, pid: int, epoch: int) -> Answer:
        r = self.wire.call("add_offsets_to_txn", transactional_id=self.tid, producer_id=pid,
                           producer_epoch=epoch, group_id=self.group)
        return Answer(error_name(r.error_code))

    def end_txn(self, pid: int, epoch: int, committed: bool) -> Answer:
        r = self.wire.call("end_txn", transactional_id=self.tid, producer_id=pid, producer_epoch=epoch,
                           committed=committed)
        err = error_name(r.error_code)
        if self.wire.versions.get("end_txn", 0) >= 5 and err == "NONE":
            return Answer(err, str(int(r.producer_id)), int(r.producer_epoch))
        return Answer(err)

    def describe(self) -> Any:
        r = self.wire.call("describe_transactions", transactional_ids=(self.tid,))
        return r.transaction_states[0]

    def settle(self) -> None:
        """Wait until the transaction is no longer in Prepare* (markers written, completion logged)."""
        deadline = time.monotonic() + self.settle_timeout
        while time.monotonic() < deadline:
            d = self.describe()
            if error_name(d.error_code) != "NONE" or d.transaction_state not in PREPARE:
                return
            time.sleep(0.01)

    def timeout_abort(self) -> Answer:
        """Wait for ``abortTimedOutTransactions`` (the case's transaction timeout is short)."""
        deadline = time.monotonic() + self.settle_timeout + self.timeout_ms / 1000
        while time.monotonic() < deadline:
            d = self.describe()
            if error_name(d.error_code) != "NONE" or d.transaction_state != TransactionState.ONGOING:
                break
            time.sleep(0.05)
        self.settle()
        return Answer(Errors.NONE)

    # partition leader
    def produce(self, pid: int, epoch: int, partition: int, base_seq: int, values: tuple[int, ...],
                transactional: bool) -> Answer:
        m = self.wire.module("produce")
        data = batch_bytes(pid, epoch, base_seq, values, transactional)
        topic = m.TopicProduceData(name=self.topic, partition_data=(m.PartitionProduceData(index=partition,
                                                                                           records=data),))
        r = self.wire.call("produce", transactional_id=self.tid if transactional else None, acks=-1,
                           timeout=_ms(30000), topic_data=(topic,))
        p = r.responses[0].partition_responses[0]
        return Answer(error_name(p.error_code), extra=(int(p.base_offset),))

    # group coordinator
    def find_coordinator(self, key_type: int) -> Answer:
        key = self.tid if key_type == 1 else self.group
        r = self.wire.call("find_coordinator", key_type=key_type, coordinator_keys=(key,))
        return Answer(error_name(r.coordinators[0].error_code))

    def join(self, member: str) -> Answer:
        m = self.wire.module("join_group")
        protocols = (m.JoinGroupRequestProtocol(name="range", metadata=_subscription(self.topic)),)

        def send(member_id: str) -> Any:
            return self.wire.call("join_group", group_id=self.group, session_timeout=_ms(45000),
                                  rebalance_timeout=_ms(5000), member_id=member_id, group_instance_id=None,
                                  protocol_type="consumer", protocols=protocols)

        r = send(member)
        if error_name(r.error_code) == "MEMBER_ID_REQUIRED" and member == "":
            r = send(r.member_id)  # KIP-394's round trip, folded into one step as the model does
        err = error_name(r.error_code)
        if err != "NONE":
            return Answer(err, extra=(r.member_id or member, -1))
        return Answer(err, extra=(r.member_id, int(r.generation_id), r.leader == r.member_id))

    def sync(self, member: str, generation: int) -> Answer:
        m = self.wire.module("sync_group")
        assignments = (m.SyncGroupRequestAssignment(member_id=member, assignment=_assignment(self.topic)),)
        r = self.wire.call("sync_group", group_id=self.group, generation_id=generation, member_id=member,
                           group_instance_id=None, protocol_type="consumer", protocol_name="range",
                           assignments=assignments)
        err = error_name(r.error_code)
        return Answer(err, extra=((0, 1) if err == "NONE" and r.assignment else (),))

    def heartbeat(self, member: str, generation: int) -> Answer:
        r = self.wire.call("heartbeat", group_id=self.group, generation_id=generation, member_id=member,
                           group_instance_id=None)
        return Answer(error_name(r.error_code))

    def leave(self, member: str) -> Answer:
        m = self.wire.module("leave_group")
        r = self.wire.call("leave_group", group_id=self.group,
                           members=(m.MemberIdentity(member_id=member, group_instance_id=None, reason=None),))
        err = error_name(r.error_code)
        if err == "NONE" and r.members:
            err = error_name(r.members[0].error_code)
        return Answer(err)

    def offset_commit(self, member: str, generation: int, partition: int, offset: int) -> Answer:
        m = self.wire.module("offset_commit")
        topic = m.OffsetCommitRequestTopic(name=self.topic, partitions=(m.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_metadata=""),))
        r = self.wire.call("offset_commit", group_id=self.group, generation_id_or_member_epoch=generation,
                           member_id=member, group_instance_id=None, topics=(topic,))
        return Answer(error_name(r.topics[0].partitions[0].error_code))

    def txn_offset_commit(self, pid: int, epoch: int, member: str, generation: int, partition: int,
                          offset: int) -> Answer:
        m = self.wire.module("txn_offset_commit")
        topic = m.TxnOffsetCommitRequestTopic(name=self.topic, partitions=(m.TxnOffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset, committed_metadata=""),))
        r = self.wire.call("txn_offset_commit", transactional_id=self.tid, group_id=self.group, producer_id=pid,
                           producer_epoch=epoch, generation_id=generation, member_id=member,
                           group_instance_id=None, topics=(topic,))
        return Answer(error_name(r.topics[0].partitions[0].error_code))

    def offset_fetch(self, partition: int, require_stable: bool) -> Answer:
        err, offset = self._offset_fetch(require_stable)[partition]
        return Answer(err, extra=(offset,))

    def _offset_fetch(self, require_stable: bool) -> list[tuple[str, int]]:
        m = self.wire.module("offset_fetch")
        group = m.OffsetFetchRequestGroup(group_id=self.group, topics=(m.OffsetFetchRequestTopics(
            name=self.topic, partition_indexes=tuple(range(PARTITIONS))),))
        r = self.wire.call("offset_fetch", groups=(group,), require_stable=require_stable)
        g = r.groups[0]
        out = [("NONE", -1)] * PARTITIONS
        for t in g.topics:
            for p in t.partitions:
                err = error_name(p.error_code)
                if err == "NONE" and error_name(g.error_code) != "NONE":
                    err = error_name(g.error_code)
                out[int(p.partition_index)] = (err, int(p.committed_offset) if err == "NONE" else -1)
        return out

    # observers
    def _fetch_raw(self, isolation: int, offsets: tuple[int, ...] = (0,) * PARTITIONS
                   ) -> list[tuple[str, int, int, Any, Any]]:
        """One Fetch of both partitions from ``offsets``: (error, HW, LSO, records, aborted) each."""
        m = self.wire.module("fetch")
        parts = tuple(m.FetchPartition(partition=p, fetch_offset=offsets[p], partition_max_bytes=1 << 20)
                      for p in range(PARTITIONS))
        tid = getattr(self, "topic_id", None)
        if tid is None:  # before the topic id is known: Metadata-free check that the leader is up
            return [("NONE", 0, 0, None, ())] * PARTITIONS if self._leader_ready() else \
                [("UNKNOWN", 0, 0, None, ())] * PARTITIONS
        r = self.wire.call("fetch", max_wait=_ms(0), min_bytes=0, isolation_level=isolation,
                           topics=(m.FetchTopic(topic_id=tid, partitions=parts),), forgotten_topics_data=())
        out: list[tuple[str, int, int, Any, Any]] = [("UNKNOWN", 0, 0, None, ())] * PARTITIONS
        for t in r.responses:
            for p in t.partitions:
                out[int(p.partition_index)] = (error_name(p.error_code), int(p.high_watermark),
                                               int(p.last_stable_offset), p.records, p.aborted_transactions or ())
        return out

    def _read_all(self, isolation: int) -> list[tuple[int, list[Any], tuple[Any, ...]]]:
        """Each partition read to its end as a consumer does, fetching again from the next offset
        (one Fetch may stop at the first batch: a control batch after it comes with the next Fetch).
        Returns (LSO, batches, aborted transactions) per partition."""
        offsets = [0] * PARTITIONS
        batches: list[list[Any]] = [[] for _ in range(PARTITIONS)]
        aborted: list[set[Any]] = [set() for _ in range(PARTITIONS)]
        lso = [0] * PARTITIONS
        done = [False] * PARTITIONS
        errors: list[str] = ["NONE"] * PARTITIONS
        for _ in range(64):
            raw = self._fetch_raw(isolation, tuple(offsets))
            for p in range(PARTITIONS):
                if done[p]:
                    continue
                error, hw, stable, records, abort = raw[p]
                if error != "NONE":  # a transient answer (e.g. while the leader moves): ask again
                    errors[p] = error
                    time.sleep(0.05)
                    continue
                errors[p] = "NONE"
                lso[p] = stable
                aborted[p] |= {(int(a.producer_id), int(a.first_offset)) for a in abort}
                got = read_batches(records)
                batches[p] += got
                end = stable if isolation == 1 else hw
                if got:
                    offsets[p] = got[-1].last_offset + 1
                if not got or offsets[p] >= end:
                    done[p] = True
            if all(done):
                break
        # a partition that kept answering an error shows it in the log the runner compares
        return [(lso[p], batches[p] if errors[p] == "NONE" else [errors[p]], tuple(sorted(aborted[p])))
                for p in range(PARTITIONS)]

    def _leader_ready(self) -> bool:
        r = self.wire.call("describe_producers", topics=(self.wire.module("describe_producers").TopicRequest(
            name=self.topic, partition_indexes=tuple(range(PARTITIONS))),))
        return all(error_name(p.error_code) == "NONE" for t in r.topics for p in t.partitions)

    def observe(self, pids: Bijection) -> Observation:
        d = self.describe()
        if error_name(d.error_code) != "NONE":
            txn: tuple[Any, ...] = ("absent",)
        else:
            parts = txn_partitions("offsets" if t.topic == "__consumer_offsets" else int(p)
                                   for t in d.topics for p in t.partitions)
            txn = (d.transaction_state, parts, pids.symbol(int(d.producer_id)), int(d.producer_epoch))
        lt = self.wire.call("list_transactions", state_filters=(), producer_id_filters=(),
                            duration_filter=-1) if self.wire.versions["list_transactions"] >= 1 else None
        listed = ""
        if lt is not None:
            listed = next((s.transaction_state for s in lt.transaction_states if s.transactional_id == self.tid), "")
        uncommitted = self._read_all(0)
        committed = self._read_all(1)
        logs, index = [], []
        for p in range(PARTITIONS):
            batches = uncommitted[p][1]
            where = {b.base_offset: i for i, b in enumerate(batches) if not isinstance(b, str)}
            ends = {b.last_offset + 1: i + 1 for i, b in enumerate(batches) if not isinstance(b, str)}
            ends[0] = 0
            index.append((where, ends))
            logs.append(tuple((pids.symbol(b.producer_id), b.producer_epoch, b.base_sequence, b.values,
                               b.transactional, b.control) if not isinstance(b, str) else (f"fetch error {b}",)
                              for b in batches))
        dp = self.wire.call("describe_producers", topics=(self.wire.module("describe_producers").TopicRequest(
            name=self.topic, partition_indexes=tuple(range(PARTITIONS))),))
        producers: list[tuple[Any, ...]] = [()] * PARTITIONS
        for t in dp.topics:
            for pr in t.partitions:
                where, _ = index[int(pr.partition_index)]
                producers[int(pr.partition_index)] = tuple(sorted(
                    (pids.symbol(int(s.producer_id)), int(s.producer_epoch), int(s.last_sequence),
                     where.get(int(s.current_txn_start_offset), -1) if int(s.current_txn_start_offset) >= 0 else -1,
                     int(s.coordinator_epoch))
                    for s in pr.active_producers))
        stable = []
        for p in range(PARTITIONS):
            where, ends = index[p]
            lso = committed[p][0]
            lso_idx = ends.get(lso, where.get(lso, f"?{lso}"))
            aborted = tuple(sorted((pids.symbol(pid), where.get(first, -1)) for pid, first in committed[p][2]))
            stable.append((lso_idx, aborted))
        offsets = tuple(o for _, o in self._offset_fetch(False))
        return Observation(txn, listed, tuple(producers), tuple(logs), tuple(stable), offsets)


def _ms(value: int) -> Any:
    import datetime

    return datetime.timedelta(milliseconds=value)


def _subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0 (kio's ``consumer_protocol_subscription`` schema), version-prefixed."""
    import io
    import struct

    from kio.schema.consumer_protocol_subscription.v0.data import ConsumerProtocolSubscription
    from kio.serial import entity_writer

    buf = io.BytesIO()
    buf.write(struct.pack(">h", 0))
    entity_writer(ConsumerProtocolSubscription)(buf, ConsumerProtocolSubscription(topics=(topic,), user_data=None))
    return buf.getvalue()


def _assignment(topic: str) -> bytes:
    """ConsumerProtocolAssignment v0 giving the member both partitions."""
    import io
    import struct

    from kio.schema.consumer_protocol_assignment.v0.data import ConsumerProtocolAssignment, TopicPartition
    from kio.serial import entity_writer

    buf = io.BytesIO()
    buf.write(struct.pack(">h", 0))
    make: Any = TopicPartition
    tp = make(topic=topic, partitions=tuple(range(PARTITIONS)))
    entity_writer(ConsumerProtocolAssignment)(buf, ConsumerProtocolAssignment(assigned_partitions=(tp,),
                                                                              user_data=None))
    return buf.getvalue()
