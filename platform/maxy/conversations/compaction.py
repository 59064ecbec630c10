"""Compaction: the briefing a conversation carries into the next turn.

The session plugin's ``session-compact`` stores a structured briefing (what was asked, what
was done, decisions, work in progress, what the user shared about themselves) on the active
Conversation as ``briefing`` (JSON text), ``briefingText``, ``compactedAt`` and
``compactionCount``. A session without a Conversation in the writer's view gets one, started
by the system agent; its id derives from the session and the view, so a pinned writer never
lands on a conversation it cannot read.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any

from ..db import Database
from ..graph.confine import id_root, record_scope
from ..graph.guards import Caller, generic_guard
from ..graph.write import GraphWriter, NodeSpec


def conversation_node_id(root: str, session_id: str) -> str:
    """Per (account, session), and per view when pinned (``root`` is ``confine.id_root``)."""
    digest = hashlib.sha256("\x1f".join(["conversation", root, session_id]).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16]))


def start_conversation(writer: GraphWriter, session_id: str, *, admin: bool, started_at: str) -> dict[str, Any]:
    """Write the Conversation of ``session_id`` in the writer's view (labelled AdminConversation
    too for the admin agent); returns its nodeId and sessionId."""
    labels = ["Conversation", "AdminConversation"] if admin else ["Conversation"]
    result = writer.write(
        NodeSpec(
            labels,
            {"sessionId": session_id, "title": f"Conversation {session_id[:8]}", "startedAt": started_at},
            node_id=conversation_node_id(id_root(writer.caller), session_id),
            scope=record_scope(writer.caller),
        )
    )
    return {"nodeId": result.node_id, "sessionId": session_id}


def briefing_properties(
    briefing: Mapping[str, str], text: str, compacted_at: str, previous_count: Any
) -> dict[str, Any]:
    """The properties that store a briefing on its Conversation (``previous_count``: the
    conversation's compactionCount so far, if any)."""
    stored = {**briefing, "compactedAt": compacted_at}
    return {
        "briefing": json.dumps(stored, ensure_ascii=False),
        "briefingText": text,
        "compactedAt": compacted_at,
        "compactionCount": int(previous_count or 0) + 1,
    }


def latest_briefing(db: Database, caller: Caller, key: str | None) -> dict[str, Any] | None:
    """The briefing to carry over: the conversation ``key`` names (sessionId or nodeId) when it
    has one, else the most recently compacted one; ``briefing`` decoded to a dict."""
    g = generic_guard(caller, "c")
    rows = db.read(
        f"""
        MATCH (c:Node) WHERE (c:Conversation OR c:AdminConversation) AND {g.clause} AND c.briefing IS NOT NULL
        RETURN c.nodeId AS conversationId, c.sessionId AS sessionId, c.briefing AS briefing,
               c.compactedAt AS compactedAt,
               coalesce(c.sessionId = $key OR c.nodeId = $key, false) AS active
        ORDER BY active DESC, c.compactedAt DESC
        LIMIT 1
        """,
        key=key,
        **g.params,
    )
    if not rows:
        return None
    try:
        content = json.loads(rows[0]["briefing"])
    except (TypeError, ValueError):
        content = {"done": str(rows[0]["briefing"])}
    return {**rows[0], "briefing": content if isinstance(content, dict) else {"done": str(content)}}
