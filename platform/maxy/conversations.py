"""Conversations and their messages: semantic search over Message nodes, and finding a Conversation.

    (:Conversation {sessionId})-[:HAS_MESSAGE]->(:Message {role, content, timestamp, sessionId, speaker})

Separate from the knowledge retrieval pipeline: ``search_messages`` ranks Message nodes by
cosine similarity to the query through the ``message_embedding`` vector index (Cypher 25
``SEARCH ... WHERE n.accountId = $acc``), with every guard layer applied to each message.
Limited to one session, it scores that conversation's messages exactly (a conversation is
small, and an in-index filter on the session is not available), so a busy account never
crowds a session's messages out of the candidate list. When no embedding can be computed
it falls back to BM25 over ``entity_search`` restricted to Message nodes.

Shared by the ``conversation-search`` tool and any CLI: callers pass the guard ``Caller``.
"""

from __future__ import annotations

import time
from typing import Any

from .db import Database
from .embeddings.base import Embedder
from .errors import ValidationError
from .graph.guards import Caller, node_guard
from .logs import log_line, short

MAX_QUERY_CHARS = 4_000
MAX_LIMIT = 100
MAX_SESSION_ID = 256
MESSAGE_INDEX = "message_embedding"

_CONV = "(c:Conversation OR c:AdminConversation)"


def check_session_id(value: object, field: str = "sessionId") -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_SESSION_ID:
        raise ValidationError(field, f"a non-empty session id of at most {MAX_SESSION_ID} characters")
    if any(ord(ch) < 32 for ch in value):
        raise ValidationError(field, "control characters are not allowed")
    return value.strip()


def find_conversation(db: Database, caller: Caller, key: str | None) -> dict[str, Any] | None:
    """The caller's live Conversation whose sessionId (or nodeId) is ``key``, or None.

    Account isolation is part of the natural key (guard layer 5), as are the other guards.
    """
    if not key:
        return None
    guard = node_guard(caller, "c")
    rows = db.read(
        f"""
        MATCH (c:Node) WHERE (c.sessionId = $key OR c.nodeId = $key) AND {_CONV} AND {guard.clause}
        RETURN c.nodeId AS nodeId, c.sessionId AS sessionId, labels(c) AS labels,
               c.scope AS scope, c.agents AS agents
        ORDER BY CASE WHEN c.sessionId = $key THEN 0 ELSE 1 END, c.createdAt
        LIMIT 1
        """,
        key=key,
        **guard.params,
    )
    return rows[0] if rows else None


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
    config: Any = None,
) -> list[dict[str, Any]]:
    """Messages for ``query``, best first: the hybrid pipeline (vector through
    ``message_embedding`` + BM25, guards on both) restricted to Message nodes and, when
    given, to one session. Rows: messageId, nodeId, role, content, timestamp, sessionId,
    speaker, score, mode. ``config`` defaults to the message-search preset; keyword
    subscriptions never apply to messages."""
    from .search import MESSAGE_SEARCH, SearchRequest, hybrid

    started = time.perf_counter()
    text, limit, sid = _validate(query, limit, session_id)
    request = SearchRequest(
        text,
        limit=limit,
        labels=("Message",),
        expand_hops=0,
        session_id=sid,
    )
    response = hybrid(db, caller, request, embedder, (config or MESSAGE_SEARCH).with_(keywords=()))
    rows = []
    for h in response.hits:
        p = h.properties
        rows.append(
            {
                "messageId": p.get("messageId") or h.node_id,
                "nodeId": h.node_id,
                "role": p.get("role"),
                "content": p.get("content"),
                "timestamp": p.get("timestamp"),
                "sessionId": p.get("sessionId"),
                "speaker": p.get("speaker"),
                "score": round(h.score, 6),
                "mode": response.mode,
            }
        )
    _fill_sessions(db, caller, rows)
    log_line(
        "conversation-search",
        accountId=short(caller.account_id),
        session=short(sid) if sid else "all",
        mode=response.mode,
        hits=len(rows),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return rows


def _fill_sessions(db: Database, caller: Caller, rows: list[dict[str, Any]]) -> None:
    """Messages written without their own sessionId take their Conversation's."""
    missing = [r["nodeId"] for r in rows if not r.get("sessionId")]
    if not missing:
        return
    guard = node_guard(caller, "c")
    found = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (c:Node)-[:HAS_MESSAGE]->(n:Node {{nodeId: id}}) WHERE {_CONV} AND {guard.clause}
        RETURN id, head(collect(c.sessionId)) AS sessionId
        """,
        ids=missing,
        **guard.params,
    )
    by_id = {r["id"]: r["sessionId"] for r in found}
    for r in rows:
        if not r.get("sessionId"):
            r["sessionId"] = by_id.get(r["nodeId"])

