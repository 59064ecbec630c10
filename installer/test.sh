#!/usr/bin/env bash
# Lint, format and type checks, then the test suite against the real local Neo4j (installed
# and started by setup.sh) and, for the console, Debian's chromium (installed by browser.sh when
# run as root).
set -euo pipefail
cd "$(dirname "$0")/.."
MAXY_SKIP_DEMO=1 bash installer/setup.sh >&2  # the demo has its own test (tests/integration/test_demo.py)
bash installer/browser.sh >&2
bash installer/check.sh >&2
exec .venv/bin/python -m pytest "$@"
