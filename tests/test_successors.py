"""The fused ``successors`` of the composed systems, and the search's engines, agree with the model.

``successors(state)`` must equal ``[(a, step(state, a)) for a in actions(state)]`` on
every reachable state: the engines use it instead of ``actions`` + ``step``.  The
partitioned search (``--workers``), the compact visited set and the Spark search must
give the counts, verdicts and traces of one in-process worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_spark_cluster import standalone_cluster  # noqa: F401  (the fixture: a master and a worker on 127.0.0.1)

from keos.checker.explore.encoding import StateEncoder, decode
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.explore.visited import FingerprintSet
from keos.model.interface import Action
from keos.scenarios import build_model, resolve_scenario

CASES = [
    ("idempotence_retry", "kafka"),
    ("idempotence_retry", "no_idempotence"),
    ("acks_one_failover", "kafka"),
    ("txn_kafka_12671_hanging", "kafka"),
    ("connect_worker_crash", "kafka"),
]


def _reachable(name: str, variant: str) -> tuple[Any, list[Any]]:
    sc = resolve_scenario(name)
    model = build_model(sc, variant)
    states: list[Any] = []

    def hook(fp: int, state: Any, edges: list[tuple[Action, Any, int]]) -> None:
        states.append(state)

    explore(model, sc.name, variant, ExploreOptions(max_states=20_000), hook=hook)
    return model, states


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_successors_equal_actions_then_step(name: str, variant: str) -> None:
    model, states = _reachable(name, variant)
    assert len(states) > 10
    for state in states:
        expected = []
        for action in model.actions(state):
            step = model.step(state, action)
            assert step is not None
            expected.append((action, step.state, step.events))
        assert list(model.successors(state)) == expected


@pytest.mark.parametrize(("name", "variant"), CASES[:3])
def test_encoding_is_canonical_and_round_trips(name: str, variant: str) -> None:
    _, states = _reachable(name, variant)
    warm, cold = StateEncoder(), None
    for state in states[:2000]:
        data = warm.encode(state)
        assert decode(data) == state and type(decode(data)) is type(state)
        cold = StateEncoder()
        assert cold.encode(state) == data  # no dependence on what was encoded before


def _run(name: str, variant: str, **options: Any) -> Any:
    sc = resolve_scenario(name)
    result, _ = explore(build_model(sc, variant), sc.name, variant, ExploreOptions(**options), sc.permitted)
    return result


def _same(a: Any, b: Any) -> None:
    for key in ("distinct_states", "transitions", "max_depth"):
        assert a.stats[key] == b.stats[key], key
    assert a.coverage == b.coverage
    assert a.complete == b.complete
    for p, q in zip(a.properties, b.properties, strict=True):
        assert (p.name, p.verdict) == (q.name, q.verdict)
        assert (p.trace.actions if p.trace else None) == (q.trace.actions if q.trace else None), p.name


@pytest.mark.parametrize(("name", "variant"), [("idempotence_retry", "no_idempotence"), ("acks_one_failover", "kafka")])
def test_two_workers_equal_one(name: str, variant: str) -> None:
    one = _run(name, variant, workers=1)
    two = _run(name, variant, workers=2)
    _same(one, two)
    assert two.stats["workers"] == 2 and len(two.stats["worker_cpu_s"]) == 2


def test_compact_visited_set_equals_the_fast_one(tmp_path: Path) -> None:
    fast = _run("idempotence_retry", "kafka")
    _same(fast, _run("idempotence_retry", "kafka", compact=True))
    _same(fast, _run("idempotence_retry", "kafka", compact=True, spill_dir=tmp_path))
    assert not list(tmp_path.iterdir())  # the spilled runs are removed with the search


def test_spilled_visited_set_lives_in_files(tmp_path: Path) -> None:
    visited = FingerprintSet(spill_dir=tmp_path)
    for level in range(10):
        fresh = visited.add_new(np.arange(level * 100, level * 100 + 150, dtype=np.int64))
        assert fresh.tolist() == list(range(level * 100 + (50 if level else 0), level * 100 + 150))
    assert len(visited) == 1050 and visited.memory_bytes() < 1050 * 8
    assert list(tmp_path.glob("keos-visited-*/run*.npy"))


def test_state_budget_stops_with_a_partial_result() -> None:
    result = _run("idempotence_retry", "kafka", max_states=500)
    assert result.stats["partial"] and result.stats["stopped_by"] == "max_states 500"
    assert not result.complete and 500 <= result.stats["distinct_states"] < 2865


def test_found_violations_match_the_counts_of_the_previous_engine() -> None:
    # The shipped scenario's state count before the level-synchronous engine: 2,865 states.
    result = _run("idempotence_retry", "kafka")
    assert result.stats["distinct_states"] == 2865 and result.complete
    assert result.stats["fingerprint_collision_bound"] < 1e-12


@pytest.mark.spark
def test_spark_bfs_equals_the_local_search() -> None:
    from keos.checker.explore.spark_bfs import spark_explore

    sc = resolve_scenario("acks_one_failover")
    spark = spark_explore(sc, "kafka", master="local[2]")
    _same(_run("acks_one_failover", "kafka"), spark)
    assert spark.violations() and spark.stats["levels"]
    assert all(r["seconds"] > 0 for r in spark.stats["levels"])


@pytest.mark.spark
def test_spark_bfs_on_a_standalone_cluster_equals_the_local_search(standalone_cluster: str) -> None:  # noqa: F811
    from keos.checker.explore.spark_bfs import spark_explore

    sc = resolve_scenario("acks_one_failover")
    spark = spark_explore(sc, "kafka", master=standalone_cluster)
    assert spark.stats["master"] == standalone_cluster
    _same(_run("acks_one_failover", "kafka"), spark)
