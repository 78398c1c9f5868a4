"""Protocol switches and the named variants built from them.

A *variant* is the real protocol with one rule changed or removed.  Each
weakened variant names the invariant expected to catch it and the scenario in
which it is caught, so ``keos mutants`` can prove the gate catches every one
(a mutation score for the verifier itself).  The switches are data, read by
the step functions, the z3 encoder and the reports alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["VARIANTS", "ProtocolFlags", "Variant", "get_variant"]

#: Kafka's sequence numbers are int32 and wrap after ``Int.MAX_VALUE``.
KAFKA_SEQUENCE_SPACE = 2**31


@dataclass(frozen=True)
class ProtocolFlags:
    """Switches the model's handlers read.

    Attributes:
        check_epoch: the partition leader rejects a batch whose epoch is below
            the stored one (§2.2 step 2).
        check_sequence: the leader enforces consecutive sequences (§2.2 step 3).
        duplicate_window: how many batches' metadata the leader caches per
            producer (``NUM_BATCHES_TO_RETAIN``, 5 in Kafka).
        sequence_space: sequences wrap to 0 after ``sequence_space - 1`` (set by
            the system from the scenario; Kafka's is 2**31).
        force_idempotence_off: the producer runs with ``enable.idempotence=false``
            whatever the scenario says (the at-least-once baseline).
    """

    check_epoch: bool = True
    check_sequence: bool = True
    duplicate_window: int = 5
    sequence_space: int = KAFKA_SEQUENCE_SPACE
    force_idempotence_off: bool = False

    def to_json(self) -> dict[str, Any]:
        """The switches as a JSON object."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Variant:
    """A named protocol variant.

    Attributes:
        name: the switch name users pass to ``--variant``.
        description: what changes, in protocol terms.
        flags: the switches.
        weakened: ``True`` if a rule of the real protocol is removed.
        breaks: invariants expected to catch it (weakened variants only).
        scenarios: scenarios in which it is expected to be caught.
        bug: the historical bug or rule it reproduces.
    """

    name: str
    description: str
    flags: ProtocolFlags = field(default_factory=ProtocolFlags)
    weakened: bool = False
    breaks: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    bug: str = ""


_REAL = ProtocolFlags()

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            name="kafka",
            description="The protocol as Kafka implements it (idempotence per KIP-98/KIP-360).",
            flags=_REAL,
        ),
        Variant(
            name="no_idempotence",
            description="Producers run with enable.idempotence=false: no producer id, no sequences.",
            flags=replace(_REAL, force_idempotence_off=True),
            weakened=True,
            breaks=("no_duplicate_append",),
            scenarios=("idempotence_retry",),
            bug="at-least-once delivery before KIP-98: a retried batch is appended twice",
        ),
        Variant(
            name="broker_accepts_any_sequence",
            description="The partition leader skips the sequence check (ProducerAppendInfo.checkSequence).",
            flags=replace(_REAL, check_sequence=False),
            weakened=True,
            breaks=("per_partition_order", "sequence_table_consistent"),
            scenarios=("idempotence_retry",),
            bug="gaps accepted: a batch whose predecessor was lost is appended, then the retry lands behind it",
        ),
        Variant(
            name="broker_skips_epoch_check",
            description="The partition leader accepts batches with an epoch below the stored one.",
            flags=replace(_REAL, check_epoch=False),
            weakened=True,
            breaks=("sequence_table_consistent",),
            scenarios=("idempotence_epoch_bump",),
            bug="a batch from before a KIP-360 epoch bump rolls the producer state back (INVALID_PRODUCER_EPOCH missing)",
        ),
        Variant(
            name="small_duplicate_window",
            description="The leader caches one batch per producer, fewer than the five the client may have in flight.",
            flags=replace(_REAL, duplicate_window=1),
            weakened=True,
            breaks=("no_duplicate_append",),
            scenarios=("idempotence_retry",),
            bug="KAFKA-5494: a cache smaller than max.in.flight turns a retry into OUT_OF_ORDER_SEQUENCE_NUMBER, "
            "the epoch bump re-sequences the next batch and it is written twice",
        ),
    )
}


def get_variant(name: str) -> Variant:
    """Look up a variant; raises ``KeyError`` with the known names."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})") from None
