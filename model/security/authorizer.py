"""Principals, ACLs as data, and ``authorize`` -- Kafka's ``StandardAuthorizer`` semantics, reduced.

KIP-98 §9 adds a ``TransactionalId`` resource type: every request that
changes a producer's transaction state (InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, TxnOffsetCommit, transactional Produce) needs
``Write`` on the request's transactional.id.  Other resources used by the
transaction APIs: ``Topic`` (Write to produce or add a partition), ``Group``
(Read to add or commit offsets) and the ``Cluster`` (``ClusterAction`` or
``Alter`` for the inter-broker WriteTxnMarkers).

Semantics followed (Kafka 4.0, ``metadata/src/main/java/org/apache/kafka/
metadata/authorizer/StandardAuthorizerData.java`` at apache/kafka 1eb7644:
``authorize``, ``findAclRule``, ``checkSection``, ``findResult``):

* a *super user* (``super.users``) is allowed everything, whatever the DENY
  bindings say (``SuperUserRule`` is decided before any ACL is looked at);
* a matching DENY binding wins over any ALLOW;
* ``All`` matches every operation, in an ALLOW and in a DENY;
* a binding matches a resource by its pattern: a ``LITERAL`` pattern by the
  exact name or the wildcard name ``*``; a ``PREFIXED`` pattern when the
  name starts with it (``*`` is no wildcard in a prefixed pattern, and a
  literal name that is a prefix of the resource's matches nothing);
* a binding matches a principal by its name or ``User:*``;
* nothing matches -> denied, unless ``allow.everyone.if.no.acl.found=true`` and the resource has no binding at all:
  ``MatchingRuleBuilder.build`` answers the configured default (``noAclRule``) only when no binding of the
  resource's type has a pattern matching its name (``hasResourceAcls`` false: whatever principal, operation or
  permission the bindings name); a resource with a binding for someone else denies everyone it does not allow
  (KAFKA-14435, Kafka 3.4: before, the default answered whenever no binding matched the request's principal and
  operation, so a principal without bindings was allowed on a resource other principals' ACLs protect).

Not modelled: the host of a binding (every binding here is for host ``*``,
which ``findResult`` matches from any address) and the ``Describe``
implication of an ALLOW of Read/Write/Delete/Alter (no modelled request asks
for Describe: the transactional producer's FindCoordinator round trip, whose
TransactionalId Describe check would, is not a step of the model; issue 23
removed that unreached branch).

Names used by the models: client ``i`` runs as ``User:p<i>`` unless the
scenario names its principal; transactional id ``t`` is ``txn-<t>``; data
partition ``q`` is partition 0 of topic ``t<q>``; consumer group ``g`` is
``g<g>``; the cluster is ``kafka-cluster`` (Kafka's ``CLUSTER_NAME``).
The text form of a binding (``scenarios.security_schema.parse_binding``):
``User:alice Write TransactionalId:txn-0`` (literal) and ``User:alice Write
TransactionalId:txn- prefixed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from keos.model.codec import record

__all__ = [
    "ALLOW",
    "CLUSTER_NAME",
    "DENY",
    "LITERAL",
    "OPERATIONS",
    "PATTERN_TYPES",
    "PREFIXED",
    "RESOURCE_TYPES",
    "WILDCARD",
    "AclBinding",
    "Operation",
    "ResourceType",
    "authorize",
    "group_name",
    "topic_name",
    "transactional_id_name",
]

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
ALLOW = "Allow"
DENY = "Deny"
#: ``PatternType``: a literal name (or the wildcard ``*``), or a prefix of names.
LITERAL = "Literal"
PREFIXED = "Prefixed"
PATTERN_TYPES = (LITERAL, PREFIXED)


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


@record
class AclBinding(NamedTuple):
    """One ACL: ``permission`` (Allow/Deny) of ``operation`` on ``resource_type:name`` for ``principal``;
    ``pattern``: :data:`LITERAL` (``name`` or the wildcard ``*``) or :data:`PREFIXED` (names starting so)."""

    principal: str
    operation: str
    resource_type: str
    name: str
    permission: str = ALLOW
    pattern: str = LITERAL

    def label(self) -> str:
        """``User:alice Write TransactionalId:txn-0`` (``Deny`` in front for a deny, `` prefixed`` after)."""
        text = f"{self.principal} {self.operation} {self.resource_type}:{self.name}"
        text = f"{text} prefixed" if self.pattern == PREFIXED else text
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
    if binding.principal not in (principal, "User:*") or binding.resource_type != resource_type:
        return False
    if binding.pattern == PREFIXED:
        return name.startswith(binding.name)
    return binding.name in (name, WILDCARD)


def authorize(
    acls: Iterable[AclBinding],
    principal: str,
    operation: str,
    resource_type: str,
    name: str,
    super_users: Iterable[str] = (),
    allow_if_no_acl: bool = False,
) -> bool:
    """Whether ``principal`` may perform ``operation`` on ``resource_type:name``; ``allow_if_no_acl``:
    ``allow.everyone.if.no.acl.found``."""
    if principal in tuple(super_users):
        return True
    allowed = False
    for b in acls:
        if b.operation not in (operation, Operation.ALL) or not _matches(b, principal, resource_type, name):
            continue
        if b.permission == DENY:
            return False
        allowed = True
    if allowed or not allow_if_no_acl:
        return allowed
    return not any(_matches(b, b.principal, resource_type, name) for b in acls)  # no binding protects the resource
