"""``keos coverage`` and ``keos mutate`` (issue 23): reach and kill power, measured on the real model.

The expensive part (one coverage run of ``idempotence_retry``, a few mutant processes) is shared by
a module fixture; the whole file takes well under a minute on two cores.  Mutants are found by what
they change (file, handler, operator, source text), never by a hard-coded id, so an edit elsewhere
in a module does not break the tests.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from keos.checker.cli.main import main
from keos.checker.reach import mutation as mu
from keos.checker.reach.branches import CoverageRun, exclusions, measure, package_root
from keos.checker.reach.carry import file_digest
from keos.checker.reach.mutators import Mutant, apply_mutant, error_classes, module_mutants, mutant_id

ROOT = package_root()
CLASSES = error_classes(ROOT / "model" / "protocol" / "errors.py")
SCENARIO = "idempotence_retry"


@pytest.fixture(scope="module")
def reach_run(tmp_path_factory: pytest.TempPathFactory) -> CoverageRun:
    """One coverage run of ``idempotence_retry`` (about 8 s) for the module: its report is ``reach``, and
    ``--explain``'s test reads it as the gate's run (``explain_untaken`` only reads it)."""
    return measure([SCENARIO], tmp_path_factory.mktemp("coverage"))


@pytest.fixture(scope="module")
def reach(reach_run: CoverageRun) -> dict[str, Any]:
    """The reach map the mutants are selected by: ``reach_run``'s report, written as reach.json."""
    out = reach_run.data_file.parent
    data = reach_run.to_json()
    (out / "reach.json").write_text(json.dumps(data), encoding="utf-8")
    data["_file"] = str(out / "reach.json")
    return data


def _mutants(path: str) -> list[Mutant]:
    name = "keos." + path[:-3].replace("/", ".")
    return module_mutants((ROOT / path).read_text(encoding="utf-8"), name, path, CLASSES)


def _find(path: str, operator: str, original: str, replacement: str = "") -> Mutant:
    found = [m for m in _mutants(path) if m.operator == operator and original in m.original
             and replacement in m.replacement]
    assert found, f"no {operator} mutant of {original!r} in {path}: the model changed, pick another mutant"
    return found[0]


# -- the mutator ----------------------------------------------------------------------------------


def test_mutant_ids_are_stable_unique_and_keep_line_numbers() -> None:
    first, again = _mutants("model/log/producer_state.py"), _mutants("model/log/producer_state.py")
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first)
    m = first[0]
    assert m.id == mutant_id(m.module, m.line, m.col, m.end_line, m.end_col, m.operator,
                             ast_text(m))
    operators = {m.operator for m in first}
    assert {"relational", "negate", "drop_guard", "error_swap", "off_by_one"} <= operators, operators
    tree = apply_mutant((ROOT / m.path).read_text(encoding="utf-8"), m.module, m.id, CLASSES)
    assert compile(tree, m.path, "exec") is not None
    with pytest.raises(KeyError):
        apply_mutant((ROOT / m.path).read_text(encoding="utf-8"), m.module, "000000000000", CLASSES)


def ast_text(m: Mutant) -> str:
    """The full replacement text of ``m`` (the row keeps a shortened one)."""
    from keos.checker.reach.mutators import _pairs

    source = (ROOT / m.path).read_text(encoding="utf-8")
    for mid, _p, text in _pairs(source, m.module, CLASSES):
        if mid == m.id:
            return text
    raise AssertionError(f"{m.id} not found again")


def test_operators_on_a_small_module() -> None:
    source = (
        'RETRY = {"a": 1, "b": 2}\n'
        "def f(x, y):\n"
        '    """Docstrings are not mutated."""\n'
        "    if x < 3 and y:\n"
        "        return Errors.NOT_COORDINATOR\n"
        "    z = x + 1  # no mutate: the increment is a label\n"
        "    return x == y\n"
    )
    ms = module_mutants(source, "keos.model.fake", "model/fake.py", CLASSES)
    edits = {(m.operator, m.original, m.replacement) for m in ms}
    assert ("boundary", "x < 3", "x <= 3") in edits
    assert ("relational", "x < 3", "x >= 3") in edits
    assert ("drop_condition", "x < 3 and y", "y") in edits
    assert ("bool_operator", "x < 3 and y", "x < 3 or y") in edits
    assert ("negate", "x < 3 and y", "not (x < 3 and y)") in edits
    assert ("off_by_one", "3", "4") in edits and ("off_by_one", "3", "2") in edits
    assert ("relational", "x == y", "x != y") in edits
    assert ("table_entry", "{'a': 1, 'b': 2}", "{'b': 2}") in edits
    swaps = {r for o, _, r in edits if o == "error_swap"}
    assert "Errors.NOT_COORDINATOR" not in swaps and len(swaps) >= 2  # within its class and across
    assert any(o == "drop_guard" for o, _, _ in edits)
    assert not [m for m in ms if m.line == 6], "a '# no mutate:' line was mutated"
    assert not [m for m in ms if "Docstrings" in m.original]
    assert {m.function for m in ms} == {"<module>", "f"}


