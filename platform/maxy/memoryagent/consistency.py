"""The consistency barrier: after it returns ``consistent: true``, every entry written to the
memory before the call is found by search (BM25 and vector).

It does not sleep and hope. It first checks that the indexes it waits for exist (a database
whose schema predates the memory agent answers at once, naming ``maxy schema apply``), embeds the memory's entries stored without a vector (an
embedder that failed when they were written), waits for Neo4j's indexes to be ONLINE
(``db.awaitIndexes``), then asks the indexes themselves for the newest entry, until both
return it: the full-text index for its summary's words, the vector index for its own vector.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import neo4j

from ..embeddings.base import EmbeddingError
from ..errors import ValidationError
from ..graph.guards import node_guard
from ..graph.schema import FULLTEXT_INDEX, IndexInfo, list_indexes
from ..graph.text import embedding_text
from ..graph.write import GraphWriter
from ..logs import log_line, short
from ..search.lucene import escape_lucene, terms
from .spaces import ENTRY_LABEL, check_memory, space_node_id

VECTOR_INDEX = "memory_entry_embedding"
MAX_TIMEOUT_S = 300.0
MAX_TERMS = 32  # the newest entry's words a full-text probe requires (well under Lucene's clause limit)
PROBE_K = 50  # neighbours asked of the vector index; the entry itself is the nearest to its own vector
_FIRST_POLL_S, _LAST_POLL_S = 0.01, 0.2


def _timeout(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValidationError("timeoutS", f"a number of seconds is required (got {value!r})")
    if not 0 < value <= MAX_TIMEOUT_S:
        raise ValidationError("timeoutS", f"between 0 and {MAX_TIMEOUT_S:g} seconds (got {value!r})")
    return float(value)


def index_problem(indexes: Sequence[IndexInfo]) -> str | None:
    """Why the barrier cannot succeed on a database with these indexes (SHOW INDEXES), or None:
    the entries' vector index or their place in the full-text index is missing (a schema
    applied before the memory agent existed) or has failed."""
    fix = "run `maxy schema apply` (it creates and rebuilds the indexes)"
    found = {i.name: i for i in indexes}
    vector, fulltext = found.get(VECTOR_INDEX), found.get(FULLTEXT_INDEX)
    if vector is None or vector.type != "VECTOR" or vector.labels != [ENTRY_LABEL]:
        return f"the vector index {VECTOR_INDEX} on {ENTRY_LABEL} is missing; {fix}"
    if "accountId" not in vector.properties[1:]:
        return f"the vector index {VECTOR_INDEX} lacks its accountId filter; {fix}"
    if fulltext is None or fulltext.type != "FULLTEXT" or ENTRY_LABEL not in fulltext.labels:
        return f"the full-text index {FULLTEXT_INDEX} does not cover {ENTRY_LABEL}; {fix}"
    for index in (vector, fulltext):
        if index.state == "FAILED":
            return f"the index {index.name} has FAILED (SHOW INDEXES); drop it, then {fix}"
    return None


def _entries(writer: GraphWriter, memory: str) -> list[dict[str, Any]]:
    """The memory's entries in the writer's view, newest first: id, labels, properties without
    the vector, and whether it has one."""
    space, entry = node_guard(writer.caller, "s"), node_guard(writer.caller, "e")
    return writer.db.read(
        f"""
        MATCH (s:Node {{nodeId: $space}}) WHERE {space.clause}
        MATCH (s)-[:HAS_ENTRY]->(e:{ENTRY_LABEL}) WHERE {entry.clause}
        RETURN e.nodeId AS id, labels(e) AS labels, e.summary AS summary, e.embedding IS NOT NULL AS embedded,
               CASE WHEN e.embedding IS NULL THEN properties(e) END AS props
        ORDER BY e.seq DESC, e.createdAt DESC
        """,
        space=space_node_id(writer.caller, memory),
        **space.params,
    )


def _reembed(writer: GraphWriter, rows: list[dict[str, Any]]) -> tuple[int, str | None]:
    """Embed the entries stored without a vector; (how many now have one, the embedder's error)."""
    texts = {r["id"]: embedding_text(r["labels"], r["props"]) for r in rows if not r["embedded"]}
    todo = {k: v for k, v in texts.items() if v}
    if not todo:
        return 0, None
    if writer.embedder is None:
        return 0, "no embedder"
    try:
        vectors = writer.embedder.embed(list(todo.values()))
    except EmbeddingError as err:
        return 0, str(err)[:200]
    return writer.set_embeddings(dict(zip(todo, vectors, strict=True))), None


def _await_indexes(writer: GraphWriter, seconds: float) -> None:
    wait = max(1, math.ceil(seconds))
    try:
        writer.db.read(f"CALL db.awaitIndexes({wait})", timeout_=wait + 30)
    except neo4j.exceptions.ClientError as err:
        if "awaitIndexes" not in (err.message or ""):  # its own timeout: the probes below decide
            raise


def fulltext_probe(summary: str, account_id: str) -> str | None:
    """The Lucene query that finds an entry by every word of its summary (each escaped, so a
    summary holding query syntax is only words), in one account; None when it has no word."""
    words = terms(summary)[:MAX_TERMS]
    if not words:
        return None
    required = " ".join(f"+{escape_lucene(w)}" for w in words)
    return f'+({required}) +accountId:"{escape_lucene(account_id)}"'


def _in_fulltext(writer: GraphWriter, node_id: str, summary: str) -> bool:
    query = fulltext_probe(summary, writer.account.account_id)
    if query is None:
        return True  # nothing a full-text search could find it by
    guard = node_guard(writer.caller, "node")
    rows = writer.db.read(
        f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q) YIELD node "
        f"WHERE node.nodeId = $id AND {guard.clause} RETURN count(node) AS n",
        q=query,
        id=node_id,
        **guard.params,
    )
    return bool(rows and rows[0]["n"])


