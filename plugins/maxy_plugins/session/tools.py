"""The session plugin: context compaction and the session context the next admin turn injects.

``session-compact`` stores the structured briefing (what was asked, what was done, decisions,
work in progress, what the user shared about themselves) on the active Conversation
(SESSION_NODE_ID, else SESSION_ID; the Conversation is created by the system agent when it
does not exist yet) as ``briefing`` (JSON text), ``briefingText`` and ``compactedAt``.

``session_context(ctx)`` (tool ``session-context``; CLI ``maxy session context`` in ``cli.py``)
renders the ``<previous-context>`` block from what the conversation carries over
(``maxy.conversations.context``): the latest briefing (the active conversation's first), the
most recent review digest (a CreativeWork with kind/type "review-digest"), open Tasks by
priority (at most 10) and unsuppressed Alerts of the last 24 hours (at most 5). Every read
goes through the guard clauses of ``ctx.caller``; the storage of briefings is
``maxy.conversations.compaction``.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from maxy.conversations import check_session_id, find_conversation
from maxy.conversations.compaction import briefing_properties, start_conversation
from maxy.conversations.context import carried_over
from maxy.plugins import (
    SYSTEM,
    Rendered,
    ToolContext,
    ToolError,
    ToolOutput,
    load_node,
    log_line,
    now_iso,
    require,
    short,
    tool,
    tool_errors,
    update_node,
)
from pydantic import Field

BRIEFING_FIELDS = {
    "asked": "What you asked for",
    "done": "What was done",
    "decisions": "Decisions made",
    "workInProgress": "Work in progress",
    "aboutUser": "What you shared about yourself",
}
MAX_FIELD_CHARS = 6_000
MAX_BRIEFING_CHARS = 20_000
DIGEST_CHARS = 3_000

Statements = Annotated[str | list[str], Field(description="Text, or a list of short statements.")]


class Compacted(ToolOutput):
    conversationId: str = Field(description="The Conversation node holding the briefing.")
    sessionId: str
    compactedAt: str
    created: bool = Field(description="True when the Conversation was created for this briefing.")


class CarriedOver(ToolOutput):
    briefing: dict[str, Any] | None = Field(description="The latest compaction briefing, if any.")
    reviewDigest: dict[str, Any] | None = Field(description="The most recent review digest, if any.")
    openTasks: list[dict[str, Any]] = Field(description="Open tasks by priority (at most 10).")
    openTasksTotal: int = Field(description="How many tasks are open in all.")
    alerts: list[dict[str, Any]] = Field(description="Unsuppressed alerts of the last 24 hours (at most 5).")


def _field_text(value: object, field: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        text = value.strip()
    else:
        require(
            isinstance(value, list) and all(isinstance(v, str) for v in value),
            field,
            "text, or a list of short statements",
        )
        text = "\n".join(f"- {v.strip()}" for v in value if v.strip())  # type: ignore[attr-defined]
    require(len(text) <= MAX_FIELD_CHARS, field, f"at most {MAX_FIELD_CHARS:,} characters")
    return text


def _render_briefing(briefing: dict[str, str]) -> str:
    parts = []
    for key, heading in BRIEFING_FIELDS.items():
        if briefing.get(key):
            parts.append(f"{heading}:\n{briefing[key]}")
    return "\n\n".join(parts)


@tool(
    "session-compact",
    description="""
