"""The memory plugin: knowledge search and writes, ingest, conversation search and reports."""

from . import tools  # noqa: F401  (registers the tools)