def _in_vector_index(writer: GraphWriter, node_id: str) -> bool:
    guard = node_guard(writer.caller, "q")
    head = f"MATCH (q:{ENTRY_LABEL}:Node {{nodeId: $id}}) WHERE q.embedding IS NOT NULL AND {guard.clause}"
    params = {"id": node_id, "k": PROBE_K, **guard.params}
    try:
        rows = writer.db.read(
            f"""
            CYPHER 25 {head}
            MATCH (n:{ENTRY_LABEL})
              SEARCH n IN (VECTOR INDEX {VECTOR_INDEX} FOR q.embedding WHERE n.accountId = $g_accountId LIMIT $k)
            WITH n WHERE n.nodeId = $id
            RETURN count(n) AS n
            """,
            **params,
        )
    except neo4j.exceptions.DatabaseError:
        # Neo4j's filtered SEARCH can fail on a segment holding a deleted node
        # (docs/neo4j-vector-filter-bug.md): ask the index unfiltered instead.
        rows = writer.db.read(
            f"{head} CALL db.index.vector.queryNodes('{VECTOR_INDEX}', $k, q.embedding) YIELD node "
            "WHERE node.nodeId = $id RETURN count(node) AS n",
            **params,
        )
    return bool(rows and rows[0]["n"])


def await_consistency(writer: GraphWriter, memory: str, *, timeout_s: float = 10.0) -> dict[str, Any]:
    """Wait until the memory's entries are searchable (see the module docstring), at most
    ``timeout_s``. Returns {"consistent", "entries", "reembedded", "waitedMs"}; when not
    consistent, ``error`` says why (a missing index, at once; the embedder down, with
    ``unembedded``, at once; the indexes not caught up in time)."""
    started = time.monotonic()
    name = check_memory(memory)
    limit = _timeout(timeout_s)
    deadline = started + limit
    rows = _entries(writer, name)
    reembedded, error = _reembed(writer, rows)
    unembedded = sum(1 for r in rows if not r["embedded"]) - reembedded
    if unembedded:
        error = error or "the embedder gave no vector"
    problem = index_problem(list_indexes(writer.db))
    consistent = False
    if problem is not None:
        error = problem  # no wait can help until the schema is applied
    elif not rows:
        consistent = True
    elif unembedded == 0:
        _await_indexes(writer, deadline - time.monotonic())
        newest, poll = rows[0], _FIRST_POLL_S
        while True:
            if _in_fulltext(writer, newest["id"], str(newest["summary"] or "")) and _in_vector_index(
                writer, newest["id"]
            ):
                consistent = True
                break
            left = deadline - time.monotonic()
            if left <= 0:
                error = f"the indexes did not return the newest entry within {limit:g} s"
                break
            time.sleep(min(poll, left))  # polling the indexes' own answer, not a guess
            poll = min(poll * 2, _LAST_POLL_S)
    out: dict[str, Any] = {
        "consistent": consistent,
        "entries": len(rows),
        "reembedded": reembedded,
        "waitedMs": round((time.monotonic() - started) * 1000),
    }
    if unembedded:
        out["unembedded"] = unembedded
    if not consistent:
        out["error"] = error
    log_line(
        "memory-agent",
        op="barrier",
        level=logging.INFO if consistent else logging.WARNING,
        accountId=short(writer.account.account_id),
        memory=name,
        consistent=consistent,
        entries=len(rows),
        reembedded=reembedded,
        unembedded=unembedded or None,
        error=None if consistent else error,
        ms=out["waitedMs"],
    )
    return out
