"""Configuration, ghost history and state records of the transactions system (:mod:`model.systems.transactions`).

Kept apart so the system module holds only the step logic.  ``TXN_FAULT_KINDS``
orders ``TxnSystemState.faults_used``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from keos.model import codec
from keos.model import network as net
from keos.model.clients import consumer_coordinator as cc
from keos.model.clients import transactional_producer as tp
from keos.model.clients.consumer import ReadCommittedFetcher
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.log import partition as part
from keos.model.security.records import SecurityConfig, SecurityGhost

__all__ = [
    "APPEND_LEADER_ERRORS",
    "APPEND_LEADER_MOVES",
    "APPEND_TOO_LARGE",
    "MARKER_ERRORS_AFTER_APPEND",
    "MARKER_LEADER_ERRORS",
    "PRODUCE_ERRORS_AFTER_APPEND",
    "PRODUCE_LEADER_ERRORS",
    "TXN_FAULT_KINDS",
    "AppInstance",
    "ClientTxn",
    "Completion",
    "EosConfig",
    "Fence",
    "PendingCompleteTxn",
    "TxnConfig",
    "TxnFaultBudget",
    "TxnGhost",
    "TxnSystemState",
    "TxnTopology",
]

TXN_FAULT_KINDS = (  # no mutate: the order of the state's faults_used counters (its encoding), not a Kafka rule
    "drop",
    "request_timeout",
    "batch_expiry",
    "txn_timeout",
    "append_failure",
    "coordinator_failover",
    "txn_id_expiry",
    "marker_failure",  # a WriteTxnMarkers append fails with a retriable error (MarkerNotLeader, ...)
    # adversary actions (model.security.adversary), budgeted like faults
    "forge_produce",
    "forge_request",
    "hijack_init",
    "forge_marker",
    "endless_txn",
    "revoke_acl",  # an operator removes an ACL binding mid-run (model.security.operator)
    "stale_request",  # a stale client's request to the transaction coordinator (model.security.adversary)
    "leader_election",  # a data partition's leadership moves to an in-sync follower (model.log.leader_election)
    "produce_error",  # a data partition's leader answers a transactional Produce with an error (PRODUCE_LEADER_ERRORS)
    "rebalance",  # last: model.systems.eos reads it as the last kind
)


@dataclass(frozen=True)
class TxnTopology:
    """Producers (client instances), partitions and the application's work.

    ``producer_id_expiration``: partition leaders expire idle producer state
    (``producer.id.expiration.ms``, the ``ExpireProducerState`` timeout action).
    ``transactional_id_expiration``: the coordinator expires idle transactional
    ids (``transactional.id.expiration.ms``) as a timeout action instead of the
    budgeted ``txn_id_expiry`` fault.
    ``pending_transitions``: the coordinator's transaction-log appends complete in
    steps of their own (``pendingState`` between ``prepareTransitionTo`` and the
    append's callback, CompleteCommit/CompleteAbort pending while markers are
    written), as Kafka's ``TransactionStateManager.appendTransactionToLog`` does;
    by default a handler prepares, appends and completes in one step.
    ``max_in_flight``: each producer's ``max.in.flight.requests.per.connection`` (Kafka's default is 5; 1 keeps
    the state space small): above 1 a partition may have several sequenced batches outstanding, so a failed or
    expired batch has later batches behind it (``TxnPartitionEntry.adjustSequencesDueToFailedBatch``,
    ``maybeResolveSequences``' ``hasInflightBatches``).
    ``loading_window`` (with ``pending_transitions``): a coordinator failover opens Kafka's loading window -- the
    new coordinator answers COORDINATOR_LOAD_IN_PROGRESS until ``LoadTransactions`` (a protocol step) completes
    the load, while the old instance answers its requests in flight NOT_COORDINATOR and its appends in flight
    still call back (``TransactionStateManager.loadTransactionsForTxnTopicPartition`` /
    ``removeTransactionsForTxnTopicPartition``).
    ``empty_commits``: the application may also commit a transaction right after ``beginTransaction``, before it
    sends any of its records (an empty transaction, KAFKA-18401: the records of that transaction are never sent).
    ``send_rejections``: the application's ``send()`` of a record may fail synchronously in
    ``KafkaProducer.doSend`` with an ``ApiException`` -- a record above ``max.request.size``
    (``RecordTooLargeException``), a topic the producer may not write (``TopicAuthorizationException`` from the
    metadata wait), ``max.block.ms`` spent waiting for metadata or buffer space (``TimeoutException``) -- returned as
    a failed future (``FutureFailure``) the application need not read: the record never enters the accumulator.
    ``verification_round_trip``: a partition leader's KIP-890 verification is a request to the transaction
    coordinator and a callback of its own (``ReplicaManager.handleProduceAppend``), not part of the Produce
    step; the callback appends only while the partition's verification guard holds.
    ``coordinator_reload`` (with ``loading_window``): the ``coordinator_failover`` budget may also be spent on an
    in-place reload -- the broker that leads ``__transaction_state`` is elected again at a new leader epoch without
    resigning in between (``TransactionCoordinator.onElection`` with no ``onResignation``), so the coordinator
    reloads the partition over the state it still holds in memory (``CoordinatorReloaded``).
    ``read_committed_consumer``: each data partition has a read_committed consumer polling it from offset 0
    (:class:`~model.clients.consumer.ReadCommittedFetcher`), whose Fetch the leader answers at once (``Fetch``)
    or parks in the fetch purgatory until the LSO passes its offset (``FetchWait``, then ``DelayedFetchComplete``:
    ``DelayedFetch.onComplete`` reads the log again at completion, :mod:`model.log.fetch`).
    """

    producers: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    partitions: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    transactions_per_producer: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    records_per_transaction: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    shared_transactional_id: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    voluntary_abort: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    producer_id_expiration: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    transactional_id_expiration: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    pending_transitions: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    verification_round_trip: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    loading_window: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    empty_commits: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    send_rejections: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    max_in_flight: int = 1  # no mutate: a scenario's default (what it explores), not a Kafka rule
    coordinator_reload: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    read_committed_consumer: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: the read_committed consumer's ``max.partition.fetch.bytes`` in batches (0: a response reaches the LSO)
    consumer_fetch_batches: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule


@dataclass(frozen=True)
class TxnFaultBudget:
    """Fault and timeout budgets, per kind and in total."""

    drop: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    request_timeout: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    batch_expiry: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    txn_timeout: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    append_failure: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    coordinator_failover: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    txn_id_expiry: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    marker_failure: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    total: int = 2  # no mutate: a scenario's default (what it explores), not a Kafka rule
    rebalance: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    forge_produce: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    forge_request: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    hijack_init: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    forge_marker: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    endless_txn: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    revoke_acl: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    stale_request: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    leader_election: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    produce_error: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: The ``__transaction_state`` leader's errors an ``append_failure`` may draw (with ``pending_transitions``; see
    #: :data:`APPEND_LEADER_ERRORS`): by default the shrunk ISR alone.
    append_errors: tuple[str, ...] = ("NOT_ENOUGH_REPLICAS",)  # no mutate: a scenario's default (what it explores)
    #: The data partition leader's errors a ``marker_failure`` may answer a WriteTxnMarkers with (see
    #: :data:`MARKER_LEADER_ERRORS`): by default the moved leadership and the ISR shrunk after the append.
    marker_errors: tuple[str, ...] = (  # no mutate: a scenario's default (what it explores)
        "NOT_LEADER_OR_FOLLOWER",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    )
    #: The data partition leader's errors a ``produce_error`` may answer a transactional Produce with (see
    #: :data:`PRODUCE_LEADER_ERRORS`): by default every one.
    produce_errors: tuple[str, ...] = (  # no mutate: a scenario's default (what it explores)
        "NOT_LEADER_OR_FOLLOWER",
        "NOT_ENOUGH_REPLICAS",
        "KAFKA_STORAGE_ERROR",
        "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    )

    def limits(self) -> tuple[int, ...]:
        """Per-kind limits in :data:`TXN_FAULT_KINDS` order."""
        return tuple(getattr(self, k) for k in TXN_FAULT_KINDS)

    def to_json(self) -> dict[str, Any]:
        """The budget as a JSON object (the error lists only when not the default)."""
        lists = ("append_errors", "marker_errors", "produce_errors")
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in lists}
        if self.append_errors != TxnFaultBudget.append_errors:  # no mutate: a report's shape, not a rule
            out["append_errors"] = list(self.append_errors)
        if self.marker_errors != TxnFaultBudget.marker_errors:  # no mutate: a report's shape, not a rule
            out["marker_errors"] = list(self.marker_errors)
        if self.produce_errors != TxnFaultBudget.produce_errors:  # no mutate: a report's shape, not a rule
            out["produce_errors"] = list(self.produce_errors)
        return out


#: The errors ``ReplicaManager.appendRecords`` (acks=-1) can answer an append to ``__transaction_state`` with, which
#: ``TransactionStateManager.appendTransactionToLog`` translates (apache/kafka ``core/src/main/scala/kafka/coordinator/
#: transaction/TransactionStateManager.scala`` @1eb7644349cb): an unknown partition, a shrunk ISR before or after the
#: local append, a replication timeout; the leadership or the leader's log directory lost (the coordinator moves:
#: :data:`APPEND_LEADER_MOVES`); a record (set) above ``max.message.bytes`` (only a record carrying the transaction's
#: partitions can grow so: Empty, CompleteCommit/CompleteAbort and a tombstone are smaller than the Prepare* record
#: the log already took).
APPEND_LEADER_ERRORS = (  # no mutate: the scenario format's vocabulary, not a rule
    "UNKNOWN_TOPIC_OR_PARTITION",
    "NOT_ENOUGH_REPLICAS",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "REQUEST_TIMED_OUT",
    "NOT_LEADER_OR_FOLLOWER",
    "KAFKA_STORAGE_ERROR",
    "MESSAGE_TOO_LARGE",
    "RECORD_LIST_TOO_LARGE",
)
#: Leader errors that mean the ``__transaction_state`` leadership moves: the broker is no longer the leader, or its log
#: directory failed and the replica went offline (``ReplicaManager.handleLogDirFailure``), so the partition emigrates.
APPEND_LEADER_MOVES = ("NOT_LEADER_OR_FOLLOWER", "KAFKA_STORAGE_ERROR")  # no mutate: see APPEND_LEADER_ERRORS
#: Leader errors of a record above ``max.message.bytes`` (see :data:`APPEND_LEADER_ERRORS`).
APPEND_TOO_LARGE = ("MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE")  # no mutate: see APPEND_LEADER_ERRORS

#: The errors a data partition's leader answers a WriteTxnMarkers entry with when the marker's append fails, all of
#: them retriable for the transaction coordinator (``TransactionMarkerRequestCompletionHandler.onComplete``, "these
#: are retriable errors", apache/kafka ``core/src/main/scala/kafka/coordinator/transaction/`` @1eb7644349cb;
#: ``KafkaApis.handleWriteTxnMarkersRequest`` -> ``ReplicaManager.appendRecords`` with acks=-1): the partition is not
#: (yet) in the broker's metadata, the broker is no longer its leader, the ISR is below ``min.insync.replicas``, the
#: leader's log directory failed (KAFKA_STORAGE_ERROR, KAFKA-9749) -- nothing is appended -- or the ISR shrank after the
#: local append, or the replication wait timed out (``DelayedProduce``) -- the control batch stands
#: (:data:`MARKER_ERRORS_AFTER_APPEND`).  A scenario's ``[faults] marker_errors`` names the ones its
#: ``marker_failure`` fault draws.
MARKER_LEADER_ERRORS = (  # no mutate: the scenario format's vocabulary, not a rule
    "UNKNOWN_TOPIC_OR_PARTITION",
    "NOT_LEADER_OR_FOLLOWER",
    "NOT_ENOUGH_REPLICAS",
    "KAFKA_STORAGE_ERROR",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "REQUEST_TIMED_OUT",
)
#: Marker errors answered after the leader appended the control batch locally (see :data:`MARKER_LEADER_ERRORS`).
MARKER_ERRORS_AFTER_APPEND = ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", "REQUEST_TIMED_OUT")  # no mutate: see above

#: The errors a data partition's leader answers a transactional Produce (acks=-1) with besides the sequence and
#: KIP-890 verification answers of :func:`model.log.partition.handle_txn_produce` (apache/kafka @1eb7644349cb,
#: ``ReplicaManager.appendRecords`` / ``handleProduceAppend``): refused *before* the append -- the broker is not
#: (any more) the leader or its log directory is offline (``getPartitionOrException``: NOT_LEADER_OR_FOLLOWER,
#: KAFKA_STORAGE_ERROR), the ISR is below ``min.insync.replicas`` (``Partition.appendRecordsToLeader``:
#: NOT_ENOUGH_REPLICAS) -- nothing written; or answered *after* the local append by the produce purgatory
#: (``DelayedProduce``: REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND) -- the batch is in the log
#: (:data:`PRODUCE_ERRORS_AFTER_APPEND`).  Every one is a ``RetriableException``: the client retries the batch while
#: ``retries`` and ``delivery.timeout.ms`` allow (``Sender.canRetry``, ``TransactionManager.canRetry``) and otherwise
#: fails it, which makes the transaction abortable (``TransactionManager.handleFailedBatch``).
PRODUCE_LEADER_ERRORS = (  # no mutate: the scenario format's vocabulary, not a rule
    "NOT_LEADER_OR_FOLLOWER",
    "NOT_ENOUGH_REPLICAS",
    "KAFKA_STORAGE_ERROR",
    "REQUEST_TIMED_OUT",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
)
#: Produce errors answered after the leader appended the batch (see :data:`PRODUCE_LEADER_ERRORS`).
PRODUCE_ERRORS_AFTER_APPEND = ("REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS_AFTER_APPEND")  # no mutate: see above


@dataclass(frozen=True)
class EosConfig:
    """A consume-transform-produce application (:mod:`model.systems.eos`).

    ``input_records`` records sit in one input partition; the producers of
    :class:`TxnTopology` are the application instances (one consumer group
    member and one transactional.id each); every transaction processes one
    input record into one output record on output partition 0 (none for a
    filtered record: ``filtered_records``).
    """

    input_records: int = 2  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: "" (default): the group's rebalances are the abstract ``Rebalance`` fault; otherwise the
    #: instances run the classic rebalance protocol (JoinGroup/SyncGroup/Heartbeat) with this
    #: assignor (range, roundrobin, sticky: eager; cooperative-sticky: KIP-429; or module:function).
    assignor: str = ""  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: protocol mode: the first ``late_instances`` instances start after the group formed
    #: (a join that, under range/roundrobin, moves the input partition to the newcomer).
    late_instances: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: protocol mode: which group faults the ``rebalance`` budget buys -- an expired session while the
    #: instance keeps working (a zombie), and/or an instance closing its consumer (LeaveGroup)
    session_timeouts: bool = True  # no mutate: a scenario's default (what it explores), not a Kafka rule
    leaves: bool = True  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: the transform drops the first ``filtered_records`` input records (a filter): their transactions carry
    #: the consumer offsets only -- sendOffsetsToTransaction with no record sent (TV2: the TxnOffsetCommit alone
    #: starts the transaction, ``transactionStarted``; TV0/TV1: AddOffsetsToTxn adds ``__consumer_offsets``)
    filtered_records: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: a *mixed* application (KAFKA-5247): besides sendOffsetsToTransaction, an instance's consumer also commits its
    #: position with a plain OffsetCommit (``KafkaConsumer.commitAsync``) between transactions, at most this many
    #: times in a run; the request may reach the group coordinator late, after the next transaction staged its
    #: offset -- Kafka then keeps the later record in ``__consumer_offsets`` order (the plain one), not the
    #: transaction's
    plain_commits: int = 0  # no mutate: a scenario's default (what it explores), not a Kafka rule
    #: the group coordinator's KIP-890 verification of a TxnOffsetCommit is Kafka's round trip -- the request held
    #: back with a verification guard on ``__consumer_offsets``, the transaction coordinator's verdict, then the
    #: callback that checks member and generation and appends (``GroupCoordinator.handleTxnCommitOffsets``'
    #: ``postVerificationCallback``, KAFKA-15784) -- not one step: a marker, an epoch bump or a rebalance can land
    #: between the halves
    txn_offset_commit_round_trip: bool = False  # no mutate: a scenario's default (what it explores), not a Kafka rule


@dataclass(frozen=True)
class TxnConfig:
    """Everything that parameterises the transactions model."""

    topology: TxnTopology = field(default_factory=TxnTopology)
    faults: TxnFaultBudget = field(default_factory=TxnFaultBudget)
    retries: int = 2  # no mutate: a scenario's default (what it explores), not a Kafka rule
    max_producer_epoch: int = tc.SHORT_MAX_VALUE  # the producer epoch is a 16-bit field (RecordBatch)
    eos: EosConfig | None = None
    security: SecurityConfig | None = None


@codec.record
class ClientTxn(NamedTuple):
    """A transaction outcome the application was told (commitTransaction/abortTransaction returned)."""

    producer: int
    txn: int
    committed: bool


@codec.record
class Fence(NamedTuple):
    """The coordinator fenced (pid, epoch): log end offsets at that instant."""

    producer_id: int
    producer_epoch: int
    log_ends: tuple[int, ...]


@codec.record
class Completion(NamedTuple):
    """The coordinator wrote CompleteCommit/CompleteAbort for a transaction."""

    transactional_id: int
    producer_id: int
    producer_epoch: int
    committed: bool
    partitions: tuple[int, ...]


@codec.record
class PendingCompleteTxn(NamedTuple):
    """An entry of the coordinator's ``transactionsWithPendingMarkers`` (``TransactionMarkerChannelManager``).

    ``addTxnMarkersToSend`` puts it under the transactional id when a PrepareCommit/PrepareAbort's markers go
    out (at each coordinator epoch: the EndTxn's callback and the loading of a reloaded Prepare*);
    ``maybeWriteTxnCompletion`` writes CompleteCommit/CompleteAbort only for a transactional id that still has
    one, and removes it.  A marker answered under an older coordinator epoch (the coordinator moved away and
    back to this broker while the marker was out) cancels the markers of *its* transaction:
    ``removeMarkersForTxn(pendingCompleteTxn)`` removes the entry only if it is the one that marker was sent
    for (KAFKA-16352, PR #15524, Kafka 3.8; ``TransactionMarkerChannelManager.scala``
    ``transactionsWithPendingMarkers.remove(transactionalId, pendingCompleteTxn)``).  Before the fix it removed
    whatever entry the transactional id held -- the reloaded transaction's own -- and the transaction stayed
    in PrepareCommit/PrepareAbort with every marker written.
    """

    transactional_id: int
    coordinator_epoch: int
    producer_id: int
    producer_epoch: int


@codec.record
class TxnGhost(NamedTuple):
    """History kept only for checking."""

    outcomes: tuple[ClientTxn, ...] = ()
    fences: tuple[Fence, ...] = ()
    completions: tuple[Completion, ...] = ()
    bad_transitions: tuple[str, ...] = ()
    committed_offset_high: int = -1
    # consume-transform-produce ownership (model.systems.eos), kept small so that it splits few states
    # of a correct run: the instance that last started as the input partition's owner (a successful
    # OffsetFetch as its rightful owner) and, in protocol mode, the member the last completed assignment
    # gave the partition; the rest is recorded only when something is wrong: a start while a
    # transactional offset is pending or from an offset other than the group's committed one, and a
    # transaction of a superseded owner reaching PrepareCommit (a zombie commit).
    start_owner: int = -1
    assigned_member: str = ""
    unstable_starts: tuple[str, ...] = ()
    zombie_commits: tuple[str, ...] = ()
    # TxnOffsetCommits the group coordinator answered otherwise than ClassicGroup.validateOffsetCommit's
    # member and generation checks (model.systems.commit_fencing)
    misfenced: tuple[str, ...] = ()
    # a transaction the client ended without EndTxn (transactionStarted false) while the coordinator held
    # it Ongoing at the client's epoch: nobody ends it before transaction.timeout.ms (model.systems.eos)
    local_ends_open: tuple[str, ...] = ()
    # failures of a healthy producer that Kafka itself gives, recorded at the coordinator's answer (only when it
    # happens): ``rotating_pid_mapping:<producer>:<pid>`` -- an EndTxn naming the nextProducerId a TV2 end just
    # handed out, answered INVALID_PRODUCER_ID_MAPPING while the rotating completion is still pending
    kafka_known_failures: tuple[str, ...] = ()


@codec.record
class AppInstance(NamedTuple):
    """A consume-transform-produce instance's consumer view (:mod:`model.systems.eos`).

    ``generation``/``owns``: the group metadata the application holds (updated
    at SyncGroup); ``position``: the consumer position (-1: to be fetched from
    the committed offset); ``processing``: the input offset of the open
    transaction (-1: none); ``offsets``: where ``sendOffsetsToTransaction``
    stands (see :data:`model.systems.eos.OffsetsPhase`); ``offsets_generation``:
    the generation captured by ``sendOffsetsToTransaction`` (retries resend it).
    """

    generation: int = 0
    owns: bool = False
    position: int = -1
    processing: int = -1
    offsets: str = ""
    offsets_generation: int = -1
    superseded: bool = False  # ghost: another instance started as the owner since this one's last start
    txn_superseded: bool = False  # ghost: the open transaction's record was processed by a superseded owner
    offsets_member: str = ""  # the member id captured by sendOffsetsToTransaction (protocol mode)
    #: the incarnation of the producer's connection to the group coordinator (a reset or a timed-out
    #: TxnOffsetCommit closes it: answers on older connections are never read)
    gc_connection: int = 0
    #: plain OffsetCommits (commitAsync) the instance's consumer sent (``EosConfig.plain_commits``)
    plain_commits: int = 0


@codec.record
class TxnSystemState(NamedTuple):
    """The whole transactions system at one instant."""

    clients: tuple[tp.TxnClient, ...]
    coordinator: tuple[tc.TransactionMetadata | None, ...]
    txn_log: tuple[TransactionLogValue | None, ...]
    coordinator_epoch: int
    partitions: tuple[part.PartitionLeader, ...]
    network: tuple[net.Envelope, ...]
    next_producer_id: int
    faults_used: tuple[int, ...]
    ghost: TxnGhost
    group: gc.GroupMetadata | None = None
    apps: tuple[AppInstance, ...] = ()
    #: protocol mode of model.systems.eos: the classic group's membership and each instance's consumer
    members: cg.ClassicGroup | None = None
    consumers: tuple[cc.Consumer, ...] = ()
    security: SecurityGhost = SecurityGhost()
    #: the current coordinator is still loading ``__transaction_state`` (``loadingPartitions``; ``loading_window``)
    loading: bool = False
    #: the coordinator's ``transactionsWithPendingMarkers`` (:class:`PendingCompleteTxn`), sorted by transactional id
    pending_markers: tuple[PendingCompleteTxn, ...] = ()
    #: the load of an in-place reload threw (weakened variant ``no_kafka_9307_fix`` only): the partition never leaves
    #: ``loadingPartitions``
    load_failed: bool = False
    #: ``[transactions] read_committed_consumer``: each data partition's read_committed consumer (else empty)
    fetchers: tuple[ReadCommittedFetcher, ...] = ()
