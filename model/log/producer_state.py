"""The partition leader's per-producer state: Kafka's ``ProducerStateManager``.

For every producer id that wrote to a partition the leader keeps a
``ProducerStateEntry``: the producer epoch and the metadata (first sequence,
last sequence, offset) of the last ``NUM_BATCHES_TO_RETAIN = 5`` batches
(``ProducerStateEntry.java``; KAFKA-5494 allowed five in-flight requests, so five cached
batches are enough to recognise a retry of any of them).

A client batch is validated in this order (``ProducerAppendInfo.java``, ``UnifiedLog.
analyzeAndValidateProducerState`` then ``ProducerAppendInfo.checkSequence``):

0. **Duplicate**: same epoch and exactly the same (first, last) sequence as one
   of the cached batches -> not appended; answered NONE with the *original*
   offset.  An older duplicate falls through and fails the sequence check.
1. **Epoch**: an epoch below the stored one -> ``INVALID_PRODUCER_EPOCH``.
2. **Sequence**: unknown producer (no entry) -> any
   sequence (KIP-360, KAFKA-8710), except on a partition that never held a
   record, where it must be 0 (KAFKA-15591, Kafka 4.5); a higher epoch -> must
   start at 0; the same epoch -> must be ``last_seq + 1``, or 0 after
   ``Int.MAX_VALUE`` (wrap-around).  Otherwise ``OUT_OF_ORDER_SEQUENCE_NUMBER``.

Appending a batch with a new epoch clears the cached batches.  Protocol
variants (:class:`model.variants.ProtocolFlags`) can switch off the epoch or
sequence check or shrink the cache, to show what each rule protects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from keos.model.codec import record
from keos.model.protocol.errors import Errors
from keos.model.variants import ProtocolFlags

__all__ = [
    "VALIDATION_STEPS",
    "BatchMetadata",
    "ProducerStateEntry",
    "ValidationStep",
    "append_batch",
    "in_sequence",
    "next_sequence",
    "validate_batch",
]


@record
class BatchMetadata(NamedTuple):
    """One cached batch: first and last sequence and the base offset."""

    first_seq: int
    last_seq: int
    offset: int


@record
class ProducerStateEntry(NamedTuple):
    """What the leader remembers about one producer id on one partition.

    The transaction fields (``ProducerStateEntry.java``, used only by the transactions model) default
    to "none": ``coordinator_epoch`` of the last marker and
    ``current_txn_first_offset``, the offset of the first batch of the
    transaction open on this partition (-1 when none is open).
    """

    producer_id: int
    producer_epoch: int
    batches: tuple[BatchMetadata, ...] = ()
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1

    @property
    def last_seq(self) -> int:
        """The last sequence written at the current epoch, -1 if none."""
        return self.batches[-1].last_seq if self.batches else -1


def next_sequence(seq: int, count: int, sequence_space: int) -> int:
    """The sequence ``count`` records after ``seq``, wrapping at ``sequence_space``."""
    return (seq + count) % sequence_space


def in_sequence(last_seq: int, next_seq: int, sequence_space: int) -> bool:
    """``ProducerAppendInfo.inSequence`` (Kafka trunk ``1eb7644349cb``, ``storage/.../internals/log/
    ProducerAppendInfo.java``): ``next_seq`` is the stored ``last_seq`` plus one, or 0 when ``last_seq`` is the top of
    the sequence space (``Integer.MAX_VALUE``; here ``sequence_space - 1``).

    The stored value is compared as it is, never reduced modulo the space: a cache entry whose last sequence was
    stored unwrapped (``lastSeq`` above the top: KAFKA-7692, a batch straddling the wrap stored with
    ``baseSequence + count - 1``) expects a sequence no batch carries, as it did in Kafka before the fix.  With no
    batch cached ``last_seq`` is ``NO_SEQUENCE`` (-1) and 0 is in sequence.
    """
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == sequence_space - 1)


class ValidationStep(NamedTuple):
    """One rule of the leader's batch validation, in the order Kafka applies them.

    Attributes:
        name: the rule (``duplicate``, ``first_sequence``, ``unknown_producer``, ``epoch``, ``sequence``).
        switch: the :class:`ProtocolFlags` attribute that enables the rule
            (``None``: always on).  A switched-off rule is skipped.
        outcome: what the rule decides when it fires: ``"duplicate"`` (answer
            NONE with the cached offset, do not append), ``"append"``, or the
            error name returned.
        fires: whether the rule fires for ``(entry, producer_epoch, first_seq, last_seq, flags,
            map_end_offset)``.  The rule's test lives in its row, so the table is the one list of
            rules (no second table keyed by name to fall out of step with it).
    """

    name: str
    switch: str | None
    outcome: str
    fires: Callable[[ProducerStateEntry | None, int, int, int, ProtocolFlags, int], bool]


def _duplicate_offset(entry: ProducerStateEntry | None, producer_epoch: int, first_seq: int, last_seq: int) -> int:
    """Step 0: the offset of a cached batch with the same epoch and sequences, else -1."""
    if entry is not None and entry.producer_epoch == producer_epoch:
        for meta in entry.batches:
            if meta.first_seq == first_seq and meta.last_seq == last_seq:
                return meta.offset
    return -1


def _first_sequence_on_empty_log(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> bool:
    """Step 1 (KAFKA-15591, PR #23234, Kafka 4.5): no entry on a partition that never held a record, first sequence > 0.

    ``ProducerStateManager.mapEndOffset() == 0``: nothing was ever appended, so no producer state can have been
    lost (expiry, truncation, retention) and a batch of an unknown producer that does not start at 0 overtook an
    earlier one -- typically a first request answered NOT_LEADER_OR_FOLLOWER before the broker applied the
    partition's leadership while the next one in flight arrived after.  Before the fix the unknown-producer rule
    appended it, and every retry of the earlier batch was answered OUT_OF_ORDER_SEQUENCE_NUMBER (not in the
    duplicate cache, not the expected sequence) until the producer gave it up.  A partition that once held records
    still accepts any first sequence (the next step); ``first_seq`` wraps, so a wrapped 0 is a first sequence too.
    """
    return entry is None and map_end_offset == 0 and first_seq != 0


def _unknown_producer(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> bool:
    """Step 2: no entry: any sequence is accepted (KIP-360, KAFKA-8710).

    Kafka validates an unknown producer id against ``ProducerStateEntry.empty``, whose epoch is
    ``NO_PRODUCER_EPOCH``: ``checkSequence`` then accepts any sequence.  The model stores no such
    entry (every stored entry carries the epoch of a batch or marker), so "no entry" is the whole rule.
    """
    return entry is None


def _epoch_fenced(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> bool:
    """Step 3: an epoch below the stored one (``entry`` is set: step 2 accepted an unknown producer)."""
    assert entry is not None
    return producer_epoch < entry.producer_epoch


def _sequence_out_of_order(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> bool:
    """Step 4: a new epoch must start at 0; the same epoch must continue at ``last_seq + 1``.

    ``entry`` is set (step 2 accepted an unknown producer).  An entry without cached batches at the
    batch's epoch (a marker wrote it) expects sequence 0: ``ProducerStateEntry.lastSeq`` is then
    ``NO_SEQUENCE`` (-1) and ``inSequence(-1, 0)`` holds.
    """
    assert entry is not None
    if producer_epoch != entry.producer_epoch:
        return first_seq != 0
    return not in_sequence(entry.last_seq, first_seq, flags.sequence_space)


def _duplicate(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> bool:
    """Step 0: a cached batch has the same epoch and (first, last) sequence (:func:`_duplicate_offset`)."""
    return _duplicate_offset(entry, producer_epoch, first_seq, last_seq) >= 0


#: The validation order (``ProducerAppendInfo.java``).  Data read by :func:`validate_batch`
#: and by the z3 encoder (``checker/bmc/encoding.py``: names, switches and outcomes) alike; a batch no rule
#: fires on is appended.
VALIDATION_STEPS: tuple[ValidationStep, ...] = (
    ValidationStep("duplicate", None, "duplicate", _duplicate),
    ValidationStep(
        "first_sequence",
        "first_sequence_zero_on_empty_log",
        Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
        _first_sequence_on_empty_log,
    ),
    ValidationStep("unknown_producer", None, "append", _unknown_producer),
    ValidationStep("epoch", "check_epoch", Errors.INVALID_PRODUCER_EPOCH, _epoch_fenced),
    ValidationStep("sequence", "check_sequence", Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, _sequence_out_of_order),
)


def validate_batch(
    entry: ProducerStateEntry | None,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    flags: ProtocolFlags,
    map_end_offset: int,
) -> tuple[str, int]:
    """Check a client batch against the entry, rule by rule in :data:`VALIDATION_STEPS` order.

    ``map_end_offset``: the partition's ``ProducerStateManager.mapEndOffset()``, the end of the log its
    producer state was built from (0 only for a partition that never held a record: the model has no
    retention or DeleteRecords, so it is the log's length).  Returns ``(error, duplicate_offset)``:
    ``("NONE", offset)`` for a duplicate (``offset >= 0``, do not append), ``("NONE", -1)`` to append, or an
    error name with ``-1``.
    """
    for step in VALIDATION_STEPS:
        if step.switch is not None and not getattr(flags, step.switch):  # no branch: weakened variants only
            continue
        if not step.fires(entry, producer_epoch, first_seq, last_seq, flags, map_end_offset):
            continue
        if step.outcome == "duplicate":
            return Errors.NONE, _duplicate_offset(entry, producer_epoch, first_seq, last_seq)
        return (Errors.NONE, -1) if step.outcome == "append" else (step.outcome, -1)
    return Errors.NONE, -1


def append_batch(
    entry: ProducerStateEntry | None,
    producer_id: int,
    producer_epoch: int,
    first_seq: int,
    last_seq: int,
    offset: int,
    flags: ProtocolFlags,
) -> ProducerStateEntry:
    """The entry after appending a batch (``ProducerAppendInfo.appendDataBatch``, ``ProducerStateEntry.addBatch``).

    A new epoch clears the cached batches; the cache keeps the newest ``flags.duplicate_window``
    (``NUM_BATCHES_TO_RETAIN``), so :func:`_duplicate_offset` scans all of it.
    """
    meta = BatchMetadata(first_seq, last_seq, offset)
    if entry is None or entry.producer_epoch != producer_epoch:
        return ProducerStateEntry(producer_id, producer_epoch, (meta,))
    return entry._replace(batches=(*entry.batches, meta)[-flags.duplicate_window :])
