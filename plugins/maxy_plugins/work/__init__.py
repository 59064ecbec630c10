"""The work plugin: provenance Tasks for durable actions (work-create / work-update / work-complete)."""

from . import tools  # noqa: F401  (registers the tools)
