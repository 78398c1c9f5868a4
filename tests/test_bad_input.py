"""Bad input never looks like a verdict: every kind exits 2 with one ``keos: error:`` line, no traceback.

Issue 15 fed 114 bad inputs to the CLI; 19 crashed with a traceback and exit 1 (the code of "a
violation") and 2 exited 0.  This file feeds those categories and more, parametrised: unknown flags
and values per subcommand, a malformed scenario for every key, a malformed trace for every field,
output paths that cannot be written, non-UTF-8 files, deep nesting; then Hypothesis fuzzes
scenario documents, trace fields and flag values.  The CLI runs in-process (``main(argv)``) and
every case fails validation before any search starts, so the file runs in seconds.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keos.checker.cli.main import main
from keos.scenarios import ScenarioError, parse_scenario

TINY = """
name = "tiny"
description = "one record, one duplicate"
[topology]
records_per_producer = 1
[producer]
retries = 1
max_in_flight = 1
[faults]
duplicate = 1
drop = 1
total = 1
"""

TINY_DOC: dict[str, Any] = {
    "name": "tiny",
    "topology": {"records_per_producer": 1},
    "producer": {"retries": 1, "max_in_flight": 1},
    "faults": {"duplicate": 1, "drop": 1, "total": 1},
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def assert_bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, _out, err = run(argv, capsys)
    assert code == 2, f"{argv}: exit {code}\n{err}"
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("keos: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A scenario file, a valid trace of a violation, a plain file and a directory."""
    root = tmp_path_factory.mktemp("bad")
    tiny = root / "tiny.toml"
    tiny.write_text(TINY, encoding="utf-8")
    out = root / "o"
    assert main(["check", "--scenario", str(tiny), "--variant", "no_idempotence", "--out", str(out)]) == 1
    trace = next(out.rglob("*.trace.json"))
    plain = root / "plain.txt"
    plain.write_text("not a directory\n")
    folder = root / "folder"
    folder.mkdir()
    return {"root": root, "tiny": tiny, "trace": trace, "file": plain, "dir": folder}


# -- flags and values, per subcommand --------------------------------------------------------------

SUBCOMMANDS = ["list", "check", "mutants", "explore", "replay", "export-itf", "config-space", "export-aiger",
               "import-witness", "bench", "sweep"]

BAD_FLAGS: list[list[str]] = [
    [],  # no command at all
    ["frobnicate"],
    ["--no-such-global-flag"],
    *[[cmd, "--no-such-flag"] for cmd in SUBCOMMANDS],
    ["check", "--engine", "nope"],
    ["check", "--variant", "nope"],
    ["check", "--scenario", "no_such_scenario"],
    ["check", "--scenario", "idempotence_retry", "--variant", "pre_kip_890"],
    ["check", "--scenario", "idempotence_retry", "--variant", "no_generation_fencing"],
    ["check", "--scenario", "txn_kafka_6119_timeout_zombie", "--variant", "no_zombie_fencing_round"],
    ["check", "--scenario", "connect_worker_crash", "--variant", "no_idempotence"],
    ["check", "--seed", "x"],
    ["check", "--seed", "-1"],
    ["check", "--max-depth", "-1"],
    ["check", "--max-depth", "1.5"],
    ["check", "--max-states", "many"],
    ["check", "--examples", "-2"],
    ["check", "--time-budget", "nan"],
    ["check", "--time-budget", "inf"],
    ["check", "--time-budget", "-1"],
    ["check", "--time-budget", "soon"],
    ["check", "--max-memory", "-5"],
    ["check", "--max-memory", "1G"],
    ["check", "--json", "extra-positional"],
    ["mutants", "--engine", "nope"],
    ["mutants", "--time-budget", "nan"],
    ["mutants", "--max-depth", "x"],
    ["explore"],  # --scenario is required
    ["explore", "--scenario", "idempotence_retry", "--graph", "x.png"],
    ["explore", "--scenario", "idempotence_retry", "--variant", "nope"],
    ["explore", "--scenario", "idempotence_retry", "--variant", "tv1"],
    ["explore", "--scenario", "idempotence_retry", "--max-states", "-3"],
    ["explore", "--scenario", "idempotence_retry", "--time-budget", "nan"],
    ["replay"],  # the trace is required
    ["replay", "/nonexistent/trace.json"],
    ["export-itf", "/nonexistent/trace.json", "--output", "x.itf.json"],
    ["bench", "--repeat", "0"],
    ["bench", "--repeat", "-1"],
    ["bench", "--scenario", "no_such_scenario"],
    ["config-space", "--scenario", "idempotence_retry", "--retries", "a,b"],
    ["config-space", "--scenario", "idempotence_retry", "--max-in-flight", ""],
    ["config-space", "--scenario", "idempotence_retry", "--acks", "2"],
    ["config-space", "--scenario", "idempotence_retry", "--idempotence", "maybe"],
    ["config-space", "--scenario", "idempotence_retry", "--max-depth", "0"],
    ["config-space", "--scenario", "idempotence_retry", "--time-budget", "nan"],
    ["config-space", "--scenario", "idempotence_retry", "--max-depth", "100000", "--time-budget", "5"],
    ["check", "--scenario", "idempotence_retry", "--engine", "bmc", "--max-depth", "100000"],
    ["config-space", "--scenario", "txn_kafka_6119_timeout_zombie"],
    ["config-space", "--scenario", "idempotence_retry", "--invariant", "no_such_invariant"],
    ["export-aiger", "--scenario", "idempotence_retry", "--bits", "2"],
    ["export-aiger", "--scenario", "idempotence_retry", "--slots", "0"],
    ["export-aiger", "--scenario", "idempotence_retry", "--invariant", "nope"],
    ["export-aiger", "--scenario", "txn_kafka_6119_timeout_zombie"],
    ["import-witness", "/nonexistent/witness.cex", "--scenario", "idempotence_retry"],
    ["import-witness", "/nonexistent/witness.cex"],  # neither --scenario nor --circuit
    ["sweep", "--steps", "0"],
    ["sweep", "--runs", "0"],
    ["sweep", "--variant", "nope"],
    ["check", "--workers", "0"],
    ["check", "--workers", "two"],
    ["check", "--workers", "-2"],
    ["check", "--scenario", "idempotence_retry", "--workers", "100000"],
    ["check", "--scenario", "idempotence_retry", "--engine", "spark-bfs", "--master", "yarn-please"],
    ["explore", "--scenario", "idempotence_retry", "--workers", "0"],
    ["explore", "--scenario", "idempotence_retry", "--workers", "1.5"],
    ["explore", "--scenario", "idempotence_retry", "--workers", "100000"],
    ["explore", "--scenario", "idempotence_retry", "--engine", "nope"],
    ["explore", "--scenario", "idempotence_retry", "--engine", "spark", "--master", "bogus://x"],
    ["explore", "--scenario", "idempotence_retry", "--workers", "2", "--graph", "states.dot"],
    ["explore", "--scenario", "idempotence_retry", "--compact-visited", "--graph", "states.dot"],
]


