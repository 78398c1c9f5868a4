"""Source-offset tombstones under a connector-specific offsets topic (KIP-618 source offsets, KAFKA-15018).

A connector may commit a ``null`` offset (a tombstone) for a source partition.
A worker reads offsets through the combined view: the connector's own topic,
falling back to the worker's global topic for partitions it has no offset for
(``ConnectorOffsetBackingStore.get``).  ``KafkaOffsetBackingStore`` drops a
tombstoned key, so the fallback applies to tombstoned partitions too: unless
the global topic holds the tombstone as well, the partition's old offset comes
back.  KAFKA-15018 (Kafka 3.8) fixed this by writing tombstones to the global
topic before the connector topic.

That fallback is the documented contract (KIP-618, the Javadoc of ``ConnectorOffsetBackingStore.get``).  Kafka's
code (apache/kafka 1eb7644) never falls back: the connector store answers ``null`` for every key its topic lacks and
that answer replaces the worker store's (:func:`model.connect.offsets.combined_offsets`).  Under a scenario's
``[connect] offsets_read = "kafka-4.0"`` the view is the connector's topic alone: a tombstone there cannot be undone
by the global topic, so ``tombstoned_offsets_stay_deleted`` (a property of the fallback) is not stated, and
``forgotten_offsets_stay_forgotten`` judges that view.
"""

from __future__ import annotations

from functools import lru_cache

from keos.invariants._common import no_findings, sometimes_event
from keos.invariants.connect_logs import committed_offsets, committed_records, tombstoned_partitions
from keos.model.connect.offsets import is_foreign
from keos.model.connect.records import CONNECTOR_OFFSETS, GLOBAL_OFFSETS, OUTPUT, ConnectConfig, ConnectState
from keos.model.connect.worker import decode_source_record
from keos.model.interface import Property
from keos.model.log.partition import PartitionLeader

__all__ = [
    "acknowledged_ahead",
    "acknowledgement_properties",
    "offsets_outside_transactions",
    "resurrected_offsets",
    "rewritten_tombstones",
    "task_offsets_properties",
    "tombstone_properties",
]


def resurrected_offsets(sources: int, s: ConnectState) -> list[str]:
    """Source partitions tombstoned in the connector topic whose combined view still shows an offset."""
    parts = s.kafka.partitions
    glob = committed_offsets(parts[GLOBAL_OFFSETS], sources)
    return [
        f"src{p}'s offset is a committed tombstone in the connector's offsets topic, but the combined view "
        f"falls back to offset {glob[p]} in the global offsets topic"
        for p in tombstoned_partitions(parts[CONNECTOR_OFFSETS], sources)
        if glob[p] >= 0
    ]


def rewritten_tombstones(sources: int, connector_topic: bool, s: ConnectState, falls_back: bool = True) -> list[str]:
    """Source partitions the connector forgot (a committed tombstone) whose offset the workers' view shows again.

    ``OffsetStorageWriter`` writes only the offsets that changed since its last flush (``beginFlush`` moves
    ``data`` to ``toFlush`` and starts empty): a forgotten partition's offset is never written again, by
    this instance or a later one, so the view the next task reads stays empty for it.
    """
    parts = s.kafka.partitions
    view = committed_offsets(parts[GLOBAL_OFFSETS], sources)
    if connector_topic:
        own = committed_offsets(parts[CONNECTOR_OFFSETS], sources)
        view = tuple(o if o >= 0 or not falls_back else g for o, g in zip(own, view))
    return [
        f"src{p} was forgotten with a committed tombstone, but the offsets view shows offset {view[p]} for it again"
        for p in s.deleted_sources
        if view[p] >= 0
    ]


def tombstone_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """The tombstone properties, for scenarios with a connector topic in which the connector may commit one."""
    topo = config.topology
    if topo.max_tombstones == 0:
        return ()
    sources = topo.source_partitions
    connector_topic = topo.offsets_topic == "connector"
    falls_back = topo.offsets_read == "kip-618"
    forgotten = no_findings(
        name="forgotten_offsets_stay_forgotten",
        fact="Once the connector committed a tombstone (null offset) for a source partition, no later offsets "
        "flush writes an offset for it again: the offsets view every worker reads has none for that partition.",
        source="KIP-618 source offsets; OffsetStorageWriter.beginFlush/doFlush (only offsets set since the last "
        "flush are written)",
        catches="an offset writer that forgets what it flushed and rewrites every offset at each flush, "
        "overwriting the tombstone",
        findings=lambda s: rewritten_tombstones(sources, connector_topic, s, falls_back),
        partners=("offset_tombstone_committed",),
    )
    if not connector_topic or not falls_back:
        return (
            forgotten,
            sometimes_event(
                "offset_tombstone_committed",
                "The connector committed a tombstone offset for a finished source partition.",
                "offset_tombstone_committed",
            ),
        )
    return (
        forgotten,
        no_findings(
            name="tombstoned_offsets_stay_deleted",
            fact="Once a tombstone (null offset) for a source partition is committed in the connector's offsets "
            "topic, the combined offsets view has no offset for that partition: the global topic's old offset "
            "does not come back through the fallback.",
            source="KIP-618 source offsets (connector-specific offsets topics, fallback to the global topic); "
            "ConnectorOffsetBackingStore.get/set",
            catches="KAFKA-15018: a tombstone written to the connector topic only (the global write failed or "
            "came second) resurrects the old offset",
            findings=lambda s: resurrected_offsets(sources, s),
            partners=("offset_tombstone_committed",),
        ),
        sometimes_event(
            "offset_tombstone_committed",
            "The connector committed a tombstone offset for a finished source partition.",
            "offset_tombstone_committed",
        ),
    )


