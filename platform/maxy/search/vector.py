"""The vector path: every vector index the caller's labels allow, queried with Cypher 25
``SEARCH`` filtered inside the index by accountId, then the remaining guard layers."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import neo4j

from ..db import Database
from ..graph.allowlist import ALL_LABELS, SEARCHABLE_LABELS, quote
from ..graph.guards import Caller, Guard, both, generic_guard, node_guard
from ..graph.validity import event_time
from ..logs import log_line
from .graph_expansion import property_columns, visible_columns
from .hits import Hit
from .indexes import failing, index_name_ok, mark_failing, session_filtered, vector_indexes
from .session_filter import session_clause

Target = tuple[str, str]  # (label, index name)


def vector_search(
    db: Database,
    caller: Caller,
    vectors: Sequence[list[float]],
    labels: Sequence[str] | None,
    k: int,
    session_id: str | None = None,
    *,
    when: Guard | None = None,
    properties: bool = False,
    community: bool = False,
) -> list[list[Hit]]:
    """One ranked list per query vector (every targeted index, merged by score); ``when``
    narrows it further (the time filters); ``properties`` brings each hit's properties along.
    Community records are left out unless ``community`` (the community's own discovery, which
    narrows the hits to its member's scope itself)."""
    vmap = vector_indexes(db)
    # no labels: every searchable label (a community's records are found only when named)
    targets = [
        (label, vmap[label]) for label in sorted(vmap) if label in (SEARCHABLE_LABELS if labels is None else labels)
    ]
    if not targets or not vectors:
        return []
    guard = both(node_guard(caller, "n") if community else generic_guard(caller, "n"), when)
    params = {"vecs": [list(v) for v in vectors], "k": k, "sessionId": session_id, **guard.params}
    # Neo4j 2026.08's filtered SEARCH fails inside Lucene (ArrayIndexOutOfBoundsException in
    # FixedBitSet.get) when the index's newest segment holds a deleted node and the search
    # finds fewer than LIMIT hits: typically a small account after any delete (reproduction:
    # docs/neo4j-vector-filter-bug.md). Fewer than LIMIT hits means the account has few vectors
    # in that index, so an exact scan of them is cheap and loses nothing. An index that failed
    # for this account is scanned directly for a minute instead of failing again each query.
    memo = (caller.account_id, session_id or "")
    known_bad = [t for t in targets if failing(t[1], *memo)]
    searchable = [t for t in targets if t not in known_bad]
    props = property_columns("n") if properties else "null"
    rows, failed = _search(db, searchable, guard.clause, session_id, params, memo, props)
    for target in known_bad + failed:
        branches = _exact_branches(target, guard.clause, session_id)
        rows += db.read_rows(_vector_query(branches, guard.clause, session_id, props), **params)
    return _ranked_lists(rows)


def _search(
    db: Database,
    targets: list[Target],
    guard_clause: str,
    session_id: str | None,
    params: dict,
    memo: tuple[str, str],
    props: str,
) -> tuple[list, list[Target]]:
    """The filtered SEARCH over ``targets``; on a database error, index by index, returning the
    ones that fail for the exact scan."""
    if not targets:
        return [], []
    try:
        return db.read_rows(
            _vector_query(_search_branches(targets, session_id), guard_clause, session_id, props), **params
        ), []
    except neo4j.exceptions.DatabaseError:
        pass
    rows: list = []
    failed: list[Target] = []
    for target in targets:  # find which index fails; the others answer as usual
        try:
            rows += db.read_rows(
                _vector_query(_search_branches([target], session_id), guard_clause, session_id, props), **params
            )
        except neo4j.exceptions.DatabaseError as err:
            _note_failure(target, err, memo)
            failed.append(target)
    return rows, failed


def _note_failure(target: Target, err: neo4j.exceptions.DatabaseError, memo: tuple[str, str]) -> None:
    message = " ".join(dict.fromkeys(filter(None, [getattr(err, "message", None), *map(str, err.args)])))
    log_line(
        "graph-search:hybrid",
        "warn",
        level=logging.WARNING,
        reason="vector-filter-failed",
        index=target[1],
        fallback="exact-scan",
        error=message[:120],
    )
    if "out of bounds" in message:  # the known Lucene failure: skip SEARCH for a while
        mark_failing(target[1], *memo)


def _ranked_lists(rows: list) -> list[list[Hit]]:
    """One ranked list per query vector: the indexes' hits merged by score, one entry per node."""
    lists: dict[int, list[Hit]] = {}
    for qi, node_id, labels, score, valid_from, happened, props in rows:
        lists.setdefault(qi, []).append(
            Hit(
                node_id,
                labels,
                vector_score=_cosine(float(score)),
                valid_from=valid_from,
                happened=happened,
                properties={} if props is None else visible_columns(props),
                loaded=props is not None,
            )
        )
    out = []
    for qi, hits in sorted(lists.items()):
        hits.sort(key=lambda h: -h.vector_score)
        seen: set[str] = set()
        hits[:] = [h for h in hits if not (h.node_id in seen or seen.add(h.node_id))]  # type: ignore[func-returns-value]
        for i, h in enumerate(hits, start=1):
            h.ranks[f"vector:{qi}"] = i
        out.append(hits)
    return out


def _search_branches(targets: Sequence[Target], session_id: str | None) -> list[str]:
    branches = []
    for label, index in targets:
        branches.append(_search_branch(label, index, "n.accountId = $g_accountId"))
        if session_id and session_filtered(index):
            # The session's own nearest messages, filtered inside the index: a busy account's
            # other conversations can then never crowd one session out of the candidates.
            branches.append(_search_branch(label, index, "n.accountId = $g_accountId AND n.sessionId = $sessionId"))
    return branches


def _search_branch(label: str, index: str, index_filter: str) -> str:
    return f"""
            MATCH (n:{quote(label)})
              SEARCH n IN (VECTOR INDEX {index_name_ok(index)} FOR q.vec WHERE {index_filter} LIMIT $k)
              SCORE AS score
            RETURN n, score, {_literal(label)} AS via"""


def _exact_branches(target: Target, guard_clause: str, session_id: str | None) -> list[str]:
    """Exact cosine over the account's own vectors of one label (the SEARCH fallback), the
    guards applied before the limit. With a session, a session-filtered index (messages) scans
    only that session's nodes. The score is normalised like the index's, (1 + cos) / 2."""
    label, index = target
    if session_id and session_filtered(index):
        scope = "n.sessionId = $sessionId AND n.accountId = $g_accountId"
    else:
        scope = f"n.accountId = $g_accountId {session_clause(session_id)}"
    return [
        f"""
            MATCH (n:Node:{quote(label)}) WHERE {scope} AND n.embedding IS NOT NULL AND {guard_clause}
            WITH n, vector.similarity.cosine(n.embedding, q.vec) AS score ORDER BY score DESC LIMIT $k
            RETURN n, score, {_literal(label)} AS via"""
    ]


def _vector_query(branches: list[str], guard_clause: str, session_id: str | None, props: str) -> str:
    return f"""
        CYPHER 25
        UNWIND range(0, size($vecs) - 1) AS qi
        WITH qi, {{vec: $vecs[qi]}} AS q
        CALL (q) {{ {" UNION ALL ".join(branches)} }}
        WITH qi, via, n, score WHERE {guard_clause} {session_clause(session_id)}
        RETURN collect([qi, n.nodeId, {_LABELS}, score, n.validFrom, {event_time("n")}, {props}]) AS rows
    """


# A row: qi, nodeId, labels (without Node), score, validFrom, event time, properties (or null).
_LABELS = "[x IN labels(n) WHERE x <> 'Node']"


def _cosine(index_score: float) -> float:
    """Neo4j reports a cosine index's similarity as (1 + cos) / 2; fusion uses cos itself,
    clamped to [0, 1]. With the squashed score the vector path's spread halves and the
    0.7 / 0.3 weighting tilts towards BM25 (scifact-dev nDCG@10 0.720 -> 0.733)."""
    return max(0.0, 2.0 * index_score - 1.0)


def _literal(label: str) -> str:
    if label not in ALL_LABELS:
        raise ValueError(label)
    return f"'{label}'"
