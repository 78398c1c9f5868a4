"""The registry of engines the CLI can run: ``keos check --engine NAME``.

An engine is a function ``run(scenario, variant, options) -> EngineResult``.
It receives a loaded :class:`scenarios.Scenario`, the variant name and an
:class:`EngineOptions`, builds the model with :func:`scenarios.build_model`
and talks to it only through :class:`model.interface.Model`.  Every
counterexample it reports must be a :class:`checker.trace.Trace` built with
:func:`checker.trace.make_trace` (which replays it first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keos.checker.results import EngineResult

__all__ = ["ENGINES", "EngineOptions", "EngineRun", "register"]


@dataclass(frozen=True)
class EngineOptions:
    """Options shared by engines (each reads what applies to it).

    ``workers``, ``compact_visited`` and ``spill_dir`` choose the explore engine's
    level-synchronous search (:mod:`keos.checker.explore.parallel`) over the sequential
    one; ``master`` is the Spark master of ``spark-bfs``.
    """

    seed: int = 0
    max_depth: int = 0
    max_states: int = 0
    stop_on_first: bool = False
    time_budget_s: float = 0.0
    max_memory_mb: int = 0
    examples: int = 0
    out_dir: Path = Path("keos-out")
    workers: int = 1
    compact_visited: bool = False
    spill_dir: Path | None = None
    master: str = "local[*]"
    progress: Callable[[str, dict[str, Any]], None] | None = None


EngineRun = Callable[[Any, str, EngineOptions], EngineResult]

#: name -> (run function, one-line description)
ENGINES: dict[str, tuple[EngineRun, str]] = {}


def register(name: str, description: str) -> Callable[[EngineRun], EngineRun]:
    """Decorator: register an engine under ``name``."""

    def deco(fn: EngineRun) -> EngineRun:
        ENGINES[name] = (fn, description)
        return fn

    return deco


def run_weakened(run: EngineRun, scenario: Any, variant: str, options: EngineOptions) -> tuple[EngineResult, list[Any]]:
    """Run a weakened variant on a scenario, stopping at its first violation, and return the result with the
    properties it *violated* -- never the ones the scenario permits.

    A permitted property is one the real protocol breaks too on this scenario (``permitted`` in its TOML): a variant
    whose only counterexample is a permitted one is indistinguishable there from Kafka's own rules, so it is not
    caught.  The search stops at its first counterexample, permitted ones included; when that stop judged nothing
    else, the scenario is searched again to its end (as ``keos mutate``'s worker does, ``checker/reach/worker.py``),
    so a non-permitted violation behind the permitted one is still found."""
    from dataclasses import replace

    from keos.checker.results import Verdict, partial_reason

    result = run(scenario, variant, replace(options, stop_on_first=True))
    verdicts = [p.verdict for p in result.properties]
    if Verdict.VIOLATED not in verdicts and Verdict.PERMITTED in verdicts and partial_reason(result) is None:
        result = run(scenario, variant, replace(options, stop_on_first=False))
    return result, [p for p in result.properties if p.verdict is Verdict.VIOLATED]
