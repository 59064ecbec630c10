"""Fault injection around the real database (never a mock of it)."""

from __future__ import annotations

import neo4j
from maxy.db import Database


class FilteredSearchFails(Database):
    """The real database, except that every filtered vector SEARCH fails the way Neo4j
    2026.08.1's does (docs/neo4j-vector-filter-bug.md); every other query runs for real."""

    def __init__(self, inner: Database):
        self.__dict__.update(inner.__dict__)

    def read(self, query, **params):
        _fail_a_search(query)
        return super().read(query, **params)

    def read_packed(self, query, columns, **params):
        _fail_a_search(query)
        return super().read_packed(query, columns, **params)

    def read_rows(self, query, **params):
        _fail_a_search(query)
        return super().read_rows(query, **params)


def _fail_a_search(query: str) -> None:
    if "SEARCH n IN" in query:
        raise neo4j.exceptions.DatabaseError("Index 33554431 out of bounds for length 1 (injected)")
