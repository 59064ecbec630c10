"""The admin plugin: facts about the install an admin agent needs (its public hostname)."""

from . import tools  # noqa: F401  (registers the tools)
