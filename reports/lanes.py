"""From a trace's recorded steps to a per-process (lane) view: who did what, who sent what to whom.

A trace records every step as the model's one-line rendering of the action
(``Model.format_action``) and the events the transition emitted.  Renderers
need more structure than a string -- which process acted, whether a message
crossed the network, whether the environment injected a fault -- and they must
get it *without* running the model (a trace is shown in CI logs, HTML and bug
reports far from the code that produced it).  This module recovers that
structure from the text, by rules that follow the vocabulary of
``model/system.py``:

* A message argument is an envelope ``src->dst#connection:Body(...)``
  (``Deliver(message=p0->b0#1:Produce(partition=0, pid=0, epoch=0, seq=0,
  [p0.r0]))``): it belongs to lanes ``src`` and ``dst``.  ``Deliver`` is an
  arrow; a fault on an envelope (``DropMessage``, ``DuplicateMessage``,
  ``ReorderMessage``) is drawn across both lanes.
* Otherwise a process argument names the lane: ``producer=N`` → ``pN``,
  ``consumer=N`` → ``cN``, ``worker=N`` → ``wN`` (Connect worker),
  ``task=N`` → ``tN`` (source task), ``broker=N`` → ``bN``, ``coordinator``
  → ``tc``.
* Otherwise the action's name decides: partition-leader steps
  (``ReplicatePartition``, ``RestartLeader``) → broker ``b0``; transaction
  coordinator steps (``...Txn...``, ``WriteTxnMarkers``) → ``tc``; consumer
  steps (``Poll``, ``Fetch``) → ``c0``; Connect steps (``Rebalance``) → ``w0``;
  anything else → ``env``.
* A step is a fault (drawn ⚡) when it emitted a ``fault:*`` event or its
  name is one of the environment's fault verbs (Drop, Duplicate, Reorder,
  Restart, Crash, Expire, ...Timeout).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LANE_ROLES",
    "StepView",
    "TraceView",
    "lane_title",
    "parse_action",
    "partition_logs",
    "trace_view",
]

#: Argument name → lane prefix (``producer=0`` → ``p0``).
ARG_LANES: dict[str, str] = {
    "producer": "p",
    "broker": "b",
    "consumer": "c",
    "task": "t",
    "worker": "w",
}

#: Lane prefix → role title, in the left-to-right order lanes are drawn.
LANE_ROLES: tuple[tuple[str, str], ...] = (
    ("p", "producer"),
    ("b", "broker"),
    ("tc", "txn coordinator"),
    ("gc", "group coordinator"),
    ("c", "consumer"),
    ("t", "source task"),
    ("w", "Connect worker"),
    ("env", "environment"),
)

#: Action-name patterns → lane, for actions that name no process (first match wins).
KIND_LANES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Txn|Transaction|Marker|Coordinator"), "tc"),
    (re.compile(r"Leader|Partition|Replica|Broker|Isr"), "b0"),
    (re.compile(r"Consumer|Poll|Fetch|Group"), "c0"),
    (re.compile(r"Worker|Rebalance|Connect|Task"), "w0"),
)

_FAULT_KIND = re.compile(r"^(Drop|Duplicate|Reorder|Restart|Crash|Kill|Expire|Partition|Pause|Fail)|Timeout$")
_ACTION = re.compile(r"^\s*(\w+)\((.*)\)\s*$", re.DOTALL)
_ENVELOPE = re.compile(r"^([A-Za-z][\w.-]*)->([A-Za-z][\w.-]*)#(\d+):(.*)$", re.DOTALL)
_LANE_ID = re.compile(r"^([a-z]+?)(\d*)$")


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets: ``a=1, b=f(x, y)`` → ``['a=1', 'b=f(x, y)']``."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        parts.append(tail)
    return parts


def parse_action(text: str) -> tuple[str, dict[str, str]]:
    """``"SendProduce(producer=0, partition=1)"`` → ``("SendProduce", {"producer": "0", "partition": "1"})``.

    Text that is not ``Kind(name=value, ...)`` comes back as ``(text, {})``;
    positional values are keyed ``arg0``, ``arg1``.
    """
    m = _ACTION.match(text)
    if m is None:
        return text.strip(), {}
    args: dict[str, str] = {}
    for i, part in enumerate(_split_top(m.group(2))):
        name, sep, value = part.partition("=")
        if sep and re.fullmatch(r"\w+", name.strip()):
            args[name.strip()] = value.strip()
        else:
            args[f"arg{i}"] = part
    return m.group(1), args


def lane_title(lane: str) -> str:
    """``p0`` → ``producer p0``, ``tc`` → ``txn coordinator``."""
    m = _LANE_ID.match(lane)
    prefix = m.group(1) if m else lane
    for p, title in LANE_ROLES:
        if p == prefix:
            return title if lane in ("tc", "gc", "env") else f"{title} {lane}"
    return lane


def _lane_order(lane: str) -> tuple[int, str, int]:
    m = _LANE_ID.match(lane)
    prefix, num = (m.group(1), m.group(2)) if m else (lane, "")
    rank = next((i for i, (p, _) in enumerate(LANE_ROLES) if p == prefix), len(LANE_ROLES))
    return rank, prefix, int(num) if num else -1


@dataclass(frozen=True)
class StepView:
    """One trace step, placed on lanes.

    Attributes:
        number: 1-based step number (as in ``keos replay``).
        action: the recorded action text.
        kind: the action's name (``Deliver``, ``SendProduce``, ``DropMessage``).
        src: the acting lane (the sender, for a message).
        dst: the receiving lane for a message step, else ``None``.
        message: the message body (``Produce(partition=0, ...)``), else ``None``.
        connection: the envelope's connection number, else ``None``.
        fault: whether the environment injected a fault here.
        delivery: whether a message was delivered (an arrow in a sequence diagram).
        response: whether the message is a response (drawn dashed).
        events: the events the step emitted.
    """

    number: int
    action: str
    kind: str
    src: str
    dst: str | None
    message: str | None
    connection: str | None
    fault: bool
    delivery: bool
    response: bool
    events: tuple[str, ...]

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes the step touches."""
        return (self.src,) if self.dst is None else (self.src, self.dst)

    @property
    def label(self) -> str:
        """Short text: the message for a delivery, the fault and its message, else the action."""
        if self.message is None:
            return self.action
        conn = f" conn {self.connection}" if self.connection is not None else ""
        if self.delivery:
            return f"{self.message}{conn}"
        return f"{self.kind} {self.src}→{self.dst}{conn}: {self.message}"


