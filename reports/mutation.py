"""Renderers of ``keos coverage`` and ``keos mutate`` (issue 23): terminal tables, Parquet, JSON, HTML, JUnit.

Mutation rows (one per mutant) have the columns of :class:`keos.checker.reach.mutators.Mutant` plus
``status`` (killed, survived, uncovered, timeout, crashed, equivalent, excluded), ``kind`` (killed by a
``violation``, or because an invariant became ``untested``), ``scenario``, ``invariant``, ``steps``,
``scenarios_selected`` / ``scenarios_run``, ``seconds``, ``cpu_seconds`` and ``detail``.

JUnit: one test suite per folder of ``model/``, one test case per mutant: killed passes, survived and
uncovered fail (the gate let the defect through), timeout and crashed are errors, equivalent and
excluded are skipped with their reason.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = [
    "COLUMNS",
    "render_coverage",
    "render_mutation",
    "write_mutation_html",
    "write_mutation_json",
    "write_mutation_junit",
    "write_parquet",
]

#: Parquet columns and their Arrow types (``string``, ``int64``, ``double``).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"), ("module", "string"), ("path", "string"), ("folder", "string"), ("line", "int64"),
    ("col", "int64"), ("end_line", "int64"), ("end_col", "int64"), ("operator", "string"),
    ("function", "string"), ("original", "string"), ("replacement", "string"), ("status", "string"),
    ("kind", "string"), ("scenario", "string"), ("invariant", "string"), ("steps", "int64"),
    ("scenarios_selected", "int64"), ("scenarios_run", "int64"), ("seconds", "double"),
    ("cpu_seconds", "double"), ("detail", "string"),
)


# -- keos coverage --------------------------------------------------------------------------------


def _pct(taken: int, total: int) -> str:
    return f"{100.0 * taken / total:.1f}%" if total else "-"


def render_coverage(console: Console, report: Mapping[str, Any], modules: Sequence[Mapping[str, Any]],
                    handlers: bool = True) -> None:
    """Per-module table, per-handler gaps (branches never taken, guards that never decided), exclusions."""
    table = Table(title="branch coverage by the scenarios' explicit searches", show_lines=False)
    for col, just in (("module", "left"), ("branches", "right"), ("taken", "right"), ("branch %", "right"),
                      ("guards never decided", "right"), ("never reached", "right"), ("line %", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for m in modules:
        unreached = sum(1 for b in m["missing_branches"] if b[2] == "unreached")
        table.add_row(m["path"], str(m["branches"]), str(m["branches_taken"]), _pct(m["branches_taken"], m["branches"]),
                      str(len(m["partial_guards"])), str(unreached), _pct(m["lines_covered"], m["lines"]))
    console.print(table)
    if handlers:
        gaps = Table(title="handlers with branches never taken (line: partial = the guard never decided that way)")
        for col in ("handler", "branches", "taken", "never taken (from->to, kind)"):
            gaps.add_column(col)
        for m in modules:
            for f in m["functions"]:
                if not f["missing_branches"]:
                    continue
                partial = set(f["partial_guards"])
                arcs = ", ".join(f"{a}->{'exit' if b < 0 else b}{' (partial)' if a in partial else ''}"
                                 for a, b in f["missing_branches"])
                gaps.add_row(f"{m['path']}:{f['name']}", str(f["branches"]), str(f["branches_taken"]), arcs)
        if gaps.row_count:
            console.print(gaps)
    excl = report.get("exclusions", [])
    if excl:
        ex = Table(title="excluded by design (with reason)")
        for col in ("where", "mark", "reason"):
            ex.add_column(col)
        for e in excl:
            ex.add_row(f"{e['path']}:{e['line']}", e["kind"], e["reason"])
        console.print(ex)
    for name, t in report["totals"].items():
        console.print(f"{name}/: {t['branches_taken']}/{t['branches']} branches taken ({t['branch_percent']}%), "
                      f"{t['partial_guards']} guards never decided, {t['lines_covered']}/{t['lines']} lines "
                      f"({t['line_percent']}%), {t['modules']} modules", soft_wrap=True)
    secs = sum(float(s.get("seconds") or 0) for s in report["scenarios"].values())
    checks = [n for n, s in report["scenarios"].items() if s.get("gate_check")]
    also = f" and {len(checks)} gate check(s) ({', '.join(checks)})" if checks else ""
    console.print(f"{len(report['scenarios']) - len(checks)} scenario(s){also}, {secs:.1f} s under coverage",
                  soft_wrap=True)


def render_untaken(console: Console, untaken: Sequence[Mapping[str, Any]]) -> None:
    """``keos coverage --explain``: per module, why each untaken branch is untaken; the ones nothing takes."""
    if not untaken:
        console.print("--explain: every branch is taken")
        return
    kinds = sorted({u["why"] for u in untaken if u["why"].startswith("set:")})
    table = Table(title="why the gate never takes these branches (keos coverage --explain)", show_lines=False)
    table.add_column("module")
    for col in ("untaken", *(f"taken in {k[4:]}" for k in kinds), "only a weakened variant", "nothing takes it"):
        table.add_column(col, justify="right")
    by_module: dict[str, list[Mapping[str, Any]]] = {}
    for u in untaken:
        by_module.setdefault(u["path"], []).append(u)
    for path, rows in sorted(by_module.items()):
        counts = [sum(1 for u in rows if u["why"] == k) for k in (*kinds, "variant", "nothing")]
        table.add_row(path, str(len(rows)), *(str(c) for c in counts))
    console.print(table)
    nothing = [u for u in untaken if u["why"] == "nothing"]
    for path, rows in sorted(by_module.items()):
        arcs = [f"{u['from']}->{u['to']}" for u in rows if u["why"] == "nothing"]
        if arcs:
            console.print(f"  nothing takes {path}: {', '.join(arcs)}", soft_wrap=True, markup=False, highlight=False)
    total = len(untaken)
    console.print(f"--explain: {total} branch(es) untaken by the gate; {total - len(nothing)} taken by a named set's "
                  f"scenario or a weakened variant, {len(nothing)} by nothing", soft_wrap=True)


# -- keos mutate ----------------------------------------------------------------------------------


def render_mutation(console: Console, rows: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Any]],
                    show_survivors: int = 40) -> None:
    """Score per folder and in total, then the first surviving mutants (what to triage)."""
    table = Table(title="mutation score of model/ (killed / (killed + survived + uncovered))")
    cols = ("folder", "mutants", "killed", "by_contract", "survived", "uncovered", "timeout", "crashed",
            "equivalent", "excluded", "score")
    for col in cols:
        table.add_column(col, justify="left" if col == "folder" else "right")
    for folder, c in scores.items():
        table.add_row(folder, *(str(c.get(k, 0)) for k in cols[1:-1]), _score_text(c),
                      style="bold" if folder == "total" else None)
    console.print(table)
    survivors = [r for r in rows if r["status"] in ("survived", "uncovered")]
    if survivors and show_survivors:
        s = Table(title=f"surviving mutants (first {min(show_survivors, len(survivors))} of {len(survivors)})")
        for col in ("id", "where", "operator", "mutation", "status"):
            s.add_column(col)
        for r in survivors[:show_survivors]:
            s.add_row(r["id"], f"{r['path']}:{r['line']} {r['function']}", r["operator"],
                      f"{r['original']} -> {r['replacement']}", r["status"])
        console.print(s)


def write_parquet(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """The rows as a Parquet file (pyarrow), one row per mutant."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int64": pa.int64(), "double": pa.float64()}
    schema = pa.schema([(name, types[t]) for name, t in COLUMNS])
    data = {name: [r.get(name) for r in rows] for name, _ in COLUMNS}
    pq.write_table(pa.Table.from_pydict(data, schema=schema), path)
    return path


