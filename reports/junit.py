"""JUnit XML for CI: one test suite per run, one test case per property.

CI systems (Jenkins, GitLab, GitHub test reporters, Buildkite) all read the
de-facto JUnit schema: ``<testsuites>`` holding ``<testsuite name tests
failures errors skipped time>`` holding ``<testcase classname name>``, whose
child says how it ended.  keos maps its verdicts onto it so a pipeline shows
each Kafka invariant as a test:

==============  =======================================================
verdict         JUnit
==============  =======================================================
holds           passed
reached         passed (a sometimes property fired)
violated        ``<failure>`` -- message: the model's explanation; text:
                the trace file, the replay command and the counterexample
                as plain text
permitted       passed, with a ``<system-out>`` note (the scenario allows it)
untested        ``<skipped message="untested: partner never reached ...">``
unreached       ``<skipped message="unreached: ...">``
==============  =======================================================

One suite per (engine, scenario, variant): ``explore.idempotence_retry.kafka``.
The suite's ``time`` is the engine's wall time for the run; engines check all
properties at once, so each test case's ``time`` is that time shared evenly
among the run's properties (the strict schemas want one on every case).  Engine
statistics, the seed and whether the search was exhaustive go into the suite's
``<properties>``; a run stopped by a budget is also said in ``<system-out>``.

The file validates against the common schemas (the Jenkins xunit plugin's
``junit-10.xsd`` and Ant's ``JUnit.xsd``): ``<testsuites>`` carries only
``name tests failures errors time`` (no ``skipped``), every ``<testcase>`` a
``time``.  :func:`write_mutants_junit` writes ``keos mutants`` the same way:
one test case per weakened variant, failing when no invariant caught it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from keos.checker.results import EngineResult, Verdict, partial_reason
from keos.reports.common import trace_as_dict
from keos.reports.trace_text import plain_text

__all__ = ["write_junit", "write_mutants_junit"]

#: Characters XML 1.0 forbids (control characters other than tab, newline, carriage return).
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: Any) -> str:
    return _INVALID_XML.sub("?", str(text))


def _seconds(value: Any) -> str:
    return f"{float(value):.3f}" if isinstance(value, int | float) and not isinstance(value, bool) else "0.000"


def _suite(r: EngineResult) -> tuple[ET.Element, dict[str, int]]:
    name = f"{r.engine}.{r.scenario}.{r.variant}"
    suite = ET.Element("testsuite", name=_clean(name))
    props = ET.SubElement(suite, "properties")
    meta: dict[str, Any] = {"engine": r.engine, "scenario": r.scenario, "variant": r.variant}
    meta["search"] = "exhaustive" if r.complete else "bounded"
    if r.seed is not None:
        meta["seed"] = r.seed
    for k, v in r.stats.items():
        if not isinstance(v, Mapping | list | tuple):
            meta[f"stats.{k}"] = v
    for k, v in meta.items():
        ET.SubElement(props, "property", name=_clean(k), value=_clean(v))

    counts = {"tests": 0, "failures": 0, "skipped": 0}
    elapsed = r.stats.get("elapsed_s")
    share = float(_seconds(elapsed)) / len(r.properties) if r.properties else 0.0
    for p in r.properties:
        counts["tests"] += 1
        case = ET.SubElement(
            suite, "testcase", classname=_clean(f"keos.{name}"), name=_clean(p.name), time=f"{share:.3f}"
        )
        trace_path = str(p.trace_path) if p.trace_path is not None else None
        if p.verdict is Verdict.VIOLATED:
            counts["failures"] += 1
            liveness = p.trace.liveness if p.trace is not None else None
            message = f"{p.name} violated" + (f" ({liveness})" if liveness else "")
            message += f": {p.detail}" if p.detail else ""
            failure = ET.SubElement(case, "failure", message=_clean(message), type=liveness or "violated")
            body = [message]
            if trace_path:
                body.append(f"trace: {trace_path}")
                body.append(f"replay: keos replay {trace_path}")
            if p.trace is not None:
                body += ["", plain_text(trace_as_dict(p.trace), ascii=True, path=trace_path)]
            failure.text = _clean("\n".join(body))
        elif p.verdict in (Verdict.UNTESTED, Verdict.UNREACHED):
            counts["skipped"] += 1
            reason = p.detail or (
                "sometimes property never reached: the states it proves reachable were not explored"
                if p.verdict is Verdict.UNREACHED
                else "a sometimes-partner never fired, so the invariant was not exercised"
            )
            ET.SubElement(case, "skipped", message=_clean(f"{p.verdict.value}: {reason}"))
        elif p.verdict is Verdict.PERMITTED:
            out = ET.SubElement(case, "system-out")
            note = f"permitted violation (the scenario allows it): {p.name}"
            if p.detail:
                note += f": {p.detail}"
            if trace_path:
                note += f"\ntrace: {trace_path}"
            out.text = _clean(note)
    why = partial_reason(r)
    if why is not None:
        ET.SubElement(suite, "system-out").text = _clean(f"partial results: {why}")
    suite.set("tests", str(counts["tests"]))
    suite.set("failures", str(counts["failures"]))
    suite.set("errors", "0")
    suite.set("skipped", str(counts["skipped"]))
    suite.set("time", _seconds(r.stats.get("elapsed_s")))
    return suite, counts


def write_junit(
    path: str | Path, results: list[EngineResult], stopped: str | None = None, not_run: Sequence[str] = ()
) -> Path:
    """Write JUnit XML for ``results``; returns the path.

    Failures equal the number of violated (not permitted) properties; skipped
    the untested and unreached ones.  A command stopped before every run was done
    (``stopped``: interrupted, out of memory) gets a suite ``keos.incomplete`` whose test
    cases, one per run never finished (``not_run``: ``engine/scenario/variant``), are
    ``<skipped>`` with the reason; every suite then carries the property ``incomplete``.
    """
    root = ET.Element("testsuites", name="keos")
    totals = {"tests": 0, "failures": 0}
    elapsed = 0.0
    for r in results:
        suite, counts = _suite(r)
        root.append(suite)
        for k in totals:
            totals[k] += counts[k]
        value = r.stats.get("elapsed_s")
        if isinstance(value, int | float) and not isinstance(value, bool):
            elapsed += float(value)
    if stopped or not_run:
        why = stopped or "stopped"
        for finished in root:
            props = finished.find("properties")
            ET.SubElement(props if props is not None else ET.SubElement(finished, "properties"), "property",
                          name="incomplete", value=_clean(f"the command stopped: {why}"))
        suite = ET.SubElement(root, "testsuite", name="keos.incomplete")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="incomplete", value=_clean(f"the command stopped: {why}"))
        for label in not_run:
            case = ET.SubElement(suite, "testcase", classname="keos.incomplete", name=_clean(label), time="0.000")
            ET.SubElement(case, "skipped", message=_clean(f"not run: the command stopped ({why})"))
        ET.SubElement(suite, "system-out").text = _clean(
            f"partial results: the command stopped ({why}); {len(results)} run(s) finished, {len(not_run)} not run")
        for k, v in (("tests", len(not_run)), ("failures", 0), ("errors", 0), ("skipped", len(not_run))):
            suite.set(k, str(v))
        suite.set("time", "0.000")
        totals["tests"] += len(not_run)
    return _write(path, root, totals, elapsed)


def _write(path: str | Path, root: ET.Element, totals: dict[str, int], elapsed: float) -> Path:
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    root.set("time", f"{elapsed:.3f}")
    ET.indent(root)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return out


def write_mutants_junit(path: str | Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """JUnit XML for ``keos mutants``: one suite per engine, one test case per weakened variant.

    A caught variant passes (``<system-out>``: the invariant, scenario and trace); one no invariant
    caught is a ``<failure>`` (the gate has a hole); one the engine cannot express is ``<skipped>``.
    """
    root = ET.Element("testsuites", name="keos-mutants")
    totals = {"tests": 0, "failures": 0}
    elapsed = 0.0
    for engine in dict.fromkeys(str(r.get("engine", "explore")) for r in rows):
        suite = ET.SubElement(root, "testsuite", name=_clean(f"mutants.{engine}"))
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        suite_time = 0.0
        for row in (r for r in rows if str(r.get("engine", "explore")) == engine):
            seconds = float(row.get("elapsed_s") or 0.0)
            suite_time += seconds
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=_clean(f"keos.mutants.{engine}"),
                                 name=_clean(row["variant"]), time=f"{seconds:.3f}")
            if not row.get("covered", True):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_clean(f"engine {engine} cannot express this variant"))
            elif row.get("caught"):
                note = (f"caught by {row.get('invariant')} in {row.get('scenario')} "
                        f"({row.get('trace_length')} steps)\ntrace: {row.get('trace')}")
                ET.SubElement(case, "system-out").text = _clean(note)
            else:
                counts["failures"] += 1
                why = "time budget ran out" if row.get("timed_out") else "no invariant caught it"
                if row.get("scenario") and row.get("missed"):
                    why = f"caught in {row['scenario']} but not in {', '.join(row['missed'])}"
                message = f"weakened variant {row['variant']} not caught: {why}"
                failure = ET.SubElement(case, "failure", message=_clean(message), type="not_caught")
                failure.text = _clean(f"{message}\nbug it re-enables: {row.get('bug', '')}\n"
                                      f"expected to break: {', '.join(row.get('expected') or [])}")
        for k, v in counts.items():
            suite.set(k, str(v))
        suite.set("errors", "0")
        suite.set("time", f"{suite_time:.3f}")
        totals["tests"] += counts["tests"]
        totals["failures"] += counts["failures"]
        elapsed += suite_time
    return _write(path, root, totals, elapsed)
