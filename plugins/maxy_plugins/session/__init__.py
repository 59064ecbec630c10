"""The session plugin: context compaction (session-compact) and the carried-over session context."""

from . import tools  # noqa: F401  (registers the tools)
from .cli import register_commands  # ``maxy session ...`` (the CLI hook)

__all__ = ["register_commands"]
