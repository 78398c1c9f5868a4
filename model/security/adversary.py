"""Adversary actions against transactions (KIP-98 §9), budgeted like faults.

The adversary is a client of the cluster with its own principal
(``SecurityConfig.adversary``) and whatever the scenario's ACLs grant it.  It
is *omniscient*: it reads other producers' ids, epochs and the sequence a
partition expects (as a sniffer on an unencrypted listener or a leaked log
would).  Each of its requests is sent and handled in one step by the same
handlers and authorization gate honest requests go through
(:mod:`model.security.gate`); its responses are dropped.  The actions and
their fault kinds (``[faults]`` budgets of a scenario):

* ``ForgeProduce(victim, partition, epoch_offset, sequence_offset)`` -- ``forge_produce``: a
  transactional Produce carrying the victim's producer id, its epoch moved by ``epoch_offset`` (-1, 0, +1: a
  stale epoch, the victim's, an epoch bump the coordinator never issued) and the sequence the partition accepts
  next at that epoch moved by ``sequence_offset`` (-1, 0, +1: a duplicate, the next, a gap) -- every pair,
  generated (:data:`FIELD_OFFSETS`); the request's transactional.id is the
  adversary's own.  This is the producer-id hijack of KIP-98 §9.  KIP-890
  verification asks the coordinator about the request's transactional.id, so
  it refuses a hijacked batch that would open a transaction on a partition,
  not one that lands in a transaction the victim already opened there.
* ``StrayProduce(partition)`` -- ``forge_produce``: a transactional Produce
  with a producer id no coordinator issued: the "endless transaction" attack
  (data no COMMIT/ABORT marker will ever end, so the LSO stops).
* ``ForgeEndTxn(transactional_id, committed)`` -- ``forge_request``: an EndTxn
  replayed with the victim's transactional.id, producer id and epoch.
* ``HijackInitProducerId(transactional_id, claimed)`` -- ``hijack_init``: InitProducerId
  on the victim's transactional.id, which bumps its epoch and fences it.
* ``ForgeMarker(transactional_id, partition, committed, api, epoch_offset, coordinator_epoch_offset)`` --
  ``forge_marker``: a COMMIT/ABORT control batch for the victim's producer id,
  sent as WriteTxnMarkers (needs ClusterAction) or inside a Produce (refused
  by the log); a WriteTxnMarkers carries the producer and coordinator epochs the partition accepts, each moved
  by -1 or 0 (generated: a stale producer epoch, a deposed coordinator's epoch, ...), and the leader's answer
  is judged by Kafka's marker answer table.
* ``StaleRequest(transactional_id, request, pid_of, epoch_of)`` -- ``stale_request``: a request to the
  transaction coordinator from a stale or confused instance of the id's own application (a zombie that missed
  its fence, a late duplicate of a request whose answer was lost, a client that kept an id across a rotation):
  InitProducerId (KIP-360 form), AddPartitionsToTxn or EndTxn commit/abort naming the entry's current,
  previous (``prevProducerId``) or an unknown producer id with its current, previous, ``lastProducerEpoch`` or
  an exhausted epoch -- or the current producer id one epoch *ahead* of the entry's, a pair no instance holds
  (a forger guessing the next epoch, as ``ForgeProduce``'s bump does at the partition): every handler compares
  the request's epoch with the entry's for equality where Kafka does (``TransactionCoordinator.endTransaction``
  checks a client's epoch strictly since KAFKA-9600, PR #8164; AddPartitionsToTxn, the verification and
  ``prepareIncrementProducerEpoch`` fence any other epoch), so an epoch above the entry's is PRODUCER_FENCED and
  changes nothing.  Every answer is judged by Kafka's answer table (``coordinator_answers_per_kafka_table``):
  the family drives each handler through the (state, pid/epoch relation) pairs no honest client reaches.
* ``AbandonTransaction(producer)`` -- ``endless_txn``: the application of
  client ``producer`` (an authorized but malicious or broken producer) stops in
  the middle of its transaction and never commits or aborts it; only the
  coordinator's ``transaction.timeout.ms`` abort can end it.

Each handler returns ``None`` (not enabled) for arguments :func:`adversary_actions`
would not list; only a replayed trace can name such an action, so those guards
are marked ``# no branch`` for ``keos coverage``.

The operator's ``RevokeAcl`` (:mod:`model.security.operator`) is no attack but
is budgeted the same way (``revoke_acl``), so its tables are merged into these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.interface import Action
from keos.model.log.producer_state import next_sequence
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
    WriteTxnMarkersRequest,
)
from keos.model.security import checks
from keos.model.security.gate import (
    ADVERSARY,
    BROKER,
    COORDINATOR,
    GROUP_COORDINATOR,
    acls_now,
    coordinator_request,
    observe_change,
    observe_offsets,
    refused,
)
from keos.model.security.operator import OPERATOR_ACTION_ARGS, OPERATOR_FAULT_OF_ACTION, revoke_acl, revoke_actions
from keos.model.security.records import ControlAppend, security_of
from keos.model.systems.transactions_records import TXN_FAULT_KINDS, TxnSystemState

__all__ = [
    "ADVERSARY_ACTION_ARGS",
    "ADVERSARY_FAULT_OF_ACTION",
    "ADVERSARY_HANDLERS",
    "STRAY_PRODUCER_ID",
    "adversary_actions",
    "blocked_by_abandon",
]

#: The producer id of the stray (coordinator-less) transactional batch.
STRAY_PRODUCER_ID = 9999
APIS = ("WriteTxnMarkers", "Produce")

ADVERSARY_ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: trace format (JSON keys, display)
    "ForgeProduce": ("victim", "partition", "epoch_offset", "sequence_offset"),
    "StrayProduce": ("partition",),
    "ForgeEndTxn": ("transactional_id", "committed"),
    "HijackInitProducerId": ("transactional_id", "claimed"),
    "ForgeMarker": ("transactional_id", "partition", "committed", "api", "epoch_offset", "coordinator_epoch_offset"),
    "AbandonTransaction": ("producer",),
    "StaleRequest": ("transactional_id", "request", "pid_of", "epoch_of"),
    "ForgeTxnOffsets": ("transactional_id", "api"),
    **OPERATOR_ACTION_ARGS,
}
ADVERSARY_FAULT_OF_ACTION = {  # no mutate: fault model (which [faults] budget an action uses, not Kafka's rules)
    "ForgeProduce": "forge_produce",
    "StrayProduce": "forge_produce",
    "ForgeEndTxn": "forge_request",
    "HijackInitProducerId": "hijack_init",
    "ForgeMarker": "forge_marker",
    "AbandonTransaction": "endless_txn",
    "StaleRequest": "stale_request",
    "ForgeTxnOffsets": "forge_request",
    **OPERATOR_FAULT_OF_ACTION,
}
#: Application calls an abandoned client no longer makes.
APPLICATION_CALLS = ("BeginTransaction", "Send", "CommitTransaction", "AbortTransaction")  # no mutate: adversary model

Result = tuple[TxnSystemState, tuple[str, ...]] | None


_KIND_INDEX = {kind: TXN_FAULT_KINDS.index(kind) for kind in set(ADVERSARY_FAULT_OF_ACTION.values())}


def _budget(system: Any, state: TxnSystemState, kind: str) -> bool:
    k = _KIND_INDEX[kind]
    return state.faults_used[k] < system._limits[k]


def adversary_actions(system: Any, state: TxnSystemState) -> list[Action]:
    """The enabled adversary actions whose budget is not used up (the total is checked by the caller)."""
    out: list[Action] = []
    if not any(system._limits[k] for k in _KIND_INDEX.values()):
        return out
    parts = range(len(state.partitions))
    victims = _victims(system, state)
    if _budget(system, state, "forge_produce"):
        for i, c in enumerate(state.clients):
            if _forgeable(c):
                out.extend(
                    Action("ForgeProduce", (i, q, e, o))
                    for q in parts
                    for e in FIELD_OFFSETS
                    for o in FIELD_OFFSETS
                    if _forged_fields(system, state, c, q, e, o) is not None
                )
        out.extend(Action("StrayProduce", (q,)) for q in parts)
    if _budget(system, state, "forge_request"):
        for t in victims:
            if _replayable(state, t):
                out.extend(Action("ForgeEndTxn", (t, committed)) for committed in (True, False))
            if _offsets_forgeable(system, state, t):
                out.extend(Action("ForgeTxnOffsets", (t, api)) for api in OFFSET_APIS)
    if _budget(system, state, "hijack_init"):
        # both shapes a forger can send: a fresh initTransactions (no producer id) and the KIP-360 form claiming
        # the victim's current producer id and epoch, once the coordinator holds them
        out.extend(
            Action("HijackInitProducerId", (t, claimed))
            for t in victims
            for claimed in ((False, True) if _replayable(state, t) else (False,))
        )
    if _budget(system, state, "forge_marker"):
        for t in victims:
            if _replayable(state, t):
                out.extend(
                    Action("ForgeMarker", (t, q, committed, api, e, c))
                    for q in parts
                    for committed in (True, False)
                    for api in APIS
                    for e in MARKER_OFFSETS
                    for c in MARKER_OFFSETS
                    if _marker_fields(system, state, t, q, api, e, c) is not None
                )
    if _budget(system, state, "endless_txn"):
        out.extend(
            Action("AbandonTransaction", (i,)) for i, c in enumerate(state.clients) if _may_abandon(system, state, i, c)
        )
    if _budget(system, state, "revoke_acl"):
        out.extend(revoke_actions(system, state))
    if _budget(system, state, "stale_request"):
        for t in range(len(state.coordinator)):
            if _replayable(state, t):
                out.extend(
                    Action("StaleRequest", (t, r, p, e))
                    for r in STALE_REQUESTS
                    for p in STALE_PIDS
                    for e in STALE_EPOCHS
                    if _stale_ids(system, state, t, p, e, r.startswith("EndTxn")) is not None
                )
    return out


#: The requests, producer ids and epochs of ``StaleRequest``.
STALE_REQUESTS = ("InitProducerId", "AddPartitionsToTxn", "EndTxnCommit", "EndTxnAbort")  # no mutate: adversary model
STALE_PIDS = ("current", "previous", "unknown")  # no mutate: adversary model
STALE_EPOCHS = ("current", "previous", "last", "exhausted", "ahead")  # no mutate: adversary model


def _stale_ids(
    system: Any, s: TxnSystemState, t: int, pid_of: Any, epoch_of: Any, request_is_end: bool
) -> tuple[int, int] | None:
    """The (producer id, epoch) a ``StaleRequest`` names, from transactional id ``t``'s entry; ``None`` when the
    entry has no such id or epoch (no previous producer id, epoch 0, no lastProducerEpoch) or a duplicate pair.
    One guard for actions() and the handler."""
    md = s.coordinator[t]
    if md is None:  # no branch: replayed traces only (actions() lists replayable ids)
        return None
    pids = {"current": md.producer_id, "previous": md.prev_producer_id, "unknown": STRAY_PRODUCER_ID}
    epochs = {
        "current": md.producer_epoch,
        "previous": md.producer_epoch - 1,
        "last": md.last_producer_epoch,
        "exhausted": system.cc.max_producer_epoch - 1,
        "ahead": md.producer_epoch + 1,
    }
    if pid_of not in pids or epoch_of not in epochs:  # input: a replayed trace names an unknown choice
        return None
    pid, epoch = pids[pid_of], epochs[epoch_of]
    if pid < 0 or epoch < 0:
        return None
    if epoch_of == "ahead":  # no mutate: adversary model
        # the current id one epoch ahead of the entry (a forger's guess; never past the epoch field's limit)
        return (pid, epoch) if pid_of == "current" and epoch <= system.cc.max_producer_epoch else None
    if pid_of == "previous" and pid == md.producer_id:  # no mutate: adversary model
        # prevProducerId names the entry's own id after every transition but a rotation
        # (TransactionMetadata.prepareTransitionTo): that id is "current", with its own limits
        return None
    # only a pair some instance can hold: the current id up to its epoch (its own current pair only outside
    # EndTxn, which ForgeEndTxn replays), the previous id up to the exhausted epoch it rotated from
    held = {"current": md.producer_epoch, "previous": epochs["exhausted"], "unknown": epoch}[pid_of]
    if epoch > held or (request_is_end and pid_of == "current" and epoch == held):  # no mutate: adversary model
        return None
    # the same pair under two names is explored once (the first name in STALE_EPOCHS order)
    first = next(e for e in STALE_EPOCHS if epochs[e] == epoch)
    return (pid, epoch) if first == epoch_of else None


def stale_request(system: Any, s: TxnSystemState, t: int, request: Any, pid_of: Any, epoch_of: Any) -> Result:
    """A stale instance's request to the coordinator for its own transactional id ``t`` (see the module doc)."""
    if request not in STALE_REQUESTS or type(t) is not int or not 0 <= t < len(s.coordinator):  # input: replayed
        return None
    ids = _stale_ids(system, s, t, pid_of, epoch_of, request.startswith("EndTxn"))
    if ids is None:  # no branch: replayed traces only
        return None
    pid, epoch = ids
    req: Any
    if request == "InitProducerId":
        req = InitProducerIdRequest(-1, 0, t, pid, epoch)
    elif request == "AddPartitionsToTxn":
        req = AddPartitionsToTxnRequest(-1, 0, t, pid, epoch, (0,))
    else:
        req = EndTxnRequest(-1, 0, t, pid, epoch, request == "EndTxnCommit")
    return _coordinator(system, s, req, f"adversary:stale_request:{request}:{pid_of}:{epoch_of}")


