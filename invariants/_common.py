"""Helpers shared by the invariant modules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keos.model.interface import Expectation, Property

__all__ = ["sometimes_event", "sometimes_state"]


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
