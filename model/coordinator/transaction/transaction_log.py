"""The transaction log ``__transaction_state``: the coordinator's only durable state.

``TransactionLog``, ``TransactionStateManager``.  The log is compacted, written with ``acks=-1`` and
unclean leader election is disabled, so what a coordinator wrote is what the
next coordinator reads.  The model therefore abstracts the log partition as a
*replicated value*: for every transactional id the last
:class:`TransactionLogValue` written (``None`` = never written or tombstoned),
plus the coordinator epoch (the partition's leader epoch,
``TransactionStateManager.loadTransactionsForTxnTopicPartition``).

What is persisted (``TransactionLogValue.json``): ProducerId, ProducerEpoch,
TransactionStatus, TransactionPartitions, and in v1+ PreviousProducerId,
NextProducerId, ClientTransactionVersion and -- since KAFKA-20357 (PR #22096, 2026) -- LastProducerEpoch, a
tagged field of the flexible (v1+, transaction.version >= 1) records: a reload restores it, so a client's retry of
an InitProducerId whose bump (or producer-id rotation) the old coordinator logged but never answered is still
recognised (``prepareIncrementProducerEpoch``'s retry case).  The model's value always carries it; whether
loading restores it is the system's (the v0 record has no tagged fields; the weakened variant
``no_kafka_20357_fix`` is Kafka before the fix).  ``hasFailedEpochFence`` and the pending state are not
persisted -- a reload forgets them, as Kafka does.

Loading (``TransactionStateManager.loadTransactionsForTxnTopicPartition``) is the system's failover: the
last value per id becomes the cache entry (``transaction_coordinator.from_log_value``); ids in PrepareCommit
or PrepareAbort must have their markers re-sent (:func:`needs_markers`).
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.coordinator.transaction.transaction_state import TransactionState

__all__ = ["TransactionLogValue", "needs_markers"]


@record
class TransactionLogValue(NamedTuple):
    """One record value of ``__transaction_state`` (key = transactional id)."""

    producer_id: int
    producer_epoch: int
    state: str
    partitions: tuple[int, ...] = ()
    prev_producer_id: int = -1
    next_producer_id: int = -1
    client_tv: int = 0
    last_producer_epoch: int = -1


def needs_markers(value: TransactionLogValue | None) -> bool:
    """Whether a loaded value is a Prepare* whose markers the new coordinator re-sends."""
    return value is not None and value.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)

