"""One conformance run: start a target, drive the workload, check the history, confirm each anomaly.

``run`` is what ``keos conform --target`` does; ``check_file`` is what
``keos conform --history FILE`` does for a recorded history (keos's JSON or
Jepsen's ``history.edn``).  Both return a :class:`ConformRun`.

Every anomaly is *confirmed* before it is reported, the way keos replays a
model counterexample before showing it: its evidence alone (the operations it
lists, with their invocations) is checked again as a history of its own and
must show the same anomaly.  Evidence that does not stand on its own is a
checker bug and is reported as a disagreement (exit 3), never as a finding.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .anomalies import Analysis, Anomaly, check
from .history import History, HistoryError, load_json
from .targets import TargetInfo, TargetUnavailable
from .workload import WORKLOADS, KeyMap, WorkloadConfig, run_workload

__all__ = ["ConformRun", "KafkaOptions", "NemesisOptions", "check_file", "confirm", "run", "start_target"]


@dataclass
class ConformRun:
    """A checked history and where it came from."""

    target: TargetInfo
    workload: str
    history: History
    analysis: Analysis
    elapsed_s: float
    unconfirmed: list[Anomaly] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)

    def documented(self, a: Anomaly) -> str | None:
        """The target profile's note if ``a`` is one of its documented deviations."""
        return self.target.profile.get(a.kind)


def confirm(history: History, anomaly: Anomaly) -> bool:
    """Whether ``anomaly``'s evidence, checked alone, shows the same kind of anomaly."""
    keep: dict[int, Any] = {}
    for op in anomaly.ops:
        keep[op.index] = op
        inv = history.invocation(op)
        keep[inv.index] = inv
        done = history.completion(op) if op.type == "invoke" else None
        if done is not None:
            keep[done.index] = done
    sub = History([keep[i] for i in sorted(keep)], history.meta)
    return any(a.kind == anomaly.kind for a in check(sub).anomalies)


def _checked(
    target: TargetInfo, workload: str, history: History, started: float, trace: Mapping[str, Any]
) -> ConformRun:
    analysis = check(history)
    unconfirmed = [a for a in analysis.anomalies if not confirm(history, a)]
    return ConformRun(target, workload, history, analysis, time.monotonic() - started, unconfirmed, dict(trace))


@dataclass(frozen=True)
class KafkaOptions:
    """How ``--target kafka`` starts Apache Kafka: the distribution, the node count, where logs go."""

    kafka_home: str | None = None
    nodes: int = 1
    log_dir: str | None = None


@dataclass(frozen=True)
class NemesisOptions:
    """``--nemesis KINDS --time-limit S``: the random nemesis's fault kinds (``all``, ``none``, a list)."""

    kinds: str = "all"
    time_limit_s: float = 120.0


def start_target(
    name: str,
    bootstrap_servers: str | None = None,
    request_timeout_ms: int = 2000,
    kafka: KafkaOptions | None = None,
) -> Any:
    """A started target by name (``librdkafka-mock``, ``tansu``, ``bootstrap``, ``kafka``)."""
    if name == "kafka":
        from .targets.kafka import KafkaTarget

        opts = kafka or KafkaOptions()
        return KafkaTarget(opts.nodes, opts.kafka_home, request_timeout_ms, log_dir=opts.log_dir)
    if name == "librdkafka-mock":
        from .targets.librdkafka_mock import LibrdkafkaMockTarget

        return LibrdkafkaMockTarget(request_timeout_ms=request_timeout_ms)
    if name == "tansu":
        from .targets.tansu import TansuTarget

        return TansuTarget(request_timeout_ms=request_timeout_ms)
    if name == "bootstrap":
        if not bootstrap_servers:
            raise TargetUnavailable("--target bootstrap needs --bootstrap-servers HOST:PORT[,...]")
        from .targets.bootstrap import BootstrapTarget

        return BootstrapTarget(bootstrap_servers)
    raise TargetUnavailable(f"unknown target {name!r} (librdkafka-mock, tansu, bootstrap, kafka)")


