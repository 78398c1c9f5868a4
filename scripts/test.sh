#!/usr/bin/env bash
# Set up, lint, type-check and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check keos model invariants scenarios checker reports tests benchmarks
.venv/bin/mypy
# One pytest worker per core (pytest-xdist); tests that start Spark share one worker (tests/conftest.py), so
# they reuse one JVM and two never compete for the cores.  KEOS_TEST_WORKERS overrides the count.
.venv/bin/pytest -q -p no:cacheprovider -n "${KEOS_TEST_WORKERS:-auto}" --dist loadgroup tests
