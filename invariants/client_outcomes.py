"""What the application is told, and the coordinator's epochs: invariants a Kafka user relies on.

Client outcomes (``TransactionManager`` error classes, :data:`keos.model.clients.transactional_producer.
COORDINATOR_ERROR_CLASSES`): an application learns the fate of its producer from the exception it gets.
``ProducerFencedException`` (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH) says "another instance took over
this transactional.id: close"; any other fatal error says "something is broken".  So

* ``sole_producer_not_fenced``: a producer that is the only instance of its transactional.id ends neither
  fenced nor fatal in a run without faults -- its own retries (CONCURRENT_TRANSACTIONS, verification
  round trips) must never turn against it -- and no leader refuses its batch for sequence or epoch, but for
  the OUT_OF_ORDER_SEQUENCE_NUMBER a batch pipelined behind a missing one gets (the client retries it,
  ``TransactionManager.canRetry``), nor for its transaction's state (INVALID_TXN_STATE, TRANSACTION_ABORTABLE:
  the partition not in its transaction, the verification guard gone -- KAFKA-18575); judged by
  ``_fault_free_refusal`` in :mod:`keos.model.systems.transactions`;
* ``zombie_fenced_not_fatal``: an instance replaced by a newer one ends fenced, never with another fatal
  error (KIP-98 §Zombie fencing; KIP-588 made INVALID_PRODUCER_EPOCH on produce abortable so that the
  zombie learns it is fenced from the coordinator);
* ``no_illegal_transition_attempt``: no coordinator handler even *tries* a transition
  ``TransactionState`` forbids (Kafka logs "should never have transitioned" and throws
  IllegalStateException; the model answers UNKNOWN_SERVER_ERROR);
* ``no_unknown_server_error``: UNKNOWN_SERVER_ERROR never reaches a client (a client treats it as an
  unexpected, fatal error).
* ``client_reacts_as_kafka``: the producer's state after each coordinator answer (AddOffsetsToTxn and
  TxnOffsetCommit included) is the one
  ``TransactionManager``'s handler gives (:mod:`keos.model.clients.txn_reactions`);
* ``coordinator_errors_as_kafka``: every error the coordinator answers is one its handler can return in
  the state the request found (:mod:`keos.model.coordinator.transaction.response_errors`).

Coordinator epochs, per step (recorded in the ghost only when broken, so the state space does not grow):

* ``epoch_bump_at_most_one``: one coordinator step raises a producer epoch by at most one
  (``prepareIncrementProducerEpoch``; KAFKA-19367 was a double bump);
* ``fence_raises_epoch``: the PrepareAbort of an epoch fence is logged above the epoch the log held;
* ``producer_epoch_never_decreases``: for one producer id the logged and cached epoch never goes down (an
  exhausted epoch moves to a new producer id, it does not restart the old one at 0);
* ``cached_epoch_follows_log``: the (producer id, epoch, state, previous/next producer id) cached in
  ``TransactionMetadata`` is the logged one, and an entry leaves the cache only with its tombstone; the
  epoch may be one above the log's exactly while an epoch fence is being appended or after its append failed
  (``hasFailedEpochFence``, KAFKA-9666);
* ``stale_init_fenced``: an InitProducerId naming (pid, epoch) is answered NONE only with (pid, epoch + 1),
  the new producer id that replaced pid at an exhausted epoch, or a new entry's first epoch;
* ``acknowledged_after_logged``: an answer NONE to InitProducerId, AddPartitionsToTxn or EndTxn reports
  what the transaction log holds (the answer runs in the append's callback);
* ``acknowledged_to_holder``: AddPartitionsToTxn and EndTxn are answered NONE only to the (pid, epoch) that
  holds the logged transaction (TV2: the epoch the end bumped from, or the replaced producer id's exhausted
  epoch);
* ``epoch_within_limit``: no epoch exceeds ``Short.MAX_VALUE`` (the scenario's ``max_producer_epoch``):
  an exhausted epoch (>= ``Short.MAX_VALUE - 1``) must rotate the producer id.
"""

from __future__ import annotations

from dataclasses import replace

from keos.invariants._common import no_findings, sometimes_event
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.transaction.transaction_coordinator import TxnLogAppend
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.interface import Property
from keos.model.protocol.errors import Errors
from keos.model.systems.transactions_records import TxnConfig, TxnSystemState

