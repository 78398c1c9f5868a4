"""Counterexamples for people: terminal, plain text and Mermaid sequence diagrams.

A counterexample is only useful if someone who knows Kafka, not keos, can
follow it.  So every rendering here is a *sequence diagram*: one lane per
process (producers ``p0..``, the partition leader ``b0``, the transaction
coordinator ``tc``, consumers ``c0..``, Connect workers ``w0..``), a step per
row, network messages as arrows between lanes named as Kafka names the
requests (``Produce(pid, epoch, seq)``, ``ProduceResponse(...)``), and faults
marked ⚡.  The header says which invariant broke, the model's own explanation,
the closest Jepsen anomaly (``:duplicate``, ``:lost-write``), and the final
partition logs with the offending record marked.

Three outputs from one :class:`reports.lanes.TraceView`:

* :func:`render_trace` -- rich, for ``keos replay`` and ``keos check``;
* :func:`plain_text` -- a fixed-width text block to paste into a JIRA or
  GitHub issue (``ascii=True`` for trackers that mangle box drawing);
* :func:`sequence_diagram` -- Mermaid ``sequenceDiagram`` text for HTML,
  Markdown and ``keos replay --mermaid``.

A counterexample to an eventually property ends *stuck* (said in the header
and the last line) or is a *lasso*: its cycle (``loop_start``) is opened by a
``↻ cycle`` row, closed by a ``↺ back to step k`` row, and in Mermaid wrapped
in a ``loop`` block; the fairness the property assumes is in the header.

Input is a trace JSON dict as written by :mod:`checker.trace`; only the
recorded ``steps`` and ``final_state`` are read -- the model is never run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from keos.reports.common import jepsen_anomaly
from keos.reports.lanes import StepView, TraceView, lane_title, partition_logs, trace_view

__all__ = ["lane_gutter", "plain_text", "render_trace", "sequence_diagram"]


@dataclass(frozen=True)
class _Glyphs:
    idle: str
    local: str
    fault: str
    line: str
    dashed: str
    right: str
    left: str
    lost: str
    source: str


_UNICODE = _Glyphs(idle="│", local="●", fault="╳", line="─", dashed="╌", right="▶", left="◀", lost="╳", source="●")
_ASCII = _Glyphs(idle="|", local="*", fault="X", line="-", dashed="-", right=">", left="<", lost="X", source="o")

#: ASCII stand-ins for the symbols used in step text, for ``plain_text(..., ascii=True)``.
_ASCII_TEXT = {"⚡": "!!", "→": "->", "◀": "<", "—": "-", "–": "-", "↻": "@>", "↺": "<@"}

#: Width of one lane column in the gutter.
LANE_WIDTH = 6


def _centre(i: int) -> int:
    return i * LANE_WIDTH + LANE_WIDTH // 2


def lane_header(lanes: tuple[str, ...]) -> str:
    """Lane names centred over their gutter columns."""
    return "".join(lane[: LANE_WIDTH - 1].center(LANE_WIDTH) for lane in lanes).rstrip()


def lane_gutter(lanes: tuple[str, ...], step: StepView | None, ascii: bool = False) -> str:
    """The lane columns of one row: idle lanes ``│``, the acting lane ``●``, a message as an arrow.

    ``step=None`` draws a continuation row (idle lanes only).
    """
    g = _ASCII if ascii else _UNICODE
    row = [" "] * (LANE_WIDTH * len(lanes))
    for i in range(len(lanes)):
        row[_centre(i)] = g.idle
    if step is not None:
        index = {lane: i for i, lane in enumerate(lanes)}
        src = index.get(step.src)
        dst = index.get(step.dst) if step.dst is not None else None
        if src is not None and dst is not None and src != dst:
            a, b = _centre(src), _centre(dst)
            fill = g.dashed if step.response else g.line
            for x in range(min(a, b) + 1, max(a, b)):
                row[x] = fill
            row[a] = g.source
            if step.delivery:
                row[b] = g.right if b > a else g.left
            else:
                # A fault on a message in flight: it never reaches (or is duplicated/reordered toward) dst.
                row[b] = g.lost
        elif src is not None:
            row[_centre(src)] = g.fault if step.fault else g.local
    return "".join(row).rstrip().ljust(LANE_WIDTH * len(lanes))


def _header_lines(view: TraceView) -> list[tuple[str, str]]:
    rows = [
        ("scenario", view.scenario + (f"  ({view.scenario_source})" if view.scenario_source else "")),
        ("variant", view.variant),
        ("engine", view.engine + (f"  seed {view.seed}" if view.seed is not None else "")),
        ("invariant", f"{view.invariant} {view.verdict_word} {view.outcome}"),
    ]
    if view.explanation:
        rows.append(("explanation", view.explanation))
    if view.fairness:
        rows.append(("fairness", "; ".join(view.fairness)))
    anomaly = jepsen_anomaly(view.invariant)
    if anomaly is not None:
        rows.append(("jepsen", f"{anomaly[0]} ({anomaly[1]})"))
    rows.append(("lanes", ", ".join(f"{lane} = {lane_title(lane)}" for lane in view.lanes)))
    return rows


def _step_text(s: StepView) -> str:
    return ("⚡ " if s.fault else "") + s.label


def cycle_open(view: TraceView) -> str:
    """The row that opens a livelock's cycle."""
    return f"↻ cycle: steps {(view.loop_start or 0) + 1}–{len(view.steps)} repeat forever"


