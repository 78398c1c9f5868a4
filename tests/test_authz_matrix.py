"""The generated ACL matrix (scenarios/authz_matrix.py, issue 23): every required binding granted and denied."""

from __future__ import annotations

import pytest

from keos.model.security.checks import add_partitions_to_txn
from keos.model.variants import VARIANTS
from keos.scenarios import builtin_scenarios, scenario_set
from keos.scenarios.authz_matrix import DEFAULT, GRANTS, GRANTS_ONLY, REQUIRED, TRANSFORMS, matrix_documents


def test_matrix_covers_every_required_binding_and_transform() -> None:
    names = {d["name"] for d in matrix_documents()}
    for shape, required in REQUIRED.items():
        assert f"authz_matrix_{shape}_all_granted" in names
        for operation, resource in required:
            target = f"{operation.lower()}_{resource.split(':')[0].lower()}"
            wanted = GRANTS if shape in GRANTS_ONLY else TRANSFORMS
            for transform in wanted:
                if transform != "granted":
                    assert f"authz_matrix_{shape}_{target}_{transform}" in names
    reach = scenario_set("reach")
    assert names <= set(reach) and {n for n in names if reach[n].default} == DEFAULT
    assert len(names) == len(set(names)) == len(matrix_documents())


def test_denials_and_grants_reach_the_kafka_apis_checks() -> None:
    """A denied binding denies the AddPartitionsToTxn of a TV1 client; each granting transform grants it."""
    scenarios = builtin_scenarios()
    flags = VARIANTS["tv1"].flags
    for transform in TRANSFORMS:
        sc = scenarios[f"authz_matrix_tv1_write_topic_{transform}" if transform != "granted"
                       else "authz_matrix_tv1_all_granted"]
        sec = sc.txn.security
        error = add_partitions_to_txn(sec, "User:alice", "txn-0", (0,), flags)
        assert (error == "NONE") == (transform in GRANTS), (transform, error)
        assert add_partitions_to_txn(sec, "User:bob", "txn-1", (0,), flags) == "NONE"  # the super user


def test_transaction_partitions_authorized_catches_add_partitions_without_the_topic_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 23's surviving mutant of checks.add_partitions_to_txn (its topic check dropped): the Produce's own
    topic check still refuses the data, but the partition joins the transaction; the property sees it."""
    from keos.checker.explore.search import ExploreOptions, explore
    from keos.model.security import checks
    from keos.scenarios import build_model

    sc = builtin_scenarios()["authz_matrix_tv1_write_topic_denied"]
    result, _ = explore(build_model(sc), sc.name, sc.variant, ExploreOptions(stop_on_first=True))
    assert not result.violated
    monkeypatch.setattr(checks, "add_partitions_to_txn",
                        lambda sec, principal, tid, partitions, flags: checks._txn_id(sec, principal, tid, flags))
    result, _ = explore(build_model(sc), sc.name, sc.variant, ExploreOptions(stop_on_first=True))
    assert [p.name for p in result.violations()] == ["transaction_partitions_authorized"]
