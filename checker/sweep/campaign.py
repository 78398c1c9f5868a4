"""``keos sweep``: randomized failure-injection campaigns fanned out with PySpark.

A sweep runs many seeded random walks of the model (:mod:`checker.sweep.simulate`)
with faults injected by swarm testing, on every cell of a spec: scenario x
protocol variant x fault profile, ``--runs`` runs per cell.  Where exhaustive
search (``keos explore``) proves the small bounded scenarios, a sweep samples
long interleavings cheaply and in parallel.

How it runs
    The spec becomes a Spark DataFrame of run descriptors: ``spark.range``
    over the runs' ordinals, then one ``mapInArrow``
    (:func:`checker.sweep.runs.run_batches`) turns each batch of ordinals into
    descriptors (key, seed, swarm profile;
    :func:`checker.sweep.runs.describe_batch`) and runs them
    (:func:`checker.sweep.runs.execute_batch`): each executor runs the walk,
    checks the ``always`` invariants at every step, and
    minimises a violation (ddmin, replaying on the model) into a trace.  Only
    the DataFrame API is used, so the same code runs on classic Spark
    (``local[*]``, ``spark://host:port``) and on Spark Connect (``sc://...``).

Determinism
    A run's seed derives from the sweep seed and the run's key with blake2b,
    and a run is a pure function of its descriptor, so the results do not
    depend on the partitioning, the number of executors or task retries.  The
    tests compare ``local[*]`` against a standalone cluster and several
    partitionings row for row.

Output (``--out``, default ``keos-out/sweep``)
    ``sweep.json`` (the spec), ``runs/part-NNNNN.parquet`` (one file per chunk
    of runs: descriptor, steps, violation, signature, minimal trace's
    actions, fault and event counters, sometimes-properties reached),
    ``traces/*.json`` (one replayed minimal trace per distinct signature, in
    the common trace format) and ``summary.json``.  Each chunk is collected
    to the driver and written to a temporary file that is then renamed, so
    a chunk file is complete or absent; ``--resume`` skips chunks already on
    disk and a failure later in the sweep never loses them.

Verdicts and exit codes
    Violations are deduplicated by signature (invariant + shape of the minimal
    trace) and counted.  Exit 0 when no (non-permitted) invariant is violated,
    1 when one is; with ``--mutants`` (every weakened variant, each on the
    scenarios its :class:`model.variants.Variant` names) exit 0 only if every
    weakened variant is caught.  Bad flags or specs: one line, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from keos.checker.results import EngineResult, Verdict, judge
from keos.checker.sweep.archive import ARCHIVE_GROUP
from keos.checker.sweep.runs import (
    RESULT_SCHEMA,
    Cell,
    SweepSpec,
    describe_batch,
    execute_batch,
    run_batches,
    run_ordinals,
)
from keos.checker.sweep.simulate import PROFILES, model_fault_kinds
from keos.checker.trace import Trace, make_trace
from keos.model.interface import ModelError

__all__ = [
    "DEFAULT_MASTER",
    "SweepError",
    "SweepResult",
    "add_sweep_arguments",
    "plan_sweep",
    "py4j_interrupts",
    "run_gate_sweep",
    "run_sweep",
    "run_sweep_command",
    "run_sweep_gate_check",
    "spark_session",
]

DEFAULT_MASTER = "local[*]"
#: Runs per chunk (one Spark job, one Parquet file, the unit of ``--resume``).  Small
#: enough that the progress bar moves every few seconds and a failure loses little;
#: large enough that a job's fixed cost (~0.1 s on local[*]) stays a few percent.
DEFAULT_CHUNK_RUNS = 2_000
#: Runs per Spark task: ordinals are contiguous per cell and cells differ in cost
#: (a transactions walk costs ~3x an idempotence walk), so many small tasks balance
#: the cores and report progress within a chunk.
TASK_RUNS = 250
_MASTER = re.compile(r"^(local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|(spark|sc|k8s|mesos)://\S+|yarn)$")
_LOG4J = """\
rootLogger.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


class SweepError(ModelError):
    """A bad sweep spec, flag or output directory (one line, exit 2)."""


# -- planning ---------------------------------------------------------------------------------


