"""Which weakened variants ``keos sweep --mutants`` catches, per cell: catching runs, the first catching run and CPU.

Usage::

    .venv/bin/python benchmarks/sweep_mutants_bench.py [--runs 2000] [--seed 0] [--variant V ...]
        [--archive-group 500] [--out FILE.json]

Each cell (weakened variant x one of its scenarios, swarm profile) runs exactly the runs ``keos sweep --mutants``
runs (same spec, same seeds, same archive groups), in this process without Spark (``--local-python``'s path), one
cell at a time, so the CPU seconds (``time.process_time``: user + sys of this process) belong to one cell.  The
machine is shared: CPU seconds, never wall time; the load average is recorded.

Per variant: ``caught`` (some non-permitted violation in any of its cells), ``runs`` (catching runs over its cells),
``first`` (the smallest run index that catches in any cell: how many runs per cell the catch needs), ``cpu_s``.
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

from keos.checker.sweep.campaign import plan_sweep
from keos.checker.sweep.runs import describe_batch, execute_batch, run_ordinals


def main(argv: list[str] | None = None) -> int:
    """Run the cells, print one line per cell and a per-variant summary; write JSON with ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--archive-group", type=int, default=500)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cells", default=":", help="a slice of the cells, START:END (to split the work over processes)")
    args = ap.parse_args(argv)
    spec = plan_sweep(
        variants=args.variant,
        mutants=True,
        runs=args.runs,
        steps=args.steps,
        seed=args.seed,
        archive_group=args.archive_group,
    )
    spec_json = json.dumps(spec.to_json())
    cells: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    lo, _, hi = args.cells.partition(":")
    for c, cell in list(enumerate(spec.cells))[int(lo or 0) : int(hi) if hi else None]:
        t0 = time.process_time()
        batch = execute_batch(describe_batch(spec_json, run_ordinals(c * spec.runs, (c + 1) * spec.runs)))
        cpu = time.process_time() - t0
        rows = batch.to_pylist()
        hits = [r for r in rows if r["violation"] is not None and not r["permitted"]]
        first = min((int(r["run_id"].rsplit("/", 1)[1]) for r in hits), default=None)
        lengths = sorted(r["trace_length"] for r in hits if r["trace_length"] is not None)
        entry = {
            "variant": cell.variant,
            "scenario": cell.name,
            "runs": len(hits),
            "first": first,
            "cpu_s": round(cpu, 2),
            "steps": sum(r["steps"] for r in rows),
            "invariants": sorted({r["violation"] for r in hits}),
            "shortest": lengths[0] if lengths else None,
        }
        cells.append(entry)
        print(json.dumps(entry), flush=True)
    variants: dict[str, dict[str, Any]] = {}
    for e in cells:
        v = variants.setdefault(e["variant"], {"variant": e["variant"], "runs": 0, "first": None, "cpu_s": 0.0})
        v["runs"] += e["runs"]
        v["cpu_s"] = round(v["cpu_s"] + e["cpu_s"], 2)
        if e["first"] is not None and (v["first"] is None or e["first"] < v["first"]):
            v["first"] = e["first"]
    summary = {
        "runs_per_cell": spec.runs,
        "seed": spec.seed,
        "steps": spec.steps,
        "archive_group": spec.archive_group,
        "cells": cells,
        "variants": list(variants.values()),
        "caught": sum(1 for v in variants.values() if v["runs"]),
        "total": len(variants),
        "cpu_s": round(sum(e["cpu_s"] for e in cells), 1),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }
    missed = [v["variant"] for v in variants.values() if not v["runs"]]
    print(f"caught {summary['caught']} of {summary['total']} in {summary['cpu_s']} CPU-s; missed: {missed}")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
