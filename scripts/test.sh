#!/usr/bin/env bash
# Set up, lint, type-check and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check keos model invariants scenarios checker reports tests benchmarks
.venv/bin/mypy
.venv/bin/pytest -q -p no:cacheprovider tests
