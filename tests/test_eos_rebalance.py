"""Consume-transform-produce on the classic rebalance protocol (issue 28, KIP-447 in the model).

The eos model in protocol mode (``[eos] assignor``): the instances join the group through JoinGroup /
SyncGroup / Heartbeat, the assignor picks the input partition's owner, TxnOffsetCommit carries the
consumer's member id and generation and is validated as ``ClassicGroup.validateOffsetCommit`` does.
State counts and shortest trace lengths are pinned; every counterexample is replayed on a freshly
built model.
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import PropertyResult, Verdict
from keos.checker.trace import replay_actions
from keos.model.coordinator.group import classic_group as cg
from keos.model.interface import Model, ModelError
from keos.model.protocol.errors import Errors
from keos.model.systems.eos import EosSystem
from keos.model.systems.transactions_records import EosConfig, TxnConfig, TxnTopology
from keos.model.variants import VARIANTS, get_variant
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()
ZOMBIE = "txn_eos_rebalance_session_timeout"
JOIN = "txn_eos_rebalance_join"
COOP = "txn_eos_cooperative_leave"

# scenario -> (distinct states, events that must occur)
HOLDS = {
    JOIN: (1791, ("eager:revoked_all", "UNSTABLE_OFFSET_COMMIT", "owner_started_after_move", "join:complete")),
    COOP: (4651, ("txn_offset_commit_during_completing_rebalance", "left_group", "owner_started_after_move")),
    ZOMBIE: (18181, ("session_expired:zombie", "txn_offset_commit_fenced", "heartbeat:UNKNOWN_MEMBER_ID")),
}

# (scenario, variant) -> {invariant: shortest trace length}
CAUGHT = {
    (JOIN, "fetch_without_require_stable"): {"exactly_once_processing": 39, "new_owner_starts_from_stable_offset": 13},
    (ZOMBIE, "txn_offsets_visible_before_marker"): {
        "lost_partition_never_committed": 24,
        "new_owner_starts_from_stable_offset": 17,
    },
    (ZOMBIE, "no_generation_fencing"): {
        "exactly_once_processing": 36, "lost_partition_never_committed": 24, "txn_offset_commits_fenced_exactly": 8,
        "coordinator_answers_per_kafka_table": 8},
}


def _run(name: str, variant: str, **options: bool):  # type: ignore[no-untyped-def]
    return explore(build_model(SCENARIOS[name], variant), name, variant, ExploreOptions(**options))[0]


@pytest.mark.parametrize(
    ("name", "expected"),
    [pytest.param(k, v, marks=[pytest.mark.slow] if k == ZOMBIE else []) for k, v in sorted(HOLDS.items())],
)
def test_protocol_mode_holds_with_partners_reached(name: str, expected: tuple[int, tuple[str, ...]]) -> None:
    states, events = expected
    scenario = SCENARIOS[name]
    assert scenario.default and scenario.model == "eos" and scenario.txn is not None
    assert scenario.txn.eos is not None and scenario.txn.eos.assignor
    result = _run(name, "kafka")
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict for p in result.properties}
    assert all(v in (Verdict.HOLDS, Verdict.REACHED) for v in verdicts.values()), verdicts
    assert {"lost_partition_never_committed", "new_owner_starts_from_stable_offset"} <= set(verdicts)
    assert result.stats["distinct_states"] == states
    for event in events:
        assert result.coverage.get(event, 0) > 0, event


@pytest.mark.slow
@pytest.mark.parametrize(("key", "lengths"), sorted(CAUGHT.items()))
def test_weakened_variant_caught_with_replaying_trace(key: tuple[str, str], lengths: dict[str, int]) -> None:
    name, variant = key
    v = VARIANTS[variant]
    assert v.weakened and name in v.scenarios and set(lengths) & set(v.breaks)
    result = _run(name, variant)
    found = {p.name: p for p in result.violations()}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == lengths
    fresh = build_model(SCENARIOS[name], variant)
    if key == (ZOMBIE, "no_generation_fencing"):  # read on this same search (it costs ~9 CPU-s)
        _zombie_commits_after_the_new_owner_started_without_fencing(fresh, found)
    props = {p.name: p for p in fresh.properties()}
    for inv, prop_result in found.items():
        assert prop_result.trace is not None
        replay = replay_actions(fresh, prop_result.trace.actions, props[inv])
        assert replay.confirmed and replay.violated_at == len(prop_result.trace.actions), replay.reason


def _zombie_commits_after_the_new_owner_started_without_fencing(model: Model, found: dict[str, PropertyResult]) -> None:
    """The counterexample: the member whose session expired keeps working; its TxnOffsetCommit, with its
    old member id and generation, is accepted after the new owner fetched its offset, and it commits."""
    lost = found["lost_partition_never_committed"]
    assert lost.trace is not None
    labels = [model.format_action(a) for a in lost.trace.actions]
    expired = next(i for i, a in enumerate(labels) if a.startswith("SessionTimeout"))
    started = [i for i, a in enumerate(labels) if a.startswith("FetchOffsets")]
    stale = [i for i, a in enumerate(labels) if "TxnOffsetCommit(" in a and "generation=1" in a]
    assert stale and stale[-1] > expired and any(expired < i for i in started)


def test_txn_offset_commit_validation_in_kafkas_order() -> None:
    """``ClassicGroup.validateOffsetCommit(isTransactional=true)``, Kafka 4.0."""
    group = cg.empty_group()
    assert cg.validate_txn_offset_commit(group, "", -1) == Errors.NONE  # no group metadata, Empty group
    assert cg.validate_txn_offset_commit(group, "c0-0", 1) == Errors.UNKNOWN_MEMBER_ID
    joined = cg.join_group(group, 0, "", ()).group
    member = joined.members[0].member_id
    completing = cg.complete_join(joined, "range")
    assert completing.state == cg.COMPLETING_REBALANCE
    # transactional commits are accepted while CompletingRebalance; plain ones are not
    assert cg.validate_txn_offset_commit(completing, member, completing.generation) == Errors.NONE
    assert cg.validate_offset_commit(completing, member, completing.generation, True) == Errors.REBALANCE_IN_PROGRESS
    assert cg.validate_txn_offset_commit(completing, member, completing.generation - 1) == Errors.ILLEGAL_GENERATION
    assert cg.validate_txn_offset_commit(completing, "c9-9", completing.generation) == Errors.UNKNOWN_MEMBER_ID
    assert cg.validate_txn_offset_commit(completing, "c9-9", 0, fencing=False) == Errors.NONE
    assert (
        cg.validate_txn_offset_commit(completing._replace(state=cg.DEAD), member, 1) == Errors.COORDINATOR_NOT_AVAILABLE
    )


def test_protocol_mode_configuration_errors() -> None:
    topo = TxnTopology(producers=2, transactions_per_producer=1)
    kafka = get_variant("kafka")
    with pytest.raises(ModelError, match="unknown assignor"):
        EosSystem(TxnConfig(topology=topo, eos=EosConfig(input_records=1, assignor="bogus")), kafka)
    with pytest.raises(ModelError, match="late_instances"):
        EosSystem(TxnConfig(topology=topo, eos=EosConfig(input_records=1, assignor="range", late_instances=2)), kafka)
    with pytest.raises(ModelError, match="needs an assignor"):
        EosSystem(TxnConfig(topology=topo, eos=EosConfig(input_records=1, late_instances=1)), kafka)


def test_first_generation_formed_by_the_protocol() -> None:
    model = build_model(SCENARIOS[JOIN], "kafka")
    (state,) = model.init_states()
    assert state.members is not None and state.members.state == cg.STABLE and state.members.generation == 1
    assert [c.up for c in state.consumers] == [False, True]  # instance 0 is late
    assert [a.owns for a in state.apps] == [False, True] and state.ghost.start_owner == 1


def test_the_zombie_counterexample_is_read_on_a_caught_case() -> None:
    assert (ZOMBIE, "no_generation_fencing") in CAUGHT
