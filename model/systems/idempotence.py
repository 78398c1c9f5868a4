"""The composed system: producers, one broker leading the data partitions, the network.

This module is the glue that turns the pure component functions into a
:class:`model.interface.Model`.  It owns:

* the **state** (:class:`SystemState`): one value per component, the network,
  the fault budget spent so far, and the ghost history kept apart for checking;
* the **actions**: protocol steps of each component and the environment's
  faults, each fault charged to a per-kind budget and a total budget;
* the **codec** for actions (names of each action's arguments).

Protocol steps
    ``InitProducerId(producer)``, ``Send(producer)`` (the application hands the
    next record to the client; record ``n`` goes to partition ``n mod
    partitions``), ``SendProduce(producer, partition)`` (the Sender drains a
    batch), ``BumpEpoch(producer)``, ``ResolveSequence(producer, partition)``, ``Deliver(envelope)``,
    ``ReplicatePartition(partition)`` (acks=1 or 0, or acks=all with ``separate_replication``),
    ``ExpireProducerState(partition, producer_id)`` (``producer.id.expiration.ms`` on the leader, with
    ``producer_id_expiration``), ``DeleteRecords(partition)`` (with ``delete_records``: the leader's log start
    offset moves to its high watermark; the producer state stays, :func:`model.log.partition.delete_records`),
    ``Fetch(partition)`` (with ``read_uncommitted_consumer``: the partition's consumer reads from its position up to
    the high watermark, :func:`model.log.fetch.read_from_log`).

Faults (budgeted)
    ``DropMessage(envelope)`` (a connection reset: everything in flight on the
    connection is lost and the client retries on a new one), ``DuplicateMessage(envelope)``,
    ``ReorderMessage(envelope)`` (breaks TCP's FIFO order; off unless a scenario
    gives it a budget), ``RequestTimeout(producer)``, ``ExpireBatch(producer,
    partition)``, ``RestartLeader()`` (the broker crashes, an in-sync follower
    takes over every partition), ``RestartProducer(producer)``, ``NotLeaderOrFollower(envelope)`` (a produce
    request reaches a broker that does not lead its partition -- yet, or any more -- and is answered
    NOT_LEADER_OR_FOLLOWER without being appended; the client refreshes its metadata and retries; a scenario's
    ``[broker] refusal_error`` picks another refusal before the append, :data:`REFUSAL_ERRORS`),
    ``ExpireDelayedProduce(partition)`` (with ``separate_replication``: an acks=all answer parked in the produce
    purgatory outlives the request's ``timeout.ms`` and goes out REQUEST_TIMED_OUT, its batch in the leader's log;
    ``[broker] delayed_produce_error``: NOT_ENOUGH_REPLICAS_AFTER_APPEND instead, :data:`DELAYED_PRODUCE_ERRORS`),
    ``MoveLeader(partition, caught_up)`` (leadership moves to an in-sync follower while the old leader keeps
    running and its clients stay connected: the purgatory's answers go out NOT_LEADER_OR_FOLLOWER,
    :func:`model.log.partition.move_leader`; ``caught_up`` 1: the follower had fetched the unreplicated tail too),
    ``ForgedProduce(partition, producer_id, forged)`` (a misbehaving client presents the producer id and epoch the
    leader caches with a first sequence that is not the next one (0, one past the next, or the next under a new
    epoch); no client reads the answer, :meth:`KafkaSystem._forged_request`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

from keos.model import codec
from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients.consumer import PartitionConsumer
from keos.model.clients.producer_config import ProducerConfig
from keos.model.interface import Action, ModelError, Property, Step
from keos.model.log import fetch as fetch_path
from keos.model.log import partition as part
from keos.model.log.producer_expiry import expirable, expire_producer
from keos.model.log.producer_state import next_sequence
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.variants import KAFKA_SEQUENCE_SPACE, ProtocolFlags, Variant

__all__ = [
    "ACTION_ARGS",
    "BROKER",
    "FAULT_KINDS",
    "FaultBudget",
    "Ghost",
    "KafkaSystem",
    "SystemConfig",
    "SystemState",
    "Topology",
]

BROKER = "b0"

#: Fault kinds, in the order of ``SystemState.faults_used``.
FAULT_KINDS = (  # no mutate: fault budget bookkeeping (the scenario's [faults] keys, in faults_used order)
    "drop",
    "duplicate",
    "reorder",
    "request_timeout",
    "batch_expiry",
    "leader_restart",
    "producer_restart",
    "not_leader",
    "produce_timeout",
    "leader_move",
    "forged_sequence",
)

#: Argument names of every action kind (display and JSON).
ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: trace format (JSON keys, display)
    "InitProducerId": ("producer",),
    "Send": ("producer",),
    "SendProduce": ("producer", "partition"),
    "BumpEpoch": ("producer",),
    "ResolveSequence": ("producer", "partition"),
    "Deliver": ("message",),
    "ReplicatePartition": ("partition",),
    "ExpireProducerState": ("partition", "producer_id"),
    "DeleteRecords": ("partition",),
    "Fetch": ("partition",),
    "DropMessage": ("message",),
    "DuplicateMessage": ("message",),
    "ReorderMessage": ("message",),
    "RequestTimeout": ("producer",),
    "ExpireBatch": ("producer", "partition"),
    "RestartLeader": (),
    "RestartProducer": ("producer",),
    "NotLeaderOrFollower": ("message",),
    "ExpireDelayedProduce": ("partition",),
    "MoveLeader": ("partition", "caught_up"),
    "ForgedProduce": ("partition", "producer_id", "forged"),
}

#: The fault kind each fault action is charged to.
FAULT_OF_ACTION = {  # no mutate: fault budget bookkeeping (which budget each fault action spends)
    "DropMessage": "drop",
    "DuplicateMessage": "duplicate",
    "ReorderMessage": "reorder",
    "RequestTimeout": "request_timeout",
    "ExpireBatch": "batch_expiry",
    "RestartLeader": "leader_restart",
    "RestartProducer": "producer_restart",
    "NotLeaderOrFollower": "not_leader",
    "ExpireDelayedProduce": "produce_timeout",
    "MoveLeader": "leader_move",
    "ForgedProduce": "forged_sequence",
}


#: Index into ``faults_used`` of each fault action kind, and its event label.
_FAULT_INDEX = {kind: FAULT_KINDS.index(fault) for kind, fault in FAULT_OF_ACTION.items()}
_FAULT_EVENT = tuple(f"fault:{k}" for k in FAULT_KINDS)
#: The budget index of each fault action kind, as :meth:`KafkaSystem.step` charges it.
_DROP = _FAULT_INDEX["DropMessage"]
_DUPLICATE = _FAULT_INDEX["DuplicateMessage"]
_REORDER = _FAULT_INDEX["ReorderMessage"]
_REQUEST_TIMEOUT = _FAULT_INDEX["RequestTimeout"]
_BATCH_EXPIRY = _FAULT_INDEX["ExpireBatch"]
_LEADER_RESTART = _FAULT_INDEX["RestartLeader"]
_PRODUCER_RESTART = _FAULT_INDEX["RestartProducer"]
_NOT_LEADER = _FAULT_INDEX["NotLeaderOrFollower"]
_PRODUCE_TIMEOUT = _FAULT_INDEX["ExpireDelayedProduce"]
_LEADER_MOVE = _FAULT_INDEX["MoveLeader"]
_FORGED_SEQUENCE = _FAULT_INDEX["ForgedProduce"]
#: ``ForgedProduce``'s ``forged`` argument: the first sequence a misbehaving client stamps on its batch.
FORGED_RESTART = 0  # no mutate: an action argument's code (which forged sequence), not a Kafka rule
FORGED_SKIP = 1  # no mutate: an action argument's code (which forged sequence), not a Kafka rule
FORGED_NEW_EPOCH = 2  # no mutate: an action argument's code (which forged sequence), not a Kafka rule
#: Argument checks per action kind: 0 = producer index, 1 = partition index, 2 = envelope, 3 = producer id.
_ARG_SPECS = {  # no mutate: trace format (how a decoded action's arguments are range-checked)
    kind: tuple(
        {"producer": 0, "partition": 1, "message": 2, "producer_id": 3, "caught_up": 3, "forged": 3}[n] for n in names
    )
    for kind, names in ACTION_ARGS.items()
}


@dataclass(frozen=True)
class Topology:
    """How many of each component, and how much work the application does.

    ``records_per_batch``: how many records the accumulator puts into one batch
    (1 by default: every record is its own batch).
    """

    producers: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    partitions: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    records_per_producer: int = 2  # no mutate: a scenario's default (what it explores), not a Kafka rule
    records_per_batch: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule


@dataclass(frozen=True)
class FaultBudget:
    """How many faults of each kind a run may inject, and in total."""

    drop: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    duplicate: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    reorder: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    request_timeout: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    batch_expiry: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    leader_restart: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    producer_restart: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    not_leader: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    produce_timeout: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    leader_move: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    forged_sequence: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    total: int = 2  # no mutate: a scenario's default (what it explores), not a Kafka rule

    def limits(self) -> tuple[int, ...]:
        """Per-kind limits in :data:`FAULT_KINDS` order."""
        return tuple(getattr(self, k) for k in FAULT_KINDS)

    def kinds(self) -> tuple[str, ...]:
        """The fault kinds a run may inject (a budget above zero, and a total above zero), in order.

        What the sweep's swarm profiles draw from (:meth:`KafkaSystem.fault_kinds`) and what the scenario's
        properties must see injected (``invariants.idempotence``: a budgeted fault that never fires leaves
        the scenario's claims about it untested).
        """
        return tuple(k for k, limit in zip(FAULT_KINDS, self.limits()) if limit > 0 and self.total > 0)

    def to_json(self) -> dict[str, int]:
        """The budget as a JSON object."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SystemConfig:
    """Everything that parameterises one model instance."""

    topology: Topology = field(default_factory=Topology)
    producer: ProducerConfig = field(default_factory=ProducerConfig)
    faults: FaultBudget = field(default_factory=FaultBudget)
    flags: ProtocolFlags = field(default_factory=ProtocolFlags)
    max_producer_epoch: int = 32767
    sequence_space: int = KAFKA_SEQUENCE_SPACE
    #: acks=all responses wait for a separate ``ReplicatePartition`` step (``DelayedProduce``), so a leader
    #: can fail over with batches appended but not replicated (``model.log.partition.handle_produce``).
    separate_replication: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: ``producer.id.expiration.ms``: a leader may drop the state of a producer id that has nothing outstanding on
    #: the partition (``ExpireProducerState``, a protocol step: idleness is not a fault).
    producer_id_expiration: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: DeleteRecords / retention: a leader's log start offset may advance to its high watermark (``DeleteRecords``,
    #: a protocol step like expiry: the admin or the retention policy, not a fault; :func:`part.delete_records`).
    delete_records: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: A read_uncommitted consumer per partition (Kafka's default ``isolation.level``) polls it from offset 0
    #: (``Fetch``, a protocol step): what it reads is what the leader exposes below its high watermark.
    read_uncommitted_consumer: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: The error of the ``not_leader`` fault's refusal, one of :data:`REFUSAL_ERRORS` (nothing appended).
    refusal_error: str = Errors.NOT_LEADER_OR_FOLLOWER  # no mutate: a scenario's default (what it explores)
    #: The error of the ``produce_timeout`` fault's late answer, one of :data:`DELAYED_PRODUCE_ERRORS` (appended).
    delayed_produce_error: str = Errors.REQUEST_TIMED_OUT  # no mutate: a scenario's default (what it explores)


#: What a Kafka broker answers a produce request it refuses *before* the append -- the batch is in no log, so the
#: client's retry must be appended, never answered as a duplicate (apache/kafka 1eb7644349cb):
#: NOT_LEADER_OR_FOLLOWER (``ReplicaManager.getPartitionOrException``: not the leader, yet or any more),
#: NOT_ENOUGH_REPLICAS (``Partition.appendRecordsToLeader``: acks=all and the ISR below ``min.insync.replicas``,
#: checked before ``appendAsLeader``), KAFKA_STORAGE_ERROR (``getPartitionOrException``: the partition's log
#: directory is offline -- its leadership moves to an in-sync follower that, in the model, holds the same log).
#: Every one is a ``RetriableException`` in the client (the first and last through ``InvalidMetadataException``).
REFUSAL_ERRORS = (  # no mutate: the vocabulary a scenario may pick from (input validation), not a rule
    Errors.NOT_LEADER_OR_FOLLOWER,
    Errors.NOT_ENOUGH_REPLICAS,
    Errors.KAFKA_STORAGE_ERROR,
)

#: What a Kafka broker answers an acks=all produce whose batch it *did* append when the answer cannot wait any
#: longer in the purgatory (``DelayedProduce``, ``Partition.checkEnoughReplicasReachOffset``, 1eb7644349cb):
#: REQUEST_TIMED_OUT (the request's ``timeout.ms`` passed first) or NOT_ENOUGH_REPLICAS_AFTER_APPEND (the high
#: watermark reached the batch after the ISR shrank below ``min.insync.replicas``).  Both are retriable, and the
#: retry must be recognised as a duplicate (or appended again only if a failover cut the batch off).
DELAYED_PRODUCE_ERRORS = (  # no mutate: the vocabulary a scenario may pick from (input validation), not a rule
    Errors.REQUEST_TIMED_OUT,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
)


@codec.record
class Ghost(NamedTuple):
    """History kept only for checking: which records the application saw complete.

    ``unexplained_failures``: records the client failed although Kafka's producer would not have given up
    on them yet (:func:`unexplained_failures`); ``misplaced_acks``: successful ProduceResponses whose offset
    does not hold the batch (:func:`misplaced_ack`); ``unhealthy``: an error answered or an epoch bumped
    while no fault had happened; ``overtaken``: batches appended while an earlier batch of the same partition
    and session was still being retried and not in the log (:func:`overtaken_batch`); ``wrong_answers``:
    produce requests the leader answered otherwise than Kafka's ``ProducerStateManager`` would for the log it
    holds (:func:`unexpected_answer`); ``needless_bumps``: KIP-360 epoch bumps although the producer held an
    acknowledgement of the last sequence it sent to every partition it re-sequences (:func:`needless_bump`);
    ``unrestarted``: bumps that left a re-sequenced partition's batches off the new epoch's sequences
    (:func:`unrestarted_sequences`); ``missed_bumps``: batches given up on OUT_OF_ORDER_SEQUENCE_NUMBER, or
    retried on it as the next sequence, without a bump requested for their partition (:func:`unrequested_bump`).
    Each is recorded only when that happens, so the state space of a correct model does not grow.
    """

    acked: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    unexplained_failures: tuple[str, ...] = ()
    misplaced_acks: tuple[str, ...] = ()
    unhealthy: tuple[str, ...] = ()
    overtaken: tuple[str, ...] = ()
    wrong_answers: tuple[str, ...] = ()
    needless_bumps: tuple[str, ...] = ()
    unrestarted: tuple[str, ...] = ()
    missed_bumps: tuple[str, ...] = ()
    #: ``(producer, partition)``: a batch given up on OUT_OF_ORDER_SEQUENCE_NUMBER since the producer's last bump.
    #: ``handleFailedBatch`` requests the bump for it whatever the log holds -- an earlier attempt of the refused
    #: batch, sent on a connection since closed, may have been written after all -- so :func:`needless_bump`
    #: does not judge that partition.  Cleared by the bump (and a restart).
    refused: tuple[tuple[int, int], ...] = ()
    #: failures the client recorded otherwise than Kafka's Sender/TransactionManager (:func:`misjudged_failure`)
    misjudged_failures: tuple[str, ...] = ()
    #: batches sent with another stamp than Kafka's RecordAccumulator gives them (:func:`misstamped_batch`)
    misstamped: tuple[str, ...] = ()




def misplaced_ack(  # no mutate: the judge of acknowledged_offset_in_log (a property), not a rule
    leader: part.PartitionLeader, response: ProduceResponse, request: ProduceRequest
) -> str | None:
    """Why a successful ProduceResponse does not name the offset of ``request``'s batch, or ``None``.

    ``UnifiedLog.analyzeAndValidateProducerState``: a duplicate is answered with the cached batch's offset, an
    append with its own; ``RecordMetadata.offset()`` is what the application reads.  Judged when the leader
    answers (or parks the answer in the purgatory): the batch at that offset must hold the request's records.
    """
    if response.error != Errors.NONE or response.base_offset < 0:
        return None
    log = leader.log
    entry = log[response.base_offset] if response.base_offset < len(log) else None
    if entry is not None and entry.records == request.records:  # no branch: the other side describes a defect
        return None
    held = "nothing" if entry is None else ",".join(prod.record_label(r) for r in entry.records) or "a control batch"
    return (
        f"partition {request.partition}: {','.join(prod.record_label(r) for r in request.records)} acknowledged "
        f"at offset {response.base_offset}, which holds {held}"
    )


#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``: the batches a leader remembers per producer id (KAFKA-5494).
NUM_BATCHES_TO_RETAIN = 5


def kafka_produce_answer(  # no mutate: the reference of produce_answer_per_kafka (a property), not a rule
    leader: part.PartitionLeader, request: ProduceRequest, sequence_space: int
) -> tuple[str, int]:
    """What Kafka's leader answers ``request`` given the log it holds: ``(error, duplicate offset or -1)``.

    Written from Kafka's source, independently of :mod:`model.log.producer_state`, and read from the *log*
    (``ProducerStateManager`` rebuilds its state from the log: ``truncateAndReload``), not from the leader's
    cached table -- only whether the leader still has an entry for the producer id is taken from the table,
    since ``producer.id.expiration.ms`` may have dropped it while the log keeps its batches (a producer id with
    no batch in the log is unknown, whatever the table says):

    * no producer id (``enable.idempotence=false``): appended, no checks;
    * ``UnifiedLog.analyzeAndValidateProducerState`` / ``ProducerStateEntry.findDuplicateBatch``: a batch of the
      entry's epoch whose (first, last) sequence is one of the last ``NUM_BATCHES_TO_RETAIN`` batches of that
      epoch is a duplicate, answered NONE with that batch's offset;
    * no entry: ``ProducerStateEntry.empty`` (``NO_PRODUCER_EPOCH``) accepts any sequence, except on a partition
      that never held a record, where it must be 0 (KAFKA-15591, PR #23234, Kafka 4.5);
    * ``ProducerAppendInfo.checkProducerEpoch``: an epoch below the entry's -> INVALID_PRODUCER_EPOCH;
    * ``ProducerAppendInfo.checkSequence``: a higher epoch must start at 0; the same epoch must continue right
      after the last batch (``inSequence``: ``last + 1``, or 0 after the top of the sequence space), else
      OUT_OF_ORDER_SEQUENCE_NUMBER.
    """
    pid = request.producer_id
    if pid == part.NO_PRODUCER_ID:
        return Errors.NONE, -1
    first = request.base_sequence
    last = (first + len(request.records) - 1) % sequence_space
    mine = [(offset, e) for offset, e in enumerate(leader.log) if e.producer_id == pid]
    if leader.entry(pid) is None or not mine:
        return (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER if not leader.log and first != 0 else Errors.NONE), -1
    epoch = mine[-1][1].producer_epoch
    current = [(offset, e) for offset, e in mine if e.producer_epoch == epoch][-NUM_BATCHES_TO_RETAIN:]
    if request.producer_epoch == epoch:
        for offset, e in current:
            if e.base_sequence == first and (e.base_sequence + len(e.records) - 1) % sequence_space == last:
                return Errors.NONE, offset
    if request.producer_epoch < epoch:
        return Errors.INVALID_PRODUCER_EPOCH, -1
    if request.producer_epoch > epoch:
        return (Errors.NONE if first == 0 else Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1
    _, newest = current[-1]
    expected = (newest.base_sequence + len(newest.records)) % sequence_space
    return (Errors.NONE if first == expected else Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1


def unexpected_answer(  # no mutate: the judge of produce_answer_per_kafka (a property), not a rule
    before: part.PartitionLeader,
    after: part.PartitionLeader,
    request: ProduceRequest,
    events: tuple[str, ...],
    sequence_space: int,
) -> str | None:
    """How the leader's handling of ``request`` differs from :func:`kafka_produce_answer`, or ``None``.

    The leader's answer is read from what it did (the answer may be parked in the purgatory, or not sent at all
    with acks=0): an ``error:<name>`` event, a duplicate (``dedup``) or an append, and whether the log grew by
    exactly this batch.
    """
    error, dup_offset = kafka_produce_answer(before, request, sequence_space)
    answered = next((e[len("error:") :] for e in events if e.startswith("error:")), Errors.NONE)
    duplicate = "dedup" in events
    appended = len(after.log) - len(before.log)
    want = error if error != Errors.NONE else ("duplicate" if dup_offset >= 0 else "append")
    got = answered if answered != Errors.NONE else ("duplicate" if duplicate else "append" if appended else "nothing")
    if want == got and appended == (1 if want == "append" else 0):  # no branch: the other side describes a defect
        return None
    recs = ",".join(prod.record_label(r) for r in request.records)
    return (
        f"partition {request.partition}: batch {recs} (pid {request.producer_id}, epoch {request.producer_epoch}, "
        f"seq {request.base_sequence}) was answered {got} (log +{appended}); Kafka answers {want}"
    )


def needless_bump(  # no mutate: the judge of epoch_bump_needed (a property), not a rule
    p: prod.Producer,
    leaders: tuple[part.PartitionLeader, ...],
    acked: tuple[int, ...],
    sequence_space: int,
    refused: tuple[int, ...] = (),
) -> str | None:
    """Why the KIP-360 bump ``p`` is about to make is one Kafka's producer would not make, or ``None``.

    Kafka bumps for a partition (``requestEpochBumpForPartition``) when its sequence is in doubt: a batch failed
    with OUT_OF_ORDER_SEQUENCE_NUMBER (``handleFailedBatch``; the leader refused it, so the log has a gap), the
    leader refused the batch right after the last acknowledged one (``canRetry``), or an expired batch left the
    sequence unresolved and the last acknowledged sequence is not the one before the next sequence
    (``maybeResolveSequences``/``isNextSequence``: a later batch that succeeded proves the expired one was
    written).  So Kafka never bumps when, on every partition it re-sequences, the leader's log holds the
    producer's batches of that epoch from sequence 0 without a gap up to the sequence before the next one, and
    that last batch was acknowledged, with no acknowledged sequence of the epoch above it (``lastAckedSequence``
    compares plainly, so past a wrap-around it cannot tell).  Read from the leader's log and the application's
    view (the records it saw acknowledged), not from the client's bookkeeping.  ``refused``: partitions where the
    producer gave a batch up on OUT_OF_ORDER_SEQUENCE_NUMBER since its last bump (:attr:`Ghost.refused`): Kafka
    bumps for them even when an earlier attempt of the refused batch reached the log (the gap was only on the
    connection the refusal came from) -- not judged.
    """
    intact: list[str] = []
    seen = set(acked)
    for q, entry in enumerate(p.partitions):  # no branch: a bump re-sequences a partition in doubt (returns inside)
        if not entry.rewrite:
            continue
        if q in refused:
            return None
        epoch = entry.producer_epoch
        mine = [e for e in leaders[q].log if e.producer_id == p.producer_id and e.producer_epoch == epoch]
        expected = 0
        for e in mine:
            if e.base_sequence != expected % sequence_space:
                return None  # a gap: the sequence is in doubt
            expected = e.base_sequence + len(e.records)
        acked_seqs = [e.base_sequence + len(e.records) - 1 for e in mine if e.records and seen.issuperset(e.records)]
        top = max(acked_seqs, default=-1)
        if top < 0 or top + 1 != entry.next_sequence or top + 1 != expected:  # no branch: the other side is a defect
            return None
        intact.append(f"partition {q} (epoch {epoch}, sequences 0 to {top} in the log and acknowledged)")
    if not intact:  # no branch: a bump is requested for a partition (requestEpochBumpForPartition)
        return None
    return f"producer id {p.producer_id} bumped epoch {p.producer_epoch} with its sequences intact: " + ", ".join(
        intact
    )


def unrequested_bump(  # no mutate: the judge of out_of_order_failure_requests_bump (a property), not a rule
    before: prod.Producer, outcome: prod.Outcome, response: ProduceResponse, defer: bool
) -> str | None:
    """Why the producer that just handled an OUT_OF_ORDER_SEQUENCE_NUMBER ``response`` left its partition unrepaired.

    The leader refused the batch, so its log has a gap at the batch's sequence.  ``TransactionManager`` repairs it
    with a KIP-360 epoch bump for the batch's partition (``requestEpochBumpForPartition``: the bump re-sequences it
    from 0) in two places (Kafka 3.9):

    * ``handleFailedBatch``: the batch is given up (its retries spent) -- always, since no later batch of the epoch
      can fill the gap.  With the fix proposed for KAFKA-14034 (``defer``) the partition's sequence is marked
      unresolved instead, and the bump waits until its earlier batches complete;
    * ``canRetry``: the batch is retried and it is the next sequence after the last acknowledged one
      (``isNextSequence``): no earlier batch in flight explains the refusal, so the bump comes first and the
      batch is resent re-stamped.  A batch further on is retried as it is (an earlier one explains the gap).
      While the partition has an unresolved sequence (a sent batch failed unanswered) the batch in line is the
      one right after the failed batch (``isNextSequenceForUnresolvedPartition``, KAFKA-8710, trunk
      @1eb7644349cb), whatever the last acknowledged sequence.

    A response the client does not match to a batch in flight on its connection (a stale one) changes nothing.
    """
    batch = next(
        (b for b in before.batches if response.connection == before.connection and prod.answers(b, response)),
        None,
    )
    if batch is None:
        return None
    q = batch.partition
    gave_up = batch.records[0] in outcome.failed
    was = before.partitions[q]
    # with an unresolved sequence the gap is the failed batch's: the batch right after it is next in line
    next_in_line = batch.base_sequence == (
        was.unresolved_sequence if was.unresolved else was.last_acked_sequence + 1
    )
    if not gave_up and not next_in_line:
        return None
    after = outcome.producer
    entry = after.partitions[q]
    if after.epoch_bump_required and entry.rewrite:  # no branch: the other side describes a defect
        return None
    if gave_up and defer and entry.unresolved:  # no branch: variant kafka_14034_fix only
        return None
    label = ",".join(prod.record_label(r) for r in batch.records)
    how = "failed" if gave_up else "was retried as the next sequence"
    return f"{label} {how} on OUT_OF_ORDER_SEQUENCE_NUMBER and no epoch bump re-sequences partition {q}"


def unjustified_resolution(  # no mutate: the judge of out_of_order_failure_requests_bump (a property), not a rule
    p: prod.Producer, log: tuple[Any, ...], q: int, sequence_space: int
) -> str | None:
    """Why producer ``p`` must not resolve partition ``q``'s unresolved sequence without a bump, or ``None``.

    ``maybeResolveSequences`` (trunk @1eb7644349cb) drops the mark without a bump only when the last acknowledged
    sequence is the one before the next sequence (``isNextSequence``): a batch ending there was acknowledged, and
    with acks=all an acknowledged batch is in the leader's log.  Read from the log, not from the client's
    bookkeeping: some batch of the producer's id and the partition's epoch must end right before the next
    sequence (nothing sent at the epoch: nothing to resolve).  Otherwise the expired batch left a gap that no
    later batch of the epoch can fill, and Kafka bumps.
    """
    entry = p.partitions[q]
    if entry.next_sequence == 0:
        return None
    end = entry.next_sequence % sequence_space
    for e in log:
        mine = e.producer_id == p.producer_id and e.producer_epoch == entry.producer_epoch and e.records
        if mine and (e.base_sequence + len(e.records)) % sequence_space == end:
            return None
    return (
        f"partition {q}: the unresolved sequence was resolved without an epoch bump, but the leader's log holds no "
        f"batch of producer id {p.producer_id}, epoch {entry.producer_epoch} ending before sequence "
        f"{entry.next_sequence}: the gap stays"
    )


def late_answer_misread(  # no mutate: the judge of failed_batch_handled_per_kafka (a property), not a rule
    before: prod.Producer, after: prod.Producer, response: ProduceResponse, log: tuple[part.LogEntry, ...] = ()
) -> str | None:
    """How the client's last acknowledged sequence after the answer to a batch it already failed differs from
    Kafka's, or ``None``.

    Written from ``Sender.completeBatch`` / ``TransactionManager.handleCompletedBatch`` (trunk @1eb7644349cb): a
    batch ``delivery.timeout.ms`` failed while its request was in flight is still the request's batch, so a NONE
    or DUPLICATE_SEQUENCE_NUMBER answer on the same connection raises its partition's last acknowledged sequence
    to the batch's last sequence (``maybeUpdateLastAckedSequence``, a plain comparison, on a partition it still
    tracks); any other answer changes nothing.  The batch's last sequence is read from the leader's ``log`` at the
    answered offset (the batch the answer acknowledges), not from the client's own record of it, when that entry is
    the answered batch (same producer id, epoch and base sequence).
    """
    if response.connection != before.connection:
        return None
    if response.error not in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER):
        return None
    for cid, q, last in before.expired:
        if cid != response.correlation_id:
            continue
        if 0 <= response.base_offset < len(log):
            e = log[response.base_offset]
            if (e.producer_id, e.producer_epoch, e.base_sequence) == (
                before.producer_id,
                response.producer_epoch,
                response.base_sequence,
            ):
                last = e.base_sequence + len(e.records) - 1
        wrong = prod.late_ack_misjudged(before.partitions[q], after.partitions[q], last)
        if wrong is None:
            return None
        got, want = wrong
        return (
            f"partition {q}: the {response.error} answer to a batch that expired in flight (last sequence {last}) "
            f"left the last acknowledged sequence at {got}; Kafka's is {want}"
        )
    return None


def ack_misread(  # no mutate: the judge of failed_batch_handled_per_kafka (a property), not a rule
    before: prod.Producer, after: prod.Producer, response: ProduceResponse, sequence_space: int
) -> str | None:
    """How the client's last acknowledged sequence after a NONE or DUPLICATE_SEQUENCE_NUMBER answer to a batch it
    awaits differs from Kafka's, or ``None`` (the answer to a batch that already failed: :func:`late_answer_misread`).

    ``Sender.completeBatch`` -> ``TransactionManager.handleCompletedBatch`` -> ``TxnPartitionEntry.
    maybeUpdateLastAckedSequence`` (trunk @1eb7644349cb): the partition's last acknowledged sequence becomes the
    batch's last sequence (``ProducerBatch.lastSequence``, wrapping at the top of the sequence space) if that is
    higher -- a plain comparison, never lowered, whatever epoch the batch has; the same reference as the late
    answers' (:func:`model.clients.producer.late_ack_misjudged`).  Answers can arrive out of order (a reordered
    or duplicated message, a reconnect), so a defect that lowers the sequence, or skips an update, shows here
    before it misleads ``canRetry`` / ``maybeResolveSequences``.
    """
    if response.connection != before.connection or response.error not in (Errors.NONE,
                                                                            Errors.DUPLICATE_SEQUENCE_NUMBER):
        return None
    b = next((b for b in before.batches if prod.answers(b, response)), None)
    if b is None or not b.has_sequence:
        return None
    q = b.partition
    last = (b.base_sequence + len(b.records) - 1) % sequence_space
    wrong = prod.late_ack_misjudged(before.partitions[q], after.partitions[q], last)
    if wrong is None:
        return None
    got, want = wrong
    return (
        f"partition {q}: the {response.error} answer to {','.join(prod.record_label(r) for r in b.records)} (last "
        f"sequence {last}) left the last acknowledged sequence at {got}; Kafka's is {want}"
    )


def misjudged_failure(  # no mutate: the judge of failed_batch_handled_per_kafka (a property), not a rule
    before: prod.Producer,
    after: prod.Producer,
    failed: tuple[int, ...],
    error: str | None,
    expired: bool,
    retries: int,
    defer: bool,
) -> str | None:
    """How the client's sequence bookkeeping after failing ``failed`` differs from Kafka's, or ``None``.

    Written from ``Sender.java`` / ``TransactionManager.java`` (trunk @1eb7644349cb), independently of
    :mod:`model.clients.producer`, for an idempotent producer:

    * ``delivery.timeout.ms`` (``expired``): ``failBatch(batch, TimeoutException, false)`` changes no sequence;
      then ``markSequenceUnresolved`` only for a batch in retry (``ProducerBatch.inRetry``: re-enqueued after a
      failed attempt), keeping the largest sequence after a failed batch (``lastSequence() + 1``);
    * an OUT_OF_ORDER_SEQUENCE_NUMBER answer (``handleFailedBatch``): a bump for the batch's partition
      (``requestEpochBumpForPartition``; with the KAFKA-14034 fix, ``defer``, the sequence is marked unresolved
      instead);
    * any other error (an answer, or NETWORK_EXCEPTION / REQUEST_TIMED_OUT for a cancelled request):
      ``failBatch(..., adjustSequenceNumbers = attempts < retries)`` -- a bump for the partition when the batch
      had retries left (an error Kafka does not retry), nothing when they were spent.

    A failure never clears an unresolved sequence or a requested bump.
    """
    bump_wanted = before.epoch_bump_required
    for q, entry in enumerate(before.partitions):
        batches = [b for b in before.batches if b.partition == q and b.records[0] in failed]
        if not batches:
            continue
        unresolved, after_seq, rewrite = entry.unresolved, entry.unresolved_sequence, entry.rewrite
        for b in batches:
            if expired:
                if b.attempts > 1 or not b.in_flight:  # inRetry
                    unresolved, after_seq = True, max(after_seq, b.base_sequence + len(b.records))
            elif error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and defer and entry.producer_epoch == b.producer_epoch:
                unresolved, after_seq = True, max(after_seq, b.base_sequence + len(b.records))
            elif error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER or b.attempts <= retries:
                rewrite, bump_wanted = True, True
        now = after.partitions[q]
        want = (unresolved, after_seq if unresolved else -1, rewrite)
        got = (now.unresolved, now.unresolved_sequence if now.unresolved else -1, now.rewrite)
        if got != want:  # no branch: the other side describes a defect
            why = "expired" if expired else f"failed on {error}"
            return (
                f"partition {q}: after {','.join(prod.record_label(r) for b in batches for r in b.records)} {why}, "
                f"(unresolved, sequence after it, re-sequence) is {got}; Kafka's is {want}"
            )
    if after.epoch_bump_required != bump_wanted:  # no branch: the other side describes a defect
        return f"after {','.join(map(prod.record_label, failed))} failed the client requires an epoch bump: " + str(
            after.epoch_bump_required
        ) + f"; Kafka's: {bump_wanted}"
    return None


def _drained_out_of_turn(  # no mutate: part of the judge of batch_stamped_per_kafka (a property), not a rule
    before: prod.Producer, batch: prod.ProducerBatch
) -> str | None:
    """Why ``RecordAccumulator.shouldStopDrainBatchesForPartition`` (trunk @1eb7644349cb) holds ``batch`` back, or
    ``None``.

    ``TransactionManager.firstInFlightSequence`` is the lowest sequence of the partition's batches drained and
    not completed (``inflightBatchesBySequence``, kept in sequence order, as the model's queue is): a batch being
    retried is drained only if it is that one.  A batch not yet sequenced waits while the partition has an
    unresolved sequence (``hasUnresolvedSequence``) or batches outstanding under an older producer id or epoch
    (``hasInflightBatches`` and ``hasStaleProducerIdAndEpoch``).
    """
    q = batch.partition
    first = next((b for b in before.batches if b.partition == q and b.has_sequence), None)
    if batch.has_sequence:
        if first is not None and first.records != batch.records:
            return (
                f"{','.join(prod.record_label(r) for r in first.records)} (sequence {first.base_sequence}) is the "
                f"partition's first sequence in flight: Kafka resends a retried batch only in its turn"
            )
        return None
    entry = before.partitions[q]
    if entry.unresolved:
        return "the partition's sequence is unresolved: Kafka drains no new batch until it is resolved"
    if first is not None and entry.producer_epoch != before.producer_epoch:
        return "batches of an older epoch are outstanding: Kafka drains no new batch before they complete"
    return None


def _drain_bookkeeping(  # no mutate: part of the judge of batch_stamped_per_kafka (a property), not a rule
    before: prod.Producer, after: prod.Producer, batch: prod.ProducerBatch, sequence_space: int
) -> str | None:
    """How the client's partition bookkeeping after draining ``batch`` differs from Kafka's, or ``None``.

    A retried batch changes no ``TxnPartitionEntry``.  A batch drained for the first time takes the partition's next
    sequence, which then moves past its records; if the entry was of an older epoch,
    ``TransactionManager.maybeUpdateProducerIdAndEpoch`` first restarted it (``TxnPartitionEntry.
    startSequencesAtBeginning``, trunk @1eb7644349cb: the new epoch, next sequence 0, ``lastAckedSequence`` back to
    ``NO_LAST_ACKED_SEQUENCE_NUMBER``), so nothing the old epoch acknowledged is read under the new one (a later
    ``isNextSequence`` in ``canRetry`` or ``maybeResolveSequences`` would compare the new epoch's sequences with
    it).  The other partitions are untouched.
    """
    q = batch.partition
    entry = before.partitions[q]
    if not batch.has_sequence:
        if entry.producer_epoch != before.producer_epoch:
            entry = prod.TxnPartitionEntry(producer_epoch=before.producer_epoch)
        entry = entry._replace(next_sequence=(entry.next_sequence + len(batch.records)) % sequence_space)
    want = (*before.partitions[:q], entry, *before.partitions[q + 1 :])
    if after.partitions == want:  # no branch: the other side describes a defect
        return None
    return (
        f"partition {q}: after draining {','.join(prod.record_label(r) for r in batch.records)} the client's "
        f"partition entries are {after.partitions}; Kafka's are {want}"
    )


def misstamped_batch(  # no mutate: the judge of batch_stamped_per_kafka (a property), not a rule
    before: prod.Producer, request: ProduceRequest, after: prod.Producer | None = None, sequence_space: int = 0
) -> str | None:
    """How the stamp the client put on ``request`` differs from Kafka's, or ``None``.

    ``RecordAccumulator.drain`` (trunk @1eb7644349cb): a batch drained for the first time gets the producer's
    current id and epoch and the partition's next sequence, after ``TransactionManager.maybeUpdateProducerIdAndEpoch``
    restarted the partition at sequence 0 if its entry is of an older id or epoch (``hasStaleProducerIdAndEpoch``)
    and none of its batches is in flight -- also for a partition that did not ask for the last bump (KAFKA-12152);
    a retried batch keeps its stamp (``ProducerBatch.setProducerState`` only when it has no sequence yet).
    ``after`` (the client after the drain): its partition bookkeeping is judged too (:func:`_drain_bookkeeping`).
    """
    batch = next((b for b in before.batches if b.records == request.records), None)
    if batch is None:  # no branch: the drained batch was in the client's queue
        return None
    held_back = _drained_out_of_turn(before, batch)
    if held_back is not None:  # no branch: the other side describes a defect
        return (
            f"partition {request.partition}: {','.join(prod.record_label(r) for r in request.records)} drained while "
            f"{held_back}"
        )
    if batch.has_sequence:
        want = (batch.producer_epoch, batch.base_sequence)
    else:
        entry = before.partitions[request.partition]
        stale = entry.producer_epoch != before.producer_epoch
        want = (before.producer_epoch, 0 if stale else entry.next_sequence)
    got = (request.producer_epoch, request.base_sequence)
    if got == want and request.producer_id == before.producer_id:  # no branch: the other side describes a defect
        return None if after is None else _drain_bookkeeping(before, after, batch, sequence_space)
    return (
        f"partition {request.partition}: {','.join(prod.record_label(r) for r in request.records)} sent as (pid "
        f"{request.producer_id}, epoch {got[0]}, seq {got[1]}); Kafka stamps it (pid {before.producer_id}, epoch "
        f"{want[0]}, seq {want[1]})"
    )


def unrestarted_sequences(  # no mutate: the judge of epoch_bump_restarts_sequences (a property), not a rule
    before: prod.Producer, after: prod.Producer, max_epoch: int
) -> str | None:
    """How the KIP-360 bump from ``before`` to ``after`` fails to restart the sequences it must, or ``None``.

    ``TransactionManager.bumpIdempotentProducerEpoch`` calls ``startSequencesAtBeginning`` for every partition
    that requested the bump (``partitionsToRewriteSequences``): the partition moves to the new epoch and its
    outstanding batches are re-stamped with it, with sequences 0, 1, ... in the order they were sent, so the
    leader accepts them as the start of the new epoch.  At the epoch limit the producer id itself is reset
    (``bumpIdempotentEpochAndResetIdIfNeeded``): every outstanding batch loses its stamp and is stamped afresh
    under the next producer id.  Which of the two happens is decided by the epoch alone: the id is reset exactly
    when the epoch is already the last one (``Short.MAX_VALUE``, ``max_epoch`` here); otherwise the id is kept and
    the epoch goes up by one.
    """
    at_limit = before.producer_epoch >= max_epoch
    want = (-1, -1) if at_limit else (before.producer_id, before.producer_epoch + 1)
    if (after.producer_id, after.producer_epoch) != want:  # no branch: the other side describes a defect
        return (
            f"the bump from (producer id {before.producer_id}, epoch {before.producer_epoch}) gave (producer id "
            f"{after.producer_id}, epoch {after.producer_epoch}), not {'a reset id' if at_limit else want}"
        )
    reset = after.producer_id < 0
    for q, entry in enumerate(before.partitions):
        if not (entry.rewrite or reset):
            continue
        records = [b.records for b in before.batches if b.partition == q and b.has_sequence]
        now = [b for r in records for b in after.batches if b.records == r]
        if reset:
            stamped = [b for b in now if b.has_sequence or b.producer_epoch >= 0]
            if stamped or len(now) != len(records):  # no branch: the other side describes a defect
                return f"producer id reset at the epoch limit, yet partition {q} keeps stamped batches"
            continue
        seq = 0
        for b in now:
            if (b.producer_epoch, b.base_sequence) != (after.producer_epoch, seq):  # no branch: describes a defect
                return (
                    f"partition {q}: after the bump to epoch {after.producer_epoch} a batch is stamped "
                    f"(epoch {b.producer_epoch}, seq {b.base_sequence}), not (epoch {after.producer_epoch}, seq {seq})"
                )
            seq += len(b.records)
        moved = after.partitions[q]
        lost = len(now) != len(records) or (moved.producer_epoch, moved.next_sequence) != (after.producer_epoch, seq)
        if lost:  # no branch: the other side describes a defect
            want = (after.producer_epoch, seq)
            return (
                f"partition {q}: after the bump its sequences continue at (epoch {moved.producer_epoch}, seq "
                f"{moved.next_sequence}), not (epoch {want[0]}, seq {want[1]})"
            )
        # TxnPartitionEntry.startSequencesAtBeginning forgets the old epoch's last acknowledged sequence
        # (NO_LAST_ACKED_SEQUENCE_NUMBER) and bumpIdempotentProducerEpoch drops the partition from
        # partitionsWithUnresolvedSequences and partitionsToRewriteSequences: nothing of the old epoch's bookkeeping
        # may judge the new epoch's answers (isNextSequence, maybeResolveSequences)
        fresh = prod.TxnPartitionEntry(producer_epoch=after.producer_epoch, next_sequence=seq)
        if moved != fresh:  # no branch: the other side describes a defect
            return f"partition {q}: after the bump its bookkeeping is {moved}, not a fresh {fresh}"
    if not reset:
        for q, entry in enumerate(before.partitions):
            # only the partitions in partitionsToRewriteSequences are touched (the others move to the new epoch
            # when they next drain: maybeUpdateProducerIdAndEpoch)
            if not entry.rewrite and after.partitions[q] != entry:  # no branch: the other side describes a defect
                return f"partition {q} did not ask for the bump, yet its bookkeeping changed to {after.partitions[q]}"
    return None


def overtaken_batch(  # no mutate: the judge of retried_batch_not_overtaken (a property), not a rule
    p: prod.Producer, request: ProduceRequest, log: tuple[part.LogEntry, ...]
) -> str | None:
    """An earlier batch of ``request``'s partition and session that ``p`` still holds and the log does not.

    The ordering promise of the idempotent producer (``max.in.flight.requests.per.connection`` and ``retries``
    in ``ProducerConfig``'s documentation: with idempotence, a batch that fails and is retried is never
    overtaken by the batch sent after it): while the client still retries a batch of a partition, no later
    batch of the same producer session may be appended there -- the leader accepts batch n+1 only after batch
    n (``ProducerAppendInfo.checkSequence``).  ``None`` when there is none (or ``request`` is of another session).
    """
    if p.producer_id != request.producer_id:
        return None
    first = request.records[0]
    for b in p.batches:
        if b.partition != request.partition or b.records[0] >= first:
            continue
        if not any(b.records[0] in e.records for e in log):
            return ",".join(prod.record_label(r) for r in b.records)
    return None


def unexplained_failures(  # no mutate: the judge of failed_sends_explained (a property), not a rule
    before: prod.Producer, failed: tuple[int, ...], retries: int, error: str | None = None
) -> tuple[str, ...]:
    """Labels for the records of ``failed`` that Kafka's producer would not have failed yet.

    ``Sender.completeBatch`` / ``failBatch`` and ``expireBatches``: a batch fails when ``delivery.timeout.ms``
    expires it (the caller does not ask then), when its retries are spent, or on an error the producer does not
    retry (``Sender.canRetry``: not a ``RetriableException``; OUT_OF_ORDER_SEQUENCE_NUMBER is retried by an
    idempotent producer, ``TransactionManager.canRetry``).  No answer of this system is such an error: it has no
    ACLs (authorization failures arise in the transactional systems, ``model.security``), its clients send no
    control batches (INVALID_RECORD), and INVALID_PRODUCER_EPOCH cannot fence an idempotent producer -- no other
    instance holds its id, and the client never lets a batch of an older epoch reach a partition after one of
    the newer epoch (``maybeUpdateProducerIdAndEpoch`` waits for the partition's in-flight batches; the bump
    re-stamps the partitions it rewrites).  So here a batch fails only by expiry or with its retries spent
    (``error`` only labels the verdict).
    """
    out: list[str] = []
    for r in failed:
        batch = next((b for b in before.batches if r in b.records), None)
        gave_up = batch is not None and batch.attempts > retries
        if gave_up:  # no branch: the other side records a defect (a send failed that Kafka would retry)
            continue
        why = f"after {batch.attempts} attempt(s) of {retries + 1}" if batch is not None else "not in a batch"
        out.append(f"{prod.record_label(r)} failed {why}" + (f" on {error}" if error else ""))
    return tuple(out)


@codec.record
class SystemState(NamedTuple):
    """The whole system at one instant."""

    producers: tuple[prod.Producer, ...]
    partitions: tuple[part.PartitionLeader, ...]
    network: tuple[net.Envelope, ...]
    next_producer_id: int
    faults_used: tuple[int, ...]
    ghost: Ghost
    #: the partitions' read_uncommitted consumers (``read_uncommitted_consumer``; empty without it)
    consumers: tuple[PartitionConsumer, ...] = ()


def _noted(ghost: Ghost, field: str, verdict: str) -> Ghost:  # no mutate: records a property's verdict (the judge)
    """``ghost`` with ``verdict`` appended to its history ``field`` (a defect a property reports)."""
    return ghost._replace(**{field: (*getattr(ghost, field), verdict)})


def _insert_sorted(values: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(values + new)) if new else values


def _replace_at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return items[:i] + (value,) + items[i + 1 :]


class KafkaSystem:
    """The idempotent-producer system as a :class:`model.interface.Model`.

    A handler's guard marked ``no branch: replay/minimise only`` refuses an action :meth:`actions` does not
    offer in that state: the search only steps offered actions, so only ``keos replay`` of an edited trace and
    the counterexample minimiser (``checker/minimize.py``) take it (``tests/test_bmc.py`` checks, action by
    action, that ``step`` refuses exactly what the z3 encoding disables).
    """

    def __init__(
        self,
        config: SystemConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "kafka",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        flags = replace(variant.flags, sequence_space=config.sequence_space)
        producer_config = config.producer
        if flags.force_idempotence_off:  # no branch: only variant no_idempotence (keos mutants) forces it
            producer_config = ProducerConfig(
                enable_idempotence=False,
                acks=producer_config.acks,
                retries=producer_config.retries,
                max_in_flight=producer_config.max_in_flight,
            )
        producer_config.validate()
        too_many = config.topology.records_per_producer >= prod.RECORDS_PER_PRODUCER
        if too_many:  # no branch: scenarios bound records_per_producer to 64
            raise ModelError(f"records_per_producer must be < {prod.RECORDS_PER_PRODUCER}")
        self.name = name
        self.config = config
        self.variant = variant
        self.flags = flags
        self.producer_config = producer_config
        #: The producer stamps batches with sequences (``enable.idempotence``, not forced off by a variant).
        self.idempotent = producer_config.enable_idempotence
        self._properties = tuple(properties)
        self._limits = config.faults.limits()
        self._scenario_info = scenario_info or {}

    # -- Model interface -------------------------------------------------------------------

    def init_states(self) -> Sequence[SystemState]:
        """One initial state: producers without ids, empty partitions, empty network."""
        topo = self.config.topology
        producers = tuple(prod.new_producer(topo.partitions) for _ in range(topo.producers))
        partitions = tuple(part.PartitionLeader() for _ in range(topo.partitions))
        consumers = (PartitionConsumer(),) * topo.partitions if self.config.read_uncommitted_consumer else ()
        return (SystemState(producers, partitions, (), 0, (0,) * len(FAULT_KINDS), Ghost(), consumers),)

    def properties(self) -> Sequence[Property]:
        """The properties this model instance checks."""
        return self._properties

    def within_bounds(self, state: SystemState) -> bool:
        """Every state is explored: budgets and record counts make the space finite."""
        return True

    def fingerprint(self, state: SystemState) -> str:
        """Stable blake2b-64 fingerprint of the state."""
        return codec.fingerprint(state)

    def actions(self, state: SystemState) -> list[Action]:
        """Enabled actions: protocol steps first, then faults, each in a fixed order."""
        out: list[Action] = []
        cfg = self.producer_config
        topo = self.config.topology
        for i, p in enumerate(state.producers):
            if prod.needs_producer_id(p, cfg):
                out.append(Action("InitProducerId", (i,)))
            if self._may_send(p):
                out.append(Action("Send", (i,)))
            if prod.can_bump_epoch(p):
                out.append(Action("BumpEpoch", (i,)))
            by_last_ack = self.flags.resolve_by_last_acked_sequence
            for q, entry in enumerate(p.partitions):
                resolvable = entry.unresolved and prod.resolve_sequence(p, q, by_last_ack) is not None
                if resolvable:
                    out.append(Action("ResolveSequence", (i, q)))
            if not p.batches:
                continue
            orphans = self._orphans(state, i, p)
            for q in range(topo.partitions):
                if prod.can_drain(p, q, cfg, orphans, self.flags.retry_drained_in_turn):
                    out.append(Action("SendProduce", (i, q)))
        heads = net.channel_heads(state.network)
        for env in heads:
            out.append(Action("Deliver", (env,)))
        # Followers fetch whatever acks the producer asked for: the high watermark lags the log end after an
        # acks=1 or acks=0 append, or an acks=all one with separate replication (``Partition.maybeIncrementLeaderHW``)
        for q, leader in enumerate(state.partitions):
            if part.can_replicate(leader):
                out.append(Action("ReplicatePartition", (q,)))
            out.extend(
                Action("ExpireProducerState", (q, e.producer_id))
                for e in leader.producers
                if self._may_expire_producer(state, q, e.producer_id)
            )
            if self.config.delete_records and part.can_delete_records(leader):
                out.append(Action("DeleteRecords", (q,)))
            if q < len(state.consumers) and self._may_fetch(state, q):
                out.append(Action("Fetch", (q,)))
        used = state.faults_used
        left = self._fault_budget_left
        if left(used, _DROP):
            out.extend(Action("DropMessage", (env,)) for env in heads)
        if left(used, _DUPLICATE):
            out.extend(Action("DuplicateMessage", (env,)) for env in heads)
        if left(used, _REORDER):
            out.extend(Action("ReorderMessage", (env,)) for env in net.non_heads(state.network))
        if left(used, _REQUEST_TIMEOUT):
            out.extend(Action("RequestTimeout", (i,)) for i, p in enumerate(state.producers) if prod.can_time_out(p))
        if left(used, _BATCH_EXPIRY):
            for i, p in enumerate(state.producers):
                for q in range(topo.partitions):
                    if prod.expire_batch(p, q, cfg, self.flags.mark_unresolved_only_in_retry) is not None:
                        out.append(Action("ExpireBatch", (i, q)))
        if left(used, _LEADER_RESTART):
            out.append(Action("RestartLeader", ()))
        if left(used, _PRODUCER_RESTART):
            out.extend(Action("RestartProducer", (i,)) for i in range(len(state.producers)))
        if left(used, _NOT_LEADER):
            out.extend(Action("NotLeaderOrFollower", (env,)) for env in heads if _misdirectable(env))
        if left(used, _PRODUCE_TIMEOUT):
            out.extend(Action("ExpireDelayedProduce", (q,)) for q, ld in enumerate(state.partitions) if ld.pending)
        if left(used, _FORGED_SEQUENCE):
            for q in range(topo.partitions):
                for e in state.partitions[q].producers:
                    out.extend(
                        Action("ForgedProduce", (q, e.producer_id, forged))
                        for forged in (FORGED_RESTART, FORGED_SKIP, FORGED_NEW_EPOCH)
                        if self._forged_request(state, q, e.producer_id, forged) is not None
                    )
        if left(used, _LEADER_MOVE):
            for q, ld in enumerate(state.partitions):
                out.append(Action("MoveLeader", (q, 0)))
                if part.can_replicate(ld):  # a follower past the high watermark: only then another leader
                    out.append(Action("MoveLeader", (q, 1)))
        return out

    @property
    def _retry_cancelled(self) -> bool:
        """Whether a request cancelled by a closed connection is retried (``retry_disconnected_batches``)."""
        return self.flags.retry_disconnected_batches

    def _orphans(self, s: SystemState, i: int, p: prod.Producer) -> int:
        """Requests of an expired batch still in flight (:func:`_orphan_requests`), unless the weakened variant
        ``expired_request_frees_in_flight`` lets them go."""
        return _orphan_requests(s, i, p) if self.flags.expired_requests_hold_in_flight else 0

    def _fault_budget_left(self, used: tuple[int, ...], k: int) -> bool:
        """Whether a fault of kind ``k`` (index into :data:`FAULT_KINDS`) may still be injected.

        The one budget test: :meth:`actions` offers a fault and :meth:`step` takes it under it.
        """
        return sum(used) < self.config.faults.total and used[k] < self._limits[k]

    def _may_send(self, p: prod.Producer) -> bool:
        """Whether the application has a record left to hand to ``p`` (``records_per_producer``)."""
        return p.next_record < self.config.topology.records_per_producer

    def _may_expire_producer(self, s: SystemState, q: int, producer_id: int) -> bool:
        """Whether partition ``q``'s leader may expire ``producer_id`` (``producer.id.expiration.ms``, idle).

        The one guard of the step: :meth:`actions` offers it and :meth:`step` takes it under this test, which
        includes the leader's own rule (:func:`model.log.producer_expiry.expirable`: an entry, no open transaction).
        """
        if not self.config.producer_id_expiration:
            return False
        entry = s.partitions[q].entry(producer_id)
        return entry is not None and expirable(entry) and _producer_idle(s, q, producer_id)

    def _fetch_params(self, s: SystemState, q: int) -> fetch_path.FetchParams:
        """The consumer's Fetch of partition ``q``: read_uncommitted from its position, no size limit."""
        return fetch_path.FetchParams(fetch_path.READ_UNCOMMITTED, s.consumers[q].position)

    def _may_fetch(self, s: SystemState, q: int) -> bool:
        """Whether partition ``q``'s consumer has something to read: the leader's read_uncommitted end offset (its
        high watermark) is past the consumer's position (else its Fetch waits in the purgatory, no step)."""
        return fetch_path.try_complete(s.partitions[q], self._fetch_params(s, q), self.flags)

    def step(self, state: SystemState, action: Action) -> Step | None:
        """Apply one action; ``None`` if it is not enabled."""
        handler = _HANDLERS.get(action.kind)
        if handler is None:  # no branch: decoding checks kinds against ACTION_ARGS (replay only)
            return None
        k = _FAULT_INDEX.get(action.kind, -1)
        if k >= 0 and not self._fault_budget_left(state.faults_used, k):  # no branch: replay/minimise only
            return None
        result = handler(self, state, *action.args)
        if result is None:  # no branch: replay/minimise only
            return None
        new_state, events = result
        if k >= 0:
            used = new_state.faults_used
            new_state = new_state._replace(faults_used=used[:k] + (used[k] + 1,) + used[k + 1 :])
            events = (_FAULT_EVENT[k], *events)
        return Step(new_state, events)

    def _valid_args(self, action: Action) -> bool:
        """Arity, types and index ranges of a decoded (possibly user-supplied) action.

        Checked once when a trace is decoded (:meth:`action_from_json`), not on
        every step: actions the model enumerates are well-formed by construction.
        """
        spec = _ARG_SPECS[action.kind]
        args = action.args
        if len(args) != len(spec):  # input: a malformed trace (keos replay)
            return False
        topo = self.config.topology
        for kind, value in zip(spec, args):
            if kind == 0:
                if type(value) is not int or not 0 <= value < topo.producers:  # input: a malformed trace (keos replay)
                    return False
            elif kind == 1:
                if type(value) is not int or not 0 <= value < topo.partitions:  # input: a malformed trace (keos replay)
                    return False
            elif kind == 2:
                if not isinstance(value, net.Envelope):  # input: a malformed trace (keos replay)
                    return False
            elif type(value) is not int:  # input: a malformed trace (keos replay)
                return False
        return True

    # -- handlers: protocol steps --------------------------------------------------------------

    def _init_producer_id(self, s: SystemState, i: int) -> tuple[SystemState, tuple[str, ...]] | None:
        p = s.producers[i]
        if not prod.needs_producer_id(p, self.producer_config):  # no branch: replay/minimise only
            return None
        p = prod.init_producer_id(p, s.next_producer_id)
        return s._replace(producers=_replace_at(s.producers, i, p), next_producer_id=s.next_producer_id + 1), (
            "init_producer_id",
        )

    def _send(self, s: SystemState, i: int) -> tuple[SystemState, tuple[str, ...]] | None:
        p = s.producers[i]
        if not self._may_send(p):  # no branch: replay/minimise only
            return None
        q = p.next_record % self.config.topology.partitions
        p = prod.send(p, q, prod.record_id(i, p.next_record), self.config.topology.records_per_batch)
        return s._replace(producers=_replace_at(s.producers, i, p)), ()

    def _send_produce(self, s: SystemState, i: int, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        p = s.producers[i]
        orphans = self._orphans(s, i, p)
        cfg, flags = self.producer_config, self.flags
        drained = prod.drain(p, i, q, cfg, flags.sequence_space, orphans, flags.retry_drained_in_turn)
        if drained is None:  # no branch: replay/minimise only
            return None
        p, request = drained
        events: tuple[str, ...] = ("produce",)
        ghost = s.ghost
        if self.idempotent:
            wrong = misstamped_batch(s.producers[i], request, p, flags.sequence_space)
            if wrong is not None:  # no branch: the other side records a defect (a stamp Kafka does not give)
                ghost = _noted(ghost, "misstamped", wrong)  # no mutate: a property's verdict
        if p.in_flight >= 2:
            events += ("concurrent_in_flight",)
        if any(b.in_flight and b.attempts > 1 for b in p.batches if b.partition == q):
            events += ("resend",)
        env = net.Envelope(f"p{i}", BROKER, p.connection, request)
        return s._replace(producers=_replace_at(s.producers, i, p), network=s.network + (env,), ghost=ghost), events

    def _bump_epoch(self, s: SystemState, i: int) -> tuple[SystemState, tuple[str, ...]] | None:
        before = s.producers[i]
        p = prod.bump_epoch(before, self.config.max_producer_epoch)
        if p is None:  # no branch: replay/minimise only
            return None
        refused = tuple(q for j, q in s.ghost.refused if j == i)
        ghost = s.ghost._replace(refused=tuple(r for r in s.ghost.refused if r[0] != i)) if refused else s.ghost
        s = s._replace(producers=_replace_at(s.producers, i, p), ghost=ghost)
        needless = needless_bump(before, s.partitions, s.ghost.acked, self.flags.sequence_space, refused)
        if needless is not None:  # no branch: the other side records a defect (a bump Kafka does not make)
            s = s._replace(ghost=_noted(s.ghost, "needless_bumps", needless))  # no mutate: a property's verdict
        unrestarted = unrestarted_sequences(before, p, self.config.max_producer_epoch)
        if unrestarted is not None:  # no branch: the other side records a defect (sequences not restarted)
            s = s._replace(ghost=_noted(s.ghost, "unrestarted", unrestarted))  # no mutate: a property's verdict
        if not any(s.faults_used):  # no branch: the other side records a defect (a bump without a lost sequence)
            s = s._replace(ghost=_noted(s.ghost, "unhealthy", f"producer {i} bumped its epoch"))  # no mutate: a verdict
        return s, ("epoch_bump",)

    def _resolve_sequence(self, s: SystemState, i: int, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        outcome = prod.resolve_sequence(s.producers[i], q, self.flags.resolve_by_last_acked_sequence)
        if outcome is None:  # no branch: replay/minimise only
            return None
        if "sequence_resolved" in outcome.events and self.producer_config.acks == "all":
            gap = unjustified_resolution(s.producers[i], s.partitions[q].log, q, self.flags.sequence_space)
            if gap is not None:  # no branch: the other side records a defect (a gap resolved away)
                s = s._replace(ghost=_noted(s.ghost, "missed_bumps", gap))  # no mutate: a property's verdict
        return self._apply_outcome(s, i, outcome), outcome.events

    def _deliver(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        if env not in net.channel_heads(s.network):  # no branch: replay/minimise only
            return None
        return self._receive(s, env)

    def _receive(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        network = net.remove(s.network, env)
        if network is None:  # no branch: replay/minimise only
            return None
        body = env.body
        if isinstance(body, ProduceRequest):
            before = s.partitions[body.partition]
            hostile = body.correlation_id < 0  # no mutate: a ForgedProduce request (no client awaits it): environment
            behind = overtaken_batch(s.producers[body.producer], body, before.log) if self.idempotent else None
            if hostile:  # no mutate: no retry of a client's stands behind a misbehaving client's request
                behind = None
            leader, response, events = part.handle_produce(
                before, body, self.producer_config.acks, self.flags, self.config.separate_replication
            )
            ghost = s.ghost
            unexpected = unexpected_answer(before, leader, body, events, self.flags.sequence_space)
            if unexpected is not None:  # no branch: the other side records a defect (an answer Kafka does not give)
                ghost = _noted(ghost, "wrong_answers", unexpected)  # no mutate: a property's verdict
            if behind is not None:
                events = (*events, "batch_behind_retry")
                if "append" in events:  # no branch: the other side records a defect (a retried batch overtaken)
                    appended = ",".join(prod.record_label(r) for r in body.records)
                    overtaken = f"{appended} appended while {behind} was still retried"
                    ghost = _noted(ghost, "overtaken", overtaken)  # no mutate: a property's verdict
            answer = leader.pending[-1] if "awaiting_replication" in events else response  # sent, or parked (purgatory)
            if hostile:  # no mutate: the misbehaving client (environment) reads no answer: none is sent or parked
                leader = leader._replace(pending=tuple(r for r in leader.pending if r.correlation_id >= 0))
                response = None
            if response is not None:
                network = network + (net.Envelope(BROKER, env.src, env.connection, response),)
            ghost = _judge_response(ghost, before, body, answer, events)  # no mutate: a property's verdict
            wrong = misplaced_ack(leader, answer, body) if answer is not None else None
            if wrong is not None:  # no branch: the other side records a defect (an acknowledgement elsewhere)
                ghost = _noted(ghost, "misplaced_acks", wrong)  # no mutate: a property's verdict
            if response is not None and response.error != Errors.NONE and not any(s.faults_used):
                ghost = _noted(ghost, "unhealthy", f"the leader answered {response.error}")  # no mutate: a verdict
            s = s._replace(partitions=_replace_at(s.partitions, body.partition, leader), network=network, ghost=ghost)
            if hostile:  # no mutate: the misbehaving client's batch completes no batch of a client's
                return s, events
            if response is None and self.producer_config.acks == "0":
                s = self._complete_acks0(s, body)
            return s, events
        s = s._replace(network=network)
        assert isinstance(body, ProduceResponse)  # the idempotence network carries produce requests and responses only
        i = body.producer
        flags = self.flags
        outcome = prod.handle_produce_response(
            s.producers[i],
            body,
            self.producer_config,
            flags.sequence_space,
            flags.defer_bump_until_resolved,
            bump_next=flags.bump_on_next_sequence_refusal,
            by_unresolved=flags.retry_by_unresolved_sequence,
            late_ack=flags.late_success_updates_last_acked,
            ack_raises=flags.acked_sequence_only_raised,
            storage_error_known=flags.producer_knows_storage_error,
            retriable_keeps_epoch=flags.retriable_produce_error_keeps_epoch,
            retriable_only=flags.produce_retries_only_retriable,
        )
        late = late_answer_misread(s.producers[i], outcome.producer, body, s.partitions[body.partition].log)
        if late is None and self.idempotent:
            late = ack_misread(s.producers[i], outcome.producer, body, flags.sequence_space)
        if late is not None:  # no branch: the other side records a defect (a late answer Kafka reads otherwise)
            s = s._replace(ghost=_noted(s.ghost, "misjudged_failures", late))  # no mutate: a property's verdict
        if body.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and self.idempotent:
            if outcome.failed and (i, body.partition) not in s.ghost.refused:
                s = s._replace(ghost=s.ghost._replace(refused=(*s.ghost.refused, (i, body.partition))))
            missed = unrequested_bump(s.producers[i], outcome, body, flags.defer_bump_until_resolved)
            if missed is not None:  # no branch: the other side records a defect (a gap left unrepaired)
                s = s._replace(ghost=_noted(s.ghost, "missed_bumps", missed))  # no mutate: a property's verdict
        return self._apply_outcome(s, i, outcome, body.error), outcome.events

    def _complete_acks0(self, s: SystemState, request: ProduceRequest) -> SystemState:
        """acks=0: the client counts a batch as done once it is on the wire.

        Kafka completes an acks=0 batch when its request is sent (``NetworkClient`` answers a request that expects
        no response at once); the model completes it when the request reaches the leader.  A batch that
        ``delivery.timeout.ms`` failed in between is done already (``ProducerBatch.done`` completes once): it is
        not acknowledged again.
        """
        p = s.producers[request.producer]
        batches = tuple(b for b in p.batches if not (b.in_flight and b.records == request.records))
        if len(batches) == len(p.batches):
            return s
        p = p._replace(batches=batches)
        ghost = s.ghost._replace(acked=_insert_sorted(s.ghost.acked, request.records))
        return s._replace(producers=_replace_at(s.producers, request.producer, p), ghost=ghost)

    def _apply_outcome(
        self, s: SystemState, i: int, outcome: prod.Outcome, error: str | None = None, expired: bool = False
    ) -> SystemState:
        """The state after a client transition of producer ``i``; ``error``: the response it handled, if any;
        ``expired``: ``delivery.timeout.ms`` failed the batch (always a reason to give up)."""
        ghost = s.ghost
        if outcome.failed and self.idempotent:
            wrong = misjudged_failure(
                s.producers[i],
                outcome.producer,
                outcome.failed,
                error,
                expired,
                self.producer_config.retries,
                self.flags.defer_bump_until_resolved,
            )
            if wrong is not None:  # no branch: the other side records a defect (a failure Kafka handles otherwise)
                ghost = _noted(ghost, "misjudged_failures", wrong)  # no mutate: a property's verdict
        if outcome.acked or outcome.failed:
            bad = ghost.unexplained_failures
            if outcome.failed and not expired:
                retries = self.producer_config.retries
                bad += unexplained_failures(s.producers[i], outcome.failed, retries, error)
            ghost = ghost._replace(
                acked=_insert_sorted(ghost.acked, outcome.acked),
                failed=_insert_sorted(ghost.failed, outcome.failed),
                unexplained_failures=bad,
            )
        return s._replace(producers=_replace_at(s.producers, i, outcome.producer), ghost=ghost)

    def _replicate(self, s: SystemState, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        replicated = part.replicate(s.partitions[q])
        if replicated is None:  # no branch: replay/minimise only
            return None
        leader, released = replicated
        network = s.network + tuple(net.Envelope(BROKER, f"p{r.producer}", r.connection, r) for r in released)
        return s._replace(partitions=_replace_at(s.partitions, q, leader), network=network), ("replicate",)

    def _expire_producer_state(
        self, s: SystemState, q: int, producer_id: int
    ) -> tuple[SystemState, tuple[str, ...]] | None:
        if not self._may_expire_producer(s, q, producer_id):  # no branch: replay/minimise only
            return None
        result = expire_producer(s.partitions[q], producer_id)
        if result is None:  # no branch: replay/minimise only
            return None
        beside = ("producer_state_expired_beside_traffic",) if _producing_elsewhere(s, q, producer_id) else ()
        return s._replace(partitions=_replace_at(s.partitions, q, result[0])), (*result[1], *beside)

    def _delete_records(self, s: SystemState, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        """DeleteRecords (or retention) moves partition ``q``'s log start offset to its high watermark."""
        if not self.config.delete_records:  # no branch: replay/minimise only (actions() offers it under the same test)
            return None
        result = part.delete_records(s.partitions[q], self.flags)
        if result is None:  # no branch: replay/minimise only
            return None
        return s._replace(partitions=_replace_at(s.partitions, q, result[0])), result[1]

    def _fetch(self, s: SystemState, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        """Partition ``q``'s consumer fetches: ``ReplicaManager.fetchMessages`` -> ``readFromLog`` with
        ``FetchIsolation.HIGH_WATERMARK`` (read_uncommitted) from the consumer's position; the records of the
        batches read go to the application and the position moves to the end of the last one."""
        if q >= len(s.consumers) or not self._may_fetch(s, q):  # no branch: replay/minimise only
            return None
        leader = s.partitions[q]
        result = fetch_path.read_from_log(leader, self._fetch_params(s, q), self.flags)
        got = tuple(r for e in leader.log[result.fetch_offset : result.upper_bound] for r in e.records)
        c = s.consumers[q]
        c = c._replace(position=result.upper_bound, delivered=(*c.delivered, *got))
        events: tuple[str, ...] = ("consumer_fetched",)
        if leader.high_watermark < len(leader.log):  # no mutate: observer (a sometimes witness)
            events = (*events, "consumer_fetched_beside_unreplicated_tail")
        return s._replace(consumers=_replace_at(s.consumers, q, c)), events

    # -- handlers: faults ----------------------------------------------------------------------

    def _drop(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        if env not in net.channel_heads(s.network):  # no branch: replay/minimise only
            return None
        network = net.reset_connection(s.network, env)
        if network is None:  # no branch: replay/minimise only
            return None
        s = s._replace(network=network)
        i = env.body.producer  # the client end of the connection: requests and responses name their producer
        p = s.producers[i]
        if p.connection != env.connection:
            return s, ("connection_reset",)
        outcome = prod.request_timeout(p, self.producer_config, Errors.NETWORK_EXCEPTION, retry=self._retry_cancelled)
        if outcome is None:  # nothing of the producer in flight: only the requests of expired batches are cancelled
            return s._replace(producers=_replace_at(s.producers, i, prod.disconnect(p))), ("connection_reset",)
        return self._apply_outcome(s, i, outcome, Errors.NETWORK_EXCEPTION), ("connection_reset",) + outcome.events

    def _duplicate(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        if env not in net.channel_heads(s.network):  # no branch: replay/minimise only
            return None
        network = net.duplicate(s.network, env)
        return None if network is None else (s._replace(network=network), ())

    def _reorder(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        if env not in net.non_heads(s.network):  # no branch: replay/minimise only
            return None
        return self._receive(s, env)

    def _request_timeout(self, s: SystemState, i: int) -> tuple[SystemState, tuple[str, ...]] | None:
        outcome = prod.request_timeout(s.producers[i], self.producer_config, retry=self._retry_cancelled)
        if outcome is None:  # no branch: replay/minimise only
            return None
        return self._apply_outcome(s, i, outcome, Errors.REQUEST_TIMED_OUT), outcome.events

    def _expire_batch(self, s: SystemState, i: int, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        outcome = prod.expire_batch(s.producers[i], q, self.producer_config, self.flags.mark_unresolved_only_in_retry)
        if outcome is None:  # no branch: replay/minimise only
            return None
        return self._apply_outcome(s, i, outcome, expired=True), outcome.events

    def _restart_leader(self, s: SystemState) -> tuple[SystemState, tuple[str, ...]] | None:
        partitions = tuple(part.restart_leader(leader, self.flags) for leader in s.partitions)
        network = net.without(s.network, lambda env: BROKER in (env.src, env.dst))
        producers = list(s.producers)
        ghost = s.ghost
        for i, p in enumerate(producers):
            # the crashed broker's connections close under the clients: wasDisconnected, NETWORK_EXCEPTION
            error = Errors.NETWORK_EXCEPTION
            outcome = prod.request_timeout(p, self.producer_config, error, retry=self._retry_cancelled)
            if outcome is None:  # its connection is gone with every message to or from the broker: so are the
                producers[i] = p._replace(expired=())  # requests of its expired batches (no new connection needed)
                continue
            s2 = self._apply_outcome(s._replace(ghost=ghost), i, outcome, Errors.NETWORK_EXCEPTION)
            producers[i] = s2.producers[i]
            ghost = s2.ghost
        events: tuple[str, ...] = ("leader_restart",)
        if any(any(e.records for e in leader.log) for leader in partitions) and ghost.acked:
            events += ("leader_restart_with_acked_data",)
        if any(leader.high_watermark < len(leader.log) for leader in s.partitions):
            events += ("unreplicated_batches_truncated",)
        return s._replace(partitions=partitions, network=network, producers=tuple(producers), ghost=ghost), events

    def _not_leader(self, s: SystemState, env: net.Envelope) -> tuple[SystemState, tuple[str, ...]] | None:
        """The request reaches a broker that does not lead its partition: NOT_LEADER_OR_FOLLOWER, nothing appended.

        ``ReplicaManager.appendRecords`` answers NOT_LEADER_OR_FOLLOWER for a partition the broker does not lead --
        before it has applied the metadata that makes it the leader (a new or moved partition, KAFKA-15591), or
        after leadership moved on while the client's metadata was stale.  The partition's real leader never sees
        the request; ``Sender.completeBatch`` retries the batch (``NotLeaderOrFollowerException`` is retriable, an
        ``InvalidMetadataException``: the client requests a metadata update and resends to the leader it learns).
        The model has one broker per partition, so the retry goes out on the same connection.  (With acks=0 the
        broker would close the connection instead of answering; no acks=0 scenario gives this fault a budget.)
        The answer is the scenario's ``refusal_error`` (:data:`REFUSAL_ERRORS`): every refusal Kafka gives before
        the append leaves the batch out of every log, whatever its name, and the client must retry it.
        """
        body = env.body
        if env not in net.channel_heads(s.network) or not _misdirectable(env):  # no branch: replay/minimise only
            return None
        assert isinstance(body, ProduceRequest)  # _misdirectable
        network = net.remove(s.network, env)
        assert network is not None  # a channel head is in the network
        response = ProduceResponse(
            body.producer,
            body.connection,
            body.partition,
            body.producer_epoch,
            body.base_sequence,
            self.config.refusal_error,
            -1,
            body.correlation_id,
        )
        network = network + (net.Envelope(BROKER, env.src, env.connection, response),)
        return s._replace(network=network), ("not_leader_or_follower",)

    def _expire_delayed_produce(self, s: SystemState, q: int) -> tuple[SystemState, tuple[str, ...]] | None:
        """The oldest acks=all answer parked in partition ``q``'s purgatory expires: it goes out REQUEST_TIMED_OUT.

        ``DelayedProduce`` (``core/.../server/DelayedProduce.scala``, trunk @1eb7644349cb) starts every partition
        whose append succeeded with ``acksPending`` and the error REQUEST_TIMED_OUT, cleared only when
        ``tryComplete`` finds the followers caught up; when the request's ``timeout.ms`` passes first
        (``onExpiration``, then ``onComplete``) the response carries REQUEST_TIMED_OUT although the batch is in the
        leader's log.  The client retries it (``RetriableException``, ``Sender.canRetry``), and the leader must
        recognise the retry as a duplicate -- or, after a failover that cut the batch off, append it again.  The
        answer is the scenario's ``delayed_produce_error`` (:data:`DELAYED_PRODUCE_ERRORS`): REQUEST_TIMED_OUT, or
        NOT_ENOUGH_REPLICAS_AFTER_APPEND (``checkEnoughReplicasReachOffset`` once the ISR shrank below
        ``min.insync.replicas``) -- the same written batch behind another retriable error.
        """
        leader = s.partitions[q]
        if not leader.pending:  # no branch: replay/minimise only (actions() offers it under the same test)
            return None
        expired = leader.pending[0]._replace(error=self.config.delayed_produce_error)
        leader = leader._replace(pending=leader.pending[1:])
        env = net.Envelope(BROKER, f"p{expired.producer}", expired.connection, expired)
        return s._replace(partitions=_replace_at(s.partitions, q, leader), network=s.network + (env,)), (
            "delayed_produce_expired",
        )

    def _move_leader(self, s: SystemState, q: int, caught_up: int) -> tuple[SystemState, tuple[str, ...]] | None:
        """Partition ``q``'s leadership moves to an in-sync follower; the old leader keeps running
        (:func:`model.log.partition.move_leader`).  Connections stay open: what is on the wire is delivered, and the
        answers the old leader's purgatory completes NOT_LEADER_OR_FOLLOWER go out on their request's connection."""
        leader = s.partitions[q]
        if caught_up not in (0, 1) or (caught_up and not part.can_replicate(leader)):  # no branch: replay only
            return None
        moved, answers = part.move_leader(leader, self.flags, bool(caught_up))
        network = s.network + tuple(net.Envelope(BROKER, f"p{r.producer}", r.connection, r) for r in answers)
        events: tuple[str, ...] = ("leader_move",)
        if any(e.records for e in leader.log) and s.ghost.acked:  # a failover after acknowledgements, as a restart's
            events += ("leader_restart_with_acked_data",)
        if answers:
            events += ("purgatory_answered_not_leader",)
        if len(moved.log) < len(leader.log):
            events += ("unreplicated_batches_truncated",)
        return s._replace(partitions=_replace_at(s.partitions, q, moved), network=network), events

    def _forged_request(  # no mutate: the environment's hostile input (what a misbehaving client sends), not a rule
        self, s: SystemState, q: int, producer_id: int, forged: int
    ) -> ProduceRequest | None:
        """The batch a misbehaving client of ``producer_id`` sends partition ``q``'s leader, or ``None``.

        Kafka's leader cannot trust its clients: a pre-KIP-360 client that reset its sequences without a new
        epoch, a client with a sequence bug (KAFKA-7693's overflow, KAFKA-14034's re-stamping) or a hostile one
        presents the producer id and epoch the leader caches with a first sequence that is not the next one.
        ``ProducerAppendInfo.checkSequence`` must answer it OUT_OF_ORDER_SEQUENCE_NUMBER (or find it a duplicate
        of a cached batch) and never append it.  The batch re-sends the producer's last two records in the log
        at that epoch as one batch -- a pair no single-record batch of the client was stamped with -- under the
        first sequence ``forged``: :data:`FORGED_RESTART`, 0 (a restart of the epoch's sequences; not offered
        when 0 is the next sequence, after the top), :data:`FORGED_SKIP`, the next sequence but one (a
        skipped batch), or :data:`FORGED_NEW_EPOCH`, the next sequence under the next epoch (a bump that kept
        the partition's sequences: KAFKA-12152's client; ``checkSequence`` wants 0 from a new epoch).  Offered
        once the leader caches a batch of the producer id and the log holds two of its records at the cached
        epoch.
        """
        leader = s.partitions[q]
        entry = leader.entry(producer_id)
        if entry is None or not entry.batches:  # no branch: every idempotence entry caches the batch it appended
            return None
        records = tuple(
            r
            for e in leader.log
            if e.producer_id == producer_id and e.producer_epoch == entry.producer_epoch
            for r in e.records
        )[-2:]
        if len(records) < 2:
            return None
        space = self.flags.sequence_space
        expected = next_sequence(entry.last_seq, 1, space)
        epoch = entry.producer_epoch
        if forged == FORGED_NEW_EPOCH:
            first, epoch = expected, epoch + 1
        else:
            first = 0 if forged == FORGED_RESTART else next_sequence(expected, 1, space)
        if first == 0 and (forged == FORGED_NEW_EPOCH or first == expected):
            return None
        owner = next((i for i, p in enumerate(s.producers) if p.producer_id == producer_id), 0)
        return ProduceRequest(owner, -1, q, producer_id, epoch, first, records)

    def _forged_produce(  # no mutate: fault injection (the misbehaving client's request handed to _receive)
        self, s: SystemState, q: int, producer_id: int, forged: int
    ) -> tuple[SystemState, tuple[str, ...]] | None:
        """A misbehaving client's batch (:meth:`_forged_request`) reaches partition ``q``'s leader at once.

        It goes through the leader's produce handling like any request and is judged by the same properties
        (``produce_answer_per_kafka``, ``no_duplicate_append``); its answer is read by no client (correlation
        id -1: :meth:`_receive` sends none), so the healthy producer is not disturbed.
        """
        request = self._forged_request(s, q, producer_id, forged)
        if request is None:  # no branch: replay/minimise only (actions() offers it under the same test)
            return None
        env = net.Envelope(f"p{request.producer}", BROKER, -1, request)
        result = self._receive(s._replace(network=(*s.network, env)), env)
        assert result is not None  # the envelope was just added
        state, events = result
        refused = any(e == f"error:{Errors.OUT_OF_ORDER_SEQUENCE_NUMBER}" for e in events)
        return state, (*events, "forged_sequence_refused") if refused else events

    def _restart_producer(self, s: SystemState, i: int) -> tuple[SystemState, tuple[str, ...]] | None:
        p = prod.restart(s.producers[i])
        ghost = s.ghost._replace(refused=tuple(r for r in s.ghost.refused if r[0] != i))
        return s._replace(producers=_replace_at(s.producers, i, p), ghost=ghost), ("producer_restart",)

    def fault_kinds(self) -> tuple[str, ...]:
        """The fault kinds with a budget above zero, in :data:`FAULT_KINDS` order (:meth:`FaultBudget.kinds`)."""
        return self.config.faults.kinds()

    def fault_kind(self, action: Action) -> str | None:
        """The fault kind ``action`` is charged to (:data:`FAULT_OF_ACTION`), ``None`` if not a fault."""
        return FAULT_OF_ACTION.get(action.kind)

    # -- codec and display ----------------------------------------------------------------------

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """``{"kind": ..., <arg>: <value>, ...}``."""
        return codec.action_to_json(action, ACTION_ARGS)

    def action_from_json(self, data: Any) -> Action:
        """Decode an action; raises :class:`ModelError` on malformed input."""
        action = codec.action_from_json(data, ACTION_ARGS)
        if not self._valid_args(action):  # input: a malformed trace (keos replay)
            raise ModelError(f"action {action.kind}: arguments out of range for this scenario: {data!r:.120}")
        return action

    def format_action(self, action: Action) -> str:
        """``SendProduce(producer=0, partition=1)``, messages shown in Kafka terms."""
        names = ACTION_ARGS.get(action.kind, ())
        parts = [f"{n}={format_value(v)}" for n, v in zip(names, action.args)]
        return f"{action.kind}({', '.join(parts)})"

    def state_to_json(self, state: SystemState) -> dict[str, Any]:
        """A JSON view of the state."""
        out = codec.to_json(state)
        assert isinstance(out, dict)
        return out

    def describe(self) -> dict[str, Any]:
        """Scenario, variant and bounds, recorded in traces."""
        cfg = self.config
        return {
            "model": self.name,
            **self._scenario_info,
            "variant": self.variant.name,
            "flags": self.flags.to_json(),
            "topology": {f.name: getattr(cfg.topology, f.name) for f in fields(cfg.topology)},
            "producer": {f.name: getattr(self.producer_config, f.name) for f in fields(self.producer_config)},
            "faults": cfg.faults.to_json(),
        }


#: The handler of each action kind, called as ``handler(system, state, *args)``.  At module level, not in the
#: class body, so that mypyc can compile the class (``--kernel compiled``: a native class has no names of its
#: methods in its body).  Not mutated: a missing entry only makes step() refuse an action actions() lists, which the
#: engine reports as a model error; it is plumbing, not a rule of Kafka's.
_HANDLERS: dict[str, Callable[..., tuple[SystemState, tuple[str, ...]] | None]] = {  # no mutate: dispatch
    "InitProducerId": KafkaSystem._init_producer_id,
    "Send": KafkaSystem._send,
    "SendProduce": KafkaSystem._send_produce,
    "BumpEpoch": KafkaSystem._bump_epoch,
    "ResolveSequence": KafkaSystem._resolve_sequence,
    "Deliver": KafkaSystem._deliver,
    "ReplicatePartition": KafkaSystem._replicate,
    "ExpireProducerState": KafkaSystem._expire_producer_state,
    "DeleteRecords": KafkaSystem._delete_records,
    "Fetch": KafkaSystem._fetch,
    "DropMessage": KafkaSystem._drop,
    "DuplicateMessage": KafkaSystem._duplicate,
    "ReorderMessage": KafkaSystem._reorder,
    "RequestTimeout": KafkaSystem._request_timeout,
    "ExpireBatch": KafkaSystem._expire_batch,
    "RestartLeader": KafkaSystem._restart_leader,
    "RestartProducer": KafkaSystem._restart_producer,
    "NotLeaderOrFollower": KafkaSystem._not_leader,
    "ExpireDelayedProduce": KafkaSystem._expire_delayed_produce,
    "MoveLeader": KafkaSystem._move_leader,
    "ForgedProduce": KafkaSystem._forged_produce,
}


def _orphan_requests(s: SystemState, i: int, p: prod.Producer) -> int:
    """:func:`model.clients.producer.orphan_requests` of producer ``i``: read off the network and the leaders'
    produce purgatories (an acks=all answer parked there is a request still in flight)."""
    parked = ((r.connection, r) for leader in s.partitions for r in leader.pending)
    return prod.orphan_requests(p, i, [*((env.connection, env.body) for env in s.network), *parked])


def _misdirectable(env: net.Envelope) -> bool:
    """Whether ``env`` can reach a broker that does not lead its partition: a produce request."""
    return isinstance(env.body, ProduceRequest)


def _producer_idle(s: SystemState, q: int, producer_id: int) -> bool:
    """Whether ``producer_id`` has nothing outstanding on partition ``q``: the precondition of its expiry.

    ``producer.id.expiration.ms`` (a day by default) is far above ``delivery.timeout.ms`` (two minutes), so
    when a leader expires a producer id every batch the producer sent to the partition before it fell idle
    has long been acknowledged or failed: no client batch of the partition is sequenced under that id and
    no request of it is on the wire (``ProducerStateManager.removeExpiredProducers``; the model has no clock).
    """
    for env in s.network:
        body = env.body
        if isinstance(body, ProduceRequest) and body.producer_id == producer_id and body.partition == q:
            return False
    for p in s.producers:
        if p.producer_id == producer_id and any(b.partition == q and b.has_sequence for b in p.batches):
            return False
    return True


def _producing_elsewhere(s: SystemState, q: int, producer_id: int) -> bool:
    """Whether ``producer_id`` has a produce request in flight to another partition than ``q``.

    Expiry is per partition: each partition's ``ProducerStateManager.removeExpiredProducers`` compares
    ``producer.id.expiration.ms`` with the entry's own ``lastTimestamp``, which only that partition's appends
    refresh (apache/kafka trunk ``1eb7644349cb``,
    ``storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java``), so a leader may
    forget a producer that is still writing to another partition -- its next batch here is then an unknown
    producer's while its other partitions' sequences go on (KIP-360)."""
    return any(
        isinstance(env.body, ProduceRequest) and env.body.producer_id == producer_id and env.body.partition != q
        for env in s.network
    )


def format_value(value: Any) -> str:  # no mutate: trace format (display of action arguments), not a rule
    """Short Kafka-flavoured rendering of action arguments."""
    if isinstance(value, net.Envelope):
        return f"{value.src}->{value.dst}#{value.connection}:{format_value(value.body)}"
    if isinstance(value, ProduceRequest):
        recs = ",".join(prod.record_label(r) for r in value.records)
        return (
            f"Produce(partition={value.partition}, pid={value.producer_id}, epoch={value.producer_epoch}, "
            f"seq={value.base_sequence}, [{recs}])"
        )
    if isinstance(value, ProduceResponse):
        return (
            f"ProduceResponse(partition={value.partition}, epoch={value.producer_epoch}, seq={value.base_sequence}, "
            f"{value.error}, offset={value.base_offset})"
        )
    return repr(value)


def _judge_response(  # no mutate: the judge of produce_answer_per_kafka's answers (a property), not a rule
    ghost: Ghost, before: part.PartitionLeader, request: ProduceRequest, answer: ProduceResponse | None, events: Any
) -> Ghost:
    """``ghost`` with a ``wrong_answers`` verdict if the ProduceResponse ``answer`` does not say what the leader did.

    :func:`unexpected_answer` judges the leader's decision (its events and log) against Kafka's; this judges
    the response the client reads against that decision: an ``error:<name>`` is answered with that error and
    ``INVALID_OFFSET`` (-1) (``ProduceResponse.PartitionResponse(Errors)``), an append with NONE and the
    appended batch's offset (a duplicate's NONE and cached offset: ``acknowledged_offset_in_log``) -- Kafka
    trunk, October 2024.  No answer (acks=0): nothing to judge.
    """
    if answer is None:
        return ghost
    error = next((e[len("error:") :] for e in events if e.startswith("error:")), Errors.NONE)
    if error != Errors.NONE:
        offset = -1
    elif "append" in events:
        offset = len(before.log)
    else:  # a duplicate: its offset is judged by misplaced_ack
        offset = answer.base_offset
    if (answer.error, answer.base_offset) == (error, offset):  # no branch: the other side records a defect
        return ghost
    recs = ",".join(prod.record_label(r) for r in request.records)
    return _noted(
        ghost,
        "wrong_answers",
        f"partition {request.partition}: batch {recs} (pid {request.producer_id}, epoch {request.producer_epoch}, "
        f"seq {request.base_sequence}) was answered {answer.error} at offset {answer.base_offset}; the leader's "
        f"answer is {error} at offset {offset}",
    )
