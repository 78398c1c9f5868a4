"""The producers a Connect worker uses, against the Kafka cluster of the transactions model.

Not a second copy of Kafka: every transition here is one of the shared
handlers.  Task producers (``${groupId}-${connector}-${taskId}``, ``Worker.taskTransactionalId``) and the
leader's config-topic producer (``connect-cluster-${groupId}``, ``DistributedConfig.transactionalProducerId``)
are transactional ids of the transaction coordinator in
:mod:`model.coordinator.transaction.transaction_coordinator` (InitProducerId, AddPartitionsToTxn, EndTxn);
their batches go through :func:`model.log.partition.handle_txn_produce` (with the
KIP-890 verification / TV2 implicit add), and the COMMIT/ABORT control
batches are written by :func:`model.log.txn_markers.append_end_txn_marker`.

Abstraction (documented): each client call is one atomic step -- the request,
the coordinator's log append, the WriteTxnMarkers round and the response.  The
transactions model (:mod:`model.systems.transactions`) explores the interleavings
*inside* those calls; the Connect model explores the interleavings *between*
them (worker pauses, crashes, rebalances, fencing rounds).

``Admin.fenceProducers`` (KIP-618) is :func:`fence_producers`: InitProducerId
with producer id and epoch -1 for each transactional id, the same request a new
producer instance's ``initTransactions`` sends; CONCURRENT_TRANSACTIONS (the
id had an open transaction, which the coordinator fenced and aborted) is
retried in place.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.codec import record
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.log import partition as part
from keos.model.log.txn_markers import MarkerRules, append_end_txn_marker, marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.variants import ProtocolFlags

__all__ = [
    "KafkaCluster",
    "ProducerHandle",
    "append_plain",
    "end_transaction",
    "fence_producers",
    "init_transactions",
    "send_transactional",
]

PREPARE = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)
Events = tuple[str, ...]


@record
class KafkaCluster(NamedTuple):
    """The brokers: partition leaders, the transaction coordinator's cache and the producer-id allocator."""

    partitions: tuple[part.PartitionLeader, ...]
    coordinator: tuple[tc.TransactionMetadata | None, ...]
    next_producer_id: int = 0


@record
class ProducerHandle(NamedTuple):
    """A transactional producer instance (``TransactionManager``'s view): id, epoch, sequences, open txn."""

    transactional_id: int
    producer_id: int = -1
    producer_epoch: int = -1
    sequences: tuple[int, ...] = ()
    in_transaction: bool = False
    added: tuple[int, ...] = ()


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


def _apply(
    cluster: KafkaCluster, tid: int, out: tc.Outcome, tv: int, rules: MarkerRules
) -> tuple[KafkaCluster, Events]:
    """Install a coordinator outcome; a Prepare* state has its markers written (under the variant's ``rules``)
    and completes."""
    cluster = cluster._replace(coordinator=_at(cluster.coordinator, tid, out.metadata))
    if out.used_fresh_pid:
        cluster = cluster._replace(next_producer_id=cluster.next_producer_id + 1)
    events = out.events
    md = out.metadata
    if not (out.wrote and md is not None and md.state in PREPARE):
        return cluster, events
    committed = md.state == TransactionState.PREPARE_COMMIT
    partitions = cluster.partitions
    for q in md.partitions:
        marker = WriteTxnMarkersRequest(tid, md.producer_id, md.producer_epoch, 0, committed, q)
        leader, error, mevents = append_end_txn_marker(partitions[q], marker, tv, rules)
        partitions = _at(partitions, q, leader)
        events = (*events, *mevents)
        md, _ = tc.handle_marker_response(md, md.producer_id, md.producer_epoch, q, error)
        assert md is not None
    cluster = cluster._replace(partitions=partitions, coordinator=_at(cluster.coordinator, tid, md))
    if md.partitions:  # unreachable: the Connect model injects no marker failure, every marker is written
        return cluster, (*events, "markers_dropped")
    done = tc.complete_transaction(md)
    cluster, more = _apply(cluster, tid, done, tv, rules)
    return cluster, (*events, *more)


def init_transactions(
    cluster: KafkaCluster, tid: int, partitions: int, cfg: tc.CoordinatorConfig
) -> tuple[KafkaCluster, ProducerHandle | None, Events]:
    """``initTransactions()`` of a *new* producer instance: InitProducerId(tid, -1, -1), retried in place.

    Returns the handle (``None`` if the coordinator refused) -- its epoch fences
    every older instance of ``tid`` (``ExactlyOnceWorkerSourceTask``, ``initTransactions``).
    """
    events: Events = ()
    # InitProducerId(-1, -1) answers NONE, or CONCURRENT_TRANSACTIONS after it fenced and aborted an open
    # transaction (whose markers _apply writes at once): the second attempt succeeds.
    for _ in range(3):  # no branch: the second attempt succeeds
        out = tc.handle_init_producer_id(cluster.coordinator[tid], tid, -1, -1, cluster.next_producer_id, cfg)
        cluster, evs = _apply(cluster, tid, out, cfg.transaction_version, cfg.markers)
        events = (*events, *evs)
        if out.error == Errors.NONE:
            return cluster, ProducerHandle(tid, out.producer_id, out.producer_epoch, (0,) * partitions), events
        if out.error != Errors.CONCURRENT_TRANSACTIONS:  # unreachable: no other answer (see above)
            break
    return cluster, None, events  # unreachable: the second attempt succeeds


