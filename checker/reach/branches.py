"""Branch coverage of ``model/`` and ``invariants/`` by the scenarios' explicit searches (``keos coverage``).

How it is measured.  coverage.py (not a tracer of keos's own) records line and branch arcs in a
fresh process (:mod:`keos.checker.reach.cover_worker`) started before any of ``keos.model`` is
imported, so module-level code (tables, class bodies) counts under the dynamic context ``import``.
Each scenario's explicit search (the ``explore`` engine, the gate's) runs under a dynamic context
named after the scenario, so the data file records *which scenarios reach each line*; ``keos
mutate`` reads that map to run a mutant only on the scenarios that reach its line, cheapest first.

What a number means.  The explicit search memoises state predicates by the fields each evaluation
read (:mod:`keos.checker.explore.incremental`), collapses states to per-field pools and dedupes
visited states: a line of a predicate or a step counts once it ran *for some state of some
scenario*.  Coverage here means "ran at least once", never "ran in every state".  A guard that
"never decided" is a branch source line where coverage.py saw only one of its exits taken (a
*partial* branch) over every state of every scenario; a branch "never reached" is one whose
source line never ran at all.

Exclusions with a reason.  A branch unreachable by design is marked in the source, and the report
lists every such mark with its reason:

* ``# unreachable: <reason>`` on a line excludes that line (and, on an ``if``/``def``/``else``
  line, the whole clause) from measurement: coverage.py's ``exclude_lines``;
* ``# input: <reason>`` excludes like ``# unreachable:``, for a different reason: input validation
  at the model's edge, taken only by a file from outside a search (a hand-written or corrupted trace
  given to ``keos replay``, a scenario), never by a search the gate runs; the tests of bad input
  (``tests/test_bad_input.py``) judge it, the gate cannot;
* ``# no branch: <reason>`` on a branch source line says that one exit cannot happen (a loop that
  always runs, a guard for an impossible state): coverage.py's ``partial_branches``;
* coverage.py's own ``# pragma: no cover`` / ``# pragma: no branch`` still work but are listed as
  "no reason given".

The ``--fail-under PCT`` threshold is compared with the branch coverage of ``model/`` (branches
taken / branches measured, exclusions removed; ``invariants/`` is reported, not judged).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.checker.reach.carry import record_sources

__all__ = [
    "EXCLUDE_RE",
    "NO_BRANCH_RE",
    "CoverageRun",
    "analyse",
    "exclusions",
    "explain_untaken",
    "load_reach",
    "measure",
    "package_root",
    "variant_reach",
]

#: ``# unreachable: <reason>`` / ``# input: <reason>``: the line (or clause) is excluded from measurement.
EXCLUDE_RE = r"#\s*(unreachable|input):"
#: ``# no branch: <reason>``: one exit of this branch source line cannot happen.
NO_BRANCH_RE = r"#\s*no branch:"
_MARKS = (
    ("unreachable", re.compile(r"#\s*unreachable:\s*(?P<reason>.*)$")),
    ("input", re.compile(r"#\s*input:\s*(?P<reason>.*)$")),
    ("no branch", re.compile(r"#\s*no branch:\s*(?P<reason>.*)$")),
    ("pragma: no cover", re.compile(r"#\s*pragma[:\s]?\s*no\s*cover\b(?P<reason>.*)$", re.I)),
    ("pragma: no branch", re.compile(r"#\s*pragma[:\s]?\s*no\s*branch\b(?P<reason>.*)$", re.I)),
    ("no mutate", re.compile(r"#\s*no mutate:\s*(?P<reason>.*)$")),  # keos mutate's mark, listed here too
)

IMPORT_CONTEXT = "import"


def package_root() -> Path:
    """The directory holding ``model/``, ``invariants/`` (the real folders, symlinks resolved)."""
    import keos

    package = Path(keos.__file__).parent
    if (package / "model").is_symlink():  # a checkout: keos/ holds symlinks to the repository's folders
        return (package / "model").resolve().parent
    return package


def _sources(root: Path) -> list[str]:
    return [str((root / "model").resolve()), str((root / "invariants").resolve())]


@dataclass
class CoverageRun:
    """What one ``keos coverage`` run measured (the JSON report is :meth:`to_json`)."""

    root: Path
    data_file: Path
    scenarios: dict[str, dict[str, Any]]
    modules: list[dict[str, Any]] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    reach: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    stopped: str | None = None
    complete: bool = True
    elapsed_s: float = 0.0

    def totals(self, prefix: str) -> dict[str, Any]:
        """Branch and line totals of the modules under ``prefix`` (``model/`` or ``invariants/``)."""
        mods = [m for m in self.modules if m["path"].startswith(prefix)]
        branches = sum(m["branches"] for m in mods)
        taken = sum(m["branches_taken"] for m in mods)
        lines = sum(m["lines"] for m in mods)
        covered = sum(m["lines_covered"] for m in mods)
        return {
            "modules": len(mods),
            "branches": branches,
            "branches_taken": taken,
            "branch_percent": round(100.0 * taken / branches, 2) if branches else 100.0,
            "partial_guards": sum(len(m["partial_guards"]) for m in mods),
            "lines": lines,
            "lines_covered": covered,
            "line_percent": round(100.0 * covered / lines, 2) if lines else 100.0,
        }

    @property
    def partial(self) -> bool:
        """Whether the run stopped before every scenario was measured, or a search hit a budget."""
        return not self.complete or any(s.get("partial") for s in self.scenarios.values())

    def to_json(self) -> dict[str, Any]:
        """The report: scenarios (time, verdicts), totals, modules with handlers, exclusions, reach map."""
        from keos.checker.trace import KEOS_VERSION

        return {
            "keos_version": KEOS_VERSION,
            "partial": self.partial,
            "stopped": self.stopped,
            "elapsed_s": round(self.elapsed_s, 2),
            "root": str(self.root),
            "data_file": str(self.data_file),
            "scenarios": self.scenarios,
            "totals": {"model": self.totals("model/"), "invariants": self.totals("invariants/")},
            "modules": self.modules,
            "exclusions": self.exclusions,
            "reach": {path: {str(k): v for k, v in sorted(lines.items())}
                      for path, lines in sorted(self.reach.items())},
            # the measured files' text: keos mutate carries the reach map across later edits by a line diff
            "sources": record_sources(self.root, [m["path"] for m in self.modules]),
        }


def _coverage(root: Path, data_file: Path) -> Any:
    import coverage

    cov = coverage.Coverage(data_file=str(data_file), branch=True, source=_sources(root), config_file=False)
    cov.exclude(EXCLUDE_RE, which="exclude")
    cov.exclude(NO_BRANCH_RE, which="partial")
    return cov


def measure(
    scenarios: Sequence[str],
    out: Path,
    *,
    variant: str | None = None,
    time_budget_s: float = 0.0,
    total_budget_s: float = 0.0,
    root: Path | None = None,
) -> CoverageRun:
    """Run the scenarios' explicit searches under coverage.py in a fresh process; analyse the data.

    ``scenarios`` are built-in names or TOML paths (validated by the caller).  The coverage data
    file (with one context per scenario) is ``out/.coverage``.  Ctrl-C stops the worker, which
    saves what it measured; the run is then marked partial.
    """
    root = root or package_root()
    out.mkdir(parents=True, exist_ok=True)
    data_file = (out / ".coverage").resolve()
    for stale in out.glob(".coverage*"):
        stale.unlink()
    status_file = out / "coverage-status.json"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump({
            "scenarios": list(scenarios), "variant": variant, "data_file": str(data_file),
            "status_file": str(status_file.resolve()), "source": _sources(root), "out": str(out.resolve()),
            "time_budget_s": time_budget_s, "total_budget_s": total_budget_s,
            "exclude": [EXCLUDE_RE], "partial": [NO_BRANCH_RE],
        }, fh)
        job = fh.name
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "keos.checker.reach.cover_worker", job],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    interrupted = False
    try:
        try:
            _, err = proc.communicate()
        except KeyboardInterrupt:
            interrupted = True
            proc.send_signal(2)
            _, err = proc.communicate()
    finally:
        os.unlink(job)
    if proc.returncode != 0 or not status_file.is_file():
        raise RuntimeError(f"coverage worker failed (exit {proc.returncode}): {err.strip()[-2000:]}")
    status = json.loads(status_file.read_text(encoding="utf-8"))
    run = CoverageRun(root=root, data_file=data_file, scenarios=status["scenarios"],
                      stopped="interrupted" if interrupted else status["stopped"],
                      complete=status["complete"] and not interrupted)
    run.elapsed_s = time.monotonic() - started
    analyse(run)
    return run


def exclusions(root: Path, paths: Sequence[str]) -> list[dict[str, Any]]:
    """Every exclusion mark in the files, with its kind and reason (empty reason: "no reason given")."""
    out: list[dict[str, Any]] = []
    for rel in paths:
        for n, text in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
            if "#" not in text:
                continue
            for kind, regex in _MARKS:
                m = regex.search(text)
                if m:
                    reason = m.group("reason").strip(" :-")
                    out.append({"path": rel, "line": n, "kind": kind, "reason": reason or "no reason given"})
                    break
    return out


def _functions(info: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, f in info.get("functions", {}).items():
        if not name:
            continue  # coverage.py's whole-module region
        s = f["summary"]
        partial = sorted({a for a, _ in f.get("missing_branches", [])} & {a for a, _ in f.get("executed_branches", [])})
        out.append({
            "name": name,
            "start_line": f.get("start_line"),
            "branches": s.get("num_branches", 0),
            "branches_taken": s.get("covered_branches", 0),
            "missing_branches": f.get("missing_branches", []),
            "partial_guards": partial,
            "lines": s.get("num_statements", 0),
            "lines_covered": s.get("covered_lines", 0),
        })
    return out


def analyse(run: CoverageRun) -> None:
    """Fill ``run.modules``, ``run.exclusions`` and ``run.reach`` from the coverage data file."""
    cov = _coverage(run.root, run.data_file)
    cov.load()
    data = cov.get_data()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        report = fh.name
    try:
        cov.json_report(outfile=report)
        files = json.loads(Path(report).read_text(encoding="utf-8"))["files"]
    finally:
        os.unlink(report)
    root = str(run.root.resolve()) + os.sep
    modules = []
    measured = {}
    for fname in data.measured_files():
        measured[os.path.realpath(fname)] = fname
    for name, info in sorted(files.items()):
        real = os.path.realpath(name if os.path.isabs(name) else os.path.join(os.getcwd(), name))
        rel = real.removeprefix(root).replace(os.sep, "/")
        s = info["summary"]
        missing = info.get("missing_branches", [])
        executed_from = {a for a, _ in info.get("executed_branches", [])}
        missing_lines = set(info.get("missing_lines", []))
        modules.append({
            "path": rel,
            "folder": "/".join(rel.split("/")[:2]) if rel.count("/") > 1 else rel.split("/")[0],
            "branches": s.get("num_branches", 0),
            "branches_taken": s.get("covered_branches", 0),
            "lines": s.get("num_statements", 0),
            "lines_covered": s.get("covered_lines", 0),
            "missing_branches": [
                [a, b, "partial" if a in executed_from else ("unreached" if a in missing_lines else "not taken")]
                for a, b in missing
            ],
            "partial_guards": sorted({a for a, _ in missing} & executed_from),
            "excluded_lines": info.get("excluded_lines", []),
            "functions": _functions(info),
        })
        source = measured.get(real)
        if source is not None:
            by_line = data.contexts_by_lineno(source)
            run.reach[rel] = {ln: sorted(c or IMPORT_CONTEXT for c in ctxs) for ln, ctxs in by_line.items() if ctxs}
    run.modules = modules
    run.exclusions = exclusions(run.root, [m["path"] for m in modules])


def explain_untaken(gate: CoverageRun, other: CoverageRun, sets: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Every branch the gate never takes, with what does take it (``keos coverage --explain``).

    ``other`` is a second coverage run, each of its contexts a scenario of a named set the gate does not
    run (CI runs them) or a weakened variant run as ``keos mutants`` runs it (``variant:<name>``); ``sets``
    maps a scenario to its sets.  Each untaken branch ``[from, to]`` of the gate's report gets ``why``:

    * ``set:<name>`` -- a scenario of that named set takes it (``taken_by`` names them): reach the gate
      does not buy, at its price;
    * ``variant`` -- only a weakened rule takes it: the branch is the protocol's answer to a situation
      that Kafka's own rules never produce in these scenarios (``taken_by`` names the variants);
    * ``nothing`` -- no search of the gate, of the named sets or of ``keos mutants`` takes it: a hole,
      dead code, or a guard to mark with its reason.
    """
    cov = _coverage(other.root, other.data_file)
    cov.load()
    data = cov.get_data()
    measured = {os.path.realpath(f): f for f in data.measured_files()}
    contexts = sorted(c for c in data.measured_contexts() if c and c != IMPORT_CONTEXT)
    out: list[dict[str, Any]] = []
    for m in gate.modules:
        if not m["missing_branches"]:
            continue
        source = measured.get(os.path.realpath(gate.root / m["path"]))
        arcs: dict[str, set[tuple[int, int]]] = {}
        if source is not None:
            for ctx in contexts:
                data.set_query_contexts([f"^{re.escape(ctx)}$"])
                arcs[ctx] = set(data.arcs(source) or ())
            data.set_query_contexts(None)
        for a, b, kind in m["missing_branches"]:
            by = sorted(c for c, taken in arcs.items() if (a, b) in taken)
            in_sets = sorted({n for c in by for n in sets.get(c, ())})
            variants = sorted(c.removeprefix("variant:") for c in by if c.startswith("variant:"))
            if in_sets:
                why, names = f"set:{in_sets[0]}", [c for c in by if not c.startswith("variant:")]
            elif variants:
                why, names = "variant", variants
            else:
                why, names = "nothing", []
            out.append({"path": m["path"], "from": a, "to": b, "kind": kind, "why": why, "taken_by": names})
    return out