@dataclass(frozen=True)
class TraceView:
    """A trace's header fields and its steps on lanes."""

    scenario: str
    variant: str
    engine: str
    seed: Any
    invariant: str
    explanation: str
    permitted: bool
    scenario_source: str
    lanes: tuple[str, ...]
    steps: tuple[StepView, ...]
    model: Mapping[str, Any] = field(default_factory=dict)
    liveness: str | None = None
    loop_start: int | None = None
    fairness: tuple[str, ...] = ()

    @property
    def verdict_word(self) -> str:
        """``violated`` or ``permitted`` (a violation the scenario allows)."""
        return "permitted" if self.permitted else "violated"

    @property
    def outcome(self) -> str:
        """How the run ends, after the verdict word: at a step, stuck, or in a cycle that repeats."""
        n = len(self.steps)
        if self.loop_start is not None:
            return f"livelock: steps {self.loop_start + 1}–{n} repeat forever (weakly fair)"
        if self.liveness == "stuck":
            return f"stuck after step {n} (no protocol step enabled)"
        return f"after step {n}"

    def cycle_marks(self, number: int) -> tuple[bool, bool]:
        """Whether step ``number`` (1-based) opens / closes a livelock's cycle."""
        if self.loop_start is None:
            return False, False
        return number == self.loop_start + 1, number == len(self.steps)


def _step_view(number: int, step: Mapping[str, Any], by_name: bool = True) -> StepView:
    """One step on its lanes; ``by_name=False`` trusts only ``fault:`` events (a livelock's cycle has no fault)."""
    action = str(step.get("action", "?"))
    raw_events = step.get("events") or ()
    events = tuple(str(e) for e in raw_events) if isinstance(raw_events, list | tuple) else (str(raw_events),)
    kind, args = parse_action(action)
    fault = any(e.startswith("fault:") for e in events) or (by_name and bool(_FAULT_KIND.search(kind)))
    for value in args.values():
        env = _ENVELOPE.match(value)
        if env is not None:
            body = env.group(4).strip()
            body_name = body.split("(", 1)[0]
            delivery = kind.startswith("Deliver") and not fault
            return StepView(
                number,
                action,
                kind,
                env.group(1),
                env.group(2),
                body,
                env.group(3),
                fault,
                delivery,
                body_name.endswith("Response"),
                events,
            )
    lane = None
    for name, value in args.items():
        if name in ARG_LANES and re.fullmatch(r"-?\d+", value):
            lane = f"{ARG_LANES[name]}{value}"
            break
        if name == "coordinator":
            lane = "tc"
            break
    if lane is None:
        lane = next((ln for pattern, ln in KIND_LANES if pattern.search(kind)), "env")
    return StepView(number, action, kind, lane, None, None, None, fault, False, False, events)


