"""Carry a ``reach.json`` measured on one tree to an edited tree (``keos mutate --reach`` after an edit).

``keos mutate`` selects, for every mutant, the scenarios whose search ran the mutant's lines, from the
reach map of a ``keos coverage`` run (``path -> line -> scenarios``).  Measuring that map takes the
whole gate under coverage.py (about half an hour on a two-core machine), so a user who edits ``model/``
and re-runs the mutants -- ``--rerun`` of the survivors, ``--resume`` across a day's work -- naturally
passes the reach file of the tree before the edit.  Its line numbers are then those of the old files: an
edit that inserts ten lines above a handler makes every mutant below it select the scenarios of the code
that used to be ten lines further up, and a mutant of a new line selects nothing (``uncovered``).

``keos coverage`` therefore records, for every file it measured, the file's SHA-256 and text
(``reach.json``'s ``sources``).  :func:`carry_reach` compares them with today's files and, for every
file that changed, rewrites its reach by a line diff of the two texts (``difflib.SequenceMatcher``
without its junk heuristic: a line inside an unchanged run keeps its scenarios at its new number).  A
line that is new or edited has no measured reach; it gets the *module's* scenarios -- every scenario
that ran any line of that file -- the rule :func:`keos.checker.reach.mutation.select_scenarios` already
applies to module-level code: more searches than the exact selection, never fewer, so a carried reach
may cost time but does not turn a killable mutant into ``uncovered``.  Scenarios that today's default
set has and the measured run did not (added since) are unknown to the map; they are added to every line some
search ran, in every file (judged after the measured scenarios).

Only ``model/`` and ``invariants/`` are carried: a scenario whose *configuration* changed since (a generator
cell given a new fault) keeps the reach it had; re-measure after changing scenarios.

A reach file without ``sources`` (written before this was recorded) cannot be carried: it is used as it
is, and the caller says so.  Exclusion marks (``# unreachable:``) move with their lines.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def file_digest(text: str) -> str:
    """SHA-256 of a source file's text (its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_sources(root: Path, paths: Iterable[str]) -> dict[str, dict[str, str]]:
    """``{path: {"sha256": ..., "text": ...}}`` for the measured files (written into ``reach.json``)."""
    out: dict[str, dict[str, str]] = {}
    for rel in sorted(set(paths)):
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except OSError:
            continue
        out[rel] = {"sha256": file_digest(text), "text": text}
    return out


