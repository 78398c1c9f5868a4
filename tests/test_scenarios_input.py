"""Scenario files are validated strictly; a bad one is a one-line ScenarioError."""

from __future__ import annotations

from pathlib import Path

import pytest

from keos.scenarios import ScenarioError, load_scenario, resolve_scenario

GOOD = """
name = "mine"
[topology]
producers = 1
records_per_producer = 1
[faults]
drop = 1
total = 1
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_a_user_scenario_loads(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, GOOD))
    assert sc.name == "mine" and sc.config.faults.drop == 1 and sc.config.topology.records_per_producer == 1


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("name = 'x'\n[faults]\ndorp = 1\n", "unknown key 'dorp'"),
        ("name = 'x'\nmodel = 'eos'\n[eos]\ninput_records = 1\nfiltered_records = 2\n", "(2) is above"),
        ("name = 'x'\nmodel = 'eos'\n[eos]\nfiltered_records = -1\n", "must be >= 0"),
        ("name = 'x'\nmodel = 'eos'\n[eos]\nplain_commits = 1\nassignor = 'range'\n", "abstract mode"),
        ("name = 'x'\nmodel = 'eos'\n[eos]\nplain_commits = -1\n", "must be >= 0"),
        ("name = 'x'\nmodel = 'eos'\n[transactions]\npartitions = 2\n", "partitions = 1"),
        ("name = 'x'\nmodel = 'eos'\n[transactions]\nshared_transactional_id = true\n", "own transactional.id"),
        ("name = 'x'\nmodel = 'eos'\n[eos]\ntxn_offset_commit_round_trip = true\n[faults]\ncoordinator_failover = 1\n",
         "modelled without coordinator_failover"),
        ("name = 'x'\n[topology]\nproducers = 'two'\n", "must be an integer"),
        ("name = 'x'\n[producer]\nacks = '1'\n", "requires acks=all"),
        ("name = 'x'\n[producer]\nmax_in_flight = 6\n", "<= 5"),
        ("name = 'x'\nvariant = 'nope'\n", "unknown variant"),
        ("name = 'x'\nmodel = 'nope'\n", "unknown model"),
        ("name = 'x'\npermitted = ['no_such_invariant']\n", "not checked"),
        ("name = 'Bad Name'\n", "'name' must be"),
        ("name = 'x'\n[faults]\ndrop = -1\n", ">= 0"),
        ("name = 'x'\n[broker]\nread_uncommitted_consumer = true\ndelete_records = true\n", "auto.offset.reset"),
        ("name = 'x'\n[broker]\nread_uncommitted_consumer = 1\n", "must be true or false"),
        ("name = 'x'\nfrobnicate = 1\n", "unknown key 'frobnicate'"),
        ("name = [\n", "not valid TOML"),
    ],
)
def test_malformed_scenarios_give_one_line_errors(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_missing_file_and_unknown_name() -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario("/nonexistent/x.toml")
    with pytest.raises(ScenarioError, match="unknown scenario"):
        resolve_scenario("no_such_scenario")
