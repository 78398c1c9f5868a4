"""Progress of the idempotent producer once faults stop (KIP-98 §Idempotent producer, KIP-91).

``KafkaProducer.send`` returns a future that always completes: the record is acknowledged, or it fails
once its retries or ``delivery.timeout.ms`` (KIP-91) run out.  ``sends_complete`` states it as a
progress property: once faults stop, no producer keeps a batch that is neither acknowledged nor failed --
a batch stuck in flight (a lost response never retried) or a sequence never resolved after an epoch bump
would leave the application's ``send`` hanging.
"""

from __future__ import annotations

from keos.invariants._common import sometimes_state
from keos.model.clients.producer import record_label
from keos.model.interface import Expectation, Property
from keos.model.systems.idempotence import SystemState

__all__ = ["IDEMPOTENCE_FAIRNESS", "idempotence_progress_properties", "pending_sends"]

IDEMPOTENCE_FAIRNESS = (
    "faults stop",
    "every enabled protocol step is eventually taken (weak fairness)",
    "the Sender retries a batch until it is acknowledged or its retries / delivery.timeout.ms run out",
)


def pending_sends(s: SystemState) -> list[str]:
    """Records in a batch that is neither acknowledged nor failed."""
    return [
        f"producer {i}: {','.join(record_label(r) for r in b.records)} is "
        f"{'in flight' if b.in_flight else 'waiting'} (attempts {b.attempts})"
        for i, p in enumerate(s.producers)
        for b in p.batches
    ]


def idempotence_progress_properties() -> tuple[Property, ...]:
    """The progress property of the idempotence model and its reachability partner."""
    return (
        Property(
            name="sends_complete",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every record the application sent is acknowledged or fails: no batch stays "
            "in the producer forever.",
            source="KIP-98 §Idempotent producer; KIP-91 (delivery.timeout.ms bounds every send); Sender",
            catches="a lost response that is never retried, a sequence that is never resolved after an epoch bump",
            predicate=lambda s: not pending_sends(s),
            partners=("record_acknowledged",),
            explain=lambda s: "; ".join(pending_sends(s)),
            fairness=IDEMPOTENCE_FAIRNESS,
        ),
        sometimes_state(
            "record_acknowledged",
            "The application saw a record acknowledged.",
            lambda s: bool(s.ghost.acked),
        ),
    )
