"""One helper for tests that search a scenario whole under Kafka's rules and then under weakened variants.

Several tests state the same two-sided fact about a scenario: with Kafka's rules the complete search finds no
violation (beyond the scenario's permitted findings), and with a weakened variant named properties object.  Each
test keeps its own assertion of *which* properties object; this module only runs the searches the same way.
"""

from __future__ import annotations

from keos.checker.explore.search import ExploreOptions, explore
from keos.scenarios import build_model, builtin_scenarios


def holds_then_violated(name: str, *variants: str) -> dict[str, set[str]]:
    """Assert ``name`` holds completely under ``kafka``; return, per variant, the properties its search violates."""
    scenario = builtin_scenarios()[name]
    result, _ = explore(build_model(scenario, "kafka"), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    assert result.complete and not result.violations()
    violated: dict[str, set[str]] = {}
    for variant in variants:
        caught, _ = explore(build_model(scenario, variant), scenario.name, variant, ExploreOptions(),
                            scenario.permitted)
        violated[variant] = {p.name for p in caught.violations()}
    return violated
