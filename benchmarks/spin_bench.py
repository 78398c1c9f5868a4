"""keos's explicit search against SPIN on the same state space: CPU seconds, states/CPU-s, bytes/state.

The yardstick of issue 27.  The SPIN twin folder (default ``benchmarks/spin-twin``, or
``--twin DIR``, or ``KEOS_SPIN_TWIN``) holds Promela models whose reachable state sets equal
keos's for a scenario TOML beside them (``r3t3m3``: 121,840 states, equal state by state, see
``spin-twin/compare_states.py``; ``r3t5m3``: 746,964 on pan's side).  The default folder is a copy of
``/work/shared/bench/spin-twin`` (442,255 states) brought up to the model's rules at 7fda58b;
``benchmarks/spin-twin/NOTE.md`` says what differs and why.  This script

1. builds SPIN's verifier ``pan`` from the ``.pml`` as the folder's README says
   (``spin -a``, then ``gcc -O2 -DSAFETY -DNOREDUCE -DBFS``: exact breadth-first search, no
   partial-order reduction) in a temporary directory;
2. runs ``pan -m1000000 -w22 -c0`` (``-c0``: do not stop at an assertion violation, so that pan
   explores the whole space as keos's search does when an invariant is violated) and
   ``keos explore --scenario <toml>`` back to back, ``--repeat``
   times (default 3), each in its own process, and keeps the **minimum CPU seconds (user + sys)**
   of each: the machine is shared, and wall time measures the other users' load more than the
   search.  keos's figure is the whole ``keos explore`` process, start-up included, as
   ``/usr/bin/time`` measures it in the README; so is pan's;
3. prints, per tool, the distinct states (both must agree, or the script fails), CPU seconds,
   states per CPU-second, bytes per state (the process's peak RSS divided by the states: for
   keos that includes the interpreter and its imports, for pan its hash table) and the ratio
   keos / pan.

It needs ``spin`` and ``gcc`` (Debian: ``apt-get install -y spin gcc``).  Without ``spin`` it
prints why and exits 0 having measured nothing: it is a benchmark, not a test, and CI does not
install it.  Extra arguments for keos go after ``--keos-arg`` (repeatable), e.g.
``--keos-arg=--kernel --keos-arg=compiled``; then a keos run that fell back to the interpreted model
(a failed or stale build: one ``keos:`` line on its stderr) stops the benchmark instead of being reported
as compiled.

Usage::

    python benchmarks/spin_bench.py [--twin DIR] [--model r3t5m3] [--repeat 3] [--json]
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TWIN = Path(os.environ.get("KEOS_SPIN_TWIN", str(ROOT / "benchmarks" / "spin-twin")))


def _run(argv: list[str], cwd: Path | None = None) -> tuple[str, float, int, str]:
    """Run ``argv`` to completion; its stdout, CPU seconds (user + sys), peak RSS in bytes (its own, via wait4)
    and stderr."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
        err.seek(0)
        errors = err.read()
    if proc.returncode not in (0, 1):  # keos exits 1 on a violation; anything else is a failure
        raise SystemExit(f"spin_bench: {' '.join(argv)} exited {proc.returncode}")
    return text, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, errors


def build_pan(pml: Path, workdir: Path) -> Path:
    """``spin -a`` then gcc, as the twin's README says; the path of the ``pan`` binary."""
    shutil.copy(pml, workdir / pml.name)
    subprocess.run(["spin", "-a", pml.name], cwd=workdir, check=True, capture_output=True)
    subprocess.run(["gcc", "-O2", "-DSAFETY", "-DNOREDUCE", "-DBFS", "-o", "pan", "pan.c"], cwd=workdir, check=True,
                   capture_output=True)
    return workdir / "pan"


def run_pan(pan: Path) -> dict[str, Any]:
    text, cpu, rss, _ = _run([str(pan), "-m1000000", "-w22", "-c0"], cwd=pan.parent)
    found = re.search(r"(\d+) states, stored", text)
    if found is None:
        raise SystemExit(f"spin_bench: no 'states, stored' line in pan's output:\n{text[-2000:]}")
    errors = re.search(r"errors: (\d+)", text)
    return {"states": int(found.group(1)), "cpu_s": cpu, "peak_rss_bytes": rss,
            "violated": errors is not None and int(errors.group(1)) > 0}


def run_keos(toml: Path, extra: list[str]) -> dict[str, Any]:
    keos = [sys.executable, "-m", "keos"]
    text, cpu, rss, errors = _run([*keos, "explore", "--scenario", str(toml), "--json", *extra])
    if _compiled_asked(extra) and "keos: running the compiled model" not in errors:
        # The loader fell back to the interpreted model (a failed or stale build): a column labelled
        # compiled would measure the interpreted search (session 32: the build had failed since the model
        # gained modules mypyc cannot compile, and nothing said so).
        said = [line for line in errors.splitlines() if line.startswith("keos:")]
        raise SystemExit("spin_bench: --kernel compiled was asked but keos ran the interpreted model"
                         + (f" ({said[-1]})" if said else ""))
    doc = json.loads(text)
    return {"states": int(doc["stats"]["distinct_states"]), "cpu_s": cpu, "peak_rss_bytes": rss,
            "complete": doc["complete"], "violated": doc["violated"]}


