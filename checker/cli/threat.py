"""``keos list``'s threat-model table (KIP-98 §9): adversary actions, the rules that stop them, the weaknesses."""

from __future__ import annotations

from typing import Any

from keos.model.security.threat_model import THREATS

__all__ = ["threat_rows", "threat_table"]


def threat_rows() -> list[dict[str, str]]:
    """The threat model as JSON rows."""
    return [t._asdict() for t in THREATS]


def threat_table(rows: list[dict[str, str]]) -> Any:
    """A rich table of the rows."""
    from rich.table import Table

    t = Table(title="Threat model (KIP-98 §9): adversary actions (\\[faults] budgets of a \\[security] scenario)")
    for col in ("adversary action", "attack", "stopped by", "invariant", "variant dropping the rule"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(r["action"], r["attack"], r["stopped_by"], r["invariant"], r["variant"] or "-")
    return t
