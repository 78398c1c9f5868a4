"""Write ``docs/coverage-untaken.md``: every branch of ``model/`` the default gate never takes, and why.

Input: a ``reach.json`` of ``keos coverage`` and ``docs/coverage-untaken-reasons.toml``, which holds

* ``[reasons]``: the reasons -- argued by hand -- for the branches *nothing* takes (a judge's violation side,
  unreachable by design, defensive, or a *hole*: an input no scenario gives yet);
* ``[elsewhere]``: what takes each branch the gate does not (a named set's scenario, or only a weakened
  variant), as the last ``keos coverage --explain`` found it (this script writes it from such a run).

Both are keyed ``path:from->to`` in the line numbers of the commit that last changed the TOML file.

    keos coverage --explain --out keos-out/coverage       # the full explanation (slow: every set and variant)
    python scripts/untaken_doc.py keos-out/coverage/reach.json --tree REV

    keos coverage --out keos-out/coverage                 # after an edit: the gate's coverage only
    python scripts/untaken_doc.py --carry                 # keys moved to today's lines by a line diff
    python scripts/untaken_doc.py keos-out/coverage/reach.json --tree REV

With an ``--explain`` report every branch nothing takes needs a reason.  With a plain report the branches are
classified by the TOML file as carried; a branch it does not know is listed as *new since the last
explanation*.  Either way an unexplained branch makes the script exit 1, so the list cannot silently fall
behind.  ``--carry`` moves every key from the lines of the commit that last changed the TOML file to the working
tree's (``keos.checker.reach.carry.line_map``); a key whose line was edited is dropped and printed, to be argued
again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from keos.checker.reach.carry import line_map  # noqa: E402

REASONS = ROOT / "docs" / "coverage-untaken-reasons.toml"
OUT = ROOT / "docs" / "coverage-untaken.md"
_KINDS = (("set:", "Taken by a scenario of a named set (`reach`: CI runs it strictly)"),
          ("variant", "Taken only by a weakened variant (as `keos mutants` runs it)"),
          ("nothing", "Taken by nothing"),
          ("new", "New since the last `keos coverage --explain`: not yet explained"))
_HEADER = """# Reasons for the branches of model/ that no search takes (docs/coverage-untaken.md), and what takes the
# branches the default gate does not.  Keys "path:from->to" in the line numbers of the commit that last changed
# this file; `python scripts/untaken_doc.py --carry` moves them after an edit of model/.  Read and written by
# scripts/untaken_doc.py ([elsewhere] is written from a `keos coverage --explain` report; [reasons] by hand).
"""


def _guard(root: Path, row: dict[str, Any]) -> str:
    text = (root / row["path"]).read_text(encoding="utf-8").split("\n")[row["from"] - 1].strip()
    return text.split("  #")[0][:80].replace("|", "\\|")


def _key(row: dict[str, Any]) -> str:
    return f"{row['path']}:{row['from']}->{row['to']}"


def _elsewhere(row: dict[str, Any]) -> str:
    return f"{row['why']}: " + ", ".join(row["taken_by"])


def untaken_rows(report: dict[str, Any], known: dict[str, str]) -> list[dict[str, Any]]:
    """The untaken branches of ``model/``: an ``--explain`` report's rows, or a plain report's missing branches
    classified by ``known`` (the ``[elsewhere]`` table; ``nothing`` for a key with a reason, ``new`` else)."""
    if "untaken" in report:
        return [u for u in report["untaken"] if u["path"].startswith("model/")]
    rows = []
    for module in report["modules"]:
        if not module["path"].startswith("model/"):
            continue
        for a, b, _kind in module["missing_branches"]:
            row: dict[str, Any] = {"path": module["path"], "from": a, "to": b, "why": "new", "taken_by": []}
            stored = known.get(_key(row))
            if stored is not None:
                why, _, names = stored.partition(": ")
                row.update(why=why, taken_by=[n for n in names.split(", ") if n])
            rows.append(row)
    return rows


def render(report: dict[str, Any], reasons: dict[str, str], root: Path, tree: str,
           elsewhere: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """The document's text and the keys of untaken branches that are not explained."""
    totals = report["totals"]["model"]
    explained = "untaken" in report
    rows = untaken_rows(report, elsewhere or {})
    for row in rows:
        if row["why"] == "new" and _key(row) in reasons:
            row["why"] = "nothing"
    kinds = Counter("set:" if u["why"].startswith("set:") else u["why"] for u in rows)
    missing: list[str] = []
    source = ("`keos coverage --explain`" if explained else
              "`keos coverage` (the gate's coverage; what takes the others is carried from the last `--explain`)")
    out = [
        "# The branches of `model/` the default gate never takes, and why",
        "",
        f"Generated by `scripts/untaken_doc.py` from {source} on **{tree}**: the default gate's "
        f"{len(report['scenarios'])} searches take **{totals['branches_taken']} of {totals['branches']} branches of "
        f"`model/` ({totals['branch_percent']} %)**; {totals['partial_guards']} guards never decided one way.  Line "
        "numbers are that tree's.  Branches marked in the source (`# no branch:`, `# unreachable:`, `# input:`) are "
        "not counted; every `keos coverage` report lists them with their reasons.",
        "",
        f"Of the {len(rows)} untaken: **{kinds['set:']} taken by a named set's scenario**, "
        f"**{kinds['variant']} only by a weakened variant** (the protocol's answer to a situation Kafka's rules never "
        f"produce), **{kinds['nothing']} by nothing**, each with its reason from `docs/coverage-untaken-reasons.toml`: "
        "a judge's violation side no weakened variant breaks, unreachable by design, defensive, or a *hole* -- "
        "an input no scenario gives yet, the work list for reach."
        + (f"  **{kinds['new']} new since the last explanation**, not yet explained." if kinds["new"] else ""),
        "",
    ]
    for prefix, title in _KINDS:
        if prefix == "new" and not kinds["new"]:
            continue
        last_column = "reason" if prefix in ("nothing", "new") else "taken by"
        out += [f"## {title}", "", f"| branch | guard | {last_column} |", "|---|---|---|"]
        for u in rows:
            if not u["why"].startswith(prefix):
                continue
            key = _key(u)
            if prefix in ("nothing", "new"):
                last = reasons.get(key)
                if last is None:
                    missing.append(key)
                    last = "**no reason given**" if prefix == "nothing" else "**run `keos coverage --explain`**"
            else:
                last = ", ".join(f"`{n}`" for n in u["taken_by"])
            out.append(f"| `{key}` | `{_guard(root, u)}` | {last} |")
        out.append("")
    told = [reasons[_key(u)] for u in rows if u["why"] == "nothing" and _key(u) in reasons]
    out.append(f"Reasons for the {kinds['nothing']} taken by nothing: "
               f"{sum('violation side' in r for r in told)} judge violation sides, "
               f"{sum(r.startswith('unreachable by design') for r in told)} unreachable by design, "
               f"{sum(r.startswith('defensive') for r in told)} defensive, "
               f"{sum(r.startswith('judge table row') for r in told)} judge-table rows no input drives, "
               f"{sum(r.startswith('taken only under') for r in told)} reachable only under a weakened variant "
               f"beyond its first violation, {sum(r.startswith('hole') for r in told)} holes.")
    return "\n".join(out) + "\n", missing


