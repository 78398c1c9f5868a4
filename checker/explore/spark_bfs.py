"""Exhaustive breadth-first search on Spark: frontier and visited fingerprints as DataFrames.

For state spaces beyond one machine, the level-synchronous search of
:mod:`keos.checker.explore.level` runs as Spark jobs, one round per level:

1. **expand** (``mapInArrow`` on the executors): each frontier state (its canonical
   encoding, :mod:`keos.checker.explore.encoding`) is decoded, its successors listed
   with :func:`~keos.checker.explore.level.successor_function`, fingerprinted and
   encoded; one row per transition: ``fp, key, parent, k, state, events``.  A state
   where an ``eventually`` property is false and only faults are enabled adds a
   *stuck* row (``k = -1``, the properties in ``note``); a model that contradicts
   itself adds a *disagreement* row (``k = -2``: the pickled action and the reason);
   each batch ends with its event counts (``k = -3``) and transition count (``k = -4``),
   so the driver sums them from the marker rows without a shuffle;
2. **deduplicate**: group by fingerprint keeping the smallest key (the parent's rank
   in sequential discovery order, then the successor index: the rule of
   :mod:`keos.checker.explore.level` that makes traces independent of the
   partitioning), then a left anti-join with the visited fingerprints drops the
   states seen in earlier levels;
3. **check** (``mapInArrow``): invariants and sometimes-predicates on the new
   states, summed up in one aggregation per level.  The smallest-key violator of an
   invariant no earlier level violated is its counterexample and, unless the scenario
   permits the invariant, is not expanded; the other new states are ranked by key (a
   window over the level) and become the next frontier;
4. the new level's ``fp, parent, k`` are kept as parent links and its fingerprints
   joined to the visited set.  Each level is checkpointed locally so the query
   plans do not grow with the depth.

A counterexample's (or stuck state's) parent links are walked back on the driver,
the actions rebuilt from the successor indices and replayed on the model
(:func:`keos.checker.trace.make_trace`).  Counts, verdicts and traces equal the
local engines' (``tests/test_parallel_search.py``).  Like them it does not search
for fair livelocks: an eventually property without a stuck state is ``untested``.
Budgets: ``max_states`` and the time budget are checked between levels.  Masters:
``local[*]`` (default), ``local[N]``, ``spark://`` and ``sc://`` (Spark Connect),
with the sessions of :func:`keos.checker.sweep.campaign.spark_session`; executors
import this keos.  ``stats["levels"]`` gives every round's new states and wall
seconds: Spark's overhead per level.
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
from keos.checker.explore.disagreement import Disagreement
from keos.checker.explore.encoding import StateEncoder, collision_bound, decode, fingerprint_of
from keos.checker.explore.level import KEY_SPAN, ModelDisagrees, actions_to, fault_classifier, successor_function
from keos.checker.explore.parallel import LIVELOCKS_NOT_CHECKED
from keos.checker.results import EngineResult, Verdict, judge
from keos.checker.sweep.campaign import _MASTER as MASTER_PATTERN
from keos.checker.sweep.campaign import py4j_interrupts
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Expectation, Model, ModelError
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
        ("note", pa.list_(pa.string())),
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
#: ``k`` of the marker rows of an expansion: a stuck state, a disagreement, an event count, a transition count
STUCK, DISAGREE, EVENTS, TRANSITIONS = -1, -2, -3, -4

_MODELS: dict[bytes, Model] = {}


def _model(spec: bytes) -> Model:
    """The model of a pickled ``(scenario, variant)``, built once per Python worker."""
    key = hashlib.blake2b(spec, digest_size=16).digest()
    model = _MODELS.get(key)
    if model is None:
        scenario, variant = pickle.loads(spec)
        model = _MODELS[key] = build_model(scenario, variant)
    return model


def _expand(spec: bytes, stuck_known: tuple[str, ...], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side: every successor of every frontier state, one row each, and the marker rows."""
    import gc

    gc.disable()
    model = _model(spec)
    succ = successor_function(model)
    is_fault = fault_classifier(model)
    live = [p for p in model.properties() if p.expectation is Expectation.EVENTUALLY and p.name not in stuck_known]
    encoder = StateEncoder()
    for batch in batches:
        cols: dict[str, list[Any]] = {n: [] for n in EXPANDED.names}
        row = functools.partial(_append, cols)
        counts: Counter[str] = Counter()
        transitions = 0
        rows = zip(batch.column("fp").to_pylist(), batch.column("rank").to_pylist(), batch.column("state").to_pylist())
        for pfp, rank, data in rows:
            state = decode(data)
            if not model.within_bounds(state):
                continue
            try:
                successors = succ(state)
            except ModelDisagrees as exc:
                row(pfp, rank, pfp, DISAGREE, pickle.dumps(exc.action), [], [exc.reason])
                continue
            false = [p.name for p in live if not p.holds(state)]
            if false and all(is_fault(state, a, evs) for a, _, evs in successors):
                row(pfp, rank, pfp, STUCK, b"", [], false)
            encoder.prime(state)
            for k, (_, nxt, events) in enumerate(successors):
                enc = encoder.encode(nxt)
                row(fingerprint_of(enc), rank * KEY_SPAN + k, pfp, k, enc, list(events), [])
                counts.update(events)
            transitions += len(successors)
        # The batch's counts as marker rows: the driver sums them without a shuffle.
        for name, n in sorted(counts.items()):
            row(0, n, 0, EVENTS, b"", [], [name])
        row(0, transitions, 0, TRANSITIONS, b"", [], [])
        yield pa.RecordBatch.from_pydict(cols, schema=EXPANDED)