def plan_sweep(
    scenarios: Sequence[str] = (),
    variants: Sequence[str] = (),
    profiles: Sequence[str] = (),
    mutants: bool = False,
    runs: int = 1000,
    steps: int = 50,
    seed: int = 0,
    chunk_runs: int = 0,
    archive_group: int = ARCHIVE_GROUP,
) -> SweepSpec:
    """The spec of a sweep; raises :class:`SweepError` on bad input.

    Without ``scenarios`` the default scenarios are swept; without
    ``variants`` each scenario runs under its own variant.  ``mutants`` sweeps
    every weakened variant (or those in ``variants``) on the scenarios it
    names.  ``archive_group`` swarm runs of a cell share a Go-Explore archive
    (:mod:`checker.sweep.archive`; 0: every run independent).
    """
    from keos.model.variants import VARIANTS
    from keos.scenarios import build_model, builtin_scenarios, resolve_scenario

    if runs < 1:
        raise SweepError(f"--runs must be at least 1, got {runs}")
    if steps < 1:
        raise SweepError(f"--steps must be at least 1, got {steps}")
    if archive_group < 0:
        raise SweepError(f"--archive-group must be at least 0 (0 = no archive), got {archive_group}")
    if chunk_runs < 0:
        raise SweepError(f"--chunk-runs must be at least 1 (0 = default), got {chunk_runs}")
    chunk_runs = chunk_runs or DEFAULT_CHUNK_RUNS
    profiles = tuple(dict.fromkeys(profiles or ("swarm",)))
    for p in profiles:
        if p not in PROFILES:
            raise SweepError(f"unknown fault profile {p!r} (known: {', '.join(PROFILES)})")
    for v in variants:
        if v not in VARIANTS:
            raise SweepError(f"unknown variant {v!r} (known: {', '.join(sorted(VARIANTS))})")
    pairs: list[tuple[str, str | None]] = []
    if mutants:
        if scenarios:
            raise SweepError("--mutants sweeps each weakened variant on its own scenarios; drop --scenario")
        chosen = [VARIANTS[v] for v in variants] if variants else [v for v in VARIANTS.values() if v.weakened]
        for mutant in chosen:
            if not mutant.weakened:
                raise SweepError(f"--mutants: variant {mutant.name!r} is not a weakened variant")
            pairs.extend((s, mutant.name) for s in mutant.scenarios)
    else:
        refs = list(scenarios) or sorted(name for name, s in builtin_scenarios().items() if s.default)
        for ref in refs:
            pairs.extend([(ref, v) for v in variants] if variants else [(ref, None)])
    builtins = builtin_scenarios()
    cells: list[Cell] = []
    seen: set[str] = set()
    from keos.scenarios.variant_scope import variant_applies

    for ref, variant in dict.fromkeys(pairs):
        scenario = resolve_scenario(ref)
        if variant and not scenarios and not mutants and not variant_applies(VARIANTS[variant], scenario.model)[0]:
            continue  # a default scenario of a model the variant does not change (asked for explicitly: an error)
        toml = "" if ref in builtins else Path(ref).read_text(encoding="utf-8")
        vname = variant or scenario.variant
        model = build_model(scenario, vname)
        for profile in profiles:
            cell = Cell(ref, scenario.name, toml, vname, profile, model_fault_kinds(model), scenario.permitted)
            if cell.key in seen:
                raise SweepError(f"two scenarios named {scenario.name!r} in one sweep")
            seen.add(cell.key)
            cells.append(cell)
    if not cells:
        raise SweepError(f"no default scenario has a model that variant(s) {', '.join(variants)} apply to")
    extra: dict[str, Any] = {"mutants": list(dict.fromkeys(c.variant for c in cells))} if mutants else {}
    return SweepSpec(tuple(cells), runs, steps, seed, chunk_runs, extra=extra, archive_group=archive_group)


# -- results ----------------------------------------------------------------------------------