def test_drop_update_forgets_one_state_update() -> None:
    source = (
        "def f(md, epoch):\n"
        "    md = md._replace(producer_epoch=epoch, last_producer_epoch=md.producer_epoch)\n"
        "    md = md._replace(pending_state='')\n"
        "    count = count_of(md)\n"
        "    count = count + 1\n"
        "    return md, count\n"
        "TABLE = dict(a=1)._replace(a=2)\n"
    )
    ms = [m for m in module_mutants(source, "keos.model.fake", "model/fake.py", CLASSES) if m.operator == "drop_update"]
    edits = {(m.line, m.replacement) for m in ms}
    assert (2, "md._replace(last_producer_epoch=md.producer_epoch)") in edits  # one keyword forgotten
    assert (2, "md._replace(producer_epoch=epoch)") in edits
    assert (3, "md") in edits  # the only keyword: the call is its receiver
    assert (5, "pass") in edits  # a rebinding from the old value, removed
    assert not [m for m in ms if m.line == 4], "a first binding is not an update"
    assert not [m for m in ms if m.line == 7], "module-level tables are table_entry's, not drop_update's"
    for m in ms:
        assert compile(apply_mutant(source, m.module, m.id, CLASSES), "f.py", "exec") is not None


def test_no_mutate_keeps_a_whole_statement_out_and_weakened_variants_are_fixtures() -> None:
    source = (
        "def observer(old, new):  # no mutate: ghost observer of a property\n"
        "    return old < new\n"
        "def handler(x):\n"
        "    return x < 3\n"
        "Alias = tuple[str, tuple[int, ...]]\n"
        "TABLE = (\n"
        "    Variant(name='kafka', flags=F(check=True)),\n"
        "    Variant(name='weak', flags=F(check=False), weakened=True, breaks=('p',)),\n"
        ")\n"
    )
    ms = module_mutants(source, "keos.model.fake", "model/fake.py", CLASSES)
    assert {m.line for m in ms if m.line <= 4} == {4}, "the marked def kept its whole body out"
    assert not [m for m in ms if m.line == 5], "a type alias is not a table"
    assert not [m for m in ms if m.line == 8], "a weakened variant is keos mutants' fixture"
    assert ("constant", 7) in {(m.operator, m.line) for m in ms}  # the protocol's own flags are mutated
    drops = [m for m in ms if m.operator == "table_entry"]
    assert len(drops) == 1 and "weak" in drops[0].replacement  # dropping the protocol's entry, not the fixture's


def test_assert_statements_are_not_mutated() -> None:
    # An assert states the model's own invariant: its mutants are self-evident kills or equivalents.
    source = "def f(x):\n    assert x is not None and x > 0, 'no x'\n    return x == 1\n"
    ms = module_mutants(source, "keos.model.demo", "model/demo.py", CLASSES)
    assert ms and {m.line for m in ms} == {3}, ms


def test_stratified_sample_is_deterministic_and_covers_every_module() -> None:
    everything = mu.enumerate_mutants(ROOT, ["model/log/*", "model/protocol/*"])
    modules = {m.path for m in everything}
    a = mu.stratified_sample(everything, 30, 1)
    assert [m.id for m in a] == [m.id for m in mu.stratified_sample(everything, 30, 1)]
    assert len(a) == 30 and {m.path for m in a} == modules
    assert [m.id for m in a] != [m.id for m in mu.stratified_sample(everything, 30, 2)]


# -- coverage -------------------------------------------------------------------------------------


def test_coverage_records_which_scenario_reaches_each_line(reach: dict[str, Any]) -> None:
    model = reach["totals"]["model"]
    assert 0 < model["branches_taken"] < model["branches"]
    lines = reach["reach"]["model/log/producer_state.py"]
    assert any(SCENARIO in ctxs for ctxs in lines.values())
    assert any(ctxs == ["import"] for ctxs in lines.values())  # module-level lines run at import only
    state = next(m for m in reach["modules"] if m["path"] == "model/log/producer_state.py")
    assert state["functions"] and all("missing_branches" in f for f in state["functions"])
    partial = {a for a, _, kind in state["missing_branches"] if kind == "partial"}
    assert set(state["partial_guards"]) == partial
    assert reach["scenarios"][SCENARIO]["seconds"] > 0 and not reach["partial"]
    # the measured files' text, so keos mutate can carry the map across a later edit (checker/reach/carry.py)
    src = reach["sources"]["model/log/producer_state.py"]
    assert src["sha256"] == file_digest((package_root() / "model/log/producer_state.py").read_text(encoding="utf-8"))
    assert set(reach["sources"]) == {m["path"] for m in reach["modules"]}


