"""The two retrieval paths, each filtered by the guard clauses.

Vector: every vector index found at run time through SHOW INDEXES (cached per process,
cleared on schema change), queried with Cypher 25 ``SEARCH`` filtered inside the index by
accountId, then the remaining guard layers. BM25: the ``entity_search`` full-text index,
with the account required inside Lucene, then the guard layers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import neo4j

from ..db import Database
from ..graph.allowlist import ALL_LABELS, quote
from ..graph.guards import Caller, node_guard
from ..logs import log_line
from ..schema import FULLTEXT_INDEX, on_schema_change
from .hits import Hit
from .lucene import build_query

_lock = threading.Lock()
# A node of the session: its own sessionId, or a HAS_MESSAGE from that session's Conversation.
_SESSION = (
    "AND (n.sessionId = $sessionId OR EXISTS { MATCH (c:Conversation)-[:HAS_MESSAGE]->(n) "
    "WHERE c.sessionId = $sessionId AND c.accountId = $g_accountId AND c.deletedAt IS NULL })"
)
_vector_map: dict[str, str] | None = None  # label -> index name
_fulltext: bool | None = None
_session_filtered: set[str] = set()  # indexes that also carry sessionId as a filter property
_FAILING_TTL_S = 60.0
# (index, account, session or "") whose filtered SEARCH failed, and until when to skip it
_failing_until: dict[tuple[str, str, str], float] = {}
_failing_lock = threading.Lock()
_MODEL_TTL_S = 60.0  # another process may record a new model (maxy reindex --recreate)
_model: tuple[str | None, float] | None = None  # (model that made the stored vectors, read at)


def clear_index_cache() -> None:
    global _vector_map, _fulltext, _model
    with _lock:
        _vector_map = None
        _fulltext = None
        _model = None
    with _failing_lock:
        _failing_until.clear()


def recorded_model(db: Database) -> str | None:
    """The embedding model the database's vectors came from (``maxy schema apply`` records it),
    re-read at most once a minute."""
    global _model
    with _lock:
        if _model is None or time.monotonic() - _model[1] > _MODEL_TTL_S:
            from ..schema import recorded_embedder

            recorded = recorded_embedder(db)
            _model = (None if recorded is None else recorded.get("model"), time.monotonic())
        return _model[0]


on_schema_change(clear_index_cache)


def _discover(db: Database) -> tuple[dict[str, str], bool]:
    global _vector_map, _fulltext
    with _lock:
        if _vector_map is None or _fulltext is None:
            rows = db.read(
                "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, entityType "
                "WHERE type IN ['VECTOR', 'FULLTEXT'] AND entityType = 'NODE' "
                "RETURN name, type, state, labelsOrTypes, properties"
            )
            vmap: dict[str, str] = {}
            _session_filtered.clear()
            for r in rows:
                labels = r["labelsOrTypes"] or []
                # Only indexes this code can query safely: one known label, account filter property.
                if r["type"] == "VECTOR" and r["state"] == "ONLINE" and len(labels) == 1 and labels[0] in ALL_LABELS:
                    if "accountId" in (r["properties"] or [])[1:]:
                        vmap[labels[0]] = r["name"]
                        if "sessionId" in (r["properties"] or [])[1:]:
                            _session_filtered.add(r["name"])
            _vector_map = vmap
            _fulltext = any(r["name"] == FULLTEXT_INDEX and r["state"] == "ONLINE" for r in rows)
        return dict(_vector_map), bool(_fulltext)


def vector_indexes(db: Database) -> dict[str, str]:
    return _discover(db)[0]


def fulltext_available(db: Database) -> bool:
    return _discover(db)[1]


def _index_name_ok(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"unexpected index name {name!r}")
    return name


def vector_search(
    db: Database,
    caller: Caller,
    vectors: Sequence[list[float]],
    labels: Sequence[str] | None,
    k: int,
    session_id: str | None = None,
) -> list[list[Hit]]:
    """One ranked list per query vector (every targeted index, merged by score)."""
    vmap = vector_indexes(db)
    targets = [(label, vmap[label]) for label in sorted(vmap) if labels is None or label in labels]
    if not targets or not vectors:
        return []
    guard = node_guard(caller, "n")
    params = {"vecs": [list(v) for v in vectors], "k": k, "sessionId": session_id, **guard.params}
    # Neo4j 2026.08's filtered SEARCH fails inside Lucene (ArrayIndexOutOfBoundsException in
    # FixedBitSet.get) when the index's newest segment holds a deleted node and the search
    # finds fewer than LIMIT hits: typically a small account after any delete (reproduction:
    # docs/neo4j-vector-filter-bug.md). Fewer than LIMIT hits means the account has few vectors
    # in that index, so an exact scan of them is cheap and loses nothing. An index that failed
    # for this account is scanned directly for a minute instead of failing again each query.
    memo = (caller.account_id, session_id or "")
    known_bad = [t for t in targets if _failing(t[1], *memo)]
    searchable = [t for t in targets if t not in known_bad]
    rows: list = []
    if searchable:
        try:
            rows = db.read(_vector_query(_search_branches(searchable, session_id), guard.clause, session_id), **params)
        except neo4j.exceptions.DatabaseError:
            for target in searchable:  # find which index fails; the others answer as usual
                try:
                    rows += db.read(_vector_query(_search_branches([target], session_id), guard.clause, session_id), **params)
                except neo4j.exceptions.DatabaseError as err:
                    message = " ".join(dict.fromkeys(filter(None, [getattr(err, "message", None), *map(str, err.args)])))
                    log_line(
                        "graph-search:hybrid", "warn", level=logging.WARNING, reason="vector-filter-failed",
                        index=target[1], fallback="exact-scan", error=message[:120],
                    )
                    if "out of bounds" in message:  # the known Lucene failure: skip SEARCH for a while
                        _mark_failing(target[1], *memo)
                    known_bad.append(target)
    for target in known_bad:
        rows += db.read(
            _vector_query(_exact_branches(target, guard.clause, session_id), guard.clause, session_id), **params
        )
    # One ranked list per query vector: the indexes' hits merged by score.
    lists: dict[int, list[Hit]] = {}
    for r in rows:
        lists.setdefault(r["qi"], []).append(
            Hit(r["id"], [x for x in r["labels"] if x != "Node"], vector_score=_cosine(float(r["score"])))
        )
    out = []
    for qi, hits in sorted(lists.items()):
        hits.sort(key=lambda h: -h.vector_score)
        seen: set[str] = set()
        hits[:] = [h for h in hits if not (h.node_id in seen or seen.add(h.node_id))]  # one entry per node
        for i, h in enumerate(hits, start=1):
            h.ranks[f"vector:{qi}"] = i
        out.append(hits)
    return out


def _failing(index: str, account_id: str, session: str) -> bool:
    with _failing_lock:
        until = _failing_until.get((index, account_id, session))
    return until is not None and until > time.monotonic()


def _mark_failing(index: str, account_id: str, session: str) -> None:
    now = time.monotonic()
    with _failing_lock:
        if len(_failing_until) > 10_000:  # bounded: forget expired marks
            for key in [key for key, until in _failing_until.items() if until <= now]:
                del _failing_until[key]
        _failing_until[(index, account_id, session)] = now + _FAILING_TTL_S


def _search_branches(targets: Sequence[tuple[str, str]], session_id: str | None) -> list[str]:
    branches = []
    for label, index in targets:
        branches.append(
            f"""
            MATCH (n:{quote(label)})
              SEARCH n IN (VECTOR INDEX {_index_name_ok(index)} FOR q.vec WHERE n.accountId = $g_accountId LIMIT $k)
              SCORE AS score
            RETURN n, score, {_literal(label)} AS via"""
        )
        if session_id and index in _session_filtered:
            # The session's own nearest messages, filtered inside the index: a busy account's
            # other conversations can then never crowd one session out of the candidates.
            branches.append(
                f"""
            MATCH (n:{quote(label)})
              SEARCH n IN (VECTOR INDEX {_index_name_ok(index)} FOR q.vec
                           WHERE n.accountId = $g_accountId AND n.sessionId = $sessionId LIMIT $k)
              SCORE AS score
            RETURN n, score, {_literal(label)} AS via"""
            )
    return branches


def _exact_branches(target: tuple[str, str], guard_clause: str, session_id: str | None) -> list[str]:
    """Exact cosine over the account's own vectors of one label (the SEARCH fallback), the
    guards applied before the limit. With a session, a session-filtered index (messages) scans
    only that session's nodes. The score is normalised like the index's, (1 + cos) / 2."""
    label, index = target
    if session_id and index in _session_filtered:
        scope = "n.sessionId = $sessionId AND n.accountId = $g_accountId"
    else:
        scope = f"n.accountId = $g_accountId {_SESSION if session_id else ''}"
    return [
        f"""
            MATCH (n:Node:{quote(label)}) WHERE {scope} AND n.embedding IS NOT NULL AND {guard_clause}
            WITH n, vector.similarity.cosine(n.embedding, q.vec) AS score ORDER BY score DESC LIMIT $k
            RETURN n, score, {_literal(label)} AS via"""
    ]


def _vector_query(branches: list[str], guard_clause: str, session_id: str | None) -> str:
    return f"""
        CYPHER 25
        UNWIND range(0, size($vecs) - 1) AS qi
        WITH qi, {{vec: $vecs[qi]}} AS q
        CALL (q) {{ {' UNION ALL '.join(branches)} }}
        WITH qi, via, n, score WHERE {guard_clause} {_SESSION if session_id else ""}
        RETURN qi, via, n.nodeId AS id, labels(n) AS labels, score
        ORDER BY qi, via, score DESC
    """


def bm25_search(
    db: Database,
    caller: Caller,
    texts: Sequence[str],
    labels: Sequence[str] | None,
    k: int,
    session_id: str | None = None,
) -> list[list[Hit]]:
    """One ranked list per query text."""
    out: list[list[Hit]] = []
    guard = node_guard(caller, "n")
    label_filter = "AND any(l IN labels(n) WHERE l IN $labels)" if labels else ""
    for qi, text in enumerate(texts):
        lucene = build_query(text, account_id=caller.account_id)
        if lucene is None:
            continue
        rows = db.read(
            f"""
            CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q, {{limit: $k}}) YIELD node AS n, score
            WITH n, score WHERE {guard.clause} {label_filter} {_SESSION if session_id else ""}
            RETURN n.nodeId AS id, labels(n) AS labels, score
            ORDER BY score DESC
            """,
            q=lucene,
            k=k,
            labels=list(labels or []),
            sessionId=session_id,
            **guard.params,
        )
        name = f"bm25:{qi}"
        out.append(
            [
                Hit(r["id"], [x for x in r["labels"] if x != "Node"], bm25_raw=float(r["score"]), ranks={name: i})
                for i, r in enumerate(rows, start=1)
            ]
        )
    return out


def _cosine(index_score: float) -> float:
    """Neo4j reports a cosine index's similarity as (1 + cos) / 2; fusion uses cos itself,
    clamped to [0, 1]. With the squashed score the vector path's spread halves and the
    0.7 / 0.3 weighting tilts towards BM25 (scifact-dev nDCG@10 0.720 -> 0.733)."""
    return max(0.0, 2.0 * index_score - 1.0)


def _literal(label: str) -> str:
    if label not in ALL_LABELS:
        raise ValueError(label)
    return f"'{label}'"
