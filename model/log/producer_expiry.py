"""Partition-side producer state expiry: ``producer.id.expiration.ms`` on the partition leader.

``ProducerStateManager.removeExpiredProducers`` (run by the log manager's
periodic ``PRODUCER_EXPIRE`` task; Kafka trunk, October 2024) drops the entry
of every producer id that has been idle for ``producer.id.expiration.ms``
(KIP-854; default one day) -- but only if the producer has **no ongoing
transaction** on the partition (``isProducerExpired`` requires an empty
``currentTxnFirstOffset``).  The same filter applies when a new leader loads
producer state from a snapshot.

After expiry the leader knows nothing of the producer id: its next batch is
accepted at any sequence (the unknown-producer rule, KIP-360), and a marker
for it closes no transaction on the partition.  Expiring a producer with an
open transaction would therefore move the last stable offset past the
transaction's records (they become visible to read_committed consumers before
the marker) and leave an abort out of the aborted-transaction index.

The model has no clocks: expiry is a timeout *action* (a protocol step, not a
budgeted fault), enabled whenever the rule allows it -- the idle time may
always have passed.
"""

from __future__ import annotations

from keos.model.log.partition import PartitionLeader
from keos.model.log.producer_state import ProducerStateEntry

__all__ = ["expirable", "expire_producer"]


def expirable(entry: ProducerStateEntry, keep_open_transactions: bool = True) -> bool:
    """``isProducerExpired`` without the clock: no ongoing transaction (unless the rule is switched off)."""
    return entry.current_txn_first_offset < 0 or not keep_open_transactions


def expire_producer(
    leader: PartitionLeader, producer_id: int, keep_open_transactions: bool = True
) -> tuple[PartitionLeader, tuple[str, ...]] | None:
    """The leader after ``removeExpiredProducers`` dropped ``producer_id``; ``None`` if it may not."""
    entry = leader.entry(producer_id)
    if entry is None or not expirable(entry, keep_open_transactions):  # no branch: replay/minimise only
        return None
    events: tuple[str, ...] = ("producer_state_expired",)
    if entry.current_txn_first_offset >= 0:  # no branch: weakened variant expire_producers_with_open_transactions
        events = (*events, "open_transaction_expired")
    producers = tuple(e for e in leader.producers if e.producer_id != producer_id)
    return leader._replace(producers=producers), events
