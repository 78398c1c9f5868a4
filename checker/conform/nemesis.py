"""A seeded, recorded random nemesis for ``keos conform`` (Jepsen's nemesis, on one machine).

Jepsen runs a *nemesis* beside its clients: a process that injects faults on a
schedule while the workload runs, and records each fault in the history.  keos
does the same, with a schedule that is a pure function of ``--seed``, the fault
kinds the target supports (``--nemesis``) and ``--time-limit``: the same three
give the same schedule, so a run that found something can be replayed
(:func:`schedule`; the schedule is written into the history's ``meta`` and every
injection and heal is an operation of process ``nemesis-random``).

Fault kinds (a target declares which it supports, :data:`KINDS` says what each means):

``kill``          ``kill -9`` of a broker JVM, restarted from its log after a few seconds
``pause``         SIGSTOP of a broker JVM, SIGCONT after a few seconds (a long GC pause)
``leader``        leadership moved through the Admin API: a preferred-replica election
                  of every partition (``ElectLeaders``, KIP-460) -- it moves leaders (and so
                  group and transaction coordinators) back after a kill moved them away
``partition``     a node cut off through keos's proxy: its clients' connections and the
                  other brokers' replication fetches (which cross the proxy, since brokers
                  advertise it) are reset and refused for a few seconds
``reset``         every connection through the proxies reset (requests in flight lost)
``drop``          the brokers' answers dropped for longer than ``request.timeout.ms`` (the
                  broker did the work, the client never heard), then those connections reset
``client-pause``  the workload's transactional producer stalls inside its next transaction
                  for longer than ``transaction.timeout.ms`` plus the coordinator's abort
                  interval, then asks to commit (``commit-after-expiry`` judges the answer)

Faults are healed at the end (paused nodes continued, killed nodes restarted,
partitions lifted) before the final drain reads every key.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .history import Recorder

__all__ = [
    "KINDS",
    "NEMESIS_PROCESS",
    "Event",
    "Nemesis",
    "NemesisDriver",
    "ProxyNemesis",
    "parse_kinds",
    "schedule",
    "supported_kinds",
]

KINDS: dict[str, str] = {
    "kill": "kill -9 of a broker, restarted from its log",
    "pause": "SIGSTOP of a broker, SIGCONT later",
    "leader": "preferred-replica leader election of every partition (Admin API ElectLeaders)",
    "partition": "a node cut off from clients and replication through keos's proxy",
    "reset": "every client and replication connection through the proxies reset",
    "drop": "the brokers' answers dropped past request.timeout.ms, then the connections reset",
    "client-pause": "the transactional producer stalls past transaction.timeout.ms + the abort interval",
}

NEMESIS_PROCESS = "nemesis-random"


def parse_kinds(spec: str, supported: Sequence[str]) -> tuple[str, ...]:
    """``all``, ``none`` or a comma list; every kind must be known and supported by the target."""
    spec = spec.strip()
    if spec in ("", "none"):
        return ()
    if spec == "all":
        return tuple(supported)
    kinds = tuple(dict.fromkeys(k.strip() for k in spec.split(",") if k.strip()))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown nemesis fault {', '.join(unknown)} (known: {', '.join(KINDS)}, all, none)")
    missing = [k for k in kinds if k not in supported]
    if missing:
        raise ValueError(
            f"this target does not support nemesis fault {', '.join(missing)} (it supports: {', '.join(supported)})"
        )
    return kinds


@dataclass(frozen=True)
class Event:
    """One scheduled fault: at ``at_s`` seconds into the run, ``kind`` on ``node`` for ``duration_s``."""

    at_s: float
    kind: str
    node: int | None
    duration_s: float


def schedule(seed: int, kinds: Sequence[str], time_limit_s: float, nodes: int) -> list[Event]:
    """The fault schedule: a pure function of its arguments (replays with the same seed).

    Every kind is injected once (in a seeded order) before any repeats, so a default run
    of a few minutes exercises each; gaps of 4-9 s leave the cluster time to recover.
    """
    if not kinds:
        return []
    rng = random.Random(f"keos-nemesis/{seed}")
    order = list(kinds)
    rng.shuffle(order)
    events: list[Event] = []
    t = 3.0
    i = 0
    while t < time_limit_s - 6.0:
        kind = order[i] if i < len(order) else rng.choice(list(kinds))
        node = rng.randrange(1, nodes + 1) if kind in ("kill", "pause", "partition") else None
        duration = {
            "kill": rng.uniform(1.0, 3.0),
            "pause": rng.uniform(1.0, 4.0),
            "partition": rng.uniform(2.0, 5.0),
            "drop": 0.0,
            "reset": 0.0,
            "leader": 0.0,
            "client-pause": 0.0,
        }[kind]
        events.append(Event(round(t, 3), kind, node, round(duration, 3)))
        t += duration + rng.uniform(4.0, 9.0)
        i += 1
    return events


def supported_kinds(target: str, nodes: int = 1) -> tuple[str, ...]:
    """The nemesis faults each target declares (its driver offers exactly these)."""
    if target == "kafka":
        kinds = ("kill", "pause", "partition", "reset", "drop", "leader", "client-pause")
        return kinds if nodes > 1 else tuple(k for k in kinds if k != "leader")  # a leader move needs a replica
    if target == "tansu":
        return ProxyNemesis.supported
    return NemesisDriver.supported  # the mock and a user's cluster: client-side faults only


class UnsupportedFault(RuntimeError):
    """A nemesis fault the target's driver does not offer."""