def _append(cols: dict[str, list[Any]], *values: Any) -> None:
    """One row of :data:`EXPANDED` into its columns."""
    for name, value in zip(EXPANDED.names, values):
        cols[name].append(value)


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


def _level_summary(F: Any, level: Any, always: list[str], sometimes: list[str]) -> Any:
    """One row per level, from one aggregation without a shuffle: ``n`` (its states), ``v<i>`` (the
    ``(key, fp)`` of invariant ``always[i]``'s smallest-key violator, or null), ``r<j>`` (whether
    ``sometimes[j]`` was reached).  ``F``: the session's ``functions`` module."""
    aggs = [F.count(F.lit(1)).alias("n")]
    aggs += [
        F.min(F.when(F.array_contains("violated", name), F.struct("key", "fp"))).alias(f"v{i}")
        for i, name in enumerate(always)
    ]
    aggs += [F.max(F.array_contains("reached", name).cast("int")).alias(f"r{j}") for j, name in enumerate(sometimes)]
    return level.agg(*aggs).first()


def spark_explore(
    scenario: Scenario,
    variant: str,
    *,
    master: str = "local[*]",
    max_depth: int = 0,
    max_states: int = 0,
    stop_on_first: bool = False,
    time_budget_s: float = 0.0,
    partitions: int = 0,
) -> EngineResult:
    """Breadth-first search of ``scenario`` under ``variant`` on Spark; the engine's result.

    ``stats["levels"]`` lists, per level, its new states and the wall seconds of its round.
    Raises :class:`~keos.model.interface.ModelError` for a master that is not a Spark master URL.
    """
    if not MASTER_PATTERN.match(master):
        raise ModelError(f"bad Spark master {master!r} (local[*], local[N], spark://host:port, sc://host:port)")
    with py4j_interrupts():
        return _search(scenario, variant, master, max_depth, max_states, stop_on_first, time_budget_s, partitions)


