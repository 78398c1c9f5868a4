"""Conformance findings in keos's result shape, so every report renders them.

One :class:`keos.checker.results.EngineResult` per run (engine ``conform``,
scenario = the workload or history file, variant = the target), one
:class:`~keos.checker.results.PropertyResult` per anomaly kind:

* ``violated``  -- found, and not in the target's profile: a new finding;
* ``permitted`` -- found, and listed in the target's profile as a documented
  deviation (shown apart, does not fail the run);
* ``holds``     -- the history could show it and does not (``bounded``: a
  conformance run samples behaviours, it does not enumerate them);
* ``untested``  -- the history lacks what the check needs (e.g. no aborted
  transaction to misread).

The terminal, HTML and JUnit renderers of :mod:`keos.reports` draw these as
they draw model results; :func:`render_evidence` adds each anomaly's
operations to the terminal.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from keos.checker.results import EngineResult, PropertyResult, Verdict
from keos.model.interface import Expectation

from .anomalies import KINDS, Anomaly
from .runner import ConformRun

__all__ = ["EVIDENCE_WIDTH", "anomalies_json", "render_evidence", "to_engine_result"]

#: Characters of one operation shown in a detail line (poll results can be long).
EVIDENCE_WIDTH = 160


def _short(text: str, width: int = EVIDENCE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _detail(found: list[Anomaly], note: str | None) -> str:
    first = found[0]
    head = f"documented deviation ({note}); " if note else ""
    evidence = "; ".join(_short(op.brief(), 100) for op in first.ops)
    return f"{head}{len(found)} found; first: {first.summary} — evidence: {evidence}"


def to_engine_result(run: ConformRun) -> EngineResult:
    """The run as an :class:`EngineResult`."""
    by_kind = run.analysis.by_kind()
    props: list[PropertyResult] = []
    for k in KINDS:
        found = by_kind.get(k.name, [])
        note = run.target.profile.get(k.name)
        if found:
            verdict = Verdict.PERMITTED if note else Verdict.VIOLATED
            props.append(PropertyResult(k.name, Expectation.ALWAYS, verdict, detail=_detail(found, note)))
        elif run.analysis.exercised.get(k.name):
            props.append(PropertyResult(k.name, Expectation.ALWAYS, Verdict.HOLDS))
        else:
            props.append(
                PropertyResult(k.name, Expectation.ALWAYS, Verdict.UNTESTED, detail=f"the history has no {k.needs}")
            )
    stats: dict[str, Any] = {"elapsed_s": round(run.elapsed_s, 3), **run.analysis.stats}
    stats["target_version"] = run.target.version
    stats.update({f"broker.{k}": v for k, v in run.trace.items() if not isinstance(v, dict | list)})
    return EngineResult("conform", run.workload, run.target.name, props, stats=stats, complete=False)


def anomalies_json(run: ConformRun) -> dict[str, Any]:
    """Machine-readable findings: target, per-kind verdicts and every anomaly with its evidence."""
    return {
        "target": {"name": run.target.name, "version": run.target.version, "profile": dict(run.target.profile)},
        "workload": run.workload,
        "elapsed_s": round(run.elapsed_s, 3),
        "stats": run.analysis.stats,
        "anomalies": [{**a.to_json(), "documented": run.documented(a)} for a in run.analysis.anomalies],
        "unconfirmed": [a.to_json() for a in run.unconfirmed],
        "broker_trace": run.trace,
    }


def render_evidence(console: Console, run: ConformRun, per_kind: int = 3) -> None:
    """Each anomaly with its operations; documented deviations after new findings."""
    if not run.analysis.anomalies:
        return
    new = [a for a in run.analysis.anomalies if not run.documented(a)]
    known = [a for a in run.analysis.anomalies if run.documented(a)]
    for title, group, style in (("new findings", new, "bold red"), ("documented deviations", known, "bold blue")):
        if not group:
            continue
        console.print(Text(f"{run.target.name}: {title}", style=style))
        shown: dict[str, int] = {}
        for a in group:
            shown[a.kind] = shown.get(a.kind, 0) + 1
            if shown[a.kind] > per_kind:
                continue
            line = Text(f"  {a.kind}", style=style)
            line.append(f"  {a.summary}")
            console.print(line, soft_wrap=True)
            for op in a.ops:
                console.print(Text(f"      {_short(op.brief())}", style="dim"), soft_wrap=True)
        hidden = {k: n - per_kind for k, n in shown.items() if n > per_kind}
        if hidden:
            console.print(Text("  more: " + ", ".join(f"{k} +{n}" for k, n in hidden.items()), style="dim"))
