"""Node helpers for tools: load a node the caller may read (``maxy.graph.nodes``), rewrite it
through the write primitive, find the active conversation.

Every read passes the guard clauses of ``ctx.caller``; every write goes through
``ctx.writer`` (which refuses the public role and keeps a pinned server inside its view).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..conversations import find_conversation
from ..graph.nodes import read_node
from ..graph.write import Edge, NodeSpec, WriteResult
from .api import ToolContext, ToolError

# ``created_by`` of what the platform writes on its own behalf (an account's AdminUser, a
# conversation started by compaction): exempt from the provenance warning.
SYSTEM = "system"


def now_iso() -> str:
    """The current time, UTC, ISO 8601."""
    return datetime.now(UTC).isoformat()


def load_node(
    ctx: ToolContext, node_id: object, label: str | None = None, field: str = "nodeId"
) -> dict[str, Any] | None:
    """A live node of the caller's account (guarded), with its labels, writable properties, scope and agents."""
    if not isinstance(node_id, str) or not node_id.strip():
        raise ToolError(f"{field}: a node id is required")
    return read_node(ctx.db, ctx.caller, node_id, label)


def update_node(
    ctx: ToolContext,
    node: dict[str, Any],
    changes: dict[str, Any],
    *,
    edges: Sequence[Edge] = (),
    created_by: str | None = None,
) -> WriteResult:
    """Rewrite a node through the primitive with its full property set plus ``changes``:
    scope, agents and labels are kept, and the embedding is computed from the whole node."""
    props = {**node["properties"], **changes}
    props = {k: v for k, v in props.items() if v is not None}
    spec = NodeSpec(
        node["labels"], props, edges=list(edges), node_id=node["nodeId"], scope=node["scope"], agents=node["agents"]
    )
    return ctx.writer(created_by).write(spec)


def active_conversation(ctx: ToolContext) -> dict[str, Any] | None:
    """The Conversation named by SESSION_NODE_ID in this account (sessionId or nodeId), if any."""
    return find_conversation(ctx.db, ctx.caller, ctx.session_node_id)
