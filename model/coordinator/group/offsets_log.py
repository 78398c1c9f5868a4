"""``__consumer_offsets``: the group coordinator's log, its compaction, expiry and loading.

The group coordinator keeps no state of its own that survives it: every committed offset and every
completed rebalance is a record in the group's partition of the internal, compacted topic
``__consumer_offsets``, and a broker that becomes the partition's leader rebuilds the groups by
replaying the partition (Kafka 4.0 ``group-coordinator/.../GroupCoordinatorShard`` replaying
``OffsetCommitKey``/``OffsetCommitValue`` and ``GroupMetadataKey``/``GroupMetadataValue``
records; before 3.x ``GroupMetadataManager.loadGroupsAndOffsets``).

* **Which partition** — ``FindCoordinator(key=group.id)``: the coordinator is the leader of
  partition ``abs(groupId.hashCode()) % offsets.topic.num.partitions`` (default 50),
  :func:`partition_for`; the group's offsets and metadata all land there, keyed so that
  compaction keeps only the latest value per key.
* **Offset commit records** — key ``(group, topic, partition)``; value ``offset`` (plus metadata,
  commit and expire timestamps in Kafka; time is not modelled).
* **Group metadata records** — key ``group``; value the generation, the chosen protocol (assignor),
  the leader and each member with its subscription and assignment, written when the leader's
  SyncGroup completes a rebalance and when the group becomes Empty.
* **Tombstones** — a key with a ``None`` value: written when offsets expire
  (``offsets.retention.minutes`` after the group became Empty, KIP-211, by the
  ``delete-expired-group-metadata`` task) and when an empty group is deleted.  Loading a tombstone
  removes the key.
* **Compaction** — the log cleaner keeps the last record of each key and, after
  ``delete.retention.ms``, drops tombstones whose earlier values are gone.  Replaying a compacted
  log must give the same state as replaying the full log (:func:`load`); the invariant
  ``offsets_cache_matches_log`` checks it in every state.
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record

__all__ = [
    "GROUP_KEY",
    "OFFSETS_TOPIC_PARTITIONS",
    "GroupMetadataValue",
    "LoadedGroup",
    "OffsetsRecord",
    "compact",
    "java_string_hash",
    "load",
    "offset_commit_record",
    "partition_for",
]

OFFSETS_TOPIC_PARTITIONS = 50
"""``offsets.topic.num.partitions`` default."""

GROUP_KEY = -1
"""The ``partition`` field of a group metadata record's key (offset keys use the real partition)."""


def java_string_hash(text: str) -> int:  # no mutate: display (the models' one group: its partition only names it)
    """``java.lang.String.hashCode`` (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, partitions: int = OFFSETS_TOPIC_PARTITIONS) -> int:  # no mutate: display
    """``GroupCoordinatorService.partitionFor``: ``Utils.abs(groupId.hashCode()) % partitions``
    (``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


@record
class GroupMetadataValue(NamedTuple):
    """``GroupMetadataValue``: generation, protocol, leader, (member, assignment) pairs, and each member's
    ``subscription`` as (member, ownedPartitions, generation) -- ``MemberMetadata.subscription`` is the
    protocol metadata of the member's last JoinGroup, which ``GroupMetadataManager.replay`` (Kafka 4.0, trunk
    1eb7644) restores as the loaded member's supported protocol: a new coordinator judges the members'
    rejoins against the subscriptions they sent, not against none."""

    generation: int
    protocol: str
    leader: str
    members: tuple[tuple[str, tuple[int, ...]], ...]
    subscriptions: tuple[tuple[str, tuple[int, ...], int], ...] = ()
    #: ``MemberMetadata.groupInstanceId`` of the static members (KIP-345): (member, group.instance.id)
    instances: tuple[tuple[str, str], ...] = ()


@record
class OffsetsRecord(NamedTuple):
    """One record of the group's ``__consumer_offsets`` partition.

    The key is ``(group, topic, partition)`` (``OffsetCommitKey``) or, with ``partition ==
    GROUP_KEY``, ``group`` alone (``GroupMetadataKey``; ``value`` a :class:`GroupMetadataValue`).
    For offsets ``value`` is the committed offset.  ``value is None`` is a tombstone."""

    group: str
    topic: str
    partition: int
    value: int | GroupMetadataValue | None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.group, self.topic, self.partition)


def offset_commit_record(group: str, topic: str, partition: int, offset: int | None) -> OffsetsRecord:
    return OffsetsRecord(group, topic, partition, offset)


def group_metadata_record(group: str, value: GroupMetadataValue | None) -> OffsetsRecord:
    return OffsetsRecord(group, "", GROUP_KEY, value)


class LoadedGroup(NamedTuple):
    """What replaying the partition yields: the last group metadata and the committed offsets."""

    metadata: GroupMetadataValue | None
    offsets: tuple[tuple[int, int], ...]  # (partition, offset), sorted


def load(log: tuple[OffsetsRecord, ...], group: str) -> LoadedGroup:
    """Replay the log from the start for ``group``: the latest value per key wins, a tombstone
    removes it (records of other groups sharing the partition are skipped)."""
    metadata: GroupMetadataValue | None = None
    offsets: dict[int, int] = {}
    for rec in log:
        if rec.group != group:  # no branch: the models run one group per __consumer_offsets partition
            continue
        if rec.partition == GROUP_KEY:
            metadata = rec.value if isinstance(rec.value, GroupMetadataValue) else None
        elif rec.value is None:
            offsets.pop(rec.partition, None)
        else:
            assert isinstance(rec.value, int)
            offsets[rec.partition] = rec.value
    return LoadedGroup(metadata, tuple(sorted(offsets.items())))


def compact(log: tuple[OffsetsRecord, ...]) -> tuple[OffsetsRecord, ...]:
    """The log cleaner: keep each key's last record, in log order; drop tombstones (their
    ``delete.retention.ms`` is taken to have passed, so no earlier value of the key remains)."""
    last = {rec.key: i for i, rec in enumerate(log)}
    return tuple(rec for i, rec in enumerate(log) if last[rec.key] == i and rec.value is not None)


def compactable(log: tuple[OffsetsRecord, ...]) -> bool:
    """Whether compaction would change the log."""
    return compact(log) != log
