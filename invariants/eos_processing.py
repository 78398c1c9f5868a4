"""Invariants of exactly-once consume-transform-produce (KIP-98 §"consume-transform-produce", KIP-447).

The application (:mod:`model.systems.eos`) turns input record ``k`` into one output
record and commits the input offset in the same transaction.  Ground truth is
read from the logs, independently of the application's own bookkeeping:

* the *fate* of every output batch comes from the control batches that follow
  it in the output partition (:func:`output_fates`, per log offset, so a record
  written twice is counted twice);
* the *committed offset* is the group coordinator's materialised offset for
  the input partition (:func:`model.coordinator.group.group_coordinator.committed_offset`).

A state is *settled* when no WriteTxnMarkers request is in flight and no
transaction coordinator entry is in PrepareCommit/PrepareAbort: every decided
transaction has reached both the output partition and ``__consumer_offsets``.
Between the two markers of one transaction the output may already be
committed while the offset is not yet materialised; that is not a violation.

Kafka's own system test (``tests/kafkatest/tests/core/transactions_test.py``) checks the
same facts on a real cluster: no duplicates in the output, and the input set
equals the output set once the copiers finish.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from types import MappingProxyType

from keos.invariants._common import no_findings, sometimes_state
from keos.invariants.progress import TXN_FAIRNESS
from keos.model.clients import consumer_coordinator as cc
from keos.model.clients import transactional_producer as tp
from keos.model.clients.consumer import READ_UNCOMMITTED, fetch
from keos.model.clients.producer import record_label
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.coordinator.group.assignors import COOPERATIVE
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.interface import Expectation, Property
from keos.model.log.partition import CONTROL_COMMIT, PartitionLeader
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.systems.eos import CLOSED, INPUT_PARTITION, OUTPUT_PARTITION, decode_output, moved_mid_transaction
from keos.model.systems.transactions_records import EosConfig, TxnConfig, TxnSystemState

__all__ = ["eos_properties", "output_fates", "settled"]

S = TransactionState
COMMITTED, ABORTED, UNDECIDED = "committed", "aborted", "undecided"


@lru_cache(maxsize=65536)
def output_fates(leader: PartitionLeader) -> tuple[tuple[int, str], ...]:
    """``(record id, fate)`` for every data record in offset order, decided by the control batches."""
    rids: list[int] = []
    fates: list[str] = []
    open_by_pid: dict[int, list[int]] = {}
    for e in leader.log:
        if e.control:
            fate = COMMITTED if e.control == CONTROL_COMMIT else ABORTED
            for idx in open_by_pid.pop(e.producer_id, []):
                fates[idx] = fate
            continue
        for rid in e.records:
            if e.transactional:
                open_by_pid.setdefault(e.producer_id, []).append(len(fates))
            rids.append(rid)
            fates.append(UNDECIDED if e.transactional else COMMITTED)
    return tuple(zip(rids, fates, strict=True))


def settled(s: TxnSystemState) -> bool:
    """No marker in flight and no coordinator transaction in Prepare*."""
    if any(isinstance(env.body, WriteTxnMarkersRequest) for env in s.network):
        return False
    return all(md is None or md.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT) for md in s.coordinator)


def _committed_offset(s: TxnSystemState) -> int:
    c = gc.committed_offset(s.group, INPUT_PARTITION)
    return 0 if c is None else c.offset


def _outputs_per_input(s: TxnSystemState, n: int) -> Mapping[int, tuple[int, ...]]:
    """Per input offset, the committed output records (read only: the mapping is shared, see below)."""
    return _committed_outputs(s.partitions[OUTPUT_PARTITION], n)


@lru_cache(maxsize=65536)
def _committed_outputs(output: PartitionLeader, n: int) -> Mapping[int, tuple[int, ...]]:
    """:func:`_outputs_per_input` of the output partition's leader, cached by its value: the two judges that read it
    run in every state whose output partition or group changed, and most states share their output partition with
    many others (a search's states differ mostly in the network and the clients)."""
    out: dict[int, list[int]] = {k: [] for k in range(n)}
    for rid, fate in output_fates(output):
        if fate == COMMITTED:
            out.setdefault(decode_output(rid, n)[2], []).append(rid)
    return MappingProxyType({k: tuple(rids) for k, rids in out.items()})


def _eos_problems(n: int, s: TxnSystemState, filtered: int = 0) -> list[str]:
    """Duplicates, and (settled) inputs below the committed offset without a committed output -- but the first
    ``filtered`` inputs, which the transform drops: they have no output, and one of them is a duplicate too."""
    per_input = _outputs_per_input(s, n)
    problems = [
        f"input offset {k} has {len(rids)} committed outputs ({', '.join(record_label(r) for r in rids)})"
        for k, rids in per_input.items()
        if len(rids) > 1
    ]
    if settled(s):
        c = _committed_offset(s)
        problems.extend(
            f"input offset {k} is below the committed offset {c} but its output was never committed"
            for k in range(filtered, min(c, n))
            if not per_input.get(k)
        )
    return problems


def _offset_problems(n: int, s: TxnSystemState) -> list[str]:
    if not settled(s):
        return []
    c = _committed_offset(s)
    return [
        f"the output of input offset {k} ({record_label(rids[0])}) is committed but the committed offset is {c}"
        for k, rids in _outputs_per_input(s, n).items()
        if k >= c and rids
    ]


def _regression(s: TxnSystemState) -> str:
    c = gc.committed_offset(s.group, INPUT_PARTITION)
    high = s.ghost.committed_offset_high
    if c is not None and c.offset < high:
        return f"committed offset went back from {high} to {c.offset}"
    return ""


def _log_order_problems(s: TxnSystemState) -> list[str]:
    """The group coordinator's committed and pending offsets against ``__consumer_offsets`` read in log order.

    Stated over the log, not the coordinator's steps: a transactional offset record's fate is the first marker of
    its producer after it (none yet: pending); a partition's committed offset is the one of its *last* record in
    the log that is committed -- a plain OffsetCommit's at once, a transactional one's once its COMMIT marker
    follows -- and its pending offsets are each producer's last undecided record (KAFKA-5247's fix: offsets are
    materialised in log order, transactional or not; ``OffsetMetadataManager.replay`` /
    ``replayEndTransactionMarker``, Kafka trunk 1eb7644349cb)."""
    g = s.group
    if g is None:  # no branch: the eos model always has its group
        return []
    log = g.offsets_log.log
    fate: dict[int, str] = {}
    for pos, e in enumerate(log):
        if e.control or not e.transactional:
            continue
        marker = next((m for m in log[pos + 1:] if m.control and m.producer_id == e.producer_id), None)
        fate[pos] = UNDECIDED if marker is None else COMMITTED if marker.control == CONTROL_COMMIT else ABORTED
    last: dict[int, tuple[int, int]] = {}  # partition -> (record offset, offset) of its last committed record
    pending: set[tuple[int, int, int, int]] = set()
    for pos, e in enumerate(log):
        if e.control:
            continue
        partition, offset = e.records
        if fate.get(pos, COMMITTED) == COMMITTED:
            last[partition] = (pos, offset)
    for pos, e in enumerate(log):
        if fate.get(pos) == UNDECIDED:
            partition, offset = e.records
            pending = {p for p in pending if p[:2] != (e.producer_id, partition)} | {
                (e.producer_id, partition, offset, pos)
            }
    problems = []
    cache = {c.partition: (c.record_offset, c.offset) for c in g.committed}
    for partition in sorted({*last, *cache}):
        want, have = last.get(partition), cache.get(partition)
        if want != have:
            problems.append(
                f"partition {partition}: the group's committed offset is "
                f"{'none' if have is None else f'{have[1]} (record {have[0]})'} but the last committed record in "
                f"__consumer_offsets says {'none' if want is None else f'{want[1]} (record {want[0]})'}"
            )
    held = {(p.producer_id, p.partition, p.offset, p.record_offset) for p in g.pending}
    if held != pending:
        problems.append(f"pending transactional offsets {sorted(held)} but the undecided records of "
                        f"__consumer_offsets are {sorted(pending)}")
    return problems


def _zombie_problems(s: TxnSystemState) -> str:
    return "; ".join(s.ghost.zombie_commits)


def _start_problems(s: TxnSystemState) -> str:
    return "; ".join(s.ghost.unstable_starts)


def _unfenced_fatal(s: TxnSystemState) -> str:
    return "; ".join(
        f"instance {i} ended with a fatal error that is not a ProducerFencedException"
        for i, c in enumerate(s.clients)
        if c.state == tp.C.FATAL_ERROR and not c.fenced
    )


def _input_done_or_no_worker_left(n: int, transactions: int, s: TxnSystemState) -> bool:
    """The committed offset reached the end of the input, or no instance can run another transaction: one ended
    fatally (its task is lost; the model does not restart it), used up the scenario's transactions, or closed."""
    if _committed_offset(s) >= n:
        return True
    closed = any(c.state == CLOSED for c in s.consumers)
    return closed or any(c.state == tp.C.FATAL_ERROR or c.txn >= transactions for c in s.clients)


def _read_uncommitted_sees_aborted(s: TxnSystemState) -> bool:
    leader = s.partitions[OUTPUT_PARTITION]
    aborted = {rid for rid, fate in output_fates(leader) if fate == ABORTED}
    return any(rid in aborted for rid in fetch(leader, READ_UNCOMMITTED))


def eos_properties(config: TxnConfig) -> tuple[Property, ...]:
    """The consume-transform-produce properties plus the transaction properties that apply.

    ``atomic_commit`` of :mod:`invariants.transactions` numbers records as the
    plain producer application does, so it is replaced here by
    ``exactly_once_processing`` and ``offsets_committed_with_outputs``.
    """
    from keos.invariants.transactions import transaction_properties

    n = (config.eos or EosConfig()).input_records
    transactions = config.topology.transactions_per_producer
    txn_props = tuple(p for p in transaction_properties(config) if p.name not in ("atomic_commit",))
    # read_committed's filter is exercised only if the aborted output was there to read: the read_uncommitted
    # view of the same log proves it (a consumer fetch that drops aborted records for every isolation level
    # would leave no_aborted_read holding vacuously)
    txn_props = tuple(
        replace(p, partners=(*p.partners, "read_uncommitted_sees_aborted_output")) if p.name == "no_aborted_read" else p
        for p in txn_props
    )
    eos = config.eos or EosConfig()
    several = config.topology.producers > 1
    protocol = bool(eos.assignor)
    during_rebalance = not protocol or eos.assignor in COOPERATIVE
    # the classic protocol fences a zombie whose session expired with UNKNOWN_MEMBER_ID: a member
    # rejoins only from poll(), between transactions, so ILLEGAL_GENERATION needs the abstract model
    legacy_partners = () if protocol or not config.faults.rebalance else ("zombie_offset_commit_rejected",)
    fenced = ("txn_offset_commit_fenced",) if config.faults.rebalance > 0 else ()
    # a partition leaves an open transaction only with the abstract Rebalance or an expired session
    mid_txn = not protocol or (config.faults.rebalance > 0 and eos.session_timeouts)
    moved = ("partition_moved_mid_transaction",) if several and mid_txn else ()
    rebalancing = ("txn_offset_commit_during_rebalance",) if several and during_rebalance else ()
    group_partners: tuple[str, ...] = (*moved, "unstable_offset_wait", *rebalancing) if several else ()
    # a group coordinator failover must load a pending offset and bounce a request, or the budget tested nothing
    # ... and a request reaching the new one while it still loads the group must be answered
    # COORDINATOR_LOAD_IN_PROGRESS (retried); a failed __consumer_offsets append COORDINATOR_NOT_AVAILABLE
    failover = (
        ("group_coordinator_loaded_pending", "txn_offset_commit_not_coordinator", "txn_offset_commit_load_in_progress")
        if config.faults.coordinator_failover > 0 and not protocol
        else ()
    )
    # ... and the fault must strike every write of sendOffsetsToTransaction it can fail: the TxnOffsetCommit's
    # __consumer_offsets append and, with the verification as Kafka's round trip, TV2's implicit add of the group's
    # partition at the transaction coordinator (its __transaction_state write) -- a write the fault never reaches
    # leaves its error path, its answer and the client's retry unjudged
    group_append = (
        (
            "txn_offset_commit_coordinator_not_available",
            "txn_offset_commit_append_failed",
            *(("txn_offset_commit_verification_append_failed",) if eos.txn_offset_commit_round_trip else ()),
        )
        if config.faults.append_failure > 0
        else ()
    )
    # two rebalances may take the partition from its owner and give it back: the owner must start over
    returns = ("partition_returned",) if several and not protocol and config.faults.rebalance > 1 else ()
    # the drop budget must also strike a producer's own connections (transaction coordinator, partition leader)
    producer_resets = ("producer_connection_reset",) if config.faults.drop > 0 else ()
    # a send() refused synchronously must be seen making the transaction abortable (invariants/transactions.py)
    rejections = ("send_rejection_made_abortable",) if config.topology.send_rejections else ()
    props: list[Property] = [
        no_findings(
            name="exactly_once_processing",
            fact="Every input record's output is committed at most once, and once settled every input record "
            "below the group's committed offset has a committed output (no duplicate, no loss); a record the "
            "transform filters has none, its transaction carries the offset alone.",
            source="KIP-98 §consume-transform-produce; KIP-447 §Proposed Changes; transactions_test.py checks "
            "(``tests/kafkatest/tests/core/transactions_test.py``)",
            catches="a zombie committing after a rebalance (no generation fencing, KAFKA-2555), offsets "
            "committed outside the transaction (at-least-once), a missing seek after abort (KAFKA-17582)",
            findings=lambda s: _eos_problems(n, s, eos.filtered_records),
            partners=(*legacy_partners, "input_fully_processed", *group_partners, *producer_resets, *rejections),
        ),
        no_findings(
            name="offsets_committed_with_outputs",
            fact="Once settled, an input record's output is committed only if its input offset is committed "
            "(together with the previous property: the offset is committed iff the output is).",
            source="KIP-98 §sendOffsetsToTransaction; KIP-447 (pending transactional offsets)",
            catches="offsets committed after, not with, the transaction; pending offsets materialised on ABORT",
            findings=lambda s: _offset_problems(n, s),
            partners=("offsets_materialised", "offsets_discarded", *failover, *group_append, *returns),
        ),
        no_findings(
            name="client_transaction_ends_at_coordinator",
            fact="A producer completes commitTransaction or abortTransaction without EndTxn only for a "
            "transaction "
            "the coordinator does not hold: while the coordinator has the producer's transaction Ongoing at its "
            "epoch (a partition or, under TV2, __consumer_offsets added on its behalf by a TxnOffsetCommit) the "
            "client ends it with EndTxn, so no transaction waits for transaction.timeout.ms and the next one does "
            "not join it.",
            source="TransactionManager (transactionStarted; sendOffsetsToTransaction under TV2, KIP-890 part 2; "
            "beginAbort keeps a queued AddOffsetsToTxn; Kafka 4.0 trunk 1eb7644349cb); KIP-98 §EndTxn",
            catches="a TV2 client that does not count its TxnOffsetCommit as starting the transaction and aborts an "
            "offsets-only transaction locally after ILLEGAL_GENERATION; a TV1 abort that drops a queued "
            "AddOffsetsToTxn",
            findings=lambda s: s.ghost.local_ends_open,
            partners=("transaction_ended_with_end_txn",),
        ),
        *(
            (
                _event(
                    "producer_connection_reset",
                    "A connection reset lost a request or answer between a producer and the transaction coordinator "
                    "or a partition leader (not only the group coordinator's TxnOffsetCommit).",
                    "producer_connection_reset",
                ),
            )
            if config.faults.drop > 0
            else ()
        ),
        _event(
            "transaction_ended_with_end_txn",
            "A producer's Sender ended a transaction it had started with EndTxn (rather than completing it "
            "locally).",
            "EndTxnRequest",
        ),
        no_findings(
            name="committed_offsets_follow_log_order",
            fact="The group's committed offset of a partition is the one carried by the last committed offset "
            "record of __consumer_offsets (a plain OffsetCommit at once, a TxnOffsetCommit once its COMMIT marker "
            "is written), and its pending transactional offsets are the records whose marker has not come: a "
            "COMMIT marker never overwrites a later plain commit, an ABORT never resurrects or drops one, so the "
            "live cache and a reload of the partition agree.",
            source="KAFKA-5247 (materialise offsets in log order, Kafka 0.11.0.1); OffsetMetadataManager.replay / "
            "replayEndTransactionMarker (Kafka 4.0 trunk 1eb7644349cb)",
            catches="a marker materialising a transaction's offsets over a plain commit that landed after them "
            "(KAFKA-5247), a pending offset kept after its marker or dropped before it, a commit recorded in the "
            "cache but not the log",
            findings=lambda s: _log_order_problems(s),
            partners=("offsets_materialised", *(("plain_commit_after_pending",) if eos.plain_commits else ()),
                      *(("plain_commit_load_in_progress",) if eos.plain_commits and config.faults.coordinator_failover
                        else ())),
        ),
        *(
            (
                _event(
                    "plain_commit_load_in_progress",
                    "A plain OffsetCommit reached a new group coordinator still loading the group: answered "
                    "COORDINATOR_LOAD_IN_PROGRESS, nothing committed (CoordinatorRuntime.withActiveContextOrThrow).",
                    "offset_commit_load_in_progress",
                ),
            )
            if eos.plain_commits and config.faults.coordinator_failover
            else ()
        ),
        *(
            (
                _event(
                    "plain_commit_after_pending",
                    "A plain OffsetCommit was committed while a transactional offset of the partition was pending "
                    "(a mixed application, KAFKA-5247).",
                    "offset_commit_beside_pending",
                ),
                _event(
                    "offsets_superseded",
                    "A COMMIT marker found a later plain commit and left it the committed offset.",
                    "offsets_superseded",
                ),
            )
            if eos.plain_commits
            else ()
        ),
        Property(
            name="committed_offset_never_regresses",
            expectation=Expectation.ALWAYS,
            fact="The group's committed offset of the input partition never goes backwards.",
            source="OffsetMetadataManager.replayEndTransactionMarker (materialise only if newer, KIP-447)",
            catches="a stale generation's offsets overwriting a newer commit",
            predicate=lambda s: not _regression(s),
            partners=("input_fully_processed", "offsets_materialised", *rebalancing),
            explain=_regression,
        ),
        *(
            (
                Property(
                    name="lost_partition_never_committed",
                    expectation=Expectation.ALWAYS,
                    fact="An instance that was superseded as the input partition's owner (another instance "
                    "fetched its committed offset and started processing it since) never commits a "
                    "transaction carrying that partition's records and offsets.",
                    source="KIP-447 §Proposed Changes (TxnOffsetCommit carries the consumer's generation and "
                    "member id; the group coordinator fences stale members: ClassicGroup.validateOffsetCommit, "
                    "Kafka 4.0 trunk 1eb7644349cb)",
                    catches="a zombie's TxnOffsetCommit accepted without generation/member checks, a "
                    "revoked or lost partition still committed by its old owner",
                    predicate=lambda s: not s.ghost.zombie_commits,
                    partners=(*fenced, "owner_started_after_move"),
                    explain=_zombie_problems,
                ),
                Property(
                    name="new_owner_starts_from_stable_offset",
                    expectation=Expectation.ALWAYS,
                    fact="A new owner of the input partition starts only from the group's committed offset "
                    "and only when no transactional offset for the partition is pending: a pending "
                    "transactional offset is never read before its transaction commits, and never "
                    "materialises under a new owner that started without it.",
                    source="KIP-447 §OffsetFetch requireStable (UNSTABLE_OFFSET_COMMIT while "
                    "OffsetMetadataManager.hasPendingTransactionalOffsets); "
                    "OffsetMetadataManager.replayEndTransactionMarker (Kafka 4.0 trunk 1eb7644349cb)",
                    catches="an OffsetFetch without requireStable, pending offsets answered before their "
                    "marker",
                    predicate=lambda s: not _start_problems(s),
                    partners=("unstable_offset_wait", "owner_started_after_move", "offsets_materialised"),
                    explain=_start_problems,
                ),
                no_findings(
                    name="txn_offset_commits_fenced_exactly",
                    fact="The group coordinator refuses a TxnOffsetCommit with UNKNOWN_MEMBER_ID exactly when its "
                    "member id is not in the group and with ILLEGAL_GENERATION exactly when the member is known but "
                    "its generation is not the group's; a current member's TxnOffsetCommit passes these checks, also "
                    "while the group is CompletingRebalance.",
                    source="KIP-447 §Proposed Changes; ClassicGroup.validateOffsetCommit(isTransactional=true) via "
                    "OffsetMetadataManager.validateTransactionalOffsetCommit (Kafka 4.0 trunk 1eb7644349cb)",
                    catches="a member or generation check missing, misordered or answering the wrong error: a zombie "
                    "whose session expired committing while the group rebalances, a current member fenced",
                    findings=lambda s: s.ghost.misfenced,
                    partners=(*fenced, "owner_started_after_move"),
                ),
                *(
                    _event(
                        "txn_offset_commit_fenced",
                        "The group coordinator fenced a TxnOffsetCommit (ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID).",
                        e,
                    )
                    for e in fenced
                ),
                _event(
                    "owner_started_after_move",
                    "An instance started processing the input partition after another instance owned it.",
                    "owner_started_after_move",
                ),
            )
            if several
            else ()
        ),
        *(
            (_event("rebalance_completed", "A JoinGroup round completed (the join barrier lifted).", "join:complete"),)
            if protocol
            else ()
        ),
        *txn_props,
        *(
            (
                _event(
                    "zombie_offset_commit_rejected",
                    "A zombie's TxnOffsetCommit was rejected with ILLEGAL_GENERATION.",
                    "txn_offset_commit_answer:ILLEGAL_GENERATION",
                ),
            )
            if legacy_partners
            else ()
        ),
        *(
            (
                *(
                    sometimes_state(
                        "partition_moved_mid_transaction",
                        "A rebalance moved the input partition away from an instance with an open transaction "
                        "(the group assigns it elsewhere while the instance's transaction holds an input record).",
                        moved_mid_transaction,
                    )
                    for _ in moved
                ),
                _event(
                    "unstable_offset_wait",
                    "OffsetFetch(requireStable) answered UNSTABLE_OFFSET_COMMIT.",
                    "UNSTABLE_OFFSET_COMMIT",
                ),
                *(
                    _event(
                        "txn_offset_commit_during_rebalance",
                        "A TxnOffsetCommit was accepted while the group was CompletingRebalance.",
                        "txn_offset_commit_during_completing_rebalance",
                    )
                    for _ in rebalancing
                ),
            )
            if several
            else ()
        ),
        *(
            (
                _event(
                    "group_coordinator_loaded_pending",
                    "A new group coordinator loaded the group while a transactional offset was pending.",
                    "group_coordinator_loaded_pending_offsets",
                ),
                _event(
                    "txn_offset_commit_not_coordinator",
                    "A TxnOffsetCommit sent to the old group coordinator was answered NOT_COORDINATOR and retried.",
                    "txn_offset_commit_answer:NOT_COORDINATOR",
                ),
                _event(
                    "txn_offset_commit_load_in_progress",
                    "A TxnOffsetCommit reached the new group coordinator while it was loading the group: answered "
                    "COORDINATOR_LOAD_IN_PROGRESS and retried.",
                    "txn_offset_commit_answer:COORDINATOR_LOAD_IN_PROGRESS",
                ),
            )
            if config.faults.coordinator_failover > 0 and not protocol
            else ()
        ),
        *(
            _event(
                "partition_returned",
                "An instance that had missed the generation moving the partition away got it back and fetched the "
                "committed offset again.",
                "partition_assigned_again",
            )
            for _ in returns
        ),
        *(
            (
                _event(
                    "txn_offset_commit_coordinator_not_available",
                    "A TxnOffsetCommit's __consumer_offsets append failed: answered COORDINATOR_NOT_AVAILABLE and "
                    "retried.",
                    "txn_offset_commit_answer:COORDINATOR_NOT_AVAILABLE",
                ),
                _event(
                    "txn_offset_commit_append_failed",
                    "The group coordinator's __consumer_offsets append of a TxnOffsetCommit that passed every check "
                    "failed (nothing staged).",
                    "txn_offset_commit_append_failed",
                ),
                *(
                    _event(
                        "txn_offset_commit_verification_append_failed",
                        "TV2: the transaction coordinator's __transaction_state write of the implicit add of the "
                        "group's __consumer_offsets partition, asked by the group coordinator's verification of a "
                        "TxnOffsetCommit (KIP-890 part 2), failed.",
                        "txn_offset_commit_verification_append_failed",
                    )
                    for _ in group_append[2:]
                ),
            )
            if config.faults.append_failure > 0
            else ()
        ),
        *(
            (
                Property(
                    name="instance_fatal_only_when_fenced",
                    expectation=Expectation.ALWAYS,
                    fact="An application instance that fails for good fails with ProducerFencedException (its "
                    "transactional.id's epoch moved past it: a timeout abort or a newer instance), never with "
                    "another fatal error -- the one a Kafka Streams application treats as a lost task rather "
                    "than a crash -- whatever the coordinators answered and in whatever order.",
                    source="TransactionManager TxnOffsetCommitHandler / AddOffsetsToTxnHandler (INVALID_PRODUCER_EPOCH "
                    "and PRODUCER_FENCED -> ProducerFencedException); AddPartitionsToTxnManager (PRODUCER_FENCED "
                    "-> INVALID_PRODUCER_EPOCH), Kafka trunk 1eb7644349cb",
                    catches="a coordinator or group coordinator answering a fenced producer with an error the "
                    "client cannot read as fencing (INVALID_TXN_STATE, UNKNOWN_SERVER_ERROR, a mapping lost)",
                    predicate=lambda s: not _unfenced_fatal(s),
                    partners=("instance_fenced",) if config.faults.txn_timeout else (),
                    explain=_unfenced_fatal,
                ),
                *(
                    (
                        sometimes_state(
                            "instance_fenced",
                            "An application instance was fenced (ProducerFencedException).",
                            lambda s: any(c.state == tp.C.FATAL_ERROR and c.fenced for c in s.clients),
                        ),
                    )
                    if config.faults.txn_timeout
                    else ()
                ),
            )
            # authorization errors and an expired transactional.id are fatal without fencing, as in Kafka
            if config.security is None
            and not config.topology.transactional_id_expiration
            and not config.faults.txn_id_expiry
            else ()
        ),
        _event("offsets_materialised", "A COMMIT marker materialised pending offsets.", "offsets_materialised"),
        _event("offsets_discarded", "An ABORT marker discarded pending offsets.", "offsets_discarded"),
        *(
            (
                Property(
                    name="input_processed_eventually",
                    expectation=Expectation.EVENTUALLY,
                    fact="Once faults stop, the application processes its whole input: the group's committed offset "
                    "reaches the end of the input partition -- unless an instance can run no further transaction "
                    "(it was fenced or failed, closed, or used up the scenario's transactions).",
                    source="KIP-98 §consume-transform-produce; KIP-447 (a rebalance hands the partition over, "
                    "OffsetFetch(requireStable) waits only until the pending offset is decided); Kafka's system test "
                    "transactions_test.py (the copiers finish the input)",
                    catches="an instance left unable to go on after an abort or a rebalance (a transaction phase "
                    "never reset, a position never re-fetched, a pending offset never decided, a partition never "
                    "assigned again)",
                    predicate=lambda s: _input_done_or_no_worker_left(n, transactions, s),
                    partners=("input_fully_processed",),
                    fairness=TXN_FAIRNESS,
                ),
            )
            if config.security is None
            else ()
        ),
        sometimes_state(
            "input_fully_processed",
            "The committed offset reached the end of the input.",
            lambda s: _committed_offset(s) >= n,
        ),
        Property(
            name="read_uncommitted_sees_aborted_output",
            expectation=Expectation.SOMETIMES,
            fact="A read_uncommitted consumer of the output read an aborted record (a documented view of "
            "isolation.level=read_uncommitted, not a violation).",
            source="KIP-98 §7 (isolation.level)",
            catches="reachability of aborted output",
            predicate=_read_uncommitted_sees_aborted,
        ),
    ]
    if protocol:
        props.append(
            Property(
                name="healthy_consumer_never_failed",
                expectation=Expectation.ALWAYS,
                fact="No instance's consumer fails in poll(): its group requests are answered only errors "
                "AbstractCoordinator recovers from by rejoining (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, "
                "REBALANCE_IN_PROGRESS).",
                source="AbstractCoordinator JoinGroup/SyncGroup/Heartbeat response handlers (Kafka 4.0, trunk "
                "1eb7644)",
                catches="a group coordinator answering a healthy member an unexpected error; a client treating "
                "a recoverable group error as fatal",
                predicate=lambda s: all(c.state != cc.FAILED for c in s.consumers),
                partners=("input_fully_processed",),
                explain=lambda s: "; ".join(
                    f"instance {i}'s consumer failed" for i, c in enumerate(s.consumers) if c.state == cc.FAILED
                ),
            )
        )
        props.append(
            Property(
                name="never_fenced_without_fault",
                expectation=Expectation.ALWAYS,
                fact="In a run without faults no instance's consumer is fenced by its group coordinator "
                "(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID): a member drops out of the group only "
                "when its session expires, it leaves, or a rebalance completes without it, and the consumer speaks "
                "to the group only as the member and generation its last JoinGroup answer made it.",
                source="ClassicGroup (session and rebalance timeouts, validateMember), AbstractCoordinator "
                "(HeartbeatThread disabled while hasNotJoinedGroup; SyncGroup with the JoinGroup answer's "
                "generation), Kafka 4.0 trunk 1eb7644",
                catches="a client that heartbeats or syncs outside its membership (no member id, an old generation), "
                "a coordinator that removes or moves past a live member without a timeout",
                predicate=lambda s: not _fault_free_fencings(s),
                partners=("rebalance_completed",),
                explain=lambda s: "; ".join(_fault_free_fencings(s)),
            )
        )
    return tuple(props)


def _fault_free_fencings(s: TxnSystemState) -> list[str]:
    """The fencing answers the group coordinator gave a member in a run without faults (recorded at the step)."""
    prefix = "fault_free_fencing:"
    return [b[len(prefix) :] for b in s.ghost.bad_transitions if b.startswith(prefix)]


def _event(name: str, fact: str, event: str) -> Property:
    return Property(
        name=name,
        expectation=Expectation.SOMETIMES,
        fact=fact,
        source="reachability (KIP-447)",
        catches=f"reachability ({event})",
        event=event,
    )
