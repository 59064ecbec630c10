"""The operator console: server-rendered pages at ``/console`` of ``maxy serve``, read through
the same guarded code as the MCP tools, with the pins of the API key that logged in."""
