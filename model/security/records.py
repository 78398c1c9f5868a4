"""The security configuration of a scenario and the ghost history the security invariants read.

:class:`SecurityConfig` is scenario data (``[security]`` in a scenario's TOML,
parsed by :mod:`scenarios`): the ACL bindings, which principal each client
runs as, the super users (the brokers) and the adversary's identity.
:class:`SecurityGhost` sits in :class:`model.systems.transactions_records.TxnSystemState`
and records only what an *observer* needs and cannot read from the logs: the
coordinator changes caused by a principal the ACLs do not allow (or by the
adversary), the control batches the adversary's requests appended, and which
applications abandoned their transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
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

__all__ = ["BROKER_PRINCIPAL", "OPEN", "ControlAppend", "SecurityConfig", "SecurityGhost", "TxnChange", "security_of"]

#: The principal brokers (the transaction coordinator sending WriteTxnMarkers) run as.
BROKER_PRINCIPAL = "User:broker"


@dataclass(frozen=True)
class SecurityConfig:
    """Authorization settings of a scenario.

    Attributes:
        acls: the ACL bindings (allow and deny).
        principals: the principal of client ``i`` (missing entries: ``User:p<i>``).
        super_users: ``super.users``; the brokers by default.
        adversary: the principal the adversary's own connections authenticate as.
        adversary_transactional_id: the transactional.id the adversary puts in
            its Produce requests (KafkaApis authorizes a transactional Produce by
            that field, not by the producer id in the batch).
    """

    acls: tuple[AclBinding, ...] = ()
    principals: tuple[str, ...] = ()
    super_users: tuple[str, ...] = (BROKER_PRINCIPAL,)
    adversary: str = "User:mallory"
    adversary_transactional_id: str = "txn-mallory"

    def principal_of(self, client: int) -> str:
        """The principal client ``client`` authenticates as."""
        return self.principals[client] if client < len(self.principals) else f"User:p{client}"

    def allows(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        """``authorize`` with this configuration's ACLs and super users."""
        return authorize(self.acls, principal, operation, resource_type, name, self.super_users)

    def may_write_transactional_id(self, principal: str, t: int | str) -> bool:
        """Write on transactional id ``t`` (a model index or a name)."""
        name = transactional_id_name(t) if isinstance(t, int) else t
        return self.allows(principal, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, name)

    def may_write_topic(self, principal: str, partition: int) -> bool:
        """Write on the topic of data partition ``partition``."""
        return self.allows(principal, Operation.WRITE, ResourceType.TOPIC, topic_name(partition))


#: A cluster without an authorizer: every principal may do everything (no ``[security]`` section).
OPEN = SecurityConfig(
    acls=(
        AclBinding("User:*", Operation.ALL, ResourceType.TRANSACTIONAL_ID, "*"),
        AclBinding("User:*", Operation.ALL, ResourceType.TOPIC, "*"),
        AclBinding("User:*", Operation.ALL, ResourceType.GROUP, "*"),
        AclBinding("User:*", Operation.ALL, ResourceType.CLUSTER, "*"),
    )
)


def security_of(system: object) -> SecurityConfig:
    """A system's security settings, :data:`OPEN` when its scenario has none."""
    sec = getattr(system, "security", None)
    return sec if isinstance(sec, SecurityConfig) else OPEN


@record
class TxnChange(NamedTuple):
    """A request of ``principal`` changed transactional id ``transactional_id``'s coordinator entry."""

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
class SecurityGhost(NamedTuple):
    """Observer history for the security invariants (:mod:`invariants.security`)."""

    txn_changes: tuple[TxnChange, ...] = ()
    control_appends: tuple[ControlAppend, ...] = ()
    abandoned: tuple[int, ...] = ()
    adversary_records: int = 0
