"""``keos config-space``: producer configurations as z3 queries, with witnesses that replay from derived scenarios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from keos.checker.bmc import config_space as bmc_config
from keos.checker.bmc.config_space import ConfigRow, ConfigSpaceError, config_space, derived_scenario_toml
from keos.checker.cli.main import main
from keos.checker.trace import load_trace, replay
from keos.model.clients.producer_config import ProducerConfig
from keos.scenarios import build_model, load_scenario, parse_scenario, resolve_scenario

DEPTH = 8


def _row(rows: list[ConfigRow], idem: bool, acks: str, retries: int, mif: int) -> ConfigRow:
    [row] = [
        r for r in rows if (r.enable_idempotence, r.acks, r.retries, r.max_in_flight) == (idem, acks, retries, mif)
    ]
    return row


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[ConfigRow], Path]:
    """idempotence_retry_expiry, depth 8: {on, off} x acks {all, 1} x retries {0, 1} x max.in.flight {1, 6}."""
    out = tmp_path_factory.mktemp("config-space")
    rows = config_space(
        resolve_scenario("idempotence_retry_expiry"),
        depth=DEPTH,
        time_budget_s=0,
        retries=(0, 1),
        max_in_flight=(1, 6),
        acks=("all", "1"),
        out_dir=out,
    )
    return rows, out


def test_the_grid_is_the_full_product_in_order(grid: tuple[list[ConfigRow], Path]) -> None:
    rows, _ = grid
    keys = [(r.enable_idempotence, r.acks, r.retries, r.max_in_flight) for r in rows]
    assert len(keys) == 16 == len(set(keys))
    assert keys[0] == (True, "all", 0, 1) and keys[-1] == (False, "1", 1, 6)


def test_idempotence_admits_neither_a_duplicate_nor_a_reordering(grid: tuple[list[ConfigRow], Path]) -> None:
    rows, _ = grid
    row = _row(rows, True, "all", 1, 1)
    assert row.outcome == "checked" and not row.timed_out
    assert row.traces == {} and row.disagreements == {}
    assert row.depth_reached == DEPTH
    assert row.status == f"none up to depth {DEPTH}"
    # The only idempotent configuration Kafka accepts in this grid is the one queried.
    assert [r for r in rows if r.enable_idempotence and r.outcome == "checked"] == [row]


@pytest.mark.parametrize(("acks", "retries", "mif"), [("all", 0, 1), ("all", 1, 6), ("1", 0, 1), ("1", 1, 1)])
def test_without_idempotence_a_duplicate_and_a_reordering_are_admitted(
    grid: tuple[list[ConfigRow], Path], acks: str, retries: int, mif: int
) -> None:
    rows, _ = grid
    row = _row(rows, False, acks, retries, mif)
    assert row.outcome == "checked" and row.disagreements == {}
    assert set(row.traces) == {"no_duplicate_append", "per_partition_order"}
    dup = row.traces["no_duplicate_append"]
    assert "appended twice" in dup.explanation
    assert row.status.startswith(f"admits no_duplicate_append ({len(dup.actions)} steps, trace ")
    assert "admits per_partition_order" in row.status


def test_every_witness_replays_from_its_derived_scenario_file(grid: tuple[list[ConfigRow], Path]) -> None:
    rows, out = grid
    witnessed = [r for r in rows if r.traces]
    assert len(witnessed) == 8  # every accepted configuration without idempotence
    for row in witnessed:
        assert row.scenario_path is not None and row.scenario_path.parent == out / "config-space"
        derived = load_scenario(row.scenario_path)
        assert derived.name == row.scenario_path.stem
        assert "__idem_false_" in derived.name and not derived.default and derived.permitted == ()
        assert derived.config.producer == row.producer_config
        base = resolve_scenario("idempotence_retry_expiry")
        assert derived.config == replace(base.config, producer=row.producer_config)
        for name, trace in row.traces.items():
            assert trace.scenario == trace.scenario_source == str(row.scenario_path)
            data = load_trace(row.trace_paths[name])
            assert data["scenario"] == str(row.scenario_path) and data["invariant"] == name
            result = replay(build_model(derived, data["variant"]), data)
            assert result.confirmed, result.reason
            # The same actions do not violate the invariant on the base (idempotent) scenario.
            assert not replay(build_model(base, "kafka"), data).confirmed


def test_kafka_rejected_configurations_are_listed_with_the_config_exception(
    grid: tuple[list[ConfigRow], Path],
) -> None:
    rows, _ = grid
    rejected = {(r.acks, r.retries, r.max_in_flight): r.status for r in rows if r.outcome == "rejected"}
    assert all(r.enable_idempotence for r in rows if r.outcome == "rejected")
    assert len(rejected) == 7
    assert rejected[("all", 0, 1)] == "rejected by Kafka: enable.idempotence=true requires retries > 0"
    assert rejected[("all", 1, 6)] == (
        "rejected by Kafka: enable.idempotence=true requires max.in.flight.requests.per.connection <= 5, got 6"
    )
    for key in [("1", 0, 1), ("1", 0, 6), ("1", 1, 1), ("1", 1, 6)]:
        assert rejected[key] == "rejected by Kafka: enable.idempotence=true requires acks=all"
    for r in rows:
        if r.outcome == "rejected":
            assert r.traces == {} and r.scenario_path is None and r.depth_reached == -1


def test_acks_zero_is_reported_as_not_encoded(tmp_path: Path) -> None:
    [row] = config_space(
        resolve_scenario("idempotence_retry_expiry"),
        retries=(1,),
        max_in_flight=(1,),
        acks=("0",),
        idempotence=(False,),
        out_dir=tmp_path,
    )
    assert row.outcome == "not_encoded" and row.status.startswith("not encoded: acks=0")
    assert not (tmp_path / "config-space").exists()


@pytest.mark.parametrize(
    ("scenario", "invariants", "message"),
    [
        ("txn_kafka_12671_hanging", ("no_duplicate_append",), "needs an idempotence scenario"),
        ("idempotence_retry_expiry", ("no_such_invariant",), "unknown invariant 'no_such_invariant'"),
        ("idempotence_retry_expiry", (), "at least one invariant"),
    ],
)
def test_questions_that_cannot_be_asked_raise(
    scenario: str, invariants: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigSpaceError, match=message):
        config_space(resolve_scenario(scenario), invariants, out_dir=tmp_path)


def test_the_derived_scenario_text_round_trips_through_the_strict_loader() -> None:
    base = resolve_scenario("acks_one_failover")
    awkward = replace(base, description='quotes " and \\ backslash,\nnewline, tab\t, DEL \x7f, unicode é ✓ 🙂')
    pc = ProducerConfig(enable_idempotence=False, acks="1", retries=2, max_in_flight=5)
    loaded = parse_scenario(tomllib.loads(derived_scenario_toml(awkward, pc)), "<test>")
    assert loaded.name == f"{base.name}__idem_false_acks_1_retries_2_mif_5"
    assert loaded.description.startswith(awkward.description)
    assert loaded.config == replace(base.config, producer=pc)
    assert loaded.bounds == base.bounds and loaded.variant == "kafka" and loaded.default is False


def _keos(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "300"}  # wide enough that the table keeps each status on one line
    return subprocess.run(
        [sys.executable, "-m", "keos", *argv], capture_output=True, text=True, check=False, timeout=300, env=env
    )


#: One idempotent and one non-idempotent configuration, depth 6: a grid small enough for a CLI test.
SMALL_GRID = ("--scenario", "idempotence_retry_expiry", "--max-depth", "6", "--retries", "1", "--max-in-flight", "1",
              "--acks", "all")


def test_cli_answers_writes_a_witness_and_replay_confirms_it(tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = _keos(
        "config-space",
        *SMALL_GRID,
        "--invariant",
        "no_duplicate_append",
        "--out",
        str(out),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert json.loads((out / "config-space" / "summary.json").read_text()) == data
    by_idem = {r["enable_idempotence"]: r for r in data["rows"]}
    assert by_idem[True]["status"] == "none up to depth 6" and by_idem[True]["admits"] == {}
    admitted = by_idem[False]["admits"]["no_duplicate_append"]
    trace = Path(admitted["trace"])
    assert trace.is_file() and admitted["steps"] == 5
    assert "admits no_duplicate_append (5 steps, trace" in proc.stderr  # the table (stderr in --json mode)
    replayed = _keos("replay", str(trace))
    assert replayed.returncode == 1, replayed.stderr
    assert "CONFIRMED" in replayed.stdout


def test_cli_exits_3_when_a_witness_does_not_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise AssertionError("engine bmc produced a trace that does not replay: injected [producer] fault")

    monkeypatch.setattr(bmc_config, "make_trace", broken)
    code = main(
        [
            "config-space",
            *SMALL_GRID,
            "--idempotence",
            "false",
            "--invariant",
            "no_duplicate_append",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 3
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["admits"] == {}
    assert "injected" in row["engine_disagreement"]["no_duplicate_append"]
    assert row["status"].startswith("engine disagreement on no_duplicate_append")


@pytest.mark.parametrize(
    "argv",
    [
        ["--scenario", "no_such_scenario"],
        ["--scenario", "txn_kafka_12671_hanging"],
        ["--scenario", "idempotence_retry_expiry", "--invariant", "no_such_invariant"],
        ["--scenario", "idempotence_retry_expiry", "--retries", "x"],
        ["--scenario", "idempotence_retry_expiry", "--max-in-flight", "1,,2"],
        ["--scenario", "idempotence_retry_expiry", "--idempotence", "yes"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], tmp_path: Path) -> None:
    proc = _keos("config-space", *argv, "--out", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("keos: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "config-space").exists()