@dataclass
class SignatureSummary:
    """One distinct violation: its signature, how often it was found, its trace."""

    signature: str
    scenario: str
    variant: str
    invariant: str
    permitted: bool
    count: int
    length: int
    shape: str
    run_id: str
    seed: int
    trace_path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON view."""
        return {
            "signature": self.signature,
            "scenario": self.scenario,
            "variant": self.variant,
            "invariant": self.invariant,
            "permitted": self.permitted,
            "count": self.count,
            "length": self.length,
            "shape": self.shape,
            "first_run": self.run_id,
            "seed": self.seed,
            "trace": str(self.trace_path) if self.trace_path else None,
        }


@dataclass
class CellSummary:
    """Totals of one (scenario, variant) over its profiles."""

    scenario: str
    variant: str
    runs: int = 0
    steps: int = 0
    violating_runs: int = 0
    permitted_runs: int = 0
    quiescent_runs: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    coverage: Counter[str] = field(default_factory=Counter)
    reached: set[str] = field(default_factory=set)
    result: EngineResult | None = None
    suspected: dict[str, int] = field(default_factory=dict)


@dataclass
class SweepResult:
    """What a sweep found, over all its chunks (resumed ones included)."""

    spec: SweepSpec
    out: Path
    master: str
    elapsed_s: float
    executed_runs: int
    executed_steps: int
    chunks_resumed: int
    cells: list[CellSummary]
    signatures: list[SignatureSummary]
    #: Why the sweep stopped before its last chunk (``--cpu-budget`` spent), ``None`` when it ran every run.
    partial: str | None = None

    @property
    def runs(self) -> int:
        """All runs of the sweep."""
        return sum(c.runs for c in self.cells)

    @property
    def steps(self) -> int:
        """All steps of the sweep."""
        return sum(c.steps for c in self.cells)

    @property
    def violating_runs(self) -> int:
        """Runs that violated an invariant (permitted ones included)."""
        return sum(c.violating_runs for c in self.cells)

    def mutants(self) -> list[dict[str, Any]]:
        """For a ``--mutants`` sweep: whether each weakened variant was caught."""
        from keos.model.variants import VARIANTS

        out = []
        for name in self.spec.extra.get("mutants", []):
            sigs = [s for s in self.signatures if s.variant == name and not s.permitted]
            found = sorted({s.invariant for s in sigs})
            expected = VARIANTS[name].breaks
            out.append(
                {
                    "variant": name,
                    "scenarios": sorted({c.scenario for c in self.cells if c.variant == name}),
                    "caught": bool(sigs),
                    "invariants": found,
                    "expected": list(expected),
                    "expected_caught": [i for i in expected if i in found],
                    "violating_runs": sum(s.count for s in sigs),
                    "signatures": len(sigs),
                }
            )
        return out

    @property
    def exit_code(self) -> int:
        """0 = all hold (or, for mutants, every mutant caught); 1 otherwise; 4 when the runs that ran hold but
        the CPU budget stopped the sweep first (partial: never a pass)."""
        if "mutants" in self.spec.extra:
            if all(m["caught"] for m in self.mutants()):
                return 0
            return 4 if self.partial else 1
        if any(not s.permitted for s in self.signatures):
            return 1
        return 4 if self.partial else 0

    def to_json(self) -> dict[str, Any]:
        """Machine-readable summary (``--json``, ``summary.json``)."""
        rate = self.elapsed_s if self.elapsed_s > 0 else None
        data: dict[str, Any] = {
            "engine": "sweep",
            "seed": self.spec.seed,
            "master": self.master,
            "out": str(self.out),
            "runs_per_cell": self.spec.runs,
            "max_steps": self.spec.steps,
            "runs": self.runs,
            "steps": self.steps,
            "violating_runs": self.violating_runs,
            "distinct_violations": len(self.signatures),
            "executed_runs": self.executed_runs,
            "chunks": self.spec.chunks,
            "chunks_resumed": self.chunks_resumed,
            "elapsed_s": round(self.elapsed_s, 3),
            "runs_per_s": round(self.executed_runs / rate) if rate else None,
            "steps_per_s": round(self.executed_steps / rate) if rate else None,
            "partial": self.partial,
            "violations": [s.to_json() for s in self.signatures],
            "cells": [
                {
                    "scenario": c.scenario,
                    "variant": c.variant,
                    "runs": c.runs,
                    "steps": c.steps,
                    "violating_runs": c.violating_runs,
                    "permitted_runs": c.permitted_runs,
                    "quiescent_runs": c.quiescent_runs,
                    "faults": dict(sorted(c.faults.items())),
                    "result": c.result.to_json() if c.result else None,
                }
                for c in self.cells
            ],
            "exit_code": self.exit_code,
        }
        if "mutants" in self.spec.extra:
            data["mutants"] = self.mutants()
        return data


# -- Spark ------------------------------------------------------------------------------------


def spark_session(master: str = DEFAULT_MASTER) -> Any:
    """A Spark session for ``master`` (``sc://`` = Spark Connect), quiet and tuned for small jobs.

    Classic masters (``local[*]``, ``spark://``): executors run this
    interpreter (``spark.pyspark.python``), so they import this installation
    of keos; an active classic session with another master is stopped first
    (one SparkContext per process).

    Spark Connect (``sc://host:port``): a gRPC client session of its own,
    one per URL, built with the Connect builder directly so that the process
    does not switch to "Connect mode" (pyspark's generic builder sets
    ``SPARK_CONNECT_MODE_ENABLED``, after which it refuses to build a classic
    session) -- a sweep on ``sc://`` followed by one on ``local[*]`` works.
    The server's own configuration decides its executors' Python (start it
    with ``PYSPARK_PYTHON`` pointing at an interpreter with keos installed).
    """
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    if master.startswith("sc://"):
        return _connect_session(master)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    active_sc = SparkContext._active_spark_context
    if active_sc is not None and active_sc.master != master:
        active_sc.stop()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    log4j = Path(tempfile.gettempdir()) / "keos-sweep-log4j2.properties"
    if not log4j.exists() or log4j.read_text(encoding="utf-8") != _LOG4J:
        log4j.write_text(_LOG4J, encoding="utf-8")
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    builder = (
        SparkSession.builder.master(master)
        .appName("keos-sweep")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.python.worker.reuse", "true")
    )
    if master.startswith("local") or any(h in master for h in ("//127.0.0.1:", "//localhost:")):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    import signal
    import threading

    keos_handler = signal.getsignal(signal.SIGINT)
    try:
        spark = builder.getOrCreate()
    except BaseException:
        # Ctrl-C (or a failure) while the JVM starts: pyspark has not handed us its process yet, and the JVM,
        # which ignores SIGINT, would outlive keos holding its stdout and stderr.
        _stop_child_jvms()
        raise
    # SparkContext installs its own SIGINT handler, which calls the JVM (cancelAllJobs) over the py4j
    # connection the main thread is blocked on: Ctrl-C then hung, and printed py4j tracebacks.  keos's own
    # handling (KeyboardInterrupt, partial results, exit 4) is put back; the JVM ends with the process.
    if threading.current_thread() is threading.main_thread() and keos_handler is not None:
        signal.signal(signal.SIGINT, keos_handler)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def py4j_interrupts() -> Iterator[None]:
    """Ctrl-C while the driver waits on the JVM is an interrupt, whichever call it lands in.

    py4j catches a ``KeyboardInterrupt`` raised inside its socket call and raises ``Py4JNetworkError`` ("Answer
    from Java side is empty") or another ``Py4JError`` in its place; whether the signal lands there or in keos's
    own code is a matter of timing (a loaded machine moves it), and keos then reported an internal error (exit
    3) for a user's Ctrl-C.  Within this block a SIGINT is remembered before it is raised, and a py4j error
    raised after one is re-raised as the ``KeyboardInterrupt`` it was (partial results, exit 4).  A py4j error
    with no interrupt behind it is still an error.  Only the main thread can set signal handlers; elsewhere the
    block changes nothing.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.getsignal(signal.SIGINT)

    def remember(signum: int, frame: Any) -> None:
        received.append(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, remember)
    try:
        yield
    except Exception as exc:
        if received and type(exc).__module__.split(".", 1)[0] == "py4j":
            raise KeyboardInterrupt from exc
        raise
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_child_jvms() -> None:
    """Terminate this process's child JVMs (Linux ``/proc``; elsewhere nothing is done)."""
    import signal

    me = str(os.getpid())
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            parent = stat.rsplit(")", 1)[1].split()[1]
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if parent == me and b"java" in cmdline.split(b"\0", 1)[0]:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGTERM)


_CONNECT_SESSIONS: dict[str, Any] = {}


def _connect_session(url: str) -> Any:
    """The Spark Connect session for ``url`` (reused while it is not stopped)."""
    try:
        from pyspark.sql.connect.session import SparkSession as ConnectSession
    except ImportError as exc:  # grpcio & co. are the pyspark[connect] extra
        raise SweepError(f"--master {url}: Spark Connect needs pyspark[connect] ({exc})") from None
    session = _CONNECT_SESSIONS.get(url)
    if session is None or session.is_stopped:
        session = ConnectSession.builder.remote(url).create()
        _CONNECT_SESSIONS[url] = session
    return session


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _default_parallelism(spark: Any) -> int:
    """Cores Spark offers (classic sessions); Spark Connect does not say, assume 4."""
    if _is_connect(spark):
        return 4
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:
        return 4


def _task_count(spark: Any, runs: int, partitions: int, group: int = 0) -> int:
    """Spark partitions for a chunk of ``runs``: ``--partitions`` if given, else
    ``max(2 x cores, runs / TASK_RUNS)``, but no more than the chunk's archive groups of ``group`` runs
    (a task that starts inside a group reruns the group's earlier runs); never more than the runs."""
    if partitions <= 0:
        partitions = max(2 * _default_parallelism(spark), -(-runs // TASK_RUNS))
        if group:
            partitions = min(partitions, -(-runs // group))
    return max(1, min(partitions, runs))


def _spark_chunk(
    spark: Any,
    spec_json: str,
    start: int,
    end: int,
    partitions: int,
    on_tasks: Callable[[int, int], None] | None = None,
) -> pa.Table:
    """Run ordinals ``[start, end)`` on Spark; the results as an Arrow table.

    ``partitions`` Spark tasks each describe and run a contiguous slice of
    ordinals (0 = :func:`_task_count`).  ``on_tasks(done, total)`` is called
    from a polling thread as the tasks finish (classic sessions: Spark's
    status tracker, by job group; Spark Connect: not called).  Results do not
    depend on the partitioning: a run is a pure function of its ordinal.
    """
    # Spark types from the Arrow schemas on the client side: no JVM round trip, so the same
    # code serves classic sessions and Spark Connect (which has no SparkContext to parse DDL).
    from pyspark.sql.pandas.types import from_arrow_schema

    tasks = _task_count(spark, end - start, partitions, json.loads(spec_json).get("archive_group", 0))
    frame = spark.range(start, end, 1, tasks).mapInArrow(
        functools.partial(run_batches, spec_json), from_arrow_schema(RESULT_SCHEMA)
    )
    if on_tasks is None or _is_connect(spark):
        return frame.toArrow()
    return _with_task_progress(spark, frame, tasks, on_tasks)


def _with_task_progress(spark: Any, frame: Any, tasks: int, on_tasks: Callable[[int, int], None]) -> pa.Table:
    """``frame.toArrow()`` while a thread reports finished tasks of its job (status tracker)."""
    import threading
    import uuid

    sc = spark.sparkContext
    group = f"keos-sweep-{uuid.uuid4().hex}"
    tracker = sc.statusTracker()
    finished = threading.Event()

    def poll() -> None:
        last = -1
        while not finished.wait(0.2):
            try:
                done = 0
                for job in tracker.getJobIdsForGroup(group):
                    info = tracker.getJobInfo(job)
                    for stage in info.stageIds if info else ():
                        st = tracker.getStageInfo(stage)
                        done += st.numCompletedTasks if st else 0
            except Exception:  # the JVM is going away: progress is best effort
                return
            done = min(done, tasks)
            if done != last:
                last = done
                on_tasks(done, tasks)

    sc.setJobGroup(group, "keos sweep chunk", interruptOnCancel=True)
    thread = threading.Thread(target=poll, name="keos-sweep-progress", daemon=True)
    thread.start()
    try:
        return frame.toArrow()
    finally:
        finished.set()
        thread.join()
        sc.setLocalProperty("spark.jobGroup.id", None)


def _local_chunk(spec_json: str, start: int, end: int) -> pa.Table:
    """The same chunk in this Python process, without Spark (the overhead baseline)."""
    return pa.Table.from_batches([execute_batch(describe_batch(spec_json, run_ordinals(start, end)))], RESULT_SCHEMA)


def _conform(table: pa.Table) -> pa.Table:
    """Sort by run and cast to :data:`RESULT_SCHEMA` (Spark returns its own field nullability)."""
    table = table.select(RESULT_SCHEMA.names).cast(RESULT_SCHEMA)
    return table.sort_by("run")


# -- the sweep --------------------------------------------------------------------------------


def _chunk_path(out: Path, k: int) -> Path:
    return out / "runs" / f"part-{k:05d}.parquet"


def _prepare_out(out: Path, spec: SweepSpec, resume: bool) -> None:
    manifest = out / "sweep.json"
    spec_json = json.loads(json.dumps(spec.to_json()))
    if resume and manifest.exists():
        try:
            old = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SweepError(f"{manifest}: cannot read the sweep manifest ({exc})") from None
        if old.get("spec") != spec_json:
            raise SweepError(f"{out} holds a different sweep; resume it with the same flags or use another --out")
        return
    for sub in ("runs", "traces"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    for name in ("summary.json", "sweep.json"):
        (out / name).unlink(missing_ok=True)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    tmp = manifest.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"spec": spec_json}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, manifest)


def _write_chunk(out: Path, k: int, table: pa.Table) -> None:
    path = _chunk_path(out, k)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _in_chunk(
    progress: Callable[[int, int], None] | None, done_before: int, runs: int, total: int
) -> Callable[[int, int], None] | None:
    """Progress within a chunk: finished tasks scaled to runs (the tasks hold equal slices)."""
    if progress is None:
        return None

    def on_tasks(done: int, tasks: int) -> None:
        progress(done_before + runs * done // tasks, total)

    return on_tasks


def run_sweep(
    spec: SweepSpec,
    out: Path,
    master: str = DEFAULT_MASTER,
    partitions: int = 0,
    resume: bool = False,
    local_python: bool = False,
    progress: Callable[[int, int], None] | None = None,
    spark: Any = None,
    cpu_budget_s: float = 0.0,
    stop_on_first: bool = False,
) -> SweepResult:
    """Run (or resume) a sweep and aggregate everything in ``out``.

    ``progress(done_runs, total_runs)`` is called after each chunk and, on
    classic Spark sessions, as the tasks of a chunk finish.  ``partitions``
    is the number of Spark tasks per chunk (0 = ``max(2 x cores, runs /
    TASK_RUNS)``).  With
    ``local_python`` the runs execute in this process without Spark.  Spark
    errors propagate after the chunks already finished are on disk.  ``cpu_budget_s`` (with ``local_python``;
    0 = none) is the CPU time this process may spend on runs: checked before each chunk, so a chunk that starts
    finishes, and the chunks left are not run -- the result is then *partial* (exit 4, never a pass).
    ``stop_on_first``: no chunk starts after one that found a non-permitted violation (exit 1 either way).
    """
    if not local_python and not _MASTER.match(master):
        raise SweepError(f"bad --master {master!r} (local[*], local[N], spark://host:port, sc://host:port, ...)")
    out.mkdir(parents=True, exist_ok=True)
    _prepare_out(out, spec, resume)
    spec_json = json.dumps(spec.to_json(), sort_keys=True)
    start_time = time.perf_counter()
    executed_runs = executed_steps = resumed = 0
    todo = [k for k in range(spec.chunks) if not _chunk_path(out, k).exists()]
    resumed = spec.chunks - len(todo)
    done_runs = sum(spec.chunk_range(k)[1] - spec.chunk_range(k)[0] for k in range(spec.chunks) if k not in todo)
    if progress is not None:
        progress(done_runs, spec.total_runs)
    if todo and not local_python and spark is None:
        with py4j_interrupts():
            spark = spark_session(master)
    if cpu_budget_s and not local_python:
        raise SweepError("--cpu-budget counts this process's CPU time: it needs --local-python (or --gate)")
    cpu_start = time.process_time()
    partial: str | None = None
    for n, k in enumerate(todo):
        if cpu_budget_s and time.process_time() - cpu_start >= cpu_budget_s:
            partial = (f"CPU budget of {cpu_budget_s:g} s spent after {n} of {len(todo)} chunk(s): "
                       f"{spec.total_runs - done_runs:,} of {spec.total_runs:,} runs not run")
            break
        start, end = spec.chunk_range(k)
        if local_python:
            table = _local_chunk(spec_json, start, end)
        else:
            with py4j_interrupts():
                table = _spark_chunk(
                    spark, spec_json, start, end, partitions,
                    _in_chunk(progress, done_runs, end - start, spec.total_runs),
                )
        table = _conform(table)
        if table.num_rows != end - start:
            raise RuntimeError(f"chunk {k}: expected {end - start} runs, Spark returned {table.num_rows}")
        _write_chunk(out, k, table)
        executed_runs += table.num_rows
        executed_steps += int(pc.sum(table.column("steps")).as_py() or 0)
        done_runs += table.num_rows
        if progress is not None:
            progress(done_runs, spec.total_runs)
        if stop_on_first and pc.any(pc.and_(pc.is_valid(table.column("violation")),
                                            pc.invert(table.column("permitted")))).as_py():
            break
    elapsed = time.perf_counter() - start_time
    cells, signatures = _aggregate(spec, out)
    result = SweepResult(
        spec=spec,
        out=out,
        master="python" if local_python else master,
        elapsed_s=elapsed,
        executed_runs=executed_runs,
        executed_steps=executed_steps,
        chunks_resumed=resumed,
        cells=cells,
        signatures=signatures,
        partial=partial,
    )
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / "summary.json")
    return result


def run_gate_sweep(out: Path, seed: int | None = None, cpu_budget_s: float | None = None,
                   stop_on_first: bool = True) -> SweepResult:
    """``keos sweep --gate`` (:mod:`checker.sweep.gate`) in this process into ``out``."""
    from keos.checker.sweep.gate import GATE_SWEEP, plan_gate_sweep

    budget = GATE_SWEEP.cpu_budget_s if cpu_budget_s is None else cpu_budget_s
    return run_sweep(plan_gate_sweep(seed=seed), out, local_python=True, cpu_budget_s=budget,
                     stop_on_first=stop_on_first)


def run_sweep_gate_check(seed: int, cpu_budget_s: float = 0.0) -> tuple[tuple[str, ...], str, str | None]:
    """``@sweep`` as :mod:`checker.reach.gate_checks` runs it: (the invariants violated, detail, crashed).

    A violation is what fails the gate (exit 1); the sweep stops at the first cell that finds one, as the
    gate's ``keos check --stop-on-first`` does.  ``cpu_budget_s`` 0: no budget of its own -- ``keos coverage``
    traces every line (~3x the CPU) and ``keos mutate`` bounds each mutant's process itself (a timeout, not a
    kill); with a budget, a sweep stopped by it is neither a pass nor a kill (``crashed`` says it was partial).
    """
    with tempfile.TemporaryDirectory(prefix="keos-gate-sweep-") as out:
        result = run_gate_sweep(Path(out), seed=seed, cpu_budget_s=cpu_budget_s, stop_on_first=True)
        bad = [s for s in result.signatures if not s.permitted]
        failed = tuple(dict.fromkeys(s.invariant for s in bad))
        best = min(bad, key=lambda s: s.length, default=None)
        detail = "" if best is None else (f"{best.invariant} in {best.length} steps on {Path(best.scenario).stem} "
                                          f"({best.count} run(s)): {best.shape}")[:300]
        crashed = None if failed or result.partial is None else f"partial: {result.partial}"
    return failed, detail, crashed


def read_runs(out: Path) -> pa.Table:
    """All run rows written in ``out`` so far, sorted by run."""
    files = sorted((out / "runs").glob("part-*.parquet"))
    if not files:
        return RESULT_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(f, schema=RESULT_SCHEMA) for f in files]).sort_by("run")


def _iter_rows(out: Path, columns: list[str]) -> Iterator[dict[str, Any]]:
    """Run rows chunk by chunk, in run order (one chunk in memory at a time)."""
    for f in sorted((out / "runs").glob("part-*.parquet")):
        table = pq.read_table(f, columns=columns, schema=RESULT_SCHEMA).sort_by("run")
        for batch in table.to_batches(max_chunksize=4096):
            yield from batch.to_pylist()


def _aggregate(spec: SweepSpec, out: Path) -> tuple[list[CellSummary], list[SignatureSummary]]:
    """Totals per (scenario, variant), distinct violations, replayed representative traces."""
    from keos.scenarios import build_model, parse_scenario, resolve_scenario

    cells: dict[tuple[str, str], CellSummary] = {}
    scenario_of: dict[str, Any] = {}
    for c in spec.cells:
        cells.setdefault((c.scenario, c.variant), CellSummary(c.scenario, c.variant))
        if c.scenario not in scenario_of:
            import tomllib

            scenario_of[c.scenario] = (
                parse_scenario(tomllib.loads(c.toml), c.scenario) if c.toml else resolve_scenario(c.scenario)
            )
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    columns = [
        "run",
        "run_id",
        "scenario",
        "variant",
        "seed",
        "steps",
        "quiescent",
        "violation",
        "permitted",
        "signature",
        "shape",
        "trace_length",
        "trace_actions",
        "faults",
        "events",
        "reached",
        "loop_start",
        "suspected",
    ]
    for row in _iter_rows(out, columns):
        cell = cells[(row["scenario"], row["variant"])]
        cell.runs += 1
        cell.steps += row["steps"]
        cell.quiescent_runs += bool(row["quiescent"])
        cell.faults.update(dict(row["faults"]))
        cell.coverage.update(dict(row["events"]))
        cell.reached.update(row["reached"])
        for name in row.get("suspected") or ():
            cell.suspected[name] = cell.suspected.get(name, 0) + 1
        if row["violation"] is None:
            continue
        cell.violating_runs += 1
        cell.permitted_runs += bool(row["permitted"])
        key = (row["scenario"], row["variant"], row["signature"])
        group = groups.get(key)
        if group is None:
            groups[key] = {"first": row, "count": 1}
        else:
            group["count"] += 1
    trace_dir = out / "traces"
    signatures: list[SignatureSummary] = []
    best: dict[tuple[str, str], dict[str, Trace]] = defaultdict(dict)
    paths: dict[tuple[str, str], dict[str, Path]] = defaultdict(dict)
    models: dict[tuple[str, str], Any] = {}
    for (scenario, variant, sig), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[1]["count"])):
        row = group["first"]
        model = models.get((scenario, variant))
        if model is None:
            model = models[(scenario, variant)] = build_model(scenario_of[scenario], variant)
        prop = next(p for p in model.properties() if p.name == row["violation"])
        actions = [model.action_from_json(a) for a in json.loads(row["trace_actions"])]
        trace = make_trace(
            model,
            prop,
            actions,
            "sweep",
            scenario,
            variant,
            seed=row["seed"],
            permitted=bool(row["permitted"]),
            loop_start=row.get("loop_start"),
        )
        name = f"{scenario_of[scenario].name}.{variant}.{prop.name}.{sig}.json"
        path = trace.write(model, trace_dir / name)
        signatures.append(
            SignatureSummary(
                signature=sig,
                scenario=scenario,
                variant=variant,
                invariant=prop.name,
                permitted=bool(row["permitted"]),
                count=group["count"],
                length=len(actions),
                shape=row["shape"],
                run_id=row["run_id"],
                seed=row["seed"],
                trace_path=path,
            )
        )
        current = best[(scenario, variant)].get(prop.name)
        if current is None or len(trace.actions) < len(current.actions):
            best[(scenario, variant)][prop.name] = trace
            paths[(scenario, variant)][prop.name] = path
    for (scenario, variant), cell in cells.items():
        model = models.get((scenario, variant)) or build_model(scenario_of[scenario], variant)
        traces = best.get((scenario, variant), {})
        props = list(model.properties())
        cell.result = EngineResult(
            engine="sweep",
            scenario=scenario,
            variant=variant,
            properties=judge(props, traces, cell.reached, scenario_of[scenario].permitted, liveness=True),
            stats={
                "runs": cell.runs,
                "steps": cell.steps,
                "violating_runs": cell.violating_runs,
                "suspected_livelock_runs": dict(cell.suspected),
            },
            coverage=dict(cell.coverage),
            complete=False,
            seed=spec.seed,
        )
        for pr in cell.result.properties:
            if pr.verdict is Verdict.HOLDS and pr.name in cell.suspected:
                pr.verdict = Verdict.UNTESTED
                pr.detail = (
                    f"suspected livelock in {cell.suspected[pr.name]} run(s): the fair quiescence phase did "
                    "not settle and no fair cycle repeated (not confirmed)"
                )
            if pr.name in paths.get((scenario, variant), {}):
                pr.trace_path = paths[(scenario, variant)][pr.name]
    return list(cells.values()), signatures


# -- CLI --------------------------------------------------------------------------------------


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``keos sweep``."""
    parser.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME|FILE",
        help="scenario to sweep (repeatable; default: every default scenario)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="protocol variant (repeatable; default: each scenario's own)",
    )
    parser.add_argument(
        "--profile", action="append", default=[], choices=PROFILES, help="fault profile (repeatable; default: swarm)"
    )
    parser.add_argument(
        "--mutants",
        action="store_true",
        help="sweep every weakened variant on its scenarios; exit 0 only if each is caught",
    )
    parser.add_argument(
        "--gate",
        action="store_true",
        help="the gate's randomized reach check: the deep configurations of scenarios/sweep/ under their own "
        "variants (with --variant or --mutants: under those), in this process, fixed seed and runs, bounded by "
        "--cpu-budget (checker/sweep/gate.py)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs PER CELL, i.e. per scenario x variant x profile (default 1000; --gate: its own); the sweep runs "
        "--runs x cells in all, and a run's seed depends only on its cell and index, so adding "
        "cells never changes the others' runs",
    )
    parser.add_argument("--steps", type=int, default=None, help="step budget of each run (default 50; --gate: its own)")
    parser.add_argument(
        "--cpu-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="CPU seconds this process may spend on runs (--local-python or --gate; checked before each chunk); "
        "when spent the rest is not run and the sweep is partial, exit 4 (default: none; --gate: its own)",
    )
    parser.add_argument("--seed", type=int, default=0, help="sweep seed (default 0)")
    parser.add_argument(
        "--archive-group",
        type=int,
        default=ARCHIVE_GROUP,
        metavar="N",
        help=f"consecutive swarm runs of a cell that share a Go-Explore archive of the cells they reached, half "
        f"of them starting from a rare one (default {ARCHIVE_GROUP}; 0: every run independent)",
    )
    parser.add_argument(
        "--master",
        default=DEFAULT_MASTER,
        help="Spark master: local[*] (default), local[N], spark://host:port, sc://host:port",
    )
    parser.add_argument("--out", type=Path, default=Path("keos-out/sweep"), help="output directory")
    parser.add_argument(
        "--partitions",
        type=int,
        default=0,
        help=f"Spark tasks per chunk (default: max(2 x cores, chunk runs / {TASK_RUNS}))",
    )
    parser.add_argument(
        "--chunk-runs",
        type=int,
        default=0,
        help=f"runs per chunk: one Spark job, one Parquet file, the unit of --resume (default {DEFAULT_CHUNK_RUNS})",
    )
    parser.add_argument("--resume", action="store_true", help="skip chunks already written in --out")
    parser.add_argument(
        "--stop-on-first",
        action="store_true",
        help="start no chunk after one that found a non-permitted violation (fail fast; exit 1 either way)",
    )
    parser.add_argument(
        "--local-python",
        action="store_true",
        help="run in this Python process without Spark (baseline for Spark's overhead)",
    )
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary")


def run_sweep_command(args: argparse.Namespace) -> int:
    """``keos sweep``: plan, run with a progress bar, print the summary; the exit code."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    if args.partitions < 0:
        print("keos: error: --partitions must be >= 0", file=sys.stderr)
        return 2
    budget = args.cpu_budget
    try:
        if budget is not None and budget < 0:
            raise SweepError(f"--cpu-budget must be at least 0 (0 = none), got {budget:g}")
        if args.gate:
            from keos.checker.sweep.gate import GATE_SWEEP, plan_gate_sweep

            if args.scenario or args.profile:
                raise SweepError("--gate sweeps the configurations of scenarios/sweep/ under the swarm profile; "
                                 "drop --scenario and --profile")
            spec = plan_gate_sweep(args.seed, args.runs, args.steps, args.variant, args.mutants)
            args.local_python = True
            budget = GATE_SWEEP.cpu_budget_s if budget is None else budget
        else:
            spec = plan_sweep(
                args.scenario,
                args.variant,
                args.profile,
                args.mutants,
                1000 if args.runs is None else args.runs,
                50 if args.steps is None else args.steps,
                args.seed,
                args.chunk_runs,
                args.archive_group,
            )
        if budget and not args.local_python:
            raise SweepError("--cpu-budget counts this process's CPU time: give --local-python (or --gate)")
        if not args.local_python and not _MASTER.match(args.master):
            raise SweepError(f"bad --master {args.master!r} (local[*], local[N], spark://host:port, sc://host:port)")
    except (ModelError, OSError) as exc:
        print(f"keos: error: {exc}", file=sys.stderr)
        return 2
    where = "python" if args.local_python else args.master
    columns = (
        TextColumn(f"sweep on {where}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("sweep", total=spec.total_runs)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            result = run_sweep(spec, args.out, args.master, args.partitions, args.resume, args.local_python, progress,
                               cpu_budget_s=budget or 0.0, stop_on_first=args.stop_on_first)
        except ModelError as exc:
            print(f"keos: error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # Spark or the JVM failed: earlier chunks are safe on disk
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            print(
                f"keos: error: sweep failed ({type(exc).__name__}: {first[:300]}); "
                f"finished chunks are kept in {args.out}, rerun with --resume",
                file=sys.stderr,
            )
            return 2
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print_summary(result, Console())
    return result.exit_code


def print_summary(result: SweepResult, console: Any) -> None:
    """A rich summary: totals per cell, distinct violations, mutants."""
    from rich.table import Table

    rate = f"{result.executed_runs / result.elapsed_s:,.0f} runs/s" if result.elapsed_s > 0 else ""
    console.print(
        f"[bold]keos sweep[/] seed {result.spec.seed} on {result.master}: {result.runs:,} runs, "
        f"{result.steps:,} steps in {result.elapsed_s:.1f}s {rate}"
        + (f" ({result.chunks_resumed} chunk(s) resumed)" if result.chunks_resumed else "")
    )
    cells = Table(title="cells", title_justify="left")
    numeric = ("runs", "steps", "faults", "violating", "distinct")
    for col in ("scenario", "variant", *numeric, "verdict"):
        cells.add_column(col, justify="right" if col in numeric else "left")
    for c in result.cells:
        distinct = sum(1 for s in result.signatures if s.scenario == c.scenario and s.variant == c.variant)
        bad = [p.name for p in (c.result.violations() if c.result else []) if p.verdict.value != "permitted"]
        allowed = [p.name for p in (c.result.violations() if c.result else []) if p.verdict.value == "permitted"]
        untested = [p.name for p in (c.result.properties if c.result else []) if p.verdict.value == "untested"]
        verdict = (
            "[red]violated: " + ", ".join(bad) + "[/]"
            if bad
            else "[yellow]untested: " + ", ".join(untested) + "[/]"
            if untested
            else "[green]holds[/]" + (" (permitted: " + ", ".join(allowed) + ")" if allowed else "")
        )
        cells.add_row(
            c.scenario,
            c.variant,
            f"{c.runs:,}",
            f"{c.steps:,}",
            f"{sum(c.faults.values()):,}",
            f"{c.violating_runs:,}",
            str(distinct),
            verdict,
        )
    console.print(cells)
    if result.signatures:
        sigs = Table(title="distinct violations (by invariant + shape of the minimal trace)", title_justify="left")
        for col in ("count", "variant", "scenario", "invariant", "len", "trace"):
            sigs.add_column(col, justify="right" if col in ("count", "len") else "left")
        for s in sorted(result.signatures, key=lambda s: (-s.count, s.variant, s.signature))[:20]:
            sigs.add_row(
                f"{s.count:,}",
                s.variant,
                s.scenario,
                s.invariant + (" (permitted)" if s.permitted else ""),
                str(s.length),
                str(s.trace_path),
            )
        console.print(sigs)
        if len(result.signatures) > 20:
            console.print(f"... {len(result.signatures) - 20} more in {result.out / 'summary.json'}")
    if "mutants" in result.spec.extra:
        mt = Table(title="mutants", title_justify="left")
        for col in ("variant", "caught", "by", "expected"):
            mt.add_column(col)
        for m in result.mutants():
            mt.add_row(
                m["variant"],
                "[green]yes[/]" if m["caught"] else "[red]NO[/]",
                ", ".join(m["invariants"]),
                ", ".join(m["expected"]),
            )
        console.print(mt)
    if result.partial:
        console.print(f"[yellow]partial:[/] {result.partial} (exit 4: the runs not run are not judged)")
    console.print(
        f"results: {result.out}/runs (Parquet), traces: {result.out}/traces, summary: {result.out}/summary.json"
    )