@pytest.mark.parametrize("argv", BAD_FLAGS, ids=[" ".join(a) or "(none)" for a in BAD_FLAGS])
def test_bad_flags_and_values(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if argv[:1] == ["sweep"]:
        pytest.importorskip("pyspark")
    assert_bad_input(argv, capsys)


# -- scenarios: every key ---------------------------------------------------------------------------

BAD_SCENARIOS: dict[str, str] = {
    "no name": "[topology]\nproducers = 1\n",
    "name not a string": "name = 3\n",
    "name with capitals": "name = 'Mine'\n",
    "name with a dash": "name = 'my-scenario'\n",
    "description not a string": "name = 'x'\ndescription = 3\n",
    "unknown model": "name = 'x'\nmodel = 'zookeeper'\n",
    "default not a boolean": "name = 'x'\ndefault = 'yes'\n",
    "unknown variant": "name = 'x'\nvariant = 'nope'\n",
    "variant for another model": "name = 'x'\nvariant = 'pre_kip_890'\n",
    "permitted not a list": "name = 'x'\npermitted = 'no_acked_loss'\n",
    "permitted not strings": "name = 'x'\npermitted = [1]\n",
    "permitted unknown invariant": "name = 'x'\npermitted = ['no_such_invariant']\n",
    "unknown top-level key": "name = 'x'\nbrokers = 3\n",
    "topology not a table": "name = 'x'\ntopology = 3\n",
    "topology unknown key": "name = 'x'\n[topology]\nbrokers = 1\n",
    "topology producers 0": "name = 'x'\n[topology]\nproducers = 0\n",
    "topology partitions string": "name = 'x'\n[topology]\npartitions = '1'\n",
    "topology records float": "name = 'x'\n[topology]\nrecords_per_producer = 1.5\n",
    "topology negative": "name = 'x'\n[topology]\nrecords_per_producer = -1\n",
    "producer acks 2": "name = 'x'\n[producer]\nacks = '2'\n",
    "producer acks integer": "name = 'x'\n[producer]\nacks = 1\n",
    "producer retries negative": "name = 'x'\n[producer]\nretries = -1\n",
    "producer idempotence string": "name = 'x'\n[producer]\nenable_idempotence = 'true'\n",
    "producer in-flight boolean": "name = 'x'\n[producer]\nmax_in_flight = true\n",
    "producer in-flight 6": "name = 'x'\n[producer]\nmax_in_flight = 6\n",
    "producer unknown key": "name = 'x'\n[producer]\nlinger_ms = 5\n",
    "broker unknown key": "name = 'x'\n[broker]\nreplicas = 3\n",
    "broker sequence_space 0": "name = 'x'\n[broker]\nsequence_space = 0\n",
    "broker epoch string": "name = 'x'\n[broker]\nmax_producer_epoch = 'big'\n",
    "faults unknown key": "name = 'x'\n[faults]\ndorp = 1\n",
    "faults negative": "name = 'x'\n[faults]\ndrop = -1\n",
    "faults not a table": "name = 'x'\nfaults = [1]\n",
    "bounds string": "name = 'x'\n[bounds]\nmax_depth = 'x'\n",
    "bounds unknown key": "name = 'x'\n[bounds]\nmax_time = 3\n",
    "transactions without the model": "name = 'x'\n[transactions]\nproducers = 1\n",
    "eos without the model": "name = 'x'\n[eos]\ninput_records = 1\n",
    "connect without the model": "name = 'x'\n[connect]\nleader = 0\n",
    "transactions producers 0": "name = 'x'\nmodel = 'transactions'\n[transactions]\nproducers = 0\n",
    "transactions retries 0": "name = 'x'\nmodel = 'transactions'\n[transactions]\nretries = 0\n",
    "transactions epoch 2": "name = 'x'\nmodel = 'transactions'\n[transactions]\nmax_producer_epoch = 2\n",
    "transactions with topology": "name = 'x'\nmodel = 'transactions'\n[topology]\nproducers = 1\n",
    "transactions fault unknown": "name = 'x'\nmodel = 'transactions'\n[faults]\nduplicate = 1\n",
    "eos input_records 0": "name = 'x'\nmodel = 'eos'\n[eos]\ninput_records = 0\n",
    "eos two partitions": "name = 'x'\nmodel = 'eos'\n[transactions]\npartitions = 2\n",
    "connect workers not a list": "name = 'x'\nmodel = 'connect'\n[connect]\nworkers = 'enabled'\n",
    "connect worker level": "name = 'x'\nmodel = 'connect'\n[connect]\nworkers = ['sometimes']\n",
    "connect leader 9": "name = 'x'\nmodel = 'connect'\n[connect]\nleader = 9\n",
    "connect unknown key": "name = 'x'\nmodel = 'connect'\n[connect]\ntasks = 1\n",
    "connect boundary": "name = 'x'\nmodel = 'connect'\n[connect]\ntransaction_boundary = 'never'\n",
    "connect owners": "name = 'x'\nmodel = 'connect'\n[connect]\ntask_counts = [1]\nowners = [[3]]\n",
    "connect fault unknown": "name = 'x'\nmodel = 'connect'\n[faults]\ndrop = 1\n",
    "connect delivered alone": "name = 'x'\nmodel = 'connect'\n[connect]\nrecords = 2\ndelivered = [1]\n",
    "connect delivered beyond records": "name = 'x'\nmodel = 'connect'\n[connect]\ndelivered = [2]\n"
    "delivered_offsets = ['global']\n",
    "connect delivered offsets where": "name = 'x'\nmodel = 'connect'\n[connect]\ndelivered = [1]\n"
    "delivered_offsets = ['nowhere']\n",
    "connect delivered per partition": "name = 'x'\nmodel = 'connect'\n[connect]\nrecords = 2\nowners = [[0, 0]]\n"
    "delivered = [1]\ndelivered_offsets = ['global']\n",
    "connect delivered own topic unset": "name = 'x'\nmodel = 'connect'\n[connect]\nrecords = 2\ndelivered = [1]\n"
    "delivered_offsets = ['both']\n",
    "connect offsets read unknown": "name = 'x'\nmodel = 'connect'\n[connect]\noffsets_topic = 'connector'\n"
    "offsets_read = 'javadoc'\n",
    "connect offsets read own topic unset": "name = 'x'\nmodel = 'connect'\n[connect]\noffsets_read = 'kafka-4.0'\n",
    "groups append error unknown": "name = 'x'\nmodel = 'groups'\n[groups]\nappend_errors = 'UNKNOWN_SERVER_ERROR'\n",
    "TOML syntax": "name = 'x\n",
    "TOML duplicate key": "name = 'x'\nname = 'y'\n",
    "empty file": "",
    "a date value": "name = 'x'\ndescription = 1979-05-27\n",
}


@pytest.mark.parametrize("case", list(BAD_SCENARIOS))
def test_malformed_scenarios(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(BAD_SCENARIOS[case], encoding="utf-8")
    assert_bad_input(["check", "--scenario", str(path), "--out", str(tmp_path / "o")], capsys)
    assert not (tmp_path / "o" / "summary.json").exists()  # refused before any work


SCENARIO_FILES: dict[str, Callable[[Path], Path]] = {
    "non-UTF-8": lambda d: _bytes(d / "latin1.toml", "name = 'caf\xe9'\n".encode("latin-1")),
    "deeply nested": lambda d: _bytes(d / "deep.toml", b"name = 'x'\nv = " + b"[" * 5000 + b"]" * 5000 + b"\n"),
    "deeply nested tables": lambda d: _bytes(d / "deep2.toml", b"name = 'x'\n[" + b".".join([b"a"] * 3000) + b"]\n"),
    "missing file": lambda d: d / "missing.toml",
    "a directory": lambda d: _dir(d / "sub.toml"),
    "binary": lambda d: _bytes(d / "bin.toml", bytes(range(256))),
}


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _dir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.parametrize("case", list(SCENARIO_FILES))
@pytest.mark.parametrize("command", ["check", "explore", "bench"])
def test_unreadable_scenario_files(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = SCENARIO_FILES[case](tmp_path)
    assert_bad_input([command, "--scenario", str(path)], capsys)


# -- traces: every field ----------------------------------------------------------------------------


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(data: dict[str, Any]) -> Any:
        data[key] = value
        return data

    return edit


def _drop(key: str) -> Callable[[dict[str, Any]], Any]:
    def edit(data: dict[str, Any]) -> Any:
        del data[key]
        return data

    return edit


def _action(edit_action: Callable[[dict[str, Any]], None], index: int = 0) -> Callable[[dict[str, Any]], Any]:
    def edit(data: dict[str, Any]) -> Any:
        edit_action(data["actions"][index])
        return data

    return edit


def _body(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    """Change a field of the first action that carries a message body (a ProduceRequest)."""

    def edit(data: dict[str, Any]) -> Any:
        for action in data["actions"]:
            message = action.get("message")
            if isinstance(message, dict) and isinstance(message.get("body"), dict):
                message["body"][key] = value
                return data
        raise AssertionError("no message in the trace")

    return edit


BAD_TRACES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "not an object": lambda d: [d],
    "schema_version missing": _drop("schema_version"),
    "schema_version 3": _set("schema_version", 3),
    "schema_version string": _set("schema_version", "1"),
    "scenario missing": _drop("scenario"),
    "scenario number": _set("scenario", 7),
    "variant missing": _drop("variant"),
    "variant unknown": _set("variant", "nope"),
    "variant for another model": _set("variant", "pre_kip_890"),
    "invariant missing": _drop("invariant"),
    "invariant unknown": _set("invariant", "no_such_invariant"),
    "invariant null": _set("invariant", None),
    "actions missing": _drop("actions"),
    "actions null": _set("actions", None),
    "actions object": _set("actions", {"kind": "Send"}),
    "action not an object": _action(lambda a: a.clear(), 0),
    "action a string": lambda d: {**d, "actions": ["Send"]},
    "action kind unknown": _action(lambda a: a.update(kind="Teleport")),
    "action kind number": _action(lambda a: a.update(kind=3)),
    "action argument missing": _action(lambda a: a.pop("producer")),
    "action argument extra": _action(lambda a: a.update(colour="red")),
    "action producer out of range": _action(lambda a: a.update(producer=99)),
    "action producer float": _action(lambda a: a.update(producer=0.5)),
    "base_sequence 'one'": _body("base_sequence", "one"),
    "producer_epoch float": _body("producer_epoch", 1.5),
    "transactional string": _body("transactional", "no"),
    "records null": _body("records", None),
    "record type unknown": lambda d: _body("records", [{"@": "Nope"}])(d),
    "seed string": _set("seed", "x"),
    "permitted string": _set("permitted", "yes"),
    "steps not a list": _set("steps", "many"),
    "step without action": _set("steps", [{}]),
    "final_state a string": _set("final_state", "bad"),
    "model a list": _set("model", []),
    "explanation a number": _set("explanation", 3),
    "scenario_document a string": _set("scenario_document", "tiny"),
    "scenario_document bad name": lambda d: {**d, "scenario_document": {**d["scenario_document"], "name": "Bad-Name"}},
    "scenario_document unknown key": lambda d: {**d, "scenario_document": {**d["scenario_document"], "zz": 1}},
    "scenario_document bad fault": lambda d: {**d, "scenario_document": {"name": "tiny", "faults": {"drop": -1}}},
    "loop_start negative": _set("loop_start", -1),
}


@pytest.mark.parametrize("case", list(BAD_TRACES))
def test_malformed_traces(
    case: str, workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(workspace["trace"].read_text(encoding="utf-8"))
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(BAD_TRACES[case](data)), encoding="utf-8")
    assert_bad_input(["replay", str(bad)], capsys)


TRACE_FILES: dict[str, Callable[[Path], Path]] = {
    "not JSON": lambda d: _bytes(d / "t.json", b"{not json"),
    "empty": lambda d: _bytes(d / "t.json", b""),
    "non-UTF-8": lambda d: _bytes(d / "t.json", b'{"scenario": "caf\xe9"}'),
    "deeply nested": lambda d: _bytes(d / "t.json", b"[" * 100_000 + b"]" * 100_000),
    "missing": lambda d: d / "missing.json",
    "a directory": lambda d: _dir(d / "t.json"),
    "NaN number": lambda d: _bytes(d / "t.json", b'{"schema_version": NaN}'),
}


@pytest.mark.parametrize("case", list(TRACE_FILES))
@pytest.mark.parametrize("command", ["replay", "export-itf"])
def test_unreadable_trace_files(case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = TRACE_FILES[case](tmp_path)
    argv = [command, str(path)] + (["--output", str(tmp_path / "x.itf.json")] if command == "export-itf" else [])
    assert_bad_input(argv, capsys)


def test_witness_files(workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("z3")
    latin = _bytes(tmp_path / "w.cex", b"1\nb0\n\xe9\xff\n.\n")
    assert_bad_input(["import-witness", str(latin), "--scenario", "idempotence_retry"], capsys)
    garbage = _bytes(tmp_path / "g.cex", b"hello\n")
    assert_bad_input(["import-witness", str(garbage), "--scenario", "idempotence_retry"], capsys)
    circuit = _bytes(tmp_path / "c.aig", b"aag 0 0 0 0 0\n")
    assert_bad_input(["import-witness", str(garbage), "--circuit", str(circuit)], capsys)
    assert_bad_input(["import-witness", str(garbage), "--circuit", str(tmp_path / "missing.aig")], capsys)


# -- outputs that cannot be written: refused before the run -----------------------------------------

OUTPUTS: list[tuple[str, list[str], str]] = [
    ("check", ["check", "--scenario", "{tiny}"], "--out"),
    ("check", ["check", "--scenario", "{tiny}"], "--html"),
    ("check", ["check", "--scenario", "{tiny}"], "--junit"),
    ("check", ["check", "--scenario", "{tiny}"], "--sarif"),
    ("mutants", ["mutants"], "--out"),
    ("mutants", ["mutants"], "--junit"),
    ("explore", ["explore", "--scenario", "{tiny}"], "--out"),
    ("explore", ["explore", "--scenario", "{tiny}"], "--graph"),
    ("explore", ["explore", "--scenario", "{tiny}"], "--spill-dir"),
    ("check", ["check", "--scenario", "{tiny}"], "--spill-dir"),
    ("replay", ["replay", "{trace}"], "--itf"),
    ("export-itf", ["export-itf", "{trace}"], "--output"),
    ("config-space", ["config-space", "--scenario", "idempotence_retry"], "--out"),
    ("export-aiger", ["export-aiger", "--scenario", "idempotence_retry"], "--output"),
    ("import-witness", ["import-witness", "{file}", "--scenario", "idempotence_retry"], "--out"),
]
DIR_FLAGS = {"--out", "--spill-dir"}


def _where(kind: str, flag: str, ws: dict[str, Path]) -> str:
    suffix = {"--graph": ".dot", "--html": ".html", "--sarif": ".sarif"}.get(flag, ".out")
    if kind == "a file":  # a plain file where a directory is needed, or under which one must be created
        return str(ws["file"]) if flag in DIR_FLAGS else str(ws["file"] / f"x{suffix}")
    if kind == "a directory":
        return str(ws["dir"] / "sub" / "x") if flag in DIR_FLAGS else str(ws["dir"])
    return "/proc/keos-cannot-write-here" + ("" if flag in DIR_FLAGS else f"/x{suffix}")  # read-only


@pytest.mark.parametrize("kind", ["a file", "a directory", "read-only"])
@pytest.mark.parametrize(("command", "argv", "flag"), OUTPUTS, ids=[f"{c} {f}" for c, _, f in OUTPUTS])
def test_unwritable_outputs(
    command: str, argv: list[str], flag: str, kind: str, workspace: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    if kind == "a directory" and flag in DIR_FLAGS:
        blocker = workspace["dir"] / "sub"
        blocker.write_text("a file in the way")  # DIR/sub is a file: DIR/sub/x cannot be a directory
    args = [a.format(tiny=workspace["tiny"], trace=workspace["trace"], file=workspace["file"]) for a in argv]
    line = assert_bad_input([*args, flag, _where(kind, flag, workspace)], capsys)
    assert flag in line
    if kind == "a directory" and flag in DIR_FLAGS:
        (workspace["dir"] / "sub").unlink()


# -- fuzzing ------------------------------------------------------------------------------------------

_KEYS = ["name", "description", "model", "default", "variant", "permitted", "topology", "producer", "broker",
         "faults", "bounds", "transactions", "eos", "connect", "extra"]
_SUBKEYS = ["producers", "partitions", "records_per_producer", "acks", "retries", "max_in_flight", "drop", "total",
            "max_depth", "input_records", "workers", "leader", "sequence_space", "enable_idempotence", "bogus"]
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10), st.floats(allow_nan=True), st.text(max_size=6),
    st.sampled_from(["idempotence", "eos", "connect", "transactions", "kafka", "all", "x", "no_acked_loss"]),
)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(_SUBKEYS), inner, max_size=4), max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(_KEYS), _values, max_size=6))
def test_fuzz_scenario_documents(document: dict[str, Any]) -> None:
    """Any document either parses into a scenario that builds, or is a one-line ScenarioError."""
    from keos.scenarios import build_model

    try:
        scenario = parse_scenario(document, "fuzz")
        build_model(scenario)
    except ScenarioError as exc:
        assert "\n" not in str(exc)
    except Exception as exc:  # anything else would reach a user as a crash
        raise AssertionError(f"{type(exc).__name__}: {exc} for {document!r}") from exc


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(string.ascii_letters, max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(string.ascii_lowercase, max_size=4), inner,
                                                               max_size=3),
    max_leaves=6,
)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_trace_fields(workspace: dict[str, Path], data: st.DataObject) -> None:
    """A trace with any field or action argument replaced: exit 0, 1 or 2, never a crash or traceback."""
    import contextlib
    import io

    trace = json.loads(workspace["trace"].read_text(encoding="utf-8"))
    where = data.draw(st.sampled_from(["top", "action", "body"]))
    value = data.draw(_json)
    if where == "top":
        trace[data.draw(st.sampled_from(sorted(trace)))] = value
    else:
        action = data.draw(st.sampled_from(trace["actions"]))
        target = action["message"]["body"] if where == "body" and "message" in action else action
        target[data.draw(st.sampled_from(sorted(target)))] = value
    path = workspace["root"] / "fuzz.trace.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["replay", str(path), "--json"])
    assert code in (0, 1, 2), err.getvalue()
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
    if code == 2:
        assert err.getvalue().startswith("keos: error: ")


