"""Invariants of transaction authorization (KIP-98 §9) against the adversary of :mod:`model.security.adversary`.

Two groups:

* What the ACLs protect -- must hold in every scenario:
  ``unauthorized_never_changes_transaction`` (TransactionalId Write gates every
  coordinator request), ``control_batches_only_from_markers`` (ClusterAction
  on WriteTxnMarkers, no control batch through Produce),
  ``transactional_writes_authorized`` (TransactionalId and Topic Write on a
  transactional Produce) and ``endless_transaction_bounded`` (an open
  transaction the producer never ends is one the coordinator's
  ``transaction.timeout.ms`` abort -- capped by ``transaction.max.timeout.ms``
  -- or its markers will end: the state form of "the LSO is held back at
  most transaction.max.timeout.ms").
* What KIP-98 §9 says the protocol does *not* protect ("Discussion on
  coordinator authorization"): the producer id is not bound to the
  transactional.id, so a producer that learns another's id can write into its
  open transaction (``pid_bound_to_transactional_id``) or force an epoch bump
  that fences it at the partition (``producer_epoch_from_coordinator``).
  Scenarios that let the adversary try list them as ``permitted``: the
  violation and its trace are reported as a documented weakness.

* What the scenario states, independently of the authorizer under test (an
  oracle written from Kafka's ACL semantics, e.g. by the generated matrix of
  :mod:`scenarios.authz_matrix`): a principal in ``expect_denied`` lacks a
  binding every one of its transactions needs, so it never commits one
  (``denied_principal_commits_nothing``); a principal in ``expect_granted``
  holds every binding its requests need, so none is refused
  (``granted_principal_never_refused``).  These catch an authorizer that
  grants or refuses wrongly, which the first group cannot: it asks the same
  :func:`authorize` the gate does.

Who wrote a data batch is read from its record ids (the adversary's records
carry producer index = number of clients); the coordinator changes,
control batches, refusals and ACL revocations an observer saw come from
:class:`model.security.records.SecurityGhost`.  A batch or a coordinator
change is judged by the ACLs in force when it was appended or made: the
scenario's, minus the bindings an operator revoked before (a revocation keeps
every partition's log end at that instant).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from keos.invariants._common import no_findings, sometimes_event, sometimes_state
from keos.model.clients.producer import RECORDS_PER_PRODUCER, record_label
from keos.model.coordinator.transaction.transaction_coordinator import OFFSETS_PARTITION_BASE
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.interface import Property
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.security.authorizer import (
    CLUSTER_NAME,
    Operation,
    ResourceType,
    group_name,
    transactional_id_name,
)
from keos.model.security.records import SecurityConfig, security_of
from keos.model.systems.transactions_records import TXN_FAULT_KINDS, TxnConfig, TxnSystemState

__all__ = ["WEAKNESSES", "security_properties"]

S = TransactionState
PREPARE = (S.PREPARE_COMMIT, S.PREPARE_ABORT)
#: The documented weaknesses (KIP-98 §9): scenarios may list them as permitted.
WEAKNESSES = ("pid_bound_to_transactional_id", "producer_epoch_from_coordinator")


def _after_removals(sec: SecurityConfig, removed: tuple[int, ...]) -> SecurityConfig:
    """The ACLs in force after the operator removed the bindings ``sec.revocable[i]``, ``i`` in ``removed``: the
    scenario's bindings minus exactly those, worked out here and not by the model's own removal code
    (:meth:`SecurityConfig.revoked`, which :func:`model.security.gate.acls_in_force` gives the broker's
    authorizer).

    Kafka's DeleteAcls (Kafka 4.0, apache/kafka 1eb7644): ``AclControlManager.deleteAclsForFilter`` writes a
    ``RemoveAccessControlEntryRecord`` with the id of each ACL the filter matches -- here the one binding the
    operator names -- and ``StandardAuthorizerData.removeAcl`` drops that ACL id and no other; every request
    authorized after it sees the rest unchanged.  A judge that asked the model which bindings are gone would agree
    with a removal that drops the wrong binding, drops more than one, or none: its refusals and allowed writes
    would all be judged by the same wrong ACLs.  Kafka's own removal path has had such bugs (KAFKA-14214: reads
    inconsistent with concurrent ACL changes, fixed by apache/kafka #12628; KAFKA-13892: a second removal record
    for an ACL two filters match).
    """
    named = [sec.revocable[i] for i in removed]
    return replace(sec, acls=tuple(b for b in sec.acls if b not in named))


class _Who:
    """Principals and claimed transactional ids of the writers of a scenario."""

    def __init__(self, config: TxnConfig) -> None:
        self.sec: SecurityConfig = security_of(config)
        self.clients = config.topology.producers
        self.shared = config.topology.shared_transactional_id
        self.partitions = config.topology.partitions

    def at(self, s: TxnSystemState, q: int, offset: int) -> SecurityConfig:
        """The ACLs in force when partition ``q``'s batch at ``offset`` was appended."""
        return _after_removals(self.sec, tuple(r.binding for r in s.security.revocations if r.log_ends[q] <= offset))

    def principals_of_transactional_id(self, s: TxnSystemState, t: int) -> set[str]:
        """The principals of the clients that use transactional id ``t``."""
        return {self.sec.principal_of(i) for i, c in enumerate(s.clients) if c.transactional_id == t}

    def sender(self, rid: int) -> int:
        return rid // RECORDS_PER_PRODUCER

    def principal(self, rid: int) -> str:
        i = self.sender(rid)
        return self.sec.adversary if i >= self.clients else self.sec.principal_of(i)

    def claimed(self, rid: int) -> str:
        i = self.sender(rid)
        if i >= self.clients:
            return self.sec.adversary_transactional_id
        return transactional_id_name(0 if self.shared else i)

    def owner(self, s: TxnSystemState, pid: int) -> int:
        """The transactional id whose coordinator entry holds ``pid`` (-1: none)."""
        for t, md in enumerate(s.coordinator):
            if md is not None and pid in (md.producer_id, md.prev_producer_id):
                return t
        for c in s.clients:
            if c.data.producer_id == pid:
                return c.transactional_id
        return -1



