"""The explore engine as the registry runs it: ``keos check --engine explore``.

Builds the scenario's model and runs :func:`keos.checker.explore.search.explore` within the
scenario's bounds (or the options' overrides), reporting progress through ``options.progress``.
With ``options.workers`` other than 1, ``compact_visited`` or ``spill_dir`` it runs the
level-synchronous search (:func:`keos.checker.explore.parallel.explore_levels`) instead.
"""

from __future__ import annotations

from keos.checker.engines import EngineOptions, register
from keos.checker.explore.parallel import ParallelOptions, explore_levels
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import EngineResult, expect_findings
from keos.scenarios import Scenario, build_model

__all__ = ["run_explore"]


@register("explore", "exhaustive breadth-first explicit-state search (shortest counterexamples)")
def run_explore(scenario: Scenario, variant: str, options: EngineOptions) -> EngineResult:
    """Search every state of ``scenario`` under ``variant`` breadth-first."""
    model = build_model(scenario, variant)
    bounds = scenario.bounds
    callback = None
    if options.progress is not None:
        report = options.progress

        def callback(states: int, transitions: int, depth: int) -> None:
            report("explore", {"states": states, "transitions": transitions, "depth": depth})

    if options.workers != 1 or options.compact_visited or options.spill_dir is not None:
        levels = ParallelOptions(
            max_depth=options.max_depth or bounds.max_depth,
            max_states=options.max_states or bounds.max_states,
            stop_on_first=options.stop_on_first,
            workers=options.workers,
            compact=options.compact_visited,
            spill_dir=options.spill_dir,
            time_budget_s=options.time_budget_s,
            max_memory_mb=options.max_memory_mb,
        )
        leveled = explore_levels(model, scenario.name, variant, levels, scenario.permitted, callback)
        expect_findings(leveled, scenario.expected, variant == scenario.variant)
        return leveled
    opts = ExploreOptions(
        max_depth=options.max_depth or bounds.max_depth,
        max_states=options.max_states or bounds.max_states,
        stop_on_first=options.stop_on_first,
        time_budget_s=options.time_budget_s,
        max_memory_mb=options.max_memory_mb,
    )
    result, _ = explore(model, scenario.name, variant, opts, scenario.permitted, callback)
    expect_findings(result, scenario.expected, variant == scenario.variant)
    return result
