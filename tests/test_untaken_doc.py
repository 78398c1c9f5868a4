"""``scripts/untaken_doc.py``: the list of branches the gate never takes names a reason for each one nothing takes."""

from __future__ import annotations

from pathlib import Path

from script_loader import load_script


def _report() -> dict:
    return {
        "scenarios": {"a": {}, "b": {}},
        "totals": {"model": {"branches": 10, "branches_taken": 7, "branch_percent": 70.0, "partial_guards": 3}},
        "untaken": [
            {"path": "model/m.py", "from": 1, "to": 2, "kind": "partial", "why": "set:reach", "taken_by": ["r1"]},
            {"path": "model/m.py", "from": 2, "to": 3, "kind": "partial", "why": "variant", "taken_by": ["v1"]},
            {"path": "model/m.py", "from": 3, "to": 4, "kind": "partial", "why": "nothing", "taken_by": []},
            {"path": "model/m.py", "from": 4, "to": 5, "kind": "partial", "why": "nothing", "taken_by": []},
        ],
    }


def test_every_branch_nothing_takes_needs_a_reason(tmp_path: Path) -> None:
    mod = load_script("untaken_doc")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "m.py").write_text("if a:\nif b:  # note\nif c | d:\nif e:\n", encoding="utf-8")
    text, missing = mod.render(_report(), {"model/m.py:3->4": "hole (input): nobody sends c"}, tmp_path, "REV")
    assert missing == ["model/m.py:4->5"]
    assert "| `model/m.py:1->2` | `if a:` | `r1` |" in text
    assert "| `model/m.py:2->3` | `if b:` | `v1` |" in text
    assert "| `model/m.py:3->4` | `if c \\| d:` | hole (input): nobody sends c |" in text
    assert "| `model/m.py:4->5` | `if e:` | **no reason given** |" in text
    assert "**7 of 10 branches" in text and "1 holes" in text


def test_the_checked_in_reasons_parse_and_are_keyed_by_branch() -> None:
    import tomllib

    mod = load_script("untaken_doc")
    reasons = tomllib.loads(mod.REASONS.read_text(encoding="utf-8"))["reasons"]
    assert reasons and all(k.startswith("model/") and "->" in k and v.strip() for k, v in reasons.items())


def test_a_plain_report_is_classified_by_the_carried_table_and_new_branches_are_flagged(tmp_path: Path) -> None:
    mod = load_script("untaken_doc")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "m.py").write_text("if a:\nif b:\nif c:\nif e:\n", encoding="utf-8")
    report = _report()
    del report["untaken"]  # `keos coverage` without --explain: only the gate's missing branches
    report["modules"] = [{"path": "model/m.py", "missing_branches": [[1, 2, "partial"], [2, 3, "partial"],
                                                                     [3, 4, "partial"], [4, 5, "partial"]]}]
    elsewhere = {"model/m.py:1->2": "set:reach: r1", "model/m.py:2->3": "variant: v1"}
    text, missing = mod.render(report, {"model/m.py:3->4": "hole (input): nobody sends c"}, tmp_path, "REV",
                               elsewhere)
    assert missing == ["model/m.py:4->5"]
    assert "| `model/m.py:1->2` | `if a:` | `r1` |" in text and "| `model/m.py:2->3` | `if b:` | `v1` |" in text
    assert "| `model/m.py:3->4` | `if c:` | hole (input): nobody sends c |" in text
    assert "## New since the last `keos coverage --explain`" in text and "**1 new since the last" in text


def test_carrying_moves_keys_with_their_lines_and_drops_edited_ones() -> None:
    mod = load_script("untaken_doc")
    old = {"model/m.py": "def f():\n    if a:\n        x()\n    if b:\n        y()\n"}
    new = {"model/m.py": "import z\n\ndef f():\n    if a:\n        x()\n    if b2:\n        y()\n"}
    keys = {"model/m.py:2->3": "r1", "model/m.py:2->-1": "exit", "model/m.py:4->5": "r2", "model/o.py:1->2": "r3"}
    moved, lost = mod.carry_keys(keys, old, new)
    assert moved == {"model/m.py:4->5": "r1", "model/m.py:4->-3": "exit", "model/o.py:1->2": "r3"}
    assert lost == ["model/m.py:4->5"]