__all__ = [
    "cache_ahead_of_log",
    "client_outcome_properties",
    "epochs_over_limit",
    "reused_producer_ids",
    "sole_instance_failures",
    "unknown_server_errors",
    "zombies_not_fenced",
]


def _labels(s: TxnSystemState, prefix: str) -> list[str]:
    return [b for b in s.ghost.bad_transitions if b.startswith(prefix)]


def sole_instance_failures(s: TxnSystemState) -> list[str]:
    """Producers alone on their transactional.id that are fenced or fatal in a run without faults, and the batches
    of such producers a leader refused for their sequence, epoch or transaction state (``fault_free_refusal:``,
    recorded at the step)."""
    if any(s.faults_used):
        return []
    out: list[str] = [b[len("fault_free_refusal:") :] for b in s.ghost.bad_transitions
                      if b.startswith("fault_free_refusal:")]
    for i, c in enumerate(s.clients):
        alone = sum(1 for d in s.clients if d.transactional_id == c.transactional_id) == 1
        if s.coordinator[c.transactional_id] is None:
            # transactional.id.expiration.ms removed the id while the producer sat idle (a scenario with
            # transactional_id_expiration): its next transaction is refused, and what Kafka's client makes of
            # that (INVALID_PRODUCER_ID_MAPPING) is not the promise this invariant states.
            continue
        if f"rotating_pid_mapping:{i}:{c.data.producer_id}" in s.ghost.kafka_known_failures:
            # Kafka 4.x itself (PR #18467's order): an abort naming the nextProducerId of a rotating TV2 end whose
            # markers are still written is INVALID_PRODUCER_ID_MAPPING, fatal (see healthy_producer_not_failed)
            continue
        if alone and c.state == tp.C.FATAL_ERROR:
            what = "fenced" if c.fenced else "made fatal"
            out.append(
                f"producer {i}, the only instance of transactional id {c.transactional_id}, was {what} "
                "in a run without faults"
            )
    return out


def zombies_not_fenced(s: TxnSystemState) -> list[str]:
    """Replaced instances that ended with a fatal error other than ProducerFencedException."""
    out: list[str] = []
    for i, c in enumerate(s.clients):
        if c.state != tp.C.FATAL_ERROR or c.fenced or c.data.producer_epoch < 0:
            continue
        md = s.coordinator[c.transactional_id]
        if md is None or md.producer_id != c.data.producer_id:
            # the transactional id expired, or its producer id moved on (rotated at an exhausted epoch, or
            # re-created after an expiry): Kafka answers a request naming a producer id the entry does not hold
            # INVALID_PRODUCER_ID_MAPPING, not PRODUCER_FENCED (TransactionCoordinator.endTransaction and
            # handleAddPartitionsToTransaction @1eb7644349cb), and TransactionManager treats it as
            # abortableErrorIfPossible -- the promise is not a ProducerFencedException here
            continue
        newer = [
            j
            for j, d in enumerate(s.clients)
            if j != i
            and d.transactional_id == c.transactional_id
            and d.data.producer_id == c.data.producer_id
            and d.data.producer_epoch > c.data.producer_epoch
        ]
        if newer:
            out.append(
                f"producer {i} (epoch {c.data.producer_epoch}) was replaced by producer {newer[0]} but "
                "ended fatal, not fenced"
            )
    return out


def unknown_server_errors(s: TxnSystemState) -> list[str]:
    """Responses in flight that carry UNKNOWN_SERVER_ERROR."""
    return [
        f"{type(env.body).__name__} to {env.dst} carries UNKNOWN_SERVER_ERROR"
        for env in s.network
        if getattr(env.body, "error", None) == Errors.UNKNOWN_SERVER_ERROR
    ]


def _fence_in_flight(s: TxnSystemState, t: int) -> bool:
    """Whether an epoch fence of transactional id ``t`` is being appended (its bump is cached already)."""
    return any(
        isinstance(env.body, TxnLogAppend) and env.body.origin == "fence" and env.body.transactional_id == t
        for env in s.network
    )


#: The states whose entry holds no partitions (``TransactionMetadata.completeTransitionTo``).
_NO_PARTITIONS = (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)


