"""``keos.model.memo``: pure functions of records cached by argument values, emptied by every ``build_model``."""

from __future__ import annotations

from keos.model import memo
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.variants import ProtocolFlags
from keos.scenarios import build_model, builtin_scenarios


def test_equal_arguments_share_one_computation_and_types_are_kept_apart() -> None:
    calls: list[tuple[object, ...]] = []

    def double(x: object, k: int) -> tuple[object, int]:
        calls.append((x, k))
        return x, 2 * k

    f = memo.memoised(double)
    assert f((1, 2), 3) == ((1, 2), 6) and f((1, 2), 3) == ((1, 2), 6)
    assert f(True, 1) == (True, 2) and f(1, 1) == (1, 2)  # True == 1, but a bool is not an int here
    assert calls == [((1, 2), 3), (True, 1), (1, 1)]
    memo.clear()
    f((1, 2), 3)
    assert len(calls) == 4


def test_identity_arguments_are_keyed_by_the_object() -> None:
    seen: list[int] = []

    def read(flags: ProtocolFlags, n: int) -> int:
        seen.append(n)
        return n + flags.duplicate_window

    f = memo.memoised(read, identity=(0,))
    a, b = ProtocolFlags(), ProtocolFlags(duplicate_window=1)
    assert f(a, 1) == 1 + a.duplicate_window and f(a, 1) == 1 + a.duplicate_window
    assert f(b, 1) == 2 and f(ProtocolFlags(), 1) == 1 + a.duplicate_window  # an equal but other object: computed
    assert seen == [1, 1, 1]


def test_build_model_starts_every_cache_empty() -> None:
    scenario = builtin_scenarios()["txn_kafka_6119_timeout_zombie"]
    model = build_model(scenario)
    state = model.init_states()[0]
    for action in model.actions(state):
        model.step(state, action)
    assert tp.next_txn_request.cache_info().currsize > 0  # type: ignore[attr-defined]
    build_model(scenario)
    assert tp.next_txn_request.cache_info().currsize == 0  # type: ignore[attr-defined]
    assert tc.handle_init_producer_id.cache_info().currsize == 0  # type: ignore[attr-defined]
    assert prod.drain.cache_info().currsize == 0  # type: ignore[attr-defined]
