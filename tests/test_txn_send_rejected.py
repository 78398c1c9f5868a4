"""A ``send()`` refused synchronously inside a transaction (``txn_send_rejected``, KAFKA-9279).

``KafkaProducer.doSend`` returns an ``ApiException`` raised before the record reaches the accumulator as a failed
future; since Kafka 3.2 it also calls ``TransactionManager.maybeTransitionToErrorState``, so the transaction is
abortable and ``commitTransaction`` cannot succeed without the record.  The property that judges it is the user's
promise ``atomic_commit`` -- in consume-transform-produce ``exactly_once_processing`` -- and the weakened variant
``send_error_ignored`` (Kafka before 3.2) must violate it.
"""

from __future__ import annotations

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.clients import transactional_producer as tp
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

SCENARIO = "txn_send_rejected"
EOS_SCENARIO = "txn_eos_send_rejected"


def _verdicts(variant: str, name: str = SCENARIO) -> dict[str, Verdict]:
    scenario = builtin_scenarios()[name]
    result = explore(build_model(scenario, variant), name, variant, ExploreOptions())[0]
    return {p.name: p.verdict for p in result.properties}


def _after_rejection(variant: str) -> tuple[tp.TxnClient, list[str]]:
    """Init, begin, then a rejected send: the client and the application calls offered next."""
    model = build_model(builtin_scenarios()[SCENARIO], variant)
    s = model.init_states()[0]
    for kind in ("InitTransactions", "SendTxnRequest", "Deliver", "Deliver", "BeginTransaction", "SendRejected"):
        action = next(a for a in model.actions(s) if a.kind == kind)
        step = model.step(s, action)
        assert step is not None
        s = step[0]
    return s.clients[0], [a.kind for a in model.actions(s)]


def test_a_rejected_send_makes_the_transaction_abortable() -> None:
    c, offered = _after_rejection("kafka")
    assert c.state == tp.C.ABORTABLE_ERROR
    assert "CommitTransaction" not in offered and "AbortTransaction" in offered


def test_before_kafka_3_2_the_transaction_stays_open_and_may_commit() -> None:
    c, offered = _after_rejection("send_error_ignored")
    assert c.state == tp.C.IN_TRANSACTION
    assert "Send" in offered  # the transaction's second record; the rejected one is gone


def test_atomic_commit_holds_on_kafka_and_catches_send_error_ignored() -> None:
    assert VARIANTS["send_error_ignored"].scenarios == (SCENARIO, EOS_SCENARIO)
    assert _verdicts("kafka")["atomic_commit"] is Verdict.HOLDS
    assert _verdicts("send_error_ignored")["atomic_commit"] is Verdict.VIOLATED


def test_consume_transform_produce_aborts_and_reprocesses_after_a_rejected_output() -> None:
    """EOS: the output's send is refused; the input record must be processed again, its output committed once."""
    assert _verdicts("kafka", EOS_SCENARIO)["exactly_once_processing"] is Verdict.HOLDS
    assert _verdicts("send_error_ignored", EOS_SCENARIO)["exactly_once_processing"] is Verdict.VIOLATED


def test_the_witness_fires_on_the_reaction_not_on_the_refusal() -> None:
    """``send_rejection_made_abortable`` partners both judges: it fires on the client made abortable, so a model that
    records the refusal but drops its effect (the client unchanged) leaves ``atomic_commit`` untested, not held."""
    assert _verdicts("kafka")["send_rejection_made_abortable"] is Verdict.REACHED
    assert _verdicts("kafka", EOS_SCENARIO)["send_rejection_made_abortable"] is Verdict.REACHED
    scenario = builtin_scenarios()[SCENARIO]
    model = build_model(scenario, "kafka")

    def ignored(s, i):  # type: ignore[no-untyped-def]  # the refusal seen, its effect dropped
        return s, ("send_rejected",)

    model._HANDLERS = {**model._HANDLERS, "SendRejected": ignored}  # type: ignore[attr-defined]
    result = explore(model, SCENARIO, "kafka", ExploreOptions())[0]
    verdicts = {p.name: p.verdict for p in result.properties}
    assert verdicts["send_rejection_made_abortable"] is not Verdict.REACHED
    assert verdicts["atomic_commit"] is Verdict.UNTESTED
