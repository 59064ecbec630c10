"""The session plugin: context compaction (session-compact) and the carried-over session context."""

from . import tools  # noqa: F401  (registers the tools)
