#!/usr/bin/env bash
# Lint, format and type checks (configured in pyproject.toml); run before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
"$PY" -m ruff check platform plugins tests benchmarks
"$PY" -m ruff format --check platform plugins tests benchmarks
"$PY" -m mypy
