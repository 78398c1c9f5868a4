"""The Hypothesis engine goes on past a permitted violation (as the explicit search and the sweep do).

A scenario's ``permitted`` invariants are documented Kafka behaviour, not verdicts: a run that breaks one records
the first path (shrunk, reported *permitted*) and goes on, so every other invariant is still judged and a violation
behind the permitted one is still found.  Before, the first permitted violation ended the whole Hypothesis run.
"""

from __future__ import annotations

from test_sweep_permitted import Chain

from keos.checker.results import Verdict
from keos.checker.stateful.machine import run_hypothesis
from keos.checker.trace import replay_actions
from keos.scenarios import build_model, builtin_scenarios


class _NamedChain(Chain):
    name = "chain"


def test_the_violation_behind_a_permitted_one_is_found() -> None:
    chain = _NamedChain()  # init -> a -> b -> c: "order" (permitted) breaks from a on, "loss" at c
    result = run_hypothesis(chain, "chain", "kafka", seed=1, max_examples=20, permitted=("order",))  # type: ignore[arg-type]
    verdicts = {p.name: p for p in result.properties}
    assert verdicts["order"].verdict is Verdict.PERMITTED and verdicts["order"].trace is not None
    assert len(verdicts["order"].trace.actions) == 1
    assert verdicts["loss"].verdict is Verdict.VIOLATED and verdicts["loss"].trace is not None
    assert len(verdicts["loss"].trace.actions) == 3


def test_a_permitted_finding_on_a_real_scenario_replays() -> None:
    sc = builtin_scenarios()["reach_idempotence_acks0"]  # acks=0: an acknowledged record may be lost (permitted)
    model = build_model(sc)
    result = run_hypothesis(model, sc.name, sc.variant, seed=1, max_examples=150, permitted=sc.permitted)
    finding = next(p for p in result.properties if p.name == "no_acked_loss")
    assert finding.verdict is Verdict.PERMITTED and finding.trace is not None and not result.violated
    prop = next(p for p in model.properties() if p.name == "no_acked_loss")
    assert replay_actions(build_model(sc), finding.trace.actions, prop).confirmed
