"""Principals, ACLs as data, and ``authorize`` -- Kafka's ``StandardAuthorizer`` semantics, reduced.

KIP-98 §9 adds a ``TransactionalId`` resource type: every request that
changes a producer's transaction state (InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, TxnOffsetCommit, transactional Produce) needs
``Write`` on the request's transactional.id.  Other resources used by the
transaction APIs: ``Topic`` (Write to produce or add a partition), ``Group``
(Read to add or commit offsets) and the ``Cluster`` (``ClusterAction`` for
the inter-broker WriteTxnMarkers; ``IdempotentWrite`` for an idempotent
producer's InitProducerId).

Semantics followed (Kafka 4.0, ``org.apache.kafka.metadata.authorizer.
StandardAuthorizerData`` and ``AclAuthorizer`` before it):

* a *super user* (``super.users``) is allowed everything;
* a matching DENY binding wins over any ALLOW;
* ``All`` matches every operation; an ALLOW of ``Read``, ``Write``,
  ``Delete`` or ``Alter`` implies ``Describe``;
* a binding matches a resource by its literal name or the wildcard ``*``,
  and a principal by its name or ``User:*``;
* nothing matches -> denied (``allow.everyone.if.no.acl.found=false``).

Names used by the models: client ``i`` runs as ``User:p<i>`` unless the
scenario names its principal; transactional id ``t`` is ``txn-<t>``; data
partition ``q`` is partition 0 of topic ``t<q>``; consumer group ``g`` is
``g<g>``; the cluster is ``kafka-cluster`` (Kafka's ``CLUSTER_NAME``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from keos.model.codec import record

__all__ = [
    "CLUSTER_NAME",
    "OPERATIONS",
    "RESOURCE_TYPES",
    "AclBinding",
    "Operation",
    "ResourceType",
    "authorize",
    "group_name",
    "parse_binding",
    "topic_name",
    "transactional_id_name",
]

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
ALLOW = "Allow"
DENY = "Deny"


class Operation:
    """``AclOperation`` names used by the transaction APIs."""

    ALL = "All"
    READ = "Read"
    WRITE = "Write"
    DESCRIBE = "Describe"
    DELETE = "Delete"
    ALTER = "Alter"
    CLUSTER_ACTION = "ClusterAction"
    IDEMPOTENT_WRITE = "IdempotentWrite"


class ResourceType:
    """``ResourceType`` names used by the transaction APIs."""

    TRANSACTIONAL_ID = "TransactionalId"
    TOPIC = "Topic"
    GROUP = "Group"
    CLUSTER = "Cluster"


OPERATIONS = (
    Operation.ALL,
    Operation.READ,
    Operation.WRITE,
    Operation.DESCRIBE,
    Operation.DELETE,
    Operation.ALTER,
    Operation.CLUSTER_ACTION,
    Operation.IDEMPOTENT_WRITE,
)
RESOURCE_TYPES = (ResourceType.TRANSACTIONAL_ID, ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER)
#: An ALLOW of one of these implies Describe (``AclEntry`` / ``StandardAuthorizerData``).
IMPLIES_DESCRIBE = (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER)


@record
class AclBinding(NamedTuple):
    """One ACL: ``permission`` (Allow/Deny) of ``operation`` on ``resource_type:name`` for ``principal``."""

    principal: str
    operation: str
    resource_type: str
    name: str
    permission: str = ALLOW

    def label(self) -> str:
        """``User:alice Write TransactionalId:txn-0`` (with ``Deny`` in front for a deny)."""
        text = f"{self.principal} {self.operation} {self.resource_type}:{self.name}"
        return f"Deny {text}" if self.permission == DENY else text


def transactional_id_name(t: int) -> str:
    """The transactional.id of the model's transactional id ``t``."""
    return f"txn-{t}"


def topic_name(q: int) -> str:
    """The topic of the model's data partition ``q`` (one partition per topic)."""
    return f"t{q}"


def group_name(g: int) -> str:
    """The consumer group ``g``."""
    return f"g{g}"


def _matches(binding: AclBinding, principal: str, resource_type: str, name: str) -> bool:
    return (
        binding.principal in (principal, "User:*")
        and binding.resource_type == resource_type
        and binding.name in (name, WILDCARD)
    )


def authorize(
    acls: Iterable[AclBinding],
    principal: str,
    operation: str,
    resource_type: str,
    name: str,
    super_users: Iterable[str] = (),
) -> bool:
    """Whether ``principal`` may perform ``operation`` on ``resource_type:name``."""
    if principal in tuple(super_users):
        return True
    allowed = False
    for b in acls:
        if not _matches(b, principal, resource_type, name):
            continue
        if b.permission == DENY and b.operation in (operation, Operation.ALL):
            return False
        if b.permission == ALLOW and (
            b.operation in (operation, Operation.ALL)
            or (operation == Operation.DESCRIBE and b.operation in IMPLIES_DESCRIBE)
        ):
            allowed = True
    return allowed


def parse_binding(text: str, permission: str = ALLOW) -> AclBinding:
    """Parse ``"User:alice Write TransactionalId:txn-0"``; raises ``ValueError`` with the reason."""
    parts = text.split()
    if len(parts) != 3:
        raise ValueError(f"ACL {text!r} must read 'User:<name> <Operation> <ResourceType>:<name>'")
    principal, operation, resource = parts
    if not principal.startswith("User:") or len(principal) <= len("User:"):
        raise ValueError(f"ACL {text!r}: principal must be 'User:<name>', got {principal!r}")
    if operation not in OPERATIONS:
        raise ValueError(f"ACL {text!r}: unknown operation {operation!r} (known: {', '.join(OPERATIONS)})")
    rtype, sep, name = resource.partition(":")
    if rtype not in RESOURCE_TYPES:
        raise ValueError(f"ACL {text!r}: unknown resource type {rtype!r} (known: {', '.join(RESOURCE_TYPES)})")
    if rtype == ResourceType.CLUSTER and not sep:
        name = CLUSTER_NAME
    elif not sep or not name:
        raise ValueError(f"ACL {text!r}: resource must be '{rtype}:<name>' (or '{rtype}:*')")
    return AclBinding(principal, operation, rtype, name, permission)
