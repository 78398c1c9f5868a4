"""Kafka's ``completeTransitionTo`` checks, applied to every record the coordinator appends to ``__transaction_state``.

A judge, not a handler (property ``log_transitions_per_kafka``).  ``TransactionMetadata.completeTransitionTo``
(``transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/TransactionMetadata.java``,
apache/kafka @38666db4 (2025), with ``validProducerEpoch`` / ``validProducerEpochBump``) refuses -- throws
IllegalStateException -- a logged transition whose metadata does not fit its target state.  The judge restates
that table over what the log holds before and after a step (``None``: no record / a tombstone), so it applies on
every path that appends -- InitProducerId, AddPartitionsToTxn, EndTxn TV1/TV2, the epoch fence of InitProducerId
and of the timeout abort, marker completion, expiry -- whatever handler computed the record:

* Empty (InitProducerId): the same producer id at the same epoch (a KIP-360 retry) or one above, or a new
  producer id at epoch 0 (``validProducerEpochBump``: a new entry, a rotation); no partitions;
* Ongoing (AddPartitionsToTxn): the same producer id and epoch; the partitions only grow;
* PrepareCommit / PrepareAbort (EndTxn, the fence): the same producer id and the Ongoing transaction's partitions;
  the epoch unchanged (TV0/TV1) or one above (TV2, whose end bumps it; an epoch fence, which bumps it first); the
  TV2 empty abort from Empty/Complete* with no partitions;
* CompleteCommit / CompleteAbort (markers written): from the matching Prepare* at its producer id and epoch, or --
  TV2 at an exhausted epoch -- at its ``nextProducerId``, epoch 0, with ``prevProducerId`` the id it rotated from;
  no partitions;
* every record: ``prevProducerId`` is the producer id the entry held before the transition (a new entry's own id):
  ``prepareTransitionTo`` builds each ``TxnTransitMetadata`` with the current ``producerId`` as its
  ``prevProducerId`` and ``completeTransitionTo`` installs it (``TransactionMetadata.java`` @07b06d06).

The judge reads the records only (the log does not keep ``lastProducerEpoch``), so Kafka's lastProducerEpoch
comparisons are left to ``stale_init_fenced`` and ``coordinator_answers_per_kafka_table``.
"""

from __future__ import annotations

from collections.abc import Sequence

from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.coordinator.transaction.transaction_state import TransactionState as S

__all__ = ["log_transition_problems"]

_PREPARE_OF = {S.COMPLETE_COMMIT: S.PREPARE_COMMIT, S.COMPLETE_ABORT: S.PREPARE_ABORT}  # no mutate: judge's table


def _problem(old: TransactionLogValue | None, new: TransactionLogValue) -> str:  # no mutate: the judge
    """Why ``completeTransitionTo`` refuses ``new`` after ``old`` ("" when it accepts it)."""
    same_pid = old is not None and new.producer_id == old.producer_id
    if new.prev_producer_id != (new.producer_id if old is None else old.producer_id):
        return "prev_producer_id"
    if new.state == S.EMPTY:
        if new.partitions:
            return "partitions"
        if old is None or (new.producer_epoch == 0 and not same_pid):
            return ""
        return "" if same_pid and new.producer_epoch - old.producer_epoch in (0, 1) else "epoch"
    if old is None:
        return "no_entry"
    if new.state == S.ONGOING:
        if not same_pid or new.producer_epoch != old.producer_epoch:
            return "epoch"
        grows = old.state != S.ONGOING or set(old.partitions) <= set(new.partitions)
        return "" if grows else "partitions"
    if new.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        if not same_pid:
            return "producer_id"
        if new.partitions != (old.partitions if old.state == S.ONGOING else ()):
            return "partitions"
        return "" if new.producer_epoch - old.producer_epoch in (0, 1) else "epoch"
    if new.state in _PREPARE_OF:
        if new.partitions:
            return "partitions"
        rotated = new.producer_epoch == 0 and new.prev_producer_id == old.producer_id != new.producer_id
        if old.state == _PREPARE_OF[new.state]:
            same = same_pid and new.producer_epoch == old.producer_epoch
            return "" if same or (rotated and new.producer_id == old.next_producer_id) else "epoch"
        if old.state in (S.ONGOING, S.EMPTY, *_PREPARE_OF):
            # PrepareX and CompleteX logged in one step (a transaction with no partition left to mark)
            return "" if (same_pid and new.producer_epoch - old.producer_epoch in (0, 1)) or rotated else "epoch"
        return "state"
    return ""


def log_transition_problems(  # no mutate: the judge of log_transitions_per_kafka (a property), not a rule
    before: Sequence[TransactionLogValue | None], after: Sequence[TransactionLogValue | None]
) -> list[str]:
    """Ghost labels ``transit_table:<tid>:<old>-><new>:<what>`` for each record appended in a step that Kafka's
    ``completeTransitionTo`` would refuse."""
    out: list[str] = []
    for t, (old, new) in enumerate(zip(before, after, strict=True)):
        if new is None or new is old:
            continue
        what = _problem(old, new)
        if what:  # no branch: the violation side, only a defect takes it (log_transitions_per_kafka)
            src = "none" if old is None else old.state
            out.append(f"transit_table:{t}:{src}->{new.state}:{what}")
    return out
