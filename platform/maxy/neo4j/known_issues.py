"""Known Neo4j server bugs that an operator sees in the server's log, and what they mean for Maxy.

The one today: a filtered vector SEARCH fails inside Lucene after a delete
(docs/neo4j-vector-filter-bug.md). The server logs one ERROR line per failed query; Maxy answers
that query from an exact scan instead, so the results are complete and the line is noise, not
data loss. ``maxy status`` reports whether the running version is known to have it and how many
such lines the managed server wrote since it last started.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

VECTOR_FILTER_BUG = "vector-filter-search"
# Versions on which docs/repro/neo4j_vector_filter_bug.py was run and failed (each bundles
# lucene-core 10.5.1). A version not listed is untested, not known to be fixed.
VECTOR_FILTER_BUG_VERSIONS = ("2026.08.1", "2026.09.0")
# 33554431 is Lucene's "no more documents" (2^31 - 1) shifted to a bit-set word index: the same every time.
_MARKERS = ("Neo.DatabaseError.Statement.ExecutionFailed", "Index 33554431 out of bounds for length")
_START_HEADER = "=== maxy: starting Neo4j"
_LOG_LINE = (
    "ERROR Client triggered an unexpected error [Neo.DatabaseError.Statement.ExecutionFailed]: "
    "Index 33554431 out of bounds for length N, reference <uuid>."
)


def vector_filter_bug(version: str | None, console_log: Path | None = None) -> dict[str, Any]:
    """What the operator should know about the filtered vector search bug on ``version``:
    whether it is known there (True), untested (None), and, for a managed server, how many of its
    ERROR lines the console log holds since the server's last start."""
    known = True if version in VECTOR_FILTER_BUG_VERSIONS else None
    return {
        "issue": VECTOR_FILTER_BUG,
        "knownOnThisVersion": known,
        "testedVersions": list(VECTOR_FILTER_BUG_VERSIONS),
        "logLine": _LOG_LINE,
        "loggedSinceStart": None if console_log is None else count_bug_lines(console_log),
        "meaning": (
            "the server's filtered vector search failed after a delete; Maxy answered that query "
            "from an exact scan of the account's vectors, so results are complete"
        ),
        "doc": "docs/neo4j-vector-filter-bug.md",
    }


def count_bug_lines(console_log: Path) -> int | None:
    """The bug's ERROR lines after the last start header of a managed server's console log
    (None when there is no log to read)."""
    count = 0
    try:
        with open(console_log, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(_START_HEADER):
                    count = 0
                elif " ERROR " in line and all(marker in line for marker in _MARKERS):
                    count += 1
    except OSError:
        return None
    return count
