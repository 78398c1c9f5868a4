"""Carry the ids of ``docs/mutation/equivalent.toml`` across edits of ``model/``.

A mutant id hashes its place (module, line, column, operator, replacement), so an edit that moves lines
makes the equivalent-mutant list name mutants that no longer exist (``tests/test_reach.py`` refuses such
stale ids).  This script finds, for every stale id, the mutant it named in an earlier tree (``--base REV``,
default ``HEAD``: the model as committed, read with ``git archive``) and the same edit in today's tree --
same file, function, operator, original and replacement text, the nearest line at the same column -- and
rewrites the id and the ``file:line`` in its reason.  An id whose code is gone is reported and left for a
human (the claim must be re-argued or dropped); a second claim on one mutant (two branches' lists merged) is
dropped, the first reason kept.

    python scripts/remap_equivalents.py [--base REV] [--check]

``--check`` changes nothing and exits 1 if an id would change.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from keos.checker.reach.mutation import edit_key, enumerate_mutants  # noqa: E402
from keos.checker.reach.mutators import Mutant  # noqa: E402

EQUIVALENTS = ROOT / "docs" / "mutation" / "equivalent.toml"
_HEADER = re.compile(r"^\[([0-9a-f]{12})\]\s*$")


def _tree_mutants(rev: str) -> tuple[list[Mutant], dict[str, str]]:
    """The mutants of ``rev``'s model/ and its files' text (for the line diff)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "model"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        texts = {str(f.relative_to(tmp)): f.read_text(encoding="utf-8") for f in Path(tmp).rglob("*.py")}
        return enumerate_mutants(Path(tmp)), texts


def _line_pairs(old: list[str], new: list[str]) -> dict[int, int]:
    """Old line -> new line (1-based): the unchanged lines, and the lines of an edited block of the same length
    paired in order (an edit inside a line -- the case where a mutant's column moves -- keeps its line)."""
    out: dict[int, int] = {}
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            out.update({a0 + k + 1: b0 + k + 1 for k in range(a1 - a0)})
    return out


def _pick(was: Mutant, cands: list[Mutant], old_same_line: list[Mutant], mapped_line: int | None) -> Mutant:
    """The candidate that is ``was``: on the line the diff carries its old line to, the same rank among the
    identical edits of that line (columns shift when an edit earlier on the line changes its length; the order
    of identical edits does not); without a carried line, the same column and the nearest line."""
    if mapped_line is not None:
        here = sorted((c for c in cands if c.line == mapped_line), key=lambda c: c.col)
        rank = sorted(old_same_line, key=lambda m: m.col).index(was)
        if len(here) == len(old_same_line):
            return here[rank]
    return min(cands, key=lambda c: (c.col != was.col, abs(c.line - was.line)))


def remap(text: str, old: dict[str, Mutant], current: list[Mutant], old_texts: dict[str, str] | None = None,
          new_root: Path | None = None) -> tuple[str, collections.Counter[str], list[str]]:
    """The file's text with stale ids remapped; counts; and what could not be remapped.

    With ``old_texts`` (the base tree's files) and ``new_root``, a stale id's line is carried by a line diff
    (unchanged lines, and edited lines of a same-length block in order) and the identical edits of one line are
    paired by rank."""
    ids = {m.id for m in current}
    old_by_edit_line: dict[tuple[tuple[str, ...], int], list[Mutant]] = collections.defaultdict(list)
    for m in old.values():
        old_by_edit_line[(edit_key(m.to_json()), m.line)].append(m)
    maps: dict[str, dict[int, int]] = {}

    def mapped(path: str, line: int) -> int | None:
        if old_texts is None or new_root is None or path not in old_texts:
            return None
        if path not in maps:
            now = (new_root / path).read_text(encoding="utf-8") if (new_root / path).is_file() else ""
            maps[path] = _line_pairs(old_texts[path].splitlines(), now.splitlines())
        return maps[path].get(line)

    by_edit: dict[tuple[str, ...], list[Mutant]] = collections.defaultdict(list)
    for m in current:
        by_edit[edit_key(m.to_json())].append(m)
    stats: collections.Counter[str] = collections.Counter()
    problems: list[str] = []
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header is None or header.group(1) in ids:
            out.append(line)
            stats["kept" if header else "other"] += 1
            continue
        mid = header.group(1)
        was = old.get(mid)
        cands = [] if was is None else by_edit.get(edit_key(was.to_json()), [])
        if not cands:
            problems.append(f"{mid}: " + (f"{was.path}:{was.line} {was.operator} {was.original[:60]} is gone"
                                          if was else "not a mutant of the base tree either"))
            out.append(line)
            stats["unresolved"] += 1
            continue
        assert was is not None
        best = _pick(was, cands, old_by_edit_line[(edit_key(was.to_json()), was.line)], mapped(was.path, was.line))
        out.append(f"[{best.id}]\n")
        stats["remapped"] += 1
        if best.line != was.line:
            out.append(f"#@@line {was.path}:{was.line} -> {was.path}:{best.line}\n")
    # the reason lines carry "file:line": move them with their mutant
    result: list[str] = []
    pending: tuple[str, str] | None = None
    for line in out:
        if line.startswith("#@@line "):
            a, b = line[len("#@@line "):].strip().split(" -> ")
            pending = (a, b)
            continue
        if pending is not None and line.lstrip().startswith("reason"):
            line = line.replace(pending[0], pending[1], 1)
            pending = None
        result.append(line)
    # two claims on one mutant (a union merge of two branches' lists, or a stale id remapped onto a listed one):
    # the first reason stays, the later block goes (TOML refuses a table declared twice)
    kept: list[str] = []
    seen: set[str] = set()
    skipping = False
    for line in result:
        header = _HEADER.match(line)
        if header is not None:
            skipping = header.group(1) in seen
            seen.add(header.group(1))
            stats["duplicate"] += skipping
        elif skipping and (not line.strip() or line.startswith("#")):
            skipping = False
        if not skipping:
            kept.append(line)
    return "".join(kept), stats, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the tree the stale ids were written against (git revision)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if an id would change")
    args = parser.parse_args()
    base, old_texts = _tree_mutants(args.base)
    old = {m.id: m for m in base}
    text = EQUIVALENTS.read_text(encoding="utf-8")
    new, stats, problems = remap(text, old, enumerate_mutants(ROOT), old_texts, ROOT)
    for p in problems:
        print(f"unresolved {p}", file=sys.stderr)
    print(f"{stats['kept']} kept, {stats['remapped']} remapped, {stats['unresolved']} unresolved, "
          f"{stats['duplicate']} duplicate(s) dropped")
    if args.check:
        return 1 if new != text else 0
    EQUIVALENTS.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
