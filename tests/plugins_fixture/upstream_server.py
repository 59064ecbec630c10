"""A tiny upstream stdio MCP server without any ``_meta`` (the proxy test's fallback upstream,
used when PyPI's mcp-neo4j-cypher is not installed)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("fixture-upstream")


@server.tool(name="read_cypher", description="Pretend to run a read query.")
def read_cypher(query: str) -> str:
    return f"ran: {query}"


@server.tool(name="get_schema", description="Pretend to return a schema.")
def get_schema() -> str:
    return "schema"


if __name__ == "__main__":
    server.run()
