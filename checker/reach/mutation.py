"""Mutation analysis of ``model/`` (``keos mutate``): does the gate kill single-point defects?

For every mutant of :mod:`keos.checker.reach.mutators` (or a stratified sample of them):

1. its *reach* is read from ``keos coverage``'s ``reach.json``: the scenarios whose explicit search
   ran the mutated lines (dynamic contexts).  A mutant of module-level code (a table, a constant)
   runs only at import, so it takes the scenarios that reach any line of its module (a module of
   data only, such as ``model/protocol/errors.py``: every scenario); a ``ProtocolFlags`` default adds the
   scenarios that read its flag, a ``Variant(...)`` entry the scenarios that name its variant.  No scenario:
   the mutant is ``uncovered`` (never run; it counts as not killed);
2. it runs in a fresh process (:mod:`keos.checker.reach.worker`) that serves the mutated module
   through an import hook and runs the gate's search on those scenarios, cheapest first (by the
   time ``keos coverage`` measured), stopping at the first violation, within ``--time-budget``
   seconds per mutant;
3. its row says ``killed`` (by which invariant, in how many steps, on which scenario),
   ``survived``, ``timeout``, ``crashed`` (an exception, an import error, an engine/model
   disagreement: neither killed nor survived), ``uncovered``, ``equivalent`` (listed in the
   equivalents file with a reason) or ``excluded`` (on a line marked ``# unreachable:`` or ``# input:``).

Mutants fan out over plain local processes (``--local-python``, ``--jobs N``) or Spark
(``--master``: ``local[*]``, ``spark://``, ``sc://``; each Spark task starts the same worker
process on its executor, so a cluster's executors need this keos installed with the same Python).

Score: ``killed / (killed + survived + uncovered)`` per folder of ``model/`` and in total;
equivalent and excluded mutants are left out and listed; ``timeout`` and ``crashed`` are reported
apart (not decided, so not in the score).

Results are appended to ``OUT/mutation-results.jsonl`` as each mutant finishes (what ``--resume``
reads: done ids are skipped), and written as Parquet, JSON, HTML and JUnit at the end -- also
after Ctrl-C or ``--total-budget``, marked partial.
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import functools
import json
import random
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.checker.reach.branches import package_root
from keos.checker.reach.mutators import OPERATORS, Mutant, error_classes, model_modules, module_mutants
from keos.checker.reach.worker import MARKER

__all__ = [
    "CONTRACT_KINDS",
    "DECIDED",
    "RERUN_STATUSES",
    "MutationRun",
    "baseline_cpu",
    "cpu_budget_for",
    "edit_key",
    "enumerate_mutants",
    "evaluate_mutants",
    "load_equivalents",
    "load_rows",
    "match_earlier",
    "run_job",
    "score",
    "select_scenarios",
    "select_variants",
    "stratified_sample",
]

#: Kinds of a kill by the model's own contract rather than a property (``checker/reach/worker.py``).
CONTRACT_KINDS = ("contract", "load")
#: Statuses that decide a mutant (the score's denominator).
DECIDED = ("killed", "survived", "uncovered")
STATUSES = ("killed", "survived", "uncovered", "timeout", "crashed", "equivalent", "excluded")
#: Seconds a worker may take beyond its budget (interpreter start, imports) before it is killed.
GRACE_S = 30.0


class MutationError(ValueError):
    """Bad input to ``keos mutate`` (exit 2)."""


def enumerate_mutants(root: Path, modules: Sequence[str] = (), operators: Sequence[str] = ()) -> list[Mutant]:
    """Every mutant of ``root/model`` whose path matches a ``modules`` glob and whose operator is listed.

    A glob matches the repository-relative path (``model/log/*``, ``model/systems/eos.py``) or the
    import name (``keos.model.log.*``).
    """
    unknown = [o for o in operators if o not in OPERATORS]
    if unknown:
        raise MutationError(f"unknown operator {unknown[0]!r} (known: {', '.join(OPERATORS)})")
    classes = error_classes(root / "model" / "protocol" / "errors.py")
    chosen = [(n, r, f) for n, r, f in model_modules(root)
              if not modules or any(fnmatch.fnmatch(r, g) or fnmatch.fnmatch(n, g) for g in modules)]
    if modules and not chosen:
        raise MutationError(f"--module {' '.join(modules)}: matches no module of model/ (e.g. model/log/*)")
    out: list[Mutant] = []
    for name, rel, f in chosen:
        out += [m for m in module_mutants(f.read_text(encoding="utf-8"), name, rel, classes)
                if not operators or m.operator in operators]
    return out


def stratified_sample(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """``n`` mutants, every module represented (when ``n`` allows), the rest proportional to module size.

    Deterministic for a seed: each module's mutants are shuffled by ``random.Random(f"{seed}:{module}")``
    (a string seed is hashed with SHA-512 by :mod:`random`, never with ``hash()``), and the largest
    remainders are filled in module order.
    """
    if n >= len(mutants):
        return list(mutants)
    by_module: dict[str, list[Mutant]] = {}
    for m in mutants:
        by_module.setdefault(m.path, []).append(m)
    total = len(mutants)
    quota = {p: (1 if n >= len(by_module) else 0) for p in by_module}
    left = n - sum(quota.values())
    shares = {p: left * len(ms) / total for p, ms in by_module.items()}
    for p in by_module:
        quota[p] = min(len(by_module[p]), quota[p] + int(shares[p]))
    rest = n - sum(quota.values())
    for p in sorted(by_module, key=lambda p: (-(shares[p] - int(shares[p])), p)):
        if rest <= 0:
            break
        if quota[p] < len(by_module[p]):
            quota[p] += 1
            rest -= 1
    out: list[Mutant] = []
    for p, ms in sorted(by_module.items()):
        pool = sorted(ms, key=lambda m: m.id)
        random.Random(f"{seed}:{p}").shuffle(pool)
        out += pool[: quota[p]]
    return sorted(out, key=lambda m: (m.path, m.line, m.col, m.operator, m.id))


#: What ``--rerun`` takes from an earlier run by default: every mutant the gate did not kill.
RERUN_STATUSES = ("survived", "uncovered", "timeout", "crashed")


def edit_key(row: dict[str, Any]) -> tuple[str, ...]:
    """What a mutant edits, independent of where its lines are: file, function, operator, original, replacement."""
    return tuple(str(row.get(k)) for k in ("path", "function", "operator", "original", "replacement"))


def match_earlier(mutants: Sequence[Mutant], rows: Iterable[dict[str, Any]],
                  statuses: Sequence[str] = RERUN_STATUSES,
                  line_maps: dict[str, dict[int, int]] | None = None) -> tuple[list[Mutant], list[dict[str, Any]]]:
    """The mutants of this tree that an earlier run's rows with a status in ``statuses`` name (``--rerun``).

    An id names a mutant as long as its module's lines did not move (the id hashes the place).  When they
    moved -- the model was edited since -- the same edit is looked up instead: same file, function,
    operator, original and replacement text; among this tree's mutants with that key (one line may hold the
    same edit twice, a function the same edit on several lines) the one at the row's column and nearest its
    old line, as ``scripts/remap_equivalents.py`` picks -- a sample holds only some of a key's mutants, so
    "the k-th row to the k-th mutant" would name the wrong line.  ``line_maps`` (path -> old line -> new line, a
    line diff of the earlier run's tree against this one: :func:`keos.checker.reach.carry.line_map` over the
    ``sources`` of a ``--reach`` file measured on that tree) names the candidate on the old line's new number
    first: nearness alone picks the wrong one of two equal edits when more lines were added above them than lie
    between them (session 32: ``_log_append_failed``'s two ``md._replace(pending_state='')``, 6 lines apart, moved
    by 11).  Returns the matched mutants (in this tree's order)
    and the earlier rows of these mutants' modules that match nothing here (the code they mutated is gone or
    changed); rows of other modules are left out.
    """
    paths = {m.path for m in mutants}  # rows of modules outside --module are not this run's business
    wanted = [r for r in rows if r.get("status") in statuses and r.get("path") in paths]
    by_id = {m.id: m for m in mutants}
    matched: dict[str, Mutant] = {}
    rest: list[dict[str, Any]] = []
    for r in wanted:
        if r.get("id") in by_id:
            matched[r["id"]] = by_id[r["id"]]
        else:
            rest.append(r)
    by_key: dict[tuple[str, ...], list[Mutant]] = {}
    for m in mutants:
        if m.id not in matched:
            by_key.setdefault(edit_key(m.to_json()), []).append(m)
    gone: list[dict[str, Any]] = []
    for r in sorted(rest, key=lambda r: (str(r.get("path")), int(r.get("line") or 0), int(r.get("col") or 0))):
        same = by_key.get(edit_key(r))
        if same:
            col, line = int(r.get("col") or 0), int(r.get("line") or 0)
            carried = (line_maps or {}).get(str(r.get("path")), {}).get(line)
            m = min(same, key=lambda c: (c.line != carried, c.col != col, abs(c.line - line), c.line))
            same.remove(m)
            matched[m.id] = m
        else:
            gone.append(r)
    order = {m.id: i for i, m in enumerate(mutants)}
    return sorted(matched.values(), key=lambda m: order[m.id]), gone


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier run: its ``mutation-results.jsonl``, its ``mutation.json`` summary, or a
    directory holding either (``--rerun``).  Raises :class:`MutationError` on anything else."""
    if path.is_dir():
        for name in ("mutation-results.jsonl", "mutation.json"):
            if (path / name).is_file():
                path = path / name
                break
        else:
            raise MutationError(f"{path}: no mutation-results.jsonl or mutation.json in it")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MutationError(f"{path}: {exc}") from None
    rows: Any
    try:
        if path.suffix == ".jsonl":
            lines = [line for line in text.splitlines() if line.strip()]
            rows = [json.loads(line) for line in lines[:-1]]
            with contextlib.suppress(json.JSONDecodeError):  # the last line cut by a kill, as --resume reads it
                rows += [json.loads(line) for line in lines[-1:]]
        else:
            data = json.loads(text)
            rows = data.get("rows") if isinstance(data, dict) else None
    except json.JSONDecodeError as exc:
        raise MutationError(f"{path}: not the results of keos mutate ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "status" in r and "path" in r for r in rows):
        raise MutationError(f"{path}: not the results of keos mutate (rows with 'status' and 'path' expected)")
    return rows


def load_equivalents(path: Path) -> dict[str, str]:
    """The equivalent-mutant list: ``[<id>] reason = "..."`` tables in a TOML file; id -> reason."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MutationError(f"--equivalents {path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise MutationError(f"--equivalents {path}: not valid TOML ({exc})") from None
    out: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, dict) or not isinstance(value.get("reason"), str) or not value["reason"].strip():
            raise MutationError(f"--equivalents {path}: [{key}] needs a non-empty reason = \"...\"")
        out[key] = value["reason"].strip()
    return out


def select_scenarios(m: Mutant, reach: dict[str, Any]) -> list[str]:
    """The scenarios that reach the mutant's lines, cheapest first (module-level code: any of its module)."""
    lines = reach["reach"].get(m.path, {})
    times = {name: s.get("seconds") or 0.0 for name, s in reach["scenarios"].items()}
    hit: set[str] = set()
    for ln in range(m.line, m.end_line + 1):
        hit.update(c for c in lines.get(str(ln), []) if c != "import")
    if not hit and any(c == "import" for ln in range(m.line, m.end_line + 1) for c in lines.get(str(ln), [])):
        # Module-level code (a table, a constant) runs at import only: every scenario that runs the module's
        # functions may read it; a module of data only (no function ever ran) may be read by any scenario.
        hit = {c for cs in lines.values() for c in cs if c != "import"} or set(times)
        hit |= _flag_readers(m, reach)
        hit |= _variant_scenarios(m, reach)
    hit &= set(times)
    return sorted(hit, key=lambda s: (times[s], s))


def baseline_cpu(refs: Sequence[str], reach: dict[str, Any]) -> float:
    """CPU seconds the unmutated model's searches ``refs`` took in the coverage run that wrote ``reach``.

    Those runs traced every line (coverage.py), about three times a plain search's cost: the figure is
    generous headroom for the same search on a mutant, not a prediction.
    """
    searches = {**(reach.get("variant_reach") or {}).get("searches", {}), **reach["scenarios"]}
    return sum(float(searches.get(r, {}).get("cpu_seconds") or 0.0) for r in refs)


def cpu_budget_for(refs: Sequence[str], reach: dict[str, Any], floor_s: float, factor: float) -> float:
    """A mutant's CPU budget: ``floor_s`` (``--cpu-budget``; 0 = none), raised to ``factor`` times what its
    selected searches cost the unmutated model (``--cpu-budget-factor``).

    A flat budget smaller than the gate turns every mutant whose line every scenario reaches (an error
    table, the codec, a request's fields) into ``timeout`` before its last scenario ran: not a slow mutant,
    just a long list.  Relative to the baseline, ``timeout`` means the mutant made its searches slower than
    the unmutated model's -- a state space it blew up -- and every other mutant is decided.
    """
    if not floor_s:
        return 0.0
    return round(max(floor_s, factor * baseline_cpu(refs, reach)), 1)


def scenario_refs(reach: dict[str, Any]) -> dict[str, str]:
    """How a worker finds each scenario the coverage run measured: its built-in name, or for a scenario read
    from a file (``--scenario path.toml``) that file's absolute path -- a name the worker would look up among
    the built-in scenarios only, and a relative path would depend on the worker's directory."""
    out: dict[str, str] = {}
    for name, data in reach["scenarios"].items():
        ref = str(data.get("ref") or name)
        if ref != name and (ref.endswith(".toml") or "/" in ref or Path(ref).exists()):
            ref = str(Path(ref).resolve())
        out[name] = ref
    return out


def select_variants(m: Mutant, reach: dict[str, Any]) -> list[str]:
    """The weakened variants (``variant:<name>``) whose search runs the mutant's lines, cheapest first.

    The gate also runs ``keos mutants``: every weakened variant of ``model/variants.py`` must still be
    caught on its scenarios.  A mutant that lets one escape (it masks the violation the weakened rule
    causes, or breaks the variant's own path) fails the gate, so it is killed there.  Which variants'
    searches run which lines is in ``reach.json`` only when ``keos coverage --explain`` wrote it
    (``variant_reach``); without it no variant is selected and the mutant is judged on scenarios only.
    Module-level code selects every variant whose search ran a line of its module.
    """
    data = reach.get("variant_reach") or {}
    lines = data.get("reach", {}).get(m.path, {})
    if not lines:
        return []
    times = {ref: s.get("seconds") or 0.0 for ref, s in data.get("searches", {}).items()}
    hit: set[str] = set()
    for ln in range(m.line, m.end_line + 1):
        hit.update(lines.get(str(ln), []))
    scenario_reach = reach["reach"].get(m.path, {})
    if not hit and any(c == "import" for ln in range(m.line, m.end_line + 1)
                       for c in scenario_reach.get(str(ln), [])):
        hit = {c for cs in lines.values() for c in cs}
    return sorted(hit, key=lambda r: (times.get(r, 0.0), r))


_FLAG_FIELD = re.compile(r"^\s*(?P<name>[a-z][a-z0-9_]*)\s*:[^=]*=")


def _flag_readers(m: Mutant, reach: dict[str, Any]) -> set[str]:
    """The scenarios that run a line of the model reading a ``ProtocolFlags`` field whose default ``m`` mutates.

    A flag's default (``model/variants.py``) is read wherever the model reads ``.<field>``, not where it is
    declared: without this the scenarios of the rule it switches (a Connect flag, an authorization flag) would
    never run a mutant of its default.
    """
    if m.path != "model/variants.py" or m.function != "ProtocolFlags":
        return set()
    root = Path(reach["root"])
    try:
        declared = (root / m.path).read_text(encoding="utf-8").splitlines()[m.line - 1]
    except (OSError, IndexError):
        return set()
    field_match = _FLAG_FIELD.match(declared)
    if field_match is None:
        return set()
    return _scenarios_at(reach, _readers(str(root), field_match["name"], tuple(sorted(reach["reach"]))))


def _variant_scenarios(m: Mutant, reach: dict[str, Any]) -> set[str]:
    """The scenarios that run the variant whose ``Variant(...)`` entry of ``model/variants.py`` ``m`` mutates.

    A variant's entry (its flags, its name) is module-level data read only when a scenario names the variant
    (``variant = "..."`` in its TOML, e.g. ``connect_connector_deleted_refresh_first``): the scenarios that run
    the module's functions need not be among them, so a mutant that turns a Kafka-as-Kafka variant into the real
    model (or changes which flag it switches) would otherwise never run on the twin built to tell them apart.
    Weakened variants are judged on their own searches (:func:`select_variants`).
    """
    if m.path != "model/variants.py" or m.function != "<module>":
        return set()
    name = _variant_at(str(package_root() / m.path), m.line)
    if name is None:
        return set()
    return {s for s, data in reach["scenarios"].items() if data.get("variant") == name}


@functools.lru_cache(maxsize=16)
def _variant_entries(path: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, name) of every ``Variant(name="...", ...)`` call of the file at ``path``."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return ()
    out: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Variant":
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    out.append((node.lineno, node.end_lineno or node.lineno, kw.value.value))
    return tuple(out)


def _variant_at(path: str, line: int) -> str | None:
    """The name of the ``Variant(...)`` entry spanning ``line`` of ``path`` (``None`` if none does)."""
    return next((name for first, last, name in _variant_entries(path) if first <= line <= last), None)


@functools.lru_cache(maxsize=256)
def _readers(root: str, name: str, paths: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """(path, line) of every line of ``model/`` (other than variants.py) that reads ``.<name>``."""
    pattern = re.compile(rf"\.{re.escape(name)}\b")
    out: list[tuple[str, int]] = []
    for path in paths:
        if not path.startswith("model/") or path == "model/variants.py":
            continue
        try:
            text = (Path(root) / path).read_text(encoding="utf-8")
        except OSError:
            continue
        out.extend((path, n) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line))
    return tuple(out)


def _scenarios_at(reach: dict[str, Any], places: tuple[tuple[str, int], ...]) -> set[str]:
    return {c for path, n in places for c in reach["reach"].get(path, {}).get(str(n), []) if c != "import"}


def _excluded_lines(reach: dict[str, Any]) -> dict[str, set[int]]:
    return {m["path"]: set(m.get("excluded_lines", [])) for m in reach.get("modules", [])}


#: Worker processes running now (so an interrupted run can stop them).
_LIVE: set[subprocess.Popen[str]] = set()
_LIVE_LOCK = threading.Lock()


def stop_workers() -> None:
    """Terminate every worker process this process started and that still runs."""
    with _LIVE_LOCK:
        for proc in list(_LIVE):
            if proc.poll() is None:
                proc.terminate()


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run one mutant's worker process; its result row (``timeout`` if it outlives budget + grace)."""
    budget = float(job.get("budget_s") or 0.0)
    proc = subprocess.Popen([sys.executable, "-m", "keos.checker.reach.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        stdout, stderr = proc.communicate(json.dumps(job), timeout=budget + GRACE_S if budget else None)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"status": "timeout", "detail": f"worker outlived its budget by {GRACE_S:.0f} s and was killed"}
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            row: dict[str, Any] = json.loads(line[len(MARKER):])
            return row
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and job.get("cpu_budget_s"):
        return {"status": "timeout", "detail": f"CPU budget of {job['cpu_budget_s']:g} s ran out",
                "cpu_seconds": float(job["cpu_budget_s"])}
    if proc.returncode in (130, -2, -15):
        return {"status": "interrupted"}
    tail = stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
    return {"status": "crashed", "detail": f"worker ended without a result: {tail[0][:300]}"}


@dataclass
class MutationRun:
    """The rows of one ``keos mutate`` run, and whether it finished."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    executor: str = "local"
    resumed: int = 0

    @property
    def partial(self) -> bool:
        """Whether the run stopped before every mutant was evaluated."""
        return self.stopped is not None


def score(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Counts per status and the score, per folder of ``model/`` and in total (key ``total``)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        for key in (r["folder"], "total"):
            c = out.setdefault(key, {s: 0 for s in STATUSES} | {"mutants": 0, "by_contract": 0})
            c["mutants"] += 1
            c[r["status"]] = c.get(r["status"], 0) + 1
            # killed by the model's own contract (it raised, refused a listed action, no longer loads), not a property
            c["by_contract"] += int(r["status"] == "killed" and r.get("kind") in CONTRACT_KINDS)
    for c in out.values():
        decided = sum(c[s] for s in DECIDED)
        c["decided"] = decided
        c["score"] = round(100.0 * c["killed"] / decided, 2) if decided else None
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == "total", kv[0])))


def _row(m: Mutant, result: dict[str, Any]) -> dict[str, Any]:
    row = m.to_json()
    row.update({"status": result.get("status"), "kind": result.get("kind"), "scenario": result.get("scenario"),
                "invariant": result.get("invariant"), "steps": result.get("steps"),
                "scenarios_run": len(result.get("scenarios_run", []) or []),
                "scenarios_selected": result.get("scenarios_selected", 0),
                "seconds": result.get("seconds", 0.0), "cpu_seconds": result.get("cpu_seconds", 0.0),
                "detail": result.get("detail") or ""})
    return row


def load_done(results: Path) -> dict[str, dict[str, Any]]:
    """Rows already in ``results`` (JSON lines), by mutant id (``--resume``)."""
    done: dict[str, dict[str, Any]] = {}
    if results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a kill: that mutant runs again
                if not isinstance(row, dict) or not isinstance(row.get("id"), str) or row.get("status") not in STATUSES:
                    continue  # not a row this tool wrote: that mutant runs again
                done[row["id"]] = row
    return done


def evaluate_mutants(
    mutants: Sequence[Mutant],
    reach: dict[str, Any],
    out: Path,
    *,
    budget_s: float = 60.0,
    cpu_budget_s: float = 0.0,
    cpu_budget_factor: float = 0.0,
    total_budget_s: float = 0.0,
    equivalents: dict[str, str] | None = None,
    variant: str | None = None,
    resume: bool = False,
    jobs: int = 2,
    master: str | None = None,
    scenarios_only: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> MutationRun:
    """Evaluate ``mutants``; rows are appended to ``out/mutation-results.jsonl`` as they finish.

    ``budget_s`` is wall-clock seconds per mutant (the search stops there), ``cpu_budget_s`` CPU seconds
    (the kernel ends the worker there: the same budget on an idle and a loaded machine); 0 = none.
    ``cpu_budget_factor`` raises a mutant's CPU budget to that multiple of its searches' baseline cost
    (:func:`cpu_budget_for`).
    ``master`` None runs ``jobs`` local worker processes at a time; a Spark master runs the workers as
    Spark tasks.  Ctrl-C or ``total_budget_s`` stops the run: finished rows are kept, the run is
    marked partial (:attr:`MutationRun.stopped`).  After its scenarios a mutant runs the weakened
    variants whose search reaches its lines (:func:`select_variants`; ``scenarios_only`` skips them).
    """
    out.mkdir(parents=True, exist_ok=True)
    results = out / "mutation-results.jsonl"
    done = load_done(results) if resume else {}
    if not resume and results.exists():
        results.unlink()
    equivalents = equivalents or {}
    excluded = _excluded_lines(reach)
    untested = {name: s.get("untested", []) for name, s in reach["scenarios"].items()}
    refs = scenario_refs(reach)
    run = MutationRun(executor=master or f"local processes x{jobs}")
    started = time.monotonic()
    deadline = started + total_budget_s if total_budget_s else None
    lock = threading.Lock()

    def record(m: Mutant, result: dict[str, Any]) -> None:
        row = _row(m, result)
        with lock:
            run.rows.append(row)
            run.cpu_s += float(row.get("cpu_seconds") or 0.0)
            if result.get("status") not in ("equivalent", "excluded"):
                with results.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
        if on_row is not None:
            on_row(row)

    pending: list[tuple[Mutant, dict[str, Any]]] = []
    for m in mutants:
        if m.id in equivalents:
            record(m, {"status": "equivalent", "detail": equivalents[m.id]})
            continue
        if any(ln in excluded.get(m.path, ()) for ln in range(m.line, m.end_line + 1)):
            record(m, {"status": "excluded", "detail": "line marked # unreachable: or # input: (see keos coverage)"})
            continue
        if m.id in done:
            # the mutant's own fields (folder, location) from this tree; the outcome from the file
            kept = m.to_json() | {k: v for k, v in done[m.id].items() if k not in m.to_json()}
            with lock:
                run.rows.append(kept)
                run.cpu_s += float(done[m.id].get("cpu_seconds") or 0.0)
            run.resumed += 1
            continue
        scenarios = select_scenarios(m, reach) + ([] if scenarios_only else select_variants(m, reach))
        if not scenarios:
            record(m, {"status": "uncovered", "detail": "no scenario reaches this line"})
            continue
        pending.append((m, {"module": m.module, "file": str(Path(reach["root"]) / m.path), "mutant": m.id,
                            "scenarios": [refs.get(name, name) for name in scenarios],
                            "variant": variant, "budget_s": budget_s,
                            "cpu_budget_s": cpu_budget_for(scenarios, reach, cpu_budget_s, cpu_budget_factor),
                            "untested_before": {s: untested.get(s, []) for s in scenarios},
                            "out": str(out / "traces"), "scenarios_selected": len(scenarios)}))
    # In id order (ids are hashes): a run stopped early has still sampled every module, not the first few.
    pending.sort(key=lambda p: p[0].id)
    try:
        if master is None:
            _local(pending, jobs, deadline, record, run)
        else:
            _spark(pending, master, deadline, record, run)
    except KeyboardInterrupt:
        run.stopped = "interrupted"
    run.elapsed_s = time.monotonic() - started
    return run


def _finish(m: Mutant, job: dict[str, Any], result: dict[str, Any], record: Callable[..., None]) -> bool:
    if result.get("status") == "interrupted":
        return False
    result["scenarios_selected"] = job["scenarios_selected"]
    record(m, result)
    return True


def _local(pending: list[tuple[Mutant, dict[str, Any]]], jobs: int, deadline: float | None,
           record: Callable[..., None], run: MutationRun,
           runner: Callable[[dict[str, Any]], dict[str, Any]] = run_job,
           on_interrupt: Callable[[], None] = stop_workers) -> None:
    """``jobs`` mutants at a time, the next one started as soon as one finishes (no stragglers' wait)."""
    queue = list(reversed(pending))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running: dict[Future[dict[str, Any]], tuple[Mutant, dict[str, Any]]] = {}
        try:
            while queue or running:
                while queue and len(running) < jobs:
                    if deadline is not None and time.monotonic() >= deadline:
                        run.stopped = "total time budget (--total-budget) ran out"
                        queue.clear()
                        break
                    m, job = queue.pop()
                    running[pool.submit(runner, job)] = (m, job)
                if not running:
                    break
                finished, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
                for fut in finished:
                    m, job = running.pop(fut)
                    if not _finish(m, job, fut.result(), record):
                        run.stopped = "interrupted"
        except KeyboardInterrupt:
            # The mutants still running are not recorded: --resume runs them again.
            run.stopped = "interrupted"
            on_interrupt()
            wait(running, timeout=GRACE_S)


def _spark(pending: list[tuple[Mutant, dict[str, Any]]], master: str, deadline: float | None,
           record: Callable[..., None], run: MutationRun) -> None:
    """Each mutant one Spark job of one task that starts the worker process on its executor.

    2 x cores jobs are in flight at once (submitted from driver threads; Spark schedules their tasks
    on free executor slots), so a slow mutant never holds the others back, and each result is recorded
    (for ``--resume``) the moment it arrives.  Ctrl-C cancels the running jobs.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    from keos.checker.sweep.campaign import _default_parallelism, _is_connect, spark_session

    spark = spark_session(master)
    schema = StructType([StructField("id", StringType()), StructField("result", StringType())])
    jobs_schema = StructType([StructField("id", StringType()), StructField("job", StringType())])

    def one(job: dict[str, Any]) -> dict[str, Any]:
        frame = spark.createDataFrame([(job["mutant"], json.dumps(job))], jobs_schema)
        rows = frame.mapInArrow(_spark_tasks, schema).collect()
        result: dict[str, Any] = json.loads(rows[0]["result"])
        return result

    def cancel() -> None:
        try:
            if _is_connect(spark):
                spark.interruptAll()
            else:
                spark.sparkContext.cancelAllJobs()
        except Exception:
            pass

    _local(pending, max(2, 2 * _default_parallelism(spark)), deadline, record, run, runner=one, on_interrupt=cancel)


def _spark_tasks(batches: Iterable[Any]) -> Iterable[Any]:
    """Spark task body: run each mutant's worker process, yield (id, result JSON)."""
    import pyarrow as pa

    for batch in batches:
        ids, jobs = batch.column("id").to_pylist(), batch.column("job").to_pylist()
        results = [json.dumps(run_job(json.loads(j))) for j in jobs]
        yield pa.RecordBatch.from_arrays([pa.array(ids, pa.string()), pa.array(results, pa.string())],
                                         names=["id", "result"])
