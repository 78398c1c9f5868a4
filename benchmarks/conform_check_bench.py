"""How fast ``keos conform``'s history checker is on large histories (issue 25: 100,000 ops in < 10 s).

Usage: ``.venv/bin/python benchmarks/conform_check_bench.py [--sizes 10000,48000,100000] [--seed 1]``.

A synthetic Jepsen-shaped history is generated (deterministic from the seed): 8
transactional producers commit (and every fifth time abort) transactions of 1-3
sends over 16 keys, 4 idempotent producers send single records, 6 consumers poll
every key in order (read_committed and read_uncommitted), re-assigning now and then,
a consume-transform-produce process polls and sends in one transaction, and a final
drain reads every key (as keos's workloads end).  Offsets
are what a correct broker gives, so the history is clean and every check runs to
the end (none stops at a first finding).  One JSON line per size: operations,
records, seconds for :func:`keos.checker.conform.anomalies.check`, anomalies found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from typing import Any

from keos.checker.conform.anomalies import check
from keos.checker.conform.history import History, Op


def synthetic(ops_wanted: int, seed: int) -> History:
    rng = random.Random(seed)
    keys = 16
    logs: list[list[tuple[int, bool]]] = [[] for _ in range(keys)]  # (value, committed)
    ops: list[Op] = []
    t = 0
    value = 0
    positions: dict[int, list[int]] = {}

    def add(typ: str, process: Any, f: str, v: Any, **extra: Any) -> Op:
        nonlocal t
        t += 1000
        op = Op(len(ops), t, typ, process, f, v, None, extra)
        ops.append(op)
        return op

    while len(ops) < ops_wanted - 2 * keys:
        r = rng.random()
        if r < 0.45:
            p = rng.randrange(8)
            sends = []
            commit = rng.random() > 0.2
            for k in rng.sample(range(keys), rng.randint(1, 3)):
                value += 1
                logs[k].append((value, commit))
                sends.append((k, value, len(logs[k]) - 1))
            add("invoke", p, "txn", [["send", k, v] for k, v, _ in sends], transactional_id=f"t{p}", instance=1)
            if commit:
                add("ok", p, "txn", [["send", k, [o, v]] for k, v, o in sends], transactional_id=f"t{p}", instance=1)
            else:
                add("fail", p, "txn", [["send", k, v] for k, v, _ in sends], transactional_id=f"t{p}", instance=1)
        elif r < 0.6:
            p = 100 + rng.randrange(4)
            k = rng.randrange(keys)
            value += 1
            logs[k].append((value, True))
            add("invoke", p, "send", [["send", k, value]])
            add("ok", p, "send", [["send", k, [len(logs[k]) - 1, value]]])
        elif r < 0.97:
            c = 200 + rng.randrange(6)
            iso = "read_committed" if c % 2 == 0 else "read_uncommitted"
            pos = positions.setdefault(c, [0] * keys)
            if rng.random() < 0.01:  # an explicit seek (keos's rewind form: [key, offset] pairs)
                positions[c] = [rng.randint(0, len(logs[k])) for k in range(keys)]
                add("invoke", c, "assign", list(range(keys)), isolation=iso)
                add("ok", c, "assign", [[k, positions[c][k]] for k in range(keys)], isolation=iso)
                continue
            polled: dict[int, list[list[int]]] = {}
            for k in rng.sample(range(keys), 4):
                got = []
                while pos[k] < len(logs[k]) and len(got) < 5:
                    v, committed = logs[k][pos[k]]
                    if committed or iso == "read_uncommitted":
                        got.append([pos[k], v])
                    pos[k] += 1
                if got:
                    polled[k] = got
            add("invoke", c, "poll", [["poll"]], isolation=iso)
            add("ok", c, "poll", [["poll", polled]], isolation=iso)
        else:
            p = 300
            pos = positions.setdefault(p, [0] * keys)
            k = rng.randrange(keys // 2)
            got = []
            while pos[k] < len(logs[k]) and len(got) < 3:
                v, committed = logs[k][pos[k]]
                if committed:
                    got.append([pos[k], v])
                pos[k] += 1
            out = keys // 2 + k
            sends = []
            for _ in got:
                value += 1
                logs[out].append((value, True))
                sends.append((out, value, len(logs[out]) - 1))
            tid = {"transactional_id": "ctp", "instance": 1, "isolation": "read_committed"}
            add("invoke", p, "txn", [["poll"]] + [["send", o, v] for o, v, _ in sends], **tid)
            add("ok", p, "txn", [["poll", {k: got}]] + [["send", o, [off, v]] for o, v, off in sends], **tid)
    # a final drain: one read_committed consumer reads every key from the start, as keos's workloads end
    for k in range(keys):
        got = [[o, v] for o, (v, committed) in enumerate(logs[k]) if committed]
        add("invoke", 900, "poll", [["poll"]], isolation="read_committed")
        add("ok", 900, "poll", [["poll", {k: got}]], isolation="read_committed")
    return History(ops)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,48000,100000")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        h = synthetic(size, args.seed)
        start, cpu = time.perf_counter(), time.process_time()
        analysis = check(h)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(
            json.dumps(
                {
                    "operations": len(h),
                    "records_read": analysis.stats["records_read"],
                    "sends": analysis.stats["sends"],
                    "check_s": round(elapsed, 2),
                    "check_cpu_s": round(cpu, 2),
                    "anomalies": len(analysis.anomalies),
                    "kinds": sorted({a.kind for a in analysis.anomalies}),
                }
            ),
            flush=True,
        )
    print(json.dumps({"loadavg": os.getloadavg()}))


if __name__ == "__main__":
    main()
