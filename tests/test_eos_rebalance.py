"""Consume-transform-produce on the classic rebalance protocol (issue 28, KIP-447 in the model).

The eos model in protocol mode (``[eos] assignor``): the instances join the group through JoinGroup /
SyncGroup / Heartbeat, the assignor picks the input partition's owner, TxnOffsetCommit carries the
consumer's member id and generation and is validated as ``ClassicGroup.validateOffsetCommit`` does.
State counts and shortest trace lengths are pinned; every counterexample is replayed on a freshly
built model.
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.model.coordinator.group import classic_group as cg
from keos.model.protocol.errors import Errors
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()
ZOMBIE = "txn_eos_rebalance_session_timeout"
JOIN = "txn_eos_rebalance_join"
COOP = "txn_eos_cooperative_leave"

# scenario -> (distinct states, events that must occur)
HOLDS = {
    JOIN: (JOIN_STATES := 0, ("eager:revoked_all", "UNSTABLE_OFFSET_COMMIT", "owner_started_after_move")),
    COOP: (COOP_STATES := 0, ("txn_offset_commit_during_completing_rebalance", "left_group", "partition_assigned")),
    ZOMBIE: (ZOMBIE_STATES := 0, ("session_expired:zombie", "txn_offset_commit_fenced", "heartbeat:UNKNOWN_MEMBER_ID")),
}

# (scenario, variant) -> {invariant: shortest trace length}
CAUGHT: dict[tuple[str, str], dict[str, int]] = {}


def _run(name: str, variant: str):  # type: ignore[no-untyped-def]
    return explore(build_model(SCENARIOS[name], variant), name, variant, ExploreOptions())[0]