Store the compaction briefing (what was asked, done and decided, work in progress, what the user
shared) on the active conversation, so the next turn continues from it.
""",
    title="Compact the session",
    output=Compacted,
    destructive=True,  # replaces the conversation's previous briefing; each call counts a compaction
)
@tool_errors
def session_compact(
    ctx: ToolContext,
    asked: Annotated[Statements, Field(description="What the user asked for.")],
    done: Annotated[Statements, Field(description="What was done.")],
    decisions: Annotated[Statements, Field(description="Decisions made.")],
    workInProgress: Annotated[Statements, Field(description="Unfinished work and next steps.")],
    aboutUser: Annotated[Statements, Field(description="What the user shared about themselves.")],
) -> dict[str, Any]:
    started = time.perf_counter()
    values = {
        "asked": asked,
        "done": done,
        "decisions": decisions,
        "workInProgress": workInProgress,
        "aboutUser": aboutUser,
    }
    briefing = {key: _field_text(v, key) for key, v in values.items()}
    require(any(briefing.values()), "asked", "the briefing is empty: fill in at least one field")
    text = _render_briefing(briefing)
    require(len(text) <= MAX_BRIEFING_CHARS, "briefing", f"at most {MAX_BRIEFING_CHARS:,} characters in all")
    ctx.writer()  # refuses the public role before anything else
    key = ctx.session_node_id or ctx.session_id
    if not key:
        raise ToolError(
            "SESSION_NODE_ID: no active conversation for this call (stdio: set SESSION_NODE_ID; "
            "HTTP: send the x-maxy-session-id header); nothing was written"
        )
    key = check_session_id(key, "SESSION_NODE_ID")
    conv = find_conversation(ctx.db, ctx.caller, key)
    created = False
    if conv is None:
        conv = start_conversation(ctx.writer(SYSTEM), key, admin=ctx.role == "admin", started_at=now_iso())
        created = True
    node = load_node(ctx, conv["nodeId"])
    if node is None:  # pragma: no cover - vanished between the two reads
        raise ToolError("SESSION_NODE_ID: the conversation disappeared while compacting; try again")
    compacted_at = now_iso()
    update_node(ctx, node, briefing_properties(briefing, text, compacted_at, node["properties"].get("compactionCount")))
    log_line(
        "session",
        op="compact",
        session=short(conv.get("sessionId") or key),
        conversation=short(conv["nodeId"]),
        created=created,
        chars=len(text),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return {
        "conversationId": conv["nodeId"],
        "sessionId": conv.get("sessionId") or key,
        "compactedAt": compacted_at,
        "created": created,
    }


# ---------------------------------------------------------------------------------------
def session_context_data(ctx: ToolContext) -> dict[str, Any]:
    """The parts of the session context, as data (guarded reads only)."""
    return carried_over(ctx.db, ctx.caller, ctx.session_node_id or ctx.session_id)


def render_session_context(data: dict[str, Any]) -> str:
    """The ``<previous-context>`` block, or "" when there is nothing to carry over."""
    sections: list[str] = []
    b = data.get("briefing")
    if b:
        where = "this conversation" if b.get("active") else f"session {short(b.get('sessionId'))}"
        body = _render_briefing({k: str(v) for k, v in (b.get("briefing") or {}).items() if k in BRIEFING_FIELDS and v})
        sections.append(f"## Briefing (compacted {b.get('compactedAt')}, {where})\n{body}")
    d = data.get("reviewDigest")
    if d:
        body = str(d.get("body") or "")
        if len(body) > DIGEST_CHARS:
            body = body[:DIGEST_CHARS] + f"… [{len(body) - DIGEST_CHARS} more chars]"
        sections.append(f"## Recent review digest ({d.get('at')})\n{d.get('title') or ''}\n{body}".rstrip())
    tasks = data.get("openTasks") or []
    if tasks:
        total = data.get("openTasksTotal", len(tasks))
        lines = [f"## Open tasks ({len(tasks)} of {total}, by priority)"]
        for t in tasks:
            step = f" — last step: {t['lastStep']}" if t.get("lastStep") else ""
            lines.append(
                f"- [P{t.get('priority')}] {t.get('title')} ({t.get('kind') or 'task'}, {t.get('status')}, taskId {t.get('taskId')}){step}"
            )
        sections.append("\n".join(lines))
    alerts = data.get("alerts") or []
    if alerts:
        lines = ["## Active alerts (last 24 hours)"]
        for a in alerts:
            sev = f"[{a['severity']}] " if a.get("severity") else ""
            detail = f" — {str(a['detail'])[:300]}" if a.get("detail") else ""
            lines.append(f"- {sev}{a.get('title') or a.get('nodeId')} ({a.get('at')}){detail}")
        sections.append("\n".join(lines))
    if not sections:
        return ""
    return "<previous-context>\n" + "\n\n".join(sections) + "\n</previous-context>"


def session_context(ctx: ToolContext, data: dict[str, Any] | None = None) -> str:
    """The block the next admin turn injects ("" when there is nothing to carry over)."""
    started = time.perf_counter()
    data = data if data is not None else session_context_data(ctx)
    text = render_session_context(data)
    log_line(
        "session",
        op="context",
        accountId=short(ctx.caller.account_id),
        briefing=data["briefing"] is not None,
        digest=data["reviewDigest"] is not None,
        tasks=len(data["openTasks"]),
        alerts=len(data["alerts"]),
        chars=len(text),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return text


@tool(
    "session-context",
    description="""
The context carried over from earlier turns: the latest briefing, review digest, open tasks and
recent alerts, as a <previous-context> block.
""",
    title="Read the carried-over context",
    output=CarriedOver,
    read_only=True,
    idempotent=True,
)
@tool_errors
def session_context_tool(ctx: ToolContext) -> str:
    data = session_context_data(ctx)
    text = session_context(ctx, data)
    return Rendered(text or "No previous context: no briefing, review digest, open tasks or recent alerts.", data)
