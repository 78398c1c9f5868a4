"""SARIF 2.1.0 for CI code-scanning views (GitHub code scanning, GitLab, Azure DevOps).

SARIF (OASIS Static Analysis Results Interchange Format) lists *rules* and *results*.  keos maps:

* each invariant checked -> a rule (``id`` = the invariant's name; its documented fact, the KIP or
  Kafka source it comes from and the bug it catches as descriptions);
* each violated invariant -> a result of level ``error``; a permitted one (the scenario allows it)
  -> ``note``; an untested one (a sometimes-partner never fired) -> ``warning``.  The location is
  the scenario file; the message names the variant and engine, the model's explanation, the trace
  file and the ``keos replay`` command.  Runs stopped by a budget are listed as ``toolExecution
  Notifications`` of level ``warning`` (partial results).

Invariants that hold produce no result, as a linter's clean file does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from keos.checker.results import EngineResult, Verdict, partial_reason
from keos.checker.trace import KEOS_VERSION

__all__ = ["SARIF_SCHEMA", "sarif_document", "write_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Verdict.VIOLATED: "error", Verdict.PERMITTED: "note", Verdict.UNTESTED: "warning"}


def _uri(source: str) -> str:
    path = Path(source)
    if path.is_absolute():
        try:
            return path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return path.as_uri()
    return source.replace(os.sep, "/")


def sarif_document(
    results: list[EngineResult],
    properties: Mapping[str, Any] | None = None,
    stopped: str | None = None,
    not_run: Sequence[str] = (),
) -> dict[str, Any]:
    """The SARIF log of ``results``; ``properties`` (name -> Property) supplies rule descriptions.

    ``stopped`` / ``not_run``: the command ended before every run was done; the invocation is then
    ``executionSuccessful: false`` with a notification naming why and the runs not executed.
    """
    properties = properties or {}
    rule_ids = sorted({p.name for r in results for p in r.properties if p.expectation.value == "always"})
    rules = []
    for name in rule_ids:
        prop = properties.get(name)
        rule: dict[str, Any] = {"id": name, "name": name, "shortDescription": {"text": name}}
        if prop is not None:
            rule["fullDescription"] = {"text": getattr(prop, "fact", "") or name}
            help_text = "; ".join(t for t in (getattr(prop, "source", ""), getattr(prop, "catches", "")) if t)
            if help_text:
                rule["help"] = {"text": help_text}
        rule["defaultConfiguration"] = {"level": "error"}
        rules.append(rule)
    index = {name: i for i, name in enumerate(rule_ids)}
    out: list[dict[str, Any]] = []
    for r in results:
        for p in r.properties:
            level = _LEVEL.get(p.verdict)
            if level is None or p.name not in index:
                continue
            source = p.trace.scenario_source if p.trace is not None and p.trace.scenario_source else ""
            text = f"{p.name} {p.verdict.value} in scenario {r.scenario} (variant {r.variant}, engine {r.engine})"
            if p.detail:
                text += f": {p.detail}"
            if p.trace_path is not None:
                text += f". Trace: {p.trace_path} (keos replay {p.trace_path})"
            result: dict[str, Any] = {
                "ruleId": p.name,
                "ruleIndex": index[p.name],
                "level": level,
                "message": {"text": text},
                "properties": {"scenario": r.scenario, "variant": r.variant, "engine": r.engine,
                               "verdict": p.verdict.value},
            }
            if p.trace is not None:
                result["properties"]["trace_length"] = len(p.trace.actions)
            if source:
                result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(source)}}}]
            out.append(result)
    notes = [
        {"level": "warning", "message": {"text": f"{r.engine} on {r.scenario} ({r.variant}): partial results, {why}"}}
        for r in results
        if (why := partial_reason(r)) is not None
    ]
    if stopped or not_run:
        skipped = f"; not run: {', '.join(not_run)}" if not_run else ""
        notes.append({"level": "warning", "message": {
            "text": f"partial results: the command stopped ({stopped or 'stopped'}); {len(results)} run(s) "
                    f"finished{skipped}"}})
    invocation: dict[str, Any] = {"executionSuccessful": not notes}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "keos", "version": KEOS_VERSION, "informationUri":
                                    "https://kafka.apache.org/documentation/#semantics", "rules": rules}},
                "invocations": [invocation],
                "results": out,
            }
        ],
    }


def write_sarif(
    path: Path,
    results: list[EngineResult],
    properties: Mapping[str, Any] | None = None,
    stopped: str | None = None,
    not_run: Sequence[str] = (),
) -> Path:
    """Write the SARIF log of ``results``; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = sarif_document(results, properties, stopped, not_run)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path
