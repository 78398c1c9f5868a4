#!/usr/bin/env bash
# Create .venv (if needed) and install keos with its dependencies into it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# conformance: confluent-kafka and the Tansu binary, so CI runs the keos conform tests too.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev,conformance]'
