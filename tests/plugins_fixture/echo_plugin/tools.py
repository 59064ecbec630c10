"""The echo test plugin's tools: plain functions taking the pinned ToolContext first."""

from __future__ import annotations

import json
import time

from maxy.graph.guards import node_guard
from maxy.graph.write import NodeSpec
from maxy.plugins import ToolContext, ToolError, require, tool


@tool("echo-search", description="Find Note nodes whose name contains the query.", read_only=True, idempotent=True)
def echo_search(ctx: ToolContext, query: str, limit: int = 10) -> str:
    require(bool(query.strip()), "query", "must not be empty")
    require(1 <= limit <= 100, "limit", "must be between 1 and 100")
    guard = node_guard(ctx.caller, "n")
    rows = ctx.db.read(
        f"""
        MATCH (n:Note) WHERE {guard.clause} AND toLower(n.name) CONTAINS toLower($q)
        RETURN n.name AS name, n.scope AS scope ORDER BY n.name LIMIT $limit
        """,
        q=query,
        limit=limit,
        **guard.params,
    )
    if not rows:
        return "no results"
    return "\n".join(f"{r['name']} (scope: {r['scope'] or '-'})" for r in rows)


@tool(
    "echo-whoami",
    description="The pinned account, scopes, agent, session and task role of this server.",
    read_only=True,
)
def echo_whoami(ctx: ToolContext) -> dict:
    return {
        "accountId": ctx.caller.account_id,
        "allowedScopes": list(ctx.caller.allowed_scopes) if ctx.caller.allowed_scopes else None,
        "agentSlug": ctx.caller.agent_slug,
        "sessionId": ctx.session_id,
        "role": ctx.role,
        "plugin": ctx.plugin,
        "keywords": list(ctx.knowledge_keywords),
        "taskRole": ctx.task_role,
        "memberId": ctx.member_id,
    }


@tool("echo-slow-search", description="A search that never answers in time.", read_only=True)
def echo_slow_search(ctx: ToolContext, query: str) -> str:
    time.sleep(30)
    return json.dumps({"query": query})


@tool("echo-write", description="Write a Note node.")
def echo_write(
    ctx: ToolContext, name: str, scope: str = "admin", agents: list[str] | None = None, body: str | None = None
) -> dict:
    require(bool(name.strip()), "name", "must not be empty")
    props = {"name": name} | ({"body": body} if body else {})
    result = ctx.writer().write(NodeSpec(labels=["Note"], properties=props, scope=scope, agents=agents))
    return {"nodeId": result.node_id, "created": result.created}


@tool("echo-fail", description="Always fails with a ToolError.")
def echo_fail(ctx: ToolContext, message: str = "echo-fail always fails") -> str:
    raise ToolError(f"message: {message}")


@tool("echo-crash", description="Raises an unexpected exception (not a ToolError).")
def echo_crash(ctx: ToolContext) -> str:
    raise RuntimeError("internal detail that must stay on the server")
