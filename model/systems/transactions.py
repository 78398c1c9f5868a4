"""The composed transactions system: producers, the transaction coordinator, partition leaders.

KIP-98 §6-8 as a :class:`model.interface.Model`, built from the component
modules (``transactional_producer``, ``txn_coordinator``, ``transaction_log``,
``txn_markers``, ``partition``, ``network``).  Separate from
:mod:`model.systems.idempotence` so the idempotence model stays small and fast.

Actors and channels: client ``p<i>`` talks to the transaction coordinator
``tc`` (connection = the client's coordinator-connection incarnation) and to
the broker ``b0`` leading every data partition; ``tc`` sends WriteTxnMarkers
to ``b0`` on connection = coordinator epoch.  Channels are FIFO
(:mod:`model.network`); a request whose client timed out stays in flight and
may arrive late -- the KIP-890 scenarios A/B/C.

Abstractions (documented simplifications):

* by default the transaction-log append is atomic with the coordinator step (the log is
  replicated with acks=-1) and ``AppendFailure`` delivers a request whose append fails; with
  ``pending_transitions`` (a scenario's ``[transactions]``) a handler only prepares the transition
  (``pendingState``) and sends the append to the log partition ``txnlog`` as a message: its ``Deliver``
  is the replicated append and its callback (``completeTransitionTo``, then the response, the markers
  of an EndTxn, the CompleteCommit/CompleteAbort append once every marker is written), its
  ``AppendFailure`` the failed append (pending state reset and the error answered, KAFKA-5351; a failed
  complete append is retried, KAFKA-5416), and a ``CoordinatorFailover`` loses the appends in flight
  (not replicated: the new leader's log never had them) and re-sends the markers of every Prepare* entry
  it loads with CompleteCommit/CompleteAbort pending; a ``CoordinatorFailoverReplicated`` finds them
  replicated (the new coordinator loads them, their callbacks at the old instance answer NOT_COORDINATOR),
  and ``AppendNotLeader`` is the leadership moving with one of them in flight whose callback runs before
  the emigration (NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR under the same coordinator epoch: pending state
  reset, a CompleteCommit/CompleteAbort append skipped, not retried), then the failover;
* the marker response is handled in the step that writes the marker;
* KIP-890 part 1 verification and the TV2 implicit AddPartitionsToTxn are by default
  evaluated against the coordinator's metadata in the step that appends the
  batch; with ``verification_round_trip`` (a scenario's ``[transactions]``) they are Kafka's round trip
  (``ReplicaManager.handleProduceAppend``, ``AddPartitionsToTxnManager``): the leader creates the producer
  id's ``VerificationStateEntry`` and sends a :class:`VerifyPartitionRequest` to ``tc``, the coordinator
  answers in a step of its own (under TV2 its add-partitions append may fail: ``AppendFailure``), and the
  answer's callback appends only while the partition still holds the guard (:func:`part.append_verified_txn_batch`)
  -- so a marker, a timeout abort or a retry can land between the halves (KAFKA-14884);
* the coordinator's timeout abort and transactional-id expiry are environment
  actions with budgets (no clocks);
* with ``producer_id_expiration``, a partition leader's ``producer.id.expiration.ms``
  is the timeout action ``ExpireProducerState`` (a protocol step, not a
  fault; :mod:`model.log.producer_expiry`); with ``transactional_id_expiration``
  the coordinator's ``transactional.id.expiration.ms`` (``ExpireTransactionalId``,
  ``TransactionStateManager`` removing an idle id in Empty, CompleteCommit or
  CompleteAbort with a tombstone) is a timeout action too;
* consumers are the pure views of :mod:`model.clients.consumer`.
* with a ``[security]`` scenario, Produce and coordinator requests pass the
  authorization gate of :mod:`model.security.gate` first (KIP-98 §9); the
  adversary's actions (:mod:`model.security.adversary`) are fault kinds.

Application: producer ``i`` runs ``transactions_per_producer`` transactions
of ``records_per_transaction`` records; record ``n`` goes to partition ``n mod
partitions``.  It commits each transaction (or, with ``voluntary_abort``,
may abort it) and aborts after an abortable error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, ClassVar

from keos.model import codec
from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.clients.consumer import ReadCommittedFetcher, filter_fetched
from keos.model.clients.producer_config import ProducerConfig
from keos.model.clients.txn_reactions import (
    invalid_client_transitions,
    unexpected_batch_failure_reaction,
    unexpected_reaction,
)
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.answer_table import Ask, append_callback_mismatch, table_mismatch
from keos.model.coordinator.transaction.response_errors import unexpected_error
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue, needs_markers
from keos.model.coordinator.transaction.transaction_state import TransactionState, is_valid_transition
from keos.model.coordinator.transaction.transit_table import log_transition_problems
from keos.model.interface import Action, ModelError, Property, Step
from keos.model.log import fetch as fetch_path
from keos.model.log import partition as part
from keos.model.log.leader_election import elect_follower
from keos.model.log.marker_answer_table import MarkerAsk, marker_table_mismatch
from keos.model.log.producer_expiry import expirable, expire_producer
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    VerifyPartitionRequest,
    VerifyPartitionResponse,
    WriteTxnMarkersRequest,
)
from keos.model.security import gate as authz
from keos.model.security.adversary import (
    ADVERSARY_ACTION_ARGS,
    ADVERSARY_FAULT_OF_ACTION,
    ADVERSARY_HANDLERS,
    adversary_actions,
    blocked_by_abandon,
)
from keos.model.security.witnesses import unmet_claims
from keos.model.systems.transactions_records import (
    APPEND_LEADER_MOVES,
    APPEND_TOO_LARGE,
    MARKER_ERRORS_AFTER_APPEND,
    PRODUCE_ERRORS_AFTER_APPEND,
    TXN_FAULT_KINDS,
    ClientTxn,
    Completion,
    Fence,
    PendingCompleteTxn,
    TxnConfig,
    TxnFaultBudget,
    TxnGhost,
    TxnSystemState,
    TxnTopology,
)
from keos.model.systems.txn_produce_judge import (
    late_ack_misread,
    needless_batch_retries,
    needless_verification,
    premature_batch_failure,
    resolution_misread,
    restamps_misread,
    unexpected_txn_answer,
    unexpected_verified_answer,
)
from keos.model.variants import Variant

__all__ = [
    "TXN_ACTION_ARGS",
    "TXN_FAULT_KINDS",
    "TransactionalSystem",
    "TxnConfig",
    "TxnFaultBudget",
    "TxnGhost",
    "TxnSystemState",
    "TxnTopology",
]

BROKER = "b0"
COORDINATOR = "tc"
#: The ``__transaction_state`` partition's leader: the destination of the coordinator's appends in flight.
TXN_LOG = "txnlog"
#: The connection of the partition leader's ``AddPartitionsToTxnManager`` to the coordinator (verification requests
#: and their answers): its own channel, apart from the coordinator's WriteTxnMarkers channel to the same broker, so a
#: marker sent after a verification was answered may still overtake the answer (Kafka runs the two on separate
#: network clients, and the verification's callback on a request-handler thread of its own).
VERIFICATION_CONNECTION = -1
TXN_ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: trace format (JSON keys, display)
    "InitTransactions": ("producer",),
    "BeginTransaction": ("producer",),
    "Send": ("producer",),
    "SendRejected": ("producer",),
    "CommitTransaction": ("producer",),
    "AbortTransaction": ("producer",),
    "SendTxnRequest": ("producer",),
    "SendProduce": ("producer", "partition"),
    "Deliver": ("message",),
    "DropMessage": ("message",),
    "RequestTimeout": ("producer",),
    "ExpireBatch": ("producer", "partition"),
    "TxnTimeout": ("transactional_id",),
    "AppendFailure": ("message",),
    "AppendError": ("message", "error"),
    "CoordinatorFailover": (),
    "CoordinatorFailoverReplicated": (),
    "CoordinatorReloaded": (),
    "AppendNotLeader": ("message",),
    "LoadTransactions": (),
    "ExpireTransactionalId": ("transactional_id",),
    "MarkerNotLeader": ("message",),
    "MarkerNotEnoughReplicasAfterAppend": ("message",),
    "MarkerError": ("message", "error"),
    **ADVERSARY_ACTION_ARGS,
    "ExpireProducerState": ("partition", "producer_id"),
    "PartitionLeaderElection": ("partition",),
    "Fetch": ("partition",),
    "FetchWait": ("partition",),
    "DelayedFetchComplete": ("partition",),
    "ProduceError": ("message", "error"),
}
FAULT_OF_ACTION = {
    "DropMessage": "drop",
    "RequestTimeout": "request_timeout",
    "ExpireBatch": "batch_expiry",
    "TxnTimeout": "txn_timeout",
    "AppendFailure": "append_failure",
    "AppendError": "append_failure",
    "CoordinatorFailover": "coordinator_failover",
    "CoordinatorFailoverReplicated": "coordinator_failover",
    "CoordinatorReloaded": "coordinator_failover",
    "AppendNotLeader": "coordinator_failover",
    "ExpireTransactionalId": "txn_id_expiry",
    "MarkerNotLeader": "marker_failure",
    "MarkerNotEnoughReplicasAfterAppend": "marker_failure",
    "MarkerError": "marker_failure",
    "PartitionLeaderElection": "leader_election",
    "ProduceError": "produce_error",
    **ADVERSARY_FAULT_OF_ACTION,
}

#: The marker errors whose ``marker_failure`` actions keep the names they had before ``[faults] marker_errors``.
_NAMED_MARKER_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS_AFTER_APPEND")  # no mutate: action names

#: Logged states that back an EndTxn answered NONE: its result is prepared or complete.
ENDED_COMMIT = (TransactionState.PREPARE_COMMIT, TransactionState.COMPLETE_COMMIT)
ENDED_ABORT = (TransactionState.PREPARE_ABORT, TransactionState.COMPLETE_ABORT)

#: Timeouts that are protocol steps (fairness makes them fire), though an early expiry has a budget.
PROTOCOL_TIMEOUTS = frozenset({"TxnTimeout"})


Result = tuple[TxnSystemState, tuple[str, ...]] | None


def _flagged(s: TxnSystemState, *labels: str) -> TxnSystemState:  # no mutate: ghost observer, not a rule
    """The state with ``labels`` added to the ghost's record of bad steps (read by the properties)."""
    return s._replace(ghost=s.ghost._replace(bad_transitions=(*s.ghost.bad_transitions, *labels)))


#: Produce answers that say the client's sequence or epoch disagrees with the leader's producer state (what
#: :func:`_fault_free_refusal` judges; ``tests/test_sweep_findings_txn.py`` checks each is judged).
SEQUENCE_REFUSALS = (  # no mutate: the judge's input (sole_producer_not_fenced), not a rule
    Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
    Errors.INVALID_PRODUCER_EPOCH,
)

#: Produce answers that say the batch is not part of the producer's ongoing transaction on the partition: the
#: verification (KIP-890) found the partition not added, or the leader's ``VerificationGuard`` was gone when the
#: verified batch was appended (``UnifiedLog.analyzeAndValidateProducerState``: INVALID_TXN_STATE; 4.0 clients
#: are sent TRANSACTION_ABORTABLE, KIP-890's abortable error).  Each turns the transaction abortable (or the
#: producer fatal) with no cause the application could see; without a fault and with no other instance of the
#: transactional.id, Kafka never answers them (KAFKA-18575, PR #18604, Kafka 4.0: the next TV2 transaction's first
#: batch racing the previous transaction's marker was refused so).  Also judged by :func:`_fault_free_refusal`.
TXN_STATE_REFUSALS = (  # no mutate: the judge's input (sole_producer_not_fenced), not a rule
    Errors.INVALID_TXN_STATE,
    Errors.TRANSACTION_ABORTABLE,
)


def _fault_free_refusal(  # no mutate: ghost observer (the judge of sole_producer_not_fenced), not a rule
    s: TxnSystemState, client: str, req: ProduceRequest, error: str
) -> str | None:
    """A ``fault_free_refusal:`` label when a partition leader refuses a client's batch for its sequence or epoch
    (:data:`SEQUENCE_REFUSALS`) or for its transaction's state (:data:`TXN_STATE_REFUSALS`: the partition is not in
    the producer's ongoing transaction, or the verification's guard is gone) in a run without faults, the client
    being the only instance of its transactional.id; else ``None``.

    Without a fault nothing is lost, duplicated, reordered or timed out, and no other instance bumps the epoch, so
    the client's ``TxnPartitionEntry`` sequences (restarted at 0 with every new epoch: ``resetSequenceNumbers``
    after InitProducerId and after a TV2 EndTxn that returns a new epoch, ``TransactionManager``, Kafka 4.0) must
    be what the leader's ``ProducerStateManager`` expects (``ProducerAppendInfo.checkSequence``: a new epoch starts
    at 0).  A refusal then turns the transaction abortable with no cause the application could see.

    Two refusals are Kafka's own and not judged: OUT_OF_ORDER_SEQUENCE_NUMBER for a batch *behind* a missing one,
    an earlier batch of the same producer id, epoch and partition that the leader's log does not hold and that the
    client either still holds unacknowledged, to retry, or has given up (its retries spent: ``Sender.failBatch``
    -> ``TransactionManager.handleFailedBatch``, the transaction abortable).  With
    ``max.in.flight.requests.per.connection`` above one the earlier batch can be refused by a retriable error (TV2:
    CONCURRENT_TRANSACTIONS while the previous transaction's markers are pending, sent as NOT_ENOUGH_REPLICAS by
    ``ReplicaManager.appendRecords``' ``postVerificationCallback``), and the batch behind it then finds a gap:
    ``ProducerAppendInfo.checkSequence`` (trunk @1eb7644349cb) refuses any first sequence but ``currentLastSeq + 1``
    (or above the verification entry's ``lowestSequence``).  The client retries it in order with the earlier one:
    ``TransactionManager.canRetry`` retries an OutOfOrderSequenceException whose batch is not ``isNextSequence``
    (base sequence other than the last acknowledged + 1), and ``RecordAccumulator`` drains a partition's retried
    batches in sequence order (``shouldStopDrainBatchesForPartition``); a transaction already abortable is aborted
    whatever its remaining batches are answered.  Whether the client fails a batch too early is judged by
    ``batch_failures_explained``.  A refusal of the *next* batch of a transaction the client still runs (nothing
    earlier missing: e.g. a client that keeps its sequences across a new epoch), or any INVALID_PRODUCER_EPOCH,
    stays a violation here.  So does every transaction-state refusal: without a fault the client adds each
    partition before (TV0/TV1) or with (TV2) its first batch, nothing aborts its transaction behind its back, and
    a verification round trip that overlaps the previous transaction's markers is answered CONCURRENT_TRANSACTIONS
    (retriable) or keeps its guard (KAFKA-18575, PR #18604; ``UnifiedLog.updateProducers`` keeping a TV2 entry at
    the marker's epoch, Kafka trunk 2025).
    """
    if error not in (*SEQUENCE_REFUSALS, *TXN_STATE_REFUSALS) or any(s.faults_used) or not client.startswith("p"):
        return None
    i = int(client[1:])
    c = s.clients[i]
    tid = c.transactional_id
    if sum(1 for d in s.clients if d.transactional_id == tid) > 1:
        return None
    if error in TXN_STATE_REFUSALS and s.coordinator[tid] is None:
        # transactional.id.expiration.ms removed the idle id (a timeout action, not a fault): the partition is in
        # no transaction of it, Kafka's own answer (as sole_instance_failures excuses the client's failure)
        return None
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and _behind_missing_batch(s, c, req):
        return None
    return (
        f"fault_free_refusal:producer {i}'s batch (pid {req.producer_id}, epoch {req.producer_epoch}, "
        f"seq {req.base_sequence}) on partition {req.partition} was refused {error} in a run without faults"
    )


def _behind_missing_batch(  # no mutate: ghost observer (the excuse of _fault_free_refusal), not a rule
    s: TxnSystemState, c: tp.TxnClient, req: ProduceRequest
) -> bool:
    """Whether client ``c``'s batch ``req`` was refused behind a missing earlier batch of its producer id, epoch and
    partition: one ``c`` still holds unacknowledged and the partition's log does not hold, or one ``c`` gave up
    (its transaction is abortable: the application must abort it whatever the leader answers)."""
    if c.data.producer_id != req.producer_id:
        return False
    if c.state in (tp.C.ABORTABLE_ERROR, tp.C.ABORTING):
        return True
    log = s.partitions[req.partition].log
    written = {
        (e.producer_epoch, e.base_sequence) for e in log if e.producer_id == req.producer_id and not e.control
    }
    return any(
        b.partition == req.partition
        and b.producer_epoch == req.producer_epoch
        and 0 <= b.base_sequence < req.base_sequence
        and (b.producer_epoch, b.base_sequence) not in written
        for b in c.data.batches
    )


def _judge_sequence_refusal(  # no mutate: ghost observer (sole_producer_not_fenced), not a rule
    s: TxnSystemState, client: str, req: ProduceRequest, error: str
) -> tuple[TxnSystemState, tuple[str, ...]]:
    """``s`` flagged with :func:`_fault_free_refusal`'s label, if any, and the observer event
    ``out_of_order_behind_missing_batch`` when a client's batch is refused OUT_OF_ORDER_SEQUENCE_NUMBER behind a
    missing one (:func:`_behind_missing_batch`: the refusal Kafka's client retries; the witness that the excuse is
    exercised)."""
    refused = _fault_free_refusal(s, client, req, error)
    if refused is not None:  # no branch: the violation side, only a defect takes it (sole_producer_not_fenced)
        s = _flagged(s, refused)  # no mutate: ghost observer (records the bad step)
    if error != Errors.OUT_OF_ORDER_SEQUENCE_NUMBER or not client.startswith("p"):
        return s, ()
    if not _behind_missing_batch(s, s.clients[int(client[1:])], req):
        return s, ()
    return s, ("out_of_order_behind_missing_batch",)


def _known_failure(s: TxnSystemState, label: str) -> TxnSystemState:  # no mutate: ghost observer, not a rule
    """The state with ``label`` added to the ghost's record of failures Kafka itself gives a healthy producer."""
    known = s.ghost.kafka_known_failures
    return s if label in known else s._replace(ghost=s.ghost._replace(kafka_known_failures=(*known, label)))


def _moved_to(out: tc.Outcome) -> str | None:
    """The state a handler's outcome moves the entry to: the logged target, the prepared one (append in flight),
    or None (nothing written or prepared)."""
    moved = _moved(out)
    return None if moved is None else str(moved.state)


