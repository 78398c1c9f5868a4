"""The authorization gate wired into the transactions system's handlers.

:class:`model.systems.transactions.TransactionalSystem` calls these at the top
of its Produce and coordinator-request handlers when the scenario has a
``[security]`` section.  Each function finds the request's principal (the
client's, the adversary's), asks :mod:`model.security.checks` for Kafka's
answer, and either answers the sender with the authorization error (the
handler is not run) or lets the handler run.

The ACLs a request is judged by are the scenario's minus the bindings an
operator has revoked so far (:func:`acls_now`): a Kafka broker's authorizer
applies an ACL change to every request it handles after the change, a
transaction already open included (``StandardAuthorizer`` has no notion of a
transaction; KafkaApis asks it afresh for every request).

Around a coordinator request the gate also *observes*: if the request changed
the transactional id's coordinator entry and its principal has no Write on
that transactional id by the ACLs in force (judged by :func:`authorize`,
whatever the variant's switches say), the change is recorded in :class:`model.security.records.SecurityGhost` for the
invariant ``unauthorized_never_changes_transaction``; and every refusal is
recorded (principal, API, error) for the oracle properties of
:mod:`invariants.security`.
"""

from __future__ import annotations

from typing import Any

from keos.model import network as net
from keos.model.coordinator.transaction.transaction_coordinator import OFFSETS_PARTITION_BASE
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from keos.model.security import checks
from keos.model.security.authorizer import Operation, ResourceType, group_name, topic_name, transactional_id_name
from keos.model.security.records import Refusal, SecurityConfig, TxnChange, security_of
from keos.model.systems.transactions_records import TxnSystemState

__all__ = [
    "ADVERSARY",
    "acls_in_force",
    "acls_now",
    "claimed_transactional_id",
    "claimed_transactional_id_index",
    "coordinator_request",
    "deny_add_offsets",
    "deny_produce",
    "deny_txn_offset_commit",
    "label_metadata",
    "observe_change",
    "principal_of",
    "refused",
]

#: The adversary's network identity (its requests are sent and answered in one step).
ADVERSARY = "adv"
#: The group coordinator's address in the consume-transform-produce model (``model.systems.eos.GROUP_COORDINATOR``).
GROUP_COORDINATOR = "gc"
COORDINATOR = "tc"
BROKER = "b0"

Result = tuple[TxnSystemState, tuple[str, ...]] | None


def acls_in_force(system: Any, s: TxnSystemState) -> SecurityConfig:
    """The scenario's security settings with the bindings revoked so far removed."""
    return security_of(system).revoked(s.security.revoked())


def acls_now(system: Any, s: TxnSystemState) -> SecurityConfig:
    """The ACLs the broker's authorizer decides by: those in force (the scenario's, without the switch
    ``apply_acl_changes``)."""
    return acls_in_force(system, s) if system.flags.apply_acl_changes else security_of(system)


def refused(sec: SecurityConfig, s: TxnSystemState, principal: str, api: str, error: str) -> TxnSystemState:
    """``s`` with the refusal of ``principal``'s ``api`` request noted (once per kind) in the ghost -- when a
    property reads it: the principal is one the scenario states an expectation about, or a binding was revoked
    (a ghost nobody reads would only split states)."""
    revoked = len(s.security.revocations)
    # The log's refusal of a client's control batch (INVALID_RECORD) is no authorization decision, but it is noted:
    # it is the last of handleProduceRequest's checks, so an earlier check that fails must have answered instead.
    if not (revoked or principal in sec.expect_granted or principal in sec.expect_denied):
        return s
    refusal = Refusal(principal, api, error, revoked)
    if refusal in s.security.refusals:
        return s
    return s._replace(security=s.security._replace(refusals=tuple(sorted((*s.security.refusals, refusal)))))


def principal_of(sec: SecurityConfig, src: str) -> str:
    """The principal of a request's sender (``p<i>`` or the adversary)."""
    return sec.adversary if src == ADVERSARY else sec.principal_of(int(src[1:]))


def claimed_transactional_id(sec: SecurityConfig, s: TxnSystemState, src: str) -> str:
    """The transactional.id a Produce from ``src`` carries (the client's configured one)."""
    if src == ADVERSARY:
        return sec.adversary_transactional_id
    return transactional_id_name(s.clients[int(src[1:])].transactional_id)


