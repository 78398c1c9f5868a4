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

``--stop-at-first`` walks each cell's runs in order (the same walks, archives and seeds, without minimising) and
stops at the first catching run: ``first`` is exact, ``runs`` counts the catches up to it, and a caught cell costs
only the runs before its catch (a missed one all of them).  ``--no-probe`` turns the archive's fault probing off
(:data:`checker.sweep.archive.ARCHIVE_PROBE`: the sweep before it), ``--no-placement`` its fault placement features
(:data:`checker.sweep.archive.ARCHIVE_PLACEMENT`), ``--no-cell-rarity`` its selection by a cell's own visits
(:data:`checker.sweep.archive.CELL_RARITY`), for before -> after figures on one tree.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import keos.checker.sweep.runs as sweep_runs
from keos.checker.sweep.archive import Archive
from keos.checker.sweep.campaign import plan_sweep
from keos.checker.sweep.runs import SweepSpec, describe_batch, execute_batch, run_ordinals
from keos.checker.sweep.simulate import random_walk


def first_catch(
    spec: SweepSpec, spec_json: str, c: int, probe: bool = True, placement: bool = True, cell_rarity: bool = True
) -> tuple[int | None, int, int]:
    """Cell ``c``'s runs in order, as ``keos sweep`` runs them, until the first that breaks an invariant its
    scenario does not permit: (its index or ``None``, catches, steps walked)."""
    cell = spec.cells[c]
    model, permitted = sweep_runs._model(cell.scenario, cell.toml, cell.variant)
    archive: Archive | None = None
    group: str | None = None
    steps = 0
    for d in describe_batch(spec_json, run_ordinals(c * spec.runs, (c + 1) * spec.runs)).to_pylist():
        if d["archive_group"] is None:
            archive = None
        elif d["archive_group"] != group or archive is None:
            archive, group = Archive(probe=probe, placement=placement, cell_rarity=cell_rarity), d["archive_group"]
        walk = random_walk(
            model, d["seed"], d["max_steps"], dict(d["fault_weights"]), archive=archive, permitted=permitted
        )
        steps += walk.steps
        if walk.violation is not None and walk.violation not in permitted:
            return d["run"] - c * spec.runs, 1, steps
    return None, 0, steps


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
    ap.add_argument("--stop-at-first", action="store_true", help="stop each cell at its first catching run")
    ap.add_argument("--no-probe", action="store_true", help="the archive without fault probing (before -> after)")
    ap.add_argument(
        "--no-placement",
        action="store_true",
        help="archive cells without fault placement features "
        "(ARCHIVE_PLACEMENT: the archive before them, before -> after)",
    )
    ap.add_argument(
        "--no-cell-rarity",
        action="store_true",
        help="draw archive cells by their rarest feature only (CELL_RARITY off: the selection before it)",
    )
    ap.add_argument(
        "--home",
        action="store_true",
        help="with --gate: only the cells of the models a variant's own "
        "scenarios have (a lower bound of what the whole gate sweep catches, at a fraction of its CPU)",
    )
    ap.add_argument(
        "--gate",
        action="store_true",
        help="the gate sweep's cells (keos sweep --gate --mutants: every "
        "weakened variant on the scenarios/sweep configurations its switches matter to), its runs and "
        "steps unless --runs/--steps are given; with --stop-at-first a variant's later cells are skipped "
        "once one catches it",
    )
    args = ap.parse_args(argv)
    if args.gate:
        from keos.checker.sweep.gate import plan_gate_sweep

        given = argv if argv is not None else sys.argv[1:]
        spec = plan_gate_sweep(
            seed=args.seed,
            runs=args.runs if "--runs" in given else None,
            steps=args.steps if "--steps" in given else None,
            variants=args.variant,
            mutants=True,
        )
    else:
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
    caught_variants: set[str] = set()
    home: dict[str, set[str]] = {}
    if args.home:
        from keos.model.variants import VARIANTS
        from keos.scenarios import builtin_scenarios, resolve_scenario

        builtins = builtin_scenarios()
        home = {
            v: {builtins[s].model for s in VARIANTS[v].scenarios if s in builtins}
            for v in dict.fromkeys(c.variant for c in spec.cells)
        }
        models = {c.scenario: resolve_scenario(c.scenario).model for c in spec.cells}
    for c, cell in list(enumerate(spec.cells))[int(lo or 0) : int(hi) if hi else None]:
        t0 = time.process_time()
        if args.stop_at_first and args.gate and cell.variant in caught_variants:
            continue  # the gate check is caught once any cell catches the variant
        if home and models[cell.scenario] not in home[cell.variant]:
            continue
        if args.stop_at_first:
            first, caught, steps = first_catch(
                spec,
                spec_json,
                c,
                probe=not args.no_probe,
                placement=not args.no_placement,
                cell_rarity=not args.no_cell_rarity,
            )
            entry = {"variant": cell.variant, "scenario": cell.name, "runs": caught, "first": first}
            entry |= {"cpu_s": round(time.process_time() - t0, 2), "steps": steps}
            cells.append(entry)
            print(json.dumps(entry), flush=True)
            if first is not None:
                caught_variants.add(cell.variant)
            continue
        if args.no_probe or args.no_placement or args.no_cell_rarity:
            sweep_runs.Archive = functools.partial(  # type: ignore[misc,assignment]
                Archive,
                probe=not args.no_probe,
                placement=not args.no_placement,
                cell_rarity=not args.no_cell_rarity,
            )
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
        "probe": not args.no_probe,
        "placement": not args.no_placement,
        "cell_rarity": not args.no_cell_rarity,
        "stop_at_first": args.stop_at_first,
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