def _moved(out: tc.Outcome) -> tc.TransactionMetadata | None:
    """The metadata a handler's outcome writes (or prepares, its append in flight); None: nothing."""
    if out.transit is not None:
        return out.transit
    if out.wrote and out.metadata is not None:
        return out.metadata
    return None


def _verification_answer(ask: VerifyPartitionRequest | VerifyPartitionResponse, error: str) -> VerifyPartitionResponse:
    """The answer ``error`` to the verification ``ask`` carries (a request, or an answer a reset lost)."""
    return VerifyPartitionResponse(
        ask.client, ask.produce, ask.transactional_id, ask.guard, ask.leader_epoch, ask.log_end, error
    )


def _judge_fatal_sender(s: TxnSystemState, i: int, kind: str) -> TxnSystemState:  # no mutate: a property's judge
    """``s`` flagged ``fatal_sent:<i>:<kind>`` if producer ``i`` sends although it is in FATAL_ERROR.

    ``Sender.runOnce`` (trunk @1eb7644349cb): with ``transactionManager.hasFatalError()`` the Sender aborts the
    queued batches (``maybeAbortBatches``) and returns without sending anything; only ``close()`` is left.
    """
    if s.clients[i].state != tp.C.FATAL_ERROR:  # no branch: the other side records a defect
        return s
    return _flagged(s, f"fatal_sent:{i}:{kind}")  # no mutate: ghost observer (records the bad step)


#: Requests a transaction-version-2 client never sends (KIP-890 part 2): the partition leader and the group
#: coordinator add partitions to the transaction themselves (``TransactionManager.maybeAddPartition`` and
#: ``sendOffsetsToTransaction`` with ``isTransactionV2Enabled``, Kafka 4.0, trunk @1eb7644349cb).
TV1_ONLY_REQUESTS = ("AddPartitionsToTxnRequest", "AddOffsetsToTxnRequest")


def _judge_version_request(s: TxnSystemState, i: int, kind: str, tv: int) -> TxnSystemState:  # no mutate: a judge
    """``s`` flagged ``version_request:<i>:<kind>`` if producer ``i`` sends a request its transaction version
    does not send (a TV2 client's AddPartitionsToTxn or AddOffsetsToTxn, :data:`TV1_ONLY_REQUESTS`)."""
    if tv < 2 or kind not in TV1_ONLY_REQUESTS:  # no branch: the other side records a defect
        return s
    return _flagged(s, f"version_request:{i}:{kind} at transaction.version {tv}")  # no mutate: ghost observer


#: A fault kind's slot in ``faults_used`` (``_budget_left`` runs for every kind in every state).
_TXN_FAULT_INDEX = {kind: k for k, kind in enumerate(TXN_FAULT_KINDS)}


def _pending_put(pending: tuple[PendingCompleteTxn, ...], entry: PendingCompleteTxn) -> tuple[PendingCompleteTxn, ...]:
    """``transactionsWithPendingMarkers.put``: ``entry`` replaces the transactional id's, sorted by id."""
    kept = tuple(e for e in pending if e.transactional_id != entry.transactional_id)
    return tuple(sorted((*kept, entry)))


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


