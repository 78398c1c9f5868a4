"""Counterexample minimisation by delta debugging over the action list.

Random engines (Hypothesis before shrinking, Spark random walks, z3 models
turned into actions) find long traces.  :func:`minimize` shrinks one to a
1-minimal trace: removing any single action makes it either not replay (an
action is no longer enabled) or no longer violate the invariant.  It is
Zeller's ddmin with replay on the model as the test, followed by a
one-at-a-time pass and a final cut at the first violating step.
"""

from __future__ import annotations

from collections.abc import Sequence

from keos.model.interface import Action, Model, Property

__all__ = ["fails", "minimize", "truncate_at_first_violation"]


def fails(model: Model, actions: Sequence[Action], prop: Property) -> int:
    """Replay ``actions``; the number of steps to the first violation, or -1.

    -1 when an action is not enabled or the invariant never fails.
    """
    state = model.init_states()[0]
    if not prop.holds(state):
        return 0
    for i, action in enumerate(actions, start=1):
        step = model.step(state, action)
        if step is None:
            return -1
        state = step.state
        if not prop.holds(state):
            return i
    return -1


def truncate_at_first_violation(model: Model, actions: Sequence[Action], prop: Property) -> list[Action]:
    """The prefix of ``actions`` that ends at the first violation (unchanged if none)."""
    n = fails(model, actions, prop)
    return list(actions[:n]) if n >= 0 else list(actions)


def minimize(model: Model, actions: Sequence[Action], prop: Property, budget: int = 20_000) -> list[Action]:
    """Shrink a violating action list to a 1-minimal one (``budget`` replays at most)."""
    current = truncate_at_first_violation(model, actions, prop)
    if fails(model, current, prop) < 0:
        raise ValueError("the action list does not violate the property")
    replays = 0
    n = 2
    while len(current) >= 2 and replays < budget:
        chunk = max(1, len(current) // n)
        reduced = False
        for start in range(0, len(current), chunk):
            candidate = current[:start] + current[start + chunk :]
            replays += 1
            k = fails(model, candidate, prop)
            if k >= 0:
                current = candidate[:k]
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(current), n * 2)
    i = 0
    while i < len(current) and replays < budget:
        candidate = current[:i] + current[i + 1 :]
        replays += 1
        k = fails(model, candidate, prop)
        if k >= 0:
            current = candidate[:k]
        else:
            i += 1
    return current
