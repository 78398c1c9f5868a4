"""``scripts/remap_equivalents.py``: claims follow their mutants across edits that move lines and columns."""

from __future__ import annotations

from pathlib import Path

from script_loader import load_script

from keos.checker.reach.mutators import module_mutants

OLD = "def f(a):\n    return g(a, 1) + h(1)\n"
NEW = "import os\n\n\ndef f(a):\n    return gg(a, 1) + h(1)\n"


def _claims(ids: list[str]) -> str:
    return "".join(f"[{i}]\nreason = \"model/m.py:2: claim {n}\"\n\n" for n, i in enumerate(ids))


def test_identical_edits_of_one_line_keep_their_order_when_the_line_moves_and_its_columns_shift(tmp_path: Path) -> None:
    mod = load_script("remap_equivalents")
    old = module_mutants(OLD, "keos.model.m", "model/m.py", {})
    new = module_mutants(NEW, "keos.model.m", "model/m.py", {})
    ones = sorted((m for m in old if m.original == "1" and m.replacement == "2"), key=lambda m: m.col)
    assert len(ones) == 2  # the same edit twice on one line: only the rank tells them apart
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "m.py").write_text(NEW, encoding="utf-8")
    text, stats, problems = mod.remap(_claims([m.id for m in ones]), {m.id: m for m in old}, new,
                                      {"model/m.py": OLD}, tmp_path)
    want = sorted((m for m in new if m.original == "1" and m.replacement == "2"), key=lambda m: m.col)
    assert not problems and stats["remapped"] == 2 and stats["duplicate"] == 0
    assert text.index(want[0].id) < text.index("claim 0") < text.index(want[1].id) < text.index("claim 1")
    assert "model/m.py:5: claim 0" in text  # the reason's place moved with its mutant