def claimed_transactional_id_index(system: Any, s: TxnSystemState) -> int:
    """The model index of the transactional id the adversary's Produce names (-1: none the model tracks)."""
    name = security_of(system).adversary_transactional_id
    for t in range(len(s.coordinator)):
        if transactional_id_name(t) == name:  # a holder of a client's transactional.id (authz_shared_transactional_id)
            return t
    return -1


def deny_produce(system: Any, s: TxnSystemState, env: net.Envelope, req: ProduceRequest) -> Result:
    """``handleProduceRequest``'s checks; the denial answer, or ``None`` to go on."""
    sec = acls_now(system, s)
    principal = principal_of(sec, env.src)
    tid = claimed_transactional_id(sec, s, env.src)
    error = checks.produce(sec, principal, tid, req.partition, False, system.flags)
    if error == Errors.NONE:
        return None
    resp = ProduceResponse(
        req.producer, req.connection, req.partition, req.producer_epoch, req.base_sequence, error, -1,
        req.correlation_id,
    )
    s = s._replace(network=net.send(s.network, net.Envelope(BROKER, env.src, env.connection, resp)))
    return refused(sec, s, principal, "Produce", error), ("authz_denied:Produce", f"error:{error}")


def _coordinator_check(sec: SecurityConfig, principal: str, req: Any, flags: Any) -> tuple[str, str, Any]:
    tid = transactional_id_name(req.transactional_id)
    if isinstance(req, InitProducerIdRequest):
        error = checks.init_producer_id(sec, principal, tid, flags)
        return "InitProducerId", error, InitProducerIdResponse(req.producer, req.connection, error)
    if isinstance(req, AddPartitionsToTxnRequest):
        error = checks.add_partitions_to_txn(sec, principal, tid, req.partitions, flags)
        return (
            "AddPartitionsToTxn",
            error,
            AddPartitionsToTxnResponse(req.producer, req.connection, error, req.partitions),
        )
    assert isinstance(req, EndTxnRequest)
    error = checks.end_txn(sec, principal, tid, flags)
    return "EndTxn", error, EndTxnResponse(req.producer, req.connection, error)


def coordinator_request(system: Any, s: TxnSystemState, env: net.Envelope, req: Any, append_ok: bool) -> Result:
    """An InitProducerId / AddPartitionsToTxn / EndTxn request: authorize, handle, observe."""
    sec = acls_now(system, s)
    principal = principal_of(sec, env.src)
    api, error, denial = _coordinator_check(sec, principal, req, system.flags)
    if error != Errors.NONE:
        s = s._replace(network=net.send(s.network, net.Envelope(COORDINATOR, env.src, env.connection, denial)))
        return refused(sec, s, principal, api, error), (f"authz_denied:{api}", f"error:{error}")
    result = system._on_coordinator_request(s, env, req, append_ok)
    assert result is not None  # the coordinator always answers
    new, events = result
    return observe_change(system, new, s, principal, api, req.transactional_id), events


def _lacking(acls: SecurityConfig, principal: str, t: int, before: Any, after: Any) -> str:
    """The binding ``principal`` lacks, by ``acls``, for the change of transactional id ``t``'s entry from ``before``
    to ``after`` ("" if none): Write on the transactional id for any change; for each partition the change added to
    the transaction, Write on its topic (``handleAddPartitionsToTxnRequest``; a TV2 Produce's verification adds it
    the same way) or, for the group's offsets partition, Read on the group (``handleAddOffsetsToTxnRequest``; a TV2
    TxnOffsetCommit adds it) -- KafkaApis' checks (Kafka 4.0, apache/kafka 1eb7644), written here independently of
    :mod:`model.security.checks`, as what a request may change and not how the handler decides."""
    if not acls.may_write_transactional_id(principal, t):
        return f"Write on {transactional_id_name(t)}"
    old = () if before is None else before.partitions
    for q in sorted(set(() if after is None else after.partitions) - set(old)):
        if q >= OFFSETS_PARTITION_BASE:
            if not acls.allows(principal, Operation.READ, ResourceType.GROUP, group_name(q - OFFSETS_PARTITION_BASE)):
                return f"Read on {group_name(q - OFFSETS_PARTITION_BASE)}"
        elif not acls.may_write_topic(principal, q):
            return f"Write on {topic_name(q)}"
    return ""


