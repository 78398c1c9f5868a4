"""Renderers of a differential run (``keos differential``): table, JSON and JUnit XML.

Per handler: how many steps the model and Kafka agreed on out of how many were compared;
then every difference with its shortest request sequence and both answers side by side.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from keos.checker.differential.runner import RunResult

__all__ = ["as_json", "render_text", "write_junit"]


def as_json(result: RunResult, meta: dict[str, Any]) -> dict[str, Any]:
    """The whole run as a JSON-ready dict (``summary.json`` of ``keos differential``)."""
    return {
        **meta,
        "cases": result.cases,
        "steps": result.steps,
        "seconds": round(result.seconds, 1),
        "handlers": {
            h: {"compared": n, "agreed": result.agreed.get(h, 0)} for h, n in sorted(result.compared.items())
        },
        "differences": [d.as_dict() for d in result.differences],
        "reconnects": result.reconnects,
    }


def render_text(result: RunResult, meta: dict[str, Any]) -> str:
    """A plain-text report: the agreement table, then each difference (shrunk) side by side."""
    lines = [
        f"keos differential: {result.cases} sequences, {result.steps} steps against {meta.get('target', '?')} "
        f"({meta.get('kafka_version', '')}) in {result.seconds:.1f} s",
        "",
        f"{'handler':<26}{'agreed':>10}{'compared':>10}",
    ]
    for h, n in sorted(result.compared.items()):
        lines.append(f"{h:<26}{result.agreed.get(h, 0):>10}{n:>10}")
    lines.append("")
    for r in result.reconnects:
        lines.append(f"the broker closed the connection (case re-run on a new one): {r}")
    if not result.differences:
        lines.append("no difference: the model and Kafka agreed on every compared step")
    else:
        lines.append(f"{len(result.differences)} distinct difference(s), {len(result.unexplained)} unexplained "
                     "(not a documented abstraction)")
        lines.append("")
    for i, d in enumerate(result.differences, 1):
        label = (f"documented abstraction {d.abstraction!r}" if d.abstraction
                 else "NOT REPRODUCED on a re-run (timing)" if not d.reproduced else "UNEXPLAINED")
        lines.append(f"difference {i} [{label}]: {d.handler} ({d.what}) at step {d.step_index + 1} "
                     f"of {len(d.case.steps)} (transaction timeout {d.case.timeout_ms} ms)")
        for j, s in enumerate(d.case.steps, 1):
            lines.append(f"  {j:>2}. {s.render()}")
        lines.append(f"  model: {d.model!r}")
        lines.append(f"  kafka: {d.kafka!r}")
        lines.append("")
    return "\n".join(lines)


def write_junit(path: Path, result: RunResult) -> Path:
    """One test case per handler; a failure per difference that handler shows."""
    suite = ET.Element("testsuite", name="keos differential", tests=str(len(result.compared)),
                       failures=str(len({d.handler for d in result.unexplained})))
    for h, n in sorted(result.compared.items()):
        case = ET.SubElement(suite, "testcase", classname="keos.differential", name=h)
        mine = [d for d in result.unexplained if d.handler == h]
        if mine:
            text = "\n\n".join(
                "\n".join([*(s.render() for s in d.case.steps), f"model: {d.model!r}", f"kafka: {d.kafka!r}"])
                for d in mine)
            fail = ET.SubElement(case, "failure", message=f"{len(mine)} difference(s); {result.agreed.get(h, 0)}/{n}"
                                 " steps agreed")
            fail.text = text
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="unicode", xml_declaration=True)
    return path