def test_exclusion_marks_are_listed_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "if x:  # unreachable: the producer always has an id here\n"
        "    pass\n"
        "while y:  # no branch: runs once at least\n"
        "    pass\n"
        "z = 1  # pragma: no cover\n"
        "if bad:  # input: a hand-edited trace names an unknown producer\n"
        "    pass\n", encoding="utf-8")
    got = exclusions(tmp_path, ["m.py"])
    assert [(e["line"], e["kind"], e["reason"]) for e in got] == [
        (1, "unreachable", "the producer always has an id here"),
        (3, "no branch", "runs once at least"),
        (5, "pragma: no cover", "no reason given"),
        (6, "input", "a hand-edited trace names an unknown producer"),
    ]


# -- mutants: killed, survived, crashed, resumed -------------------------------------------------


def _job(m: Mutant | None, reach: dict[str, Any], module: str = "", file: str = "") -> dict[str, Any]:
    return {"module": m.module if m else module, "file": str(ROOT / m.path) if m else file,
            "mutant": m.id if m else None, "scenarios": [SCENARIO], "variant": None, "budget_s": 120,
            "untested_before": {SCENARIO: reach["scenarios"][SCENARIO]["untested"]}}


def test_a_scenario_read_from_a_file_reaches_the_worker_by_its_path(reach: dict[str, Any], tmp_path: Path) -> None:
    """``--scenario path.toml``: the worker gets the file's absolute path (not the name, which it would look up
    among the built-in scenarios and fail to load, a false ``load`` kill)."""
    text = (ROOT / "scenarios" / f"{SCENARIO}.toml").read_text(encoding="utf-8")
    (tmp_path / "mine.toml").write_text(text.replace(f'name = "{SCENARIO}"', 'name = "mine"'), encoding="utf-8")
    data = {"scenarios": {SCENARIO: {"ref": SCENARIO}, "mine": {"ref": str(tmp_path / "mine.toml")}}}
    refs = mu.scenario_refs(data)
    assert refs == {SCENARIO: SCENARIO, "mine": str((tmp_path / "mine.toml").resolve())}
    m = _find("model/log/producer_state.py", "relational", "last_seq == last_seq", "!=")
    job = _job(m, reach) | {"scenarios": [refs["mine"]], "untested_before": {"mine": []}}
    row = mu.run_job(job)
    assert row["status"] == "killed" and row["kind"] == "violation" and row["scenario"] == "mine", row


def test_a_killable_mutant_is_killed_with_its_invariant_and_steps(reach: dict[str, Any]) -> None:
    # The leader's duplicate check compares the batch's last sequence: flipped, a retried batch is appended twice.
    m = _find("model/log/producer_state.py", "relational", "last_seq == last_seq", "!=")
    assert mu.select_scenarios(m, reach) == [SCENARIO]
    row = mu.run_job(_job(m, reach))
    assert row["status"] == "killed", row
    # the duplicate append breaks no_duplicate_append; the leader's answer to it (an append where Kafka answers the
    # duplicate's offset) breaks produce_answer_per_kafka at the same step: either is the first violation found
    assert row["kind"] == "violation" and row["steps"] > 0
    assert row["invariant"] in {"no_duplicate_append", "produce_answer_per_kafka"}, row


def test_the_unmutated_model_survives(reach: dict[str, Any]) -> None:
    # The identity "mutant" (no edit) is the equivalent mutant by definition: it must survive -- also on
    # scenarios with a permitted counterexample, where a search stopped at the first counterexample would
    # leave invariants untested (connect_heterogeneous_cluster, authz_pid_hijack).
    job = _job(None, reach, "keos.model.log.producer_state", str(ROOT / "model/log/producer_state.py"))
    others = ["connect_heterogeneous_cluster", "authz_pid_hijack"]
    job["scenarios"] = [SCENARIO, *others]
    job["untested_before"].update({name: [] for name in others})
    row = mu.run_job(job)
    assert row["status"] == "survived", row
    assert row["scenarios_run"] == [SCENARIO, *others]


