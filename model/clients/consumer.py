"""What a consumer can read from a partition: ``isolation.level`` (KIP-98 §7).

* ``read_uncommitted`` returns every data record below the high watermark.
* ``read_committed`` stops at the last stable offset (LSO) and drops the
  batches of aborted transactions, using the aborted-transaction index the
  fetch response carries (``FetchResponse.abortedTransactions``; the consumer
  drops an aborted producer's batches from ``firstOffset`` up to its ABORT
  marker, ``UnifiedLog.lastStableOffset``).

These are pure functions of the leader's state: a fetch from offset 0 at any
instant.  Consumer positions and fetch sessions are not modelled (a consumer
that re-fetches sees a superset, because the LSO only moves forward), so the
model checks every possible read by checking this view in every state.

:func:`record_fates` is the *ground truth* the invariants compare the view
with: a transactional batch is committed or aborted by the next control batch
of its producer id in the log, and undecided while none follows.  It reads the
log itself, not the LSO or the index, so it is an independent oracle.
"""

from __future__ import annotations

from keos.model.log.partition import CONTROL_COMMIT, PartitionLeader, last_stable_offset

__all__ = ["ABORTED", "COMMITTED", "READ_COMMITTED", "READ_UNCOMMITTED", "UNDECIDED", "fetch", "record_fates"]

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"

COMMITTED = "committed"
ABORTED = "aborted"
UNDECIDED = "undecided"


def fetch(leader: PartitionLeader, isolation: str) -> tuple[int, ...]:
    """The record ids a consumer with ``isolation`` reads from offset 0, in offset order."""
    end = leader.high_watermark if isolation == READ_UNCOMMITTED else last_stable_offset(leader)
    out: list[int] = []
    for offset, e in enumerate(leader.log[:end]):
        if e.control:
            continue
        if isolation == READ_COMMITTED and e.transactional:
            aborted = any(
                a.producer_id == e.producer_id and a.first_offset <= offset <= a.last_offset for a in leader.aborted
            )
            if aborted:
                continue
        out.extend(e.records)
    return tuple(out)


def record_fates(leader: PartitionLeader) -> dict[int, str]:
    """Record id -> committed / aborted / undecided, from the control batches in the log."""
    fates: dict[int, str] = {}
    open_by_pid: dict[int, list[int]] = {}
    for e in leader.log:
        if e.control:
            fate = COMMITTED if e.control == CONTROL_COMMIT else ABORTED
            for rid in open_by_pid.pop(e.producer_id, []):
                fates[rid] = fate
        elif e.transactional:
            open_by_pid.setdefault(e.producer_id, []).extend(e.records)
            for rid in e.records:
                fates[rid] = UNDECIDED
        else:  # unreachable: its callers' partitions (the transactional systems') hold no non-transactional batch
            for rid in e.records:
                fates[rid] = COMMITTED
    return fates