def _forgeable(c: tp.TxnClient) -> bool:
    """Whether the adversary can forge a batch with client ``c``'s producer id: it has one (learnt from the wire).
    One guard for actions() and the handler (a replayed trace may name any client)."""
    return c.data.producer_id >= 0


def _replayable(s: TxnSystemState, t: int) -> bool:
    """Whether the coordinator holds an entry for transactional id ``t`` whose producer id and epoch the
    adversary can replay (EndTxn, markers).  One guard for actions() and the handlers."""
    return s.coordinator[t] is not None


def _victims(system: Any, state: TxnSystemState) -> list[int]:
    """The transactional ids the adversary attacks: all but those its own principal's clients use (an insider
    fencing or ending her own producer's transaction is the zombie fencing Kafka is built for, not an attack)."""
    sec = security_of(system)
    own = {c.transactional_id for i, c in enumerate(state.clients) if sec.principal_of(i) == sec.adversary}
    return [t for t in range(len(state.coordinator)) if t not in own]


def _may_abandon(system: Any, state: TxnSystemState, i: int, c: tp.TxnClient) -> bool:
    rpt = system.config.topology.records_per_transaction
    # When an application abandons its transaction is the adversary's choice (the environment): after a record.
    return (
        i not in state.security.abandoned
        and c.state == tp.C.IN_TRANSACTION
        and c.data.next_record > c.txn * rpt  # no mutate: adversary model
    )


