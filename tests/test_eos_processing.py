"""Consume-transform-produce over the group coordinator: real protocol holds, weakened variants caught.

State counts and shortest trace lengths are pinned; every counterexample is
replayed on a freshly built model.
"""

from __future__ import annotations

import dataclasses

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import EngineResult, Verdict
from keos.checker.trace import replay_actions
from keos.model.interface import Model, ModelError
from keos.model.systems.eos import EosSystem
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()
CTP = "txn_eos_consume_transform_produce"
SEEK = "txn_eos_abort_and_seek"
GCF = "txn_eos_group_coordinator_failover"
TV1 = "txn_eos_tv1_add_offsets"
PRE890 = "txn_eos_pre_kip_890"
TV1RT = "txn_eos_tv1_request_timeout"
LATE = "txn_eos_late_txn_offset_commit"
LATE_RB = "txn_eos_late_txn_offset_commit_rebalance"
LATE_OFF = "txn_eos_late_txn_offset_commit_verification_config_off"
TV1RTT = "txn_eos_tv1_txn_offset_commit_round_trip"  # [eos] txn_offset_commit_round_trip (KAFKA-15784)
RTT_RB = "reach_eos_txn_offset_commit_round_trip"
RTT_AF = "txn_eos_round_trip_append_failure"  # the round trip's two writes under append_failure (TV2)

# (scenario, variant) -> distinct states; every property holds or is reached
HOLDS = {
    (SEEK, "kafka"): 3978,
    (SEEK, "tv1"): 4847,
    (CTP, "kafka"): 12768,
    # h17-coord: a reloaded coordinator now restores lastProducerEpoch from the log (KAFKA-20357), so some reloaded
    # states coincide with states that never failed over (7,768 before)
    (GCF, "kafka"): 7513,
    (TV1, "tv1"): 9193,
    (PRE890, "pre_kip_890"): 489,
    (TV1RT, "tv1"): 4488,
    (LATE, "kafka"): 1351,
    (LATE_RB, "kafka"): 10306,
    (LATE_OFF, "tv2_verification_config_off"): 1351,  # TV2 verifies whatever the broker config says
    (TV1RTT, "tv1"): 10693,
    (RTT_AF, "kafka"): 171,
}

# events a scenario exists to produce (its hostile input reached the rule it tests)
EXERCISED = {
    PRE890: ("txn_offset_commit_rejected:INVALID_PRODUCER_EPOCH",),  # the append's epoch check fences the zombie
    TV1RT: ("txn_request_timeout", "stale_response", "add_offsets_to_txn", "txn_offset_commit_timeout"),
    # a TxnOffsetCommit lost with its connection or timed out; a late first copy fails verification (KAFKA-15449)
    LATE: ("group_coordinator_connection_reset", "txn_offset_commit_timeout", "txn_offset_commit_verification_failed"),
    # ... or, after the late joiner's rebalance, the group's generation check
    LATE_OFF: ("txn_offset_commit_timeout", "txn_offset_commit_verification_failed"),
    LATE_RB: ("txn_offset_commit_timeout", "txn_offset_commit_rejected:ILLEGAL_GENERATION", "stale_response"),
    # the verification's three steps; a first copy's callback after its retry's COMMIT marker finds the guard gone
    TV1RTT: (
        "txn_offset_commit_verification_started", "txn_offset_commit_verdict:NONE", "txn_offset_commit_guard_lost"
    ),
    # the fault fails the implicit add's __transaction_state write and the callback's __consumer_offsets append; each
    # is answered COORDINATOR_NOT_AVAILABLE and retried
    RTT_AF: (
        "txn_offset_commit_verification_append_failed", "txn_offset_commit_append_failed",
        "txn_offset_commit_answer:COORDINATOR_NOT_AVAILABLE",
    ),
}

# (scenario, variant) -> {invariant: shortest trace length}
CAUGHT = {
    (CTP, "no_generation_fencing"): {
        "exactly_once_processing": 32, "lost_partition_never_committed": 20, "txn_offset_commits_fenced_exactly": 8,
        "coordinator_answers_per_kafka_table": 8},
    (SEEK, "no_seek_after_abort"): {"exactly_once_processing": 26, "input_processed_eventually": 23},
    (GCF, "load_commits_pending_offsets"): {"exactly_once_processing": 8, "committed_offsets_follow_log_order": 8},
    ("txn_eos_mixed_commits", "materialize_ignores_log_order"): {"committed_offsets_follow_log_order": 18},
    (TV1RT, "unverified_txn_offset_commit"): {
        "no_hanging_transaction": 24, "lso_reaches_high_watermark": 26, "lso_reaches_high_watermark_eventually": 29,
        "coordinator_answers_per_kafka_table": 13},
    (SEEK, "offsets_outside_transaction"): {"exactly_once_processing": 27, "offsets_committed_with_outputs": 13},
    (TV1RTT, "txn_offset_commit_ignores_verification_guard"): {
        "no_hanging_transaction": 28, "lso_reaches_high_watermark": 30, "lso_reaches_high_watermark_eventually": 33},
}


def _run(name: str, variant: str):  # type: ignore[no-untyped-def]
    scenario = SCENARIOS[name]
    return explore(build_model(scenario, variant), name, variant, ExploreOptions())[0]