def offsets_outside_transactions(partition: int, s: ConnectState, earlier: int = 0) -> list[str]:
    """Offset records (tombstones too) in the tasks' offsets topic that no transaction wrote.

    ``earlier``: the entries an earlier run of the connector left before the scenario starts (the scenario's
    ``delivered``, written with a plain producer: that run may have been at-least-once) are not judged, nor is a
    record another writer appended that is not Connect's (fault ``foreign_offset_record``: not a task's offsets)."""
    topic = "connector's" if partition == CONNECTOR_OFFSETS else "global"
    return [
        f"offset record(s) {list(e.records)} at offset {o} of the {topic} offsets topic were written outside any "
        f"transaction (producer id {e.producer_id})"
        for o, e in enumerate(s.kafka.partitions[partition].log)
        if o >= earlier and e.records and not e.control and not e.transactional
        and not all(is_foreign(rid) for rid in e.records)
    ]


def task_offsets_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """Where every worker runs exactly-once source support, the tasks' offsets are transactional writes only."""
    topo = config.topology
    if not topo.workers or any(mode != "enabled" for mode in topo.workers):
        return ()
    partition = CONNECTOR_OFFSETS if topo.offsets_topic == "connector" else GLOBAL_OFFSETS
    # The earlier run's offsets (ConnectSystem._earlier_run): one plain entry in each topic that holds any.
    kinds = ("connector", "both") if partition == CONNECTOR_OFFSETS else ("global", "both")
    earlier = int(any(d > 0 and where in kinds for d, where in zip(topo.delivered, topo.delivered_offsets)))
    return (
        no_findings(
            name="task_offsets_only_in_transactions",
            fact="With exactly-once source support enabled on every worker, a source task writes its offsets -- a "
            "flush, a connector's tombstone, a final commit, a zombie's late write -- only through its "
            "transactional producer, in the transaction of the records they describe: the offsets topic the tasks "
            "read (the connector's own, else the worker's global one) holds no offset record outside a transaction, "
            "in faulty runs too. (The copy into the global topic behind a connector-specific one is the worker's "
            "plain write, KIP-618 §Migration, and is not judged here.)",
            source="KIP-618 §Atomic offset writes; ExactlyOnceWorkerSourceTask (the offset writer flushes into the "
            "producer's transaction), ConnectorOffsetBackingStore.set (Kafka 4.0, apache/kafka 1eb7644)",
            catches="an offsets write of an exactly-once task that bypasses the transaction: a tombstone or flush "
            "appended plainly (visible even if the transaction aborts), or a fenced zombie's write that lands "
            "although its producer was fenced",
            findings=lambda s: offsets_outside_transactions(partition, s, earlier),
        ),
    )


def acknowledged_ahead(s: ConnectState) -> list[str]:
    """Task instances whose committed positions run ahead of the records committed in the output topic.

    An instance's ``committed`` positions are what its worker told the connector is committed
    (``SourceTask.commitRecord`` for each record, then ``SourceTask.commit``) -- and where its next instance
    resumes.  The records below them must be committed (or discarded by the connector's own abort).
    """
    have = _committed_positions(s.kafka.partitions[OUTPUT]) | set(s.ghost.discarded)
    problems: list[str] = []
    for w, wk in enumerate(s.workers):
        for t in wk.tasks:
            for p, k in enumerate(t.committed):
                missing = next((i for i in range(k) if (p, i) not in have), -1)
                if missing >= 0:
                    problems.append(
                        f"worker {w}'s task {t.task} of generation {t.generation} ({t.phase}) has src{p} committed "
                        f"up to {k}, but src{p}[{missing}] is not committed"
                    )
    return problems


@lru_cache(maxsize=65536)
def _committed_positions(output: PartitionLeader) -> frozenset[tuple[int, int]]:
    """The (source partition, position) of every record the output topic's leader holds committed (cached by the
    leader's value: the judge runs in nearly every state, the output topic changes in few steps)."""
    return frozenset(decode_source_record(rid)[3:] for _, rid in committed_records(output))


def acknowledgement_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """A task's committed positions never run ahead of its committed records, in faulty runs too."""
    return (
        no_findings(
            name="task_acknowledges_only_committed_records",
            fact="A source task's committed positions -- the records its worker reports to the connector as "
            "committed (SourceTask.commitRecord, SourceTask.commit) and from which its next instance resumes -- "
            "never run ahead of the records committed in the output topic (or discarded by the connector's own "
            "abort): an exactly-once task reports them only after producer.commitTransaction() returned, and a "
            "commit that throws (a failed flush, a timed-out EndTxn, a fenced producer) fails the task with its "
            "offsets unreported; an at-least-once task flushes offsets only for records already written.",
            source="ExactlyOnceWorkerSourceTask.commitTransaction (Kafka 4.0, apache/kafka 1eb7644: commitTaskRecord "
            "and commitSourceTask run after producer.commitTransaction(); a flush or commit error cancels the flush "
            "and throws); KIP-618 §Atomic offset writes; SourceTask.commitRecord javadoc",
            catches="an error of commitTransaction (or of the offsets' send) ignored, so the task reports and resumes "
            "from offsets whose transaction never committed; a start-up that resumes from offsets ahead of the "
            "committed records",
            findings=acknowledged_ahead,
            partners=("source_offsets_committed",),
        ),
    )
