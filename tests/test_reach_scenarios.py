"""Issue 23 (reach, idempotence/transactions half): the generated ``reach`` scenario family, the client-outcome
judgement in faulty runs (``healthy_producer_not_failed``) and the transition-chain check
(``coordinator_transitions_explained``), each with the weakened variant that only it catches."""

from __future__ import annotations

from pathlib import Path

from script_loader import load_script
from txn_config import kafka_cc

import keos
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.transaction.transaction_coordinator import TransactionMetadata
from keos.model.systems.transactions import displaced, unexplained_state_changes
from keos.scenarios import builtin_scenarios, scenario_set

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> object:
    return load_script("gen_reach_scenarios")


def test_committed_reach_scenarios_are_what_the_grid_generates() -> None:
    generated = _generator().scenarios()  # type: ignore[attr-defined]
    assert len(generated) >= 7
    for fname, text in generated.items():
        assert (ROOT / "scenarios" / fname).read_text(encoding="utf-8") == text, f"regenerate scenarios/{fname}"
    reach = scenario_set("reach")
    assert {f"{n}.toml" for n in reach} >= set(generated)
    defaults = {n for n in (f.removesuffix(".toml") for f in generated) if builtin_scenarios()[n].default}
    assert defaults == set(_generator().DEFAULT_CELLS)  # type: ignore[attr-defined]
    # the zombie cells take 5-40 s each: reach set only -- but the TV1 pending one (~7 CPU-s), the default gate's only
    # run of a failed fence at the pending granularity (abort_transit, KAFKA-9666's flag), since session 21
    assert not any("zombie" in n for n in defaults - {"reach_txn_tv1_pending_zombie"})


def _client(state: str, pid: int = 7, epoch: int = 3, inflight: bool = False) -> tp.TxnClient:
    data = prod.new_producer(1)._replace(producer_id=pid, producer_epoch=epoch)
    return tp.TxnClient(0, data, state=state, inflight=inflight)


TV1 = kafka_cc(transaction_version=1)
TV2 = kafka_cc(transaction_version=2)


def test_displaced_means_the_coordinator_moved_past_the_client() -> None:
    holder = TransactionMetadata(0, 7, 3, state="Ongoing")
    assert not displaced(_client(tp.C.IN_TRANSACTION), holder, TV2)
    # another instance, a timeout fence or a late InitProducerId raised the epoch
    assert displaced(_client(tp.C.IN_TRANSACTION), holder._replace(producer_epoch=4), TV2)
    # the id expired, or came back with another producer id
    assert displaced(_client(tp.C.IN_TRANSACTION), None, TV2)
    assert displaced(_client(tp.C.IN_TRANSACTION), holder._replace(producer_id=8), TV2)
    # the client's own TV2 EndTxn bumped it (lastProducerEpoch = the client's epoch): not displaced
    own_end = TransactionMetadata(0, 7, 4, last_producer_epoch=3, state="PrepareCommit")
    assert not displaced(_client(tp.C.COMMITTING, inflight=True), own_end, TV2)
    # ... but a bump from another epoch is not the client's own
    assert displaced(_client(tp.C.COMMITTING, inflight=True), own_end._replace(last_producer_epoch=-1), TV2)
    # under TV1 an EndTxn does not bump: the same metadata displaces the client
    assert displaced(_client(tp.C.COMMITTING, inflight=True), own_end, TV1)
    # a KIP-360 InitProducerId(pid, epoch) of its own
    assert not displaced(_client(tp.C.INITIALIZING, inflight=True), own_end._replace(state="Empty"), TV1)
    # ... which rotated an exhausted epoch (limit 3: epoch 2) to a new producer id at epoch 0: still the holder,
    # its retry of (pid, 2) must be answered with the new id; another instance's rotation (lastProducerEpoch -1)
    # displaces it
    limit3 = kafka_cc(transaction_version=1, max_producer_epoch=3)
    rotated = TransactionMetadata(0, 8, 0, last_producer_epoch=2, prev_producer_id=7, state="Empty")
    assert not displaced(_client(tp.C.INITIALIZING, epoch=2, inflight=True), rotated, limit3)
    other = rotated._replace(last_producer_epoch=-1)
    assert displaced(_client(tp.C.INITIALIZING, epoch=2, inflight=True), other, limit3)


def test_every_state_change_must_be_a_chain_of_reported_transitions() -> None:
    ongoing = TransactionMetadata(0, 7, 3, state="Ongoing")
    prepare = ongoing._replace(state="PrepareAbort", producer_epoch=4)
    fence_events = ("fence", "txn:Ongoing->PrepareEpochFence", "txn:PrepareEpochFence->PrepareAbort")
    assert unexplained_state_changes((ongoing,), (prepare,), fence_events) == []
    assert unexplained_state_changes((ongoing,), (prepare,), ()) == ["unexplained:0:Ongoing->PrepareAbort"]
    assert unexplained_state_changes((ongoing,), (prepare,), ("txn:Ongoing->PrepareCommit",))
    # expiry leads to Dead (no entry); a new entry starts Empty
    empty = ongoing._replace(state="Empty")
    assert unexplained_state_changes((empty,), (None,), ("txn:Empty->Dead",)) == []
    assert unexplained_state_changes((None,), (ongoing,), ("txn:Empty->Empty", "txn:Empty->Ongoing")) == []
    assert unexplained_state_changes((None,), (ongoing,), ()) == ["unexplained:0:Empty->Ongoing"]
    # an unchanged state needs nothing
    assert unexplained_state_changes((ongoing,), (ongoing._replace(partitions=(1,)),), ()) == []


def test_a_retried_kip_360_bump_answered_fenced_is_caught_only_by_the_client_outcome_judgement(
    tmp_path: Path,
) -> None:
    real = keos.check(["reach_txn_tv1_faulty"], out=tmp_path / "real")
    assert not real.violated
    weak = keos.check(["reach_txn_tv1_faulty"], variant="init_pid_retry_fenced", out=tmp_path / "weak")
    assert {p.name for p in weak.violations()} == {"healthy_producer_not_failed"}


def test_a_completion_without_transition_is_caught_by_the_chain_check(tmp_path: Path) -> None:
    weak = keos.check(["txn_kafka_17754_delayed_endtxn"], variant="complete_without_transition", out=tmp_path)
    assert "coordinator_transitions_explained" in {p.name for p in weak.violations()}


def test_a_reused_producer_id_is_caught(tmp_path: Path) -> None:
    weak = keos.check(["txn_producer_state_expiry"], variant="producer_id_reused", out=tmp_path)
    assert "producer_ids_never_reused" in {p.name for p in weak.violations()}