def run(
    target_name: str,
    workload: str = "default",
    config: WorkloadConfig | None = None,
    bootstrap_servers: str | None = None,
    scenario: str | None = None,
    kafka: KafkaOptions | None = None,
    nemesis: NemesisOptions | None = None,
    use_target: Any = None,
) -> ConformRun:
    """Start ``target_name``, run ``workload`` (or the one ``scenario`` gives) on it, stop it, check the history.

    ``use_target`` is an already started target of that name to use instead (a test session's broker).
    """
    cfg = config or WorkloadConfig()
    phases: tuple[str, ...]
    producer_overrides: dict[str, Any] = {}
    permitted: dict[str, str] = {}
    if scenario is not None:
        from keos.scenarios import resolve_scenario

        from .scenario_workload import from_scenario

        derived = from_scenario(resolve_scenario(scenario), cfg)
        workload, phases, cfg = derived.name, derived.phases, derived.config
        producer_overrides, permitted = derived.producer_overrides, derived.permitted
    elif workload in WORKLOADS:
        phases = WORKLOADS[workload]
    else:
        raise ValueError(f"unknown workload {workload!r} ({', '.join(WORKLOADS)})")
    nemesis_plan: tuple[Any, ...] | None = None
    if nemesis is not None:
        from .nemesis import NemesisDriver, parse_kinds, schedule, supported_kinds

        nodes = (kafka or KafkaOptions()).nodes if target_name == "kafka" else 1
        kinds = parse_kinds(nemesis.kinds, supported_kinds(target_name, nodes))
        if nemesis.time_limit_s <= 0:
            raise ValueError("--time-limit must be positive")
        events = schedule(cfg.seed, kinds, nemesis.time_limit_s, nodes)
        # the phases run in cycles while the nemesis works; an abandoned transaction per cycle would pin the LSO
        phases = tuple(p for p in phases if p not in ("abandoned", "pause"))
    started = time.monotonic()
    target = use_target or start_target(target_name, bootstrap_servers, cfg.request_timeout_ms, kafka)
    try:
        shared = target_name == "bootstrap" or use_target is not None
        run_id = uuid.uuid4().hex[:8] if shared else "run"
        if shared:  # a shared cluster: this run's topics, transactional ids and group are its own
            cfg = replace(cfg, id_suffix=f"-{run_id}")
        keys = KeyMap(f"keos-conform-{run_id}-in", f"keos-conform-{run_id}-out", cfg.partitions)
        target.create_topic(keys.topic, cfg.partitions)
        target.create_topic(keys.out_topic, cfg.partitions)
        meta: dict[str, Any] = {
            "target": target.info.name,
            "target_version": target.info.version,
            "workload": workload,
            "target_profile": dict(target.info.profile),
        }
        if getattr(target, "claims_kafka_semantics", False):  # judged against Kafka's timing promises
            meta["kafka_semantics"] = True
            meta["abort_interval_ms"] = int(target.abort_interval_ms)
        if getattr(target, "abort_interval_ms", None):
            cfg = replace(cfg, abort_interval_ms=int(target.abort_interval_ms))
        if nemesis is not None:
            driver = getattr(target, "nemesis", None) or NemesisDriver()
            if not set(kinds) <= set(driver.supported):
                raise TargetUnavailable(f"{target_name} offers nemesis faults {driver.supported}, not {kinds}")
            replay = f"--seed {cfg.seed} --nemesis {','.join(kinds) or 'none'} --time-limit {nemesis.time_limit_s:g}"
            nmeta = {
                "seed": cfg.seed,
                "kinds": list(kinds),
                "time_limit_s": nemesis.time_limit_s,
                "schedule": [asdict(e) for e in events],
                "replay": replay,
            }
            nemesis_plan = (driver, events, nmeta, nemesis.time_limit_s)
        history = run_workload(
            target.bootstrap_servers,
            phases,
            cfg,
            target.faults,
            keys,
            meta,
            target.client_overrides,
            producer_overrides,
            nemesis_plan,
        )
        trace = target.broker_trace()
    finally:
        target.stop()
    history.meta["broker_trace"] = trace
    info = target.info
    if permitted:  # the scenario's producer settings give up these guarantees: expected, like a profile entry
        info = replace(info, profile={**info.profile, **permitted})
    return _checked(info, workload, history, started, trace)


def check_file(path: str | Path) -> ConformRun:
    """Check a recorded history: ``.edn`` is Jepsen's format, anything else keos's JSON."""
    started = time.monotonic()
    p = Path(path)
    if p.suffix == ".edn":
        from .edn import read_history

        history = read_history(p)
    else:
        history = load_json(p)
    if not len(history):
        raise HistoryError(f"{p} holds no operation")
    # A history keos recorded keeps its target's profile (documented deviations stay "permitted").
    profile = history.meta.get("target_profile")
    target = TargetInfo(
        "history",
        str(history.meta.get("target_version") or history.meta.get("source") or p.name),
        {str(k): str(v) for k, v in profile.items()} if isinstance(profile, dict) else {},
    )
    return _checked(target, p.name, history, started, {})
