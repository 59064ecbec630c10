"""Test plugin whose manifest has an admin-allowlisted tool but no ``mcp`` block (boot gate)."""

from __future__ import annotations

from maxy.plugins import ToolContext, tool


@tool("serverless-ping", description="Answers pong.", read_only=True)
def serverless_ping(ctx: ToolContext) -> str:
    return "pong"
