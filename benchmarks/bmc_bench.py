"""Benchmark of the z3 engine: depth reached within a time budget per scenario, and the induction results.

Usage: ``.venv/bin/python benchmarks/bmc_bench.py [--budget 60] [--depth 20] [--variant kafka]``.
Prints one JSON line per scenario (depth reached, seconds, verdicts) and the
broker-core k-induction result for every variant.
"""

from __future__ import annotations

import argparse
import json

from checker.bmc import bmc_coverage, prove_broker_core, run_bmc
from checker.engines import EngineOptions
from model.variants import VARIANTS
from scenarios import builtin_scenarios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--variant", default="kafka")
    args = ap.parse_args()
    for name, sc in sorted(builtin_scenarios().items()):
        ok, why = bmc_coverage(sc, args.variant)
        if not ok:
            print(json.dumps({"scenario": name, "covered": False, "reason": why}))
            continue
        r = run_bmc(sc, args.variant, EngineOptions(max_depth=args.depth, time_budget_s=args.budget))
        print(json.dumps({
            "scenario": name, "variant": args.variant, "depth_reached": r.stats["depth_reached"],
            "elapsed_s": r.stats["elapsed_s"], "timed_out": r.stats["timed_out"],
            "violated": sorted(p.name for p in r.violations()),
        }), flush=True)
    for vname, v in VARIANTS.items():
        print(json.dumps({"k_induction": vname, **prove_broker_core(v.flags)}))


if __name__ == "__main__":
    main()
