"""Generated authorization scenarios: every ACL a transactional client needs, granted and denied in every way.

``KafkaApis`` (Kafka 4.0, ``core/src/main/scala/kafka/server/KafkaApis.scala`` at 1eb7644) authorizes each
transactional request against a few bindings (:mod:`keos.model.security.checks`): ``Write`` on the
``TransactionalId`` (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn, transactional
Produce), ``Write`` on the ``Topic`` (AddPartitionsToTxn, Produce) and ``Read`` on the ``Group``
(AddOffsetsToTxn, TxnOffsetCommit).  Hand-written scenarios grant those and deny one or two of them; which
denial reaches which handler is then luck.  This module *generates* the combinations instead (issue 23, "denials
as well as grants, ACL combinations generated, not hand-picked"): for each client shape that sends a different set
of requests --

* ``tv2``: a transactional producer on transaction.version 2 (KIP-890 part 2: no AddPartitionsToTxn, the
  partition is added by the Produce's verification);
* ``tv1``: the same on transaction.version 1 (``variant = "tv1"``: AddPartitionsToTxn before the Produce);
* ``eos``: a consume-transform-produce application (``model = "eos"``: AddOffsetsToTxn and TxnOffsetCommit too)

-- it takes the bindings the shape needs (:data:`REQUIRED`) and, for each one, every way an operator can grant or
take it (:data:`TRANSFORMS`): removed, overridden by a matching Deny, a Deny of ``All``, a Deny for ``User:*``, and
granted through the wildcard resource name, the wildcard principal or the ``All`` operation
(``StandardAuthorizerData``: Deny wins, ``All`` matches every operation, ``*`` every name and ``User:*`` every
principal).  The scenario expects what Kafka promises whatever the ACLs: a denied request changes nothing, an
honest client fails only as Kafka's ``TransactionManager`` says (fatal for TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
abortable for TOPIC_ and GROUP_AUTHORIZATION_FAILED), every transaction that began ends, and the properties of the
shape (:mod:`keos.invariants.transactions`, :mod:`keos.invariants.eos_processing`, :mod:`keos.invariants.security`)
hold.

The scenarios belong to the named set ``reach`` (``keos check --set reach``); the few in :data:`DEFAULT` also join
the default gate.  :func:`matrix_documents` returns the TOML-shaped documents; :mod:`keos.scenarios` loads them
next to the ``*.toml`` files (source ``scenarios/authz_matrix.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT",
    "GRANTS",
    "GRANTS_ONLY",
    "PRINCIPAL",
    "REQUIRED",
    "SHAPES",
    "SUPER_USER",
    "TRANSFORMS",
    "matrix_documents",
    "transform_binding",
]

PRINCIPAL = "User:alice"
#: The second client (p1, transactional.id txn-1) runs as a super user: no binding is needed or can deny it, so its
#: transactions exercise every property of the shape while alice's requests are granted or denied.
SUPER_USER = "User:bob"

#: The bindings each shape's requests are authorized against (principal, operation, resource).
REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "tv2": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0")),
    "tv1": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0")),
    "eos": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0"), ("Read", "Group:g0")),
}

#: The scenario document of each shape, without ``name`` and ``[security]``.
SHAPES: dict[str, dict[str, Any]] = {
    "tv2": {
        "model": "transactions",
        "transactions": {"producers": 2, "partitions": 1, "transactions_per_producer": 1,
                         "records_per_transaction": 1, "retries": 1, "voluntary_abort": True},
        "faults": {"append_failure": 1, "total": 1},  # a transaction-log append may fail once (retried)
    },
    "tv1": {
        "model": "transactions",
        "variant": "tv1",
        "transactions": {"producers": 2, "partitions": 1, "transactions_per_producer": 1,
                         "records_per_transaction": 1, "retries": 1, "voluntary_abort": True},
        "faults": {"append_failure": 1, "total": 1},
    },
    "eos": {
        "model": "eos",
        "transactions": {"producers": 2, "partitions": 1, "transactions_per_producer": 1,
                         "records_per_transaction": 1, "retries": 1, "voluntary_abort": True},
        "eos": {"input_records": 1},
        "faults": {"rebalance": 1, "total": 1},  # the input partition may move to the other instance
    },
}

#: How one required binding is given or taken: name → what the ``allow`` / ``deny`` lists get instead of it.
TRANSFORMS: tuple[str, ...] = (
    "granted",  # the binding itself (the all-granted baseline)
    "missing",  # no binding: nothing matches, denied
    "denied",  # the Allow plus a matching Deny: Deny wins
    "denied_all",  # the Allow plus a Deny of operation All on the resource
    "denied_everyone",  # the Allow plus a Deny for User:* on the resource
    "wildcard_resource",  # Allow on Type:* instead of the literal name
    "wildcard_principal",  # Allow for User:* instead of the principal
    "all_operation",  # Allow of operation All instead of the operation
)


#: Transforms that grant (the others deny).
GRANTS: tuple[str, ...] = ("granted", "wildcard_resource", "wildcard_principal", "all_operation")

#: Shapes generated with grants only.  In the consume-transform-produce shape a denied instance never processes
#: a record, so the zombie and rebalance partners of ``exactly_once_processing`` / ``offsets_committed_with_outputs``
#: (``zombie_offset_commit_rejected``, ``offsets_discarded``) cannot fire and ``--strict`` would fail the set; its
#: denials are those of tv1/tv2 (the same ``KafkaApis`` checks) -- the Group Read denial of AddOffsetsToTxn /
#: TxnOffsetCommit is left to a scenario with a third instance (not generated: its state space is too large).
GRANTS_ONLY: frozenset[str] = frozenset({"eos"})


#: Generated scenarios that also join the default gate (each under a second of CPU): a Deny overriding the Allow of
#: the topic under TV1 (AddPartitionsToTxn's TOPIC_AUTHORIZATION_FAILED, abortable), a Deny of ``All`` on the
#: transactional.id (InitProducerId's TRANSACTIONAL_ID_AUTHORIZATION_FAILED, fatal) and a wildcard topic grant.
DEFAULT: frozenset[str] = frozenset({
    "authz_matrix_tv1_write_topic_denied",
    "authz_matrix_tv1_write_transactionalid_denied_all",
    "authz_matrix_tv2_write_topic_wildcard_resource",
})


def transform_binding(operation: str, resource: str, transform: str) -> tuple[list[str], list[str]]:
    """(allow, deny) binding texts that replace ``PRINCIPAL operation resource`` under ``transform``."""
    rtype = resource.split(":", 1)[0]
    own = f"{PRINCIPAL} {operation} {resource}"
    if transform == "granted":
        return [own], []
    if transform == "missing":
        return [], []
    if transform == "denied":
        return [own], [own]
    if transform == "denied_all":
        return [own], [f"{PRINCIPAL} All {resource}"]
    if transform == "denied_everyone":
        return [own], [f"User:* {operation} {resource}"]
    if transform == "wildcard_resource":
        return [f"{PRINCIPAL} {operation} {rtype}:*"], []
    if transform == "wildcard_principal":
        return [f"User:* {operation} {resource}"], []
    if transform == "all_operation":
        return [f"{PRINCIPAL} All {resource}"], []
    raise ValueError(f"unknown ACL transform {transform!r}")


def matrix_documents() -> list[dict[str, Any]]:
    """One scenario document per (shape, required binding, transform); ``granted`` once per shape."""
    out: list[dict[str, Any]] = []
    for shape, required in REQUIRED.items():
        for index, (operation, resource) in enumerate(required):
            for transform in TRANSFORMS:
                if transform == "granted" and index > 0:
                    continue  # the all-granted baseline is the same for every binding
                if shape in GRANTS_ONLY and transform not in GRANTS:
                    continue
                allow: list[str] = []
                deny: list[str] = []
                for j, (op, res) in enumerate(required):
                    a, d = transform_binding(op, res, transform if j == index else "granted")
                    allow += a
                    deny += d
                target = "all" if transform == "granted" else f"{operation.lower()}_{resource.split(':')[0].lower()}"
                name = f"authz_matrix_{shape}_{target}_{transform}"
                doc: dict[str, Any] = {
                    "name": name,
                    "description": (
                        f"Generated (scenarios/authz_matrix.py): a {shape} client whose {operation} on {resource} is "
                        f"{transform.replace('_', ' ')}; the other bindings it needs are granted. Bob (p1, a super "
                        "user) runs the same transaction next to her."
                    ),
                    **SHAPES[shape],
                    "default": name in DEFAULT,
                    "sets": ["reach"],
                    "security": {"principals": [PRINCIPAL, SUPER_USER], "super_users": ["User:broker", SUPER_USER],
                                 "allow": allow, "deny": deny},
                }
                out.append(doc)
    return out
