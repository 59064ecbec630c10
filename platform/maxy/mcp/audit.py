"""The tool call audit trail: one ToolCall node per admin tool call.

    (c:Conversation)-[:INVOKED]->(t:ToolCall {toolName, pluginName, input, output, isError,
                                              startedAt, completedAt, sessionId})

Written through GraphWriter (so accountId is the validated ACCOUNT_ID and nothing else),
scoped ``admin`` so no public reader ever sees it. Input and output are redacted first
(``maxy.secrets``: schema-tagged fields and every secret-named key, in JSON, in
``key: value`` lines and inside string values). A call of a plugin in ``PRIVATE_PLUGINS`` (the
community's: members' profiles, intents and negotiation turns, readable only through the member
rule) keeps who called what and when, its argument names and whether it failed, never the
values or the answer. The Conversation is the one whose
sessionId (or nodeId) is SESSION_NODE_ID, else SESSION_ID, in the same account; without
one the ToolCall stands alone. Public calls are not audited (they are read-only).
A failed audit write logs a warning and never fails the tool call; right after the database
failed (unreachable or hung) it is not attempted, so a failing call does not wait twice. Old
ToolCalls are pruned in the background (``audit_retention``: AUDIT_RETENTION_DAYS, at most once
an hour).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..graph.guards import Caller, generic_guard
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from ..plugins.api import ToolContext
from ..secrets import redact_deep, redact_secrets, redact_text
from .audit_retention import schedule_retention

MAX_INPUT_CHARS = 2_000
MAX_OUTPUT_CHARS = 2_000
AUDIT_AGENT = "mcp-audit"
PRIVATE_PLUGINS = frozenset({"community"})
PRIVATE_OUTPUT = "[not kept: a community record, readable only through the community tools]"


@dataclass(frozen=True)
class ToolCallRecord:
    tool_name: str
    plugin_name: str
    arguments: dict[str, Any]
    output: str
    is_error: bool
    started_at: datetime
    completed_at: datetime


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    marker = f"... [truncated {len(text) - limit} chars]"
    return text[: max(0, limit - len(marker))] + marker


def _input_json(arguments: dict[str, Any], *, private: bool = False) -> str:
    if private:
        arguments = {name: "[not kept]" for name in arguments}
    # Secrets tagged in a tool's inputSchema (work-create) first, then every secret-named key,
    # also inside string values that hold JSON or `key: value` text.
    safe = dict(arguments)
    for field in ("inputs", "inputsProvided"):
        if isinstance(arguments.get(field), dict):
            safe[field] = redact_secrets(arguments[field], arguments.get("inputSchema"))
    safe = redact_deep(safe)
    try:
        text = json.dumps(safe, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(safe)  # already redacted
    return truncate(text, MAX_INPUT_CHARS)


def find_conversation(ctx: ToolContext) -> tuple[str, str] | None:
    """(nodeId, the id it was found by) of the active Conversation in this account, if any."""
    guard = generic_guard(Caller(ctx.caller.account_id), "c")  # account + soft delete: the audit sees every scope
    for session in (ctx.session_node_id, ctx.session_id):
        if not session:
            continue
        rows = ctx.db.read(
            f"""
            MATCH (c:Conversation)
            WHERE (c.sessionId = $sid OR c.nodeId = $sid) AND {guard.clause}
            RETURN c.nodeId AS nodeId
            ORDER BY c.createdAt DESC
            LIMIT 1
            """,
            sid=session,
            **guard.params,
        )
        if rows and rows[0]["nodeId"]:
            return str(rows[0]["nodeId"]), session
    return None


def _not_persisted(record: ToolCallRecord, **why: str) -> None:
    log_line("persist", "warn", "tool-call-not-persisted", level=logging.WARNING, tool=record.tool_name, **why)


def record_tool_call(ctx: ToolContext, record: ToolCallRecord) -> str | None:
    """Write the ToolCall node; returns its nodeId, or None when the audit write failed."""
    if ctx.db.failure is not None:  # the database just failed: do not keep the failing call waiting twice
        _not_persisted(record, reason="database-unavailable")
        return None
    try:
        if ctx.account is None:
            raise RuntimeError("ACCOUNT_ID was not validated")
        conversation = find_conversation(ctx)
        private = record.plugin_name in PRIVATE_PLUGINS
        output = PRIVATE_OUTPUT if private else truncate(redact_text(record.output), MAX_OUTPUT_CHARS)
        props: dict[str, Any] = {
            "toolName": record.tool_name,
            "pluginName": record.plugin_name,
            "input": _input_json(record.arguments, private=private),
            "output": output,  # redacted whole, then cut
            "isError": record.is_error,
            "startedAt": record.started_at.isoformat(),
            "completedAt": record.completed_at.isoformat(),
            "durationMs": round((record.completed_at - record.started_at).total_seconds() * 1000),
        }
        session_id = ctx.session_node_id or ctx.session_id
        if session_id:
            props["sessionId"] = session_id
        edges = [Edge("INVOKED", conversation[0], direction="in")] if conversation else []
        writer = GraphWriter(ctx.db, ctx.account, None, created_by=AUDIT_AGENT)
        result = writer.write(NodeSpec(labels=["ToolCall"], properties=props, edges=edges, scope="admin"))
    except Exception as err:  # noqa: BLE001 - the audit must never fail the call it records
        _not_persisted(record, error=f"{type(err).__name__}: {err}"[:300])
        return None
    log_line(
        "persist",
        "tool-call",
        "persisted",
        tool=record.tool_name,
        conversation=short(conversation[1]) if conversation else "none",
    )
    schedule_retention(ctx.db, ctx.account.account_id, ctx.settings.AUDIT_RETENTION_DAYS)  # background, hourly
    return result.node_id
