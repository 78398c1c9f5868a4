"""The partial-order reduction of the bmc engine swaps only actions that commute on the executable model."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest

from keos.checker.bmc.encoding import Encoding
from keos.checker.bmc.por import swappable
from keos.model.interface import Action
from keos.model.protocol.messages import ProduceRequest
from keos.scenarios import build_model, builtin_scenarios

IDEMPOTENCE_VARIANTS = ("kafka", "no_idempotence", "broker_accepts_any_sequence", "broker_skips_epoch_check",
                        "small_duplicate_window")
SCENARIOS = ("idempotence_retry", "idempotence_epoch_bump", "idempotence_two_producers", "acks_one_failover")


def _template_key(model: Any, action: Action) -> tuple[str, tuple[int, ...]]:
    """The encoding's template (kind, args) of a model action."""
    if action.kind in ("Deliver", "DropMessage", "DuplicateMessage"):
        env = action.args[0]
        body = env.body
        if action.kind == "DuplicateMessage":
            return "DuplicateMessage", ()
        if action.kind == "DropMessage":
            return "DropMessage", (body.producer,)
        if isinstance(body, ProduceRequest):
            return "DeliverRequest", (body.partition,)
        return "DeliverResponse", (body.producer,)
    return action.kind, tuple(action.args)


def _canonical(state: Any) -> Any:
    """The state with the network's channels un-interleaved (stable sort keeps each channel's order)."""
    return state._replace(network=tuple(sorted(state.network, key=lambda e: (e.src, e.dst, e.connection))))


def _states(model: Any, limit: int, seed: int) -> list[Any]:
    init = model.init_states()[0]
    seen = {init}
    order = [init]
    queue = deque([init])
    while queue and len(order) < 4000:
        s = queue.popleft()
        for a in model.actions(s):
            n = model.step(s, a).state
            if n not in seen:
                seen.add(n)
                order.append(n)
                queue.append(n)
    return random.Random(seed).sample(order, min(limit, len(order)))


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("variant", IDEMPOTENCE_VARIANTS)
def test_forbidden_orders_can_be_swapped(scenario: str, variant: str) -> None:
    """(*) of checker/bmc_por.py: a then b executable => b then a executable, same state up to channel interleaving."""
    model = build_model(builtin_scenarios()[scenario], variant)
    index = {(t.kind, t.args): i for i, t in enumerate(Encoding(model, 1).templates)}
    templates = Encoding(model, 1).templates
    swapped = 0
    for s in _states(model, 100, seed=len(scenario) + IDEMPOTENCE_VARIANTS.index(variant)):
        for a in model.actions(s):
            ia = index[_template_key(model, a)]
            s1 = model.step(s, a)
            assert s1 is not None
            for b in model.actions(s1.state):
                ib = index[_template_key(model, b)]
                if ib >= ia or not swappable(templates[ia], templates[ib]):
                    continue
                first = model.step(s, b)
                assert first is not None, (model.format_action(a), model.format_action(b))
                second = model.step(first.state, a)
                assert second is not None, (model.format_action(a), model.format_action(b))
                end = model.step(s1.state, b)
                assert end is not None
                assert _canonical(second.state) == _canonical(end.state), (model.format_action(a),
                                                                           model.format_action(b))
                swapped += 1
    assert swapped > 0


def test_reduction_forbids_something_and_not_everything() -> None:
    model = build_model(builtin_scenarios()["idempotence_two_producers"], "kafka")
    templates = Encoding(model, 1).templates
    pairs = [(a, b) for ia, a in enumerate(templates) for b in templates[:ia] if swappable(a, b)]
    assert pairs
    assert len(pairs) < len(templates) * (len(templates) - 1) // 2
