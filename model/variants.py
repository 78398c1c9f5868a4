"""Protocol switches and the named variants built from them.

A *variant* is the real protocol with one rule changed or removed.  Each
weakened variant names the invariant expected to catch it and the scenario in
which it is caught, so ``keos mutants`` can prove the gate catches every one
(a mutation score for the verifier itself).  The switches are data, read by
the step functions, the z3 encoder and the reports alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["VARIANTS", "ProtocolFlags", "Variant", "get_variant"]

#: Kafka's sequence numbers are int32 and wrap after ``Int.MAX_VALUE``.
KAFKA_SEQUENCE_SPACE = 2**31


@dataclass(frozen=True)
class ProtocolFlags:
    """Switches the model's handlers read.

    Attributes:
        check_epoch: the partition leader rejects a batch whose epoch is below
            the stored one (``ProducerAppendInfo.checkProducerEpoch``).
        check_sequence: the leader enforces consecutive sequences (``ProducerAppendInfo.checkSequence``).
        duplicate_window: how many batches' metadata the leader caches per
            producer (``NUM_BATCHES_TO_RETAIN``, 5 in Kafka).
        sequence_space: sequences wrap to 0 after ``sequence_space - 1`` (set by
            the system from the scenario; Kafka's is 2**31).
        force_idempotence_off: the producer runs with ``enable.idempotence=false``
            whatever the scenario says (the at-least-once baseline).
        transaction_version: the ``transaction.version`` feature level (fact
            sheet "TV"): 2 = KIP-890 part 2, the epoch is bumped at every
            transaction end and the client adds partitions implicitly through
            the partition leader; 0 or 1 = the classic protocol.
        partition_verification: ``transaction.partition.verification.enable``
            (KIP-890 part 1, ``VerificationStateEntry.java``): a transactional write that opens a
            transaction on a partition is checked with the coordinator first.
        timeout_abort_bumps_epoch: the coordinator's timeout abort goes through
            PrepareEpochFence and bumps the epoch (``abortTimedOutTransactions``, the KAFKA-6119 fix).
        kip_360: clients bump their epoch with InitProducerId(pid, epoch) after
            an abortable error (KIP-360); without it OUT_OF_ORDER is fatal.
        complete_after_markers: the coordinator writes CompleteCommit/Abort only
            once every WriteTxnMarkers succeeded (``TransactionMarkerChannelManager``).
        generation_fencing: the group coordinator rejects an offset commit whose
            generation is not the group's with ILLEGAL_GENERATION (KIP-447 §3.2;
            the KAFKA-2555 fix, PR #221).
        offsets_in_transaction: the consume-transform-produce application commits
            its input offsets with ``sendOffsetsToTransaction`` (KIP-98); without
            it, with a plain OffsetCommit after ``commitTransaction``.
        seek_after_abort: after ``abortTransaction`` the application seeks back
            to the committed offset (the consumer position does not rewind by
            itself, KAFKA-17582).
        connect_reread_after_producer_init: a Connect worker re-reads the config
            topic after instantiating an exactly-once task's producer and aborts
            the start-up on a new task-config generation (KIP-618 §5.5 step 6).
        connect_transactional_leader: the Connect leader writes the config topic
            with its transactional producer ``connect-cluster-${groupId}`` (KIP-618).
        connect_offsets_in_transaction: an exactly-once source task writes its
            source offsets inside the transaction of their records (``ExactlyOnceWorkerSourceTask.commitTransaction``).
        connect_zombie_fencing: an exactly-once source task asks the leader for a
            zombie-fencing round before it starts (``prepareToInitializeTask``, ``doFenceZombieSourceTasks``).
    """

    check_epoch: bool = True
    check_sequence: bool = True
    duplicate_window: int = 5
    sequence_space: int = KAFKA_SEQUENCE_SPACE
    force_idempotence_off: bool = False
    transaction_version: int = 2
    partition_verification: bool = True
    timeout_abort_bumps_epoch: bool = True
    kip_360: bool = True
    complete_after_markers: bool = True
    generation_fencing: bool = True
    offsets_in_transaction: bool = True
    seek_after_abort: bool = True
    connect_reread_after_producer_init: bool = True
    connect_transactional_leader: bool = True
    connect_offsets_in_transaction: bool = True
    connect_zombie_fencing: bool = True

    def to_json(self) -> dict[str, Any]:
        """The switches as a JSON object."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Variant:
    """A named protocol variant.

    Attributes:
        name: the switch name users pass to ``--variant``.
        description: what changes, in protocol terms.
        flags: the switches.
        weakened: ``True`` if a rule of the real protocol is removed.
        breaks: invariants expected to catch it (weakened variants only).
        scenarios: scenarios in which it is expected to be caught.
        bug: the historical bug or rule it reproduces.
    """

    name: str
    description: str
    flags: ProtocolFlags = field(default_factory=ProtocolFlags)
    weakened: bool = False
    breaks: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    bug: str = ""


_REAL = ProtocolFlags()

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            name="kafka",
            description="The protocol as Kafka implements it (idempotence per KIP-98/KIP-360).",
            flags=_REAL,
        ),
        Variant(
            name="no_idempotence",
            description="Producers run with enable.idempotence=false: no producer id, no sequences.",
            flags=replace(_REAL, force_idempotence_off=True),
            weakened=True,
            breaks=("no_duplicate_append",),
            scenarios=("idempotence_retry",),
            bug="at-least-once delivery before KIP-98: a retried batch is appended twice",
        ),
        Variant(
            name="broker_accepts_any_sequence",
            description="The partition leader skips the sequence check (ProducerAppendInfo.checkSequence).",
            flags=replace(_REAL, check_sequence=False),
            weakened=True,
            breaks=("per_partition_order", "sequence_table_consistent"),
            scenarios=("idempotence_retry",),
            bug="gaps accepted: a batch whose predecessor was lost is appended, then the retry lands behind it",
        ),
        Variant(
            name="broker_skips_epoch_check",
            description="The partition leader accepts batches with an epoch below the stored one.",
            flags=replace(_REAL, check_epoch=False),
            weakened=True,
            breaks=("per_partition_order", "sequence_table_consistent"),
            scenarios=("idempotence_epoch_bump",),
            bug="a batch from before a KIP-360 epoch bump rolls the producer state back "
            "(INVALID_PRODUCER_EPOCH missing)",
        ),
        Variant(
            name="small_duplicate_window",
            description="The leader caches one batch per producer, fewer than the five the client may have in flight.",
            flags=replace(_REAL, duplicate_window=1),
            weakened=True,
            breaks=("no_duplicate_append",),
            scenarios=("idempotence_retry",),
            bug="KAFKA-5494: a cache smaller than max.in.flight turns a retry into OUT_OF_ORDER_SEQUENCE_NUMBER, "
            "the epoch bump re-sequences the next batch and it is written twice",
        ),
        Variant(
            name="pre_kip_890",
            description="Transactions as before KIP-890: transaction.version 1 (no epoch bump per transaction) "
            "and no partition verification before a transactional write.",
            flags=replace(_REAL, transaction_version=1, partition_verification=False),
            weakened=True,
            breaks=("no_hanging_transaction", "atomic_commit"),
            scenarios=("txn_kafka_12671_hanging", "txn_kafka_17754_delayed_endtxn"),
            bug="KAFKA-12671 (a late produce opens a transaction nobody ends: LSO stuck) and KAFKA-17754 "
            "(a delayed EndTxn or produce lands in a later transaction: torn transaction / aborted read)",
        ),
        Variant(
            name="tv1",
            description="transaction.version 1 with KIP-890 part 1 verification and KIP-360 (Kafka 3.6-3.9).",
            flags=replace(_REAL, transaction_version=1),
        ),
        Variant(
            name="no_kip_360",
            description="transaction.version 1 with verification but without KIP-360: an aborted transaction "
            "keeps its epoch, so the next transaction runs at the same (pid, epoch).",
            flags=replace(_REAL, transaction_version=1, kip_360=False),
            weakened=True,
            breaks=("atomic_commit",),
            scenarios=("txn_kafka_17754_delayed_endtxn",),
            bug="KIP-890 scenario B: a write of an aborted transaction, delayed past the abort, passes "
            "verification in the next transaction at the same epoch and is committed with it",
        ),
        Variant(
            name="timeout_abort_without_epoch_bump",
            description="transaction.version 1 with verification and KIP-360, but the coordinator aborts a "
            "timed-out transaction without bumping the producer epoch (under TV2 every abort bumps anyway).",
            flags=replace(_REAL, transaction_version=1, timeout_abort_bumps_epoch=False),
            weakened=True,
            breaks=("atomic_commit", "zombie_fencing"),
            scenarios=("txn_kafka_6119_timeout_zombie",),
            bug="KAFKA-6119 (fixed by PR #4137): the producer keeps writing at the old epoch after the timeout "
            "abort; its later commit succeeds although part of the transaction was aborted",
        ),
        Variant(
            name="complete_without_markers",
            description="The coordinator writes CompleteCommit/CompleteAbort right after Prepare*, without "
            "waiting for the WriteTxnMarkers responses.",
            flags=replace(_REAL, complete_after_markers=False),
            weakened=True,
            breaks=("markers_before_complete",),
            scenarios=("txn_kafka_12671_hanging",),
            bug="a coordinator that forgets a transaction before its markers are written; a failed or late "
            "marker then leaves the partition's transaction open",
        ),
        Variant(
            name="no_reread_after_producer_init",
            description="Connect: an exactly-once source task starts its send loop right after initTransactions, "
            "without re-reading the config topic (postProducerCheck removed).",
            flags=replace(_REAL, connect_reread_after_producer_init=False),
            weakened=True,
            breaks=("exactly_once_source_delivery", "no_commit_by_fenced_generation"),
            scenarios=("connect_worker_lag_before_producer",),
            bug="KIP-618 §Zombie fencing (workers F, O, L): a worker that lags after its fencing round creates its "
            "producer after the next round fenced the old task ids, and writes a reassigned source partition twice",
        ),
        Variant(
            name="leader_writes_without_transactions",
            description="Connect: the leader writes the config topic with a plain producer (no "
            "connect-cluster-${groupId} transactional producer, no claimWritePrivileges fencing).",
            flags=replace(_REAL, connect_transactional_leader=False),
            weakened=True,
            breaks=("no_config_write_by_deposed_leader",),
            scenarios=("connect_zombie_leader",),
            bug="KIP-618 §Leader access to config topic: a deposed (zombie) leader writes a task-count record "
            "after the new leader wrote new task configs, so tasks of the new generation would start without fencing",
        ),
        Variant(
            name="source_offsets_outside_transaction",
            description="Connect: an exactly-once source task commits its records' transaction, then flushes the "
            "source offsets separately (as with exactly.once.source.support=disabled).",
            flags=replace(_REAL, connect_offsets_in_transaction=False),
            weakened=True,
            breaks=("offsets_committed_with_records", "exactly_once_source_delivery"),
            scenarios=("connect_worker_crash",),
            bug="KIP-618 motivation (source offset accuracy): a worker that dies between the records and their "
            "offsets re-sends the records after a restart",
        ),
        Variant(
            name="no_zombie_fencing_round",
            description="Connect: exactly-once source tasks start without asking the leader for a zombie-fencing "
            "round (no PUT /connectors/{c}/fence, no Admin.fenceProducers, no task-count record).",
            flags=replace(_REAL, connect_zombie_fencing=False),
            weakened=True,
            breaks=("task_starts_after_task_count_record", "exactly_once_source_delivery"),
            scenarios=("connect_worker_lag_before_producer",),
            bug="KIP-618 §Task count records / §Source task startup: tasks of a new generation start while "
            "producers of the previous task ids are still alive",
        ),
        Variant(
            name="no_generation_fencing",
            description="The group coordinator accepts a TxnOffsetCommit from an old generation (no "
            "ILLEGAL_GENERATION); instances keep one transactional.id each, so nothing else fences a zombie.",
            flags=replace(_REAL, generation_fencing=False),
            weakened=True,
            breaks=("exactly_once_processing",),
            scenarios=("txn_eos_consume_transform_produce",),
            bug="pre-KIP-447 / KAFKA-2555 (PR #221): a zombie that lost its input partition in a rebalance "
            "commits its transaction and offsets next to the new owner: the input record is processed twice",
        ),
        Variant(
            name="offsets_outside_transaction",
            description="The application commits its input offsets with a plain OffsetCommit after "
            "commitTransaction instead of sendOffsetsToTransaction.",
            flags=replace(_REAL, offsets_in_transaction=False),
            weakened=True,
            breaks=("exactly_once_processing", "offsets_committed_with_outputs"),
            scenarios=("txn_eos_abort_and_seek", "txn_eos_consume_transform_produce"),
            bug="at-least-once consume-transform-produce: a rebalance (or crash) between the commit of the "
            "outputs and the offset commit makes the next owner process the input record again",
        ),
        Variant(
            name="no_seek_after_abort",
            description="After abortTransaction the application keeps its consumer position instead of "
            "seeking back to the committed offset.",
            flags=replace(_REAL, seek_after_abort=False),
            weakened=True,
            breaks=("exactly_once_processing",),
            scenarios=("txn_eos_abort_and_seek",),
            bug="KAFKA-17582 (intended behaviour): the position does not rewind after an abort; an "
            "application that does not seek skips the aborted input record -- it is lost",
        ),
    )
}


def get_variant(name: str) -> Variant:
    """Look up a variant; raises ``KeyError`` with the known names."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})") from None
