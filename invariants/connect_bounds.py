"""Connect's writes are driven by finite work: no write loop (a bounded-liveness property).

Everything a Connect cluster of a scenario writes serves a finite amount of work: each task-config generation
is written once by the leader (``DistributedHerder.reconfigureConnector``), each zombie-fencing round writes one
task-count record (KIP-618 §Task count records), each source record is sent once per task instance and each
offset flushed with it, a finished source partition is forgotten with one tombstone (KAFKA-15018), and the
connector aborts at most ``max_connector_aborts`` transactions.  Producer epochs grow once per instance start,
claim of the config topic, fencing round and (TV2) transaction.  Only the environment adds to that: every
injected fault (a crash, a pause, a failed round or write, a restart request) can restart a bounded share of it.

So every log of the cluster and every producer epoch stays below a bound computed from the scenario's
topology and fault budget, and the config topic holds no task-config generation the connector did not ask
for (the scenario's ``task_counts``: the leader writes task configs only when the connector requests a
reconfiguration, ``DistributedHerder.reconfigureConnector``). A model whose cluster writes without end -- a leader
that rewrites its task configs or reclaims the config topic on every tick, a task that re-commits the same
tombstone, a start-up that fails and is restarted for ever -- is livelocked; the eventually properties
(``connect_progress``) cannot judge such a run, since its search never ends, so this property turns the livelock
into a finding. The bound is generous: the default and ``reach`` scenarios stay below 40 % of it (measured over
their whole state spaces).
"""

from __future__ import annotations

from keos.invariants._common import no_findings
from keos.model.connect import config_topic as cfgt
from keos.model.connect.records import CONFIG_TOPIC, ConnectConfig, ConnectState
from keos.model.interface import Property

__all__ = ["connect_bounds_properties", "work_bound"]


def work_bound(config: ConnectConfig) -> int:
    """The largest log length and producer epoch a run of ``config`` may reach."""
    topo = config.topology
    rounds = len(topo.task_counts) + config.faults.total + 1
    source_work = topo.records * topo.source_partitions + topo.max_tombstones + topo.max_connector_aborts
    return 4 * rounds * (topo.max_tasks + 1) + 2 * source_work


def _overruns(bound: int, generations: int, s: ConnectState) -> list[str]:
    names = ("config", "global offsets", "connector offsets", "output")
    config = s.kafka.partitions[CONFIG_TOPIC]
    latest = cfgt.snapshot(config, cfgt.read_to_end(config)).generation
    out = [
        f"the config topic holds task-config generation {latest}, but the connector asked for generations "
        f"0..{generations - 1} only"
    ] if latest >= generations else []
    out += [
        f"the {names[i] if i < len(names) else i} topic holds {len(p.log)} batches, more than the scenario's "
        f"work allows ({bound})"
        for i, p in enumerate(s.kafka.partitions)
        if len(p.log) > bound
    ]
    out += [
        f"transactional id {t}'s producer epoch reached {md.producer_epoch}, more than the scenario's work allows "
        f"({bound})"
        for t, md in enumerate(s.kafka.coordinator)
        if md is not None and md.producer_epoch > bound
    ]
    return out


def connect_bounds_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """``connect_writes_bounded``."""
    bound, generations = work_bound(config), len(config.topology.task_counts)
    return (
        no_findings(
            name="connect_writes_bounded",
            fact="The cluster's logs and producer epochs stay within what the scenario's finite work and fault "
            "budget call for: no write or initTransactions is repeated without end, and no task-config generation "
            "appears that the connector did not request.",
            source="KIP-618 §Task count records, §Source task startup; DistributedHerder (one task-config write per "
            "generation, one task-count record per round); KAFKA-15018 (one tombstone per finished partition)",
            catches="a write loop: task configs rewritten, the config topic reclaimed, a tombstone re-committed or a "
            "failing start-up restarted for ever",
            findings=lambda s: _overruns(bound, generations, s),
            partners=("source_record_committed",),
        ),
    )
