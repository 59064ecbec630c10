"""Plugins used only by the MCP platform tests (loaded by module path, never installed)."""