def _spent(kind: str) -> Callable[[Any], bool]:
    """The witness of an adversary action's event: the step spent the action's budget (``faults_used``, which
    ``TransactionSystem.step`` raises for every adversary action it takes)."""
    k = TXN_FAULT_KINDS.index(kind)
    return lambda s: s.faults_used[k] > 0

def _unauthorized_changes(who: _Who, s: TxnSystemState) -> list[str]:
    return [
        f"{c.principal} ({c.api}) staged an offset in {transactional_id_name(c.transactional_id)}'s transaction "
        f"without {c.after}"
        if c.api == "TxnOffsetCommit"
        else f"{c.principal} ({c.api}) moved {transactional_id_name(c.transactional_id)} from {c.before} to {c.after}"
        for c in s.security.txn_changes
    ]


def _bad_controls(who: _Who, s: TxnSystemState) -> list[str]:
    out = []
    for a in s.security.control_appends:
        may = who.sec.allows(a.principal, Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME) or (
            who.sec.allows(a.principal, Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
        )
        if a.api != "WriteTxnMarkers":
            out.append(f"{a.principal} appended a control batch via {a.api} at {a.partition}:{a.offset}")
        elif not may:
            out.append(
                f"{a.principal} (no ClusterAction) appended a marker at partition {a.partition} offset {a.offset}"
            )
    return out


def _unauthorized_writes(who: _Who, s: TxnSystemState) -> list[str]:
    out = []
    for q, leader in enumerate(s.partitions):
        for offset, e in enumerate(leader.log):
            if e.control or not e.transactional:
                continue
            acls = who.at(s, q, offset)
            for rid in e.records:
                p, tid = who.principal(rid), who.claimed(rid)
                if not acls.may_write_transactional_id(p, tid):
                    out.append(f"{record_label(rid)} at partition {q} offset {offset}: {p} has no Write on {tid}")
                elif not acls.may_write_topic(p, q):
                    out.append(f"{record_label(rid)} at partition {q} offset {offset}: {p} has no Write on topic t{q}")
    return out


def _unauthorized_offsets(who: _Who, s: TxnSystemState) -> list[str]:
    """Transactional offset commits in the group's offsets log by a principal without Read on the group or Write
    on the transactional id, by the ACLs in force when they were appended."""
    g = s.group
    if g is None:
        return []
    out = []
    for offset, e in enumerate(g.offsets_log.log):
        if e.control or not e.transactional:
            continue
        t = who.owner(s, e.producer_id)
        gone = tuple(r.binding for r in s.security.revocations if 0 <= r.offsets_end <= offset)
        acls = _after_removals(who.sec, gone)
        for p in sorted(who.principals_of_transactional_id(s, t)):
            if not acls.allows(p, Operation.READ, ResourceType.GROUP, group_name(0)):
                out.append(f"{p}'s transactional offset commit at offsets-log offset {offset} without Read on g0")
            elif not acls.may_write_transactional_id(p, t):
                out.append(f"{p}'s transactional offset commit at offsets-log offset {offset} without Write on "
                           f"{transactional_id_name(t)}")
    return out


def _unauthorized_txn_partitions(who: _Who, s: TxnSystemState) -> list[str]:
    """Data partitions in a transaction whose topic the transactional id's principal may not write (the group's
    offsets partition of a consume-transform-produce transaction is authorized by Group Read instead)."""
    out = []
    for t, md in enumerate(s.coordinator):
        if md is None:
            continue
        for principal in sorted(who.principals_of_transactional_id(s, t)):
            out += [
                f"txn-{t} ({principal}) has partition t{q} in its transaction ({md.state}) without Write on topic t{q}"
                for q in md.partitions
                if q < OFFSETS_PARTITION_BASE and not who.sec.may_write_topic(principal, q)
            ]
    return out


def _unbounded(s: TxnSystemState) -> list[str]:
    out = []
    for q, leader in enumerate(s.partitions):
        for e in leader.producers:
            if e.current_txn_first_offset < 0:
                continue
            marker = any(
                isinstance(env.body, WriteTxnMarkersRequest)
                and env.body.partition == q
                and env.body.producer_id == e.producer_id
                for env in s.network
            )
            timeout = any(
                md is not None
                and md.producer_id == e.producer_id
                and q in md.partitions
                and md.state == S.ONGOING
                and not md.pending_state
                for md in s.coordinator
            )
            if not (marker or timeout):
                stuck = [md.state for md in s.coordinator if md is not None and md.producer_id == e.producer_id]
                why = f" (coordinator in {stuck[0]}, its marker gone)" if stuck and stuck[0] in PREPARE else ""
                out.append(
                    f"partition {q}: the transaction of pid {e.producer_id} open at offset "
                    f"{e.current_txn_first_offset} has no coordinator timeout or marker that would end it{why}"
                )
    return out


def _foreign_writes(who: _Who, s: TxnSystemState) -> list[str]:
    out = []
    for q, leader in enumerate(s.partitions):
        for offset, e in enumerate(leader.log):
            if e.control:
                continue
            t = who.owner(s, e.producer_id)
            if t < 0:
                continue
            for rid in e.records:
                p = who.principal(rid)
                if not who.sec.may_write_transactional_id(p, t):
                    out.append(
                        f"{record_label(rid)} of {p} at partition {q} offset {offset} is in the transaction of pid "
                        f"{e.producer_id} ({transactional_id_name(t)}), on which {p} has no Write"
                    )
    return out


def _epochs_ahead(s: TxnSystemState) -> list[str]:
    out = []
    for q, leader in enumerate(s.partitions):
        for e in leader.producers:
            for md in s.coordinator:
                if md is not None and md.producer_id == e.producer_id and e.producer_epoch > md.producer_epoch:
                    out.append(
                        f"partition {q} holds pid {e.producer_id} at epoch {e.producer_epoch}, above the "
                        f"coordinator's {md.producer_epoch}: the owner's batches are fenced there"
                    )
    return out


def _denied_commits(who: _Who, s: TxnSystemState) -> list[str]:
    denied = set(who.sec.expect_denied)
    out = [
        f"commitTransaction returned to client p{o.producer} ({who.sec.principal_of(o.producer)}) for its "
        f"transaction {o.txn}"
        for o in s.ghost.outcomes
        if o.committed and who.sec.principal_of(o.producer) in denied
    ]
    for c in s.ghost.completions:
        principals = sorted(who.principals_of_transactional_id(s, c.transactional_id) & denied)
        if c.committed and principals:
            out.append(
                f"the coordinator completed a COMMIT of {transactional_id_name(c.transactional_id)} "
                f"(pid {c.producer_id}) of {', '.join(principals)}"
            )
    out += [
        f"{a.principal} appended a control batch via {a.api} at partition {a.partition} offset {a.offset}"
        for a in s.security.control_appends
        if a.principal in denied
    ]
    return out


def _granted_refusals(who: _Who, s: TxnSystemState) -> list[str]:
    granted = set(who.sec.expect_granted)
    return [
        f"{r.principal} was refused {r.api} with {r.error}"
        for r in _authz_refusals(s)
        if r.principal in granted and not r.revoked
    ]


def _denied_principal_commits_nothing(who: _Who) -> Property:
    return no_findings(
        name="denied_principal_commits_nothing",
        fact="A principal the scenario states lacks a binding its requests need (expect_denied: removed, "
        "or overridden by a matching Deny) never commits a transaction -- every request of a transaction is "
        "authorized, so one refusal leaves it to abort or to the coordinator's timeout -- and never appends a "
        "(forged) control batch.",
        source="KIP-98 §9; KafkaApis.handle{InitProducerId,AddPartitionsToTxn,AddOffsetsToTxn,TxnOffsetCommit,"
        "EndTxn,Produce}Request; StandardAuthorizerData.findAclRule (Kafka 4.0, apache/kafka 1eb7644)",
        catches="an authorizer that grants what Kafka's ACL semantics deny (a Deny that does not win, a "
        "literal name taken as a prefix, another principal's or operation's binding), or a handler that "
        "skips a check",
        findings=lambda s: _denied_commits(who, s),
        partners=("expected_denial_refused",),
    )


def _granted_principal_never_refused(who: _Who) -> Property:
    return no_findings(
        name="granted_principal_never_refused",
        fact="A principal the scenario states holds every binding its requests need (expect_granted: a super "
        "user, or bindings granting through a wildcard, a prefix or operation All, with Denies of something "
        "else) is never refused a request (before any ACL is revoked).",
        source="KIP-98 §9; StandardAuthorizerData.authorize/findResult (Kafka 4.0, apache/kafka 1eb7644)",
        catches="an authorizer that refuses what Kafka's ACL semantics allow (a Deny of another operation, "
        "name or principal taken to match, a wildcard or prefix ignored, super.users not honoured)",
        findings=lambda s: _granted_refusals(who, s),
        partners=("granted_principal_committed",),
    )


#: The log's refusal of a client's control batch (``LogValidator``): no authorization decision, the last check of a
#: Produce (:data:`KAFKA_CHECK_ORDER`).
LOG_REFUSAL = "INVALID_RECORD"


def _authz_refusals(s: TxnSystemState) -> list[Any]:
    """The refusals an authorization check answered (not the log's refusal of a control batch)."""
    return [r for r in s.security.refusals if r.error != LOG_REFUSAL]


def _wrong_errors(who: _Who, s: TxnSystemState) -> list[str]:
    return [
        f"{r.principal}'s {r.api} was refused with {r.error}, not {' or '.join(who.sec.expect_errors)}"
        for r in _authz_refusals(s)
        if r.error not in who.sec.expect_errors
    ]


#: The checks each handler makes, in ``KafkaApis``' order (Kafka 4.0, ``core/src/main/scala/kafka/server/
#: KafkaApis.scala`` at apache/kafka 1eb7644): ``handleProduceRequest`` refuses a transactional request for its
#: TransactionalId before it filters the topics; ``handleAddPartitionsToTxnRequest`` (versions < 4) checks the
#: TransactionalId, then every topic; ``handleAddOffsetsToTxnRequest`` and ``handleTxnOffsetCommitRequest`` check
#: the TransactionalId, then the group (``else if``); InitProducerId and EndTxn only the TransactionalId;
#: WriteTxnMarkers only the cluster.  Written from Kafka's source, independently of :mod:`model.security.checks`.
KAFKA_CHECK_ORDER: dict[str, tuple[str, ...]] = {
    "InitProducerId": (ResourceType.TRANSACTIONAL_ID,),
    "AddPartitionsToTxn": (ResourceType.TRANSACTIONAL_ID, ResourceType.TOPIC),
    "AddOffsetsToTxn": (ResourceType.TRANSACTIONAL_ID, ResourceType.GROUP),
    "TxnOffsetCommit": (ResourceType.TRANSACTIONAL_ID, ResourceType.GROUP),
    "EndTxn": (ResourceType.TRANSACTIONAL_ID,),
    "Produce": (ResourceType.TRANSACTIONAL_ID, ResourceType.TOPIC, LOG_REFUSAL),
    "WriteTxnMarkers": (ResourceType.CLUSTER,),
}
#: The error KafkaApis answers when the check on a resource of each type fails.
ERROR_OF_CHECK = {
    ResourceType.TRANSACTIONAL_ID: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    ResourceType.TOPIC: "TOPIC_AUTHORIZATION_FAILED",
    ResourceType.GROUP: "GROUP_AUTHORIZATION_FAILED",
    ResourceType.CLUSTER: "CLUSTER_AUTHORIZATION_FAILED",
    LOG_REFUSAL: LOG_REFUSAL,  # LogValidator: "Clients are not allowed to write control records"
}


def _check_outcomes(who: _Who, sec: SecurityConfig, principal: str, rtype: str) -> set[bool]:
    """Whether ``principal`` passes the check on a resource of type ``rtype`` its requests name, for every resource
    of that type it may name (its clients' transactional ids -- the adversary's own and any it attacks --, every
    data partition's topic, the group): ``{True}`` passes whichever, ``{False}`` fails whichever."""
    if rtype == ResourceType.TRANSACTIONAL_ID:
        own = [i for i in range(who.clients) if sec.principal_of(i) == principal]
        ids = {transactional_id_name(0 if who.shared else i) for i in own}
        if principal == sec.adversary:
            ids |= {sec.adversary_transactional_id, *(transactional_id_name(i) for i in range(who.clients))}
        return {sec.may_write_transactional_id(principal, n) for n in ids}
    if rtype == ResourceType.TOPIC:
        return {sec.may_write_topic(principal, q) for q in range(who.partitions)}
    if rtype == ResourceType.GROUP:
        return {sec.allows(principal, Operation.READ, ResourceType.GROUP, group_name(0))}
    if rtype == LOG_REFUSAL:
        return {False}  # a client's control batch is refused whatever the ACLs
    return {
        sec.allows(principal, Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
        or sec.allows(principal, Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME)
    }


def _out_of_order_refusals(who: _Who, s: TxnSystemState) -> list[str]:
    """Refusals whose error is not the first failing check of Kafka's order, judged by the ACLs in force when the
    request was refused: an earlier check that fails whatever resource the request names, or the refusal's own
    check passing whatever it names."""
    out: list[str] = []
    revoked = s.security.revoked()
    for r in s.security.refusals:
        order = KAFKA_CHECK_ORDER.get(r.api, ())
        types = [t for t in order if ERROR_OF_CHECK[t] == r.error]
        if not types:
            out.append(f"{r.principal}'s {r.api} was refused with {r.error}, which none of its checks answers")
            continue
        sec = _after_removals(who.sec, revoked[: r.revoked])
        for earlier in order[: order.index(types[0])]:
            if _check_outcomes(who, sec, r.principal, earlier) == {False}:
                out.append(
                    f"{r.principal}'s {r.api} was refused with {r.error}, but its {earlier} check, which Kafka "
                    f"makes first, fails too: Kafka answers {ERROR_OF_CHECK[earlier]}"
                )
        if _check_outcomes(who, sec, r.principal, types[0]) == {True}:
            out.append(f"{r.principal}'s {r.api} was refused with {r.error}, but it holds the {types[0]} binding")
    return out


def _oracle_properties(who: _Who) -> list[Property]:
    sec = who.sec
    props: list[Property] = []
    if sec.expect_errors:
        props += [
            no_findings(
                name="refusals_carry_kafkas_error",
                fact="A refused request is answered with the error of the resource whose check failed "
                "(TRANSACTIONAL_ID_, TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED), which decides whether the "
                "client may abort and go on or must close; the scenario states which resources it denies.",
                source="KafkaApis.handle{InitProducerId,AddPartitionsToTxn,AddOffsetsToTxn,TxnOffsetCommit,EndTxn,"
                "Produce,WriteTxnMarkers}Request (Kafka 4.0, apache/kafka 1eb7644); TransactionManager's handlers",
                catches="a check answering another resource's error (a GROUP refusal as TOPIC_AUTHORIZATION_FAILED "
                "makes the client fatal instead of abortable)",
                findings=lambda s: _wrong_errors(who, s),
                partners=("authorization_refused",),
            ),
            no_findings(
                name="refusals_follow_kafkas_check_order",
                fact="A request that several checks would refuse is answered with the error of the first of them "
                "in the handler's order -- the TransactionalId before the topics of a Produce or "
                "AddPartitionsToTxn, before the group of an AddOffsetsToTxn or TxnOffsetCommit -- and a refusal "
                "names a resource whose check fails, by the ACLs in force when the request was handled.",
                source="KafkaApis.handle{Produce,AddPartitionsToTxn,AddOffsetsToTxn,TxnOffsetCommit,InitProducerId,"
                "EndTxn,WriteTxnMarkers}Request (Kafka 4.0, apache/kafka 1eb7644)",
                catches="two authorization checks of a handler in the wrong order (observable when two bindings "
                "are missing at once: a TOPIC_ or GROUP_AUTHORIZATION_FAILED, abortable, where Kafka answers the "
                "fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED), a refusal naming a resource the principal holds",
                findings=lambda s: _out_of_order_refusals(who, s),
                partners=("authorization_refused",),
            ),
            sometimes_state(
                "authorization_refused",
                "A request was refused by an authorization check.",
                lambda s: bool(_authz_refusals(s)),
            ),
        ]
    if sec.expect_denied:
        denied = set(sec.expect_denied)
        props += [
            _denied_principal_commits_nothing(who),
            sometimes_state(
                "expected_denial_refused",
                "A principal in expect_denied was refused a request.",
                lambda s: any(r.principal in denied for r in _authz_refusals(s)),
            ),
        ]
    if sec.expect_granted:
        granted = set(sec.expect_granted)
        props += [
            _granted_principal_never_refused(who),
            sometimes_state(
                "granted_principal_committed",
                "The coordinator completed a COMMIT of a transactional id of a principal in expect_granted.",
                lambda s: any(
                    c.committed and who.principals_of_transactional_id(s, c.transactional_id) & granted
                    for c in s.ghost.completions
                ),
            ),
        ]
    return props


def _unauthorized_change(who: _Who, partners: tuple[str, ...]) -> Property:
    return no_findings(
        name="unauthorized_never_changes_transaction",
        fact="A principal without Write on a TransactionalId never changes that transaction's coordinator "
        "state (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn are refused with "
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED), never adds a partition to it without Write on the partition's "
        "topic, nor the group's offsets partition without Read on the group (by the ACLs in force when the request "
        "is handled: a grant revoked mid-transaction stops the next request), and never stages an offset in it "
        "without Write on it and Read on the group (TxnOffsetCommit).",
        source="KIP-98 §9 (Authorization); KafkaApis.handleInitProducerIdRequest/handleEndTxnRequest/"
        "handleAddOffsetsToTxnRequest/handleTxnOffsetCommitRequest (Kafka 4.0)",
        catches="a coordinator API that skips the TransactionalId ACL (a stranger fences or ends a transaction), "
        "an AddOffsetsToTxn or AddPartitionsToTxn whose Group or Topic check is skipped or judged by revoked ACLs",
        findings=lambda s: _unauthorized_changes(who, s),
        partners=partners,
    )


def _control_only_from_markers(who: _Who, partners: tuple[str, ...]) -> Property:
    return no_findings(
        name="control_batches_only_from_markers",
        fact="No control (COMMIT/ABORT) batch is appended except by a WriteTxnMarkers request from a principal "
        "with ClusterAction on the cluster; Produce never carries control records.",
        source="KIP-98 §9; KafkaApis.handleWriteTxnMarkersRequest; LogValidator (client control records)",
        catches="markers accepted from clients, or control batches through Produce: a stranger commits or "
        "aborts someone else's transaction on a partition",
        findings=lambda s: _bad_controls(who, s),
        partners=partners,
    )


def _writes_authorized(who: _Who, partner: str) -> Property:
    return no_findings(
        name="transactional_writes_authorized",
        fact="Every transactional data batch in a log was sent by a principal with Write on the transactional.id "
        "its Produce request carried and on its topic.",
        source="KIP-98 §9 (endless transaction attack); KafkaApis.handleProduceRequest",
        catches="a Produce of transactional data without the TransactionalId ACL: anyone can open "
        "transactions that hold the LSO back",
        findings=lambda s: _unauthorized_writes(who, s),
        partners=(partner,),
    )


def _endless_bounded(who: _Who, abandon: bool, timeout: bool) -> Property:
    partners = (
        ("transaction_abandoned", "open_transaction_timed_out")
        if abandon and timeout
        else (("transaction_abandoned",) if abandon else ("transaction_opened",))
    )
    return no_findings(
        name="endless_transaction_bounded",
        fact="Every transaction open on a partition (holding its LSO back) is one the coordinator ends without "
        "the producer: Ongoing with the partition (the transaction.timeout.ms abort, at most "
        "transaction.max.timeout.ms) or with its marker in flight.",
        source="KIP-98 §9 (endless transaction attack); TransactionCoordinator.abortTimedOutTransactions",
        catches="transactional data no coordinator transaction covers: the LSO stays behind for ever",
        findings=_unbounded,
        partners=partners,
    )


def _adversary_batches(who: _Who, s: TxnSystemState) -> bool:
    """Whether a data batch of the adversary's records sits in a partition's log."""
    return any(
        not e.control and any(who.sender(rid) >= who.clients for rid in e.records)
        for leader in s.partitions
        for e in leader.log
    )


def _pid_bound(who: _Who, partner: str) -> Property:
    return no_findings(
        name="pid_bound_to_transactional_id",
        fact="Every data batch under a producer id was written by a principal with Write on the TransactionalId "
        "that producer id belongs to.  KIP-98 §9 documents that this is NOT protected: the producer id "
        "is not authenticated, so a producer that learns it writes into the owner's open transaction.",
        source="KIP-98 §9, Discussion on coordinator authorization (producer id hijack)",
        catches="a documented weakness (reported as permitted where a scenario lets the adversary try)",
        findings=lambda s: _foreign_writes(who, s),
        partners=(partner,),
    )


def _epoch_from_coordinator(who: _Who) -> Property:
    return no_findings(
        name="producer_epoch_from_coordinator",
        fact="No partition holds a producer id at an epoch above the one its coordinator issued.  KIP-98 §9 "
        "documents that this is NOT protected: a hijacker's batch at epoch + 1 fences the owner there.",
        source="KIP-98 §9, Discussion on coordinator authorization (forced epoch bump)",
        catches="a documented weakness (reported as permitted where a scenario lets the adversary try)",
        findings=_epochs_ahead,
        partners=("forged_produce_attempted",),
    )


def _witnesses_match_effects() -> Property:
    return no_findings(
        name="attack_witnesses_match_effects",
        fact="Every hostile request the adversary sends is reported as taking effect exactly when the cluster's "
        "state shows its effect in that step: a forged or stray batch in a partition's log, a forged COMMIT/ABORT "
        "marker of that type in it, a replayed or stale coordinator request changing the transactional id's entry, "
        "a replayed offset commit changing the entry or the group.  The reports witness the sometimes-partners "
        "that show an attack was really exercised (forged_batch_in_sequence_appended, forged_*_marker_took_effect, "
        "forged_end_txn_*_took_effect, hijack_init_*_took_effect), so a report without its effect would make a "
        "partner fire on a mere attempt.",
        source="KIP-98 §9 (what the adversary can and cannot do); model.security.witnesses (the judge)",
        catches="an adversary handler that reports an effect that did not happen (or hides one that did): a "
        "sometimes-partner satisfied by a mere event",
        findings=lambda s: [b[len("witness:") :] for b in s.ghost.bad_transitions if b.startswith("witness:")],
    )


def security_properties(config: TxnConfig) -> tuple[Property, ...]:
    """The authorization properties, for scenarios with ``[security]`` or adversary budgets."""
    f = config.faults
    adversary = f.forge_produce + f.forge_request + f.hijack_init + f.forge_marker + f.endless_txn
    witnesses = [_witnesses_match_effects()] if adversary + f.stale_request else []
    if config.security is None and adversary == 0:
        return tuple(witnesses)
    who = _Who(config)
    sec = who.sec
    lacking = any(
        not sec.may_write_transactional_id(sec.principal_of(i), 0 if who.shared else i) for i in range(who.clients)
    )
    revocations = f.revoke_acl > 0 and bool(sec.revocable)
    revoked_tid = revocations and any(b.resource_type == ResourceType.TRANSACTIONAL_ID for b in sec.revocable)
    props: list[Property] = [*witnesses, *_oracle_properties(who)]
    # the adversary's coordinator requests are refused somewhere only if it lacks Write on some transactional id
    stranger = any(not sec.may_write_transactional_id(sec.adversary, t) for t in range(who.clients))
    attacks = (f.forge_request or f.hijack_init or f.forge_produce) and stranger
    own = {0 if who.shared else i for i in range(who.clients) if sec.principal_of(i) == sec.adversary}
    allowed_foreign = any(
        sec.may_write_transactional_id(sec.adversary, t) for t in range(who.clients) if t not in own
    )
    # An adversary the ACLs allow on another's transactional id must show each of its requests taking effect:
    # the allowed side of unauthorized_never_changes_transaction (a change by a principal with Write), one
    # partner per request and outcome it may send (KIP-98 §9: the ACL is the only defence).
    took_effect: list[Property] = []
    if allowed_foreign and f.forge_request:
        took_effect += [
            sometimes_event(
                f"forged_end_txn_{outcome}_took_effect",
                f"An EndTxn ({outcome}) the adversary replayed, allowed by its Write on another producer's "
                "transactional id, changed that transaction.",
                f"adversary:took_effect:forge_end_txn:{outcome}",
            )
            for outcome in ("commit", "abort")
        ]
    if allowed_foreign and f.hijack_init:
        # one partner per shape a forger sends (model.security.adversary.hijack_init): a fresh InitProducerId and
        # the KIP-360 form claiming the victim's producer id and epoch -- Write on the transactional id is the
        # only defence against either
        took_effect += [
            sometimes_event(
                f"hijack_init_{shape}_took_effect",
                f"An InitProducerId of the adversary ({what}), allowed by its Write on another producer's "
                "transactional id, bumped that producer's epoch.",
                f"adversary:took_effect:hijack_init:{shape}",
            )
            for shape, what in (("fresh", "no producer id"), ("claimed", "claiming the victim's producer id and epoch"))
        ]
    if allowed_foreign and f.forge_request and config.eos is not None and sec.allows(
        sec.adversary, Operation.READ, ResourceType.GROUP, group_name(0)
    ):
        # consume-transform-produce: KafkaApis.handleAddOffsetsToTxnRequest / handleTxnOffsetCommitRequest (Kafka
        # 4.0, apache/kafka 1eb7644) authorize Write on the transactional.id, then Read on the group -- nothing binds
        # the producer id, the generation or the member id to the sender, so a principal holding both must show each
        # replayed offset request changing the victim's transaction or the group (KIP-98 §9)
        took_effect += [
            sometimes_event(
                f"forged_{api}_took_effect",
                f"An {api} the adversary replayed with another producer's transactional id, producer id and epoch, "
                "allowed by its Write on that transactional id and Read on the group, changed that transaction or "
                "the group.",
                f"adversary:took_effect:forge_txn_offsets:{api}",
            )
            for api in ("AddOffsetsToTxn", "TxnOffsetCommit")  # model.security.adversary.OFFSET_APIS
        ]
    refused_partner = (
        [
            sometimes_event(
                "unauthorized_request_refused",
                "A coordinator request was refused for want of TransactionalId Write.",
                "error:TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
            )
        ]
        if attacks or lacking or revoked_tid
        else []
    )
    if took_effect or refused_partner:
        partners = tuple(p.name for p in (*refused_partner, *took_effect))
        props += [_unauthorized_change(who, partners), *refused_partner, *took_effect]
    elif revocations:
        # a topic or group binding revoked mid-transaction: a later AddPartitionsToTxn, AddOffsetsToTxn or TV2
        # TxnOffsetCommit that adds a partition to the transaction needs it (gate.observe_change judges each change)
        props.append(_unauthorized_change(who, ("refused_after_revocation",)))
    if f.forge_marker:
        # an adversary allowed WriteTxnMarkers (a cluster administrator) must show its marker landing
        admin = any(sec.allows(sec.adversary, op, ResourceType.CLUSTER, CLUSTER_NAME)
                    for op in (Operation.CLUSTER_ACTION, Operation.ALTER))
        props += [
            _control_only_from_markers(
                who,
                ("forged_marker_appended", *(f"forged_{o}_marker_took_effect" for o in ("commit", "abort")))
                if admin
                else ("forged_control_batch_attempted",),
            ),
            replace(
                sometimes_event(
                    "forged_control_batch_attempted",
                    "The adversary sent a control batch (WriteTxnMarkers or Produce).",
                    "adversary:forge_marker:*",
                ),
                witness=_spent("forge_marker"),
            ),
        ]
        if admin:
            props.append(
                sometimes_state(
                    "forged_marker_appended",
                    "A marker the adversary (allowed WriteTxnMarkers: Alter or ClusterAction) sent was appended.",
                    lambda s: bool(s.security.control_appends),
                )
            )
            # the granted side, one partner per outcome: an administrator's COMMIT and ABORT markers both land
            # (KafkaApis.handleWriteTxnMarkersRequest checks ClusterAction only, whatever the marker's result)
            props += [
                sometimes_event(
                    f"forged_{outcome}_marker_took_effect",
                    f"A {outcome.upper()} marker the adversary (allowed WriteTxnMarkers) sent was appended.",
                    f"adversary:took_effect:forge_marker:{outcome}",
                )
                for outcome in ("commit", "abort")
            ]
    lacking_topic = any(
        not sec.may_write_topic(sec.principal_of(i), q)
        for i in range(who.clients)
        for q in range(config.topology.partitions)
    )
    if lacking_topic and not who.shared:
        props.append(
            no_findings(
                name="transaction_partitions_authorized",
                fact="A transaction never includes a partition whose topic its principal may not write, so no "
                "marker of it lands on such a topic.",
                source="KIP-98 §9; KafkaApis.handleAddPartitionsToTxnRequest (Write on every topic, Kafka 4.0)",
                catches="an AddPartitionsToTxn (or a TV2 verification) that adds a partition without the topic check",
                findings=lambda s: _unauthorized_txn_partitions(who, s),
                partners=("client_produce_refused",),
            )
        )
    if revocations and config.eos is not None:
        props.append(
            no_findings(
                name="transactional_offsets_authorized",
                fact="Every transactional offset commit in the group's offsets log was staged by a principal with "
                "Read on the group and Write on its transactional id, by the ACLs in force then.",
                source="KIP-98 §9; KafkaApis.handleAddOffsetsToTxnRequest/handleTxnOffsetCommitRequest (Kafka 4.0, "
                "apache/kafka 1eb7644)",
                catches="a TxnOffsetCommit accepted without the Group or TransactionalId check, or by ACLs an "
                "operator had changed",
                findings=lambda s: _unauthorized_offsets(who, s),
                partners=("refused_after_revocation",),
            )
        )
    if revocations:
        props += [
            _writes_authorized(who, "refused_after_revocation"),
            sometimes_state(
                "refused_after_revocation",
                "A request was refused because an operator had revoked a binding it needed.",
                lambda s: any(r.revoked for r in _authz_refusals(s)),
            ),
        ]
    elif lacking_topic and not f.forge_produce:
        props.append(_writes_authorized(who, "client_produce_refused"))
    if lacking_topic and not f.forge_produce:
        # also with revocations: a binding revoked beside a topic never granted (authz_matrix's PAIR_CELLS)
        props.append(
            sometimes_event(
                "client_produce_refused",
                "A client's Produce was refused with TOPIC_AUTHORIZATION_FAILED (abortable for the client).",
                "client_error:TOPIC_AUTHORIZATION_FAILED",
            )
        )
    if lacking:
        props.append(
            sometimes_event(
                "client_init_refused",
                "A client's InitProducerId was refused and it went back to UNINITIALIZED (KAFKA-13668).",
                "client_uninitialized",
            )
        )
    if f.forge_produce:
        # an adversary that may write transactional data (its claimed transactional.id and some topic) must show
        # the documented hijack landing, not only being attempted
        hijacker = sec.may_write_transactional_id(sec.adversary, sec.adversary_transactional_id) and any(
            sec.may_write_topic(sec.adversary, q) for q in range(config.topology.partitions)
        )
        if hijacker:
            props.append(
                sometimes_state(
                    "forged_batch_appended",
                    "A transactional batch the adversary forged (under another producer's id) was appended "
                    "(KIP-98 §9: the producer id is not authenticated).",
                    lambda s: _adversary_batches(who, s),
                )
            )
            # every shape of the hijack a real forger sends (model.security.adversary.forge_produce) must be shown
            # landing, not only attempted: a batch continuing the victim's sequence at its epoch (into the open
            # transaction; KIP-98 §9) and the first batch of the victim's epoch on a partition it has not written
            # yet (TV1 without verification of that partition, or with it while the victim's AddPartitionsToTxn
            # already added it).  Kafka 4.0 refuses the epoch + 1 shape (KAFKA-14563), so it has no partner.
            props.append(
                sometimes_event(
                    "forged_batch_in_sequence_appended",
                    "A batch the adversary forged at the victim's epoch, continuing the victim's sequence on the "
                    "partition, was appended (KIP-98 §9: neither the producer id nor the sequence is authenticated).",
                    "adversary:took_effect:forge_produce:next",
                )
            )
        props += [
            *(() if revocations else (_writes_authorized(who, "forged_produce_attempted"),)),
            _pid_bound(who, "forged_batch_appended" if hijacker else "forged_produce_attempted"),
            _epoch_from_coordinator(who),
            replace(
                sometimes_event(
                    "forged_produce_attempted",
                    "The adversary sent a transactional Produce (hijacked or stray producer id).",
                    "adversary:produce:*",
                ),
                witness=_spent("forge_produce"),
            ),
        ]
    if f.forge_produce or f.endless_txn:
        props.append(_endless_bounded(who, f.endless_txn > 0, f.txn_timeout > 0))
        if f.endless_txn:
            props.append(
                # a state, not the step's event: the abandonment must take effect (the producer's application
                # stays silent from then on, model.security.adversary.blocked_by_abandon), not only be attempted
                sometimes_state(
                    "transaction_abandoned",
                    "A producer abandoned its open transaction (the endless transaction): its application makes no "
                    "further call.",
                    lambda s: bool(s.security.abandoned),
                )
            )
            if f.txn_timeout:
                props.append(
                    sometimes_event(
                        "open_transaction_timed_out",
                        "The coordinator aborted a transaction on its transaction.timeout.ms.",
                        "timeout_abort",
                    )
                )
        else:
            props.append(
                sometimes_event(
                    "transaction_opened", "A transactional batch opened a transaction.", "txn_opened_on_partition"
                )
            )
    return tuple(props)
