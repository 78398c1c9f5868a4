"""Throughput of ``keos sweep``: runs/s and steps/s on local[1] and local[2], scaling, Spark's overhead.

Usage::

    .venv/bin/python benchmarks/sweep_bench.py [--runs 1500] [--steps 50] [--json]

What it measures (the same spec, the same runs, everywhere):

* ``python``: the runs executed in this process, no Spark -- the baseline;
* ``local[1]`` and ``local[2]``: the runs through the Spark path (``spark.range``
  -> ``mapInArrow`` descriptors -> ``mapInArrow`` walks -> ``toArrow``), after a
  warm-up job so JVM start-up and Python worker start-up are not counted
  (they are reported separately as ``session_s`` and ``warmup_s``).

Derived figures: runs/s per core, scaling efficiency ``rate(local[2]) /
(2 * rate(local[1]))`` and Spark's overhead ``1 - rate(local[1]) /
rate(python)``.  Targets from issue #5: >= 1,000 runs/s per core for
50-step runs, efficiency >= 0.8.

The machine is shared, so wall-clock rates understate what a core does.
Every mode also reports CPU seconds -- ``time.process_time`` for ``python``;
for Spark, the CPU time of this process and all its descendants (the JVM,
the PySpark daemon and its Python workers, read from ``/proc``) over the job
-- and runs per CPU-second, plus the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from keos.checker.sweep.campaign import _local_chunk, _spark_chunk, plan_sweep, spark_session


def _tree_cpu() -> float:
    """CPU seconds (user + system, children reaped included) of this process and its descendants (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        ppid = int(fields[1])
        cpu = sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
        stats[int(entry.name)] = (ppid, cpu)
    tree, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _) in stats.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(stats[p][1] for p in tree if p in stats)


def _rates(label: str, elapsed: float, cpu: float, runs: int, steps: int, cores: int) -> dict[str, Any]:
    return {
        "mode": label,
        "cores": cores,
        "runs": runs,
        "steps": steps,
        "elapsed_s": round(elapsed, 3),
        "cpu_s": round(cpu, 3),
        "runs_per_s": round(runs / elapsed, 1),
        "steps_per_s": round(steps / elapsed, 1),
        "runs_per_s_per_core": round(runs / elapsed / cores, 1),
        "runs_per_cpu_s": round(runs / cpu, 1) if cpu > 0 else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1500, help="runs per cell (default 1500)")
    parser.add_argument(
        "--scenario", action="append", default=[], help="scenario (repeatable; default: the default scenarios)"
    )
    parser.add_argument("--steps", type=int, default=50, help="step budget per run (default 50)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)

    spec = plan_sweep(args.scenario, runs=args.runs, steps=args.steps, seed=args.seed, chunk_runs=10**9)
    load_before = os.getloadavg()
    spec_json = json.dumps(spec.to_json(), sort_keys=True)
    n = spec.total_runs
    results: list[dict[str, Any]] = []

    start, cpu0 = time.perf_counter(), time.process_time()
    table = _local_chunk(spec_json, 0, n)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    python = _rates("python", elapsed, cpu, n, sum(table.column("steps").to_pylist()), 1)
    results.append(python)
    expected = table.sort_by("run").column("signature").to_pylist()

    timings: dict[str, dict[str, float]] = {}
    for cores in (1, 2):
        master = f"local[{cores}]"
        t0 = time.perf_counter()
        spark = spark_session(master)
        session_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        _spark_chunk(spark, spec_json, 0, min(n, 200 * cores), 2 * cores)  # start the Python workers
        warmup_s = time.perf_counter() - t0
        t0, cpu0 = time.perf_counter(), _tree_cpu()
        table = _spark_chunk(spark, spec_json, 0, n, 0)  # the sweep's default task sizing
        elapsed, cpu = time.perf_counter() - t0, _tree_cpu() - cpu0
        if table.sort_by("run").column("signature").to_pylist() != expected:
            raise SystemExit(f"{master} found different violations than the plain-Python run")
        row = _rates(master, elapsed, cpu, n, sum(table.column("steps").to_pylist()), cores)
        timings[master] = {"session_s": round(session_s, 2), "warmup_s": round(warmup_s, 2)}
        row.update(timings[master])
        results.append(row)
        spark.stop()

    one, two = results[1], results[2]
    summary = {
        "spec": {"cells": [c.key for c in spec.cells], "runs": n, "max_steps": spec.steps, "seed": spec.seed},
        "mean_steps_per_run": round(python["steps"] / n, 2),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "results": results,
        "scaling_efficiency": round(two["runs_per_s"] / (2 * one["runs_per_s"]), 3),
        "spark_overhead": round(1 - one["runs_per_s"] / python["runs_per_s"], 3),
        "spark_cpu_overhead": round(1 - one["runs_per_cpu_s"] / python["runs_per_cpu_s"], 3),
        "targets": {"runs_per_s_per_core": 1000, "scaling_efficiency": 0.8},
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"spec: {n} runs over {len(spec.cells)} cells, <= {spec.steps} steps "
        f"(mean {summary['mean_steps_per_run']} steps/run); load average {summary['load_average_before']} "
        f"before, {summary['load_average_after']} after on {os.cpu_count()} cores"
    )
    print(
        f"{'mode':<10}{'runs/s':>10}{'steps/s':>11}{'runs/s/core':>13}{'runs/CPU-s':>12}{'elapsed':>9}{'CPU':>9}"
        "  load (1 min)  start-up"
    )
    for r in results:
        extra = f"session {r['session_s']}s, warm-up {r['warmup_s']}s" if "session_s" in r else ""
        print(
            f"{r['mode']:<10}{r['runs_per_s']:>10,.0f}{r['steps_per_s']:>11,.0f}{r['runs_per_s_per_core']:>13,.0f}"
            f"{r['runs_per_cpu_s'] or 0:>12,.0f}{r['elapsed_s']:>8.2f}s{r['cpu_s']:>8.2f}s"
            f"  {r['load_average'][0]:>12.2f}  {extra}"
        )
    print(f"scaling efficiency local[2] vs local[1]: {summary['scaling_efficiency']:.2f} (target >= 0.8)")
    print(
        f"Spark overhead at local[1] vs plain Python: {summary['spark_overhead']:.1%} wall, "
        f"{summary['spark_cpu_overhead']:.1%} CPU"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
