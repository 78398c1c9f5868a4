"""The larger-bounds duplicate (issue 14): KAFKA-14034, pinned by replaying its saved trace.

``docs/findings/kafka_14034_duplicate.trace.json`` was found by ``keos check`` on
``idempotence_deep_kafka_14034`` (the ``deep`` set).  Under Kafka's client
(``TransactionManager.handleFailedBatch`` requests an epoch bump as soon as a
batch fails with OUT_OF_ORDER_SEQUENCE_NUMBER; ``bumpIdempotentProducerEpoch``
re-stamps the partition's outstanding batches from sequence 0) a retrying
batch whose earlier attempt is already in the log gets a new identity and is
written twice.  The fix proposed for KAFKA-14034 (variant ``kafka_14034_fix``)
waits for the earlier batches instead; the retry is then a broker-side
duplicate and the sequence resolves without a bump.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keos.checker.api import replay
from keos.checker.trace import load_trace, replay_actions
from keos.model.interface import Action
from keos.model.systems.idempotence import KafkaSystem, SystemState
from keos.scenarios import ScenarioError, build_model, parse_scenario, resolve_scenario, scenario_set

TRACE = Path(__file__).resolve().parent.parent / "docs" / "findings" / "kafka_14034_duplicate.trace.json"


def _model(variant: str) -> KafkaSystem:
    m = build_model(resolve_scenario("idempotence_deep_kafka_14034"), variant)
    assert isinstance(m, KafkaSystem)
    return m


def _actions(m: KafkaSystem) -> list[Action]:
    return [m.action_from_json(a) for a in load_trace(TRACE)["actions"]]


def _step(m: KafkaSystem, s: SystemState, kind: str, body: type | None = None) -> tuple[SystemState, tuple[str, ...]]:
    """Take the first enabled ``kind`` action (for Deliver: of a ``body`` on the producer's current connection)."""
    conn = s.producers[0].connection
    action = next(
        a
        for a in m.actions(s)
        if a.kind == kind and (body is None or (isinstance(a.args[0].body, body) and a.args[0].connection == conn))
    )
    step = m.step(s, action)
    assert step is not None
    return step.state, step.events


def test_saved_trace_replays_the_duplicate_on_kafka_and_is_permitted() -> None:
    report = replay(TRACE)
    assert report.confirmed
    assert report.scenario.name == "idempotence_deep_kafka_14034"
    assert "no_duplicate_append" in report.scenario.permitted
    assert "deep" in report.scenario.sets and not report.scenario.default
    m = _model("kafka")
    prop = next(p for p in m.properties() if p.name == "no_duplicate_append")
    result = replay_actions(m, _actions(m), prop)
    assert result.confirmed and result.violated_at == 15
    assert "epoch_bump" in result.events[13]  # the bump re-stamps r1 (epoch 1, sequence 0)
    final = result.states[-1].partitions[0].log
    assert [(e.records, e.producer_epoch, e.base_sequence) for e in final[1:]] == [((1,), 0, 1), ((1,), 1, 0)]


def test_kafka_14034_fix_keeps_the_default_bounds_free_of_the_duplicate() -> None:
    """On the default gate's bounds the proposed fix (``kafka_14034_fix``: an OUT_OF_ORDER_SEQUENCE_NUMBER after the
    last retry leaves the sequence unresolved, so the bump waits for the earlier batches) removes the duplicate that
    ``idempotence_epoch_bump`` must permit.  (The saved deep trace takes the other path to the same duplicate:
    ``canRetry`` requests the bump for the batch right after an unresolved sequence while it still has retries, which
    the modelled fix does not defer.)

    The search of ``idempotence_epoch_bump`` itself runs once, in ``tests/test_idempotence_model.py``
    (``test_real_protocol_holds_and_every_invariant_is_exercised``), which judges every property with partners
    PERMITTED if the scenario permits it, else HOLDS: here, that ``no_duplicate_append`` is such a property there."""
    from keos.checker.explore.search import ExploreOptions, explore
    from keos.checker.results import Verdict

    plain = resolve_scenario("idempotence_epoch_bump")
    props = {p.name: p for p in build_model(plain).properties()}
    assert plain.permitted == ("no_duplicate_append",) and props["no_duplicate_append"].partners
    sc = resolve_scenario("idempotence_epoch_bump_kafka_14034_fix")
    assert "no_duplicate_append" not in sc.permitted
    result, _ = explore(build_model(sc), sc.name, sc.variant, ExploreOptions(), sc.permitted)
    verdicts = {p.name: p.verdict for p in result.properties}
    assert verdicts["no_duplicate_append"] is Verdict.HOLDS
    m = _model("kafka_14034_fix")
    s = m.init_states()[0]
    for action in _actions(m)[:12]:  # up to r1's OUT_OF_ORDER_SEQUENCE_NUMBER, retries left
        step = m.step(s, action)
        assert step is not None, m.format_action(action)
        s = step.state
    assert s.producers[0].epoch_bump_required and s.producers[0].partitions[0].unresolved


def test_deep_set_names_both_scenarios_and_none_is_in_the_default_gate() -> None:
    deep = scenario_set("deep")
    assert {"idempotence_deep_kafka_14034", "idempotence_deep_kafka_14034_fix"} <= set(deep)
    assert not any(s.default for s in deep.values())


def test_bad_sets_are_one_line_scenario_errors() -> None:
    for bad in ("deep", ["Deep!"], [1]):
        with pytest.raises(ScenarioError, match="'sets' must be a list"):
            parse_scenario({"name": "t", "sets": bad})
    with pytest.raises(ScenarioError, match="unknown scenario set 'nosuch'"):
        scenario_set("nosuch")
    assert parse_scenario({"name": "t", "sets": ["deep", "nightly"]}).sets == ("deep", "nightly")


def test_keos_check_set_runs_the_set_and_reports_its_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from keos.checker.cli.main import main

    assert main(["check", "--set", "nosuch"]) == 2
    capsys.readouterr()
    code = main(["check", "--set", "deep", "--max-depth", "3", "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["set"] == "deep" and data["elapsed_s"] >= 0
    assert sorted(r["scenario"] for r in data["runs"]) == sorted(scenario_set("deep"))
