"""Source offsets: the worker's global offsets topic and a connector's own (KIP-618 §Atomic offset writes, §Migration).

``KafkaOffsetBackingStore`` / ``ConnectorOffsetBackingStore``: a source task's
offsets are records ``{partition} -> {offset}`` in an offsets topic.  Under
exactly-once support the task writes them with its *transactional* producer
inside the transaction that carries the records they describe
(``ExactlyOnceWorkerSourceTask.commitTransaction``), and every worker reads offsets with
``isolation.level=read_committed``.

A connector may have its own offsets topic (``offsets.storage.topic``).  It
then sees a **combined view**: the offsets of its own topic, falling back to
the worker's global topic for source partitions its own topic does not know
(KIP-618 §Migration, the ``CatsStandingUp`` example).  That is the documented
contract; Kafka's code (apache/kafka 1eb7644) never falls back -- see
:func:`combined_offsets`, scenario key ``[connect] offsets_read``.  After an exactly-once
commit the worker also copies the committed offsets to the global topic with
a plain producer (KIP-618 §Atomic offset writes), so a later downgrade still finds them.

An offset record's value is the position of the next record to read; it is
encoded as an int record id ``(source partition, position)``.

**Tombstones.**  A connector may commit a ``null`` offset for a source
partition (a tombstone).  ``KafkaOffsetBackingStore`` removes the key when it
reads one, so the combined view cannot tell a tombstoned partition from one
the connector topic never knew: it falls back to the global topic.  A
tombstone written only to the connector's topic therefore resurrects the
partition's old offset from the global topic.  Since KAFKA-15018 (Kafka 3.8,
``ConnectorOffsetBackingStore.set``) a commit that carries tombstones writes
them to the global topic *first* and writes the connector topic only if that
succeeded; the other offsets still go to the global topic afterwards, and a
failure there is only logged.

**Records the reader cannot parse.**  An offsets topic is an ordinary topic: another tool, another Connect cluster
or a connector sharing ``offsets.storage.topic`` may write a record whose key is not Connect's JSON
``[connector, partition]``.  ``KafkaOffsetBackingStore``'s consume callback indexes every key by connector
(``OffsetUtils.processPartitionKey``, KIP-875); since KAFKA-15800 (Kafka 3.7, commit 989618a56e3) it ignores a key it
cannot parse.  Before, the DataException it threw reached ``KafkaBasedLog.poll``, which only logs a KafkaException:
the rest of that poll's records were never applied although the consumer had moved past them.  The model reads a
topic as one fetch (the worst case of that defect: everything after the foreign record is lost).
"""

from __future__ import annotations

from functools import lru_cache

from keos.model.clients.consumer import READ_COMMITTED, fetch
from keos.model.log.partition import PartitionLeader

__all__ = [
    "combined_offsets",
    "decode_offset_record",
    "foreign_record",
    "is_foreign",
    "is_tombstone",
    "latest_offsets",
    "offset_record",
    "offset_tombstone",
    "offsets_after_foreign",
    "read_offsets",
]

_BASE = 20_000_000


def offset_record(source_partition: int, position: int) -> int:
    """The offset record ``{partition: p} -> {position}``."""
    return _BASE + source_partition * 100 + position


_TOMBSTONE_BASE = 21_000_000


def offset_tombstone(source_partition: int) -> int:
    """The tombstone ``{partition: p} -> null``."""
    return _TOMBSTONE_BASE + source_partition


def is_tombstone(rid: int) -> bool:
    """Whether an offsets-topic record is a tombstone."""
    return _TOMBSTONE_BASE <= rid < _TOMBSTONE_BASE + 100


_FOREIGN_BASE = 22_000_000


def foreign_record(k: int = 0) -> int:
    """A record of an offsets topic that is not Connect's (a key that is not ``[connector, partition]`` JSON)."""
    return _FOREIGN_BASE + k


def is_foreign(rid: int) -> bool:
    """Whether an offsets-topic record is one the Connect reader cannot parse."""
    return _FOREIGN_BASE <= rid < _FOREIGN_BASE + 100


def decode_offset_record(rid: int) -> tuple[int, int]:
    """``(source partition, position)`` of an offset record; position -1 for a tombstone (no offset)."""
    if is_tombstone(rid):
        return rid - _TOMBSTONE_BASE, -1
    return divmod(rid - _BASE, 100)


def latest_offsets(records: tuple[int, ...], source_partitions: int, skips_foreign: bool = True) -> tuple[int, ...]:
    """The position of the last offset record per source partition (-1: none or a tombstone).  A record the reader
    cannot parse is skipped (KAFKA-15800's fix); ``skips_foreign`` false is the weakened variant
    offsets_reader_stops_at_foreign_key: the rest of the fetch is never applied."""
    out = [-1] * source_partitions
    for rid in records:
        if is_foreign(rid):
            if skips_foreign:
                continue
            break
        p, k = decode_offset_record(rid)
        out[p] = k
    return tuple(out)


