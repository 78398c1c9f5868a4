"""The coordinator-answer checks of issue 23 (h9-txn): producer epochs never go down, stale InitProducerId fenced."""

from __future__ import annotations

from keos.model.coordinator.transaction.transaction_coordinator import TransactionMetadata
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.protocol.messages import AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest
from keos.model.systems.transactions import epoch_regressions, stale_init_answer, unheld_ack


def _log(pid: int, epoch: int, prev: int = -1) -> TransactionLogValue:
    return TransactionLogValue(pid, epoch, "Empty", (), prev)


def test_epoch_regressions_flags_a_lower_epoch_of_the_same_producer_id_only() -> None:
    before = (_log(0, 3), _log(5, 1), None)
    # the TV2 completion at an exhausted epoch moves to a new producer id at epoch 0: fine
    assert epoch_regressions(before, (_log(1, 0, prev=0), _log(5, 2), _log(7, 0))) == []
    # the same producer id restarted at epoch 0: the old (pid, epoch) pairs could be current again
    assert epoch_regressions(before, (_log(0, 0), _log(5, 1), None)) == ["epoch_regress:0:0:3->0"]
    cached = (TransactionMetadata(0, 4, producer_epoch=2),)
    rolled = (TransactionMetadata(0, 4, producer_epoch=1),)
    assert epoch_regressions(cached, rolled) == ["epoch_regress:0:4:2->1"]
    assert epoch_regressions(cached, (None,)) == []  # an expired id


def test_stale_init_answer_accepts_kafkas_answers_and_flags_a_zombies() -> None:
    def init(pid: int, epoch: int) -> InitProducerIdRequest:
        return InitProducerIdRequest(0, 0, 0, pid, epoch)

    # a bump, or the retry of a bump whose answer was lost: the next epoch of the pair named
    assert stale_init_answer(init(3, 4), 3, 5, _log(3, 5), False) is None
    # a fresh id (-1, -1) is not a KIP-360 bump; other requests are not judged
    assert stale_init_answer(init(-1, -1), 9, 0, _log(9, 0), False) is None
    assert stale_init_answer(EndTxnRequest(0, 0, 0, 3, 4, True), 3, 9, _log(3, 9), False) is None
    # rotation at an exhausted epoch (and its retry): the new producer id at epoch 0, prevProducerId the named one
    assert stale_init_answer(init(3, 2), 8, 0, _log(8, 0, prev=3), True) is None
    # an entry just created (after an expiry): its producer id at epoch 0, no previous id
    assert stale_init_answer(init(3, 0), 8, 0, _log(8, 0), False) is None
    # a zombie's stale epoch handed the current one, or handed a rotation it had no right to
    assert stale_init_answer(init(3, 0), 3, 2, _log(3, 2), False) is not None
    assert stale_init_answer(init(3, 0), 8, 0, _log(8, 0, prev=3), False) is not None
    # another instance's producer id
    assert stale_init_answer(init(3, 0), 8, 1, _log(8, 1), False) is not None


def test_unheld_ack_accepts_the_holders_answers_and_flags_a_zombies() -> None:
    def end(pid: int, epoch: int) -> EndTxnRequest:
        return EndTxnRequest(0, 0, 0, pid, epoch, True)

    def add(pid: int, epoch: int) -> AddPartitionsToTxnRequest:
        return AddPartitionsToTxnRequest(0, 0, 0, pid, epoch, (0,))

    # TV0/TV1 and AddPartitionsToTxn: the requester's own (pid, epoch) is logged
    assert unheld_ack(end(3, 4), _log(3, 4), 1, False) is None
    assert unheld_ack(add(3, 4), _log(3, 4), 2, False) is None
    assert unheld_ack(end(3, 3), _log(3, 4), 1, False) is not None  # a fenced epoch told it ended the transaction
    assert unheld_ack(add(2, 4), _log(3, 4), 2, False) is not None  # another producer id
    # TV2: the end bumped the epoch (a first EndTxn, or its retry)
    assert unheld_ack(end(3, 4), _log(3, 5), 2, False) is None
    assert unheld_ack(end(3, 4), _log(3, 4), 2, False) is not None
    assert unheld_ack(end(3, 3), _log(3, 5), 2, False) is not None  # a late request of an older transaction
    # TV2 at an exhausted epoch: the new producer id at epoch 0 replaced the requester's
    assert unheld_ack(end(3, 2), _log(8, 0, prev=3), 2, True) is None
    assert unheld_ack(end(3, 1), _log(8, 0, prev=3), 2, False) is not None  # not exhausted: a zombie of pid 3
    # other requests, and no log value, are not judged here (acknowledged_after_logged judges the latter)
    assert unheld_ack(InitProducerIdRequest(0, 0, 0, 3, 4), _log(9, 0), 2, False) is None
    assert unheld_ack(end(3, 4), None, 2, False) is None
