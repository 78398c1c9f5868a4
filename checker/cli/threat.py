"""``keos list``'s threat model (KIP-98 §9): adversary actions, the rules that stop them, the weaknesses.

The table is data for ``keos list`` and the README, not model behaviour (issue 23 moved it out of ``model/``):
every row names the adversary action of :mod:`model.security.adversary`, the rule that stops it (or ``not
protected``), the invariant that checks the rule, and the weakened variant of :mod:`model.variants` that drops it
-- so ``keos mutants`` proves the rule is load-bearing.  Rows whose rule is ``not protected`` are the documented
weaknesses: the scenarios that exercise them list their invariants as ``permitted``.  :func:`acl_summary` is the
per-scenario view: what the ACLs let each principal do.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.security.authorizer import DENY
from keos.model.security.records import SecurityConfig

__all__ = ["THREATS", "Threat", "acl_summary", "threat_rows", "threat_table"]


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
        "ForgeProduce epoch_offset=0 sequence_offset=0",
        "writes into another producer's open transaction with its producer id, epoch and next sequence "
        "(KIP-890 verification refuses only a batch that would open the transaction on the partition)",
        "not protected (KIP-98 §9): the producer id is not bound to the transactional.id",
        "pid_bound_to_transactional_id (permitted; atomic_commit too: the stolen sequence drops the owner's "
        "batch; endless_transaction_bounded too: a write at the owner's bumped epoch before its marker makes "
        "the marker stale, the transaction hangs in PrepareAbort)",
        "",
    ),
    Threat(
        "ForgeProduce epoch_offset=+1",
        "writes at another producer's epoch + 1, fencing it on that partition",
        "not protected (KIP-98 §9): a forced epoch bump",
        "producer_epoch_from_coordinator (permitted)",
        "",
    ),
)


def acl_summary(sec: SecurityConfig) -> list[str]:
    """One line per principal: what the ACLs let it do (for ``keos list``)."""
    principals = sorted({b.principal for b in sec.acls} | set(sec.principals) | {sec.adversary})
    out = []
    for p in principals:
        grants = [b.label() for b in sec.acls if b.principal == p and b.permission != DENY]
        denies = [b.label().removeprefix("Deny ") for b in sec.acls if b.principal == p and b.permission == DENY]
        text = ", ".join(g.split(" ", 1)[1] for g in grants) if grants else "nothing"
        if denies:
            text += "; denied " + ", ".join(d.split(" ", 1)[1] for d in denies)
        role = " (adversary)" if p == sec.adversary else ""
        out.append(f"{p}{role}: {text}")
    return out


def threat_rows() -> list[dict[str, str]]:
    """The threat model as JSON rows."""
    return [t._asdict() for t in THREATS]


def threat_table(rows: list[dict[str, str]]) -> Any:
    """A rich table of the rows."""
    from rich.table import Table

    t = Table(title="Threat model (KIP-98 §9): adversary actions (\\[faults] budgets of a \\[security] scenario)")
    for col in ("adversary action", "attack", "stopped by", "invariant", "variant dropping the rule"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(r["action"], r["attack"], r["stopped_by"], r["invariant"], r["variant"] or "-")
    return t
