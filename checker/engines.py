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
