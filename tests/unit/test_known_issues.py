"""What ``maxy status`` tells about the Neo4j filtered vector search bug's ERROR log lines."""

from __future__ import annotations

from pathlib import Path

from maxy.neo4j.known_issues import VECTOR_FILTER_BUG_VERSIONS, count_bug_lines, vector_filter_bug

BUG = (
    "2026-11-23 15:29:03.905+0000 ERROR Client triggered an unexpected error "
    "[Neo.DatabaseError.Statement.ExecutionFailed]: Index 33554431 out of bounds for length {n}, reference {ref}.\n"
)
OTHER_ERROR = (
    "2026-11-23 15:29:04.000+0000 ERROR Client triggered an unexpected error "
    "[Neo.DatabaseError.Statement.ExecutionFailed]: Index 7 out of bounds for length 1, reference x.\n"
)
HEADER = "=== maxy: starting Neo4j 2026.08.1 at 2026-11-23T15:28:31+0000 with java ===\n"


def test_counts_the_bug_lines_since_the_last_start_only(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(
        HEADER
        + BUG.format(n=1, ref="a") * 5
        + HEADER
        + "2026-11-23 15:28:44.687+0000 INFO  Started.\n"
        + BUG.format(n=1, ref="b")
        + OTHER_ERROR
        + BUG.format(n=4, ref="c")
        + "    at org.apache.lucene.util.FixedBitSet.get(FixedBitSet.java:1) Index 33554431 out of bounds\n"
    )
    assert count_bug_lines(log) == 2


def test_no_log_is_unknown_not_zero(tmp_path: Path) -> None:
    assert count_bug_lines(tmp_path / "absent.log") is None
    assert vector_filter_bug("2026.08.1", None)["loggedSinceStart"] is None


def test_tested_versions_are_known_and_others_untested(tmp_path: Path) -> None:
    for version in VECTOR_FILTER_BUG_VERSIONS:
        assert vector_filter_bug(version)["knownOnThisVersion"] is True
    report = vector_filter_bug("2027.01.0")
    assert report["knownOnThisVersion"] is None  # untested, not "fixed"
    assert "33554431 out of bounds" in report["logLine"] and report["doc"] == "docs/neo4j-vector-filter-bug.md"
