"""Conversations as the operator sees them: the caller's conversations a page at a time, and
the messages of one session in conversation order.

A session's messages are the Messages with its sessionId, plus those written without a
sessionId that a Conversation of the session links to (HAS_MESSAGE), as ``search`` reads them.
Every Conversation and Message passes the caller's guards; a session the caller cannot see
has no messages, exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Any

from ..db import Database
from ..graph.guards import Caller, generic_guard
from ..graph.paging import check_page, plain
from .store import check_session_id

_ORDER = "coalesce(m.timestamp, ''), coalesce(m.seq, m.position, -1), m.createdAt, m.nodeId"


def _session_messages(caller: Caller, sid: str) -> tuple[str, dict[str, Any]]:
    """A UNION returning ``m``, each Message of the session whose id is the expression ``sid``
    (``$sid``, or ``c.sessionId`` of a conversation ``c``) once."""
    gm, gk = generic_guard(caller, "m"), generic_guard(caller, "k")
    query = f"""
        MATCH (m:Message) WHERE m.sessionId = {sid} AND {gm.clause}
        RETURN m
        UNION
        MATCH (k:Node)-[:HAS_MESSAGE]->(m:Message)
        WHERE k.sessionId = {sid} AND (k:Conversation OR k:AdminConversation) AND {gk.clause}
          AND m.sessionId IS NULL AND {gm.clause}
        RETURN m
    """
    return query, gm.params


def list_conversations(
    db: Database, caller: Caller, *, offset: int = 0, limit: int = 50
) -> tuple[int, list[dict[str, Any]]]:
    """(how many conversations, one page of them), newest first (by when they started). Rows:
    sessionId, nodeId, title, admin (an admin agent's conversation), scope, agents, startedAt,
    createdAt, messageCount, firstMessageAt, lastMessageAt (of the messages the caller can read)."""
    offset, limit = check_page(offset, limit)
    gc = generic_guard(caller, "c")
    messages, params = _session_messages(caller, "c.sessionId")
    rows = db.read(
        f"""
        MATCH (c:Node) WHERE (c:Conversation OR c:AdminConversation) AND {gc.clause}
        WITH c ORDER BY coalesce(c.startedAt, c.createdAt) DESC, c.nodeId
        WITH collect(c) AS conversations
        WITH size(conversations) AS total, conversations[$skip..($skip + $n)] AS page
        CALL (page) {{
            UNWIND range(0, size(page) - 1) AS i
            WITH i, page[i] AS c
            CALL (c) {{
                CALL (c) {{ {messages} }}
                RETURN count(m) AS messageCount, min(m.timestamp) AS firstAt, max(m.timestamp) AS lastAt
            }}
            WITH i, c {{
                .sessionId, nodeId: c.nodeId, .title, admin: c:AdminConversation, .scope, .agents, .startedAt,
                .createdAt, messageCount: messageCount, firstMessageAt: firstAt, lastMessageAt: lastAt
            }} AS row
            ORDER BY i
            RETURN collect(row) AS rows
        }}
        RETURN total, rows
        """,
        skip=offset,
        n=limit,
        **params,
    )
    return int(rows[0]["total"]), plain(rows[0]["rows"])


def _text(content: str | None, speaker: str | None) -> str | None:
    """A message's text without the ``"<speaker>: "`` its stored transcript line starts with."""
    prefix = f"{speaker}: " if speaker else None
    if content is not None and prefix is not None and content.startswith(prefix):
        return content[len(prefix) :]
    return content


def session_messages(
    db: Database, caller: Caller, session_id: str, *, offset: int = 0, limit: int = 50
) -> tuple[int, list[dict[str, Any]]]:
    """(how many messages the session has, one page of them) in conversation order: by timestamp,
    then sequence (``seq``, or an imported turn's ``position``). Rows: nodeId, messageId, role,
    speaker, text (the content without its ``"<speaker>: "`` prefix), timestamp, seq."""
    sid = check_session_id(session_id)
    offset, limit = check_page(offset, limit)
    messages, params = _session_messages(caller, "$sid")
    rows = db.read(
        f"""
        CALL () {{ {messages} }}
        WITH m ORDER BY {_ORDER}
        WITH collect(m) AS messages
        RETURN size(messages) AS total, [m IN messages[$skip..($skip + $n)] | m {{
            nodeId: m.nodeId, .messageId, .role, .speaker, .content, .timestamp, seq: coalesce(m.seq, m.position)
        }}] AS rows
        """,
        sid=sid,
        skip=offset,
        n=limit,
        **params,
    )
    page = [
        {**{k: v for k, v in row.items() if k != "content"}, "text": _text(row["content"], row["speaker"])}
        for row in plain(rows[0]["rows"])
    ]
    return int(rows[0]["total"]), page