def blocked_by_abandon(state: TxnSystemState, action: Action) -> bool:
    """Whether ``action`` is an application call of a client that abandoned (step() and actions() alike)."""
    return bool(state.security.abandoned) and _application_call_of_abandoned(state, action)


# -- the actions -------------------------------------------------------------------------------------


def _without_replies(s: TxnSystemState) -> TxnSystemState:
    """The adversary ignores answers: they never stay in the network."""
    return s._replace(network=net.without(s.network, lambda e: e.dst == ADVERSARY))


def _adversary_record(system: Any, s: TxnSystemState) -> tuple[TxnSystemState, int]:
    """A fresh record id of the adversary (producer index = number of clients)."""
    n = s.security.adversary_records
    rid = prod.record_id(len(s.clients), n)
    return s._replace(security=s.security._replace(adversary_records=n + 1)), rid


def _produce(system: Any, s: TxnSystemState, req: ProduceRequest, label: str, shape: str) -> Result:
    """Send ``req`` as the adversary; a coordinator entry the broker's verification changed (TV2 adds the
    partition to the transaction) without Write on it is recorded for ``unauthorized_never_changes_transaction``.

    ``shape``: which fields the forger chose (:func:`forge_produce`, :func:`stray_produce`); a batch of it that
    reached the partition's log is reported as ``adversary:took_effect:forge_produce:<shape>``, so a scenario can
    demand that every shape a real forger may send is shown landing where the ACLs allow it, not only being
    attempted (the claim is judged against the log: :mod:`model.security.witnesses`)."""
    env = net.Envelope(ADVERSARY, BROKER, 0, req)
    result = system._on_produce(s, env, req)
    assert result is not None  # a Produce is always answered
    new, events = result
    q = req.partition
    if any(req.records[0] in e.records for e in new.partitions[q].log[len(s.partitions[q].log) :]):
        events = (*events, f"adversary:took_effect:forge_produce:{shape}")
    for t in range(len(s.coordinator)):
        new = observe_change(system, new, s, security_of(system).adversary, "Produce", t)
    return _without_replies(new), (label, *events)


