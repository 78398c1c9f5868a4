"""Helpers shared by the invariant modules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from keos.model.interface import Expectation, Property

__all__ = ["no_findings", "sometimes_event", "sometimes_state"]


def sometimes_event(name: str, fact: str, event: str) -> Property:
    """A sometimes-property witnessed by a transition event (reachability partner)."""
    return Property(
        name=name,
        expectation=Expectation.SOMETIMES,
        fact=fact,
        source="reachability",
        catches=f"reachability ({event})",
        event=event,
    )


def sometimes_state(name: str, fact: str, predicate: Callable[[Any], bool], source: str = "reachability") -> Property:
    """A sometimes-property witnessed by a state predicate (reachability partner)."""
    return Property(
        name=name,
        expectation=Expectation.SOMETIMES,
        fact=fact,
        source=source,
        catches=f"reachability ({name})",
        predicate=predicate,
    )


def no_findings(
    name: str,
    fact: str,
    source: str,
    catches: str,
    findings: Callable[[Any], Sequence[str]],
    partners: tuple[str, ...] = (),
    fairness: tuple[str, ...] = (),
    heading: str = "",
    separator: str = "; ",
) -> Property:
    """An always-property that holds while ``findings(state)`` -- the evidence of violations, one line each in
    Kafka's terms (which record, which partition, which answer) -- is empty; a violation's explanation is
    that evidence, after ``heading``, joined by ``separator``."""
    return Property(
        name=name,
        expectation=Expectation.ALWAYS,
        fact=fact,
        source=source,
        catches=catches,
        predicate=lambda s: not findings(s),
        partners=partners,
        explain=lambda s: heading + separator.join(findings(s)),
        fairness=fairness,
    )
