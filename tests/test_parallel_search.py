"""The level-synchronous search (1 or N workers, compact or spilled visited set, Spark) equals the sequential one.

The sequential search (``checker/explore/search.py``) is the reference: on every case the
level-synchronous engines must give the same distinct states, transitions, depth, coverage,
verdicts and counterexample traces (the smallest-key rules of ``checker/explore/level.py``),
every trace must replay from its JSON, and an eventually property the sequential search judged
by its livelock pass must be ``untested`` here with the reason, never ``holds``.

Both name states by value with the record's class included: the level-synchronous engines by
a canonical encoding (like ``Model.fingerprint``), the sequential search by Python equality,
under which records compare by class (``keos.model.codec.record``).  Until they did, the
sequential search merged states that differed only in an in-flight ``EndTxnResponse`` versus an
equal ``InitProducerIdResponse``; ``test_the_sequential_search_counts_what_fingerprints_count``
pins that.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_liveness import inconsistent_model, stuck_model

from keos.checker.explore.encoding import StateEncoder, decode
from keos.checker.explore.parallel import LIVELOCKS_NOT_CHECKED, ParallelOptions, explore_levels
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.explore.visited import FingerprintSet
from keos.checker.results import EngineResult, Verdict, partial_reason
from keos.checker.trace import replay
from keos.model.interface import Expectation, Model
from keos.scenarios import Scenario, build_model, resolve_scenario

# (scenario, variant): a clean run, a permitted violation, violations in each model, a stuck state, livelocks.
CASES = [
    ("idempotence_retry", "kafka"),
    ("idempotence_retry", "no_idempotence"),
    ("acks_one_failover", "kafka"),
    ("txn_kafka_12671_hanging", "complete_without_markers"),
    ("txn_kafka_12671_hanging", "pre_kip_890"),
    ("txn_kafka_17754_delayed_endtxn", "ongoing_txn_check_without_epoch"),
    ("connect_worker_crash", "source_offsets_outside_transaction"),
    ("groups_cooperative_join", "cooperative_assigns_before_revoke"),
]
#: Cases where the sequential search once merged states that differ only in a record's class (module doc).
ONCE_MERGED = [
    ("txn_kafka_12671_hanging", "pre_kip_890"),
    ("txn_kafka_17754_delayed_endtxn", "ongoing_txn_check_without_epoch"),
]


def _sequential(model: Model, sc: Scenario, variant: str, **bounds: Any) -> EngineResult:
    opts = ExploreOptions(max_depth=bounds.get("max_depth", sc.bounds.max_depth), max_states=sc.bounds.max_states)
    result, _ = explore(model, sc.name, variant, opts, sc.permitted)
    return result


def _levels(model: Model, sc: Scenario, variant: str, **options: Any) -> EngineResult:
    options.setdefault("max_depth", sc.bounds.max_depth)
    options.setdefault("max_states", sc.bounds.max_states)
    return explore_levels(model, sc.name, variant, ParallelOptions(**options), sc.permitted)


def fingerprint_bfs(model: Model, max_depth: int, permitted: tuple[str, ...] = ()) -> int:
    """The distinct states of a breadth-first search whose visited set is keyed by ``model.fingerprint``
    (the sequential search's rules otherwise: the first violator of an invariant not permitted is a dead end)."""
    always = [p for p in model.properties() if p.expectation is Expectation.ALWAYS]
    violated: set[str] = set()
    seen: set[str] = set()
    queue: deque[tuple[Any, int]] = deque()

    def visit(state: Any, depth: int) -> None:
        fp = model.fingerprint(state)
        if fp in seen:
            return
        seen.add(fp)
        bad = False
        for p in always:
            if p.name not in violated and not p.holds(state):
                violated.add(p.name)
                bad = bad or p.name not in permitted
        if not bad:
            queue.append((state, depth))

    for state in model.init_states():
        visit(state, 0)
    while queue:
        state, depth = queue.popleft()
        if (max_depth and depth >= max_depth) or not model.within_bounds(state):
            continue
        for action in model.actions(state):
            step = model.step(state, action)
            assert step is not None
            visit(step.state, depth + 1)
    return len(seen)


def _same(model: Model, seq: EngineResult, lvl: EngineResult) -> None:
    """``lvl`` found what ``seq`` found, and each of its traces replays."""
    for key in ("distinct_states", "transitions", "max_depth"):
        assert seq.stats[key] == lvl.stats[key], key
    assert seq.coverage == lvl.coverage
    assert seq.complete == lvl.complete
    props = {p.name: p for p in model.properties()}
    for p, q in zip(seq.properties, lvl.properties, strict=True):
        assert p.name == q.name
        if p.expectation is Expectation.EVENTUALLY and (p.trace is None or p.trace.loop_start is not None):
            # No stuck state: the sequential search judged it by its livelock pass, which this engine lacks.
            assert q.verdict is Verdict.UNTESTED and q.detail == LIVELOCKS_NOT_CHECKED, p.name
            continue
        assert p.verdict == q.verdict, p.name
        assert (p.trace.actions if p.trace else None) == (q.trace.actions if q.trace else None), p.name
        if q.trace is not None:
            data = json.loads(json.dumps(q.trace.to_json(model)))
            r = replay(model, data)
            assert r.confirmed, (q.name, r.reason)
            assert props[q.name].expectation is not Expectation.EVENTUALLY or q.trace.liveness == "stuck"


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_level_search_equals_the_sequential_search(name: str, variant: str, tmp_path: Path) -> None:
    sc = resolve_scenario(name)
    model = build_model(sc, variant)
    seq = _sequential(model, sc, variant)
    states = seq.stats["distinct_states"]
    for options in ({}, {"workers": 2}, {"compact": True}, {"spill_dir": tmp_path}):
        lvl = _levels(model, sc, variant, **options)
        _same(model, seq, lvl)
        assert lvl.stats["distinct_states"] == states
        assert lvl.stats["workers"] == options.get("workers", 1)
        assert lvl.stats["fingerprint_collision_bound"] < 1e-9
    assert not list(tmp_path.iterdir())  # the spilled runs go with the search


@pytest.mark.parametrize(("name", "variant"), ONCE_MERGED)
def test_the_sequential_search_counts_what_fingerprints_count(name: str, variant: str) -> None:
    """Regression: states differing only in a record's class are distinct to the sequential search too."""
    sc = resolve_scenario(name)
    model = build_model(sc, variant)
    seq = _sequential(model, sc, variant)
    assert seq.stats["distinct_states"] == fingerprint_bfs(model, sc.bounds.max_depth, sc.permitted)


def test_the_cases_cover_violations_stuck_states_and_livelocks() -> None:
    """The cases above are not vacuous: violations in every model, a stuck state, a livelock."""
    found: dict[str, set[str]] = {}
    for name, variant in CASES:
        sc = resolve_scenario(name)
        model = build_model(sc, variant)
        for p in _sequential(model, sc, variant).violations():
            assert p.trace is not None
            kind = p.trace.liveness or "invariant"
            found.setdefault(kind, set()).add(sc.model)
    assert {"idempotence", "transactions", "connect", "groups"} <= found["invariant"]
    assert found["stuck"] and found["livelock"]


def test_stuck_state_found_by_the_level_search() -> None:
    model = stuck_model()
    seq, _ = explore(model, model.name, "kafka", ExploreOptions())
    for workers in (1, 2):
        lvl = explore_levels(model, model.name, "kafka", ParallelOptions(workers=workers))
        p = next(p for p in lvl.properties if p.name == "eventually_done")
        assert p.verdict is Verdict.VIOLATED and p.trace is not None and p.trace.liveness == "stuck"
        assert [a.kind for a in p.trace.actions] == ["Send", "Drop"]
        assert lvl.stats["stuck_found"] == ["eventually_done"]
        _same(model, seq, lvl)


@pytest.mark.parametrize("mode", ["refuse", "raise"])
def test_a_model_that_contradicts_itself_is_a_disagreement_not_a_crash(mode: str) -> None:
    model = inconsistent_model(mode)
    seq, _ = explore(model, model.name, "kafka", ExploreOptions())
    for workers in (1, 2):
        lvl = explore_levels(model, model.name, "kafka", ParallelOptions(workers=workers))
        assert lvl.stats["engine_disagreement"] == seq.stats["engine_disagreement"]
        assert lvl.stats["disagreement_trace"] == seq.stats["disagreement_trace"]
        assert not lvl.complete
        assert all(p.verdict is not Verdict.HOLDS for p in lvl.properties)


def test_budgets_stop_with_a_partial_result() -> None:
    sc = resolve_scenario("idempotence_retry")
    model = build_model(sc, "kafka")
    states = _levels(model, sc, "kafka", max_states=500)
    assert states.stats["limit_reached"] == "states" and partial_reason(states)
    assert not states.complete and 500 <= states.stats["distinct_states"] < 2865
    timed = _levels(model, sc, "kafka", workers=2, time_budget_s=1e-6)
    assert timed.stats["limit_reached"] == "time" and not timed.complete
    assert timed.stats["distinct_states"] < 2865


def test_encoding_is_canonical_and_round_trips() -> None:
    sc = resolve_scenario("txn_kafka_12671_hanging")
    model = build_model(sc, "kafka")
    states = list(model.init_states())
    for state in states[:1]:
        for action in model.actions(state):
            step = model.step(state, action)
            assert step is not None
            states.append(step.state)
    warm = StateEncoder()
    for state in states:
        data = warm.encode(state)
        assert decode(data) == state and type(decode(data)) is type(state)
        assert StateEncoder().encode(state) == data  # no dependence on what was encoded before


def test_crossing_states_travel_as_interned_parts() -> None:
    """A batch between two workers rebuilds the sender's states (class and fields), sends each field encoding
    once per receiver (a second batch of the same states carries ids only), and gives the rebuilt states shared
    field objects; a state that is not a record travels whole."""
    from keos.checker.explore.workers import _pack, _unpack

    sc = resolve_scenario("txn_kafka_12671_hanging")
    model = build_model(sc, "kafka")
    states = list(model.init_states())
    for i in range(4):  # breadth-first, a few levels
        parent = states[i]
        for action in model.actions(parent):
            step = model.step(parent, action)
            assert step is not None
            states.append(step.state)
    assert len(states) > 4
    encoder = StateEncoder()
    items: dict[int, list[Any]] = {}
    for n, state in enumerate(states):
        data = encoder.encode(state)
        items[1000 + n] = [n, -n, n % 3, data, encoder.last_parts]
    sent: dict[bytes, int] = {}
    known: list[Any] = []
    first = _pack(items, sent)
    got = _unpack(first, known)
    assert [(fp, key, pfp, k) for fp, key, pfp, k, _ in got] == [(1000 + n, n, -n, n % 3) for n in range(len(states))]
    for state, (*_, rebuilt) in zip(states, got):
        assert type(rebuilt) is type(state) and rebuilt == state
        assert StateEncoder().encode(rebuilt) == StateEncoder().encode(state)  # the same fingerprint on arrival
    fields = len(type(states[0])._fields)
    assert any(a is b for a, b in zip(got[0][4], got[1][4]))  # a field the step did not change: one object
    assert len(known) < 1 + fields * len(states)  # unchanged fields were sent once
    again = _pack(items, sent)
    assert len(again) < len(first) and len(_unpack(again, known)) == len(states)
    assert len(known) == len(sent)
    whole = StateEncoder()
    plain = (1, "a", None, (True, 2**40))
    data = whole.encode(plain)
    assert whole.last_parts is None
    (row,) = _unpack(_pack({7: [0, 0, 0, data, None]}, {}), [])
    assert row[4] == plain


def test_the_workers_exchange_directory_goes_with_the_pool() -> None:
    from keos.checker.explore.workers import WorkerPool

    model = stuck_model()
    pool = WorkerPool(lambda: model, 2)
    exchange = pool.exchange
    try:
        assert exchange.is_dir()
        pool.seed()
    finally:
        pool.close()
    assert not exchange.exists()


def test_spilled_visited_set_lives_in_files(tmp_path: Path) -> None:
    visited = FingerprintSet(spill_dir=tmp_path)
    for level in range(10):
        fresh = visited.add_new(np.arange(level * 100, level * 100 + 150, dtype=np.int64))
        assert fresh.tolist() == list(range(level * 100 + (50 if level else 0), level * 100 + 150))
    assert len(visited) == 1050 and visited.memory_bytes() < 1050 * 8
    assert list(tmp_path.glob("keos-visited-*/run*.npy"))


def test_api_and_engine_options_select_the_level_search(tmp_path: Path) -> None:
    import keos.checker.api as api

    report = api.check(["acks_one_failover"], workers=2, spill_dir=tmp_path / "spill")
    (run,) = report.results
    assert run.stats["search"] == "level-synchronous" and run.stats["workers"] == 2
    assert run.stats["visited"] == "spilled"
    # the communication volume (issue 27): candidates that crossed to another worker, their packed bytes
    assert 0 < run.stats["crossed_states"] <= run.stats["transitions"]
    assert run.stats["crossed_bytes"] > 32 * run.stats["crossed_states"]  # four int64 columns and part ids each
    assert run.stats["crossed_batches"] > 0 and run.stats["rank_bytes"] > 0
    result, graph = api.explore("acks_one_failover", compact_visited=True)
    assert graph is None and result.stats["visited"] == "compact"
    plain = api.check(["acks_one_failover"]).results[0]
    assert "search" not in plain.stats  # the default: the sequential search
    assert [(p.name, p.verdict) for p in plain.properties if p.expectation is not Expectation.EVENTUALLY] == [
        (p.name, p.verdict) for p in run.properties if p.expectation is not Expectation.EVENTUALLY
    ]


# -- Spark -----------------------------------------------------------------------------------------

#: One record, one duplicate or drop: under no_idempotence the duplicate is appended after 5 steps.
TINY = """
name = "tiny"
description = "one record, one duplicate"
[topology]
records_per_producer = 1
[producer]
retries = 1
max_in_flight = 1
[faults]
duplicate = 1
drop = 1
total = 1
"""


def _spark_equals_local(master: str, tmp_path: Path) -> EngineResult:
    from keos.checker.explore.spark_bfs import spark_explore

    variant, depth = "no_idempotence", 5  # Spark costs seconds per level: the shortest violation's depth
    (tmp_path / "tiny.toml").write_text(TINY, encoding="utf-8")
    sc = resolve_scenario(str(tmp_path / "tiny.toml"))
    model = build_model(sc, variant)
    spark = spark_explore(sc, variant, master=master, max_depth=depth)
    _same(model, _sequential(model, sc, variant, max_depth=depth), spark)
    assert spark.violations() and spark.stats["master"] == master
    assert [r["depth"] for r in spark.stats["levels"]] == list(range(1, depth + 1))
    return spark


@pytest.mark.spark
def test_spark_bfs_equals_the_sequential_search(tmp_path: Path) -> None:
    spark = _spark_equals_local("local[2]", tmp_path)
    assert all(r["seconds"] > 0 for r in spark.stats["levels"])


# On a standalone cluster: tests/test_spark_cluster.py (one cluster for the sweep and the BFS).
