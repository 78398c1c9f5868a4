#!/usr/bin/env bash
# The mutation sample of issue 23 as a CI job of its own (not part of .ci/run: it costs about 15 CPU-minutes,
# see README "Reach and kill power"): measure which scenarios reach each line of model/ (keos coverage), then
# run the stratified sample of 100 mutants with seed 1 on one local process per core.  Results (JSONL, Parquet,
# JSON, HTML, JUnit) go to keos-out/mutate; exit 0 done, 1 below --fail-under (when given), 4 partial.
# Extra arguments go to keos mutate (e.g. --fail-under 60, --sample 1000, --resume).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p keos-out
.venv/bin/keos coverage --out keos-out/coverage --no-handlers > keos-out/coverage.txt
tail -4 keos-out/coverage.txt
.venv/bin/keos mutate --local-python --jobs "$(nproc)" --sample 100 --seed 1 --reach keos-out/coverage/reach.json \
  --out keos-out/mutate --html keos-out/mutate/report.html --junit keos-out/mutate/junit.xml "$@"
