"""A recorded differential corpus: real Kafka's answers, replayed against the model without a broker.

``keos differential`` compares the model's handlers with a running broker request by request.  Kafka's
side of that comparison does not change while the model does, so ``keos differential --record FILE``
keeps it: every case's steps, and after each step Kafka's answer and everything the observers read
(DescribeTransactions, ListTransactions, DescribeProducers, the logs read_uncommitted, the LSO and
aborted transactions read_committed sees, the committed offsets), with Kafka's identifiers already
bound to the model's symbols.  ``keos differential --replay FILE`` then runs the same steps on a fresh
model and compares with the recording -- no Java, no broker, a few seconds -- and the gate does this on
the corpus in ``scenarios/differential/`` (``scripts/gate.sh``; ``@differential`` in
:mod:`keos.checker.reach.gate_checks`, so ``keos coverage`` and ``keos mutate`` count it).

Why it belongs in the gate: the cases are the differential's systematic cover (every request variant --
stale, current and next epoch; sequence gaps, 0, duplicates of the last five batches; stale and next
generations; unknown and former members; a bogus producer id -- after every coordinator and group state a
client can reach) and seeded random walks.  Those are exactly the hostile and stale inputs a bounded
scenario rarely sends, judged not by a property but by what Kafka answered.  A change to a handler that
alters any answer or any observed state on any recorded case fails the replay, whether or not a property
names the rule.

What a recording holds, per case: the steps (with the fields the model controls), then per step Kafka's
answer and observation.  A case on which the recorder found a *documented abstraction*
(:mod:`keos.checker.differential.abstractions`) ends at that step, which records the model's answer
too: the replay expects the model to keep making exactly that documented simplification there.  A case
with an unexplained difference is not recorded (the recorder reports it and exits 1, as ``keos
differential`` does); a difference that does not reproduce on a re-run (timing) is re-run once more.

File format: gzip-compressed JSON lines; the first line is the header (``format``, ``version``, the Kafka
version and negotiated API versions, the seed, ``transaction_version``), then one case per line.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.checker.differential.abstractions import classify
from keos.checker.differential.cases import Case, Step, dispatch
from keos.checker.differential.runner import (
    OBSERVERS,
    Difference,
    RunResult,
    comparable,
    run_case,
)
from keos.checker.differential.sides import Answer, ModelSide, Observation

__all__ = ["DEFAULT_CORPUS", "FORMAT", "GATE_CORPORA", "TV2_CORPUS",
           "Corpus", "CorpusError", "RecordedCase", "load_corpus", "record",
           "replay", "write_corpus"]

FORMAT = "keos-differential-corpus"
VERSION = 1
#: The corpus the gate replays (recorded from the shared 4.0.0-SNAPSHOT build, TV1 request forms).
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "scenarios" / "differential" / "kafka-4.0-tv1.jsonl.gz"
#: recorded with ``--transaction-version 2`` (EndTxn v5, ``transaction.version`` 2; the header says so)
TV2_CORPUS = DEFAULT_CORPUS.with_name("kafka-4.0-tv2.jsonl.gz")
#: what the gate replays (``scripts/gate.sh``, the gate check ``@differential``)
GATE_CORPORA = (DEFAULT_CORPUS, TV2_CORPUS)


class CorpusError(ValueError):
    """A corpus file that is not a keos differential recording (bad input: exit 2)."""


#: The built-in types ``plain`` returns unchanged (exact types: a subclass is converted to its base).
_PLAIN_ATOMS: frozenset[type] = frozenset({type(None), bool, int, float, str})


def plain(value: Any) -> Any:
    """``value`` as JSON-shaped data (tuples as lists, ``int``/``str`` subclasses as plain ones), so a
    recorded value and a freshly computed one compare equal exactly when their contents do.

    The exact built-in types come first (a replay calls this about 300,000 times, recursively): ``None``,
    ``bool``, ``int``, ``float`` and ``str`` are already plain, a list or tuple is plain item by item; only a
    subclass (an ``IntEnum``, a ``str`` enum) or ``bytes``/``dict`` reaches the conversions below."""
    kind = type(value)
    if kind in _PLAIN_ATOMS:
        return value
    if kind is tuple or kind is list:
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    raise TypeError(f"cannot record a {type(value).__name__}: {value!r}")


def _tupled(value: Any) -> Any:
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True)
class RecordedCase:
    """One case with Kafka's side of every step; ``end`` marks a documented abstraction at the last step."""

    case: Case
    answers: tuple[Any, ...]  # per step: Kafka's Answer fields, in the model's symbols (plain data)
    observations: tuple[Any, ...]  # per step: Kafka's Observation (plain data), None after a differing answer
    end: dict[str, Any] | None = None  # {"what", "abstraction", "model"} at the last step

    def as_json(self) -> dict[str, Any]:
        return {"name": self.case.name, "timeout_ms": self.case.timeout_ms,
                "steps": [[s.kind, {k: plain(v) for k, v in s.fields}] for s in self.case.steps],
                "answers": list(self.answers), "observations": list(self.observations), "end": self.end}

    @staticmethod
    def from_json(row: Any, where: str) -> RecordedCase:
        try:
            steps = tuple(Step(str(kind), tuple(sorted((str(k), _tupled(v)) for k, v in fields.items())))
                          for kind, fields in row["steps"])
            case = Case(str(row["name"]), steps, int(row["timeout_ms"]))
            answers, observations, end = tuple(row["answers"]), tuple(row["observations"]), row["end"]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorpusError(f"{where}: not a recorded case ({type(exc).__name__}: {exc})") from None
        if not steps or len(answers) != len(steps) or len(observations) != len(steps):
            raise CorpusError(f"{where}: {len(steps)} steps but {len(answers)} answers and {len(observations)} "
                              "observations")
        for a in answers:
            if not (isinstance(a, list) and len(a) == 4 and isinstance(a[0], str)):
                raise CorpusError(f"{where}: an answer is not [error, producer_id, producer_epoch, extra]")
        for o in observations[:-1]:
            if not (isinstance(o, list) and len(o) == len(OBSERVERS)):
                raise CorpusError(f"{where}: a step before the last has no observation of {len(OBSERVERS)} parts")
        if end is not None and not (isinstance(end, dict) and end.get("what") in ("answer", *OBSERVERS)
                                    and isinstance(end.get("abstraction"), str) and "model" in end):
            raise CorpusError(f"{where}: 'end' is not {{what, abstraction, model}}")
        last = observations[-1]
        if last is None and (end is None or end["what"] != "answer"):
            raise CorpusError(f"{where}: the last step has no observation and no differing answer")
        if last is not None and not (isinstance(last, list) and len(last) == len(OBSERVERS)):
            raise CorpusError(f"{where}: the last observation does not have {len(OBSERVERS)} parts")
        return RecordedCase(case, answers, observations, end)


