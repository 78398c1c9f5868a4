"""What a hardware model checker reaches on the idempotence core: ABC's BMC and PDR on ``keos export-aiger``.

Usage: ``.venv/bin/python benchmarks/abc_bench.py [--budget 60] [--scenarios a,b] [--variant kafka]
[--abc berkeley-abc]``.

The z3 engine's depth within 60 s (``benchmarks/bmc_bench.py``) is set
against what ABC (Debian package ``berkeley-abc``; skipped with a note when it
is not installed) reaches on the same model in the same time: each scenario
is exported with :func:`checker.bmc.fixed.circuit` (all four invariants and
the encoding's ``overflow`` as bad outputs) and given to

* ``bmc3 -a``: ABC's incremental SAT-based BMC on every output -- the depth
  with no output asserted (``frames - 1`` steps), or the outputs asserted and
  their frames;
* ``pdr -a``: property-directed reachability (IC3) -- proved, disproved, or
  the frame it was working on when the budget ran out (no counterexample of
  fewer steps exists).

One JSON line per scenario and method, then the load average (the figures
are wall clock on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from keos.checker.bmc.encoding import INVARIANTS
from keos.checker.bmc.fixed import FixedEncoding, circuit
from keos.scenarios import build_model, builtin_scenarios


def run_abc(abc: str, path: Path, command: str, budget: float) -> tuple[str, float]:
    start = time.perf_counter()
    out = subprocess.run([abc, "-c", f"read_aiger {path}; {command} -T {int(budget)}"], capture_output=True,
                         text=True, timeout=budget + 120, check=False)
    return out.stdout + out.stderr, round(time.perf_counter() - start, 3)


def parse_bmc3(text: str, bad: list[str]) -> dict[str, Any]:
    asserted = {bad[int(o)]: int(f) for o, f in re.findall(r"Output (\d+) was asserted in frame\s+(\d+)", text)}
    clean = re.search(r"No output asserted in (\d+) frames", text)
    after = re.search(r"after (\d+) frames", text)
    frames = int(clean.group(1)) if clean else int(after.group(1)) if after else None
    return {"depth_reached": frames - 1 if frames else None, "asserted_at_step": asserted}


def parse_pdr(text: str) -> dict[str, Any]:
    counts = re.search(r"Proved = (\d+)\. Disproved = (\d+)\. Undecided = (\d+)", text)
    frame = re.findall(r"in frame (\d+)", text)
    return {"proved": int(counts.group(1)) if counts else None, "disproved": int(counts.group(2)) if counts else None,
            "undecided": int(counts.group(3)) if counts else None, "last_frame": int(frame[-1]) if frame else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per scenario and method")
    ap.add_argument("--scenarios", help="comma-separated (default: every idempotence scenario)")
    ap.add_argument("--variant", default="kafka")
    ap.add_argument("--abc", default="berkeley-abc", help="the ABC executable")
    args = ap.parse_args(argv)
    abc = shutil.which(args.abc)
    print(json.dumps({"loadavg_start": os.getloadavg()}))
    if abc is None:
        print(json.dumps({"abc": f"{args.abc} not found (Debian: apt-get install berkeley-abc); nothing measured"}))
        return 0
    wanted = args.scenarios.split(",") if args.scenarios else None
    with tempfile.TemporaryDirectory() as tmp:
        for name, scenario in sorted(builtin_scenarios().items()):
            if scenario.model != "idempotence" or (wanted and name not in wanted):
                continue
            model = build_model(scenario, args.variant)
            enc = FixedEncoding(model)  # type: ignore[arg-type]
            start = time.perf_counter()
            aig = circuit(enc, list(INVARIANTS))
            path = Path(tmp) / f"{name}.aig"
            with path.open("wb") as stream:
                aig.write(stream)
            base = {"scenario": name, "variant": args.variant, "slots": enc.K, "bits": enc.width,
                    "latches": len(aig.latches), "ands": len(aig.ands),
                    "export_s": round(time.perf_counter() - start, 3)}
            bad = [n for n, _ in aig.bad]
            text, secs = run_abc(abc, path, "bmc3 -a", args.budget)
            print(json.dumps(base | {"method": "abc bmc3", "elapsed_s": secs} | parse_bmc3(text, bad)), flush=True)
            text, secs = run_abc(abc, path, "pdr -a", args.budget)
            print(json.dumps(base | {"method": "abc pdr", "elapsed_s": secs} | parse_pdr(text)), flush=True)
    print(json.dumps({"loadavg_end": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
