"""The taskstore plugin: protocol tasks (spec, phases, attempts, reviews, approvals, side
effects, the event log) as MCP tools, and ``maxy tasks ...`` for the operator."""

from . import tools  # noqa: F401  (registers the tools)
from .cli import register_commands  # ``maxy tasks ...`` (the CLI hook)

__all__ = ["register_commands"]