def cycle_close(view: TraceView) -> str:
    """The row that closes it: back where the cycle began."""
    start = (view.loop_start or 0) + 1
    return f"↺ back to the state before step {start}: the cycle repeats (no fault on it, weakly fair)"


def plain_text(trace: Mapping[str, Any], ascii: bool = False, path: str | None = None) -> str:
    """The counterexample as fixed-width text, for a bug report.

    ``path``, if given, is the trace file, shown with the command that replays it.
    ``ascii=True`` draws lanes with ``| * o-->`` and spells faults ``!!`` (pure ASCII output).
    """
    view = trace_view(trace)
    out: list[str] = []
    title = f"keos counterexample: {view.invariant} {view.verdict_word}"
    out += [title, "=" * len(title), ""]
    width = max(len(k) for k, _ in _header_lines(view))
    out += [f"{k.ljust(width)}  {v}" for k, v in _header_lines(view)]
    if path:
        out.append(f"{'replay'.ljust(width)}  keos replay {path}")
    out.append("")
    num_w = max(2, len(str(len(view.steps))))
    pad = " " * (num_w + 2)
    out.append(f"{'#'.rjust(num_w)}  {lane_header(view.lanes)}")
    for s in view.steps:
        opens, closes = view.cycle_marks(s.number)
        if opens:
            out.append(f"{pad}{lane_gutter(view.lanes, None, ascii)}  {cycle_open(view)}")
        out.append(f"{str(s.number).rjust(num_w)}  {lane_gutter(view.lanes, s, ascii)}  {_step_text(s)}")
        if s.events:
            out.append(f"{pad}{lane_gutter(view.lanes, None, ascii)}    {', '.join(s.events)}")
        if closes:
            out.append(f"{pad}{lane_gutter(view.lanes, None, ascii)}  {cycle_close(view)}")
    out.append("")
    final = f"{view.invariant} {view.verdict_word} {view.outcome}"
    out.append(f"{final}: {view.explanation}" if view.explanation else final)
    logs = partition_logs(trace.get("final_state"))
    if logs:
        out += ["", "final partition logs:"]
        for q, entries in logs:
            out.append(f"  partition {q}:" + ("" if entries else " (empty)"))
            for text, dup in entries:
                out.append(f"    {text}" + ("   <-- duplicate" if dup else ""))
    text = "\n".join(out) + "\n"
    if ascii:
        for uni, asc in _ASCII_TEXT.items():
            text = text.replace(uni, asc)
    return text


def _event_style(event: str) -> str:
    if event.startswith(("error:", "client_error:")):
        return "red"
    return "yellow" if event.startswith("fault:") else "dim"


