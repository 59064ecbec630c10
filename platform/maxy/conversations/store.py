"""Conversations: finding one by its session, and checking a session id.

A Conversation (also labelled AdminConversation for the admin agent's) is keyed by its
``sessionId``; ``find_conversation`` also accepts its nodeId. Account isolation and every
other guard layer are part of the lookup.
"""

from __future__ import annotations

from typing import Any

from ..db import Database
from ..errors import ValidationError
from ..graph.guards import Caller, generic_guard

MAX_SESSION_ID = 256
# The WHERE condition that makes ``c`` a conversation (either label).
CONVERSATION_LABELS = "(c:Conversation OR c:AdminConversation)"


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
    guard = generic_guard(caller, "c")
    rows = db.read(
        f"""
        MATCH (c:Node) WHERE (c.sessionId = $key OR c.nodeId = $key) AND {CONVERSATION_LABELS} AND {guard.clause}
        RETURN c.nodeId AS nodeId, c.sessionId AS sessionId, labels(c) AS labels,
               c.scope AS scope, c.agents AS agents
        ORDER BY CASE WHEN c.sessionId = $key THEN 0 ELSE 1 END, c.createdAt
        LIMIT 1
        """,
        key=key,
        **guard.params,
    )
    return rows[0] if rows else None
