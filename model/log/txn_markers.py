"""WriteTxnMarkers: the COMMIT/ABORT control batch a partition leader appends.

``TransactionMarkerChannelManager`` (coordinator side) and ``ProducerAppendInfo.appendEndTxnMarker``:

* **Producer-epoch check**: TV0/TV1 need marker epoch >= stored epoch; TV2
  (KIP-1228, WriteTxnMarkers v2 carries the transaction version) needs
  marker epoch **>** stored epoch, so a late or duplicate marker is rejected.
  Otherwise INVALID_PRODUCER_EPOCH.  KAFKA-19999 (PR #21176, Dec 2025): under
  TV2 a marker at exactly the stored epoch while no transaction is open on the
  partition is an idempotent retry (a coordinator that failed over and reloaded
  Prepare*, or whose marker response was lost) and is accepted; before the fix
  it was rejected and the transaction hung in Prepare* (``accept_retry=False``).
* **Coordinator-epoch check**: a stored coordinator epoch above the marker's
  -> TRANSACTION_COORDINATOR_FENCED (a deposed coordinator's marker).
* **Effect**: the producer's epoch becomes the marker's (batch metadata is
  cleared if it changed, so the next batch starts at sequence 0), the
  coordinator epoch is recorded, the open transaction on the partition is
  closed, and an ABORT of a non-empty transaction adds an
  :class:`~model.log.partition.AbortedTxn` to the aborted-transaction index.  A
  marker for a partition where the producer wrote nothing touches neither the
  LSO nor the index (KAFKA-10702), but the control batch is still written.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.log.partition import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    AbortedTxn,
    LogEntry,
    PartitionLeader,
    _put_entry,
    clear_transaction_verification,
    lso_after_completion,
)
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import WriteTxnMarkersRequest

__all__ = ["MarkerRules", "append_end_txn_marker", "entry_after_marker", "marker_rules"]


class MarkerRules(NamedTuple):
    """The partition leader's rules for a COMMIT/ABORT marker, one per ``ProtocolFlags`` field.

    No field has a default: Kafka runs the same ``UnifiedLog`` code for every partition -- a data partition, the
    group's ``__consumer_offsets`` partition, a Connect task's topics -- so every caller builds its rules from its
    protocol variant's flags with :func:`marker_rules`, and a weakened variant weakens the marker path of every
    partition alike (before, only the data partitions of :mod:`model.systems.transactions` read the flags; the
    group coordinator's and Connect's marker calls took defaults no scenario could vary).

    ``accept_retry``: the KAFKA-19999 fix (``ProtocolFlags.marker_retry_same_epoch``).
    ``clears_verification``: an appended marker removes the producer id's ``VerificationStateEntry``
    (``UnifiedLog.updateProducers``, Kafka trunk ``1eb7644349cb``; ``ProtocolFlags.marker_clears_verification``),
    so a verification answered for the transaction the marker ended cannot append after it;
    ``keeps_next_verification`` (``ProtocolFlags.marker_keeps_next_transaction_verification``): except a TV2
    entry already verifying the next transaction (:func:`_next_transaction_verifying`).  ``lso_counts_open``
    (``ProtocolFlags.aborted_txn_lso_counts_open_transactions``): the aborted range's last stable offset counts
    the other producers' open transactions (:func:`~model.log.partition.lso_after_completion`).
    """

    accept_retry: bool
    clears_verification: bool
    keeps_next_verification: bool
    lso_counts_open: bool


def marker_rules(flags: Any) -> MarkerRules:
    """The marker rules under a protocol variant's ``flags`` (``model.variants.ProtocolFlags``)."""
    return MarkerRules(
        flags.marker_retry_same_epoch,
        flags.marker_clears_verification,
        flags.marker_keeps_next_transaction_verification,
        flags.aborted_txn_lso_counts_open_transactions,
    )