class NemesisDriver:
    """What a target can do for the nemesis; each method returns a sentence for the history."""

    supported: tuple[str, ...] = ("client-pause",)

    def _unsupported(self, kind: str) -> UnsupportedFault:
        """The schedule only holds the kinds in :attr:`supported` (:func:`supported_kinds`); reaching a method for
        another kind is a keos bug, said as such (exit 3), never a silent no-op."""
        return UnsupportedFault(f"{type(self).__name__} does not inject {kind!r} faults (it supports {self.supported})")

    def kill(self, node: int, down_s: float) -> str:
        raise self._unsupported("kill")

    def pause(self, node: int, paused_s: float) -> str:
        raise self._unsupported("pause")

    def leader(self) -> str:
        raise self._unsupported("leader")

    def partition(self, node: int, seconds: float) -> str:
        raise self._unsupported("partition")

    def reset(self) -> str:
        raise self._unsupported("reset")

    def drop(self) -> str:
        raise self._unsupported("drop")

    def heal(self) -> str:
        return "nothing to heal"


class ProxyNemesis(NemesisDriver):
    """Network faults through keos's proxies (any broker that advertises them), plus client pauses."""

    supported = ("partition", "reset", "drop", "client-pause")

    def __init__(self, proxies: Sequence[Any], request_timeout_ms: int) -> None:
        self.proxies = list(proxies)
        self.request_timeout_ms = request_timeout_ms

    def partition(self, node: int, seconds: float) -> str:
        proxy = self.proxies[(node - 1) % len(self.proxies)]
        n = proxy.block(seconds)
        time.sleep(seconds)
        proxy.unblock()
        return f"node {node} cut off through its proxy for {seconds:.1f} s ({n} connection(s) reset)"

    def reset(self) -> str:
        return f"proxies reset {sum(p.reset_all() for p in self.proxies)} connection(s)"

    def drop(self) -> str:
        window = (self.request_timeout_ms + 800) / 1000
        for p in self.proxies:
            p.drop_responses(window)
        time.sleep(window)
        return f"the brokers' answers dropped for {window:.1f} s, then those connections reset"

    def heal(self) -> str:
        for p in self.proxies:
            p.unblock()
        return "partitions lifted"


class Nemesis:
    """Runs :func:`schedule` in a thread, recording each fault; ``client_pause`` is the workload's hook."""

    def __init__(
        self,
        driver: NemesisDriver,
        events: Sequence[Event],
        recorder: Recorder,
        request_client_pause: Callable[[], None],
    ) -> None:
        self.driver = driver
        self.events = list(events)
        self.rec = recorder
        self.request_client_pause = request_client_pause
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="keos-nemesis", daemon=True)
        self.injected: list[str] = []
        self.errors: list[str] = []

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._thread.start()

    def _run(self) -> None:
        for event in self.events:
            wait = self._t0 + event.at_s - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            inv = self.rec.invoke(NEMESIS_PROCESS, "fault", [event.kind, event.node, event.duration_s])
            try:
                said = self._inject(event)
                self.injected.append(event.kind)
                self.rec.complete(inv, "info", said)
            except Exception as exc:  # a fault that could not be injected is recorded, never a verdict
                self.errors.append(f"{event.kind}: {exc}")
                self.rec.complete(inv, "info", f"{event.kind} failed: {type(exc).__name__}: {exc}")

    def _inject(self, e: Event) -> str:
        d = self.driver
        if e.kind == "kill":
            return d.kill(e.node or 1, e.duration_s)
        if e.kind == "pause":
            return d.pause(e.node or 1, e.duration_s)
        if e.kind == "partition":
            return d.partition(e.node or 1, e.duration_s)
        if e.kind == "leader":
            return d.leader()
        if e.kind == "reset":
            return d.reset()
        if e.kind == "drop":
            return d.drop()
        if e.kind == "client-pause":
            self.request_client_pause()
            return "the transactional producer will stall inside its next transaction"
        raise ValueError(f"unknown nemesis fault {e.kind}")

    def stop(self) -> None:
        """Stop injecting, wait for the fault in progress, heal everything (recorded)."""
        self._stop.set()
        self._thread.join(timeout=120)
        inv = self.rec.invoke(NEMESIS_PROCESS, "heal", None)
        try:
            said = self.driver.heal()
        except Exception as exc:
            said = f"heal failed: {type(exc).__name__}: {exc}"
            self.errors.append(said)
        self.rec.complete(inv, "info", said)