def test_a_mutant_that_breaks_the_model_contract_is_killed_as_contract(reach: dict[str, Any]) -> None:
    # DropMessage's step re-checks that the message is a channel's head; flipped, step() refuses the
    # DropMessage actions() lists: the model contradicts its interface, which fails the gate (exit 3).
    m = _find("model/systems/idempotence.py", "relational", "env not in net.channel_heads", "env in")
    row = mu.run_job(_job(m, reach))
    assert row["status"] == "killed" and row["kind"] == "contract", row
    assert row["invariant"] == "model_contract" and "listed as enabled but step() refused it" in row["detail"]
    assert row["steps"] >= 1 and row["scenario"] == SCENARIO


def test_a_mutant_that_does_not_load_is_killed_as_load(reach: dict[str, Any], tmp_path: Path) -> None:
    # A copy of a real module plus a table whose entry the mutant removes: the import raises KeyError.
    path = tmp_path / "producer_expiry.py"
    path.write_text((ROOT / "model/log/producer_expiry.py").read_text(encoding="utf-8")
                    + '\n_TABLE = {"entry": 1}\n_VALUE = _TABLE["entry"]\n', encoding="utf-8")
    ms = module_mutants(path.read_text(encoding="utf-8"), "keos.model.log.producer_expiry",
                        "model/log/producer_expiry.py", CLASSES)
    m = next(x for x in ms if x.operator == "table_entry" and x.original == "{'entry': 1}")
    job = _job(None, reach, "keos.model.log.producer_expiry", str(path))
    job["mutant"] = m.id
    row = mu.run_job(job)
    assert row["status"] == "killed" and row["kind"] == "load" and row["invariant"] == "model_loads", row
    assert "KeyError" in row["detail"]


def test_a_mutant_that_cannot_be_compiled_is_crashed_not_killed(reach: dict[str, Any]) -> None:
    # No such mutant: the worker fails before the model runs, which is keos's error, never a kill.
    job = _job(None, reach, "keos.model.log.producer_expiry", str(ROOT / "model/log/producer_expiry.py"))
    job["mutant"] = "000000000000"
    row = mu.run_job(job)
    assert row["status"] == "crashed" and "KeyError" in row["detail"], row


