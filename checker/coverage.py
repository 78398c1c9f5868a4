"""Coverage of the transaction coordinator's state graph and of error codes, per run.

Every coordinator transition emits an event ``txn:<From>-><To>`` and every
error response an event ``error:<CODE>`` (see ``model/txn_coordinator.py``).
:func:`transition_coverage` compares the transitions a run observed with the
legal ones in :data:`model.coordinator.transaction.transaction_state.VALID_PREVIOUS_STATES` -- the same
table the step function reads -- and :func:`transition_graph` builds a
networkx ``DiGraph`` whose edges are the legal transitions, marked observed
or not, plus any observed edge the table forbids (marked ``illegal``).

networkx is used here, in the checker, never in ``model/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keos.model.coordinator.transaction.transaction_state import STATES, valid_transitions

__all__ = ["TransitionCoverage", "error_coverage", "transition_coverage", "transition_graph"]


@dataclass(frozen=True)
class TransitionCoverage:
    """Observed vs legal coordinator transitions of one run."""

    observed: tuple[tuple[str, str], ...]
    unobserved: tuple[tuple[str, str], ...]
    illegal: tuple[tuple[str, str], ...]
    counts: Mapping[tuple[str, str], int]

    @property
    def ratio(self) -> float:
        """Fraction of the table's transitions observed."""
        total = len(self.observed) + len(self.unobserved)
        return len(self.observed) / total if total else 1.0

    def to_json(self) -> dict[str, Any]:
        """JSON summary."""
        return {
            "observed": [f"{a}->{b}" for a, b in self.observed],
            "unobserved": [f"{a}->{b}" for a, b in self.unobserved],
            "illegal": [f"{a}->{b}" for a, b in self.illegal],
            "ratio": round(self.ratio, 3),
        }


def _transitions(events: Mapping[str, int]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for name, count in events.items():
        if name.startswith("txn:") and "->" in name:
            src, dst = name[4:].split("->", 1)
            out[(src, dst)] = out.get((src, dst), 0) + count
    return out


def transition_coverage(events: Mapping[str, int]) -> TransitionCoverage:
    """Compare a run's ``txn:`` events (``EngineResult.coverage``) with the table."""
    seen = _transitions(events)
    legal = valid_transitions()
    observed = tuple(t for t in legal if t in seen)
    unobserved = tuple(t for t in legal if t not in seen)
    illegal = tuple(sorted(t for t in seen if t not in legal))
    return TransitionCoverage(observed, unobserved, illegal, seen)


def error_coverage(events: Mapping[str, int]) -> dict[str, int]:
    """Error codes returned in a run (``error:<CODE>`` events), with counts."""
    return {name[6:]: n for name, n in sorted(events.items()) if name.startswith("error:")}


def transition_graph(events: Mapping[str, int]) -> Any:
    """A networkx DiGraph of the coordinator's states; edge attrs ``observed``, ``count``, ``illegal``."""
    import networkx as nx

    cov = transition_coverage(events)
    graph = nx.DiGraph()
    graph.add_nodes_from(STATES)
    for src, dst in valid_transitions():
        n = cov.counts.get((src, dst), 0)
        graph.add_edge(src, dst, observed=n > 0, count=n, illegal=False)
    for src, dst in cov.illegal:
        graph.add_edge(src, dst, observed=True, count=cov.counts[(src, dst)], illegal=True)
    return graph
