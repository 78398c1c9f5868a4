"""Exhaustive breadth-first search on Spark: frontier and visited fingerprints as DataFrames.

For state spaces beyond one machine, the level-synchronous search of
:mod:`keos.checker.explore.level` runs as Spark jobs, one round per level:

1. **expand** (``mapInArrow`` on the executors): each frontier state (its canonical
   encoding, :mod:`keos.checker.explore.encoding`) is decoded, its successors listed
   with :func:`~keos.checker.explore.level.successor_function`, fingerprinted and
   encoded; one row per transition: ``fp, parent, k, state, events``;
2. **deduplicate**: group by fingerprint keeping the smallest key (the parent's rank
   in sequential discovery order, then the successor index: the rule of
   :mod:`keos.checker.explore.level` that makes traces independent of the
   partitioning), then a left anti-join with the visited fingerprints drops the
   states seen in earlier levels; the expandable new states are ranked by key (a
   window over the level);
3. **check** (``mapInArrow``): invariants and sometimes-predicates on the new
   states; a state that violates an invariant no earlier level violated is not
   expanded;
4. the new level's ``fp, parent, k`` are appended to the visited set (parent links)
   and its states become the next frontier.  Each level is checkpointed locally so
   the query plans do not grow with the depth.

A counterexample is the violating state with the smallest key in the first level with one;
the driver walks its parent links back, rebuilds the actions from the successor
indices and replays them on the model (:func:`keos.checker.trace.make_trace`).
Counts, verdicts and traces equal the local engine's.  Masters: ``local[*]``
(default), ``spark://`` and ``sc://`` (Spark Connect), with the sessions of
:func:`keos.checker.sweep.campaign.spark_session`; executors import this keos.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from keos.checker.engines import EngineOptions, register
from keos.checker.explore.encoding import StateEncoder, collision_bound, decode, fingerprint_of
from keos.checker.explore.level import KEY_SPAN, actions_to, successor_function
from keos.checker.results import EngineResult, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Expectation, Model
from keos.scenarios import Scenario, build_model

__all__ = ["spark_explore"]

EXPANDED = pa.schema(
    [
        ("fp", pa.int64()),
        ("key", pa.int64()),
        ("parent", pa.int64()),
        ("k", pa.int32()),
        ("state", pa.binary()),
        ("events", pa.list_(pa.string())),
    ]
)
CHECKED = pa.schema(
    [
        ("fp", pa.int64()),
        ("key", pa.int64()),
        ("parent", pa.int64()),
        ("k", pa.int32()),
        ("state", pa.binary()),
        ("violated", pa.list_(pa.string())),
        ("reached", pa.list_(pa.string())),
    ]
)

_MODELS: dict[bytes, Model] = {}


def _model(spec: bytes) -> Model:
    """The model of a pickled ``(scenario, variant)``, built once per Python worker."""
    key = hashlib.blake2b(spec, digest_size=16).digest()
    model = _MODELS.get(key)
    if model is None:
        scenario, variant = pickle.loads(spec)
        model = _MODELS[key] = build_model(scenario, variant)
    return model


def _expand(spec: bytes, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side: every successor of every frontier state, one row each."""
    import gc

    gc.disable()
    model = _model(spec)
    succ = successor_function(model)
    encoder = StateEncoder()
    for batch in batches:
        cols: dict[str, list[Any]] = {"fp": [], "key": [], "parent": [], "k": [], "state": [], "events": []}
        rows = zip(batch.column("fp").to_pylist(), batch.column("rank").to_pylist(), batch.column("state").to_pylist())
        for pfp, rank, data in rows:
            state = decode(data)
            if not model.within_bounds(state):
                continue
            encoder.prime(state)
            for k, (_, nxt, events) in enumerate(succ(state)):
                enc = encoder.encode(nxt)
                cols["fp"].append(fingerprint_of(enc))
                cols["key"].append(rank * KEY_SPAN + k)
                cols["parent"].append(pfp)
                cols["k"].append(k)
                cols["state"].append(enc)
                cols["events"].append(list(events))
        yield pa.RecordBatch.from_pydict(cols, schema=EXPANDED)


