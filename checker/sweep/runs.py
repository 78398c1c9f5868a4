"""Run descriptors and their execution, as Arrow batches: what a sweep's executors do.

A sweep spec (:class:`SweepSpec`) is a list of *cells* -- scenario x variant x
fault profile -- and a number of runs per cell.  Run ``i`` of cell ``c`` has
the global ordinal ``c * runs + i`` and the key ``"{scenario}/{variant}/{profile}/{i}"``;
its seed is :func:`checker.sweep.simulate.derive_seed` of the sweep seed and that key,
so a run's seed does not depend on which other cells the sweep holds, on the
partitioning, on the number of executors or on task retries.

:func:`describe_batch` turns a batch of ordinals into run descriptors
(ordinal, key, scenario, variant, profile, seed, step budget, fault weights --
the swarm profile is drawn here and recorded); :func:`execute_batch` runs them
(:func:`checker.sweep.simulate.random_walk`, then :func:`checker.sweep.simulate.investigate`
for a violation) and returns one result row per run.  Both are pure functions
of their input rows and the spec, which is what makes the sweep deterministic.
They depend on pyarrow only: Spark calls them through ``mapInArrow``, the
plain-Python baseline calls them directly.

Scenario files given by path travel as TOML text inside the spec, so an
executor on another machine parses them with :func:`scenarios.parse_scenario`
and never needs the file.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from keos.checker.sweep.archive import ARCHIVE_GROUP, Archive
from keos.checker.sweep.simulate import derive_seed, fault_profile, investigate, random_walk
from keos.model.interface import Action, Model

__all__ = [
    "DESCRIPTOR_SCHEMA",
    "RESULT_SCHEMA",
    "Cell",
    "SweepSpec",
    "describe_batch",
    "execute_batch",
    "execute_batches",
    "run_batches",
    "run_ordinals",
]


@dataclass(frozen=True)
class Cell:
    """One scenario under one variant and one fault profile.

    Attributes:
        scenario: the reference users gave (built-in name or file path); traces
            record it so ``keos replay`` resolves the same scenario.
        name: the scenario's name (part of each run's key).
        toml: the scenario file's text for a path reference, ``""`` for a built-in.
        variant: protocol variant.
        profile: fault profile (:data:`checker.sweep.simulate.PROFILES`).
        fault_kinds: the model's fault kinds (those with a budget).
        permitted: invariants whose violation the scenario permits.
    """

    scenario: str
    name: str
    toml: str
    variant: str
    profile: str
    fault_kinds: tuple[str, ...]
    permitted: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """``scenario/variant/profile``."""
        return f"{self.name}/{self.variant}/{self.profile}"


@dataclass(frozen=True)
class SweepSpec:
    """Everything that determines a sweep's results (not where or how fast it runs)."""

    cells: tuple[Cell, ...]
    runs: int
    steps: int
    seed: int
    chunk_runs: int = 2_000
    #: 2: the Go-Explore archive; 3: the archive probes faults at milestones (archive runs differ from version 2's,
    #: so ``--resume`` refuses to mix chunks of the two).
    version: int = 3
    extra: dict[str, Any] = field(default_factory=dict)
    #: Consecutive swarm runs of a cell that share a Go-Explore archive (:mod:`checker.sweep.archive`); 0: none,
    #: every run independent (the sweep of version 1).
    archive_group: int = ARCHIVE_GROUP

    def group(self, ordinal: int) -> str | None:
        """The archive group of run ``ordinal`` (``None``: the run shares no archive)."""
        cell = self.cells[ordinal // self.runs]
        if not self.archive_group or cell.profile != "swarm":
            return None
        return f"{cell.key}/{(ordinal % self.runs) // self.archive_group}"

    def group_start(self, ordinal: int) -> int:
        """The first ordinal of run ``ordinal``'s archive group (itself when it has none)."""
        if self.group(ordinal) is None:
            return ordinal
        return ordinal - (ordinal % self.runs) % self.archive_group

    @property
    def total_runs(self) -> int:
        """Runs over all cells."""
        return self.runs * len(self.cells)

    @property
    def chunks(self) -> int:
        """Number of chunks (each written as one Parquet file)."""
        return -(-self.total_runs // self.chunk_runs) if self.total_runs else 0

    def chunk_range(self, k: int) -> tuple[int, int]:
        """Ordinals ``[start, end)`` of chunk ``k``."""
        start = k * self.chunk_runs
        return start, min(start + self.chunk_runs, self.total_runs)

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON (the sweep's manifest compares it on ``--resume``)."""
        data = asdict(self)
        data["cells"] = [asdict(c) for c in self.cells]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SweepSpec:
        """Inverse of :meth:`to_json`."""
        cells = tuple(
            Cell(**{**c, "fault_kinds": tuple(c["fault_kinds"]), "permitted": tuple(c["permitted"])})
            for c in data["cells"]
        )
        return cls(
            cells=cells,
            runs=int(data["runs"]),
            steps=int(data["steps"]),
            seed=int(data["seed"]),
            chunk_runs=int(data["chunk_runs"]),
            version=int(data.get("version", 1)),
            extra=dict(data.get("extra", {})),
            archive_group=int(data.get("archive_group", 0)),
        )


DESCRIPTOR_SCHEMA = pa.schema(
    [
        ("run", pa.int64()),
        ("run_id", pa.string()),
        ("scenario", pa.string()),
        ("scenario_toml", pa.string()),
        ("variant", pa.string()),
        ("profile", pa.string()),
        ("seed", pa.int64()),
        ("max_steps", pa.int32()),
        ("fault_weights", pa.map_(pa.string(), pa.float64())),
        ("archive_group", pa.string()),
        ("report", pa.bool_()),
    ]
)

RESULT_SCHEMA = pa.schema(
    [
        ("run", pa.int64()),
        ("run_id", pa.string()),
        ("scenario", pa.string()),
        ("variant", pa.string()),
        ("profile", pa.string()),
        ("seed", pa.int64()),
        ("max_steps", pa.int32()),
        ("fault_weights", pa.map_(pa.string(), pa.float64())),
        ("steps", pa.int32()),
        ("quiescent", pa.bool_()),
        ("violation", pa.string()),
        ("permitted", pa.bool_()),
        ("signature", pa.string()),
        ("shape", pa.string()),
        ("trace_length", pa.int32()),
        ("trace_actions", pa.string()),
        ("faults", pa.map_(pa.string(), pa.int64())),
        ("events", pa.map_(pa.string(), pa.int64())),
        ("reached", pa.list_(pa.string())),
        ("liveness", pa.string()),
        ("loop_start", pa.int32()),
        ("suspected", pa.list_(pa.string())),
    ]
)


def run_ordinals(start: int, end: int) -> pa.RecordBatch:
    """A batch of ordinals ``[start, end)`` in the shape of ``spark.range`` (column ``id``)."""
    return pa.RecordBatch.from_arrays([pa.array(range(start, end), pa.int64())], names=["id"])


def describe_batch(spec_json: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """Run descriptors for the ordinals in ``batch`` (column ``id``), in run order.

    A run that shares an archive (:attr:`SweepSpec.archive_group`) depends on the runs before it in its
    group: when the batch starts in the middle of a group, the group's earlier runs are described too,
    with ``report`` false (:func:`execute_batch` runs them to rebuild the archive and reports nothing of
    them), so a run's result does not depend on how the runs are split into batches.
    """
    spec = _spec(spec_json)
    rows: dict[str, list[Any]] = {name: [] for name in DESCRIPTOR_SCHEMA.names}
    wanted = sorted(batch.column("id").to_pylist())
    todo, wanted_set = set(wanted), set(wanted)
    for ordinal in wanted:
        if ordinal - 1 not in todo:
            todo.update(range(spec.group_start(ordinal), ordinal))
    for ordinal in sorted(todo):
        cell = spec.cells[ordinal // spec.runs]
        run_id = f"{cell.key}/{ordinal % spec.runs}"
        seed = derive_seed(spec.seed, run_id)
        weights = fault_profile(cell.profile, cell.fault_kinds, seed)
        rows["run"].append(ordinal)
        rows["run_id"].append(run_id)
        rows["scenario"].append(cell.scenario)
        rows["scenario_toml"].append(cell.toml)
        rows["variant"].append(cell.variant)
        rows["profile"].append(cell.profile)
        rows["seed"].append(seed)
        rows["max_steps"].append(spec.steps)
        rows["fault_weights"].append(sorted(weights.items()))
        rows["archive_group"].append(spec.group(ordinal))
        rows["report"].append(ordinal in wanted_set)
    return pa.RecordBatch.from_pydict(rows, schema=DESCRIPTOR_SCHEMA)


def execute_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Run every descriptor in ``batch``; one result row per run it reports.

    Runs of one archive group (column ``archive_group``) share a :class:`checker.sweep.archive.Archive`,
    in the batch's order (:func:`describe_batch` gives them in run order, from the group's first run);
    a run with ``report`` false only feeds the archive.
    """
    rows: dict[str, list[Any]] = {name: [] for name in RESULT_SCHEMA.names}
    archive: Archive | None = None
    archive_of: str | None = None
    # one minimisation memo per model: two scenarios (or variants) can share a walk's actions and invariant while
    # the minimal trace of one does not replay on the other (a batch spans cells)
    caches: dict[tuple[str, str, str], dict[tuple[str, tuple[Action, ...]], list[Action]]] = {}
    for d in batch.to_pylist():
        model, permitted = _model(d["scenario"], d["scenario_toml"], d["variant"])
        cache = caches.setdefault((d["scenario"], d["scenario_toml"], d["variant"]), {})
        weights = dict(d["fault_weights"])
        group = d.get("archive_group")
        if group is None:
            archive = None
        elif group != archive_of or archive is None:
            archive, archive_of = Archive(), group  # a group's runs are contiguous: the previous one is done
        walk = random_walk(model, d["seed"], d["max_steps"], weights, archive=archive, permitted=permitted)
        if not d.get("report", True):
            continue
        finding = investigate(model, walk, d["scenario"], d["variant"], permitted, cache)
        for key in ("run", "run_id", "scenario", "variant", "profile", "seed", "max_steps"):
            rows[key].append(d[key])
        rows["fault_weights"].append(sorted(weights.items()))
        rows["steps"].append(walk.steps)
        rows["quiescent"].append(walk.quiescent)
        rows["violation"].append(walk.violation)
        rows["permitted"].append(bool(finding and finding.trace.permitted))
        rows["signature"].append(finding.signature if finding else None)
        rows["shape"].append(finding.shape if finding else None)
        rows["trace_length"].append(len(finding.trace.actions) if finding else None)
        rows["trace_actions"].append(
            json.dumps([model.action_to_json(a) for a in finding.trace.actions], separators=(",", ":"))
            if finding
            else None
        )
        rows["faults"].append(sorted(walk.faults.items()))
        rows["events"].append(sorted(walk.events.items()))
        rows["reached"].append(list(walk.reached))
        rows["liveness"].append(walk.liveness)
        rows["loop_start"].append(finding.trace.loop_start if finding else None)
        rows["suspected"].append(list(walk.suspected))
    return pa.RecordBatch.from_pydict(rows, schema=RESULT_SCHEMA)


def execute_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` adapter of :func:`execute_batch`."""
    for batch in batches:
        if batch.num_rows:
            yield execute_batch(batch)


def run_batches(spec_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` adapter: ordinals (``spark.range``'s ``id``) -> descriptors -> results, in one
    Python worker (bind ``spec_json`` with functools.partial).  One Python stage instead of two
    saves an Arrow round trip through the JVM and a second Python worker per task."""
    for batch in batches:
        if batch.num_rows:
            yield execute_batch(describe_batch(spec_json, batch))


def describe_batches(spec_json: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` adapter of :func:`describe_batch` (bind ``spec_json`` with functools.partial)."""
    for batch in batches:
        if batch.num_rows:
            yield describe_batch(spec_json, batch)


# -- per-worker caches: a Python worker builds each spec and model once -------------------------

_SPECS: dict[str, SweepSpec] = {}
_MODELS: dict[tuple[str, str, str], tuple[Model, tuple[str, ...]]] = {}


def _spec(spec_json: str) -> SweepSpec:
    spec = _SPECS.get(spec_json)
    if spec is None:
        spec = SweepSpec.from_json(json.loads(spec_json))
        _SPECS.clear()
        _SPECS[spec_json] = spec
    return spec


def _model(scenario_ref: str, toml: str, variant: str) -> tuple[Model, tuple[str, ...]]:
    key = (scenario_ref, toml, variant)
    hit = _MODELS.get(key)
    if hit is None:
        from keos.scenarios import build_model, parse_scenario, resolve_scenario

        scenario = parse_scenario(tomllib.loads(toml), scenario_ref) if toml else resolve_scenario(scenario_ref)
        hit = (build_model(scenario, variant), scenario.permitted)
        _MODELS[key] = hit
    return hit