def cache_ahead_of_log(s: TxnSystemState) -> list[str]:
    """Transactional ids whose cached (producer id, epoch, state, previous/next producer id) is not the logged
    one, or that left the cache while the log still holds them (the tombstone's callback removes the entry).

    The cache changes only in an append's callback, so it is the log's last value -- except that an epoch
    fence caches its bump before its append (``endTransaction`` with ``isEpochFence``) and keeps it when the
    append fails (``hasFailedEpochFence``, KAFKA-9666): then the cached epoch is one above the logged one.
    An Empty or completed entry holds no partitions, cached or logged: ``completeTransitionTo`` refuses an Empty
    transit with partitions and clears ``topicPartitions`` on CompleteCommit/CompleteAbort, whose transit
    ``prepareComplete`` builds with none (``TransactionMetadata.scala`` @1eb7644349cb L449-495).
    """
    out: list[str] = []
    for t, (md, lg) in enumerate(zip(s.coordinator, s.txn_log, strict=True)):
        for where, entry in (("cached", md), ("logged", lg)):
            if entry is not None and entry.state in _NO_PARTITIONS and entry.partitions:
                out.append(f"transactional id {t}: {entry.state} {where} with partitions {list(entry.partitions)}")
        if md is None:
            # the entry leaves the cache only in the tombstone's success callback (removeFromCacheCallback)
            if lg is not None:
                out.append(f"transactional id {t}: no entry cached, {lg.state} logged")
            continue
        if lg is None:
            if md.producer_epoch >= 0:
                out.append(f"transactional id {t}: epoch {md.producer_epoch} cached but nothing logged")
            continue
        if md.producer_id != lg.producer_id:
            out.append(f"transactional id {t}: pid {md.producer_id} cached, {lg.producer_id} logged")
            continue
        allowed = 1 if md.has_failed_epoch_fence or _fence_in_flight(s, t) else 0
        if not 0 <= md.producer_epoch - lg.producer_epoch <= allowed:
            out.append(
                f"transactional id {t}: epoch {md.producer_epoch} cached, {lg.producer_epoch} logged"
                f"{' (failed or pending fence)' if allowed else ''}"
            )
        elif md.state != lg.state:
            out.append(f"transactional id {t}: {md.state} cached, {lg.state} logged")
        elif (md.prev_producer_id, md.next_producer_id) != (lg.prev_producer_id, lg.next_producer_id):
            out.append(
                f"transactional id {t}: previous/next producer id {md.prev_producer_id}/{md.next_producer_id} "
                f"cached, {lg.prev_producer_id}/{lg.next_producer_id} logged"
            )
    return out


def epochs_over_limit(limit: int, s: TxnSystemState) -> list[str]:
    """Every place an epoch lives, checked against ``Short.MAX_VALUE`` (the scenario's limit)."""
    out: list[str] = []
    for t, md in enumerate(s.coordinator):
        if md is not None and md.producer_epoch > limit:
            out.append(f"coordinator: transactional id {t} at epoch {md.producer_epoch}")
    for q, p in enumerate(s.partitions):
        out.extend(
            f"partition {q}: pid {e.producer_id} at epoch {e.producer_epoch}"
            for e in p.producers
            if e.producer_epoch > limit
        )
    for i, c in enumerate(s.clients):
        if c.data.producer_epoch > limit:
            out.append(f"producer {i} at epoch {c.data.producer_epoch}")
    return [f"{x} > {limit}" for x in out]


def reused_producer_ids(s: TxnSystemState) -> list[str]:
    """Producer ids handed out twice: one above the allocator's high mark, or one held by two transactional ids.

    ``ProducerIdManager`` hands out ids from increasing blocks, never one twice: every id a coordinator entry
    or a client holds is below the next id to allocate, and two transactional ids never share one.
    """
    out: list[str] = []
    owner: dict[int, int] = {}
    for t, md in enumerate(s.coordinator):
        if md is None:
            continue
        for pid in (md.producer_id, md.next_producer_id):
            if pid >= s.next_producer_id:
                out.append(f"transactional id {t} holds producer id {pid}, not yet allocated")
        if owner.setdefault(md.producer_id, t) != t:
            out.append(f"producer id {md.producer_id} held by transactional ids {owner[md.producer_id]} and {t}")
    out.extend(
        f"producer {i} holds producer id {c.data.producer_id}, not yet allocated"
        for i, c in enumerate(s.clients)
        if c.data.producer_id >= s.next_producer_id
    )
    return out