def observe_change(system: Any, new: TxnSystemState, old: TxnSystemState, principal: str, api: str, t: int) -> Any:
    """``new`` with the change of transactional id ``t``'s coordinator entry noted, if ``principal`` -- whose
    ``api`` request made it -- lacks a binding the change needs by the ACLs in force (whatever the gate's switches
    said): Write on ``t``, and Write on the topic (Read on the group) of each partition it added (:func:`_lacking`).
    Every request a client or the adversary sends to the coordinator, or that adds a partition on its way (a TV2
    Produce or TxnOffsetCommit), is observed: a grant revoked mid-transaction is judged at each retry."""
    before, after = old.coordinator[t], new.coordinator[t]
    if after == before:
        return new
    lacking = _lacking(acls_in_force(system, old), principal, t, before, after)
    if not lacking:  # no branch: a change without a binding needs a broken check (keos mutants)
        return new
    after_label = f"{label_metadata(after)} without {lacking}"  # no mutate: ghost
    change = TxnChange(principal, t, api, label_metadata(before), after_label)  # no mutate: ghost
    changes = (*new.security.txn_changes, change)  # no mutate: ghost (unauthorized_never_changes_transaction)
    return new._replace(security=new.security._replace(txn_changes=changes))  # no mutate: ghost


def observe_offsets(system: Any, new: TxnSystemState, old: TxnSystemState, principal: str, api: str, t: int) -> Any:
    """``new`` with a TxnOffsetCommit noted that staged an offset in the group for transactional id ``t``'s
    producer although ``principal`` -- who sent it -- has no Write on ``t`` or no Read on the group by the ACLs in
    force (``KafkaApis.handleTxnOffsetCommitRequest`` checks both, Kafka 4.0, apache/kafka 1eb7644)."""
    if new.group == old.group:
        return new
    acls = acls_in_force(system, old)
    if not acls.may_write_transactional_id(principal, t):  # no branch: a staged offset needs a broken check
        lacking = f"Write on {transactional_id_name(t)}"
    elif not acls.allows(principal, Operation.READ, ResourceType.GROUP, group_name(0)):  # no branch: as above
        lacking = f"Read on {group_name(0)}"
    else:
        return new
    change = TxnChange(principal, t, api, "its group's offsets", lacking)  # no mutate: ghost
    changes = (*new.security.txn_changes, change)  # no mutate: ghost (unauthorized_never_changes_transaction)
    return new._replace(security=new.security._replace(txn_changes=changes))  # no mutate: ghost


def label_metadata(md: Any) -> str:  # unreachable: describes a violation, which only a broken check produces
    """A coordinator entry in one line, for the ghost history."""
    if md is None:
        return "none"
    return f"{md.state}(pid={md.producer_id}, epoch={md.producer_epoch})"


def deny_add_offsets(system: Any, s: TxnSystemState, env: net.Envelope, req: AddOffsetsToTxnRequest) -> Result:
    """``handleAddOffsetsToTxnRequest``'s checks (TransactionalId Write, Group Read); the denial or ``None``."""
    sec = acls_now(system, s)
    principal = principal_of(sec, env.src)
    tid = transactional_id_name(req.transactional_id)
    error = checks.add_offsets_to_txn(sec, principal, tid, req.group, system.flags)
    if error == Errors.NONE:
        return None
    resp = AddOffsetsToTxnResponse(req.producer, req.connection, error)
    s = s._replace(network=net.send(s.network, net.Envelope(COORDINATOR, env.src, env.connection, resp)))
    return refused(sec, s, principal, "AddOffsetsToTxn", error), ("authz_denied:AddOffsetsToTxn", f"error:{error}")


def deny_txn_offset_commit(
    system: Any, s: TxnSystemState, env: net.Envelope, req: TxnOffsetCommitRequest, group_coordinator: str
) -> Result:
    """``handleTxnOffsetCommitRequest``'s checks (TransactionalId Write, Group Read); the denial or ``None``."""
    sec = acls_now(system, s)
    principal = principal_of(sec, env.src)
    tid = transactional_id_name(req.transactional_id)
    error = checks.txn_offset_commit(sec, principal, tid, req.group, system.flags)
    if error == Errors.NONE:
        return None
    resp = TxnOffsetCommitResponse(req.producer, req.connection, error)
    s = s._replace(network=net.send(s.network, net.Envelope(group_coordinator, env.src, env.connection, resp)))
    return refused(sec, s, principal, "TxnOffsetCommit", error), ("authz_denied:TxnOffsetCommit", f"error:{error}")