def render_trace(console: Console, trace: Mapping[str, Any], path: str | None = None) -> None:
    """Print a counterexample: header panel, numbered steps on lanes, final partition logs."""
    view = trace_view(trace)
    colour = "blue" if view.permitted else "red"
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    for k, v in _header_lines(view):
        style = f"bold {colour}" if k in ("invariant", "explanation") else ""
        head.add_row(k, Text(v, style=style))
    if path:
        head.add_row("replay", f"keos replay {path}")
    console.print(Panel(head, title=f"counterexample: {view.invariant}", border_style=colour, expand=False))

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column(lane_header(view.lanes), no_wrap=True)
    table.add_column("step  (events dimmed below)", overflow="fold")
    for s in view.steps:
        opens, closes = view.cycle_marks(s.number)
        if opens:
            table.add_row("", Text(lane_gutter(view.lanes, None)), Text(cycle_open(view), style="bold yellow"))
        if s.fault:
            style = "bold red"
        elif s.delivery and s.response:
            style = "magenta"
        elif s.delivery:
            style = "cyan"
        else:
            style = ""
        cell = Text(_step_text(s), style=style)
        for j, e in enumerate(s.events):
            cell.append("\n    " if j == 0 else ", ")
            cell.append(e, style=_event_style(e))
        gutter = Text(lane_gutter(view.lanes, s), style=style)
        if s.events:
            gutter.append("\n" + lane_gutter(view.lanes, None))
        table.add_row(str(s.number), gutter, cell)
        if closes:
            table.add_row("", Text(lane_gutter(view.lanes, None)), Text(cycle_close(view), style="bold yellow"))
    console.print(table)

    parts: list[Any] = []
    logs = partition_logs(trace.get("final_state"))
    for q, entries in logs:
        t = Text(f"partition {q}:" + ("" if entries else " (empty)"), style="bold")
        for text, dup in entries:
            t.append("\n  " + text, style="bold red" if dup else "")
            if dup:
                t.append("  ◀ duplicate", style="bold red")
        parts.append(t)
    verdict = Text(f"✗ {view.invariant} {view.verdict_word} {view.outcome}", style=f"bold {colour}")
    if view.explanation:
        verdict.append(f": {view.explanation}")
    parts.insert(0, verdict)
    console.print(Group(*parts))


def _mermaid_text(text: str) -> str:
    """Make text safe inside a Mermaid message or note (``;`` ends a statement, ``#`` starts an entity)."""
    return text.replace("#", "#35;").replace(";", "#59;").replace("\n", "<br/>")


def sequence_diagram(trace: Mapping[str, Any]) -> str:
    """Mermaid ``sequenceDiagram`` text: lanes as participants, deliveries as arrows, notes for the rest.

    Requests are solid arrows (``->>``), responses dashed (``-->>``); local
    steps are notes over their lane, faults notes marked ⚡ over the lanes they
    hit; the last note states the violated invariant and its explanation.
    """
    view = trace_view(trace)
    lines = ["sequenceDiagram"]
    title = f"{view.scenario} / {view.variant}: {view.invariant} {view.verdict_word}"
    lines.append(f"    title {_mermaid_text(title)}")
    for lane in view.lanes:
        lines.append(f"    participant {lane} as {_mermaid_text(lane_title(lane))}")
    for s in view.steps:
        opens, closes = view.cycle_marks(s.number)
        if opens:
            lines.append(f"    loop {_mermaid_text(cycle_open(view))}")
        events = f"<br/>{_mermaid_text(', '.join(s.events))}" if s.events else ""
        if s.delivery and s.dst is not None:
            arrow = "-->>" if s.response else "->>"
            lines.append(f"    {s.src}{arrow}{s.dst}: {s.number}. {_mermaid_text(s.label)}")
            if s.events:
                lines.append(f"    Note over {s.dst}: {_mermaid_text(', '.join(s.events))}")
        else:
            over = s.src if s.dst is None or s.dst == s.src else f"{s.src},{s.dst}"
            mark = "⚡ " if s.fault else ""
            lines.append(f"    Note over {over}: {mark}{s.number}. {_mermaid_text(s.label)}{events}")
        if closes:
            lines.append("    end")
    span = view.lanes[0] if len(view.lanes) == 1 else f"{view.lanes[0]},{view.lanes[-1]}"
    if view.lanes:
        final = f"✗ {view.invariant} {view.verdict_word}" + (f" {view.outcome}" if view.liveness else "")
        if view.explanation:
            final += f": {view.explanation}"
        lines.append(f"    Note over {span}: {_mermaid_text(final)}")
    return "\n".join(lines) + "\n"