def client_outcome_properties(config: TxnConfig) -> tuple[Property, ...]:
    """Client-outcome and epoch properties of the transactions (and consume-transform-produce) models."""
    topo = config.topology
    limit = config.max_producer_epoch
    props: list[Property] = [
        no_findings(
            name="no_illegal_transition_attempt",
            fact="No coordinator handler attempts a TransactionState transition outside the valid-previous-state "
            "table (Kafka throws IllegalStateException; the model answers UNKNOWN_SERVER_ERROR).",
            source="TransactionState.java validPreviousStates; TransactionMetadata.prepareTransitionTo",
            catches="a handler that reaches a state it does not expect (e.g. ends a transaction from Empty "
            "outside the TV2 empty-abort rule)",
            findings=lambda s: _labels(s, "attempt:"),
            heading="attempted: ",
            separator=", ",
            partners=("txn_prepare_commit",),
        ),
        no_findings(
            name="client_transitions_valid",
            fact="Every transactional producer's state change is one TransactionManager allows (FATAL_ERROR may "
            "follow any state and is never left).",
            source="TransactionManager.State.isTransitionValid (Kafka 4.0-SNAPSHOT @1eb7644349cb); "
            "Sender.shouldHandleAuthorizationError (KAFKA-13668)",
            catches="a client that leaves FATAL_ERROR, turns an abort into an abortable error, or starts, commits "
            "or re-initializes from a state Kafka's producer throws IllegalStateException in",
            findings=lambda s: _labels(s, "client_transition:"),
            heading="invalid client transitions: ",
            separator=", ",
            partners=("txn_prepare_commit",),
        ),
        no_findings(
            name="no_unknown_server_error",
            fact="No response carries UNKNOWN_SERVER_ERROR to a client.",
            source='TransactionManager handlers (an unexpected error is fatal: "Unexpected error in ...Response")',
            catches="a coordinator or partition path that falls through to UNKNOWN_SERVER_ERROR",
            findings=unknown_server_errors,
            partners=("txn_committed",),
        ),
        no_findings(
            name="epoch_bump_at_most_one",
            fact="One coordinator step raises a producer epoch by at most one.",
            source="TransactionMetadata.prepareIncrementProducerEpoch / prepareFenceProducerEpoch; KAFKA-19367",
            catches="KAFKA-19367 (InitProducerId under TV2 bumped twice: fence plus abort) and any double bump",
            findings=lambda s: _labels(s, "epoch_jump:"),
            separator=", ",
            partners=("coordinator_bumped_epoch",),
        ),
        no_findings(
            name="producer_epoch_never_decreases",
            fact="For one producer id, the epoch the coordinator logs and caches never goes down: a bump is "
            "epoch + 1, a failed fence keeps its bump, a retry keeps the epoch, and an exhausted epoch moves to "
            "a new producer id at epoch 0.",
            source="TransactionMetadata.prepareIncrementProducerEpoch / prepareFenceProducerEpoch / "
            "prepareComplete (nextProducerId); KIP-360; KAFKA-9666",
            catches="an epoch overflow that restarts the same producer id at epoch 0, a failed fence rolled back, "
            "any path that makes a fenced (pid, epoch) current again",
            findings=lambda s: _labels(s, "epoch_regress:"),
            separator=", ",
            partners=("coordinator_bumped_epoch",),
        ),
        no_findings(
            name="cached_epoch_follows_log",
            fact="The producer id, epoch, state and previous/next producer id the coordinator caches are those "
            "of its transaction log's last value, and an id leaves the cache only once its tombstone is logged; "
            "the epoch may be one above the log's while an epoch fence is being appended or after its append "
            "failed.  An Empty or completed entry holds no partitions.",
            source="TransactionStateManager.appendTransactionToLog (the cache changes only in a successful "
            "append's callback, completeTransitionTo); KAFKA-9666 (hasFailedEpochFence)",
            catches="a coordinator that hands out (or fences with) epochs its log never recorded, or whose cache "
            "moves to a state a failover would not reload",
            findings=cache_ahead_of_log,
            partners=("coordinator_bumped_epoch",),
        ),
        no_findings(
            name="epoch_within_limit",
            fact=f"No producer epoch exceeds {limit} (Short.MAX_VALUE); an exhausted epoch rotates the producer id.",
            source="TransactionMetadata.isEpochExhausted (epoch >= Short.MAX_VALUE - 1); KIP-360; KAFKA-5283",
            catches="an epoch bump past the limit without producer-id rotation (KAFKA-19367's overflow)",
            findings=lambda s: epochs_over_limit(limit, s),
            partners=("coordinator_bumped_epoch",),
        ),
        sometimes_event("coordinator_bumped_epoch", "The coordinator bumped a producer epoch.", "epoch_bump"),
        no_findings(
            name="healthy_producer_not_failed",
            fact="A producer the coordinator still takes for the holder of its transactional.id (same producer "
            "id, no higher epoch than its own request may have made) is never made fatal or fenced, in faulty "
            "runs too: lost responses, timeouts, failed appends and failovers are retriable or abortable.",
            source="KIP-98 §Zombie fencing (only a newer instance or the coordinator's own fence fences); KIP-360 "
            "(a lost sequence is abortable); TransactionManager error classes (Kafka 3.9)",
            catches="a retry answered PRODUCER_FENCED or INVALID_TXN_STATE (KAFKA-18464 class), a coordinator "
            "that forgets a retried InitProducerId (lastProducerEpoch), an error class that ends a healthy producer",
            findings=lambda s: _labels(s, "client_failed:"),
            heading="made fatal while holding its transactional.id: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="batch_failures_explained",
            fact="A transactional producer fails a batch -- and so makes its transaction abortable -- only when "
            "Kafka's producer gives up on it: its retries are spent, or the leader answered an error whose "
            "exception is not a RetriableException. A retriable answer (NOT_ENOUGH_REPLICAS, which the leader "
            "sends for a coordinator busy with verification, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, ...) "
            "with retries left is retried, in faulty runs too.",
            source="Sender.completeBatch / canRetry (RetriableException); ReplicaManager."
            "appendRecordsWithTransactionVerification (coordinator errors -> NOT_ENOUGH_REPLICAS so that clients "
            "retry, KIP-890); org.apache.kafka.common.errors; TransactionManager.canRetry (an "
            "OUT_OF_ORDER_SEQUENCE_NUMBER an earlier batch explains is retried; the next batch's, or one on a "
            "partition with an unresolved sequence, fails) (Kafka 4.0, trunk 1eb7644349cb)",
            catches="a retriable error class dropped or misread by the client, a retry count off by one, a "
            "transaction aborted for a transient coordinator or leader condition; a batch retried where Kafka "
            "gives it up (a non-retriable error, spent retries, a refused next sequence)",
            findings=lambda s: _labels(s, "premature_failure:") + _labels(s, "needless_retry:"),
            heading="failed or retried unlike Kafka's producer: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="producer_ids_never_reused",
            fact="A producer id is handed out once: every id a coordinator entry or a producer holds was "
            "allocated (below the next id), and no two transactional ids share one.",
            source="ProducerIdManager (increasing id blocks); TransactionCoordinator.handleInitProducerId "
            "(a new entry and an epoch exhaustion take a fresh id)",
            catches="a coordinator that re-creates an expired id, or rotates an exhausted epoch, onto a producer "
            "id already in use: the partitions' producer state of the old owner then judges the new one",
            findings=reused_producer_ids,
            partners=("coordinator_bumped_epoch",),
        ),
        no_findings(
            name="acknowledged_after_logged",
            fact="The transaction coordinator answers NONE only with what its transaction log holds: the (pid, "
            "epoch) InitProducerId hands out, the partitions AddPartitionsToTxn adds to the Ongoing transaction, "
            "the PrepareX/CompleteX of EndTxn's result -- so a coordinator failover never takes back an answer.",
            source="TransactionStateManager.appendTransactionToLog (the response runs in the append's callback, "
            "after acks=-1 replication); TransactionCoordinator.endTransaction (sendTxnMarkersCallback)",
            catches="a handler that answers before its append completed or after it failed, a callback that "
            "answers for a transition it did not complete",
            findings=lambda s: _labels(s, "unlogged_ack:"),
            heading="answered without the log backing it: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="acknowledged_to_holder",
            fact="AddPartitionsToTxn and EndTxn are answered NONE only to the producer that holds the logged "
            "transaction: its own (pid, epoch) under TV0/TV1 and for AddPartitionsToTxn; under TV2 the epoch "
            "the end bumped from (a first EndTxn or its retry), or the exhausted epoch of the producer id the "
            "log's new producer id replaced -- never a zombie, another producer id or a stale request.",
            source="TransactionCoordinator.handleAddPartitionsToTransaction (producer id and epoch checks), "
            "endTransaction (INVALID_PRODUCER_ID_MAPPING, isValidEpoch: endTxnEpochBumped, retryOnOverflow), "
            "KIP-890 part 2",
            catches="a retry check broadened to a fenced epoch or a replaced producer id (a zombie told its "
            "transaction committed), a dropped producer-id check",
            findings=lambda s: _labels(s, "foreign_ack:"),
            heading="answered a producer that does not hold the transaction: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="stale_init_fenced",
            fact="An InitProducerId naming a (producer id, epoch) -- a KIP-360 bump -- is answered NONE only "
            "with the next epoch of that pair (a bump, or the retry of a bump whose answer was lost), with the "
            "first epoch of the new producer id that replaced it at an exhausted epoch, or with a new entry's "
            "first epoch; an instance holding a fenced epoch gets PRODUCER_FENCED, never the current epoch "
            "nor a new producer id.",
            source="TransactionCoordinator.handleInitProducerId (isValidProducerId) and "
            "prepareInitProducerIdTransit (epoch, lastProducerEpoch, isEpochExhausted), KIP-360",
            catches="a coordinator that lets a zombie's stale epoch through the bump, retry or rotation paths, "
            "so the zombie takes over the transactional id from the instance that replaced it",
            findings=lambda s: _labels(s, "stale_init:"),
            separator=", ",
            partners=("coordinator_bumped_epoch",),
        ),
        no_findings(
            name="coordinator_errors_as_kafka",
            fact="The transaction coordinator answers InitProducerId, AddPartitionsToTxn (and a partition "
            "leader's verification) and EndTxn only with an error its handler can return in the state the "
            "request found: CONCURRENT_TRANSACTIONS for a pending transition or a transaction being completed "
            "(InitProducerId: an open one it fences), PRODUCER_FENCED for a stale (pid, epoch), "
            "INVALID_PRODUCER_ID_MAPPING for a producer id the entry does not hold, INVALID_TXN_STATE for an "
            "EndTxn with no open transaction, COORDINATOR_NOT_AVAILABLE for a failed log append.",
            source="TransactionCoordinator.handleInitProducerId, handleAddPartitionsToTransaction, "
            "handleVerifyPartitionsInTransaction, endTransaction @1eb7644349cb (KAFKA-18464, KAFKA-18660)",
            catches="an error swapped within or across Kafka's error classes (a retriable code for a fence, a "
            "fatal one for INVALID_PRODUCER_ID_MAPPING) or answered in the wrong state, which the client's "
            "handler then turns into the wrong outcome",
            findings=lambda s: _labels(s, "unexpected_error:"),
            heading="error Kafka cannot return: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="coordinator_answers_per_kafka_table",
            fact="For every (request, state found, producer id/epoch) pair the transaction coordinator answers "
            "InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, a leader's verification and EndTxn (TV1 and TV2) "
            "with exactly the error Kafka's handler answers, and moves the transaction to exactly the state Kafka's "
            "handler prepares (Empty, Ongoing, PrepareCommit, PrepareAbort, or nothing written); the group "
            "coordinator answers a TxnOffsetCommit (verification, loading, member/generation, append, producer "
            "epoch, in that order) and a partition leader a WriteTxnMarkers (producer epoch, then coordinator "
            "epoch) with exactly Kafka's error, staging the offset or writing the control batch only on NONE.",
            source="TransactionCoordinator.handleInitProducerId, handleAddPartitionsToTransaction, "
            "handleVerifyPartitionsInTransaction, endTransaction @1eb7644349cb with KAFKA-18464 / KAFKA-18660; "
            "TransactionMetadata.prepareIncrementProducerEpoch / prepareFenceProducerEpoch / prepareAbortOrCommit; "
            "GroupCoordinatorService.commitTransactionalOffsets, CoordinatorPartitionWriter, "
            "OffsetMetadataManager.validateTransactionalOffsetCommit; ProducerAppendInfo.appendEndTxnMarker "
            "(KAFKA-19999)",
            catches="a handler whose checks run in another order or on another field than Kafka's, so it "
            "answers a legal-looking but different error (a retriable code where Kafka fences, a refusal where "
            "Kafka accepts a retry) or moves the entry along another valid edge of the state table",
            findings=lambda s: _labels(s, "answer_table:"),
            heading="answer not Kafka's: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="client_requests_match_transaction_version",
            fact="A transactional producer sends only the requests of the transaction protocol it negotiated: a "
            "transaction.version 2 client never sends AddPartitionsToTxn or AddOffsetsToTxn (the partition leader "
            "and the group coordinator add the partitions, KIP-890 part 2); a TV0/TV1 client sends a "
            "TxnOffsetCommit only after its AddOffsetsToTxn succeeded.",
            source="TransactionManager.maybeAddPartition, sendOffsetsToTransaction and AddOffsetsToTxnHandler "
            "(isTransactionV2Enabled), Kafka 4.0 @1eb7644349cb; KIP-890",
            catches="a client that reads the wrong transaction version on one path (a TV1 request sequence kept "
            "under TV2, a TxnOffsetCommit sent before the offsets partition was added under TV1) -- outcomes may "
            "be unchanged, the protocol is not",
            findings=lambda s: _labels(s, "version_request:"),
            heading="request not of the client's transaction version: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="fatal_producer_sends_nothing",
            fact="A producer in FATAL_ERROR sends no request -- no produce batch, no InitProducerId, "
            "AddPartitionsToTxn or EndTxn -- and completes no transaction: only close() is left.",
            source="Sender.runOnce (hasFatalError: maybeAbortBatches, then return), "
            "TransactionManager.transitionToFatalError @1eb7644349cb",
            catches="a Sender or TransactionManager.nextRequest that keeps going after a fatal error (a queued "
            "AddPartitionsToTxn, a retried batch or an EndTxn sent by a fenced or fatal producer)",
            findings=lambda s: _labels(s, "fatal_sent:"),
            heading="sent while fatal: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="client_reacts_as_kafka",
            fact="A transactional producer reacts to each InitProducerId, AddPartitionsToTxn and EndTxn answer as "
            "TransactionManager's handler does: a retriable error (CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_"
            "AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) re-sends the request in the same state, "
            "PRODUCER_FENCED / INVALID_PRODUCER_EPOCH fence it, TRANSACTION_ABORTABLE (and, with KIP-360, an "
            "unknown producer id) makes the transaction abortable (skipped while aborting), anything else is "
            "fatal; NONE moves it on. A failed batch (an error answer, a delivery timeout) makes it abortable, "
            "fatal only for a cluster or transactional-id authorization failure (or, without KIP-360, a lost "
            "sequence), in faulty runs too. Under transaction version < 2 the epoch bump the client then owes "
            "(epochBumpRequired) is Kafka's too: set by an unknown producer id with KIP-360 and by a failed batch "
            "outside commit/abort, kept by a retried answer. An answer that arrives on a connection the client "
            "has closed (request.timeout.ms, a reset, a coordinator failover) is never read (NetworkClient "
            "completed its request with a disconnection; the retry's answer counts). While the transaction is "
            "abortable or aborting, no batch that was never sent leaves the client (Sender: "
            "abortUndrainedBatches before any drain). A consume-transform-produce application's AddOffsetsToTxn "
            "and TxnOffsetCommit answers too: every RetriableException code is retried in the same state, "
            "PRODUCER_FENCED / INVALID_PRODUCER_EPOCH fence, TRANSACTION_ABORTABLE, a denied group and (offsets) "
            "a group metadata mismatch or FENCED_INSTANCE_ID make the transaction abortable, anything else is fatal.",
            source="TransactionManager InitProducerIdHandler, AddPartitionsToTxnHandler, EndTxnHandler, "
            "AddOffsetsToTxnHandler, TxnOffsetCommitHandler "
            "(handleResponse), transitionToAbortableError, abortableErrorIfPossible; handleFailedBatch / "
            "maybeTransitionToErrorState for failed batches @1eb7644349cb",
            catches="an error class swapped in the client's table (a retriable code made abortable or fatal, an "
            "abortable one made fatal), a handler that ignores the answer or moves to the wrong state",
            findings=lambda s: _labels(s, "client_reaction:"),
            heading="reacted unlike Kafka's client: ",
            separator=", ",
            partners=("txn_committed",),
        ),
        no_findings(
            name="coordinator_transitions_explained",
            fact="Every change of a transactional id's state in the coordinator is a chain of TransactionState "
            "transitions from the state before the step to the state after it (expiry: to Dead).",
            source="TransactionMetadata.prepareTransitionTo / completeTransitionTo (TransactionState.java "
            "validPreviousStates), on every handler path",
            catches="a handler that rewrites the cached state without a (checked) transition, e.g. a marker or "
            "timeout path that completes or reopens a transaction directly",
            findings=lambda s: _labels(s, "unexplained:"),
            heading="state changed without a transition: ",
            separator=", ",
            partners=("txn_prepare_commit",),
        ),
    ]
    if config.faults.txn_timeout > 0 or topo.shared_transactional_id:
        props.append(
            no_findings(
                name="fence_raises_epoch",
                fact="The PrepareAbort an epoch fence writes carries an epoch above the one the log held.",
                source="TransactionMetadata.prepareFenceProducerEpoch; KAFKA-9666 (a failed fence keeps its bump)",
                catches="a fence retried at an unchanged epoch after a failed append: its marker cannot fence the "
                "zombie at the partition",
                findings=lambda s: _labels(s, "fence_no_bump:"),
                separator=", ",
                partners=("coordinator_fenced",),
            )
        )
        props.append(sometimes_event("coordinator_fenced", "The coordinator fenced an epoch.", "fence"))
    if topo.shared_transactional_id:
        props.append(
            no_findings(
                name="zombie_fenced_not_fatal",
                fact="An instance replaced by a newer instance of its transactional.id ends fenced "
                "(ProducerFencedException), never with another fatal error.",
                source="KIP-98 §Zombie fencing; KIP-588; TransactionManager (PRODUCER_FENCED -> fatalError("
                "ProducerFencedException))",
                catches="a zombie told INVALID_TXN_STATE or an unexpected error instead of being fenced, so the "
                "application cannot tell a takeover from a bug",
                findings=zombies_not_fenced,
                partners=("zombie_fenced",),
            )
        )
        props.append(
            sometimes_event("zombie_fenced", "A producer was fenced (ProducerFencedException).", "client_fenced")
        )
    else:
        props.append(
            no_findings(
                name="sole_producer_not_fenced",
                fact="In a run without faults, a producer that is the only instance of its transactional.id is "
                "never fenced nor made fatal, whatever its own retries, and no partition leader refuses its batch "
                "for its transaction's state (INVALID_TXN_STATE, TRANSACTION_ABORTABLE: the partition not in its "
                "transaction) or for its sequence or epoch (OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH) -- "
                "except "
                "OUT_OF_ORDER_SEQUENCE_NUMBER behind a missing earlier batch of the same epoch that the client still "
                "holds to retry (max.in.flight > 1: TransactionManager.canRetry retries a batch that is not the next "
                "sequence) or gave up (the transaction already abortable).",
                source="KIP-98 §Zombie fencing (only a newer instance fences); TransactionManager error classes and "
                "canRetry, ProducerAppendInfo.checkSequence (trunk @1eb7644349cb)",
                catches="a TV2 batch joining the previous transaction (KAFKA-14563): the commit is answered "
                "PRODUCER_FENCED with no other instance alive; a client that keeps its sequences across a new epoch "
                "(no resetSequenceNumbers after a TV2 EndTxn or InitProducerId); the next TV2 transaction's first "
                "batch refused INVALID_TXN_STATE because the previous transaction's marker cleared its verification "
                "entry (KAFKA-18575)",
                findings=sole_instance_failures,
                partners=("txn_committed",),
            )
        )
        if topo.max_in_flight > 1 and topo.transactions_per_producer > 1 and topo.records_per_transaction > 1:
            # a batch pipelined behind the next transaction's first one: the refusal the judge excuses must be
            # reached where it can be, else a judge that excuses too much is never put to the test
            props[-1] = replace(props[-1], partners=(*props[-1].partners, "out_of_order_behind_missing_batch"))
            props.append(
                sometimes_event(
                    "out_of_order_behind_missing_batch",
                    "A leader refused a batch OUT_OF_ORDER_SEQUENCE_NUMBER behind an earlier batch of its epoch "
                    "that the log does not hold (max.in.flight > 1: the client retries it in order).",
                    "out_of_order_behind_missing_batch",
                )
            )
    return tuple(props)
