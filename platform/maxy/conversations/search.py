"""Conversation search: past messages for a query, best first.

    (:Conversation {sessionId})-[:HAS_MESSAGE]->(:Message {role, content, timestamp, sessionId, speaker})

``search_messages`` runs the hybrid search pipeline (``maxy.search``: vector through
``message_embedding`` and BM25, every guard layer on both) restricted to Message nodes and,
when given, to one session; keyword subscriptions never apply to messages. A message without
its own sessionId takes its Conversation's. Shared by the ``conversation-search`` tool and
``maxy conversation search``: callers pass the guard ``Caller``.
"""

from __future__ import annotations

import time
from typing import Any

from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller, generic_guard
from ..logs import log_line, short
from .store import CONVERSATION_LABELS, check_session_id

MAX_QUERY_CHARS = 4_000
MAX_LIMIT = 100


class MessageRows(list[dict[str, Any]]):
    """Message rows, best first; ``nearest_miss`` is the best row the relevance cut left out,
    set when it left out every row."""

    nearest_miss: dict[str, Any] | None = None


def _validate(query: object, limit: object, session_id: object) -> tuple[str, int, str | None]:
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query", "a non-empty search text is required")
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationError("query", f"at most {MAX_QUERY_CHARS} characters")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError("limit", f"an integer from 1 to {MAX_LIMIT}")
    sid = check_session_id(session_id) if session_id is not None else None
    return query.strip(), limit, sid


def search_messages(
    db: Database,
    caller: Caller,
    embedder: Embedder | None,
    query: str,
    *,
    session_id: str | None = None,
    limit: int = 10,
    after: str | None = None,
    before: str | None = None,
    config: Any = None,
    min_relevance: float | None = None,
) -> MessageRows:
    """Messages for ``query``, best first: the hybrid pipeline (vector through
    ``message_embedding`` + BM25, guards on both) restricted to Message nodes and, when
    given, to one session and to messages sent in [after, before). Rows: messageId, nodeId, role, content, timestamp, sessionId,
    speaker, score, relevance, mode. ``config`` defaults to the message-search preset; keyword
    subscriptions never apply to messages. ``min_relevance`` as in ``SearchRequest``."""
    from ..search import MESSAGE_SEARCH, SearchRequest, hybrid, relevance

    started = time.perf_counter()
    text, limit, sid = _validate(query, limit, session_id)
    request = SearchRequest(
        text,
        limit=limit,
        labels=("Message",),
        expand_hops=0,
        session_id=sid,
        after=after,
        before=before,
        min_relevance=relevance.pipeline_floor(min_relevance),
    )
    response = hybrid(db, caller, request, embedder, (config or MESSAGE_SEARCH).with_(keywords=()))
    hits, nearest_miss = relevance.answer(
        response.hits, response.nearest_miss, getattr(embedder, "name", None), min_relevance
    )
    rows = MessageRows(_row(h, response.mode) for h in hits)
    if nearest_miss is not None:
        rows.nearest_miss = _row(nearest_miss, response.mode)
    _fill_sessions(db, caller, [*rows, *([rows.nearest_miss] if rows.nearest_miss else [])])
    log_line(
        "conversation-search",
        accountId=short(caller.account_id),
        session=short(sid) if sid else "all",
        mode=response.mode,
        hits=len(rows),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return rows


def _row(h: Any, mode: str) -> dict[str, Any]:
    p = h.properties
    return {
        "messageId": p.get("messageId") or h.node_id,
        "nodeId": h.node_id,
        "role": p.get("role"),
        "content": p.get("content"),
        "timestamp": p.get("timestamp"),
        "sessionId": p.get("sessionId"),
        "speaker": p.get("speaker"),
        "score": round(h.score, 6),
        "relevance": h.relevance,
        "mode": mode,
    }


def _fill_sessions(db: Database, caller: Caller, rows: list[dict[str, Any]]) -> None:
    """Messages written without their own sessionId take their Conversation's."""
    missing = [r["nodeId"] for r in rows if not r.get("sessionId")]
    if not missing:
        return
    guard = generic_guard(caller, "c")
    found = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (c:Node)-[:HAS_MESSAGE]->(n:Node {{nodeId: id}}) WHERE {CONVERSATION_LABELS} AND {guard.clause}
        RETURN id, head(collect(c.sessionId)) AS sessionId
        """,
        ids=missing,
        **guard.params,
    )
    by_id = {r["id"]: r["sessionId"] for r in found}
    for r in rows:
        if not r.get("sessionId"):
            r["sessionId"] = by_id.get(r["nodeId"])
