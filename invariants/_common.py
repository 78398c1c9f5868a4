"""Helpers shared by the invariant modules."""

from __future__ import annotations

from keos.model.interface import Expectation, Property

__all__ = ["sometimes_event"]


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