@dataclass
class Corpus:
    """A header (where and how it was recorded) and the recorded cases."""

    header: dict[str, Any]
    cases: list[RecordedCase] = field(default_factory=list)

    @property
    def transaction_version(self) -> int:
        return int(self.header.get("transaction_version", 1))


def write_corpus(path: Path, corpus: Corpus) -> Path:
    """Write ``corpus`` as gzip'd JSON lines (deterministic bytes: no timestamp in the gzip header)."""
    lines = [json.dumps({"format": FORMAT, "version": VERSION, **corpus.header}, sort_keys=True)]
    lines += [json.dumps(c.as_json(), sort_keys=True, separators=(",", ":")) for c in corpus.cases]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(("\n".join(lines) + "\n").encode())
    return path


def load_corpus(path: Path) -> Corpus:
    """Read a corpus; :class:`CorpusError` (one line) for anything that is not one."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: not a gzip'd corpus ({exc})") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{n}: not JSON ({exc.msg})") from None
    if not rows or not isinstance(rows[0], dict) or rows[0].get("format") != FORMAT:
        raise CorpusError(f"{path}: not a keos differential corpus (no '{FORMAT}' header)")
    if rows[0].get("version") != VERSION:
        raise CorpusError(f"{path}: corpus version {rows[0].get('version')!r}, this keos reads {VERSION}")
    header = {k: v for k, v in rows[0].items() if k not in ("format", "version")}
    cases = [RecordedCase.from_json(r, f"{path}:{n}") for n, r in enumerate(rows[1:], 2)]
    if not cases:
        raise CorpusError(f"{path}: no recorded case")
    return Corpus(header, cases)


# -- recording (needs a broker) ----------------------------------------------------------------------------


def _recorded(case: Case, log: list[tuple[Answer, Observation | None]], diff: Difference | None
              ) -> RecordedCase:
    answers = tuple(plain([a.error, a.producer_id, a.producer_epoch, a.extra]) for a, _ in log)
    observations = tuple(None if o is None else plain(list(o)) for _, o in log)
    end = None
    if diff is not None:
        end = {"what": diff.what, "abstraction": diff.abstraction, "model": plain(diff.model)}
    steps = case.steps[: len(log)]
    return RecordedCase(Case(case.name, steps, case.timeout_ms), answers, observations, end)


def record(wire: Any, cases: list[Case], transaction_version: int = 1,
           progress: Callable[[int, int, int], None] | None = None,
           deadline: float | None = None) -> tuple[list[RecordedCase], RunResult]:
    """Run every case on the model and Kafka (as :func:`~keos.checker.differential.runner.run_cases`) and
    keep Kafka's side of each case that agreed, or that ended at a documented abstraction.

    The returned :class:`RunResult` lists the unexplained differences (their cases are not recorded), then one
    representative of each documented abstraction met (recorded), and tallies every compared step."""
    from keos.checker.differential.wire import WireError

    result = RunResult()
    start = time.monotonic()
    kept: list[RecordedCase] = []
    documented: dict[tuple[str, str, str], Difference] = {}
    for n, case in enumerate(cases):
        if deadline is not None and time.monotonic() > deadline:
            break
        outcome: RecordedCase | Difference | None = None
        diff: Difference | None = None
        for _attempt in range(2):  # a difference is re-run once: one that does not show again is timing
            log: list[tuple[Answer, Observation | None]] = []
            try:
                diff = run_case(wire, case, result, transaction_version, log)
            except WireError as exc:
                result.reconnects.append(f"{case.name}: {exc}")
                if len(result.reconnects) > 5:
                    raise
                wire.reconnect()
                continue
            if diff is not None:
                diff.abstraction = classify(diff.handler, diff.what, diff.model, diff.kafka, diff.case,
                                           diff.step_index)
            if diff is None or diff.abstraction:
                outcome = _recorded(case, log, diff)
                break
            outcome = diff
        result.cases += 1
        if isinstance(outcome, RecordedCase):
            kept.append(outcome)
            if diff is not None and diff.abstraction and diff.signature not in documented:
                documented[diff.signature] = diff  # reported once per distinct difference, as documented
        elif isinstance(outcome, Difference):
            result.differences.append(outcome)
        if progress is not None:
            progress(n + 1, len(cases), len(result.differences))
    result.differences.extend(documented.values())
    result.seconds = time.monotonic() - start
    return kept, result


# -- replaying (the model only) ----------------------------------------------------------------------------


def _answer(fields: Any) -> Answer:
    error, pid, epoch, extra = fields
    return Answer(error, pid, epoch, _tupled(extra))


def replay_case(rc: RecordedCase, result: RunResult | None = None, transaction_version: int = 1
                ) -> Difference | None:
    """Run ``rc``'s steps on a fresh model; the first step where the model differs from the recording.

    Every step's answer and observers are expected to be Kafka's, except the part a recorded abstraction ends
    the case at (``end``): there the model's own recorded value is expected, and the case ends."""
    model = ModelSide(transaction_version)
    last = len(rc.case.steps) - 1
    for i, s in enumerate(rc.case.steps):
        m_answer = dispatch(model, s, lambda p: p, lambda mm: mm)
        model.settle()
        end = rc.end["what"] if rc.end is not None and i == last else None
        mine, theirs = comparable(s.kind, m_answer, _answer(rc.answers[i]))
        compared = [("answer", s.kind, plain(mine), plain(theirs))]
        if end != "answer" and plain(mine) == plain(theirs):  # observers are read only after agreeing answers
            observed = plain(list(model.observe()))
            compared += [(name, OBSERVERS[name], observed[j], rc.observations[i][j])
                         for j, name in enumerate(OBSERVERS)]
        for what, handler, got, kafka_value in compared:
            expected = rc.end["model"] if what == end and rc.end is not None else kafka_value
            if result is not None:
                result.steps += what == "answer"
                result.tally(handler, got == expected)
            if got != expected:
                return Difference(rc.case, i, handler, what, _tupled(got), _tupled(expected))
            if what == end:
                return None
    return None


def replay(corpus: Corpus, progress: Callable[[int, int, int], None] | None = None,
           deadline: float | None = None) -> RunResult:
    """Replay every recorded case on the model; every difference is unexplained (a documented abstraction
    was recorded as the model's own answer, so only a change of the model shows here)."""
    result = RunResult()
    start = time.monotonic()
    shortest: dict[tuple[str, str, str], Difference] = {}
    differing = 0
    for n, rc in enumerate(corpus.cases):
        if deadline is not None and time.monotonic() > deadline:
            break
        diff = replay_case(rc, result, corpus.transaction_version)
        result.cases += 1
        if diff is not None:
            differing += 1
            best = shortest.get(diff.signature)
            if best is None or len(diff.case.steps) < len(best.case.steps):
                shortest[diff.signature] = diff
        if progress is not None:
            progress(n + 1, len(corpus.cases), differing)
    # one representative per distinct difference: the recorded case with the fewest steps (no shrinking: Kafka's
    # answers to a shorter prefix were not recorded)
    result.differences = sorted(shortest.values(), key=lambda d: (d.handler, d.what, len(d.case.steps)))
    result.seconds = time.monotonic() - start
    return result