def append_end_txn_marker(
    leader: PartitionLeader,
    marker: WriteTxnMarkersRequest,
    transaction_version: int,
    rules: MarkerRules,
) -> tuple[PartitionLeader, str, tuple[str, ...]]:
    """Validate and append one marker under ``rules`` (:class:`MarkerRules`); returns the leader, the error and
    events."""
    accept_retry, clears_verification, keeps_next_verification, lso_counts_open = rules
    pid = marker.producer_id
    entry = leader.entry(pid)
    events: tuple[str, ...] = ()
    if entry is not None:
        if transaction_version >= 2:
            retry = (
                accept_retry
                and marker.producer_epoch == entry.producer_epoch
                and entry.current_txn_first_offset < 0
            )
            stale = marker.producer_epoch <= entry.producer_epoch and not retry
            events = ("marker_retry_accepted",) if retry else ()
        else:
            stale = marker.producer_epoch < entry.producer_epoch
        if stale:
            return leader, Errors.INVALID_PRODUCER_EPOCH, ("marker_rejected", "error:INVALID_PRODUCER_EPOCH")
        if entry.coordinator_epoch > marker.coordinator_epoch:
            return (
                leader,
                Errors.TRANSACTION_COORDINATOR_FENCED,
                (
                    "marker_rejected",
                    "error:TRANSACTION_COORDINATOR_FENCED",
                ),
            )
    offset = len(leader.log)
    events = (*events, "marker_written")
    if entry is not None and entry.current_txn_first_offset >= 0:
        events = (*events, "txn_completed_on_partition")
    control = CONTROL_COMMIT if marker.committed else CONTROL_ABORT
    batch = LogEntry(pid, marker.producer_epoch, -1, (), True, control, marker.coordinator_epoch)
    lso = lso_after_completion(leader.producers, pid, offset, lso_counts_open)
    new, aborted = entry_after_marker(entry, batch, offset, leader.aborted, lso)
    log = (*leader.log, batch)
    leader = leader._replace(
        log=log, high_watermark=len(log), producers=_put_entry(leader.producers, new), aborted=aborted
    )
    if clears_verification and not _next_transaction_verifying(leader, marker, keeps_next_verification):
        leader = clear_transaction_verification(leader, pid)
    return leader, Errors.NONE, events


def entry_after_marker(
    entry: ProducerStateEntry | None,
    marker: LogEntry,
    offset: int,
    aborted: tuple[AbortedTxn, ...],
    last_stable_offset: int = -1,
) -> tuple[ProducerStateEntry, tuple[AbortedTxn, ...]]:
    """The producer id's entry and the aborted-transaction index after the control batch ``marker`` is appended
    at ``offset`` (``ProducerAppendInfo.appendEndTxnMarker``, ``UnifiedLog.completeTransaction`` /
    ``LogSegment.updateTxnIndex``).

    The same update runs on the leader after its checks and on every replica that appends the marker while
    replicating it (origin REPLICATION: no epoch checks), so a follower's entry and index are the leader's
    (:mod:`model.log.leader_election`).  The producer's epoch becomes the marker's (a new epoch clears the batch
    cache), the marker's coordinator epoch is recorded, the partition's open transaction is closed, and an ABORT
    of a transaction that wrote here adds its range to the index, with the partition's last stable offset once
    the transaction completed (``LogSegment.updateTxnIndex``).
    """
    pid = marker.producer_id
    if entry is not None and entry.current_txn_first_offset >= 0 and marker.control == CONTROL_ABORT:
        aborted = (*aborted, AbortedTxn(pid, entry.current_txn_first_offset, offset, last_stable_offset))
    if entry is None or entry.producer_epoch != marker.producer_epoch:
        return ProducerStateEntry(pid, marker.producer_epoch, (), marker.coordinator_epoch, -1), aborted
    return entry._replace(coordinator_epoch=marker.coordinator_epoch, current_txn_first_offset=-1), aborted


def _next_transaction_verifying(leader: PartitionLeader, marker: WriteTxnMarkersRequest, keep: bool) -> bool:
    """Whether the marker's producer id already started verifying its *next* transaction: a TV2 entry whose epoch
    is the marker's (TV2 markers carry the bumped epoch the next transaction uses).  Kafka trunk 2025,
    ``UnifiedLog.updateProducers`` (``isV2NextTransactionStarted``): such an entry is kept -- clearing it failed
    the next transaction's first batch with the fatal INVALID_TXN_STATE when its verification was answered after
    the previous transaction's marker (``keep`` off: the earlier, unconditional clear)."""
    v = leader.verification_entry(marker.producer_id)
    return keep and v is not None and v.supports_epoch_bump and marker.producer_epoch == v.epoch