class TransactionalSystem:
    """Transactional producers, one transaction coordinator and one broker, as a Model."""

    #: Action kind -> argument names (JSON keys); extended by subclasses.
    ACTION_ARGS: ClassVar[dict[str, tuple[str, ...]]] = TXN_ACTION_ARGS
    #: Action kind -> fault kind of :data:`TXN_FAULT_KINDS`.
    FAULT_OF_ACTION: ClassVar[dict[str, str]] = FAULT_OF_ACTION

    def __init__(
        self,
        config: TxnConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "transactions",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        topo = config.topology
        if (  # input: a scenario's topology asks for more records than the record-id encoding holds (keos: error)
            topo.producers * topo.transactions_per_producer * topo.records_per_transaction >= prod.RECORDS_PER_PRODUCER
        ):
            raise ModelError("too many records for the record-id encoding")
        self.name = name
        self.config = config
        self.variant = variant
        self.flags = variant.flags
        self.tv = self.flags.transaction_version
        self.kip_360 = self.flags.kip_360
        self.cc = tc.coordinator_config(self.flags, config.max_producer_epoch)
        # NetworkClient.canSendMore admits max.in.flight.requests.per.connection requests; one more under the weakened
        # variant txn_sender_one_request_too_many (flags.sender_within_max_in_flight off)
        sender_limit = topo.max_in_flight + (0 if self.flags.sender_within_max_in_flight else 1)
        self.producer_config = ProducerConfig(retries=config.retries, max_in_flight=sender_limit)
        self._properties = tuple(properties)
        self._limits = config.faults.limits()
        self._scenario_info = scenario_info or {}
        self.tids = 1 if topo.shared_transactional_id else topo.producers
        #: pendingState granularity: a handler prepares, its append completes in a later step
        self.pending = topo.pending_transitions
        #: KIP-890 verification as Kafka's round trip (leader -> coordinator -> leader's callback)
        self.round_trip = topo.verification_round_trip
        if (  # input: a configuration scenario loading rejects first (keos: error); a TxnConfig built in code
            self.round_trip and (self.pending or config.eos is not None or config.security is not None)
        ):
            raise ModelError(
                "verification_round_trip is modelled for the plain transactions model (no eos, no security, "
                "no pending_transitions)"
            )
        self._append_target = TXN_LOG if self.pending else COORDINATOR
        #: a failover opens Kafka's loading window (the old instance still answers, the new one loads)
        self.loading_window = topo.loading_window
        if (  # input: a configuration scenario loading rejects first (keos: error); a TxnConfig built in code
            self.loading_window and not self.pending
        ):
            raise ModelError("loading_window is modelled with pending_transitions")
        #: the coordinator_failover budget may also reload the partition in place (``coordinator_reload``)
        self.reload_in_place = topo.coordinator_reload
        if (  # input: a configuration scenario loading rejects first (keos: error); a TxnConfig built in code
            self.reload_in_place and not self.loading_window
        ):
            raise ModelError("coordinator_reload is modelled with loading_window")
        self._arg_specs: dict[tuple[int, int], dict[str, tuple[int, ...]]] = {}
        self.security = config.security
        #: Actions that are timeout protocol steps here although FAULT_OF_ACTION lists them.
        self._timeout_actions = frozenset({"ExpireTransactionalId"} if topo.transactional_id_expiration else ())
        if (  # input: a configuration scenario loading rejects first (keos: error); a TxnConfig built in code
            topo.transactional_id_expiration and config.faults.txn_id_expiry
        ):
            # transactional.id.expiration.ms as a timeout action: a protocol step, no longer a budgeted fault.
            raise ModelError(
                "transactional_id_expiration makes ExpireTransactionalId a protocol step: give txn_id_expiry no budget"
            )

    # -- Model interface -------------------------------------------------------------------

    def init_states(self) -> Sequence[TxnSystemState]:
        """Clients before initTransactions, no coordinator entries, empty logs."""
        topo = self.config.topology
        clients = tuple(
            tp.new_client(0 if topo.shared_transactional_id else i, topo.partitions) for i in range(topo.producers)
        )
        return (
            TxnSystemState(
                clients,
                (None,) * self.tids,
                (None,) * self.tids,
                0,
                tuple(part.PartitionLeader() for _ in range(topo.partitions)),
                (),
                0,
                (0,) * len(TXN_FAULT_KINDS),
                TxnGhost(),
                fetchers=(ReadCommittedFetcher(),) * topo.partitions if topo.read_committed_consumer else (),
            ),
        )

    def properties(self) -> Sequence[Property]:
        """The properties this instance checks."""
        return self._properties

    def within_bounds(self, state: TxnSystemState) -> bool:
        """Budgets and record counts make the space finite."""
        return True

    def fingerprint(self, state: TxnSystemState) -> str:
        """Stable blake2b-64 fingerprint."""
        return codec.fingerprint(state)

    def record_of(self, i: int, n: int) -> int:
        """Record id of producer ``i``'s ``n``-th record."""
        return prod.record_id(i, n)

    def txn_records(self, i: int, txn: int) -> tuple[int, ...]:
        """The record ids of transaction ``txn`` of producer ``i``."""
        rpt = self.config.topology.records_per_transaction
        return tuple(prod.record_id(i, txn * rpt + n) for n in range(rpt))

    def actions(self, state: TxnSystemState) -> list[Action]:
        """Enabled actions: application and client steps, deliveries, then faults.

        ``transaction.timeout.ms`` is a protocol step, not a fault: in a state
        where no other protocol step is enabled time passes and the
        coordinator's timeout abort of an Ongoing transaction fires, free of
        any budget (:meth:`_quiet_timeouts`).  While other steps are enabled an
        *early* expiry (the timeout racing a slow client) is charged to the
        ``txn_timeout`` budget.
        """
        out = self._protocol_actions(state)
        quiet = self._quiet(state, out)
        if quiet:
            out.extend(self._quiet_timeouts(state))
        if sum(state.faults_used) < self.config.faults.total:
            faults = self._fault_actions(state, net.channel_heads(state.network))
            out.extend(a for a in faults if not (quiet and a.kind in PROTOCOL_TIMEOUTS))
            out.extend(adversary_actions(self, state))
        if state.security.abandoned:
            out = [a for a in out if not blocked_by_abandon(state, a)]
        return out

    def _quiet_timeouts(self, state: TxnSystemState) -> list[Action]:
        """TxnTimeout for every Ongoing transaction, in a state with no other protocol step (free of budget)."""
        return [Action("TxnTimeout", (t,)) for t in range(self.tids) if self._may_time_out(state, t)]

    def _may_time_out(self, state: TxnSystemState, t: int) -> bool:
        """The coordinator's timeout abort would pick ``t`` (``timedOutTransactions`` skips a loading partition)."""
        return not state.loading and tc.timeout_abort(state.coordinator[t], self.cc) is not None

    def _timeout_is_free(self, state: TxnSystemState) -> bool:
        """Whether a TxnTimeout in ``state`` is the quiet, budget-free one."""
        return self._quiet(state, self._protocol_actions(state))

    def _quiet(self, state: TxnSystemState, protocol: list[Action]) -> bool:
        """Whether time passes in ``state``: every enabled protocol step is a client *waiting*.

        A client that retries an answer which only tells it to wait (the new owner's OffsetFetch
        answered UNSTABLE_OFFSET_COMMIT, :meth:`_waits`) changes nothing by its retry: it repeats
        after ``retry.backoff.ms`` while the broker's clocks run, so the coordinator's
        ``transaction.timeout.ms`` abort (``TransactionCoordinator.abortTimedOutTransactions``, run
        every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``) is as free to fire as
        in a state with no step at all.  Without this, a retry loop would be a livelock of the model
        that Kafka's clocks do not have: a transaction only its timeout ends would never end.
        """
        if not self.flags.txn_timeout_fires_while_clients_wait:  # weakened txn_timeout_starved_by_waiting_client
            return not protocol
        return all(self._waits(state, a) for a in protocol)

    def _waits(self, state: TxnSystemState, action: Action) -> bool:
        """Whether ``action`` in ``state`` is a retry that changes nothing (no system here has one)."""
        return False

    def _protocol_actions(self, state: TxnSystemState) -> list[Action]:
        """Application and client steps and deliveries (no fault, no timeout)."""
        out: list[Action] = []
        topo = self.config.topology
        for i, c in enumerate(state.clients):
            if c.state == tp.C.UNINITIALIZED and self._may_init_transactions(state, i):
                out.append(Action("InitTransactions", (i,)))
            out.extend(self._application_actions(state, i, c))
            if self._may_send_txn_request(state, i, c):
                out.append(Action("SendTxnRequest", (i,)))
            for q in range(topo.partitions):
                if self._drain(state, c, i, q) is not None:
                    out.append(Action("SendProduce", (i, q)))
        heads = net.channel_heads(state.network)
        out.extend(Action("Deliver", (env,)) for env in heads)
        if state.loading and not state.load_failed:
            out.append(Action("LoadTransactions", ()))
        out.extend(self._fetch_actions(state))
        out.extend(self._expiry_actions(state))
        if state.security.abandoned:
            out = [a for a in out if not blocked_by_abandon(state, a)]
        return out

    def _fetch_actions(self, state: TxnSystemState) -> list[Action]:
        """The read_committed consumers' fetches (``[transactions] read_committed_consumer``): a Fetch answered at
        once while the partition's LSO is past the consumer's position, a Fetch parked in the purgatory
        (``fetch.min.bytes`` not met yet, or nothing stable to read), a parked Fetch completed once
        ``DelayedFetch.tryComplete`` holds."""
        out: list[Action] = []
        for q, f in enumerate(state.fetchers):
            params = self._fetch_params(f.position)
            if f.parked:
                if fetch_path.try_complete(state.partitions[q], params):
                    out.append(Action("DelayedFetchComplete", (q,)))
                continue
            if fetch_path.try_complete(state.partitions[q], params):
                out.append(Action("Fetch", (q,)))
            if f.position < len(state.partitions[q].log):
                out.append(Action("FetchWait", (q,)))
        return out

    def _expiry_actions(self, state: TxnSystemState) -> list[Action]:
        """The expiry timeouts that are protocol steps: ``transactional.id.expiration.ms`` (where the scenario
        makes it a timeout action) and the partition leaders' ``producer.id.expiration.ms``."""
        out: list[Action] = []
        topo = self.config.topology
        if topo.transactional_id_expiration:
            out.extend(Action("ExpireTransactionalId", (t,)) for t in range(self.tids) if self._may_expire(state, t))
        if topo.producer_id_expiration:
            keep = self.flags.producer_expiry_keeps_open_transactions
            for q, leader in enumerate(state.partitions):
                out.extend(
                    Action("ExpireProducerState", (q, e.producer_id)) for e in leader.producers if expirable(e, keep)
                )
        return out

    def _may_expire(self, state: TxnSystemState, t: int) -> bool:
        """Whether ``ExpireTransactionalId(t)`` is enabled: the coordinator would expire the entry and, where
        ``transactional.id.expiration.ms`` is a timeout (not a budgeted fault), every instance is idle."""
        if state.loading or tc.expire_transactional_id(state.coordinator[t]) is None:
            return False
        return not self.config.topology.transactional_id_expiration or self._idle(state, t)

    def _idle(self, state: TxnSystemState, t: int) -> bool:
        """Whether every instance of transactional id ``t`` is idle: between transactions, nothing in flight.

        ``transactional.id.expiration.ms`` (7 days by default) only passes while the producer sends
        nothing: ``TransactionStateManager`` expires an id whose last update is older than that, and a
        producer inside a transaction updates it (or its transaction times out first, well before).
        """
        return all(
            c.state in (tp.C.READY, tp.C.UNINITIALIZED) and not c.inflight and not c.data.batches
            for c in state.clients
            if c.transactional_id == t
        )

    def _may_init_transactions(self, state: TxnSystemState, i: int) -> bool:
        """Whether the application calls initTransactions now (always, for the plain application)."""
        return True

    def _application_actions(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> list[Action]:
        """The plain application's calls for client ``i`` (overridden by :mod:`model.systems.eos`)."""
        out: list[Action] = []
        topo = self.config.topology
        if tp.begin_transaction(c, topo.transactions_per_producer) is not None:
            out.append(Action("BeginTransaction", (i,)))
        if self._may_send(c):
            out.append(Action("Send", (i,)))
            if topo.send_rejections:
                out.append(Action("SendRejected", (i,)))
        if self._may_commit(c):
            out.append(Action("CommitTransaction", (i,)))
        if self._may_abort(c):
            out.append(Action("AbortTransaction", (i,)))
        return out

    # One guard per application call, read by actions() and by the call's handler alike.

    def _may_send(self, c: tp.TxnClient) -> bool:
        """The application sends its transaction's next record: in a transaction, records of it left."""
        rpt = self.config.topology.records_per_transaction
        return c.state == tp.C.IN_TRANSACTION and c.data.next_record < (c.txn + 1) * rpt

    def _may_commit(self, c: tp.TxnClient) -> bool:
        """The application commits once every record of its transaction is sent -- or, with ``empty_commits``,
        before it sent any (an empty transaction, whose records it never sends)."""
        topo = self.config.topology
        rpt = topo.records_per_transaction
        done = (c.txn + 1) * rpt, *((c.txn * rpt,) if topo.empty_commits else ())
        sent = c.state == tp.C.IN_TRANSACTION and c.data.next_record in done
        return sent and tp.commit_transaction(c) is not None  # and the client accepts the call (one guard for both)

    def _may_abort(self, c: tp.TxnClient) -> bool:
        """The application aborts after an abortable error, or (``voluntary_abort``) an open transaction."""
        topo = self.config.topology
        wants = c.state == tp.C.ABORTABLE_ERROR or (topo.voluntary_abort and c.state == tp.C.IN_TRANSACTION)
        return wants and tp.abort_transaction(c) is not None  # and the client accepts the call (one guard for both)

    def _droppable(self, env: net.Envelope) -> bool:
        """Whether a connection reset may lose ``env`` (markers are retried by the coordinator; an append to
        the transaction log always completes, successfully or not)."""
        return not isinstance(env.body, (WriteTxnMarkersRequest, tc.TxnLogAppend))

    def _fault_actions(self, state: TxnSystemState, heads: Sequence[net.Envelope]) -> list[Action]:
        """Fault actions whose per-kind budget is not used up (the total is checked by the caller)."""
        out: list[Action] = []
        topo = self.config.topology
        if self._budget_left(state, "drop"):
            out.extend(Action("DropMessage", (env,)) for env in heads if self._droppable(env))
        if self._budget_left(state, "request_timeout"):
            for i, c in enumerate(state.clients):
                if c.inflight or c.data.in_flight:
                    out.append(Action("RequestTimeout", (i,)))
        if self._budget_left(state, "batch_expiry"):
            for i, c in enumerate(state.clients):
                for q in range(topo.partitions):
                    if prod.expire_batch(c.data, q, self.producer_config) is not None:
                        out.append(Action("ExpireBatch", (i, q)))
        if self._budget_left(state, "txn_timeout"):
            out.extend(Action("TxnTimeout", (t,)) for t in range(self.tids) if self._may_time_out(state, t))
        if self._budget_left(state, "append_failure"):
            errors = self.config.faults.append_errors
            for env in heads:
                if self._append_may_fail(env) and not self._stale_append(state, env):
                    if tc.APPEND_FAULT_ERROR in errors:
                        out.append(Action("AppendFailure", (env,)))
                    out.extend(Action("AppendError", (env, e)) for e in errors if self._may_answer(env, e))
        if self._budget_left(state, "coordinator_failover"):
            out.append(Action("CoordinatorFailover", ()))
            if self.reload_in_place and not state.loading:
                out.append(Action("CoordinatorReloaded", ()))
            if self._replicable(state):
                out.append(Action("CoordinatorFailoverReplicated", ()))
            out.extend(Action("AppendNotLeader", (env,)) for env in heads if self._current_append(state, env))
        if self._budget_left(state, "txn_id_expiry"):
            out.extend(Action("ExpireTransactionalId", (t,)) for t in range(self.tids) if self._may_expire(state, t))
        if self._budget_left(state, "marker_failure"):
            # the scenario's [faults] marker_errors; the two of the default keep their own action names
            marker_errors = self.config.faults.marker_errors
            for env in heads:
                if isinstance(env.body, WriteTxnMarkersRequest):
                    if "NOT_LEADER_OR_FOLLOWER" in marker_errors:
                        out.append(Action("MarkerNotLeader", (env,)))
                    if "NOT_ENOUGH_REPLICAS_AFTER_APPEND" in marker_errors:
                        out.append(Action("MarkerNotEnoughReplicasAfterAppend", (env,)))
                    out.extend(Action("MarkerError", (env, e)) for e in marker_errors if e not in _NAMED_MARKER_ERRORS)
        if self._budget_left(state, "leader_election"):
            out.extend(Action("PartitionLeaderElection", (q,)) for q in range(topo.partitions))
        if self._budget_left(state, "produce_error"):
            for env in heads:
                out.extend(Action("ProduceError", (env, e)) for e in self.config.faults.produce_errors
                           if self._may_fail_produce(state, env, e))
        return out

    def _budget_left(self, state: TxnSystemState, fault: str) -> bool:
        """Whether fault kind ``fault``'s own budget has room (the total is the caller's: actions(), step())."""
        k = _TXN_FAULT_INDEX[fault]
        return state.faults_used[k] < self._limits[k]

    def step(self, state: TxnSystemState, action: Action) -> Step | None:
        """Apply one action; ``None`` if it is not enabled."""
        handler = self._HANDLERS.get(action.kind)
        if (  # no branch: only a trace read from a file names a disabled action
            handler is None or not self._valid_args(state, action) or blocked_by_abandon(state, action)
        ):
            return None
        fault = None if action.kind in self._timeout_actions else self.FAULT_OF_ACTION.get(action.kind)
        if action.kind in PROTOCOL_TIMEOUTS and self._timeout_is_free(state):
            fault = None
        if fault is not None and (  # no branch: only a trace read from a file names a disabled action
            not self._budget_left(state, fault) or sum(state.faults_used) >= self.config.faults.total
        ):
            return None
        result = handler(self, state, *action.args)
        if result is None:  # no branch: a handler refuses only an action a trace names while disabled
            return None
        new, events = result
        if fault is not None:
            k = TXN_FAULT_KINDS.index(fault)
            new = new._replace(faults_used=_at(new.faults_used, k, new.faults_used[k] + 1))
            events = (f"fault:{fault}", *events)
        bad = [e for e in events if e.startswith("txn:") and not is_valid_transition(*e[4:].split("->"))]
        bad += [f"attempt:{e[8:]}" for e in events if e.startswith("illegal:")]
        if new.coordinator is not state.coordinator:  # handlers keep an unchanged field by reference
            bad += epoch_jumps(state.coordinator, new.coordinator)
        if "fence" in events:
            bad += fences_without_bump(state.txn_log, new.txn_log)
        if new.txn_log is not state.txn_log:
            bad += epoch_regressions(state.txn_log, new.txn_log)
            bad += log_transition_problems(state.txn_log, new.txn_log)
        # a failover or an in-place reload reloads the cache from the log: not a transition
        reloaded = "coordinator_failover" in events or "coordinator_reloaded" in events
        if new.coordinator is not state.coordinator and not reloaded:
            bad += epoch_regressions(state.coordinator, new.coordinator)
        if new.coordinator is not state.coordinator and not reloaded:
            bad += unexplained_state_changes(state.coordinator, new.coordinator, events)
        if new.clients is not state.clients:
            # The three client judges label only a client whose TransactionManager state this step changed (to
            # FATAL_ERROR, to ABORTABLE_ERROR, along an edge): most steps change a client's data, not its state.
            before_states = tuple(c.state for c in state.clients)
            after_states = tuple(c.state for c in new.clients)
            if before_states != after_states:
                bad += self._unjustified_failures(state, new, action)
                bad += self._unexplained_aborts(state, new, action, events)
                through = ("IN_TRANSACTION",) if "process" in events else ()  # EOS's Process begins the transaction
                bad += invalid_client_transitions(before_states, after_states, through)
        if new.group is not state.group:  # no mutate: ghost observer (handlers keep an unchanged group by reference)
            bad += self._judge_reads(new)
        if action.kind in ADVERSARY_FAULT_OF_ACTION:  # no mutate: the judge's input (attack_witnesses_match_effects)
            bad += unmet_claims(state, new, events)
        if bad:  # no branch: the violation side, only a defect takes it (the ghost's bad steps)
            new = _flagged(new, *bad)  # no mutate: ghost observer (records the bad step for the properties)
        return Step(new, events)

    def _judge_reads(self, s: TxnSystemState) -> list[str]:  # no mutate: a judges' hook, not a rule
        """Ghost labels for the reads a client may send at any time (an administrator's, whatever its request
        flags) that the state ``s`` a step produced would answer otherwise than Kafka: none in the transactions
        system; the eos system judges OffsetFetch (:mod:`model.systems.offset_fetch_table`)."""
        return []

    def _unjustified_failures(  # no mutate: the judge of healthy_producer_not_failed (a property), not a rule
        self, before: TxnSystemState, after: TxnSystemState, action: Action
    ) -> list[str]:
        """Ghost labels ``client_failed:<i>:<cause>`` for a client this step made fatal without a cause Kafka accepts.

        ``TransactionManager`` ends a producer (``fatalError``) for errors that mean "you are no longer the
        producer of this transactional.id" (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH after another instance, a
        timeout abort's epoch fence, an expiry or a late InitProducerId of its own moved the coordinator past
        it), for a denied TransactionalId or Cluster ACL, and -- without KIP-360 -- for a lost sequence.  A
        producer the coordinator still recognises as the holder of its id (:func:`displaced` is false) must
        never be told any of these, in a faulty run too: its own retries, lost responses, failed appends and
        failovers are retriable, a denied Topic or Group ACL abortable.  Judged
        at the step that makes the client fatal, against the coordinator as it stood before the step; recorded
        only when it happens, so the state space does not grow.
        """
        out: list[str] = []
        body = action.args[0].body if action.kind == "Deliver" and action.args else None
        cause = getattr(body, "error", None) or action.kind
        for i, (old, c) in enumerate(zip(before.clients, after.clients, strict=True)):
            if c.state != tp.C.FATAL_ERROR or old.state == tp.C.FATAL_ERROR:
                continue
            if cause in tp.FATAL_AUTHORIZATION_ERRORS and self.security is not None:
                # a denied TransactionalId or Cluster ACL ends the producer (TransactionManager
                # fatalError; judged by the security invariants, the ACL decides); TOPIC_ and
                # GROUP_AUTHORIZATION_FAILED are abortable (AddPartitionsToTxnHandler,
                # AddOffsetsToTxnHandler, TxnOffsetCommitHandler, Kafka trunk 1eb7644349cb): a
                # producer they make fatal is judged here like any other.  Without an authorizer (no
                # [security]) no broker answers an authorization error, so one that ends a holder is judged here
                continue
            if (  # no branch: taken only under the weakened variant no_kip_360
                not self.kip_360 and (cause in tp.PRE_KIP_360_FATAL or tp.sequences_to_resolve(old, wait_inflight=True))
            ):
                # before KIP-360 a lost sequence or an unknown producer id is fatal, and so is a sequence that does
                # not resolve (maybeResolveSequences without canBumpEpoch)
                continue
            if (  # no branch: the violation side, only a defect takes it (healthy_producer_not_failed)
                displaced(old, before.coordinator[old.transactional_id], self.cc, before.txn_log[old.transactional_id])
            ):
                continue
            if cause in (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH) and any(
                (f.producer_id, f.producer_epoch) == (old.data.producer_id, old.data.producer_epoch)
                for f in before.ghost.fences
            ):
                # the coordinator fenced this very (pid, epoch): a timeout abort or an InitProducerId -- another
                # instance's or its own late one -- moved the id past it.  Under TV2 the fence's PrepareAbort records
                # the fenced epoch as lastProducerEpoch (prepareAbortOrCommit, KAFKA-19367), so the coordinator's
                # entry alone no longer tells the fence's bump from one the client's own EndTxn made (displaced).
                # Only the fencing errors: a fenced TV2 producer's late abort is a retry Kafka accepts (even across
                # a rotation, retryOnOverflow), so any other fatal answer to it is still judged
                continue
            if f"rotating_pid_mapping:{i}:{old.data.producer_id}" in before.ghost.kafka_known_failures:
                # Kafka 4.x itself: endTransaction checks the producer id before the pending state (PR #18467), so
                # an abort naming the nextProducerId its rotating EndTxn answered (KAFKA-18660) while the markers
                # are still written is INVALID_PRODUCER_ID_MAPPING -- fatal to the client (TransactionManager)
                continue
            out.append(f"client_failed:{i}:{cause}")
        return out

    def _unexplained_aborts(  # no mutate: the judge of batch_failures_explained (a property), not a rule
        self, before: TxnSystemState, after: TxnSystemState, action: Action, events: tuple[str, ...]
    ) -> list[str]:
        """Ghost labels ``premature_failure:<i>:<action>:abortable_without_failure`` for a client this step made
        abortable although nothing failed.

        ``TransactionManager.transitionToAbortableError`` runs only from an error: ``handleFailedBatch`` when the
        Sender gives a batch up (``Sender.failBatch``: a non-retriable answer, spent retries, ``delivery.timeout.ms``),
        a coordinator or TxnOffsetCommit answer's error, ``maybeResolveSequences`` for a batch that failed
        earlier, or ``KafkaProducer.doSend`` for a ``send()`` it refused synchronously (Kafka trunk 1eb7644349cb).
        A retriable failure with retries left -- a connection reset
        (``wasDisconnected``), ``request.timeout.ms`` (``wasTimedOut``), a NOT_LEADER_OR_FOLLOWER -- re-enqueues
        the batch (``Sender.reenqueueBatch``) and leaves the transaction as it is.  So a step that moves a client
        to ABORTABLE_ERROR must deliver an error answer, give up a batch that was sent (one left the queue
        without an acknowledgement; batches never sent are dropped as the transition's consequence,
        ``_drop_undrained``) or resolve a lost sequence -- whatever fault the step is.  Judged at every step, in
        faulty runs too, recorded only when it happens.
        """
        body = action.args[0].body if action.kind == "Deliver" and action.args else None
        error = getattr(body, "error", None)
        if isinstance(error, str) and error != Errors.NONE:
            return []  # an error answer: the handlers' own judges (client_reacts_as_kafka, ...) classify it
        if "sequence_unresolved" in events:  # maybeResolveSequences: a batch expired earlier
            return []
        if "send_rejected" in events:  # doSend's ApiException: maybeTransitionToErrorState (KAFKA-9279)
            return []
        out: list[str] = []
        for i, (old, c) in enumerate(zip(before.clients, after.clients, strict=True)):
            if c.state != tp.C.ABORTABLE_ERROR or old.state == tp.C.ABORTABLE_ERROR:
                continue
            kept = {r for b in c.data.batches for r in b.records}
            if any(b.attempts > 0 and not set(b.records) <= kept for b in old.data.batches):
                continue  # a sent batch was given up (Sender.failBatch)
            out.append(f"premature_failure:{i}:{action.kind}:abortable_without_failure")
        return out

    def _valid_args(  # no mutate: trace format (a decoded action's arity, types, ranges), not Kafka's protocol
        self, state: TxnSystemState, action: Action
    ) -> bool:
        """Arity, types and ranges of the arguments (an action decoded from a user's trace may be anything).

        The per-kind argument table is built once per state shape (clients, partitions): this runs on
        every step.
        """
        shape = (len(state.clients), len(state.partitions))
        specs = self._arg_specs.get(shape)
        if specs is None:
            bounds = {"producer": shape[0], "instance": shape[0], "partition": shape[1], "transactional_id": self.tids}
            specs = self._arg_specs[shape] = {
                kind: tuple(bounds.get(n, -1 if n == "message" else -2) for n in names)
                for kind, names in self.ACTION_ARGS.items()
            }
        spec = specs[action.kind]
        args = action.args
        if len(args) != len(spec):  # no branch: only a trace read from a file names a disabled action
            return False
        for bound, value in zip(spec, args):
            if bound >= 0:
                if (  # no branch: only a trace read from a file names a disabled action
                    type(value) is not int or not 0 <= value < bound
                ):
                    return False
            elif (  # no branch: only a trace read from a file names a disabled action
                bound == -1 and not isinstance(value, net.Envelope)
            ):
                return False
        return True

    # -- application and client ------------------------------------------------------------------

    def _set_client(self, s: TxnSystemState, i: int, c: tp.TxnClient | None) -> Result:
        return None if c is None else (s._replace(clients=_at(s.clients, i, c)), ())

    def _init_transactions(self, s: TxnSystemState, i: int) -> Result:
        if (  # no branch: actions() offers initTransactions only when the application calls it
            not self._may_init_transactions(s, i)
        ):
            return None
        return self._set_client(s, i, tp.init_transactions(s.clients[i]))

    def _begin(self, s: TxnSystemState, i: int) -> Result:
        """beginTransaction; records of an earlier transaction aborted before they were sent are skipped."""
        topo = self.config.topology
        c = tp.begin_transaction(s.clients[i], topo.transactions_per_producer)
        if c is None:  # no branch: only a trace read from a file names a disabled action
            return None
        first = c.txn * topo.records_per_transaction
        return self._set_client(s, i, c._replace(data=c.data._replace(next_record=first)))

    def _send(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        topo = self.config.topology
        if not self._may_send(c):  # no branch: only a trace read from a file names a disabled action
            return None
        n = c.data.next_record
        return self._set_client(s, i, tp.send(c, n % topo.partitions, prod.record_id(i, n), self.tv))

    def _send_rejected(self, s: TxnSystemState, i: int) -> Result:
        """``send()`` of the transaction's next record fails synchronously (``send_rejections``): the record is never
        batched and the producer reacts as :func:`model.clients.transactional_producer.send_rejected` says."""
        c = s.clients[i]
        if not (self.config.topology.send_rejections and self._may_send(c)):  # no branch: a trace read from a file
            return None
        c = tp.send_rejected(c, self.tv, self.kip_360, self.flags.send_error_aborts_transaction)
        reacted = ("send_rejected_abortable",) if c.state == tp.C.ABORTABLE_ERROR else ()  # its witness's event
        return s._replace(clients=_at(s.clients, i, c)), ("send_rejected", *reacted)

    def _commit(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        if not self._may_commit(c):  # no branch: only a trace read from a file names a disabled action
            return None
        return self._set_client(s, i, tp.commit_transaction(c))

    def _abort(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        if not self._may_abort(c):  # no branch: only a trace read from a file names a disabled action
            return None
        return self._set_client(s, i, tp.abort_transaction(c))

    def _may_send_txn_request(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> bool:
        """The Sender has a coordinator request to send (or a transaction to complete locally), or -- first in its
        ``runOnce`` -- unresolved sequences to settle (``maybeResolveSequences``)."""
        if self.flags.txn_resolve_sequences and tp.sequences_to_resolve(c, self.flags.txn_resolve_waits_for_inflight):
            return True
        return tp.next_txn_request(c, i, self.tv, self.kip_360, self.flags.txn_resolve_sequences) is not None

    def _send_txn_request(self, s: TxnSystemState, i: int) -> Result:
        resolve = self.flags.txn_resolve_sequences
        wait = self.flags.txn_resolve_waits_for_inflight
        if resolve and tp.sequences_to_resolve(s.clients[i], wait):
            old = s.clients[i]
            c, events = tp.resolve_sequences(old, self.tv, self.kip_360, wait)
            s = s._replace(clients=_at(s.clients, i, c))
            wrong = resolution_misread(
                (old.data, old.state, old.epoch_bump_required),
                (c.data, c.state, c.epoch_bump_required),
                self.tv,
                self.kip_360,
                i,
            )
            if wrong:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
                s = _flagged(s, *wrong)  # no mutate: ghost observer (records the bad step for the properties)
            return s, events
        # the judge's view is Kafka's rule (maybeResolveSequences waits for the partition's in-flight batches),
        # whatever the variant's switch, so a weakened settlement is judged, not copied
        pending = tp.sequences_to_resolve(s.clients[i], wait_inflight=True)
        nxt = tp.next_txn_request(s.clients[i], i, self.tv, self.kip_360, resolve)
        if nxt is None:  # no branch: only a trace read from a file names a disabled action
            return None
        c, request = nxt
        if pending and (request is None or isinstance(request, EndTxnRequest)):  # no branch: the violation side
            # Sender.runOnce runs maybeResolveSequences before nextRequest: no transaction ends over a partition
            # whose sequence is still unresolved (client_reacts_as_kafka)
            s = _flagged(s, f"client_reaction:{i}:EndTxn:unresolved sequence of partitions {pending}")
        s = _judge_fatal_sender(s, i, type(request).__name__ if request is not None else "local_end")
        s = _judge_version_request(s, i, type(request).__name__, self.tv)
        s = s._replace(clients=_at(s.clients, i, c))
        if request is None:
            outcome = "committed" if s.clients[i].state == tp.C.COMMITTING else "aborted"
            return self._record_outcome(s, i, s.clients[i].txn - 1, outcome), ("client_txn_local_end",)
        env = net.Envelope(f"p{i}", COORDINATOR, c.tc_connection, request)
        return s._replace(network=net.send(s.network, env)), (type(request).__name__,)

    def _record_outcome(self, s: TxnSystemState, i: int, txn: int, outcome: str) -> TxnSystemState:
        """The application's view of how transaction ``txn`` ended.  An empty commit (``empty_commits``: nothing of
        ``txn`` was sent) commits none of its records: it is kept as their abort (none may ever be committed)."""
        if not outcome:
            return s
        empty = s.clients[i].data.next_record == txn * self.config.topology.records_per_transaction
        ghost = s.ghost._replace(outcomes=(*s.ghost.outcomes, ClientTxn(i, txn, outcome == "committed" and not empty)))
        return s._replace(ghost=ghost)

    def _drain(
        self, s: TxnSystemState, c: tp.TxnClient, i: int, q: int
    ) -> tuple[prod.Producer, ProduceRequest] | None:
        if c.state not in (tp.C.IN_TRANSACTION, tp.C.COMMITTING, tp.C.ABORTING, tp.C.ABORTABLE_ERROR):
            return None
        if self.tv < 2 and q not in c.added:
            return None
        # requests of batches expired in flight still count against max.in.flight (NetworkClient.InFlightRequests)
        messages = [(env.connection, env.body) for env in s.network]
        if self.flags.held_requests_count_in_flight:
            # so does one the partition leader holds back while it verifies the transaction (KIP-890,
            # AddPartitionsToTxnManager keeps the request until the coordinator answers) or parks in its purgatory:
            # the client reads no answer to it before that, so it stays in InFlightRequests
            me = f"p{i}"
            messages += [
                (env.body.produce.connection, env.body.produce)
                for env in s.network
                if isinstance(env.body, (VerifyPartitionRequest, VerifyPartitionResponse)) and env.body.client == me
            ]
            messages += [(r.connection, r) for ld in s.partitions for r in ld.pending]
        orphans = prod.orphan_requests(c.data, i, messages)
        return prod.drain(c.data, i, q, self.producer_config, self.flags.sequence_space, orphans)

    def _send_produce(self, s: TxnSystemState, i: int, q: int) -> Result:
        c = s.clients[i]
        drained = self._drain(s, c, i, q)
        if drained is None:  # no branch: only a trace read from a file names a disabled action
            return None
        data, request = drained
        s = _judge_fatal_sender(s, i, "ProduceRequest")
        fresh = any(b.records == request.records and not b.has_sequence for b in c.data.batches)
        if fresh and c.state in (tp.C.ABORTABLE_ERROR, tp.C.ABORTING):  # no branch: the violation side (a defect's)
            s = _flagged(s, undrained_batch_sent(i, c.state, request))  # no mutate: ghost observer
        request = request._replace(transactional=True)
        added = c.added if q in c.added else tuple(sorted((*c.added, q)))
        c = c._replace(data=data, added=added)
        env = net.Envelope(f"p{i}", BROKER, data.connection, request)
        events = ("produce", "resend") if any(b.attempts > 1 for b in data.batches if b.in_flight) else ("produce",)
        return s._replace(clients=_at(s.clients, i, c), network=net.send(s.network, env)), events

    # -- delivery ------------------------------------------------------------------------------

    def _deliver(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if env not in net.channel_heads(s.network):  # no branch: only a trace read from a file names a disabled action
            return None
        return self._receive(s, env, True)

    def _append_failure(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if (  # no branch: only a trace read from a file names a disabled action
            not self._append_may_fail(env) or env not in net.channel_heads(s.network) or self._stale_append(s, env)
        ):
            return None
        return self._receive(s, env, False)

    def _may_answer(self, env: net.Envelope, error: str) -> bool:
        """Whether the ``__transaction_state`` leader may answer the append in flight ``env`` with ``error`` (other
        than the default fault's, :data:`tc.APPEND_FAULT_ERROR`): a record too large only when it carries the
        transaction's partitions (:data:`APPEND_TOO_LARGE`)."""
        if error == tc.APPEND_FAULT_ERROR or not isinstance(env.body, tc.TxnLogAppend):
            return False
        return error not in APPEND_TOO_LARGE or bool(env.body.transit.partitions)

    def _append_error(self, s: TxnSystemState, env: net.Envelope, error: str) -> Result:
        """Fault ``append_failure`` with a leader error the scenario names (``[faults] append_errors``, with
        ``pending_transitions``): the append's callback translates it (:data:`tc.APPEND_ERROR_ANSWERS`,
        ``TransactionStateManager.appendTransactionToLog``'s ``updateCacheCallback``, apache/kafka
        ``core/src/main/scala/kafka/coordinator/transaction/TransactionStateManager.scala`` @1eb7644349cb) and the
        request's callback answers the client or, for a CompleteCommit/CompleteAbort, retries COORDINATOR_NOT_AVAILABLE
        and skips NOT_COORDINATOR (``TransactionMarkerChannelManager.tryAppendToLog``).  A lost leadership or log
        directory (:data:`APPEND_LEADER_MOVES`) then moves the coordinator, as :meth:`_append_not_leader` does."""
        if (  # no branch: only a trace read from a file names a disabled action
            error not in self.config.faults.append_errors
            or not self._may_answer(env, error)
            or env not in net.channel_heads(s.network)
            or self._stale_append(s, env)
        ):
            return None
        network = net.remove(s.network, env)
        if network is None:  # no branch: the envelope was checked to be a channel head
            return None
        failed = self._on_log_append(s._replace(network=network), env.body, False, leader_error=error)
        assert failed is not None  # a failed append's callback always applies
        if error not in APPEND_LEADER_MOVES:
            return failed[0], (f"txn_log_append_error:{error}", *failed[1])
        moved = self._failover(failed[0])
        assert moved is not None  # _failover always applies
        return moved[0], (f"txn_log_append_error:{error}", "txn_log_append_not_leader", *failed[1], *moved[1])

    def _append_may_fail(self, env: net.Envelope) -> bool:
        """Whether delivering ``env`` appends to ``__transaction_state`` (so ``AppendFailure`` may fail it): a
        request to the coordinator (or, with ``pending_transitions``, an append in flight) -- not a TV1
        verification, which only reads the coordinator's cache (``handleVerifyPartitionsInTransaction``)."""
        return env.dst == self._append_target and not (isinstance(env.body, VerifyPartitionRequest) and self.tv < 2)

    def _stale_append(self, s: TxnSystemState, env: net.Envelope) -> bool:
        """An append a deposed coordinator sent before the failover (its envelope carries its coordinator epoch)."""
        return isinstance(env.body, tc.TxnLogAppend) and env.connection != s.coordinator_epoch

    def _receive(self, s: TxnSystemState, env: net.Envelope, append_ok: bool) -> Result:
        network = net.remove(s.network, env)
        if network is None:  # no branch: the envelope was checked to be a channel head
            return None
        s = s._replace(network=network)
        body = env.body
        if isinstance(body, tc.TxnLogAppend):
            stale = self._stale_append(s, env)
            if stale and self.flags.append_callback_checks_coordinator_epoch:
                return self._on_stale_log_append(s, body)
            return self._on_log_append(s, body, append_ok, stale)
        if isinstance(body, ProduceRequest):
            return self._on_produce(s, env, body)
        if isinstance(body, VerifyPartitionRequest):
            return self._on_verify_partition(s, body, append_ok)
        if isinstance(body, VerifyPartitionResponse):
            return self._on_verification_answer(s, body)
        if isinstance(body, WriteTxnMarkersRequest):
            return self._on_marker(s, body)
        if isinstance(body, (InitProducerIdRequest, AddPartitionsToTxnRequest, EndTxnRequest)):
            if self.security is not None:
                return authz.coordinator_request(self, s, env, body, append_ok)
            return self._on_coordinator_request(s, env, body, append_ok)
        i = body.producer
        c = s.clients[i]
        if isinstance(body, ProduceResponse):
            if body.connection != c.data.connection:
                return s, ("stale_response",)
            before, old_state, owed_before = c.data, c.state, c.epoch_bump_required
            c, _acked, events = tp.handle_produce_response(
                c,
                body,
                self.producer_config,
                self.tv,
                self.kip_360,
                self.flags.failed_batch_bump_outside_completion,
                self.flags.txn_failed_batch_adjusts_sequences,
                self.flags.producer_knows_storage_error,
                self.flags.failed_batch_makes_transaction_abortable,
                self.flags.produce_retries_only_retriable,
            )
            s = s._replace(clients=_at(s.clients, i, c))
            retries = self.producer_config.retries
            early = premature_batch_failure(before, c.data, body, retries, i)
            early += needless_batch_retries(before, c.data, body, retries, i)
            early += restamps_misread(before, c.data, body, retries, c.state == tp.C.FATAL_ERROR)
            late = late_ack_misread(before, c.data, body, s.partitions[body.partition].log)
            if late is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
                s = _flagged(s, late)  # no mutate: ghost observer (records the bad step for the properties)
            if early:  # no branch: the violation side, only a defect takes it (batch_failures_explained)
                s = _flagged(s, *early)  # no mutate: ghost observer (records the bad step for the properties)
            if "batch_failed" in events:
                label = unexpected_batch_failure_reaction(
                    body.error,
                    old_state,
                    c.state,
                    c.fenced,
                    self.kip_360,
                    i,
                    (c.epoch_bump_required, self.tv),
                    owed_before,
                )
                if label is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
                    s = _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)
            return s, events
        txn = c.txn
        old = c
        flags = self.flags
        resolve, unexpected_add = flags.txn_resolve_sequences, flags.add_partitions_unexpected_abortable
        c, outcome, events = tp.handle_txn_response(c, body, self.tv, self.kip_360, resolve, unexpected_add)
        s = s._replace(clients=_at(s.clients, i, c))
        if body.connection != old.tc_connection and c != old:  # no branch: the violation side (a defect's)
            s = _flagged(s, stale_response_read(i, body))  # no mutate: ghost observer (client_reacts_as_kafka)
        if "stale_response" not in events:
            kind = type(body).__name__.removesuffix("Response")
            # a client-side epoch bump after the transaction: KIP-360 without TV2 (under TV2 the coordinator bumps)
            bump = old.epoch_bump_required and self.kip_360 and self.tv < 2
            owed = (old.epoch_bump_required, c.epoch_bump_required, self.tv)
            label = unexpected_reaction(kind, body.error, old.state, c.state, c.fenced, self.kip_360, i, bump, owed)
            if label is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
                s = _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)
        return self._record_outcome(s, i, txn, outcome), events

    def _on_produce(self, s: TxnSystemState, env: net.Envelope, req: ProduceRequest) -> Result:
        if self.security is not None or env.src == authz.ADVERSARY:
            denied = authz.deny_produce(self, s, env, req)
            if denied is not None:
                return denied
        leader = s.partitions[req.partition]
        verification = "NONE"
        events: tuple[str, ...] = ()
        if self.round_trip and part.txn_produce_needs_verification(leader, req, self.flags):
            return self._start_verification(s, env, req)
        if part.txn_produce_needs_verification(leader, req, self.flags):
            s, verification, events = self._coordinator_verifies(s, self._verification_tid(s, env, req), req, True)
        before = s.partitions[req.partition]
        leader, response, pevents = part.handle_txn_produce(before, req, self.flags, verification)
        s = s._replace(partitions=_at(s.partitions, req.partition, leader))
        wrong = unexpected_txn_answer(
            before,
            leader,
            req,
            verification,
            "verification" in events,
            response.error,
            response.base_offset,
            self.flags.sequence_space,
            self.flags.partition_verification or self.tv >= 2,
            inline=True,  # no mutate: the judge's input (txn_produce_answer_per_kafka), not a rule
        )
        if wrong is not None:  # no branch: the violation side, only a defect takes it (txn_produce_answer_per_kafka)
            s = _flagged(s, f"produce_answer:{wrong}")  # no mutate: ghost observer (records the bad step)
        s, seen = _judge_sequence_refusal(s, env.src, req, response.error)
        s = s._replace(network=net.send(s.network, net.Envelope(BROKER, env.src, env.connection, response)))
        return s, (*events, *pevents, *seen)

    def _start_verification(self, s: TxnSystemState, env: net.Envelope, req: ProduceRequest) -> Result:
        """The first half of a verified Produce: the leader holds the batch back, creates (or finds) the producer
        id's verification entry and asks the coordinator (``ReplicaManager.handleProduceAppend`` ->
        ``maybeStartTransactionVerificationForPartitions`` -> ``AddPartitionsToTxnManager.verifyTransaction``,
        Kafka trunk ``1eb7644349cb``).  The request travels on the leader's own connection to the coordinator
        (:data:`VERIFICATION_CONNECTION`); a failover answers it NOT_COORDINATOR (:meth:`_failover`), a connection
        reset NETWORK_EXCEPTION (:meth:`_verifications_failed`)."""
        q = req.partition
        needless = needless_verification(
            s.partitions[q],
            req,
            self.flags.sequence_space,
            self.flags.partition_verification or self.tv >= 2,  # no mutate: the judge's input, not a rule
        )
        if needless is not None:  # no branch: the violation side, only a defect takes it (txn_produce_answer_per_kafka)
            s = _flagged(s, f"produce_answer:{needless}")  # no mutate: ghost observer (records the bad step)
        leader, guard = part.start_transaction_verification(
            s.partitions[q], req.producer_id, req.producer_epoch, self.tv >= 2, self.flags.verification_guard_fresh
        )
        tid = self._verification_tid(s, env, req)
        ask = VerifyPartitionRequest(env.src, req, tid, guard, leader.leader_epoch, len(leader.log))
        s = s._replace(
            partitions=_at(s.partitions, q, leader),
            network=net.send(s.network, net.Envelope(BROKER, COORDINATOR, VERIFICATION_CONNECTION, ask)),
        )
        return s, ("verification_started",)

    def _on_verify_partition(self, s: TxnSystemState, ask: VerifyPartitionRequest, append_ok: bool) -> Result:
        """The coordinator's half: ``handleVerifyPartitionsInTransaction`` (TV1, verifyOnly: nothing written) or,
        under TV2, ``handleAddPartitionsToTransaction`` for the partition (an append to ``__transaction_state``
        that may fail: COORDINATOR_NOT_AVAILABLE).  The answer goes back to the leader's callback."""
        s, error, events = self._coordinator_verifies(s, ask.transactional_id, ask.produce, append_ok)
        answer = _verification_answer(ask, error)
        env = net.Envelope(COORDINATOR, BROKER, VERIFICATION_CONNECTION, answer)
        s = s._replace(network=net.send(s.network, env))
        return s, (*events, f"verification:{error}")

    def _coordinator_verifies(
        self, s: TxnSystemState, t: int, req: ProduceRequest, append_ok: bool
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """The coordinator's answer to a leader's verification of ``req`` for transactional id ``t`` (-1: an unknown
        id an adversary names): ``handleVerifyPartitionsInTransaction`` under TV1, ``handleAddPartitionsToTransaction``
        (installed, its append succeeding with ``append_ok``) under TV2; the error is judged against Kafka's."""
        md = s.coordinator[t] if t >= 0 else None
        events: tuple[str, ...] = ()
        target: str | None = None
        moved: tc.TransactionMetadata | None = None
        kind = "AddPartitionsToTxn" if self.tv >= 2 else "VerifyPartition"
        if s.loading and self.flags.loading_answers_load_in_progress:
            # getTransactionState first: the leader's verification waits for the load like a client's request
            error = Errors.COORDINATOR_LOAD_IN_PROGRESS
            ask = Ask(kind, md, req.producer_id, req.producer_epoch, False, (req.partition,), self.tv, self.cc, True)
            return self._judge_table(s, ask, error, None, append_ok), error, ("verification", "coordinator_loading")
        if self.tv >= 2:
            partitions = (req.partition,)
            out = tc.handle_add_partitions(md, req.producer_id, req.producer_epoch, partitions, append_ok, self.cc)
            if t >= 0:
                s, events = self._apply_coordinator(s, t, out)
            error, target, moved = out.error, _moved_to(out), _moved(out)
        else:
            error = tc.handle_verify_partition(md, req.producer_id, req.producer_epoch, req.partition)
        s = self._judge_error(s, kind, error, md, req.producer_id, req.producer_epoch, append_ok)
        ask = Ask(kind, md, req.producer_id, req.producer_epoch, False, (req.partition,), self.tv, self.cc, s.loading)
        s = self._judge_table(s, ask, error, target, append_ok, moved)
        return s, error, (*events, "verification")

    def _on_verification_answer(
        self, s: TxnSystemState, answer: VerifyPartitionResponse
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        """The leader's callback (``postVerificationCallback``): answer a refusal, or append the batch if its guard
        still holds (:func:`part.append_verified_txn_batch`), and respond to the producer."""
        req = answer.produce
        before = s.partitions[req.partition]
        leader, response, events = part.append_verified_txn_batch(
            before, req, self.flags, answer.error, answer.guard, answer.leader_epoch
        )
        s = s._replace(partitions=_at(s.partitions, req.partition, leader))
        wrong = unexpected_verified_answer(
            before, leader, answer, response.error, response.base_offset, self.flags.sequence_space, self.tv >= 2
        )
        if wrong is not None:  # no branch: the violation side, only a defect takes it (txn_produce_answer_per_kafka)
            s = _flagged(s, f"produce_answer:{wrong}")  # no mutate: ghost observer (records the bad step)
        s, seen = _judge_sequence_refusal(s, answer.client, req, response.error)
        events = (*events, *seen)
        env = net.Envelope(BROKER, answer.client, req.connection, response)
        mine = (e for e in before.log[answer.log_end :] if e.producer_id == req.producer_id)
        if any(e.control for e in mine):  # no branch: an observer's event (a marker landed since it started)
            events = ("verification_overtaken_by_marker", *events)  # no mutate: observer (a sometimes witness)
        return s._replace(network=net.send(s.network, env)), ("verification_answered", *events)

    def _verifications_failed(self, s: TxnSystemState, env: net.Envelope, error: str) -> Result:
        """A connection reset between the leader and the coordinator: the callback of every verification whose
        request or answer was on it runs with ``error``.  The coordinator's markers on the same connection are
        not lost (the coordinator re-sends them: markers are never dropped in the model)."""
        ends = {env.src, env.dst}
        lost = tuple(
            e
            for e in s.network
            if {e.src, e.dst} == ends
            and e.connection == env.connection
            and isinstance(e.body, (VerifyPartitionRequest, VerifyPartitionResponse))
        )
        s = s._replace(network=tuple(e for e in s.network if e not in lost))
        events: tuple[str, ...] = ("connection_reset",)
        for e in lost:
            s, more = self._on_verification_answer(s, _verification_answer(e.body, error))
            events = (*events, *more)
        return s, events

    def _verification_tid(self, s: TxnSystemState, env: net.Envelope, req: ProduceRequest) -> int:
        """The transactional id whose coordinator entry verifies a batch: the one the Produce request names.

        ``KafkaApis.handleProduceRequest`` passes ``produceRequest.transactionalId()`` on, and the leader's
        ``AddPartitionsToTxnManager.verifyTransaction`` asks the coordinator about that id (apache/kafka trunk
        ``1eb7644349cb``, ``ReplicaManager.scala``): the entry is looked up by transactional id, not producer id.  An
        honest client names its own (``TxnClient.transactional_id``) also when its producer id is stale -- another
        instance re-initialised the id under a new producer id -- and meets that entry's current state (TV2: a pending
        transition answers CONCURRENT_TRANSACTIONS before the producer id is compared, KAFKA-18660); the adversary
        names its own, whatever producer id it forged."""
        if env.src == authz.ADVERSARY:
            return authz.claimed_transactional_id_index(self, s)
        return s.clients[self._client_of(env.src)].transactional_id

    def _on_coordinator_request(self, s: TxnSystemState, env: net.Envelope, req: Any, append_ok: bool) -> Result:
        t = req.transactional_id
        md = s.coordinator[t]
        if s.loading and self.flags.loading_answers_load_in_progress:
            return self._answer_loading(s, env, req, md)
        append: bool | None = tc.APPEND_IN_FLIGHT if self.pending else append_ok
        if isinstance(req, InitProducerIdRequest):
            out = tc.handle_init_producer_id(
                md, t, req.producer_id, req.producer_epoch, s.next_producer_id, self.cc, append
            )
        elif isinstance(req, AddPartitionsToTxnRequest):
            out = tc.handle_add_partitions(md, req.producer_id, req.producer_epoch, req.partitions, append, self.cc)
        else:
            out = tc.handle_end_txn(
                md, req.producer_id, req.producer_epoch, req.committed, s.next_producer_id, self.cc, append
            )
        kind = type(req).__name__.removesuffix("Request")
        if (  # no mutate: ghost observer (the excuse healthy_producer_not_failed reads)
            kind == "EndTxn"
            and out.error == Errors.INVALID_PRODUCER_ID_MAPPING
            and md is not None
            and md.pending_state
            and req.producer_id == md.next_producer_id
        ):
            s = _known_failure(s, f"rotating_pid_mapping:{req.producer}:{req.producer_id}")
        s = self._judge_error(s, kind, out.error, md, req.producer_id, req.producer_epoch, append_ok)
        committed, parts = getattr(req, "committed", False), getattr(req, "partitions", ())
        ask = Ask(kind, md, req.producer_id, req.producer_epoch, committed, parts, self.tv, self.cc, s.loading)
        s = self._judge_table(s, ask, out.error, _moved_to(out), append, _moved(out))
        if out.transit is not None:
            fence = "fence_prepared" in out.events and md is not None
            append_msg = tc.TxnLogAppend(
                t, "fence" if fence else "client", out.transit, req, env.src, md.producer_epoch if fence and md else -1
            )
            return self._prepare(s, t, out, append_msg)
        s, events = self._apply_coordinator(s, t, out)
        s = self._respond(s, t, env.src, req, out.error, out.producer_id, out.producer_epoch)
        return s, events

    def _answer_loading(self, s: TxnSystemState, env: net.Envelope, req: Any, md: Any) -> Result:
        """``getTransactionState`` while the id's partition is in ``loadingPartitions``: every handler answers
        COORDINATOR_LOAD_IN_PROGRESS before it looks at the entry (``TransactionCoordinator.scala``
        @1eb7644349cb), which the client retries (``TransactionManager``)."""
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS
        kind = type(req).__name__.removesuffix("Request")
        committed, parts = getattr(req, "committed", False), getattr(req, "partitions", ())
        ask = Ask(kind, md, req.producer_id, req.producer_epoch, committed, parts, self.tv, self.cc, s.loading)
        s = self._judge_table(s, ask, error, None, tc.APPEND_IN_FLIGHT)
        s = self._respond(s, req.transactional_id, env.src, req, error, -1, -1)
        return s, ("coordinator_loading", f"error:{error}")

    def _judge_error(
        self, s: TxnSystemState, kind: str, error: str, md: Any, pid: int, epoch: int, append_ok: bool
    ) -> TxnSystemState:
        """Record (ghost) an error Kafka's coordinator cannot return for ``kind`` in the state ``md`` the
        request found (:func:`~keos.model.coordinator.transaction.response_errors.unexpected_error`)."""
        label = unexpected_error(kind, error, md, pid, epoch, append_ok, self.tv)
        if label is None:  # no branch: the other side is a violation, only a defect takes it
            return s
        return _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)

    def _judge_table(
        self, s: TxnSystemState, ask: Ask, error: str, target: str | None, append: bool | None, moved: Any = None
    ) -> TxnSystemState:
        """Record (ghost) an answer or a transition other than Kafka's answer table's for the (request, state) pair
        (:func:`~keos.model.coordinator.transaction.answer_table.table_mismatch`); ``moved``: the metadata written
        or prepared, whose producer id and epochs are judged too."""
        label = table_mismatch(ask, error, target, append, moved)
        if label is None:  # no branch: the other side is a violation, only a defect takes it
            return s
        return _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)

    def _response(self, req: Any, error: str, pid: int, epoch: int) -> Any:
        """The response to a coordinator request, of the request's own kind (InitProducerId, AddPartitionsToTxn,
        EndTxn; a subclass adds its own, :meth:`EosSystem._response`).  A request of another kind is a model
        error, never answered as an EndTxn: the old instance's answers at emigration (:meth:`_emigrate`) and the
        new one's COORDINATOR_LOAD_IN_PROGRESS (:meth:`_answer_loading`) take every request the coordinator has."""
        if isinstance(req, InitProducerIdRequest):
            return InitProducerIdResponse(req.producer, req.connection, error, pid, epoch)
        if isinstance(req, AddPartitionsToTxnRequest):
            return AddPartitionsToTxnResponse(req.producer, req.connection, error, req.partitions)
        if isinstance(req, EndTxnRequest):
            return EndTxnResponse(req.producer, req.connection, error, pid, epoch)
        raise ModelError(f"no response of the coordinator to a {type(req).__name__}")  # unreachable: a model error

    def _answer(self, req: Any, error: str, pid: int, epoch: int) -> Any:
        """:meth:`_response`, checked: a response of another kind than its request is a model error."""
        response = self._response(req, error, pid, epoch)
        if type(response).__name__.removesuffix("Response") != type(req).__name__.removesuffix("Request"):
            raise ModelError(f"a {type(req).__name__} answered with a {type(response).__name__}")  # no mutate: contract
        return response

    def _respond(
        self, s: TxnSystemState, t: int, dst: str, req: Any, error: str, pid: int, epoch: int
    ) -> TxnSystemState:
        """Send the response (none to the adversary, which ignores answers); an unlogged NONE is ghost-recorded."""
        env = net.Envelope(COORDINATOR, dst, req.connection, self._answer(req, error, pid, epoch))
        s = s if dst == authz.ADVERSARY else s._replace(network=net.send(s.network, env))
        if error != "NONE":
            return s
        labels: list[str] = []
        problem = unlogged_ack(req, pid, epoch, s.txn_log[t])
        if problem is not None:  # no branch: the violation side, only a defect takes it (acknowledged_after_logged)
            labels.append(f"unlogged_ack:{problem}")
        exhausted = tc.is_epoch_exhausted(getattr(req, "producer_epoch", -1), self.cc)
        stale = stale_init_answer(req, pid, epoch, s.txn_log[t], exhausted)
        if stale is not None:  # no branch: the violation side, only a defect takes it (stale_init_fenced)
            labels.append(f"stale_init:{stale}")
        foreign = unheld_ack(req, s.txn_log[t], self.tv, exhausted)
        if foreign is not None:  # no branch: the violation side, only a defect takes it (acknowledged_to_holder)
            labels.append(f"foreign_ack:{foreign}")
        if not labels:  # no branch: the other side is a violation, only a defect takes it
            return s
        return _flagged(s, *labels)  # no mutate: ghost observer (records the bad step for the properties)

    def _prepare(
        self, s: TxnSystemState, t: int, out: tc.Outcome, append: tc.TxnLogAppend
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        """A prepared transition: the cache entry with its ``pendingState``, the append sent to the log partition."""
        s = s._replace(coordinator=_at(s.coordinator, t, out.metadata))
        if out.used_fresh_pid and self.flags.producer_id_block_advances:
            s = s._replace(next_producer_id=s.next_producer_id + 1)
        env = net.Envelope(COORDINATOR, TXN_LOG, s.coordinator_epoch, append)
        return s._replace(network=net.send(s.network, env)), (*out.events, "txn_log_append")

    def _on_stale_log_append(self, s: TxnSystemState, a: tc.TxnLogAppend) -> Result:
        """The callback of an append a deposed coordinator sent before the failover (``loading_window``).

        The ``__transaction_state`` leader moved with the failover, so the append fails NOT_LEADER_OR_FOLLOWER
        (the new leader's log never had it: the new coordinator loads without it), which
        ``appendTransactionToLog`` translates to NOT_COORDINATOR -- or, for an append replicated before the
        leadership moved (``a.replicated``: the new coordinator loaded it, :meth:`_failover_replicated`), the
        leader answers NONE and the success branch's ``getTransactionState`` / coordinator-epoch check answers
        NOT_COORDINATOR without ``completeTransitionTo``; the old instance removed the partition's
        entries at emigration (``removeTransactionsForTxnTopicPartition``), so nothing of the cache moves --
        the entry there is the new instance's.  The client's request is answered NOT_COORDINATOR (it looks the
        coordinator up again and retries); a CompleteCommit/CompleteAbort append is dropped
        (``tryAppendToLog``: "no longer the coordinator", the new instance completes the transaction itself).
        """
        log_error = Errors.NONE if a.replicated else Errors.NOT_LEADER_OR_FOLLOWER
        # NONE: getTransactionState answers NOT_COORDINATOR (the partition emigrated) -- or, had it come back,
        # the cached coordinator epoch differs: NOT_COORDINATOR either way, completeTransitionTo never runs
        answer = Errors.NOT_COORDINATOR if a.replicated else tc.append_error_answer(log_error)
        events: tuple[str, ...] = ("txn_log_append_stale", f"error:{answer}")
        if a.replicated:
            events = (*events, "txn_log_append_stale_replicated")
        if a.request is not None:
            s = self._respond(s, a.transactional_id, a.reply_to, a.request, answer, -1, -1)
        return self._judge_append(s, a, log_error, False, answer, "unchanged"), events

    def _judge_append(
        self, s: TxnSystemState, a: tc.TxnLogAppend, log_error: str, same_epoch: bool, answer: str, effect: str
    ) -> TxnSystemState:
        """Record (ghost) an append callback other than Kafka's
        (:func:`~keos.model.coordinator.transaction.answer_table.append_callback_mismatch`)."""
        label = append_callback_mismatch(a.origin, log_error, same_epoch, answer, effect)
        if label is None:  # no branch: the other side is a violation, only a defect takes it
            return s
        return _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)

    def _on_log_append(
        self, s: TxnSystemState, a: tc.TxnLogAppend, ok: bool, stale: bool = False, leader_error: str = ""
    ) -> Result:
        """The append's callback: ``completeTransitionTo`` and the request's own callback, or the failure's.

        ``TransactionStateManager.appendTransactionToLog`` (``updateCacheCallback``), then per origin:
        the client's response; for PrepareCommit/PrepareAbort ``sendTxnMarkersCallback`` (``prepareComplete``,
        the response, ``addTxnMarkersToSend``); for CompleteCommit/CompleteAbort nothing more
        (``TransactionMarkerChannelManager.tryAppendToLog``); for Dead the entry leaves the cache.
        """
        t = a.transactional_id
        md = s.coordinator[t]
        lost = stale and not a.replicated
        failure = leader_error or tc.APPEND_FAULT_ERROR
        log_error = Errors.NOT_LEADER_OR_FOLLOWER if lost else Errors.NONE if ok else failure
        if not ok:
            answer = tc.append_error_answer(log_error)
            failed = self._log_append_failed(s, a, md, answer)
            after = failed[0].coordinator[t]
            effect = "unchanged" if after == md else "reset" if after is not None and not after.pending_state else "?"
            return self._judge_append(failed[0], a, log_error, not stale, answer, effect), failed[1]
        prepared = s.txn_log[t]
        out = tc.complete_transit(md, a.transit, a.origin == "fence")
        events: tuple[str, ...] = ("txn_log_appended", *out.events)
        if out.error != "NONE":  # unreachable: one append in flight per id (prepare waits for no pending state)
            if a.request is not None:
                s = self._respond(s, t, a.reply_to, a.request, out.error, -1, -1)
            return self._judge_append(s, a, log_error, not stale, out.error, "unchanged"), events
        s = self._judge_append(s, a, log_error, not stale, Errors.NONE, "complete")
        s = s._replace(coordinator=_at(s.coordinator, t, out.metadata), txn_log=_at(s.txn_log, t, out.written))
        if md is not None and a.origin in ("fence", "timeout"):
            fenced = md._replace(producer_epoch=a.fenced_epoch) if a.fenced_epoch >= 0 else md  # no mutate: ghost
            s = self._record_fence(s, fenced)  # no mutate: ghost observer (zombie_fencing's record of fences)
        if a.origin == "complete" and md is not None:
            full = prepared.partitions if prepared is not None else ()
            committed = md.state == TransactionState.PREPARE_COMMIT
            completion = Completion(t, md.producer_id, md.producer_epoch, committed, full)
            s = s._replace(ghost=s.ghost._replace(completions=(*s.ghost.completions, completion)))
        new = out.metadata
        if new is not None and new.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            # sendTxnMarkersCallback: prepareComplete, answer the client, then addTxnMarkersToSend
            if a.request is not None:
                error = "NONE" if a.origin == "client" else "CONCURRENT_TRANSACTIONS"
                pid, epoch = tc.end_txn_answer(new, self.cc)
                s = self._respond(s, t, a.reply_to, a.request, error, pid, epoch)
                events = (*events, f"error:{error}") if error != "NONE" else events
            new = tc.prepare_complete(new)
            s = s._replace(coordinator=_at(s.coordinator, t, new))
            s, more = self._send_markers(s, t, new)
            return s, (*events, *more)
        if a.request is not None:
            s = self._respond(s, t, a.reply_to, a.request, "NONE", out.producer_id, out.producer_epoch)
        return s, events

    def _log_append_failed(
        self, s: TxnSystemState, a: tc.TxnLogAppend, md: tc.TransactionMetadata | None, answer: str
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        """The append's failure callback: the leader's error translated (:func:`tc.append_error_answer`; the
        ``AppendFailure`` fault is a shrunk ISR, NOT_ENOUGH_REPLICAS -> COORDINATOR_NOT_AVAILABLE), the pending
        state reset and the error answered (KAFKA-5351); a fence keeps its bump (KAFKA-9666);
        CompleteCommit/CompleteAbort keeps its pending state and is appended again (``retryOnError``,
        ``txnLogAppendRetryQueue``, KAFKA-5416)."""
        t = a.transactional_id
        events: tuple[str, ...] = ("txn_log_append_failed",)
        if a.origin == "complete" and answer != Errors.COORDINATOR_NOT_AVAILABLE and (
            self.flags.complete_not_coordinator_skipped
        ):
            # tryAppendToLog: NOT_COORDINATOR is "no longer the coordinator ... skip writing" (retryOnError is only
            # COORDINATOR_NOT_AVAILABLE, so the callback reset the pending state); the next coordinator completes it
            if md is not None:
                s = s._replace(coordinator=_at(s.coordinator, t, md._replace(pending_state="")))
            return s, (*events, "complete_append_skipped")
        if a.origin == "complete":
            if (  # no branch: taken only under the weakened variant complete_retry_resets_pending
                not self.flags.complete_retry_keeps_pending and md is not None
            ):
                s = s._replace(coordinator=_at(s.coordinator, t, md._replace(pending_state="")))
            env = net.Envelope(COORDINATOR, TXN_LOG, s.coordinator_epoch, a)
            return s._replace(network=net.send(s.network, env)), (*events, "txn_log_append_retried")
        if a.origin == "expire":
            # removeFromCacheCallback's failure branch resets the pending Dead (KAFKA-7519, PR #5820)
            keep = not self.flags.expiry_failure_resets_pending
            failed = None if md is None else md if keep else md._replace(pending_state="")
        else:
            failed = tc.abort_transit(md, a.transit, self.cc, a.fenced_epoch)
        s = s._replace(coordinator=_at(s.coordinator, t, failed))
        if a.request is not None:
            s = self._respond(s, t, a.reply_to, a.request, answer, -1, -1)
            events = (*events, f"error:{answer}")
        return s, events

    def _apply_coordinator(self, s: TxnSystemState, t: int, out: tc.Outcome) -> tuple[TxnSystemState, tuple[str, ...]]:
        """Install a handler's outcome: cache, log, pid allocation, fences, markers."""
        old = s.coordinator[t]
        s = s._replace(coordinator=_at(s.coordinator, t, out.metadata))
        if out.used_fresh_pid and self.flags.producer_id_block_advances:
            s = s._replace(next_producer_id=s.next_producer_id + 1)
        events = out.events
        if out.wrote:
            s = s._replace(txn_log=_at(s.txn_log, t, out.written))
        if "fence" in events and out.wrote and old is not None:
            s = self._record_fence(s, old)  # no mutate: ghost observer (zombie_fencing's record of fences)
        md = out.metadata
        if (
            out.wrote
            and md is not None
            and md.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)
        ):
            # sendTxnMarkersCallback calls prepareComplete before the markers go out: CompleteCommit/CompleteAbort
            # is pending while they are written, so every request meanwhile is CONCURRENT_TRANSACTIONS
            md = tc.prepare_complete(md)
            s = s._replace(coordinator=_at(s.coordinator, t, md))
            s, more = self._send_markers(s, t, md)
            events = (*events, *more)
        return s, events

    def _record_fence(self, s: TxnSystemState, old: tc.TransactionMetadata) -> TxnSystemState:
        fence = Fence(old.producer_id, old.producer_epoch, tuple(len(p.log) for p in s.partitions))
        return s._replace(ghost=s.ghost._replace(fences=(*s.ghost.fences, fence)))  # no mutate: ghost (zombie_fencing)

    def _send_markers(
        self, s: TxnSystemState, t: int, md: tc.TransactionMetadata
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        committed = md.state == TransactionState.PREPARE_COMMIT
        network = s.network
        for q in md.partitions:
            marker = WriteTxnMarkersRequest(t, md.producer_id, md.producer_epoch, s.coordinator_epoch, committed, q)
            network = net.send(network, net.Envelope(COORDINATOR, BROKER, s.coordinator_epoch, marker))
        s = s._replace(network=network)
        if md.partitions and self.flags.complete_after_markers:
            # addTxnMarkersToSend: transactionsWithPendingMarkers.put(transactionalId, pendingCompleteTxn) -- a
            # reloaded Prepare* replaces the entry an earlier coordinator epoch of this broker left
            entry = PendingCompleteTxn(t, s.coordinator_epoch, md.producer_id, md.producer_epoch)
            return s._replace(pending_markers=_pending_put(s.pending_markers, entry)), ("markers_sent",)
        return self._complete(s, t, md)

    def _complete(
        self, s: TxnSystemState, t: int, md: tc.TransactionMetadata
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        """``maybeWriteTxnCompletion``: every marker is written, CompleteCommit/CompleteAbort is appended."""
        if self.pending and self.flags.complete_written_to_log:
            append = tc.TxnLogAppend(t, "complete", tc.complete_target(md, self.cc))
            env = net.Envelope(COORDINATOR, TXN_LOG, s.coordinator_epoch, append)
            return s._replace(network=net.send(s.network, env)), ("txn_log_append",)
        prepared = s.txn_log[t]
        out = tc.complete_transaction(md._replace(partitions=(), pending_state=""), True, self.cc)
        if (  # no branch: taken only under the weakened variant complete_without_transition
            not self.flags.complete_written_to_log and out.wrote
        ):
            # weakened: the cache moves to Complete* without the transaction-log append (no transition made)
            out = out._replace(wrote=False, events=tuple(e for e in out.events if not e.startswith("txn:")))
        full = prepared.partitions if prepared is not None else ()
        completion = Completion(t, md.producer_id, md.producer_epoch, md.state == TransactionState.PREPARE_COMMIT, full)
        s = s._replace(ghost=s.ghost._replace(completions=(*s.ghost.completions, completion)))
        s, events = self._apply_coordinator(s, t, out)
        return s, events

    def _write_marker(
        self, s: TxnSystemState, m: WriteTxnMarkersRequest
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """The partition leader appends the marker (the group coordinator's partition: :mod:`model.systems.eos`)."""
        leader, error, events = append_end_txn_marker(
            s.partitions[m.partition],
            m,
            self.tv,
            self.cc.markers,
        )
        return s._replace(partitions=_at(s.partitions, m.partition, leader)), error, events

    def _marker_log(self, s: TxnSystemState, m: WriteTxnMarkersRequest) -> part.PartitionLeader:
        """The log the marker is written to (the group's ``__consumer_offsets`` partition: :mod:`model.systems.eos`)."""
        return s.partitions[m.partition]

    def _judge_marker(
        self, s: TxnSystemState, m: WriteTxnMarkersRequest, before: part.PartitionLeader, error: str
    ) -> TxnSystemState:
        """Record (ghost) a leader's answer to a marker other than Kafka's table's
        (:func:`~keos.model.log.marker_answer_table.marker_table_mismatch`)."""
        ask = MarkerAsk(before.entry(m.producer_id), m.producer_epoch, m.coordinator_epoch, self.tv,
                        self.flags.marker_retry_same_epoch)
        label = marker_table_mismatch(ask, error, len(self._marker_log(s, m).log) > len(before.log))
        if label is None:  # no branch: the other side is a violation, only a defect takes it
            return s
        return _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)

    def _on_marker(self, s: TxnSystemState, m: WriteTxnMarkersRequest, failure: str = "NONE") -> Result:
        """The partition leader handles a marker; the coordinator handles its answer.

        ``failure`` (the ``marker_failure`` fault, one of the scenario's ``[faults] marker_errors``,
        :data:`~model.systems.transactions_records.MARKER_LEADER_ERRORS`): NOT_LEADER_OR_FOLLOWER -- the broker is
        no longer the partition's leader --, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS (the ISR below
        ``min.insync.replicas`` before the append) or KAFKA_STORAGE_ERROR (the leader's log directory failed): nothing
        is appended; NOT_ENOUGH_REPLICAS_AFTER_APPEND or REQUEST_TIMED_OUT -- the leader appended the control batch
        but the ISR shrank, or the replication wait timed out, before it was replicated (``DelayedProduce``), so the
        append stands and the error is answered.  Each is retriable for the coordinator, which re-enqueues the
        marker under the same coordinator epoch (``TransactionMarkerRequestCompletionHandler``); the re-sent
        marker of an appended one arrives at the stored epoch with no transaction open, the KAFKA-19999 retry.
        """
        events: tuple[str, ...]
        if failure != "NONE" and failure not in MARKER_ERRORS_AFTER_APPEND:
            error = failure
            events = ("marker_not_leader" if failure == "NOT_LEADER_OR_FOLLOWER" else "marker_not_written",
                      f"error:{failure}")
        else:
            before = self._marker_log(s, m)
            s, error, events = self._write_marker(s, m)
            s = self._judge_marker(s, m, before, error)
            if failure != "NONE" and error == "NONE":
                error, events = failure, (*events, "marker_not_replicated", f"error:{failure}")
        if m.coordinator_epoch != s.coordinator_epoch:
            # TransactionMarkerRequestCompletionHandler: the coordinator epoch changed, "cancel sending
            # transaction markers": removeMarkersForTxn(pendingCompleteTxn) removes the entry of the transaction
            # this marker was sent for (KAFKA-16352); flag off, Kafka before 3.8: the transactional id's entry
            sent = PendingCompleteTxn(m.transactional_id, m.coordinator_epoch, m.producer_id, m.producer_epoch)
            own = self.flags.marker_cancel_checks_transaction
            kept = tuple(
                e for e in s.pending_markers if e.transactional_id != m.transactional_id or (own and e != sent)
            )
            return s._replace(pending_markers=kept), (*events, "stale_coordinator_marker")
        retry = self.flags.marker_retriable_errors_retried
        if (  # no branch: taken only under the weakened variant no_kafka_9749_fix (Kafka before 2.6 threw on it)
            error == Errors.KAFKA_STORAGE_ERROR and not self.flags.marker_storage_error_retried
        ):
            retry = False
        md, go_on = tc.handle_marker_response(
            s.coordinator[m.transactional_id], m.producer_id, m.producer_epoch, m.partition, error, retry
        )
        s = s._replace(coordinator=_at(s.coordinator, m.transactional_id, md))
        if not go_on:  # no branch: taken only under the weakened variants no_kafka_19999_fix and others
            return s, (*events, "markers_dropped") if error != "NONE" else events
        if error != "NONE":
            # addTxnMarkersToBrokerQueue: the marker goes to the partition's (new) leader again
            env = net.Envelope(COORDINATOR, BROKER, m.coordinator_epoch, m)
            return s._replace(network=net.send(s.network, env)), (*events, "marker_retried")
        if md is not None and not md.partitions and self.flags.complete_after_markers:
            # maybeWriteTxnCompletion: only for a transactional id with an entry in transactionsWithPendingMarkers,
            # removed before CompleteCommit/CompleteAbort is written
            left = tuple(e for e in s.pending_markers if e.transactional_id != m.transactional_id)
            if (  # no branch: taken only under the weakened variant no_kafka_16352_fix
                len(left) == len(s.pending_markers)
            ):
                return s, (*events, "no_pending_completion")
            s, more = self._complete(s._replace(pending_markers=left), m.transactional_id, md)
            events = (*events, *more)
        return s, events

    def _marker_failure(self, s: TxnSystemState, env: net.Envelope, error: str) -> Result:
        if (  # no branch: only a trace read from a file names a disabled action
            not isinstance(env.body, WriteTxnMarkersRequest) or env not in net.channel_heads(s.network)
        ):
            return None
        network = net.remove(s.network, env)
        if network is None:  # no branch: the envelope was checked to be a channel head
            return None
        return self._on_marker(s._replace(network=network), env.body, error)

    def _marker_not_leader(self, s: TxnSystemState, env: net.Envelope) -> Result:
        return self._marker_failure(s, env, "NOT_LEADER_OR_FOLLOWER")

    def _marker_not_replicated(self, s: TxnSystemState, env: net.Envelope) -> Result:
        return self._marker_failure(s, env, "NOT_ENOUGH_REPLICAS_AFTER_APPEND")

    def _marker_error(self, s: TxnSystemState, env: net.Envelope, error: str) -> Result:
        if error not in self.config.faults.marker_errors:  # no branch: only a trace read from a file names it
            return None
        return self._marker_failure(s, env, error)

    # -- faults ----------------------------------------------------------------------------------

    def _may_fail_produce(self, s: TxnSystemState, env: net.Envelope, error: str) -> bool:
        """Whether the leader may answer a client's Produce ``env`` with ``error`` (:meth:`_produce_error`): a late
        error only where the answer leaves this step (not a Produce held back for the verification round trip)."""
        req = env.body
        if not isinstance(req, ProduceRequest) or not env.src.startswith("p") or env.dst != BROKER:
            return False
        held = self.round_trip and part.txn_produce_needs_verification(s.partitions[req.partition], req, self.flags)
        return error not in PRODUCE_ERRORS_AFTER_APPEND or not held

    def _produce_error(self, s: TxnSystemState, env: net.Envelope, error: str) -> Result:
        """Fault ``produce_error``: the data partition's leader answers a transactional Produce with a leader error
        of ``[faults] produce_errors`` (:data:`~model.systems.transactions_records.PRODUCE_LEADER_ERRORS`, apache/kafka
        ``ReplicaManager.appendRecords`` / ``handleProduceAppend`` @1eb7644349cb).  NOT_LEADER_OR_FOLLOWER,
        NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR refuse it before the append: nothing is written, the client retries
        (``InvalidMetadataException`` / ``RetriableException``, ``Sender.canRetry``) and the retry must be appended.
        REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND come from the produce purgatory after the local append
        (``DelayedProduce``): the batch is in the log -- the retry must be answered as a duplicate, and a batch the
        client gives up (``retries``) makes the transaction abortable, whose abort marker must then cover the written
        batch.  A leader that answers at once (a sequence or verification refusal) answers as it would."""
        if (  # no branch: only a trace read from a file names a disabled action
            error not in self.config.faults.produce_errors
            or env not in net.channel_heads(s.network)
            or not self._may_fail_produce(s, env, error)
        ):
            return None
        req = env.body
        if error not in PRODUCE_ERRORS_AFTER_APPEND:
            network = net.remove(s.network, env)
            assert network is not None  # the envelope was checked to be a channel head
            answer = ProduceResponse(req.producer, req.connection, req.partition, req.producer_epoch,
                                     req.base_sequence, error, -1, req.correlation_id)
            network = net.send(network, net.Envelope(BROKER, env.src, env.connection, answer))
            return s._replace(network=network), (f"produce_refused:{error}",)
        delivered = self._receive(s, env, True)
        assert delivered is not None  # a channel head's delivery always applies
        s, events = delivered
        last = s.network[-1] if s.network else None
        if last is None or not isinstance(last.body, ProduceResponse) or last.body.error != Errors.NONE:
            return s, (*events, "produce_answered_at_once")
        late = last._replace(body=last.body._replace(error=error))
        return s._replace(network=(*s.network[:-1], late)), (*events, f"produce_error_after_append:{error}")

    def _client_of(self, name: str) -> int:
        return int(name[1:])

    def _drop(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if (  # no branch: only a trace read from a file names a disabled action
            env not in net.channel_heads(s.network) or not self._droppable(env)
        ):
            return None
        if isinstance(env.body, (VerifyPartitionRequest, VerifyPartitionResponse)):
            # AddPartitionsToTxnManager: the leader's connection to the coordinator was lost; every verification
            # on it is called back with NETWORK_EXCEPTION (AddPartitionsToTxnHandler.onComplete, disconnected)
            return self._verifications_failed(s, env, Errors.NETWORK_EXCEPTION)
        network = net.reset_connection(s.network, env)
        if network is None:  # no branch: the envelope was checked to be a channel head
            return None
        s = s._replace(network=network)
        client = env.src if env.src.startswith("p") else env.dst
        i = self._client_of(client)
        c = s.clients[i]
        if COORDINATOR in (env.src, env.dst):
            if env.connection == c.tc_connection:
                c = tp.txn_request_timeout(c) or c._replace(tc_connection=c.tc_connection + 1)
            return s._replace(clients=_at(s.clients, i, c)), ("connection_reset",)
        if env.connection == c.data.connection:
            # wasDisconnected: each in-flight batch is answered NETWORK_EXCEPTION (Sender.handleProduceResponse)
            outcome = prod.request_timeout(c.data, self.producer_config, Errors.NETWORK_EXCEPTION, transactional=True)
            data = outcome.producer if outcome else prod.disconnect(c.data)
            c = c._replace(data=data)
            if outcome is not None and (outcome.failed or not self.flags.retried_batch_keeps_transaction):
                # Sender.failBatch -> handleFailedBatch only for a batch given up; off: weakened variant
                # retried_batch_aborts_transaction
                s = self._timed_out_batches(s, i, c, Errors.NETWORK_EXCEPTION)
                c = s.clients[i]
        return s._replace(clients=_at(s.clients, i, c)), ("connection_reset",)

    def _timed_out_batches(self, s: TxnSystemState, i: int, c: tp.TxnClient, error: str) -> TxnSystemState:
        """Producer ``i`` (``c``, before classification) gave up batches on a closed connection: a failed batch
        (``error``: NETWORK_EXCEPTION for a reset connection, REQUEST_TIMED_OUT for ``request.timeout.ms``)."""
        old, owed_before = c.state, c.epoch_bump_required
        c = tp.classify_batch_failure(c, error, self.tv, self.kip_360, self.flags.failed_batch_bump_outside_completion)
        s = s._replace(clients=_at(s.clients, i, c))
        label = unexpected_batch_failure_reaction(
            error, old, c.state, c.fenced, self.kip_360, i, (c.epoch_bump_required, self.tv), owed_before
        )
        if label is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
            s = _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)
        return s

    def _request_timeout(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        events: tuple[str, ...] = ()
        if c.inflight:
            c = tp.txn_request_timeout(c) or c
            events = ("txn_request_timeout",)
        # wasTimedOut: each in-flight batch is answered REQUEST_TIMED_OUT (Sender.handleProduceResponse)
        outcome = prod.request_timeout(c.data, self.producer_config, Errors.REQUEST_TIMED_OUT, transactional=True)
        if outcome is not None:
            c = c._replace(data=outcome.producer)
            events = (*events, *outcome.events)
            if outcome.failed or not self.flags.retried_batch_keeps_transaction:
                s = self._timed_out_batches(s, i, c, Errors.REQUEST_TIMED_OUT)
                c = s.clients[i]
        if not events:  # no branch: only a trace read from a file names a disabled action
            return None
        return s._replace(clients=_at(s.clients, i, c)), events

    def _expire_batch(self, s: TxnSystemState, i: int, q: int) -> Result:
        c = s.clients[i]
        outcome = prod.expire_batch(c.data, q, self.producer_config)
        if outcome is None:  # no branch: only a trace read from a file names a disabled action
            return None
        old_state, owed_before = c.state, c.epoch_bump_required
        outside = self.flags.failed_batch_bump_outside_completion
        c = tp.classify_batch_failure(c._replace(data=outcome.producer), "TIMEOUT", self.tv, self.kip_360, outside)
        s = s._replace(clients=_at(s.clients, i, c))
        label = unexpected_batch_failure_reaction(
            "TIMEOUT", old_state, c.state, c.fenced, self.kip_360, i, (c.epoch_bump_required, self.tv), owed_before
        )
        if label is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
            s = _flagged(s, label)  # no mutate: ghost observer (records the bad step for the properties)
        return s, outcome.events

    def _txn_timeout(self, s: TxnSystemState, t: int) -> Result:
        old = s.coordinator[t]
        mode = tc.APPEND_IN_FLIGHT if self.pending else True
        out = None if s.loading else tc.timeout_abort(old, self.cc, mode, s.next_producer_id)
        if out is None:  # no branch: only a trace read from a file names a disabled action
            return None
        out = out._replace(events=("timeout_abort", *out.events))
        ask = Ask("TimeoutAbort", old, -1, -1, False, (), self.tv, self.cc, s.loading)
        s = self._judge_table(s, ask, out.error, _moved_to(out), mode, _moved(out))
        if out.transit is not None and old is not None:
            fence = "fence_prepared" in out.events
            append = tc.TxnLogAppend(t, "fence" if fence else "timeout", out.transit, None, "", old.producer_epoch)
            return self._prepare(s, t, out, append)
        if (  # no branch: taken only under the weakened variant timeout_abort_without_epoch_bump
            out.wrote and "fence" not in out.events and old is not None
        ):
            s = self._record_fence(s, old)  # no mutate: ghost observer (zombie_fencing's record of fences)
        return self._apply_coordinator(s, t, out)

    def _expire_tid(self, s: TxnSystemState, t: int) -> Result:
        if not self._may_expire(s, t):  # no branch: only a trace read from a file names a disabled action
            return None
        out = tc.expire_transactional_id(s.coordinator[t], tc.APPEND_IN_FLIGHT if self.pending else True)
        assert out is not None  # _may_expire
        if out.transit is not None:
            return self._prepare(s, t, out, tc.TxnLogAppend(t, "expire", out.transit))
        s = s._replace(coordinator=_at(s.coordinator, t, None), txn_log=_at(s.txn_log, t, None))
        return s, out.events

    def _failover(self, s: TxnSystemState) -> Result:
        """A new coordinator loads the log at epoch + 1 and re-sends Prepare* markers (``TransactionStateManager``).

        ``loadTransactionsForTxnTopicPartition``: every PrepareCommit/PrepareAbort entry gets its
        ``prepareComplete`` (CompleteCommit/CompleteAbort pending) and its markers at the new coordinator
        epoch.  What the old coordinator had in flight is gone: requests and responses on its connections
        and, with ``pending_transitions``, its appends (here never replicated, so absent from the new leader's
        log; :meth:`_failover_replicated` is the failover that finds them replicated).
        """
        epoch = s.coordinator_epoch + 1
        # the v1+ (flexible) records carry lastProducerEpoch as a tagged field (KAFKA-20357), the v0 ones cannot
        restore = self.flags.log_restores_last_producer_epoch and self.tv >= 1
        cache = tuple(None if v is None else tc.from_log_value(t, v, restore) for t, v in enumerate(s.txn_log))
        if self.loading_window:
            return self._emigrate(s._replace(coordinator_epoch=epoch, coordinator=cache, loading=True))
        lost = any(e.dst == TXN_LOG and not e.body.replicated for e in s.network)
        asked = [e.body for e in s.network if e.dst == COORDINATOR and isinstance(e.body, VerifyPartitionRequest)]
        network = net.without(s.network, lambda e: e.dst == COORDINATOR or (e.src == COORDINATOR and e.dst != BROKER))
        # the leader's verifications the old coordinator had not answered come back NOT_COORDINATOR (it no longer
        # owns the transaction-log partition); the callbacks run when they arrive
        for ask in asked:
            answer = _verification_answer(ask, Errors.NOT_COORDINATOR)
            network = net.send(network, net.Envelope(COORDINATOR, BROKER, VERIFICATION_CONNECTION, answer))
        clients = tuple(
            c._replace(inflight=False, tc_connection=c.tc_connection + 1) if c.inflight else c for c in s.clients
        )
        s = s._replace(coordinator_epoch=epoch, coordinator=cache, network=network, clients=clients)
        events: tuple[str, ...] = ("coordinator_failover", "txn_log_append_lost") if lost else ("coordinator_failover",)
        s, more = self._complete_loaded(s)
        return s, (*events, *more)

    def _replicable(self, state: TxnSystemState) -> bool:
        """Whether the current coordinator has an append in flight that a failover may find replicated."""
        return any(self._current_append(state, e) for e in state.network)

    def _current_append(self, state: TxnSystemState, env: net.Envelope) -> bool:
        """``env`` is an append to ``__transaction_state`` the current coordinator instance sent."""
        current = env.connection == state.coordinator_epoch
        return env.dst == TXN_LOG and current and isinstance(env.body, tc.TxnLogAppend)

    def _failover_replicated(self, s: TxnSystemState) -> Result:
        """A failover after the old leader's appends in flight reached the follower that becomes the new leader.

        ``TransactionStateManager.appendTransactionToLog`` appends with acks=-1 to the leader's log; a follower
        may fetch the record before the leadership moves, so the new leader's log holds it whether or not the
        old leader's produce purgatory saw it acknowledged (apache/kafka ``TransactionStateManager.scala``
        @1eb7644349cb).  The new coordinator's ``loadTransactionsForTxnTopicPartition`` reads it: every append in
        flight from the current instance lands in the log, in the partition's order (a tombstone removes the
        id), then the failover proceeds as :meth:`_failover`.  Their callbacks, where the loading window keeps
        them in flight, answer NOT_COORDINATOR (:meth:`_on_stale_log_append`): the client is told nothing
        happened although the new coordinator has its transition (it retries, and the new instance answers the
        retry from the loaded state).  A fence or a completion that lands is recorded as the callback records it.
        """
        if not self._replicable(s):  # no branch: only a trace read from a file names a disabled action
            return None
        log, ghost = s.txn_log, s.ghost
        network: list[net.Envelope] = []
        appended: list[tuple[int, tc.TxnLogAppend]] = []
        for e in s.network:
            if not self._current_append(s, e):
                network.append(e)
                continue
            a = e.body
            t = a.transactional_id
            md, prepared = s.coordinator[t], log[t]
            log = _at(log, t, None if a.transit.state == TransactionState.DEAD else tc.to_log_value(a.transit))
            if md is not None and a.origin in ("fence", "timeout"):
                fenced = md._replace(producer_epoch=a.fenced_epoch) if a.fenced_epoch >= 0 else md  # no mutate: ghost
                ghost = self._record_fence(s._replace(ghost=ghost), fenced).ghost  # no mutate: ghost observer
            if md is not None and a.origin == "complete":
                full = prepared.partitions if prepared is not None else ()
                committed = md.state == TransactionState.PREPARE_COMMIT
                completion = Completion(t, md.producer_id, md.producer_epoch, committed, full)
                ghost = ghost._replace(completions=(*ghost.completions, completion))  # no mutate: ghost observer
            network.append(e._replace(body=a._replace(replicated=True)))
            appended.append((t, a))
        s = s._replace(txn_log=log, ghost=ghost, network=tuple(network))
        result = self._failover(s)
        assert result is not None  # _failover always applies
        new = result[0]
        # the witness reads the effect, not the intent: the new coordinator loaded a replicated transition
        loaded = any(  # no mutate: reachability witness (a sometimes partner), not a rule
            a.transit.state != TransactionState.DEAD
            and new.txn_log[t] == tc.to_log_value(a.transit)
            and getattr(new.coordinator[t], "producer_epoch", None) == a.transit.producer_epoch
            for t, a in appended
        )
        witness = ("txn_log_append_replicated_loaded",) if loaded else ()
        return new, ("txn_log_append_replicated_at_failover", *witness, *result[1])

    def _append_not_leader(self, s: TxnSystemState, env: net.Envelope) -> Result:
        """The ``__transaction_state`` leadership moves with an append of the current instance in flight, whose
        callback runs before the emigration: the leader completes the delayed produce NOT_LEADER_OR_FOLLOWER when it
        becomes a follower, while the cache still holds this coordinator epoch (``onResignation`` removes the
        partition's entries afterwards, on the scheduler thread).  ``appendTransactionToLog``'s callback then
        translates it to NOT_COORDINATOR under the *same* epoch: the pending state is reset and the client answered
        NOT_COORDINATOR; a CompleteCommit/CompleteAbort append is not retried (``retryOnError`` only takes
        COORDINATOR_NOT_AVAILABLE; ``tryAppendToLog`` skips it: "no longer the coordinator").  Then the failover
        (:meth:`_failover`) runs: the new coordinator loads the log without the record and completes the
        transaction itself (apache/kafka ``TransactionStateManager.scala``, ``TransactionMarkerChannelManager.scala``
        @1eb7644349cb).
        """
        if (  # no branch: only a trace read from a file names a disabled action
            env not in net.channel_heads(s.network) or not self._current_append(s, env)
        ):
            return None
        network = net.remove(s.network, env)
        if network is None:  # no branch: the envelope was checked to be a channel head
            return None
        error = Errors.NOT_LEADER_OR_FOLLOWER
        failed = self._on_log_append(s._replace(network=network), env.body, False, leader_error=error)
        assert failed is not None  # a failed append's callback always applies
        moved = self._failover(failed[0])
        assert moved is not None  # _failover always applies
        return moved[0], ("txn_log_append_not_leader", *failed[1], *moved[1])

    def _complete_loaded(self, s: TxnSystemState) -> tuple[TxnSystemState, tuple[str, ...]]:
        """The end of ``loadTransactionsForTxnTopicPartition``: every PrepareCommit/PrepareAbort entry gets its
        ``prepareComplete`` and its markers at the new coordinator epoch (``addTxnMarkersToSend``)."""
        events: tuple[str, ...] = ()
        for t, v in enumerate(s.txn_log):
            md = s.coordinator[t]
            if needs_markers(v) and md is not None:
                md = tc.prepare_complete(md)
                s = s._replace(coordinator=_at(s.coordinator, t, md))
                s, more = self._send_markers(s, t, md)
                events = (*events, *more)
        return s, events

    def _emigrate(self, s: TxnSystemState) -> Result:
        """A failover that opens the loading window (``loading_window``): ``s`` is already the new coordinator's
        (epoch + 1, its cache read from the log, still loading).

        The old instance ran ``removeTransactionsForTxnTopicPartition``: it answers every request still in flight
        to it NOT_COORDINATOR (``getTransactionState`` for a partition it no longer owns; the leaders'
        verifications too) and drops its queued markers (``removeMarkersForTxnTopicPartition``; the model's
        markers already sent stay in flight and their answers are ignored, the coordinator epoch moved on).
        Its appends to ``__transaction_state`` stay in flight and call back later
        (:meth:`_on_stale_log_append`); its answers already sent still arrive.  The new instance answers
        COORDINATOR_LOAD_IN_PROGRESS until :meth:`_load_transactions`.
        """
        inflight = [e for e in s.network if e.dst == COORDINATOR]
        network = net.without(s.network, lambda e: e.dst == COORDINATOR)
        for e in inflight:
            if isinstance(e.body, VerifyPartitionRequest):  # unreachable: verification_round_trip excludes pending
                answer = _verification_answer(e.body, Errors.NOT_COORDINATOR)
                network = net.send(network, net.Envelope(COORDINATOR, BROKER, VERIFICATION_CONNECTION, answer))
            else:
                response = self._answer(e.body, Errors.NOT_COORDINATOR, -1, -1)
                network = net.send(network, net.Envelope(COORDINATOR, e.src, e.connection, response))
        events: tuple[str, ...] = ("coordinator_failover", "coordinator_loading_started")
        if any(e.dst == TXN_LOG for e in network):
            events = (*events, "txn_log_append_in_flight_at_failover")
        return s._replace(network=network), events

    def _reload(self, s: TxnSystemState) -> Result:
        """The coordinator's own broker is elected again for ``__transaction_state`` (``coordinator_reload``).

        In KRaft the broker's ``BrokerMetadataPublisher`` calls ``TransactionCoordinator.onElection`` for a partition
        whose leader epoch moved while this broker stayed its leader (since KAFKA-15468, PR #15139, Kafka 3.7, only a
        leader-epoch bump does; a partition-epoch bump of an ISR change no longer reloads), with no ``onResignation``
        in between (apache/kafka ``TransactionCoordinator.scala``, ``BrokerMetadataPublisher.scala`` @1eb7644349cb).
        ``onElection`` first drops the markers queued for the partition (``removeMarkersForTxnTopicPartition``) and
        then loads it at the new coordinator epoch: the partition enters ``loadingPartitions`` and every request --
        those already in flight on the clients' unchanged connections too, and the partition leaders'
        verifications -- is answered COORDINATOR_LOAD_IN_PROGRESS (:meth:`_answer_loading`) until the load
        replaces the cached metadata with the log's (``addLoadedTransactionsToCache``) and re-sends the markers of
        every Prepare* transaction (:meth:`_load_transactions`).  Appends the coordinator sent under the old epoch
        still call back and find the epoch changed (:meth:`_on_stale_log_append`); markers already sent are
        answered under the old coordinator epoch.  Unlike :meth:`_emigrate` nobody answers NOT_COORDINATOR and no
        client reconnects: the same broker keeps the partition.

        ``ProtocolFlags.txn_reload_replaces_cache`` off (weakened variant ``no_kafka_9307_fix``, Kafka before 2.5):
        ``addLoadedTransactionsToCache`` found the partition's cache entry -- always there when no resignation ran
        -- and threw ``IllegalStateException`` on the scheduler thread before ``loadingPartitions.remove``: the
        partition loads forever and the coordinator answers COORDINATOR_LOAD_IN_PROGRESS to everything.
        """
        if not self.reload_in_place or s.loading:  # no branch: only a trace read from a file names a disabled action
            return None
        restore = self.flags.log_restores_last_producer_epoch and self.tv >= 1
        cache = tuple(None if v is None else tc.from_log_value(t, v, restore) for t, v in enumerate(s.txn_log))
        failed = not self.flags.txn_reload_replaces_cache
        s = s._replace(coordinator_epoch=s.coordinator_epoch + 1, coordinator=cache, loading=True, load_failed=failed)
        events: tuple[str, ...] = ("coordinator_reloaded", "coordinator_loading_started")
        if any(e.dst == TXN_LOG for e in s.network):
            events = (*events, "txn_log_append_in_flight_at_reload")
        if any(e.dst == COORDINATOR for e in s.network):
            events = (*events, "coordinator_request_in_flight_at_reload")
        return s, events

    def _load_transactions(self, s: TxnSystemState) -> Result:
        """The new coordinator's load completes (``loadTransactionsForTxnTopicPartition``: the partition leaves
        ``loadingPartitions``, Prepare* transactions get their markers re-sent)."""
        if not s.loading or s.load_failed:  # no branch: only a trace read from a file names a disabled action
            return None
        s, events = self._complete_loaded(s._replace(loading=False))
        return s, ("coordinator_load_completed", *events)

    def _expire_producer_state(self, s: TxnSystemState, q: int, producer_id: int) -> Result:
        """``removeExpiredProducers`` on partition ``q``'s leader drops ``producer_id``."""
        if (  # no branch: only a trace read from a file names a disabled action
            not self.config.topology.producer_id_expiration or type(producer_id) is not int
        ):
            return None
        keep = self.flags.producer_expiry_keeps_open_transactions
        result = expire_producer(s.partitions[q], producer_id, keep)
        if result is None:  # no branch: only a trace read from a file names a disabled action
            return None
        leader, events = result
        return s._replace(partitions=_at(s.partitions, q, leader)), events

    def _elect_partition_leader(self, s: TxnSystemState, q: int) -> Result:
        """Data partition ``q``'s leadership moves to an in-sync follower (``Partition.makeLeader``): the producer
        state and aborted index it built replicating the log, no verification state, the next leader epoch
        (:func:`model.log.leader_election.elect_follower`)."""
        if type(q) is not int or not 0 <= q < self.config.topology.partitions:  # no branch: a trace read from a file
            return None
        old = s.partitions[q]
        events: tuple[str, ...] = ("partition_leader_elected",)
        if any(e.current_txn_first_offset >= 0 for e in old.producers):  # no mutate: observer (a sometimes witness)
            events = (*events, "leader_elected_mid_transaction")
        if old.aborted:  # no mutate: observer (a sometimes witness)
            events = (*events, "leader_elected_with_aborted_range")
        if old.verifying:  # no mutate: observer (a sometimes witness)
            events = (*events, "leader_elected_mid_verification")
        return s._replace(partitions=_at(s.partitions, q, elect_follower(old, self.flags))), events

    # -- the read_committed consumers (``[transactions] read_committed_consumer``, :mod:`model.log.fetch`) --------

    def _consume(self, s: TxnSystemState, q: int, result: fetch_path.LogReadResult, path: str) -> Result:
        """The consumer takes one Fetch response of partition ``q``: ``CompletedFetch`` filters it, the records go
        to the application and the position moves to the end of the last batch the response carried."""
        f = s.fetchers[q]
        leader = s.partitions[q]
        got = filter_fetched(leader, result.fetch_offset, result.upper_bound, result.aborted)
        f = f._replace(position=result.upper_bound, parked=False, delivered=(*f.delivered, *got))
        events: tuple[str, ...] = (f"{path}_returned_records",) if got else ()
        if len(got) < sum(len(e.records) for e in leader.log[result.fetch_offset:result.upper_bound]
                          if not e.control):  # no mutate: observer (a sometimes witness)
            events = (*events, "fetch_filtered_aborted")
        return s._replace(fetchers=_at(s.fetchers, q, f)), events

    def _fetch_params(self, position: int) -> fetch_path.FetchParams:
        """The consumer's Fetch of its partition: read_committed from its position, its fetch size."""
        return fetch_path.FetchParams(fetch_path.READ_COMMITTED, position, self.config.topology.consumer_fetch_batches)

    def _fetch(self, s: TxnSystemState, q: int) -> Result:
        """``ReplicaManager.fetchMessages`` answers at once: ``readFromLog`` with the request's parameters."""
        f = s.fetchers[q] if q < len(s.fetchers) else None
        params = self._fetch_params(f.position if f else 0)
        if (  # no branch: only a trace read from a file names a disabled action
            f is None or f.parked or not fetch_path.try_complete(s.partitions[q], params)
        ):
            return None
        return self._consume(s, q, fetch_path.read_from_log(s.partitions[q], params), "fetch")

    def _fetch_wait(self, s: TxnSystemState, q: int) -> Result:
        """The Fetch waits in the purgatory as a ``DelayedFetch`` holding its ``FetchParams``."""
        f = s.fetchers[q] if q < len(s.fetchers) else None
        if f is None or f.parked:  # no branch: only a trace read from a file names a disabled action
            return None
        return s._replace(fetchers=_at(s.fetchers, q, f._replace(parked=True))), ("fetch_parked",)

    def _delayed_fetch_complete(self, s: TxnSystemState, q: int) -> Result:
        """``DelayedFetch.tryComplete`` holds: ``onComplete`` reads the log again with the parked parameters."""
        f = s.fetchers[q] if q < len(s.fetchers) else None
        params = self._fetch_params(f.position if f else 0)
        if (  # no branch: only a trace read from a file names a disabled action
            f is None or not f.parked or not fetch_path.try_complete(s.partitions[q], params)
        ):
            return None
        result = fetch_path.complete_delayed_fetch(s.partitions[q], params, self.flags)
        return self._consume(s, q, result, "delayed_fetch")

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {
        "InitTransactions": _init_transactions,
        "BeginTransaction": _begin,
        "Send": _send,
        "SendRejected": _send_rejected,
        "CommitTransaction": _commit,
        "AbortTransaction": _abort,
        "SendTxnRequest": _send_txn_request,
        "SendProduce": _send_produce,
        "Deliver": _deliver,
        "DropMessage": _drop,
        "RequestTimeout": _request_timeout,
        "ExpireBatch": _expire_batch,
        "TxnTimeout": _txn_timeout,
        "AppendFailure": _append_failure,
        "AppendError": _append_error,
        "CoordinatorFailover": _failover,
        "CoordinatorReloaded": _reload,
        "CoordinatorFailoverReplicated": _failover_replicated,
        "AppendNotLeader": _append_not_leader,
        "LoadTransactions": _load_transactions,
        "ExpireTransactionalId": _expire_tid,
        "MarkerNotLeader": _marker_not_leader,
        "MarkerNotEnoughReplicasAfterAppend": _marker_not_replicated,
        "MarkerError": _marker_error,
        **ADVERSARY_HANDLERS,
        "ExpireProducerState": _expire_producer_state,
        "PartitionLeaderElection": _elect_partition_leader,
        "Fetch": _fetch,
        "FetchWait": _fetch_wait,
        "DelayedFetchComplete": _delayed_fetch_complete,
        "ProduceError": _produce_error,
    }

    # -- codec and display -------------------------------------------------------------------------

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """``{"kind": ..., <arg>: <value>}``."""
        return codec.action_to_json(action, self.ACTION_ARGS)

    def action_from_json(self, data: Any) -> Action:
        """Decode an action; raises :class:`ModelError` on malformed input."""
        return codec.action_from_json(data, self.ACTION_ARGS)

    def format_action(self, action: Action) -> str:
        """``Deliver(message=p0->tc#0:EndTxn(...))``."""
        names = self.ACTION_ARGS.get(action.kind, ())
        parts = [f"{n}={format_value(v)}" for n, v in zip(names, action.args, strict=False)]
        return f"{action.kind}({', '.join(parts)})"

    def state_to_json(self, state: TxnSystemState) -> dict[str, Any]:
        """A JSON view of the state."""
        out = codec.to_json(state)
        assert isinstance(out, dict)
        return out

    def fault_kinds(self) -> tuple[str, ...]:  # unreachable: only keos sweep asks (checker/sweep/simulate.py)
        """The fault kinds with a budget above zero (:class:`model.interface.FaultHooks`)."""
        if self.config.faults.total <= 0:
            return ()
        # txn_timeout stays listed: its budget bounds the *early* expiries, although fault_kind() calls the
        # TxnTimeout action a protocol step (a random engine then never weights it down)
        return tuple(k for k, limit in zip(TXN_FAULT_KINDS, self._limits) if limit > 0)

    def fault_kind(self, action: Action) -> str | None:
        """The fault kind ``action`` injects, ``None`` for a protocol step.

        TxnTimeout (``transaction.timeout.ms``) is a protocol step that
        fairness makes fire, although an early expiry is charged to a budget;
        the expiry timeouts (``producer.id.expiration.ms``, and
        ``transactional.id.expiration.ms`` where the scenario makes it a
        timeout action) are protocol steps.
        """
        if action.kind in PROTOCOL_TIMEOUTS or action.kind in self._timeout_actions:
            return None
        return self.FAULT_OF_ACTION.get(action.kind)

    def describe(self) -> dict[str, Any]:
        """Scenario, variant and bounds, recorded in traces."""
        cfg = self.config
        return {
            "model": self.name,
            **self._scenario_info,
            "variant": self.variant.name,
            "flags": self.flags.to_json(),
            "topology": {f.name: getattr(cfg.topology, f.name) for f in fields(cfg.topology)},
            "faults": cfg.faults.to_json(),
            "retries": cfg.retries,
            "max_producer_epoch": cfg.max_producer_epoch,
        }


def undrained_batch_sent(i: int, state: str, request: Any) -> str:  # no mutate: the judge's label
    """The label of a client that drained a never-sent batch while its transaction is failing or being aborted.

    ``Sender.maybeSendAndPollTransactionalRequest`` (trunk @1eb7644349cb) runs ``accumulator.abortUndrainedBatches``
    whenever ``TransactionManager.hasAbortableError()`` or ``isAborting()`` holds, before ``sendProducerData``
    drains anything: only batches already in flight (sequenced) are retried or awaited; a new one never leaves.
    """
    return f"client_reaction:p{i}:{state}:drained new batch {list(request.records)}"


def stale_response_read(i: int, body: Any) -> str:  # no mutate: the judge's label (client_reacts_as_kafka)
    """The label of a client that acted on an answer from a connection it had closed.

    ``NetworkClient`` completes the requests of a closed connection (request.timeout.ms, a reset, the coordinator
    found elsewhere) with a disconnection, and a response read from the socket later belongs to no request: the
    Sender never hands it to ``TransactionManager`` or to ``completeBatch``; the retry's answer is the one that
    counts (``NetworkClient.handleCompletedReceives`` / ``InFlightRequests``, trunk @1eb7644349cb).
    """
    return f"client_reaction:p{i}:{type(body).__name__}:connection {body.connection} closed:read"


def epoch_jumps(  # no mutate: the judge of epoch_bump_at_most_one (a property), not a rule
    before: Sequence[tc.TransactionMetadata | None], after: Sequence[tc.TransactionMetadata | None]
) -> list[str]:
    """Ghost labels ``epoch_jump:<tid>:<old>-><new>`` for a step that raised a cached epoch by more than one.

    Every epoch bump of the coordinator (InitProducerId, a fence, a TV2 end of
    transaction) is a single ``producerEpoch + 1`` (``TransactionMetadata.
    prepareIncrementProducerEpoch`` / ``prepareFenceProducerEpoch``); KAFKA-19367
    was a double bump in one InitProducerId.  Recorded only when it happens, so
    the state space does not grow.
    """
    out: list[str] = []
    for t, (old, new) in enumerate(zip(before, after, strict=True)):
        if new is None:
            continue
        base = -1 if old is None or old.producer_id != new.producer_id else old.producer_epoch
        if (  # no branch: the violation side, only a defect takes it (epoch_bump_at_most_one)
            new.producer_epoch > base + 1
        ):
            out.append(f"epoch_jump:{t}:{base}->{new.producer_epoch}")
    return out


def epoch_regressions(  # no mutate: the judge of producer_epoch_never_decreases (a property), not a rule
    before: Sequence[tc.TransactionMetadata | TransactionLogValue | None],
    after: Sequence[tc.TransactionMetadata | TransactionLogValue | None],
) -> list[str]:
    """Ghost labels ``epoch_regress:<tid>:<pid>:<old>-><new>`` for a step that lowered a producer id's epoch.

    For one producer id the epoch only grows: every bump is ``producerEpoch + 1``
    (``prepareIncrementProducerEpoch``, ``prepareFenceProducerEpoch``, the TV2 end of a transaction), a
    failed fence keeps its bump (KAFKA-9666), a retry keeps the epoch (``lastProducerEpoch``), and an
    exhausted epoch moves to a *new* producer id at epoch 0 -- at InitProducerId (``generateProducerId``) or
    at the TV2 completion (``nextProducerId``, ``TransactionMetadata.prepareComplete``) -- never back to 0
    under the same id, which would let a zombie's old (pid, epoch) be current again.  Applied to the
    transaction log on every step and to the cache on every step but a failover (which reloads the log).
    """
    out: list[str] = []
    for t, (old, new) in enumerate(zip(before, after, strict=True)):
        if old is None or new is None or old is new or old.producer_id != new.producer_id:
            continue
        if (  # no branch: the violation side, only a defect takes it (producer_epoch_never_decreases)
            new.producer_epoch < old.producer_epoch
        ):
            out.append(f"epoch_regress:{t}:{new.producer_id}:{old.producer_epoch}->{new.producer_epoch}")
    return out


def displaced(  # no mutate: the judge of healthy_producer_not_failed (a property), not a rule
    c: tp.TxnClient,
    md: tc.TransactionMetadata | None,
    cfg: tc.CoordinatorConfig,
    logged: TransactionLogValue | None = None,
) -> bool:
    """Whether the coordinator no longer takes client ``c`` for the producer of its transactional.id.

    It does not if the id is gone (expired), has another producer id (expired and re-created, or rotated
    without the client), or an epoch above the client's -- beyond the one bump the client's own request in
    flight may have made (an EndTxn under TV2, InitProducerId).  A zombie, a producer whose transaction timed
    out (PrepareEpochFence) and one whose late InitProducerId landed after its retry are displaced; a client
    whose own request was retried, lost or failed to append is not.

    The epoch a bump came from is read from the cache's lastProducerEpoch or, for the entry the log holds, from the
    logged value (``logged``): a coordinator that loses it on a failover (KAFKA-20357) must not hide from this judge
    that the bump was the client's own.
    """
    if md is None:
        return True
    if logged is not None and md.last_producer_epoch < 0 and (logged.producer_id, logged.producer_epoch) == (
        md.producer_id,
        md.producer_epoch,
    ):
        md = md._replace(last_producer_epoch=logged.last_producer_epoch)  # no mutate: the judge's view
    pid, epoch = c.data.producer_id, c.data.producer_epoch
    if pid < 0:  # no branch: no gate run makes fatal a client that never got a producer id
        return False
    initializing = c.inflight and c.state == tp.C.INITIALIZING
    ending = cfg.transaction_version >= 2 and c.state in (tp.C.COMMITTING, tp.C.ABORTING)
    rotated = md.producer_id != pid and md.producer_epoch == 0 and md.last_producer_epoch == epoch
    if tc.is_epoch_exhausted(epoch, cfg) and (initializing or (c.inflight and ending)) and rotated:
        # the client's own request named an exhausted epoch and rotated the producer id to a new one at epoch 0
        # whose lastProducerEpoch is the exhausted epoch it came from: a KIP-360 InitProducerId
        # (handleInitProducerId, prepareProducerIdRotation) or a TV2 EndTxn (nextProducerId, prepareComplete);
        # a retry of either names (previousProducerId, exhausted epoch) and is answered with the new id
        # (TransactionCoordinator.scala @1eb7644349cb, retryOnOverflow): the client stays the holder.
        # (previousProducerId itself is not the witness: a coordinator that forgets to record it is what
        # this judge must catch.)
        return False
    # the one bump the client's own request may have made: prepareIncrementProducerEpoch records the epoch it
    # came from as lastProducerEpoch (a TV2 EndTxn, a KIP-360 InitProducerId(pid, epoch))
    own = 1 if c.inflight and (c.state == tp.C.INITIALIZING or ending) and md.last_producer_epoch == epoch else 0
    if md.producer_id != pid:
        # another producer id: expired and re-created, or rotated by another instance (this client's own
        # rotation is handled above)
        return True
    return md.producer_epoch > epoch + own


def unexplained_state_changes(  # no mutate: the judge of coordinator_transitions_explained (a property)
    before: Sequence[tc.TransactionMetadata | None],
    after: Sequence[tc.TransactionMetadata | None],
    events: Sequence[str],
) -> list[str]:
    """Ghost labels ``unexplained:<tid>:<old>-><new>`` for a coordinator state change no transition explains.

    Every change of ``TransactionMetadata.state`` goes through ``prepareTransitionTo`` /
    ``completeTransitionTo``, each checked against ``TransactionState``'s valid previous states; the handlers
    report each as a ``txn:<from>-><to>`` event.  This checks the other direction, on every path: the chain
    of reported transitions must lead from the state before the step to the state after it (an expiry leads
    to Dead, i.e. no entry).  A handler that changes the state without a transition -- or reports a
    transition it did not make -- is caught whatever the path.  A coordinator failover reloads the cache
    from the log and is not a transition (the caller skips it).
    """
    chain = [tuple(e[4:].split("->")) for e in events if e.startswith("txn:")]
    out: list[str] = []
    for t, (old, new) in enumerate(zip(before, after, strict=True)):
        if old is new or (old is None and new is None):
            continue
        # a new entry starts Empty (TransactionMetadata's initial state); no entry after the step is Dead
        a = old.state if old is not None else TransactionState.EMPTY
        b = new.state if new is not None else TransactionState.DEAD
        if a == b:
            continue
        state = a
        for src, dst in chain:
            if (  # no branch: the violation side, only a defect takes it (coordinator_transitions_explained)
                src == state
            ):
                state = dst
        if state != b:  # no branch: the violation side, only a defect takes it (coordinator_transitions_explained)
            out.append(f"unexplained:{t}:{a}->{b}")
    return out


def fences_without_bump(  # no mutate: the judge of fence_raises_epoch (a property), not a rule
    before: Sequence[TransactionLogValue | None], after: Sequence[TransactionLogValue | None]
) -> list[str]:
    """Ghost labels ``fence_no_bump:<tid>:<epoch>`` for a fence whose PrepareAbort the log holds at no higher epoch.

    A fence (``prepareFenceProducerEpoch``) exists to move the epoch past the
    fenced producer's: the PrepareAbort it writes must carry an epoch above the
    one the log held (KAFKA-9666 keeps the bump of a failed attempt in memory,
    so the retry writes it).
    """
    out: list[str] = []
    for t, (old, new) in enumerate(zip(before, after, strict=True)):
        if old is None or new is None or new is old or new.producer_id != old.producer_id:
            continue
        if (  # no branch: the violation side, only a defect takes it (fence_raises_epoch)
            new.state == TransactionState.PREPARE_ABORT and new.producer_epoch <= old.producer_epoch
        ):
            out.append(f"fence_no_bump:{t}:{new.producer_epoch}")
    return out


def unlogged_ack(  # no mutate: the judge of acknowledged_after_logged (a property), not a rule
    req: Any, pid: int, epoch: int, logged: TransactionLogValue | None
) -> str | None:
    """Why an answer NONE to ``req`` is not backed by the transaction log's value for its id (``None``: it is).

    The coordinator answers only in the append's callback, once the record is replicated
    (``TransactionStateManager.appendTransactionToLog``, acks=-1), or from state that is logged already (a
    retry): so a failover never takes back what a client was told.  InitProducerId hands out the logged
    (pid, epoch); AddPartitionsToTxn's partitions are in the logged Ongoing transaction; EndTxn's result is
    logged as PrepareX or CompleteX, and the (pid, epoch) it names is the one the logged end completes on --
    ``newPreSendMetadata``'s: the logged ``nextProducerId`` at epoch 0 after a TV2 epoch overflow, else the
    logged pair (KIP-890: the producer continues with what EndTxn answers; KAFKA-18660, PR #18730).
    """
    name = type(req).__name__.removesuffix("Request")
    if logged is None:  # no branch: the violation side, only a defect takes it (acknowledged_after_logged)
        return f"{name}:nothing logged"
    if isinstance(req, InitProducerIdRequest):
        ok = (logged.producer_id, logged.producer_epoch) == (pid, epoch)
    elif isinstance(req, AddPartitionsToTxnRequest):
        ok = logged.state == TransactionState.ONGOING and set(req.partitions) <= set(logged.partitions)
    elif hasattr(req, "group"):  # AddOffsetsToTxn (eos): the group's __consumer_offsets partition is logged Ongoing
        ok = logged.state == TransactionState.ONGOING and tc.OFFSETS_PARTITION_BASE + req.group in logged.partitions
    else:  # EndTxn
        nxt = logged.next_producer_id
        completes_on = (nxt, 0) if nxt >= 0 else (logged.producer_id, logged.producer_epoch)
        ok = logged.state in (ENDED_COMMIT if req.committed else ENDED_ABORT) and (pid, epoch) == completes_on
    return None if ok else f"{name}:{logged.state}@{logged.producer_id}/{logged.producer_epoch}"


def unheld_ack(  # no mutate: the judge of acknowledged_to_holder (a property), not a rule
    req: Any, logged: TransactionLogValue | None, tv: int, exhausted: bool
) -> str | None:
    """Why an answer NONE to an AddPartitionsToTxn or EndTxn went to a producer that does not hold the logged
    transaction (``None``: it holds it, or ``req`` is another request).

    ``TransactionCoordinator.handleAddPartitionsToTransaction`` serves only the entry's own (producerId,
    producerEpoch); ``endTransaction`` (apache/kafka ``1eb7644349cb``) checks the producer id first
    (INVALID_PRODUCER_ID_MAPPING) and then the epoch (``isValidEpoch``, else PRODUCER_FENCED): under TV0/TV1 a
    client's epoch must equal the entry's, so what is logged after a NONE is the requester's (pid, epoch); under
    TV2 the end bumps the epoch, so the log holds (pid, epoch + 1) -- for the first EndTxn and for a retry
    (``endTxnEpochBumped``) -- or, when the requester's epoch was exhausted, the new producer id at epoch 0
    whose ``previousProducerId`` is the requester's (``retryOnOverflow``).  Any other NONE tells a zombie, an
    instance of another producer id or a stale request that it committed or aborted a transaction it does
    not own.  ``exhausted``: whether the request's epoch is exhausted (``isEpochExhausted``).
    """
    if not isinstance(req, (AddPartitionsToTxnRequest, EndTxnRequest)) or logged is None:
        return None
    x, e = req.producer_id, req.producer_epoch
    held = (logged.producer_id, logged.producer_epoch)
    if isinstance(req, AddPartitionsToTxnRequest) or tv < 2:
        ok = held == (x, e)
    else:
        ok = held == (x, e + 1) or (exhausted and logged.prev_producer_id == x and logged.producer_epoch == 0)
    name = type(req).__name__.removesuffix("Request")
    return None if ok else f"{name}({x}, {e}) answered NONE while the log holds ({held[0]}, {held[1]})"


def stale_init_answer(  # no mutate: the judge of stale_init_fenced (a property), not a rule
    req: Any, pid: int, epoch: int, logged: TransactionLogValue | None, exhausted: bool
) -> str | None:
    """Why an answer NONE to an InitProducerId naming (pid, epoch) is not one Kafka gives (``None``: it is).

    ``TransactionCoordinator.handleInitProducerId`` / ``prepareInitProducerIdTransit`` (apache/kafka
    ``1eb7644349cb``, 2024-10): a request naming (X, e) -- a KIP-360 bump -- is served only if the entry is
    new (epoch -1: answered with a new producer id at epoch 0, logged with that id as its ``prevProducerId``),
    if e is the entry's epoch (answered (X, e + 1), or at an exhausted e the first epoch of a new producer id whose
    ``prevProducerId`` is X), or if e is the ``lastProducerEpoch`` of a bump whose answer was lost (answered
    with the epoch that bump made, e + 1; at an exhausted e the rotated id at epoch 0).  Every other stale
    (X, e) is PRODUCER_FENCED: an instance holding a fenced epoch never gets the current one, nor a new
    producer id.  ``exhausted``: whether e is an exhausted epoch (``isEpochExhausted``).
    """
    if not isinstance(req, InitProducerIdRequest) or req.producer_id < 0:
        return None
    x, e = req.producer_id, req.producer_epoch
    if (pid, epoch) == (x, e + 1):
        return None
    if (
        logged is not None
        and epoch == 0
        and (  # no branch: the other side is a violation (stale_init_fenced)
            logged.prev_producer_id in (-1, pid) or (logged.prev_producer_id == x and exhausted)
        )
    ):
        return None
    return f"InitProducerId({x}, {e}) answered with ({pid}, {epoch})"


def format_value(value: Any) -> str:  # no mutate: display
    """Short Kafka-flavoured rendering of an action argument."""
    if isinstance(value, net.Envelope):
        return f"{value.src}->{value.dst}#{value.connection}:{format_value(value.body)}"
    if isinstance(value, ProduceRequest):
        recs = ",".join(prod.record_label(r) for r in value.records)
        stamp = f"pid={value.producer_id}, epoch={value.producer_epoch}, seq={value.base_sequence}"
        return f"Produce(p{value.partition}, {stamp}, [{recs}])"
    if isinstance(value, tc.TxnLogAppend):  # no branch: display; the gate formats no append of a pending run
        md = value.transit
        reply = f", answer {value.reply_to}" if value.request is not None else ""
        return (
            f"TxnLogAppend({value.origin}, tid={value.transactional_id}, {md.state}, pid={md.producer_id}, "
            f"epoch={md.producer_epoch}, partitions={list(md.partitions)}{reply})"
        )
    if isinstance(value, ProduceResponse):
        stamp = f"epoch={value.producer_epoch}, seq={value.base_sequence}"
        return f"ProduceResponse(p{value.partition}, {stamp}, {value.error})"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        fields_ = ", ".join(
            f"{k}={v}" for k, v in zip(value._fields, value, strict=True) if k not in ("producer", "connection")
        )
        return f"{type(value).__name__.removesuffix('Request')}({fields_})"
    return repr(value)