def _compiled_asked(extra: list[str]) -> bool:
    """Whether keos's extra arguments ask for ``--kernel compiled`` (``--kernel compiled`` or ``--kernel=compiled``)."""
    joined = " ".join(extra)
    return "--kernel compiled" in joined or "--kernel=compiled" in joined


def bench(twin: Path, model: str, repeat: int, extra: list[str], allow_mismatch: bool = False) -> dict[str, Any]:
    """Min-of-``repeat`` CPU seconds of pan and keos on the twin ``model``, run back to back.

    ``ratio`` is pan's states per CPU-second over keos's: the CPU ratio when both count the same
    states, and still the issue's measure ("per CPU-second") when they do not (``allow_mismatch``:
    the model gained behaviour since the twin was written, e.g. a fixed infidelity).
    """
    pml, toml = twin / f"{model}.pml", twin / f"{model}.toml"
    for f in (pml, toml):
        if not f.is_file():
            raise SystemExit(f"spin_bench: {f} not found (--twin DIR, --model NAME)")
    with tempfile.TemporaryDirectory(prefix="keos-spin-") as tmp:
        pan = build_pan(pml, Path(tmp))
        pans, keoses = [], []
        for _ in range(repeat):
            pans.append(run_pan(pan))
            keoses.append(run_keos(toml, extra))
    states = {r["states"] for r in pans + keoses}
    if len(states) != 1 and not allow_mismatch:
        raise SystemExit(f"spin_bench: the state counts differ: pan {pans[0]['states']:,}, "
                         f"keos {keoses[0]['states']:,} (the model changed since the twin was written; "
                         "--allow-state-mismatch compares states per CPU-second)")
    rows: dict[str, Any] = {}
    for name, runs in (("pan", pans), ("keos", keoses)):
        best = min(runs, key=lambda r: r["cpu_s"])
        rows[name] = {
            "states": best["states"],
            "cpu_s": round(best["cpu_s"], 3),
            "cpu_s_runs": [round(r["cpu_s"], 3) for r in runs],
            "states_per_cpu_s": round(best["states"] / best["cpu_s"]),
            "bytes_per_state": round(min(r["peak_rss_bytes"] for r in runs) / best["states"]),
            "violated": best["violated"],
        }
    one, five, fifteen = os.getloadavg()
    return {"model": model, "repeat": repeat, "keos_args": extra, "load_average": [one, five, fifteen],
            "cores": os.cpu_count(), **rows, "states_match": len(states) == 1,
            "ratio": round(rows["pan"]["states_per_cpu_s"] / rows["keos"]["states_per_cpu_s"], 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--twin", type=Path, default=DEFAULT_TWIN,
                        help=f"the SPIN twin folder (default {DEFAULT_TWIN})")
    parser.add_argument("--model", default="r3t5m3", help="NAME.pml / NAME.toml in the twin folder (default r3t5m3)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the minimum CPU is kept (default 3)")
    parser.add_argument("--keos-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for keos explore")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--allow-state-mismatch", action="store_true",
                        help="measure even if keos and pan count different states (compare states per CPU-second)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    missing = [tool for tool in ("spin", "gcc") if shutil.which(tool) is None]
    if missing:
        print(f"spin_bench: skipped, {' and '.join(missing)} not installed (Debian: apt-get install -y spin gcc)")
        return 0
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = bench(args.twin, args.model, args.repeat, args.keos_arg, args.allow_state_mismatch)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    if not result["states_match"]:
        print(f"# WARNING: pan counts {result['pan']['states']:,} states, keos {result['keos']['states']:,}: "
              "the ratio below is of states per CPU-second")
    print(f"# {args.model}: {result['pan']['states']:,} states; CPU seconds (user+sys), min of {args.repeat} runs "
          f"back to back; load average {result['load_average'][0]:.1f} on {result['cores']} cores")
    print(f"{'tool':<8}{'CPU s':>9}{'runs':>28}{'states/CPU-s':>14}{'bytes/state':>13}")
    for name in ("pan", "keos"):
        r = result[name]
        runs = " ".join(f"{c:.2f}" for c in r["cpu_s_runs"])
        print(f"{name:<8}{r['cpu_s']:>9.2f}{runs:>28}{r['states_per_cpu_s']:>14,}{r['bytes_per_state']:>13,}")
    flags = "  " + " ".join(args.keos_arg) if args.keos_arg else ""
    print(f"keos / pan: {result['ratio']:.1f}x per CPU-second (target <= 6x){flags}")
    verdicts = {name: "violated" if result[name]["violated"] else "holds" for name in ("pan", "keos")}
    print(f"verdicts: pan {verdicts['pan']}, keos {verdicts['keos']} (an invariant of the twin's asserts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
