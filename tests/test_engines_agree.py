"""The engines agree: Hypothesis finds no shorter trace than breadth-first search."""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.minimize import minimize
from keos.checker.stateful.machine import run_hypothesis
from keos.checker.trace import replay_actions
from keos.scenarios import build_model, builtin_scenarios


@pytest.mark.parametrize("variant", ["no_idempotence", "small_duplicate_window"])
def test_hypothesis_trace_is_replayable_and_no_shorter_than_bfs(variant: str) -> None:
    sc = builtin_scenarios()["idempotence_retry"]
    model = build_model(sc, variant)
    hyp = run_hypothesis(model, sc.name, variant, seed=1, max_examples=300)
    bfs, _ = explore(model, sc.name, variant, ExploreOptions(stop_on_first=True))
    hyp_v = {p.name: p for p in hyp.violations()}
    bfs_v = {p.name: p for p in bfs.violations()}
    assert hyp_v, "hypothesis found no violation"
    for name, p in hyp_v.items():
        assert p.trace is not None
        prop = next(q for q in model.properties() if q.name == name)
        assert replay_actions(model, p.trace.actions, prop).confirmed
        if name in bfs_v:
            assert bfs_v[name].trace is not None
            assert len(bfs_v[name].trace.actions) <= len(p.trace.actions)


def test_hypothesis_real_protocol_holds() -> None:
    sc = builtin_scenarios()["idempotence_retry"]
    result = run_hypothesis(build_model(sc), sc.name, "kafka", seed=3, max_examples=100)
    assert not result.violated
    assert result.stats["steps"] > 0


def test_minimize_removes_irrelevant_steps() -> None:
    sc = builtin_scenarios()["idempotence_retry"]
    model = build_model(sc, "no_idempotence")
    bfs, _ = explore(model, sc.name, "no_idempotence", ExploreOptions(stop_on_first=True))
    trace = bfs.violations()[0].trace
    assert trace is not None
    prop = next(q for q in model.properties() if q.name == trace.invariant)
    # Pad the shortest trace with a detour that changes nothing relevant: the minimiser removes it.
    state = model.init_states()[0]
    padded = []
    for a in trace.actions:
        padded.append(a)
        state = model.step(state, a).state  # type: ignore[union-attr]
    shrunk = minimize(model, padded, prop)
    assert len(shrunk) <= len(trace.actions)
    assert replay_actions(model, shrunk, prop).confirmed
