"""The threat model of KIP-98 §9 as data: each adversary action, what stops it, and what nothing stops.

Read by ``keos list`` (the "Threat model" table) and the README.  Every row
names the adversary action of :mod:`model.security.adversary`, the rule that
stops it (or ``not protected``), the invariant that checks the rule, and the
weakened variant of :mod:`model.variants` that drops it -- so ``keos mutants``
proves the rule is load-bearing.  Rows whose rule is ``not protected`` are the
documented weaknesses: the scenarios that exercise them list their invariants
as ``permitted``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["THREATS", "Threat"]


class Threat(NamedTuple):
    """One row of the threat model."""

    action: str
    attack: str
    stopped_by: str
    invariant: str
    variant: str


THREATS: tuple[Threat, ...] = (
    Threat(
        "HijackInitProducerId",
        "InitProducerId on another producer's transactional.id: bumps its epoch, fencing it",
        "Write on TransactionalId (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)",
        "unauthorized_never_changes_transaction",
        "no_transactional_id_acl",
    ),
    Threat(
        "ForgeEndTxn",
        "EndTxn replayed with another producer's transactional.id, producer id and epoch",
        "Write on TransactionalId (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)",
        "unauthorized_never_changes_transaction",
        "no_transactional_id_acl",
    ),
    Threat(
        "ForgeMarker api=WriteTxnMarkers",
        "a COMMIT/ABORT marker for another producer's transaction, sent as a broker would",
        "ClusterAction (or Alter) on the cluster (CLUSTER_AUTHORIZATION_FAILED)",
        "control_batches_only_from_markers",
        "markers_without_cluster_action",
    ),
    Threat(
        "ForgeMarker api=Produce",
        "a control batch inside a Produce request",
        "the log refuses client control records (INVALID_RECORD)",
        "control_batches_only_from_markers",
        "produce_accepts_control_records",
    ),
    Threat(
        "StrayProduce",
        "transactional data under a producer id no coordinator issued (endless transaction, LSO stuck)",
        "Write on TransactionalId for transactional Produce; KIP-890 verification",
        "transactional_writes_authorized, endless_transaction_bounded",
        "produce_without_transactional_id_acl",
    ),
    Threat(
        "AbandonTransaction",
        "an authorized producer opens a transaction and never ends it (endless transaction)",
        "the coordinator's transaction.timeout.ms abort, capped by transaction.max.timeout.ms",
        "endless_transaction_bounded",
        "",
    ),
    Threat(
        "ForgeProduce bump_epoch=false",
        "writes into another producer's open transaction with its producer id, epoch and next sequence "
        "(KIP-890 verification refuses only a batch that would open the transaction on the partition)",
        "not protected (KIP-98 §9): the producer id is not bound to the transactional.id",
        "pid_bound_to_transactional_id (permitted; atomic_commit too: the stolen sequence drops the owner's "
        "batch; endless_transaction_bounded too: a write at the owner's bumped epoch before its marker makes "
        "the marker stale, the transaction hangs in PrepareAbort)",
        "",
    ),
    Threat(
        "ForgeProduce bump_epoch=true",
        "writes at another producer's epoch + 1, fencing it on that partition",
        "not protected (KIP-98 §9): a forced epoch bump",
        "producer_epoch_from_coordinator (permitted)",
        "",
    ),
)
