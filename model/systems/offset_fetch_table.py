"""Kafka's answer table for an OffsetFetch at the group coordinator, judged under *every* value of the request's
flags: a judge, not a handler (property ``coordinator_answers_per_kafka_table``, label ``answer_table:OffsetFetch``).

Rows, first match wins (Kafka 4.0, apache/kafka trunk ``1eb7644349cb``: ``GroupCoordinatorService.fetchOffsets``
and ``OffsetMetadataManager.fetchOffsets``):

1. ``loading`` -- the read finds the group's shard still loading (``CoordinatorRuntime.withActiveContextOrThrow``):
   COORDINATOR_LOAD_IN_PROGRESS;
2. ``unstable`` -- the request sets ``requireStable`` (OffsetFetch v7+, KIP-447) and the partition has a pending
   transactional offset (``hasPendingTransactionalOffsets``): UNSTABLE_OFFSET_COMMIT with offset -1;
3. otherwise NONE with the partition's committed offset (-1: none).  A read *without* ``requireStable`` is served
   from the last committed snapshot (``lastCommittedOffset``) and never waits for, nor reveals, an open
   transaction's offset.

Why a sweep.  Every consumer of the model sends ``requireStable=true`` (``ConsumerCoordinator.fetchCommittedOffsets``
always does since KIP-447), so the handler's answer to the other value -- what ``Admin.listConsumerGroupOffsets``
sends by default (``ListConsumerGroupOffsetsOptions.requireStable() == false``: ``kafka-consumer-groups.sh
--describe``, lag monitors, MirrorMaker 2's checkpoints) -- is never asked, and a handler that answers
UNSTABLE_OFFSET_COMMIT to it, or a pending offset, passes every scenario.  The judge therefore asks the pure
handler the same question under each value of :data:`FETCH_FLAGS` in every group state a step produces (an
administrator may read at any time) and compares each answer with the table.  The expected answer is computed
from the group's raw fields (``pending``, ``committed``, ``loading``), never through the handler's helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from keos.model.protocol.answer_rows import Row, first_answer
from keos.model.protocol.errors import Errors

__all__ = ["FETCH_FLAGS", "ROWS", "FetchAsk", "fetch_table_mismatches"]

#: The OffsetFetch request's flags and the values a client may send: ``requireStable`` (v7+; the Java consumer
#: sends true, the Admin client false by default).
FETCH_FLAGS: tuple[tuple[str, tuple[bool, ...]], ...] = (("require_stable", (False, True)),)  # no mutate: judge


class FetchAsk(NamedTuple):
    """What the judge reads of an OffsetFetch for one partition and the group it finds."""

    loading: bool
    require_stable: bool
    pending: bool  # a transactional offset for the partition awaits its marker
    committed: int  # the partition's committed offset (-1: none)


def _loading(a: FetchAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    return Errors.COORDINATOR_LOAD_IN_PROGRESS if a.loading else None


def _unstable(a: FetchAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    return Errors.UNSTABLE_OFFSET_COMMIT if a.require_stable and a.pending else None


#: The rows in Kafka's order.
ROWS: tuple[Row, ...] = (("loading", _loading), ("unstable", _unstable))  # no mutate: the judge's table


def fetch_table_mismatches(  # no mutate: the judge (a property), not a rule
    handler: Callable[[Any, int, bool], tuple[str, int]], group: Any, partition: int
) -> list[str]:
    """Ghost labels for each value of :data:`FETCH_FLAGS` under which ``handler(group, partition, require_stable)``
    (the coordinator's handler with the system's configuration bound) answers otherwise than the table."""
    if group is None:  # unreachable: the eos model forms its group in init_states
        return []
    pending = any(p.partition == partition for p in group.pending)
    committed = next((c.offset for c in group.committed if c.partition == partition), -1)
    labels = []
    for _name, values in FETCH_FLAGS:
        for require_stable in values:
            ask = FetchAsk(group.loading, require_stable, pending, committed)
            want, row, _ = first_answer(ROWS, ask, "committed")
            want_offset = committed if want == Errors.NONE else -1
            got = handler(group, partition, require_stable)
            if got != (want, want_offset):
                labels.append(f"answer_table:OffsetFetch:{row}:requireStable={require_stable}:"
                              f"{got[0]}@{got[1]}:kafka:{want}@{want_offset}")
    return labels


# The OffsetFetch judge runs in every step that changes the group, cached by its arguments' values (the handler is
# the system's bound method: one system, one flag set) -- callers only read the list (model/memo.py); rebound
# here, after every definition, so that the lines above keep their positions (mutant ids hash positions).
from keos.model.memo import memoised  # noqa: E402  (here, not at the top: see above)

fetch_table_mismatches = memoised(fetch_table_mismatches)  # no mutate: a cache of a pure function
