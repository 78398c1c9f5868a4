"""Progress of Kafka transactions: what must happen once faults stop (KIP-98 §Transactional guarantees, KIP-890).

Every safety invariant of :mod:`keos.invariants.transactions` is silent about a
system that stops: a transaction stuck in PrepareCommit breaks no "at
quiescence" check because it never becomes quiescent.  The ``EVENTUALLY``
properties here (``□◇P`` under fairness, :class:`keos.model.interface.Expectation`)
say what a Kafka engineer expects of a run once faults stop:

* ``transactions_complete`` -- no coordinator transaction stays Ongoing or
  Prepare*;
* ``lso_reaches_high_watermark_eventually`` -- every partition's LSO reaches
  its high watermark, so ``read_committed`` consumers see everything;
* ``committed_transactions_visible`` -- every record of a transaction the
  application saw commit is committed;
* ``clients_settle`` -- no producer stays in a non-final state (initializing,
  in a transaction, committing, aborting, abortable).

An engine judges them on stuck states (no protocol step enabled) and on
weakly fair cycles of protocol steps.  The fairness each relies on is listed in
its ``fairness`` field, in Kafka's terms.

``prepared_transaction_has_markers`` is the safety half that every engine
checks today: a transaction in Prepare* must have a WriteTxnMarkers request in
flight for every partition whose marker is not yet written; a coordinator that
gave up on its markers (INVALID_PRODUCER_EPOCH from the partition leader,
``TransactionMarkerRequestCompletionHandler``) leaves the transaction in
Prepare* forever -- the KAFKA-19999 livelock.
"""

from __future__ import annotations

from keos.invariants._common import no_findings, sometimes_state
from keos.model.clients import transactional_producer as tp
from keos.model.clients.consumer import COMMITTED, record_fates
from keos.model.clients.producer import record_id, record_label
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.interface import Expectation, Property
from keos.model.log.partition import last_stable_offset
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.systems.transactions_records import TxnConfig, TxnSystemState

__all__ = [
    "TXN_FAIRNESS",
    "open_transactions",
    "pending_markers",
    "txn_progress_properties",
    "unfinished_committed_records",
    "unsettled_clients",
    "unstable_partitions",
]

S = TransactionState
OPEN = (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT)

#: The fairness the transactions' progress relies on (Kafka's own retry and timeout machinery).
TXN_FAIRNESS = (
    "faults stop",
    "every enabled protocol step is eventually taken (weak fairness)",
    "the coordinator retries WriteTxnMarkers until each marker is written (TransactionMarkerChannelManager)",
    "transaction.timeout.ms fires for an Ongoing transaction no client ends",
    "clients retry retriable errors (CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_AVAILABLE)",
)

#: Final client states: not started, done (READY: the application begins its next transaction
#: itself if it has one), or to be closed (FATAL_ERROR).
FINAL_CLIENT_STATES = (tp.C.UNINITIALIZED, tp.C.READY, tp.C.FATAL_ERROR)


def open_transactions(s: TxnSystemState) -> list[str]:
    """Coordinator transactions in Ongoing or Prepare* (or with a pending transition)."""
    return [
        f"transactional id {t} is {md.state}{' (pending ' + md.pending_state + ')' if md.pending_state else ''} "
        f"at (pid {md.producer_id}, epoch {md.producer_epoch})"
        for t, md in enumerate(s.coordinator)
        if md is not None and (md.state in OPEN or md.pending_state)
    ]


def unstable_partitions(s: TxnSystemState) -> list[str]:
    """Partitions whose LSO is below the high watermark: the data partitions and, in the consume-transform-produce
    model, the group's ``__consumer_offsets`` partition (a TxnOffsetCommit no marker ever decides hangs it:
    OffsetFetch(requireStable) answers UNSTABLE_OFFSET_COMMIT for good, KIP-447 / KIP-890)."""
    out = [
        f"partition {q}: LSO {last_stable_offset(p)} < high watermark {p.high_watermark}"
        for q, p in enumerate(s.partitions)
        if last_stable_offset(p) < p.high_watermark
    ]
    offsets = None if s.group is None else s.group.offsets_log
    if offsets is not None and last_stable_offset(offsets) < offsets.high_watermark:
        out.append(f"__consumer_offsets: LSO {last_stable_offset(offsets)} < high watermark {offsets.high_watermark}")
    return out


def unfinished_committed_records(rpt: int, s: TxnSystemState) -> list[str]:
    """Records of transactions the application saw commit that are not (yet) committed."""
    fates: dict[int, str] = {}
    for leader in s.partitions:
        fates.update(record_fates(leader))
    out: list[str] = []
    for o in s.ghost.outcomes:
        if not o.committed:
            continue
        for n in range(rpt):
            rid = record_id(o.producer, o.txn * rpt + n)
            if fates.get(rid) != COMMITTED:
                out.append(f"{record_label(rid)} of committed transaction {o.txn} is {fates.get(rid) or 'missing'}")
    return out


def unsettled_clients(s: TxnSystemState) -> list[str]:
    """Producers in a non-final state (or with a coordinator request in flight).

    A producer whose application abandoned its transaction (the adversary's ``AbandonTransaction``, the
    KIP-98 §9 endless transaction) never calls commit or abort again by construction: it is not judged.
    """
    return [
        f"producer {i} is {c.state}{' with a request in flight' if c.inflight else ''}"
        for i, c in enumerate(s.clients)
        if (c.state not in FINAL_CLIENT_STATES or c.inflight) and i not in s.security.abandoned
    ]