#: How far a forger moves each field of a batch that the partition leader checks (``ProducerAppendInfo``:
#: ``checkProducerEpoch``, then ``checkSequence``; Kafka 4.0) from the value the leader would accept next: one
#: below, that value, one above.  Every (epoch, sequence) pair of the product is sent, so each comparison the leader
#: makes meets a value on each side of its bound -- a stale epoch, the owner's, a bump the coordinator never issued;
#: a sequence already written (a duplicate, or the one before the last batch), the next one, one past it (a gap), at
#: the owner's epoch and at a bumped one (a new epoch must start at 0).  Generated, not picked: the leader's answer
#: to each is judged by ``txn_produce_answer_per_kafka``.
FIELD_OFFSETS = (-1, 0, 1)  # no mutate: adversary model (the hostile inputs generated)
#: How far a forged marker's epochs move from the ones the leader accepts: one below, and that value.  The
#: leader's two checks are lower bounds (a producer epoch below the stored one -- TV2: at or below it --, a
#: coordinator epoch below the stored one), so these two meet each bound from both sides; one above is accepted
#: like the baseline.
MARKER_OFFSETS = (-1, 0)  # no mutate: adversary model (the hostile inputs generated)


def _accepted_sequence(  # no mutate: adversary model (the forger's estimate the generated offsets surround)
    entry: Any, epoch: int, sequence_space: int
) -> int:
    """The sequence the leader accepts next from a producer id whose entry is ``entry`` at ``epoch``: the one after
    the entry's last at the entry's epoch, else 0 (a new epoch, an entry a marker wrote, or none).  The adversary's
    estimate, not the leader's rule (``producer_state.validate_batch``): :data:`FIELD_OFFSETS` generate one below and
    one above it, so an estimate off by one only changes which generated offset meets the leader's bound, and the
    leader's answer to every one is judged (``txn_produce_answer_per_kafka``)."""
    if entry is None or entry.producer_epoch != epoch or entry.last_seq < 0:
        return 0
    return next_sequence(entry.last_seq, 1, sequence_space)


