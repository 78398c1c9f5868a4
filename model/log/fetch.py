"""A partition leader's Fetch path for consumers: the immediate read and the fetch purgatory (``DelayedFetch``).

Kafka answers a consumer's Fetch in one of two places (apache/kafka trunk ``1eb7644349cb``,
``core/src/main/scala/kafka/server/ReplicaManager.scala`` ``fetchMessages``, ``DelayedFetch.scala``):

* **at once** -- ``fetchMessages`` reads the log (``readFromLog`` -> ``UnifiedLog.read``) with the request's
  ``FetchParams`` and answers when the read returned at least ``fetch.min.bytes`` (default 1) or the request
  asked not to wait;
* **from the purgatory** -- otherwise the request is parked as a ``DelayedFetch`` holding the ``FetchParams``
  and each partition's fetch offset.  ``tryComplete`` completes it once the partition's end offset *for the
  request's isolation level* passes the fetch offset (``FetchIsolation``: the high watermark for
  ``read_uncommitted``, the last stable offset for ``read_committed``) and enough bytes accumulated, or
  ``fetch.max.wait.ms`` expires (``onExpiration`` -> ``forceComplete``); ``onComplete`` reads the log *again*,
  at completion time, with the parameters it captured (``readFromLog(params, ...)``) and builds the response
  from that read -- records *and* the aborted transactions of the range (``FetchPartitionData.abortedTransactions``).

Both paths share one read (:func:`read_from_log`): the upper bound of the isolation level and, for
``read_committed``, the aborted transactions overlapping the range
(:func:`~model.log.partition.collect_aborted_transactions`).  The delayed path (:func:`complete_delayed_fetch`)
is where Kafka twice lost what the request asked for: KAFKA-5355 (fix 6a5a908, 0.11.0) -- ``DelayedFetch``
called ``readFromLog`` without the request's isolation level, so a read_committed long-poll read up to the high
watermark like a read_uncommitted one (the read carries no aborted transactions then); KAFKA-5376 (fix 2bb48a4,
0.11.0) -- the response built in ``onComplete`` dropped the read's aborted transactions, so the consumer could not
filter the aborted batches of its range.  Switches: ``ProtocolFlags.delayed_fetch_keeps_isolation``,
``ProtocolFlags.delayed_fetch_carries_aborted``.

The fetch size is counted in batches (``FetchParams.max_batches``, the consumer's ``max.partition.fetch.bytes``;
``LogSegment.fetchUpperBoundOffset``): a response may end inside an aborted transaction, and the next fetch then
starts inside it.  Not modelled: byte sizes, fetch sessions, preferred read replicas, ``fetch.max.wait.ms``
expiring a fetch with nothing to read (it returns nothing and the consumer fetches again).
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.log.partition import AbortedTxn, PartitionLeader, collect_aborted_transactions, last_stable_offset
from keos.model.variants import ProtocolFlags

__all__ = [
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "FetchParams",
    "LogReadResult",
    "complete_delayed_fetch",
    "end_offset",
    "read_from_log",
    "try_complete",
]

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"


class FetchParams(NamedTuple):
    """What a consumer's Fetch asks of one partition (``FetchParams`` + ``PartitionData.fetchOffset``)."""

    isolation: str
    fetch_offset: int
    #: ``max.partition.fetch.bytes`` in batches: at most this many log entries (at least one, ``minOneMessage``);
    #: 0 = no limit below the isolation's end offset
    max_batches: int = 0


class LogReadResult(NamedTuple):
    """One partition's read (``LogReadResult`` / ``FetchPartitionData``): the batches of ``[fetch_offset,
    upper_bound)`` and the aborted transactions the response lists for them (None: the read was not
    read_committed, the response carries no list)."""

    fetch_offset: int
    upper_bound: int
    aborted: tuple[AbortedTxn, ...] | None


def end_offset(leader: PartitionLeader, isolation: str, flags: ProtocolFlags | None = None) -> int:
    """The offset a read with ``isolation`` may not pass (``FetchIsolation``): the LSO for read_committed,
    the high watermark for read_uncommitted (a consumer never reads past it).

    ``flags.read_uncommitted_bounded_by_high_watermark`` off (weakened variant ``no_kafka_9196_fix``): the
    read_uncommitted bound is the log end offset, as a read bounded by stale high-watermark offset metadata was
    before KAFKA-9196's fix (7eafea0, 2.4).
    """
    if isolation == READ_COMMITTED:
        return last_stable_offset(leader)
    if flags is not None and not flags.read_uncommitted_bounded_by_high_watermark:  # no branch: variant only
        return len(leader.log)
    return leader.high_watermark


def read_from_log(leader: PartitionLeader, params: FetchParams, flags: ProtocolFlags | None = None) -> LogReadResult:
    """``ReplicaManager.readFromLog`` -> ``UnifiedLog.read(fetchOffset, maxLength, isolation, minOneMessage)``:
    the batches from the fetch offset up to the isolation's end offset, and for read_committed the aborted
    transactions of that range (``UnifiedLog.collectAbortedTransactions``, ``addAbortedTransactions``)."""
    upper = max(params.fetch_offset, end_offset(leader, params.isolation, flags))
    if params.max_batches > 0:
        upper = min(upper, params.fetch_offset + params.max_batches)
    if params.isolation != READ_COMMITTED:
        return LogReadResult(params.fetch_offset, upper, None)
    return LogReadResult(params.fetch_offset, upper, collect_aborted_transactions(leader, params.fetch_offset, upper))


def try_complete(leader: PartitionLeader, params: FetchParams, flags: ProtocolFlags | None = None) -> bool:
    """``DelayedFetch.tryComplete`` for one partition: the end offset of the request's isolation level has passed
    its fetch offset (so the read returns at least one batch)."""
    return end_offset(leader, params.isolation, flags) > params.fetch_offset


def complete_delayed_fetch(leader: PartitionLeader, params: FetchParams, flags: ProtocolFlags) -> LogReadResult:
    """``DelayedFetch.onComplete``: the log read again, now, with the parameters the request was parked with, and
    the response built from it.

    ``flags.delayed_fetch_keeps_isolation`` off (weakened variant ``no_kafka_5355_fix``): the read is made with
    the default isolation, read_uncommitted.  ``flags.delayed_fetch_carries_aborted`` off (``no_kafka_5376_fix``):
    the response carries no aborted transactions (an empty list where the read had one).
    """
    read_params = params if flags.delayed_fetch_keeps_isolation else params._replace(isolation=READ_UNCOMMITTED)
    result = read_from_log(leader, read_params, flags)
    if not flags.delayed_fetch_carries_aborted and result.aborted is not None:
        return result._replace(aborted=())
    return result
