"""Named abstractions: differences between the model and Kafka that the model makes on purpose.

Each entry names one way the model deliberately simplifies a Kafka handler, says why, cites the
Kafka code path (trunk ``1eb7644``, 2024-10-25, the shared 4.0.0-SNAPSHOT build) and matches the
differences it explains.  A difference an entry matches is reported under the entry's name and
does not fail the run; any other difference does (exit 1).  The README's "Modelling choices"
lists the same entries; ``tests/test_differential.py`` replays each entry's case on Kafka.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["ABSTRACTIONS", "Abstraction", "classify"]


class Abstraction(NamedTuple):
    """One deliberate simplification and the differences it accounts for."""

    name: str
    handler: str
    summary: str
    kafka_code: str
    matches: Callable[[Any, Any, Any], bool]  # (difference.what, model value, kafka value)


def _answer(model: tuple[str, ...], kafka: tuple[str, ...]) -> Callable[[Any, Any, Any], bool]:
    return lambda what, m, k: what == "answer" and m == model and k == kafka


def _kafka_error(errors: tuple[str, ...]) -> Callable[[Any, Any, Any], bool]:
    return lambda what, m, k: what == "answer" and len(k) == 1 and k[0] in errors


ABSTRACTIONS: tuple[Abstraction, ...] = (
    Abstraction(
        "offset_commit_unknown_group_v9",
        "offset_commit",
        "An OffsetCommit with a generation >= 0 for a group that does not exist: the model answers "
        "ILLEGAL_GENERATION, the pre-v9 answer; OffsetCommit v9+ (the Java 4.0 client's) gets "
        "GROUP_ID_NOT_FOUND.  Both are fatal for the committing member; the model keeps one API version.",
        "OffsetMetadataManager.validateOffsetCommit (group-coordinator, 4.0): apiVersion >= 9 rethrows "
        "GroupIdNotFoundException, older versions throw ILLEGAL_GENERATION",
        _answer(("ILLEGAL_GENERATION",), ("GROUP_ID_NOT_FOUND",)),
    ),
)


def classify(handler: str, what: str, model: Any, kafka: Any) -> str:
    """The name of the abstraction explaining a difference, or ``""``."""
    for a in ABSTRACTIONS:
        if a.handler == handler and a.matches(what, model, kafka):
            return a.name
    return ""
