#!/usr/bin/env bash
# Run the test suite against the real local Neo4j (installed and started by setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/setup.sh >&2
exec .venv/bin/python -m pytest "$@"
