"""``keos conform`` on the command line: exit codes, reports, history files."""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from keos.checker.cli.main import main
from keos.checker.conform import edn
from keos.checker.conform.anomalies import KINDS
from keos.checker.conform.history import load_json

FIXTURE = Path(__file__).parent / "data" / "conform" / "jepsen_duplicate_aborted_read.edn"


def test_jepsen_history_is_imported_checked_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "conform",
            "--history",
            str(FIXTURE),
            "--out",
            str(tmp_path),
            "--json",
            "--junit",
            str(tmp_path / "j.xml"),
            "--html",
            str(tmp_path / "r.html"),
        ]
    )
    assert code == 1
    findings = json.loads(capsys.readouterr().out)
    assert sorted(a["kind"] for a in findings["anomalies"]) == ["G1a", "duplicate"]
    assert all(a["documented"] is None for a in findings["anomalies"])
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "2"
    failed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {"G1a", "duplicate"}
    html = (tmp_path / "r.html").read_text()
    assert "G1a" in html and "value 4 of key 0 is at offsets [3, 4]" in html


def test_a_clean_history_exits_0_and_round_trips_through_edn(tmp_path: Path) -> None:
    h = edn.read_history(FIXTURE)
    clean = [op for op in h.ops if op.index not in (2, 3, 6, 7)]  # drop the aborted txn and the duplicated send
    text = edn.history_to_edn(type(h)(clean))
    text = text.replace("[1 2] [2 3] [3 4] [4 4]", "[2 3]")
    path = tmp_path / "clean.edn"
    path.write_text(text)
    assert main(["conform", "--history", str(path), "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["conform", "--history", "/nonexistent/h.json"], "cannot read"),
        (["conform", "--target", "bootstrap"], "needs --bootstrap-servers"),
        (["conform", "--history", "x.edn", "--target", "tansu"], "takes no --target"),
        (["conform", "--workload", "nope"], "invalid choice"),
        (["conform", "--target", "tansu", "--nodes", "3"], "are for --target kafka"),
        (["conform", "--target", "kafka", "--kafka-home", "/nonexistent/kafka"], "no Kafka distribution found"),
        (["conform", "--target", "kafka", "--nodes", "2"], "invalid choice"),
        (["conform", "--target", "tansu", "--nemesis", "kill"], "does not support nemesis fault kill"),
        (["conform", "--nemesis", "bogus"], "unknown nemesis fault bogus"),
        (["conform", "--history", "x.edn", "--nemesis", "all"], "takes no --history"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("keos: error:") and message in err[0]


def test_malformed_edn_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "h.edn"
    p.write_text("{:type :ok, :f :send")
    assert main(["conform", "--history", str(p)]) == 2
    assert "EDN line 1" in capsys.readouterr().err


def test_an_unreachable_cluster_is_bad_input_not_a_violation(capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("confluent_kafka") is None:
        pytest.skip("confluent-kafka not installed (pip install 'keos[conformance]')")
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["conform", "--bootstrap-servers", f"127.0.0.1:{port}", "--out", "/tmp/keos-conform-unreach"]) == 2
    assert "cannot reach" in capsys.readouterr().err


@pytest.mark.slow
def test_mock_idempotent_workload_from_the_cli_exits_0(tmp_path: Path) -> None:
    if importlib.util.find_spec("confluent_kafka") is None:
        pytest.skip("confluent-kafka not installed (pip install 'keos[conformance]')")
    edn_path = tmp_path / "h.edn"
    code = main(
        [
            "conform",
            "--target",
            "librdkafka-mock",
            "--workload",
            "idempotent",
            "--out",
            str(tmp_path),
            "--export-edn",
            str(edn_path),
            "--junit",
            str(tmp_path / "j.xml"),
        ]
    )
    assert code == 0  # idempotent produce under retriable faults: the mock handles it, no anomaly
    history = load_json(tmp_path / "conform-librdkafka-mock-idempotent.history.json")
    faults = [str(op.value) for op in history.ops if op.f == "fault" and op.type == "info"]
    assert any("NOT_LEADER_OR_FOLLOWER" in f for f in faults) and any("down" in f for f in faults)
    assert any("UNKNOWN_PRODUCER_ID" in f for f in faults)
    pids = [op.value for op in history.ops if op.f == "client-pid"]  # the client's KIP-360 epoch bump
    assert len(pids) >= 2 and pids[1][0] == pids[0][0] and pids[1][1] > pids[0][1]
    findings = json.loads((tmp_path / "conform-librdkafka-mock-idempotent.anomalies.json").read_text())
    assert findings["anomalies"] == [] and findings["stats"]["acknowledged_sends"] == 24
    assert findings["broker_trace"]["requests_by_api"]["Produce"] > 24  # the injected errors were retried
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "0" and suite.get("tests") == str(len(KINDS))  # one testcase per kind
    assert len(edn.read_history(edn_path)) == len(history)


def test_an_exported_history_keeps_its_target_profile(tmp_path: Path) -> None:
    """A target's documented deviations stay permitted after a round trip through Jepsen's EDN."""
    h = edn.read_history(FIXTURE)  # a duplicate and an aborted read
    bare = tmp_path / "bare.edn"
    bare.write_text(edn.history_to_edn(h))
    assert main(["conform", "--history", str(bare), "--out", str(tmp_path)]) == 1
    h.meta["target_profile"] = {"G1a": "documented", "duplicate": "documented"}
    path = tmp_path / "profiled.edn"
    path.write_text(edn.history_to_edn(h))
    assert path.read_text().startswith(";; keos-meta: ")
    assert edn.read_history(path).meta["target_profile"] == h.meta["target_profile"]
    assert main(["conform", "--history", str(path), "--out", str(tmp_path)]) == 0
