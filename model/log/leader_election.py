"""A data partition's leadership moves to an in-sync follower, with transactions open on it.

What the new leader knows is what it built while replicating the log, not what the old leader had in memory
(Kafka 4.x; ``cluster/Partition.makeLeader``, ``UnifiedLog``, ``ProducerStateManager``):

* **The log** up to the high watermark: an in-sync follower has every batch below it; the unreplicated tail is
  truncated (``UnifiedLog.truncateTo``).  The transactions model answers a produce only once its batch is
  replicated (acks=all, append and high watermark in one step), so nothing acknowledged is cut.
* **The producer state** (``ProducerStateManager``): a follower appends every replicated batch through
  ``ProducerAppendInfo`` with origin REPLICATION -- no sequence, epoch or coordinator-epoch checks, the same
  updates: the batch cache, the producer epoch, the coordinator epoch of the last marker, and the first offset of
  the transaction open on the partition (``currentTxnFirstOffset``, which holds the last stable offset back).
  After a truncation the state is rebuilt from a snapshot and the log (``truncateAndReload``), which replays the
  same updates.  The model replays the kept log through the leader's own update functions
  (:func:`model.log.partition.entry_after_data_batch`, :func:`model.log.txn_markers.entry_after_marker`).
* **The aborted-transaction index** (``TransactionIndex``): each replica writes it from the ABORT markers it
  appends (``UnifiedLog.completeTransaction`` -> ``LogSegment.updateTxnIndex``), so ``read_committed`` fetches
  from the new leader skip the same aborted ranges.
* **Not the verification state**: ``VerificationStateEntry`` (KIP-890 part 1) lives in the old leader's memory
  only.  A verification it started is answered on the old leader, where the append fails with
  NOT_LEADER_OR_FOLLOWER (``Partition.appendRecordsToLeader``) and the client retries on the new leader, which
  verifies afresh (:func:`model.log.partition.append_verified_txn_batch` with the request's leader epoch).
* **Not the produce purgatory**: requests parked on the old leader are answered NOT_LEADER_OR_FOLLOWER and retried.
* The **leader epoch** grows by one.

A produce request or a WriteTxnMarkers request in flight when leadership moves reaches the new leader in the model
(in Kafka the old leader answers NOT_LEADER_OR_FOLLOWER and the sender retries there after a metadata refresh: the
same append, one round trip later).

The switch ``ProtocolFlags.follower_tracks_transactions`` (off: the weakened variant
``follower_forgets_transactions``) makes the new leader keep only the idempotent producer state, as a follower
that did not apply the transactional updates would: no open transaction, no aborted range, no coordinator epoch.
"""

from __future__ import annotations

from keos.model.log.partition import (
    NO_PRODUCER_ID,
    AbortedTxn,
    LogEntry,
    PartitionLeader,
    entry_after_data_batch,
    lso_after_completion,
)
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.log.txn_markers import entry_after_marker
from keos.model.variants import ProtocolFlags

__all__ = ["elect_follower", "replayed_state"]


def replayed_state(
    log: tuple[LogEntry, ...], flags: ProtocolFlags
) -> tuple[tuple[ProducerStateEntry, ...], tuple[AbortedTxn, ...]]:
    """The producer state and aborted-transaction index a replica builds by appending ``log`` (origin REPLICATION)."""
    entries: dict[int, ProducerStateEntry] = {}
    aborted: tuple[AbortedTxn, ...] = ()
    for offset, batch in enumerate(log):
        pid = batch.producer_id
        if pid == NO_PRODUCER_ID:  # no branch: every batch of the transactional models carries a producer id
            continue
        if not flags.follower_tracks_transactions:  # no branch: the weakened variant follower_forgets_transactions
            if not batch.control:
                entries[pid] = entry_after_data_batch(entries.get(pid), batch._replace(transactional=False), offset,
                                                      flags)
            continue
        if batch.control:
            lso = lso_after_completion(tuple(entries.values()), pid, offset,
                                       flags.aborted_txn_lso_counts_open_transactions)
            entries[pid], aborted = entry_after_marker(entries.get(pid), batch, offset, aborted, lso)
        else:
            entries[pid] = entry_after_data_batch(entries.get(pid), batch, offset, flags)
    return tuple(sorted(entries.values())), aborted


def elect_follower(leader: PartitionLeader, flags: ProtocolFlags) -> PartitionLeader:
    """An in-sync follower becomes the partition's leader (``Partition.makeLeader``): the log up to the high
    watermark, the producer state and aborted index it built replicating it, no verification state, an empty
    purgatory, the next leader epoch.  Guards stay unique across leaders (``guards_issued`` is kept)."""
    log = leader.log[: leader.high_watermark]
    producers, aborted = replayed_state(log, flags)
    return PartitionLeader(
        log=log,
        high_watermark=len(log),
        producers=producers,
        leader_epoch=leader.leader_epoch + 1,
        aborted=aborted,
        guards_issued=leader.guards_issued,
    )