_BAD_VALUES = {
    "--engine": ["nope", "", "ALL"],
    "--variant": ["nope", "KAFKA", ""],  # (a variant of another model is refused only for an explicit scenario)
    "--scenario": ["no_such", "/nonexistent.toml", ""],
    "--seed": ["-1", "x", "1e3"],
    "--max-depth": ["-1", "x", "2.5"],
    "--max-states": ["-1", "lots"],
    "--time-budget": ["nan", "-inf", "inf", "-1", "x", "NaN"],
    "--max-memory": ["-1", "x", "1.5"],
    "--examples": ["-1", "x"],
}
_GOOD_VALUES = {
    "--engine": ["explore"], "--seed": ["3"], "--max-depth": ["4"], "--max-states": ["50"],
    "--time-budget": ["5"], "--max-memory": ["0"], "--examples": ["5"], "--scenario": ["idempotence_retry"],
}


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    good=st.dictionaries(st.sampled_from(sorted(_GOOD_VALUES)), st.just(0), max_size=3),
    bad=st.sampled_from(sorted(_BAD_VALUES)),
    data=st.data(),
)
def test_fuzz_flags(good: dict[str, int], bad: str, data: st.DataObject) -> None:
    """``keos check`` with valid flags plus one bad value: always exit 2 and one line, before any work."""
    import contextlib
    import io

    argv = ["check"]
    for flag in good:
        if flag != bad:
            argv += [flag, data.draw(st.sampled_from(_GOOD_VALUES[flag]))]
    argv += [bad, data.draw(st.sampled_from(_BAD_VALUES[bad]))]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    assert code == 2, (argv, err.getvalue())
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("keos: error: "), (argv, err.getvalue())


