"""Serving plugins' tools to agents over MCP.

- ``server``: the MCP server built from loaded plugins for a role (allow-lists, eager
  ``_meta``, annotations, pinning, error mapping, the boot gate) and the stdio runner;
- ``stdio``: the stdio transport loop that answers an undecodable line instead of dying;
- ``http``: ``/mcp``, streamable HTTP, the MCP router of ``maxy serve`` (:mod:`maxy.serving`);
- ``audit``: one ToolCall node per admin tool call;
- ``proxy``: relay an upstream stdio MCP server with every tool flagged eager;
- ``clientconfig``: a ready ``.mcp.json`` for Claude Code and other clients;
- ``cli``: ``maxy mcp ...`` and ``maxy serve``.

The plugin system itself (the ``@tool`` API, discovery, manifests) is :mod:`maxy.plugins`;
this package depends on it, never the other way round.
"""
