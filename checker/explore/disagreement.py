"""Engine/model disagreements in the search: the model contradicts its own interface.

:meth:`keos.model.interface.Model.actions` lists an action as enabled that
:meth:`~keos.model.interface.Model.step` then refuses (returns ``None``), or a
step raises.  Either is a bug in the model (or in keos), never a protocol
verdict: the search stops, reports it in ``stats["engine_disagreement"]`` with
the actions that reached the state (``stats["disagreement_trace"]``, JSON as in
a trace file) -- ``keos check`` exits 3 -- and the properties it did not get to
judge are ``untested``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from keos.checker.results import PropertyResult, Verdict
from keos.model.interface import Action, Model

__all__ = ["Disagreement", "settle"]


@dataclass(frozen=True)
class Disagreement:
    """Where the model contradicted itself: the state's path, the action and what went wrong."""

    path: tuple[Action, ...]
    action: Action | None
    reason: str

    def message(self, model: Model) -> str:
        """One line for people: what happened after which steps."""
        steps = "; ".join(model.format_action(a) for a in self.path) or "(the initial state)"
        what = "actions()" if self.action is None else model.format_action(self.action)
        return f"{what} {self.reason} after {len(self.path)} step(s): {steps}"

    def record(self, model: Model, stats: dict[str, Any], results: list[PropertyResult]) -> None:
        """Write the disagreement into a result's stats and mark unjudged properties untested."""
        msg = self.message(model)
        stats.setdefault("engine_disagreement", []).append(msg)
        stats["disagreement_trace"] = {
            "actions": [model.action_to_json(a) for a in self.path]
            + ([] if self.action is None else [model.action_to_json(self.action)]),
            "reason": self.reason,
        }
        for r in results:
            if r.verdict in (Verdict.HOLDS, Verdict.UNTESTED, Verdict.UNREACHED):
                r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement, search stopped: {msg}"


def settle(
    results: list[PropertyResult],
    stats: dict[str, Any],
    unreplayed: dict[str, str],
    limit: tuple[str, str] | None,
) -> None:
    """The last word of either explicit search on its properties and statistics.

    ``unreplayed`` maps a property to why the counterexample found for it did not replay (an
    engine disagreement: the property becomes ``untested`` and the reason is recorded);
    ``limit`` is the budget that stopped the search, if one did (a partial result).
    """
    for r in results:
        if r.name in unreplayed:
            r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement: {unreplayed[r.name]}"
            stats.setdefault("engine_disagreement", []).append(unreplayed[r.name])
    if limit is not None:
        stats["limit_reached"], stats["limit_detail"] = limit
