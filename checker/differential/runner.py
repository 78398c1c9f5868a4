"""Run cases on the model and on Kafka, compare after every step, shrink every difference.

After each step the runner compares, in this order: the handler's answer (error code, and for
InitProducerId the producer id -- through the :class:`~keos.checker.differential.sides.Bijection`
from Kafka's real ids to the model's symbols -- and epoch; JoinGroup's member, generation and
leadership; SyncGroup's assignment; OffsetFetch's offset), then each observer: the coordinator's
state, partitions, producer id and epoch (DescribeTransactions), ListTransactions' state, the
partition leaders' producer state (DescribeProducers), the logs (Fetch, read_uncommitted), the
last stable offset and aborted transactions read_committed sees, and the committed offsets.

The first disagreement ends the case (later steps start from different states).  Each distinct
disagreement (handler + what differed) is shrunk by removing steps one at a time while the same
disagreement still shows (delta debugging, one-step granularity), and every shrunk case is run
again on both sides before it is reported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from keos.checker.differential.abstractions import classify
from keos.checker.differential.cases import Case, dispatch
from keos.checker.differential.sides import Answer, Bijection, KafkaSide, ModelSide, Observation
from keos.checker.differential.wire import KafkaWire, WireError

__all__ = ["OBSERVERS", "Difference", "RunResult", "comparable", "kafka_in_symbols", "run_case", "run_cases", "shrink"]

#: The observers compared after every step, named by the request that reads them.
OBSERVERS = {
    "transaction": "describe_transactions",
    "listed": "list_transactions",
    "producers": "describe_producers",
    "logs": "fetch",
    "stable": "fetch_read_committed",
    "offsets": "offset_fetch_committed",
}
UNKNOWN_PID_BASE = 10**15
_RUNS = 0


@dataclass
class Difference:
    """A step where the model and Kafka disagree."""

    case: Case
    step_index: int
    handler: str
    what: str
    model: Any
    kafka: Any
    abstraction: str = ""
    reproduced: bool = True

    @property
    def signature(self) -> tuple[str, str, str]:
        return (self.handler, self.what, f"{self.model!r}|{self.kafka!r}" if self.what == "answer" else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "handler": self.handler,
            "what": self.what,
            "step": self.step_index,
            "case": self.case.name,
            "timeout_ms": self.case.timeout_ms,
            "steps": [s.render() for s in self.case.steps],
            "model": repr(self.model),
            "kafka": repr(self.kafka),
            "abstraction": self.abstraction,
            "reproduced": self.reproduced,
        }


@dataclass
class RunResult:
    """Tallies per handler and the (shrunk) differences of a run."""

    cases: int = 0
    steps: int = 0
    agreed: dict[str, int] = field(default_factory=dict)
    compared: dict[str, int] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    seconds: float = 0.0
    reconnects: list[str] = field(default_factory=list)

    @property
    def unexplained(self) -> list[Difference]:
        """Reproduced differences no named abstraction accounts for (these fail the run)."""
        return [d for d in self.differences if not d.abstraction and d.reproduced]

    def tally(self, handler: str, ok: bool) -> None:
        self.compared[handler] = self.compared.get(handler, 0) + 1
        if ok:
            self.agreed[handler] = self.agreed.get(handler, 0) + 1


class _Translate:
    def __init__(self) -> None:
        self.pids = Bijection("p", UNKNOWN_PID_BASE)
        self.members = Bijection("c", 0)

    def pid(self, sym: str) -> int:
        if sym in ("-1", ""):
            return -1
        real = self.pids.real(sym)
        return int(real) if not isinstance(real, str) else UNKNOWN_PID_BASE + int(sym.lstrip("p?") or 0)

    def member(self, sym: str) -> str:
        return str(self.members.real(sym)) if sym else ""


def kafka_in_symbols(kind: str, m: Answer, k: Answer, tr: _Translate) -> Answer:
    """Kafka's answer with its identifiers bound to the model's symbols (InitProducerId's producer id,
    JoinGroup's member id): what a recorded corpus stores (:mod:`keos.checker.differential.corpus`)."""
    if kind in ("init", "end_txn") and k.producer_id not in ("", None):
        return k._replace(producer_id=tr.pids.symbol(int(k.producer_id), m.producer_id))
    if kind == "join" and m.error == "NONE" and k.error == "NONE":
        return k._replace(extra=(tr.members.symbol(k.extra[0], m.extra[0]), *k.extra[1:]))
    return k


def comparable(kind: str, m: Answer, k: Answer) -> tuple[Any, Any]:
    """The comparable parts of both answers, Kafka's (``k``) already in the model's symbols: the error, and
    the identifiers only when both succeeded."""
    if kind in ("init", "join") and (m.error != "NONE" or k.error != "NONE"):
        return (m.error,), (k.error,)
    if kind == "init" or (kind == "end_txn" and (m.producer_id or k.producer_id)):  # EndTxn v5 (TV2)
        return (m.error, m.producer_id, m.producer_epoch), (k.error, k.producer_id, k.producer_epoch)
    if kind in ("join", "sync", "offset_fetch"):
        return (m.error, *m.extra), (k.error, *k.extra)
    return (m.error,), (k.error,)


def _observations(m: Observation, k: Observation) -> list[tuple[str, Any, Any]]:
    return [(name, getattr(m, name), getattr(k, name)) for name in OBSERVERS]


def run_case(wire: KafkaWire, case: Case, result: RunResult | None = None,
             transaction_version: int = 1, log: list[tuple[Answer, Observation | None]] | None = None
             ) -> Difference | None:
    """Run one case on a fresh model and a fresh transactional id/topic/group; the first difference.

    ``log`` (when given) receives, per step run, Kafka's answer in the model's symbols and Kafka's
    observation (``None`` when the answers already differed): what a recorded corpus keeps."""
    global _RUNS
    _RUNS += 1
    model = ModelSide(transaction_version)
    # every run gets fresh Kafka resources, also a re-run of the same case while shrinking
    kafka = KafkaSide(wire, f"{case.name}-{_RUNS}", case.timeout_ms)
    tr = _Translate()
    try:
        for i, s in enumerate(case.steps):
            m_answer = dispatch(model, s, lambda p: p, lambda mm: mm)
            k_answer = dispatch(kafka, s, tr.pid, tr.member)
            model.settle()
            kafka.settle()
            k_symbols = kafka_in_symbols(s.kind, m_answer, k_answer, tr)
            mine, theirs = comparable(s.kind, m_answer, k_symbols)
            if result is not None:
                result.steps += 1
                result.tally(s.kind, mine == theirs)
            if mine != theirs:
                if log is not None:
                    log.append((k_symbols, None))
                return Difference(case, i, s.kind, "answer", mine, theirs)
            m_obs = model.observe()
            k_obs = kafka.observe(tr.pids)
            if log is not None:
                log.append((k_symbols, k_obs))
            for name, mv, kv in _observations(m_obs, k_obs):
                if result is not None:
                    result.tally(OBSERVERS[name], mv == kv)
                if mv != kv:
                    return Difference(case, i, OBSERVERS[name], name, mv, kv)
        return None
    finally:
        kafka.delete()


def shrink(wire: KafkaWire, diff: Difference, budget: int = 40, transaction_version: int = 1) -> Difference:
    """Remove steps one at a time while a difference with the same handler and kind still shows."""
    best = diff
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        steps = list(best.case.steps[: best.step_index + 1])
        for j in range(len(steps) - 1, -1, -1):
            if tries >= budget:
                break
            candidate = Case(f"{diff.case.name}-s{tries}", tuple(steps[:j] + steps[j + 1:]), best.case.timeout_ms)
            tries += 1
            if not candidate.steps:
                continue
            try:
                got = run_case(wire, candidate, None, transaction_version)
            except WireError:
                wire.reconnect()
                continue
            if got is not None and (got.handler, got.what) == (diff.handler, diff.what):
                best = got
                changed = True
                break
    # cut what follows the difference and confirm once more on both sides
    final = Case(best.case.name, best.case.steps[: best.step_index + 1], best.case.timeout_ms)
    try:
        confirmed = run_case(wire, final, None, transaction_version)
    except WireError:
        wire.reconnect()
        confirmed = run_case(wire, final, None, transaction_version)
    if confirmed is None:
        best.reproduced = False  # shown once, not again: timing, not a verdict (reported apart)
        return best
    return confirmed


def run_cases(wire: KafkaWire, cases: list[Case], shrink_budget: int = 40,
              progress: Any = None, deadline: float | None = None, transaction_version: int = 1) -> RunResult:
    """Run every case; shrink one representative per distinct difference."""
    result = RunResult()
    start = time.monotonic()
    seen: dict[tuple[str, str, str], Difference] = {}
    for n, case in enumerate(cases):
        if deadline is not None and time.monotonic() > deadline:
            break
        try:
            diff = run_case(wire, case, result, transaction_version)
        except WireError as exc:
            # the broker closed the connection: reconnect and run the case once more on fresh resources
            result.reconnects.append(f"{case.name}: {exc}")
            if len(result.reconnects) > 5:
                raise
            wire.reconnect()
            diff = run_case(wire, case, result, transaction_version)
        result.cases += 1
        if diff is not None and diff.signature not in seen:
            seen[diff.signature] = diff
        if progress is not None:
            progress(n + 1, len(cases), len(seen))
    for diff in seen.values():
        result.differences.append(shrink(wire, diff, shrink_budget, transaction_version))
    # identical shrunk differences (two signatures reducing to the same case) are reported once
    unique: dict[tuple[str, ...], Difference] = {}
    for d in result.differences:
        unique.setdefault((d.handler, d.what, *(s.render() for s in d.case.steps)), d)
    result.differences = list(unique.values())
    for d in result.differences:
        d.abstraction = classify(d.handler, d.what, d.model, d.kafka, d.case, d.step_index)
    result.seconds = time.monotonic() - start
    return result
