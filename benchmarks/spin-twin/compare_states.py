"""Compare the SPIN twin's state set with keos's, state by state (not only by count).

keos's states are enumerated with the model's own ``actions``/``step`` (every state expanded, as ``pan -c0``
does) and printed in the twin's ``-DDUMP`` format; pan is built with ``spin -DDUMP -a`` and
``gcc -DSAFETY -DNOREDUCE -DBFS -DPRINTF`` and prints every state a step reaches.  The two sets must be equal
but for the initial state, which no step of pan's reaches and so is never printed.

Usage (from the repository root, ``spin`` and ``gcc`` installed)::

    .venv/bin/python benchmarks/spin-twin/compare_states.py benchmarks/spin-twin/r3t3m3

It exits 0 when the sets agree and 1 with a sample of the differences otherwise.  About 40 CPU-s for
``r3t3m3`` (121,840 states); ``r3t5m3`` needs some minutes and several GB.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from keos.checker.api import load_scenario
from keos.model.clients.producer import MAX_ATTEMPTS
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest
from keos.model.systems import idempotence as idem
from keos.scenarios import build_model

#: The twin's error codes (``E_NONE``, ``E_OOO``, ``E_EPOCH``).
ERRORS = {Errors.NONE: 0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER: 1, Errors.INVALID_PRODUCER_EPOCH: 2}
#: The twin's slot counts: batches, log entries, cached batch metadata, envelopes.
NB, NL, NM, NN = 3, 6, 5, 10


def _slots(items: list[str], n: int, empty: str) -> str:
    return "".join(items + [empty] * (n - len(items)))


def dump_line(s: Any) -> str:
    """One keos state in the twin's ``dump()`` format (one producer, one partition)."""
    p = s.producers[0]
    e = p.partitions[0]
    out = (
        f"S {p.producer_id} {p.producer_epoch} {p.connection} {p.next_record} {int(p.epoch_bump_required)} | "
        f"{e.producer_epoch} {e.next_sequence} {e.last_acked_sequence} {int(e.unresolved)} {int(e.rewrite)} | "
        f"{len(p.batches)} "
    )
    batches = [
        f"[{b.records[0]} {b.producer_epoch if b.has_sequence else -1} {b.base_sequence} {int(b.in_flight)} "
        f"{b.attempts}]"
        for b in p.batches
    ]
    out += _slots(batches, NB, "[0 0 0 0 0]")
    leader = s.partitions[0]
    log = [f"[{x.producer_id} {x.producer_epoch} {x.base_sequence} {x.records[0]}]" for x in leader.log]
    out += f" | {len(leader.log)} " + _slots(log, NL, "[0 0 0 0]")
    out += f" {leader.high_watermark} {leader.leader_epoch} | "
    entry = leader.producers[0] if leader.producers else None
    if entry is None:
        out += "0 0 0 0 " + _slots([], NM, "[0 0]")
    else:
        metas = [f"[{m.first_seq} {m.offset}]" for m in entry.batches]
        out += f"1 {entry.producer_id} {entry.producer_epoch} {len(entry.batches)} " + _slots(metas, NM, "[0 0]")
    envelopes = []
    for env in s.network:
        body = env.body
        rid, att = divmod(body.correlation_id, MAX_ATTEMPTS)
        if isinstance(body, ProduceRequest):
            envelopes.append(
                f"[1 {env.connection} {body.producer_id} {body.producer_epoch} {body.base_sequence} {rid} {att} 0 0]"
            )
        else:
            envelopes.append(
                f"[2 {env.connection} 0 {body.producer_epoch} {body.base_sequence} {rid} {att} "
                f"{ERRORS[body.error]} {body.base_offset}]"
            )
    out += f" | {len(s.network)} " + _slots(envelopes, NN, "[0 0 0 0 0 0 0 0 0]")
    used = dict(zip(idem.FAULT_KINDS, s.faults_used))
    faults = " ".join(str(used[k]) for k in ("drop", "duplicate", "request_timeout", "batch_expiry", "leader_restart"))
    out += f" | {s.next_producer_id} | {faults} | "
    if p.expired:
        ((cid, _, last),) = p.expired
        rid, att = divmod(cid, MAX_ATTEMPTS)
        expired = f"1 {rid} {att} {last}"
    else:
        expired = "0 0 0 0"
    orphans = idem._orphan_requests(s, 0, p)
    out += f"{e.unresolved_sequence} {expired} {int(bool(s.ghost.refused))} {orphans} | "
    out += "".join(f"{s.ghost.acked.count(r)} {s.ghost.failed.count(r)} " for r in range(NB))
    g = s.ghost
    verdicts = (
        g.unexplained_failures,
        g.misplaced_acks,
        g.unhealthy,
        g.overtaken,
        g.wrong_answers,
        g.needless_bumps,
        g.unrestarted,
        g.missed_bumps,
        g.misjudged_failures,
        g.misstamped,
    )
    if any(verdicts):  # a judge's verdict the twin does not model: the line then matches no pan state
        out += " GHOST" + repr(verdicts)
    return out


def keos_states(toml: Path) -> set[str]:
    """Every state keos's model reaches, every state expanded, in the twin's format."""
    model = build_model(load_scenario(toml))
    seen = dict.fromkeys(model.init_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for state in frontier:
            for action in model.actions(state):
                result = model.step(state, action)
                if result is not None and result.state not in seen:
                    seen[result.state] = None
                    nxt.append(result.state)
        frontier = nxt
    return {dump_line(s) for s in seen}


def pan_states(pml: Path) -> set[str]:
    """Every state pan's breadth-first search prints (``-DDUMP``: after each step)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(pml, work / pml.name)
        subprocess.run(["spin", "-DDUMP", "-a", pml.name], cwd=work, check=True, capture_output=True)
        subprocess.run(
            ["gcc", "-O2", "-DSAFETY", "-DNOREDUCE", "-DBFS", "-DPRINTF", "-o", "pan", "pan.c"],
            cwd=work,
            check=True,
            capture_output=True,
        )
        run = subprocess.run(["./pan", "-m1000000", "-w22", "-c0"], cwd=work, capture_output=True, text=True)
    return {line.rstrip() for line in run.stdout.splitlines() if line.startswith("S ")}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: compare_states.py benchmarks/spin-twin/<name> (the .pml and .toml beside each other)")
        return 2
    base = Path(argv[0])
    keos = {line.rstrip() for line in keos_states(base.with_suffix(".toml"))}
    pan = pan_states(base.with_suffix(".pml"))
    only_keos, only_pan = sorted(keos - pan), sorted(pan - keos)
    print(f"keos {len(keos):,} states, pan printed {len(pan):,}; keos only {len(only_keos)}, pan only {len(only_pan)}")
    for line in only_keos[:3]:
        print("keos only:", line[:300])
    for line in only_pan[:3]:
        print("pan only: ", line[:300])
    # the initial state is keos's and never printed by pan (no step of pan's reaches it)
    return 0 if len(only_keos) <= 1 and not only_pan else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