def trace_view(trace: Mapping[str, Any]) -> TraceView:
    """Place a trace JSON dict's steps on lanes (producers, broker, coordinator, consumers, workers)."""
    raw_steps = trace.get("steps") or []
    marked = trace.get("loop_start")
    cycle_from: int = marked if isinstance(marked, int) else len(raw_steps)
    steps = tuple(
        _step_view(i, s, by_name=i <= cycle_from) for i, s in enumerate(raw_steps, start=1) if isinstance(s, Mapping)
    )
    lanes: set[str] = set()
    for s in steps:
        lanes.update(s.lanes)
    model = trace.get("model") or {}
    topo = model.get("topology") if isinstance(model, Mapping) else None
    if isinstance(topo, Mapping) and isinstance(topo.get("producers"), int):
        lanes.update(f"p{i}" for i in range(topo["producers"]))
    seed = trace.get("seed")
    loop_start = trace.get("loop_start")
    if isinstance(loop_start, bool) or not isinstance(loop_start, int) or not 0 <= loop_start < len(steps):
        loop_start = None
    fairness = trace.get("fairness") or ()
    return TraceView(
        liveness=str(trace["liveness"]) if trace.get("liveness") else None,
        loop_start=loop_start,
        fairness=tuple(str(f) for f in fairness) if isinstance(fairness, list | tuple) else (),
        scenario=str(trace.get("scenario", "?")),
        variant=str(trace.get("variant", "?")),
        engine=str(trace.get("engine", "?")),
        seed=seed,
        invariant=str(trace.get("invariant", "?")),
        explanation=str(trace.get("explanation") or ""),
        permitted=bool(trace.get("permitted", False)),
        scenario_source=str(trace.get("scenario_source") or ""),
        lanes=tuple(sorted(lanes, key=_lane_order)),
        steps=steps,
        model=model if isinstance(model, Mapping) else {},
    )


def _record_label(rid: Any) -> str:
    try:
        from keos.model.clients.producer import record_label

        return record_label(int(rid))
    except (ImportError, TypeError, ValueError):
        return str(rid)


def partition_logs(final_state: Any) -> list[tuple[int, list[tuple[str, bool]]]]:
    """The partition logs of a recorded final state, for readers.

    Returns ``[(partition, [(entry text, duplicate?), ...]), ...]`` where an
    entry reads ``offset 2: p0.r1 (pid=0, epoch=1, seq=0)`` and ``duplicate``
    marks a record already in the log at a lower offset.  Empty when the
    state has no ``partitions[].log`` (another model's state).
    """
    if not isinstance(final_state, Mapping):
        return []
    parts = final_state.get("partitions")
    if not isinstance(parts, list):
        return []
    out: list[tuple[int, list[tuple[str, bool]]]] = []
    for q, leader in enumerate(parts):
        if not isinstance(leader, Mapping) or not isinstance(leader.get("log"), list):
            continue
        seen: set[Any] = set()
        entries: list[tuple[str, bool]] = []
        for offset, e in enumerate(leader["log"]):
            if not isinstance(e, Mapping):
                continue
            raw = e.get("records")
            records: list[Any] = raw if isinstance(raw, list) else []
            dup = any(r in seen for r in records)
            seen.update(records)
            labels = ",".join(_record_label(r) for r in records)
            meta = ", ".join(
                f"{short}={e[key]}"
                for key, short in (("producer_id", "pid"), ("producer_epoch", "epoch"), ("base_sequence", "seq"))
                if key in e
            )
            flag = " txn" if e.get("transactional") else ""
            entries.append((f"offset {offset}: {labels} ({meta}){flag}", dup))
        out.append((q, entries))
    return out
