"""The security configuration of a scenario and the ghost history the security invariants read.

:class:`SecurityConfig` is scenario data (``[security]`` in a scenario's TOML,
parsed by :mod:`scenarios`): the ACL bindings, which principal each client
runs as, the super users (the brokers) and the adversary's identity.
:class:`SecurityGhost` sits in :class:`model.systems.transactions_records.TxnSystemState`
and records only what an *observer* needs and cannot read from the logs: the
coordinator changes caused by a principal the ACLs do not allow (or by the
adversary), the control batches the adversary's requests appended, which
applications abandoned their transaction, and which requests the gate refused.
It also holds the one piece of security *state* that changes during a run:
the bindings an operator has removed so far (``revocations``; the broker's
authorizer applies an ACL change to every request handled after it,
``StandardAuthorizer`` reading the metadata log's ``RemoveAccessControlEntryRecord``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from keos.model.codec import record
from keos.model.security.authorizer import (
    AclBinding,
    Operation,
    ResourceType,
    authorize,
    topic_name,
    transactional_id_name,
)

__all__ = [
    "BROKER_PRINCIPAL",
    "NONE",
    "ControlAppend",
    "Refusal",
    "Revocation",
    "SecurityConfig",
    "SecurityGhost",
    "TxnChange",
    "security_of",
]

#: The principal brokers (the transaction coordinator sending WriteTxnMarkers) run as.
BROKER_PRINCIPAL = "User:broker"


@dataclass(frozen=True)
class SecurityConfig:
    """Authorization settings of a scenario.

    Attributes:
        acls: the ACL bindings (allow and deny).
        principals: the principal of client ``i`` (missing entries: ``User:p<i>``).
        super_users: ``super.users`` (a scenario's default: the brokers, :data:`BROKER_PRINCIPAL`).
        adversary: the principal the adversary's own connections authenticate as.
        adversary_transactional_id: the transactional.id the adversary puts in
            its Produce requests (KafkaApis authorizes a transactional Produce by
            that field, not by the producer id in the batch).
        revocable: bindings of ``acls`` an operator may remove while the run goes
            on (``kafka-acls --remove``; the ``revoke_acl`` fault budget).
        expect_denied: principals the scenario states must be refused some request
            their transactions need -- an oracle written from Kafka's ACL semantics,
            independent of :func:`authorize`, for ``denied_principal_commits_nothing``.
        expect_granted: principals the scenario states every request of their
            clients is allowed (``granted_principal_never_refused``).
        expect_errors: the errors the scenario states its refusals carry -- those
            of the resource types it denies or revokes (``KafkaApis`` answers a
            refusal with the error of the resource whose check failed:
            TRANSACTIONAL_ID_, TOPIC_, GROUP_, CLUSTER_AUTHORIZATION_FAILED);
            ``refusals_carry_kafkas_error``.
        allow_everyone_if_no_acl_found: the broker's ``allow.everyone.if.no.acl.found`` (default false): a
            resource no binding names is open to everyone.
    """

    acls: tuple[AclBinding, ...] = ()
    principals: tuple[str, ...] = ()
    super_users: tuple[str, ...] = ()
    adversary: str = "User:mallory"
    adversary_transactional_id: str = "txn-mallory"
    revocable: tuple[AclBinding, ...] = ()
    expect_denied: tuple[str, ...] = ()
    expect_granted: tuple[str, ...] = ()
    expect_errors: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False

    def principal_of(self, client: int) -> str:
        """The principal client ``client`` authenticates as."""
        return self.principals[client] if client < len(self.principals) else f"User:p{client}"

    def allows(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        """``authorize`` with this configuration's ACLs and super users."""
        return authorize(
            self.acls, principal, operation, resource_type, name, self.super_users, self.allow_everyone_if_no_acl_found
        )

    def may_write_transactional_id(self, principal: str, t: int | str) -> bool:
        """Write on transactional id ``t`` (a model index or a name)."""
        name = transactional_id_name(t) if isinstance(t, int) else t
        return self.allows(principal, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, name)

    def may_write_topic(self, principal: str, partition: int) -> bool:
        """Write on the topic of data partition ``partition``."""
        return self.allows(principal, Operation.WRITE, ResourceType.TOPIC, topic_name(partition))

    def revoked(self, revoked: tuple[int, ...]) -> SecurityConfig:
        """This configuration with the bindings ``revocable[i]`` (``i`` in ``revoked``) removed."""
        if not revoked:
            return self
        gone = {self.revocable[i] for i in revoked}
        return replace(self, acls=tuple(b for b in self.acls if b not in gone))


#: The settings of a scenario without ``[security]``: no request of it is authorized (the gate runs only for a
#: scenario with ``[security]``, which every scenario with adversary or revocation budgets must have).
NONE = SecurityConfig()


def security_of(system: object) -> SecurityConfig:
    """A system's security settings (:data:`NONE` when its scenario has none)."""
    sec = getattr(system, "security", None)
    return sec if isinstance(sec, SecurityConfig) else NONE


@record
class TxnChange(NamedTuple):
    """A request of ``principal`` changed transactional id ``transactional_id``'s coordinator entry without Write on
    it by the ACLs in force."""

    principal: str
    transactional_id: int
    api: str
    before: str
    after: str


@record
class ControlAppend(NamedTuple):
    """A control batch the adversary's request (``api``: WriteTxnMarkers or Produce) appended."""

    principal: str
    api: str
    partition: int
    offset: int


@record
class Refusal(NamedTuple):
    """The gate refused a request of ``principal`` (``api``) with ``error``; ``revoked``: how many revocations were in
    force then (0: none; the first ``revoked`` of :attr:`SecurityGhost.revocations`), so an observer can judge the
    answer by the ACLs the broker decided by (``refusals_follow_kafkas_check_order``)."""

    principal: str
    api: str
    error: str
    revoked: int


@record
class Revocation(NamedTuple):
    """An operator removed ``SecurityConfig.revocable[binding]``; ``log_ends``: every data partition's log end then,
    ``offsets_end``: the consumer group's offsets log end (-1: no group)."""

    binding: int
    log_ends: tuple[int, ...]
    offsets_end: int = -1


@record
class SecurityGhost(NamedTuple):
    """Observer history for the security invariants (:mod:`invariants.security`), and the revocations so far.

    ``refusals`` is a set (sorted, no repeats): which principal was refused which request, not how often.
    """

    txn_changes: tuple[TxnChange, ...] = ()
    control_appends: tuple[ControlAppend, ...] = ()
    abandoned: tuple[int, ...] = ()
    adversary_records: int = 0
    refusals: tuple[Refusal, ...] = ()
    revocations: tuple[Revocation, ...] = ()

    def revoked(self) -> tuple[int, ...]:
        """The indices of the revocable bindings removed so far, in order."""
        return tuple(r.binding for r in self.revocations)
