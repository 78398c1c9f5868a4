"""``keos mutate --reach`` on an edited tree: the reach map is carried across the edit by a line diff
(:mod:`keos.checker.reach.carry`), so a moved line keeps its scenarios and a new line is judged on its
file's scenarios instead of none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keos.checker.reach.carry import carry_reach, file_digest, line_map, record_sources
from keos.checker.reach.mutation import select_scenarios
from keos.checker.reach.mutators import Mutant

OLD = "def a():\n    return 1\n\n\ndef b(x):\n    if x:\n        return 2\n    return 3\n"
NEW = "import os\n\n\ndef a():\n    return 1\n\n\ndef b(x):\n    if x > 0:\n        return 2\n    return 3\n"


def _reach(root: Path) -> dict[str, Any]:
    (root / "model").mkdir(parents=True, exist_ok=True)
    (root / "model" / "m.py").write_text(OLD, encoding="utf-8")
    (root / "model" / "same.py").write_text("X = 1\n", encoding="utf-8")
    (root / "model" / "other.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    return {
        "scenarios": {"cheap": {"seconds": 1.0}, "dear": {"seconds": 9.0}},
        "reach": {"model/m.py": {"2": ["cheap"], "6": ["dear"], "7": ["dear"], "8": ["cheap", "dear"]},
                  "model/same.py": {"1": ["import"]}, "model/other.py": {"2": ["cheap"]}},
        "modules": [{"path": "model/m.py", "excluded_lines": [7]}],
        "sources": record_sources(root, ["model/m.py", "model/same.py", "model/other.py"]),
    }


def _mutant(line: int) -> Mutant:
    return Mutant(id="x", module="keos.model.m", path="model/m.py", folder="model", line=line, col=4,
                  end_line=line, end_col=9, operator="relational", function="b", original="x", replacement="y")


def test_line_map_keeps_unchanged_runs_and_drops_edited_lines() -> None:
    mapping = line_map(OLD.splitlines(), NEW.splitlines())
    assert mapping[1] == 4 and mapping[2] == 5 and mapping[5] == 8 and mapping[7] == 10 and mapping[8] == 11
    assert 6 not in mapping  # `if x:` became `if x > 0:`


def test_a_moved_line_keeps_its_scenarios_and_a_new_line_gets_its_files(tmp_path: Path) -> None:
    reach = _reach(tmp_path)
    (tmp_path / "model" / "m.py").write_text(NEW, encoding="utf-8")
    done = carry_reach(reach, tmp_path, ["cheap", "dear", "added"])
    assert done.recorded and done.changed == ["model/m.py"] and done.new_scenarios == ["added"]
    lines = reach["reach"]["model/m.py"]
    assert lines["5"] == ["added", "cheap"] and lines["11"] == ["added", "cheap", "dear"]
    assert lines["9"] == ["added", "cheap", "dear"]  # the edited guard: every scenario of its file
    assert "6" not in lines and "7" not in lines  # old lines 3-4 never ran: no stale neighbour's scenarios
    assert lines["1"] == ["added", "cheap", "dear"]  # `import os` is new
    assert reach["reach"]["model/same.py"] == {"1": ["import"]}  # module-level code: its rule is select_scenarios'
    assert reach["reach"]["model/other.py"] == {"2": ["added", "cheap"]}  # an unmeasured scenario may run it too
    assert reach["modules"][0]["excluded_lines"] == [10]
    assert reach["scenarios"]["added"]["seconds"] > 9.0  # unmeasured: judged after the measured ones
    # the selection mutate makes: the edited guard is not `uncovered`, a moved line is not a neighbour's
    assert select_scenarios(_mutant(9), reach) == ["cheap", "dear", "added"]
    assert select_scenarios(_mutant(5), reach) == ["cheap", "added"]
    assert "2 file" not in done.summary() and "carried" in done.summary()
    # carried once: the rewritten map now records today's text, so carrying again changes nothing
    assert reach["sources"]["model/m.py"]["sha256"] == file_digest(NEW)
    assert not carry_reach(reach, tmp_path, ["cheap"]).changed


def test_an_unchanged_tree_and_an_old_reach_file_are_left_as_they_are(tmp_path: Path) -> None:
    reach = _reach(tmp_path)
    before = repr(reach["reach"])
    assert carry_reach(reach, tmp_path, ["cheap"]).summary() == ""
    assert repr(reach["reach"]) == before
    # a scenario or gate check the reach data does not know joins every line a search ran, unchanged tree or not
    # (else a mutant is never judged by it: a new @differential check would select nothing)
    done = carry_reach(reach, tmp_path, ["cheap", "@added"])
    assert done.new_scenarios == ["@added"] and "@added" in done.summary() and not done.changed
    assert all("@added" in cs for lines in reach["reach"].values() for cs in lines.values() if cs != ["import"])
    reach = _reach(tmp_path)
    del reach["sources"]
    (tmp_path / "model" / "m.py").write_text(NEW, encoding="utf-8")
    done = carry_reach(reach, tmp_path)
    assert not done.recorded and "records no sources" in done.summary() and repr(reach["reach"]) == before


def test_a_moved_import_only_line_keeps_every_scenario_of_its_module(tmp_path: Path) -> None:
    """A table in a changed file (run at import only) that an edit moved stays import-only: a scenario added since
    the measurement must not make it look run by that scenario alone (session 29: `TransactionalSystem._HANDLERS`
    was given one new scenario and its mutants "survived" in a second)."""
    old = "TABLE = {\n    'a': 1,\n}\n\n\ndef f():\n    return TABLE['a']\n"
    new = "import os\n" + old
    (tmp_path / "model").mkdir(parents=True)
    (tmp_path / "model" / "m.py").write_text(old, encoding="utf-8")
    reach: dict[str, Any] = {
        "scenarios": {"cheap": {"seconds": 1.0}, "dear": {"seconds": 9.0}},
        "reach": {"model/m.py": {"1": ["import"], "2": ["import"], "7": ["cheap", "dear"]}},
        "modules": [],
        "sources": record_sources(tmp_path, ["model/m.py"]),
    }
    (tmp_path / "model" / "m.py").write_text(new, encoding="utf-8")
    carry_reach(reach, tmp_path, ["cheap", "dear", "added"])
    assert reach["reach"]["model/m.py"]["2"] == ["import"]  # the table's first line, one line down
    table = Mutant(id="t", module="keos.model.m", path="model/m.py", folder="model", line=2, col=8, end_line=4,
                   end_col=1, operator="table_entry", function="<module>", original="{'a': 1}", replacement="{}")
    assert select_scenarios(table, reach) == ["cheap", "dear", "added"]
