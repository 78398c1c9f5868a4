"""Kafka's answer tables as ordered rows: the first row that answers wins.

A Kafka request handler runs its checks in a fixed order and returns the first error one of them raises
(``ProducerAppendInfo.appendEndTxnMarker``: the producer epoch, then the coordinator epoch;
``OffsetMetadataManager`` and ``CoordinatorRuntime`` for TxnOffsetCommit).  The model's judges state such a
chain as a tuple of ``(name, row)`` pairs, each row a function of the request's :class:`Ask`-like record that
returns the row's error or ``None`` when the request passes it; :func:`first_answer` walks them in order and
:func:`mismatch_label` names a handler's answer that differs.  One loop for every table, so a table's order is
stated by its tuple alone (:mod:`model.log.marker_answer_table`, :mod:`model.systems.txn_offset_commit_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from keos.model.protocol.errors import Errors

__all__ = ["Row", "first_answer", "mismatch_label"]

#: A row: its name and the check (the row's error, or None when the request passes it).
Row = tuple[str, Callable[[Any], str | None]]


def first_answer(rows: Sequence[Row], ask: Any, passed: str) -> tuple[str, str, bool]:  # no mutate: judges' loop
    """(error, the row that answered, whether the request's effect happens): the first row's error that holds,
    else (NONE, ``passed``, True)."""
    for name, row in rows:
        error = row(ask)
        if error is not None:
            return error, name, False
    return Errors.NONE, passed, True


def mismatch_label(  # no mutate: the judges' label, not a rule
    request: str, rows: Sequence[Row], ask: Any, passed: str, error: str, done: bool
) -> str | None:
    """A ghost label ``answer_table:<request>:<row>:<got>:kafka:<want>`` if a handler answered ``ask`` with
    ``error`` (and made its effect, ``done``, or not) where the table's first answering row says otherwise."""
    want, row, want_done = first_answer(rows, ask, passed)
    if (error, done) == (want, want_done):  # no branch: the other side describes a defect
        return None
    got = passed if done else "-"
    return f"answer_table:{request}:{row}:{error}->{got}:kafka:{want}->{passed if want_done else '-'}"
