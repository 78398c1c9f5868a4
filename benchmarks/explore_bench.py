"""Throughput of the explicit-state search: states per CPU-second, bytes per state, workers, Spark.

Every measurement runs in a fresh Python process (so peak RSS belongs to that one search)
and is timed in **CPU seconds** (``time.process_time`` of the search process, plus its
workers' for ``--workers N``): the machine is shared, and wall time measures the other
users' load more than the search.  ``bytes/state`` is the growth of peak RSS during the
search divided by the distinct states.

Rows:

* per scenario, one worker: distinct states, CPU s, states per CPU-second (best of
  ``--repeat``), bytes per state;
* ``--before DIR``: the same rows with the keos tree at ``DIR`` on ``PYTHONPATH`` (e.g.
  ``git archive 3f87918 | tar -x -C /tmp/keos-before``), and the ratio;
* ``--workers``: 1 vs 2 workers on the scaled scenario: total CPU, the busiest
  process's CPU, and the speedup that implies with one core per worker
  (one worker's CPU / the busiest process's CPU); wall times too, for what they are worth;
* ``--spark``: the Spark BFS on ``local[2]`` against the local search on one scenario,
  wall seconds, and the mean wall seconds per level (Spark's overhead per round).

Usage::

    PYTHONPATH=$PWD python benchmarks/explore_bench.py --workers --spark --before /tmp/keos-before
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCALED = str(ROOT / "scenarios" / "idempotence_retry_scaled.toml")  # a path: older trees do not ship it
SCENARIOS = ["idempotence_retry", "idempotence_epoch_bump", "txn_coordinator_faults", SCALED]

_PROBE = r"""
import json, resource, sys, time
from keos.scenarios import resolve_scenario, build_model
from keos.checker.explore.search import ExploreOptions, explore
name, workers = sys.argv[1], int(sys.argv[2])
sc = resolve_scenario(name)
model = build_model(sc)
kwargs = {"workers": workers} if workers > 1 else {}
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu0 = time.process_time()
wall0 = time.perf_counter()
result, _ = explore(model, sc.name, sc.variant, ExploreOptions(**kwargs), sc.permitted)
wall = time.perf_counter() - wall0
own_cpu = time.process_time() - cpu0
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
stats = result.stats
worker_cpu = stats.get("worker_cpu_s") or []
print(json.dumps({
    "states": stats["distinct_states"], "transitions": stats["transitions"],
    "cpu_s": own_cpu + sum(worker_cpu), "own_cpu_s": own_cpu, "worker_cpu_s": worker_cpu,
    "wall_s": wall, "rss_growth_bytes": (rss1 - rss0) * 1024,
}))
"""


def _probe(name: str, workers: int = 1, tree: Path = ROOT) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, name, str(workers)], env=env, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _best(name: str, repeat: int, tree: Path = ROOT, workers: int = 1) -> dict[str, Any]:
    runs = [_probe(name, workers, tree) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["cpu_s"])
    best["states_per_cpu_s"] = best["states"] / best["cpu_s"]
    best["bytes_per_state"] = best["rss_growth_bytes"] / best["states"]
    return best


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", action="append", help=f"default: {', '.join(SCENARIOS)}")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--before", type=Path, help="a keos tree to compare with (PYTHONPATH for its runs)")
    parser.add_argument("--workers", action="store_true", help="1 vs 2 workers on the scaled scenario")
    parser.add_argument("--spark", action="store_true", help="Spark BFS vs the local search")
    parser.add_argument("--spark-scenario", default="idempotence_retry")
    args = parser.parse_args()
    print(f"# explicit-state search, CPU time ({_load()} at start)")
    print(f"{'scenario':<28}{'states':>10}{'CPU s':>9}{'states/CPU-s':>14}{'bytes/state':>13}"
          + (f"{'before st/CPU-s':>17}{'before B/st':>13}{'speedup':>9}" if args.before else ""))
    for name in args.scenario or SCENARIOS:
        now = _best(name, args.repeat)
        label = Path(name).stem if name.endswith(".toml") else name
        line = (f"{label:<28}{now['states']:>10,}{now['cpu_s']:>9.2f}{now['states_per_cpu_s']:>14,.0f}"
                f"{now['bytes_per_state']:>13,.0f}")
        if args.before:
            try:
                old = _best(name, args.repeat, args.before)
            except subprocess.CalledProcessError:
                line += f"{'(n/a)':>17}"
            else:
                assert old["states"] == now["states"], (name, old["states"], now["states"])
                ratio = now["states_per_cpu_s"] / old["states_per_cpu_s"]
                line += f"{old['states_per_cpu_s']:>17,.0f}{old['bytes_per_state']:>13,.0f}{ratio:>8.2f}x"
        print(line, flush=True)
    if args.workers:
        name = SCALED
        one, two = _probe(name, 1), _probe(name, 2)
        assert one["states"] == two["states"]
        busiest = max([*two["worker_cpu_s"], two["own_cpu_s"]])
        print(f"\n# workers on {Path(name).stem} ({one['states']:,} states; {_load()})")
        print(f"{'workers':<10}{'CPU s (all)':>13}{'busiest CPU s':>15}{'speedup @1 core/worker':>24}{'wall s':>9}")
        print(f"{1:<10}{one['cpu_s']:>13.2f}{one['cpu_s']:>15.2f}{1.0:>23.2f}x{one['wall_s']:>9.1f}")
        print(f"{2:<10}{two['cpu_s']:>13.2f}{busiest:>15.2f}{one['cpu_s'] / busiest:>23.2f}x{two['wall_s']:>9.1f}")
    if args.spark:
        _spark(args.spark_scenario)


def _spark(name: str) -> None:
    import time

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
    print(f"\n# Spark BFS (local[2]) vs local on {name}: {local.stats['distinct_states']:,} states, "
          f"{len(levels)} levels ({_load()})")
    print(f"local: {local_wall:.1f} s wall; spark: {spark_wall:.1f} s wall (session start included), "
          f"{per_level:.2f} s per level on average, widest level {widest['new_states']:,} states in "
          f"{widest['seconds']:.2f} s")


if __name__ == "__main__":
    main()
