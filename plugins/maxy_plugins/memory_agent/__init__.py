"""The memory-agent plugin: a conversation's durable memory (entries, context documents, the
consistency barrier) as MCP tools, the memory agent's rules as MCP prompts, and
``maxy memory-agent ...``."""

from . import tools  # noqa: F401  (registers the tools)
from .cli import register_commands  # ``maxy memory-agent ...`` (the CLI hook)

__all__ = ["register_commands"]