def _check(spec: bytes, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side: the always properties each new state violates, the sometimes it reaches."""
    model = _model(spec)
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    for batch in batches:
        violated, reached = [], []
        for data in batch.column("state").to_pylist():
            state = decode(data)
            violated.append([p.name for p in always if not p.holds(state)])
            reached.append([p.name for p in sometimes if p.holds(state)])
        yield pa.RecordBatch.from_arrays(
            [*batch.columns, pa.array(violated, pa.list_(pa.string())), pa.array(reached, pa.list_(pa.string()))],
            schema=CHECKED,
        )


def spark_explore(
    scenario: Scenario,
    variant: str,
    *,
    master: str = "local[*]",
    max_depth: int = 0,
    max_states: int = 0,
    stop_on_first: bool = False,
    partitions: int = 0,
) -> EngineResult:
    """Breadth-first search of ``scenario`` under ``variant`` on Spark; the engine's result.

    ``stats["levels"]`` lists, per level, its new states and the wall seconds of its round.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    from keos.checker.sweep.campaign import spark_session

    model = build_model(scenario, variant)
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    event_props = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    spec = pickle.dumps((scenario, variant))
    spark = spark_session(master)
    parts = partitions or 4
    start = time.perf_counter()
    encoder = StateEncoder()

    init_rows, seen = [], set()
    for i, state in enumerate(model.init_states()):
        fp, data = encoder.fingerprint(state)
        if fp not in seen:
            seen.add(fp)
            init_rows.append((fp, i, fp, -1 - i, data))
    level = spark.createDataFrame(init_rows, "fp long, key long, parent long, k int, state binary")
    level = level.mapInArrow(functools.partial(_check, spec), from_arrow_schema(CHECKED)).localCheckpoint()
    links = [level.select("fp", "parent", "k")]
    visited = level.select("fp")

    events: Counter[str] = Counter()
    reached: set[str] = set()
    violations: dict[str, tuple[int, int]] = {}
    distinct, transitions, depth, max_depth_seen, complete = 0, 0, 0, 0, True
    rounds: list[dict[str, Any]] = []
    stopped = ""
    round_start = time.perf_counter()
    violations_before: set[str] = set()  # violated at a level before the current one
    while True:
        new_states = level.count()
        if new_states == 0:
            break
        max_depth_seen = depth
        distinct += new_states
        for row in level.select(F.explode("reached").alias("p")).distinct().collect():
            reached.add(row["p"])
        bad = level.select(F.explode("violated").alias("p"), "key", "fp").groupBy("p").agg(
            F.min(F.struct("key", "fp")).alias("b")
        )
        for row in bad.collect():
            violations.setdefault(row["p"], (depth, int(row["b"]["fp"])))
        if depth:
            seconds = round(time.perf_counter() - round_start, 3)
            rounds.append({"depth": depth, "new_states": new_states, "seconds": seconds})
        if (stop_on_first and violations) or (always and len(violations) == len(always)):
            complete = False
            break
        if max_states and distinct >= max_states:
            complete, stopped = False, f"max_states {max_states}"
            break
        earlier = F.array(*[F.lit(n) for n in sorted(violations_before)]) if violations_before else None
        new_bad = F.col("violated") if earlier is None else F.array_except("violated", earlier)
        # Ranks in sequential discovery order (by key), as the local engine ranks them.
        ranked = F.row_number().over(Window.orderBy("key")) - 1
        frontier = level.filter(F.size(new_bad) == 0).select("fp", ranked.alias("rank"), "state")
        violations_before = set(violations)
        if max_depth and depth >= max_depth:
            complete = frontier.limit(1).count() == 0
            break
        round_start = time.perf_counter()
        expanded = (
            frontier.repartition(parts, "fp")
            .mapInArrow(functools.partial(_expand, spec), from_arrow_schema(EXPANDED))
            .localCheckpoint()
        )
        transitions += expanded.count()
        for row in expanded.select(F.explode("events").alias("e")).groupBy("e").count().collect():
            events[row["e"]] += int(row["count"])
        best = expanded.groupBy("fp").agg(F.min(F.struct("key", "parent", "k", "state")).alias("b"))
        fresh = best.join(visited, "fp", "left_anti").select("fp", "b.key", "b.parent", "b.k", "b.state")
        level = fresh.mapInArrow(functools.partial(_check, spec), from_arrow_schema(CHECKED)).localCheckpoint()
        depth += 1
        links.append(level.select("fp", "parent", "k"))
        visited = visited.union(level.select("fp")).localCheckpoint()
    for name in events:
        for p in event_props:
            if p.matches_event(name):
                reached.add(p.name)
    traces: dict[str, Trace] = {}
    for name, (vdepth, fp) in sorted(violations.items()):
        path: list[int] = []
        d = vdepth
        while True:
            row = links[d].filter(F.col("fp") == fp).first()
            assert row is not None, f"no parent link for {fp:#x} at depth {d}"
            if row["k"] < 0:
                path.append(-1 - int(row["k"]))
                break
            path.append(int(row["k"]))
            fp, d = int(row["parent"]), d - 1
        path.reverse()
        prop = next(p for p in always if p.name == name)
        permitted = name in scenario.permitted
        actions = actions_to(model, path)
        traces[name] = make_trace(model, prop, actions, "spark-bfs", scenario.name, variant, permitted=permitted)
    elapsed = time.perf_counter() - start
    stats: dict[str, Any] = {
        "distinct_states": distinct,
        "transitions": transitions,
        "max_depth": max_depth_seen,
        "elapsed_s": round(elapsed, 3),
        "states_per_s": round(distinct / elapsed) if elapsed > 0 else None,
        "master": master,
        "levels": rounds,
        "fingerprint_collision_bound": collision_bound(distinct),
    }
    if stopped:
        stats["partial"] = True
        stats["stopped_by"] = stopped
    return EngineResult(
        engine="spark-bfs",
        scenario=scenario.name,
        variant=variant,
        properties=judge(props, traces, reached, scenario.permitted),
        stats=stats,
        coverage=dict(events),
        complete=complete and not violations,
    )


@register("spark-bfs", "exhaustive breadth-first search on Spark (frontier and visited set as DataFrames)")
def run_spark_bfs(scenario: Scenario, variant: str, options: EngineOptions) -> EngineResult:
    """``keos check --engine spark-bfs``: the Spark search on ``local[*]`` within the scenario's bounds."""
    bounds = scenario.bounds
    return spark_explore(
        scenario,
        variant,
        max_depth=options.max_depth or bounds.max_depth,
        max_states=options.max_states or bounds.max_states,
        stop_on_first=options.stop_on_first,
    )
