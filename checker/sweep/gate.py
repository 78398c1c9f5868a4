"""The gate's randomized reach check: ``keos sweep --gate`` (gate check ``@sweep``).

The default scenarios are small bounded configurations that the explicit search closes exhaustively; within
those bounds a random walk reaches nothing the search has not (issue 23).  What the search cannot reach are
the *larger* configurations: more producers, transactions, partitions and faults at once, where Kafka's bugs
need two or three faults in a row (a coordinator failover after a timeout abort whose markers are still being
written; a leader move while a retried batch is in flight).  The gate sweep walks such configurations only,
the scenario files of ``scenarios/sweep/`` -- one per family, each a default scenario grown past what a
bounded search can close (their descriptions say from which and how) -- with ``keos sweep``'s swarm (fault
subsets and weights, protocol-lane priorities, newest-first bias, fault triggers, branching at faults,
the Go-Explore archive with fault probing: :mod:`checker.sweep.simulate`, :mod:`checker.sweep.archive`).

Fixed seed, fixed runs per cell and step budget, plain Python in this process (no Spark: a JVM's start costs
more than the check), so the gate's verdict is a pure function of the tree: the same seed gives the same runs,
the same violations and the same minimised, replayed counterexamples.  The CPU time is bounded: the runs are
sized for :data:`GATE_SWEEP`'s ``cpu_budget_s`` with room to spare on this machine, and when the budget is
spent the sweep stops before the next cell (a chunk) and reports *partial* (exit 4: never a pass).

Exit codes, as ``keos sweep``'s: 0 every ``always`` property held on every run, 1 a non-permitted violation
(the summary names its replayed minimal trace), 4 the budget stopped the sweep first, 2 bad input.  With
``--mutants`` (``keos sweep --gate --mutants``) every weakened variant runs on the gate cells whose model it
changes: the measure of what the check catches that it was never told about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from keos.checker.sweep.runs import Cell, SweepSpec
from keos.model.interface import ModelError

__all__ = ["GATE_SWEEP", "GateSweep", "GateSweepError", "gate_scenario_paths", "plan_gate_sweep"]


class GateSweepError(ModelError):
    """A bad ``keos sweep --gate`` flag (one line, exit 2)."""


@dataclass(frozen=True)
class GateSweep:
    """The gate sweep's parameters (``keos sweep --gate``; ``--seed``, ``--runs``, ``--steps`` and
    ``--cpu-budget`` override them)."""

    #: Runs per cell (scenario of ``scenarios/sweep/`` x its variant); one cell is one chunk and one archive group.
    runs: int
    #: Step budget of each walk (the default scenarios' searches end within ~40 steps; these walks go on).
    steps: int
    seed: int
    #: CPU seconds the sweep may spend on runs (checked before each cell); then partial, exit 4.
    cpu_budget_s: float


#: 15 cells x 170 runs: 109 CPU-s on this shared 2-core machine at load ~8 (99.5 CPU-s at 200 runs, load ~6; README,
#: "Measured figures"); the budget is a guard against a slowed model rather than the target.
GATE_SWEEP = GateSweep(runs=170, steps=150, seed=0, cpu_budget_s=180.0)


def gate_scenario_paths() -> list[Path]:
    """The scenario files the gate sweep walks, sorted by name (``scenarios/sweep/*.toml``)."""
    root = resources.files("keos.scenarios") / "sweep"
    return sorted((Path(str(e)) for e in root.iterdir() if e.name.endswith(".toml")), key=lambda p: p.name)


def plan_gate_sweep(
    seed: int | None = None,
    runs: int | None = None,
    steps: int | None = None,
    variants: Sequence[str] = (),
    mutants: bool = False,
) -> SweepSpec:
    """The gate sweep's spec: every ``scenarios/sweep`` file under its own variant (or each of ``variants``
    whose switches its model reads); ``mutants``: every weakened variant (or those of ``variants``) so.

    Raises :class:`GateSweepError` on bad input (``keos sweep`` answers it with one line, exit 2).
    """
    from keos.checker.sweep.simulate import model_fault_kinds
    from keos.model.variants import VARIANTS
    from keos.scenarios import build_model, resolve_scenario
    from keos.scenarios.variant_scope import variant_applies

    runs = GATE_SWEEP.runs if runs is None else runs
    steps = GATE_SWEEP.steps if steps is None else steps
    seed = GATE_SWEEP.seed if seed is None else seed
    if runs < 1 or steps < 1:
        raise GateSweepError(f"--runs and --steps must be at least 1, got {runs} and {steps}")
    for v in variants:
        if v not in VARIANTS:
            raise GateSweepError(f"unknown variant {v!r} (known: {', '.join(sorted(VARIANTS))})")
    chosen: list[str | None] = [*variants] or [None]
    if mutants:
        chosen = [*variants] or [v.name for v in VARIANTS.values() if v.weakened]
        for name in variants:
            if not VARIANTS[name].weakened:
                raise GateSweepError(f"--mutants: variant {name!r} is not a weakened variant")
    scenarios = [(p, resolve_scenario(str(p)), p.read_text(encoding="utf-8")) for p in gate_scenario_paths()]
    cells: list[Cell] = []
    for variant in chosen:
        for path, scenario, toml in scenarios:
            if variant is not None and not variant_applies(VARIANTS[variant], scenario.model)[0]:
                continue
            vname = variant or scenario.variant
            model = build_model(scenario, vname)
            cells.append(Cell(str(path), scenario.name, toml, vname, "swarm", model_fault_kinds(model),
                              scenario.permitted))
    if not cells:
        raise GateSweepError(f"no gate sweep scenario has a model that variant(s) {', '.join(variants)} apply to")
    extra: dict[str, Any] = {"gate": True}
    if mutants:
        extra["mutants"] = list(dict.fromkeys(c.variant for c in cells))
    # one chunk and one archive group per cell: the budget is checked between cells, and no chunk starts
    # inside an archive group (which would re-run the group's earlier runs to rebuild the archive)
    return SweepSpec(tuple(cells), runs, steps, seed, chunk_runs=runs, extra=extra, archive_group=runs)
