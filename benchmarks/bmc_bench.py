"""Benchmark of the z3 engine: depth reached within a time budget, time to catch each weakened variant.

Usage: ``.venv/bin/python benchmarks/bmc_bench.py [--budget 60] [--mutant-budget 300] [--depth 30]
[--variant kafka] [--scenarios a,b] [--no-reduce] [--skip-mutants]``.

Prints one JSON line per scenario (depth reached within the budget, seconds,
verdicts, ``complete_at`` when no run is longer, and the model's longest run
from an explicit search, ``null`` when a cycle makes runs unbounded), one
per weakened variant the encoding covers (``stop_on_first``
run on its scenarios, as ``keos mutants --engine bmc`` does: depth and
seconds to the first replayed counterexample, within ``--mutant-budget``
seconds, the default of ``keos mutants``), the KIP-618 fencing-core proof for every
variant, the broker-core k-induction
result for every variant, the coordinator-table k-induction for every
transaction version, and the load average (the figures are wall-clock on a
shared machine).  Transactions scenarios (``model = "transactions"``) run on
the transactions encoding (:mod:`checker.bmc.txn`); ``--txn-only`` restricts
the run to them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from keos.checker.bmc.connect_proof import prove_connect_fencing
from keos.checker.bmc.engine import bmc, bmc_coverage, prove_broker_core, run_bmc
from keos.checker.bmc.txn import bmc_txn, prove_coordinator_table
from keos.checker.engines import EngineOptions
from keos.model.systems.idempotence import KafkaSystem
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios


def longest_run(model: Any) -> int | None:
    """Steps of the model's longest run (explicit search), or ``None`` if a cycle makes runs unbounded.

    The depth at which bmc's "no run has ``t`` steps" question can close a
    scenario is this plus one; printed next to the depth reached for scale.
    """
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))
    memo: dict[Any, int] = {}
    on_path: set[Any] = set()

    def longest(s: Any) -> int | None:
        if s in memo:
            return memo[s]
        if s in on_path:
            return None
        on_path.add(s)
        best = 0
        for a in model.actions(s):
            sub = longest(model.step(s, a).state)
            if sub is None:
                return None
            best = max(best, sub + 1)
        on_path.discard(s)
        memo[s] = best
        return best

    return longest(model.init_states()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--mutant-budget", type=float, default=300.0, help="seconds per weakened variant")
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--variant", default="kafka")
    ap.add_argument("--scenarios", default="")
    ap.add_argument("--no-reduce", action="store_true", help="without the partial-order reduction")
    ap.add_argument("--skip-mutants", action="store_true")
    ap.add_argument("--txn-only", action="store_true", help="only the transactions scenarios and variants")
    args = ap.parse_args()
    print(json.dumps({"loadavg_start": os.getloadavg()}), flush=True)
    chosen = set(args.scenarios.split(",")) if args.scenarios else None
    for name, sc in sorted(builtin_scenarios().items()):
        if chosen is not None and name not in chosen:
            continue
        if args.txn_only and sc.model != "transactions":
            continue
        ok, why = bmc_coverage(sc, args.variant)
        if not ok:
            print(json.dumps({"scenario": name, "covered": False, "reason": why}))
            continue
        if args.no_reduce and sc.model == "transactions":
            out_t = bmc_txn(build_model(sc, VARIANTS[args.variant]), name, args.variant, args.depth, args.budget,
                            sc.permitted, reduce=False)
            row = {"depth_reached": out_t.depth_reached, "elapsed_s": out_t.elapsed_s, "timed_out": out_t.timed_out,
                   "violated": sorted(out_t.traces)}
        elif args.no_reduce:
            model = build_model(sc, VARIANTS[args.variant])
            assert isinstance(model, KafkaSystem)
            out = bmc(model, name, args.variant, args.depth, args.budget, sc.permitted, reduce=False)
            row = {"depth_reached": out.depth_reached, "elapsed_s": out.elapsed_s, "timed_out": out.timed_out,
                   "violated": sorted(out.traces)}
        else:
            r = run_bmc(sc, args.variant, EngineOptions(max_depth=args.depth, time_budget_s=args.budget))
            row = {"depth_reached": r.stats["depth_reached"], "elapsed_s": r.stats["elapsed_s"],
                   "timed_out": r.stats["timed_out"], "violated": sorted(p.name for p in r.violations()),
                   "complete_at": r.stats.get("complete_at")}
        row["longest_run"] = longest_run(build_model(sc, VARIANTS[args.variant]))
        print(json.dumps({"scenario": name, "variant": args.variant, "reduce": not args.no_reduce, **row}),
              flush=True)
    if not args.skip_mutants:
        for vname, v in VARIANTS.items():
            if not v.weakened:
                continue
            for sname in v.scenarios:
                msc = builtin_scenarios().get(sname)
                if args.txn_only and (msc is None or msc.model != "transactions"):
                    continue
                if msc is None or not bmc_coverage(msc, vname)[0]:
                    print(json.dumps({"mutant": vname, "scenario": sname, "covered": False}), flush=True)
                    continue
                start = time.perf_counter()
                r = run_bmc(msc, vname, EngineOptions(stop_on_first=True, time_budget_s=args.mutant_budget))
                found = r.violations()
                print(json.dumps({
                    "mutant": vname, "scenario": sname, "caught": bool(found),
                    "invariants": sorted(p.name for p in found),
                    "trace_length": min((len(p.trace.actions) for p in found if p.trace), default=None),
                    "seconds": round(time.perf_counter() - start, 2),
                    "depth_searched": r.stats.get("depth_reached"), "timed_out": r.stats.get("timed_out"),
                }), flush=True)
    if not args.txn_only:
        for vname, v in VARIANTS.items():
            print(json.dumps({"k_induction": vname, **prove_broker_core(v.flags)}))
        for vname, v in VARIANTS.items():
            print(json.dumps({"k_induction": "connect_fencing", "variant": vname, **prove_connect_fencing(v.flags)}))
    for tv in (1, 2):
        for bumps in (True, False):
            print(json.dumps({"k_induction": "coordinator_table", **prove_coordinator_table(tv, bumps)}))
    print(json.dumps({"loadavg_end": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
