"""What the liveness pass costs the explicit-state search (``checker/explore/liveness.py``).

The search records nothing for liveness unless the model has an eventually
property.  To measure the pass on real scenarios this benchmark wraps a
scenario's model and adds one eventually property of its own -- "the network
drains again and again once faults stop" (no request or response in flight),
a progress property every keos system should satisfy -- and runs the search
with and without it (best of ``--repeat``, CPU seconds, one core).  The
property is the benchmark's, not one of the models' invariants.

``--walks N`` also times N seeded random walks (the sweep's
:func:`keos.checker.sweep.simulate.random_walk`, uniform faults) with and
without the property: with it, every walk ends with the fair quiescence phase.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/liveness_bench.py --scenario txn_kafka_17754_delayed_endtxn
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from keos.checker.explore.search import ExploreOptions, explore
from keos.model.interface import Expectation, Model, Property
from keos.scenarios import build_model, resolve_scenario

NETWORK_DRAINS = Property(
    "bench_network_drains",
    Expectation.EVENTUALLY,
    "no request or response stays in flight for ever once faults stop",
    "benchmark only (benchmarks/liveness_bench.py)",
    "a request nobody answers, a retry loop",
    predicate=lambda s: not getattr(s, "network", ()),
    fairness=("faults stop", "every enabled protocol step is eventually taken"),
)


class WithProperty:
    """``model`` with one more property; everything else is delegated (fault hooks included)."""

    def __init__(self, model: Model, prop: Property) -> None:
        self._model = model
        self._prop = prop
        self.name = model.name

    def properties(self) -> Sequence[Property]:
        return [*self._model.properties(), self._prop]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def measure(model: Any, name: str, variant: str, permitted: tuple[str, ...], repeat: int) -> dict[str, Any]:
    """Best-of-``repeat`` CPU time of one full search, with the liveness statistics of the last run."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        cpu = time.process_time()
        result, _ = explore(model, name, variant, ExploreOptions(), permitted)
        cpu = time.process_time() - cpu
        row = {
            "states": result.stats["distinct_states"],
            "transitions": result.stats["transitions"],
            "cpu_s": round(cpu, 3),
            "states_per_cpu_s": round(result.stats["distinct_states"] / cpu),
            "liveness": {k: v for k, v in result.stats.items() if k.startswith(("liveness", "sccs", "fair_", "stuck"))},
            "verdicts": {p.name: p.verdict.value for p in result.properties if p.name.startswith("bench_")},
        }
        if best is None or row["cpu_s"] < best["cpu_s"]:
            best = row
    assert best is not None
    return best


def walks(model: Any, n: int, steps: int) -> dict[str, Any]:
    """CPU time of ``n`` random walks of ``steps`` steps (plus the quiescence phase, with an eventually property)."""
    from keos.checker.sweep.simulate import random_walk

    cpu = time.process_time()
    total = settle = 0
    outcomes: dict[str, int] = {}
    for seed in range(n):
        w = random_walk(model, seed, steps)
        total += w.steps
        settle += w.settle_steps
        key = w.liveness or ("suspected" if w.suspected else "violation" if w.violation else "ok")
        outcomes[key] = outcomes.get(key, 0) + 1
    cpu = time.process_time() - cpu
    return {"walks": n, "steps": total, "settle_steps": settle, "cpu_s": round(cpu, 3),
            "steps_per_cpu_s": round(total / cpu) if cpu else None, "outcomes": outcomes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", action="append", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--walks", type=int, default=0, help="also time this many random walks")
    ap.add_argument("--steps", type=int, default=60, help="steps per random walk")
    args = ap.parse_args()
    rows = []
    for ref in args.scenario:
        sc = resolve_scenario(ref)
        model = build_model(sc)
        plain = measure(model, sc.name, sc.variant, sc.permitted, args.repeat)
        live = measure(WithProperty(model, NETWORK_DRAINS), sc.name, sc.variant, sc.permitted, args.repeat)
        row: dict[str, Any] = {
            "scenario": sc.name,
            "without": plain,
            "with_liveness": live,
            "slowdown": round(live["cpu_s"] / plain["cpu_s"], 2) if plain["cpu_s"] else None,
        }
        if args.walks:
            row["walks_without"] = walks(model, args.walks, args.steps)
            row["walks_with_liveness"] = walks(WithProperty(model, NETWORK_DRAINS), args.walks, args.steps)
        rows.append(row)
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
