"""One self-contained HTML report: summary, counterexamples as lane diagrams, coverage, the model.

The file must open from a CI artifact store or a mail attachment with no
network: inline CSS, no scripts, no fonts or images fetched.  So the sequence
diagram of each counterexample appears twice -- as an inline SVG lane diagram
generated here (one vertical lane per process, one row per step, messages as
arrows, faults in red with ⚡), and as Mermaid text (``<pre>``) that can be
pasted into any Mermaid renderer, GitHub Markdown included.

Sections:

1. the verdict of every property of every run (``holds``, ``violated``,
   ``permitted``, ``untested`` with its reason; ``reached``/``unreached`` for
   sometimes properties), with the engine's statistics;
2. one section per counterexample: header (scenario, variant, engine, seed,
   explanation, closest Jepsen anomaly), the SVG, the steps table, the Mermaid
   text and the final partition logs;
3. coverage per run, events grouped by prefix (``error:``, ``fault:``, ...);
4. the model description -- protocol flags, topology, producer config, fault
   budgets -- as recorded in the traces or passed in ``models``.

Every string that comes from a result or a trace goes through
:func:`html.escape`.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from keos.checker.results import EngineResult, Verdict, partial_reason
from keos.checker.trace import KEOS_VERSION
from keos.reports.common import (
    VERDICT_LOOK,
    coverage_groups,
    format_stats,
    jepsen_anomaly,
    trace_as_dict,
    trace_key,
)
from keos.reports.lanes import TraceView, lane_title, partition_logs, trace_view
from keos.reports.terminal import summary_totals
from keos.reports.trace_text import sequence_diagram

__all__ = ["lane_svg", "write_html"]

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       color: #1d2330; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { border-bottom: 1px solid #d5d9e0; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .6em 0; max-width: 100%; }
table.summary { width: 100%; table-layout: auto; }
th, td { border: 1px solid #d5d9e0; padding: .25em .6em; text-align: left; vertical-align: top;
         overflow-wrap: normal; word-break: normal; hyphens: none; }
.scroll { overflow-x: auto; max-width: 100%; }
th { background: #f2f4f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; border: 1px solid #d5d9e0; padding: .8em; overflow-x: auto; }
.banner { display: inline-block; padding: .2em .8em; border-radius: 4px; font-weight: bold; }
.pass { background: #1f883d; color: white; } .fail { background: #cf222e; color: white; }
.partial { background: #d4a72c; color: black; }
.verdict { font-weight: bold; white-space: nowrap; }
.holds, .reached { color: #1a7f37; } .violated { color: #cf222e; } .permitted { color: #0550ae; }
.untested, .unreached { background: #fff3b0; color: #5c4400; padding: 0 .3em; }
.fault td { background: #fff0f0; } .dup { color: #cf222e; font-weight: bold; }
.cycle td { background: #fff8e6; font-weight: bold; }
.events { color: #57606a; } .dim { color: #6e7781; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; }
dl.meta dt { font-weight: bold; } dl.meta dd { margin: 0; }
svg text { font-family: ui-monospace, Menlo, Consolas, monospace; }
details > summary { cursor: pointer; }
"""

_ROW_H = 28
_LANE_W = 96
_LEFT = 44
_TOP = 46


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _ident(value: Any) -> str:
    """An identifier (scenario, variant, invariant, path) escaped, breakable only after ``_``, ``.``, ``/``, ``-``.

    Table cells never break words mid-word (``word-break: normal``); a long name may still wrap at its own
    separators (``<wbr>``), so a narrow window (800 px) keeps every column readable.
    """
    return re.sub(r"([_./-])(?=.)", r"\1<wbr>", _e(value))