def _forged_fields(  # no mutate: adversary model (which hostile inputs are generated; the leader's answer is judged)
    system: Any, s: TxnSystemState, c: tp.TxnClient, q: int, epoch_offset: Any, sequence_offset: Any
) -> tuple[int, int, str] | None:
    """(epoch, sequence, shape) of the batch ``ForgeProduce`` forges with client ``c``'s producer id on partition
    ``q``, ``None`` for offsets off :data:`FIELD_OFFSETS` or a negative field.  The shape names the accepted
    baseline -- ``next`` (continuing the owner's sequence at its epoch) or ``first`` (sequence 0) -- and the offsets
    from it.  One guard for actions() and the handler."""
    if epoch_offset not in FIELD_OFFSETS or sequence_offset not in FIELD_OFFSETS:  # input: a replayed trace
        return None
    epoch = c.data.producer_epoch + epoch_offset
    entry = s.partitions[q].entry(c.data.producer_id)
    base = _accepted_sequence(entry, epoch, system.flags.sequence_space)
    seq = base + sequence_offset
    if epoch < 0 or not 0 <= seq < system.flags.sequence_space or epoch > system.cc.max_producer_epoch:
        return None
    shape = "first" if base == 0 else "next"
    moved = [f"{field}{offset:+d}" for field, offset in (("epoch", epoch_offset), ("sequence", sequence_offset))
             if offset]
    return epoch, seq, "@".join((shape, *moved))