def write_mutation_json(path: Path, summary: Mapping[str, Any]) -> Path:
    """The whole run (settings, scores, rows, equivalents) as JSON."""
    path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return path


_STYLE = """body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}th{background:#eee}.killed{color:#070}
.survived,.uncovered{color:#b00;font-weight:bold}.timeout,.crashed{color:#a60}.equivalent,.excluded{color:#777}
code{font-size:12px}"""


def _score_text(c: Mapping[str, Any]) -> str:
    return "-" if c.get("score") is None else f"{c['score']:.1f}%"


def write_mutation_html(path: Path, summary: Mapping[str, Any]) -> Path:
    """A self-contained HTML page: scores per folder, then every mutant with its outcome."""
    e = html.escape
    scores = summary["scores"]
    head = "".join(f"<th>{e(c)}</th>" for c in ("folder", "mutants", "killed", "by_contract", "survived", "uncovered",
                                                 "timeout", "crashed", "equivalent", "excluded", "score"))
    body = "".join(
        "<tr>" + f"<td>{e(f)}</td>" + "".join(f"<td>{c.get(k, 0)}</td>" for k in (
            "mutants", "killed", "by_contract", "survived", "uncovered", "timeout", "crashed", "equivalent",
            "excluded"))
        + f"<td>{_score_text(c)}</td></tr>"
        for f, c in scores.items())
    rows = "".join(
        f"<tr><td><code>{e(r['id'])}</code></td><td>{e(r['path'])}:{r['line']}</td><td>{e(r['function'])}</td>"
        f"<td>{e(r['operator'])}</td><td><code>{e(r['original'])}</code> &rarr; <code>{e(r['replacement'])}</code></td>"
        f"<td class=\"{e(r['status'])}\">{e(r['status'])}</td><td>{e(r.get('invariant') or '')}</td>"
        f"<td>{r.get('steps') or ''}</td><td>{e(r.get('scenario') or '')}</td><td>{r.get('seconds') or 0:.1f}</td>"
        f"<td>{e(r.get('detail') or '')}</td></tr>"
        for r in summary["rows"])
    partial = "<p><b>partial results:</b> " + e(str(summary.get("stopped"))) + "</p>" if summary.get("partial") else ""
    page = (f"<!doctype html><meta charset=utf-8><title>keos mutate</title><style>{_STYLE}</style>"
            f"<h1>keos mutate: mutation analysis of model/</h1>{partial}"
            f"<p>{len(summary['rows'])} mutants, executor {e(str(summary.get('executor')))}, "
            f"{summary.get('elapsed_s', 0):.0f} s wall, {summary.get('cpu_s', 0):.0f} CPU-s in workers.</p>"
            f"<table><tr>{head}</tr>{body}</table><table><tr><th>id</th><th>where</th><th>handler</th><th>operator</th>"
            f"<th>mutation</th><th>status</th><th>invariant</th><th>steps</th><th>scenario</th><th>s</th>"
            f"<th>detail</th></tr>{rows}</table>")
    path.write_text(page, encoding="utf-8")
    return path


