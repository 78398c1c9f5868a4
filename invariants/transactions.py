"""Invariants of Kafka transactions (KIP-98 §6-8, KIP-890), over the transactions model.

Each ``always`` property names the fact, its source, the bug it catches, and
its ``sometimes`` partners (reachability witnesses: if a partner never fires
the invariant is reported *untested*).  Record fates come from
:func:`model.clients.consumer.record_fates` (the control batches in the log); what a
``read_committed`` consumer sees comes from :func:`model.clients.consumer.fetch` (the
LSO and the aborted-transaction index) -- two independent computations.

``no_hanging_transaction`` is a *state* formulation of the bounded liveness
property "once faults stop and timeouts fire, every LSO reaches its HW": an
open transaction on a partition that no coordinator transaction covers (and
no marker in flight will close) can only be ended by accident, so its LSO
would hang.  ``lso_reaches_high_watermark`` is the direct bounded form: in a
quiescent state (nothing in flight, no coordinator transaction Ongoing or
Prepare*), every partition's LSO equals its high watermark.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from keos.invariants._common import no_findings, sometimes_event
from keos.invariants.client_outcomes import client_outcome_properties
from keos.invariants.progress import TXN_FAIRNESS, txn_progress_properties
from keos.invariants.txn_in_flight import txn_in_flight_properties
from keos.model.clients.consumer import ABORTED, COMMITTED, READ_COMMITTED, fetch, fetch_range, record_fates
from keos.model.clients.producer import record_id, record_label
from keos.model.coordinator.transaction.transaction_coordinator import (
    OFFSETS_PARTITION_BASE,
    append_error_answer,
    expire_transactional_id,
)
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.interface import Expectation, Property
from keos.model.log.partition import CONTROL_COMMIT, NO_PRODUCER_ID, LogEntry, PartitionLeader, last_stable_offset
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.systems.transactions import TxnConfig, TxnSystemState
from keos.model.systems.transactions_records import APPEND_TOO_LARGE, TxnFaultBudget
from keos.model.systems.txn_produce_judge import lso_mismatch
from keos.model.variants import KAFKA_SEQUENCE_SPACE

__all__ = ["transaction_properties"]

S = TransactionState
ACTIVE = (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT)


def _fates(s: TxnSystemState) -> dict[int, str]:
    out: dict[int, str] = {}
    for leader in s.partitions:
        out.update(record_fates(leader))
    return out


def _quiescent(s: TxnSystemState) -> bool:
    return not s.network and all(md is None or md.state not in ACTIVE for md in s.coordinator)


def _txn_records(rpt: int, producer: int, txn: int) -> tuple[int, ...]:
    return tuple(record_id(producer, txn * rpt + n) for n in range(rpt))


def _atomic_problems(rpt: int, s: TxnSystemState) -> list[str]:
    fates = _fates(s)
    quiet = _quiescent(s)
    out: list[str] = []
    for o in s.ghost.outcomes:
        for rid in _txn_records(rpt, o.producer, o.txn):
            fate = fates.get(rid)
            if o.committed and fate == ABORTED:
                out.append(f"{record_label(rid)} of committed transaction {o.txn} was aborted")
            elif o.committed and quiet and fate != COMMITTED:
                out.append(f"{record_label(rid)} of committed transaction {o.txn} is {fate or 'missing'} at quiescence")
            elif not o.committed and fate == COMMITTED:
                out.append(f"{record_label(rid)} of aborted transaction {o.txn} was committed")
    return out


def _aborted_reads(s: TxnSystemState) -> list[str]:
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        fates = record_fates(leader)
        for rid in fetch(leader, READ_COMMITTED):
            if fates.get(rid) != COMMITTED:
                out.append(f"read_committed consumer of partition {q} read {record_label(rid)} ({fates.get(rid)})")
    return out


@lru_cache(maxsize=8192)
def _range_read_problem(leader: PartitionLeader) -> str | None:
    """The first fetch from an offset below the LSO, ending after one batch or at the LSO (the two ends a fetch
    size can give), whose records are not exactly the committed data records of its range (record fates from the
    control batches); None if there is none.  Cached: the states of a search share their partitions."""
    lso = last_stable_offset(leader)
    fates = record_fates(leader)
    for start in range(lso):
        for upper in sorted({start + 1, lso}):
            got = fetch_range(leader, start, upper)
            want = tuple(
                r for e in leader.log[start:upper] if not e.control for r in e.records if fates.get(r) == COMMITTED
            )
            if got != want:
                got_labels = [record_label(r) for r in got]
                return (f"a read_committed fetch of offsets [{start}, {upper}) returns {got_labels}, "
                        f"its committed records are {[record_label(r) for r in want]}")
    return None


def _range_read_problems(s: TxnSystemState) -> list[str]:
    """:func:`_range_read_problem` on every data partition with an aborted range (without one a fetch filters
    nothing).  Not the group's ``__consumer_offsets`` partition: its batches' record ids name offsets, not unique
    records (the group coordinator materializes them itself, no consumer fetches it read_committed)."""
    return [f"partition {q}: {p}" for q, leader in enumerate(s.partitions)
            if leader.aborted and (p := _range_read_problem(leader)) is not None]


def _hidden_commits(s: TxnSystemState) -> list[str]:
    """Committed records below the LSO that a read_committed fetch skips: the aborted-transaction index covers a
    record a COMMIT marker decided (an index entry that starts before its transaction's first offset)."""
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        lso = last_stable_offset(leader)
        fates = record_fates(leader)
        below = [r for e in leader.log[:lso] if not e.control for r in e.records if fates.get(r) == COMMITTED]
        if not below:
            continue
        read = set(fetch(leader, READ_COMMITTED))
        skipped = [r for r in below if r not in read]
        out.extend(f"read_committed consumer of partition {q} skips committed {record_label(r)}" for r in skipped)
    return out


def _transactional_partitions(s: TxnSystemState) -> list[tuple[int, PartitionLeader]]:
    """Every partition a transaction writes: the data partitions and (consume-transform-produce) the group's
    ``__consumer_offsets`` partition, whose transactions KIP-890 and KAFKA-15449 (TxnOffsetCommit verification)
    must keep from hanging just the same -- a transaction hanging there blocks the group's offsets."""
    out = list(enumerate(s.partitions))
    if s.group is not None:
        out.append((OFFSETS_PARTITION_BASE + s.group.group_id, s.group.offsets_log))
    return out


def _hanging(s: TxnSystemState) -> list[str]:
    out: list[str] = []
    for q, leader in _transactional_partitions(s):
        for e in leader.producers:
            if e.current_txn_first_offset < 0:
                continue
            covered = any(
                md is not None and md.state in ACTIVE and e.producer_id == md.producer_id and q in md.partitions
                for md in s.coordinator
            ) or any(
                isinstance(env.body, WriteTxnMarkersRequest)
                and env.body.partition == q
                and env.body.producer_id == e.producer_id
                for env in s.network
            )
            if not covered:
                out.append(
                    f"partition {q}: transaction of pid {e.producer_id} open at offset "
                    f"{e.current_txn_first_offset} is unknown to the coordinator"
                )
    return out


def _lso_stuck(s: TxnSystemState) -> list[str]:
    if not _quiescent(s):
        return []
    return [
        f"partition {q}: LSO {last_stable_offset(p)} < high watermark {p.high_watermark} at quiescence"
        for q, p in _transactional_partitions(s)
        if last_stable_offset(p) < p.high_watermark
    ]


def _partition_log(s: TxnSystemState, q: int) -> tuple[LogEntry, ...]:
    """A data partition's log, or (AddOffsetsToTxn) the group's ``__consumer_offsets`` partition's."""
    if q >= OFFSETS_PARTITION_BASE:
        return s.group.offsets_log.log if s.group is not None else ()
    return s.partitions[q].log


def _missing_markers(s: TxnSystemState) -> list[str]:
    out: list[str] = []
    for c in s.ghost.completions:
        control = CONTROL_COMMIT if c.committed else "ABORT"
        for q in c.partitions:
            found = any(
                e.control == control and e.producer_id == c.producer_id and e.producer_epoch == c.producer_epoch
                for e in _partition_log(s, q)
            )
            if not found:
                out.append(
                    f"transactional id {c.transactional_id} completed before its {control} marker on partition {q}"
                )
    return out


def _zombie_commits(s: TxnSystemState) -> list[str]:
    out: list[str] = []
    for f in s.ghost.fences:
        for q, leader in enumerate(s.partitions):
            fates = record_fates(leader)
            for offset, e in enumerate(leader.log):
                if (
                    offset >= f.log_ends[q]
                    and not e.control
                    and e.producer_id == f.producer_id
                    and e.producer_epoch <= f.producer_epoch
                ):
                    out.extend(
                        f"{record_label(r)} written at fenced epoch {e.producer_epoch} after the fence was committed"
                        for r in e.records
                        if fates.get(r) == COMMITTED
                    )
    return out


def _active_instances(s: TxnSystemState) -> list[str]:
    out: list[str] = []
    live = ("READY", "IN_TRANSACTION", "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION")
    for t, md in enumerate(s.coordinator):
        if md is None:
            continue
        holders = [
            i
            for i, c in enumerate(s.clients)
            if c.transactional_id == t
            and c.state in live
            and (c.data.producer_id, c.data.producer_epoch) == (md.producer_id, md.producer_epoch)
        ]
        if len(holders) > 1:
            out.append(f"transactional id {t}: producers {holders} all hold the current (pid, epoch)")
    return out


def _ghost_labels(s: TxnSystemState, prefix: str) -> list[str]:
    """The ghost's recorded bad steps of one kind (``txn:``, ``attempt:``, ``epoch_jump:``)."""
    return [b for b in s.ghost.bad_transitions if b.startswith(prefix)]


def _lso_mismatches(s: TxnSystemState) -> list[str]:
    return [m for q, p in enumerate(s.partitions) if (m := lso_mismatch(q, p)) is not None]


def _log_implied_state(log: tuple[LogEntry, ...]) -> tuple[dict[int, tuple[int, int, int]], list[tuple[int, int, int]]]:
    """What any replica of a partition knows from its log alone, computed here independently of the model's
    update functions: per producer id its epoch (the last batch's or marker's), the coordinator epoch of its last
    marker and the first offset of its open transaction (-1: none), and the aborted ranges (producer id, first
    offset, marker offset) of ABORT markers that closed a transaction which wrote to the partition."""
    known: dict[int, tuple[int, int, int]] = {}
    aborted: list[tuple[int, int, int]] = []
    for offset, e in enumerate(log):
        _, coordinator_epoch, first = known.get(e.producer_id, (-1, -1, -1))
        if e.control:
            if first >= 0 and e.control != CONTROL_COMMIT:
                aborted.append((e.producer_id, first, offset))
            known[e.producer_id] = (e.producer_epoch, e.coordinator_epoch, -1)
        else:
            opened = first if first >= 0 or not e.transactional else offset
            known[e.producer_id] = (e.producer_epoch, coordinator_epoch, opened)
    return known, aborted


def _replica_divergence(s: TxnSystemState) -> list[str]:
    """How a partition leader's producer state or aborted index differs from what its log implies: every data
    partition, and the group's ``__consumer_offsets`` partition of the eos model -- a partition like any other to
    ``ProducerStateManager``: its transactional offset commits and markers build the same producer state on every
    replica, and the group coordinator's next leader fences a zombie's TxnOffsetCommit and a deposed transaction
    coordinator's marker with what it rebuilt (records without a producer id -- plain OffsetCommits -- are not
    tracked: ``UnifiedLog.updateProducers`` skips them)."""
    out: list[str] = []
    leaders: list[tuple[int | str, PartitionLeader]] = list(enumerate(s.partitions))
    if s.group is not None:
        leaders.append(("__consumer_offsets", s.group.offsets_log))
    for q, leader in leaders:
        known, aborted = _log_implied_state(leader.log[: leader.high_watermark])
        known.pop(NO_PRODUCER_ID, None)
        held = {e.producer_id: (e.producer_epoch, e.coordinator_epoch, e.current_txn_first_offset)
                for e in leader.producers}
        for pid in sorted(set(known) | set(held)):
            if known.get(pid) != held.get(pid):
                out.append(f"partition {q}: producer {pid} (epoch, coordinator epoch, open transaction's first "
                           f"offset) is {held.get(pid)} on the leader, {known.get(pid)} from its log")
        index = [(a.producer_id, a.first_offset, a.last_offset) for a in leader.aborted]
        if index != aborted:
            out.append(f"partition {q}: aborted-transaction index {index}, from its log {aborted}")
    return out


#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``: the judge's own copy.
_BATCHES_TO_RETAIN = 5


def _batch_cache_drift(s: TxnSystemState) -> list[str]:
    """How a data partition leader's cached batch metadata differs from what its log implies, computed here from
    the log alone: per producer id the last ``NUM_BATCHES_TO_RETAIN`` data batches (first sequence, last sequence,
    offset) since the producer's epoch last changed -- ``ProducerStateEntry.addBatch`` appends a data batch's
    metadata and ``maybeUpdateProducerEpoch`` clears them when a batch *or a marker* (``appendEndTxnMarker``)
    carries another epoch (Kafka trunk ``1eb7644349cb``, ``storage/.../internals/log/ProducerStateEntry.java``,
    ``ProducerAppendInfo.java``).  The cache is what the leader's duplicate and sequence checks read, so a drift
    refuses or duplicates the producer's next batch."""
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        implied: dict[int, tuple[int, tuple[tuple[int, int, int], ...]]] = {}
        for offset, e in enumerate(leader.log):
            if e.producer_id == NO_PRODUCER_ID:  # no branch: every batch of the transactional models has an id
                continue
            epoch, batches = implied.get(e.producer_id, (e.producer_epoch, ()))
            if e.producer_epoch != epoch:
                batches = ()
            if not e.control:
                last = (e.base_sequence + len(e.records) - 1) % KAFKA_SEQUENCE_SPACE
                batches = (*batches, (e.base_sequence, last, offset))[-_BATCHES_TO_RETAIN:]
            implied[e.producer_id] = (e.producer_epoch, batches)
        for held in leader.producers:
            want = implied.get(held.producer_id, (held.producer_epoch, ()))[1]
            got = tuple((b.first_seq, b.last_seq, b.offset) for b in held.batches)
            if got != want:
                out.append(
                    f"partition {q}: producer {held.producer_id} caches batches (first, last, offset) {got}, its log "
                    f"implies {want}"
                )
    return out


def _stale_verifications(s: TxnSystemState) -> list[str]:
    """Verification state entries (KIP-890 part 1) a data partition leader still holds for the transaction it has
    open at the entry's epoch.  ``UnifiedLog.updateProducers`` (Kafka trunk ``1eb7644349cb``) clears the producer
    id's ``VerificationStateEntry`` whenever one of its transactional batches -- data or a marker -- is appended
    (``ProducerStateManager.clearVerificationStateEntry``); a verification starts only for a batch with no
    transaction of its epoch open on the partition (``hasOngoingTransaction``), and a transaction opens only by such
    an append, so an entry with the epoch of the open transaction is one an append forgot to clear (its guard would
    then let a late callback of that verification append into a later transaction of the same epoch)."""
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        for v in leader.verifying:
            e = leader.entry(v.producer_id)
            if e is not None and e.current_txn_first_offset >= 0 and e.producer_epoch == v.epoch:
                out.append(
                    f"partition {q}: producer {v.producer_id} still has a verification entry (guard {v.guard}, epoch "
                    f"{v.epoch}) for the transaction it holds open from offset {e.current_txn_first_offset}"
                )
    return out


#: ``TransactionState.isExpirationAllowed`` (``TransactionState.java`` @33431ac9): the judge's own copy.
_KAFKA_EXPIRABLE = (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)  # no mutate: the judge's table (a property)


def _expiry_mismatches(s: TxnSystemState) -> list[str]:  # no mutate: the judge (a property), not a rule
    """Transactional ids whose coordinator expiry rule disagrees with ``TransactionStateManager.shouldExpire``
    (``removeExpiredTransactionalIds``: an entry with no pending transition whose state allows expiration; the
    elapsed ``transactional.id.expiration.ms`` is the environment's timing)."""
    out: list[str] = []
    for t, md in enumerate(s.coordinator):
        kafka = md is not None and md.state in _KAFKA_EXPIRABLE and not md.pending_state
        model = expire_transactional_id(md, None) is not None
        if kafka != model:  # no branch: the violation side, only a defect takes it (txn_id_expiry_per_kafka)
            state = "none" if md is None else md.state + (f"/{md.pending_state}" if md.pending_state else "")
            verdict = f"{'expirable' if model else 'kept'}, kafka {'expires' if kafka else 'keeps'}"
            out.append(f"id {t} in {state}: {verdict}")
    return out


def _expiry_properties(config: TxnConfig) -> list[Property]:
    """``transactional.id.expiration.ms`` (``TransactionStateManager.removeExpiredTransactionalIds``): which entries
    the coordinator may tombstone, with partners for an idle Empty id and (where the expiry is the timeout step of
    an idle producer, not a budgeted fault) a completed one."""
    partners: tuple[str, ...] = ("txn_id_expired_empty", "txn_id_expired_completed")
    if not config.topology.transactional_id_expiration:
        partners = partners[:1]
    props = [
        no_findings(
            name="txn_id_expiry_per_kafka",
            fact="The coordinator expires a transactional id exactly when Kafka's shouldExpire allows it: an entry "
            "in Empty, CompleteCommit or CompleteAbort with no transition pending (once transactional.id."
            "expiration.ms passed), never one in a transaction or with an append in flight -- and a later "
            "InitProducerId for it is answered as for a new id.",
            source="TransactionStateManager.removeExpiredTransactionalIds / shouldExpire, "
            "TransactionState.isExpirationAllowed (TransactionState.java @33431ac9)",
            catches="an expirable state dropped from or added to the table (an idle initialized producer never "
            "expired, an open transaction's id tombstoned), a pending transition ignored by the expiry",
            findings=_expiry_mismatches,
            partners=partners,
        ),
        sometimes_event(
            "txn_id_expired_empty", "An idle Empty transactional id (initialized, no transaction) expired.",
            "txn:Empty->Dead",
        ),
    ]
    if len(partners) > 1:
        props.append(
            sometimes_event(
                "txn_id_expired_completed", "A transactional id idle after its last (committed) transaction expired.",
                f"txn:{S.COMPLETE_COMMIT}->{S.DEAD}",
            )
        )
    return props


def _some_aborted_filtered(s: TxnSystemState) -> bool:
    for leader in s.partitions:
        lso = last_stable_offset(leader)
        if any(a.first_offset < lso for a in leader.aborted):
            return True
    return False


def _retried_in_flight(s: TxnSystemState) -> bool:
    """Whether a transactional producer has a batch in flight on its second or later attempt."""
    return any(b.in_flight and b.attempts > 1 for c in s.clients for b in c.data.batches)


def _produce_retried() -> Property:
    """A transactional batch was sent again after its request went unanswered (``resend``), borne out by the state.

    ``Sender.handleProduceResponse`` turns a request a closed connection (``wasDisconnected``) or
    ``request.timeout.ms`` (``wasTimedOut``) cancelled into NETWORK_EXCEPTION / REQUEST_TIMED_OUT for each of its
    batches; ``Sender.completeBatch`` -> ``canRetry`` re-enqueues a batch with retries left
    (``RecordAccumulator.reenqueue``: ``attempts`` grows) and the Sender drains it again with the sequence and
    epoch it was first stamped with (``ProducerBatch.hasSequence``; apache/kafka 4.0 ``Sender.java``,
    ``RecordAccumulator.java``).  The retry is where KAFKA-5793 / KIP-360's duplicate handling and the
    transactional retry rules live, so the gate must reach it in the scenarios that can lose an answer; the witness
    (a batch in flight on its second or later attempt) makes the explicit search reject a step that calls a
    first send a retry, or a retry a first send's state (``witness_events_borne_out``): a miscounted attempt would
    also give a batch one retry more or less than ``retries`` allows.
    """
    return Property(
        name="txn_produce_retried",
        expectation=Expectation.SOMETIMES,
        fact="A transactional producer sent a batch again after its request went unanswered.",
        source="Sender.completeBatch / canRetry, RecordAccumulator.reenqueue (Kafka 4.0); KIP-98, KIP-360",
        catches="reachability of transactional produce retries",
        event="resend",
        witness=_retried_in_flight,
    )


def transaction_properties(config: TxnConfig) -> tuple[Property, ...]:
    """The transactions properties for a model with ``config``.

    ``zombie_fencing`` is checked when the scenario can fence (coordinator
    timeouts or several instances of one transactional id), and
    ``one_active_producer`` when instances share an id, so that their
    partners are reachable.
    """
    topo = config.topology
    faults = config.faults
    rpt = topo.records_per_transaction
    fencing = faults.txn_timeout > 0 or topo.shared_transactional_id
    props: list[Property] = [
        no_findings(
            name="atomic_commit",
            fact="A transaction the application saw commit has no aborted record and, once nothing is in flight, "
            "all its records committed; a transaction it saw abort has no committed record.",
            source="KIP-98 §Transactional guarantees; KIP-890 motivation (scenarios B, C)",
            catches="KAFKA-17754 (torn transaction / aborted read), KAFKA-6119 (commit after a timeout abort)",
            findings=lambda s: _atomic_problems(rpt, s),
            partners=("txn_committed", "txn_aborted"),
        ),
        no_findings(
            name="no_aborted_read",
            fact="A read_committed consumer reads only committed records: it stops at the LSO and drops aborted "
            "transactions via the aborted-transaction index.",
            source="KIP-98 §7 (isolation.level); ``UnifiedLog.lastStableOffset``",
            catches="an LSO or aborted index that disagrees with the control batches",
            findings=_aborted_reads,
            partners=("aborted_data_filtered", "lso_held_back"),
        ),
        no_findings(
            name="committed_read",
            fact="A read_committed consumer reads every committed record below the LSO: the aborted-transaction "
            "index covers aborted transactions only.",
            source="KIP-98 §7 (isolation.level); ``UnifiedLog.collectAbortedTransactions``, ``AbortedTxn`` "
            "(``ProducerAppendInfo.appendEndTxnMarker`` indexes an ABORT from the transaction's first offset)",
            catches="an abort marker indexed for a producer id with no transaction open on the partition, hiding its "
            "earlier committed records (KAFKA-10702's neighbourhood)",
            findings=_hidden_commits,
            partners=("txn_committed",),
        ),
        no_findings(
            name="read_committed_from_any_offset",
            fact="A read_committed fetch from any offset below the LSO returns exactly the committed records of the "
            "range it covers, whether it ends after one batch or at the LSO: the aborted transactions the leader "
            "lists for the range and the consumer's filter drop every aborted record and nothing else.",
            source="KIP-98 §7; ``TransactionIndex.collectAbortedTxns``, ``UnifiedLog.collectAbortedTransactions``, "
            "``CompletedFetch`` (consumeAbortedTransactionsUpTo, containsAbortMarker, isBatchAborted)",
            catches="an aborted-transactions list with a wrong bound or a scan that stops early (an AbortedTxn's "
            "lastStableOffset), a consumer filter that misses a transaction a fetch starts inside",
            findings=_range_read_problems,
            partners=("aborted_data_filtered",),
        ),
        no_findings(
            name="no_hanging_transaction",
            fact="Every transaction open on a partition (the group's __consumer_offsets partition too) is covered "
            "by the coordinator (Ongoing/Prepare* with the partition, or a marker in flight), so a marker will end "
            "it and the LSO can advance.",
            source="KIP-890 motivation and scenario A; ``UnifiedLog.lastStableOffset``, ``ProducerStateManager``",
            catches="KAFKA-12671 (late produce after an abort opens a transaction nobody ends)",
            findings=_hanging,
            partners=("txn_opened_on_partition",),
        ),
        no_findings(
            name="lso_reaches_high_watermark",
            fact="In a quiescent state (nothing in flight, no coordinator transaction Ongoing or Prepare*), every "
            "partition's LSO equals its high watermark.",
            source="KIP-890 (hanging transactions); UnifiedLog.lastStableOffset",
            catches="KAFKA-12671 (stuck LSO)",
            findings=_lso_stuck,
            partners=("quiescent_after_transaction",),
        ),
        no_findings(
            name="markers_before_complete",
            fact="The coordinator writes CompleteCommit/CompleteAbort only after the marker of that result is in "
            "every partition of the transaction.",
            source="``TransactionMarkerChannelManager`` (maybeWriteTxnCompletion)",
            catches="a coordinator that completes before its markers are written",
            findings=_missing_markers,
            partners=("txn_completed",),
        ),
        no_findings(
            name="txn_produce_answer_per_kafka",
            fact="A partition leader answers every transactional Produce as Kafka's does, judged from the batches "
            "its log holds: a duplicate of a retained batch of the current epoch with that batch's offset, a "
            "stale epoch with INVALID_PRODUCER_EPOCH, a batch that opens a transaction on the partition only "
            "after the coordinator verified it (its refusal translated for the producer), then the sequence "
            "rules; an append lands at the log end and is answered with that offset.",
            source="UnifiedLog.analyzeAndValidateProducerState, ProducerAppendInfo.checkProducerEpoch / "
            "checkSequence / appendEndTxnMarker, ReplicaManager.appendRecordsWithTransactionVerification, "
            "AddPartitionsToTxnManager (Kafka 4.0), KIP-890 part 1, KAFKA-14563",
            catches="a transactional batch appended unverified (the KIP-890 hanging transaction), a stale epoch or "
            "an out-of-order sequence appended, a retry answered with another batch's offset, a verification "
            "refusal answered with an error the producer handles otherwise",
            findings=lambda s: _ghost_labels(s, "produce_answer:"),
            partners=("txn_opened_on_partition",),
        ),
        no_findings(
            name="lso_per_kafka",
            fact="Every partition's last stable offset is the first offset of a transaction whose control batch "
            "is not in the log yet, or the high watermark if lower -- what the log's batches and markers say.",
            source="UnifiedLog.lastStableOffset, ProducerStateManager.firstUnstableOffset (KIP-98 §7)",
            catches="producer state whose currentTxnFirstOffset drifts from the log (an open transaction "
            "forgotten, expired or set at a later batch), so read_committed consumers read past an undecided "
            "transaction or stall behind a decided one",
            findings=_lso_mismatches,
            partners=("lso_held_back",),
        ),
        no_findings(
            name="valid_coordinator_transitions",
            fact="Every coordinator state transition is in TransactionState's valid-previous-state table.",
            source="TransactionState.java @33431ac9",
            catches="a handler that moves a transaction along an edge the table forbids",
            findings=lambda s: _ghost_labels(s, "txn:"),
            heading="illegal transitions: ",
            separator=", ",
            partners=("txn_prepare_commit",),
        ),
        no_findings(
            name="log_transitions_per_kafka",
            fact="Every record the coordinator appends to __transaction_state is one TransactionMetadata."
            "completeTransitionTo accepts after the record before it: Empty keeps or bumps the epoch by one or "
            "starts a new producer id at 0, Ongoing keeps (pid, epoch) and only adds partitions, PrepareX keeps "
            "the producer id and the transaction's partitions at the same or the next epoch, CompleteX follows "
            "its PrepareX at its (pid, epoch) or at the rotated nextProducerId, epoch 0.",
            source="TransactionMetadata.completeTransitionTo / validProducerEpoch / validProducerEpochBump "
            "(TransactionMetadata.java @38666db4)",
            catches="a handler on any path (InitProducerId, AddPartitionsToTxn, EndTxn, a fence, the timeout abort, "
            "marker completion) that logs a record with the wrong producer id, epoch or partitions -- which Kafka's "
            "coordinator would refuse with IllegalStateException",
            findings=lambda s: _ghost_labels(s, "transit_table:"),
            heading="transitions Kafka refuses: ",
            separator=", ",
            partners=("txn_prepare_commit",),
        ),
    ]
    if fencing:
        props.append(
            no_findings(
                name="zombie_fencing",
                fact="No record written at a fenced epoch after the coordinator fenced or timed out that epoch "
                "becomes committed.",
                source="KIP-98 §Zombie fencing; TransactionCoordinator.handleInitProducerId (Ongoing), "
                "abortTimedOutTransactions (KAFKA-6119 fix)",
                catches="KAFKA-6119 (timeout abort without epoch bump)",
                findings=_zombie_commits,
                partners=("coordinator_aborted_on_its_own",),
            )
        )
    if topo.shared_transactional_id:
        props.append(
            no_findings(
                name="one_active_producer",
                fact="At most one producer instance of a transactional id holds the coordinator's current "
                "(pid, epoch) outside a fatal state.",
                source="KIP-98 §InitPid (fencing by epoch)",
                catches="two instances of one transactional.id both able to commit",
                findings=_active_instances,
                partners=("producer_fenced",),
            )
        )
    if fencing:
        props.append(
            sometimes_event(
                "coordinator_aborted_on_its_own",
                "The coordinator aborted a transaction by itself (timeout or InitProducerId fence).",
                "txn:PrepareEpochFence->PrepareAbort" if not faults.txn_timeout else "timeout_abort",
            )
        )
    if topo.shared_transactional_id:
        props.append(sometimes_event("producer_fenced", "A producer was fenced.", "error:PRODUCER_FENCED"))
    props.extend(
        [
            sometimes_event("txn_committed", "The application saw a transaction commit.", "client_txn_committed"),
            sometimes_event("txn_aborted", "The application saw a transaction abort.", "client_txn_aborted"),
            sometimes_event(
                "txn_opened_on_partition",
                "A transactional batch opened a transaction on a partition.",
                "txn_opened_on_partition",
            ),
            sometimes_event("txn_completed", "The coordinator completed a transaction.", "txn:Prepare*"),
            sometimes_event("txn_prepare_commit", "The coordinator prepared a commit.", "txn:Ongoing->PrepareCommit"),
            Property(
                name="aborted_data_filtered",
                expectation=Expectation.SOMETIMES,
                fact="A partition held an aborted transaction below its LSO, which read_committed must drop.",
                source="``UnifiedLog.lastStableOffset``",
                catches="reachability of the aborted-transaction index",
                predicate=_some_aborted_filtered,
            ),
            Property(
                name="lso_held_back",
                expectation=Expectation.SOMETIMES,
                fact="A partition's LSO was below its high watermark (an undecided transaction).",
                source="``UnifiedLog.lastStableOffset``",
                catches="reachability of the LSO",
                predicate=lambda s: any(last_stable_offset(p) < p.high_watermark for p in s.partitions),
            ),
            Property(
                name="quiescent_after_transaction",
                expectation=Expectation.SOMETIMES,
                fact="A quiescent state was reached after a transaction wrote data.",
                source="bounded liveness",
                catches="reachability of quiescence",
                predicate=lambda s: _quiescent(s) and any(p.log for p in s.partitions),
            ),
        ]
    )
    if faults.drop > 0 or faults.request_timeout > 0:
        # A lost answer makes the client resend: the produce answers must then be judged on retries too (a
        # duplicate answered with its batch's offset, KAFKA-5793), so the retry is a partner of that judge
        props = [
            replace(p, partners=(*p.partners, "txn_produce_retried")) if p.name == "txn_produce_answer_per_kafka" else p
            for p in props
        ]
        props.append(_produce_retried())
    if config.faults.coordinator_failover > 0:
        # A failover leaves the old coordinator's markers in flight (Kafka cannot recall them): marker
        # handling must be judged with one landing after the new coordinator took over, not only without.
        props = [
            replace(p, partners=(*p.partners, "old_coordinator_marker_landed"))
            if p.name == "markers_before_complete"
            else p
            for p in props
        ]
        props.append(
            sometimes_event(
                "old_coordinator_marker_landed",
                "A marker the coordinator sent before a failover reached its partition after the failover.",
                "stale_coordinator_marker",
            )
        )
    props = [*props, *txn_progress_properties(config), *client_outcome_properties(config)]
    if topo.transactional_id_expiration or faults.txn_id_expiry > 0:
        props.extend(_expiry_properties(config))
    if not topo.producer_id_expiration:  # a follower's own expiry of idle producers is not modelled
        props.append(
            no_findings(
                name="producer_state_per_log",
                fact="A data partition leader's producer state (each producer id's epoch, the coordinator epoch "
                "of its last marker, the first offset of its open transaction) and its aborted-transaction index "
                "are what its log implies -- what every in-sync follower builds replicating the same batches, so "
                "a leadership change changes nothing a client or a read_committed consumer sees; so is its cache of "
                "each producer's last batches (cleared when a batch or marker brings a new epoch). The one piece "
                "of producer state that is the leader's own, a verification in flight (KIP-890), never outlives "
                "the append of its transaction's first batch.",
                source="ProducerAppendInfo (origin REPLICATION), UnifiedLog.updateProducers (and its "
                "clearVerificationStateEntry), LogSegment.updateTxnIndex, Partition.makeLeader",
                catches="a leader whose in-memory producer state drifts from its log (an update applied on the "
                "leader only, or missed there): a failover then changes the LSO, the aborted ranges or the fencing "
                "of a deposed coordinator's markers; a batch cache a marker with a new epoch does not clear; a "
                "verification entry an append forgot to clear",
                findings=lambda s: _replica_divergence(s) + _batch_cache_drift(s) + _stale_verifications(s),
                partners=("lso_held_back",),
            )
        )
    # the transactional producer's Sender keeps NetworkClient's in-flight rules too (invariants/txn_in_flight.py)
    props.extend(txn_in_flight_properties(topo.max_in_flight))
    if topo.read_committed_consumer:
        props.extend(_consumer_properties())
    if config.faults.leader_election > 0:
        props = _leader_election_partners(props, topo.verification_round_trip)
    if topo.pending_transitions:
        props = _pending_partners(config, props)
    if topo.verification_round_trip:
        props = _round_trip_partners(props)
    if topo.send_rejections:
        props = _send_rejection_partners(props)
    return tuple(props)


def _consumer_read_problems(s: TxnSystemState) -> list[str]:
    """Each read_committed consumer (``[transactions] read_committed_consumer``) must have returned exactly the
    committed data records below its position, in offset order, each once (fates from the control batches:
    :func:`record_fates`, an oracle that reads neither the LSO nor the aborted-transaction index)."""
    out: list[str] = []
    for q, f in enumerate(s.fetchers):
        leader = s.partitions[q]
        fates = record_fates(leader)
        want = tuple(r for e in leader.log[: f.position] if not e.control for r in e.records
                     if fates.get(r) == COMMITTED)
        if f.delivered != want:
            out.append(f"the read_committed consumer of partition {q} at position {f.position} returned "
                       f"{[record_label(r) for r in f.delivered]}, the committed records below it are "
                       f"{[record_label(r) for r in want]}")
    return out


def _lagging_consumers(s: TxnSystemState) -> list[str]:
    """Read_committed consumers whose position is below their partition's last stable offset."""
    return [f"the read_committed consumer of partition {q} is at {f.position}, the LSO at {lso}"
            for q, f in enumerate(s.fetchers) if f.position < (lso := last_stable_offset(s.partitions[q]))]


def _consumer_properties() -> list[Property]:
    """The read_committed consumer's promise, whichever path answered its fetches (:mod:`model.log.fetch`), and
    its partners: a fetch answered from the purgatory with records, one that dropped aborted records."""
    return [
        no_findings(
            name="read_committed_consumer_reads_committed",
            fact="A read_committed consumer polling a partition returns exactly its committed records, in offset "
            "order, each once -- whether the leader answered a fetch at once or after it waited in the fetch "
            "purgatory (DelayedFetch), which reads the log again with the request's isolation level and answers "
            "the read's aborted transactions.",
            source="KIP-98 §7 (isolation.level); ReplicaManager.fetchMessages / readFromLog, DelayedFetch.onComplete "
            "(apache/kafka 1eb7644349cb); CompletedFetch",
            catches="KAFKA-5355 (the delayed path read read_uncommitted), KAFKA-5376 (the delayed path dropped the "
            "aborted transactions), a position that skips or repeats batches",
            findings=_consumer_read_problems,
            partners=("delayed_fetch_returned_records", "fetch_filtered_aborted"),
        ),
        Property(
            name="read_committed_consumer_catches_up",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, a read_committed consumer polling a partition reaches its last stable offset: "
            "every response moves its position to the end of the last batch it carried (control and aborted "
            "batches included), and a fetch waiting in the purgatory completes once the LSO passes its offset.",
            source="KIP-98 §7; DelayedFetch.tryComplete (FetchIsolation: the LSO for read_committed); CompletedFetch "
            "nextFetchOffset = the last batch's nextOffset (KAFKA-5443)",
            catches="a position that stops before a control or aborted batch and re-fetches it for ever, a parked "
            "read_committed fetch that never completes",
            predicate=lambda s: not _lagging_consumers(s),
            partners=("fetch_returned_records",),
            explain=lambda s: "; ".join(_lagging_consumers(s)),
            fairness=TXN_FAIRNESS,
        ),
        sometimes_event("delayed_fetch_returned_records",
                        "A read_committed fetch that waited in the purgatory was answered with records.",
                        "delayed_fetch_returned_records"),
        sometimes_event("fetch_filtered_aborted",
                        "A read_committed consumer dropped aborted records of a fetch response.",
                        "fetch_filtered_aborted"),
        sometimes_event("fetch_returned_records",
                        "A read_committed fetch answered at once returned records.", "fetch_returned_records"),
    ]


#: The property each model's application-level atomicity is judged by: ``atomic_commit`` for the plain
#: transactional application, ``exactly_once_processing`` for consume-transform-produce (which drops
#: ``atomic_commit``, see :func:`keos.invariants.eos_processing.eos_properties`).
SEND_REJECTION_JUDGES = ("atomic_commit", "exactly_once_processing")


def _send_rejection_partners(props: list[Property]) -> list[Property]:
    """With ``send_rejections`` the application's ``send()`` may be refused synchronously (KAFKA-9279): the
    atomicity property holds only meaningfully if a refusal was seen *having its effect* -- the producer's
    transaction made abortable (``TransactionManager.maybeTransitionToErrorState``), so that it cannot commit
    without the record.  A witness of the input alone (the refusal happened) would be satisfied by a model that
    drops the refusal on the floor; this one fires on the client state the refusal leads to."""
    witness = sometimes_event(
        "send_rejection_made_abortable",
        "A send() refused synchronously left the producer's transaction abortable (KafkaProducer.doSend -> "
        "TransactionManager.maybeTransitionToErrorState, KAFKA-9279).",
        "send_rejected_abortable",
    )
    out = [
        replace(p, partners=(*p.partners, witness.name)) if p.name in SEND_REJECTION_JUDGES else p for p in props
    ]
    return [*out, witness]


def _round_trip_partners(props: list[Property]) -> list[Property]:
    """With ``verification_round_trip``, the properties that judge the window between a leader's verification
    request and its callback get partners proving the window was entered: a marker of the producer id landed
    between a verification's start and its callback (the KIP-890 ABA under TV1, the previous transaction's or a
    timeout's marker under TV2), and a refusal reached the callback."""
    extra: dict[str, tuple[str, ...]] = {
        "no_hanging_transaction": ("verification_outlived_by_marker",),
        "txn_produce_answer_per_kafka": ("verification_outlived_by_marker", "verification_refused"),
    }
    witnesses = [
        sometimes_event(
            "verification_outlived_by_marker",
            "A partition leader's verification was called back after a marker of its producer id landed on the "
            "partition (the window UnifiedLog's VerificationGuard exists for).",
            "verification_overtaken_by_marker",
        ),
        sometimes_event(
            "verification_refused",
            "A partition leader's verification callback got a refusal (coordinator error, lost connection, "
            "coordinator moved) and answered the producer with its translation.",
            "verification_rejected",
        ),
    ]
    out = [replace(p, partners=(*p.partners, *extra[p.name])) if p.name in extra else p for p in props]
    return [*out, *witnesses]


def _leader_election_partners(props: list[Property], round_trip: bool) -> list[Property]:
    """With a data partition's leadership moving (``leader_election``), the properties that read what the new
    leader rebuilt from the log get partners proving it had something to rebuild: a transaction open on the
    partition (the last stable offset, the markers that must close it), an aborted range (read_committed), and,
    with the verification round trip, a verification the deposed leader had started (its callback answers
    NOT_LEADER_OR_FOLLOWER)."""
    extra: dict[str, tuple[str, ...]] = {
        "lso_per_kafka": ("leader_elected_mid_transaction",),
        "no_hanging_transaction": ("leader_elected_mid_transaction",),
        "no_aborted_read": ("leader_elected_with_aborted_range",),
    }
    witnesses = [
        sometimes_event(
            "leader_elected_mid_transaction",
            "A partition's leadership moved to a follower while a transaction was open on the partition.",
            "leader_elected_mid_transaction",
        ),
        sometimes_event(
            "leader_elected_with_aborted_range",
            "A partition's leadership moved to a follower after an aborted transaction had written to it.",
            "leader_elected_with_aborted_range",
        ),
    ]
    if round_trip:
        extra["txn_produce_answer_per_kafka"] = ("verification_on_deposed_leader",)
        witnesses.append(
            sometimes_event(
                "verification_on_deposed_leader",
                "A verification's callback ran after the partition's leadership had moved (NOT_LEADER_OR_FOLLOWER).",
                "verification_leader_moved",
            )
        )
    out = [replace(p, partners=(*p.partners, *extra[p.name])) if p.name in extra else p for p in props]
    return [*out, *witnesses]


def _pending_partners(config: TxnConfig, props: list[Property]) -> list[Property]:
    """With ``pending_transitions``, the properties that judge Kafka's windows get partners proving the
    windows were entered: a request met a pending transition, an append failed, a failover lost an append."""
    faults = config.faults
    extra: dict[str, tuple[str, ...]] = {
        "healthy_producer_not_failed": ("request_during_pending_transition",),
        "transactions_complete": ("request_during_pending_transition",),
    }
    witnesses = [
        sometimes_event(
            "request_during_pending_transition",
            "A request met a transition whose append was in flight or whose markers were being written "
            "(CONCURRENT_TRANSACTIONS for pendingState).",
            "pending_transition_in_progress",
        )
    ]
    if faults.append_failure:
        extra["cached_epoch_follows_log"] = ("pending_append_failed",)
        extra["clients_settle"] = ("pending_append_failed",)
        witnesses.append(
            sometimes_event(
                "pending_append_failed",
                "A transaction-log append in flight failed (its callback ran).",
                "txn_log_append_failed",
            )
        )
    if faults.append_failure and faults.append_errors != TxnFaultBudget.append_errors:
        # the leader errors the scenario names reach the completion's own append too (CompleteCommit/CompleteAbort
        # carries no partitions): tryAppendToLog re-enqueues it on COORDINATOR_NOT_AVAILABLE (KAFKA-5416) and skips
        # it on NOT_COORDINATOR, the next coordinator completing the transaction (TransactionMarkerChannelManager)
        answers = {append_error_answer(e) for e in faults.append_errors if e not in APPEND_TOO_LARGE}
        completion = (
            (Errors.COORDINATOR_NOT_AVAILABLE, "completion_append_retried", "txn_log_append_retried", "re-enqueued"),
            (Errors.NOT_COORDINATOR, "completion_append_skipped", "complete_append_skipped", "skipped"),
        )
        for answer, name, event, what in completion:
            if answer in answers:
                extra["transactions_complete"] = (*extra["transactions_complete"], name)
                fact = f"A CompleteCommit/CompleteAbort append failed ({answer}) and was {what}."
                witnesses.append(sometimes_event(name, fact, event))
    if faults.coordinator_failover and config.topology.loading_window:
        # the loading window: the new coordinator answered a request COORDINATOR_LOAD_IN_PROGRESS, and a deposed
        # coordinator's append called back after the failover (NOT_COORDINATOR, the new cache untouched)
        extra["coordinator_answers_per_kafka_table"] = ("answered_while_loading", "old_coordinator_append_called_back")
        extra["healthy_producer_not_failed"] = (*extra["healthy_producer_not_failed"], "answered_while_loading")
        extra["transactions_complete"] = (*extra["transactions_complete"], "old_coordinator_append_called_back")
        witnesses += [
            sometimes_event(
                "answered_while_loading",
                "A request reached the new transaction coordinator while it was loading __transaction_state "
                "(COORDINATOR_LOAD_IN_PROGRESS).",
                "coordinator_loading",
            ),
            sometimes_event(
                "old_coordinator_append_called_back",
                "A transaction-log append of the coordinator deposed by a failover called back after it "
                "(NOT_LEADER_OR_FOLLOWER translated to NOT_COORDINATOR).",
                "txn_log_append_stale",
            ),
        ]
        if config.eos is not None:
            # consume-transform-produce: the group coordinator's verification of a TxnOffsetCommit reached the
            # loading transaction coordinator, whose getTransactionState answers it first (the judge's txn_loading)
            key = "coordinator_answers_per_kafka_table"
            extra[key] = (*extra[key], "txn_offset_commit_verified_while_loading")
            witnesses.append(
                sometimes_event(
                    "txn_offset_commit_verified_while_loading",
                    "The group coordinator's TxnOffsetCommit verification reached the transaction coordinator while "
                    "it was loading __transaction_state (COORDINATOR_LOAD_IN_PROGRESS, carried back to the client).",
                    "txn_offset_commit_verification_loading",
                )
            )
    if faults.coordinator_failover:
        # a failover that found appends in flight replicated: the new coordinator loads their transitions
        # (CoordinatorFailoverReplicated; the old instance's callbacks answer NOT_COORDINATOR)
        extra["cached_epoch_follows_log"] = (*extra.get("cached_epoch_follows_log", ()), "replicated_append_loaded")
        witnesses.append(
            sometimes_event(
                "replicated_append_loaded",
                "A coordinator failover found a transaction-log append in flight replicated, and the new "
                "coordinator loaded its transition.",
                "txn_log_append_replicated_loaded",
            )
        )
    if faults.coordinator_failover and not config.topology.loading_window:
        extra["acknowledged_after_logged"] = ("append_lost_in_failover",)
        witnesses.append(
            sometimes_event(
                "append_lost_in_failover",
                "A coordinator failover lost a transaction-log append in flight (never replicated).",
                "txn_log_append_lost",
            )
        )
    out = [replace(p, partners=(*p.partners, *extra[p.name])) if p.name in extra else p for p in props]
    return [*out, *witnesses]