def forge_produce(system: Any, s: TxnSystemState, victim: Any, q: Any, epoch_offset: Any, sequence_offset: Any
                  ) -> Result:
    """Produce with the victim's producer id (hijack), its epoch and sequence moved by the offsets
    (:data:`FIELD_OFFSETS`)."""
    if not (type(victim) is int and 0 <= victim < len(s.clients)):  # input: a replayed trace
        return None
    c = s.clients[victim]
    if not _forgeable(c):  # no branch: replayed traces only
        return None
    fields = _forged_fields(system, s, c, q, epoch_offset, sequence_offset)
    if fields is None:  # no branch: replayed traces only
        return None
    epoch, seq, shape = fields
    s, rid = _adversary_record(system, s)
    req = ProduceRequest(-1, 0, q, c.data.producer_id, epoch, seq, (rid,), True)
    return _produce(system, s, req, "adversary:produce:forge", shape)


def stray_produce(system: Any, s: TxnSystemState, q: Any) -> Result:
    """A transactional batch under a producer id no coordinator issued, at the sequence the leader accepts next."""
    seq = _accepted_sequence(s.partitions[q].entry(STRAY_PRODUCER_ID), 0, system.flags.sequence_space)
    s, rid = _adversary_record(system, s)
    req = ProduceRequest(-1, 0, q, STRAY_PRODUCER_ID, 0, seq, (rid,), True)
    return _produce(system, s, req, "adversary:produce:stray", "stray")


def _coordinator(system: Any, s: TxnSystemState, req: Any, label: str) -> Result:
    env = net.Envelope(ADVERSARY, COORDINATOR, 0, req)
    result = coordinator_request(system, s, env, req, True)
    assert result is not None  # a coordinator request is always answered
    new, events = result
    if new.coordinator != s.coordinator:  # allowed (the adversary holds Write on the transactional id)
        events = ("adversary:coordinator_changed", f"adversary:took_effect:{label.split(':', 1)[1]}", *events)
    return _without_replies(new), (label, *events)


def forge_end_txn(system: Any, s: TxnSystemState, t: int, committed: Any) -> Result:
    """EndTxn replayed with the victim's transactional.id, producer id and epoch."""
    if type(committed) is not bool:  # input: a replayed trace names a non-boolean
        return None
    if not _replayable(s, t):  # no branch: replayed traces only
        return None
    md = s.coordinator[t]
    assert md is not None
    req = EndTxnRequest(-1, 0, t, md.producer_id, md.producer_epoch, committed)
    return _coordinator(system, s, req, f"adversary:forge_end_txn:{'commit' if committed else 'abort'}")


#: The offset-commit requests of a transaction (consume-transform-produce) the adversary replays.
OFFSET_APIS = ("AddOffsetsToTxn", "TxnOffsetCommit")  # no mutate: adversary model


def _offsets_forgeable(system: Any, s: TxnSystemState, t: Any) -> bool:
    """Whether the adversary can replay transactional id ``t``'s offset-commit requests: a consume-transform-produce
    system (a group coordinator), an entry whose producer id and epoch it sniffs, and a client holding the id whose
    group metadata it sniffs too.  One guard for actions() and the handler."""
    return (
        s.group is not None
        and hasattr(system, "_on_txn_offset_commit")
        and type(t) is int
        and 0 <= t < len(s.coordinator)
        and _replayable(s, t)
        and any(c.transactional_id == t for c in s.clients)
    )


