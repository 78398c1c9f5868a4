"""Transaction boundaries of exactly-once source tasks (KIP-618 §Transaction boundaries).

``transaction.boundary=poll`` (the default): ``ExactlyOnceWorkerSourceTask`` begins a transaction
with the first record of a batch that ``SourceTask.poll()`` returned and commits it -- records and
offsets -- once the whole batch is sent (``TransactionBoundaryManager`` for POLL: the transaction is
committed after every batch, Kafka 3.9).  In the Connect model a ``Poll`` step is one ``poll()`` call
and sends its batch as one producer batch, so under this boundary every transaction in the output
topic carries exactly one data batch.  A task that polls again before committing merges two of the
connector's batches into one transaction: the boundary the operator configured does not hold.
``interval`` and ``connector`` boundaries set no such bound.
"""

from __future__ import annotations

from keos.invariants._common import no_findings
from keos.model.connect.records import OUTPUT, ConnectConfig, ConnectState
from keos.model.interface import Property

__all__ = ["merged_poll_batches", "transaction_boundary_properties"]


def merged_poll_batches(s: ConnectState) -> list[str]:
    """Transactions in the output topic that carry more than one poll's batch (producer id, first offset)."""
    problems: list[str] = []
    open_batches: dict[int, list[int]] = {}
    for offset, e in enumerate(s.kafka.partitions[OUTPUT].log):
        if e.control:
            open_batches.pop(e.producer_id, None)
        elif e.transactional:
            batches = open_batches.setdefault(e.producer_id, [])
            batches.append(offset)
            if len(batches) == 2:
                problems.append(
                    f"producer id {e.producer_id}'s transaction holds the batches at output offsets {batches[0]} and "
                    f"{offset}: two poll() batches in one transaction under transaction.boundary=poll"
                )
    return problems


def transaction_boundary_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """The boundary property, for scenarios whose connector uses ``transaction.boundary=poll`` on an enabled worker."""
    topo = config.topology
    if topo.transaction_boundary != "poll" or "enabled" not in topo.workers:
        return ()
    return (
        no_findings(
            name="poll_boundary_one_batch_per_transaction",
            fact="With transaction.boundary=poll every transaction of an exactly-once source task carries the records "
            "of exactly one poll() batch (and their offsets): it is committed before the task polls again.",
            source="KIP-618 §Transaction boundaries; ExactlyOnceWorkerSourceTask / TransactionBoundaryManager (POLL)",
            catches="a task that polls again inside an open transaction under the poll boundary",
            findings=merged_poll_batches,
            partners=("connect_transaction_completed",),
        ),
    )