@pytest.mark.parametrize(
    ("key", "states"),
    [pytest.param(k, v, marks=[pytest.mark.slow] if k[0] == CTP else []) for k, v in sorted(HOLDS.items())],
)
def test_real_protocol_holds_with_partners_reached(key: tuple[str, str], states: int) -> None:
    name, variant = key
    assert SCENARIOS[name].default and SCENARIOS[name].model == "eos"
    result = _run(name, variant)
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict for p in result.properties}
    allowed = (Verdict.HOLDS, Verdict.REACHED)
    if variant == "tv1" and name != TV1RT:  # one instance under TV1 never discards staged offsets
        verdicts.pop("offsets_committed_with_outputs")
        verdicts.pop("offsets_discarded")
    if name in EXERCISED:  # no voluntary abort: only the coordinator aborts
        verdicts.pop("txn_aborted")
        assert all(result.coverage.get(e, 0) > 0 for e in EXERCISED[name]), EXERCISED[name]
    assert all(v in allowed for v in verdicts.values()), verdicts
    assert result.stats["distinct_states"] == states
    if variant == "tv1":
        assert result.coverage.get("add_offsets_to_txn", 0) > 0  # AddOffsetsToTxn is sent under TV1
    if name == CTP:
        for event in ("txn_offset_commit_rejected:ILLEGAL_GENERATION", "UNSTABLE_OFFSET_COMMIT", "offsets_discarded"):
            assert result.coverage.get(event, 0) > 0, event


@pytest.mark.parametrize(("key", "lengths"), sorted(CAUGHT.items()))
def test_weakened_variant_caught_with_replaying_minimal_trace(key: tuple[str, str], lengths: dict[str, int]) -> None:
    name, variant = key
    v = VARIANTS[variant]
    assert v.weakened and name in v.scenarios and set(lengths) <= set(v.breaks)
    result = _run(name, variant)
    found = {p.name: p for p in result.violations() if p.name not in SCENARIOS[name].permitted}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == lengths
    fresh = build_model(SCENARIOS[name], variant)
    props = {p.name: p for p in fresh.properties()}
    for inv, prop_result in found.items():
        assert prop_result.trace is not None
        replay = replay_actions(fresh, prop_result.trace.actions, props[inv])
        assert replay.confirmed and replay.violated_at == len(prop_result.trace.actions), replay.reason
    if key == (CTP, "no_generation_fencing"):  # read on this same search (it costs ~7 CPU-s)
        _zombie_commit_without_generation_fencing_is_a_duplicate(fresh, result)


@pytest.mark.slow
def test_kafka_15784_a_rebalance_between_verification_and_append() -> None:
    """The round trip's window (reach scenario, ~8 CPU-s): checked on arrival (Kafka 3.6), a zombie's TxnOffsetCommit is
    staged after the rebalance that fenced it; checked in the callback (the fix), the same interleaving is refused."""
    weak = _run(RTT_RB, "txn_offset_commit_validates_before_verification")
    lost = next(p for p in weak.properties if p.name == "lost_partition_never_committed")
    assert lost.verdict is Verdict.VIOLATED and lost.trace is not None
    model = build_model(SCENARIOS[RTT_RB], "txn_offset_commit_validates_before_verification")
    labels = [model.format_action(a) for a in lost.trace.actions]
    started = next(i for i, a in enumerate(labels) if "gc->tc" in a and "VerifyTxnOffsetCommit(" in a)
    rebalance = next(i for i, a in enumerate(labels) if a.startswith("Rebalance"))
    answered = next(i for i, a in enumerate(labels) if "VerifyTxnOffsetCommitResponse(" in a)
    # the request reached the group coordinator before the rebalance, its callback ran after it
    arrived = max(i for i, a in enumerate(labels[:started]) if "->gc" in a and "TxnOffsetCommit(" in a)
    assert arrived < rebalance < answered
    real = _run(RTT_RB, "kafka")
    assert real.complete and not real.violated
    assert real.coverage.get("txn_offset_commit_rejected:ILLEGAL_GENERATION", 0) > 0


def test_the_zombie_commit_is_read_on_a_caught_case() -> None:
    assert (CTP, "no_generation_fencing") in CAUGHT


def _zombie_commit_without_generation_fencing_is_a_duplicate(model: Model, result: EngineResult) -> None:
    """The counterexample: the old owner's TxnOffsetCommit (old generation) is accepted after the rebalance."""
    eos = next(p for p in result.properties if p.name == "exactly_once_processing")
    assert eos.verdict is Verdict.VIOLATED and eos.trace is not None
    assert "2 committed outputs" in eos.detail
    labels = [model.format_action(a) for a in eos.trace.actions]
    rebalance = next(i for i, a in enumerate(labels) if a.startswith("Rebalance"))
    stale = [i for i, a in enumerate(labels) if "TxnOffsetCommit(" in a and "generation=1" in a and "p0->gc" in a]
    assert stale and stale[-1] > rebalance


def test_eos_variants_registered_with_existing_scenarios() -> None:
    for name in ("no_generation_fencing", "offsets_outside_transaction", "no_seek_after_abort"):
        v = VARIANTS[name]
        assert v.weakened and v.bug and v.breaks
        assert all(s in SCENARIOS for s in v.scenarios)


@pytest.mark.parametrize(
    "change", [{"partitions": 2}, {"records_per_transaction": 2}, {"shared_transactional_id": True}]
)
def test_the_eos_model_refuses_a_programmatic_config_of_another_shape(change: dict[str, object]) -> None:
    """The scenario loader rejects these shapes first (tests/test_scenarios_input.py); a TxnConfig built in code
    reaches the model's own guard: one output partition, one record per transaction, a transactional.id each."""
    config = SCENARIOS[SEEK].txn
    assert config is not None
    EosSystem(config, VARIANTS["kafka"])  # the scenario's own shape is accepted
    bad = dataclasses.replace(config, topology=dataclasses.replace(config.topology, **change))  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="one output partition"):
        EosSystem(bad, VARIANTS["kafka"])
