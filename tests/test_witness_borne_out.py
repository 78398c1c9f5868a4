"""``witness_events_borne_out``: an event witnesses a sometimes partner only if the state after the step shows it.

A sometimes partner that counts a step's event but never looks at the state is blind: a step that reports a
situation it did not create (``concurrent_in_flight`` emitted for one request in flight), or an event matcher
that takes any label for a wildcard (``Property.matches_event``), makes the partner reached and the always
properties it guards look tested.  The explicit search checks each event property's ``witness`` on its first
witnessing step.  Each search here stops at the first violation and takes well under a second.
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import WITNESS_NAME, ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.interface import Property
from keos.model.systems import idempotence
from keos.scenarios import build_model, builtin_scenarios


def _verdicts(name: str, first: bool = True) -> dict[str, Verdict]:
    scenario = builtin_scenarios()[name]
    result = explore(build_model(scenario), name, scenario.variant, ExploreOptions(stop_on_first=first))[0]
    return {p.name: p.verdict for p in result.properties}


def test_the_model_reports_its_witnesses_truthfully() -> None:
    for name in ("authz_pid_hijack", "reach_idempotence_leader_move"):  # whole searches, about a second each
        assert WITNESS_NAME not in _verdicts(name, first=False), name


def test_a_matcher_that_takes_any_label_for_a_wildcard_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def loose(self: Property, event: str) -> bool:
        if self.event is None:
            return False
        return event.startswith(self.event[:0]) if self.event.endswith("*") else event == self.event

    monkeypatch.setattr(Property, "matches_event", loose)
    assert _verdicts("authz_pid_hijack")[WITNESS_NAME] is Verdict.VIOLATED


def test_a_step_that_reports_a_situation_it_did_not_create_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = idempotence._HANDLERS["SendProduce"]

    def boastful(self: idempotence.KafkaSystem, s: idempotence.SystemState, *args: object) -> object:
        result = real(self, s, *args)
        if result is None:
            return None
        new, events = result
        return new, (*events, "concurrent_in_flight")

    monkeypatch.setitem(idempotence._HANDLERS, "SendProduce", boastful)
    assert _verdicts("idempotence_batches")[WITNESS_NAME] is Verdict.VIOLATED