def filter_modules(run: CoverageRun, globs: Sequence[str]) -> list[dict[str, Any]]:
    """The modules whose path matches one of ``globs`` (all without globs)."""
    if not globs:
        return run.modules
    return [m for m in run.modules if any(fnmatch.fnmatch(m["path"], g) for g in globs)]


def write_html(run: CoverageRun, directory: Path) -> Path:
    """coverage.py's HTML report, with the scenarios that reached each line (``show_contexts``)."""
    cov = _coverage(run.root, run.data_file)
    cov.load()
    cov.html_report(directory=str(directory), show_contexts=True, title="keos coverage of model/ and invariants/")
    return directory / "index.html"


def variant_reach(run: CoverageRun) -> dict[str, Any]:
    """The weakened variants' part of a run (``variant:<name>`` contexts): their searches and what they ran.

    ``{"searches": {ref: {seconds, ...}}, "reach": {path: {line: [ref, ...]}}}``, written into
    ``reach.json`` by ``keos coverage --explain``.  ``keos mutate`` selects by it the weakened variants
    whose search (as ``keos mutants`` runs it) runs a mutant's lines: the gate fails when the mutant
    lets one of them escape, as surely as when a scenario finds a violation.
    """
    from keos.checker.reach.gate_checks import VARIANT_PREFIX

    searches = {ref: s for ref, s in run.scenarios.items() if ref.startswith(VARIANT_PREFIX)}
    reach: dict[str, dict[str, list[str]]] = {}
    for path, lines in sorted(run.reach.items()):
        by_line = {str(ln): [c for c in ctxs if c.startswith(VARIANT_PREFIX)] for ln, ctxs in sorted(lines.items())}
        by_line = {ln: cs for ln, cs in by_line.items() if cs}
        if by_line:
            reach[path] = by_line
    return {"searches": searches, "reach": reach}


def load_reach(path: Path) -> dict[str, Any]:
    """A ``reach.json`` written by ``keos coverage`` (for ``keos mutate``): the parsed JSON."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "reach" not in data or "scenarios" not in data:
        raise ValueError(f"{path}: not a keos coverage report (no 'reach' and 'scenarios')")
    return data