def line_map(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """Old line number -> new line number (both 1-based) for every line inside an unchanged run of lines."""
    matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
    out: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            out[block.a + k + 1] = block.b + k + 1
    return out


@dataclass
class Carried:
    """What :func:`carry_reach` did: files whose text changed, lines carried and lines new."""

    recorded: bool
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    carried_lines: int = 0
    new_lines: int = 0
    new_scenarios: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the console."""
        if not self.recorded:
            return ("note: the reach data records no sources (written by an older keos coverage): its line numbers "
                    "are used as they are, right only if model/ is unchanged since it was measured")
        if not self.changed and not self.missing and not self.new_scenarios:
            return ""
        parts = []
        if self.changed:
            parts.append(f"note: the reach data was measured on another version of {len(self.changed)} file(s) "
                         f"({', '.join(self.changed[:6])}{', ...' if len(self.changed) > 6 else ''}): "
                         f"{self.carried_lines} measured line(s) carried to their new numbers by a line diff; "
                         f"{self.new_lines} new or edited line(s) select every scenario that ran their file")
        if self.new_scenarios:
            parts.append(f"{'' if parts else 'note: '}{len(self.new_scenarios)} scenario(s) or gate check(s) of "
                         "today's gate unknown to the reach data "
                         f"({', '.join(self.new_scenarios[:6])}{', ...' if len(self.new_scenarios) > 6 else ''}) "
                         "are added to every line a search ran")
        if self.missing:
            parts.append(f"{len(self.missing)} measured file(s) no longer exist")
        return "; ".join(parts)


def _carry_lines(lines: dict[str, list[str]], mapping: dict[int, int], new_count: int,
                 extra: Sequence[str]) -> tuple[dict[str, list[str]], int, int]:
    module_wide = sorted({c for cs in lines.values() for c in cs if c != "import"} | set(extra))
    carried: dict[str, list[str]] = {}
    for old_ln, ctxs in lines.items():
        new_ln = mapping.get(int(old_ln))
        if new_ln is not None:
            # a line only the import ran (a table, a class body) stays import-only, as in an unchanged file:
            # ``select_scenarios`` gives such a line every scenario of its module, where a new scenario added
            # here would make it look run by that scenario alone
            carried[str(new_ln)] = ctxs if ctxs == ["import"] else sorted(set(ctxs) | set(extra))
    known = len(carried)
    fresh = 0
    unchanged = set(mapping.values())
    if module_wide:
        for ln in range(1, new_count + 1):
            if str(ln) not in carried and ln not in unchanged:
                carried[str(ln)] = module_wide
                fresh += 1
    return dict(sorted(carried.items(), key=lambda kv: int(kv[0]))), known, fresh


def carry_reach(reach: dict[str, Any], root: Path, current_scenarios: Sequence[str] = ()) -> Carried:
    """Rewrite ``reach`` (in place) for the files of ``root`` that changed since it was measured.

    ``current_scenarios``: today's default set (names, and the gate's checks such as ``@differential``); those
    the reach data does not know are added to every line some search ran, as unmeasured scenarios (sorted after
    the measured ones) -- also when no file changed.
    """
    sources: dict[str, dict[str, str]] | None = reach.get("sources")
    if not sources:
        return Carried(recorded=False)
    result = Carried(recorded=True)
    known = set(reach["scenarios"])
    new_scenarios = [s for s in current_scenarios if s not in known]
    mappings: dict[str, tuple[dict[int, int], int]] = {}
    for rel, src in sorted(sources.items()):
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except OSError:
            result.missing.append(rel)
            continue
        if file_digest(text) == src.get("sha256"):
            continue
        new_lines = text.splitlines()
        mappings[rel] = (line_map(src.get("text", "").splitlines(), new_lines), len(new_lines))
        result.changed.append(rel)
    if new_scenarios:
        slowest = max((float(s.get("seconds") or 0.0) for s in reach["scenarios"].values()), default=0.0)
        for name in new_scenarios:
            reach["scenarios"][name] = {"seconds": slowest + 1.0, "cpu_seconds": None, "untested": [],
                                        "carried": "added since the reach was measured: no reach of its own"}
        result.new_scenarios = new_scenarios
        # an unmeasured scenario may run any line some search ran, in changed and unchanged files alike
        for rel, lines in reach["reach"].items():
            if rel not in mappings:  # (a changed file's lines get them below, at their new numbers)
                reach["reach"][rel] = {ln: (cs if cs == ["import"] else sorted({*cs, *new_scenarios}))
                                       for ln, cs in lines.items()}
    for rel, (mapping, count) in mappings.items():
        if rel in reach["reach"]:
            reach["reach"][rel], kept, fresh = _carry_lines(reach["reach"][rel], mapping, count, new_scenarios)
            result.carried_lines += kept
            result.new_lines += fresh
        variant_lines = (reach.get("variant_reach") or {}).get("reach", {})
        if rel in variant_lines:
            variant_lines[rel], _, _ = _carry_lines(variant_lines[rel], mapping, count, ())
        for module in reach.get("modules", []):
            if module.get("path") == rel:
                module["excluded_lines"] = sorted(mapping[n] for n in module.get("excluded_lines", []) if n in mapping)
        text = (root / rel).read_text(encoding="utf-8")
        sources[rel] = {"sha256": file_digest(text), "text": text, "carried": "true"}
    return result