def forge_txn_offsets(system: Any, s: TxnSystemState, t: Any, api: Any) -> Result:
    """AddOffsetsToTxn or TxnOffsetCommit replayed with the victim's transactional.id, producer id and epoch.

    ``KafkaApis.handleAddOffsetsToTxnRequest`` / ``handleTxnOffsetCommitRequest`` (Kafka 4.0, apache/kafka 1eb7644)
    authorize Write on the transactional.id, then Read on the group; nothing binds the producer id, the group
    generation or the member id to the sender (KIP-98 §9).  The forged TxnOffsetCommit carries the victim's consumer
    group metadata (generation, member) and an offset one record past the victim's -- staged in the victim's
    transaction, it would make the victim's commit skip an input record.  A change of the group's offsets or of the
    coordinator entry by a principal the ACLs in force do not allow is recorded for
    ``unauthorized_never_changes_transaction``."""
    if api not in OFFSET_APIS or not _offsets_forgeable(system, s, t):  # input: a replayed trace
        return None
    md = s.coordinator[t]
    assert md is not None
    sec = security_of(system)
    req: Any
    if api == "AddOffsetsToTxn":
        req = AddOffsetsToTxnRequest(-1, 0, t, md.producer_id, md.producer_epoch, 0)
        env = net.Envelope(ADVERSARY, COORDINATOR, 0, req)
        result = system._on_add_offsets(s, env, req, True)
    else:
        i = next(i for i, c in enumerate(s.clients) if c.transactional_id == t)
        app, g = s.apps[i], s.group
        assert g is not None  # _offsets_forgeable
        generation = g.generation if s.members is None else s.members.generation
        req = TxnOffsetCommitRequest(
            -1, 0, t, md.producer_id, md.producer_epoch, 0, generation, i, 0, app.processing + 2, app.offsets_member
        )
        env = net.Envelope(ADVERSARY, GROUP_COORDINATOR, 0, req)
        result = system._on_txn_offset_commit(s, env, req, True)
    assert result is not None  # both handlers always answer
    new, events = result
    new = observe_change(system, new, s, sec.adversary, api, t)
    new = observe_offsets(system, new, s, sec.adversary, api, t)
    if new.coordinator != s.coordinator or new.group != s.group:
        events = (f"adversary:took_effect:forge_txn_offsets:{api}", *events)
    return _without_replies(new), (f"adversary:forge_txn_offsets:{api}", *events)


def hijack_init(system: Any, s: TxnSystemState, t: int, claimed: Any = False) -> Result:
    """InitProducerId on the victim's transactional.id: an epoch bump that fences it.

    The forger controls the request's KIP-360 fields (``InitProducerIdRequest`` v3+: producerId, producerEpoch):
    ``claimed`` sends the victim's current producer id and epoch, which ``TransactionCoordinator.handleInitProducerId``
    accepts as the owner's own bump request (trunk @1eb7644349cb); otherwise none, as a new instance's
    ``initTransactions`` does.  Either takes effect only with Write on the transactional id (KIP-98 §9)."""
    if type(claimed) is not bool or (claimed and not _replayable(s, t)):  # input: a replayed trace
        return None
    if claimed:
        md = s.coordinator[t]
        assert md is not None
        req = InitProducerIdRequest(-1, 0, t, md.producer_id, md.producer_epoch)
        return _coordinator(system, s, req, "adversary:hijack_init:claimed")
    return _coordinator(system, s, InitProducerIdRequest(-1, 0, t), "adversary:hijack_init:fresh")


def _marker_fields(  # no mutate: adversary model (which hostile markers are generated; the leader's answer is judged)
    system: Any, s: TxnSystemState, t: int, q: int, api: Any, epoch_offset: Any, coordinator_epoch_offset: Any
) -> tuple[int, int] | None:
    """(producer epoch, coordinator epoch) of the marker ``ForgeMarker`` forges for transactional id ``t``'s
    producer id on partition ``q``: the epochs the partition leader accepts (the producer epoch the coordinator
    holds, raised to the partition's -- TV2: one above it --; the current coordinator epoch), each moved by its
    offset (:data:`MARKER_OFFSETS`: ``appendEndTxnMarker`` checks the producer epoch, then the coordinator epoch,
    so each meets a value on each side of its bound).  Through Produce only the accepted pair: the log refuses a
    client's control batch whatever it carries.  ``None`` for other offsets or a negative epoch.  One guard for
    actions() and the handler."""
    if epoch_offset not in MARKER_OFFSETS or coordinator_epoch_offset not in MARKER_OFFSETS:  # input: replayed trace
        return None
    if api != "WriteTxnMarkers" and (epoch_offset or coordinator_epoch_offset):
        return None
    md = s.coordinator[t]
    if md is None:  # no branch: replayed traces only (actions() lists replayable ids)
        return None
    entry = s.partitions[q].entry(md.producer_id)
    stored = entry.producer_epoch if entry is not None else -1
    accepted = max(md.producer_epoch, stored + 1 if system.tv >= 2 else stored)  # no mutate: adversary model
    epoch, coordinator_epoch = accepted + epoch_offset, s.coordinator_epoch + coordinator_epoch_offset
    if epoch < 0 or coordinator_epoch < 0 or epoch > system.cc.max_producer_epoch:
        return None
    return epoch, coordinator_epoch