def write_mutation_junit(path: Path, summary: Mapping[str, Any]) -> Path:
    """JUnit XML: a suite per folder, a case per mutant (survived/uncovered fail; timeout/crashed are errors)."""
    suites = ET.Element("testsuites", name="keos mutate")
    by_folder: dict[str, list[Mapping[str, Any]]] = {}
    for r in summary["rows"]:
        by_folder.setdefault(r["folder"], []).append(r)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_time = 0.0
    for folder, rows in sorted(by_folder.items()):
        suite = ET.SubElement(suites, "testsuite", name=folder)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for r in rows:
            t = float(r.get("seconds") or 0.0)
            seconds += t
            name = f"{r['id']} {r['operator']} line {r['line']}: {r['original']} -> {r['replacement']}"
            case = ET.SubElement(suite, "testcase", classname=r["module"], name=name, time=f"{t:.3f}")
            counts["tests"] += 1
            status = r["status"]
            if status in ("survived", "uncovered"):
                counts["failures"] += 1
                ET.SubElement(case, "failure", message=f"{status}: no scenario's invariant caught this mutant",
                              type=status).text = r.get("detail") or ""
            elif status in ("timeout", "crashed"):
                counts["errors"] += 1
                ET.SubElement(case, "error", message=f"{status}: {r.get('detail') or ''}"[:500], type=status)
            elif status in ("equivalent", "excluded"):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{status}: {r.get('detail') or ''}"[:500])
            else:
                out = ET.SubElement(case, "system-out")
                out.text = f"killed by {r.get('invariant')} in {r.get('steps')} steps on {r.get('scenario')}"
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{seconds:.3f}")
        for k in totals:
            totals[k] += counts[k]
        total_time += seconds
    for k, v in totals.items():
        suites.set(k, str(v))
    suites.set("time", f"{total_time:.3f}")
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    return path
