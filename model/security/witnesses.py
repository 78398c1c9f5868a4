"""The judge of the adversary's witnesses (property ``attack_witnesses_match_effects``): a judge, not a rule.

The ``sometimes`` partners of the security invariants that say a hostile request was really exercised -- a forged
batch landed in the victim's open transaction, an administrator's forged marker was appended, a replayed EndTxn or
InitProducerId changed the victim's transaction -- are witnessed by events the adversary's handlers emit
(``adversary:took_effect:...``).  An event is only a claim: a handler that emits it whether or not its effect
happened (or drops it when the effect did) makes a partner fire on an attempt, so the invariant it partners looks
exercised while nothing was shown.  This module states, independently of :mod:`model.security.adversary`, what each
attempt's claim means in the state after the step, and reports every step where the claim and the state disagree,
both ways:

* ``adversary:produce:*`` (ForgeProduce, StrayProduce) claims ``adversary:took_effect:forge_produce:<shape>``
  exactly when a data batch holding an adversary record (producer index = number of clients) was appended to a
  partition's log in that step (a batch held back for KIP-890 verification is appended later, by the coordinator's
  answer: no claim, no effect);
* ``adversary:forge_marker:*`` claims ``adversary:took_effect:forge_marker:<commit|abort>`` exactly when a control
  batch of that type was appended to a partition's log;
* ``adversary:forge_end_txn:*``, ``adversary:hijack_init:*`` and ``adversary:stale_request:*`` claim
  ``adversary:took_effect:<the same request>`` exactly when a transactional id's coordinator entry changed;
* ``adversary:forge_txn_offsets:*`` claims ``adversary:took_effect:forge_txn_offsets:<api>`` exactly when the
  coordinator entry or the group's state changed.

The step records a disagreement as a ghost label (``witness:``), read by the property; nothing is recorded while
claims and state agree, so the state space does not grow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keos.model.clients.producer import RECORDS_PER_PRODUCER

__all__ = ["ATTEMPTS", "unmet_claims"]


def _adversary_batches(before: Any, after: Any) -> set[str]:  # no mutate: the judge (a property), not a rule
    """``{"*"}`` when a data batch holding an adversary record was appended to a partition's log, else empty."""
    clients = len(before.clients)
    for old, new in zip(before.partitions, after.partitions, strict=True):
        for e in new.log[len(old.log) :]:
            if not e.control and any(rid // RECORDS_PER_PRODUCER >= clients for rid in e.records):
                return {"*"}
    return set()


def _control_batches(before: Any, after: Any) -> set[str]:  # no mutate: the judge (a property), not a rule
    """The types (``commit``/``abort``) of the control batches appended to the partitions' logs."""
    return {
        str(e.control).lower()
        for old, new in zip(before.partitions, after.partitions, strict=True)
        for e in new.log[len(old.log) :]
        if e.control
    }


def _coordinator_changed(before: Any, after: Any) -> set[str]:  # no mutate: the judge (a property), not a rule
    return {"*"} if before.coordinator != after.coordinator else set()


def _offsets_changed(before: Any, after: Any) -> set[str]:  # no mutate: the judge (a property), not a rule
    return {"*"} if before.coordinator != after.coordinator or before.group != after.group else set()


#: (the attempt's label prefix, its claim's prefix, what the state shows: the claim suffixes it justifies -- ``*``:
#: any suffix).  Written from the effects each request has in Kafka, not from the handlers' code.
ATTEMPTS: tuple[tuple[str, str, Callable[[Any, Any], set[str]]], ...] = (  # no mutate: the judge's table
    ("adversary:produce:", "adversary:took_effect:forge_produce:", _adversary_batches),
    ("adversary:forge_marker:", "adversary:took_effect:forge_marker:", _control_batches),
    ("adversary:forge_end_txn:", "adversary:took_effect:forge_end_txn:", _coordinator_changed),
    ("adversary:hijack_init:", "adversary:took_effect:hijack_init:", _coordinator_changed),
    ("adversary:stale_request:", "adversary:took_effect:stale_request:", _coordinator_changed),
    ("adversary:forge_txn_offsets:", "adversary:took_effect:forge_txn_offsets:", _offsets_changed),
)


def unmet_claims(before: Any, after: Any, events: tuple[str, ...]) -> list[str]:  # no mutate: the judge
    """``witness:`` labels for the adversary's claims in ``events`` the step from ``before`` to ``after`` does not
    show, and for effects it shows that no claim reports."""
    out: list[str] = []
    for attempt, claim, shown_by in ATTEMPTS:
        label = next((e for e in events if e.startswith(attempt)), None)
        if label is None:
            continue
        claims = {e[len(claim) :] for e in events if e.startswith(claim)}
        shown = shown_by(before, after)
        # "*": the effect justifies any claim (one is due); else exactly the claims it names
        ok = bool(claims) if "*" in shown else {c.split(":", 1)[0] for c in claims} == shown
        if not ok:
            out.append(
                f"witness:{label} claims {sorted(claims) or 'no effect'} but the state shows "
                f"{sorted(shown) or 'none'}"
            )
    return out
