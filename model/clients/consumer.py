"""What a consumer can read from a partition: ``isolation.level`` (KIP-98 §7).

* ``read_uncommitted`` returns every data record below the high watermark.
* ``read_committed`` stops at the last stable offset (LSO) and drops the
  batches of aborted transactions, using the aborted transactions the fetch
  response carries (``FetchResponse.abortedTransactions``, collected from the
  aborted-transaction index for the fetched range; the consumer drops an
  aborted producer's batches from ``firstOffset`` up to its ABORT marker):
  :func:`fetch_range`, for a fetch from any offset ending anywhere up to the
  LSO.

These are pure functions of the leader's state.  Consumer positions and fetch
sessions are not modelled: :func:`fetch` reads from offset 0 at any instant,
and the property ``read_committed_from_any_offset`` checks, in every state, a
fetch from every offset below the LSO ending after one batch or at the LSO --
where a consumer's position and its fetch size can cut the log -- so every
possible read is checked.

:func:`record_fates` is the *ground truth* the invariants compare the view
with: a transactional batch is committed or aborted by the next control batch
of its producer id in the log, and undecided while none follows.  It reads the
log itself, not the LSO or the index, so it is an independent oracle.
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.log.partition import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    NO_PRODUCER_ID,
    AbortedTxn,
    PartitionLeader,
    collect_aborted_transactions,
    last_stable_offset,
)

__all__ = [
    "ABORTED",
    "COMMITTED",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "UNDECIDED",
    "PartitionConsumer",
    "ReadCommittedFetcher",
    "fetch",
    "fetch_range",
    "filter_fetched",
    "record_fates",
]

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"

COMMITTED = "committed"
ABORTED = "aborted"
UNDECIDED = "undecided"


def fetch(leader: PartitionLeader, isolation: str) -> tuple[int, ...]:
    """The record ids a consumer with ``isolation`` reads from offset 0, in offset order (one fetch up to the
    high watermark, or for read_committed up to the LSO: :func:`fetch_range`)."""
    if isolation == READ_COMMITTED:
        return fetch_range(leader, 0, last_stable_offset(leader))
    return tuple(r for e in leader.log[: leader.high_watermark] if not e.control for r in e.records)


def fetch_range(leader: PartitionLeader, fetch_offset: int, upper_bound_offset: int) -> tuple[int, ...]:
    """The record ids one read_committed fetch from ``fetch_offset`` returns when its data ends at
    ``upper_bound_offset`` (at most the LSO; the fetch size decides where): the two halves of the fetch path.

    The leader sends the batches of the range and the aborted transactions overlapping it
    (:func:`~model.log.partition.collect_aborted_transactions`); the consumer (``CompletedFetch``, Kafka trunk
    ``1eb7644349cb``) queues them by first offset and, batch by batch, moves every queued transaction that begins
    at or before the batch into its aborted producer ids (``consumeAbortedTransactionsUpTo``), forgets a producer
    id at its ABORT marker (``containsAbortMarker``), skips a transactional batch of an aborted producer id
    (``isBatchAborted``) and never returns control batches.  A fetch starting inside an aborted transaction relies
    on the leader listing it (``lastOffset >= fetchOffset``).
    """
    return filter_fetched(leader, fetch_offset, upper_bound_offset,
                          collect_aborted_transactions(leader, fetch_offset, upper_bound_offset))


def filter_fetched(
    leader: PartitionLeader, fetch_offset: int, upper_bound_offset: int, aborted: tuple[AbortedTxn, ...] | None
) -> tuple[int, ...]:
    """The record ids a read_committed consumer returns from a fetch response carrying the batches of
    ``[fetch_offset, upper_bound_offset)`` and the aborted transactions ``aborted`` (None: the response has no
    list, as for a read_uncommitted read -- the consumer's queue is empty then): ``CompletedFetch``'s filter."""
    queue = sorted(aborted or (), key=lambda a: a.first_offset)
    aborted_pids: set[int] = set()
    out: list[int] = []
    for offset in range(fetch_offset, upper_bound_offset):
        e = leader.log[offset]
        if e.producer_id != NO_PRODUCER_ID:
            while queue and queue[0].first_offset <= offset:
                aborted_pids.add(queue.pop(0).producer_id)
            if e.control == CONTROL_ABORT:
                aborted_pids.discard(e.producer_id)
            elif e.transactional and e.producer_id in aborted_pids:
                continue
        if not e.control:
            out.extend(e.records)
    return tuple(out)


@record
class PartitionConsumer(NamedTuple):
    """A read_uncommitted consumer of one partition (``isolation.level`` default) polling it from offset 0 in the
    idempotence system (``[broker] read_uncommitted_consumer``): its position (the next fetch offset: the end of
    the last batch a response carried) and the record ids it returned to the application, in order.  It fetches
    from whichever broker leads the partition now; a leader's high watermark never moves back, so its position
    needs no validation (KIP-320's truncation detection finds nothing to do under Kafka's rules)."""

    position: int = 0
    delivered: tuple[int, ...] = ()


@record
class ReadCommittedFetcher(NamedTuple):
    """A read_committed consumer of one partition polling it from offset 0 (``[transactions]
    read_committed_consumer``): its position (``SubscriptionState`` -- the next fetch offset, the end of the last
    batch a response carried: the KAFKA-5443 rule, so a response ending in control or aborted batches moves it on),
    whether its Fetch waits in the leader's purgatory (``DelayedFetch``, :mod:`model.log.fetch`) and the record ids
    it returned to the application, in order."""

    position: int = 0
    parked: bool = False
    delivered: tuple[int, ...] = ()


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