def test_resume_skips_done_ids_and_equivalents_leave_the_score(reach: dict[str, Any], tmp_path: Path) -> None:
    ms = _mutants("model/log/producer_state.py")
    done, equivalent = ms[0], ms[1]
    fake = {**done.to_json(), "status": "killed", "kind": "violation", "scenario": SCENARIO,
            "invariant": "no_duplicate_append", "steps": 3, "seconds": 0.0, "cpu_seconds": 0.0, "detail": ""}
    (tmp_path / "mutation-results.jsonl").write_text(json.dumps(fake) + "\n", encoding="utf-8")
    # No scenario reaches anything in this reach map, so the only rows are the resumed, equivalent and uncovered.
    empty = {**reach, "reach": {}}
    run = mu.evaluate_mutants(ms[:4], empty, tmp_path, resume=True, jobs=1,
                              equivalents={equivalent.id: "same behaviour"})
    status = {r["id"]: r["status"] for r in run.rows}
    assert run.resumed == 1 and status[done.id] == "killed"
    assert status[equivalent.id] == "equivalent"
    assert [status[m.id] for m in ms[2:4]] == ["uncovered", "uncovered"]
    total = mu.score(run.rows)["total"]
    assert total["decided"] == 3 and total["score"] == pytest.approx(100 / 3, abs=0.01)
    assert total["by_contract"] == 0  # killed by a property, not by the model's own contract
    contract = [{**r, "status": "killed", "kind": "contract"} for r in run.rows if r["status"] == "uncovered"]
    assert mu.score([*run.rows, *contract])["total"]["by_contract"] == 2
    lines = (tmp_path / "mutation-results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3  # the resumed row, plus the two uncovered ones appended (equivalents are not)


def test_resume_takes_the_mutants_fields_from_this_tree_and_skips_rows_it_did_not_write(
        reach: dict[str, Any], tmp_path: Path) -> None:
    """A resumed row keeps its outcome; folder and location come from the current tree, so a row written by an
    older keos (no ``folder``) still scores; a line that is not a row of this tool runs its mutant again."""
    ms = _mutants("model/log/producer_state.py")
    old = {k: v for k, v in ms[0].to_json().items() if k != "folder"} | {"status": "survived", "line": 1}
    junk = [json.dumps({"id": ms[1].id, "status": "maybe"}), json.dumps([ms[2].id]), "{cut"]
    (tmp_path / "mutation-results.jsonl").write_text("\n".join([json.dumps(old), *junk]) + "\n", encoding="utf-8")
    run = mu.evaluate_mutants(ms[:3], {**reach, "reach": {}}, tmp_path, resume=True, jobs=1)
    by_id = {r["id"]: r for r in run.rows}
    assert run.resumed == 1
    assert by_id[ms[0].id]["status"] == "survived" and by_id[ms[0].id]["folder"] == "model/log"
    assert by_id[ms[0].id]["line"] == ms[0].line
    assert by_id[ms[1].id]["status"] == by_id[ms[2].id]["status"] == "uncovered"
    assert mu.score(run.rows)["model/log"]["survived"] == 1


def test_rerun_finds_an_earlier_runs_mutants_by_id_or_by_the_same_edit_when_lines_moved(tmp_path: Path) -> None:
    ms = _mutants("model/log/producer_state.py")
    same, moved, killed, gone = ms[0], ms[1], ms[2], ms[3]
    rows = [same.to_json() | {"status": "survived"},
            moved.to_json() | {"id": "0" * 12, "line": moved.line + 7, "status": "timeout"},  # lines moved since
            killed.to_json() | {"status": "killed"},
            gone.to_json() | {"id": "1" * 12, "original": "code that is no longer there", "status": "survived"},
            gone.to_json() | {"id": "2" * 12, "path": "model/log/partition.py", "status": "survived"}]  # not asked
    matched, left = mu.match_earlier(ms, rows)
    assert [m.id for m in matched] == [same.id, moved.id]  # killed is not taken by default
    assert [r["id"] for r in left] == ["1" * 12]
    matched, _ = mu.match_earlier(ms, rows, ("killed",))
    assert [m.id for m in matched] == [killed.id]
    # a sample names one of several mutants with the same edit: the one nearest its old line is meant, not the first
    by_edit = collections.defaultdict(list)
    for m in ms:
        by_edit[mu.edit_key(m.to_json())].append(m)
    later = next(v for v in by_edit.values() if len(v) > 1)[-1]
    row = later.to_json() | {"id": "3" * 12, "line": later.line + 2, "status": "survived"}
    assert [m.id for m in mu.match_earlier(ms, [row])[0]] == [later.id]
    # ... unless the lines moved further than the equal edits lie apart: a line diff of the old tree (a --reach
    # file's sources) names the old line's new number, which wins over nearness (session 32, _log_append_failed)
    first = next(v for v in by_edit.values() if len(v) > 1)[0]
    row = first.to_json() | {"id": "4" * 12, "line": first.line - 1, "status": "survived"}
    assert [m.id for m in mu.match_earlier(ms, [row])[0]] == [first.id]  # nearness alone
    maps = {later.path: {first.line - 1: later.line}}
    assert [m.id for m in mu.match_earlier(ms, [row], line_maps=maps)[0]] == [later.id]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{cut", encoding="utf-8")
    assert len(mu.load_rows(tmp_path / "r.jsonl")) == 5  # a last line cut by a kill is dropped
    (tmp_path / "mutation.json").write_text(json.dumps({"rows": rows}), encoding="utf-8")
    assert mu.load_rows(tmp_path)[1]["status"] == "timeout"
    (tmp_path / "bad.json").write_text(json.dumps({"rows": [1, 2]}), encoding="utf-8")
    with pytest.raises(mu.MutationError, match="not the results"):
        mu.load_rows(tmp_path / "bad.json")


def test_keos_mutate_end_to_end(reach: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI: a seeded stratified sample over model/log, local processes, every output written."""
    out = tmp_path / "mutate"
    argv = ["mutate", "--local-python", "--jobs", "2", "--sample", "6", "--seed", "1", "--module", "model/log/*",
            "--operator", "relational", "--reach", reach["_file"], "--out", str(out),
            "--html", str(tmp_path / "m.html"), "--junit", str(tmp_path / "m.xml"), "--json", str(tmp_path / "m.json")]
    assert main(argv) == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert len(summary["rows"]) == 6 and not summary["partial"]
    assert {r["folder"] for r in summary["rows"]} == {"model/log"}
    assert set(summary["scores"]) == {"model/log", "total"}
    import pyarrow.parquet as pq

    table = pq.read_table(out / "mutation.parquet")
    assert table.num_rows == 6 and "invariant" in table.column_names
    assert "<testsuites" in (tmp_path / "m.xml").read_text(encoding="utf-8")
    assert "mutation score" in capsys.readouterr().out
    # --resume: nothing left to run, the same rows come back.
    assert main([*argv, "--resume"]) == 0
    again = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert again["resumed"] == sum(1 for r in summary["rows"] if r["status"] not in ("equivalent", "excluded"))
    assert [r["status"] for r in again["rows"]] == [r["status"] for r in summary["rows"]]


def test_reach_data_of_another_tree_still_mutates_this_one(
        reach: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--reach`` measured in another checkout: the mutants are built from this tree's files (a root taken from
    the reach data made every worker mutate -- or fail to find -- the other checkout's module)."""
    data = json.loads(Path(reach["_file"]).read_text(encoding="utf-8")) | {"root": str(tmp_path / "elsewhere")}
    (tmp_path / "reach.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "mutate"
    argv = ["mutate", "--local-python", "--jobs", "1", "--sample", "2", "--seed", "1", "--module",
            "model/log/producer_state.py", "--operator", "relational", "--reach", str(tmp_path / "reach.json"),
            "--out", str(out), "--json", str(tmp_path / "m.json")]
    assert main(argv) == 0, capsys.readouterr().err
    assert "note: --reach was measured in" in capsys.readouterr().out
    rows = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["rows"]
    decided = ("killed", "survived", "uncovered", "equivalent", "excluded")
    assert rows and all(r["status"] in decided for r in rows), rows


def test_a_cpu_budget_ends_a_long_mutant_as_timeout(reach: dict[str, Any]) -> None:
    # The unmutated model on the heaviest default scenario needs many CPU seconds (81k states, over ten); four
    # are allowed.  The budget counts the worker's whole CPU time, and loading the model and the scenario took
    # about one second on its own (a 1 s budget ran out before the search began on a loaded CI machine).
    job = _job(None, reach, "keos.model.log.producer_state", str(ROOT / "model/log/producer_state.py"))
    job.update(scenarios=["txn_coordinator_faults"], budget_s=0, cpu_budget_s=4)
    row = mu.run_job(job)
    assert row["status"] == "timeout" and "CPU budget" in row["detail"], row
    # the soft limit is caught in the worker: the row says which search the budget ran out in
    assert row["scenario"] == "txn_coordinator_faults" and row["scenarios_run"] == ["txn_coordinator_faults"], row


def test_the_cpu_budget_grows_with_what_the_selected_searches_cost_the_unmutated_model(
        reach: dict[str, Any]) -> None:
    cheap, dear = "authz_acls_enforced", "txn_coordinator_faults"
    base = {"scenarios": {cheap: {"cpu_seconds": 0.05}, dear: {"cpu_seconds": 15.0}},
            "variant_reach": {"searches": {"variant:no_idempotence": {"cpu_seconds": 0.2}}}}
    assert mu.baseline_cpu([cheap, dear, "variant:no_idempotence", "unknown"], base) == pytest.approx(15.25)
    assert mu.cpu_budget_for([cheap], base, 40.0, 1.0) == 40.0  # the floor
    assert mu.cpu_budget_for([cheap, dear], base, 10.0, 2.0) == pytest.approx(30.1)
    assert mu.cpu_budget_for([cheap, dear], base, 10.0, 0.0) == 10.0  # factor 0: the flat budget
    assert mu.cpu_budget_for([cheap, dear], base, 0.0, 2.0) == 0.0  # no --cpu-budget: no limit at all


def test_a_gate_check_that_is_not_a_scenario_kills_an_assignor_mutant() -> None:
    """``keos assignors`` is part of the gate: a defect of an assignor is killed there (``@assignors``)."""
    from keos.checker.reach.gate_checks import run_gate_check

    assert run_gate_check("@assignors").passed
    m = _find("model/coordinator/group/assignors.py", "relational", "index < extra", ">=")
    base = {"module": m.module, "file": str(ROOT / m.path), "scenarios": ["@assignors"], "variant": None,
            "budget_s": 120, "untested_before": {}}
    row = mu.run_job({**base, "mutant": m.id})
    assert row["status"] == "killed" and row["kind"] == "gate_check", row
    assert row["invariant"] == "range:exactly_once" and "assigned to nobody" in row["detail"]
    assert mu.run_job({**base, "mutant": None})["status"] == "survived"


def test_the_recorded_differential_kills_a_leader_mutant_in_the_gate() -> None:
    """``keos differential --replay`` is part of the gate (``@differential``): a leader that misses a duplicate
    of the batch at offset 0 answers a retry differently from Kafka's recorded answer, and is killed there."""
    found = [x for x in _mutants("model/log/producer_state.py") if x.operator == "off_by_one"
             and x.function == "_duplicate" and (x.original, x.replacement) == ("0", "1")]
    assert len(found) == 1, "the duplicate rule changed: pick another mutant"
    m = found[0]
    base = {"module": m.module, "file": str(ROOT / m.path), "scenarios": ["@differential"], "variant": None,
            "budget_s": 120, "untested_before": {}}
    row = mu.run_job({**base, "mutant": m.id})
    assert row["status"] == "killed" and row["kind"] == "gate_check", row
    assert row["invariant"].startswith("differential:"), row
    assert mu.run_job({**base, "mutant": None})["status"] == "survived"


def test_a_mutant_that_lets_a_weakened_variant_escape_is_killed_by_keos_mutants(
        reach: dict[str, Any], tmp_path: Path) -> None:
    """The gate's ``keos mutants`` fails when a defect masks a weakened rule: such a mutant is killed there.

    A copy of the leader's producer state whose cache keeps at least five batches when a module constant
    says so (False here, so the copy behaves as the model): its mutant (the constant flipped) leaves Kafka's
    behaviour alone (idempotence_retry survives) but hides ``small_duplicate_window`` (a one-batch cache).
    """
    path = tmp_path / "producer_state.py"
    source = (ROOT / "model/log/producer_state.py").read_text(encoding="utf-8")
    original = "(*entry.batches, meta)[-flags.duplicate_window :]"
    assert original in source, "the model changed: pick another line to widen"
    source = source.replace(original, "(*entry.batches, meta)[-(max(flags.duplicate_window, 5) if LENIENT_CACHE "
                                      "else flags.duplicate_window) :]") + "\nLENIENT_CACHE = False\n"
    path.write_text(source, encoding="utf-8")
    ms = module_mutants(source, "keos.model.log.producer_state", "model/log/producer_state.py", CLASSES)
    m = next(x for x in ms if x.operator == "constant" and x.original == "False" and "LENIENT" in source.splitlines()[
        x.line - 1])
    job = _job(None, reach, "keos.model.log.producer_state", str(path))
    job["scenarios"] = [SCENARIO, "variant:small_duplicate_window"]
    assert mu.run_job(job)["status"] == "survived"  # the copy as it is: the variant is caught, as the gate expects
    row = mu.run_job({**job, "mutant": m.id})
    assert row["status"] == "killed" and row["kind"] == "weakened_variant", row
    assert row["invariant"] == "small_duplicate_window" and row["scenarios_run"] == job["scenarios"]
    assert "not caught" in row["detail"]


def test_variants_are_selected_by_the_lines_their_searches_ran(reach: dict[str, Any]) -> None:
    m = _find("model/log/producer_state.py", "relational", "last_seq == last_seq", "!=")
    assert mu.select_variants(m, reach) == []  # no variant reach in the data: scenarios only
    lines = {str(ln): ["variant:b", "variant:a"] for ln in range(m.line, m.end_line + 1)}
    data = {**reach, "variant_reach": {"searches": {"variant:a": {"seconds": 2.0}, "variant:b": {"seconds": 1.0}},
                                       "reach": {m.path: lines}}}
    assert mu.select_variants(m, data) == ["variant:b", "variant:a"]  # cheapest first
    other = _find("model/log/producer_state.py", "drop_update", "batches=(*entry.batches")
    assert other.line != m.line and mu.select_variants(other, data) == []


def test_coverage_of_the_gate_counts_keos_assignors(tmp_path: Path) -> None:
    """The gate's reach includes ``keos assignors``: its context reaches the assignors' lines."""
    run = measure(["@assignors"], tmp_path)
    data = run.to_json()
    assert data["scenarios"]["@assignors"]["gate_check"] and data["scenarios"]["@assignors"]["violated"] == []
    lines = data["reach"]["model/coordinator/group/assignors.py"]
    assert any("@assignors" in ctxs for ctxs in lines.values())


def test_explain_says_what_takes_each_branch_the_gate_never_takes(reach_run: CoverageRun, tmp_path: Path) -> None:
    """--explain: a branch untaken by the measured searches is taken by a named set's scenario, only by a
    weakened variant (run as keos mutants runs it), or by nothing; each row names what takes it."""
    from keos.checker.reach.branches import explain_untaken, variant_reach

    gate = reach_run  # the module's coverage run of SCENARIO
    other = measure(["variant:small_duplicate_window", "reach_idempotence_reorder_restart"], tmp_path / "other")
    assert other.scenarios["variant:small_duplicate_window"]["violated"] == []  # caught, as the gate expects
    rows = explain_untaken(gate, other, {"reach_idempotence_reorder_restart": ["demo"]})
    missing = {(m["path"], a, b) for m in gate.modules for a, b, _ in m["missing_branches"]}
    assert {(r["path"], r["from"], r["to"]) for r in rows} == missing
    whys = {r["why"] for r in rows}
    assert {"set:demo", "nothing"} <= whys and whys <= {"set:demo", "variant", "nothing"}
    for r in rows:
        assert (r["why"] == "nothing") == (not r["taken_by"])
        if r["why"] == "set:demo":
            assert r["taken_by"] == ["reach_idempotence_reorder_restart"]
        if r["why"] == "variant":
            assert r["taken_by"] == ["small_duplicate_window"]
    # What keos mutate reads to judge mutants on the weakened variants too: only the variant's lines, by context.
    vr = variant_reach(other)
    assert list(vr["searches"]) == ["variant:small_duplicate_window"]
    cache = vr["reach"]["model/log/producer_state.py"]
    assert cache and all(ctxs == ["variant:small_duplicate_window"] for ctxs in cache.values())


def test_explain_flags_are_checked_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--explain-set", "reach"]) == 2
    assert "--explain-set goes with --explain" in capsys.readouterr().err
    assert main(["coverage", "--explain", "--explain-set", "no_such_set"]) == 2
    assert "--explain-set no_such_set" in capsys.readouterr().err


def test_a_protocol_flag_default_runs_on_the_scenarios_that_read_the_flag() -> None:
    # A ProtocolFlags default runs at import only: its mutant goes to the scenarios that run a line reading the flag.
    lines = (ROOT / "model/variants.py").read_text(encoding="utf-8").splitlines()
    n = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("connect_abort_commits_offsets: bool"))
    reader = next(
        i for i, text in enumerate((ROOT / "model/connect/source_task.py").read_text(encoding="utf-8").splitlines(), 1)
        if ".connect_abort_commits_offsets" in text
    )
    reach = {
        "root": str(ROOT),
        "scenarios": {"boundaries": {"seconds": 1.0}, "other": {"seconds": 0.5}},
        "reach": {
            "model/variants.py": {str(n): ["import"], "1": ["other"]},
            "model/connect/source_task.py": {str(reader): ["boundaries"]},
        },
    }
    m = Mutant("x", "keos.model.variants", "model/variants.py", "model", n, 0, n, 1, "constant", "ProtocolFlags",
               "True", "False")
    assert mu.select_scenarios(m, reach) == ["other", "boundaries"]


def test_a_variant_entry_runs_on_the_scenarios_that_name_the_variant() -> None:
    # A Variant(...) entry runs at import only and is read only by a scenario whose TOML names the variant: its
    # mutant goes to that twin even when no function of variants.py ran in it (seed 1135's fencing_refreshes_first
    # flag True -> False survived 37 other scenarios; its twin kills it in one search).
    lines = (ROOT / "model/variants.py").read_text(encoding="utf-8").splitlines()
    start = next(i for i, text in enumerate(lines, 1) if text.strip() == 'name="fencing_refreshes_first",')
    n = next(i for i in range(start, len(lines)) if "connect_fencing_refreshes_first=True" in lines[i - 1])
    reach = {
        "root": str(ROOT),
        "scenarios": {
            "twin": {"seconds": 2.0, "variant": "fencing_refreshes_first"},
            "other_twin": {"seconds": 0.1, "variant": "tv1"},
            "other": {"seconds": 0.5},
        },
        "reach": {"model/variants.py": {str(n): ["import"], "1": ["other"]}},
    }
    m = Mutant("x", "keos.model.variants", "model/variants.py", "model", n, 0, n, 1, "constant", "<module>",
               "True", "False")
    assert mu.select_scenarios(m, reach) == ["other", "twin"]
    outside = Mutant("y", "keos.model.variants", "model/variants.py", "model", 1, 0, 1, 1, "constant", "<module>",
                     "1", "2")
    assert mu._variant_scenarios(outside, reach) == set()


def test_every_listed_equivalent_mutant_is_a_mutant_of_the_model_as_it_is() -> None:
    """An id in ``docs/mutation/equivalent.toml`` names a mutant of today's model, or it is a stale claim.

    Ids hash the mutant's position, so an edit that moves a line re-keys its mutants: the equivalence must be
    re-argued for the new id (or dropped), never left to excuse nothing -- or, worse, to count a score with it.
    """
    listed = mu.load_equivalents(ROOT / "docs" / "mutation" / "equivalent.toml")
    current = {m.id for m in mu.enumerate_mutants(ROOT)}
    stale = sorted(set(listed) - current)
    assert not stale, f"{len(stale)} equivalent id(s) name no mutant of the model (lines moved?): {stale[:10]}"


def test_an_interrupted_explain_keeps_the_complete_coverage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C in ``--explain``'s second run: the measured searches' reach.json is still written (marked), exit 4.
    (It used to return before writing anything, losing a whole gate's coverage run.)"""
    from keos.checker.cli import reach as cli_reach

    monkeypatch.setattr(cli_reach, "_explain", lambda *a, **k: (None, None))
    code = main(["coverage", "--explain", "--scenario", "idempotence_retry", "--out", str(tmp_path), "--no-handlers"])
    assert code == 4
    data = json.loads((tmp_path / "reach.json").read_text(encoding="utf-8"))
    assert data["explain"] == "interrupted" and "untaken" not in data
    assert "idempotence_retry" in data["scenarios"] and data["reach"]
    assert "--explain interrupted" in capsys.readouterr().out