def fence_producers(
    cluster: KafkaCluster, tids: tuple[int, ...], cfg: tc.CoordinatorConfig
) -> tuple[KafkaCluster, bool, Events]:
    """``Admin.fenceProducers(tids)`` (KIP-618): InitProducerId(tid, -1, -1) for each id; ``True`` if all succeeded."""
    ok = True
    events: Events = ()
    for tid in tids:
        cluster, handle, evs = init_transactions(cluster, tid, 0, cfg)
        events = (*events, *evs)
        ok = ok and handle is not None
    return cluster, ok, events


def send_transactional(
    cluster: KafkaCluster,
    h: ProducerHandle,
    partition: int,
    records: tuple[int, ...],
    flags: ProtocolFlags,
) -> tuple[KafkaCluster, ProducerHandle, str, Events]:
    """``send()`` in a transaction (``maybeBeginTransaction`` is implicit) and the produce round trip.

    Under TV<2 the client first adds the partition (AddPartitionsToTxn); under
    TV2 the partition leader adds it through the coordinator (``VerificationStateEntry.java``).  Returns
    the producer's error: INVALID_PRODUCER_EPOCH / PRODUCER_FENCED mean a
    newer instance of the transactional id exists.
    """
    tv = flags.transaction_version
    tid, pid, epoch = h.transactional_id, h.producer_id, h.producer_epoch
    events: Events = ()
    if tv < 2 and partition not in h.added:
        out = tc.handle_add_partitions(cluster.coordinator[tid], pid, epoch, (partition,))
        cluster, events = _apply(cluster, tid, out, tv, marker_rules(flags))
        if out.error != Errors.NONE:
            return cluster, h, out.error, events
        h = h._replace(added=(*h.added, partition))
    req = ProduceRequest(0, 0, partition, pid, epoch, h.sequences[partition], records, True)
    leader = cluster.partitions[partition]
    verification = Errors.NONE
    if part.txn_produce_needs_verification(leader, req, flags):
        md = cluster.coordinator[tid]
        if tv >= 2:
            out = tc.handle_add_partitions(md, pid, epoch, (partition,))
            cluster, more = _apply(cluster, tid, out, tv, marker_rules(flags))
            events = (*events, *more)
            verification = out.error
        else:
            verification = tc.handle_verify_partition(md, pid, epoch, partition)
    leader, resp, pevents = part.handle_txn_produce(cluster.partitions[partition], req, flags, verification)
    cluster = cluster._replace(partitions=_at(cluster.partitions, partition, leader))
    events = (*events, *pevents)
    if resp.error != Errors.NONE:
        return cluster, h, resp.error, events
    seqs = _at(h.sequences, partition, h.sequences[partition] + len(records))
    added = h.added if partition in h.added else (*h.added, partition)
    return cluster, h._replace(sequences=seqs, in_transaction=True, added=added), Errors.NONE, events


def end_transaction(
    cluster: KafkaCluster, h: ProducerHandle, committed: bool, cfg: tc.CoordinatorConfig
) -> tuple[KafkaCluster, ProducerHandle, str, Events]:
    """``commitTransaction()`` / ``abortTransaction()``: EndTxn, the markers, CompleteCommit/Abort.

    A transaction that sent nothing completes locally.  Under TV2 the response
    carries the bumped epoch and the sequences restart at 0.
    """
    # Every call in the model follows a send in the same transaction (a Poll, the offsets, a config record);
    # ExactlyOnceWorkerSourceTask.commitTransaction skips the producer when there is nothing to commit.
    if not h.in_transaction:  # unreachable: every call follows a send (above)
        return cluster, h._replace(added=()), Errors.NONE, ()
    tid = h.transactional_id
    out = tc.handle_end_txn(
        cluster.coordinator[tid], h.producer_id, h.producer_epoch, committed, cluster.next_producer_id, cfg
    )
    cluster, events = _apply(cluster, tid, out, cfg.transaction_version, cfg.markers)
    if out.error != Errors.NONE:
        return cluster, h, out.error, events
    pid, epoch = h.producer_id, h.producer_epoch
    if cfg.transaction_version >= 2:
        pid, epoch = out.producer_id, out.producer_epoch
    seqs = h.sequences if (pid, epoch) == (h.producer_id, h.producer_epoch) else (0,) * len(h.sequences)
    h = h._replace(producer_id=pid, producer_epoch=epoch, sequences=seqs, in_transaction=False, added=())
    return cluster, h, Errors.NONE, events


def append_plain(
    cluster: KafkaCluster, partition: int, records: tuple[int, ...], flags: ProtocolFlags
) -> tuple[KafkaCluster, Events]:
    """A plain (non-transactional) producer's write with acks=all: appended and visible at once."""
    req = ProduceRequest(0, 0, partition, part.NO_PRODUCER_ID, -1, -1, records, False)
    leader, _resp, events = part.handle_produce(cluster.partitions[partition], req, "all", flags)
    return cluster._replace(partitions=_at(cluster.partitions, partition, leader)), events
