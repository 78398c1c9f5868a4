"""Generated authorization scenarios: every ACL a transactional client needs, granted, denied and revoked.

``KafkaApis`` (Kafka 4.0, ``core/src/main/scala/kafka/server/KafkaApis.scala`` at apache/kafka 1eb7644)
authorizes each transactional request against a few bindings (:mod:`keos.model.security.checks`): ``Write`` on
the ``TransactionalId`` (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
transactional Produce), ``Write`` on the ``Topic`` (AddPartitionsToTxn, Produce) and ``Read`` on the ``Group``
(AddOffsetsToTxn, TxnOffsetCommit).  Hand-written scenarios grant those and deny one or two of them; which
denial reaches which handler, and which rule of the authorizer decides it, is then luck.  This module
*generates* the combinations instead (issue 23, "denials as well as grants, ACL combinations generated, not
hand-picked"), along two axes:

* **Which request is refused** (:data:`SHAPES` x :data:`REQUIRED` x ``missing`` / ``revoked``).  For each client
  shape that sends a different set of requests --

  - ``tv2``: a transactional producer on transaction.version 2 (KIP-890 part 2: no AddPartitionsToTxn, the
    partition is added by the Produce's verification);
  - ``tv1``: the same on transaction.version 1 (``variant = "tv1"``: AddPartitionsToTxn before the Produce);
  - ``tv1two``: the same writing to two topics, one of them unauthorized (one AddPartitionsToTxn may name both:
    Kafka refuses it as a whole);
  - ``eos``: a consume-transform-produce application on transaction.version 2 (TxnOffsetCommit adds the
    offsets partition itself);
  - ``eostv1``: the same on transaction.version 1 (AddOffsetsToTxn, then TxnOffsetCommit);
  - ``markers``: an adversary who forges a COMMIT/ABORT marker for alice's transaction (WriteTxnMarkers: Alter
    or ClusterAction on the cluster) -- refused, or, allowed to a cluster administrator, appended: alice's
    transaction is then ended at the partition behind her back (``atomic_commit`` and
    ``committed_transactions_visible`` are the permitted findings); each forged WriteTxnMarkers carries the
    epochs the leader accepts or one below each bound it checks (:data:`model.security.adversary.MARKER_OFFSETS`),
    so the leader's answer to a stale producer epoch and a deposed coordinator's epoch is judged too;
  - ``markerstv1``: the granted marker forger on transaction.version 1 (a marker at the stored epoch is accepted
    there), with a timeout abort's epoch fence and a coordinator failover, so both epochs have a value to fall
    below (about 13,000 states, 4-5 CPU-s)

  -- each binding the shape needs is removed (the first request that needs it is refused) or *revoked*: granted
  at the start and removed by an operator at any point of the run (``[security] revocable``, fault
  ``revoke_acl``), so every later request that needs it is refused too -- AddPartitionsToTxn, EndTxn, Produce,
  AddOffsetsToTxn and TxnOffsetCommit refused for their TransactionalId, TxnOffsetCommit refused for its Group
  after AddOffsetsToTxn was allowed, mid-transaction.
* **Two bindings at once** (:data:`PAIR_CELLS`): the TransactionalId and the topic (group) binding both revocable,
  so a request is refused with one check failing and with both -- which check a handler makes first decides the
  error (``refusals_follow_kafkas_check_order``, in :mod:`invariants.security`).
* **Which rule of the authorizer decides** (:data:`TRANSFORMS`, on the ``tv2`` shape's TransactionalId Write,
  which every request of a transaction needs): each way an operator can grant or take a binding in Kafka's
  ACL semantics (``StandardAuthorizerData``, Kafka 4.0) -- removed; overridden by a matching Deny (of the
  operation, of ``All``, for ``User:*``, on the wildcard name, by a prefix); granted through the wildcard name,
  ``User:*``, ``All``, a prefix; *not* granted by a binding of another name, operation, principal or resource
  type, by a literal name that is only a prefix, or by a longer prefix; *not* denied by a Deny of another
  operation, principal or name or by a prefix that does not match; and a super user whom a Deny cannot stop.

Each scenario states its expected verdict *independently of the authorizer under test*, from the transform's
documented meaning: ``expect_denied`` (the principal must be refused and never commits,
``denied_principal_commits_nothing``) or ``expect_granted`` (it is never refused,
``granted_principal_never_refused``).  Bob (client p1, a super user) runs the same transaction beside a denied
Alice, so every property of the shape stays exercised; a granted Alice runs alone (the cheapest run that
still commits and aborts).  Every scenario also expects what Kafka promises whatever the ACLs: a denied request
changes nothing, an honest client fails only as Kafka's ``TransactionManager`` says (fatal for
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, abortable for TOPIC_ and GROUP_AUTHORIZATION_FAILED), every transaction
that began ends, and the properties of the shape hold.

The scenarios belong to the named set ``reach`` (``keos check --set reach``); all but those in
:data:`REACH_ONLY` also join the default gate (0.03-0.4 CPU-s each, one of 2.3 CPU-s; the four pair cells
0.1-1.2 s wall; about 7 CPU-s together).
:func:`matrix_documents` returns the TOML-shaped documents; :mod:`keos.scenarios` loads them next to the
``*.toml`` files (source ``scenarios/authz_matrix.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ADVERSARY",
    "GRANTS",
    "PAIR_CELLS",
    "PRINCIPAL",
    "REACH_ONLY",
    "REQUEST_CELLS",
    "REQUIRED",
    "RULE_TRANSFORMS",
    "SHAPES",
    "SUPER_USER",
    "TRANSFORMS",
    "matrix_documents",
    "transform_binding",
]

PRINCIPAL = "User:alice"
#: The second client ("bob": p1, transactional.id txn-1) runs as a super user: no binding is needed or can deny it,
#: so its transactions exercise every property of the shape while alice's requests are granted or denied.  The
#: scenario names no principal for it: it runs as the default ``User:p1``.
SUPER_USER = "User:p1"
#: A principal no client runs as (the "another principal" transforms).
OTHER_PRINCIPAL = "User:carol"

#: The bindings each shape's requests are authorized against (operation, resource).
REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "tv2": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0")),
    "tv1": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0")),
    # a transaction.version 1 producer writing to two topics: one AddPartitionsToTxn may name both
    "tv1two": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0"), ("Write", "Topic:t1")),
    "eos": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0"), ("Read", "Group:g0")),
    "eostv1": (("Write", "TransactionalId:txn-0"), ("Write", "Topic:t0"), ("Read", "Group:g0")),
    # the adversary's: ClusterAction (or Alter) on the cluster for WriteTxnMarkers
    "markers": (("ClusterAction", "Cluster:kafka-cluster"),),
    "markerstv1": (("ClusterAction", "Cluster:kafka-cluster"),),
    # the adversary's: Write on alice's TransactionalId, for InitProducerId and EndTxn
    "stranger": (("Write", "TransactionalId:txn-0"),),
}

#: The adversary of the ``markers`` shape (its WriteTxnMarkers is the request under test).
ADVERSARY = "User:mallory"

_TXN = {"partitions": 1, "transactions_per_producer": 1, "records_per_transaction": 1, "retries": 1,
        "voluntary_abort": True}
#: One instance; a rebalance may bump the generation under it (its own zombie: ILLEGAL_GENERATION), and it runs
#: a second transaction after an abort.
_EOS = {"model": "eos", "eos": {"input_records": 1}, "transactions": {**_TXN, "transactions_per_producer": 2},
        "faults": {"rebalance": 1, "total": 1}}

#: The scenario document of each shape, without ``name``, ``producers`` and ``[security]``.
SHAPES: dict[str, dict[str, Any]] = {
    "tv2": {"model": "transactions", "transactions": _TXN, "faults": {"total": 0}},
    "tv1": {"model": "transactions", "variant": "tv1", "transactions": _TXN, "faults": {"total": 0}},
    # one record to each of two topics: the two partitions may be added by one AddPartitionsToTxn, which Kafka
    # refuses as a whole when any of its topics is not authorized (handleAddPartitionsToTxnRequest, versions < 4)
    "tv1two": {"model": "transactions", "variant": "tv1", "faults": {"total": 0},
               "transactions": {**_TXN, "partitions": 2, "records_per_transaction": 2,
                                "voluntary_abort": False}},
    "eos": dict(_EOS),
    "eostv1": {**_EOS, "variant": "tv1"},
    # alice's transaction and an adversary who forges a COMMIT/ABORT marker for it once, as WriteTxnMarkers (or as
    # a control batch in a Produce, which the log refuses whatever the ACLs); an adversary allowed WriteTxnMarkers
    # -- a cluster administrator -- commits or aborts alice's transaction at the partition: the permitted findings
    "markers": {"model": "transactions", "transactions": _TXN, "faults": {"forge_marker": 1, "total": 1},
                "adversary": ADVERSARY},
    # the same on transaction.version 1, where the partition accepts a marker at the stored producer epoch: the
    # forger's markers carry each epoch the leader checks at and one below its bound (model.security.adversary
    # MARKER_OFFSETS), so the TV1 rows of the leader's marker answer table meet hostile input too; a timeout abort
    # (its epoch fence) and a coordinator failover give both epochs a value to fall below
    "markerstv1": {"model": "transactions", "variant": "tv1", "transactions": _TXN,
                   "faults": {"forge_marker": 1, "txn_timeout": 1, "coordinator_failover": 1, "total": 3},
                   "adversary": ADVERSARY},
    # alice's transaction and an adversary who calls InitProducerId on, or replays an EndTxn of, her transactional
    # id once; granted Write on it (a wildcard), the adversary is no stranger: its InitProducerId fences alice --
    # zombie fencing, as KIP-98 §9 intends for whoever holds the ACL (the permitted finding)
    "stranger": {"model": "transactions", "transactions": _TXN,
                 "faults": {"forge_request": 1, "hijack_init": 1, "total": 1}, "adversary": ADVERSARY},
}

#: How one required binding is given or taken; each grants (``G``) or denies (``D``) in Kafka's semantics.
TRANSFORMS: dict[str, str] = {
    "granted": "G",  # the binding itself (the all-granted baseline)
    "missing": "D",  # no binding: nothing matches, denied
    "revoked": "",  # granted, and an operator may remove it at any point of the run (fault revoke_acl)
    "denied": "D",  # the Allow plus a matching Deny: Deny wins
    "denied_all": "D",  # the Allow plus a Deny of operation All on the resource
    "denied_everyone": "D",  # the Allow plus a Deny for User:* on the resource
    "denied_wildcard": "D",  # the Allow plus a Deny on Type:* (the wildcard name)
    "denied_prefixed": "D",  # the Allow plus a prefixed Deny whose prefix the name starts with
    "wildcard_resource": "G",  # Allow on Type:* instead of the literal name
    "wildcard_principal": "G",  # Allow for User:* instead of the principal
    "all_operation": "G",  # Allow of operation All instead of the operation
    "prefixed": "G",  # Allow on a prefix of the name (pattern type prefixed)
    "prefixed_whole_name": "G",  # Allow on the whole name as a prefix
    "literal_prefix": "D",  # Allow on a prefix of the name as a literal name: matches nothing else
    "prefixed_longer": "D",  # Allow on a prefix longer than the name: the name does not start with it
    "other_name": "D",  # Allow on another literal name of the same type
    "other_operation": "D",  # Allow of Describe, which implies no Write or Read
    "other_principal": "D",  # Allow for another principal
    "other_type": "D",  # Allow on the same name of another resource type
    "deny_other_operation": "G",  # the Allow plus a Deny of Describe: no other operation is denied
    "deny_other_principal": "G",  # the Allow plus a Deny for another principal
    "deny_other_name": "G",  # the Allow plus a Deny on another literal name
    "deny_prefixed_longer": "G",  # the Allow plus a prefixed Deny the name does not start with
    "super_user_denied": "G",  # no Allow, a Deny of All, and the principal is a super user: allowed
    "alter_instead": "G",  # (markers only) Allow of Alter on the cluster: WriteTxnMarkers takes Alter or ClusterAction
}

#: Transforms that grant (the others deny, but ``revoked``, which grants until the operator acts).
GRANTS: tuple[str, ...] = tuple(t for t, verdict in TRANSFORMS.items() if verdict == "G")

#: Which request is refused: per shape, (index into REQUIRED, transform) cells.  The producer shapes take every
#: binding missing and revoked.  The consume-transform-produce shapes take only what the producers cannot reach --
#: AddOffsetsToTxn and TxnOffsetCommit refused for their Group and for their TransactionalId, revoked before
#: either or between the two (a revocation at the start is the missing binding) -- since a consume-transform-produce
#: run costs ten times a producer's, and its InitProducerId and Produce are the producer shapes' requests.
REQUEST_CELLS: dict[str, tuple[tuple[int, str], ...]] = {
    "tv2": ((0, "granted"), (0, "missing"), (0, "revoked"), (1, "missing"), (1, "revoked")),
    "tv1": ((0, "granted"), (0, "missing"), (0, "revoked"), (1, "missing"), (1, "revoked")),
    "tv1two": ((2, "missing"),),
    "eos": ((2, "revoked"), (0, "revoked")),
    "eostv1": ((2, "revoked"), (0, "revoked")),
    "markers": tuple((0, t) for t in ("granted", "alter_instead", "all_operation", "missing", "denied",
                                      "other_operation")),
    "markerstv1": ((0, "granted"),),
    "stranger": ((0, "wildcard_resource"),),
}
#: Two bindings taken at once (the third axis): per shape, pairs of bindings both *revoked* (granted at the start, each
#: removed by an operator at any point of the run).  A handler's checks run in an order (``KafkaApis``: the
#: TransactionalId before the topics of a Produce or AddPartitionsToTxn, before the group of an AddOffsetsToTxn or
#: TxnOffsetCommit), and which check comes first decides the error -- fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED
#: or abortable TOPIC_/GROUP_AUTHORIZATION_FAILED -- only when two of them fail at once
#: (``refusals_follow_kafkas_check_order``).  Revoked rather than missing, so the client initialises and reaches every
#: later request whichever bindings are gone, and runs alone (the runs where the operator waits commit).  The pairs
#: are those two checks of one handler meet on: the TransactionalId with the topic (Produce; AddPartitionsToTxn on
#: TV1) and with the group (AddOffsetsToTxn, TxnOffsetCommit).
PAIR_CELLS: dict[str, tuple[tuple[int, int], ...]] = {
    "tv2": ((0, 1),),
    "tv1": ((0, 1),),
    "eos": ((0, 2),),
    "eostv1": ((0, 2),),
}

#: The shape and binding the authorizer's rules are generated on (every request of a transaction needs it), and
#: the rules: every transform but the baseline, the revocation and the WriteTxnMarkers-only Alter.
RULES_SHAPE, RULES_BINDING = "tv2", ("Write", "TransactionalId:txn-0")
RULE_TRANSFORMS: tuple[str, ...] = tuple(t for t in TRANSFORMS if t not in ("granted", "revoked", "alter_instead"))

#: The error KafkaApis answers when a check on a resource of each type fails (the cells' ``expect_errors``).
ERROR_OF_TYPE = {
    "TransactionalId": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    "Topic": "TOPIC_AUTHORIZATION_FAILED",
    "Group": "GROUP_AUTHORIZATION_FAILED",
    "Cluster": "CLUSTER_AUTHORIZATION_FAILED",
}

#: The other resource type of each type (the ``other_type`` transform).
_OTHER_TYPE = {"TransactionalId": "Topic", "Topic": "Group", "Group": "TransactionalId", "Cluster": "Topic"}

#: Generated scenarios that do not join the default gate: one of the two transaction.version 1
#: consume-transform-produce runs (about 2 CPU-s each; the others cost 0.03-0.4 CPU-s).  The default gate keeps the
#: Group one: AddOffsetsToTxn refused (revoked before it) and TxnOffsetCommit refused after AddOffsetsToTxn was
#: allowed (revoked between); the TransactionalId refusals of both requests are the TV2 cell's and this one's.  And
#: the two-topic TV1 cell (an AddPartitionsToTxn naming an authorized and an unauthorized topic, refused whole: about
#: 27,000 states, 10-15 CPU-s, with bob beside alice).
REACH_ONLY: frozenset[str] = frozenset(
    {"authz_matrix_eostv1_write_transactionalid_revoked", "authz_matrix_tv1two_write_topic_missing"}
)


def transform_binding(
    operation: str, resource: str, transform: str, principal: str = PRINCIPAL
) -> tuple[list[str], list[str]]:
    """(allow, deny) binding texts that replace ``principal operation resource`` under ``transform``."""
    rtype, name = resource.split(":", 1)
    own = f"{principal} {operation} {resource}"
    prefix, other = name[:-1], f"{name[:-1]}9"
    table: dict[str, tuple[list[str], list[str]]] = {
        "granted": ([own], []),
        "revoked": ([own], []),
        "missing": ([], []),
        "denied": ([own], [own]),
        "denied_all": ([own], [f"{principal} All {resource}"]),
        "denied_everyone": ([own], [f"User:* {operation} {resource}"]),
        "denied_wildcard": ([own], [f"{principal} {operation} {rtype}:*"]),
        "denied_prefixed": ([own], [f"{principal} {operation} {rtype}:{prefix} prefixed"]),
        "wildcard_resource": ([f"{principal} {operation} {rtype}:*"], []),
        "wildcard_principal": ([f"User:* {operation} {resource}"], []),
        "all_operation": ([f"{principal} All {resource}"], []),
        "prefixed": ([f"{principal} {operation} {rtype}:{prefix} prefixed"], []),
        "prefixed_whole_name": ([f"{own} prefixed"], []),
        "literal_prefix": ([f"{principal} {operation} {rtype}:{prefix}"], []),
        "prefixed_longer": ([f"{own}0 prefixed"], []),
        "other_name": ([f"{principal} {operation} {rtype}:{other}"], []),
        "other_operation": ([f"{principal} Describe {resource}"], []),
        "other_principal": ([f"{OTHER_PRINCIPAL} {operation} {resource}"], []),
        "other_type": ([f"{principal} {operation} {_OTHER_TYPE[rtype]}:{name}"], []),
        "deny_other_operation": ([own], [f"{principal} Describe {resource}"]),
        "deny_other_principal": ([own], [f"{OTHER_PRINCIPAL} {operation} {resource}"]),
        "deny_other_name": ([own], [f"{principal} {operation} {rtype}:{other}"]),
        "deny_prefixed_longer": ([own], [f"{own}0 prefixed"]),
        "super_user_denied": ([], [f"{principal} All {resource}"]),
        "alter_instead": ([f"{principal} Alter {resource}"], []),
    }
    if transform not in table:
        raise ValueError(f"unknown ACL transform {transform!r}")
    return table[transform]


def _target(shape: str, index: int) -> str:
    operation, resource = REQUIRED[shape][index]
    return f"{operation.lower()}_{resource.split(':')[0].lower()}"


def _pair_document(shape: str, first: int, second: int) -> dict[str, Any]:
    """Bindings ``first`` and ``second`` of the shape both revoked (:data:`PAIR_CELLS`)."""
    doc = _document(shape, first, "revoked", {second: "revoked"})
    name = f"authz_matrix_{shape}_{_target(shape, first)}_{_target(shape, second)}_revoked"
    (op_1, res_1), (op_2, res_2) = REQUIRED[shape][first], REQUIRED[shape][second]
    if doc["model"] == "eos":
        # one transaction, no rebalance: the pair's refusals need only the two revocations before the offsets
        # request (the single-binding cells keep the second transaction and the rebalance; 8x the states here)
        doc["transactions"] = {**doc["transactions"], "transactions_per_producer": 1}
        doc["faults"] = {**doc["faults"], "rebalance": 0, "total": doc["faults"]["total"] - doc["faults"]["rebalance"]}
    return {
        **doc,
        "name": name,
        "description": (
            f"Generated (scenarios/authz_matrix.py): a {shape} client whose {op_1} on {res_1} and {op_2} on {res_2} "
            "an operator may each revoke at any point; a request both checks refuse carries the error of the one "
            "Kafka makes first."
        ),
        "default": name not in REACH_ONLY,
    }


def _document(shape: str, index: int, transform: str, others: dict[int, str] | None = None) -> dict[str, Any]:
    """Binding ``index`` of the shape under ``transform``, the bindings in ``others`` under theirs, the rest
    granted."""
    if shape in ("markers", "markerstv1", "stranger"):
        return _adversary_document(shape, transform)
    others = others or {}
    required = REQUIRED[shape]
    operation, resource = required[index]
    transforms = {j: others.get(j, "granted") for j in range(len(required))} | {index: transform}
    allow: list[str] = []
    deny: list[str] = []
    for j, (op, res) in enumerate(required):
        a, d = transform_binding(op, res, transforms[j])
        allow += a
        deny += d
    # the scenario's verdict: denied if any binding is denied, else as the transform says
    verdict = "D" if any(TRANSFORMS[x] == "D" for x in transforms.values()) else TRANSFORMS[transform]
    # A denied alice runs beside bob, who keeps the shape's properties exercised; a granted one runs alone, and so
    # does a revoked one: the runs where the operator does not act (or acts late) commit and abort.
    alone = verdict != "D"
    principals = [PRINCIPAL] if alone else [PRINCIPAL, SUPER_USER]
    supers = ["User:broker", *([PRINCIPAL] if transform == "super_user_denied" else []), *principals[1:]]
    security: dict[str, Any] = {"principals": [PRINCIPAL], "super_users": supers, "allow": allow, "deny": deny}
    # granted_principal_never_refused counts refusals before a revocation only: a revoked alice is granted too
    security["expect_granted"] = [p for p in principals if verdict != "D" or p != PRINCIPAL]
    if verdict == "D":
        security["expect_denied"] = [PRINCIPAL]
    if verdict != "G":  # a refusal names a resource whose binding is denied or revoked
        security["expect_errors"] = [
            ERROR_OF_TYPE[required[j][1].split(":", 1)[0]] for j in sorted(transforms) if transforms[j] != "granted"
        ]
    doc: dict[str, Any] = {**SHAPES[shape]}
    faults = dict(doc.get("faults", {}))
    revocable = [f"{PRINCIPAL} {op} {res}" for j, (op, res) in enumerate(required) if transforms[j] == "revoked"]
    if revocable:
        security["revocable"] = revocable
        faults = {**faults, "revoke_acl": len(revocable), "total": faults.get("total", 0) + len(revocable)}
    target = "all" if transform == "granted" else f"{operation.lower()}_{resource.split(':')[0].lower()}"
    name = f"authz_matrix_{shape}_{target}_{transform}"
    return {
        "name": name,
        "description": (
            f"Generated (scenarios/authz_matrix.py): a {shape} client whose {operation} on {resource} is "
            f"{transform.replace('_', ' ')}; the other bindings it needs are granted"
            + ("." if alone else ". Bob (p1, a super user) runs the same transaction beside her.")
        ),
        **doc,
        "transactions": {**doc["transactions"], "producers": len(principals)},
        "faults": faults,
        "default": name not in REACH_ONLY,
        "sets": ["reach"],
        "security": security,
    }


def _adversary_document(shape: str, transform: str) -> dict[str, Any]:
    """The adversary's request under ``transform``; alice holds what her transaction needs, the adversary Write on
    its own transactional.id and the topic (so its control Produce reaches the log's refusal) -- except a marker
    forger whose ClusterAction is ``missing``, who holds no transactional.id either."""
    operation, resource = REQUIRED[shape][0]
    allow, deny = transform_binding(operation, resource, transform, ADVERSARY)
    granted = TRANSFORMS[transform] == "G"
    target = "all" if transform == "granted" else f"{operation.lower()}_{resource.split(':')[0].lower()}"
    name = f"authz_matrix_{shape}_{target}_{transform}"
    doc = {k: v for k, v in SHAPES[shape].items() if k != "adversary"}
    rtype = resource.split(":", 1)[0]
    permitted = {"markers": ["atomic_commit", "committed_transactions_visible"],
                 "markerstv1": ["atomic_commit", "committed_transactions_visible"],
                 "stranger": ["healthy_producer_not_failed"]}[shape]
    # A marker forger with no binding at all (``missing``): its control Produce is refused for its TransactionalId
    # before the log could refuse the control batch (handleProduceRequest's order, refusals_follow_kafkas_check_order).
    stranger = shape.startswith("markers") and transform == "missing"
    own_txn_id = [] if stranger else [f"{ADVERSARY} Write TransactionalId:txn-mallory"]
    errors = [ERROR_OF_TYPE[rtype], *(["TRANSACTIONAL_ID_AUTHORIZATION_FAILED"] if stranger else [])]
    security: dict[str, Any] = {
        "principals": [PRINCIPAL],
        "adversary": ADVERSARY,
        "allow": [f"{PRINCIPAL} Write TransactionalId:txn-0", f"{PRINCIPAL} Write Topic:t0",
                  *own_txn_id, f"{ADVERSARY} Write Topic:t0", *allow],
        "deny": deny,
        "expect_granted": [PRINCIPAL, *([ADVERSARY] if granted else [])],
        **({} if granted else {"expect_denied": [ADVERSARY], "expect_errors": errors}),
    }
    return {
        "name": name,
        "description": (
            f"Generated (scenarios/authz_matrix.py): the adversary's {operation} on {resource} is "
            f"{transform.replace('_', ' ')}; once it attacks alice's transaction"
            + (" (allowed: the permitted findings)." if granted else " (refused).")
        ),
        **doc,
        "permitted": permitted if granted else [],
        "default": name not in REACH_ONLY,
        "sets": ["reach"],
        "security": security,
    }


def matrix_documents() -> list[dict[str, Any]]:
    """One scenario document per generated cell (see the module docstring)."""
    cells = [(shape, index, t) for shape, pairs in REQUEST_CELLS.items() for index, t in pairs]
    index = REQUIRED[RULES_SHAPE].index(RULES_BINDING)
    cells += [(RULES_SHAPE, index, t) for t in RULE_TRANSFORMS if (RULES_SHAPE, index, t) not in cells]
    pairs = [_pair_document(shape, r, m) for shape, cell in PAIR_CELLS.items() for r, m in cell]
    return [_document(shape, index, transform) for shape, index, transform in cells] + pairs
