"""What the herder's and a source task's handlers need of the Connect cluster they run in.

The handlers in :mod:`keos.model.connect.herder` and :mod:`keos.model.connect.source_task` are
functions of the cluster's configuration and its state.  They see the cluster through this protocol,
which :class:`keos.model.systems.connect.ConnectSystem` implements, so the components do not import
the composition that wires them together.
"""

from __future__ import annotations

from typing import Protocol

from keos.model.connect import config_topic as cfgt
from keos.model.connect.records import ConnectState, ConnectTopology
from keos.model.connect.worker import ConnectWorker
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.log.partition import PartitionLeader
from keos.model.variants import ProtocolFlags

__all__ = ["ConnectCluster"]


class ConnectCluster(Protocol):
    """The cluster's fixed configuration and its state helpers."""

    topo: ConnectTopology
    flags: ProtocolFlags
    cc: tc.CoordinatorConfig
    sources: int
    offsets_partition: int

    def _eos(self, w: int) -> bool:
        """Whether worker ``w`` has exactly-once source support enabled."""
        ...

    def _txn_leader(self, w: int) -> bool:
        """Whether worker ``w``, as leader, writes to the config topic transactionally (KIP-618)."""
        ...

    def _config(self, s: ConnectState) -> PartitionLeader:
        """The config topic's partition."""
        ...

    def _answer_requesters(self, s: ConnectState, phase: str, upto: int | None = None) -> ConnectState:
        """Answer every task waiting on the zombie-fencing round (``upto``: of generations up to a 409's round)."""
        ...

    def _put(self, s: ConnectState, w: int, wk: ConnectWorker) -> ConnectState:
        """Replace worker ``w``."""
        ...

    def _snapshot(self, s: ConnectState, upto: int) -> cfgt.ConfigSnapshot:
        """A worker's snapshot of the config topic read up to ``upto``."""
        ...

    def _latest(self, s: ConnectState) -> cfgt.ConfigSnapshot:
        """The config topic read to its end."""
        ...
