"""Vocabulary every renderer shares: how a verdict looks, how a violation is named.

The reports never run the model.  They read :class:`checker.results.EngineResult`
objects and trace JSON (the format of :mod:`checker.trace`) and turn them into
terminal tables, plain text, Mermaid, HTML and JUnit.  This module holds the
small tables they all read, so a verdict is drawn the same way everywhere:

* :data:`VERDICT_LOOK` -- the glyph, word, rich style and CSS class of each
  :class:`checker.results.Verdict`.  ``untested`` is deliberately loud (yellow
  ``?``), never green: an invariant whose ``sometimes`` partner never fired was
  not exercised, and must not be read as "holds".
* :data:`JEPSEN_ANOMALIES` -- the closest anomaly name in Jepsen's Kafka
  workload (``:duplicate``, ``:lost-write``, ``:nonmonotonic-send``, ``:G1a``,
  ...) for a violated invariant, so a counterexample can be read in the terms
  Kafka users already know from Jepsen reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keos.checker.results import EngineResult, PropertyResult, Verdict
from keos.checker.trace import KEOS_VERSION, SCHEMA_VERSION, Trace
from keos.model.interface import Expectation

__all__ = [
    "JEPSEN_ANOMALIES",
    "VERDICT_LOOK",
    "VerdictLook",
    "always_and_sometimes",
    "coverage_groups",
    "format_duration",
    "format_stats",
    "jepsen_anomaly",
    "result_key",
    "trace_as_dict",
    "trace_key",
    "verdict_label",
]


@dataclass(frozen=True)
class VerdictLook:
    """How one verdict is drawn: glyph, word, rich style, CSS class."""

    glyph: str
    word: str
    style: str
    css: str


VERDICT_LOOK: dict[Verdict, VerdictLook] = {
    Verdict.HOLDS: VerdictLook("✓", "holds", "bold green", "holds"),
    Verdict.VIOLATED: VerdictLook("✗", "violated", "bold red", "violated"),
    Verdict.PERMITTED: VerdictLook("~", "permitted", "bold blue", "permitted"),
    Verdict.UNTESTED: VerdictLook("?", "untested", "bold black on yellow", "untested"),
    Verdict.REACHED: VerdictLook("✓", "reached", "green", "reached"),
    Verdict.UNREACHED: VerdictLook("?", "unreached", "bold yellow", "unreached"),
}

#: Invariant-name fragments → the closest anomaly in Jepsen's Kafka workload (first match wins).
JEPSEN_ANOMALIES: tuple[tuple[str, str, str], ...] = (
    ("duplicate", ":duplicate", "a record appears at more than one offset"),
    ("acked_loss", ":lost-write", "an acknowledged write is missing from the log"),
    ("lost", ":lost-write", "an acknowledged write is missing from the log"),
    ("order", ":nonmonotonic-send", "a producer's sends appear out of order in the partition"),
    ("aborted_read", ":G1a", "a read_committed consumer saw an aborted write"),
    ("uncommitted", ":precommitted-read", "a read_committed consumer saw a write before its commit"),
    ("precommitted", ":precommitted-read", "a read_committed consumer saw a write before its commit"),
    ("torn", "torn transaction", "only part of a transaction became visible"),
    ("atomic", "torn transaction", "only part of a transaction became visible"),
)


def jepsen_anomaly(invariant: str) -> tuple[str, str] | None:
    """``(anomaly, meaning)`` for an invariant name, or ``None`` if Jepsen has no analogue."""
    for fragment, anomaly, meaning in JEPSEN_ANOMALIES:
        if fragment in invariant:
            return anomaly, meaning
    return None


def verdict_label(p: PropertyResult, complete: bool = True) -> str:
    """``✓ holds``, ``? untested — partner never reached: x``, ``✗ violated (14 steps)``."""
    look = VERDICT_LOOK[p.verdict]
    text = f"{look.glyph} {look.word}"
    if p.verdict is Verdict.HOLDS and not complete:
        text += " (within bounds)"
    if p.trace is not None:
        text += f" ({len(p.trace.actions)} steps)"
    if p.detail:
        text += f" — {p.detail}"
    return text


def format_duration(seconds: Any) -> str:
    """``0.20s``, ``1m03s``."""
    if not isinstance(seconds, int | float):
        return "-"
    if seconds < 60:
        return f"{seconds:.2f}s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


#: Explicit-state statistics, in display order: key → label.
_KNOWN_STATS = (
    ("distinct_states", "states"),
    ("transitions", "transitions"),
    ("states_per_s", "states/s"),
    ("max_depth", "depth"),
)


def format_stats(stats: Mapping[str, Any]) -> list[str]:
    """Human lines for an engine's stats: known keys first, then whatever else it recorded."""
    out: list[str] = []
    for key, label in _KNOWN_STATS:
        if key in stats and stats[key] is not None:
            out.append(f"{_num(stats[key])} {label}" if key != "max_depth" else f"depth {_num(stats[key])}")
    if "elapsed_s" in stats:
        out.append(format_duration(stats["elapsed_s"]))
    known = {k for k, _ in _KNOWN_STATS} | {"elapsed_s"}
    for key in sorted(k for k in stats if k not in known):
        value = stats[key]
        if isinstance(value, Mapping) and "result" in value:  # a proof (bmc's k-induction): its verdict and subject
            subject = str(value.get("property", ""))
            subject = subject if len(subject) <= 60 else subject[:59] + "…"
            out.append(f"{key.replace('_', ' ')}: {value['result']}" + (f" ({subject})" if subject else ""))
            continue
        if isinstance(value, Mapping | list | tuple):
            continue
        out.append(f"{key.replace('_', ' ')} {_num(value)}")
    return out


