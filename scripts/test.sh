#!/usr/bin/env bash
# Set up, lint, type-check and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check keos model invariants scenarios checker reports tests benchmarks
.venv/bin/mypy
# One pytest worker per core (pytest-xdist; KEOS_TEST_WORKERS overrides the count); the 15 slowest tests are listed
# so a CI log shows what the ten-minute budget goes to.  Tests write only under
# tmp_path and bind only free ports, so they are independent of the worker they run in.  --dist worksteal: an idle
# worker takes queued tests from a busy one, so a long test near the end does not leave the other core idle.
.venv/bin/pytest -q -p no:cacheprovider -n "${KEOS_TEST_WORKERS:-auto}" --dist worksteal --durations=15 tests