def lane_svg(view: TraceView, ident: str = "t") -> str:
    """An inline SVG sequence diagram: lanes as vertical lines, steps as rows, messages as arrows.

    ``ident`` makes the arrow-marker ids unique when several diagrams share a page.
    """
    lanes = view.lanes or ("env",)
    x = {lane: _LEFT + i * _LANE_W + _LANE_W // 2 for i, lane in enumerate(lanes)}
    label_x = _LEFT + len(lanes) * _LANE_W + 12
    longest = max((len(s.label) + (2 if s.fault else 0) for s in view.steps), default=20)
    width = label_x + 8 * longest + 40
    height = _TOP + _ROW_H * (len(view.steps) + 2) + 10
    mid = f"{_e(ident)}-arrow"
    red = "#cf222e"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(view.invariant)} counterexample lane diagram">',
        "<defs>",
        f'<marker id="{mid}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1d2330"/></marker>',
        f'<marker id="{mid}-lost" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="10" markerHeight="10">'
        f'<path d="M1,1 L9,9 M9,1 L1,9" stroke="{red}" stroke-width="2"/></marker>',
        "</defs>",
    ]
    bottom = _TOP + _ROW_H * (len(view.steps) + 1)
    for lane in lanes:
        cx = x[lane]
        out.append(
            f'<text x="{cx}" y="18" text-anchor="middle" font-size="13" font-weight="bold">{_e(lane)}</text>'
            f'<text x="{cx}" y="32" text-anchor="middle" font-size="9" fill="#6e7781">{_e(lane_title(lane))}</text>'
            f'<line x1="{cx}" y1="{_TOP - 8}" x2="{cx}" y2="{bottom}" stroke="#b8bec8" stroke-width="1.5"/>'
        )
    for row, s in enumerate(view.steps):
        y = _TOP + _ROW_H * row + _ROW_H // 2
        colour = (
            red if s.fault else "#0550ae" if s.delivery and not s.response else "#8250df" if s.response else "#1d2330"
        )
        tip = f"{s.number}. {s.action}" + (f" — events: {', '.join(s.events)}" if s.events else "")
        out.append(f"<g><title>{_e(tip)}</title>")
        out.append(f'<text x="8" y="{y + 4}" font-size="11" fill="#6e7781">{s.number}</text>')
        if s.dst is not None and s.dst in x and s.src in x and s.dst != s.src:
            x1, x2 = x[s.src], x[s.dst]
            shrink = 4 if x2 > x1 else -4
            dash = ' stroke-dasharray="5,4"' if s.response or not s.delivery else ""
            end = f' marker-end="url(#{mid})"' if s.delivery else f' marker-end="url(#{mid}-lost)"'
            out.append(
                f'<line x1="{x1}" y1="{y}" x2="{x2 - shrink}" y2="{y}" stroke="{colour}" '
                f'stroke-width="1.8"{dash}{end}/>'
                f'<circle cx="{x1}" cy="{y}" r="3" fill="{colour}"/>'
            )
        else:
            cx = x.get(s.src, x[lanes[0]])
            if s.fault:
                out.append(f'<text x="{cx}" y="{y + 5}" text-anchor="middle" font-size="15" fill="{red}">⚡</text>')
            else:
                out.append(f'<circle cx="{cx}" cy="{y}" r="5" fill="{colour}"/>')
        text = ("⚡ " if s.fault else "") + s.label
        out.append(f'<text x="{label_x}" y="{y + 4}" font-size="12" fill="{colour}">{_e(text)}</text>')
        out.append("</g>")
    if view.loop_start is not None:
        # The livelock's cycle: a bracket left of its rows with an arrow back to its first step.
        y1 = _TOP + _ROW_H * view.loop_start + 4
        y2 = _TOP + _ROW_H * len(view.steps) - 4
        out.append(
            f'<g><title>cycle: steps {view.loop_start + 1}–{len(view.steps)} repeat forever</title>'
            f'<path d="M{_LEFT - 14},{y2} L{_LEFT - 20},{y2} L{_LEFT - 20},{y1} L{_LEFT - 14},{y1}" fill="none" '
            f'stroke="{red}" stroke-width="2" marker-end="url(#{mid})"/></g>'
        )
    y = bottom + 6
    final = f"✗ {view.invariant} {view.verdict_word}" + (f" {view.outcome}" if view.liveness else "")
    final += f": {view.explanation}" if view.explanation else ""
    out.append(f'<text x="{_LEFT}" y="{y + 8}" font-size="13" font-weight="bold" fill="{red}">{_e(final)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _dl(pairs: list[tuple[str, Any]]) -> str:
    return '<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in pairs) + "</dl>"


def _verdict_span(verdict: Verdict) -> str:
    look = VERDICT_LOOK[verdict]
    return f'<span class="verdict {look.css}">{_e(look.glyph)} {_e(look.word)}</span>'


def _summary(results: list[EngineResult], anchors: dict[int, str]) -> str:
    rows = [
        '<div class="scroll"><table class="summary">'
        "<tr><th>scenario</th><th>variant</th><th>engine</th><th>property</th><th>kind</th>"
        "<th>verdict</th><th>detail</th><th>stats</th></tr>"
    ]
    for r in results:
        stats = "<br>".join(_e(s) for s in format_stats(r.stats))
        stats += f"<br>{'exhaustive' if r.complete else 'bounded'}"
        if (why := partial_reason(r)) is not None:
            stats += f"<br><b>partial: {_e(why)}</b>"
        if r.seed is not None:
            stats += f"<br>seed {_e(r.seed)}"
        n = len(r.properties)
        for i, p in enumerate(r.properties):
            detail = _ident(p.detail)
            if p.trace is not None:
                link = anchors.get(id(p.trace))
                steps = f"{len(p.trace.actions)} steps"
                detail += f' — <a href="#{_e(link)}">{steps}</a>' if link else f" — {steps}"
            if p.trace_path is not None:
                detail += f"<br><code>{_ident(p.trace_path)}</code>"
            lead = ""
            if i == 0:
                lead = (
                    f'<td rowspan="{n}"><b>{_ident(r.scenario)}</b></td><td rowspan="{n}">{_ident(r.variant)}</td>'
                    f'<td rowspan="{n}">{_ident(r.engine)}</td>'
                )
            tail = f'<td rowspan="{n}" class="dim">{stats}</td>' if i == 0 else ""
            rows.append(
                f"<tr>{lead}<td><code>{_ident(p.name)}</code></td><td>{_e(p.expectation.value)}</td>"
                f"<td>{_verdict_span(p.verdict)}</td><td>{detail}</td>{tail}</tr>"
            )
    rows.append("</table></div>")
    return "\n".join(rows)


def _trace_section(trace: Mapping[str, Any], anchor: str, path: str | None) -> str:
    view = trace_view(trace)
    meta: list[tuple[str, Any]] = [
        ("scenario", view.scenario + (f" ({view.scenario_source})" if view.scenario_source else "")),
        ("variant", view.variant),
        ("engine", view.engine),
        ("seed", view.seed if view.seed is not None else "-"),
        ("invariant", f"{view.invariant} — {view.verdict_word} {view.outcome}"),
        ("explanation", view.explanation or "-"),
    ]
    if view.fairness:
        meta.append(("fairness assumed", "; ".join(view.fairness)))
    anomaly = jepsen_anomaly(view.invariant)
    if anomaly is not None:
        meta.append(("Jepsen anomaly", f"{anomaly[0]} — {anomaly[1]}"))
    if path:
        meta.append(("replay", f"keos replay {path}"))
    parts = [
        f'<section id="{_e(anchor)}"><h3>{_e(view.invariant)} {_e(view.verdict_word)} — '
        f"{_e(view.scenario)} / {_e(view.variant)} ({_e(view.engine)})</h3>",
        _dl(meta),
    ]
    parts.append(lane_svg(view, anchor))
    rows = ["<table><tr><th>#</th><th>lane</th><th>step</th><th>events</th></tr>"]
    for s in view.steps:
        opens, _ = view.cycle_marks(s.number)
        if opens:
            rows.append(
                f'<tr class="cycle"><td></td><td colspan="3">↻ cycle: steps {s.number}–{len(view.steps)} repeat '
                "forever (each ends back in the state before this row)</td></tr>"
            )
        lane = s.src if s.dst is None else f"{s.src} → {s.dst}"
        cls = ' class="fault"' if s.fault else ""
        label = ("⚡ " if s.fault else "") + s.label
        rows.append(
            f'<tr{cls}><td class="num">{s.number}</td><td class="mono">{_e(lane)}</td>'
            f'<td class="mono">{_e(label)}</td><td class="events mono">{_e(", ".join(s.events))}</td></tr>'
        )
    if view.loop_start is not None:
        rows.append(
            f'<tr class="cycle"><td></td><td colspan="3">↺ back to step {view.loop_start + 1}: '
            "the cycle repeats</td></tr>"
        )
    rows.append("</table>")
    parts.append("\n".join(rows))
    logs = partition_logs(trace.get("final_state"))
    if logs:
        lines = []
        for q, entries in logs:
            lines.append(f"partition {q}:" + ("" if entries else " (empty)"))
            for text, dup in entries:
                lines.append(f'  <span class="dup">{_e(text)}  ◀ duplicate</span>' if dup else f"  {_e(text)}")
        parts.append("<h4>final partition logs</h4><pre>" + "\n".join(lines) + "</pre>")
    parts.append(
        "<details><summary>Mermaid sequence diagram (paste into any Mermaid renderer)</summary><pre>"
        + _e(sequence_diagram(trace))
        + "</pre></details>"
    )
    parts.append("</section>")
    return "\n".join(parts)


def _coverage(results: list[EngineResult]) -> str:
    out = []
    for r in results:
        if not r.coverage:
            continue
        out.append(
            f"<details><summary><b>{_e(r.scenario)}</b> / {_e(r.variant)} ({_e(r.engine)}): "
            f"{len(r.coverage)} distinct events</summary>"
        )
        out.append("<table><tr><th>group</th><th>event</th><th>hits</th></tr>")
        for group, events in coverage_groups(r.coverage):
            for i, (event, n) in enumerate(events):
                head = f'<td rowspan="{len(events)}"><b>{_e(group)}</b></td>' if i == 0 else ""
                out.append(f'<tr>{head}<td class="mono">{_e(event)}</td><td class="num">{n:,}</td></tr>')
        out.append("</table></details>")
    return "\n".join(out) if out else "<p class='dim'>No events recorded.</p>"


def _model_section(models: dict[str, Mapping[str, Any]]) -> str:
    out = []
    for key in sorted(models):
        desc = models[key]
        out.append(f"<h3>{_e(key)}</h3>")
        scalars = [(k, v) for k, v in desc.items() if not isinstance(v, Mapping)]
        if scalars:
            out.append(_dl([(k, json.dumps(v) if not isinstance(v, str) else v) for k, v in scalars]))
        for k, v in desc.items():
            if isinstance(v, Mapping):
                out.append(f"<h4>{_e(k)}</h4><table>")
                for name, value in v.items():
                    shown = json.dumps(value) if not isinstance(value, str) else value
                    out.append(f'<tr><th>{_e(name)}</th><td class="mono">{_e(shown)}</td></tr>')
                out.append("</table>")
    return "\n".join(out) if out else "<p class='dim'>No model description recorded.</p>"


def write_html(
    path: str | Path,
    results: list[EngineResult],
    traces: dict[str, dict[str, Any]] | None = None,
    models: dict[str, Mapping[str, Any]] | None = None,
    title: str = "keos verification report",
    stopped: str | None = None,
    not_run: Sequence[str] = (),
) -> Path:
    """Write the report; returns its path.

    Args:
        path: the HTML file to write (parent directories are created).
        results: engine runs; the counterexample of every violated or
            permitted property is rendered from its :class:`checker.trace.Trace`.
        traces: extra trace JSON dicts (e.g. loaded by ``keos replay``), keyed by
            their file path; rendered after the results' own traces, skipping
            any already shown (same engine, scenario, variant, invariant).
        models: ``Model.describe()`` per ``"scenario/variant"``; the model
            section falls back to the descriptions recorded in traces.
        title: the page title.
        stopped: why the command ended before every run was done (interrupted, out of memory);
            with ``not_run`` (runs never finished) or a run stopped by a budget, the badge is PARTIAL.
    """
    out_path = Path(path)
    shown: list[tuple[str, dict[str, Any], str | None]] = []
    anchors: dict[int, str] = {}
    seen: set[str] = set()
    for r in results:
        for p in r.violations():
            if p.trace is None:
                continue
            d = trace_as_dict(p.trace)
            key = trace_key(d)
            if key in seen:
                continue
            seen.add(key)
            anchor = f"trace-{len(shown) + 1}"
            anchors[id(p.trace)] = anchor
            shown.append((anchor, d, str(p.trace_path) if p.trace_path else None))
    for tpath, d in (traces or {}).items():
        key = trace_key(d)
        if key in seen:
            continue
        seen.add(key)
        shown.append((f"trace-{len(shown) + 1}", d, tpath))

    model_desc: dict[str, Mapping[str, Any]] = dict(models or {})
    for _, d, _ in shown:
        info = d.get("model")
        if isinstance(info, Mapping) and info:
            model_desc.setdefault(f"{d.get('scenario')}/{d.get('variant')}", info)

    totals = summary_totals(results)
    failed = totals[Verdict.VIOLATED.value] > 0
    partial = [f"{r.engine} on {r.scenario} ({r.variant}): {why}" for r in results if (why := partial_reason(r))]
    incomplete = bool(stopped or not_run or partial)
    look, word = ("fail", "FAIL") if failed else ("partial", "PARTIAL") if incomplete else ("pass", "PASS")
    runs = (f"{totals['runs']} of {totals['runs'] + len(not_run)} runs finished ({_e(stopped or 'stopped')})"
            if stopped or not_run else f"{totals['runs']} runs")
    notes = "".join(f"<br>partial: {_e(line)}" for line in partial)
    if not_run:
        notes += f"<br>not run: {_e(', '.join(not_run))}"
    banner = (
        f'<span class="banner {look}">{word}</span> '
        f"{runs} — {totals['holds']} hold, {totals['violated']} violated, "
        f"{totals['permitted']} permitted, {totals['untested']} untested; sometimes "
        f"{totals['reached']}/{totals['reached'] + totals['unreached']} reached{notes}"
    )
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="dim">keos {_e(KEOS_VERSION)}</p>',
        f"<p>{banner}</p>",
        "<h2>Summary</h2>",
        _summary(results, anchors),
        "<p class='dim'><b>holds</b>: no counterexample and every sometimes-partner reached; "
        "<b>untested</b>: no counterexample but a partner never fired, so the invariant was not exercised; "
        "<b>permitted</b>: a counterexample the scenario declares allowed.</p>",
        "<h2>Counterexamples</h2>",
        "\n".join(_trace_section(d, a, p) for a, d, p in shown) if shown else "<p>None found.</p>",
        "<h2>Coverage</h2>",
        _coverage(results),
        "<h2>Model</h2>",
        _model_section(model_desc),
        "</body></html>",
    ]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return out_path
