"""Throughput of the explicit-state searches: states per CPU-second, bytes per state, workers, Spark.

Figures, not a timed test.  Every measurement runs in a fresh Python process (so peak RSS
belongs to that one search) and is timed in **CPU seconds** (``time.process_time`` of the
search process, plus its workers' for ``--workers N``): the machine is shared, and wall time
measures the other users' load more than the search.  ``bytes/state`` is the growth of the
peak RSS during the search (the busiest process's for workers) divided by the distinct states.

Rows:

* per scenario: the sequential reference search (``checker/explore/search.py``) and the
  level-synchronous search on one worker (``checker/explore/parallel.py``), with its compact
  visited set too: distinct states, CPU s, states per CPU-second, bytes per state;
* ``--workers``: the level-synchronous search on 1 vs 2 workers on the scaled scenario
  (``scenarios/idempotence_retry_scaled.toml``): total CPU, the busiest process's CPU, the
  speedup that implies with one core per worker (one worker's CPU / the busiest process's
  CPU), and wall seconds; the projected wall time with a core per worker (``critical_cpu_s``: per
  phase the busiest worker's CPU, summed over the levels, plus the coordinator's) and the
  communication volume (states and bytes that crossed between workers, rank messages);
* ``--spark``: the Spark BFS on ``local[2]`` against the local search on one scenario: wall
  seconds, and the mean wall seconds per level (Spark's overhead per round).

Usage::

    PYTHONPATH=$PWD python benchmarks/explore_bench.py --workers --spark
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCALED = "idempotence_retry_scaled"
SCENARIOS = ["idempotence_retry", "idempotence_epoch_bump", "txn_coordinator_faults", SCALED]

_PROBE = r"""
import json, resource, sys, time
from keos.scenarios import resolve_scenario, build_model
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.explore.parallel import ParallelOptions, explore_levels
name, engine, workers, compact = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
sc = resolve_scenario(name)
model = build_model(sc)
bounds = dict(max_depth=sc.bounds.max_depth, max_states=sc.bounds.max_states)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu0 = time.process_time()
wall0 = time.perf_counter()
if engine == "sequential":
    result, _ = explore(model, sc.name, sc.variant, ExploreOptions(**bounds), sc.permitted)
else:
    result = explore_levels(model, sc.name, sc.variant, ParallelOptions(workers=workers, compact=compact, **bounds),
                            sc.permitted)