#: Display order of coverage groups (event prefix before ``:``); others follow alphabetically.
_GROUP_ORDER = ("error", "client_error", "txn", "fault", "marker", "connect")
PLAIN_GROUP = "protocol"


def coverage_groups(coverage: Mapping[str, int]) -> list[tuple[str, list[tuple[str, int]]]]:
    """Events grouped by prefix (``error:``, ``txn:``, ``fault:``; bare labels under ``protocol``)."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for event, count in coverage.items():
        group, sep, rest = event.partition(":")
        if not sep:
            group, rest = PLAIN_GROUP, event
        groups.setdefault(group, []).append((rest, count))

    def order(name: str) -> tuple[int, str]:
        if name in _GROUP_ORDER:
            return _GROUP_ORDER.index(name), name
        if name == PLAIN_GROUP:
            return len(_GROUP_ORDER) + 1, name
        return len(_GROUP_ORDER), name

    return [(g, sorted(groups[g], key=lambda e: (-e[1], e[0]))) for g in sorted(groups, key=order)]


def result_key(r: EngineResult) -> str:
    """``engine/scenario/variant``: names one run."""
    return f"{r.engine}/{r.scenario}/{r.variant}"


def trace_key(trace: Mapping[str, Any]) -> str:
    """``engine/scenario/variant/invariant``: names one counterexample."""
    return "/".join(str(trace.get(k, "?")) for k in ("engine", "scenario", "variant", "invariant"))


def trace_as_dict(trace: Trace) -> dict[str, Any]:
    """The display fields of a trace JSON dict, built from a :class:`Trace` without the model.

    ``Trace.to_json(model)`` needs the model to encode ``actions``; renderers only
    read the recorded ``steps`` (formatted actions and events) and ``final_state``,
    so the replayable ``actions`` list is left out here.
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "keos_version": KEOS_VERSION,
        "engine": trace.engine,
        "scenario": trace.scenario,
        "scenario_source": trace.scenario_source,
        "variant": trace.variant,
        "seed": trace.seed,
        "invariant": trace.invariant,
        "permitted": trace.permitted,
        "model": trace.model_info,
        "steps": trace.steps,
        "final_state": trace.final_state,
        "explanation": trace.explanation,
        "liveness": trace.liveness,
        "loop_start": trace.loop_start,
        "fairness": list(trace.fairness),
    }


def always_and_sometimes(r: EngineResult) -> tuple[list[PropertyResult], list[PropertyResult]]:
    """Split a run's verdicts into always (and eventually) properties and sometimes properties."""
    always = [p for p in r.properties if p.expectation is not Expectation.SOMETIMES]
    sometimes = [p for p in r.properties if p.expectation is Expectation.SOMETIMES]
    return always, sometimes
