"""The gate sweep's groups finding of session 26, judged against Kafka (session 27).

``docs/findings/session26_sweep_groups_close_while_completing_rebalance.trace.json``: a cooperative consumer whose
JoinGroup was answered (its group CompletingRebalance, SyncGroup not sent yet) fetches, then closes; the model sent
its close-time commit (refused REBALANCE_IN_PROGRESS) and *revoked* its partition uncommitted.  Kafka's client does
neither (trunk 1eb7644): ``sendOffsetCommitRequest`` takes ``generationIfStable()``, null outside STABLE, so the
commit fails in the client and ``maybeAutoCommitOffsetsSync`` swallows it; ``onLeavePrepare`` calls
``onPartitionsLost`` while ``rebalanceInProgress()``.  A model bug: the model's close now follows Kafka, and the
property's judge exempts exactly a close during a rebalance.  These tests show the trace holds, the close is a loss
with no commit, and a close from a stable membership is still judged (and caught when it skips the commit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keos.checker import api
from keos.checker.explore.search import explore
from keos.checker.trace import load_trace
from keos.model.clients import consumer_coordinator as cc
from keos.model.interface import Action
from keos.scenarios import build_model, resolve_scenario

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "docs" / "findings" / "session26_sweep_groups_close_while_completing_rebalance.trace.json"
SCENARIO = "groups_cooperative_close_mid_rebalance"


def _before_close() -> tuple[Any, Any, int]:
    """The finding's model, the state before its last step (the close) and the closing consumer's index."""
    data = load_trace(TRACE)
    scenario, _ = api._trace_scenario(data, TRACE)
    model = build_model(scenario)
    report = api.replay(TRACE)
    return model, report.replay.states[-2], 1


def test_the_finding_replays_and_now_holds() -> None:
    report = api.replay(TRACE)
    assert not report.confirmed and "holds after the last step" in report.replay.reason
    last = report.replay.events[-1]
    # the close during CompletingRebalance: no commit sent (generationIfStable is null), the partition lost
    assert "lost:close" in last and "revoked:close" not in last
    assert not any(e.startswith("commit:") for e in last)


def test_a_close_from_a_stable_membership_commits_and_is_judged() -> None:
    """The same consumer, STABLE in the generation the group moved to: the close commits, then revokes."""
    model, s, i = _before_close()
    c = s.consumers[i]
    assert c.state == cc.AWAITING_SYNC and c.uncommitted()
    stable = s._replace(consumers=tuple(d._replace(state=cc.STABLE) if j == i else d
                                        for j, d in enumerate(s.consumers)))
    step = model.step(stable, Action("LeaveGroup", (i,)))
    assert step is not None
    assert "revoked:close" in step.events and any(e.startswith("commit:") for e in step.events)
    # the judge itself, on a STABLE consumer that gives its partitions up uncommitted: a finding
    judged = model._note_handover(stable, stable.consumers[i], stable.consumers[i].owned, "close")
    assert judged.ghost.uncommitted_handovers
    # ... and on the consumer mid-rebalance: no finding (onPartitionsLost, not a clean give-up)
    assert not model._note_handover(s, c, c.owned, "close").ghost.uncommitted_handovers


def test_the_close_scenario_holds_and_reaches_both_closes() -> None:
    sc = resolve_scenario(SCENARIO)
    model = build_model(sc)
    result, _ = explore(model, sc.name, "kafka")
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict.value for p in result.properties}
    assert verdicts["close_during_rebalance_lost"] == "reached"
    assert verdicts["revoked_partitions_committed"] == "holds"


def test_a_close_that_skips_its_commit_is_caught() -> None:
    """Weakened variant ``no_commit_on_revoke`` on the close scenario: a consumer that gives its partitions up
    without committing breaks revoked_partitions_committed there (the property can still fail)."""
    sc = resolve_scenario(SCENARIO)
    result, _ = explore(build_model(sc, "no_commit_on_revoke"), sc.name, "no_commit_on_revoke")
    broken = {p.name: p for p in result.properties}["revoked_partitions_committed"]
    assert broken.verdict.value == "violated" and broken.trace is not None
    # the shortest counterexample is a close from a stable membership (LeaveGroup with nothing committed)
    assert broken.trace.actions[-1].kind == "LeaveGroup" and broken.trace.explanation.startswith("close:")
