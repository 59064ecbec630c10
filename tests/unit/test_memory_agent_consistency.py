"""The consistency barrier's pure parts: which SHOW INDEXES answers it cannot succeed on (each
named with the fix, so it answers at once instead of waiting out its timeout), and the Lucene
query it probes the full-text index with (a summary holding query syntax is only words)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from maxy.graph.schema import FULLTEXT_INDEX, IndexInfo
from maxy.memoryagent.consistency import VECTOR_INDEX, fulltext_probe, index_problem

VECTOR = IndexInfo(VECTOR_INDEX, "VECTOR", "ONLINE", ["MemoryEntry"], ["embedding", "accountId"], 384, 100.0)
FULLTEXT = IndexInfo(FULLTEXT_INDEX, "FULLTEXT", "ONLINE", ["Person", "MemoryEntry"], ["name", "summary"], None, 100.0)
OTHER = IndexInfo("person_embedding", "VECTOR", "ONLINE", ["Person"], ["embedding", "accountId"], 384, 100.0)


def test_a_schema_with_both_indexes_has_no_problem() -> None:
    assert index_problem([OTHER, VECTOR, FULLTEXT]) is None
    assert index_problem([replace(VECTOR, state="POPULATING"), FULLTEXT]) is None  # db.awaitIndexes waits for it


@pytest.mark.parametrize(
    ("indexes", "expected"),
    [
        ([OTHER, FULLTEXT], f"the vector index {VECTOR_INDEX} on MemoryEntry is missing"),
        ([replace(VECTOR, labels=["Person"]), FULLTEXT], f"the vector index {VECTOR_INDEX} on MemoryEntry is missing"),
        ([replace(VECTOR, type="RANGE"), FULLTEXT], f"the vector index {VECTOR_INDEX} on MemoryEntry is missing"),
        (
            [replace(VECTOR, properties=["embedding"]), FULLTEXT],
            f"the vector index {VECTOR_INDEX} lacks its accountId filter",
        ),
        ([VECTOR], f"the full-text index {FULLTEXT_INDEX} does not cover MemoryEntry"),
        ([VECTOR, replace(FULLTEXT, labels=["Person"])], f"the full-text index {FULLTEXT_INDEX} does not cover"),
        ([replace(VECTOR, state="FAILED"), FULLTEXT], f"the index {VECTOR_INDEX} has FAILED"),
        ([VECTOR, replace(FULLTEXT, state="FAILED")], f"the index {FULLTEXT_INDEX} has FAILED"),
        ([], f"the vector index {VECTOR_INDEX} on MemoryEntry is missing"),
    ],
    ids=[
        "no-vector-index",
        "vector-index-on-another-label",
        "not-a-vector-index",
        "no-account-filter",
        "no-fulltext-index",
        "fulltext-without-entries",
        "vector-failed",
        "fulltext-failed",
        "nothing",
    ],
)
def test_a_schema_the_barrier_cannot_use_is_named_with_its_fix(indexes: list[IndexInfo], expected: str) -> None:
    problem = index_problem(indexes)
    assert problem is not None and problem.startswith(expected), problem
    assert "maxy schema apply" in problem and "\n" not in problem


def test_the_full_text_probe_escapes_query_syntax_in_the_summary_and_the_account() -> None:
    query = fulltext_probe('Ada AND (foo:"bar OR baz* -qux~ [a TO b] \\ ||', 'acc"1')
    assert query is not None
    # each word is required, escaped: no operator, group, phrase, field, range or wildcard survives
    # (stop words such as AND, OR, TO and a lone symbol are no word to find it by)
    assert query == '+(+Ada +\\(foo\\:\\"bar +baz\\* +\\-qux\\~ +b\\]) +accountId:"acc\\"1"'
    assert fulltext_probe("... !!! ---", "acc") is None  # no word to find it by