def carry_keys(keys: dict[str, str], old_text: dict[str, str], new_text: dict[str, str]) -> tuple[dict[str, str],
                                                                                                list[str]]:
    """Move ``path:from->to`` keys from the files' old text to their new text; the keys that cannot move."""
    maps = {p: line_map(old_text[p].splitlines(), new_text.get(p, "").splitlines()) for p in old_text}
    out: dict[str, str] = {}
    lost: list[str] = []
    for key, value in keys.items():
        path, _, arc = key.rpartition(":")
        a_s, _, b_s = arc.partition("->")
        a, b = int(a_s), int(b_s)
        mapping = maps.get(path)
        if mapping is None:  # the file did not change
            out[key] = value
            continue
        na, nb = mapping.get(a), mapping.get(abs(b))
        if na is None or nb is None:
            lost.append(key)
            continue
        out[f"{path}:{na}->{nb if b > 0 else -nb}"] = value
    return out, lost


def _dump(reasons: dict[str, str], elsewhere: dict[str, str]) -> str:
    def table(name: str, rows: dict[str, str]) -> list[str]:
        body = [f"{json.dumps(k)} = {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(rows.items())]
        return [f"[{name}]", *body, ""]
    return _HEADER + "\n" + "\n".join(table("reasons", reasons) + table("elsewhere", elsewhere))


def _load() -> tuple[dict[str, str], dict[str, str]]:
    data = tomllib.loads(REASONS.read_text(encoding="utf-8"))
    return dict(data.get("reasons", {})), dict(data.get("elsewhere", {}))


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def carry() -> int:
    """``--carry``: move the TOML file's keys from the commit that last changed it to the working tree."""
    reasons, elsewhere = _load()
    rev = _git("log", "-1", "--format=%H", "--", str(REASONS.relative_to(ROOT))).strip()
    if not rev:
        print("untaken_doc: error: the reasons file is not committed (nothing to carry from)", file=sys.stderr)
        return 2
    paths = sorted({k.rpartition(":")[0] for k in (*reasons, *elsewhere)})
    old: dict[str, str] = {}
    new: dict[str, str] = {}
    for p in paths:
        then = _git("show", f"{rev}:{p}")
        now = (ROOT / p).read_text(encoding="utf-8") if (ROOT / p).is_file() else ""
        if then != now:
            old[p], new[p] = then, now
    reasons, lost_r = carry_keys(reasons, old, new)
    elsewhere, lost_e = carry_keys(elsewhere, old, new)
    REASONS.write_text(_dump(reasons, elsewhere), encoding="utf-8")
    for key in lost_r + lost_e:
        print(f"untaken_doc: cannot carry {key} (its line was edited): argue it again", file=sys.stderr)
    print(f"untaken_doc: carried {len(reasons) + len(elsewhere)} key(s) from {rev[:12]} over {len(old)} changed "
          f"file(s); {len(lost_r) + len(lost_e)} dropped", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reach", type=Path, nargs="?", help="reach.json of `keos coverage` (with or without --explain)")
    ap.add_argument("--tree", help="the measured commit, named in the document")
    ap.add_argument("--root", type=Path, default=ROOT, help="the measured tree (for the guards' text)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--carry", action="store_true", help="move the reasons' keys to the working tree's lines")
    args = ap.parse_args(argv)
    if args.carry:
        return carry()
    if args.reach is None or args.tree is None:
        ap.error("a reach.json and --tree are needed (or --carry)")
    report = json.loads(args.reach.read_text(encoding="utf-8"))
    reasons, elsewhere = _load()
    if "untaken" in report:  # a full explanation: it says what takes every branch the gate does not
        elsewhere = {_key(u): _elsewhere(u) for u in report["untaken"]
                     if u["path"].startswith("model/") and u["why"] != "nothing"}
        REASONS.write_text(_dump(reasons, elsewhere), encoding="utf-8")
    text, missing = render(report, reasons, args.root, args.tree, elsewhere)
    args.out.write_text(text, encoding="utf-8")
    for key in missing:
        print(f"untaken_doc: no reason for {key}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
