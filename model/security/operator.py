"""An operator removes an ACL binding while transactions run: ``kafka-acls --remove`` mid-run.

KIP-98 §9 makes the TransactionalId ACL the defence of a transaction, and ACLs
change while producers run.  Kafka's authorizer applies a removal to every
request handled after it (KRaft: ``StandardAuthorizer`` applies the metadata
log's ``RemoveAccessControlEntryRecord``, ``AclControlManager``; Kafka 4.0,
apache/kafka 1eb7644); KafkaApis authorizes each request afresh, so an open
transaction gets no grace: its next Produce, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit or EndTxn is refused, and only the
coordinator's ``transaction.timeout.ms`` abort can end it when the refusal is
fatal for the client (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).  What is
already done stays done: a request handled before the removal was allowed,
and the markers of an EndTxn already accepted are written by the
coordinator with the brokers' ClusterAction.

``RevokeAcl(binding)`` -- fault kind ``revoke_acl`` -- removes
``SecurityConfig.revocable[binding]``; the revocation, with every data
partition's and the group's offsets log end at that instant, is kept in
:attr:`model.security.records.SecurityGhost.revocations`, which
:func:`model.security.gate.acls_now` reads (it is state the gate decides by,
not only history) and the invariants use to judge each write by the ACLs in
force when it was appended.
"""

from __future__ import annotations

from typing import Any

from keos.model.interface import Action
from keos.model.security.records import Revocation, security_of
from keos.model.systems.transactions_records import TxnSystemState

__all__ = ["OPERATOR_ACTION_ARGS", "OPERATOR_FAULT_OF_ACTION", "revoke_acl", "revoke_actions"]

OPERATOR_ACTION_ARGS: dict[str, tuple[str, ...]] = {"RevokeAcl": ("binding",)}  # no mutate: trace format (JSON keys)
OPERATOR_FAULT_OF_ACTION = {"RevokeAcl": "revoke_acl"}  # no mutate: fault model (the budget RevokeAcl uses)

Result = tuple[TxnSystemState, tuple[str, ...]] | None


def revoke_actions(system: Any, state: TxnSystemState) -> list[Action]:
    """A removal of every revocable binding still in place (the caller checks the budget)."""
    bindings = range(len(security_of(system).revocable))
    return [Action("RevokeAcl", (i,)) for i in bindings if _revocable(system, state, i)]


def _revocable(system: Any, s: TxnSystemState, i: Any) -> bool:
    """Whether binding ``i`` can be revoked now: a revocable binding still in place (one guard for actions()
    and the handler; a replayed trace may name any index)."""
    return type(i) is int and 0 <= i < len(security_of(system).revocable) and i not in s.security.revoked()


def revoke_acl(system: Any, s: TxnSystemState, i: Any) -> Result:
    """Remove ``revocable[i]`` from the ACLs every later request is authorized by."""
    sec = security_of(system)
    if not _revocable(system, s, i):  # no branch: replayed traces only
        return None
    offsets_end = -1 if s.group is None else len(s.group.offsets_log.log)
    revocation = Revocation(i, tuple(len(leader.log) for leader in s.partitions), offsets_end)
    s = s._replace(security=s.security._replace(revocations=(*s.security.revocations, revocation)))
    return s, ("operator:revoke_acl", f"acl_revoked:{sec.revocable[i].label()}")
