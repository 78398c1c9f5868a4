"""The group coordinator: a classic consumer group and its committed offsets.

Kafka's ``GroupCoordinator`` / ``OffsetMetadataManager`` and ``ClassicGroup``
(``OffsetMetadataManager``, KIP-447, KIP-98 §"consume-transform-produce").  For one
group the coordinator keeps a :class:`GroupMetadata`:

* **membership**: the members, the ``generation`` (bumped by every rebalance),
  the group state (``Stable`` / ``CompletingRebalance``; a rebalance moves the
  group to CompletingRebalance and the last member's SyncGroup back to Stable)
  and the assignment of each input partition;
* **committed offsets** per input partition, each with the *record offset* of
  the ``__consumer_offsets`` record that carried it;
* **pending transactional offsets** per producer id
  (``pendingTransactionalOffsets``): a TxnOffsetCommit appends a transactional
  record to the group's ``__consumer_offsets`` partition and stages the offset;
  the COMMIT marker materialises it only if its record offset is greater than
  that of the existing committed offset (a later plain commit wins), the ABORT
  marker discards it (``OffsetMetadataManager.replayEndTransactionMarker``);
* the group's ``__consumer_offsets`` partition itself, a
  :class:`~model.log.partition.PartitionLeader`, so markers get the same
  producer-epoch and coordinator-epoch checks as on a data partition
  (:func:`model.log.txn_markers.append_end_txn_marker`).

Validation (``ClassicGroup.validateOffsetCommit``, trunk ``1eb7644349cb``) is data:
:data:`OFFSET_COMMIT_CHECKS` lists the checks in the order Kafka applies them,
and both commit handlers and the tests read it.  A transactional commit is not
rejected during CompletingRebalance (KIP-447), a plain one is.  OffsetFetch
with ``requireStable`` answers UNSTABLE_OFFSET_COMMIT while any pending
transactional offset exists for the partition.

Simplifications: one group, members are named by their instance index, member
ids never change, static membership (FENCED_INSTANCE_ID) and KIP-848 consumer
groups are not modelled; the assignor's choice is an argument (the environment
picks the new owner of a moved partition).
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.log.partition import CONTROL_COMMIT, LogEntry, PartitionLeader, _put_entry
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.log.txn_markers import MarkerRules, append_end_txn_marker
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import WriteTxnMarkersRequest

__all__ = [
    "COMPLETING_REBALANCE",
    "DEAD",
    "EMPTY",
    "OFFSET_COMMIT_CHECKS",
    "STABLE",
    "GroupMetadata",
    "OffsetAndMetadata",
    "PendingOffset",
    "append_txn_offset_commit",
    "committed_offset",
    "finish_load",
    "form_group",
    "handle_offset_commit",
    "handle_offset_fetch",
    "handle_txn_marker",
    "has_pending",
    "load_offsets",
    "rebalance",
    "sync_group",
    "txn_offset_commit_needs_verification",
    "validate_offset_commit",
    "verification_error",
]

#: ``ClassicGroupState`` names.
EMPTY = "Empty"
STABLE = "Stable"
COMPLETING_REBALANCE = "CompletingRebalance"
DEAD = "Dead"

#: ``ClassicGroup.validateOffsetCommit``, in Kafka's order: (check, error).
OFFSET_COMMIT_CHECKS: tuple[tuple[str, str], ...] = (  # no mutate: docs, read by tests
    ("group is Dead", Errors.COORDINATOR_NOT_AVAILABLE),  # no mutate: docs, read by tests
    ("generation < 0 and group Empty: accepted (admin/simple commit)", Errors.NONE),  # no mutate: docs, read by tests
    ("transactional, no member id, generation < 0: accepted", Errors.NONE),  # no mutate: docs, read by tests
    ("member unknown", Errors.UNKNOWN_MEMBER_ID),  # no mutate: docs, read by tests
    ("generation != group generation", Errors.ILLEGAL_GENERATION),  # no mutate: docs, read by tests
    ("plain commit while CompletingRebalance", Errors.REBALANCE_IN_PROGRESS),  # no mutate: docs, read by tests
)
"""The member and generation checks come before the CompletingRebalance one (``ClassicGroup.validateOffsetCommit``,
trunk 1eb7644, 2024-10-25); found by ``keos differential``: a stale generation during CompletingRebalance is
ILLEGAL_GENERATION on the real broker, and a TxnOffsetCommit with no member id and generation -1 is accepted
in a non-empty group."""


@record
class OffsetAndMetadata(NamedTuple):
    """A committed offset and the ``__consumer_offsets`` record offset that carried it."""

    partition: int
    offset: int
    record_offset: int


@record
class PendingOffset(NamedTuple):
    """A transactional offset staged for ``producer_id`` until its marker."""

    producer_id: int
    partition: int
    offset: int
    record_offset: int


@record
class GroupMetadata(NamedTuple):
    """One classic group at the coordinator.

    ``assignment[p]`` is the member owning input partition ``p`` (-1: none);
    ``synced`` the members that received the current generation's assignment.
    ``loading``: a new coordinator is still replaying the group's ``__consumer_offsets`` partition
    (``CoordinatorRuntime``'s shard in state LOADING, Kafka trunk ``1eb7644349cb``): its reads and
    writes are answered COORDINATOR_LOAD_IN_PROGRESS until the load completes.
    """

    group_id: int
    generation: int = 0
    state: str = EMPTY
    members: tuple[int, ...] = ()
    synced: tuple[int, ...] = ()
    assignment: tuple[int, ...] = ()
    committed: tuple[OffsetAndMetadata, ...] = ()
    pending: tuple[PendingOffset, ...] = ()
    offsets_log: PartitionLeader = PartitionLeader()
    loading: bool = False


# -- membership -------------------------------------------------------------------------------------


def form_group(group_id: int, members: tuple[int, ...], assignment: tuple[int, ...]) -> GroupMetadata:
    """A group whose first rebalance completed: generation 1, Stable, every member synced."""
    g = rebalance(GroupMetadata(group_id), members, assignment)
    for m in members:
        g = sync_group(g, m)
    return g


def rebalance(g: GroupMetadata, members: tuple[int, ...], assignment: tuple[int, ...]) -> GroupMetadata:
    """A JoinGroup round completes: generation + 1, CompletingRebalance, the leader's assignment.

    A member joining or leaving, or a member whose poll interval expired and
    rejoined, all end here; the old generation's group metadata held by the
    application becomes stale.
    """
    return g._replace(
        generation=g.generation + 1,
        state=COMPLETING_REBALANCE if members else EMPTY,
        members=tuple(sorted(members)),
        synced=(),
        assignment=assignment,
    )


def sync_group(g: GroupMetadata, member: int) -> GroupMetadata:
    """SyncGroup of a member of the current generation while the group is CompletingRebalance: the
    member receives its assignment; the last one makes the group Stable.

    The abstract eos mode's only SyncGroup, and its callers send it only in that case; SyncGroup's
    errors (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS) are modelled where members
    come and go, by :func:`~keos.model.coordinator.group.classic_group.sync_group` (protocol mode)."""
    synced = tuple(sorted({*g.synced, member}))
    state = STABLE if set(synced) == set(g.members) else COMPLETING_REBALANCE
    return g._replace(synced=synced, state=state)


# -- offset commit validation (KIP-447, ``OffsetMetadataManager``) -------------------------------------------


def validate_offset_commit(
    g: GroupMetadata | None, member: int, generation: int, transactional: bool, check_generation: bool = True
) -> str:
    """``ClassicGroup.validateOffsetCommit`` (the order of :data:`OFFSET_COMMIT_CHECKS`).

    A missing group accepts only generation < 0 (a simple group would be
    created); ``check_generation=False`` is the pre-KAFKA-2555 coordinator that
    accepted commits from any generation.
    """
    if g is None:  # unreachable: the eos model forms its group in init_states (keos differential drives it)
        return Errors.NONE if generation < 0 else Errors.ILLEGAL_GENERATION
    if g.state == DEAD:  # unreachable: no group is ever Dead in the models (unloaded or deleted)
        return Errors.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and g.state == EMPTY:  # unreachable: abstract eos: every instance is a member of generation >= 1
        return Errors.NONE
    if transactional and generation < 0 and member < 0:  # unreachable: abstract eos members send index and generation
        return Errors.NONE  # a TxnOffsetCommit without group metadata (no member id, no generation)
    if member not in g.members:  # unreachable: abstract eos members never leave (keos differential drives it)
        return Errors.UNKNOWN_MEMBER_ID
    if check_generation and generation != g.generation:
        return Errors.ILLEGAL_GENERATION
    if not transactional and g.state == COMPLETING_REBALANCE:  # unreachable: no plain OffsetCommit (differential)
        return Errors.REBALANCE_IN_PROGRESS
    return Errors.NONE


def committed_offset(g: GroupMetadata | None, partition: int) -> OffsetAndMetadata | None:
    """The committed offset of ``partition``, if any."""
    return None if g is None else next((c for c in g.committed if c.partition == partition), None)


def has_pending(g: GroupMetadata | None, partition: int) -> bool:
    """Whether a transactional offset for ``partition`` awaits its marker."""
    return g is not None and any(p.partition == partition for p in g.pending)


def handle_offset_fetch(g: GroupMetadata | None, partition: int, require_stable: bool,
                        checks_loading: bool = True, honours_require_stable: bool = True) -> tuple[str, int]:
    """OffsetFetch: ``(error, offset)``; -1 when nothing is committed.

    With ``requireStable`` (KIP-447, OffsetFetch v7) a pending transactional
    offset for the partition answers UNSTABLE_OFFSET_COMMIT (retriable); a coordinator still
    loading the group answers COORDINATOR_LOAD_IN_PROGRESS (retriable); ``checks_loading=False`` is the weakened
    variant offset_fetch_served_while_loading.  Without ``requireStable`` (``Admin.listConsumerGroupOffsets``'
    default) the committed offset is answered whatever is pending (``OffsetMetadataManager.fetchOffsets``, trunk
    ``1eb7644349cb``: the read of the last committed snapshot); ``honours_require_stable=False`` is the weakened
    variant offset_fetch_unstable_without_require_stable.
    """
    if g is not None and g.loading and checks_loading:
        # CoordinatorRuntime.withActiveContextOrThrow: a read of a LOADING shard (ConsumerCoordinator's
        # OffsetFetch handler retries it)
        return Errors.COORDINATOR_LOAD_IN_PROGRESS, -1
    if (require_stable or not honours_require_stable) and has_pending(g, partition):
        return Errors.UNSTABLE_OFFSET_COMMIT, -1
    c = committed_offset(g, partition)
    return Errors.NONE, -1 if c is None else c.offset


def _set_committed(g: GroupMetadata, new: OffsetAndMetadata) -> GroupMetadata:
    rest = tuple(c for c in g.committed if c.partition != new.partition)
    return g._replace(committed=tuple(sorted((*rest, new))))


def handle_offset_commit(
    g: GroupMetadata, member: int, generation: int, partition: int, offset: int, check_generation: bool = True
) -> tuple[GroupMetadata, str, tuple[str, ...]]:
    """A plain OffsetCommit: validate, append a non-transactional record, commit at once."""
    error = validate_offset_commit(g, member, generation, False, check_generation)
    if error != Errors.NONE:
        return g, error, (f"offset_commit_rejected:{error}", f"error:{error}")
    record_offset = len(g.offsets_log.log)
    log = (*g.offsets_log.log, LogEntry(-1, -1, -1, (partition, offset)))
    leader = g.offsets_log._replace(log=log, high_watermark=len(log))
    g = _set_committed(g._replace(offsets_log=leader), OffsetAndMetadata(partition, offset, record_offset))
    return g, Errors.NONE, ("offset_committed",)


#: How the transaction coordinator's verdict on the group's ``__consumer_offsets`` partition reaches the
#: TxnOffsetCommit's client: ``AddPartitionsToTxnManager`` turns PRODUCER_FENCED into INVALID_PRODUCER_EPOCH
#: ("producers expect to handle INVALID_PRODUCER_EPOCH"); every other code passes through
#: ``CoordinatorOperationExceptionHelper.handleOperationException`` unchanged (INVALID_PRODUCER_ID_MAPPING,
#: CONCURRENT_TRANSACTIONS, TRANSACTION_ABORTABLE for TxnOffsetCommit v4+, whose ``genericError`` keeps it;
#: v0-v3 would get INVALID_TXN_STATE: the model's clients send v4+).  Kafka trunk 1eb7644349cb
#: ``core/.../server/AddPartitionsToTxnManager.scala``, ``CoordinatorPartitionWriter.scala``.
VERIFICATION_ERRORS: dict[str, str] = {Errors.PRODUCER_FENCED: Errors.INVALID_PRODUCER_EPOCH}


def verification_error(verdict: str) -> str:
    """The error a TxnOffsetCommit is answered when the transaction check says ``verdict``."""
    return VERIFICATION_ERRORS.get(verdict, verdict)


def txn_offset_commit_needs_verification(
    g: GroupMetadata | None, producer_id: int, producer_epoch: int, check_epoch: bool = True
) -> bool:
    """Whether the TxnOffsetCommit asks the transaction coordinator first (KIP-890 part 1, KAFKA-15449).

    ``UnifiedLog.maybeStartTransactionVerification`` on the group's ``__consumer_offsets`` partition:
    no round trip when the producer already has a transaction open there (a second commit of the
    same transaction, or a retry), ``hasOngoingTransaction(producerId, producerEpoch)`` -- since
    KAFKA-14563 (Kafka 4.0) only a transaction of the request's epoch counts; ``check_epoch=False``
    is Kafka 3.x's check on the producer id alone.
    """
    entry = None if g is None else g.offsets_log.entry(producer_id)
    if entry is None or entry.current_txn_first_offset < 0:
        return True
    return check_epoch and entry.producer_epoch != producer_epoch


def append_txn_offset_commit(
    g: GroupMetadata, producer_id: int, producer_epoch: int, partition: int, offset: int
) -> tuple[GroupMetadata, str, tuple[str, ...]]:
    """A validated TxnOffsetCommit is appended and staged (``OffsetMetadataManager.commitTransactionalOffset``).

    The transactional record is appended to the group's ``__consumer_offsets``
    partition with the producer's (pid, epoch); an epoch below the stored one
    is INVALID_PRODUCER_EPOCH (``ProducerAppendInfo.checkProducerEpoch``: what fences a zombie
    when no transaction verification ran first, Kafka < 3.6 or
    ``transaction.partition.verification.enable=false``).  A newer pending offset of the same
    producer for the same partition replaces the older one.
    """
    leader = g.offsets_log
    entry = leader.entry(producer_id)
    if entry is not None and producer_epoch < entry.producer_epoch:
        err = Errors.INVALID_PRODUCER_EPOCH
        return g, err, (f"txn_offset_commit_rejected:{err}", f"error:{err}")
    record_offset = len(leader.log)
    if entry is None or entry.producer_epoch != producer_epoch:
        first = record_offset if entry is None or entry.current_txn_first_offset < 0 else entry.current_txn_first_offset
        coordinator_epoch = -1 if entry is None else entry.coordinator_epoch
        new = ProducerStateEntry(producer_id, producer_epoch, (), coordinator_epoch, first)
    else:
        first = entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else record_offset
        new = entry._replace(current_txn_first_offset=first)
    log = (*leader.log, LogEntry(producer_id, producer_epoch, -1, (partition, offset), True))
    leader = leader._replace(log=log, high_watermark=len(log), producers=_put_entry(leader.producers, new))
    g = _stage(g._replace(offsets_log=leader), PendingOffset(producer_id, partition, offset, record_offset))
    events: tuple[str, ...] = ("txn_offset_commit_staged",)
    if g.state == COMPLETING_REBALANCE:
        events = (*events, "txn_offset_commit_during_completing_rebalance")
    return g, Errors.NONE, events


def handle_txn_marker(
    g: GroupMetadata,
    marker: WriteTxnMarkersRequest,
    transaction_version: int,
    rules: MarkerRules,
    in_log_order: bool = True,
) -> tuple[GroupMetadata, str, tuple[str, ...]]:
    """A COMMIT/ABORT marker on the group's ``__consumer_offsets`` partition.

    The marker is validated and appended like on any partition; then the
    producer's pending offsets are materialised (COMMIT, only where the record
    offset is greater than the committed one's) or discarded (ABORT).
    """
    leader, error, events = append_end_txn_marker(g.offsets_log, marker, transaction_version, rules)
    g = g._replace(offsets_log=leader)
    if error != Errors.NONE:
        return g, error, events
    g, more = _end_transaction(g, marker.producer_id, marker.committed, in_log_order)
    return g, error, (*events, *more)


def _end_transaction(
    g: GroupMetadata, producer_id: int, committed: bool, in_log_order: bool = True
) -> tuple[GroupMetadata, tuple[str, ...]]:
    """``OffsetMetadataManager.replayEndTransactionMarker``: the producer's pending offsets are
    materialised (COMMIT; each only if its record offset is above the committed offset's, so a later
    plain commit wins: the KAFKA-5247 fix) or discarded (ABORT).  ``in_log_order=False`` (a weakened variant)
    materialises them whatever was committed after them."""
    mine = tuple(p for p in g.pending if p.producer_id == producer_id)
    if not mine:
        return g, ()
    g = g._replace(pending=tuple(p for p in g.pending if p.producer_id != producer_id))
    if not committed:
        return g, ("offsets_discarded",)
    events: tuple[str, ...] = ()
    for p in mine:
        current = committed_offset(g, p.partition)
        if current is None or current.record_offset < p.record_offset or not in_log_order:
            g = _set_committed(g, OffsetAndMetadata(p.partition, p.offset, p.record_offset))
            events = (*events, "offsets_materialised")
        else:  # a plain commit landed after the transaction's record ([eos] plain_commits)
            events = (*events, "offsets_superseded")
    return g, events


def _stage(g: GroupMetadata, pending: PendingOffset) -> GroupMetadata:
    """A transactional offset joins its producer's pending offsets (a newer one for the partition replaces it)."""
    rest = tuple(p for p in g.pending if (p.producer_id, p.partition) != (pending.producer_id, pending.partition))
    return g._replace(pending=tuple(sorted((*rest, pending))))


def load_offsets(g: GroupMetadata, keep_pending: bool = True) -> GroupMetadata:
    """A new group coordinator loads the group's ``__consumer_offsets`` partition (failover).

    ``GroupCoordinatorShard`` replays every record through the same methods the live path uses
    (``OffsetMetadataManager.replay``: a plain offset commit -- producer id -1 -- is committed at
    once, a transactional one is pending for its producer; ``replayEndTransactionMarker`` at each
    marker; Kafka trunk ``1eb7644349cb``).  A transaction whose marker has not been written yet
    comes back pending, so ``requireStable`` keeps answering UNSTABLE_OFFSET_COMMIT and the marker,
    when it arrives, decides it.  The partition's log and producer state are durable and move
    with it; only the coordinator's cache is rebuilt.  The group comes back ``loading``: the load is
    asynchronous (``CoordinatorRuntime.scheduleLoadOperation``) and :func:`finish_load` ends it.
    ``keep_pending=False`` (a weakened variant)
    loads a transactional offset as committed, whatever its transaction's fate.
    """
    loaded = g._replace(committed=(), pending=(), loading=True)
    for record_offset, e in enumerate(g.offsets_log.log):
        if e.control:
            loaded, _ = _end_transaction(loaded, e.producer_id, e.control == CONTROL_COMMIT)
        elif e.transactional and keep_pending:
            partition, offset = e.records
            loaded = _stage(loaded, PendingOffset(e.producer_id, partition, offset, record_offset))
        else:  # a plain OffsetCommit's record ([eos] plain_commits, offsets_outside_transaction)
            partition, offset = e.records
            loaded = _set_committed(loaded, OffsetAndMetadata(partition, offset, record_offset))
    return loaded


def finish_load(g: GroupMetadata) -> GroupMetadata:
    """The load completes: the shard becomes ACTIVE (``CoordinatorRuntime.scheduleLoadOperation``'s completion,
    ``CoordinatorContext.transitionTo(ACTIVE)``, Kafka trunk ``1eb7644349cb``) and serves reads and writes again."""
    return g._replace(loading=False)
