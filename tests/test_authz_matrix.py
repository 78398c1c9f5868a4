"""The generated ACL matrix (scenarios/authz_matrix.py, issue 23): every required binding granted, denied, revoked;
every rule of the authorizer decided both ways, with a verdict stated independently of the authorizer."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.model.security import authorizer, checks, records
from keos.model.security.authorizer import AclBinding, Operation
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios, scenario_set
from keos.scenarios.authz_matrix import (
    ADVERSARY,
    GRANTS,
    REACH_ONLY,
    REQUEST_CELLS,
    REQUIRED,
    RULE_TRANSFORMS,
    RULES_BINDING,
    RULES_SHAPE,
    TRANSFORMS,
    matrix_documents,
)

SCENARIOS = builtin_scenarios()
RULES = list(RULE_TRANSFORMS)


def _name(shape: str, index: int, transform: str) -> str:
    operation, resource = REQUIRED[shape][index]
    target = "all" if transform == "granted" else f"{operation.lower()}_{resource.split(':')[0].lower()}"
    return f"authz_matrix_{shape}_{target}_{transform}"


def _violations(name: str) -> list[str]:
    sc = SCENARIOS[name]
    result, _ = explore(build_model(sc), sc.name, sc.variant, ExploreOptions(stop_on_first=True))
    return [p.name for p in result.violations()]


def test_matrix_covers_every_request_cell_and_every_rule() -> None:
    names = [d["name"] for d in matrix_documents()]
    assert len(names) == len(set(names))
    for shape, cells in REQUEST_CELLS.items():
        for index, transform in cells:
            assert _name(shape, index, transform) in names
    index = REQUIRED[RULES_SHAPE].index(RULES_BINDING)
    assert {_name(RULES_SHAPE, index, t) for t in RULES} <= set(names)
    reach = scenario_set("reach")
    assert set(names) <= set(reach)
    assert {n for n in names if not reach[n].default} == REACH_ONLY


def test_each_cell_states_its_verdict_from_the_transform_not_from_the_authorizer() -> None:
    """expect_denied / expect_granted come from TRANSFORMS (Kafka's documented semantics); the authorizer agrees."""
    for doc in matrix_documents():
        transform = next(t for t in sorted(TRANSFORMS, key=len, reverse=True) if doc["name"].endswith(f"_{t}"))
        sec = SCENARIOS[doc["name"]].txn.security  # type: ignore[union-attr]
        assert sec is not None
        shape = doc["name"].split("_")[2]
        who = ADVERSARY if shape in ("markers", "markerstv1", "stranger") else "User:alice"
        if TRANSFORMS[transform] == "D":
            assert sec.expect_denied == (who,) and who not in sec.expect_granted
            assert who != "User:alice" or "User:p1" in sec.expect_granted
        else:
            assert who in sec.expect_granted and not sec.expect_denied
        if shape.startswith("markers"):  # WriteTxnMarkers takes Alter or ClusterAction (KafkaApis)
            granted = any(sec.allows(who, op, "Cluster", "kafka-cluster") for op in ("ClusterAction", "Alter"))
        else:
            granted = all(sec.allows(who, op, *res.split(":", 1)) for op, res in REQUIRED[shape])
        assert granted == (TRANSFORMS[transform] != "D"), doc["name"]


def test_denials_and_grants_reach_the_kafka_apis_checks() -> None:
    """The rules cells decide TransactionalId Write both ways; bob, a super user, is always allowed."""
    flags = VARIANTS["kafka"].flags
    index = REQUIRED[RULES_SHAPE].index(RULES_BINDING)
    for transform in RULES:
        sec = SCENARIOS[_name(RULES_SHAPE, index, transform)].txn.security  # type: ignore[union-attr]
        assert sec is not None
        error = checks.init_producer_id(sec, "User:alice", "txn-0", flags)
        assert (error == "NONE") == (transform in GRANTS), (transform, error)
        if "User:p1" in sec.super_users:  # beside a denied alice runs bob (p1, unnamed: User:p1), a super user
            assert sec.principal_of(1) == "User:p1" and checks.end_txn(sec, "User:p1", "txn-1", flags) == "NONE"


def test_transaction_partitions_authorized_catches_add_partitions_without_the_topic_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 23's surviving mutant of checks.add_partitions_to_txn (its topic check dropped): the Produce's own
    topic check still refuses the data, but the partition joins the transaction; the property sees it."""
    name = "authz_matrix_tv1_write_topic_missing"
    assert _violations(name) == []
    monkeypatch.setattr(checks, "add_partitions_to_txn",
                        lambda sec, principal, tid, partitions, flags: checks._txn_id(sec, principal, tid, flags,
                                                                                   "AddPartitionsToTxn"))
    assert _violations(name) == ["transaction_partitions_authorized"]


Authorize = Callable[..., bool]


def _with_authorizer(monkeypatch: pytest.MonkeyPatch, fake: Authorize) -> None:
    monkeypatch.setattr(authorizer, "authorize", fake)
    monkeypatch.setattr(records, "authorize", fake)


def _any_operation(acls: Iterable[AclBinding], principal: str, operation: str, resource_type: str, name: str,
                   super_users: Iterable[str] = (), allow_if_no_acl: bool = False) -> bool:
    """A broken authorizer: an Allow of any operation on the resource grants (Describe taken for Write)."""
    real = authorizer._matches
    if principal in tuple(super_users):
        return True
    matching = [b for b in acls if real(b, principal, resource_type, name)]
    return not any(b.permission == "Deny" and b.operation in (operation, Operation.ALL) for b in matching) and any(
        b.permission == "Allow" for b in matching)


def _deny_any_operation(acls: Iterable[AclBinding], principal: str, operation: str, resource_type: str, name: str,
                        super_users: Iterable[str] = (), allow_if_no_acl: bool = False) -> bool:
    """A broken authorizer: a Deny of any operation on the resource denies (a Deny of Describe taken for Write)."""
    if principal in tuple(super_users):
        return True
    matching = [b for b in acls if authorizer._matches(b, principal, resource_type, name)]
    if any(b.permission == "Deny" for b in matching):
        return False
    return any(b.permission == "Allow" and b.operation in (operation, Operation.ALL) for b in matching)


@pytest.mark.parametrize(
    ("fake", "cell", "caught_by"),
    [
        (_any_operation, "other_operation", "denied_principal_commits_nothing"),
        (_deny_any_operation, "deny_other_operation", "granted_principal_never_refused"),
    ],
)
def test_the_cells_own_verdict_catches_a_wrong_authorizer(
    monkeypatch: pytest.MonkeyPatch, fake: Any, cell: str, caught_by: str
) -> None:
    """The oracle is independent of the authorizer the gate and the other invariants share: an authorizer that
    grants (or refuses) against Kafka's semantics lets the denied client commit (or refuses the granted one)."""
    name = _name(RULES_SHAPE, REQUIRED[RULES_SHAPE].index(RULES_BINDING), cell)
    assert _violations(name) == []
    _with_authorizer(monkeypatch, fake)
    assert caught_by in _violations(name)


@pytest.mark.parametrize(
    ("variant", "name", "invariant"),
    [
        ("acl_changes_not_applied", "authz_matrix_tv2_write_topic_revoked", "transactional_writes_authorized"),
        ("acl_changes_not_applied", "authz_matrix_tv2_write_transactionalid_revoked",
         "unauthorized_never_changes_transaction"),
        ("offsets_without_group_acl", "authz_matrix_eos_read_group_revoked", "transactional_offsets_authorized"),
    ],
)
def test_a_revocation_is_judged_by_the_acls_in_force(variant: str, name: str, invariant: str) -> None:
    """A revoked binding no longer authorizes: a broker that keeps authorizing by the startup ACLs, or skips the
    group check, is caught by the time-aware properties (each write judged by the ACLs when it was appended)."""
    sc = SCENARIOS[name]
    result, _ = explore(build_model(sc, variant), sc.name, variant, ExploreOptions())
    assert invariant in [p.name for p in result.violations()]


def test_a_refusal_with_another_resources_error_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """expect_errors: a Group check answering TOPIC_AUTHORIZATION_FAILED (fatal for TransactionManager where
    GROUP_AUTHORIZATION_FAILED is abortable) breaks refusals_carry_kafkas_error."""
    name = "authz_matrix_eos_read_group_revoked"
    assert SCENARIOS[name].txn.security.expect_errors == ("GROUP_AUTHORIZATION_FAILED",)  # type: ignore[union-attr]
    real = checks._offsets  # AddOffsetsToTxn's and TxnOffsetCommit's checks

    def topic_error(sec: Any, principal: str, tid: str, group: int, flags: Any, api: str) -> str:
        error = real(sec, principal, tid, group, flags, api)
        return "TOPIC_AUTHORIZATION_FAILED" if error == "GROUP_AUTHORIZATION_FAILED" else error

    monkeypatch.setattr(checks, "_offsets", topic_error)
    assert "refusals_carry_kafkas_error" in _violations(name)




_PRODUCE, _TXN_OFFSET_COMMIT = checks.produce, checks.txn_offset_commit


def _topic_first(sec: Any, principal: str, tid: str, partition: int, control: bool, flags: Any) -> str:
    """KafkaApis.handleProduceRequest with the topic checked before the TransactionalId."""
    if not sec.may_write_topic(principal, partition):
        return "TOPIC_AUTHORIZATION_FAILED"
    return _PRODUCE(sec, principal, tid, partition, control, flags)


def _group_first(sec: Any, principal: str, tid: str, group: int, flags: Any) -> str:
    """KafkaApis.handleTxnOffsetCommitRequest with the group checked before the TransactionalId."""
    if not sec.allows(principal, Operation.READ, "Group", f"g{group}"):
        return "GROUP_AUTHORIZATION_FAILED"
    return _TXN_OFFSET_COMMIT(sec, principal, tid, group, flags)


@pytest.mark.parametrize(
    ("name", "api", "swapped"),
    [
        ("authz_matrix_tv2_write_transactionalid_write_topic_revoked", "produce", _topic_first),
        ("authz_matrix_eos_write_transactionalid_read_group_revoked", "txn_offset_commit", _group_first),
    ],
)
def test_two_checks_in_the_wrong_order_are_caught(
    monkeypatch: pytest.MonkeyPatch, name: str, api: str, swapped: Callable[..., str]
) -> None:
    """PAIR_CELLS: with the TransactionalId and the topic (group) both revoked, a handler that checks the topic
    (group) first answers the abortable TOPIC_ (GROUP_) AUTHORIZATION_FAILED where Kafka answers the fatal
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED: refusals_follow_kafkas_check_order (about 1 CPU-s together)."""
    monkeypatch.setattr(checks, api, swapped)
    assert "refusals_follow_kafkas_check_order" in _violations(name)