wall = time.perf_counter() - wall0
own_cpu = time.process_time() - cpu0
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
stats = result.stats
worker_cpu = stats.get("worker_cpu_s") or []
print(json.dumps({
    "states": stats["distinct_states"], "transitions": stats["transitions"],
    "cpu_s": own_cpu + sum(worker_cpu), "own_cpu_s": own_cpu, "worker_cpu_s": worker_cpu,
    "wall_s": wall, "rss_growth_bytes": max(rss1 - rss0, children if worker_cpu else 0) * 1024,
    **{k: stats[k] for k in ("crossed_states", "crossed_bytes", "crossed_batches", "rank_bytes", "critical_cpu_s")
       if k in stats},
}))
"""


def _probe(name: str, engine: str = "sequential", workers: int = 1, compact: bool = False) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, name, engine, str(workers), "1" if compact else "0"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    row["states_per_cpu_s"] = row["states"] / row["cpu_s"]
    row["bytes_per_state"] = row["rss_growth_bytes"] / row["states"]
    return row


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--scenario", action="append", help=f"default: {', '.join(SCENARIOS)}")
    parser.add_argument("--workers", action="store_true", help="1 vs 2 workers on the scaled scenario")
    parser.add_argument("--spark", action="store_true", help="Spark BFS vs the local search")
    parser.add_argument("--spark-scenario", default="idempotence_retry")
    args = parser.parse_args()
    print(f"# explicit-state search, CPU time ({_load()} at start)")
    print(f"{'scenario':<26}{'engine':<20}{'states':>10}{'CPU s':>9}{'states/CPU-s':>14}{'bytes/state':>13}")
    for name in args.scenario or SCENARIOS:
        counts = set()
        for label, engine, compact in (("sequential", "sequential", False), ("level, 1 worker", "level", False),
                                       ("level, compact set", "level", True)):
            r = _probe(name, engine, 1, compact)
            counts.add(r["states"])
            print(f"{name:<26}{label:<20}{r['states']:>10,}{r['cpu_s']:>9.2f}{r['states_per_cpu_s']:>14,.0f}"
                  f"{r['bytes_per_state']:>13,.0f}", flush=True)
        if len(counts) > 1:
            print(f"{'':<26}(state counts differ: the sequential search merges states equal under ==; see "
                  "tests/test_parallel_search.py)")
    if args.workers:
        one, two = _probe(SCALED, "level", 1), _probe(SCALED, "level", 2)
        assert one["states"] == two["states"], (one["states"], two["states"])
        busiest = max([*two["worker_cpu_s"], two["own_cpu_s"]])
        print(f"\n# level-synchronous search, workers on {SCALED} ({one['states']:,} states; {_load()})")
        print(f"{'workers':<10}{'CPU s (all)':>13}{'busiest CPU s':>15}{'speedup @1 core/worker':>24}{'wall s':>9}"
              f"{'wall speedup':>14}")
        print(f"{1:<10}{one['cpu_s']:>13.2f}{one['cpu_s']:>15.2f}{1.0:>23.2f}x{one['wall_s']:>9.1f}{1.0:>13.2f}x")
        print(f"{2:<10}{two['cpu_s']:>13.2f}{busiest:>15.2f}{one['cpu_s'] / busiest:>23.2f}x{two['wall_s']:>9.1f}"
              f"{one['wall_s'] / two['wall_s']:>13.2f}x", flush=True)
        critical = two["critical_cpu_s"] + two["own_cpu_s"]
        print(f"projected wall with a core per worker (busiest worker per phase, summed, + coordinator): "
              f"{critical:.2f} s, {one['cpu_s'] / critical:.2f}x one worker")
        print(f"crossed: {two['crossed_states']:,} states ({two['crossed_states'] / two['states']:.2f} per distinct "
              f"state), {two['crossed_bytes']:,} bytes ({two['crossed_bytes'] / two['crossed_states']:,.0f} per "
              f"crossing state) in {two['crossed_batches']} batches; rank messages {two['rank_bytes']:,} bytes")
    if args.spark:
        _spark(args.spark_scenario)


def _spark(name: str) -> None:
    from keos.checker.explore.search import ExploreOptions, explore
    from keos.checker.explore.spark_bfs import spark_explore
    from keos.scenarios import build_model, resolve_scenario

    sc = resolve_scenario(name)
    t = time.perf_counter()
    local, _ = explore(build_model(sc), sc.name, sc.variant, ExploreOptions(), sc.permitted)
    local_wall = time.perf_counter() - t
    t = time.perf_counter()
    spark = spark_explore(sc, sc.variant, master="local[2]")
    spark_wall = time.perf_counter() - t
    assert spark.stats["distinct_states"] == local.stats["distinct_states"]
    levels = spark.stats["levels"]
    per_level = sum(r["seconds"] for r in levels) / max(1, len(levels))
    widest = max(levels, key=lambda r: r["new_states"])
    print(f"\n# Spark BFS (local[2]) vs the sequential search on {name}: {local.stats['distinct_states']:,} states, "
          f"{len(levels)} levels ({_load()})")
    print(f"sequential: {local_wall:.1f} s wall; spark: {spark_wall:.1f} s wall (session start included), "
          f"{per_level:.2f} s per level on average, widest level {widest['new_states']:,} states in "
          f"{widest['seconds']:.2f} s")


if __name__ == "__main__":
    main()
