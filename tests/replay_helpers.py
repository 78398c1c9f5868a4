"""Helpers for tests that replay explicit action lists and look at what follows once faults stop.

``play`` takes actions by their one-line rendering (``Model.format_action``), so a test reads as the
trace it reproduces.  ``protocol_terminals`` explores every continuation made of protocol steps only
(``fault_kind(action) is None``) and returns the states where no protocol step is enabled: the states
a fair run without further faults can end in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from keos.model.interface import Model


def play(model: Model, labels: Sequence[str], state: Any = None) -> Any:
    """Replay ``labels`` from ``state`` (default: the initial state); fail on the first disabled one."""
    s = model.init_states()[0] if state is None else state
    for n, label in enumerate(labels):
        enabled = {model.format_action(a): a for a in model.actions(s)}
        assert label in enabled, f"step {n}: {label} is not enabled; enabled: {sorted(enabled)}"
        step = model.step(s, enabled[label])
        assert step is not None
        s = step.state
    return s


def protocol_actions(model: Any, state: Any) -> list[Any]:
    """The enabled actions that are protocol steps, not faults."""
    return [a for a in model.actions(state) if model.fault_kind(a) is None]


def protocol_terminals(model: Any, state: Any, limit: int = 50_000) -> list[Any]:
    """Every state without an enabled protocol step reachable from ``state`` by protocol steps only."""
    return [s for s in protocol_reachable(model, state, limit) if not protocol_actions(model, s)]


def protocol_reachable(model: Any, state: Any, limit: int = 50_000) -> list[Any]:
    """Every state reachable from ``state`` (included) by protocol steps only."""
    seen = {model.fingerprint(state)}
    queue = deque([state])
    reached: list[Any] = []
    while queue:
        s = queue.popleft()
        reached.append(s)
        acts = protocol_actions(model, s)
        for a in acts:
            step = model.step(s, a)
            assert step is not None, model.format_action(a)
            fp = model.fingerprint(step.state)
            if fp not in seen:
                seen.add(fp)
                queue.append(step.state)
        assert len(seen) < limit, "protocol-only continuation too large"
    return reached
