"""What z3 can prove about partition assignment: optimal balance, forced movement, Range's bound.

Assignor properties are checked by running the assignors (Hypothesis, ``keos assignors``); z3
answers the questions no run can: *could any assignment do better?*

* :func:`optimal_spread` — the smallest max − min load over **all** valid assignments (each
  subscribed partition to exactly one subscriber).  With unequal subscriptions it is often above
  one, which proves no assignor can be balanced in the strict sense and why
  ``AbstractStickyAssignor.isBalanced`` only asks that no partition could move to a subscriber
  with two fewer.  For the book's RoundRobin example (members subscribed to ``t0``; ``t0,t1``;
  ``t0,t1,t2`` with 1, 2, 3 partitions) the optimum is 2 — what Sticky reaches — and RoundRobin's
  3 is therefore not optimal.
* :func:`minimal_moves` — the fewest previously owned partitions that must change owner in an
  assignment of optimal spread (KIP-54: balance first, stickiness second); with equal
  subscriptions Sticky's movement must equal it.
* :func:`prove_range_spread` — for equal subscriptions, over *symbolic* member counts and
  partition counts, Range's load spread is at most the number of topics and reaches it: with
  ``p_t = q_t·n + r_t`` a member at index ``i`` gets ``Σ q_t + #{t : i < r_t}`` partitions
  (``RangeAssignor``: the first ``r_t`` members take one extra of every topic), so the first and
  last member differ by ``#{t : r_t > 0}``.  ``tests/test_assignors.py`` ties this closed form to
  the implementation.  The same argument bounds RoundRobin's spread by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import z3

from keos.model.coordinator.group.assignors import Subscription, TopicPartition


def _counts(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> tuple[dict[tuple[str, str], z3.ArithRef], list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """``n[t, m]``: how many partitions of topic ``t`` member ``m`` gets.  Partitions of one topic
    are interchangeable for balance (and, with ``min(n, owned)``, for movement), so counting them
    is exact and far smaller than a Boolean per (partition, member)."""
    members = sorted(subscriptions)
    n: dict[tuple[str, str], z3.ArithRef] = {}
    constraints: list[z3.BoolRef] = []
    topics = sorted({t for s in subscriptions.values() for t in s.topics if t in partitions_per_topic})
    for topic in topics:
        subscribers = [m for m in members if topic in subscriptions[m].topics]
        for m in subscribers:
            n[(topic, m)] = z3.Int(f"n_{topic}_{m}")
            constraints.append(n[(topic, m)] >= 0)
        constraints.append(z3.Sum([n[(topic, m)] for m in subscribers]) == partitions_per_topic[topic])
    load = {m: z3.Sum([v for (t, mm), v in n.items() if mm == m] or [z3.IntVal(0)]) for m in members}
    return n, constraints, load


def _spread_at_most(load: dict[str, z3.ArithRef], bound: int) -> z3.BoolRef:
    values = list(load.values())
    return z3.And([a - b <= bound for a in values for b in values]) if values else z3.BoolVal(True)


def optimal_spread(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> int:
    """The least max − min load any valid assignment achieves (each bound checked by a solver call,
    so the result is a proof: ``spread ≤ result − 1`` is unsatisfiable)."""
    if not subscriptions:
        return 0
    _, constraints, load = _counts(partitions_per_topic, subscriptions)
    solver = z3.Solver()
    solver.add(constraints)
    total = sum(partitions_per_topic.get(t, 0) for t in {t for s in subscriptions.values() for t in s.topics})
    for bound in range(total + 1):
        solver.push()
        solver.add(_spread_at_most(load, bound))
        if solver.check() == z3.sat:
            return bound
        solver.pop()
    return total


def minimal_moves(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    previous: Mapping[str, tuple[TopicPartition, ...]],
) -> int:
    """The fewest partitions owned (in ``previous``) by a still-present member that must change
    owner in an assignment whose spread is optimal."""
    if not subscriptions:
        return 0
    bound = optimal_spread(partitions_per_topic, subscriptions)
    n, constraints, load = _counts(partitions_per_topic, subscriptions)
    owned: dict[tuple[str, str], int] = {}
    for m, parts in previous.items():
        for tp in parts:
            if (tp.topic, m) in n and tp.partition < partitions_per_topic[tp.topic]:
                owned[(tp.topic, m)] = owned.get((tp.topic, m), 0) + 1
    kept_terms = [z3.If(n[k] < c, n[k], c) for k, c in owned.items()]
    opt = z3.Optimize()
    opt.add(constraints)
    opt.add(_spread_at_most(load, bound))
    handle = opt.maximize(z3.Sum(kept_terms) if kept_terms else z3.IntVal(0))
    if opt.check() != z3.sat:  # pragma: no cover - the bound was satisfiable a moment ago
        raise RuntimeError("z3 lost a satisfiable assignment")
    return sum(owned.values()) - handle.value().as_long()


@dataclass(frozen=True)
class RangeSpreadProof:
    topics: int
    bound_proved: bool
    """``spread ≤ topics`` holds for every member count and partition counts (negation unsat)."""
    tight: bool
    """some member count and partition counts reach ``spread == topics``."""
    round_robin_bound_proved: bool
    """RoundRobin's spread ≤ 1 with equal subscriptions (negation unsat)."""


def prove_range_spread(topics: int) -> RangeSpreadProof:
    """Prove, for ``topics`` topics and unboundedly many members/partitions, Range's and
    RoundRobin's load formulas' spread bounds (see the module docstring)."""
    n = z3.Int("members")
    i, j = z3.Ints("i j")
    q = [z3.Int(f"q{t}") for t in range(topics)]
    r = [z3.Int(f"r{t}") for t in range(topics)]
    domain = [n >= 1, i >= 0, j >= 0, i < n, j < n]
    for t in range(topics):
        domain += [q[t] >= 0, r[t] >= 0, r[t] < n]

    def range_load(k: z3.ArithRef) -> z3.ArithRef:
        return z3.Sum([q[t] + z3.If(k < r[t], 1, 0) for t in range(topics)]) if topics else z3.IntVal(0)

    solver = z3.Solver()
    solver.add(domain + [range_load(i) - range_load(j) > topics])
    bound = solver.check() == z3.unsat
    solver = z3.Solver()
    solver.add(domain + [range_load(i) - range_load(j) == topics])
    tight = solver.check() == z3.sat

    total_q, total_r = z3.Ints("Q R")  # total partitions P = Q·n + R, 0 <= R < n
    solver = z3.Solver()
    rr_domain = [n >= 1, i >= 0, j >= 0, i < n, j < n, total_q >= 0, total_r >= 0, total_r < n]

    def rr_load(k: z3.ArithRef) -> z3.ArithRef:
        return total_q + z3.If(k < total_r, 1, 0)

    solver.add(rr_domain + [rr_load(i) - rr_load(j) > 1])
    rr_bound = solver.check() == z3.unsat
    return RangeSpreadProof(topics, bound, tight, rr_bound)
