"""The tool call audit trail as the operator reads it: ToolCall nodes (``maxy.mcp.audit``), newest
first, a page at a time, and the calls whose input or output mention one node.

    (:Conversation)-[:INVOKED]->(:ToolCall {toolName, pluginName, input, output, isError,
                                            startedAt, completedAt, durationMs, sessionId})

A ToolCall has no edge to the nodes it read or wrote: its redacted ``input`` (JSON text) and
``output`` (text) name them. Every ToolCall passes the caller's ``node_guard``; they are scoped
``admin`` and untagged, so a public caller, pinned to public scopes and an agent, sees none.
``createdAt`` (UTC ISO 8601 text, written by the write primitive) orders them and bounds the
time window through the ``tool_call_created`` index.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..conversations.store import check_session_id
from ..db import Database
from ..errors import ValidationError
from ..graph.guards import Caller, generic_guard, node_guard
from ..graph.paging import check_page, plain

MAX_TEXT = 256


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
        raise ValidationError(field, f"a non-empty text of at most {MAX_TEXT} characters (got {value!r})")
    if any(ord(ch) < 32 for ch in value):
        raise ValidationError(field, "control characters (line breaks, tabs) are not allowed")
    return value.strip()


def _instant(value: object, field: str) -> str:
    """An ISO 8601 date-time as the stored form of createdAt (UTC ``isoformat``), so text compares as time."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise ValidationError(
            field, f"{value!r} is not an ISO 8601 date-time; give one such as 2026-05-07T06:00:00Z"
        ) from None
    try:
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
    except OverflowError:
        raise ValidationError(field, f"{value!r} is outside the years 1 to 9999 once turned into UTC") from None


def _window(after: object, before: object) -> tuple[str, dict[str, Any]]:
    """The createdAt condition (``after`` inclusive, ``before`` exclusive), always one the index answers."""
    params: dict[str, Any] = {}
    parts = []
    if after is not None:
        params["after"] = _instant(after, "after")
        parts.append("t.createdAt >= $after")
    if before is not None:
        params["before"] = _instant(before, "before")
        parts.append("t.createdAt < $before")
    if "after" in params and "before" in params and params["after"] >= params["before"]:
        raise ValidationError("after", f"{after!r} is not earlier than before ({before!r}); swap them")
    return " AND ".join(parts) or "t.createdAt IS NOT NULL", params


def _row(caller: Caller) -> str:
    """The map of one ToolCall ``t`` (the guard parameters are the caller's ``node_guard``'s). The
    conversation is reached from ``t``: a pattern that starts at ``k`` would scan the account."""
    gk = generic_guard(caller, "k")
    return f"""t {{
        nodeId: t.nodeId, .toolName, .pluginName, .isError, .startedAt, .completedAt, .durationMs, .sessionId,
        .createdAt, .input, .output,
        conversation: head([(t)<-[:INVOKED]-(k) WHERE k:Conversation AND {gk.clause} | k.sessionId])
    }}"""


def _session_conversations(caller: Caller) -> str:
    """``conversations``: the nodeIds of the caller's Conversations whose sessionId or nodeId is ``$sid``
    (the hint: inside COLLECT the planner otherwise walks the account's index instead of the unique one)."""
    gk = generic_guard(caller, "k")
    return f"""
        WITH COLLECT {{
            MATCH (k:Conversation) WHERE k.sessionId = $sid AND {gk.clause} RETURN k.nodeId AS id
            UNION
            MATCH (k:Node) USING INDEX k:Node(nodeId) WHERE k.nodeId = $sid AND k:Conversation AND {gk.clause}
            RETURN k.nodeId AS id
        }} AS conversations
    """


# A call of the session: it says so, or a Conversation of the session INVOKED it.
_IN_SESSION = "AND (t.sessionId = $sid OR any(id IN [(t)<-[:INVOKED]-(k) | k.nodeId] WHERE id IN conversations))"


def list_tool_calls(
    db: Database,
    caller: Caller,
    *,
    tool: str | None = None,
    is_error: bool | None = None,
    session_id: str | None = None,
    after: str | None = None,
    before: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[dict[str, Any]]]:
    """(how many ToolCalls match, one page of them), newest first (createdAt). ``session_id``
    matches the call's sessionId or the sessionId / nodeId of the Conversation that INVOKED it;
    ``after`` (inclusive) and ``before`` (exclusive) are ISO 8601 date-times. Rows: nodeId,
    toolName, pluginName, isError, startedAt, completedAt, durationMs, sessionId, createdAt,
    input, output, conversation (the invoking Conversation's sessionId, if the caller can read it)."""
    name = _text(tool, "tool") if tool is not None else None
    if is_error is not None and not isinstance(is_error, bool):
        raise ValidationError("isError", f"true or false (got {is_error!r}), or omit it for every call")
    sid = check_session_id(session_id) if session_id is not None else None
    window, bounds = _window(after, before)
    offset, limit = check_page(offset, limit)
    g = node_guard(caller, "t")
    rows = db.read(
        f"""
        {_session_conversations(caller) if sid is not None else ""}
        MATCH (t:ToolCall) WHERE {window} AND {g.clause}
          AND ($tool IS NULL OR t.toolName = $tool) AND ($isError IS NULL OR t.isError = $isError)
          {_IN_SESSION if sid is not None else ""}
        WITH t ORDER BY t.createdAt DESC, t.nodeId
        WITH collect(t) AS calls
        RETURN size(calls) AS total, [t IN calls[$skip..($skip + $n)] | {_row(caller)}] AS rows
        """,
        tool=name,
        isError=is_error,
        sid=sid,
        skip=offset,
        n=limit,
        **bounds,
        **g.params,
    )
    return int(rows[0]["total"]), plain(rows[0]["rows"])


def tool_calls_touching(db: Database, caller: Caller, node_id: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """The newest ``limit`` ToolCalls whose stored input or output mentions ``node_id`` (rows as
    :func:`list_tool_calls`'). The node itself need not be readable any more: the trail of a
    deleted or purged node stays readable to whoever reads the trail."""
    target = _text(node_id, "nodeId")
    _, limit = check_page(0, limit)
    g = node_guard(caller, "t")
    rows = db.read(
        f"""
        MATCH (t:ToolCall) WHERE t.createdAt IS NOT NULL AND {g.clause}
          AND (t.input CONTAINS $id OR t.output CONTAINS $id)
        WITH t ORDER BY t.createdAt DESC, t.nodeId LIMIT $n
        RETURN {_row(caller)} AS row
        """,
        id=target,
        n=limit,
        **g.params,
    )
    return [plain(r["row"]) for r in rows]