def forge_marker(system: Any, s: TxnSystemState, t: int, q: int, committed: Any, api: Any, epoch_offset: Any = 0,
                 coordinator_epoch_offset: Any = 0) -> Result:
    """A control batch for the victim's producer id, through WriteTxnMarkers or Produce, its epochs moved by the
    offsets (:func:`_marker_fields`).  An appended or refused marker is judged by the partition leader's answer
    table like the coordinator's own (``coordinator_answers_per_kafka_table``, ``answer_table:WriteTxnMarkers``)."""
    if type(committed) is not bool or api not in APIS:  # input: a replayed trace names an unknown value
        return None
    if not _replayable(s, t):  # no branch: replayed traces only
        return None
    fields = _marker_fields(system, s, t, q, api, epoch_offset, coordinator_epoch_offset)
    if fields is None:  # no branch: replayed traces only
        return None
    md = s.coordinator[t]
    assert md is not None
    sec = acls_now(system, s)
    marker = WriteTxnMarkersRequest(t, md.producer_id, fields[0], fields[1], committed, q)
    if api == "WriteTxnMarkers":
        error = checks.write_txn_markers(sec, sec.adversary, system.flags)
    else:
        tid = sec.adversary_transactional_id
        error = checks.produce(sec, sec.adversary, tid, q, True, system.flags)
    label = f"adversary:forge_marker:{api}"
    if error != Errors.NONE:
        return refused(sec, s, sec.adversary, api, error), (label, f"authz_denied:{api}", f"error:{error}")
    offset = len(s.partitions[q].log)
    before = system._marker_log(s, marker)
    s, error, events = system._write_marker(s, marker)
    s = system._judge_marker(s, marker, before, error)  # no mutate: the judge's input (the answer table)
    if error == Errors.NONE:
        append = ControlAppend(sec.adversary, api, q, offset)
        s = s._replace(security=s.security._replace(control_appends=(*s.security.control_appends, append)))
        events = (f"adversary:took_effect:forge_marker:{'commit' if committed else 'abort'}", *events)
    return s, (label, *events)


def abandon_transaction(system: Any, s: TxnSystemState, i: int) -> Result:
    """The application of client ``i`` stops in the middle of its transaction (the endless transaction)."""
    if not _may_abandon(system, s, i, s.clients[i]):  # no branch: replayed traces only
        return None
    ghost = s.security._replace(abandoned=tuple(sorted((*s.security.abandoned, i))))
    return s._replace(security=ghost), ("adversary:abandon_transaction",)


ADVERSARY_HANDLERS: dict[str, Callable[..., Result]] = {
    "ForgeProduce": forge_produce,
    "StrayProduce": stray_produce,
    "ForgeEndTxn": forge_end_txn,
    "HijackInitProducerId": hijack_init,
    "ForgeMarker": forge_marker,
    "AbandonTransaction": abandon_transaction,
    "StaleRequest": stale_request,
    "ForgeTxnOffsets": forge_txn_offsets,
    "RevokeAcl": revoke_acl,
}


def _application_call_of_abandoned(state: TxnSystemState, action: Action) -> bool:
    """:func:`blocked_by_abandon` once somebody abandoned: actions() tests nothing while nobody did, so step()
    tests that first too, and the two decide alike."""
    return action.kind in APPLICATION_CALLS and bool(action.args) and action.args[0] in state.security.abandoned