def pending_markers(s: TxnSystemState) -> list[str]:
    """Prepare* transactions with a partition whose marker is neither written nor in flight (none while the
    coordinator is still loading: the load's end re-sends the markers of every Prepare* transaction)."""
    if s.loading:
        return []
    in_flight = {
        (env.body.producer_id, env.body.producer_epoch, env.body.partition)
        for env in s.network
        if isinstance(env.body, WriteTxnMarkersRequest)
    }
    out: list[str] = []
    for t, md in enumerate(s.coordinator):
        if md is None or md.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            continue
        for q in md.partitions:
            if (md.producer_id, md.producer_epoch, q) not in in_flight:
                out.append(
                    f"transactional id {t} is {md.state} at epoch {md.producer_epoch} but no marker for "
                    f"partition {q} is in flight: it can never complete"
                )
    return out


def _some_prepared(s: TxnSystemState) -> bool:
    return any(md is not None and md.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT) for md in s.coordinator)


def txn_progress_properties(config: TxnConfig) -> tuple[Property, ...]:
    """The progress properties of the transactions (and consume-transform-produce) models."""
    rpt = config.topology.records_per_transaction
    props: list[Property] = [
        Property(
            name="transactions_complete",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, no transaction stays Ongoing, PrepareCommit or PrepareAbort at the coordinator: "
            "every transaction reaches CompleteCommit/CompleteAbort (or the id is Empty).",
            source="KIP-98 §Transactional guarantees (commit/abort always completes); KIP-890 (hanging "
            "transactions); TransactionCoordinator / TransactionMarkerChannelManager",
            catches="KAFKA-19999 (marker retry rejected: PrepareAbort forever), a TV2 batch joining the previous "
            "transaction (PrepareCommit forever; KAFKA-14563), a fence at an unchanged epoch whose marker is rejected",
            predicate=lambda s: not open_transactions(s),
            partners=("txn_completed", "transaction_prepared"),
            explain=lambda s: "; ".join(open_transactions(s)),
            fairness=TXN_FAIRNESS,
        ),
        Property(
            name="lso_reaches_high_watermark_eventually",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every partition's last stable offset reaches its high watermark, so a "
            "read_committed consumer is not blocked forever.",
            source="KIP-98 §7 (LSO, isolation.level); KIP-890 motivation (hanging transactions); "
            "UnifiedLog.lastStableOffset",
            catches="KAFKA-12671 (a late produce opens a transaction nobody ends), a marker that is never written",
            predicate=lambda s: not unstable_partitions(s),
            partners=("lso_held_back",),
            explain=lambda s: "; ".join(unstable_partitions(s)),
            fairness=TXN_FAIRNESS,
        ),
        Property(
            name="clients_settle",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every producer reaches a final state: READY with its work done, or "
            "FATAL_ERROR (the application closes it); none waits forever initializing, in a transaction, "
            "committing, aborting or in an abortable error.",
            source="KIP-98 §Producer API (commitTransaction/abortTransaction return or throw); "
            "TransactionManager states",
            catches="a client retrying CONCURRENT_TRANSACTIONS forever against a transaction stuck in Prepare*",
            predicate=lambda s: not unsettled_clients(s),
            partners=("txn_committed",),
            explain=lambda s: "; ".join(unsettled_clients(s)),
            fairness=TXN_FAIRNESS,
        ),
        no_findings(
            name="prepared_transaction_has_markers",
            fact="A transaction in PrepareCommit/PrepareAbort has a WriteTxnMarkers request in flight for every "
            "partition whose marker is not written yet, so it can complete.",
            source="KIP-98 §WriteTxnMarkers; TransactionMarkerRequestCompletionHandler (INVALID_PRODUCER_EPOCH "
            "cancels the markers of the transaction)",
            catches="KAFKA-19999 (a re-sent marker rejected at the same epoch), a marker at an epoch the partition "
            "already moved past (TV2 batch joining the previous transaction, fence at an unchanged epoch)",
            findings=pending_markers,
            partners=("markers_sent",),
        ),
        sometimes_state(
            "transaction_prepared",
            "A coordinator transaction was in PrepareCommit or PrepareAbort.",
            _some_prepared,
        ),
        Property(
            name="markers_sent",
            expectation=Expectation.SOMETIMES,
            fact="The coordinator sent WriteTxnMarkers requests.",
            source="reachability",
            catches="reachability (markers_sent)",
            event="markers_sent",
        ),
    ]
    if config.faults.marker_failure:
        props.append(
            Property(
                name="marker_retried",
                expectation=Expectation.SOMETIMES,
                fact="The coordinator re-sent a marker its partition leader answered with a retriable error "
                "(TransactionMarkerRequestCompletionHandler re-enqueues it), and prepared_transaction_has_markers "
                "and transactions_complete still held.",
                source="reachability",
                catches="reachability (marker_retried)",
                event="marker_retried",
            )
        )
    if config.eos is None:
        props.append(
            Property(
                name="committed_transactions_visible",
                expectation=Expectation.EVENTUALLY,
                fact="Once faults stop, every record of a transaction the application saw commit is committed "
                "(its COMMIT marker is written on every partition).",
                source="KIP-98 §Transactional guarantees (atomic commit); KIP-890 motivation",
                catches="a transaction acknowledged to the application whose COMMIT marker is never written "
                "(the fault-free KAFKA-14563 hang of txn_kafka_17754_delayed_endtxn)",
                predicate=lambda s: not unfinished_committed_records(rpt, s),
                partners=("txn_committed",),
                explain=lambda s: "; ".join(unfinished_committed_records(rpt, s)),
                fairness=TXN_FAIRNESS,
            )
        )
    return tuple(props)
