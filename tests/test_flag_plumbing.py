"""A rule switch some caller takes from the protocol variant is taken from it by every caller.

A ``model/`` function parameter with a default that one call site feeds from the variant (``flags.*``,
``self.cc``/``cfg``, ``self.tv``, ``config.*``) while another call site leaves it at its default is a rule the
weakened variants reach only through some callers, and a mutant of the default changes only the callers no variant
varies (session 24: ``append_end_txn_marker``'s four marker rules were passed by the data partitions only, not by
the group coordinator's ``__consumer_offsets`` marker nor by Connect's cluster; now ``MarkerRules`` has no
default).  This test lists every such parameter from the syntax of ``model/`` (a second or two) and fails on one
that is not in ``KNOWN`` -- plumb the switch through (or drop the default) rather than extending the list.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import keos

MODEL = Path(keos.__file__).resolve().parent / "model"

#: Mixed call sites present when the test was written (session 24), each a default some callers rely on while
#: another feeds it from the variant: plumb them through and remove them from this list.
KNOWN = {
    "clients/consumer_coordinator.py:on_error(rebalance_keeps_generation)",
    "clients/consumer_coordinator.py:on_error(rebalance_rejoins)",
    "clients/producer.py:drain(in_turn)",
    "clients/producer.py:expire_batch(in_retry_only)",
    "clients/producer.py:send(batch_records)",
    "clients/transactional_producer.py:classify_batch_failure(outside_completion)",
    "coordinator/transaction/transaction_coordinator.py:_transit(cfg)",
    "coordinator/transaction/transaction_coordinator.py:complete_target(cfg)",
    "coordinator/transaction/transaction_coordinator.py:complete_transaction(cfg)",
    "coordinator/transaction/transaction_coordinator.py:handle_add_partitions(cfg)",
    "coordinator/transaction/transaction_coordinator.py:handle_marker_response(retry_retriable)",
    "log/partition.py:handle_produce(deferred)",
    "systems/txn_produce_judge.py:unexpected_txn_answer(verification_enabled)",
}

_VARIANT = ("flags.", ".cc", "cfg", "self.tv", "config.")


def _mixed() -> set[str]:
    trees = {f: ast.parse(f.read_text(encoding="utf-8")) for f in sorted(MODEL.rglob("*.py"))}
    defs: dict[str, list[tuple[Path, list[str], dict[str, int | None]]]] = collections.defaultdict(list)
    for f, tree in trees.items():
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef):
                pos = [p.arg for p in (*n.args.posonlyargs, *n.args.args)]
                first = len(pos) - len(n.args.defaults)
                d: dict[str, int | None] = {p: i for i, p in enumerate(pos) if i >= first}
                d.update({p.arg: None for p, v in zip(n.args.kwonlyargs, n.args.kw_defaults) if v is not None})
                if d:
                    defs[n.name].append((f, pos, d))
    sites: dict[str, list[bool | None]] = collections.defaultdict(list)
    for tree in trees.values():
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
            if name not in defs or len(defs[name]) != 1:  # an ambiguous name: not judged
                continue
            f, pos, d = defs[name][0]
            shift = 1 if pos[:1] in (["self"], ["cls"]) and isinstance(n.func, ast.Attribute) else 0
            starred = any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords)
            for p, i in d.items():
                value = next((k.value for k in n.keywords if k.arg == p), None)
                if value is None and i is not None and not starred and len(n.args) > i - shift:
                    value = n.args[i - shift]
                fed = None if value is None else any(v in ast.unparse(value) for v in _VARIANT)
                sites[f"{f.relative_to(MODEL).as_posix()}:{name}({p})"].append(fed)
    return {k for k, fed in sites.items() if any(fed) and None in fed}


def test_every_caller_takes_a_variant_switch_from_the_variant() -> None:
    mixed = _mixed()
    assert "log/txn_markers.py:append_end_txn_marker(lso_counts_open)" not in mixed  # the case that started it
    assert not mixed - KNOWN, f"a switch fed from the variant by some callers and defaulted by others: {mixed - KNOWN}"