@lru_cache(maxsize=65536)
def read_offsets(leader: PartitionLeader, source_partitions: int, skips_foreign: bool = True) -> tuple[int, ...]:
    """What ``OffsetStorageReader`` returns from one topic (read_committed): position per partition, -1 if none."""
    return latest_offsets(fetch(leader, READ_COMMITTED), source_partitions, skips_foreign)


def offsets_after_foreign(leader: PartitionLeader) -> bool:  # no mutate: ghost (a reach witness)
    """Whether a topic holds, readable (read_committed), an offset record after a record the reader cannot parse."""
    records = fetch(leader, READ_COMMITTED)
    first = next((k for k, rid in enumerate(records) if is_foreign(rid)), None)
    return first is not None and any(not is_foreign(rid) for rid in records[first + 1 :])


def combined_offsets(
    connector_topic: PartitionLeader | None,
    global_topic: PartitionLeader,
    source_partitions: int,
    own_first: bool = True,
    skips_foreign: bool = True,
    falls_back: bool = True,
) -> tuple[int, ...]:
    """What ``OffsetStorageReaderImpl.offsets`` returns to the tasks of a connector with its own offsets topic.

    ``falls_back`` true is the documented contract (KIP-618 §Migration; the Javadoc of
    ``ConnectorOffsetBackingStore.get``, apache/kafka 1eb7644 lines 198-200: "priority is given to the values
    contained in that store, and the values in the worker-global offset store ... are used as a fallback for keys
    that are not present in the connector-specific store"): the connector's own topic first, the global topic for
    partitions it lacks.

    ``falls_back`` false is what that code does (scenario key ``[connect] offsets_read = "kafka-4.0"``).
    ``ConnectorOffsetBackingStore.get`` (1eb7644, lines 236-237)::

        Map<ByteBuffer, ByteBuffer> result = new HashMap<>(workerGetFuture.get());
        result.putAll(connectorGetFuture.get());

    and ``KafkaOffsetBackingStore.get`` (lines 271-273) answers *every* requested key, ``null`` for one its topic
    lacks (or tombstoned: its consume callback, lines 313-314, removes the key)::

        for (ByteBuffer key : keys)
            values.put(key, data.get(key));

    ``HashMap.putAll`` copies the ``null`` values too, so the connector store's answer replaces the worker store's
    for every key: the global topic is never read for a connector with its own topic.  Nothing on the way filters
    the nulls: ``getFromStore`` (line 401) passes the store's future through, and ``OffsetStorageReaderImpl.offsets``
    (lines 120-133) deserializes a ``null`` value to a ``null`` offset, which the task takes as "no offset" and
    starts the partition from its beginning.  Both ``Worker.offsetStoreForExactlyOnceSourceTask`` (lines 2218-2232)
    and ``offsetStoreForRegularSourceTask`` (lines 2164-2178), and the connector's and the offsets REST API's
    ``offsetStoreForExactlyOnceSourceConnector`` (lines 2115-2129), build this combined store whenever the connector's
    ``offsets.storage.topic`` differs from the worker's.  Git history of both files to 1eb7644 has no fix (the read
    dates from KAFKA-10000, b7b7615db38; KAFKA-14342 and KAFKA-15018 changed tombstones and writes only), and no JIRA
    report was found; KAFKA-15018's own PR (#13801) motivates its write order with "the fallback-on-global logic used
    by the worker", so the maintainers count on the fallback.  User-visible: a connector moved onto its own offsets
    topic after running on the global one re-reads every source partition from the start (duplicates under
    exactly-once: scenario ``connect_offsets_migrated_kafka_read``); the other way round, the early copy into the
    global topic (``connect_offset_copy_before_commit``) and a tombstone written to the connector's topic only
    (KAFKA-15018) cannot reach a task while the connector keeps its own topic.

    ``own_first`` false (the weakened variant ``global_offsets_first``): the other way round -- with ``falls_back``
    false the worker store's answer would replace the connector store's for every key."""
    glob = read_offsets(global_topic, source_partitions, skips_foreign)
    if connector_topic is None:
        return glob
    own = read_offsets(connector_topic, source_partitions, skips_foreign)
    if not falls_back:
        return own if own_first else glob
    if not own_first:
        return tuple(g if g >= 0 else o for o, g in zip(own, glob))
    return tuple(o if o >= 0 else g for o, g in zip(own, glob))