def _search(
    scenario: Scenario,
    variant: str,
    master: str,
    max_depth: int,
    max_states: int,
    stop_on_first: bool,
    time_budget_s: float,
    partitions: int,
) -> EngineResult:
    """:func:`spark_explore`'s search, once the master is known good."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from keos.checker.sweep.campaign import spark_session

    if master.startswith("sc://"):  # a Spark Connect client: its own column functions, no JVM here
        from pyspark.sql.connect import functions as F
        from pyspark.sql.connect.window import Window
    else:
        from pyspark.sql import Window  # type: ignore[assignment]
        from pyspark.sql import functions as F  # type: ignore[no-redef]

    model = build_model(scenario, variant)
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]
    event_props = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    always_names = [p.name for p in always]
    sometimes_names = [p.name for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    permitted = scenario.permitted
    spec = pickle.dumps((scenario, variant))
    start = time.perf_counter()
    spark = spark_session(master)
    parts = partitions or 4
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
    stuck: dict[str, tuple[int, int]] = {}
    distinct, transitions, depth, max_depth_seen, complete = 0, 0, 0, 0, True
    rounds: list[dict[str, Any]] = []
    limit: tuple[str, str] | None = None
    disagreement: tuple[int, int, Any, str] | None = None
    round_start = time.perf_counter()
    while True:
        summary = _level_summary(F, level, always_names, sometimes_names)
        new_states = int(summary["n"])
        reached.update(name for j, name in enumerate(sometimes_names) if summary[f"r{j}"])
        cut: set[int] = set()
        for i, name in enumerate(always_names):
            best = summary[f"v{i}"]
            if best is not None and name not in violations:  # the invariant's smallest-key violator
                violations[name] = (depth, int(best["fp"]))
                if name not in permitted:
                    cut.add(int(best["fp"]))
        if new_states == 0:
            break
        max_depth_seen = depth
        distinct += new_states
        if depth:
            seconds = round(time.perf_counter() - round_start, 3)
            rounds.append({"depth": depth, "new_states": new_states, "seconds": seconds})
        if (stop_on_first and any(v not in permitted for v in violations)) or (
            always and len(violations) == len(always) and not eventually
        ):
            complete = False
            break
        if max_states and distinct >= max_states:
            complete, limit = False, ("states", f"state budget of {max_states:,} distinct states reached")
            break
        if time_budget_s and time.perf_counter() - start >= time_budget_s:
            complete, limit = False, ("time", f"time budget of {time_budget_s:g} s reached")
            break
        expandable = level.filter(~F.col("fp").isin(sorted(cut))) if cut else level
        if max_depth and depth >= max_depth:
            complete = complete and expandable.limit(1).count() == 0
            break
        # Ranks in sequential discovery order (by key), as the local engines rank them.
        ranked = F.row_number().over(Window.orderBy("key")) - 1
        frontier = expandable.select("fp", ranked.alias("rank"), "state")
        round_start = time.perf_counter()
        expanded = (
            frontier.repartition(parts, "fp")
            .mapInArrow(functools.partial(_expand, spec, tuple(sorted(stuck))), from_arrow_schema(EXPANDED))
            .localCheckpoint()
        )
        succ = expanded.filter(F.col("k") >= 0)
        markers = expanded.filter(F.col("k") < 0).select("k", "key", "fp", "state", "note").collect()
        for r in sorted(markers, key=lambda r: (r["k"], r["key"])):
            if r["k"] == TRANSITIONS:
                transitions += int(r["key"])
            elif r["k"] == EVENTS:
                events[r["note"][0]] += int(r["key"])
            elif r["k"] == STUCK:  # by rank: the smallest first
                for name in r["note"]:
                    stuck.setdefault(name, (depth, int(r["fp"])))
            elif disagreement is None:  # DISAGREE: the model contradicted itself
                disagreement = (depth, int(r["fp"]), pickle.loads(r["state"]), r["note"][0])
        if disagreement is not None:
            complete = False
            break
        best = succ.groupBy("fp").agg(F.min(F.struct("key", "parent", "k", "state")).alias("b"))
        fresh = best.join(visited, "fp", "left_anti").select("fp", "b.key", "b.parent", "b.k", "b.state")
        level = fresh.mapInArrow(functools.partial(_check, spec), from_arrow_schema(CHECKED)).localCheckpoint()
        depth += 1
        links.append(level.select("fp", "parent", "k"))
        visited = visited.union(level.select("fp"))  # its parts are checkpointed levels
    for name in events:
        for p in event_props:
            if p.matches_event(name):
                reached.add(p.name)

    def path_to(d: int, fp: int) -> list[int]:
        path: list[int] = []
        while True:
            r = links[d].filter(F.col("fp") == fp).first()
            assert r is not None, f"no parent link for {fp:#x} at depth {d}"
            if r["k"] < 0:
                path.append(-1 - int(r["k"]))
                break
            path.append(int(r["k"]))
            fp, d = int(r["parent"]), d - 1
        path.reverse()
        return path

    traces: dict[str, Trace] = {}
    for name, (vdepth, fp) in sorted(violations.items()):
        prop = next(p for p in always if p.name == name)
        actions = actions_to(model, path_to(vdepth, fp))
        traces[name] = make_trace(
            model, prop, actions, "spark-bfs", scenario.name, variant, permitted=name in permitted
        )
    live_disagree: dict[str, str] = {}
    for name, (sdepth, fp) in sorted(stuck.items()):
        prop = next(p for p in eventually if p.name == name)
        actions = actions_to(model, path_to(sdepth, fp))
        try:
            traces[name] = make_trace(
                model, prop, actions, "spark-bfs", scenario.name, variant, permitted=name in permitted
            )
        except Exception as exc:  # a stuck state that does not replay is an engine bug, not a verdict
            live_disagree[name] = f"stuck state for {name} found by spark-bfs does not replay: {exc}"
    elapsed = time.perf_counter() - start
    stats: dict[str, Any] = {
        "distinct_states": distinct,
        "transitions": transitions,
        "max_depth": max_depth_seen,
        "elapsed_s": round(elapsed, 3),
        "states_per_s": round(distinct / elapsed) if elapsed > 0 else None,
        "search": "level-synchronous on Spark",
        "master": master,
        "levels": rounds,
        "fingerprint_collision_bound": collision_bound(distinct),
    }
    if eventually:
        stats["liveness"] = "stuck states only; fair livelocks are checked by the sequential engine only"
        stats["stuck_found"] = sorted(stuck)
    properties = judge(props, traces, reached, permitted, liveness=False, liveness_detail=LIVELOCKS_NOT_CHECKED)
    if disagreement is not None:
        ddepth, fp, action, reason = disagreement
        Disagreement(tuple(actions_to(model, path_to(ddepth, fp))), action, reason).record(model, stats, properties)
    for r in properties:
        if r.name in live_disagree:
            r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement: {live_disagree[r.name]}"
            stats.setdefault("engine_disagreement", []).append(live_disagree[r.name])
    if limit is not None:
        stats["limit_reached"], stats["limit_detail"] = limit
    return EngineResult(
        engine="spark-bfs",
        scenario=scenario.name,
        variant=variant,
        properties=properties,
        stats=stats,
        coverage=dict(events),
        complete=complete and not any(v not in permitted for v in violations) and not live_disagree,
    )


@register("spark-bfs", "exhaustive breadth-first search on Spark (frontier and visited set as DataFrames)")
def run_spark_bfs(scenario: Scenario, variant: str, options: EngineOptions) -> EngineResult:
    """``keos check --engine spark-bfs``: the Spark search on ``options.master`` within the scenario's bounds."""
    bounds = scenario.bounds
    return spark_explore(
        scenario,
        variant,
        master=options.master,
        max_depth=options.max_depth or bounds.max_depth,
        max_states=options.max_states or bounds.max_states,
        stop_on_first=options.stop_on_first,
        time_budget_s=options.time_budget_s,
    )
