"""Join the equivalent-mutant lists of several merged branches, claim by claim.

Each branch re-keys claims when its edits move lines, so a textual (even a ``union``) merge of
``docs/mutation/equivalent.toml`` splits claims from their reasons or declares a table twice.  This script
reads each revision's own list (``git show REV:docs/mutation/equivalent.toml``), carries its ids onto today's
working tree with ``remap_equivalents.remap`` (the revision's own ``model/`` is the base), and writes one list:
the first revision's text, then every claim a later revision adds, under a comment naming that revision.  A
mutant claimed twice keeps the first reason.  Ids whose code is gone are reported (re-argue or drop them).

    python scripts/join_equivalents.py main h22-txn h22-logclient ... [--check]

Run it after the merges, then ``python scripts/remap_equivalents.py --check`` and
``pytest tests/test_reach.py -k every_listed``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from remap_equivalents import _HEADER, EQUIVALENTS, _tree_mutants, remap  # noqa: E402

from keos.checker.reach.mutation import enumerate_mutants  # noqa: E402


def claims(text: str) -> dict[str, str]:
    """Each claim's block (its ``[id]`` header and the lines up to the next header or section comment)."""
    blocks: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header is not None:
            current = header.group(1)
            blocks.setdefault(current, "")
            blocks[current] += line
        elif current is not None and not line.startswith("# --"):
            blocks[current] += line
        else:
            current = None
    return blocks


def join(texts: list[tuple[str, str]]) -> str:
    """The first text, then the claims each later text adds (``texts`` is ``(revision, remapped text)``)."""
    _, out = texts[0]
    seen = set(claims(out))
    for rev, text in texts[1:]:
        added = [block for mid, block in claims(text).items() if mid not in seen]
        seen.update(claims(text))
        if added:
            out = out.rstrip("\n") + f"\n\n# -- claims joined from {rev} --\n\n"
            out += "".join(block if block.endswith("\n\n") else block.rstrip("\n") + "\n\n" for block in added)
    return out.rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="+", help="git revisions whose lists are joined, the first one's text kept")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if the file would change")
    args = parser.parse_args()
    current = enumerate_mutants(ROOT)
    texts: list[tuple[str, str]] = []
    for rev in args.revisions:
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:docs/mutation/equivalent.toml"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            print(f"join_equivalents: error: {rev}: {shown.stderr.strip()}", file=sys.stderr)
            return 2
        base, old_texts = _tree_mutants(rev)
        old = {m.id: m for m in base}
        text, stats, problems = remap(shown.stdout, old, current, old_texts, ROOT)
        for p in problems:
            print(f"{rev}: unresolved {p}", file=sys.stderr)
        print(f"{rev}: {stats['kept']} kept, {stats['remapped']} remapped, {stats['unresolved']} unresolved")
        texts.append((rev, text))
    joined = join(texts)
    before = EQUIVALENTS.read_text(encoding="utf-8") if EQUIVALENTS.exists() else ""
    print(f"{len(claims(joined))} claims")
    if args.check:
        return 1 if joined != before else 0
    EQUIVALENTS.write_text(joined, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