def test_the_number_of_bad_inputs_fed() -> None:
    """The issue's 114 kinds of bad input are all here (and more), not counting the fuzzers' examples."""
    kinds = (
        len(BAD_FLAGS)
        + len(BAD_SCENARIOS)
        + len(SCENARIO_FILES) * 3
        + len(BAD_TRACES)
        + len(TRACE_FILES) * 2
        + 4  # witness files
        + len(OUTPUTS) * 3
    )
    assert kinds >= 114, kinds


# == issue 24: a gate that never lies ======================================================
# Every case of the issue, each with the contract's answer: budgets and interrupts end with exit 4 and
# the partial results in every format; hostile files and contradicting flags are exit 2, one line.

import contextlib  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return data


_BUDGETS = {"time": ["--time-budget", "1"], "memory": ["--max-memory", "1"], "states": ["--max-states", "40"]}
#: bmc keeps no explicit states (one SAT query per depth), so --max-states does not apply to it.
_ENGINE_BUDGETS = [(e, b) for e in ("explore", "hypothesis", "bmc") for b in _BUDGETS if (e, b) != ("bmc", "states")]


@pytest.mark.parametrize(("engine", "kind"), _ENGINE_BUDGETS, ids=[f"{e}-{b}" for e, b in _ENGINE_BUDGETS])
def test_every_engine_on_every_budget_ends_partial(
    engine: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--engine hypothesis --time-budget`` crashed with exit 3 (FlakyStrategyDefinition); bmc ignored
    ``--max-memory``; hypothesis ignored ``--max-states``.  After: exit 4 with the partial result, the budget named."""
    budget = _BUDGETS[kind]
    code, out, err = run(["check", "--scenario", "idempotence_epoch_bump", "--engine", engine, *budget,
                          "--out", str(tmp_path)], capsys)
    assert code == 4, out + err
    assert "Traceback" not in err and "internal error" not in err
    summary = _summary(tmp_path)
    assert summary["partial"] is True and len(summary["runs"]) == 1
    why = summary["partial_runs"][f"{engine}/idempotence_epoch_bump/kafka"]
    assert {"--time-budget": "time", "--max-memory": "memory", "--max-states": "state budget"}[budget[0]] in why
    assert "PARTIAL" in out and "PASS" not in out


def test_engine_all_keeps_what_each_engine_finished(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 3 and the explicit search's partial result lost.  After: exit 4, one run per engine."""
    code, out, err = run(["check", "--scenario", "idempotence_epoch_bump", "--engine", "all", "--time-budget", "1",
                          "--out", str(tmp_path)], capsys)
    assert code == 4, out + err
    runs = _summary(tmp_path)["runs"]
    assert sorted(r["engine"] for r in runs) == ["bmc", "explore", "hypothesis"]


def test_a_crashing_engine_keeps_the_runs_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A keos bug in one engine of ``--engine all`` is exit 3, and the explicit search's result stays on disk."""
    from keos.checker import engines

    def broken(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setitem(engines.ENGINES, "hypothesis", (broken, "broken"))
    code, _out, err = run(["check", "--scenario", "idempotence_retry", "--engine", "all", "--out", str(tmp_path)],
                          capsys)
    assert code == 3 and "crash report" in err
    summary = _summary(tmp_path)
    # the engines run in ENGINES' order (explore, then hypothesis; another test of the same worker may have moved
    # bmc's entry first): every run finished before the crash is kept, none after it is
    done = [r["engine"] for r in summary["runs"]]
    assert "explore" in done and "hypothesis" not in done and summary["partial"] is True
    assert summary["stopped"] == "keos crashed (RuntimeError)" and summary["not_run"][0].startswith("hypothesis/")


def test_hypothesis_budget_keeps_a_found_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget that runs out while Hypothesis shrinks (the state budget: deterministic, unlike time on a loaded
    machine): the violation found is reported (exit 1), no crash."""
    code, out, err = run(["check", "--scenario", "idempotence_retry", "--engine", "hypothesis", "--variant",
                          "no_idempotence", "--max-states", "300", "--out", str(tmp_path)], capsys)
    assert code == 1, out + err
    assert "violated: no_duplicate_append" in out and "Traceback" not in err


def _interrupt_second_run(monkeypatch: pytest.MonkeyPatch, at: int = 1) -> None:
    """Make the explore engine raise KeyboardInterrupt (Ctrl-C) on its ``at``-th run (0-based)."""
    from keos.checker import engines

    real, desc = engines.ENGINES["explore"]
    calls = [0]

    def interrupted(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        if calls[0] > at:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setitem(engines.ENGINES, "explore", (interrupted, desc))


@pytest.mark.parametrize("at", [0, 1], ids=["before any run", "after one run"])
def test_an_interrupted_check_is_partial_in_every_format(
    at: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: stdout ``PASS 12 runs`` (``PASS 0 runs``), a green HTML badge, JUnit with no skipped runs, SARIF
    ``executionSuccessful: true``.  After: PARTIAL everywhere, the runs not executed named and skipped."""
    _interrupt_second_run(monkeypatch, at)
    out_dir = tmp_path / "o"
    argv = ["check", "--scenario", "idempotence_retry", "--scenario", "acks_one_failover", "--scenario",
            "idempotence_two_producers", "--out", str(out_dir), "--html", str(tmp_path / "r.html"),
            "--junit", str(tmp_path / "j.xml"), "--sarif", str(tmp_path / "s.sarif")]
    code, out, err = run(argv, capsys)
    assert code == 4, out + err
    assert "PASS" not in out
    assert re.search(rf"PARTIAL\s+{at} of 3 runs finished \(interrupted\)", out), out
    html_text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'class="banner partial">PARTIAL' in html_text and f"{at} of 3 runs finished" in html_text
    junit = (tmp_path / "j.xml").read_text(encoding="utf-8")
    assert junit.count("<skipped message=\"not run: the command stopped (interrupted)\"") == 3 - at
    assert 'name="incomplete"' in junit
    sarif = json.loads((tmp_path / "s.sarif").read_text(encoding="utf-8"))
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "interrupted" in invocation["toolExecutionNotifications"][-1]["message"]["text"]
    summary = _summary(out_dir)
    assert summary["partial"] is True and summary["stopped"] == "interrupted"
    assert len(summary["runs"]) == at and len(summary["not_run"]) == 3 - at


@contextlib.contextmanager
def _sigint_as_at_a_terminal() -> Iterator[None]:
    """SIGINT handled as in a terminal, whatever this test process inherited.

    A command started in the background by a shell without job control (``cmd &`` in a script, a CI runner's
    nohup) inherits SIGINT *ignored*, and an ignored disposition survives ``exec``: Python then installs no
    KeyboardInterrupt handler and Ctrl-C does nothing -- correctly, for that process, but these tests are about a
    user's Ctrl-C.  (A handled disposition is reset to the default at ``exec``, so a child started inside this
    block gets Python's usual Ctrl-C.)"""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _keos_process(argv: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with _sigint_as_at_a_terminal():
        return subprocess.Popen([sys.executable, "-m", "keos", *argv], cwd=tmp_path, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_during_check_exits_4_with_the_finished_runs(sig: signal.Signals, tmp_path: Path) -> None:
    """A real Ctrl-C / SIGTERM (a CI job cancelled) while the second run searches."""
    proc = _keos_process(["check", "--scenario", "idempotence_retry", "--scenario", "txn_coordinator_faults",
                          "--scenario", "idempotence_epoch_bump", "--out", "o"], tmp_path)
    deadline = time.monotonic() + 120
    while not (tmp_path / "o" / "summary.json").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, out + err
    assert "Traceback" not in err and "PASS" not in out
    summary = _summary(tmp_path / "o")
    assert summary["partial"] is True and summary["not_run"]


def _python_worker_below(pid: int) -> bool:
    """Whether a ``pyspark.daemon`` / ``pyspark.worker`` process descends from ``pid`` (Linux ``/proc``)."""
    children: dict[int, list[tuple[int, bytes]]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text(encoding="ascii", errors="replace").rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append((int(entry.name), cmdline))
    todo = [pid]
    while todo:
        for child, cmdline in children.get(todo.pop(), []):
            if b"pyspark.daemon" in cmdline or b"pyspark.worker" in cmdline:
                return True
            todo.append(child)
    return False


@pytest.mark.spark
def test_ctrl_c_during_a_spark_explore_exits_4_without_py4j_tracebacks(tmp_path: Path) -> None:
    """Before: Ctrl-C hung (pyspark's own SIGINT handler calls the JVM on the busy py4j connection) and printed
    py4j tracebacks.  After: exit 4 at once; py4j's report goes to keos.log."""
    proc = _keos_process(["explore", "--scenario", "idempotence_epoch_bump", "--engine", "spark", "--master",
                          "local[1]", "--out", "o"], tmp_path)
    # Interrupt once a Spark job runs -- its Python worker (``pyspark.daemon``, the JVM's child) exists, so the
    # driver is blocked on the JVM -- rather than after a fixed 25 s (most of which an idle machine spent waiting).
    deadline = time.monotonic() + 120
    while not _python_worker_below(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1)
    assert proc.poll() is None, "the Spark search ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, out + err
    assert "Traceback" not in err and "py4j" not in err.split("third-party log:")[0], err


def test_a_py4j_error_raised_after_ctrl_c_is_the_interrupt_and_one_without_stays_an_error() -> None:
    """py4j swallows a KeyboardInterrupt raised inside its socket call and raises Py4JNetworkError instead; when
    the signal lands there depends on timing (a loaded CI machine turned the Spark Ctrl-C test's exit 4 into an
    internal error, exit 3).  Inside ``py4j_interrupts`` such an error after a SIGINT is the interrupt."""
    import os
    import signal
    import time

    from py4j.protocol import Py4JNetworkError

    from keos.checker.sweep.campaign import py4j_interrupts

    def blocked_on_the_jvm() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            raise Py4JNetworkError("Answer from Java side is empty") from None

    with _sigint_as_at_a_terminal():
        before = signal.getsignal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as caught, py4j_interrupts():
            blocked_on_the_jvm()
        assert isinstance(caught.value.__cause__, Py4JNetworkError)
        assert signal.getsignal(signal.SIGINT) is before
        with pytest.raises(Py4JNetworkError), py4j_interrupts():
            raise Py4JNetworkError("a real failure, no Ctrl-C")
        with pytest.raises(ValueError), py4j_interrupts():  # not py4j's: an error even after an interrupt
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            except KeyboardInterrupt:
                raise ValueError("keos's own") from None


def test_budgets_hold_during_set_up_and_the_first_level(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``producers = 5000`` ran 61 s past a 5 s budget.  After: the largest topology allowed (16
    producers, each state thousands of successors) stops within its budget: the budget is checked between
    transitions, not only between states."""
    big = tmp_path / "big.toml"
    big.write_text(TINY.replace('name = "tiny"', 'name = "big"') .replace("[topology]", "[topology]\nproducers = 16"))
    code, out, err = run(["check", "--scenario", str(big), "--time-budget", "1", "--out", str(tmp_path / "o")],
                         capsys)
    assert code == 4, out + err
    (run_,) = _summary(tmp_path / "o")["runs"]
    elapsed = _summary(tmp_path / "o")["timing"]["explore/big/kafka"]["elapsed_s"]
    assert run_["stats"]["limit_reached"] == "time" and elapsed < 15


@pytest.mark.parametrize("value", ["5000", "1e23", "100000000000000000000000", "17"])
def test_topology_sizes_have_upper_bounds(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``producers = 1e23`` hung silently.  After: exit 2, one line saying why."""
    big = tmp_path / "big.toml"
    big.write_text(TINY.replace("[topology]", f"[topology]\nproducers = {value}"))
    line = assert_bad_input(["check", "--scenario", str(big)], capsys)
    assert "producers" in line and ("above" in line or "integer" in line)


def test_scenario_ints_are_32_bit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "s.toml"
    doc.write_text(TINY + "[bounds]\nmax_states = 100000000000000000000\n")
    assert "above 2147483647" in assert_bad_input(["check", "--scenario", str(doc)], capsys)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "dir"])
@pytest.mark.parametrize("command", [["replay"], ["export-itf", "--output", "x.json"], ["conform", "--history"],
                                     ["check", "--scenario"]])
def test_input_files_must_be_regular_files(
    target: str, command: list[str], fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``keos replay /dev/zero`` read forever, deaf to Ctrl-C.  After: exit 2 at once, one line."""
    path = {"/dev/zero": "/dev/zero", "fifo": str(fifo), "dir": str(tmp_path)}[target]
    argv = [command[0], path, *command[1:]] if command[0] in ("replay", "export-itf") else [*command, path]
    line = assert_bad_input(argv, capsys)
    assert "regular file" in line or "directory" in line


def test_input_files_have_a_size_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate((1 << 20) + 1)  # sparse: a scenario file over 1 MiB
    assert "bytes" in assert_bad_input(["check", "--scenario", str(big)], capsys)


@pytest.mark.parametrize(("argv", "flags"), [
    (["check", "--variant", "no_idempotence", "--variant", "kafka"], ("--variant no_idempotence", "--variant kafka")),
    (["check", "--out", "a", "--out", "b"], ("--out a", "--out b")),
    (["conform", "--target", "tansu", "--bootstrap-servers", "127.0.0.1:1"], ("--target tansu", "--bootstrap-servers")),
    (["sweep", "--local-python", "--master", "local[2]"], ("--local-python", "--master")),
    (["replay", "{trace}", "--mermaid", "--json"], ("--mermaid", "--json")),
    (["export-itf", "{trace}", "-o", "a.json", "--itf", "b.json"], ("-o", "--itf")),
], ids=["variant twice", "out twice", "target+bootstrap", "local-python+master", "mermaid+json", "output aliases"])
def test_conflicting_or_repeated_flags_name_both(
    argv: list[str], flags: tuple[str, str], workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: resolved silently (the last --variant kept, --target won over --bootstrap-servers, ...)."""
    line = assert_bad_input([a.replace("{trace}", str(workspace["trace"])) for a in argv], capsys)
    assert all(flag in line for flag in flags), line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_librdkafka_logs_go_to_the_log_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: an unreachable --bootstrap-servers printed 115 librdkafka lines.  After: the error and one
    summary line; the lines are in OUT/keos.log."""
    pytest.importorskip("confluent_kafka")  # the conformance extra, installed by scripts/setup.sh
    code, _out, err = run(["conform", "--bootstrap-servers", f"127.0.0.1:{_free_port()}", "--out", str(tmp_path)],
                          capsys)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("keos: error: cannot reach") and len(lines) == 2, err
    assert lines[1].startswith("keos: third-party log:") and "librdkafka" in lines[1]
    assert "Connect to" in (tmp_path / "keos.log").read_text(encoding="utf-8")


def _no_cut(text: str) -> None:
    assert "…" not in text, text[:2000]
    assert max(len(line) for line in text.splitlines()) > 80


def test_wide_tables_are_not_cut_in_ci_logs(tmp_path: Path) -> None:
    """Before: in a non-terminal the tables of sweep, assignors and mutants were cut at 80 columns."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("COLUMNS", None)
    for argv in (["assignors", "--cases", "2", "--no-z3"],
                 ["sweep", "--local-python", "--runs", "1", "--scenario", "idempotence_retry", "--scenario",
                  "connect_duplicate_task_instances", "--out", str(tmp_path / "sw")]):
        proc = subprocess.run([sys.executable, "-m", "keos", *argv], capture_output=True, text=True, env=env,
                              timeout=300, check=False)
        assert proc.returncode in (0, 1), proc.stderr
        _no_cut(proc.stdout)


def test_mutants_table_is_not_cut_in_ci_logs() -> None:
    import io

    from rich.console import Console

    from keos.checker.cli.main import CI_WIDTH
    from keos.reports.terminal import render_mutants

    row = {"variant": "tombstone_to_connector_topic_first", "engine": "explore", "covered": True, "caught": True,
           "invariant": "exactly_once_source_delivery", "scenario": "connect_offset_tombstones", "steps": 9,
           "elapsed_s": 1.0, "bug": "KAFKA-15018"}
    buf = io.StringIO()
    render_mutants(Console(file=buf, width=CI_WIDTH), [row])
    _no_cut(buf.getvalue())
    assert "connect_offset_tombstones" in buf.getvalue()


def test_progress_goes_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "--scenario", "idempotence_retry", "--out", str(tmp_path)], capsys)
    assert code == 0
    assert "variant=kafka" in err and "variant=kafka" not in out


def test_summary_json_is_identical_between_identical_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: timings and absolute paths were mixed into summary.json.  After: byte-identical but for
    one ``timing`` block, trace paths relative to --out (here one --out relative, one absolute)."""
    texts = []
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        for out in ("rel", str(tmp_path / "abs")):
            assert main(["check", "--scenario", "idempotence_retry", "--variant", "no_idempotence", "--out", out]) == 1
            data = json.loads((tmp_path / Path(out).name / "summary.json").read_text(encoding="utf-8"))
            assert data.pop("timing")
            assert data["traces"] and not any(t.startswith(("/", out)) for t in data["traces"])
            texts.append(json.dumps(data, indent=2))
    finally:
        os.chdir(cwd)
    capsys.readouterr()
    assert texts[0] == texts[1]


def test_itf_carries_var_types(workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: no ``#meta.varTypes``, so Apalache could not read the trace back (ADR-015)."""
    out = tmp_path / "t.itf.json"
    assert main(["export-itf", str(workspace["trace"]), "--output", str(out)]) == 0
    capsys.readouterr()
    itf = json.loads(out.read_text(encoding="utf-8"))
    types = itf["#meta"]["varTypes"]
    assert set(types) == set(itf["vars"]) and types["action_taken"] == "Str"
    assert re.fullmatch(r"Seq\(\{ kind: Str, .*\}\)", types["producers"]), types["producers"]
    assert all("@" not in t for t in types.values())  # record fields are TLA+ identifiers


def test_html_never_breaks_identifiers_mid_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--scenario", "idempotence_retry", "--out", str(tmp_path / "o"),
                 "--html", str(tmp_path / "r.html")]) == 0
    capsys.readouterr()
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "overflow-wrap: anywhere" not in text and "break-all" not in text
    assert "idempotence_<wbr>retry" in text and "no_<wbr>duplicate_<wbr>append" in text


def test_an_interrupted_mutants_run_keeps_the_finished_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: Ctrl-C during ``keos mutants`` lost every row (mutants.json was written at the end)."""
    from keos.model.variants import VARIANTS

    _interrupt_second_run(monkeypatch, at=2)
    code, out, err = run(["mutants", "--out", str(tmp_path)], capsys)
    assert code == 4, out + err
    rows = json.loads((tmp_path / "mutants.json").read_text(encoding="utf-8"))
    assert 1 <= len(rows) < sum(v.weakened for v in VARIANTS.values()) and all(r["caught"] for r in rows)
    assert "PARTIAL: interrupted" in out

# -- keos coverage / keos mutate (issue 23): every bad input exits 2 before any search or mutant runs -------

REACH_BAD_FLAGS: list[list[str]] = [
    ["coverage", "--no-such-flag"],
    ["coverage", "--scenario", "no_such_scenario"],
    ["coverage", "--set", "no_such_set"],
    ["coverage", "--variant", "nope"],
    ["coverage", "--scenario", "idempotence_retry", "--variant", "no_generation_fencing"],
    ["coverage", "--fail-under", "101"],
    ["coverage", "--fail-under", "nan"],
    ["coverage", "--fail-under", "most"],
    ["coverage", "--time-budget", "nan"],
    ["coverage", "--total-budget", "-1"],
    ["coverage", "--module", "nothing/*.py"],
    ["mutate", "--no-such-flag"],
    ["mutate", "--operator", "nope"],
    ["mutate", "--module", "nothing/*"],
    ["mutate", "--sample", "0"],
    ["mutate", "--sample", "-3"],
    ["mutate", "--sample", "many"],
    ["mutate", "--seed", "-1"],
    ["mutate", "--time-budget", "nan"],
    ["mutate", "--total-budget", "inf"],
    ["mutate", "--cpu-budget-factor", "-1"],
    ["mutate", "--cpu-budget-factor", "lots"],
    ["mutate", "--rerun", "/nonexistent/mutation-results.jsonl"],
    ["mutate", "--rerun-status", "survived"],
    ["mutate", "--rerun", "README.md"],
    ["mutate", "--jobs", "0"],
    ["mutate", "--master", "bogus://x"],
    ["mutate", "--master", "local[*]", "--local-python"],
    ["mutate", "--fail-under", "200"],
    ["mutate", "--equivalents", "/nonexistent/equivalent.toml"],
    ["mutate", "--reach", "/nonexistent/reach.json"],
    ["mutate", "--local-python", "--scenario", "no_such_scenario"],
    ["mutate", "--local-python", "--variant", "nope"],
]


@pytest.mark.parametrize("argv", REACH_BAD_FLAGS, ids=[" ".join(a) for a in REACH_BAD_FLAGS])
def test_reach_bad_flags(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert_bad_input(argv, capsys)


@pytest.mark.parametrize("content", [
    "not toml [",
    '[abc123]\nreason = ""\n',
    "[abc123]\nwhy = 'no reason key'\n",
    "abc123 = 'a string, not a table'\n",
])
def test_reach_bad_equivalents_file(content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text(content, encoding="utf-8")
    assert "--equivalents" in assert_bad_input(["mutate", "--local-python", "--equivalents", str(path)], capsys)


@pytest.mark.parametrize("content", ["{", "[]", '{"reach": {}}', "\xff"])
def test_reach_bad_reach_file(content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reach.json"
    path.write_text(content, encoding="latin-1")
    assert "--reach" in assert_bad_input(["mutate", "--local-python", "--reach", str(path)], capsys)


@pytest.mark.parametrize(("argv", "flag"), [
    (["coverage", "--html"], "--html"),
    (["coverage", "--json"], "--json"),
    (["mutate", "--local-python", "--html"], "--html"),
    (["mutate", "--local-python", "--junit"], "--junit"),
    (["mutate", "--local-python", "--json"], "--json"),
])
def test_reach_unwritable_outputs(argv: list[str], flag: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    target = str(blocker / "sub") if flag == "--html" and argv[0] == "coverage" else str(tmp_path)
    assert flag in assert_bad_input([*argv, target, "--scenario", "idempotence_retry"], capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["differential", "--time-budget", "nan"],
        ["differential", "--time-budget", "-1"],
        ["differential", "--cases", "0"],
        ["differential", "--max-steps", "x"],
    ],
)
def test_differential_flags_are_checked_before_any_broker_starts(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``keos differential`` reads its numbers with guard's types (a NaN budget used to be accepted)."""
    code, _out, err = run(argv, capsys)
    assert code == 2 and err.startswith("keos: error:") and len(err.strip().splitlines()) == 1, err
