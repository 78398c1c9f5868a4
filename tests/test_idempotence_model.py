"""The idempotent producer and the leader's sequence table, by behaviour."""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.model.log.producer_state import BatchMetadata, ProducerStateEntry, append_batch, validate_batch
from keos.model.protocol.errors import Errors
from keos.model.variants import VARIANTS, ProtocolFlags
from keos.scenarios import build_model, builtin_scenarios

REAL = ProtocolFlags()


def entry(epoch: int, *seqs: int) -> ProducerStateEntry:
    return ProducerStateEntry(7, epoch, tuple(BatchMetadata(s, s, i) for i, s in enumerate(seqs)))


class TestValidateBatch:
    """Fact sheet §2.2: duplicate -> epoch -> sequence."""

    def test_unknown_producer_accepts_any_sequence(self) -> None:
        assert validate_batch(None, 0, 5, 5, REAL, 10) == (Errors.NONE, -1)

    def test_unknown_producer_starts_at_zero_on_a_partition_that_never_held_a_record(self) -> None:
        """KAFKA-15591 (PR #23234, Kafka 4.5): ``mapEndOffset() == 0`` leaves no producer state to have lost."""
        assert validate_batch(None, 0, 5, 5, REAL, 0) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        assert validate_batch(None, 0, 0, 0, REAL, 0) == (Errors.NONE, -1)
        before = ProtocolFlags(first_sequence_zero_on_empty_log=False)
        assert validate_batch(None, 0, 5, 5, before, 0) == (Errors.NONE, -1)

    def test_in_order_batch_is_appended(self) -> None:
        assert validate_batch(entry(0, 0, 1), 0, 2, 2, REAL, 10) == (Errors.NONE, -1)

    def test_cached_batch_is_a_duplicate_with_its_original_offset(self) -> None:
        assert validate_batch(entry(0, 0, 1, 2), 0, 1, 1, REAL, 10) == (Errors.NONE, 1)

    def test_gap_is_out_of_order(self) -> None:
        assert validate_batch(entry(0, 0), 0, 2, 2, REAL, 10) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)

    def test_duplicate_older_than_the_cache_is_out_of_order(self) -> None:
        e = entry(0, 1, 2, 3, 4, 5)
        assert validate_batch(e, 0, 0, 0, REAL, 10) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)

    def test_older_epoch_is_fenced(self) -> None:
        assert validate_batch(entry(3, 0), 2, 1, 1, REAL, 10) == (Errors.INVALID_PRODUCER_EPOCH, -1)

    def test_new_epoch_must_start_at_zero(self) -> None:
        assert validate_batch(entry(0, 0), 1, 0, 0, REAL, 10) == (Errors.NONE, -1)
        assert validate_batch(entry(0, 0), 1, 1, 1, REAL, 10) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)

    def test_sequence_wraps_after_the_last_value(self) -> None:
        flags = ProtocolFlags(sequence_space=8)
        assert validate_batch(entry(0, 7), 0, 0, 0, flags, 10) == (Errors.NONE, -1)

    def test_new_epoch_clears_cached_batches(self) -> None:
        e = append_batch(entry(0, 0, 1), 7, 1, 0, 0, 9, REAL)
        assert e.producer_epoch == 1 and e.batches == (BatchMetadata(0, 0, 9),)

    def test_cache_keeps_the_last_five_batches(self) -> None:
        e = None
        for seq in range(7):
            e = append_batch(e, 7, 0, seq, seq, seq, REAL)
        assert e is not None and [b.first_seq for b in e.batches] == [2, 3, 4, 5, 6]


#: Distinct states of each default scenario under the real protocol: a semantic change shows up here.
PINNED_STATES = {
    # KAFKA-15591: a retry that overtakes an expired first batch is refused on an empty log; KAFKA-8710: canRetry
    # judges that refusal by the unresolved sequence (the batch right after the expired one bumps the epoch)
    "idempotence_retry": 1820,
}


@pytest.fixture(scope="module")
def scenarios():  # type: ignore[no-untyped-def]
    return builtin_scenarios()


@pytest.mark.parametrize("name", ["idempotence_retry", "idempotence_epoch_bump", "idempotence_two_producers"])
def test_real_protocol_holds_and_every_invariant_is_exercised(scenarios, name: str) -> None:  # type: ignore[no-untyped-def]
    sc = scenarios[name]
    result, _ = explore(build_model(sc), sc.name, "kafka", ExploreOptions(), sc.permitted)
    verdicts = {p.name: p.verdict for p in result.properties}
    assert result.complete
    for prop in build_model(sc).properties():
        if prop.partners:
            want = Verdict.PERMITTED if prop.name in sc.permitted else Verdict.HOLDS
            assert verdicts[prop.name] is want, (prop.name, verdicts[prop.name])
    if name in PINNED_STATES:
        assert result.stats["distinct_states"] == PINNED_STATES[name]


#: (variant, scenario) -> (invariant caught first by BFS, shortest trace length)
EXPECTED_CATCHES = {
    ("no_idempotence", "idempotence_retry"): ("no_duplicate_append", 5),
    ("broker_accepts_any_sequence", "idempotence_retry"): ("produce_answer_per_kafka", 9),
    ("broker_skips_epoch_check", "idempotence_epoch_bump"): ("per_partition_order", 11),
    ("small_duplicate_window", "idempotence_retry"): ("produce_answer_per_kafka", 10),
}


@pytest.mark.parametrize(("variant", "scenario"), sorted(EXPECTED_CATCHES))
def test_each_weakened_variant_is_caught_with_a_replaying_shortest_trace(
    scenarios, variant: str, scenario: str
) -> None:  # type: ignore[no-untyped-def]
    sc = scenarios[scenario]
    model = build_model(sc, variant)
    result, _ = explore(model, sc.name, variant, ExploreOptions(stop_on_first=True))
    assert result.violated
    invariant, length = EXPECTED_CATCHES[(variant, scenario)]
    found = {p.name: p for p in result.violations()}
    assert invariant in found
    trace = found[invariant].trace
    assert trace is not None and len(trace.actions) == length
    prop = next(p for p in model.properties() if p.name == invariant)
    replayed = replay_actions(model, trace.actions, prop)
    assert replayed.confirmed and replayed.violated_at == length
    assert invariant in VARIANTS[variant].breaks


def test_every_weakened_variant_names_a_scenario_that_exists(scenarios) -> None:  # type: ignore[no-untyped-def]
    for v in VARIANTS.values():
        if v.weakened:
            assert v.scenarios and all(s in scenarios for s in v.scenarios), v.name


def test_sequence_space_smaller_than_a_delay_duplicates(scenarios) -> None:  # type: ignore[no-untyped-def]
    """Spec exploration: a request delayed for a full sequence cycle is accepted again."""
    sc = scenarios["idempotence_sequence_wrap"]
    result, _ = explore(build_model(sc), sc.name, "kafka", ExploreOptions(stop_on_first=True))
    assert "no_duplicate_append" in {p.name for p in result.violations()}


def test_acks_one_loss_is_reported_as_permitted(scenarios) -> None:  # type: ignore[no-untyped-def]
    sc = scenarios["acks_one_failover"]
    result, _ = explore(build_model(sc), sc.name, "kafka", permitted=sc.permitted)
    verdicts = {p.name: p.verdict for p in result.properties}
    assert verdicts["no_acked_loss"] is Verdict.PERMITTED
    assert not result.violated
